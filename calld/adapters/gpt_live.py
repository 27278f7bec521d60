"""GPT-Live primary-WebSocket events -> domain events, and the client events calld sends.

GPT-Live (gpt-live.md) talks JSON text frames. Server events become domain events;
the backend's tool calls arrive nested in `response.event` and are final only at a
completed `function_call` item (§7.2). OpenAI's older Realtime API uses look-alike
event names, and a client pointed at the wrong endpoint would otherwise fail
quietly, so Realtime shapes are rejected loudly (§10). Builders return plain dicts;
the runtime serializes them. Pure translation, no IO.

record_task_result has one schema per job (LivePlan.job): a quick ask's (answered,
declined, voicemail, unclear) or a booking's (booked, declined, voicemail, and the
non-terminal in_progress, with the confirmed details, the alternative offered and
the questions left unanswered). LiveInbound reads a record by the session's job.
"""

from __future__ import annotations

import binascii
import logging
from collections.abc import Mapping
from typing import Annotated, Any, Literal, get_args

import orjson
import pybase64
from pydantic import (BaseModel, ConfigDict, Discriminator, Field, StringConstraints, Tag, TypeAdapter, ValidationError,
                      model_validator)

from calld.adapters._wire import plain_object, problem
from calld.core.answers import Aisle, Cited, DayRange, Fact, Hours, KindStock, NoSetHours, Stock
from calld.core.events import (
    BookingDetails,
    DTMF_KEYS,
    BookStatus,
    DtmfRequested,
    EndCallRequested,
    Event,
    InputTranscript,
    LiveClosed,
    LiveError,
    LiveStarted,
    OutputAudio,
    OutputTranscript,
    ResponseDone,
    TaskRecorded,
    TaskStatus,
    ToolCallRejected,
)
from calld.core.plan import END_CALL, RECORD_TASK_RESULT, SEND_DTMF, JobKind, LivePlan

log = logging.getLogger("calld.live")


class LiveProtocolError(ValueError):
    """A server event calld cannot read, or one from the Realtime API; the message says which."""


class LiveEventMalformed(LiveProtocolError):
    """One server event calld cannot read (bad JSON, a missing field, audio that is not base64):
    the event is dropped and the session goes on, as a bad media frame is dropped."""


# -- server event models -------------------------------------------------------------------------


class _Wire(BaseModel):
    model_config = ConfigDict(extra="ignore", frozen=True)


class _Event(_Wire):
    type: str


class _Session(_Wire):
    id: str


class _SessionStarted(_Event):
    session: _Session


class _ErrorBody(_Wire):
    type: str | None = None
    code: str | int | None = None
    message: str = ""


class _Error(_Event):
    error: _ErrorBody


class _Delta(_Event):
    delta: str


class _TranscriptDelta(_Delta):
    start_ms: int | None = None  # on the session timeline (audio deltas carry these only on the sideband)
    end_ms: int | None = None


class _Item(_Wire):
    type: str
    status: str | None = None
    call_id: str | None = None  # the id tool outputs answer to; `id` is the item's own
    name: str | None = None
    arguments: str | None = None


class _Inner(_Wire):
    type: str
    item: _Item | None = None


class _ResponseEvent(_Event):
    delegation_id: str | None = None
    event: _Inner


class _SessionClosed(_Event):
    reason: str | None = None


_TAG_BY_TYPE = {
    "session.started": "started",
    "error": "error",
    "session.output_audio.delta": "delta",
    "session.input_transcript.delta": "transcript",
    "session.output_transcript.delta": "transcript",
    "response.event": "response",
    "session.closed": "closed",
}


def _event_tag(value: Any) -> str:
    kind = value.get("type") if isinstance(value, dict) else getattr(value, "type", None)
    return _TAG_BY_TYPE.get(kind, "other") if isinstance(kind, str) else "other"


_server_event = TypeAdapter(
    Annotated[
        Annotated[_SessionStarted, Tag("started")]
        | Annotated[_Error, Tag("error")]
        | Annotated[_Delta, Tag("delta")]
        | Annotated[_TranscriptDelta, Tag("transcript")]
        | Annotated[_ResponseEvent, Tag("response")]
        | Annotated[_SessionClosed, Tag("closed")]
        | Annotated[_Event, Tag("other")],
        Discriminator(_event_tag),
    ]
)

# Acks and bookkeeping that need no action (usage is cumulative; the final figure comes with
# session.closed). Anything else unknown is logged, so new server events are noticed.
_NO_OPS = frozenset(
    {
        "session.delegation.created",
        "session.usage.updated",
        "session.instructions.appended",
        "session.thinking.appended",
        "session.commentary.appended",
        "session.updated",
        "session.input_audio.muted",
        "session.input_audio.unmuted",
        "info",
    }
)
_REALTIME_PREFIXES = (
    "input_audio_buffer.",
    "conversation.",
    "output_audio_buffer.",
    "mcp_list_tools.",
    "rate_limits.",
    "transcription_session.",
)


