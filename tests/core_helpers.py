"""Drive the sans-IO reducer by hand: a Call, a list of events, the effects they produced.

`Run` plays the part of the runtime, minus the IO: it feeds events one at a time
through `reduce_step`, keeps every step, and keeps the timer table the way the
runtime would (a `Schedule` sets a key, a `Cancel` or the timer firing clears it).
In strict mode (the default) a script may not contain an event the reducer
ignores, nor fire a timer that is not pending: a set-up that silently went wrong
fails loudly instead of testing the wrong state.
"""

from __future__ import annotations

import json
from collections.abc import Iterable

from attrs import define, field

from calld.core import events as ev
from calld.core.answers import DayRange, Hours
from calld.core.effects import (
    AbortLive,
    AppendCommentary,
    Cancel,
    CloseLive,
    ContinueResponse,
    Effect,
    Schedule,
    SendLiveAudio,
    SendToolOutput,
)
from calld.core.plan import CallPlan, Timings, build_book_plan, build_plan
from calld.core.reduce import Step, reduce_step
from calld.core.state import Call
from calld.domain.ids import E164, CallControlId, FirstName, RunId, StreamId, UserId
from calld.domain.questions import QuestionType

CCID = CallControlId("v3:test-call-control-id")
STREAM = StreamId("stream-1")
SESSION = "sess_1"

# Effects that reach the GPT-Live socket once it is open (OpenLive is the opening itself).
LIVE_BOUND = (SendLiveAudio, AppendCommentary, SendToolOutput, ContinueResponse, CloseLive, AbortLive)

TIMER_EVENTS: tuple[type, ...] = ev.TimerEvent.__args__  # type: ignore[attr-defined]


def make_plan(timings: Timings | None = None) -> CallPlan:
    return build_plan(
        run_id=RunId.new(),
        user_id=UserId("verify"),
        first_name=FirstName("Nathan"),
        to=E164("+15555550142"),
        from_=E164("+15555550100"),
        question=QuestionType.HOURS,
        item=None,
        command_id="cmd-1",
        live_model="gpt-live-1",
        backend_model="gpt-5.5",
        reasoning_effort="low",
        voice="marin",
        timings=timings or Timings(),
    )


def new_call(timings: Timings | None = None) -> Call:
    return Call(plan=make_plan(timings))


def make_book_plan(
    *, party: int = 2, time: str = "Friday 7pm", notes: str | None = "outdoor if possible", window: int = 30,
    timings: Timings | None = None,
) -> CallPlan:
    return build_book_plan(
        run_id=RunId.new(),
        user_id=UserId("verify"),
        first_name=FirstName("Nathan"),
        to=E164("+15555550142"),
        from_=E164("+15555550100"),
        party=party,
        time=time,
        notes=notes,
        window_minutes=window,
        command_id="cmd-1",
        live_model="gpt-live-1",
        backend_model="gpt-5.5",
        reasoning_effort="low",
        voice="marin",
        timings=timings or Timings(),
    )


def pcm(n: int, fill: int = 0) -> bytes:
    """n bytes of recognisable audio (each frame can carry its own fill byte)."""
    return bytes([fill % 256]) * n


@define
class Run:
    call: Call
    steps: list[tuple[ev.Event, Step]] = field(factory=list)
    timers: dict[str, ev.Event] = field(factory=dict)

    def step(self, event: ev.Event, *, strict: bool = True) -> Step:
        """Feed one event; return its Step. Strict: it must be handled, and a timer must be pending."""
        if isinstance(event, TIMER_EVENTS):
            keys = [k for k, e in self.timers.items() if e == event]
            if strict:
                assert keys, f"{event.kind} fired but no timer for it is pending: {self.timers}"
            for k in keys:
                del self.timers[k]
        step = reduce_step(self.call, event)
        if strict:
            assert step.ignored is None, f"set-up event {event!r} was ignored: {step.ignored}"
        for effect in step.effects:
            if isinstance(effect, Schedule):
                self.timers[effect.key] = effect.event
            elif isinstance(effect, Cancel):
                self.timers.pop(effect.key, None)
        self.steps.append((event, step))
        self.call = step.call
        return step

    def feed(self, *events: ev.Event, strict: bool = True) -> list[Effect]:
        """Feed events in order; return the effects they produced, in order."""
        out: list[Effect] = []
        for event in events:
            out.extend(self.step(event, strict=strict).effects)
        return out

    @property
    def effects(self) -> list[Effect]:
        return [e for _, step in self.steps for e in step.effects]

    def of(self, *types: type) -> list[Effect]:
        return [e for e in self.effects if isinstance(e, types)]

    @property
    def ignored(self) -> list[tuple[ev.Event, str]]:
        return [(event, step.ignored) for event, step in self.steps if step.ignored is not None]


