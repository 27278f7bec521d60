"""Results of a call: closed unions on `status`, built so a contradiction cannot be.

`answered` requires answer_text; every other status pins it to None. A completed
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

NonEmpty = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=2000)]

VerdictSource = Literal["tool", "transcript", "none"]


class _Result(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")
    run_id: RunId
    call_control_id: CallControlId | None


class _Completed(_Result):
    call_control_id: CallControlId
    transcript_ref: NonEmpty
    audio_ref: NonEmpty
    verdict_source: VerdictSource


class Answered(_Completed):
    status: Literal["answered"] = "answered"
    answer_text: NonEmpty


class Declined(_Completed):
    status: Literal["declined"] = "declined"
    answer_text: None = None
    reason: str | None = None


class Voicemail(_Completed):
    status: Literal["voicemail"] = "voicemail"
    answer_text: None = None


class NoAnswer(_Result):
    status: Literal["no_answer"] = "no_answer"
    answer_text: None = None
    hangup_cause: str | None = None


class Failed(_Result):
    status: Literal["failed"] = "failed"
    answer_text: None = None
    reason: NonEmpty
    transcript_ref: str | None = None
    audio_ref: str | None = None


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


class Booked(_Completed):
    """The business confirmed a table: what it confirmed, and how far that is from what was asked."""

    status: Literal["booked"] = "booked"
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
    reason: NonEmpty
    alternative_offered: NonEmpty | None = None
    unanswered_questions: tuple[Question, ...] = ()


BookResult = Annotated[
    Booked | BookDeclined | Voicemail | NoAnswer | Failed, Field(discriminator="status")
]

CallResult = Answered | Declined | Booked | BookDeclined | Voicemail | NoAnswer | Failed
"""Any result a call can end with (the handle's type; each job's union is the closed one)."""