def _is_realtime(kind: str) -> bool:
    return (
        kind.startswith(_REALTIME_PREFIXES)
        or kind == "session.created"
        or (kind.startswith("response.") and kind != "response.event")
    )


# -- tool arguments ------------------------------------------------------------------------------


Weekday = Literal["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"]
Clock24 = Annotated[str, StringConstraints(pattern=r"^([01]\d|2[0-3]):[0-5]\d$")]
Said = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=2000)]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="ignore", frozen=True, str_strip_whitespace=True)


class _Range(_Strict):
    days: list[Weekday]
    opens: Clock24 | None
    closes: Clock24 | None
    closed: bool
    around_the_clock: bool
    date: str | None
    days_quote: str | None = None
    times_quote: str | None = None
    context_quote: str | None = None
    readback: bool = False

    @model_validator(mode="after")
    def _one_reading(self) -> _Range:
        if (self.closed or self.around_the_clock) and (self.opens or self.closes):
            raise ValueError("a range closed or open around the clock has no opens or closes")
        if self.closed and self.around_the_clock:
            raise ValueError("a range cannot be closed and open around the clock")
        if not (self.closed or self.around_the_clock or self.opens or self.closes):
            raise ValueError("a range needs opens, closes, closed or around_the_clock")
        return self

    def typed(self) -> DayRange:
        return DayRange(tuple(dict.fromkeys(self.days)), self.opens, self.closes, self.closed, self.date or None,
                        self.around_the_clock)

    def facts(self) -> list[Fact]:
        said, back = self.times_quote, self.readback
        out = [Fact("days", ",".join(dict.fromkeys(self.days)), self.days_quote, back,
                    topic="closed" if self.closed else "")] if self.days else []  # "closed Sundays" names its days
        if self.date:
            out.append(Fact("date", self.date, self.days_quote, back, topic="closed" if self.closed else ""))
        if self.closed or self.around_the_clock:  # "closed Sunday" as its days_quote alone says the word too
            return [*out, Fact("closed" if self.closed else "always", "", said or self.days_quote, back, beside=self.days_quote),
                    *([Fact("yes", "", said or self.days_quote)] if self.around_the_clock and not back else [])]  # not "used to be"
        days, beside = (*self.days, *([self.date.lower()] if self.date else [])), self.days_quote  # "today" is a day too
        if self.opens and self.closes:  # two readings of one quote: "9 to 5" is no 9 to 9
            out.append(Fact("range", f"{self.opens}-{self.closes}", said, back, self.context_quote, days=days, beside=beside))
        else:
            out += [Fact("clock", t, said, back, self.context_quote, days=days, beside=beside)
                    for t in (self.opens, self.closes) if t]
        return out + [Fact("yes", "", q) for q in dict.fromkeys((said, self.days_quote)) if q]


class _Hours(_Strict):
    ranges: list[_Range]
    no_set_hours: bool = False  # absent in records written before it: hours as ranges
    no_set_hours_quote: str | None = None

    @model_validator(mode="after")
    def _ranges_or_none(self) -> _Hours:
        if self.no_set_hours and self.ranges:
            raise ValueError("no_set_hours has no ranges: give either the ranges or no_set_hours, not both")
        if not self.no_set_hours and not self.ranges:
            raise ValueError("hours need at least one range, or no_set_hours true when the business keeps no set hours")
        return self

    def typed(self) -> Hours | NoSetHours:
        return NoSetHours() if self.no_set_hours else Hours(tuple(r.typed() for r in self.ranges))

    def facts(self) -> list[Fact]:
        if self.no_set_hours:
            return [Fact("no_set_hours", "", self.no_set_hours_quote)]
        return [f for r in self.ranges for f in r.facts()]


def _limited(availability: str) -> str:
    """A stock yes's value: "limited" (the check wants a number or a word of a few said), else none."""
    return "limited" if availability == "limited" else ""


class _Kind(_Strict):
    kind: Said
    availability: Literal["in_stock", "out_of_stock", "limited"]
    quantity: Annotated[int, Field(ge=0)] | None
    quote: str | None = None

    def facts(self) -> list[Fact]:
        out = [Fact("kind", self.kind, self.quote),
               Fact("no" if self.availability == "out_of_stock" else "yes", _limited(self.availability), self.quote, topic="stock")]
        return out + ([Fact("count", str(self.quantity), self.quote)] if self.quantity is not None else [])


