"""State tests for the sans-IO reducer, after h11's test_state.py: drive `reduce_step` directly.

No trio, no IO, no clock. Each test builds a Call from a real plan, feeds events
through `tests.core_helpers.Run` (which keeps the timer table the runtime would)
and asserts on the exact effects and tracks.
"""

from __future__ import annotations

import itertools
import json

import pytest

from calld.core import events as ev
from calld.core.effects import (
    AbortLive,
    AppendCommentary,
    Cancel,
    CloseLive,
    ContinueResponse,
    Hangup,
    OpenLive,
    PlaceDial,
    Schedule,
    SendLiveAudio,
    SendMark,
    SendMediaAudio,
    SendToolOutput,
)
from calld.core.line_audio import BYTES_PER_SECOND
from calld.core.plan import HANGUP_MARK, STEER_LINE, Timings  # the quick ask's steer
from calld.core.reduce import reduce, reduce_step
from calld.core.timers import LIVE_TIMERS

ENDED = tuple(Cancel(k) for k in (*LIVE_TIMERS, "hangup_confirm"))  # no timer outlives a call
from calld.core.state import (
    HangupPending,
    TRACKS,
    Failure,
    ConvTalking,
    ConvWaiting,
    DialRejected,
    Dialed,
    DialSent,
    HangupDone,
    HangupDraining,
    HangupFarewell,
    HangupMarked,
    HangupNone,
    HangupRequested,
    HangupTrailing,
    HeldAudio,
    LiveActive,
    LiveClosing,
    LiveDone,
    LiveFailed,
    LiveIdle,
    LiveStarting,
    MediaStreaming,
    TelnyxAnswered,
    TelnyxEnded,
)
from tests.core_helpers import (
    ANSWERED,
    CCID,
    DIALED,
    DONE,
    DRAINING,
    ANSWER,
    ASKED,
    FAREWELL,
    HEARD,
    HUNG_UP,
    RESPONSE_DONE,
    LIVE,
    LIVE_BOUND,
    MARKED,
    MEDIA,
    REQUESTED,
    QUIET_DELTAS,
    SESSION,
    SILENT,
    SPOKEN,
    STARTING,
    STREAM,
    TASK,
    TASK_ARGUMENTS,
    TRAILING,
    Run,
    drive,
    new_call,
    pcm,
)

T = Timings()
FRAME = 640  # 20 ms of 16 kHz PCM16


def tracks(call):
    return {name: getattr(call, name) for name in TRACKS}


def tool_output(effect: SendToolOutput) -> dict:
    return json.loads(effect.output)


# -- illegal events change nothing -----------------------------------------------------------------

ILLEGAL = [
    ("answered-twice", ANSWERED, ev.CallAnswered(CCID)),
    ("initiated-after-answer", ANSWERED, ev.CallInitiated(CCID)),
    ("begin-twice", DIALED, ev.Begin()),
    ("dial-accepted-twice", DIALED, ev.DialAccepted(CCID)),
    ("dial-accepted-before-begin", (), ev.DialAccepted(CCID)),
    ("dial-failed-after-accept", DIALED, ev.DialFailed("busy")),
    ("media-connected-twice", STARTING, ev.MediaConnected()),
    ("media-started-twice", STARTING, ev.MediaStarted(STREAM, CCID, "L16", 16000)),
    ("media-audio-before-media-start", ANSWERED, ev.MediaAudio(pcm(FRAME), 1)),
    ("media-stopped-twice", (*LIVE, ev.MediaStopped("stop")), ev.MediaStopped("stop")),
    ("live-started-before-open-live", ANSWERED, ev.LiveStarted(SESSION)),
    ("live-started-twice", LIVE, ev.LiveStarted(SESSION)),
    ("input-transcript-while-starting", STARTING, ev.InputTranscript("Hello?")),
    ("output-audio-before-open-live", DIALED, ev.OutputAudio(pcm(FRAME))),
    ("mark-echo-without-mark", LIVE, ev.MarkEchoed(HANGUP_MARK)),
    ("mark-echo-while-draining", DRAINING, ev.MarkEchoed(HANGUP_MARK)),
    ("mark-echo-foreign-name", MARKED, ev.MarkEchoed("some-other-mark")),
    ("mark-echo-twice", TRAILING, ev.MarkEchoed(HANGUP_MARK)),
    ("trail-without-trail", LIVE, ev.TrailElapsed()),
    ("trail-while-marked", MARKED, ev.TrailElapsed()),
    ("drain-timeout-after-echo", TRAILING, ev.DrainTimedOut()),
    ("drain-timeout-before-mark", DRAINING, ev.DrainTimedOut()),
    ("farewell-max-while-draining", DRAINING, ev.FarewellElapsed()),
    ("close-timeout-while-talking", LIVE, ev.LiveCloseTimedOut()),
    ("close-timeout-after-close", MARKED, ev.LiveCloseTimedOut()),
    ("live-closed-twice", MARKED, ev.LiveClosed("again")),
    ("hangup-confirm-before-hangup", TRAILING, ev.HangupConfirmTimedOut()),
    ("stall-during-farewell", FAREWELL, ev.StallElapsed()),
    ("stall-before-live", STARTING, ev.StallElapsed()),
    (
        "duplicate-task-call-id",
        (*LIVE, ev.TaskRecorded("fc_1", "unclear", None)),
        ev.TaskRecorded("fc_1", "answered", "9 to 5"),
    ),
    ("duplicate-call-id-across-tools", (*LIVE, ev.TaskRecorded("fc_1", "unclear", None)), ev.EndCallRequested("fc_1")),
    ("duplicate-end-call", (*FAREWELL, ev.EndCallRequested("fc_end")), ev.EndCallRequested("fc_end")),
    (
        "duplicate-rejected-call",
        (*LIVE, ev.ToolCallRejected("fc_x", "lookup", "unknown tool")),
        ev.ToolCallRejected("fc_x", "lookup", "unknown tool"),
    ),
    ("crash-after-hangup-requested", REQUESTED, ev.CallCrashed("boom")),
    ("call-cap-after-hangup-requested", REQUESTED, ev.CallCapElapsed()),
    ("call-hangup-twice", DONE, HUNG_UP),
    ("media-audio-after-done", DONE, ev.MediaAudio(pcm(FRAME), 99)),
    ("output-transcript-after-done", DONE, ev.OutputTranscript("late")),
    ("call-cap-after-done", DONE, ev.CallCapElapsed()),
]


