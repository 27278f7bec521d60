"""The transcript assessment: what the business's words state when no record was accepted. Pure.

A part of the outcome (DESIGN.md: accepted record, else transcript assessment), not of the check: it reuses
the check's tokens but judges no record.

It reads calld.evidence.check's clock times, days and word lists over calld.domain.tokens, and never guesses:
 - hours: a business sentence, no question nor menu prompt, with a clock time or a word of ALWAYS ("open 24
   hours" only beside "open") and a word of HOURS_WORDS, a day, or two clock times;
 - aisle: a sentence after the ask with "aisle" and its number or letter; stock: never (the words are kept).
Typed hours only where tokens settle them: one range of days a sentence (or none) with two clock times whose
half of the day is said, or a word of ALWAYS, or of CLOSED for its days; else the words are the answer.
Agent speech is never evidence: only `ask_said` reads it, to know the request was made.
"""

from __future__ import annotations

from collections.abc import Sequence

import attrs
from attrs import frozen

from calld.core import situations
from calld.core.answers import Aisle, Answer, DayRange, Hours, TextOnly
from calld.domain.questions import QuestionType
from calld.domain.tokens import WEEKDAYS, tokens
from calld.domain.transcript import Quote, Turn, sentence_spans
from calld.domain.spoken import Clock, clocks, days_in, has_phrase
from calld.evidence.check import ALWAYS, CLOSED

HOURS_WORDS = frozenset({"open", "opens", "opening", "close", "closes", "closing", "closed", "hours", "until", "till",
                         "til", "from", "shut", "shuts"})


@frozen
class Sentence:
    turn: int
    start: int
    end: int
    text: str
    after_ask: bool  # said after the agent first spoke on the line


def business_sentences(turns: Sequence[Turn]) -> list[Sentence]:
    out: list[Sentence] = []
    asked = False
    for i, turn in enumerate(turns):
        if turn.speaker == "agent":
            asked = asked or (turn.on_line and bool(turn.text.strip()))
            continue
        out.extend(Sentence(i, a, b, turn.text[a:b], asked) for a, b in sentence_spans(turn.text))
    return out


def quote(turns: Sequence[Turn], s: Sentence) -> Quote:
    return turns[s.turn].quote(s.turn, s.start, s.end)


def _words(text: str) -> list[str]:
    return [t.word for t in tokens(text)]


def ask_said(ask_line: str, turns: Sequence[Turn]) -> bool:
    """Did the agent get the whole request out on the line? Most of the ask's words are in its played speech."""
    asked = set(_words(ask_line))
    spoken = set(_words(" ".join(t.text for t in turns if t.speaker == "agent" and t.on_line)))
    return bool(asked) and len(asked & spoken) >= 0.8 * len(asked)


def _always(words: Sequence[str]) -> bool:
    """A word of ALWAYS; "24 hours" only beside "open" ("we'll call back within 24 hours" states no hours)."""
    return has_phrase(words, [p for p in ALWAYS if p != "24 hours"]) or ("24 hours" in " ".join(words) and "open" in words)


def _times(words: Sequence[str]) -> list[Clock]:
    """The clock times said with their hour ("open 24 hours" is no clock time of 24:00)."""
    return [c for c in clocks(words) if c.hour is not None
            and not any(words[i] == "24" and words[i + 1:i + 2] == ["hours"] for i in c.at)]


def _aisles(words: Sequence[str]) -> set[str]:
    """Every "aisle N" (or "aisle B") the words say."""
    return {f"aisle {b}" for a, b in zip(words, words[1:]) if a == "aisle" and (b.isdigit() or len(b) == 1)}


def _states(s: Sentence, question: QuestionType) -> bool:
    if s.text.rstrip().endswith("?") or situations.menu_prompt(s.text) is not None:
        return False
    words = _words(s.text)
    if question is QuestionType.HOURS:
        times = _times(words)
        return bool(times or _always(words)) and bool(HOURS_WORDS & set(words) or days_in(words) or len(times) >= 2)
    if question is QuestionType.AISLE:
        return s.after_ask and bool(_aisles(words))
    return False  # stock: the words alone state nothing of it


def find_answers(turns: Sequence[Turn], question: QuestionType) -> tuple[Quote, ...]:
    """Every business sentence that states the asked fact, in order, a later correction included."""
    return tuple(quote(turns, s) for s in business_sentences(turns) if _states(s, question))


def find_answer(turns: Sequence[Turn], question: QuestionType) -> Quote | None:
    return next(iter(find_answers(turns, question)), None)


def answered_after_ask(turns: Sequence[Turn], question: QuestionType) -> bool:
    return any(s.after_ask and _states(s, question) for s in business_sentences(turns))


def candidates(turns: Sequence[Turn], limit: int = 3) -> tuple[Quote, ...]:
    """The business's last sentences after the ask: what it said, for a person to read."""
    return tuple(quote(turns, s) for s in business_sentences(turns) if s.after_ask and s.text.strip())[-limit:]


# -- the typed answer, where the tokens settle it ------------------------------------------------------------


def _hhmm(c: Clock) -> str | None:
    """A clock time whose half of the day is said (am/pm, noon, midnight, 0 or 13-23); else None."""
    assert c.hour is not None
    if c.meridiem is not None:
        return f"{c.hour % 12 + (12 if c.meridiem == 'pm' else 0):02d}:{c.minute:02d}"
    return f"{c.hour % 24:02d}:{c.minute:02d}" if c.hour == 0 or c.hour > 12 else None


def read_range(text: str) -> DayRange | None:
    """The one range a sentence gives, or None where its tokens do not settle one."""
    words = _words(text)
    days = tuple(d for d in WEEKDAYS if d in days_in(words))
    date = "today" if {"today", "tonight"} & set(words) else "tomorrow" if "tomorrow" in words else None
    times = _times(words)
    if date and days:
        return None
    if _always(words) and not times:
        return DayRange(days, None, None, around_the_clock=True, date=date)
    if not times and has_phrase(words, CLOSED):  # the closed days: the ones named, "closed" not setting them apart
        shut = tuple(d for d in WEEKDAYS if d in days_in([w for w in words if w != "closed"]))
        return DayRange(shut, None, None, closed=True, date=date) if shut or date else None
    if len(times) != 2 or None in (ends := (_hhmm(times[0]), _hhmm(times[1]))):
        return None
    return DayRange(days, ends[0], ends[1], date=date)


def _last_word_per_day(ranges: Sequence[DayRange]) -> tuple[DayRange, ...]:
    """A later range for a day replaces what an earlier one said of it."""
    out: list[DayRange] = []
    for new in ranges:
        out = [attrs.evolve(old, days=tuple(d for d in old.days if d not in new.days))
               if old.date == new.date and set(old.days) & set(new.days) else old for old in out]
        out = [r for r in out if r.days or r.date or not new.days]
        out.append(new)
    return tuple(out)


def read_answer(question: QuestionType, found: Sequence[Quote], item: str | None = None) -> Answer:
    """The typed answer of sentences that state it, where each reads one way; else their words alone."""
    if question is QuestionType.HOURS and found:
        ranges = [read_range(q.text) for q in found]
        if all(r is not None for r in ranges):
            return Hours(_last_word_per_day([r for r in ranges if r is not None]))
    if question is QuestionType.AISLE:
        places = {p for q in found for p in _aisles(_words(q.text))}
        if len(places) == 1:  # two aisles said: which is the item's is a reading, so the user gets the words
            return Aisle(places.pop())
    return TextOnly()
