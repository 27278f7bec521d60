"""reduce(call, event) -> (call, effects): the only place a call changes.

Rules of this file (after h11's _state.py):
 1. Every transition of every track lives here. Adapters only make events; the runtime only moves
    events and performs effects. Nothing here touches trio, a socket, a clock or a file; time exists
    only as `Schedule(key, delay_s, event)` effects. Beside it, pure and changing no call: what reads a
    Call (calld.core.queries, calld.core.judging) and what a handler asks for a new value
    (calld.core.line_audio, timers, failures); the handler decides the transition.
 2. An event illegal in the current state changes nothing: `reduce_step` returns the same Call, no
    effects, and the reason, and the runtime journals it.
 3. Transport order is free: webhooks, media frames and GPT-Live events interleave in any order. A
    media `start` before `call.answered` is a state, not the pickup (it may be ringback): only
    `call.answered`, or a `call.hangup` with SIP 200, says the business answered, and the ring bound
    runs on through early media (docs/design.md, "The reducer's edges").
 4. Event-triggered transitions come first (one handler per event type); then the state-triggered
    rules run to a fixed point (today: open GPT-Live once Telnyx has answered and media streams).

Theory of the edges, one line each (the whole reasoning: docs/design.md, "The reducer's edges"):
 - Streams: a frame or mark echo of a stream that is not the started one is ignored.
 - Steady audio: where calld.core.audio_path opens the way, forwarded stretches are stepped here.
 - Pickup: callee audio before `session.started` is held (pickup_hold_s) and flushed in order.
 - Tools: every function call gets its output at once; one response.create after the response ends.
 - The evidence gate: a terminal record stands only when calld.evidence.check_record accepts it; a
   refused one goes back to the model; a later record replaces it only citing words said after it.
 - Bookings: a booked record is checked against the request (party, constraints, window).
 - Goodbye: closing line streamed, `session.close`, one mark behind the flushed audio, hang up
   `trail_s` after its echo (drain_timeout_s without one); the Hangup effect on one edge only.
 - Talk during the goodbye calls it off when it asks something or says more than a courtesy.
 - Honesty: an agent claim to be a person is corrected once and kept for the result.
 - A far-party hangup ends the call at once, the verdict kept; during GPT-Live's start, calld's fault.
 - GPT-Live: ready within live_ready_s, never silent for live_quiet_s once started.
 - stall_s of silence: steer once, then hang up via "stall"; an answer already heard ends it politely.
 - A failure while the dial is in flight waits in HangupPending; an end cancels every timer.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from attrs import frozen

from calld.core import events as ev
from calld.core.effects import (
    AbortLive, AppendCommentary, Cancel, CloseLive, ContinueResponse, Effect, Hangup, OpenLive, PlaceDial,
    SendLiveAudio, SendMark, SendMediaAudio, SendDtmf, SendToolOutput,
)
from calld.core import failures, situations, timers
from calld.core.replace import evolve  # attrs.evolve's result, cheaper: it runs on every frame
from calld.core.judging import Refusal, correcting, judge, merge_questions, record_holds, wrong_job
from calld.core.line_audio import (
    BYTES_PER_SECOND, HOLD_RETURN_FRAMES, closing_line, flushed, hold_pickup, inbound_counted, outbound_counted,
    quiet_on_hold, sound_run,
)
from calld.core.queries import (
    OWN_GOODBYES, RECORDED, agent_audible, answer_heard, business_text, goodbye_talk, information_line, latest_turn_of,
    live_is_open, may_call_off, menu_presses, opt_out_words, recording_phrase, talking_after_verdict, tool_output,
    transcript_with,
)
from calld.core.plan import (
    ANSWER_HEARD_LINE, GOODBYE_REOPENED_LINE, HANGUP_MARK, HONESTY_CORRECTION_LINE, OPT_OUT_LINE, RECORD_TASK_RESULT, SEND_DTMF, WRONG_PARTY_LINE,
    QuickAskJob, screening_line,
)
from calld.core.state import (
    Call, ConvConcluded, ConvTalking, Dialed, DialPending, DialRejected, DialSent, Failure, HangupDone,
    HangupDraining, HangupFarewell, HangupMarked, HangupNone, HangupPending, HangupRequested, HangupTrailing,
    Hold, MenuProgress, LiveActive, LiveClosing, LiveDone, LiveFailed, LiveIdle, LiveStarting,
    MediaEnded, MediaIdle, MediaOpen, MediaStreaming, RefusedRecord, TelnyxAnswered, TelnyxEnded, TelnyxIdle,
    TelnyxInitiated, Verdict, Via,
)
from calld.domain.status import FailedReason
from calld.domain.transcript import Speaker, last_to_speak
from calld.evidence import check
from calld.policy.optout import detect_opt_out, said_by_business


@frozen
class Step:
    call: Call
    effects: tuple[Effect, ...]
    ignored: str | None = None  # why the event was illegal here; None when it was handled


@frozen
class _Ignore:
    why: str


_Out = tuple[Call, list[Effect]] | _Ignore
_Handler = Callable[[Call, Any], _Out]
_HANDLERS: dict[type, _Handler] = {}


def _on(event_type: type) -> Callable[[_Handler], _Handler]:
    def register(fn: _Handler) -> _Handler:
        _HANDLERS[event_type] = fn
        return fn

    return register


def reduce(call: Call, event: ev.Event) -> tuple[Call, list[Effect]]:
    step = reduce_step(call, event)
    return step.call, list(step.effects)


def reduce_step(call: Call, event: ev.Event) -> Step:
    out = _HANDLERS[type(event)](call, event)
    if isinstance(out, _Ignore):
        return Step(call, (), out.why)
    new, effects = out
    new, triggered = _state_triggered(new)
    return Step(new, (*effects, *triggered) if triggered else tuple(effects))


def _ignore(call: Call, event: ev.Event, track: str) -> _Ignore:
    state = getattr(call, track)
    return _Ignore(f"{event.kind} while {track} is {state.kind}")


# -- state-triggered rules -----------------------------------------------------------------------


def _state_triggered(call: Call) -> tuple[Call, list[Effect]]:
    effects: list[Effect] = []
    if (
        isinstance(call.live, LiveIdle)  # first: false on every step of a call in progress
        and isinstance(call.telnyx, TelnyxAnswered)
        and isinstance(call.media, MediaStreaming)
        and isinstance(call.hangup, HangupNone)
    ):
        call = evolve(call, live=LiveStarting(held=call.live.held))
        effects += [OpenLive(call.plan.live), timers.live_ready(call)]
    return call, effects


# -- shared moves --------------------------------------------------------------------------------


def _request_hangup(call: Call, via: Via) -> tuple[Call, list[Effect]]:
    """The one edge that emits Hangup."""
    counters = evolve(call.counters, hangups_sent=call.counters.hangups_sent + 1)
    call = evolve(call, hangup=HangupRequested(via=via), counters=counters)
    return call, [Hangup(via), timers.hangup_confirm(call)]


def _done(call: Call, via: Via, *, confirmed: bool) -> tuple[Call, list[Effect]]:
    """The call is over: no timer outlives it, and no hold either."""
    call = _end_hold(call, "call_ended")
    return evolve(call, hangup=HangupDone(via=via, confirmed=confirmed)), timers.cancel(*timers.LIVE_TIMERS, "hangup_confirm")


def _end_hold(call: Call, how: str) -> Call:
    if not call.on_hold:
        return call
    return evolve(call, holds=(*call.holds[:-1], evolve(call.holds[-1], ended=how)))


def _abort_live(call: Call) -> tuple[Call, list[Effect]]:
    """Drop GPT-Live now; nothing more goes to it, whatever its socket says later."""
    if not live_is_open(call):
        return call, []
    return evolve(call, live=LiveDone("aborted")), [AbortLive()]


def _fail(call: Call, reason: FailedReason, detail: str) -> tuple[Call, list[Effect]] | _Ignore:
    """End the call now, as failed: no farewell, no drain."""
    if isinstance(call.hangup, HangupPending | HangupRequested | HangupDone):
        return _Ignore(f"failure after hangup {call.hangup.kind}: {reason}: {detail}")
    call = evolve(call, failure=call.failure or Failure(reason, detail))
    call, effects = _abort_live(call)
    effects = timers.cancel(*timers.LIVE_TIMERS) + effects
    if isinstance(call.telnyx, TelnyxEnded):
        call, done = _done(call, "failure", confirmed=True)
        return call, effects + done
    if isinstance(call.dial, DialSent):
        # Telnyx may be placing the call right now; hang it up once it has a name.
        return evolve(call, hangup=HangupPending(via="failure")), effects
    if not isinstance(call.dial, Dialed):
        call, done = _done(call, "failure", confirmed=False)
        return call, effects + done
    call, more = _request_hangup(call, "failure")
    return call, effects + more


def _mark_behind_last_audio(call: Call, via: Via) -> tuple[Call, list[Effect]]:
    counters = evolve(call.counters, marks_sent=call.counters.marks_sent + 1)
    call = evolve(call, hangup=HangupMarked(via=via), counters=counters)
    return call, [SendMark(HANGUP_MARK), timers.drain(call)]


def _start_drain(call: Call, via: Via) -> tuple[Call, list[Effect]]:
    """Close GPT-Live so the target stops moving; its flushed audio is still forwarded."""
    if not isinstance(call.live, LiveActive | LiveStarting):
        return _mark_behind_last_audio(call, via)
    call = evolve(call, hangup=HangupDraining(via=via), live=LiveClosing())
    return call, [CloseLive(), timers.close(call)]


def _continue(call: Call) -> Call:
    """Ask for response.create once the backend's response is done: after the last of its calls' outputs."""
    return evolve(call, continue_due=True)


def _seen_tool(call: Call, call_id: str, name: str) -> Call:
    counters = evolve(call.counters, tool_calls=call.counters.tool_calls + 1)
    return evolve(call, tool_call_ids=call.tool_call_ids | {call_id}, tools=(*call.tools, name), counters=counters)


# -- the call's own start --------------------------------------------------------------------------


@_on(ev.Begin)
def _begin(call: Call, event: ev.Begin) -> _Out:
    if not isinstance(call.dial, DialPending):
        return _ignore(call, event, "dial")
    return evolve(call, dial=DialSent()), [PlaceDial(call.plan.dial)]


@_on(ev.DialAccepted)
def _dial_accepted(call: Call, event: ev.DialAccepted) -> _Out:
    if not isinstance(call.dial, DialSent):
        return _ignore(call, event, "dial")
    call = evolve(call, dial=Dialed(event.call_control_id))
    match call.hangup:
        case HangupPending(via=via):
            return _request_hangup(call, via)
        case HangupDone():
            return call, []
        case _:
            return call, [timers.call_cap(call), *timers.stage(call)]


@_on(ev.DialFailed)
def _dial_failed(call: Call, event: ev.DialFailed) -> _Out:
    if not isinstance(call.dial, DialSent):
        return _ignore(call, event, "dial")
    failure = call.failure or Failure("internal", f"the dial was refused: {event.reason}")
    call = evolve(call, dial=DialRejected(event.reason), failure=failure)
    via: Via = call.hangup.via if isinstance(call.hangup, HangupPending) else "not_connected"
    return _done(call, via, confirmed=True)


# -- Telnyx webhooks -------------------------------------------------------------------------------


@_on(ev.CallInitiated)
def _initiated(call: Call, event: ev.CallInitiated) -> _Out:
    if not isinstance(call.telnyx, TelnyxIdle):
        return _ignore(call, event, "telnyx")
    return evolve(call, telnyx=TelnyxInitiated()), []


@_on(ev.CallAnswered)
def _answered(call: Call, event: ev.CallAnswered) -> _Out:
    if not isinstance(call.telnyx, TelnyxIdle | TelnyxInitiated):
        return _ignore(call, event, "telnyx")
    call = evolve(call, telnyx=TelnyxAnswered())
    if not isinstance(call.dial, Dialed):
        return call, []  # no stage timer was armed: the dial not yet accepted
    if not isinstance(call.hangup, HangupNone):
        return call, [Cancel("ring")]
    return call, [Cancel("ring"), *timers.stage(call)]


@_on(ev.CallHungUp)
def _hung_up(call: Call, event: ev.CallHungUp) -> _Out:
    if isinstance(call.telnyx, TelnyxEnded):
        return _ignore(call, event, "telnyx")
    # SIP 200 is the INVITE's OK: the call was answered, even when this overtook a late call.answered.
    was_answered = isinstance(call.telnyx, TelnyxAnswered) or event.sip_cause == "200"
    answer_missed = was_answered and not isinstance(call.telnyx, TelnyxAnswered)
    ended = TelnyxEnded(event.cause, event.source, event.sip_cause, was_answered)
    call = evolve(call, telnyx=ended)
    match call.hangup:
        case HangupRequested(via=via) | HangupPending(via=via):
            return _done(call, via, confirmed=True)
        case HangupDone():
            return call, []
        case _:
            via = "far_party" if was_answered or live_is_open(call) else "not_connected"
            call = evolve(call, failure=failures.far_party_hung_up(call, answer_missed=answer_missed))
            effects: list[Effect] = []
            if isinstance(call.live, LiveActive | LiveStarting):
                call, effects = evolve(call, live=LiveClosing()), [CloseLive()]
            call, done = _done(call, via, confirmed=True)
            return call, effects + done


@_on(ev.MachineDetected)
def _machine(call: Call, event: ev.MachineDetected) -> _Out:
    # Advice only: a receptionist can read as a machine and a "Hello?" greeting as a human. What the
    # business says decides (a recorded greeting, below); the result is kept for the outcome.
    return evolve(call, machine=event.result), []


@_on(ev.MachineGreetingEnded)
def _machine_greeting_ended(call: Call, event: ev.MachineGreetingEnded) -> _Out:
    """The beep: a recording now waits for a message. calld never leaves one."""
    if event.result != "beep_detected":
        return call, []
    match call.hangup:
        case HangupFarewell(via=via) if via in RECORDED:
            call, effects = _start_drain(call, via)
            return call, [Cancel("farewell"), *effects]
        case HangupNone() if isinstance(call.conversation, ConvTalking):
            call = evolve(call, recording=call.recording or "the machine's beep")
            call, effects = _start_drain(call, "voicemail")
            return call, [Cancel("stall"), *effects]
        case _:
            return call, []


def _reached_recording(call: Call, phrase: str, via: Via = "voicemail") -> tuple[Call, list[Effect]]:
    """A recorded greeting: the agent falls silent on the line (no message is ever left) while the rest
    of the greeting is heard, up to farewell_max_s or the beep; then the call ends."""
    call = evolve(call, recording=phrase, hangup=HangupFarewell(via=via))
    return call, timers.goodbye(call)


@_on(ev.StreamingFailed)
def _streaming_failed(call: Call, event: ev.StreamingFailed) -> _Out:
    return _fail(call, "media_lost", f"Telnyx could not stream media to us: {event.reason}")


# -- media -------------------------------------------------------------------------------------------


@_on(ev.MediaConnected)
def _media_connected(call: Call, event: ev.MediaConnected) -> _Out:
    if not isinstance(call.media, MediaIdle):
        return _ignore(call, event, "media")
    return evolve(call, media=MediaOpen()), []


@_on(ev.MediaStarted)
def _media_started(call: Call, event: ev.MediaStarted) -> _Out:
    if not isinstance(call.media, MediaIdle | MediaOpen):
        return _ignore(call, event, "media")
    armed = []  # answered and waiting for this: its stage timer (ringing runs on: a stream is not the answer)
    if isinstance(call.dial, Dialed) and isinstance(call.telnyx, TelnyxAnswered):
        armed = [Cancel("media_wait")]
    return evolve(call, media=MediaStreaming(event.stream_id, event.encoding, event.sample_rate)), armed


@_on(ev.MediaAudio)
def _media_audio(call: Call, event: ev.MediaAudio) -> _Out:
    if not isinstance(call.media, MediaStreaming) or isinstance(call.hangup, HangupDone):
        return _ignore(call, event, "media")
    if event.stream_id != call.media.stream_id and event.stream_id is not None:
        return _other_stream(call.media, event, event.stream_id)
    c = call.counters
    match call.live:
        case LiveIdle(held=held) | LiveStarting(held=held):
            cap = int(call.plan.timings.pickup_hold_s * BYTES_PER_SECOND)
            held, counters = hold_pickup(held, c, event.chunk, event.pcm, cap)
            live = LiveIdle(held) if isinstance(call.live, LiveIdle) else LiveStarting(held)
            return evolve(call, live=live, counters=counters), []
        case LiveActive():
            counters = inbound_counted(c, 1, len(event.pcm), to_live=True)
            send: list[Effect] = [SendLiveAudio(event.pcm, event.chunk)]
            if not (isinstance(call.hangup, HangupNone) and isinstance(call.conversation, ConvTalking)):
                return evolve(call, counters=counters), send
            if call.on_hold:  # count the quiet: words after a pause mean someone is back
                return evolve(call, counters=counters, holds=quiet_on_hold(call.holds, 1)), send
            sound, music_at = sound_run(call.line_sound, (situations.loud(event.pcm),), 1)
            if music_at is None:
                return evolve(call, counters=counters, line_sound=sound), send
            call, hold = _start_hold(evolve(call, counters=counters, line_sound=0), "hold music")
            return call, send + hold
        case _:
            return evolve(call, counters=inbound_counted(c, 1, len(event.pcm))), []


@_on(ev.InboundForwarded)
def _inbound_forwarded(call: Call, event: ev.InboundForwarded) -> _Out:
    """Frames already sent on to GPT-Live (calld.core.audio_path): what `_media_audio` would have
    done with each in LiveActive, but the sending."""
    call = evolve(call, counters=inbound_counted(call.counters, event.frames, event.pcm_bytes, to_live=True))
    if not (isinstance(call.hangup, HangupNone) and isinstance(call.conversation, ConvTalking)):
        return call, []
    # Frame by frame as _media_audio would, but whether a hold is on is read only where it can
    # change (at the start, and after a hold began): a stretch is 25 frames, many a second.
    if call.on_hold:  # the whole stretch is quiet counted on the hold
        return evolve(call, holds=quiet_on_hold(call.holds, event.frames)), []
    sound, music_at = sound_run(call.line_sound, event.loud, event.frames)
    if music_at is None:
        return evolve(call, line_sound=sound), []
    call, effects = _start_hold(evolve(call, line_sound=0), "hold music")
    if rest := event.frames - music_at - 1:  # the rest of the stretch is quiet counted on the hold
        call = evolve(call, holds=quiet_on_hold(call.holds, rest))
    return call, effects


@_on(ev.InboundHeld)
def _inbound_held(call: Call, event: ev.InboundHeld) -> _Out:
    """Frames that came before GPT-Live was ready, told as a stretch (calld.core.audio_path):
    `_media_audio` holds each in turn, the oldest dropped past the cap, exactly as frame by frame."""
    if not isinstance(call.media, MediaStreaming) or isinstance(call.hangup, HangupDone):
        return _ignore(call, event, "media")
    if not isinstance(call.live, LiveIdle | LiveStarting):  # the runtime holds only while GPT-Live is not ready
        return _ignore(call, event, "live")
    for frame in event.frames:
        out = _media_audio(call, frame)
        assert not isinstance(out, _Ignore) and not out[1], "a held frame is held, not ignored or sent"
        call = out[0]
    return call, []


@_on(ev.InboundRecorded)
def _inbound_recorded(call: Call, event: ev.InboundRecorded) -> _Out:
    """Frames the media task only recorded (calld.core.audio_path): what `_media_audio` does with
    each once GPT-Live is gone, all at once."""
    return evolve(call, counters=inbound_counted(call.counters, event.frames, event.pcm_bytes)), []


def _other_stream(media: MediaStreaming, event: ev.MediaAudio | ev.MarkEchoed, stream_id: str) -> _Ignore:
    """A frame naming a stream that is not the started one is not this call's: its audio is not the
    business's, its mark echo proves nothing played."""
    return _Ignore(f"{event.kind} of stream {stream_id}, not the started stream {media.stream_id}")