@pytest.mark.parametrize(("setup", "event"), [p[1:] for p in ILLEGAL], ids=[p[0] for p in ILLEGAL])
def test_illegal_event_changes_nothing(setup, event):
    before = drive(setup).call
    step = reduce_step(before, event)
    assert step.call is before
    assert step.effects == ()
    assert isinstance(step.ignored, str) and step.ignored
    # The two-tuple API says the same thing.
    after, effects = reduce(before, event)
    assert after is before and effects == []


def test_ignore_reason_names_the_event_and_the_track():
    step = reduce_step(drive(LIVE).call, ev.TrailElapsed())
    assert step.ignored == "timer.trail while hangup is none"
    step = reduce_step(drive((*LIVE, ev.TaskRecorded("fc_1", "unclear", None))).call, ev.EndCallRequested("fc_1"))
    assert "fc_1" in step.ignored


def test_legal_event_is_not_ignored():
    step = reduce_step(drive(DIALED).call, ev.CallAnswered(CCID))
    assert step.ignored is None
    assert step.call.telnyx == TelnyxAnswered()


# -- transport order is free -----------------------------------------------------------------------


def _orders():
    """Every interleaving of the dial response, the answer webhook and the media socket's own two frames."""
    pieces = [ev.DialAccepted(CCID), ev.CallAnswered(CCID), MEDIA[0], MEDIA[1]]
    for order in itertools.permutations(pieces):
        if order.index(MEDIA[0]) < order.index(MEDIA[1]):  # one socket: connected precedes start
            yield order


ORDERS = list(_orders())


def test_there_are_twelve_orders():
    assert len(ORDERS) == 12


@pytest.mark.parametrize("order", ORDERS, ids=lambda o: ">".join(e.kind.split(".")[-1] for e in o))
def test_any_transport_order_opens_live_once(order):
    run = Run(new_call())
    run.feed(ev.Begin(), *order)  # strict: no event of any order is ignored
    assert run.call.live == LiveStarting()
    assert isinstance(run.call.media, MediaStreaming)
    assert run.call.telnyx == TelnyxAnswered()
    assert run.call.dial == Dialed(CCID)
    assert run.of(OpenLive) == [OpenLive(run.call.plan.live)]
    # OpenLive comes exactly on the event that completed "answered and streaming".
    opener_event = next(e for e, s in run.steps if any(isinstance(x, OpenLive) for x in s.effects))
    last_needed = max(order.index(ev.CallAnswered(CCID)), order.index(MEDIA[1]))
    assert opener_event == order[last_needed]


def test_all_orders_reach_the_same_call():
    call = new_call()
    results = []
    for order in ORDERS:
        run = Run(call)
        run.feed(ev.Begin(), *order)
        # The stage timers (ring, media_wait) are armed and cancelled by which stage each order passes
        # through; every other effect, and the call, are the same whatever the order.
        staged = [e for e in run.effects if getattr(e, "key", None) not in ("ring", "media_wait")]
        results.append((run.call, sorted(e.kind for e in staged)))
    first = results[0]
    assert all(r == first for r in results)
    assert first[1] == sorted(["dial", "schedule", "live.open", "schedule"])  # the call cap; GPT-Live's readiness bound


def test_media_start_before_answer_is_just_a_state():
    run = drive((*DIALED, *MEDIA))
    assert isinstance(run.call.media, MediaStreaming)
    assert run.call.live == LiveIdle()
    assert run.of(OpenLive) == []
    effects = run.feed(ev.CallAnswered(CCID))
    assert effects == [Cancel("ring"), OpenLive(run.call.plan.live), Schedule("live_ready", Timings().live_ready_s, ev.LiveReadyElapsed())]
    assert run.call.live == LiveStarting()


def test_open_live_is_not_repeated():
    run = drive(STARTING)
    run.feed(ev.MediaAudio(pcm(FRAME), 1), ev.MachineDetected("human"), ev.DtmfReceived("1"))
    run.feed(ev.CallInitiated(CCID), ev.MediaStarted(STREAM, CCID, "L16", 16000), strict=False)
    assert len(run.of(OpenLive)) == 1


