"""The evidence check's general forms of English (calld.evidence.check_record): each a form, not a sentence, with
the rule it belongs to; the properties and each rule's own test are in tests/test_check.py."""

from __future__ import annotations

import json
from datetime import date
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from calld.core.plan import BookJob, QuickAskJob
from calld.domain.ids import E164
from calld.domain.questions import QuestionType
from calld.domain.transcript import Turn
from calld.evidence import Accepted, Refused, check_record
from calld.evidence import check as c
from tests.records import (
    AISLE,
    BOOK,
    DAYS,
    HOURS,
    STOCK,
    WORDS,
    aisle,
    booked,
    call,
    declined,
    hours,
    stock,
)

# -- general forms: numbers beside dates, loose cues, giving or asking a confirmation, a no of another time -----


def test_rule_11_a_bare_number_that_is_the_records_party_is_no_other_time() -> None:
    turns = call("A table for two tonight?", "Ok, a table tonight at 7 pm. I'll make that reservation for 2 people.",
                 "Yes please.", "Your reservation is complete.")
    args = booked(2, "today at 7 pm", outcome_quote="Your reservation is complete", time_quote="a table tonight at 7 pm",
                  date_quote="a table tonight at 7 pm", party_quote="I'll make that reservation for 2 people")
    assert isinstance(check_record(args, BOOK, turns), Accepted)
    assert check_record(args | {"confirmed_party": 3, "party_quote": "tonight at 7 pm"}, BOOK, turns).rule == 5  # type: ignore[union-attr]
    other = call("A table for two tonight?", "For 2 people, a table tonight at 7 pm. Sorry, make that 8.", "Fine.",
                 "You're booked.")  # 8 is not the party: it takes the time back
    assert check_record(args | {"outcome_quote": "You're booked", "party_quote": "For 2 people"},
                        BOOK, other).rule == 11  # type: ignore[union-attr]


@given(st.sampled_from(c.MONTHS), st.integers(1, 28), st.integers(1, 11), st.integers(1, 12))
def test_rules_4_and_5_a_number_beside_a_month_is_its_day_and_only_that(month: str, day: int, hour: int, party: int) -> None:
    said = f"A table for {party} {month.capitalize()} {day}th {hour} pm"  # the day then the hour, no word between
    turns = call("Can I book a table?", f"{said}, you're booked.")
    args = booked(party, f"{month} {day} at {hour} pm", outcome_quote="you're booked", party_quote=said,
                  time_quote=said, date_quote=said)
    assert isinstance(check_record(args, BOOK, turns), Accepted), said
    wrong_hour = args | {"confirmed_time": f"{month} {day} at {day % 12 + 1 if day % 12 + 1 != hour else hour % 11 + 1} pm"}
    assert isinstance(check_record(wrong_hour, BOOK, turns), Refused)
    wrong_day = args | {"confirmed_time": f"{month} {party} at {hour} pm"}
    assert isinstance(check_record(wrong_day, BOOK, turns), Refused) or party == day


def test_rule_5_a_number_after_about_or_around_is_a_party_but_no_exact_stock_count() -> None:
    said = "How about 3 for 7:30 pm on Friday instead"
    turns = call("A table for three at 7?", f"We're full at 7. {said}?", "Yes.", "Great, you're all set.")
    args = booked(3, "Friday at 7:30 pm", outcome_quote="you're all set", party_quote=said, time_quote=said, date_quote=said)
    assert isinstance(check_record(args, BOOK, turns), Accepted)
    assert check_record(args | {"confirmed_party": 4}, BOOK, turns).rule == 5  # type: ignore[union-attr]
    left = call("Do you have the cast iron skillet?", "We have about 10 left.")
    assert isinstance(check_record(stock("in_stock", "We have about 10 left", None), STOCK, left), Accepted)
    assert check_record(stock("in_stock", "We have about 10 left", 10), STOCK, left).rule == 5  # type: ignore[union-attr]
    assert isinstance(check_record(stock("in_stock", "We have 10 left", 10), STOCK, call("Skillets?", "We have 10 left.")), Accepted)


def test_rule_5_a_number_beside_a_word_of_numbered_counts_tables_not_people() -> None:
    """"We've two tables left at eight" holds no party of 2; "one table for 1" still holds the party of 1 (by its place)."""
    said = "We've two tables left at eight on Friday"
    turns = call("A table for 4 at 8 on Friday?", f"{said}.", "Great, the one for four please.", "Done, you're booked.")
    args = booked(2, "Friday at 8 pm", outcome_quote="you're booked", party_quote=said, time_quote=said, date_quote=said)
    assert check_record(args, BOOK, turns).rule == 5  # type: ignore[union-attr]
    one = "One table for 1 at 8 on Friday"
    alone = call("A table for 1 at 8 on Friday?", f"{one}, is that right?", "Yes.", "Done, you're booked.")
    args = booked(1, "Friday at 8 pm", outcome_quote="you're booked", party_quote=one, time_quote=one, date_quote=one)
    assert isinstance(check_record(args, BOOK, alone), Accepted)


def test_rule_3_confirm_said_bare_asks_and_after_can_or_able_gives() -> None:
    for gives in ("I can confirm your reservation has gone through", "I was able to successfully confirm your table",
                  "I did confirm your booking for you"):
        turns = call("A table for 2 at 7 on Friday?", f"Great. {gives}.")
        args = booked(2, "Friday at 7 pm", outcome_quote=gives, party_readback=True, time_readback=True, date_readback=True)
        assert isinstance(check_record(args, BOOK, turns), Accepted), gives
    for gives in ("Friday, 2 people, 7 pm, ok, confirm", "2 at 7 on Friday, confirm already"):  # "confirm" said last
        turns = call("A table for 2 at 7 on Friday?", f"{gives}.")
        args = booked(2, "Friday at 7 pm", outcome_quote=gives, party_readback=True, time_readback=True, date_readback=True)
        assert isinstance(check_record(args, BOOK, turns), Accepted), gives
    for asks in ("Let me just confirm your booking for 2 at 7 on Friday", "Confirm your table for 2 at 7 on Friday",
                 "I'll confirm your table for 2 at 7 on Friday", "Can you please confirm the table for 2 at 7 on Friday",
                 "Two at 7 on Friday, please confirm", "Two at 7 on Friday, I will confirm", "2 at 7 on Friday, let me confirm"):
        turns = call("A table for 2 at 7 on Friday?", f"{asks}.")
        args = booked(2, "Friday at 7 pm", outcome_quote=asks, party_readback=True, time_readback=True, date_readback=True)
        assert check_record(args, BOOK, turns).rule == 3, asks  # type: ignore[union-attr]


@given(st.sampled_from(("I couldn't book a table for {p} at {t}", "I was unable to reserve for {p} people at {t}",
                        "Sorry, we can't do {p} at {t}")),
       st.sampled_from(("7 pm", "that time")), st.integers(1, 9))
def test_rule_8_a_party_in_a_no_of_another_time_stands_once_booked_at_the_time_offered(no: str, then: str, party: int) -> None:
    failed = no.format(p=party, t=then)
    turns = call(f"A table for {party} at 7?", f"{failed}. How about 8 pm on Friday?", "Yes, please.", "You're booked.")
    args = booked(party, "Friday at 8 pm", outcome_quote="You're booked", party_quote=failed,
                  time_quote="8 pm on Friday", date_quote="8 pm on Friday")
    assert isinstance(check_record(args, BOOK, turns), Accepted), failed
    assert isinstance(check_record(args | {"confirmed_party": party + 1}, BOOK, turns), Refused)
    at_the_booked_time = args | {"confirmed_time": "Friday at 7 pm", "time_quote": failed, "date_quote": "on Friday"}
    assert isinstance(check_record(at_the_booked_time, BOOK, turns), Refused)
    no_time = call(f"A table for {party}?", f"Sorry, we can't seat {party}. How about 8 pm on Friday?", "Yes.", "You're booked.")
    assert check_record(args | {"party_quote": f"we can't seat {party}"}, BOOK, no_time).rule == 8  # type: ignore[union-attr]


@given(st.sampled_from(("Mon-Fri", "Monday-Friday", "Mon \u2013 Fri")), st.integers(6, 10), st.integers(4, 9))
def test_rules_4_and_5_a_dash_between_days_or_numbers_is_a_run(days: str, opens: int, closes: int) -> None:
    said = f"{days} {opens}-{closes}."
    turns = call("What are your hours?", said)
    r = {"days": c.WEEKDAYS[:5], "opens": f"{opens:02d}:00", "closes": f"{closes + 12}:00", "days_quote": days,
         "times_quote": f"{opens}-{closes}"}
    assert isinstance(check_record(hours(r), HOURS, turns), Accepted), said
    assert isinstance(check_record(hours(r | {"days": c.WEEKDAYS[:6]}), HOURS, turns), Refused)
    assert isinstance(check_record(hours(r | {"closes": f"{closes + 13}:00"}), HOURS, turns), Refused)
    assert c.tokens("seven-thirty")[0].word == "7" and "to" not in [t.word for t in c.tokens("seven-thirty")]