@_on(ev.MarkEchoed)
def _mark_echoed(call: Call, event: ev.MarkEchoed) -> _Out:
    if event.name != HANGUP_MARK or not isinstance(call.hangup, HangupMarked):
        return _ignore(call, event, "hangup")
    if isinstance(call.media, MediaStreaming) and event.stream_id is not None and event.stream_id != call.media.stream_id:
        return _other_stream(call.media, event, event.stream_id)
    counters = evolve(call.counters, marks_echoed=call.counters.marks_echoed + 1)
    call = evolve(call, hangup=HangupTrailing(call.hangup.via), counters=counters)
    return call, [Cancel("drain"), timers.trail(call)]


@_on(ev.DtmfReceived)
def _dtmf(call: Call, event: ev.DtmfReceived) -> _Out:
    return call, []  # journaled; a quick ask has no use for the business's keypad


@_on(ev.MediaError)
def _media_error(call: Call, event: ev.MediaError) -> _Out:
    return call, []  # journaled; Telnyx reports it, the stream goes on


_GOODBYE = (HangupFarewell, HangupDraining, HangupMarked, HangupTrailing)


@_on(ev.MediaStopped)
def _media_stopped(call: Call, event: ev.MediaStopped) -> _Out:
    if isinstance(call.media, MediaEnded):
        return _ignore(call, event, "media")
    before_start = isinstance(call.media, MediaIdle | MediaOpen)
    call = evolve(call, media=MediaEnded(event.reason))
    if event.reason == "stop" and isinstance(call.hangup, _GOODBYE):
        # A stream Telnyx stopped mid-goodbye plays nothing more and echoes no mark: waiting for either
        # would hold the line open until drain_timeout_s. The far party's call.hangup usually comes
        # with the stop; if it does not within the grace, calld hangs up (_media_lost). (A socket
        # lost mid-goodbye is a failure, below, hung up after the same grace.)
        return call, [timers.media_lost(call)]
    if event.reason == "stop" or isinstance(call.hangup, HangupPending | HangupRequested | HangupDone):
        return call, []  # Telnyx ended the stream as the call ends; call.hangup follows
    if before_start:
        # Nothing can be heard or said on this call, ever: end it now, not at the call cap.
        return _fail(call, "media_lost", f"the media stream closed before its start frame ({event.reason})")
    # The socket died mid-call. A far-party hangup usually races it; if none comes, end the call ourselves.
    return call, [timers.media_lost(call)]