@pytest.mark.parametrize(
    "ending",
    [HUNG_UP, ev.CallCrashed("boom"), ev.CallCapElapsed()],
    ids=["far-party", "crash", "call-cap"],
)
def test_no_open_live_once_the_call_is_ending(ending):
    run = drive((*DIALED, ev.CallAnswered(CCID), ending, *MEDIA))
    assert run.of(OpenLive) == []
    assert run.call.live == LiveIdle()
    assert not isinstance(run.call.hangup, HangupNone)


# -- pickup hold -----------------------------------------------------------------------------------


def test_audio_before_live_started_is_held_and_flushed_in_order():
    run = drive((*DIALED, *MEDIA))
    frames = [(chunk, pcm(FRAME, chunk)) for chunk in range(1, 6)]
    # Three frames before the answer webhook (live idle), two while GPT-Live is starting.
    run.feed(*(ev.MediaAudio(p, c) for c, p in frames[:3]))
    assert run.call.live == LiveIdle(HeldAudio(tuple(frames[:3]), 3 * FRAME, 0))
    run.feed(ev.CallAnswered(CCID))
    assert run.call.live == LiveStarting(HeldAudio(tuple(frames[:3]), 3 * FRAME, 0))
    run.feed(*(ev.MediaAudio(p, c) for c, p in frames[3:]))
    assert run.call.live == LiveStarting(HeldAudio(tuple(frames), 5 * FRAME, 0))
    assert run.of(*LIVE_BOUND) == []  # nothing reaches GPT-Live before session.started

    effects = run.feed(ev.LiveStarted(SESSION))
    assert effects == [
        *(SendLiveAudio(p, c, held=True) for c, p in frames),
        AppendCommentary(run.call.plan.opener),
        Schedule("stall", T.stall_s, ev.StallElapsed()),
        Cancel("live_ready"),
    ]
    assert run.call.live == LiveActive(SESSION)
    assert run.call.counters.held_frames == 5
    assert run.call.counters.flushed_frames == 5
    assert run.call.counters.audio_to_live == 5

    # After session.started, audio goes straight through.
    assert run.feed(ev.MediaAudio(pcm(FRAME, 6), 6)) == [SendLiveAudio(pcm(FRAME, 6), 6, held=False)]
    assert run.call.counters.audio_to_live == 6
    assert run.call.counters.audio_in == 6


def test_nothing_reaches_live_before_session_started():
    run = drive(STARTING)
    run.feed(*(ev.MediaAudio(pcm(FRAME), c) for c in range(50)))
    run.feed(ev.InputTranscript("early"), ev.OutputAudio(pcm(FRAME)), strict=False)
    assert run.of(*LIVE_BOUND) == []
    assert run.call.conversation == ConvWaiting()
    run.feed(ev.LiveStarted(SESSION))
    assert len(run.of(SendLiveAudio)) == 50


@pytest.mark.parametrize(
    ("hold_s", "n_frames"),
    [(0.1, 8), (T.pickup_hold_s, 260)],
    ids=["0.1s", "default-5s"],
)
def test_hold_cap_drops_oldest_first(hold_s, n_frames):
    timings = Timings(pickup_hold_s=hold_s)
    cap = int(hold_s * BYTES_PER_SECOND)
    kept = cap // FRAME
    dropped = n_frames - kept
    assert dropped > 0
    run = drive(STARTING, timings=timings)
    run.feed(*(ev.MediaAudio(pcm(FRAME, c), c) for c in range(n_frames)))
    held = run.call.live.held
    assert [c for c, _ in held.frames] == list(range(dropped, n_frames))
    assert held.size == kept * FRAME <= cap
    assert held.dropped == dropped
    assert run.call.counters.dropped_frames == dropped
    assert run.call.counters.held_frames == n_frames

    effects = run.feed(ev.LiveStarted(SESSION))
    sent = [e for e in effects if isinstance(e, SendLiveAudio)]
    assert [e.chunk for e in sent] == list(range(dropped, n_frames))
    assert all(e.held and e.pcm == pcm(FRAME, e.chunk) for e in sent)
    assert run.call.counters.flushed_frames == kept


def test_hold_cap_counts_bytes_not_frames():
    run = drive(STARTING, timings=Timings(pickup_hold_s=0.1))  # 3200 bytes
    run.feed(*(ev.MediaAudio(pcm(1000), c) for c in range(4)))
    held = run.call.live.held
    assert [c for c, _ in held.frames] == [1, 2, 3]
    assert (held.size, held.dropped) == (3000, 1)
    # One frame bigger than the cap leaves nothing held.
    run.feed(ev.MediaAudio(pcm(4000), 4))
    assert run.call.live.held == HeldAudio((), 0, 5)
    assert run.call.counters.dropped_frames == 5


# -- opener ----------------------------------------------------------------------------------------


def test_live_started_says_the_opener_with_disclosure_first():
    run = drive(STARTING)
    effects = run.feed(ev.LiveStarted(SESSION))
    plan = run.call.plan
    assert effects == [AppendCommentary(plan.opener), Schedule("stall", T.stall_s, ev.StallElapsed()), Cancel("live_ready")]
    assert run.call.conversation == ConvTalking()
    disclosure = plan.opener.index("automated assistant calling on behalf of Nathan")
    ask = plan.opener.index("What are your opening hours?")
    assert plan.ask_line == "What are your opening hours?"
    assert 0 <= disclosure < ask
    assert run.of(AppendCommentary) == [AppendCommentary(plan.opener)]


# -- the goodbye -----------------------------------------------------------------------------------