class _Stock(_Strict):
    availability: Literal["in_stock", "out_of_stock", "limited", "some_kinds", "unknown"]
    quantity: Annotated[int, Field(ge=0)] | None
    kinds: list[_Kind]
    quote: str | None = None
    readback: bool = False

    @model_validator(mode="after")
    def _kinds_only_when_some(self) -> _Stock:
        if self.availability != "some_kinds" and self.kinds:
            raise ValueError(f"only some_kinds names kinds, not {self.availability}")
        if self.availability == "some_kinds" and not (
                any(k.availability != "out_of_stock" for k in self.kinds) and any(k.availability == "out_of_stock" for k in self.kinds)):
            raise ValueError("some_kinds needs a kind in stock and a kind out of stock")
        return self

    def facts(self) -> list[Fact]:
        if self.availability == "some_kinds":
            return [f for k in self.kinds for f in k.facts()]
        if self.availability == "unknown":
            return [Fact("no", "", self.quote, item=True)] if self.quote else []
        said = "no" if self.availability == "out_of_stock" else "yes"
        out = [Fact(said, _limited(self.availability), self.quote, self.readback, item=True, topic="stock")]
        return out + ([Fact("count", str(self.quantity), self.quote, self.readback)] if self.quantity is not None else [])


class _Aisle(_Strict):
    location: Said
    quote: str | None = None
    readback: bool = False

    def facts(self) -> list[Fact]:
        return [Fact("place", self.location, self.quote, self.readback, item=True)] + (
            [Fact("yes", "", self.quote)] if self.quote else [])


class _TaskResultArgs(_Strict):
    status: TaskStatus
    quotes: list[str] = []
    answer_text: str | None = None
    notes: str | None = None
    reason: Literal["refused", "unknown"] | None = None
    hours: _Hours | None = None
    stock: _Stock | None = None
    aisle: _Aisle | None = None
    outcome_quote: str | None = None
    opt_out_quote: str | None = None

    @model_validator(mode="before")
    @classmethod
    def _only_answers_carry_text(cls, data: Any) -> Any:
        # A declined call has no answer, whatever text or fields the model put there.
        if isinstance(data, dict) and data.get("status") != "answered":
            return {**data, "answer_text": None, "hours": None, "stock": None, "aisle": None}
        return data

    @model_validator(mode="after")
    def _answer_needs_text(self) -> _TaskResultArgs:
        if self.status == "answered" and not self.answer_text:
            raise ValueError("status 'answered' needs a non-empty answer_text")
        if self.status == "answered" and sum(x is not None for x in (self.hours, self.stock, self.aisle)) > 1:
            raise ValueError("an answer gives one of hours, stock or aisle: the one the question asks")
        return self  # a declined record's null reason is "not said": the schema allows it, so the app takes it

    def typed(self) -> Hours | NoSetHours | Stock | Aisle | None:
        if self.hours is not None:
            return self.hours.typed()
        if self.stock is not None:
            st = self.stock
            return Stock(st.availability, st.quantity, tuple(KindStock(k.kind, k.availability, k.quantity) for k in st.kinds))
        if self.aisle is not None:
            return Aisle(self.aisle.location)
        return None

    def cited(self) -> Cited:
        """The record's facts, each with the words the model points at (calld.evidence.check reads them)."""
        answer = self.hours or self.stock or self.aisle
        facts = tuple(answer.facts()) if self.status == "answered" and answer is not None else ()
        said = self.outcome_quote
        outcome = Fact(self._sign(), "", said, topic="stock" if self.stock else "") if said or self.status == "declined" else None
        return Cited(self.status, facts, outcome, self.opt_out_quote)

    def _sign(self) -> str:
        """What the outcome's words must say: a no for a decline or for stock that is out or unknown, a yes for
        stock they have or an answer in words alone; for hours, an aisle or kinds both in and out, only that it
        was said (their facts carry their own yes or no)."""
        if self.status == "declined":
            return "no"
        if self.stock is not None and self.stock.availability in ("out_of_stock", "unknown"):
            return "no"
        typed = self.hours or self.aisle or (self.stock and self.stock.availability == "some_kinds")
        return "said" if self.status == "answered" and typed else "yes"