def test_rule_4_a_run_may_end_at_midnight_and_rule_5_closed_names_its_own_days() -> None:
    turns = call("What are your hours?", "Friday and Saturday we're open 11 till midnight.")
    r = {"days": ["friday", "saturday"], "opens": "11:00", "closes": "00:00", "days_quote": "Friday and Saturday",
         "times_quote": "11 till midnight"}
    assert isinstance(check_record(hours(r), HOURS, turns), Accepted)
    assert check_record(hours(r | {"closes": "23:00"}), HOURS, turns).rule == 4  # type: ignore[union-attr]
    turns = call("What are your hours?", "Nine to five, Monday to Saturday, closed Sundays.")
    shut = {"days": ["sunday"], "closed": True, "days_quote": "closed Sundays", "times_quote": "closed Sundays"}
    assert isinstance(check_record(hours(shut), HOURS, turns), Accepted)
    assert check_record(hours(shut | {"days": ["monday"]}), HOURS, turns).rule == 5  # type: ignore[union-attr]
    open_days = {"days": ["sunday"], "opens": "09:00", "closes": "17:00", "days_quote": "closed Sundays",
                 "times_quote": "Nine to five"}  # the days of an open range are still set apart by "closed"
    assert check_record(hours(open_days), HOURS, turns).rule == 5  # type: ignore[union-attr]


@given(st.sampled_from(("More come in Monday", "We're waiting on a shipment", "We stopped carrying those",
                        "We restock on Tuesdays", "There's more coming Friday", "We're waiting on the wholesaler")))
def test_rule_9_more_to_come_says_there_is_none_now(said: str) -> None:
    turns = call("Do you have the cast iron skillet in stock?", f"{said}.")
    assert isinstance(check_record(stock("out_of_stock", said), STOCK, turns), Accepted), said
    assert check_record(stock("in_stock", said), STOCK, turns).rule == 8  # type: ignore[union-attr]


# -- general forms found by probing with phrasings of our own (a reviewer's grammars, no corpus) -------------------


@given(st.sampled_from(((10, "past", 5, 17, 10), (20, "after", 6, 18, 20), (10, "to", 9, 20, 50), (25, "to", 8, 19, 35),
                        (15, "past", 7, 19, 15))), st.sampled_from((str, lambda n: WORDS[n - 1] if n <= 12 else str(n))))
def test_rule_4_n_past_or_to_an_hour_is_that_minute(case: tuple[int, str, int, int, int], say: Any) -> None:
    n, word, hour, h24, minute = case
    said = f"at {say(n) if n <= 12 else n} {word} {say(hour)} pm"
    turns = call("A table for two on Friday?", f"Friday for two {said}, you're booked.")
    args = booked(2, f"Friday at {h24 - 12}:{minute:02d} pm", outcome_quote="you're booked", party_quote="for two",
                  time_quote=said, date_quote="Friday")
    assert isinstance(check_record(args, BOOK, turns), Accepted), said
    for wrong in (f"{n % 12 or 12}:00", f"{hour}:00", f"{hour}:{(minute + 5) % 60:02d}"):
        assert isinstance(check_record(args | {"confirmed_time": f"Friday at {wrong} pm"}, BOOK, turns), Refused), (said, wrong)


def test_rule_4_half_five_dayparts_and_a_leading_zero_say_the_half_of_the_day() -> None:
    for said, right, wrong in (("at half five", "17:30", "17:00"), ("at 7 in the morning", "07:00", "19:00"),
                               ("at 10 at night", "22:00", "10:00"), ("at 6 this evening", "18:00", "06:00"),
                               ("at 6 every evening", "18:00", "06:00"),
                               ("at 07:00", "07:00", "19:00"), ("at 19:30", "19:30", "07:30")):
        turns = call("When do you open on Friday?", f"Friday we open {said}.")
        r = {"days": ["friday"], "opens": right, "days_quote": "Friday", "times_quote": f"we open {said}"}
        assert isinstance(check_record(hours(r), HOURS, turns), Accepted), said
        assert check_record(hours(r | {"opens": wrong}), HOURS, turns).rule == 4, said  # type: ignore[union-attr]


def test_rule_4_a_ranges_two_times_are_said_one_after_the_other() -> None:
    turns = call("What are your hours?", "Lunch is 11:30 to 2:30 and dinner 5 to 10, every day.")
    r = {"days": c.WEEKDAYS, "opens": "11:30", "closes": "14:30", "days_quote": "every day",
         "times_quote": "Lunch is 11:30 to 2:30 and dinner 5 to 10"}
    assert isinstance(check_record(hours(r), HOURS, turns), Accepted)
    assert check_record(hours(r | {"closes": "22:00"}), HOURS, turns).rule == 4  # type: ignore[union-attr]
    turns = call("What are your hours?", "Weekdays we're open 10 to 5:30.")
    r = {"days": c.WEEKDAYS[:5], "opens": "10:00", "closes": "17:30", "days_quote": "Weekdays", "times_quote": "10 to 5:30"}
    assert isinstance(check_record(hours(r), HOURS, turns), Accepted)  # a run may end at an h:mm


def test_rules_4_and_5_a_typed_time_is_read_in_its_common_forms_and_the_date_asked_stands_beside_its_weekday() -> None:
    assert "to" not in [t.word for t in c.tokens("2025-06-13, call 415-555-0123")]
    turns = call("A table for four?", "For four at 7:30 on Friday, you're booked.")
    asked = BookJob(4, "Friday at 7:30pm", None, 60, E164("+15555550123"), when="2025-06-13T19:30:00-04:00")
    for typed in ("2025-06-13 19:30", "2025-06-13T19:30:00-04:00", "Friday 13 June, 7:30 PM", "Fri 13 Jun 19:30",
                  "Friday, June 13, 7:30 pm", "Friday 13th, 7:30 PM"):
        args = booked(4, typed, outcome_quote="you're booked", party_quote="For four", time_quote="at 7:30",
                      date_quote="on Friday")
        assert isinstance(check_record(args, asked, turns), Accepted), typed
        assert isinstance(check_record(args, BOOK, turns), Refused), typed  # no date asked: the 13th is not said
        assert isinstance(check_record(args | {"time_quote": "For four"}, asked, turns), Refused)
    for wrong in ("2025-06-14 19:30", "Friday 20 June, 7:30 PM", "Saturday 13 June, 7:30 PM", "2025-06-13 17:30"):
        args = booked(4, wrong, outcome_quote="you're booked", party_quote="For four", time_quote="at 7:30",
                      date_quote="on Friday")
        assert isinstance(check_record(args, asked, turns), Refused), wrong
    saturday = call("A table for four?", "For four at 7:30 on Saturday, you're booked.")  # the 13th asked is a Friday
    assert isinstance(check_record(booked(4, "Saturday 13 June, 7:30 PM", outcome_quote="you're booked", party_quote="For four",
                                          time_quote="at 7:30", date_quote="on Saturday"), asked, saturday), Refused)


@given(st.builds(date, st.integers(2025, 2027), st.integers(10, 12), st.integers(10, 24)), st.integers(1, 11),
       st.sampled_from((0, 15, 30, 45)))
def test_rule_4_a_typed_iso_date_is_no_clock_time_beside_the_time_typed_after_it(day: date, hour: int, minute: int) -> None:
    # "2025-11-14 7:30 pm": the month and the day are a date, not "11 to 14" nor a time of their own
    weekday = DAYS[day.weekday()]
    turns = call("A table for two?", f"For two at {hour}:{minute:02d} on {weekday}, you're booked.")
    asked = BookJob(2, f"{weekday} {hour}:{minute:02d}pm", None, 60, E164("+15555550123"),
                    when=f"{day.isoformat()}T{hour + 12}:{minute:02d}:00-05:00")
    args = booked(2, f"{day.isoformat()} {hour}:{minute:02d} pm", outcome_quote="you're booked", party_quote="For two",
                  time_quote=f"at {hour}:{minute:02d}", date_quote=f"on {weekday}")
    assert isinstance(check_record(args, asked, turns), Accepted)