def test_goodbye_step_by_step():
    run = drive(HEARD)
    assert run.of(Hangup) == []

    # A terminal verdict the business's words support: its output and the farewell clock ...
    step = run.step(TASK)
    out, cancel_stall, farewell = step.effects
    assert isinstance(out, SendToolOutput) and out.call_id == TASK.call_id
    assert tool_output(out)["recorded"] is True
    assert cancel_stall == Cancel("stall")
    assert farewell == Schedule("farewell", T.farewell_max_s, ev.FarewellElapsed())
    assert run.call.task == TASK
    assert [q.text for q in run.call.verdict.quotes] == [ANSWER.text]
    # ... and one response.create once the backend's response is done.
    assert run.step(RESPONSE_DONE).effects == (ContinueResponse(),)
    said = len(ANSWER.text)  # the business's words so far: what they say after this is talk during the goodbye
    assert run.call.hangup == HangupFarewell(via="tool", business_from=said)

    # The closing line streams: its transcript alone ends nothing; its loud audio is the speech ...
    assert run.step(ev.OutputTranscript("Thank you, have a good day. Goodbye!")).effects == ()
    assert run.step(SPOKEN).effects == (SendMediaAudio(SPOKEN.pcm),)
    assert run.call.hangup == HangupFarewell(via="tool", heard=True, business_from=said)
    # ... then silent deltas: all but the last of farewell_quiet_s of them only play.
    for _ in range(QUIET_DELTAS - 1):
        assert run.step(SILENT).effects == (SendMediaAudio(SILENT.pcm),)
    quiet = (QUIET_DELTAS - 1) * len(SILENT.pcm)
    assert run.call.hangup == HangupFarewell(via="tool", heard=True, quiet=quiet, business_from=said)

    # Quiet: close GPT-Live, but keep forwarding what it flushes.
    step = run.step(SILENT)
    assert step.effects == (
        SendMediaAudio(SILENT.pcm),
        Cancel("farewell"),
        CloseLive(),
        Schedule("close", T.close_timeout_s, ev.LiveCloseTimedOut()),
    )
    assert run.call.hangup == HangupDraining(via="tool")
    assert run.call.live == LiveClosing()
    assert run.step(ev.OutputAudio(b"bye2")).effects == (SendMediaAudio(b"bye2"),)
    assert run.of(SendMark) == []

    # Closed: exactly one mark behind the last audio.
    step = run.step(ev.LiveClosed("session.closed"))
    assert step.effects == (
        Cancel("close"),
        Cancel("farewell"),
        SendMark(HANGUP_MARK),
        Schedule("drain", T.drain_timeout_s, ev.DrainTimedOut()),
    )
    assert run.call.hangup == HangupMarked(via="tool")
    assert run.call.live == LiveDone("session.closed")
    assert run.call.counters.marks_sent == 1

    # Echo: the goodbye has played; leave the trailing silence.
    step = run.step(ev.MarkEchoed(HANGUP_MARK))
    assert step.effects == (Cancel("drain"), Schedule("trail", 0.4, ev.TrailElapsed()))
    assert run.call.hangup == HangupTrailing(via="tool")
    assert run.call.counters.marks_echoed == 1

    step = run.step(ev.TrailElapsed())
    assert step.effects == (Hangup("tool"), Schedule("hangup_confirm", T.hangup_confirm_s, ev.HangupConfirmTimedOut()))
    assert run.call.hangup == HangupRequested(via="tool")
    assert not run.call.finished

    step = run.step(HUNG_UP)
    assert step.effects == ENDED
    assert run.call.hangup == HangupDone(via="tool", confirmed=True)
    assert isinstance(run.call.telnyx, TelnyxEnded) and run.call.telnyx.was_answered
    assert run.call.finished
    assert run.call.task == TASK

    # Over the whole run: one hangup, one mark, one response.create, one close.
    assert run.of(Hangup) == [Hangup("tool")]
    assert run.of(SendMark) == [SendMark(HANGUP_MARK)]
    assert run.of(ContinueResponse) == [ContinueResponse()]
    assert run.of(CloseLive) == [CloseLive()]
    assert run.call.counters.hangups_sent == 1
    assert run.call.transcript[-1].text == "Thank you, have a good day. Goodbye!"


def test_output_audio_plays_until_the_mark_and_not_after():
    run = drive(FAREWELL)
    assert run.feed(ev.OutputAudio(b"a")) == [SendMediaAudio(b"a")]
    run.feed(ev.FarewellElapsed())
    assert run.feed(ev.OutputAudio(b"b")) == [SendMediaAudio(b"b")]
    assert run.call.counters.audio_after_verdict == 2
    run.feed(ev.LiveClosed("session.closed"))
    # Anything later would land behind the mark; live is closed, so it is refused.
    assert reduce_step(run.call, ev.OutputAudio(b"c")).ignored


def test_farewell_max_without_speech_also_drains():
    run = drive(FAREWELL)
    step = run.step(ev.FarewellElapsed())
    assert step.effects == (
        Cancel("farewell"),
        CloseLive(),
        Schedule("close", T.close_timeout_s, ev.LiveCloseTimedOut()),
    )
    assert run.call.hangup == HangupDraining(via="tool")
    run.feed(ev.LiveClosed("session.closed"), ev.MarkEchoed(HANGUP_MARK), ev.TrailElapsed(), HUNG_UP)
    assert run.call.hangup == HangupDone(via="tool", confirmed=True)
    assert run.of(Hangup) == [Hangup("tool")]
    assert run.of(SendMark) == [SendMark(HANGUP_MARK)]


