"""Results that cannot contradict themselves, the published schema, the business's date, honesty in the
instructions, and the transcript assessment (calld.core.assessment): what the words state with no record."""

from __future__ import annotations

import datetime as dt

import pytest

from calld.core.answers import Aisle, DayRange, Hours, TextOnly
from calld.core.plan import QuickAskJob
from calld.domain.questions import QuestionType as Q
from calld.domain.transcript import Span, Turn
from calld.core import assessment
from calld.evidence import check

WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday")

ASKED = Turn("agent", "Hi, this is an automated assistant calling on behalf of Nathan. What are your opening hours?")


def after_ask(*business: str) -> tuple[Turn, ...]:
    return (Turn("business", "Hello."), ASKED, *(Turn("business", b) for b in business))


# -- the result types -----------------------------------------------------------------------------------------


@pytest.mark.parametrize("contradiction", [
    {"closed": True, "around_the_clock": True}, {"around_the_clock": True, "opens": "09:00"}, {"closed": True, "closes": "17:00"},
])
def test_typed_hours_cannot_be_closed_and_open(contradiction):
    from calld.domain.results import DayHours

    with pytest.raises(ValueError, match="around the clock|no opening or closing"):
        DayHours(days=("monday",), **contradiction)


@pytest.mark.parametrize("contradiction", [
    {"availability": "some_kinds"},  # no kinds
    {"availability": "some_kinds", "kinds": [{"kind": "12-inch", "availability": "in_stock"}]},  # nothing out: in stock
    {"availability": "some_kinds", "kinds": [{"kind": "12-inch", "availability": "out_of_stock"}]},  # nothing in: out
    {"availability": "some_kinds", "quantity": 3, "kinds": [{"kind": "12-inch", "availability": "in_stock"},
                                                            {"kind": "10-inch", "availability": "out_of_stock"}]},
    {"availability": "in_stock", "kinds": [{"kind": "12-inch", "availability": "in_stock"}]},
    {"availability": "some_kinds", "kinds": [{"kind": "12-inch", "availability": "in_stock"},
                                             {"kind": "10-inch", "availability": "out_of_stock", "quantity": 2}]},
])
def test_a_typed_stock_answer_by_kind_cannot_contradict_itself(contradiction):
    from calld.domain.results import StockAnswer

    with pytest.raises(ValueError, match="kind"):
        StockAnswer(**contradiction)


def test_the_summary_names_each_kind_and_its_stock():
    from calld.observe.summary import typed_answer

    answer = {"kind": "stock", "availability": "some_kinds", "quantity": None,
              "kinds": [{"kind": "10-inch", "availability": "out_of_stock", "quantity": None},
                        {"kind": "12-inch", "availability": "in_stock", "quantity": 3}]}
    assert typed_answer(answer) == "stock: some kinds: 10-inch out of stock; 12-inch in stock, 3"


def test_no_set_hours_is_an_hours_answer_of_its_own_that_holds_no_ranges():
    """"By appointment only": its own form of the hours answer, which no range can be added to."""
    from pydantic import TypeAdapter, ValidationError

    from calld.domain.results import NoSetHoursAnswer, TypedAnswer
    from calld.observe.summary import typed_answer

    answer = TypeAdapter(TypedAnswer).validate_python({"kind": "no_set_hours"})
    assert isinstance(answer, NoSetHoursAnswer)
    with pytest.raises(ValidationError):
        TypeAdapter(TypedAnswer).validate_python({"kind": "no_set_hours", "ranges": [{"days": ["monday"], "opens": "09:00"}]})
    assert typed_answer(answer.model_dump(mode="json")) == "hours: no set hours (by appointment, or as it varies)"


def test_the_published_result_schema_is_current():
    from pathlib import Path

    from calld.domain.schema import render

    published = Path(__file__).resolve().parent.parent / "docs" / "result.schema.json"
    assert published.read_text() == render(), "run: uv run python -m calld.domain.schema > docs/result.schema.json"


def test_the_businesss_date_comes_from_its_numbers_zone_not_the_daemons():
    from calld.runtime.verdict import business_date

    late_utc = dt.datetime(2026, 12, 1, 3, 30, tzinfo=dt.UTC)  # 22:30 on Nov 30 in New York
    assert business_date("+12125550142", late_utc) == dt.date(2026, 11, 30)
    assert business_date("+14155550142", late_utc) == dt.date(2026, 11, 30)  # 19:30 in San Francisco
    assert business_date("+15555550142", late_utc) is None  # the fiction range has no zone


def test_both_jobs_tell_the_agent_to_answer_are_you_a_robot_truthfully():
    from calld.core.plan import EVIDENCE_RULE, HONESTY
    from tests.core_helpers import make_book_plan, make_plan

    for plan in (make_plan(), make_book_plan()):
        assert HONESTY in plan.live.instructions
        assert "real person" in HONESTY and "Never say or suggest that you are a person" in HONESTY
        assert EVIDENCE_RULE in plan.live.backend_instructions


# -- quotes and where they were heard -------------------------------------------------------------------------