class _BookResultArgs(BaseModel):
    """A booking's record_task_result. Which fields a status needs is checked here, at the boundary;
    whether a booking fits the request (party, window, constraints) is the reducer's rule."""

    model_config = ConfigDict(extra="ignore", frozen=True, str_strip_whitespace=True)

    status: BookStatus
    confirmation_text: str | None = None
    confirmed_party: int | None = None
    confirmed_time: str | None = None
    confirmed_constraints: str | None = None
    minutes_from_requested: int | None = None
    alternative_offered: str | None = None
    reason: str | None = None
    reason_code: Literal["fully_booked", "no_slot_in_window", "details_missing", "refused"] | None = None
    unanswered_questions: list[str] = []
    quotes: list[str] = []
    outcome_quote: str | None = None
    opt_out_quote: str | None = None
    party_quote: str | None = None
    time_quote: str | None = None
    date_quote: str | None = None
    party_readback: bool = False
    time_readback: bool = False
    date_readback: bool = False

    @model_validator(mode="before")
    @classmethod
    def _only_bookings_carry_a_confirmation(cls, data: Any) -> Any:
        # Nothing was confirmed unless the status says booked, whatever text the model put there.
        if isinstance(data, dict) and data.get("status") != "booked":
            return {**data, "confirmation_text": None}
        return data

    @model_validator(mode="after")
    def _status_needs(self) -> _BookResultArgs:
        if self.status == "booked":
            missing = [
                name
                for name, value in (
                    ("confirmation_text", self.confirmation_text),
                    ("confirmed_party", self.confirmed_party),
                    ("confirmed_time", self.confirmed_time),
                )
                if value in (None, "")
            ]
            if missing:
                raise ValueError(f"status 'booked' needs {', '.join(missing)}")
            if self.confirmed_party is not None and self.confirmed_party < 1:
                raise ValueError("confirmed_party must be at least 1")
        # A decline's null reason and reason_code are "not said": the schema allows them, so the app takes them.
        return self

    def cited(self) -> Cited:
        """The booking's facts, each with the words the model points at (calld.evidence.check reads them):
        the clock time and any date words of confirmed_time, the party, the outcome."""
        if self.status != "booked":
            outcome = Fact("no", "", self.outcome_quote, topic="booking") if self.status == "declined" else None
            return Cited(self.status, (), outcome, self.opt_out_quote)
        facts = [Fact("count", str(self.confirmed_party), self.party_quote, self.party_readback),
                 Fact("clock", self.confirmed_time or "", self.time_quote, self.time_readback),
                 Fact("date", self.confirmed_time or "", self.date_quote, self.date_readback)]
        facts += [Fact("yes", "", q, topic="booking") for q in dict.fromkeys((self.party_quote, self.time_quote, self.date_quote)) if q]
        return Cited(self.status, tuple(facts), Fact("yes", "", self.outcome_quote, topic="booking"), self.opt_out_quote)

    def details(self) -> BookingDetails:
        return BookingDetails(
            confirmation_text=self.confirmation_text,
            party=self.confirmed_party,
            time=self.confirmed_time or None,
            constraints=self.confirmed_constraints or None,
            minutes_from_requested=self.minutes_from_requested,
            alternative_offered=self.alternative_offered or None,
            reason=self.reason or None,
            unanswered_questions=tuple(q for q in self.unanswered_questions if q),
            reason_code=self.reason_code,
        )


class _EndCallArgs(_Wire):
    reason: str | None = None


class _DtmfArgs(_Wire):
    digits: str

    @model_validator(mode="after")
    def _keys(self) -> _DtmfArgs:
        bad = sorted(set(self.digits) - DTMF_KEYS)
        if not 1 <= len(self.digits) <= 16 or bad:
            raise ValueError(
                f"digits must be 1 to 16 keys of 0-9 * # A-D (got {self.digits!r}"
                + (f"; not keys: {' '.join(bad)}" if bad else "") + ")"
            )
        return self


def explain(exc: ValidationError, *, tagged: bool) -> str:
    """'where: what' per problem; a union tag at loc[0] (tagged=True) is not a wire name."""
    parts = []
    for err in exc.errors(include_url=False):
        where = ".".join(map(str, err["loc"][1:] if tagged else err["loc"]))
        said = problem(err, where)
        parts.append(said if where else said.removeprefix(": "))
    return "; ".join(parts)


# -- inbound -------------------------------------------------------------------------------------