def test_end_call_during_farewell_changes_no_track():
    run = drive(FAREWELL)
    before = run.call
    step = run.step(ev.EndCallRequested("fc_end", "done"))
    assert len(step.effects) == 1
    (out,) = step.effects
    assert isinstance(out, SendToolOutput) and out.call_id == "fc_end"
    assert tool_output(out)["ok"] is True
    assert tracks(run.call) == tracks(before)
    assert run.call.hangup == before.hangup and isinstance(before.hangup, HangupFarewell)
    assert run.call.end_call_seen
    assert "fc_end" in run.call.tool_call_ids
    assert run.of(ContinueResponse) == [ContinueResponse()]  # still only the verdict's one


def test_end_call_without_verdict_drains_at_once():
    run = drive(LIVE)
    step = run.step(ev.EndCallRequested("fc_end"))
    out, *rest = step.effects
    assert isinstance(out, SendToolOutput) and out.call_id == "fc_end"
    assert rest == [Cancel("stall"), CloseLive(), Schedule("close", T.close_timeout_s, ev.LiveCloseTimedOut())]
    assert run.call.hangup == HangupDraining(via="tool")
    assert run.call.live == LiveClosing()
    assert run.call.task is None
    assert run.of(ContinueResponse) == []
    run.feed(ev.OutputAudio(b"x"), ev.LiveClosed("session.closed"), ev.MarkEchoed(HANGUP_MARK), ev.TrailElapsed())
    assert run.of(Hangup) == [Hangup("tool")]
    assert run.of(SendMediaAudio) == [SendMediaAudio(b"x")]


def test_non_terminal_task_asks_again_and_keeps_talking():
    run = drive(LIVE)
    step = run.step(ev.TaskRecorded("fc_1", "unclear", None, "line was noisy"))
    (out,) = step.effects
    assert isinstance(out, SendToolOutput) and out.call_id == "fc_1"
    assert tool_output(out)["recorded"] is True
    assert run.step(RESPONSE_DONE).effects == (ContinueResponse(),)
    assert run.call.hangup == HangupNone()
    assert run.call.conversation == ConvTalking()
    assert run.call.task is None
    assert run.of(Hangup) == []
    # A terminal verdict afterwards still starts the farewell.
    run.feed(ASKED, ev.InputTranscript("Sorry, we can't give that out."),
             ev.TaskRecorded("fc_2", "declined", None, quotes=("we can't give that out",), reason="refused",
                             arguments=json.dumps(TASK_ARGUMENTS | {
                                 "status": "declined", "quotes": ["we can't give that out"], "answer_text": None,
                                 "reason": "refused", "hours": None, "outcome_quote": "we can't give that out"})))
    assert isinstance(run.call.hangup, HangupFarewell) and run.call.hangup.via == "tool"
    assert run.call.task.call_id == "fc_2"
    assert run.call.tools == ("record_task_result", "record_task_result")


def test_a_second_verdict_is_refused_and_the_model_still_gets_its_turn():
    run = drive(FAREWELL)
    (out,) = run.feed(ev.TaskRecorded("fc_2", "declined", None))
    assert isinstance(out, SendToolOutput) and tool_output(out)["recorded"] is False
    assert run.call.task == TASK
    assert run.feed(RESPONSE_DONE) == [ContinueResponse()]  # every output is followed by one response.create
    assert run.of(ContinueResponse) == [ContinueResponse(), ContinueResponse()]


def test_no_echo_hangs_up_via_drain_timeout():
    run = drive(MARKED)
    step = run.step(ev.DrainTimedOut())
    assert step.effects == (
        Hangup("drain_timeout"),
        Schedule("hangup_confirm", T.hangup_confirm_s, ev.HangupConfirmTimedOut()),
    )
    assert run.call.hangup == HangupRequested(via="drain_timeout")
    assert reduce_step(run.call, ev.MarkEchoed(HANGUP_MARK)).ignored  # a late echo changes nothing
    run.feed(HUNG_UP)
    assert run.call.hangup == HangupDone(via="drain_timeout", confirmed=True)
    assert run.of(Hangup) == [Hangup("drain_timeout")]


def test_no_confirmation_finishes_unconfirmed():
    run = drive(REQUESTED)
    step = run.step(ev.HangupConfirmTimedOut())
    assert step.effects == ENDED
    assert run.call.hangup == HangupDone(via="tool", confirmed=False)
    assert run.call.finished
    # Telnyx's late webhook is recorded but does not reopen or re-confirm anything.
    step = run.step(HUNG_UP)
    assert step.effects == ()
    assert isinstance(run.call.telnyx, TelnyxEnded)
    assert run.call.hangup == HangupDone(via="tool", confirmed=False)
    assert run.of(Hangup) == [Hangup("tool")]


def test_live_close_timeout_aborts_and_marks():
    run = drive(DRAINING)
    step = run.step(ev.LiveCloseTimedOut())
    assert step.effects == (
        AbortLive(),
        SendMark(HANGUP_MARK),
        Schedule("drain", T.drain_timeout_s, ev.DrainTimedOut()),
    )
    assert run.call.live == LiveDone("close_timeout")
    assert run.call.hangup == HangupMarked(via="tool")
    assert reduce_step(run.call, ev.LiveClosed("session.closed")).ignored  # the late close adds no mark
    run.feed(ev.MarkEchoed(HANGUP_MARK), ev.TrailElapsed())
    assert run.of(SendMark) == [SendMark(HANGUP_MARK)]
    assert run.of(Hangup) == [Hangup("tool")]


