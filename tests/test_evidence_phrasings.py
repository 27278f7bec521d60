"""Every phrasing in tests/phrasings.py, read by the judge as a person would read it.

Each row is a real-sounding phone answer and a record a sloppy model might make of it; two reviews
wrote them to find wrong accepts and wrong refusals, and each rule that mended one is held here."""

from __future__ import annotations

import pytest

from calld.domain.questions import QuestionType as Q
from calld.domain.transcript import Turn
from calld.evidence import judge
from tests.phrasings import PHRASINGS


def _turns(lines: tuple[str, ...]) -> tuple[Turn, ...]:
    return tuple(Turn("agent" if line.startswith("A:") else "business", line[2:].strip()) for line in lines)


def _judged(kind: str, lines: tuple[str, ...], record, item: str | None) -> judge.Judgement:
    said = _turns(lines)
    if kind in ("hours", "stock", "aisle"):
        return judge.judge_answer(said, Q(kind), record, item=item)
    if kind.startswith("declined:"):
        return judge.judge_declined(said, Q(kind.split(":")[1]), None)
    if kind == "booked":
        return judge.judge_booked(said, **record)
    return judge.judge_book_declined(said, alternative_offered=record)


@pytest.mark.parametrize(("kind", "lines", "record", "holds", "item"), PHRASINGS,
                         ids=[f"{i}-{row[0]}" for i, row in enumerate(PHRASINGS)])
def test_a_phrasing_is_judged_as_a_person_would(kind, lines, record, holds, item):
    got = _judged(kind, lines, record, item)
    assert isinstance(got, judge.Supported) is holds, (lines[2:], record, got)
