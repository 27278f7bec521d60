"""CallHandle: the one owner of one call. It moves events and performs effects; nothing else.

A call is one trio nursery holding the transport tasks (webhooks, Telnyx media,
GPT-Live) and the timers; they all feed one memory channel that a single loop
drains into `reduce_step`. Effects run in order, in that loop.

Resource handling: when the call is finished the nursery is cancelled; the GPT-Live
task closes its socket in a shielded, bounded `finally`, and the media socket is
released to whoever attached it. Artifacts are written whatever happened (what they hold:
calld.runtime.artifacts).

The steady audio path (calld.core.audio_path): while the state the reducer left allows it, the
media task sends inbound frames on to GPT-Live itself and the GPT-Live task plays deltas to the
line itself; each keeps what it forwarded as a stretch, and the loop records each stretch in its
WAV with one write and steps the stretches (InboundForwarded, OutputForwarded; InboundHeld before
GPT-Live is ready, InboundRecorded once it is gone) before every other event, so the reducer sees
what happened in order and every count adds up. A frame never overtakes one still queued
for the reducer, and one task at a time writes the media socket.

Error handling: an exception in a transport task or an effect does not escape; it
becomes a CallCrashed event, so the reducer ends the call (failed result, hangup
sent) and the caller still gets a result.
"""

from __future__ import annotations

import json
import logging
import math
import secrets
import traceback
from collections.abc import Awaitable, Callable
from contextlib import AbstractAsyncContextManager
from datetime import UTC, datetime
from functools import partial
from operator import attrgetter
from typing import Any

import trio
from attrs import field, frozen

from calld.adapters import gpt_live
from calld.adapters.gpt_live import LiveEventMalformed, LiveInbound, LiveProtocolError
from calld.adapters.telnyx_http import DialSecrets, TelnyxError, TelnyxHttp
from calld.adapters.telnyx_media import InboundMedia, MediaFrameError, OutboundMedia
from calld.adapters.telnyx_webhook import Webhook
from calld.core import events as ev
from calld.core.effects import (
    AbortLive,
    AppendCommentary,
    Cancel,
    CloseLive,
    ContinueResponse,
    Effect,
    Hangup,
    OpenLive,
    PlaceDial,
    Schedule,
    SendLiveAudio,
    SendMark,
    SendDtmf,
    SendMediaAudio,
    SendToolOutput,
)
from calld.core.audio_path import CLOSED, AudioPath, audio_path
from calld.core.outcome import conclude, on_date
from calld.core.plan import CallPlan
from calld.core.reduce import reduce_step
from calld.core.situations import loud_each
from calld.core.state import TRACKS, Call, DialSent, TelnyxEnded
from calld.adapters.codecs import codec_for
from calld.domain import results
from calld.ops.recovery import hangup_command_id
from calld.runtime.artifacts import (
    call_report, no_hangup_record, refs_present, task_record, transcript_file, write_before_result, write_result,
)
from calld.runtime.behind import Behind, Step
from calld.runtime.disk import DiskWork, inline
from calld.runtime.hangup import HangupSeries, hangup_info
from calld.runtime.journal import effect_row, event_row
from calld.ops.redaction import Pseudonyms
from calld.runtime.report import MediaInfo, Transition, redact
from calld.runtime.rundir import RunDir
from calld.runtime.verdict import build_result, business_date
from calld.runtime.sockets import MessageSocket, SocketClosed

log = logging.getLogger("calld.call")

LiveConnector = Callable[[], AbstractAsyncContextManager[MessageSocket]]
LIVE_CLOSE_BOUND_S = 2.0  # teardown of a socket that is no longer wanted
LIVE_MALFORMED_MAX = 20  # unreadable GPT-Live events a call drops before it gives the session up
ABANDON_HANGUP_BOUND_S = 5.0  # a hangup sent while the call is being torn down
_QUIET_KINDS = {"media.audio", "live.output_audio", "live.audio", "live.input_transcript", "live.output_transcript",
                "media.audio_forwarded", "live.output_audio_forwarded", "media.audio_recorded", "media.audio_held"}
# Effects whose rows wait in the file's buffer for the next flushed row: the audio's, and the timers'
# (the stall failsafe is re-armed on every word; a killed process loses at most those rows, as it
# loses the last second of audio rows).
_QUIET_EFFECTS = frozenset(_QUIET_KINDS | {"schedule", "cancel"})
# Audio events and effects: their journal rows and PCM are batched (RunDir.journal_audio, RunDir.audio).
_AUDIO_KINDS = frozenset({"media.audio", "live.output_audio", "live.audio", "media.audio_forwarded", "live.output_audio_forwarded",
                          "media.audio_recorded", "media.audio_held"})
# A forwarded stretch is told to the reducer before the next event, and at the latest after this
# many frames or deltas (half a second of inbound audio: the hold-music watch's resolution).
STRETCH_MAX = 25


class _Tell:
    """The loop's wake-up when a forwarded stretch is due: it steps the stretches, nothing else."""


_TELL = _Tell()
_SETTLED = _Tell()  # the hangup series ended: wakes _until_hung_up (the loop steps it as any wake-up)
_tracks = attrgetter(*TRACKS)  # the six tracks in one C call: unchanged tracks are the very same objects


def _debug_log() -> bool:
    return log.isEnabledFor(logging.DEBUG)


@frozen
class _Timer:
    """One armed timer: when it is due (on trio's clock) and what it delivers then."""

    deadline: float
    event: ev.Event


@frozen
class CallPorts:
    telnyx: TelnyxHttp
    connect_live: LiveConnector
    public_media_url: str  # wss://host/telnyx/media ; the per-call token is appended
    webhook_url: str | None
    l16_byte_order: str = "le"
    disk: DiskWork = inline  # where the call's JSON files are written (calld.runtime.disk)
    # The daemon's queue of finishing work, shared by its calls (calld.runtime.behind); alone, a call has its own.
    behind: Behind = field(factory=Behind)