def test_rules_4_and_5_a_month_typed_short_is_read_whole_and_a_weekday_unsaid_leaves_the_date_asked_unsaid() -> None:
    for month in c.MONTHS:  # three letters or more name the month; fewer are words of their own ("a", "ma")
        assert [c._typed(month[:k]) for k in range(2, len(month) + 1)] == [[month[:2]]] + [[month]] * (len(month) - 2)
    # a time in no clock words, typed with a short month, stands where the month is said whole
    said = call("A table for 2?", "On December 12th I can give you the early sitting, you're booked.")
    args = booked(2, "Dec 12, the early sitting", outcome_quote="you're booked", party_readback=True,
                  time_quote="On December 12th I can give you the early sitting", date_quote="On December 12th")
    assert isinstance(check_record(args, BOOK, said), Accepted)
    # the date asked stands beside its weekday said, and only there
    asked = BookJob(4, "Friday at 7:30pm", None, 60, E164("+15555550123"), when="2025-06-13T19:30:00-04:00")
    for when, stands in (("on Friday", True), ("next week", False)):
        turns = call("A table for four?", f"For four at 7:30 {when}, you're booked.")
        args = booked(4, "Friday 13 June, 7:30 PM", outcome_quote="you're booked", party_quote="For four",
                      time_quote="at 7:30", date_quote=when)
        assert isinstance(check_record(args, asked, turns), Accepted) == stands, when


def test_rule_5_a_day_with_s_a_lone_number_and_a_date_by_the_day_of_the_month() -> None:
    turns = call("Are you open Friday?", "Friday's 10 to 4.")
    r = {"days": ["friday"], "opens": "10:00", "closes": "16:00", "days_quote": "Friday's", "times_quote": "10 to 4"}
    assert isinstance(check_record(hours(r), HOURS, turns), Accepted)
    turns = call("For how many? Four?", "Four.", "Friday at 7?", "Friday at 7 works, you're booked.")
    args = booked(4, "Friday at 7 pm", outcome_quote="you're booked", party_quote="Four", time_quote="Friday at 7",
                  date_quote="Friday at 7")
    assert isinstance(check_record(args, BOOK, turns), Accepted)
    assert check_record(args | {"confirmed_party": 5}, BOOK, turns).rule == 5  # type: ignore[union-attr]
    turns = call("A table for two?", "For two at 7pm on the 12th, you're booked.")
    args = booked(2, "June 12 at 7 pm", outcome_quote="you're booked", party_quote="For two", time_quote="at 7pm",
                  date_quote="on the 12th")
    assert isinstance(check_record(args, BOOK, turns), Accepted)  # no month said: the day of the month stands
    for wrong in ("June 14 at 7 pm", "the 14th at 7 pm"):
        assert check_record(args | {"confirmed_time": wrong}, BOOK, turns).rule == 5, wrong  # type: ignore[union-attr]
    turns = call("A table for three?", "We'll see the 3 of you at 8 on Friday, you're booked.")
    args = booked(3, "Friday at 8 pm", outcome_quote="you're booked", party_quote="the 3 of you", time_quote="at 8 on Friday",
                  date_quote="on Friday")
    assert isinstance(check_record(args, BOOK, turns), Accepted)  # "the 3 of you" is no day of the month


def test_rule_5_two_numbers_side_by_side_are_a_time_only_where_a_time_may_be() -> None:
    item = QuickAskJob(QuestionType.STOCK, "12 inch cast iron skillet")
    turns = call("Do you have the 12 inch cast iron skillet?", "We've got eight 10 inch and two 12 inch.")
    assert isinstance(check_record(stock("in_stock", "We've got eight", 8), item, turns), Refused)
    turns = call("A table for two?", "Friday at seven thirty for two, you're booked.")
    args = booked(2, "Friday at 7:30 pm", outcome_quote="you're booked", party_quote="for two",
                  time_quote="Friday at seven thirty", date_quote="Friday")
    assert isinstance(check_record(args, BOOK, turns), Accepted)


@given(st.sampled_from(("no problem", "not a problem", "no trouble at all", "never a problem", "no worries", "no bother")),
       st.booleans())
def test_rules_8_and_9_a_no_of_ease_is_a_yes(ease: str, first: bool) -> None:
    said = f"{ease.capitalize()}, you're all set." if first else f"You're all set, {ease}."
    turns = call("A table for two at 7 on Friday?", said)
    args = booked(2, "Friday at 7 pm", outcome_quote=said.rstrip("."), party_readback=True, time_readback=True,
                  date_readback=True)
    assert isinstance(check_record(args, BOOK, turns), Accepted), said
    assert check_record(declined(said.rstrip(".")), BOOK, turns).rule == 9  # type: ignore[union-attr]
    alone = call("A table for two at 7 on Friday?", f"{ease.capitalize()}.")  # the quote is the phrase alone
    assert isinstance(check_record(args | {"outcome_quote": ease}, BOOK, alone), Accepted), ease


@given(st.sampled_from(("We're booked out on Friday", "We're at capacity on Friday", "I can put you on the waitlist",
                        "We're all booked on Friday", "It's walk ins only on Friday", "We have a private party on Friday",
                        "I'll have to call you back", "It's first come, first served", "Friday at 7 is taken",
                        "All our tables on Friday are taken")))
def test_rules_8_and_9_a_word_of_full_is_a_bookings_no(said: str) -> None:
    turns = call("A table for two at 7 on Friday?", f"{said}.")
    assert isinstance(check_record(declined(said), BOOK, turns), Accepted), said
    args = booked(2, "Friday at 7 pm", outcome_quote=said, party_readback=True, time_readback=True, date_readback=True)
    assert check_record(args, BOOK, turns).rule == 8, said  # type: ignore[union-attr]
    ok = call("A table for two at 7 on Friday?", "Sure, you're all booked for Friday.")
    assert isinstance(check_record(args | {"outcome_quote": "you're all booked for Friday"}, BOOK, ok), Accepted)


def test_rule_8_out_back_is_a_place_and_on_order_or_yesterday_is_not_in_stock() -> None:
    asked = "Do you have the cast iron skillet in stock?"
    for said in ("We've got a couple left out back", "There are plenty out front"):
        assert isinstance(check_record(stock("in_stock", said), STOCK, call(asked, f"{said}.")), Accepted), said
    for said in ("They're on order", "We had some yesterday"):
        assert check_record(stock("in_stock", said), STOCK, call(asked, f"{said}.")).rule == 8, said  # type: ignore[union-attr]


def test_rule_10_a_condition_is_no_failure_and_rule_11_reads_a_day_after_but() -> None:
    turns = call("A table for two at 7 on Friday?", "Sure, you're booked. If you can't make it, just call.")
    args = booked(2, "Friday at 7 pm", outcome_quote="you're booked", party_readback=True, time_readback=True,
                  date_readback=True)
    assert isinstance(check_record(args, BOOK, turns), Accepted)
    turns = call("So a table for two at seven on Friday?", "That works, but Saturday, not Friday.")
    assert check_record(args | {"outcome_quote": "That works"}, BOOK, turns).rule == 11  # type: ignore[union-attr]


def test_rules_4_and_5_an_ordinal_in_words_is_a_day_and_a_part_of_the_day_makes_a_bare_number_a_time() -> None:
    turns = call("A table for two?", "June twelfth, 5 in the evening, for two, you're booked.")
    args = booked(2, "June 12 at 5 pm", outcome_quote="you're booked", party_quote="for two",
                  time_quote="5 in the evening", date_quote="June twelfth")
    assert isinstance(check_record(args, BOOK, turns), Accepted)
    for wrong in ("June 13 at 5 pm", "June 12 at 5 am"):
        assert isinstance(check_record(args | {"confirmed_time": wrong}, BOOK, turns), Refused), wrong
    assert isinstance(check_record(args | {"confirmed_time": "the 12th at 5 pm"}, BOOK, turns), Accepted)  # June's 12th


def test_rule_11_a_stock_yes_taken_back_with_a_correction_is_refused() -> None:
    turns = call("Do you have the cast iron skillet?", "Yes, we have one left. Oh wait, sorry, we just sold the last one.")
    assert check_record(stock("in_stock", "we have one left", 1), STOCK, turns).rule == 11  # type: ignore[union-attr]
    other_size = call("Do you have the cast iron skillet?", "Yes, we have one left. Sorry, the 10 inch is sold out.")
    assert check_record(stock("in_stock", "we have one left", 1), STOCK, other_size).rule == 11  # type: ignore[union-attr]  # the safe side: refused
    other = call("Do you have the cast iron skillet?", "Yes, we have one left. The lids are sold out.")
    assert isinstance(check_record(stock("in_stock", "we have one left", 1), STOCK, other), Accepted)  # no correction


@given(st.sampled_from(("The earliest I have is 9:30", "We can only do 8:30 on Friday", "The next available is Saturday at 7",
                        "The latest we seat is 6", "Seven o'clock is taken", "All our tables are taken", "Our last seating is at 6")))