class LiveInbound:
    """Server events of one session -> domain events.

    Stateful only in knowing whether `session.started` came: an `error` before it
    replaced the start (the session never began), one after it failed a single command.
    `job` says which record_task_result schema the session was given (see `session_start`).
    """

    def __init__(self, job: JobKind = "quick_ask") -> None:
        self._started = False
        self._job = job

    @property
    def started(self) -> bool:
        return self._started

    def audio(self, text: str) -> bytes | None:
        """The PCM of a well-formed output audio delta, read without building an event: the steady
        downlink, which the runtime plays and records before the reducer is told of it as a
        stretch. None for every other event, and for a delta whose fields are not plainly of their
        types: `feed` reads it, and its validating parser accepts or explains it. Raises
        LiveEventMalformed as `feed` would. One function over the C parsers, as the uplink's
        InboundMedia.audio is."""
        if '"session.output_audio.delta"' not in text:
            return None
        try:
            event = orjson.loads(text)
        except (ValueError, RecursionError):
            return None
        if type(event) is not dict or event.get("type") != "session.output_audio.delta" or type(delta := event.get("delta")) is not str:
            return None
        return _audio(delta)

    def feed(self, text: str) -> list[Event]:
        """Translate one text frame. Raises LiveProtocolError for malformed or Realtime events."""
        if (pcm := self.audio(text)) is not None:
            return [OutputAudio(pcm)]
        if (words := _plain_transcript_delta(text)) is not None:
            return [words]
        try:
            event = _server_event.validate_json(text)
        except ValidationError as exc:
            raise LiveEventMalformed(f"bad GPT-Live event: {explain(exc, tagged=True)}") from None
        match event:
            case _SessionStarted(session=session):
                self._started = True
                return [LiveStarted(session.id)]
            case _Error(error=err):
                code = str(err.code if err.code is not None else err.type or "unknown")
                return [LiveError(code, err.message, fatal=not self._started)]
            case _Delta(type="session.output_audio.delta", delta=delta):
                return [OutputAudio(_audio(delta))]
            case _TranscriptDelta(type="session.input_transcript.delta", delta=delta, start_ms=start, end_ms=end):
                return [InputTranscript(delta, start, end)]
            case _TranscriptDelta(delta=delta, start_ms=start, end_ms=end):
                return [OutputTranscript(delta, start, end)]
            case _ResponseEvent(event=inner):
                return _tool_call(inner, self._job)
            case _SessionClosed(reason=reason):
                return [LiveClosed(reason or "unspecified")]
            case _ if _is_realtime(event.type):
                raise LiveProtocolError(
                    f"{event.type!r} is a Realtime API event, not GPT-Live: the socket is talking to the "
                    "wrong endpoint (GPT-Live is /v1/live/sessions, not /v1/realtime)"
                )
            case _:
                if event.type not in _NO_OPS:
                    log.info("ignoring unknown GPT-Live event %r", event.type)
                return []


_TRANSCRIPT_DELTAS = {"session.input_transcript.delta": InputTranscript, "session.output_transcript.delta": OutputTranscript}


def _plain_transcript_delta(text: str) -> InputTranscript | OutputTranscript | None:
    """A well-formed transcript delta as its event, read without building models: the words come
    a few times a second each way. Anything that is not plainly one (a time as text, a missing
    delta) returns None and goes through the validating parser, which accepts or explains it."""
    event = plain_object(text, '_transcript.delta"')
    if event is None or type(name := event.get("type")) is not str or (kind := _TRANSCRIPT_DELTAS.get(name)) is None:
        return None
    delta, start, end = event.get("delta"), event.get("start_ms"), event.get("end_ms")
    if type(delta) is not str or not (start is None or type(start) is int) or not (end is None or type(end) is int):
        return None
    return kind(delta, start, end)


def _audio(delta: str) -> bytes:
    try:
        return pybase64.b64decode(delta, validate=True)
    except (binascii.Error, ValueError) as exc:  # ValueError: non-ASCII text in the delta
        raise LiveEventMalformed(f"bad GPT-Live event: session.output_audio.delta delta is not base64 ({exc})") from None


# The backend's response is over: every function call it made has been delivered (§7.2 step 5).
_RESPONSE_ENDS = frozenset({"response.completed", "response.failed", "response.incomplete"})


def _tool_call(inner: _Inner, job: JobKind = "quick_ask") -> list[Event]:
    """A finished backend function call -> its domain event; every other nested event -> []."""
    item = inner.item
    if inner.type in _RESPONSE_ENDS:
        return [ResponseDone(inner.type.removeprefix("response."))]
    if inner.type != "response.output_item.done" or item is None:
        return []
    if item.type != "function_call" or item.status != "completed":
        return []  # messages, reasoning, and calls cut short (status incomplete)
    if not item.call_id or not item.name:
        raise LiveEventMalformed("bad GPT-Live event: completed function_call item has no call_id or name")
    call_id, name = item.call_id, item.name
    if name == RECORD_TASK_RESULT:
        try:
            record = read_record(item.arguments or "", job)
        except ValidationError as exc:
            return [ToolCallRejected(call_id, name, f"invalid arguments: {explain(exc, tagged=False)}",
                                     opt_out=_opt_out_quote(item.arguments))]
        return [recorded(call_id, record, item.arguments or "")]
    if name == END_CALL:
        # Honour a hang-up request even with garbled arguments: the reason is only a note.
        try:
            reason = _EndCallArgs.model_validate_json(item.arguments or "{}").reason
        except ValidationError as exc:
            log.info("end_call %s arguments unreadable: %s", call_id, explain(exc, tagged=False))
            reason = None
        return [EndCallRequested(call_id, reason)]
    if name == SEND_DTMF:
        try:
            digits = _DtmfArgs.model_validate_json(item.arguments or "").digits
        except ValidationError as exc:
            return [ToolCallRejected(call_id, name, f"invalid arguments: {explain(exc, tagged=False)}")]
        return [DtmfRequested(call_id, digits)]
    return [ToolCallRejected(
        call_id, name, f"unknown tool (the tools are {RECORD_TASK_RESULT}, {SEND_DTMF} and {END_CALL})"
    )]