def test_a_quote_is_placed_by_the_fragments_it_touches():
    turn = Turn("business", "Hello. We open at nine.", (Span(0, 1000, 1400), Span(6, 1500, 2200), Span(15, 2200, 2900)))
    t = (Turn("agent", "What are your hours?"), turn)
    args = {"status": "answered", "quotes": [], "answer_text": "We open at nine.", "notes": None, "reason": None,
            "stock": None, "aisle": None, "outcome_quote": None, "opt_out_quote": None,
            "hours": {"no_set_hours": False, "no_set_hours_quote": None, "ranges": [
                {"days": [], "opens": "09:00", "closes": None, "closed": False, "around_the_clock": False, "date": None,
                 "days_quote": None, "times_quote": "We open at nine", "context_quote": None, "readback": False}]}}
    j = check.check_record(args, QuickAskJob(Q.HOURS, None), t)
    assert isinstance(j, check.Accepted)
    (q,) = j.quotes
    assert (q.text, q.start_ms, q.end_ms) == ("We open at nine.", 1500, 2900)


# -- the transcript assessment ------------------------------------------------------------------------------


def test_an_ask_that_never_reached_the_line_asked_nobody():
    unheard = (Turn("business", "You've reached Joe's."), Turn("agent", "What are your hours?", on_line=False),
               Turn("business", "We're open 9 to 5."))
    assert not assessment.answered_after_ask(unheard, Q.HOURS)
    heard = (unheard[0], Turn("agent", "What are your hours?"), unheard[2])
    assert assessment.answered_after_ask(heard, Q.HOURS)


@pytest.mark.parametrize("said, states", [
    ("We're open Monday through Friday, 9 AM to 5 PM.", True),
    ("It opens from 10:00 a.m. to 5:00 p.m. monday to friday.", True),
    ("We close at nine tonight.", True),
    ("We're open 24/7.", True),
    ("Until nine? Who is this?", False),  # asked back
    ("For store hours, press 2.", False),  # a menu's prompt
    ("We're at 2033 Camden Avenue.", False),  # a number, not a time
    ("Call back after lunch.", False),
])
def test_hours_are_stated_by_a_time_with_a_word_of_opening_hours(said, states):
    assert (assessment.find_answer(after_ask(said), Q.HOURS) is not None) is states


def test_an_aisle_is_stated_by_its_number_never_by_a_menu_prompt():
    assert assessment.find_answer(after_ask("It's in aisle 14, by the grills."), Q.AISLE) is not None
    assert assessment.find_answer(after_ask("For our counter, press 1."), Q.AISLE) is None
    assert assessment.read_answer(Q.AISLE, assessment.find_answers(after_ask("It's in aisle 14, by the grills."), Q.AISLE)) == Aisle("aisle 14")


def test_stock_is_never_read_from_the_words_alone():
    assert assessment.find_answers(after_ask("Yes, we have three of those."), Q.STOCK) == ()


def test_the_whole_answer_is_read_a_later_correction_included():
    found = assessment.find_answers(after_ask("We're open Monday through Friday, 9 AM to 5 PM.",
                                          "Actually no, sorry, on Fridays we're open 9 AM to 4 PM."), Q.HOURS)
    assert [q.text for q in found][-1] == "Actually no, sorry, on Fridays we're open 9 AM to 4 PM."
    # the last word on Friday wins
    assert assessment.read_answer(Q.HOURS, found) == Hours((
        DayRange(("monday", "tuesday", "wednesday", "thursday"), "09:00", "17:00"),
        DayRange(("friday",), "09:00", "16:00")))


@pytest.mark.parametrize("said", [
    "We're open weekdays and Saturdays from 9 to 5 and 10 to 2.",  # more than two times
    "We're open 9 to 5 on weekdays.",  # no half of the day said: the words answer, no guess
    "We close at 9 PM.",  # one time: which end is the words' to say
    "We're open 9 AM to 5 PM today and Monday.",  # a date and days
])
def test_typed_hours_are_read_only_where_the_tokens_settle_them(said):
    found = assessment.find_answers(after_ask(said), Q.HOURS)
    assert found and assessment.read_answer(Q.HOURS, found) == TextOnly()


@pytest.mark.parametrize("said, range_", [
    ("It opens from 10:00 a.m. to 5:00 p.m. monday to friday.", DayRange(WEEKDAYS, "10:00", "17:00")),
    ("Open every day except Sunday from 9 AM to 9 PM.", DayRange(WEEKDAYS + ("saturday",), "09:00", "21:00")),
    ("Tonight we're open from noon until 23:00.", DayRange((), "12:00", "23:00", date="today")),
    ("We're closed Monday.", DayRange(("monday",), None, None, closed=True)),
])
def test_one_range_a_sentence_from_its_tokens(said, range_):
    assert assessment.read_range(said) == range_


def test_voicemail_needs_a_recorded_greeting_or_the_carrier():
    assert isinstance(check.voicemail(after_ask("Please leave a message after the tone."), None), check.Accepted)
    assert isinstance(check.voicemail(after_ask("Hi, how can I help?"), "machine"), check.Accepted)
    assert isinstance(check.voicemail(after_ask("Hi, how can I help?"), None), check.Refused)


def test_open_24_hours_states_hours_on_no_day_in_particular():
    found = assessment.find_answers(after_ask("Oh, we're open 24 hours."), Q.HOURS)
    assert assessment.read_answer(Q.HOURS, found) == Hours((DayRange((), None, None, around_the_clock=True),))
    assert not assessment.find_answers(after_ask("We'll get back to you within 24 hours."), Q.HOURS)
    # 24/7 names every day itself
    assert assessment.read_range("We're open 24/7.") == DayRange(WEEKDAYS + ("saturday", "sunday"), None, None, around_the_clock=True)


def test_the_agents_words_are_never_the_answer():
    turns = (Turn("business", "Hello."), Turn("agent", "Are you open 9 AM to 5 PM on Monday?"), Turn("business", "Mm."))
    assert assessment.find_answers(turns, Q.HOURS) == ()