def test_live_closing_itself_during_farewell_marks_at_once():
    run = drive(FAREWELL)
    step = run.step(ev.LiveClosed("session.closed"))
    assert step.effects[-2:] == (SendMark(HANGUP_MARK), Schedule("drain", T.drain_timeout_s, ev.DrainTimedOut()))
    assert run.call.hangup == HangupMarked(via="tool")
    assert run.of(CloseLive) == []


# -- far-party hangup ------------------------------------------------------------------------------


def _assert_far_party_end(run: Run, step, via: str, live_open: bool):
    assert run.call.hangup == HangupDone(via=via, confirmed=True)
    assert run.of(Hangup) == []
    cancels = [Cancel(k) for k in (*LIVE_TIMERS, "hangup_confirm")]
    assert step.effects == ((CloseLive(), *cancels) if live_open else tuple(cancels))
    assert run.timers == {}


def test_far_party_hangup_mid_call_keeps_the_verdict():
    run = drive(FAREWELL)
    step = run.step(ev.CallHungUp(CCID, "normal_clearing", "callee"))
    _assert_far_party_end(run, step, "far_party", live_open=True)
    assert run.call.task == TASK
    assert run.call.telnyx.was_answered


def test_far_party_hangup_mid_call_without_verdict():
    run = drive((*LIVE, ev.InputTranscript("We're closed, bye.")))
    step = run.step(ev.CallHungUp(CCID, "normal_clearing", "callee"))
    _assert_far_party_end(run, step, "far_party", live_open=True)
    assert run.call.task is None
    assert run.call.failure is None


def test_far_party_hangup_before_answer_is_not_connected():
    run = drive((*DIALED, ev.CallInitiated(CCID)))
    step = run.step(ev.CallHungUp(CCID, "timeout", "callee", "480"))
    _assert_far_party_end(run, step, "not_connected", live_open=False)
    assert run.call.telnyx == TelnyxEnded("timeout", "callee", "480", False)


# -- stall -----------------------------------------------------------------------------------------


def test_stall_steers_once_then_hangs_up():
    run = drive(LIVE)
    step = run.step(ev.StallElapsed())
    assert step.effects == (AppendCommentary(STEER_LINE), Schedule("stall", T.stall_s, ev.StallElapsed()))
    assert run.call.conversation == ConvTalking(steered=True)
    assert run.call.hangup == HangupNone()

    step = run.step(ev.StallElapsed())
    assert step.effects == (
        *(Cancel(k) for k in LIVE_TIMERS),
        CloseLive(),
        Hangup("stall"),
        Schedule("hangup_confirm", T.hangup_confirm_s, ev.HangupConfirmTimedOut()),
    )
    assert run.call.hangup == HangupRequested(via="stall")
    assert run.call.live == LiveClosing()
    run.feed(ev.LiveClosed("session.closed"), HUNG_UP)
    assert run.call.hangup == HangupDone(via="stall", confirmed=True)
    assert run.of(Hangup) == [Hangup("stall")]
    assert run.of(SendMark) == []


@pytest.mark.parametrize(
    ("event", "speaker"),
    [(ev.InputTranscript("Hello, Joe's Hardware."), "business"), (ev.OutputTranscript("Hi, this is"), "agent")],
)
def test_speech_rearms_the_stall_timer(event, speaker):
    run = drive(LIVE)
    step = run.step(event)
    assert step.effects == (Schedule("stall", T.stall_s, ev.StallElapsed()),)
    assert [(t.speaker, t.text) for t in run.call.transcript] == [(speaker, event.text)]
    assert run.timers["stall"] == ev.StallElapsed()


def test_agent_words_after_the_line_went_to_a_recording_are_a_turn_of_their_own():
    run = drive((*LIVE, ev.OutputTranscript("Hi, this is an automated")))
    run.feed(ev.MachineGreetingEnded("beep_detected"), ev.OutputTranscript(" assistant calling."))
    assert [(t.speaker, t.text, t.on_line) for t in run.call.transcript] == [
        ("agent", "Hi, this is an automated", True), ("agent", " assistant calling.", False)]


def test_agent_words_after_the_hangup_was_sent_never_reached_the_line():
    run = drive((*LIVE, ev.StallElapsed(), ev.StallElapsed()))  # the failsafe: session closing, hangup sent
    assert run.call.hangup == HangupRequested(via="stall") and run.call.live == LiveClosing()
    run.step(ev.OutputTranscript("Sorry, goodbye."))
    assert run.call.transcript[-1].on_line is False


def test_transcript_fragments_join_by_speaker():
    run = drive(LIVE)
    run.feed(
        ev.InputTranscript("Hello,"),
        ev.InputTranscript(" Joe's."),
        ev.OutputTranscript("Hi"),
        ev.OutputTranscript(" there."),
        ev.InputTranscript("Yes?"),
    )
    assert [(t.speaker, t.text) for t in run.call.transcript] == [
        ("business", "Hello, Joe's."),
        ("agent", "Hi there."),
        ("business", "Yes?"),
    ]