@_on(ev.MediaLostElapsed)
def _media_lost(call: Call, event: ev.MediaLostElapsed) -> _Out:
    if not isinstance(call.media, MediaEnded):
        return _ignore(call, event, "media")
    if call.media.reason == "stop" and isinstance(call.hangup, _GOODBYE):
        # The goodbye cannot play on: hang up now, the way it was going to end; the verdict stands.
        via = call.hangup.via
        call, aborted = _abort_live(call)
        call, hangup = _request_hangup(call, via)
        return call, [*timers.cancel("farewell", "close", "drain", "trail"), *aborted, *hangup]
    reason = call.media.reason
    return _fail(call, "media_lost", f"the media stream was lost in the middle of the call ({reason}) and no hangup came")


# -- GPT-Live ----------------------------------------------------------------------------------------


@_on(ev.LiveStarted)
def _live_started(call: Call, event: ev.LiveStarted) -> _Out:
    if not isinstance(call.live, LiveStarting) or not isinstance(call.hangup, HangupNone):
        return _ignore(call, event, "live")
    held = call.live.held
    flush: list[Effect] = [SendLiveAudio(pcm, chunk, held=True) for chunk, pcm in held.frames]
    counters, origin_ms = flushed(call.counters, held)  # GPT-Live's timeline: its zero is the first frame it gets
    call = evolve(call, live=LiveActive(event.session_id), conversation=ConvTalking(), counters=counters,
                  live_origin_ms=origin_ms)
    return call, [*flush, AppendCommentary(call.plan.opener), timers.stall(call), Cancel("live_ready")]