RecordArgs = _TaskResultArgs | _BookResultArgs
BOOK_RECORD_FIELDS = frozenset(_BookResultArgs.model_fields)  # what a booking record may carry (a stub script's overrides too)


def read_record(arguments: str | Mapping[str, Any], job: JobKind = "quick_ask") -> RecordArgs:
    """A record_task_result's arguments (the JSON as sent, or its object) read by the job's schema; raises
    ValidationError on a shape the schema or the domain refuses."""
    model = _BookResultArgs if job == "book" else _TaskResultArgs
    if isinstance(arguments, (str, bytes)):
        return model.model_validate_json(arguments)
    return model.model_validate(arguments)


def recorded(call_id: str, record: RecordArgs, arguments: str) -> TaskRecorded:
    """The domain event of a valid record; `arguments` keeps the JSON as sent, for the evidence check."""
    if isinstance(record, _BookResultArgs):
        return TaskRecorded(call_id, record.status, None, None, record.details(), quotes=_quotes(record.quotes),
                            arguments=arguments, opt_out=_said(record.opt_out_quote))
    return TaskRecorded(call_id, record.status, record.answer_text, record.notes, quotes=_quotes(record.quotes),
                        answer=record.typed(), reason=record.reason, arguments=arguments, opt_out=_said(record.opt_out_quote))


def _said(quote: str | None) -> str | None:
    return (quote.strip() or None) if quote is not None else None


def _opt_out_quote(arguments: str | None) -> str | None:
    """A refused record's opt_out_quote, read as leniently as JSON allows: an opt-out is never lost
    because another field of its record was wrong."""
    try:
        quote = orjson.loads(arguments or "").get("opt_out_quote")
    except (ValueError, AttributeError):
        return None
    return _said(quote) if isinstance(quote, str) else None


def _quotes(quotes: list[str]) -> tuple[str, ...]:
    return tuple(q.strip() for q in quotes if q.strip())


# -- client events -------------------------------------------------------------------------------


def _nullable_text(description: str) -> dict[str, Any]:
    return {"type": ["string", "null"], "description": description}


def _nullable(kind: str, description: str) -> dict[str, Any]:
    return {"type": [kind, "null"], "description": description}


def _object(properties: dict[str, Any]) -> dict[str, Any]:
    return {"type": "object", "properties": properties, "required": list(properties), "additionalProperties": False}


def _nullable_object(properties: dict[str, Any], description: str) -> dict[str, Any]:
    return {"anyOf": [_object(properties), {"type": "null"}], "description": description}


_QUOTES = {
    "type": "array",
    "items": {"type": "string"},
    "description": (
        "The business's own words that carry this outcome, verbatim as heard (one sentence or phrase each); "
        "never your own words. Every time, day, number and place you record must stand in them."
    ),
}
_QUOTE = ("The business's exact words, within one of its sentences, that state {}; null when {}. Never your "
          "own words.")
_OUTCOME_QUOTE = _nullable_text(_QUOTE.format(
    "the outcome (the answer, the yes or the no, 'we don't know', 'it's booked', 'we're full')",
    "not said; needed for a decline and for a fact marked readback"))
_OPT_OUT_QUOTE = _nullable_text(_QUOTE.format("that they do not want to be called again", "they did not say so"))
_READBACK = {"type": "boolean", "description": (
    "true when this fact stands in your own question just before the business's outcome_quote, which answers it "
    "('a table for two at 7?' / 'Sure, no problem.'); its quote is then null. Else false.")}