class CallHandle:
    def __init__(self, plan: CallPlan, ports: CallPorts, rundir: RunDir, *, pseudonyms: Pseudonyms | None = None) -> None:
        self.plan = plan
        self.ports = ports
        self.rundir = rundir
        # The redacted report's user id: keyed with the state directory's secret (a handle without
        # one gets a key nobody keeps, so the id is still never shown as given).
        self.pseudonyms = pseudonyms or Pseudonyms.ephemeral()
        self.call = Call(plan=plan)
        self.media_token = secrets.token_urlsafe(24)
        self.stream_auth_token = secrets.token_urlsafe(24)
        self.result: results.CallResult | None = None
        self.finished = trio.Event()
        self._events_tx, self._events_rx = trio.open_memory_channel[ev.Event | _Tell](math.inf)
        self._webhooks_tx, self._webhooks_rx = trio.open_memory_channel[Webhook](64)
        self._media_tx, self._media_rx = trio.open_memory_channel[MessageSocket](1)
        self._media_claimed = False  # a media socket has been taken for this call (claim_media)
        self._seen_webhooks: set[str] = set()
        self._timers: dict[str, _Timer] = {}
        self._timer_scope: trio.CancelScope | None = None  # the timer task's wait, while it runs
        self._nursery: trio.Nursery | None = None
        self._live_socket: MessageSocket | None = None
        self._live_scope: trio.CancelScope | None = None
        self._live_event_n = 0
        self._live_heard_at = 0.0  # when the GPT-Live socket last sent anything (trio's clock)
        self._media_socket: MessageSocket | None = None
        self._media_out: OutboundMedia | None = None
        self._stream_id: str | None = None  # the started stream's: the steady path takes only its frames
        self._inbound: InboundMedia | None = None
        self._media_released = trio.Event()
        self._seq = 0
        self._crashed = False
        self._dialled: str | None = None  # the call_control_id the dial returned, the moment it did
        self._write_failure_told = False
        self._audio_failure_told = False
        self.abandon_reason = "the call was torn down before it finished"
        self.abandon_is_shutdown = False  # the daemon cut the call at the end of its drain: reason shutdown
        self._ignored = 0
        self._last_ignored: str | None = None  # the last ignore logged: the same again is journaled, not logged
        self._media_format: tuple[str, int] | None = None
        self._t0 = 0.0
        self._running = False  # run() has begun: _t0 is the call's start
        self._transitions: dict[str, list[Transition]] = {}
        self._final_echo_ms: int | None = None
        self._holds: list[dict[str, Any]] = []
        self.hangup_series: HangupSeries | None = None  # the one Hangup effect, performed: calld.runtime.hangup
        self._ended_ms: int | None = None  # when the reducer finished the call (a hangup may still be tried after)
        self._path: AudioPath = CLOSED  # where steady audio may go without a reducer step
        # Forwarded to GPT-Live, not yet told: each frame's PCM, and the first and last chunk
        # numbers (bytes and ints only: 50 frames a second a call, kept out of the collector's walks).
        # A stretch's audio is recorded when it is told, in one write (_take_stretches).
        self._inbound_stretch: list[bytes] = []
        self._inbound_chunks = [0, 0]
        self._output_stretch: list[bytes] = []  # each delta's PCM played to the line, not yet told
        self._recorded_stretch: list[ev.MediaAudio] = []  # only recorded (GPT-Live gone), not yet told
        self._held_stretch: list[ev.MediaAudio] = []  # recorded, for the reducer to hold (GPT-Live not ready)
        self._tell_due = False  # a _TELL is in the channel
        self._inbound_queued = 0  # MediaAudio events in the channel: forwarding waits for them
        self._output_queued = 0  # OutputAudio events in the channel
        self._media_writing = trio.Lock()  # one task at a time writes the media socket
        self._started = datetime.now(UTC)
        self._started_at = self._started.isoformat(timespec="seconds")
        self.listeners: list[Callable[[dict[str, Any]], None]] = []  # progress for calld-ctl

    # -- inputs from the outside world -------------------------------------------------------------

    async def deliver_webhook(self, webhook: Webhook) -> None:
        await self._webhooks_tx.send(webhook)

    @property
    def media_claimed(self) -> bool:
        return self._media_claimed

    def claim_media(self) -> bool:
        """True once: the first media socket to present this call's token and auth header is the
        call's. Any later one (a second connection, a replay) is refused before it is accepted."""
        if self._media_claimed:
            return False
        self._media_claimed = True
        return True

    async def attach_media(self, socket: MessageSocket) -> None:
        """Hand over Telnyx's media socket (claimed first: claim_media); returns when the call no longer needs it."""
        assert self._media_claimed, "claim_media() first: a call has one media socket"
        await self._media_tx.send(socket)
        await self._media_released.wait()

    # -- the call ----------------------------------------------------------------------------------

    async def run(self) -> results.CallResult:
        self._t0 = trio.current_time()
        self._running = True
        for track in TRACKS:
            self._transitions[track] = [Transition(state=getattr(self.call, track).kind, t_ms=0)]
        try:
            async with trio.open_nursery() as nursery:
                self._nursery = nursery
                nursery.start_soon(self._guard, self._webhook_task, "webhooks")
                nursery.start_soon(self._guard, self._media_task, "media")
                await self._events_tx.send(ev.Begin())
                await self._loop()
                self._ended_ms = self._t_ms()
                await self._until_hung_up()
                nursery.cancel_scope.cancel()
        finally:
            self._media_released.set()
            with trio.CancelScope(shield=True):
                if not self.call.finished:
                    await self._abandon(self.abandon_reason)
                if self.hangup_series is not None and not self.hangup_series.settled:  # sent by _abandon, or cut short here
                    await self._perform_hangup(self.hangup_series, ABANDON_HANGUP_BOUND_S)
                await self._finish()
            self.finished.set()
        assert self.result is not None
        return self.result

    async def _loop(self) -> None:
        while True:
            event = await self._events_rx.receive()
            if await self._take(event):
                return
            # What queued meanwhile is taken without a trip through the scheduler per event.
            while True:
                try:
                    event = self._events_rx.receive_nowait()
                except trio.WouldBlock:
                    break
                if await self._take(event):
                    return

    async def _take(self, event: ev.Event | _Tell) -> bool:
        """Step one event, after the forwarded audio before it; True once the call is finished."""
        try:
            if self._inbound_stretch or self._output_stretch or self._recorded_stretch or self._held_stretch:
                for stretch in self._take_stretches():
                    await self._step(stretch)
            if isinstance(event, _Tell):
                return self.call.finished
            try:
                await self._step(event)
            finally:
                if type(event) is ev.MediaAudio:
                    self._inbound_queued -= 1
                elif type(event) is ev.OutputAudio:
                    self._output_queued -= 1
        except Exception as exc:
            # A bug in this call ends this call, never the daemon.
            if self._crashed:
                raise
            self._crashed = True
            log.exception("%s internal error on %s", self.plan.run_id, getattr(event, "kind", "forwarded audio"))
            await self._events_tx.send(ev.CallCrashed(f"{type(exc).__name__}: {exc}"))
        if self.rundir.write_error is not None and not self._write_failure_told:
            # A full disk (or any write error) fails this call: it is hung up like any failure.
            self._write_failure_told = True
            await self._events_tx.send(ev.CallCrashed(self._write_failure()))
        if self.rundir.audio_error is not None and not self._audio_failure_told:
            self._tell_audio_failure()  # the recording stopped; the call goes on (RunDir's note)
        return self.call.finished

    def _tell_audio_failure(self) -> None:
        """The log's one line for a recording cut short by a failed audio write."""
        self._audio_failure_told = True
        log.error("%s writing the audio failed: %s; the recording stops there and the call goes on",
                  self.call.call_control_id or self.plan.run_id, self.rundir.audio_error)

    def _write_failure(self) -> str:
        """The detail of a call failed (reason `internal`) by a write error."""
        return f"could not write the call's artifacts: {self.rundir.write_error}"

    async def _abandon(self, reason: str) -> None:
        """The call is being torn down unfinished (daemon shutdown, or a second crash): the reducer ends
        it now, without waiting for anything else; run() performs its hangup, bounded. Never raises."""
        try:
            events: list[ev.Event] = [ev.CallCut(reason) if self.abandon_is_shutdown else ev.CallCrashed(reason)]
            if isinstance(self.call.dial, DialSent) and self._dialled is not None:
                # Torn down between the dial's answer and the loop's hearing of it (its file was being
                # written): the call exists at the carrier, so the reducer learns its id first.
                events.insert(0, ev.DialAccepted(self._dialled))
            for event in events:
                step = reduce_step(self.call, event)
                self.call = step.call
                seq = self._next_seq()
                self.rundir.journal(event_row(seq, self._t_ms(), event, {}, step.ignored))
                for effect in step.effects:
                    if isinstance(effect, Hangup):
                        self.rundir.journal(effect_row(self._next_seq(), self._t_ms(), seq, effect))
                        self._new_hangup(effect.via)
        except Exception:
            log.exception("%s could not end the call while abandoning it", self.plan.run_id)

    async def _step(self, event: ev.Event) -> None:
        before = self.call
        step = reduce_step(before, event)
        after = self.call = step.call
        self._seq += 1
        seq = self._seq
        t_ms = round((trio.current_time() - self._t0) * 1000)
        ignored = step.ignored
        changed: dict[str, list[str]] = {}
        if _tracks(before) != _tracks(after):  # most events (every audio frame) leave every track as it was
            for track in TRACKS:
                old, new = getattr(before, track).kind, getattr(after, track).kind
                if old != new:
                    changed[track] = [old, new]
                    self._transitions[track].append(Transition(state=new, t_ms=t_ms))
        kind = event.kind
        audio = kind in _AUDIO_KINDS
        row = event_row(seq, t_ms, event, changed, ignored)
        if audio and ignored is None:
            self.rundir.journal_audio(row)
            if kind == "media.audio":
                self.rundir.audio("inbound.wav", event.pcm)  # type: ignore[attr-defined]
        else:
            self.rundir.journal(row, flush=kind not in _QUIET_KINDS)
            if ignored is not None:
                self._ignored += 1
            elif isinstance(event, ev.MediaStarted):
                self._media_format = (event.encoding, event.sample_rate)
            elif isinstance(event, ev.MarkEchoed):
                self._final_echo_ms = t_ms
        if before.holds is not after.holds:
            self._stamp_holds(before, after, t_ms)
        accepted = before.conversation is not after.conversation and before.task is None and after.task is not None
        if ignored is not None or changed or not audio or _debug_log():
            self._log_event(event, changed, ignored, t_ms)
        path = audio_path(after)
        if not step.effects and not accepted:
            self._path = path
            return
        self._path = self._path.narrowed(path)  # audio waits behind what this step sends
        try:
            if accepted:
                # Written the moment the verdict is accepted, before anything it causes: a crash
                # after this keeps it (recovery reads it).
                await self._write_json("task.json", task_record(self.plan, self.call, self.rundir))
            await self._perform_all(step.effects, seq, t_ms)
        finally:
            self._path = path

    async def _perform_all(self, effects: tuple[Effect, ...], seq: int, t_ms: int) -> None:
        first = True
        for effect in effects:
            self._seq += 1
            at = t_ms if first else self._t_ms()  # effects after the first wait for the ones before them
            first = False
            if effect.kind in _AUDIO_KINDS:
                self.rundir.journal_audio(effect_row(self._seq, at, seq, effect))
            else:
                self.rundir.journal(effect_row(self._seq, at, seq, effect), flush=effect.kind not in _QUIET_EFFECTS)
            try:
                await self._perform(effect)
            except Exception as exc:  # an effect's failure is the call's, not the daemon's
                log.error("%s %s failed: %s", self.plan.run_id, effect.kind, exc)
                await self._events_tx.send(ev.CallCrashed(f"{effect.kind} failed: {exc}"))

    def _take_stretches(self) -> list[ev.Event]:
        """The forwarded audio not yet told, as events; the stretches start again empty.

        Each stretch's audio goes to its WAV here, in one write, before its row: the order of
        the events is the order the frames came in (a path only moves from holding to forwarding
        to recording), and no frame told later was recorded earlier."""
        out: list[ev.Event] = []
        record = self.rundir.audio
        if self._held_stretch:  # before GPT-Live was ready: nothing else came since, so it goes first
            held = tuple(self._held_stretch)
            self._held_stretch = []
            record("inbound.wav", b"".join(f.pcm for f in held))
            out.append(ev.InboundHeld(held))
        pcms = self._inbound_stretch
        if pcms:
            self._inbound_stretch = []
            joined = b"".join(pcms)
            record("inbound.wav", joined)
            watching = audio_path(self.call).uplink_loudness  # judged now: what the reducer will do with it
            first, last = self._inbound_chunks
            out.append(ev.InboundForwarded(
                frames=len(pcms), pcm_bytes=len(joined), first_chunk=first,
                last_chunk=last, loud=loud_each(pcms, joined) if watching else ()))
        recorded = self._recorded_stretch
        if recorded:  # after any forwarded frames: the path only moves from forwarding to recording
            self._recorded_stretch = []
            joined = b"".join(f.pcm for f in recorded)
            record("inbound.wav", joined)
            out.append(ev.InboundRecorded(frames=len(recorded), pcm_bytes=len(joined),
                                          first_chunk=recorded[0].chunk, last_chunk=recorded[-1].chunk))
        deltas = self._output_stretch
        if deltas:
            self._output_stretch = []
            joined = b"".join(deltas)
            record("outbound.wav", joined)
            out.append(ev.OutputForwarded(deltas=len(deltas), pcm_bytes=len(joined)))
        self._tell_due = False
        return out

    def _tell_later(self) -> None:
        if not self._tell_due:
            self._tell_due = True
            self._events_tx.send_nowait(_TELL)

    def report_duration_ms(self) -> int:
        """Milliseconds since the call began (what the report's duration_ms says once it is written)."""
        return self._t_ms()

    def _stamp_holds(self, before: Call, after: Call, t_ms: int) -> None:
        """The reducer knows the holds; the runtime knows the time: it stamps when each began and ended."""
        for i, hold in enumerate(after.holds):
            if i >= len(self._holds):
                self._holds.append({"cue": hold.cue, "start_ms": t_ms, "end_ms": None, "ended": "call_ended"})
            if hold.ended is not None and self._holds[i]["end_ms"] is None:
                self._holds[i].update(end_ms=t_ms, ended=hold.ended)

    def _next_seq(self) -> int:
        self._seq += 1
        return self._seq

    def _t_ms(self) -> int:
        return round((trio.current_time() - self._t0) * 1000)

    @property
    def age_s(self) -> float:
        """How long the call has been going (since it was started, on the daemon's clock)."""
        return trio.current_time() - self._t0 if self._running else 0.0

    def _log_event(self, event: ev.Event, changed: dict[str, list[str]], ignored: str | None, t_ms: int) -> None:
        who = self.call.call_control_id or self.plan.run_id
        if ignored:
            # One line for a run of the same (another stream's frames, 50 a second); the journal keeps each.
            if ignored != self._last_ignored:
                self._last_ignored = ignored
                log.info("%s t=%dms ignored %s", who, t_ms, ignored)
        elif event.kind in _QUIET_KINDS and not changed:  # a frame or a word that moved the call is an event like any
            log.debug("%s t=%dms %s", who, t_ms, event.kind)
        else:
            moves = " ".join(f"{k}:{a}->{b}" for k, (a, b) in changed.items())
            log.info("%s t=%dms %s %s", who, t_ms, event.kind, moves)
        if changed or event.kind not in _QUIET_KINDS:  # listeners follow the call, not every audio frame
            progress = {"t_ms": t_ms, "event": event.kind, "changed": changed}
            for listener in self.listeners:
                listener(progress)

    # -- effects -----------------------------------------------------------------------------------

    async def _perform(self, effect: Effect) -> None:
        match effect:  # the two audio effects first: 50 a second each way
            case SendLiveAudio(pcm=pcm):
                await self._send_live_text(gpt_live.input_audio_append_text(pcm))
            case SendMediaAudio(pcm=pcm):
                self.rundir.audio("outbound.wav", pcm)
                if self._media_out is not None:
                    await self._send_media(partial(self._media_out.audio, pcm))
            case Schedule(key=key, delay_s=delay, event=timer_event):
                self._schedule(key, delay, timer_event)
            case Cancel(key=key):
                self._cancel_timer(key)
            case PlaceDial(plan=dial_plan):
                await self._dial(dial_plan)
            case OpenLive(plan=live_plan):
                assert self._nursery is not None
                self._nursery.start_soon(self._guard, partial(self._live_task, live_plan), "gpt-live")
            case AppendCommentary(text=text):
                await self._send_live(gpt_live.commentary_append(text, event_id=self._live_event_id()))
            case SendToolOutput(call_id=call_id, output=output):
                await self._send_live(gpt_live.function_call_output(call_id, output, event_id=self._live_event_id()))
            case ContinueResponse():
                await self._send_live(gpt_live.response_create(event_id=self._live_event_id()))
            case CloseLive():
                await self._send_live(gpt_live.session_close(event_id=self._live_event_id()))
            case AbortLive():
                if self._live_scope is not None:
                    self._live_scope.cancel()
            case SendMark(name=name):
                if self._media_out is not None:
                    await self._send_media(partial(self._media_out.mark, name))
            case Hangup(via=via):
                assert self._nursery is not None
                # A task of the call's, never the loop's wait: the confirmation timer fires on time.
                self._nursery.start_soon(self._perform_hangup, self._new_hangup(via))
            case SendDtmf(call_id=call_id, digits=digits, command_id=command_id):
                await self._send_dtmf(call_id, digits, command_id)

    def _schedule(self, key: str, delay: float, event: ev.Event) -> None:
        """Arm timer `key` to deliver `event` after `delay`, replacing whatever it was set to (one
        whose deadline has come but that has not fired yet never fires).

        All of a call's timers share one waiting task, whose cancel scope's deadline is the earliest
        of theirs (brought forward at once, moved later lazily: see _timers_moved): the stall failsafe
        re-armed on every fragment of speech starts nothing, and a call holds one timer task, not one per armed timer (fewer waiting tasks for the
        collector to walk). The task ends when no timer is left armed."""
        self._timers[key] = _Timer(trio.current_time() + delay, event)
        self._timers_moved()

    def _cancel_timer(self, key: str) -> None:
        if self._timers.pop(key, None) is not None:
            self._timers_moved()

    def _timers_moved(self) -> None:
        scope = self._timer_scope
        if scope is None:
            if self._timers:
                assert self._nursery is not None
                self._timer_scope = scope = trio.CancelScope(deadline=self._earliest_timer())
                self._nursery.start_soon(self._fire, scope)
        elif self._timers:
            # Only ever brought forward here. A deadline moved later (the failsafe re-armed by a
            # word) leaves the wait as it is: the task wakes at the old one, finds nothing due and
            # waits on, once a stall period instead of trio's deadline bookkeeping on every word
            # (even an unchanged deadline's assignment is a context manager's round in trio).
            if (earliest := self._earliest_timer()) < scope.deadline:
                scope.deadline = earliest
        else:
            scope.cancel()  # nothing left armed: the task wakes and ends

    def _earliest_timer(self) -> float:
        return min(t.deadline for t in self._timers.values())

    async def _fire(self, scope: trio.CancelScope) -> None:
        """The call's timer task: waits until the earliest deadline (however often it moves), then
        delivers every timer that is due, in deadline order, and waits again while any is armed."""
        while True:
            with scope:
                await trio.sleep_forever()
            now = trio.current_time()
            due = sorted((t.deadline, key) for key, t in self._timers.items() if t.deadline <= now)
            for _, key in due:
                self._events_tx.send_nowait(self._timers.pop(key).event)  # unbounded: never blocks
            if not self._timers:
                self._timer_scope = None
                return
            scope = self._timer_scope = trio.CancelScope(deadline=self._earliest_timer())

    async def _dial(self, plan: Any) -> None:
        secrets_ = DialSecrets(
            stream_url=f"{self.ports.public_media_url}/{self.media_token}",
            stream_auth_token=self.stream_auth_token,
            webhook_url=self.ports.webhook_url,
        )
        try:
            dialled = await self.ports.telnyx.dial(plan, secrets_)
        except (TelnyxError, OSError, ValueError) as exc:
            await self._write_json("dial.json", {"error": str(exc)})
            await self._events_tx.send(ev.DialFailed(str(exc)))
            return
        # The directory is renamed before anything else of the call's is written (GPT-Live opens,
        # and the media starts, only once the call is answered): no write in a worker thread can
        # be under way in the old one.
        # Neither raises: the call exists at the carrier now, whatever happens to its files, and the
        # reducer must learn its id or nothing could hang it up (a failed write fails it, hung up once;
        # a call torn down meanwhile is hung up by _abandon, which reads _dialled).
        self._dialled = dialled.call_control_id
        await self.ports.disk(partial(self.rundir.adopt, dialled.call_control_id, call_control_id=dialled.call_control_id))
        # What was sent, and the id the carrier answered with (recovery reads it if the ledger never took it).
        await self._write_json("dial.json", {**dialled.request, "call_control_id": dialled.call_control_id})
        await self._events_tx.send(ev.DialAccepted(dialled.call_control_id))

    async def _send_dtmf(self, call_id: str, digits: str, command_id: str) -> None:
        ccid = self.call.call_control_id
        error: str | None = None
        if ccid is None:
            error = "there is no call to press keys on"
        else:
            try:
                await self.ports.telnyx.send_dtmf(ccid, digits, command_id)
            except (TelnyxError, OSError, ValueError) as exc:
                error = str(exc)
        await self._events_tx.send(ev.DtmfSent(call_id, digits, error))

    def _new_hangup(self, via: str) -> HangupSeries:
        """The call's one hangup (calld.runtime.hangup): one command id, however often it is sent."""
        t, telnyx, ccid = self.plan.timings, self.ports.telnyx, self.call.call_control_id
        self.hangup_series = HangupSeries(telnyx.hangup, telnyx.get_call, ccid, hangup_command_id(self.plan.run_id),
                                          via=via, requested_at_ms=self._t_ms(), try_s=t.hangup_confirm_s,
                                          retry_s=t.hangup_retry_s, who=ccid or self.plan.run_id)
        return self.hangup_series

    async def _perform_hangup(self, series: HangupSeries, bound: float = math.inf) -> None:
        """Run the series (within `bound`); hangup.json says what it did, whatever happens. Never raises."""
        try:
            with trio.move_on_after(bound):
                await series.run()
        except Exception:  # a bug here must not leave the call unfinished; the record says where it stopped
            log.exception("%s hangup failed", self.plan.run_id)
        finally:
            with trio.CancelScope(shield=True):
                await self._write_json("hangup.json", series.record())
            self._events_tx.send_nowait(_SETTLED)  # unbounded: never blocks

    async def _until_hung_up(self) -> None:
        """The call is over for the reducer, but a hangup Telnyx has not taken is tried on (HANGUP_RETRY_S);
        events meanwhile are still stepped, and a call.hangup among them stops the tries: the line is down."""
        series = self.hangup_series
        while series is not None and not series.settled:
            if isinstance(self.call.telnyx, TelnyxEnded):
                series.notice_down("Telnyx's call.hangup came")
            event = await self._events_rx.receive()
            if event is _SETTLED:
                break  # its task has ended: settled, or it broke (the record says so)
            await self._take(event)

    async def _write_json(self, name: str, data: Any) -> str:
        """One of the run's JSON files, written where the ports say (calld.runtime.disk). Never
        raises: a failure is the run directory's write_error, which fails the call (hung up once)."""
        return await self._on_disk(partial(self.rundir.write_json, name, data), name, self.rundir.ref(name))

    async def _on_disk(self, fn: Callable[[], Any], what: str, otherwise: Any) -> Any:
        """`fn` run by the ports' disk; if that fails (RunDir's own writes never raise, the trip
        to the worker thread may), the failure is recorded as a write error and `otherwise` returned."""
        try:
            return await self.ports.disk(fn)
        except Exception as exc:  # noqa: BLE001 - a live call must still be hung up: see the module's note
            self.rundir.failed(what, exc)
            return otherwise

    def _live_event_id(self) -> str:
        self._live_event_n += 1
        return f"calld_{self._live_event_n}"

    async def _send_live(self, message: dict[str, Any]) -> None:
        await self._send_live_text(json.dumps(message, separators=(",", ":")))

    async def _send_live_text(self, text: str) -> None:
        if self._live_socket is None:
            return  # not connected (or already gone): the reducer's timers cover what follows
        try:
            await self._live_socket.send(text)
        except SocketClosed as exc:
            log.warning("%s GPT-Live send failed: %s", self.plan.run_id, exc.reason)

    async def _send_media(self, encode: Callable[[], list[str]]) -> None:
        """Encode and send, one task at a time: the loop (marks, audio the reducer sends) and the
        GPT-Live task (forwarded audio) both play to the line, and a delta's frames, or a mark
        behind them, must never be split by the other's. Encoding waits too: the encoder's order
        is the line's order."""
        try:
            self._media_writing.acquire_nowait()  # no trip through the scheduler when nobody else writes
        except trio.WouldBlock:
            await self._media_writing.acquire()  # first come, first served
        try:
            frames = encode()
            if self._media_socket is None:
                return
            for text in frames:
                await self._media_socket.send(text)
        except SocketClosed as exc:
            # A play or mark into a dead socket is not fatal: the drain timeout still hangs up.
            log.warning("%s media send failed: %s", self.plan.run_id, exc.reason)
        finally:
            self._media_writing.release()

    # -- transport tasks ---------------------------------------------------------------------------

    async def _guard(self, task: Callable[[], Awaitable[None]], name: str) -> None:
        try:
            await task()
        except Exception as exc:
            log.error("%s %s task crashed: %s", self.plan.run_id, name, "".join(traceback.format_exception_only(exc)).strip())
            await self._events_tx.send(ev.CallCrashed(f"{name}: {exc}"))

    async def _webhook_task(self) -> None:
        async for webhook in self._webhooks_rx:
            if webhook.event_id in self._seen_webhooks:
                log.info("%s duplicate webhook %s (%s) ignored", self.plan.run_id, webhook.event_id, webhook.event_type)
                continue
            self._seen_webhooks.add(webhook.event_id)
            if webhook.event is not None:
                await self._events_tx.send(webhook.event)

    async def _media_task(self) -> None:
        append_audio = gpt_live.input_audio_append_text
        socket = await self._media_rx.receive()
        inbound = InboundMedia(byte_order=self.ports.l16_byte_order)  # type: ignore[arg-type]
        self._inbound = inbound
        self._media_socket = socket
        reason = "socket closed"
        try:
            while True:
                try:
                    text = await socket.receive()
                except SocketClosed as exc:
                    reason = exc.reason
                    break
                try:
                    if self._path.inbound == "forwarded" and not self._inbound_queued and (audio := inbound.audio(text)) is not None:
                        # The steady uplink, 50 frames a second: _took_steady's first way (with
                        # _forward_pcm and _send_live_text written out here), with no event object and
                        # no call of calld's own a frame: what a bare bridge does, and the stretch's append.
                        pcm, chunk = audio
                        if pcm:
                            stretch = self._inbound_stretch
                            if stretch:
                                self._inbound_chunks[1] = chunk
                            else:
                                self._inbound_chunks = [chunk, chunk]
                            stretch.append(pcm)
                            if len(stretch) >= STRETCH_MAX:
                                self._tell_later()
                            if (live := self._live_socket) is not None:
                                try:
                                    await live.send(append_audio(pcm))
                                except SocketClosed as exc:
                                    log.warning("%s GPT-Live send failed: %s", self.plan.run_id, exc.reason)
                        continue
                    events = inbound.feed(text)
                except MediaFrameError as exc:
                    # One bad frame is Telnyx's problem, not the call's; a bad start is the call's.
                    if self.call.media.kind in ("idle", "connected"):
                        reason = f"nothing valid before the start frame: {exc}"
                        break
                    log.warning("%s bad media frame dropped: %s", self.plan.run_id, exc)
                    continue
                for e in events:
                    if await self._took_steady(e):
                        continue
                    if isinstance(e, ev.MediaStarted):
                        self._stream_id = e.stream_id
                        self._media_out = OutboundMedia(codec=self._outbound_codec(inbound), stream_id=e.stream_id)
                    self._events_tx.send_nowait(e)  # unbounded: never blocks; the next receive yields
                    if isinstance(e, ev.MediaStopped):
                        return
        finally:
            self._media_socket = None
        with trio.CancelScope(shield=True):
            await self._events_tx.send(ev.MediaStopped(reason))

    async def _took_steady(self, event: ev.Event) -> bool:
        """True when the steady path took this audio event (forwarded now, told later). Otherwise it
        goes to the reducer like any event, and while it waits there the path forwards nothing of
        its kind, so audio never overtakes audio."""
        if type(event) is ev.MediaAudio:
            # Another stream's frame is the reducer's to ignore; the steady path takes only the started one's.
            if not self._inbound_queued and event.stream_id == self._stream_id:
                way = self._path.inbound
                if way == "forwarded":
                    await self._forward_inbound(event)
                    return True
                if way == "recorded":
                    self._record_inbound(event, self._recorded_stretch)
                    return True
                if way == "held":
                    self._record_inbound(event, self._held_stretch)
                    return True
            self._inbound_queued += 1
        elif type(event) is ev.OutputAudio:
            if self._path.downlink and not self._output_queued:
                await self._forward_output(event.pcm)
                return True
            self._output_queued += 1
        return False

    async def _forward_inbound(self, frame: ev.MediaAudio) -> None:
        """The steady uplink: this frame goes on to GPT-Live now and is told to the reducer later."""
        self._forward_pcm(frame.pcm, frame.chunk)
        await self._send_live_text(gpt_live.input_audio_append_text(frame.pcm))

    def _forward_pcm(self, pcm: bytes, chunk: int) -> None:
        """A forwarded frame joins the stretch the reducer is told of (and the WAV gets) later."""
        stretch = self._inbound_stretch
        if stretch:
            self._inbound_chunks[1] = chunk
        else:
            self._inbound_chunks = [chunk, chunk]
        stretch.append(pcm)
        if len(stretch) >= STRETCH_MAX:
            self._tell_later()

    def _record_inbound(self, frame: ev.MediaAudio, stretch: list[ev.MediaAudio]) -> None:
        """The frame joins a stretch told to the reducer (and recorded) later: held for GPT-Live,
        or only counted once GPT-Live is gone."""
        stretch.append(frame)
        if len(stretch) >= STRETCH_MAX:
            self._tell_later()

    async def _forward_output(self, pcm: bytes) -> None:
        """The steady downlink: this delta plays on the line now and is told to the reducer later."""
        stretch = self._output_stretch
        stretch.append(pcm)
        if len(stretch) >= STRETCH_MAX:
            self._tell_later()
        if self._media_out is not None:
            await self._send_media(partial(self._media_out.audio, pcm))

    def _outbound_codec(self, inbound: InboundMedia) -> Any:
        """What the carrier plays is what the dial asked for (stream_bidirectional_codec and rate),
        whatever the inbound leg's start frame announces. When the two agree, the inbound codec is
        shared, so an L16 byte order that `auto` learns from the business applies to playback too."""
        dial = self.plan.dial
        codec = inbound.codec
        if codec is not None and (codec.encoding, codec.sample_rate) == (dial.codec.upper(), dial.sample_rate):
            return codec
        order = self.ports.l16_byte_order
        if order == "auto":
            order = codec.byte_order.order if codec is not None and codec.byte_order.order else "le"
        return codec_for(dial.codec, dial.sample_rate, order)  # type: ignore[arg-type]

    async def _live_task(self, plan: Any) -> None:
        closed_reason = "socket closed"
        announced = False
        watch = trio.CancelScope()  # the quiet watch's, once the session has said something
        try:
            with trio.CancelScope() as scope:
                self._live_scope = scope
                async with self.ports.connect_live() as socket:
                    try:
                        start = gpt_live.session_start(plan, event_id=self._live_event_id())
                        await self._write_json("session_start.json", start)
                        await socket.send(json.dumps(start, separators=(",", ":")))
                        self._live_socket = socket
                        inbound = LiveInbound(job=plan.job)
                        malformed = 0
                        watching = False
                        while True:
                            try:
                                text = await socket.receive()
                            except SocketClosed as exc:
                                closed_reason = exc.reason
                                break
                            self._live_heard_at = trio.current_time()  # the quiet watch's one cost a message
                            if not watching:
                                watching = True
                                assert self._nursery is not None
                                self._nursery.start_soon(self._guard, partial(self._watch_live_quiet, watch, self.plan.timings.live_quiet_s),
                                                        "gpt-live quiet watch")
                            try:
                                if self._path.downlink and not self._output_queued and (pcm := inbound.audio(text)) is not None:
                                    # The steady downlink, 10 deltas a second: _took_steady's way, with
                                    # no event object and none of its coroutines a delta.
                                    await self._forward_output(pcm)
                                    continue
                                events = inbound.feed(text)
                            except LiveEventMalformed as exc:
                                # One unreadable event is dropped, as a bad media frame is; a session
                                # that sends little else is not one calld can hold a call on.
                                malformed += 1
                                if malformed > LIVE_MALFORMED_MAX:
                                    raise LiveProtocolError(f"{malformed} unreadable events, the last: {exc}") from None
                                log.warning("%s GPT-Live event dropped: %s", self.plan.run_id, exc)
                                continue
                            for e in events:
                                if await self._took_steady(e):
                                    continue
                                if isinstance(e, ev.LiveClosed):
                                    announced = True
                                self._events_tx.send_nowait(e)  # unbounded: never blocks; the next receive yields
                            if announced:
                                break
                    finally:
                        self._live_socket = None
                        watch.cancel()
                        with trio.move_on_after(LIVE_CLOSE_BOUND_S) as bound:
                            bound.shield = True
                            await socket.aclose()
            if scope.cancelled_caught:
                closed_reason = "aborted by calld"
        except LiveProtocolError as exc:
            # The model's side broke the protocol (or is the wrong endpoint): the session is over,
            # and the call ends on it as on any lost session (model_unavailable, model_lost).
            closed_reason = f"protocol error: {exc}"
        except OSError as exc:
            closed_reason = f"could not reach GPT-Live: {exc}"
        finally:
            if not announced:
                with trio.CancelScope(shield=True):
                    await self._events_tx.send(ev.LiveClosed(closed_reason))

    async def _watch_live_quiet(self, scope: trio.CancelScope, quiet_s: float) -> None:
        """Tells the reducer when the GPT-Live socket, open, has sent nothing at all for quiet_s (LiveSilent),
        and again each quiet_s after. It wakes once a quiet_s (at the last message's time plus quiet_s), not a
        message: the live task only notes each message's time."""
        with scope:
            while True:
                await trio.sleep_until(self._live_heard_at + quiet_s)
                if trio.current_time() >= self._live_heard_at + quiet_s:
                    self._live_heard_at = trio.current_time()
                    self._events_tx.send_nowait(ev.LiveSilent(quiet_s))  # unbounded: never blocks

    # -- the end -----------------------------------------------------------------------------------

    def _media_info(self) -> MediaInfo:
        codec = self._inbound.codec if self._inbound is not None else None
        return MediaInfo(
            encoding=self._media_format[0] if self._media_format else None,
            sample_rate=self._media_format[1] if self._media_format else None,
            byte_order=str(codec.byte_order) if codec is not None else f"{self.ports.l16_byte_order} (no media)",
            resampled=codec.resampled if codec is not None else False,
        )

    def _settle_stretches(self) -> None:
        """At the end, forwarded audio not yet told is told, so the counts add up; the call is
        over, so whatever the reducer would do about it is journaled, not performed."""
        for stretch in self._take_stretches():
            step = reduce_step(self.call, stretch)
            self.call = step.call
            seq = self._next_seq()
            self.rundir.journal_audio(event_row(seq, self._t_ms(), stretch, {}, step.ignored))
            for effect in step.effects:
                self.rundir.journal(effect_row(self._next_seq(), self._t_ms(), seq, effect), flush=False)

    async def _finish(self) -> None:
        """The call's last files and its result, queued behind live frames (calld.runtime.behind)."""
        # The call's length ends at its end (the reducer's), not when its turn comes nor after a hangup still tried.
        duration_ms = self._ended_ms if self._ended_ms is not None else self._t_ms()
        async with self.ports.behind.job() as step:
            await self._finish_in_steps(step, duration_ms)

    async def _finish_in_steps(self, step: Step, duration_ms: int) -> None:
        """What the files say is worked out here, on the loop, in steps of a millisecond or two with
        the live calls' frames before each; the files are written where the ports say (under calld
        serve: a worker thread off the loop's core), in two trips: the result can only be built once
        the files before it are known to be whole."""
        await step()
        self._settle_stretches()
        call = self.call
        undated = conclude(call)  # once: the task record's preview and the result both read it
        await step()
        outcome = on_date(undated, business_date(self.plan.to, self._started))
        transcript = transcript_file(call)
        task = task_record(self.plan, call, self.rundir, undated) if call.task is not None else None
        no_hangup = no_hangup_record(call)
        await step()
        refs = await self._on_disk(partial(write_before_result, self.rundir, self.plan, call, transcript, task, no_hangup),
                                   "the call's last files", None)
        if refs is None:  # what is there is referenced, nothing more
            refs = await self._on_disk(partial(refs_present, self.rundir), "the call's last files", {})
        await step()
        rd = self.rundir
        ccid = call.call_control_id
        if rd.audio_error is not None and not self._audio_failure_told:  # it failed as the files were closed
            self._tell_audio_failure()
        audio_gap = rd.audio_gap()
        line_up = self.hangup_series.detail if self.hangup_series is not None and self.hangup_series.may_be_up else None
        if rd.write_error is None:
            result = build_result(self.plan, call, outcome, refs, audio_incomplete=audio_gap, line_may_be_up=line_up)
        else:
            # The artifacts are incomplete: whatever the call concluded, it is not proven. Failed.
            result = results.Failed(reason="internal", detail=self._write_failure(), run_id=self.plan.run_id,
                                    call_control_id=ccid, transcript_ref=refs.get("transcript.json"),
                                    audio_ref=refs.get("audio/inbound.wav"), audio_incomplete=audio_gap,
                                    line_may_be_up=line_up)
        refs["result.json"] = rd.ref("result.json")
        refs["call_report.json"] = rd.ref("call_report.json")
        refs["call_report.redacted.json"] = rd.ref("call_report.redacted.json")
        await step()  # the result, then the report: each half a millisecond or so
        hangup = hangup_info(self.hangup_series, call.hangup, call.telnyx if isinstance(call.telnyx, TelnyxEnded) else None)
        report = call_report(self.plan, call, result, outcome, refs, prefix=rd.prefix, audio_gap=audio_gap, holds=self._holds,
                             started_at=self._started_at, duration_ms=duration_ms, timing_ms=self._transitions,
                             final_echo_ms=self._final_echo_ms, hangup=hangup, media=self._media_info(), ignored=self._ignored)
        await step()
        dumped = report.model_dump(mode="json")
        await step()
        files = {"result.json": result.model_dump(mode="json"), "call_report.json": dumped,
                 "call_report.redacted.json": redact(report, self.pseudonyms, dumped)}
        await step()
        await self._on_disk(partial(write_result, self.rundir, files), "result.json", None)
        self.result = result
        reason = getattr(result, "reason", None)
        log.info("%s finished: %s via %s", ccid or self.plan.run_id, result.status + (f"/{reason}" if reason else ""),
                 report.hangup.via)
        if line_up is not None:
            log.error("%s finished, but the line may still be up: %s", ccid or self.plan.run_id, line_up)
