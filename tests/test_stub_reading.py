"""The stub world's stand-in model: how it reads what a business said into a record's fields and a
booking's offered time. Whole calls that use these readings are in tests/test_hidden_scenarios.py."""

from __future__ import annotations

from typing import Any

import pytest

from calld.domain.questions import QuestionType
from calld.stub import reading
from calld.stub.brain import BookBrain


def test_hours_it_cannot_read_are_no_hours_not_an_empty_list():
    """An empty list of ranges is refused at the wire (invalid arguments); no hours field is a record the
    citation check can judge. Words of no set hours are recorded as such, with no ranges."""
    assert reading.fields(QuestionType.HOURS, "Hello, how can I help?")["hours"] is None
    assert reading.fields(QuestionType.HOURS, "We work by appointment only, there aren't set hours.")["hours"] == {
        "ranges": [], "no_set_hours": True}
    assert reading.fields(QuestionType.HOURS, "We open at 8.")["hours"] == {"ranges": [
        {"days": [], "opens": "08:00", "closes": None, "closed": False, "around_the_clock": False, "date": None}],
        "no_set_hours": False}


@pytest.mark.parametrize("said, ranges", [
    ("In the winter we close at 5, and in the summer at 8.", [{"opens": None, "closes": "17:00"}]),
    ("We're open for lunch 11:30 to 2:30, and for dinner 5 to 10.", [{"opens": "11:30", "closes": "14:30"}]),
])
def test_hours_too_ambiguous_to_type_are_the_first_clause_s_own(said, ranges):
    """Where the words give two sets of times for no day, the stand-in records the first as said (an opening
    stays an opening, a closing a closing), for no day in particular; the answer text keeps the rest."""
    assert [{k: r[k] for k in ("opens", "closes")} for r in reading.hours(said)] == ranges
    assert all(r["days"] == [] for r in reading.hours(said))


@pytest.mark.parametrize("said, place", [
    ("It used to be in aisle 5 but we moved it to aisle 9.", "aisle 9"),
    ("That's in aisle 14, next to the grills.", "aisle 14"),
    ("Aisle 3, not aisle 4 like the sign says.", "Aisle 3"),
    ("It's on the endcap at the end of aisle 4.", "endcap at the end of aisle 4"),
    ("Check the plumbing department, near aisle 2.", "plumbing department"),
])
def test_the_place_it_reads_is_where_the_item_is_now(said, place):
    assert reading.aisle(said) == place


class _Silent:
    def say(self, text: str, then: Any = None) -> None: ...

    def record(self, arguments: dict[str, Any], purpose: str, delay: float = 0.3) -> None: ...

    async def end_call(self) -> None: ...


@pytest.mark.parametrize("line, offered", [
    ("Seven is full, but I can do six thirty on Friday. Would that work?", "Friday 6:30pm"),
    ("Seven's gone, I could do eight o'clock on Friday.", "Friday 8pm"),
    ("We're full at seven, but I could do 7:30pm on Friday.", "Friday 7:30pm"),
    ("Yep, table for two at seven on Friday, you're all set.", None),
])
def test_an_offered_time_is_read_in_words_and_written_with_am_or_pm(line, offered):
    brain = BookBrain(_Silent(), {"name": "Nathan", "party": 2, "time": "Friday 7pm", "window_minutes": 60,
                                  "callback_number": "+15555550110"}, "careful", "Goodbye!")
    assert brain._offer_in(line) == offered


class _Saying(_Silent):
    def __init__(self) -> None:
        self.then: list[Any] = []

    def say(self, text: str, then: Any = None) -> None:
        self.then.append(then)


async def test_no_booking_without_a_detail_it_could_not_give_is_a_missing_detail_not_a_refusal():
    records: list[dict[str, Any]] = []
    voice = _Saying()
    voice.record = lambda arguments, purpose, delay=0.3: records.append(arguments)  # type: ignore[method-assign]
    brain = BookBrain(voice, {"name": "Nathan", "party": 2, "time": "Friday 7pm", "window_minutes": 0,
                              "callback_number": "+15555550110"}, "careful", "Goodbye!")
    brain.heard_business("We take a card for a deposit. Which card will you use?")
    brain.heard_business("Then I'm sorry, we can't book it without a deposit.")
    await voice.then[-1]()
    assert (records[-1]["status"], records[-1]["reason_code"]) == ("declined", "details_missing")