@_on(ev.LiveReadyElapsed)
def _live_ready_elapsed(call: Call, event: ev.LiveReadyElapsed) -> _Out:
    if not isinstance(call.live, LiveStarting):
        return _ignore(call, event, "live")
    return _fail(call, "model_unavailable", failures.no_session_started(call.plan.timings.live_ready_s))


@_on(ev.LiveSilent)
def _live_silent(call: Call, event: ev.LiveSilent) -> _Out:
    # Mid-conversation only: before session.started live_ready_s bounds the wait, and in the goodbye and the
    # close farewell_max_s and close_timeout_s do (the verdict stands).
    if not isinstance(call.live, LiveActive) or not isinstance(call.hangup, HangupNone):
        return _Ignore(f"{event.kind} while live is {call.live.kind} and hangup is {call.hangup.kind}")
    return _fail(call, "model_lost", failures.live_silent(event.quiet_s))


@_on(ev.LiveError)
def _live_error(call: Call, event: ev.LiveError) -> _Out:
    if event.fatal and isinstance(call.live, LiveStarting):
        call = evolve(call, live=LiveFailed(f"{event.code}: {event.message}"))
        return _fail(call, "model_unavailable", f"GPT-Live refused the session: {event.message} ({event.code})")
    return call, []  # a command error; the session goes on, the journal keeps it


