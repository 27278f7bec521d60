"""The words of a call, as GPT-Live transcribed them, with where they were heard.

A Turn is one speaker's fragments joined verbatim, until they pause: the other side talking over
them does not end it (the agent's is also split where its audio stopped or started reaching the
line). Turns are in the order they began. Each fragment keeps a
Span: where its text starts in the turn and, when GPT-Live gave times, where it sits in
audio/inbound.wav (the session timeline shifted by the inbound audio that preceded it).
So any quote from a turn can be placed in the recording.
"""

from __future__ import annotations

import re
from typing import Literal

from attrs import frozen

Speaker = Literal["agent", "business"]


@frozen
class Span:
    char: int  # where the fragment starts in the turn's text
    start_ms: int | None  # in audio/inbound.wav
    end_ms: int | None


@frozen
class Quote:
    """Business words a record cites: turn index, character range, the words, where heard."""

    turn: int
    start: int
    end: int
    text: str
    start_ms: int | None
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

    def quote(self, index: int, start: int, end: int) -> Quote:
        """The characters [start, end) of this turn (turn `index` of its call), placed in the recording."""
        return Quote(index, start, end, self.text[start:end], *self.place(start, end))

    def place(self, start: int, end: int) -> tuple[int | None, int | None]:
        """Where the characters [start, end) of this turn were heard: the fragments they touch."""
        touched = [s for i, s in enumerate(self.spans)
                   if s.char < end and (i + 1 == len(self.spans) or self.spans[i + 1].char > start)]
        starts = [s.start_ms for s in touched if s.start_ms is not None]
        ends = [s.end_ms for s in touched if s.end_ms is not None]
        return (min(starts) if starts else None, max(ends) if ends else None)


# A sentence ends at . ! or ? before a space, a capital or the end, but not at the dot of "a.m." or "p.m."
SENTENCE_END = re.compile(r"(?<![ap]\.m)(?<!\b[ap])[.!?]+(?=\s|$|[A-Z])")


def sentence_spans(text: str) -> list[tuple[int, int]]:
    """(start, end) of each sentence of `text`, whitespace trimmed."""
    ends = [*(m.end() for m in SENTENCE_END.finditer(text)), len(text)]
    pieces = [(a, text[a:b]) for a, b in zip([0, *ends], ends, strict=False)]
    return [(a + len(p) - len(p.lstrip()), a + len(p.rstrip())) for a, p in pieces if p.strip()]


# Both sides talking at once: a speaker's words this soon after their last go on in their turn, though
# the other side's words came in between ("Oh wait, actually on Fridays we close at four" said over
# the closing line is one business sentence, not words split by the agent's). A longer pause starts
# a new turn. Word gaps inside an utterance are a few hundred ms; a pause to take a turn is longer.
TALK_OVER_GAP_MS = 700


def add_fragment(turns: tuple[Turn, ...], speaker: Speaker, text: str, start_ms: int | None = None,
                 end_ms: int | None = None, on_line: bool = True) -> tuple[Turn, ...]:
    """`turns` with a fragment joined to the turn it goes on, or in a turn of its own. Only a
    speaker's latest turn ever grows, so a turn's index and every offset into one speaker's words
    stay valid as the call goes on."""
    span = Span(0, start_ms, end_ms)
    if (k := _turn_going_on(turns, speaker, on_line, start_ms)) is None:
        return (*turns, Turn(speaker, text, (span,), on_line))
    turn = turns[k]
    grown = Turn(speaker, turn.text + text, (*turn.spans, Span(len(turn.text), start_ms, end_ms)), on_line)
    return (*turns[:k], grown, *turns[k + 1:])


def _turn_going_on(turns: tuple[Turn, ...], speaker: Speaker, on_line: bool, start_ms: int | None) -> int | None:
    """The turn a fragment of `speaker` continues: the last turn, when it is theirs; or their latest
    turn when only the other side has spoken since, over them, and they have not paused."""
    if not turns:
        return None
    last = len(turns) - 1
    if turns[last].speaker == speaker:
        return last if turns[last].on_line == on_line else None
    k = next((i for i in range(last, -1, -1) if turns[i].speaker == speaker), None)
    if k is None or turns[k].on_line != on_line or start_ms is None:
        return None
    ends, other_starts = turns[k].end_ms, turns[k + 1].start_ms
    if ends is None or other_starts is None:
        return None
    # the other side began before this speaker's last word ended (or just after), and no pause since
    talked_over = other_starts <= ends + TALK_OVER_GAP_MS
    return k if talked_over and start_ms - ends <= TALK_OVER_GAP_MS else None


def latest_turn(turns: tuple[Turn, ...], speaker: Speaker) -> int | None:
    """The index of `speaker`'s latest turn: the one their last fragment went to."""
    return next((i for i in range(len(turns) - 1, -1, -1) if turns[i].speaker == speaker), None)


def last_to_speak(turns: tuple[Turn, ...]) -> Speaker | None:
    """Whose word ended last (turns said over each other end out of order)."""
    said = [(t.end_ms if t.end_ms is not None else -1, i, t.speaker) for i, t in enumerate(turns) if t.text.strip()]
    return max(said)[2] if said else None
