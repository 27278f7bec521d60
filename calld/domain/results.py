"""Results of a call: closed unions on `status`, built so a contradiction cannot be.

`answered` requires answer_text, a typed `answer` and `evidence` (the business's own words
that support it: an answer nobody said cannot be built); every other status pins
answer_text to None. Each status carries its reason code from `calld.domain.status` and a
human `detail`. A completed
call (the business picked up and a verdict came from the conversation) carries
transcript_ref and audio_ref; a call that never connected carries neither.
pydantic models: they are what result.json and the control API speak.

A quick ask ends as QuickAskResult, a booking as BookResult. They share the
statuses that mean the same whatever was asked (voicemail, no_answer, failed);
`booked` needs the confirmation and what was confirmed, inside the user's window,
and `declined` needs the business's reason. Both completed booking variants list
the questions the business asked that the user had not answered.
"""

from __future__ import annotations

from typing import Annotated, Literal, Self

from pydantic import BaseModel, ConfigDict, Field, StringConstraints, model_validator

from calld.domain.ids import CallControlId, RunId
from calld.domain.status import (
    DeclinedReason,
    FailedReason,
    NoAnswerReason,
    VerdictSource,
)

NonEmpty = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=2000)]
Clock = Annotated[str, StringConstraints(pattern=r"^([01]\d|2[0-3]):[0-5]\d$")]  # 24-hour HH:MM
Weekday = Literal["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"]


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class Evidence(_Frozen):
    """Business words that support a result: exactly as transcribed, and where they were heard.

    `turn` indexes transcript.json's turns (always a business turn); `start_ms`/`end_ms` place
    the words in audio/inbound.wav (None when GPT-Live gave no times for them).
    """

    quote: NonEmpty
    turn: Annotated[int, Field(ge=0)]
    start_ms: Annotated[int, Field(ge=0)] | None = None
    end_ms: Annotated[int, Field(ge=0)] | None = None

    @model_validator(mode="after")
    def _ordered(self) -> Self:
        if self.start_ms is not None and self.end_ms is not None and self.end_ms < self.start_ms:
            raise ValueError(f"evidence ends at {self.end_ms} ms, before it starts at {self.start_ms} ms")
        return self


# -- typed answers: what the words say, read by the app (never by the model) --------------------------


class DayHours(_Frozen):
    """Opening hours for a run of days; `closed` when the business said it is closed then,
    `around_the_clock` when it said it never closes ("24 hours", "24/7")."""

    days: tuple[Weekday, ...]
    opens: Clock | None = None
    closes: Clock | None = None
    closed: bool = False
    around_the_clock: bool = False
    date: str | None = None  # "today"/"tomorrow" resolved to a date in the business's zone, when known

    @model_validator(mode="after")
    def _one_reading(self) -> DayHours:
        if (self.closed or self.around_the_clock) and (self.opens is not None or self.closes is not None):
            raise ValueError("days closed or open around the clock have no opening or closing time")
        if self.closed and self.around_the_clock:
            raise ValueError("days cannot be both closed and open around the clock")
        return self


class HoursAnswer(_Frozen):
    kind: Literal["hours"] = "hours"
    ranges: tuple[DayHours, ...] = ()  # empty: the words gave times but no days the app could read


class NoSetHoursAnswer(_Frozen):
    """The business keeps no set hours ("by appointment only", "it varies, call ahead"): no ranges, by its shape."""

    kind: Literal["no_set_hours"] = "no_set_hours"


Availability = Literal["in_stock", "out_of_stock", "limited"]


class KindStock(_Frozen):
    """A kind of the item asked about, named as the business named it ("12-inch", "deluxe ones"), and its stock."""

    kind: NonEmpty
    availability: Availability
    quantity: Annotated[int, Field(ge=0)] | None = None

    @model_validator(mode="after")
    def _none_when_out(self) -> KindStock:
        if self.availability == "out_of_stock" and self.quantity:
            raise ValueError("a kind out of stock has no quantity")
        return self


class StockAnswer(_Frozen):
    """`some_kinds`: the business has some kinds of the item and not others, and did not say of the
    item itself; `kinds` says which, and is empty for every other availability."""

    kind: Literal["stock"] = "stock"
    availability: Literal["in_stock", "out_of_stock", "limited", "some_kinds", "unknown"]
    quantity: Annotated[int, Field(ge=0)] | None = None
    kinds: tuple[KindStock, ...] = ()

    @model_validator(mode="after")
    def _kinds_only_when_some(self) -> StockAnswer:
        if self.availability != "some_kinds":
            if self.kinds:
                raise ValueError(f"only some_kinds names kinds, not {self.availability}")
            return self
        if self.quantity is not None:
            raise ValueError("some_kinds has a quantity per kind, not one for the item")
        if not (any(k.availability != "out_of_stock" for k in self.kinds) and any(k.availability == "out_of_stock" for k in self.kinds)):
            raise ValueError("some_kinds needs a kind in stock and a kind out of stock")
        return self


class AisleAnswer(_Frozen):
    kind: Literal["aisle"] = "aisle"
    location: NonEmpty  # "aisle 14", "garden department", "back of the store"


class TextAnswer(_Frozen):
    """The words could not be read into a typed answer; answer_text holds them."""

    kind: Literal["text"] = "text"


TypedAnswer = Annotated[HoursAnswer | NoSetHoursAnswer | StockAnswer | AisleAnswer | TextAnswer, Field(discriminator="kind")]