def _speech(call: Call, event: ev.InputTranscript | ev.OutputTranscript, speaker: Speaker) -> _Out:
    if isinstance(call.hangup, HangupDone) or not isinstance(call.live, LiveActive | LiveClosing):
        return _ignore(call, event, "live")
    call = evolve(call, transcript=transcript_with(call, speaker, event))
    if speaker == "agent" and call.honesty_claim is None and (
            claim := situations.CLAIMS_HUMAN.search(latest_turn_of(call, "agent")[1])) is not None:
        # Honesty on every call: the agent corrects itself at once, and the result is flagged.
        call = evolve(call, honesty_claim=claim.group(0))
        out = _after_speech(call, event, speaker)
        if isinstance(out, _Ignore):
            return call, [AppendCommentary(HONESTY_CORRECTION_LINE)]
        return out[0], [AppendCommentary(HONESTY_CORRECTION_LINE), *out[1]]
    return _after_speech(call, event, speaker)


def _after_speech(call: Call, event: ev.InputTranscript | ev.OutputTranscript, speaker: Speaker) -> _Out:
    if speaker == "business" and (quote := detect_opt_out(opt_out_words(call))):
        if call.opt_out is None:
            return _opted_out(call, quote)
        if quote != call.opt_out and quote.startswith(call.opt_out):
            call = evolve(call, opt_out=quote)  # the same sentence, heard to its end: keep it whole
    if speaker == "business" and isinstance(call.hangup, HangupFarewell) and call.hangup.via == "wrong_party":
        call = evolve(call, failure=failures.wrong_number(call))  # the sentence that said so, heard on to its end: quote it whole
    match call.hangup:
        case HangupNone() if isinstance(call.conversation, ConvTalking):
            if speaker == "business":  # they answered the steer: the next silence gets its own
                call = evolve(call, conversation=ConvTalking(), line_sound=0)
                return _business_said(call, event.text)
            if call.on_hold:
                return call, []  # the hold budget runs from the cue, whatever the agent says meanwhile
            return call, [timers.stall(call)]
        case HangupFarewell(via=via) as farewell if speaker == "business" and via not in RECORDED:
            return _talk_during_goodbye(call, farewell)
        case HangupNone() if talking_after_verdict(call):
            if speaker == "business" and situations.wrong_party(latest_turn_of(call, "business")[1]) is not None:
                return _wrong_party_goodbye(call)  # the verdict was the wrong business's
            return call, [timers.stall(call)]
        case _:
            return call, []


def _farewell(call: Call, via: Via) -> HangupFarewell:
    return HangupFarewell(via=via, business_from=len(business_text(call)))


def _talk_during_goodbye(call: Call, farewell: HangupFarewell) -> tuple[Call, list[Effect]]:
    """The business speaks before session.close. A question calls our goodbye off at once; other words
    are judged once the goodbye would end (their sentence may still end in "goodbye"), and until then
    the goodbye is not over while they talk: the closing line's quiet starts again. The wrong party
    said over our own goodbye turns it into the apology: the verdict was the wrong business's."""
    talk = goodbye_talk(call, farewell)
    if farewell.via in OWN_GOODBYES and situations.wrong_party(talk) is not None:
        return _wrong_party_goodbye(call)
    if may_call_off(call, farewell) and situations.asks_something(talk):
        return _call_off_goodbye(call)
    return evolve(call, hangup=evolve(farewell, quiet=0)), []


def _call_off_goodbye(call: Call) -> tuple[Call, list[Effect]]:
    """Before session.close: no close, no hangup; the conversation goes on with the verdict kept."""
    concluded = call.conversation
    assert isinstance(concluded, ConvConcluded)
    counters = evolve(call.counters, farewells_reopened=call.counters.farewells_reopened + 1)
    call = evolve(
        call,
        hangup=HangupNone(),
        conversation=evolve(concluded, reopened=concluded.reopened + 1),
        counters=counters,
    )
    return call, [Cancel("farewell"), AppendCommentary(GOODBYE_REOPENED_LINE), timers.stall(call)]


def _opted_out(call: Call, quote: str) -> tuple[Call, list[Effect]]:
    """The business asked not to be called again: keep its words; if no verdict is in, say sorry and goodbye.

    Judged from the business's own speech, whatever the model records: a record that comes
    after this is refused (the conversation is over) and the call ends declined, opt_out.
    """
    call = evolve(call, opt_out=quote)
    if not (isinstance(call.hangup, HangupNone) and isinstance(call.live, LiveActive)):
        return call, []  # a verdict is already in (or the call is ending): the quote is still kept
    call = evolve(call, hangup=_farewell(call, "opt_out"))
    return call, [Cancel("stall"), AppendCommentary(OPT_OUT_LINE), timers.farewell(call)]


def _business_said(call: Call, fragment: str) -> tuple[Call, list[Effect]]:
    """The business said more words: are we on hold, back from hold, screened, or at the wrong number?"""
    turn, text = latest_turn_of(call, "business")
    seg_turn, seg_from = call.segment
    if seg_turn != turn:
        seg_from = 0
        call = evolve(call, segment=(turn, 0))
    if call.on_hold:
        hold = call.holds[-1]
        if hold.quiet < HOLD_RETURN_FRAMES:  # the cue's own sentence going on: still on hold
            return evolve(call, holds=(*call.holds[:-1], evolve(hold, quiet=0))), []
        # Words after a pause: someone is back. What they say now starts a new stretch.
        seg_from = max(len(text) - len(fragment), 0)
        call = evolve(_end_hold(call, "returned"), segment=(turn, seg_from))
    said = text[seg_from:]
    if (phrase := recording_phrase(call, said)) is not None:
        return _reached_recording(call, phrase)
    if (phrase := information_line(call, said)) is not None:
        return _reached_recording(call, phrase, via="information_line")
    if situations.wrong_party(said) is not None:
        return _wrong_party_goodbye(call)
    effects: list[Effect] = []
    if not call.screened and situations.screening(said) is not None:
        call = evolve(call, screened=True)
        effects.append(AppendCommentary(screening_line(call.plan.first_name, call.plan.ask_line)))
    if (cue := situations.hold_cue(said)) is not None:
        call = evolve(call, segment=(turn, len(text)))
        call, hold = _start_hold(call, cue)
        return call, effects + hold
    return call, [*effects, timers.stall(call)]