# -- failures --------------------------------------------------------------------------------------


def test_fatal_live_error_while_starting_fails_the_call():
    run = drive(STARTING)
    step = run.step(ev.LiveError("invalid_model", "no such model", fatal=True))
    assert step.effects == (
        *(Cancel(k) for k in LIVE_TIMERS),
        Hangup("failure"),
        Schedule("hangup_confirm", T.hangup_confirm_s, ev.HangupConfirmTimedOut()),
    )
    assert run.call.live == LiveFailed("invalid_model: no such model")
    assert run.call.failure.reason == "model_unavailable" and "no such model" in run.call.failure.detail
    assert run.call.hangup == HangupRequested(via="failure")
    run.feed(HUNG_UP)
    assert run.call.hangup == HangupDone(via="failure", confirmed=True)
    assert run.of(Hangup) == [Hangup("failure")]


def test_non_fatal_live_error_changes_nothing_but_is_handled():
    run = drive(LIVE)
    before = run.call
    step = run.step(ev.LiveError("bad_event", "unknown field", fatal=False))
    assert step.ignored is None and step.effects == ()
    assert run.call == before


def test_crash_mid_call_aborts_live_and_hangs_up():
    run = drive((*LIVE, ev.InputTranscript("Hello?")))
    step = run.step(ev.CallCrashed("ValueError: boom"))
    assert step.effects == (
        *(Cancel(k) for k in LIVE_TIMERS),
        AbortLive(),
        Hangup("failure"),
        Schedule("hangup_confirm", T.hangup_confirm_s, ev.HangupConfirmTimedOut()),
    )
    assert run.call.failure == Failure("internal", "ValueError: boom")
    assert run.call.hangup == HangupRequested(via="failure")
    run.feed(HUNG_UP)
    assert run.call.hangup == HangupDone(via="failure", confirmed=True)
    assert run.of(Hangup) == [Hangup("failure")]


def test_first_failure_reason_is_kept():
    run = drive((*LIVE, ev.LiveClosed("socket gone")))
    assert run.call.hangup == HangupRequested(via="failure")
    assert run.call.failure.reason == "model_lost" and "socket gone" in run.call.failure.detail
    assert reduce_step(run.call, ev.CallCrashed("later")).ignored
    assert run.of(Hangup) == [Hangup("failure")]


def test_dial_failed_finishes_without_a_hangup():
    run = drive(())
    assert run.feed(ev.Begin()) == [PlaceDial(run.call.plan.dial)]
    assert run.call.dial == DialSent()
    step = run.step(ev.DialFailed("422: invalid destination"))
    assert step.effects == ENDED
    assert run.call.dial == DialRejected("422: invalid destination")
    assert run.call.hangup == HangupDone(via="not_connected", confirmed=True)
    assert run.call.failure == Failure("internal", "the dial was refused: 422: invalid destination")
    assert run.of(Hangup) == []


def test_crash_while_dialing_waits_for_the_dial_then_ends():
    run = drive((ev.Begin(),))
    step = run.step(ev.CallCrashed("dial raised"))
    assert run.call.hangup == HangupPending(via="failure")
    assert not run.call.finished
    assert not any(isinstance(e, Hangup) for e in step.effects)
    step = run.step(ev.DialFailed("timeout"))  # the dial never placed a call: nothing to hang up
    assert run.call.hangup == HangupDone(via="failure", confirmed=True)
    assert run.of(Hangup) == []


def test_call_cap_hangs_up_via_time_limit():
    run = drive((*LIVE, ev.InputTranscript("Let me check...")))
    step = run.step(ev.CallCapElapsed())
    assert step.effects == (
        *(Cancel(k) for k in LIVE_TIMERS),
        AbortLive(),
        Hangup("time_limit"),
        Schedule("hangup_confirm", T.hangup_confirm_s, ev.HangupConfirmTimedOut()),
    )
    assert run.call.hangup == HangupRequested(via="time_limit")


# -- exactly one hangup, whatever arrives late -----------------------------------------------------

FLOWS = {
    "goodbye": (*DONE,),
    "goodbye-farewell-max": (
        *FAREWELL,
        ev.FarewellElapsed(),
        ev.LiveClosed("closed"),
        ev.MarkEchoed(HANGUP_MARK),
        ev.TrailElapsed(),
    ),
    "end-call": (
        *LIVE,
        ev.EndCallRequested("fc_end"),
        ev.LiveClosed("closed"),
        ev.MarkEchoed(HANGUP_MARK),
        ev.TrailElapsed(),
    ),
    "drain-timeout": (*MARKED, ev.DrainTimedOut()),
    "close-timeout": (*DRAINING, ev.LiveCloseTimedOut(), ev.MarkEchoed(HANGUP_MARK), ev.TrailElapsed()),
    "confirm-timeout": (*REQUESTED, ev.HangupConfirmTimedOut()),
    "stall": (*LIVE, ev.StallElapsed(), ev.StallElapsed()),
    "live-error": (*STARTING, ev.LiveError("x", "refused", fatal=True)),
    "crash": (*LIVE, ev.CallCrashed("boom")),
    "crash-while-draining": (*DRAINING, ev.CallCrashed("boom")),
    "call-cap": (*FAREWELL, ev.CallCapElapsed()),
    "far-party": (*FAREWELL, ev.CallHungUp(CCID, "normal_clearing", "callee")),
    "dial-failed": (ev.Begin(), ev.DialFailed("busy")),
}

