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

from attrs import frozen

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


@frozen
class AudioPath:
    uplink: bool = False  # inbound frames go straight to GPT-Live
    uplink_loudness: bool = False  # ... and the reducer needs each one's loudness (the hold-music watch)
    downlink: bool = False  # GPT-Live's audio goes straight to the line
    # Inbound frames go only to the recording: GPT-Live is gone (closing or over) and the call is
    # winding down to its hangup, so the reducer would only count them (a second or two a call).
    uplink_recorded: bool = False
    # Inbound frames are held for GPT-Live, which is not ready yet (the pickup audio): the reducer
    # keeps them in its state, so the stretch carries their PCM.
    uplink_held: bool = False

    def __attrs_post_init__(self) -> None:
        if self.uplink + self.uplink_recorded + self.uplink_held > 1:
            raise ValueError("inbound audio goes one way: to GPT-Live, held for it, or only to the recording")

    def narrowed(self, other: AudioPath) -> AudioPath:
        """Only what both allow: the path while a step's effects are still running."""
        return AudioPath(self.uplink and other.uplink, self.uplink_loudness or other.uplink_loudness,
                         self.downlink and other.downlink, self.uplink_recorded and other.uplink_recorded,
                         self.uplink_held and other.uplink_held)


CLOSED = AudioPath()


def audio_path(call: Call) -> AudioPath:
    streaming = isinstance(call.media, MediaStreaming)
    uplink = streaming and isinstance(call.live, LiveActive) and not isinstance(call.hangup, HangupDone)
    downlink = (
        streaming
        and isinstance(call.live, LiveActive | LiveClosing)
        and isinstance(call.hangup, HangupNone)  # the goodbye's own audio is judged delta by delta
        and call.recording is None
    )
    watching = uplink and isinstance(call.hangup, HangupNone) and isinstance(call.conversation, ConvTalking) and not call.on_hold
    recorded = (
        streaming
        and isinstance(call.live, LiveClosing | LiveDone | LiveFailed)  # nothing to forward to, ever again
        and not isinstance(call.hangup, HangupDone)  # after the hangup, media is the reducer's to ignore
    )
    held = (
        streaming
        and isinstance(call.live, LiveIdle | LiveStarting)
        and not isinstance(call.hangup, HangupDone)
        # The first frame is stepped alone: its row's time is when the business's audio began, the
        # clock the transcript's times and the timeline are read from (calld.observe.artifacts).
        and call.counters.audio_in > 0
    )
    return AudioPath(uplink, watching, downlink, recorded, held)