def _wrong_party_goodbye(call: Call) -> tuple[Call, list[Effect]]:
    """The wrong party, whenever it is said: a polite apology and goodbye, and the call fails wrong_number."""
    call = evolve(call, failure=failures.wrong_number(call), hangup=_farewell(call, "wrong_party"))
    return call, [AppendCommentary(WRONG_PARTY_LINE), *timers.goodbye(call)]


def _start_hold(call: Call, cue: str) -> tuple[Call, list[Effect]]:
    """On hold: the hold budget replaces the stall failsafe until someone speaks again."""
    call = evolve(call, holds=(*call.holds, Hold(cue)))
    return call, [timers.hold(call)]


@_on(ev.InputTranscript)
def _input_transcript(call: Call, event: ev.InputTranscript) -> _Out:
    return _speech(call, event, "business")


@_on(ev.OutputTranscript)
def _output_transcript(call: Call, event: ev.OutputTranscript) -> _Out:
    return _speech(call, event, "agent")


@_on(ev.OutputAudio)
def _output_audio(call: Call, event: ev.OutputAudio) -> _Out:
    if not isinstance(call.live, LiveActive | LiveClosing):
        return _ignore(call, event, "live")
    plays = agent_audible(call)
    after_verdict = isinstance(call.conversation, ConvConcluded)
    call = evolve(call, counters=outbound_counted(call.counters, 1, played=plays, after_verdict=after_verdict))
    effects: list[Effect] = [SendMediaAudio(event.pcm)] if plays else []
    if isinstance(call.hangup, HangupFarewell) and call.hangup.via not in RECORDED:
        call, more = _closing_line_audio(call, call.hangup, event.pcm)
        effects += more
    return call, effects


@_on(ev.OutputForwarded)
def _output_forwarded(call: Call, event: ev.OutputForwarded) -> _Out:
    """Deltas already played to the line (calld.core.audio_path): `_output_audio`'s counting."""
    after_verdict = isinstance(call.conversation, ConvConcluded)
    return evolve(call, counters=outbound_counted(call.counters, event.deltas, played=True, after_verdict=after_verdict)), []


def _closing_line_audio(call: Call, farewell: HangupFarewell, pcm: bytes) -> tuple[Call, list[Effect]]:
    """Has the closing line finished streaming? Speech, then farewell_quiet_s of silent deltas.

    Only audio counts, never the clock: a stream that stalls mid-goodbye sends no deltas and so
    never reaches the quiet (farewell_max_s bounds it). Speech before the farewell's response.create
    went out (continue_due) is the line before the goodbye, not the goodbye.
    """
    if call.continue_due:
        return call, []
    if (going_on := closing_line(farewell, situations.loud(pcm), len(pcm), call.plan.timings.farewell_quiet_s)) is not None:
        return evolve(call, hangup=going_on), []
    if may_call_off(call, farewell) and situations.more_than_courtesy(goodbye_talk(call, farewell)):
        return _call_off_goodbye(call)  # they said more than a courtesy over our goodbye
    call, effects = _start_drain(call, farewell.via)
    return call, [Cancel("farewell"), *effects]


@_on(ev.TaskRecorded)
def _task_recorded(call: Call, event: ev.TaskRecorded) -> _Out:
    if event.call_id in call.tool_call_ids:
        return _Ignore(f"duplicate function call {event.call_id}")
    return _model_opt_out(*_record(_seen_tool(call, event.call_id, RECORD_TASK_RESULT), event), event.opt_out)


def _model_opt_out(call: Call, effects: list[Effect], quote: str | None) -> tuple[Call, list[Effect]]:
    """The model's opt_out_quote binds like the app's own word list, whether or not its record held, once
    the business is found to have said those words (agent words or invented ones bind nothing). With no
    verdict in, the agent apologises and says goodbye, as it does for the word list's opt-out."""
    said = " ".join(t.text for t in call.transcript if t.speaker == "business")
    if quote is None or call.opt_out is not None or not said_by_business(quote, said):
        return call, effects
    call, more = _opted_out(call, quote)
    return call, [*effects, *more]


def _record(call: Call, event: ev.TaskRecorded) -> tuple[Call, list[Effect]]:
    """A record_task_result, judged: accepted (a verdict, the goodbye), a progress note, or refused back
    to the model with the rule it broke (the conversation goes on)."""
    # On a recording the agent is silent, but a record is still judged (a voicemail one is expected).
    recording = isinstance(call.hangup, HangupFarewell) and call.hangup.via in RECORDED
    talking = isinstance(call.hangup, HangupNone) or recording
    talking = talking and isinstance(call.conversation, ConvTalking)
    if (newer := correcting(call, event)) is not None:
        return _superseded(call, *newer)
    if talking_after_verdict(call):
        return _recorded_again(call, event)
    if not talking:
        if not live_is_open(call):
            return call, []
        # A verdict is in and this record says nothing newer: the first stands; the model still gets
        # its turn to speak once the response ends (every output is followed by one response.create).
        call, why = _kept_refusal(call, event, "a final result is already recorded")
        return _continue(call), [SendToolOutput(event.call_id, tool_output(recorded=False, why=why, next="say nothing more unless asked"))]
    if (why := wrong_job(call, event)) is not None:
        return _refuse_record(call, event, why, "record again with a status this call allows")
    job = call.plan.job
    if event.booking is not None:
        call = evolve(call, unanswered=merge_questions(call.unanswered, event.booking.unanswered_questions))
    if event.status not in ev.TERMINAL_TASK_STATUSES:
        # Progress only: the output, then response.create, so the agent goes on talking.
        again = "ask the question again, briefly" if isinstance(job, QuickAskJob) else "go on with the booking"
        return _continue(call), [SendToolOutput(event.call_id, tool_output(recorded=True, next=again))]
    if isinstance(held := record_holds(call, event, recording=recording), Refusal):
        return _refuse_record(call, event, held.why, held.instead)
    event, verdict = held
    if recording:  # no goodbye to a machine: the recording's farewell timer or beep ends the call
        call = evolve(call, conversation=ConvConcluded(event, verdict))
        return _continue(call), [SendToolOutput(event.call_id, tool_output(recorded=True, next="say nothing more"))]
    call = evolve(call, conversation=ConvConcluded(event, verdict), hangup=_farewell(call, "tool"))
    out = tool_output(recorded=True, next=_SAY_GOODBYE)
    return _continue(call), [SendToolOutput(event.call_id, out), *timers.goodbye(call)]