def test_rule_9_a_decline_may_offer_only_another_time(said: str) -> None:
    turns = call("A table for two at 7 on Friday?", f"Sorry. {said}.")
    assert isinstance(check_record(declined(said), BOOK, turns), Accepted), said
    booked_then = call("A table for two at 7 on Friday?", "Sure, you're booked for 7 on Friday.")
    assert check_record(declined("you're booked for 7 on Friday"), BOOK, booked_then).rule == 9  # type: ignore[union-attr]


@given(st.sampled_from(c.GONE), st.sampled_from(("Seven", "7", "Friday", "That time", "It")), st.sampled_from(("'s", " is")))
def test_rule_9_a_declines_no_may_be_a_word_of_gone_ending_its_clause(gone: str, subject: str, be: str) -> None:
    said = f"{subject}{be} {gone}"
    turns = call("A table for two at 7 on Friday?", f"Hmm. {said}, I'm afraid.")
    assert isinstance(check_record(declined(said), BOOK, turns), Accepted), said
    # not where it goes on ("it's gone through", "taken care of"), nor said to the caller ("you're all booked")
    for yes in (f"{subject}'s {gone} for you", f"{subject}'s {gone} through", f"you're {gone}"):
        assert check_record(declined(yes), BOOK, call("A table for two at 7 on Friday?", f"{yes}.")).rule == 9, yes  # type: ignore[union-attr]


def test_rule_4_a_number_word_keeps_its_s() -> None:
    """"Eight thirty's fine" says 8:30 as "8:30's fine" does (the 's was part of the word, and no number)."""
    turns = call("Could we do Friday at 8:30 for two instead?", "Eight thirty's fine.")
    args = booked(2, "Friday 20:30", outcome_quote="Eight thirty's fine", time_quote="Eight thirty's fine",
                  party_readback=True, date_readback=True)
    assert isinstance(check_record(args, BOOK, turns), Accepted)
    assert check_record(args | {"confirmed_time": "Friday 20:00"}, BOOK, turns).rule == 4  # type: ignore[union-attr]


@given(st.sampled_from((("a dozen", 12), ("two dozen", 24), ("half a dozen", 6), ("3 dozen", 36))))
def test_rule_5_a_dozen_is_a_count(said: tuple[str, int]) -> None:
    words, n = said
    turns = call("Do you have the cast iron skillet?", f"Yes, we've got {words} of them.")
    assert isinstance(check_record(stock("in_stock", f"we've got {words} of them", n), STOCK, turns), Accepted)
    assert check_record(stock("in_stock", f"we've got {words} of them", n + 1), STOCK, turns).rule == 5  # type: ignore[union-attr]


@given(st.sampled_from(("We'll have them Tuesday", "we will have more in stock Monday", "they're gonna be in on Friday")))
def test_rules_8_and_9_stock_to_come_is_none_now(said: str) -> None:
    turns = call("Do you have the cast iron skillet?", f"Hmm. {said}.")
    assert check_record(stock("in_stock", said), STOCK, turns).rule == 8  # type: ignore[union-attr]
    assert isinstance(check_record(stock("out_of_stock", said), STOCK, turns), Accepted)


@given(st.sampled_from(("Seven's gone", "Friday's out, I'm afraid", "The tables are all gone for Friday", "That night's spoken for")))
def test_rule_8_a_word_of_gone_is_no_yes(said: str) -> None:
    """A booking read back and answered with the time asked "gone" is no booking, as it is a decline."""
    turns = call("A table for two at 7 on Friday?", f"Hmm. {said}.")
    args = booked(2, "Friday 19:00", outcome_quote=said, party_readback=True, time_readback=True, date_readback=True)
    assert check_record(args, BOOK, turns).rule == 8  # type: ignore[union-attr]
    assert isinstance(check_record(declined(said), BOOK, turns), Accepted)
    fine = call("A table for two at 7 on Friday?", "Lovely, that's all booked for you.")
    assert isinstance(check_record(args | {"outcome_quote": "that's all booked for you"}, BOOK, fine), Accepted)


def test_rule_10_a_decline_then_the_time_the_agent_asked_for_said_again_is_refused() -> None:
    turns = call("A table for five at 8 on Thursday?", "Hmm, eight's gone, but I've got eight fifteen if that's any good?",
                 "Eight fifteen is fine.", "Brilliant, I've pencilled you in for eight fifteen, five of you.")
    assert check_record(declined("eight's gone"), BOOK, turns).rule == 10  # type: ignore[union-attr]
    still_no = (*turns[:2], Turn("agent", "Could you do 8:30 then?"), Turn("business", "No, 8:30's gone too, sorry."))
    assert isinstance(check_record(declined("eight's gone"), BOOK, still_no), Accepted)
    left = (*turns[:2], Turn("agent", "That's outside our window, thanks anyway."), Turn("business", "No bother."))
    assert isinstance(check_record(declined("eight's gone"), BOOK, left), Accepted)


@given(st.sampled_from((("twenty past seven", 19, 20), ("ten to eight", 19, 50), ("five past seven", 19, 5),
                        ("seven-ish", 19, 0), ("7ish", 19, 0), ("midday", 12, 0), ("five-forty-five", 17, 45))))
def test_rule_4_a_bookings_one_time_in_everyday_words(said: tuple[str, int, int]) -> None:
    words, hour, minute = said
    turns = call("A table for two on Friday?", f"Sure, {words} on Friday for two, you're booked.")
    args = booked(2, f"Friday {f"{hour:02d}:{minute:02d}"}", outcome_quote="you're booked", time_quote=words,
                  party_quote="for two", date_quote="on Friday")
    assert isinstance(check_record(args, BOOK, turns), Accepted), words
    assert check_record(args | {"confirmed_time": f"Friday {f"{hour:02d}:{(minute + 5) % 60:02d}"}"}, BOOK, turns).rule == 4  # type: ignore[union-attr]


@given(st.sampled_from((("eight til five", 8, 17, 0), ("9 till half 5", 9, 17, 30), ("between nine and six", 9, 18, 0),
                        ("midday to nine", 12, 21, 0), ("nine till half past five", 9, 17, 30), ("nine-ish till five", 9, 17, 0))))
def test_rule_4_a_range_in_everyday_words(said: tuple[str, int, int, int]) -> None:
    words, opens, closes, minute = said
    turns = call("What are your hours?", f"Weekdays it's {words}.")
    rng = {"days": list(c.WEEKDAYS[:5]), "opens": f"{opens:02d}:00", "closes": f"{closes:02d}:{minute:02d}", "days_quote": "Weekdays",
           "times_quote": words}
    assert isinstance(check_record(hours(rng), HOURS, turns), Accepted), words
    assert check_record(hours(rng | {"closes": f"{closes + 1:02d}:{minute:02d}"}), HOURS, turns).rule == 4  # type: ignore[union-attr]
    past = call("What are your hours?", "Weekdays twenty past eight till six.")
    assert isinstance(check_record(hours(rng | {"opens": "08:20", "closes": "18:00", "times_quote": "twenty past eight till six"}),
                                   HOURS, past), Accepted)
    # "ten to eight" in hours is a range, 10 to 8, not 7:50
    ten = call("What are your hours?", "Weekdays ten to eight.")
    assert isinstance(check_record(hours(rng | {"opens": "10:00", "closes": "20:00", "times_quote": "ten to eight"}), HOURS, ten), Accepted)


def test_rule_4_number_words_said_apart_are_two_numbers() -> None:
    turns = call("What are your hours?", "It's nine to five thirty, seven days a week.")
    rng = {"days": list(c.WEEKDAYS), "opens": "09:00", "closes": "17:30", "days_quote": "seven days a week",
           "times_quote": "nine to five thirty"}
    assert isinstance(check_record(hours(rng), HOURS, turns), Accepted)
    booked_turns = call("A table on Friday?", "Friday at seven thirty. Four. That's booked.")
    args = booked(4, "Friday 19:30", outcome_quote="That's booked", time_quote="Friday at seven thirty", party_quote="Four",
                  date_quote="Friday at seven thirty")
    assert isinstance(check_record(args, BOOK, booked_turns), Accepted)
    dashed = call("A table on Saturday?", "Okay, Saturday night nine-thirty six of you, I can confirm that.")
    args = booked(6, "Saturday 21:30", outcome_quote="I can confirm that", time_quote="nine-thirty", party_quote="six of you",
                  date_quote="Saturday night")
    assert isinstance(check_record(args, BOOK, dashed), Accepted)  # "thirty" joined to "nine" by a dash goes on only by dashes


