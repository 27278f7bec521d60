"""The words of a call, as GPT-Live transcribed them, with where they were heard.

A Turn is one speaker's consecutive fragments joined verbatim (the agent's split where its audio
stopped or started reaching the line). Each fragment keeps a
Span: where its text starts in the turn and, when GPT-Live gave times, where it sits in
audio/inbound.wav (the session timeline shifted by the inbound audio that preceded it).
So any quote from a turn can be placed in the recording.
"""

from __future__ import annotations

from typing import Literal

from attrs import frozen

Speaker = Literal["agent", "business"]


@frozen
class Span:
    char: int  # where the fragment starts in the turn's text
    start_ms: int | None  # in audio/inbound.wav
    end_ms: int | None


@frozen
class Turn:
    """`on_line`: whether these words reached the line. GPT-Live may go on speaking where calld keeps
    its audio off the line (a recording was detected, the call is ending): those agent words are
    kept, in a turn of their own, but nobody on the call heard them. Business words always did."""

    speaker: Speaker
    text: str
    spans: tuple[Span, ...] = ()
    on_line: bool = True

    @property
    def start_ms(self) -> int | None:
        return next((s.start_ms for s in self.spans if s.start_ms is not None), None)

    @property
    def end_ms(self) -> int | None:
        return next((s.end_ms for s in reversed(self.spans) if s.end_ms is not None), None)

    def place(self, start: int, end: int) -> tuple[int | None, int | None]:
        """Where the characters [start, end) of this turn were heard: the fragments they touch."""
        touched = [s for i, s in enumerate(self.spans)
                   if s.char < end and (i + 1 == len(self.spans) or self.spans[i + 1].char > start)]
        starts = [s.start_ms for s in touched if s.start_ms is not None]
        ends = [s.end_ms for s in touched if s.end_ms is not None]
        return (min(starts) if starts else None, max(ends) if ends else None)