_WEEKDAYS = ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"]
_HHMM = {"type": ["string", "null"], "pattern": "^([01][0-9]|2[0-3]):[0-5][0-9]$", "description": "24-hour HH:MM, or null"}
_HOURS_FIELD = _nullable_object({
    "ranges": {"type": "array", "description": "One entry per run of days with the same hours.", "items": _object({
        "days": {"type": "array", "items": {"type": "string", "enum": _WEEKDAYS},
                 "description": "The weekdays these hours are for, as the business named them; empty if it named none."},
        "opens": _HHMM,
        "closes": _HHMM,
        "closed": {"type": "boolean", "description": "The business said it is closed on these days."},
        "around_the_clock": {"type": "boolean", "description": "The business said it is open 24 hours on these days."},
        "date": {"type": ["string", "null"], "description": "'today', 'tomorrow' or a date, when the business said one; else null."},
        "days_quote": _nullable_text(_QUOTE.format("these days or this date", "it named none")),
        "times_quote": _nullable_text(_QUOTE.format(
            "the opening and closing (or closed, or open 24 hours)", "read back")),
        "context_quote": _nullable_text(
            "Only when times_quote states one end alone (an opening, or a closing, said apart from the other: 'Thursdays "
            "till eight' after 'ten till six'), or a bare 'half past' or 'ten': the business's exact words, within one "
            "of its sentences, that state the other end or the hour; else null."),
        "readback": _READBACK,
    })},
    "no_set_hours_quote": _nullable_text(_QUOTE.format("that it keeps no set hours", "no_set_hours is false")),
    "no_set_hours": {"type": "boolean", "description": (
        "true only when the business said it keeps no set hours (by appointment only, no set hours, they vary, call "
        "ahead); ranges is then empty. Otherwise false.")},
}, "An hours answer as ranges, or no_set_hours; null for any other question.")
_STOCK_FIELD = _nullable_object({
    "availability": {"type": "string", "enum": ["in_stock", "out_of_stock", "limited", "some_kinds", "unknown"]},
    "quantity": _nullable("integer", "How many, only when the business said an exact number; else null."),
    "kinds": {"type": "array", "description": "Only for some_kinds: each kind the business spoke of.", "items": _object({
        "kind": {"type": "string", "description": "The kind, named as the business named it."},
        "availability": {"type": "string", "enum": ["in_stock", "out_of_stock", "limited"]},
        "quantity": _nullable("integer", "How many of this kind, only when said exactly."),
        "quote": _nullable_text(_QUOTE.format("this kind's name and whether they have it", "not said")),
    })},
    "quote": _nullable_text(_QUOTE.format("whether they have it (the count stands in it)", "read back or unknown")),
    "readback": _READBACK,
}, "A stock answer; null for any other question.")
_AISLE_FIELD = _nullable_object({
    "location": {"type": "string", "description": (
        "The place in the business's own words from its quote, as exactly as it gave it ('aisle 14, bay 3', 'the "
        "garden department'); where it named two different places, the first it gave for the item (the other in notes).")},
    "quote": _nullable_text(_QUOTE.format("the place", "read back")),
    "readback": _READBACK,
}, "An aisle answer; null for any other question.")


def _book_record_tool() -> dict[str, Any]:
    """record_task_result for a booking: progress notes (in_progress) and the outcome."""
    properties: dict[str, Any] = {
        "status": {
            "type": "string",
            "enum": list(get_args(BookStatus)),
            "description": (
                "in_progress: a note of progress (details exchanged, a question the user must answer); the "
                "call goes on. booked: the business confirmed the booking after the agent read it back. "
                "declined: no booking (fully booked, or only a time outside the window). voicemail: no person."
            ),
        },
        "confirmation_text": _nullable_text("The business's confirmation in its words; null unless booked."),
        "confirmed_party": _nullable("integer", "The party size the business confirmed; null unless booked."),
        "confirmed_time": _nullable_text("The day and time the business confirmed; null unless booked."),
        "confirmed_constraints": _nullable_text(
            "What was agreed about the user's notes (seating, a high chair...); null when there were none."
        ),
        "minutes_from_requested": _nullable(
            "integer", "Minutes from the requested time to the confirmed one (0: the same; negative: earlier)."
        ),
        "alternative_offered": _nullable_text("Another day or time the business offered, or null."),
        "reason": _nullable_text("Why the business cannot book, in its words, when declined; null when they did not say."),
        "reason_code": {
            "type": ["string", "null"], "enum": ["fully_booked", "no_slot_in_window", "details_missing", "refused", None],
            "description": (
                "declined only: fully_booked (no table), no_slot_in_window (only another time, outside the window), "
                "details_missing (they need something the request does not give), refused; null when they did not say, "
                "or for any other status."
            ),
        },
        "quotes": _QUOTES,
        "outcome_quote": _OUTCOME_QUOTE,
        "opt_out_quote": _OPT_OUT_QUOTE,
        "party_quote": _nullable_text(_QUOTE.format("the party size", "read back or not booked")),
        "time_quote": _nullable_text(_QUOTE.format("the time", "read back or not booked")),
        "date_quote": _nullable_text(_QUOTE.format("the day or date", "read back, not said or not booked")),
        "party_readback": _READBACK,
        "time_readback": _READBACK,
        "date_readback": _READBACK,
        "unanswered_questions": {
            "type": "array",
            "items": {"type": "string"},
            "description": "Questions the business asked that the request does not answer, as asked.",
        },
    }
    return {
        "type": "function",
        "name": RECORD_TASK_RESULT,
        "description": (
            "Record the booking's progress (in_progress) or its outcome (booked, declined, voicemail). "
            "A booked record outside the user's window is refused."
        ),
        "parameters": {
            "type": "object",
            "properties": properties,
            "required": list(properties),
            "additionalProperties": False,
        },
        "strict": True,
    }