def test_rule_11_a_time_said_gone_or_the_party_said_alone_is_no_correction() -> None:
    turns = call("A table for six on Friday?", "I can do 9:00... no sorry, make that 8pm, 9:00's taken. Lovely, that's you booked, 6 adults.")
    args = booked(6, "Friday 20:00", outcome_quote="that's you booked", time_quote="make that 8pm", party_quote="6 adults",
                  date_readback=True)
    assert isinstance(check_record(args, BOOK, turns), Accepted)
    alone = call("A table on Friday?", "Friday... eight forty-five. Okay. Six. Right, you're in the book.")
    args = booked(6, "Friday 20:45", outcome_quote="you're in the book", time_quote="eight forty-five", party_quote="Six",
                  date_quote="Friday")
    assert isinstance(check_record(args, BOOK, alone), Accepted)
    moved = call("A table on Friday?", "Friday at 8 for six, you're booked. Oh sorry, 8 is taken actually, it'll be 9.")
    args = booked(6, "Friday 20:00", outcome_quote="you're booked", time_quote="Friday at 8 for six",
                  party_quote="Friday at 8 for six", date_quote="Friday at 8 for six")
    assert check_record(args, BOOK, moved).rule == 11  # type: ignore[union-attr]


@given(st.sampled_from(("Should be in Tuesday", "Expecting a delivery Tuesday", "more tomorrow")))
def test_rules_8_and_9_stock_on_another_day_is_none_now(said: str) -> None:
    turns = call("Do you have the cast iron skillet?", f"{said}.")
    assert check_record(stock("in_stock", said), STOCK, turns).rule == 8  # type: ignore[union-attr]
    assert isinstance(check_record(stock("out_of_stock", said), STOCK, turns), Accepted)


def test_rule_6_a_read_back_of_an_answer_to_a_question_that_named_the_item() -> None:
    turns = call("Which aisle is the garden hose in?", "Aisle 7.", "Sorry, was that aisle 7?", "Yep.")
    args = aisle("aisle 7", None, readback=True, outcome="Yep")
    assert isinstance(check_record(args, AISLE, turns), Accepted)
    assert check_record(aisle("aisle 8", None, readback=True, outcome="Yep"), AISLE,  # type: ignore[union-attr]
                        call("Which aisle is the garden hose in?", "Aisle 7.", "Sorry, was that aisle 8?", "Yep.")).rule == 6
    other = call("Which aisle are the rakes in?", "Aisle 7.", "Sorry, was that aisle 7?", "Yep.")
    assert check_record(args, AISLE, other).rule == 6  # type: ignore[union-attr]


@given(st.sampled_from(("we won't be open", "we are not open", "we don't open", "we're never open")))
def test_rule_7_a_no_before_open_says_closed(said: str) -> None:
    turns = call("What are your hours?", f"On Sunday {said}.")
    closed = {"days": ["sunday"], "closed": True, "days_quote": "On Sunday", "times_quote": said}
    assert isinstance(check_record(hours(closed), HOURS, turns), Accepted), said
    later = call("What are your hours?", f"On Sunday {said} until 9.")
    assert check_record(hours(closed | {"times_quote": f"{said} until 9"}), HOURS, later).rule == 7  # type: ignore[union-attr]


def test_rule_4_a_bookings_time_quote_of_one_bare_number() -> None:
    turns = call("A table for two on Friday?", "Friday, two... yeah, I've put you in for eight. That's done.")
    args = booked(2, "Friday 20:00", outcome_quote="That's done", time_quote="I've put you in for eight", party_quote="two",
                  date_quote="Friday")
    assert isinstance(check_record(args, BOOK, turns), Accepted)
    assert check_record(args | {"confirmed_time": "Friday 21:00"}, BOOK, turns).rule == 4  # type: ignore[union-attr]
    # one number is no party and time at once
    both = args | {"confirmed_party": 8, "party_quote": "I've put you in for eight"}
    assert check_record(both, BOOK, turns).rule == 4  # type: ignore[union-attr]
    two = call("A table on Friday?", "Friday for four at 7, done.")
    wrong = booked(4, "Friday 16:00", outcome_quote="done", time_quote="Friday for four at 7", party_quote="Friday for four at 7",
                   date_quote="Friday for four at 7")
    assert check_record(wrong, BOOK, two).rule == 4  # type: ignore[union-attr]  # two numbers: no bare reading
    people = call("A table on Friday?", "Friday, that's 2 people, done.")
    counted = booked(2, "Friday 14:00", outcome_quote="done", time_quote="that's 2 people", party_quote="2 people",
                     date_quote="Friday")
    assert check_record(counted, BOOK, people).rule == 4  # type: ignore[union-attr]  # a count, not a time


def test_rule_8_a_no_that_begins_a_correction_denies_nothing() -> None:
    turns = call("Which aisle is the garden hose in?", "Um, that's aisle 7... no, sorry, 8.")
    assert isinstance(check_record(aisle("aisle 8", "no, sorry, 8"), AISLE, turns), Accepted)
    assert check_record(aisle("aisle 8", "no, 8"), AISLE, call("Which aisle is the garden hose in?", "Hmm, no, 8.")).rule == 8  # type: ignore[union-attr]


def test_rules_3_and_7_an_echoed_day_answered_no_to_a_question_of_open() -> None:
    turns = call("Are you open on Sunday?", "Sundays? No, we're not, sorry.")
    closed = {"days": ["sunday"], "closed": True, "days_quote": "Sundays", "times_quote": "No, we're not"}
    assert isinstance(check_record(hours(closed), HOURS, turns), Accepted)
    asked_else = call("What time do you close on Sunday?", "Sundays? No, we're not, sorry.")
    assert check_record(hours(closed), HOURS, asked_else).rule == 7  # type: ignore[union-attr]
    echo_only = call("Are you open on Sunday?", "Sundays? Let me check.", "Hello?", "No, we're not.")
    assert check_record(hours(closed), HOURS, echo_only).rule == 3  # type: ignore[union-attr]  # the answer is in another turn


def test_rule_6_an_answer_repeated_to_a_read_back_stands_on_the_first_answers_question() -> None:
    turns = call("Which aisle has the garden hose?", "Garden hoses are in 14.", "Aisle 14?", "Yep, fourteen.")
    assert isinstance(check_record(aisle("aisle 14", "Yep, fourteen"), AISLE, turns), Accepted)
    other = call("Which aisle has the rakes?", "Rakes are in 14.", "Aisle 14?", "Yep, fourteen.")
    assert check_record(aisle("aisle 14", "Yep, fourteen"), AISLE, other).rule == 6  # type: ignore[union-attr]


@given(st.sampled_from(("the big tables are all reserved", "that'd be too late", "8 is too early for us")))
def test_rule_9_all_reserved_and_too_late_are_a_declines_no(said: str) -> None:
    turns = call("A table for six at 7 on Friday?", f"Hmm. {said}.")
    assert isinstance(check_record(declined(said), BOOK, turns), Accepted), said


def test_rule_5_every_day_a_quote_names_has_its_hours() -> None:
    turns = call("What are your hours?", "Weekdays seven to seven. Weekends eight to three.")
    weekdays = {"days": list(c.WEEKDAYS[:5]), "opens": "07:00", "closes": "19:00", "days_quote": "Weekdays", "times_quote": "seven to seven"}
    weekends = {"days": list(c.WEEKDAYS[5:]), "opens": "08:00", "closes": "15:00", "days_quote": "Weekends", "times_quote": "eight to three"}
    assert isinstance(check_record(hours(weekdays, weekends), HOURS, turns), Accepted)
    assert check_record(hours(weekdays, weekends | {"days": ["sunday"]}), HOURS, turns).rule == 5  # type: ignore[union-attr]
    assert check_record(hours(weekdays | {"days": list(c.WEEKDAYS[:4])}, weekends), HOURS, turns).rule == 5  # type: ignore[union-attr]
    # a day the words name that has hours of its own elsewhere in the record stands
    every = call("What are your hours?", "We're open 9 to 5 every day. Sunday we're closed.")
    open_ = {"days": list(c.WEEKDAYS[:6]), "opens": "09:00", "closes": "17:00", "days_quote": "every day", "times_quote": "9 to 5"}
    closed = {"days": ["sunday"], "closed": True, "days_quote": "Sunday", "times_quote": "Sunday we're closed"}
    assert isinstance(check_record(hours(open_, closed), HOURS, every), Accepted)
    assert check_record(hours(open_), HOURS, every).rule == 5  # type: ignore[union-attr]


