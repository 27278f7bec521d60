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


def _booking_brain(records: list[dict[str, Any]], voice: _Saying, window: int = 0) -> BookBrain:
    voice.record = lambda arguments, purpose, delay=0.3: records.append(arguments)  # type: ignore[method-assign]
    return BookBrain(voice, {"name": "Nathan", "party": 2, "time": "Friday 7pm", "window_minutes": window,
                             "callback_number": "+15555550110"}, "careful", "Goodbye!")


@pytest.mark.parametrize("line", [
    "Ah, we only take reservations for parties of six or more. For two it's just walk in, first come first served.",
    "Oh, Friday we're closed for a private function, sorry love.",
    "Sorry love, we're takeaway only, no tables here. You want the restaurant on the high street.",
])
async def test_no_table_to_be_had_in_a_host_s_words_is_a_refusal(line):
    """Each was heard as the details exchanged: the brain read back a table nobody offered, and the call
    ended no_answer/went_silent. "no tables here" of a takeaway is a refusal, not fully booked."""
    records: list[dict[str, Any]] = []
    voice = _Saying()
    brain = _booking_brain(records, voice)
    brain.heard_business(line)
    assert voice.then and voice.then[-1] is not None
    await voice.then[-1]()
    assert (records[-1]["status"], records[-1]["reason_code"]) == ("declined", "refused")


async def test_a_card_number_is_no_callback_number():
    """'Can you give me a card number?' was answered with the callback number; it is a question the request
    does not answer, and 'we can't hold it without a card' after it is a missing detail."""
    records: list[dict[str, Any]] = []
    voice = _Saying()
    brain = _booking_brain(records, voice)
    brain.heard_business("We can do Friday at seven, but we need a credit card to hold the table. Can you give me a card number?")
    assert brain.unanswered == ["Can you give me a card number?"]
    brain.heard_business("Sorry, we can't hold the table without a card.")
    await voice.then[-1]()
    assert (records[-1]["status"], records[-1]["reason_code"]) == ("declined", "details_missing")


def test_a_booked_record_cites_the_business_s_own_words_that_it_booked():
    """'Lovely, that's you booked in' before the read-back, then 'Yes, that's it, see you Friday.': the record
    cited only the second, which the check does not take as a booking made."""
    records: list[dict[str, Any]] = []
    brain = _booking_brain(records, _Saying())
    brain.heard_business("Let me just check the book. Yeah, Friday at seven for two is fine. Can I take a name?")
    brain.heard_business("Lovely, that's you booked in, Nathan.")
    brain.stage = "readback"
    brain.heard_business("Yes, that's it, see you Friday.")
    assert records[-1]["status"] == "booked"
    assert records[-1]["quotes"] == ["Lovely, that's you booked in, Nathan.", "Yes, that's it, see you Friday."]


async def test_a_refused_decline_ends_the_call_instead_of_going_quiet():
    """When the app refuses the decline as well, the brain said nothing more and the call ended
    failed/internal ('the agent did not reply'); it says goodbye and hangs up."""
    records: list[dict[str, Any]] = []
    voice = _Saying()
    brain = _booking_brain(records, voice)
    brain.purpose["call_record_1"] = "declined"
    brain.continued("call_record_1", {"recorded": False, "why": "the time offered, '8:30 PM', is not in your quotes"})
    assert brain.stage == "done"
    assert voice.then[-1] == voice.end_call


@pytest.mark.parametrize("said, availability, quantity", [
    ("Sourdough's all gone for today, sorry, we bake more tomorrow at six.", "out_of_stock", None),
    ("We should be getting some in Thursday.", "out_of_stock", None),
    ("We've got two sourdough loaves left.", "limited", 2),
    ("yeah we got two sets of those for the oh eight civic", "in_stock", 2),
    ("Yep, we have one copy, it's in the fiction section.", "in_stock", 1),
    ("There might be some in the back, I'd have to check, can you call back later?", "unknown", None),
    ("So the computer says we have one, but I can't find it on the shelf, so I really couldn't tell you.", "unknown", None),
])
def test_stock_in_a_clerk_s_words(said, availability, quantity):
    """Each was read as in stock with no count: gone and only coming are out, a count beside its noun is
    the count, a hedge is unknown."""
    got = reading.stock(said)
    assert (got["availability"], got["quantity"]) == (availability, quantity)


def test_one_kind_had_and_not_the_other_is_some_kinds():
    """'We've got the ten inch, not the twelve.' was in stock, whichever size was asked about."""
    assert reading.stock("We've got the ten inch, not the twelve.") == {"availability": "some_kinds", "quantity": None, "kinds": [
        {"kind": "10 inch", "availability": "in_stock", "quantity": None},
        {"kind": "12 inch", "availability": "out_of_stock", "quantity": None}]}


@pytest.mark.parametrize("said, place", [
    ("Aisle five, no sorry, six, they moved it.", "Aisle six"),
    ("It's in aisle 12, actually 13.", "aisle 13"),
])
def test_an_aisle_taken_back_for_another_number_is_the_other(said, place):
    """'Aisle five, no sorry, six' was read as aisle five (the only place named with the word aisle)."""
    assert reading.aisle(said) == place