def _tools(job: JobKind = "quick_ask") -> list[dict[str, Any]]:
    """The backend's function tools, strict so their arguments always match the schema."""
    tools = _quick_ask_tools()
    if job == "book":
        tools[0] = _book_record_tool()
    return [*tools, _send_dtmf_tool()]


def _send_dtmf_tool() -> dict[str, Any]:
    return {
        "type": "function",
        "name": SEND_DTMF,
        "description": (
            "Press keys on the phone line, for a recorded phone menu. Saying a number aloud presses nothing; "
            "only this does. The output says whether the keys were sent."
        ),
        "parameters": {
            "type": "object",
            "properties": {
                "digits": {
                    "type": "string",
                    "pattern": "^[0-9*#A-D]{1,16}$",
                    "description": "The keys to press, in order: 0-9, *, #, A-D.",
                }
            },
            "required": ["digits"],
            "additionalProperties": False,
        },
        "strict": True,
    }


def _quick_ask_tools() -> list[dict[str, Any]]:
    return [
        {
            "type": "function",
            "name": RECORD_TASK_RESULT,
            "description": "Record the outcome of the call's one question. Call it once the outcome is clear.",
            "parameters": {
                "type": "object",
                "properties": {
                    "status": {
                        "type": "string",
                        "enum": list(get_args(TaskStatus)),
                        "description": (
                            "answered: the business gave the answer; declined: it would not or could not; "
                            "voicemail: no person, only a recording; unclear: the question must be asked again."
                        ),
                    },
                    "quotes": _QUOTES,
                    "answer_text": _nullable_text("The answer as the business put it; null unless status is answered."),
                    "notes": _nullable_text("Anything else the person should know, or null."),
                    "reason": {"type": ["string", "null"], "enum": ["refused", "unknown", None],
                               "description": "declined only: refused (would not say) or unknown (did not know); null when "
                                              "they did not say which, or for any other status."},
                    "hours": _HOURS_FIELD,
                    "stock": _STOCK_FIELD,
                    "aisle": _AISLE_FIELD,
                    "outcome_quote": _OUTCOME_QUOTE,
                    "opt_out_quote": _OPT_OUT_QUOTE,
                },
                "required": ["status", "quotes", "answer_text", "notes", "reason", "hours", "stock", "aisle",
                             "outcome_quote", "opt_out_quote"],
                "additionalProperties": False,
            },
            "strict": True,
        },
        {
            "type": "function",
            "name": END_CALL,
            "description": "Hang up. Call it after the closing line has been said.",
            "parameters": {
                "type": "object",
                "properties": {"reason": _nullable_text("Why the call ends, briefly, or null.")},
                "required": ["reason"],
                "additionalProperties": False,
            },
            "strict": True,
        },
    ]


def _client(kind: str, event_id: str | None, **body: Any) -> dict[str, Any]:
    # event_id is optional on the wire; omit it rather than send null to a strict parser.
    head: dict[str, Any] = {"type": kind} if event_id is None else {"type": kind, "event_id": event_id}
    return head | body


def session_start(plan: LivePlan, event_id: str) -> dict[str, Any]:
    """The first message: live model and voice, 16 kHz PCM both ways, Responses delegation."""
    responses = {
        "model": plan.backend_model,
        "instructions": plan.backend_instructions,
        "reasoning": {"effort": plan.reasoning_effort},
        "tools": _tools(plan.job),
        "tool_choice": "auto",
        "parallel_tool_calls": False,
    }
    session = {
        "model": plan.model,
        "instructions": plan.instructions,
        "audio": {"format": {"type": "audio/pcm", "rate": plan.sample_rate}, "output": {"voice": plan.voice}},
        "delegation": {"type": "responses", "responses": responses},
    }
    return _client("session.start", event_id, session=session)


def input_audio_append(pcm: bytes, *, event_id: str | None = None) -> dict[str, Any]:
    return _client("session.input_audio.append", event_id, audio=pybase64.b64encode(pcm).decode("ascii"))


def input_audio_append_text(pcm: bytes) -> str:
    """`input_audio_append(pcm)` as wire text, 50 times a second per call: base64 needs no JSON escaping."""
    return '{"type":"session.input_audio.append","audio":"' + pybase64.b64encode(pcm).decode("ascii") + '"}'


def commentary_append(text: str, *, event_id: str | None = None) -> dict[str, Any]:
    # delegation_id must be present even when null (general context); the server requires the key.
    return _client("session.commentary.append", event_id, content=text, delegation_id=None)


def function_call_output(call_id: str, output: str, *, event_id: str | None = None) -> dict[str, Any]:
    item = {"type": "function_call_output", "call_id": call_id, "output": output}
    return _client("response.item.create", event_id, item=item)


def response_create(*, event_id: str | None = None) -> dict[str, Any]:
    return _client("response.create", event_id)


def session_close(*, event_id: str | None = None) -> dict[str, Any]:
    return _client("session.close", event_id)