def test_rule_4_words_said_twice_are_read_where_their_days_are() -> None:
    turns = call("What are your hours?", "Weekdays we're 9 to 5, Saturday 10 to 4, and Sunday 10 to 4 as well.")
    ranges = [{"days": list(c.WEEKDAYS[:5]), "opens": "09:00", "closes": "17:00", "days_quote": "Weekdays", "times_quote": "9 to 5"},
              {"days": ["saturday"], "opens": "10:00", "closes": "16:00", "days_quote": "Saturday", "times_quote": "10 to 4"},
              {"days": ["sunday"], "opens": "10:00", "closes": "16:00", "days_quote": "Sunday", "times_quote": "10 to 4"}]
    assert isinstance(check_record(hours(*ranges), HOURS, turns), Accepted)


@given(st.sampled_from(("Let me check", "Hold on", "Hang on, let me see", "One moment please")))
def test_rule_3_a_wait_is_no_outcome(said: str) -> None:
    turns = call("A table for two at 7 on Friday?", f"{said}.")
    args = booked(2, "Friday 19:00", outcome_quote=said, party_readback=True, time_readback=True, date_readback=True)
    assert check_record(args, BOOK, turns).rule == 3  # type: ignore[union-attr]


@given(st.sampled_from(("No, sorry", "oh no sorry, we're full", "no sorry were totally booked friday",
                        "No, sorry, the kitchen closes early on Friday",  # "no, sorry" is a no unless a value follows
                        "the last table just went", "Sorry, we're booked Friday", "we're totally booked Friday",
                        "We're rammed Tuesday, sorry love")))  # words of GONE, each clause apart
def test_rules_8_and_9_a_bare_no_sorry_and_more_words_of_gone_are_a_no(said: str) -> None:
    turns = call("A table for two at 7 on Friday?", f"{said}.")
    assert isinstance(check_record(declined(said), BOOK, turns), Accepted), said
    args = booked(2, "Friday 19:00", outcome_quote=said, party_readback=True, time_readback=True, date_readback=True)
    assert check_record(args, BOOK, turns).rule == 8, said  # type: ignore[union-attr]


@given(st.sampled_from((("we dont have any left", "out_of_stock", "in_stock"), ("we cant get those", "out_of_stock", "in_stock"))))
def test_rules_8_and_9_a_contraction_written_without_its_apostrophe(case: tuple[str, str, str]) -> None:
    said, right, wrong = case
    turns = call("Do you have the cast iron skillet?", f"{said}.")
    assert isinstance(check_record(stock(right, said), STOCK, turns), Accepted)
    assert check_record(stock(wrong, said), STOCK, turns).rule == 8  # type: ignore[union-attr]


def test_rules_4_and_5_a_party_before_tonight_and_spaced_meridiems() -> None:
    turns = call("Could I book a table for four tonight at 8?", "Sure, no problem.")
    args = booked(4, "tonight 20:00", outcome_quote="Sure, no problem", party_readback=True, time_readback=True, date_readback=True)
    assert isinstance(check_record(args, BOOK, turns), Accepted)
    assert check_record(args | {"confirmed_time": "tonight 16:00"}, BOOK, turns).rule == 2  # type: ignore[union-attr]
    for said in ("were open nine a m to nine p m every day", "we open 9 morning to 9 evening every day"):
        rng = {"days": list(c.WEEKDAYS), "opens": "09:00", "closes": "21:00", "days_quote": "every day",
               "times_quote": said.split(" ", 2)[2].removesuffix(" every day")}
        assert isinstance(check_record(hours(rng), HOURS, call("Hours?", said)), Accepted), said
        assert check_record(hours(rng | {"closes": "09:00"}), HOURS, call("Hours?", said)).rule == 4, said  # type: ignore[union-attr]


def test_rule_5_tomorrows_is_tomorrow() -> None:
    turns = call("Are you open tomorrow?", "Tomorrow's Thanksgiving so we're closed.")
    closed = {"date": "tomorrow", "closed": True, "days_quote": "Tomorrow's Thanksgiving", "times_quote": "we're closed"}
    assert isinstance(check_record(hours(closed), HOURS, turns), Accepted)
    assert check_record(hours(closed | {"date": "today"}), HOURS, turns).rule == 5  # type: ignore[union-attr]


def test_rule_10_a_decline_then_a_time_settled_and_answered_with_no_no() -> None:
    turns = call("Table for two tonight at 8?", "Tonight we're pretty slammed. I could squeeze you in at 9.",
                 "9 is fine. Two people tonight at 9 pm?", "You got it.")
    assert check_record(declined("Tonight we're pretty slammed"), BOOK, turns).rule == 10  # type: ignore[union-attr]
    for reply in ("No, sorry, 9 went too.", "Let me check.", "Hmm, is that for two?"):
        other = (*turns[:3], Turn("business", reply))
        assert isinstance(check_record(declined("Tonight we're pretty slammed"), BOOK, other), Accepted), reply
    for leaving in ("9 is outside our window. We'll leave it.", "We can't do 9:15, thanks anyway."):
        left = (*turns[:2], Turn("agent", leaving), Turn("business", "No bother."))
        assert isinstance(check_record(declined("Tonight we're pretty slammed"), BOOK, left), Accepted), leaving
    later = (*turns[:2], Turn("agent", "Could you do 9:15 instead?"), Turn("business", "Hmm, let me see. Right, for nine fifteen, the two of you."))
    assert check_record(declined("Tonight we're pretty slammed"), BOOK, later).rule == 10  # type: ignore[union-attr]
    empty = (*turns[:3], Turn("business", "Hmm. Nothing at 9 either."))
    assert isinstance(check_record(declined("Tonight we're pretty slammed"), BOOK, empty), Accepted)


def test_rule_8_an_offer_is_no_booked_outcome() -> None:
    turns = call("A table for two tonight at 9?", "Tonight? Oh, we stop seating at half eight, love.", "I see, thanks anyway.")
    args = booked(2, "tonight 20:30", outcome_quote="we stop seating at half eight", time_quote="half eight",
                  party_readback=True, date_readback=True)
    assert check_record(args, BOOK, turns).rule == 8  # type: ignore[union-attr]


def test_rule_10_a_time_agreed_then_taken_back_by_the_agent_leaves_the_decline() -> None:
    turns = call("A table for two on Friday at 7?", "I'm sorry, we're fully booked at seven. The earliest I could do is 9:30pm.",
                 "Yes, Friday 9:30pm works.", "Great.", "Sorry, 9:30 is outside what Nathan can make, so please don't hold it.")
    assert isinstance(check_record(declined("we're fully booked at seven"), BOOK, turns), Accepted)
    assert check_record(declined("we're fully booked at seven"), BOOK, turns[:4]).rule == 10  # type: ignore[union-attr]


def test_rule_8_a_fact_said_in_a_no_a_later_yes_overcame_stands() -> None:
    turns = call("A table for two at 7 on Friday?", "Mm, we're pretty packed Friday but I'll pencil you in, two at seven.")
    args = booked(2, "Friday 19:00", outcome_quote="I'll pencil you in", party_quote="two at seven", time_quote="two at seven",
                  date_quote="packed Friday")
    assert isinstance(check_record(args, BOOK, turns), Accepted)
    gone = call("A table for two at 7 on Friday?", "Mm, we're pretty packed Friday.")
    assert check_record(args | {"outcome_quote": "we're pretty packed Friday"}, BOOK, gone).rule == 8  # type: ignore[union-attr]


@given(st.sampled_from(("We should have some back in stock next week", "more next month")))
def test_rules_8_and_9_stock_next_week_is_none_now(said: str) -> None:
    turns = call("Do you have the cast iron skillet?", f"{said}.")
    assert check_record(stock("in_stock", said), STOCK, turns).rule == 8  # type: ignore[union-attr]
    assert isinstance(check_record(stock("out_of_stock", said), STOCK, turns), Accepted)


@given(st.sampled_from(c.UNITS))
def test_rule_5_a_number_that_measures_or_places_counts_nothing(unit: str) -> None:
    turns = call("A table for two at 7 on Friday?", f"Yes, booked. We keep it 20 {unit}s, mind.")
    args = booked(20, "Friday 19:00", outcome_quote="Yes, booked", party_quote=f"20 {unit}s", time_readback=True, date_readback=True)
    assert check_record(args, BOOK, turns).rule == 5  # type: ignore[union-attr]
    shelf = call("Do you have the cast iron skillet?", "Yes, on the shelf in aisle 6.")
    assert check_record(stock("in_stock", "on the shelf in aisle 6", 6), STOCK, shelf).rule == 5  # type: ignore[union-attr]
    assert isinstance(check_record(stock("in_stock", "Yes, 6 on the shelf", 6), STOCK, call("Skillet?", "Yes, 6 on the shelf.")), Accepted)