def drive(events: Iterable[ev.Event], *, timings: Timings | None = None, call: Call | None = None) -> Run:
    """A fresh call (or `call`) with `events` fed strictly."""
    run = Run(call if call is not None else new_call(timings))
    run.feed(*events)
    return run


# -- scripts: each reaches one state and ignores nothing on the way ----------------------------------

DIALED: tuple[ev.Event, ...] = (ev.Begin(), ev.DialAccepted(CCID))
ANSWERED = (*DIALED, ev.CallInitiated(CCID), ev.CallAnswered(CCID))
MEDIA = (ev.MediaConnected(), ev.MediaStarted(STREAM, CCID, "L16", 16000))
STARTING = (*ANSWERED, *MEDIA)  # OpenLive sent, session.started not yet
LIVE = (*STARTING, ev.LiveStarted(SESSION))
# The record as the model sends it (per-fact quotes: calld.evidence.check_record reads these arguments).
TASK_ARGUMENTS = {
    "status": "answered", "quotes": ["We're open nine to five, Monday to Saturday."],
    "answer_text": "Nine to five, Monday to Saturday.", "notes": None, "reason": None, "stock": None, "aisle": None,
    "outcome_quote": None, "opt_out_quote": None,
    "hours": {"no_set_hours": False, "no_set_hours_quote": None, "ranges": [
        {"days": ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday"], "opens": "09:00", "closes": "17:00",
         "closed": False, "around_the_clock": False, "date": None, "days_quote": "Monday to Saturday",
         "times_quote": "nine to five", "context_quote": None, "readback": False}]}}
TASK = ev.TaskRecorded("fc_task", "answered", "Nine to five, Monday to Saturday.",
                       quotes=("We're open nine to five, Monday to Saturday.",),
                       answer=Hours((DayRange(("monday", "tuesday", "wednesday", "thursday", "friday", "saturday"), "09:00", "17:00"),)),
                       arguments=json.dumps(TASK_ARGUMENTS))
ASKED = ev.OutputTranscript("What are your opening hours?")
ANSWER = ev.InputTranscript("We're open nine to five, Monday to Saturday.")
RESPONSE_DONE = ev.ResponseDone("completed")
HEARD = (*LIVE, ASKED, ANSWER)  # the business has answered; nothing is recorded yet
FAREWELL = (*HEARD, TASK, RESPONSE_DONE)
# GPT-Live's output during the goodbye: a loud delta of the closing line, then silent deltas
# (100 ms each, as GPT-Live paces them) until farewell_quiet_s of silence has streamed.
SPOKEN = ev.OutputAudio(bytes([0x10]) * 3200)
SILENT = ev.OutputAudio(bytes(3200))
QUIET_DELTAS = round(Timings().farewell_quiet_s * 10)
DRAINING = (*FAREWELL, ev.OutputTranscript("Thank you, goodbye!"), SPOKEN, *[SILENT] * QUIET_DELTAS)
MARKED = (*DRAINING, ev.LiveClosed("session.closed"))
TRAILING = (*MARKED, ev.MarkEchoed("HANGUP_MARK"))
REQUESTED = (*TRAILING, ev.TrailElapsed())
HUNG_UP = ev.CallHungUp(CCID, "normal_clearing", "caller")
DONE = (*REQUESTED, HUNG_UP)