class _Result(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")
    run_id: RunId
    call_control_id: CallControlId | None
    # The business's own words asking not to be called again (the number is now opted out), whatever
    # the status: an answer given and then "don't call this number again" is both.
    opt_out: NonEmpty | None = None
    # The agent claimed to be a person or denied being automated, and was made to correct itself at once.
    honesty: Literal["corrected"] | None = None
    # A booking's --time as calld read it in the restaurant's zone: ISO 8601 with the offset, and in words
    # ("Fri 11 Dec 7pm"). None for a quick ask.
    booking_at: NonEmpty | None = None
    booking_for: NonEmpty | None = None
    # Writing the call's audio failed (a full disk): the WAV files stop there, the call went on to its
    # own end and this result stands; says which file failed, how, and how much each holds. None: whole.
    audio_incomplete: NonEmpty | None = None
    # calld's hangup was not taken by Telnyx within HANGUP_RETRY_S and the call's status never said it
    # ended: what was tried, and what to do (hang it up in the Telnyx portal). None: the line is down.
    line_may_be_up: NonEmpty | None = None


class _Completed(_Result):
    call_control_id: CallControlId
    transcript_ref: NonEmpty
    audio_ref: NonEmpty
    verdict_source: VerdictSource
    evidence: tuple[Evidence, ...] = ()


class _Supported(_Completed):
    """A positive result: it exists only with the business's words behind it."""

    evidence: Annotated[tuple[Evidence, ...], Field(min_length=1)]
    # The business corrected itself after a first record was accepted; this is its last word, from the
    # record that cited the correction.
    corrected: bool = False

    @model_validator(mode="after")
    def _not_from_nothing(self) -> Self:
        if self.verdict_source == "none":
            raise ValueError(f"a {self.status} result needs a verdict source (tool, transcript or greeting)")
        return self


class Answered(_Supported):
    status: Literal["answered"] = "answered"
    reason: None = None
    answer_text: NonEmpty
    answer: TypedAnswer


class Declined(_Completed):
    status: Literal["declined"] = "declined"
    answer_text: None = None
    reason: DeclinedReason
    detail: str | None = None


class Voicemail(_Completed):
    status: Literal["voicemail"] = "voicemail"
    reason: None = None
    answer_text: None = None


class NoAnswer(_Result):
    status: Literal["no_answer"] = "no_answer"
    answer_text: None = None
    reason: NoAnswerReason
    detail: str | None = None
    hangup_cause: str | None = None
    sip_cause: str | None = None


class Failed(_Result):
    status: Literal["failed"] = "failed"
    answer_text: None = None
    reason: FailedReason
    detail: NonEmpty
    transcript_ref: str | None = None
    audio_ref: str | None = None


class Refused(BaseModel):
    """A request turned down before anything was written or dialled: the rule, and what to do."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    status: Literal["refused"] = "refused"
    reason: NonEmpty  # the rule's code (destination, calling_window, opt_out, rate_limit, words, ...)
    detail: NonEmpty


QuickAskResult = Annotated[
    Answered | Declined | Voicemail | NoAnswer | Failed, Field(discriminator="status")
]


# -- booking a table ---------------------------------------------------------------------------------

Question = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=300)]


class Requested(BaseModel):
    """What the user asked for: a booking is judged against it."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    party: Annotated[int, Field(ge=1)]
    time: NonEmpty
    notes: str | None
    window_minutes: Annotated[int, Field(ge=0)]


class Booked(_Supported):
    """The business confirmed a table: what it confirmed, and how far that is from what was asked."""

    status: Literal["booked"] = "booked"
    reason: None = None
    answer_text: None = None
    confirmation_text: NonEmpty  # the business's confirmation, in its words
    confirmed_party: Annotated[int, Field(ge=1)]
    confirmed_time: NonEmpty
    confirmed_constraints: str | None  # required key: what was agreed about the notes
    minutes_from_requested: int
    requested: Requested
    unanswered_questions: tuple[Question, ...] = ()

    @model_validator(mode="after")
    def _what_was_asked(self) -> Self:
        asked = self.requested
        if self.confirmed_party != asked.party:
            raise ValueError(f"booked for {self.confirmed_party}, but the user asked for {asked.party}")
        if abs(self.minutes_from_requested) > asked.window_minutes:
            raise ValueError(
                f"a booking {self.minutes_from_requested} minutes from the requested time is outside "
                f"the {asked.window_minutes}-minute window: it is declined, not booked"
            )
        if asked.notes and not (self.confirmed_constraints or "").strip():
            raise ValueError(f"the user asked for {asked.notes!r}; booked needs what was confirmed about it")
        return self


class BookDeclined(_Completed):
    """No booking: the business's reason, and the alternative it offered (if any) that did not fit."""

    status: Literal["declined"] = "declined"
    answer_text: None = None
    reason: DeclinedReason
    detail: NonEmpty  # the business's reason, in words
    alternative_offered: NonEmpty | None = None
    unanswered_questions: tuple[Question, ...] = ()


BookResult = Annotated[
    Booked | BookDeclined | Voicemail | NoAnswer | Failed, Field(discriminator="status")
]

CallResult = Answered | Declined | Booked | BookDeclined | Voicemail | NoAnswer | Failed
"""Any result a call can end with (the handle's type; each job's union is the closed one)."""