def test_rule_5_an_aisle_letter_stays_with_its_number() -> None:
    turns = call("Which aisle is the garden hose in?", "Garden hose is aisle 14B.")  # "a" is a word of PLACE_WORDS
    assert check_record(aisle("aisle 14A", "Garden hose is aisle 14B"), AISLE, turns).rule == 5  # type: ignore[union-attr]
    assert isinstance(check_record(aisle("aisle 14B", "Garden hose is aisle 14B"), AISLE, turns), Accepted)
    spaced = call("Which aisle is the garden hose in?", "garden hose is aisle 14 c")  # speech-to-text spacing
    assert isinstance(check_record(aisle("aisle 14C", "garden hose is aisle 14 c"), AISLE, spaced), Accepted)
    assert check_record(aisle("aisle 14A", "garden hose is aisle 14 c"), AISLE, spaced).rule == 5  # type: ignore[union-attr]


def test_rules_5_and_7_the_week_a_run_in_tae_a_holiday_and_a_kind_with_its_s() -> None:
    week = call("What are your hours?", "Eight to four through the week.")
    r = {"days": list(c.WEEKDAYS[:5]), "opens": "08:00", "closes": "16:00", "days_quote": "through the week",
         "times_quote": "Eight to four"}
    assert isinstance(check_record(hours(r), HOURS, week), Accepted)
    tae = call("What are your hours?", "We're Tuesday tae Thursday, ten tae four.")
    r = {"days": ["tuesday", "wednesday", "thursday"], "opens": "10:00", "closes": "16:00", "days_quote": "Tuesday tae Thursday",
         "times_quote": "ten tae four"}
    assert isinstance(check_record(hours(r), HOURS, tae), Accepted)
    holiday = call("Are you open Mondays?", "Monday is our holiday.")
    r = {"days": ["monday"], "closed": True, "days_quote": "Monday", "times_quote": "Monday is our holiday"}
    assert isinstance(check_record(hours(r), HOURS, holiday), Accepted)
    kinds = call("Do you have the cast iron skillet?", "The black is in, the enamel's sold out.")
    args = stock("some_kinds", None, kinds=[
        {"kind": "black", "availability": "in_stock", "quantity": None, "quote": "The black is in"},
        {"kind": "enamel", "availability": "out_of_stock", "quantity": None, "quote": "the enamel's sold out"}])
    assert isinstance(check_record(args, STOCK, kinds), Accepted)


@pytest.mark.parametrize("said, wrong, right", [
    ("six till six", ("18:00", "06:00"), ("06:00", "18:00")),
    ("nine to twelve thirty", ("09:00", "00:30"), ("09:00", "12:30")),
    ("six pm till two am", ("06:00", "14:00"), ("18:00", "02:00")),  # said, a range may close after midnight
])
def test_rule_4_a_range_of_bare_hours_closes_after_it_opens(said: str, wrong: tuple[str, str], right: tuple[str, str]) -> None:
    turns = call("What are your hours?", f"We're {said}, every day.")
    r = {"days": list(c.WEEKDAYS), "days_quote": "every day", "times_quote": said}
    assert check_record(hours(r | {"opens": wrong[0], "closes": wrong[1]}), HOURS, turns).rule == 4  # type: ignore[union-attr]
    assert isinstance(check_record(hours(r | {"opens": right[0], "closes": right[1]}), HOURS, turns), Accepted)


def test_rule_3_a_clause_ends_before_but() -> None:
    turns = call("A table for two at 7 on Friday?", "We're full at 7 but would you sit at the bar?")
    assert isinstance(check_record(declined("We're full at 7"), BOOK, turns), Accepted)
    asked = call("A table for two at 7 on Friday?", "We're full at 7 would you sit at the bar?")
    assert check_record(declined("We're full at 7"), BOOK, asked).rule == 3  # type: ignore[union-attr]


def test_rule_11_the_booked_time_said_again_is_no_other_party() -> None:
    turns = call("A table for two at 7 on Friday?", "Friday, for two, hmm, hang on, yes, at seven, sorry for the wait, seven's fine.",
                 "Great, so two at seven on Friday?", "You're booked.")
    args = booked(2, "Friday 19:00", outcome_quote="You're booked", party_quote="for two", time_quote="at seven",
                  date_quote="Friday")
    assert isinstance(check_record(args, BOOK, turns), Accepted)
    changed = call("A table for two at 7 on Friday?", "Friday, for two, hmm, hang on, yes, at seven, sorry, for three.",
                   "Three at seven?", "You're booked.")
    assert check_record(args, BOOK, changed).rule == 11  # type: ignore[union-attr]


def test_rule_5_a_times_quote_of_another_day_is_not_its_range() -> None:
    turns = call("What are your hours?", "Stocktaking today, we're back tomorrow at ten.")
    today = {"date": "today", "days_quote": "today", "opens": "10:00", "times_quote": "back tomorrow at ten"}
    assert check_record(hours(today), HOURS, turns).rule == 5  # type: ignore[union-attr]
    assert isinstance(check_record(hours(today | {"date": "tomorrow", "days_quote": "tomorrow"}), HOURS, turns), Accepted)
    week = call("What are your hours?", "Nine to five on weekdays, ten to two Saturday.")
    r = {"days": list(c.WEEKDAYS[:5]), "opens": "09:00", "closes": "17:00", "days_quote": "on weekdays", "times_quote": "ten to two Saturday"}
    assert check_record(hours(r | {"opens": "10:00", "closes": "14:00"}), HOURS, week).rule == 5  # type: ignore[union-attr]
    both = call("What are your hours?", "We open at eight every day. Monday to Friday we close at five and Sunday we close at one.")
    sunday = {"days": ["sunday"], "opens": "08:00", "closes": "17:00", "days_quote": "Sunday", "times_quote": "we close at five",
              "context_quote": "We open at eight every day"}  # the quote's clause gives its time to Monday to Friday
    assert check_record(hours(sunday), HOURS, both).rule == 5  # type: ignore[union-attr]
    assert isinstance(check_record(hours(sunday | {"closes": "13:00", "times_quote": "Sunday we close at one"}), HOURS, both), Accepted)


def test_rule_4_a_time_said_without_its_colon() -> None:
    turns = call("What are your hours?", "Weekdays 0830 to 1715.")
    r = {"days": list(c.WEEKDAYS[:5]), "opens": "08:30", "closes": "17:15", "days_quote": "Weekdays", "times_quote": "0830 to 1715"}
    assert isinstance(check_record(hours(r), HOURS, turns), Accepted)
    assert check_record(hours(r | {"closes": "17:45"}), HOURS, turns).rule == 4  # type: ignore[union-attr]
    booking = call("A table for two at 8:45 on Friday?", "friday 845 for two yep done")
    args = booked(2, "Friday 20:45", outcome_quote="yep done", party_quote="for two", time_quote="friday 845", date_quote="friday 845")
    assert isinstance(check_record(args, BOOK, booking), Accepted)
    # a phone number or an address after "at", "to" or "through" is no time said after the booking
    for after in ("You can call them through 555 014 4949.", "You'll go to 715 Harbor Road."):
        ok = call("A table for two at 7 on Friday?", "2 at 7 on Friday, you're booked.", "Thanks.", after)
        args = booked(2, "Friday at 7 pm", outcome_quote="you're booked", party_quote="2 at 7 on Friday",
                      time_quote="2 at 7 on Friday", date_quote="2 at 7 on Friday")
        assert isinstance(check_record(args, BOOK, ok), Accepted), after


def test_rules_5_and_6_ones_is_no_number_24_7_names_every_day_and_a_kind_stands_in_its_plural() -> None:
    turns = call("Do you have the cast iron skillet?", "The cast iron ones, we have seven in stock.")
    assert isinstance(check_record(stock("in_stock", "The cast iron ones, we have seven in stock", 7), STOCK, turns), Accepted)
    always = call("What are your hours?", "We're open twenty-four seven.")
    r = {"days": list(c.WEEKDAYS), "around_the_clock": True, "days_quote": "twenty-four seven", "times_quote": "open twenty-four seven"}
    assert isinstance(check_record(hours(r), HOURS, always), Accepted)
    kinds = call("Do you have the cast iron skillet?", "Smalls are in, larges are sold out.")
    args = stock("some_kinds", None, kinds=[
        {"kind": "small", "availability": "in_stock", "quantity": None, "quote": "Smalls are in"},
        {"kind": "large", "availability": "out_of_stock", "quantity": None, "quote": "larges are sold out"}])
    assert isinstance(check_record(args, STOCK, kinds), Accepted)
    one = call("Do you have the cast iron skillet?", "The small is in, the large is sold out.")
    args = stock("some_kinds", None, kinds=[
        {"kind": "smalls", "availability": "in_stock", "quantity": None, "quote": "The small is in"},
        {"kind": "larges", "availability": "out_of_stock", "quantity": None, "quote": "the large is sold out"}])
    assert isinstance(check_record(args, STOCK, one), Accepted)