_SAY_GOODBYE = "thank them in one short sentence and say goodbye"


def _superseded(call: Call, event: ev.TaskRecorded, verdict: Verdict) -> tuple[Call, list[Effect]]:
    """The business corrected itself after the accepted record, and this record cites the correction:
    it takes the earlier one's place (the last word wins), and the goodbye starts again: the first one
    was talked over by the correction."""
    assert isinstance(call.conversation, ConvConcluded)
    call = evolve(call, conversation=evolve(call.conversation, task=event, verdict=verdict, corrected=True),
                  hangup=_farewell(call, "tool"))
    out = tool_output(recorded=True, why="the business corrected itself; this record replaces the earlier one", next=_SAY_GOODBYE)
    return _continue(call), [SendToolOutput(event.call_id, out), *timers.goodbye(call)]


def _recorded_again(call: Call, event: ev.TaskRecorded) -> tuple[Call, list[Effect]]:
    """A record after the goodbye was called off: the first verdict stands. A terminal one is the
    next goodbye (the farewell starts again); a progress note lets the agent go on talking."""
    why = "a final result is already recorded"
    if event.status not in ev.TERMINAL_TASK_STATUSES:
        out = tool_output(recorded=False, why=why, next="answer them briefly, then say goodbye and call end_call")
        return _continue(call), [SendToolOutput(event.call_id, out)]
    call, why = _kept_refusal(call, event, why)
    call = evolve(call, hangup=_farewell(call, "tool"))
    out = tool_output(recorded=False, why=why, next=_SAY_GOODBYE)
    return _continue(call), [SendToolOutput(event.call_id, out), *timers.goodbye(call)]


def _kept_refusal(call: Call, event: ev.TaskRecorded, why: str) -> tuple[Call, str]:
    """A terminal record after the verdict that the check refuses (a correction it cannot hold) is kept in
    refused_records, for the report, and the model hears the rule it broke; the first verdict stands."""
    if event.status in ev.TERMINAL_TASK_STATUSES and isinstance(judged := judge(call, event), check.Refused):
        refused = RefusedRecord(event.call_id, event.status, judged.text)
        return evolve(call, refused_records=(*call.refused_records, refused)), f"{judged.text}; {why}"
    return call, why


def _refuse_record(call: Call, event: ev.TaskRecorded, why: str, instead: str) -> _Out:
    """Not accepted: the model is told why and what to do; the conversation (and its failsafe) go on."""
    refused = RefusedRecord(event.call_id, event.status, why)
    call = _continue(evolve(call, refused_records=(*call.refused_records, refused)))
    return call, [SendToolOutput(event.call_id, tool_output(recorded=False, why=why, next=instead))]


@_on(ev.ResponseDone)
def _response_done(call: Call, event: ev.ResponseDone) -> _Out:
    """Every function call of the response has its output: now exactly one response.create."""
    if not call.continue_due:
        return call, []
    call = evolve(call, continue_due=False)
    if not isinstance(call.live, LiveActive):
        return call, []
    return call, [ContinueResponse()]


@_on(ev.EndCallRequested)
def _end_call(call: Call, event: ev.EndCallRequested) -> _Out:
    if event.call_id in call.tool_call_ids:
        return _Ignore(f"duplicate function call {event.call_id}")
    call = evolve(_seen_tool(call, event.call_id, "end_call"), end_call_seen=True)
    if not live_is_open(call):
        return call, []
    match call.hangup:
        case HangupNone():
            call, drain = _start_drain(call, "tool")
            return call, [SendToolOutput(event.call_id, tool_output(ok=True)), Cancel("stall"), *drain]
        case HangupFarewell():
            # Idempotent: the closing line is already on its way; don't cut it, don't ask for another.
            return call, [SendToolOutput(event.call_id, tool_output(ok=True, note="hanging up after your goodbye"))]
        case _:
            return call, [SendToolOutput(event.call_id, tool_output(ok=True))]


@_on(ev.DtmfRequested)
def _dtmf_requested(call: Call, event: ev.DtmfRequested) -> _Out:
    """A menu press. The loop guard: presses in a row with only menu prompts heard between them."""
    if event.call_id in call.tool_call_ids:
        return _Ignore(f"duplicate function call {event.call_id}")
    call = _seen_tool(call, event.call_id, SEND_DTMF)
    if not live_is_open(call):
        return call, []
    if not isinstance(call.hangup, HangupNone) or call.call_control_id is None:
        return call, [SendToolOutput(event.call_id, tool_output(sent=False, why="the call is ending"))]
    presses = menu_presses(call)
    limit = call.plan.timings.dtmf_max_presses
    if presses >= limit:
        return _fail(call, "ivr_unnavigable", failures.menu_loop(presses, limit))
    n = call.counters.dtmf_presses + 1
    call = evolve(
        call,
        menu=MenuProgress(presses=presses + 1, heard_mark=len(business_text(call))),
        counters=evolve(call.counters, dtmf_presses=n),
    )
    return call, [SendDtmf(event.call_id, event.digits, f"dtmf-{call.plan.run_id}-{n}")]


@_on(ev.DtmfSent)
def _dtmf_sent(call: Call, event: ev.DtmfSent) -> _Out:
    if not live_is_open(call):
        return _ignore(call, event, "live")
    if event.error is not None:
        out = tool_output(sent=False, digits=event.digits, error=event.error)
    else:
        out = tool_output(sent=True, digits=event.digits, next="listen to what the menu says next")
    effects: list[Effect] = [SendToolOutput(event.call_id, out)]
    if isinstance(call.hangup, HangupNone):
        effects.append(ContinueResponse())
    return call, effects


