"""The reducer's arithmetic on the line's audio: sizes, the pickup hold, the hold-music run, the counts.

Pure numbers on the state's own values (HeldAudio, Hold, Counters, HangupFarewell): each function
returns a new value and decides nothing. calld.core.reduce calls them from its handlers, which
decide the transition (a hold begins, the goodbye is over); a handler for a forwarded stretch
(calld.core.audio_path) and the one for a single frame count through the same functions, so the
two add up alike. Like the rest of the core: no trio, sockets, clock or files.
"""

from __future__ import annotations

from calld.core.replace import evolve  # attrs.evolve's result, cheaper: it runs on every frame
from calld.core.state import Counters, HangupFarewell, HeldAudio, Hold

BYTES_PER_SECOND = 16000 * 2  # 16 kHz mono PCM16: the only audio the core sees
BYTES_PER_MS = BYTES_PER_SECOND // 1000
HOLD_RETURN_FRAMES = 50  # on hold, words after 1 s of no words are a person coming back
HOLD_MUSIC_FRAMES = 200  # 4 s of unbroken sound and no words: hold music


# Was reduce._hold: named for what it holds now that it is called from another module, and counts too.
def hold_pickup(held: HeldAudio, c: Counters, chunk: int, pcm: bytes, cap: int) -> tuple[HeldAudio, Counters]:
    """`held` with one more inbound frame kept for GPT-Live, the oldest dropped past `cap` bytes; and the
    counters after it (heard, held, and how many dropped)."""
    frames, size, dropped = (*held.frames, (chunk, pcm)), held.size + len(pcm), 0
    while size > cap and frames:
        size -= len(frames[0][1])
        frames, dropped = frames[1:], dropped + 1
    counters = evolve(
        c, audio_in=c.audio_in + 1, audio_in_bytes=c.audio_in_bytes + len(pcm),
        held_frames=c.held_frames + 1, dropped_frames=c.dropped_frames + dropped,
    )
    return HeldAudio(frames, size, held.dropped + dropped), counters


def flushed(c: Counters, held: HeldAudio) -> tuple[Counters, int]:
    """The counters once the held frames went to GPT-Live, and where its session timeline starts in
    audio/inbound.wav, in ms: GPT-Live's timeline advances with the audio it is given; its zero is the
    first frame it gets."""
    n = len(held.frames)
    counters = evolve(c, flushed_frames=c.flushed_frames + n, audio_to_live=c.audio_to_live + n)
    return counters, (c.audio_in_bytes - held.size) // BYTES_PER_MS


def inbound_counted(c: Counters, frames: int, pcm_bytes: int, *, to_live: bool = False) -> Counters:
    """The counters after `frames` inbound frames of `pcm_bytes` in all, each also sent on to GPT-Live
    when `to_live`."""
    if to_live:
        return evolve(c, audio_in=c.audio_in + frames, audio_in_bytes=c.audio_in_bytes + pcm_bytes,
                      audio_to_live=c.audio_to_live + frames)
    return evolve(c, audio_in=c.audio_in + frames, audio_in_bytes=c.audio_in_bytes + pcm_bytes)


def outbound_counted(c: Counters, deltas: int, *, played: bool, after_verdict: bool) -> Counters:
    """The counters after `deltas` of GPT-Live's output audio, `played` to the line or not, said after the
    verdict was in or not. One copy a delta: this runs 50 times a second."""
    return evolve(
        c,
        audio_from_live=c.audio_from_live + deltas,
        audio_after_verdict=c.audio_after_verdict + after_verdict * deltas,
        audio_to_media=c.audio_to_media + played * deltas,
    )


def quiet_on_hold(holds: tuple[Hold, ...], frames: int) -> tuple[Hold, ...]:
    """The holds with the ongoing (last) one's quiet grown by `frames` frames without words: words after a
    pause mean someone is back (HOLD_RETURN_FRAMES)."""
    hold = holds[-1]
    return (*holds[:-1], evolve(hold, quiet=hold.quiet + frames))


def sound_run(sound: int, loud: tuple[bool, ...], frames: int) -> tuple[int, int | None]:
    """The run of loud frames with no words after a stretch of `frames` frames, from the run `sound` before
    it; `loud` judges the stretch's first frames (any past them count as quiet). Where the run reaches
    HOLD_MUSIC_FRAMES, it is hold music: (0, the index of the frame it did so on); else (the run, None).
    The same as counting frame by frame, as a single frame's step does."""
    judged = len(loud)
    if sound + judged < HOLD_MUSIC_FRAMES:
        # No run of sound can reach the hold-music mark in this stretch (almost always): what the
        # loop below would leave is the sound run at its end, counted without a step a frame.
        if judged < frames:  # frames past the judged ones count as quiet
            return 0, None
        try:  # the loud frames since the last quiet one
            return (loud[:frames] if judged > frames else loud)[::-1].index(False), None
        except ValueError:  # every frame loud: the run goes on
            return sound + frames, None
    for i in range(frames):
        sound = sound + 1 if i < judged and loud[i] else 0
        if sound >= HOLD_MUSIC_FRAMES:
            return 0, i
    return sound, None


def closing_line(farewell: HangupFarewell, loud: bool, pcm_bytes: int, quiet_s: float) -> HangupFarewell | None:
    """The goodbye after one more delta of the closing line: `heard` once a loud one came, then `quiet`
    counting the bytes of silent ones since; None once `quiet_s` of silence followed the speech (the
    line has finished streaming)."""
    if loud:
        return evolve(farewell, heard=True, quiet=0)
    if not farewell.heard:
        return farewell
    quiet = farewell.quiet + pcm_bytes
    if quiet < quiet_s * BYTES_PER_SECOND:
        return evolve(farewell, quiet=quiet)
    return None
