"""A call's timers, as the reducer arms them: each key with the wait that bounds it and the event it fires.

Time exists in the core only as effects (calld.core.reduce, rule 1): `Schedule(key, delay_s, event)`
arms a timer, a later one with the same key replaces it, and `Cancel(key)` stops it; the runtime runs
them on its clock. Each builder here keeps a key, its setting (calld.core.plan.Timings) and its event
together, so no step can arm a key with another timer's wait or event. Which timers a step arms or
cancels, and when, is the reducer's decision. Like the rest of the core: no trio, sockets, clock or files.
"""

from __future__ import annotations

from calld.core import events as ev
from calld.core.effects import Cancel, Effect, Schedule
from calld.core.state import Call, MediaIdle, MediaOpen, TelnyxAnswered, TelnyxIdle, TelnyxInitiated

# Timers that belong to a call in progress; all of them die when it ends.
LIVE_TIMERS = ("stall", "farewell", "close", "drain", "trail", "call_cap", "media_lost", "ring", "media_wait", "live_ready")


def cancel(*keys: str) -> list[Effect]:
    return [Cancel(k) for k in keys]


# Was reduce._stage_timer: it builds timers only, so it sits with them.
def stage(call: Call) -> list[Effect]:
    """The bound on the stage the call is in once the dial is accepted: ringing (until call.answered or its
    end, whatever the media does: reduce.py's rule 3) or, answered, waiting for the media stream. A call whose
    webhooks or media cannot reach calld (a dead proxy) ends on it, with one hangup, not at MAX_CALL_S."""
    t = call.plan.timings
    waiting_media = isinstance(call.media, MediaIdle | MediaOpen)
    if isinstance(call.telnyx, TelnyxIdle | TelnyxInitiated):
        return [Schedule("ring", t.ring_timeout_s, ev.RingElapsed())]
    if isinstance(call.telnyx, TelnyxAnswered) and waiting_media:
        return [Schedule("media_wait", t.media_start_s, ev.MediaWaitElapsed())]
    return []


def call_cap(call: Call) -> Schedule:
    return Schedule("call_cap", call.plan.timings.max_call_s, ev.CallCapElapsed())


def live_ready(call: Call) -> Schedule:
    return Schedule("live_ready", call.plan.timings.live_ready_s, ev.LiveReadyElapsed())


def stall(call: Call) -> Schedule:
    """The failsafe for a silent line: stall_s without speech from either side."""
    return Schedule("stall", call.plan.timings.stall_s, ev.StallElapsed())


def hold(call: Call) -> Schedule:
    """On hold: the hold budget, under the stall failsafe's key, replaces it until the business speaks again."""
    return Schedule("stall", call.plan.timings.hold_max_s, ev.StallElapsed())


def farewell(call: Call) -> Schedule:
    """The longest the closing line (or a recorded greeting heard to its end) may take."""
    return Schedule("farewell", call.plan.timings.farewell_max_s, ev.FarewellElapsed())


def goodbye(call: Call) -> list[Effect]:
    """A goodbye begins: its farewell bound replaces the stall failsafe."""
    return [Cancel("stall"), farewell(call)]


def close(call: Call) -> Schedule:
    return Schedule("close", call.plan.timings.close_timeout_s, ev.LiveCloseTimedOut())


def drain(call: Call) -> Schedule:
    return Schedule("drain", call.plan.timings.drain_timeout_s, ev.DrainTimedOut())


def trail(call: Call) -> Schedule:
    return Schedule("trail", call.plan.timings.trail_s, ev.TrailElapsed())


def hangup_confirm(call: Call) -> Schedule:
    return Schedule("hangup_confirm", call.plan.timings.hangup_confirm_s, ev.HangupConfirmTimedOut())


def media_lost(call: Call) -> Schedule:
    return Schedule("media_lost", call.plan.timings.media_lost_grace_s, ev.MediaLostElapsed())
