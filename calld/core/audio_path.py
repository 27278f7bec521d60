"""The audio path: which way steady audio may go without a reducer step each.

A call's audio is 50 frames a second up and about as many deltas down. The reducer decides
where audio goes; in the steady state its decision does not change from one frame to the next,
so the transports may carry it out themselves and tell the reducer afterwards, a stretch at a
time (events.InboundForwarded, events.OutputForwarded, events.InboundHeld, events.InboundRecorded). Rules:

 1. `audio_path(call)` is a pure reading of the state the reducer left. It opens a way only
    where the reducer, given each frame alone, would send it on (or hold it until GPT-Live is
    ready, or, once GPT-Live is gone, only record it) and decide nothing else from it than
    counters and the hold-music watch; every other state keeps the frame-by-frame events.
 2. The runtime reads the path after every step, narrowing it before the step's effects run and
    widening it only after they have, so audio never overtakes what the step sent (held pickup
    audio, a mark).
 3. Every forwarded stretch reaches the reducer before the next event does, so the reducer sees
    the same sequence it would have seen frame by frame, only shorter; and the counts add up.
"""

from __future__ import annotations

from typing import Literal, get_args

from attrs import field, frozen
from attrs.validators import in_

from calld.core.state import (
    Call,
    ConvTalking,
    HangupDone,
    HangupNone,
    LiveActive,
    LiveClosing,
    LiveDone,
    LiveFailed,
    LiveIdle,
    LiveStarting,
    MediaStreaming,
)


# Where an inbound frame goes without a reducer step, one way at a time:
#   stepped    no way of its own: each frame is an event for the reducer (MediaAudio)
#   forwarded  straight to GPT-Live (told as InboundForwarded)
#   held       recorded and kept for GPT-Live, which is not ready yet: the pickup audio (the
#              reducer keeps the frames in its state, so InboundHeld carries their PCM)
#   recorded   only to the recording: GPT-Live is gone (closing or over) and the call is winding
#              down to its hangup, so the reducer would only count them (InboundRecorded)
Inbound = Literal["stepped", "forwarded", "held", "recorded"]
INBOUND_WAYS: tuple[Inbound, ...] = get_args(Inbound)


@frozen
class AudioPath:
    inbound: Inbound = field(default="stepped", validator=in_(INBOUND_WAYS))
    uplink_loudness: bool = False  # forwarded, and the reducer needs each frame's loudness (the hold-music watch)
    downlink: bool = False  # GPT-Live's audio goes straight to the line

    def narrowed(self, other: AudioPath) -> AudioPath:
        """Only what both allow: the path while a step's effects are still running."""
        return _path(self.inbound if self.inbound == other.inbound else "stepped",
                     self.uplink_loudness or other.uplink_loudness, self.downlink and other.downlink)


# Every path there can be, built once: the runtime reads the path after every step (and narrows
# it around every step with effects), and a validated attrs instance each time cost more than the
# reading itself.
_PATHS = {(way, loud, down): AudioPath(way, loud, down) for way in INBOUND_WAYS for loud in (False, True) for down in (False, True)}


def _path(way: Inbound, uplink_loudness: bool, downlink: bool) -> AudioPath:
    return _PATHS[way, uplink_loudness, downlink]


CLOSED = _path("stepped", False, False)


def audio_path(call: Call) -> AudioPath:
    """The path the state allows. Read after every step, so each track is asked once, the live
    track first (each way asking every track cost a word's three steps 350 bytecodes);
    tests/test_audio_path.py holds it to the ways written out one by one, on every state."""
    if not isinstance(call.media, MediaStreaming):
        return CLOSED
    live, hangup = call.live, call.hangup
    if isinstance(live, LiveActive):  # the conversation: every step of a call in progress
        if isinstance(hangup, HangupNone):  # the goodbye's own audio is judged delta by delta
            watching = isinstance(call.conversation, ConvTalking) and not call.on_hold
            return _PATHS["forwarded", watching, call.recording is None]
        return _PATHS["stepped" if isinstance(hangup, HangupDone) else "forwarded", False, False]
    done = isinstance(hangup, HangupDone)  # after the hangup, media is the reducer's to ignore
    if isinstance(live, LiveClosing):  # nothing to forward to, ever again: recorded
        return _PATHS["stepped" if done else "recorded", False, isinstance(hangup, HangupNone) and call.recording is None]
    if isinstance(live, LiveDone | LiveFailed):
        return _PATHS["stepped" if done else "recorded", False, False]
    if isinstance(live, LiveIdle | LiveStarting):
        # The first frame is stepped alone: its row's time is when the business's audio began, the
        # clock the transcript's times and the timeline are read from (calld.observe.artifacts).
        return _PATHS["held" if not done and call.counters.audio_in > 0 else "stepped", False, False]
    return CLOSED