LATE = (
    ev.StallElapsed(),
    ev.FarewellElapsed(),
    ev.LiveCloseTimedOut(),
    ev.DrainTimedOut(),
    ev.MarkEchoed(HANGUP_MARK),
    ev.TrailElapsed(),
    ev.CallCapElapsed(),
    ev.LiveClosed("late"),
    ev.LiveError("x", "late", fatal=True),
    ev.CallCrashed("late"),
    ev.EndCallRequested("fc_late"),
    ev.TaskRecorded("fc_late2", "answered", "late"),
    ev.MediaStopped("socket closed"),
    HUNG_UP,
    ev.HangupConfirmTimedOut(),
    ev.CallHungUp(CCID, "normal_clearing", "callee"),
)


@pytest.mark.parametrize("flow", FLOWS.values(), ids=FLOWS.keys())
def test_hangup_is_emitted_at_most_once(flow):
    run = drive(flow)
    hangups = len(run.of(Hangup))
    assert hangups <= 1
    run.feed(*LATE, strict=False)
    assert len(run.of(Hangup)) == hangups
    assert run.call.counters.hangups_sent == hangups
    assert run.call.finished


@pytest.mark.parametrize("flow", FLOWS.values(), ids=FLOWS.keys())
def test_every_flow_ends_with_one_hangup_unless_the_line_is_already_gone(flow):
    run = drive(flow)
    if not run.call.finished:
        assert isinstance(run.call.hangup, HangupRequested)
        run.feed(HUNG_UP)
    assert run.call.finished
    gone = run.call.hangup.via in ("far_party", "not_connected")
    assert len(run.of(Hangup)) == (0 if gone else 1)
    if not gone:
        assert run.of(Hangup) == [Hangup(run.call.hangup.via)]


# -- regressions: bugs these tests found in the reducer --------------------------------------------


@pytest.mark.parametrize(
    "flow",
    [DONE, (*MARKED, ev.DrainTimedOut(), HUNG_UP), (*REQUESTED, ev.HangupConfirmTimedOut())],
    ids=["goodbye", "drain-timeout", "confirm-timeout"],
)
def test_no_timer_outlives_the_call(flow):
    run = drive(flow)
    assert run.call.finished
    assert run.timers == {}


@pytest.mark.parametrize(
    "flow",
    [
        (*FLOWS["far-party"],),
        (*FLOWS["stall"], ev.LiveClosed("closed"), HUNG_UP),
        (*FLOWS["crash"], HUNG_UP),
        (*FLOWS["call-cap"], HUNG_UP),
    ],
    ids=["far-party", "stall", "crash", "call-cap"],
)
def test_no_timer_outlives_the_call_on_the_other_paths(flow):
    run = drive(flow)
    assert run.call.finished
    assert run.timers == {}


@pytest.mark.parametrize("end", [ev.CallCrashed("boom"), ev.CallCapElapsed()], ids=["crash", "call-cap"])
def test_nothing_reaches_live_after_abort(end):
    run = drive(LIVE)
    run.feed(end)
    assert run.of(AbortLive) == [AbortLive()]
    effects = run.feed(ev.MediaAudio(pcm(FRAME), 1), strict=False)
    assert not any(isinstance(e, LIVE_BOUND) for e in effects)
    assert not isinstance(run.call.live, LiveActive | LiveStarting | LiveClosing)


@pytest.mark.parametrize(
    "before_accept",
    [
        (ev.Begin(), ev.CallCrashed("boom")),
        (
            ev.Begin(),
            ev.CallInitiated(CCID),
            ev.CallAnswered(CCID),
            *MEDIA,
            ev.LiveError("x", "refused", fatal=True),
        ),
    ],
    ids=["crash-then-accept", "answered-live-refused-then-accept"],
)
def test_failure_before_dial_accepted_still_hangs_up(before_accept):
    run = drive((*before_accept, ev.DialAccepted(CCID)))
    assert run.call.dial == Dialed(CCID)
    assert not isinstance(run.call.telnyx, TelnyxEnded)  # the line is (or will be) up
    assert run.of(Hangup) == [Hangup("failure")]



@pytest.mark.parametrize(("said", "who"), [(ev.InputTranscript("Main Street Hardware."), "business"),
                                           (ev.OutputTranscript("What are your opening hours?"), "agent")])
def test_the_steer_keeps_whose_words_the_silence_came_after(said, who):
    """The outcome reads it: a silence after the agent's words was the business's to break."""
    run = drive(LIVE)
    run.step(said)
    run.step(ev.StallElapsed())
    assert run.call.conversation == ConvTalking(steered=True, quiet_after=who)


def test_the_business_answering_a_steer_earns_the_next_silence_its_own_steer():
    run = drive(LIVE)
    run.step(ev.StallElapsed())
    run.step(ev.OutputTranscript("Hello? Are you still there?"))  # our own steer is not an answer
    assert run.call.conversation == ConvTalking(steered=True)
    run.step(ev.InputTranscript("Sorry, yes, I'm here."))
    assert run.call.conversation == ConvTalking(steered=False)
    step = run.step(ev.StallElapsed())
    assert step.effects == (AppendCommentary(STEER_LINE), Schedule("stall", T.stall_s, ev.StallElapsed()))
    assert run.of(Hangup) == []
