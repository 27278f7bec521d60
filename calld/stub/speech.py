"""Stub speech: words carried by audio frames, so fakes hear only what really arrived.

A scripted line becomes 20 ms PCM frames (16 kHz, 16-bit LE). Each word is a run of
frames whose first samples carry a watermark (line, word, frame, frames-in-word)
over a quiet tone; gaps between words are silence. A fake listener decodes the
frames it actually receives, so a frame the app drops or reorders is a word the
transcript loses: the stub's transcripts are evidence, not a script read aloud.
"""

from __future__ import annotations

import math
import struct

from attrs import frozen

FRAME_BYTES = 640  # 20 ms at 16 kHz, 16-bit mono
FRAME_SAMPLES = FRAME_BYTES // 2
FRAMES_PER_WORD = 12  # 240 ms of sound per word
GAP_FRAMES = 3  # then 60 ms of silence
_MAGIC = 0x2B1D
_HEADER = struct.Struct("<5h")
SILENCE = bytes(FRAME_BYTES)

_TONE = [round(1800 * math.sin(2 * math.pi * 220 * n / 16000)) for n in range(FRAME_SAMPLES)]
# Hold music: a loud chord with no watermark, so no ear ever hears a word in it.
MUSIC = struct.pack(
    f"<{FRAME_SAMPLES}h",
    *(round(3000 * (math.sin(2 * math.pi * 440 * n / 16000) + math.sin(2 * math.pi * 550 * n / 16000)))
      for n in range(FRAME_SAMPLES)),
)


@frozen
class WordFrame:
    line: int
    word: int
    frame: int
    frames: int

    @property
    def last(self) -> bool:
        return self.frame == self.frames - 1


_TONE_AFTER_HEADER = struct.pack(f"<{FRAME_SAMPLES - 5}h", *_TONE[5:])  # what every word frame shares


def word_frame(line: int, word: int, frame: int) -> bytes:
    return _HEADER.pack(_MAGIC, line, word, frame, FRAMES_PER_WORD) + _TONE_AFTER_HEADER


def line_frames(line: int, words: list[str]) -> list[bytes]:
    frames: list[bytes] = []
    for w in range(len(words)):
        frames += [word_frame(line, w, f) for f in range(FRAMES_PER_WORD)]
        frames += [SILENCE] * GAP_FRAMES
    return frames


def read_frame(pcm: bytes) -> WordFrame | None:
    if len(pcm) < _HEADER.size:
        return None
    magic, line, word, frame, frames = _HEADER.unpack_from(pcm)
    return WordFrame(line, word, frame, frames) if magic == _MAGIC else None


class Listener:
    """A fake ear: yields a word once every frame of it arrived, in order."""

    def __init__(self, codebook: dict[int, list[str]]) -> None:
        self._codebook = codebook
        self._expect: tuple[int, int, int] | None = None

    def hear(self, pcm: bytes) -> list[tuple[int, int, str]]:
        """Feed any whole number of frames; returns (line, word index, word) for completed words."""
        out: list[tuple[int, int, str]] = []
        for i in range(0, len(pcm) - FRAME_BYTES + 1, FRAME_BYTES):
            wf = read_frame(pcm[i : i + FRAME_BYTES])
            if wf is None:
                continue
            if wf.frame == 0:
                self._expect = (wf.line, wf.word, 0)
            if self._expect != (wf.line, wf.word, wf.frame):
                self._expect = None  # a lost or reordered frame: that word was not heard whole
                continue
            self._expect = (wf.line, wf.word, wf.frame + 1)
            if wf.last:
                self._expect = None
                out.append((wf.line, wf.word, self._codebook[wf.line][wf.word]))
        return out