def test_rule_4_a_split_shift_shares_its_days_and_a_daypart_before_a_time_says_its_half() -> None:
    turns = call("What are your hours?", "Lunch eleven to two, then dinner five to ten, Tuesday to Sunday.")
    days = ["tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"]
    lunch = {"days": days, "opens": "11:00", "closes": "14:00", "days_quote": "Tuesday to Sunday", "times_quote": "eleven to two"}
    dinner = lunch | {"opens": "17:00", "closes": "22:00", "times_quote": "five to ten"}
    assert isinstance(check_record(hours(lunch, dinner), HOURS, turns), Accepted)
    other = call("What are your hours?", "Lunch eleven to two, Saturday five to ten, Tuesday to Sunday.")
    assert check_record(hours(lunch), HOURS, other).rule == 4  # type: ignore[union-attr]  # a day between: not shared
    shifts = call("What are your hours?", "Mornings nine to twelve, afternoons two to five, weekdays.")
    am = {"days": list(c.WEEKDAYS[:5]), "opens": "09:00", "closes": "12:00", "days_quote": "weekdays", "times_quote": "Mornings nine to twelve"}
    pm = am | {"opens": "14:00", "closes": "17:00", "times_quote": "afternoons two to five"}
    assert isinstance(check_record(hours(am, pm), HOURS, shifts), Accepted)
    assert check_record(hours(am, pm | {"opens": "02:00"}), HOURS, shifts).rule == 4  # type: ignore[union-attr]


def test_the_same_record_on_the_same_words_is_judged_once_and_on_other_words_afresh() -> None:
    # The outcome asks again at once about the record just judged (calld.core.judging.judged): the same words
    # get the same verdict, remembered; other words are checked afresh.
    from calld.core.judging import judged

    args = json.dumps(stock("in_stock", "we have three on the shelf", quantity=3))
    said = call("Do you have the cast iron skillet?", "Yes, we have three on the shelf.")
    first = judged(args, STOCK, said, None)
    assert isinstance(first, Accepted) and judged(args, STOCK, tuple(said), None) is first
    unsaid = call("Do you have the cast iron skillet?", "Let me look, one moment.")
    assert judged(args, STOCK, unsaid, None).rule == 1  # type: ignore[union-attr]
    assert check_record(args, STOCK, list(said)) == first

def test_rules_1_4_5_more_englishes_a_quarter_of_a_daypart_before_all_days_bar_and_no_dramas() -> None:
    def said(text: str) -> list[tuple[int | None, int, str | None]]:
        return [(k.hour, k.minute, k.meridiem) for k in c.clocks([t.word for t in c.tokens(text)])]
    assert said("at quarter of eight") == [(7, 45, None)] and (8, 30, None) not in said("half of eight")
    assert said("morning 10 until night 10") == [(10, 0, "am"), (10, 0, "pm")]
    assert said("tomorrow night two adults") == []  # a party after a daypart is no time
    assert c.days_in(["all", "days"]) == set(c.WEEKDAYS) and c.days_in(["every", "day", "bar", "sunday"]) == set(c.WEEKDAYS[:6])
    assert [t.word for t in c.tokens("No dramas, we'll see you then.")][:1] == ["ok"]
    assert said("open 9 upto 2") == [(9, 0, None), (2, 0, None)]
    for no in ("we've nae left", "we cannae do Friday", "nuh table tonight"):  # Scots' and Jamaican's no
        assert c._negated([t.word for t in c.tokens(no)]), no
    assert [t.word for t in c.tokens("Nae bother at all.")][:1] == ["ok"]
    turns = call("A table for 2 at 7 on Friday?", "Two at 7 on Friday, okay, your booking is confirm.")
    args = booked(2, "Friday 7pm", outcome_quote="your booking is confirm", party_quote="Two at 7 on Friday",
                  time_quote="Two at 7 on Friday", date_quote="Two at 7 on Friday")
    assert isinstance(check_record(args, BOOK, turns), Accepted)  # a confirm said as done, not asked for


@given(st.integers(1, 28), st.integers(1, 6), st.integers(1, 40), st.integers(1, 40))
def test_rules_5_and_6_an_ordinal_is_a_dates_day_a_possessive_names_and_a_place_may_hold_its_numbers(
        day: int, party: int, row: int, bay: int) -> None:
    turns = call("A table please?", f"Friday {day}th at 7 for {WORDS[party - 1]}, you're booked.")
    args = booked(party, f"Friday {day}th 7pm", outcome_quote="you're booked", party_quote=f"for {WORDS[party - 1]}",
                  time_quote="at 7", date_quote=f"Friday {day}th")
    assert isinstance(check_record(args, BOOK, turns), Accepted)
    assert isinstance(check_record(args | {"confirmed_time": f"Friday {day % 28 + 1}th 7pm"}, BOOK, turns), Refused)
    assert str(day) not in c._counts([t.word for t in c.tokens(f"on {day}th")])  # a date's day counts no one
    job = QuickAskJob(QuestionType.AISLE, "tile grout")
    turns = call("Where would I find it?", f"Grout's in aisle {row}, and the tiles are in {row % 40 + 1}.")
    assert isinstance(check_record(aisle(f"aisle {row}", f"Grout's in aisle {row}"), job, turns), Accepted)
    turns = call("Where is the tile grout?", f"That's aisle {row}, bay {bay}.")
    assert isinstance(check_record(aisle(f"aisle {row}, bay {bay}", f"aisle {row}, bay {bay}"), job, turns), Accepted)


@given(st.integers(0, 6), st.sampled_from(("shut", "closed")), st.sampled_from(("", "s")))
def test_rule_7_a_day_said_closed_is_no_days_of_an_open_range(day: int, word: str, plural: str) -> None:
    shut = f"{DAYS[day]}{plural}"
    turns = call("What are your hours?", f"Nine to five, {word} {shut}.")
    closed = {"days": [c.WEEKDAYS[day]], "closed": True, "days_quote": shut, "times_quote": f"{word} {shut}"}
    assert isinstance(check_record(hours(closed), HOURS, turns), Accepted)
    borrowed = {"days": [c.WEEKDAYS[day]], "opens": "09:00", "closes": "17:00", "days_quote": shut, "times_quote": "Nine to five"}
    got = check_record(hours(borrowed), HOURS, turns)
    assert isinstance(got, Refused) and got.rule == 7, got
    turns = call("What are your hours?", f"Nine to five, and we're open {shut} even on a holiday.")  # said open
    assert isinstance(check_record(hours(borrowed), HOURS, turns), Accepted)


@given(st.integers(2, 30), st.integers(1, 40), st.integers(2, 9))
def test_rule_6_another_number_is_one_of_the_facts_own_kind(n: int, row: int, more: int) -> None:
    """A count beside an aisle, or an aisle beside a count, is no rival; another count or aisle is."""
    stock_job, aisle_job = QuickAskJob(QuestionType.STOCK, "garden hose"), QuickAskJob(QuestionType.AISLE, "garden hose")
    said = call("Do you have the garden hose?", f"Yep, we have {n} boxes, in aisle {row}.")
    assert isinstance(check_record(stock("limited", f"we have {n} boxes", n), stock_job, said), Accepted)
    assert isinstance(check_record(aisle(f"aisle {row}", f"in aisle {row}"), aisle_job, said), Accepted)
    rival = call("Do you have the garden hose?", f"We have {n} here, and {n + more} in the back.")
    assert isinstance(check_record(stock("limited", f"We have {n} here", n), stock_job, rival), Refused)
    rival = call("Where is the garden hose?", f"Either aisle {row} or {row % 40 + 1}.")
    assert isinstance(check_record(aisle(f"aisle {row}", f"aisle {row}"), aisle_job, rival), Refused)
    rival = call("Where is the garden hose?", f"Aisle {row} has the tools, it is in {row % 40 + 1}.")  # "has" is no noun
    assert isinstance(check_record(aisle(f"aisle {row}", f"Aisle {row} has the tools"), aisle_job, rival), Refused)
    runs = call("Do you have the garden hose?", f"We have {n} boxes in aisles {row} or {row % 40 + 1}.")
    assert isinstance(check_record(stock("limited", f"We have {n} boxes", n), stock_job, runs), Accepted)


def test_a_typed_date_that_is_no_date_gets_a_verdict_not_a_crash() -> None:
    turns = call("A table for 2?", "For 2 at 7 on Friday, booked.")
    for typed in ("2026-02-30 19:00", "2026-13-05 19:00", "2026-00-05 19:00"):
        args = booked(2, typed, outcome_quote="booked", party_quote="For 2", time_quote="at 7", date_quote="on Friday")
        assert isinstance(check_record(args, BOOK, turns), (Accepted, Refused)), typed  # it raised ValueError