@_on(ev.ToolCallRejected)
def _tool_rejected(call: Call, event: ev.ToolCallRejected) -> _Out:
    if event.call_id in call.tool_call_ids:
        return _Ignore(f"duplicate function call {event.call_id}")
    call = _seen_tool(call, event.call_id, event.name)
    if event.name == RECORD_TASK_RESULT:  # kept with the records the gate refused: the model was told the rule it broke
        call = evolve(call, refused_records=(*call.refused_records, RefusedRecord(event.call_id, "invalid", event.error)))
    if not live_is_open(call):
        return call, []
    effects: list[Effect] = [SendToolOutput(event.call_id, tool_output(ok=False, error=event.error))]
    if isinstance(call.hangup, HangupNone):
        call = _continue(call)
    return _model_opt_out(call, effects, event.opt_out)


@_on(ev.LiveClosed)
def _live_closed(call: Call, event: ev.LiveClosed) -> _Out:
    if not live_is_open(call):
        return _ignore(call, event, "live")
    was_starting = isinstance(call.live, LiveStarting)
    call = evolve(call, live=LiveDone(event.reason))
    match call.hangup:
        case HangupDraining(via=via) | HangupFarewell(via=via):
            call, effects = _mark_behind_last_audio(call, via)
            return call, [Cancel("close"), Cancel("farewell"), *effects]
        case HangupNone():
            if was_starting:
                return _fail(call, "model_unavailable", f"GPT-Live closed the session before it started ({event.reason})")
            return _fail(call, "model_lost", f"GPT-Live closed the session in the middle of the call ({event.reason})")
        case _:
            return call, []


# -- timers ------------------------------------------------------------------------------------------


@_on(ev.FarewellElapsed)
def _farewell_over(call: Call, event: ev.FarewellElapsed) -> _Out:
    """farewell_max_s: the closing line had its time, finished or not (a stalled stream included)."""
    if not isinstance(call.hangup, HangupFarewell):
        return _ignore(call, event, "hangup")
    call, effects = _start_drain(call, call.hangup.via)
    return call, [Cancel("farewell"), *effects]


@_on(ev.LiveCloseTimedOut)
def _close_timed_out(call: Call, event: ev.LiveCloseTimedOut) -> _Out:
    if not isinstance(call.hangup, HangupDraining):
        return _ignore(call, event, "hangup")
    via = call.hangup.via
    call = evolve(call, live=LiveDone("close_timeout"))
    call, effects = _mark_behind_last_audio(call, via)
    return call, [AbortLive(), *effects]


@_on(ev.DrainTimedOut)
def _drain_timed_out(call: Call, event: ev.DrainTimedOut) -> _Out:
    if not isinstance(call.hangup, HangupMarked):
        return _ignore(call, event, "hangup")
    return _request_hangup(call, "drain_timeout")


@_on(ev.TrailElapsed)
def _trail_elapsed(call: Call, event: ev.TrailElapsed) -> _Out:
    if not isinstance(call.hangup, HangupTrailing):
        return _ignore(call, event, "hangup")
    return _request_hangup(call, call.hangup.via)


@_on(ev.HangupConfirmTimedOut)
def _confirm_timed_out(call: Call, event: ev.HangupConfirmTimedOut) -> _Out:
    if not isinstance(call.hangup, HangupRequested):
        return _ignore(call, event, "hangup")
    return _done(call, call.hangup.via, confirmed=False)


@_on(ev.StallElapsed)
def _stall(call: Call, event: ev.StallElapsed) -> _Out:
    if talking_after_verdict(call):
        pass  # the goodbye was called off and nobody spoke since: the verdict stands, hang up
    elif not isinstance(call.hangup, HangupNone) or not isinstance(call.conversation, ConvTalking):
        return _ignore(call, event, "conversation")
    elif call.on_hold:
        detail = failures.hold_too_long(call.plan.timings.hold_max_s, call.holds[-1].cue)
        call = evolve(_end_hold(call, "timeout"), failure=call.failure or Failure("hold_timeout", detail))
    elif not call.conversation.steered and answer_heard(call):
        call = evolve(call, hangup=_farewell(call, "answer_heard"))
        return call, [AppendCommentary(ANSWER_HEARD_LINE), timers.farewell(call)]
    elif not call.conversation.steered:
        call = evolve(call, conversation=ConvTalking(steered=True, quiet_after=last_to_speak(call.transcript)))
        return call, [AppendCommentary(call.plan.steer_line), timers.stall(call)]
    effects: list[Effect] = timers.cancel(*timers.LIVE_TIMERS)
    if live_is_open(call):
        effects.append(CloseLive())
        call = evolve(call, live=LiveClosing())
    call, hangup = _request_hangup(call, "stall")
    return call, effects + hangup


@_on(ev.CallCapElapsed)
def _call_cap(call: Call, event: ev.CallCapElapsed) -> _Out:
    if isinstance(call.hangup, HangupPending | HangupRequested | HangupDone):
        return _ignore(call, event, "hangup")
    call, effects = _abort_live(call)
    call, hangup = _request_hangup(call, "time_limit")
    return call, timers.cancel(*timers.LIVE_TIMERS) + effects + hangup


@_on(ev.RingElapsed)
def _ring_elapsed(call: Call, event: ev.RingElapsed) -> _Out:
    if not isinstance(call.telnyx, TelnyxIdle | TelnyxInitiated):
        return _ignore(call, event, "telnyx")
    ring_s = call.plan.timings.ring_timeout_s
    if not isinstance(call.media, MediaIdle | MediaOpen):
        return _fail(call, "no_call_events", failures.no_answer_on_stream(ring_s))
    return _fail(call, "no_call_events", failures.no_webhooks(ring_s, initiated=isinstance(call.telnyx, TelnyxInitiated)))


@_on(ev.MediaWaitElapsed)
def _media_wait_elapsed(call: Call, event: ev.MediaWaitElapsed) -> _Out:
    if not isinstance(call.telnyx, TelnyxAnswered) or not isinstance(call.media, MediaIdle | MediaOpen):
        return _ignore(call, event, "media")
    opened = isinstance(call.media, MediaOpen)
    return _fail(call, "no_media", failures.no_media(call.plan.timings.media_start_s, socket_opened=opened))


@_on(ev.CallCut)
def _cut(call: Call, event: ev.CallCut) -> _Out:
    return _fail(call, "shutdown", event.detail)


@_on(ev.CallCrashed)
def _crashed(call: Call, event: ev.CallCrashed) -> _Out:
    return _fail(call, "internal", event.error)


_missing = [t for t in ev.Event.__args__ if t not in _HANDLERS]  # type: ignore[attr-defined]
assert not _missing, f"events without a handler: {_missing}"
