"""The evidence check (calld.evidence.check_record), by properties over records built from a small grammar of
our own, and by each rule that has a word list (only there, phrasings)."""

from __future__ import annotations

import json
import pathlib
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from calld.core.plan import BookJob, QuickAskJob
from calld.domain import spoken, tokens
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
    answered,
    booked,
    call,
    declined,
    hhmm,
    hours,
    stock,
)

# -- a grammar of confirmations: subjects, verbs, details in any order -------------------------------------------

OUTCOMES = ("you're all set", "that's booked", "it's confirmed", "we've got you down", "done, see you then",
            "your table is reserved", "I've put you in the book")


@st.composite
def confirmations(draw: st.DrawFn) -> tuple[dict[str, Any], tuple[Turn, ...]]:
    party = draw(st.integers(1, 12))
    hour, minute = draw(st.integers(1, 11)), draw(st.sampled_from((0, 15, 30, 45)))
    day = draw(st.sampled_from(DAYS))
    in_words = draw(st.booleans())
    # a number word said straight after a time in words would be one number ("one thirty one people"): no grammar
    # of ours says it so
    phrases = ("for {}", "a table for {}", "party of {}") + (() if in_words else ("{} people", "{} guests"))
    party_phrase = draw(st.sampled_from(phrases))
    party_said = party_phrase.format(WORDS[party - 1] if in_words else party)
    if minute == 0:
        clock = draw(st.sampled_from((f"at {hour} pm", f"at {hour}:00 pm", f"at {WORDS[hour - 1]} pm", f"{hour} o'clock pm")))
    else:
        clock = draw(st.sampled_from((f"at {hour}:{minute:02d} pm", f"at {hour}.{minute:02d} pm",
                                      f"at {WORDS[hour - 1]} {dict(((15, 'fifteen'), (30, 'thirty'), (45, 'forty-five')))[minute]}")))
    day_said = draw(st.sampled_from((f"on {day}", f"this {day}", day)))
    details = draw(st.permutations((party_said, clock, day_said)))
    outcome = draw(st.sampled_from(OUTCOMES))
    first = draw(st.booleans())
    sentence = f"{outcome}, {' '.join(details)}." if first else f"{' '.join(details)}, {outcome}."
    turns = call("Hi, I'd like to book a table, please.", "Sure.", "Thank you.", sentence[0].upper() + sentence[1:])
    args = booked(party, f"{day} at {hour}:{minute:02d} pm", outcome_quote=outcome, party_quote=party_said,
                  time_quote=clock, date_quote=day_said)
    return args, turns


REFUSALS = ("we're fully booked", "sorry, we can't do that", "there are no tables left", "we're unable to take that",
            "no, nothing at that time", "I couldn't book it", "we're closed", "we're booked up")


@given(confirmations())
@settings(max_examples=150, deadline=None)
def test_confirmations_of_the_grammar_are_accepted_with_their_per_fact_quotes(case: Any) -> None:
    args, turns = case
    assert isinstance(check_record(json.dumps(args), BOOK, turns), Accepted), (args, turns)


@given(st.sampled_from(REFUSALS), st.sampled_from(("Sorry, ", "", "Oh, ")), st.sampled_from(("", " tonight", " on Friday")))
def test_refusals_of_the_grammar_are_accepted_as_declines(no: str, before: str, after: str) -> None:
    turns = call("Could I book a table for two?", f"{before}{no}{after}.")
    assert isinstance(check_record(declined(no), BOOK, turns), Accepted)
    assert isinstance(check_record(booked(2, "Friday at 7 pm", outcome_quote=no, party_readback=True,
                                          time_readback=True), BOOK, turns), Refused)


@given(confirmations(), st.integers(1, 5), st.sampled_from(("party", "time", "minute", "day")))
@settings(max_examples=150, deadline=None)
def test_changing_any_fact_of_an_accepted_record_refuses_it(case: Any, by: int, which: str) -> None:
    args, turns = case
    party, time = args["confirmed_party"], args["confirmed_time"]
    day, _, clock = time.split(" ", 2)
    hour, minute = (int(x) for x in clock.removesuffix(" pm").split(":"))
    if which == "party":
        args = args | {"confirmed_party": party + by}
    elif which == "time":
        args = args | {"confirmed_time": f"{day} at {(hour + by - 1) % 11 + 1}:{minute:02d} pm"}
    elif which == "minute":
        args = args | {"confirmed_time": f"{day} at {hour}:{(minute + 15 * (by % 3 + 1)) % 60:02d} pm"}
    else:
        args = args | {"confirmed_time": f"{DAYS[(DAYS.index(day) + by) % 7]} at {hour}:{minute:02d} pm"}
    assert isinstance(check_record(args, BOOK, turns), Refused), (args, turns)


NEUTRAL = ("Our parking is around the back.", "Ask for Sam when you get here.", "The patio has heaters.",
           "We have a new dessert menu.", "Thanks for calling the Blue Heron.")


@given(confirmations(), st.sampled_from(NEUTRAL), st.booleans(), st.booleans())
@settings(max_examples=150, deadline=None)
def test_a_sentence_stating_nothing_of_the_record_changes_no_verdict(case: Any, neutral: str, same_turn: bool,
                                                                    wrong: bool) -> None:
    args, turns = case
    if wrong:
        args = args | {"confirmed_party": args["confirmed_party"] + 1}
    before = isinstance(check_record(args, BOOK, turns), Accepted)
    more = (*turns[:-1], Turn("business", f"{turns[-1].text} {neutral}")) if same_turn else (
        *turns, Turn("agent", "Great."), Turn("business", neutral))
    assert isinstance(check_record(args, BOOK, more), Accepted) == before == (not wrong)


@given(confirmations(), st.sampled_from(("outcome_quote", "party_quote", "time_quote", "date_quote")),
       st.text(alphabet="abcdefghij ", min_size=3, max_size=30).filter(str.strip))
@settings(max_examples=100, deadline=None)
def test_a_quote_the_business_never_said_or_the_agents_words_are_refused(case: Any, field: str, noise: str) -> None:
    args, turns = case
    unsaid = check_record(args | {field: f"{args[field]} {noise} zq"}, BOOK, turns)
    assert isinstance(unsaid, Refused) and unsaid.rule == 1
    agent = (*turns[:-1], Turn("agent", turns[-1].text), Turn("business", "Mm-hm."))
    theirs = check_record(args, BOOK, agent)
    assert isinstance(theirs, Refused) and theirs.rule == 1 and "agent's words" in theirs.why


@given(st.integers(6, 11), st.integers(1, 5), st.integers(0, 6), st.integers(1, 4), st.sampled_from(("field", "day", "close")))
@settings(max_examples=100, deadline=None)
def test_hours_changed_in_any_fact_are_refused(opens: int, closes: int, first: int, length: int, change: str) -> None:
    run = DAYS[first:first + length + 1] if first + length < 7 else DAYS[first:]
    days = f"{run[0]} through {run[-1]}" if len(run) > 1 else run[0]
    said = f"{WORDS[opens - 1]} to {WORDS[closes - 1]}"
    turns = call("What are your hours?", f"We're open {said}, {days}.")
    r = {"days": [d.lower() for d in run], "opens": f"{opens:02d}:00", "closes": hhmm(closes, 0), "days_quote": days,
         "times_quote": said}
    assert isinstance(check_record(hours(r), HOURS, turns), Accepted)
    other = DAYS[(DAYS.index(run[-1]) + 1) % 7].lower() if len(run) < 7 else None
    if change == "day" and other:
        r = r | {"days": [*r["days"], other]}
    else:
        r = r | {"closes": hhmm(closes % 11 + 1, 0)} if change == "close" else r | {"opens": f"{opens % 11 + 1:02d}:00"}
    assert isinstance(check_record(hours(r), HOURS, turns), Refused)


@given(st.integers(2, 40), st.integers(1, 9))
def test_a_count_or_an_aisle_changed_is_refused(n: int, by: int) -> None:
    turns = call("Do you have the cast iron skillet?", f"Yes, we have {n} cast iron skillets left.")
    quote = f"we have {n} cast iron skillets left"
    assert isinstance(check_record(stock("limited", quote, n), STOCK, turns), Accepted)
    assert isinstance(check_record(stock("limited", quote, n + by), STOCK, turns), Refused)
    turns = call("Which aisle is the garden hose in?", f"That's in aisle {n}.")
    assert isinstance(check_record(aisle(f"aisle {n}", f"aisle {n}"), AISLE, turns), Accepted)
    assert isinstance(check_record(aisle(f"aisle {n + by}", f"aisle {n}"), AISLE, turns), Refused)


# -- rules, each by what it refuses --------------------------------------------------------------------------


def test_rule_2_a_fact_read_back_stands_in_the_agents_question_just_before_the_outcome() -> None:
    turns = call("Could I get a table for three at 8 tonight?", "Sure, no problem.")
    args = booked(3, "tonight at 8 pm", outcome_quote="Sure, no problem.", party_readback=True, time_readback=True,
                  date_readback=True)
    assert isinstance(check_record(args, BOOK, turns), Accepted)
    assert check_record(args | {"confirmed_party": 4}, BOOK, turns).rule == 2  # type: ignore[union-attr]
    later = (*turns, Turn("agent", "And a high chair?"), Turn("business", "Yes."))
    assert check_record(args | {"outcome_quote": "Yes."}, BOOK, later).rule == 2  # type: ignore[union-attr]
    for yes in ("Mm-hmm.", "Uh-huh."):  # a yes of no word is a quote all the same
        assert isinstance(check_record(args | {"outcome_quote": yes}, BOOK, call(turns[0].text, yes)), Accepted), yes


def test_rule_5_a_number_after_table_is_the_tables_not_the_party() -> None:
    turns = call("A table for 6?", "Six at seven on Friday, you're at table 12 by the window.")
    args = booked(6, "Friday 7pm", outcome_quote="you're at table 12 by the window", party_quote="Six at seven",
                  time_quote="Six at seven on Friday", date_quote="on Friday")
    assert isinstance(check_record(args, BOOK, turns), Accepted)
    assert check_record(args | {"confirmed_party": 12, "party_quote": "table 12"}, BOOK, turns).rule == 5  # type: ignore[union-attr]


def test_rule_3_a_question_or_a_request_to_confirm_is_no_outcome() -> None:
    for said in ("Two at 7 on Friday, is that right?", "Two at 7 on Friday?", "Please confirm two at 7 on Friday."):
        turns = call("A table for two at 7 on Friday?", said)
        got = check_record(booked(2, "Friday at 7 pm", outcome_quote=said.removesuffix(", is that right?"),
                                  party_readback=True, time_readback=True, date_readback=True), BOOK, turns)
        assert isinstance(got, Refused) and got.rule == 3, said
    turns = call("A table for two at 7 on Friday?", "Two at 7 on Friday?", "Yes.", "Done, see you then.")
    args = booked(2, "Friday at 7 pm", outcome_quote="Done", party_quote="Two at 7 on Friday",
                  time_quote="Two at 7 on Friday", date_quote="Two at 7 on Friday")
    assert isinstance(check_record(args, BOOK, turns), Accepted)  # the business read it back, then booked it
    assert check_record(answered(hours=None, outcome_quote="Two at 7 on Friday"), HOURS, turns).rule == 3  # type: ignore[union-attr]


def test_rule_4_a_time_reads_as_a_clock_time_in_its_own_quote() -> None:
    turns = call("A table for 2?", "Your reservation for Friday at 6.45 pm for 6 people has been made.")
    args = booked(6, "Friday at 6:45 pm", outcome_quote="has been made", party_quote="for 6 people",
                  time_quote="Friday at 6.45 pm", date_quote="Friday")
    assert isinstance(check_record(args, BOOK, turns), Accepted)
    # the number of the time is not a party, the party's is not a time
    assert check_record(args | {"confirmed_party": 7, "party_quote": "at 6.45 pm for 6 people"}, BOOK, turns).rule == 5  # type: ignore[union-attr]
    assert check_record(args | {"confirmed_time": "Friday at 6 pm", "time_quote": "for 6 people"}, BOOK, turns).rule == 4  # type: ignore[union-attr]
    bare = call("A table for 3?", "Three at eight thirty, you're booked.")
    assert isinstance(check_record(booked(3, "20:30", outcome_quote="you're booked", party_quote="Three at eight thirty",
                                          time_quote="Three at eight thirty"), BOOK, bare), Accepted)


def test_rule_4_a_time_in_24_hour_words_or_with_ish_reads_as_one() -> None:
    for said, time in (("Monday at nineteen forty-five", "19:45"), ("Monday, twenty-one hours", "21:00"),
                       ("Monday, eight fifteen-ish", "20:15"), ("Monday, twenty hours thirty", "20:30")):
        turns = call("A table for 2?", f"Yes, {said}, for two, it is booked.")
        args = booked(2, f"Monday {time}", outcome_quote="it is booked", party_quote="for two", time_quote=said,
                      date_quote="Monday")
        assert isinstance(check_record(args, BookJob(2, f"Monday {time}", None, 60, E164("+15555550123")), turns), Accepted), said
    assert c.clocks(["we", "close", "21", "hours", "later"]) != [] and c.clocks(["hold", "it", "5", "hours"]) == []
    assert c._counts(["for", "2", "at", "20", "hours", "30"]) == {"2"}  # the minutes are no count
    turns = call("A table for 2?", "Monday at nine and a half, for two, it is booked.")
    for time, stands in (("21:30", True), ("21:00", False)):
        args = booked(2, f"Monday {time}", outcome_quote="it is booked", party_quote="for two",
                      time_quote="Monday at nine and a half", date_quote="Monday")
        assert isinstance(check_record(args, BookJob(2, "Monday 21:30", None, 60, E164("+15555550123")), turns), Accepted) == stands
    turns = call("What are your hours?", "Monday to Friday, nine while five.")
    r = {"days": list(c.WEEKDAYS[:5]), "opens": "09:00", "closes": "17:00", "days_quote": "Monday to Friday",
         "times_quote": "nine while five"}
    assert isinstance(check_record(hours(r), HOURS, turns), Accepted)


def said(text: str) -> list[str]:
    return [t.word for t in c.tokens(text)]


@given(st.integers(13, 23), st.integers(10, 59))
def test_rule_4_a_24_hour_hour_and_its_minutes_are_one_time_with_no_cue_before_them(hour: int, minute: int) -> None:
    # "19 30 sharp": no "at", and a word after that ends no address; an hour past 12 can only be a clock's
    assert [(k.hour, k.minute) for k in c.clocks(said(f"{hour} {minute} sharp"))] == [(hour, minute)]
    turns = call("A table for 2?", f"Two of you on Monday, {hour} {minute} sharp, booked.")
    args = booked(2, f"Monday {hour}:{minute}", outcome_quote="booked", party_quote="Two of you",
                  time_quote=f"{hour} {minute} sharp", date_quote="on Monday")
    assert isinstance(check_record(args, BookJob(2, f"Monday {hour}:{minute}", None, 60, E164("+15555550123")), turns), Accepted)


def test_rule_4_an_hour_and_a_half_is_its_half_past_only_as_a_clock_time() -> None:
    job = BookJob(2, "Monday 21:30", None, 60, E164("+15555550123"))
    for words, booked_at, stands in (("eight and a half", "20:30", True),  # a booking's one time needs no "at"
                                     ("eight and a half", "20:00", False),
                                     ("eight and a half in the morning", "08:30", True),  # its half of the day after it
                                     ("eight and a half in the morning", "20:30", False)):
        turns = call("A table for 2?", f"Monday, {words}, for two, you're booked.")
        args = booked(2, f"Monday {booked_at}", outcome_quote="you're booked", party_quote="for two", time_quote=words,
                      date_quote="Monday")
        assert isinstance(check_record(args, job, turns), Accepted) == stands, (words, booked_at)
    assert [(k.hour, k.minute) for k in c.clocks(said("we shut at ten and a half"))] == [(10, 30)]  # after a cue
    assert c.clocks(said("it takes three and a half weeks")) == []  # no cue, no booking's time: a measure
    assert all(k.minute == 0 for k in c.clocks(said("at 16 and a half")))  # a 24-hour hour takes no "and a half"
    # the half must follow its "and": a later "half" is a time of its own
    turns = call("What are your hours on Saturday?", "Saturday we open at 9 and close by half 5.")
    r = {"days": ["saturday"], "opens": "09:00", "closes": "17:30", "days_quote": "Saturday",
         "times_quote": "we open at 9 and close by half 5"}
    assert isinstance(check_record(hours(r), HOURS, turns), Accepted)


@given(st.integers(1, 11), st.sampled_from((0, 15, 30, 45)), st.integers(0, 23), st.booleans())
def test_rule_4_a_booked_time_said_with_no_half_of_the_day_is_the_half_nearer_the_time_asked(
        hour: int, minute: int, asked: int, pm_said: bool) -> None:
    request = BookJob(2, f"Friday {asked:02d}:00", None, 60, E164("+15555550123"))
    said = f"{hour}:{minute:02d}" + (" pm" if pm_said else "")
    turns = call("A table for 2?", f"Two on Friday at {said}, you're booked.")
    gaps = {h: min(abs((h - asked) * 60 + minute), 1440 - abs((h - asked) * 60 + minute)) for h in (hour, hour + 12)}
    for h in (hour, hour + 12):
        args = booked(2, f"Friday {h:02d}:{minute:02d}", outcome_quote="you're booked", party_quote="Two",
                      time_quote=f"Friday at {said}", date_quote="Friday")
        verdict = check_record(args, request, turns)
        if pm_said:
            assert isinstance(verdict, Accepted) == (h > 12)
        else:
            assert isinstance(verdict, Accepted) == (gaps[h] <= gaps[(hour + hour + 12) - h]), (h, verdict)


def test_rule_4_the_time_asked_says_its_half_of_the_day_by_calld_reading_or_by_the_users_words() -> None:
    turns = call("A table for 2?", "Two on Friday at 7:30, you're booked.")
    line = E164("+15555550123")
    read = "2025-06-13T19:00:00-04:00"  # calld's reading of the user's words, with its half of the day
    for job, halves in ((BookJob(2, "Friday at 7", None, 60, line, when=read), {"07:30": False, "19:30": True}),
                        (BookJob(2, "Friday 7pm", None, 60, line), {"07:30": False, "19:30": True}),  # the user's pm
                        (BookJob(2, "Friday 19:00", None, 60, line), {"07:30": False, "19:30": True}),  # the user's 24 hours
                        (BookJob(2, "Friday at 7", None, 60, line), {"07:30": True, "19:30": True})):  # no half asked: either
        for value, stands in halves.items():
            args = booked(2, f"Friday {value}", outcome_quote="you're booked", party_quote="Two",
                          time_quote="Friday at 7:30", date_quote="on Friday")
            assert isinstance(check_record(args, job, turns), Accepted) == stands, (job, value)
    # a time said in 24 hours says its half, however far it is from the time asked
    turns = call("A table for 2?", "Two on Friday at 19:30, you're booked.")
    args = booked(2, "Friday 19:30", outcome_quote="you're booked", party_quote="Two", time_quote="Friday at 19:30",
                  date_quote="on Friday")
    assert isinstance(check_record(args, BookJob(2, "Friday 7am", None, 60, line), turns), Accepted)


def test_rule_4_a_ranges_opening_is_said_first_unless_a_word_of_closing_comes_before_it() -> None:
    for times, ends in (("9am to 5pm", ("09:00", "17:00")), ("noon to midnight", ("12:00", "00:00")),
                        ("we close at 5pm and open at 9am", ("09:00", "17:00")), ("until 5pm from 9am", ("09:00", "17:00"))):
        turns = call("What are your hours?", f"Daily, {times}.")
        r = {"days": list(c.WEEKDAYS), "opens": ends[0], "closes": ends[1], "days_quote": "Daily", "times_quote": times}
        assert isinstance(check_record(hours(r), HOURS, turns), Accepted), times
        assert isinstance(check_record(hours(r | {"opens": ends[1], "closes": ends[0]}), HOURS, turns), Refused), times
    # a word of opening, or "from", the last before the first time keeps that time the opening
    for times in ("from 9am to 5pm", "we open at 9am and close at 5pm", "opens 9am, closes 5pm"):
        turns = call("What are your hours?", f"Daily, {times}.")
        r = {"days": list(c.WEEKDAYS), "opens": "09:00", "closes": "17:00", "days_quote": "Daily", "times_quote": times}
        assert isinstance(check_record(hours(r), HOURS, turns), Accepted), times
        assert isinstance(check_record(hours(r | {"opens": "17:00", "closes": "09:00"}), HOURS, turns), Refused), times


@given(st.integers(0, 5), st.integers(6, 10), st.integers(1, 6), st.integers(1, 3))
def test_rule_4_days_with_times_in_their_own_clause_take_those(first: int, opens: int, closes: int, by: int) -> None:
    later, other = DAYS[first + 1], (opens + by - 6) % 5 + 6  # another day, another opening
    turns = call("What are your hours?", f"{DAYS[first]} {opens} to {closes}, {later} {other} to {closes}.")
    mine = {"days": [c.WEEKDAYS[first]], "opens": f"{opens:02d}:00", "closes": f"{closes + 12}:00", "days_quote": DAYS[first],
            "times_quote": f"{opens} to {closes}"}
    theirs = {"days": [c.WEEKDAYS[first + 1]], "opens": f"{other:02d}:00", "closes": f"{closes + 12}:00", "days_quote": later,
              "times_quote": f"{other} to {closes}"}
    assert isinstance(check_record(hours(mine, theirs), HOURS, turns), Accepted)
    borrowed = theirs | {"opens": mine["opens"], "times_quote": mine["times_quote"]}  # the first day's times for the later
    assert isinstance(check_record(hours(mine, borrowed), HOURS, turns), Refused)


def test_rule_4_a_bare_half_past_takes_its_hour_from_its_context_quote() -> None:
    turns = call("When do you close on Saturday?", "On Saturday we close at six.", "At six?", "Well, half past.")
    r = {"days": ["saturday"], "closes": "18:30", "days_quote": "On Saturday", "times_quote": "half past"}
    assert isinstance(check_record(hours(r | {"context_quote": "we close at six"}), HOURS, turns), Accepted)
    assert isinstance(check_record(hours(r), HOURS, turns), Refused)


@given(st.integers(0, 6), st.integers(1, 5), st.sampled_from(c.OTHER_DAYS))
def test_rule_5_the_rest_of_the_week_is_the_days_its_turn_names_nowhere_else(first: int, length: int, rest: str) -> None:
    named = [c.WEEKDAYS[(first + k) % 7] for k in range(length)]
    others = [d for d in c.WEEKDAYS if d not in named]
    days = DAYS[first] + (f" to {DAYS[(first + length - 1) % 7]}" if length > 1 else "")
    turns = call("What are your hours?", f"{days} ten till six. {rest.capitalize()} we're closed.")
    opened = {"days": named, "opens": "10:00", "closes": "18:00", "days_quote": days, "times_quote": "ten till six"}
    closed = {"days": others, "closed": True, "days_quote": rest.capitalize(), "times_quote": f"{rest} we're closed"}
    assert isinstance(check_record(hours(opened, closed), HOURS, turns), Accepted)
    for wrong in ([*others[1:], named[0]], others[1:]):  # a day named elsewhere in, or one of the rest left out
        assert isinstance(check_record(hours(opened, closed | {"days": wrong}), HOURS, turns), Refused)
    # the times of the rest, where the days named are said closed: for the rest, not for those
    turns = call("What are your hours?", f"We're closed {days}, {rest} it's ten till six.")
    shut = {"days": named, "closed": True, "days_quote": days, "times_quote": f"We're closed {days}"}
    for its_days, its_words, stands in ((others, rest, True), (named[:1], DAYS[first], False)):
        r = {"days": its_days, "opens": "10:00", "closes": "18:00", "days_quote": its_words,
             "times_quote": f"{rest} it's ten till six"}
        assert isinstance(check_record(hours(shut, r), HOURS, turns), Accepted) == stands, its_days


@pytest.mark.parametrize("phrase", ["rest of the week", "the rest", "other days", "any other day", "other nights",
                                    "otherwise", "the remaining days"])
def test_rule_5_each_way_of_saying_the_other_days_names_them(phrase: str) -> None:
    turns = call("What are your hours?", f"Sundays we're shut; {phrase} we're open noon to ten.")
    shut = {"days": ["sunday"], "closed": True, "days_quote": "Sundays", "times_quote": "Sundays we're shut"}
    rest = {"days": list(c.WEEKDAYS[:6]), "opens": "12:00", "closes": "22:00", "days_quote": phrase, "times_quote": "noon to ten"}
    assert isinstance(check_record(hours(shut, rest), HOURS, turns), Accepted)


def test_rule_5_the_other_days_are_those_named_before_or_after_them_and_a_day_set_apart_stays_apart() -> None:
    turns = call("What are your hours?", "Otherwise we're closed. Saturday and Sunday we're open ten till four.")
    weekend = {"days": ["saturday", "sunday"], "opens": "10:00", "closes": "16:00", "days_quote": "Saturday and Sunday",
               "times_quote": "ten till four"}
    for shut, stands in ((list(c.WEEKDAYS[:5]), True), (list(c.WEEKDAYS[:6]), False)):
        closed = {"days": shut, "closed": True, "days_quote": "Otherwise", "times_quote": "Otherwise we're closed"}
        assert isinstance(check_record(hours(weekend, closed), HOURS, turns), Accepted) == stands, shut
    # alone, so that no other range of the record holds them: the days named after "otherwise" are not among its days
    assert isinstance(check_record(hours(closed | {"days": list(c.WEEKDAYS)}), HOURS, turns), Refused)
    turns = call("What are your hours?", "Monday we're shut. The rest, except Sunday, nine till five.")
    monday = {"days": ["monday"], "closed": True, "days_quote": "Monday", "times_quote": "Monday we're shut"}
    rest = {"days": list(c.WEEKDAYS[1:6]), "opens": "09:00", "closes": "17:00", "days_quote": "The rest, except Sunday",
            "times_quote": "nine till five"}
    assert isinstance(check_record(hours(monday, rest), HOURS, turns), Accepted)
    # alone again: the day named before "the rest" is not among its days
    assert isinstance(check_record(hours(rest | {"days": list(c.WEEKDAYS[:6])}), HOURS, turns), Refused)
    # a times quote that says "otherwise" names the other days: it gives no times to a day said apart from it
    turns = call("What are your hours?", "Otherwise we open eight till eight. Sunday is brunch only.")
    others = {"days": list(c.WEEKDAYS[:6]), "opens": "08:00", "closes": "20:00", "days_quote": "Otherwise",
              "times_quote": "Otherwise we open eight till eight"}
    assert isinstance(check_record(hours(others), HOURS, turns), Accepted)
    got = check_record(hours(others | {"days": ["sunday"], "days_quote": "Sunday"}), HOURS, turns)
    assert isinstance(got, Refused) and got.rule == 5, got


def test_rule_5_a_day_set_apart_is_not_among_the_days() -> None:
    turns = call("What are your hours?", "We're open nine to five every day except Sunday.")
    r = {"opens": "09:00", "closes": "17:00", "days_quote": "every day except Sunday", "times_quote": "nine to five"}
    assert isinstance(check_record(hours(r | {"days": list(c.WEEKDAYS[:6])}), HOURS, turns), Accepted)
    # a day the quote names and the record leaves out, with no hours of its own, is refused
    assert check_record(hours(r | {"days": ["monday", "saturday"]}), HOURS, turns).rule == 5  # type: ignore[union-attr]
    for apart in c.SET_APART - {"other", "apart", "closed", "not"}:
        said = call("Hours?", f"Nine to five, Monday to Saturday {apart} Wednesday.")
        q = {"opens": "09:00", "closes": "17:00", "days_quote": "Monday to Saturday", "times_quote": "Nine to five"}
        assert isinstance(check_record(hours(q | {"days": ["wednesday"]}), HOURS, said), Refused), apart


def test_rule_5_a_place_stands_in_its_words() -> None:
    turns = call("Where's the garden hose?", "The garden hoses are in plumbing.")
    assert isinstance(check_record(aisle("plumbing department", "The garden hoses are in plumbing"), AISLE, turns), Accepted)
    assert isinstance(check_record(aisle("lumber department", "The garden hoses are in plumbing"), AISLE, turns), Refused)


def test_rule_6_stock_names_the_item_or_answers_the_question_that_does() -> None:
    asked = "Do you have the 12 inch cast iron skillet?"
    job = QuickAskJob(QuestionType.STOCK, "12 inch cast iron skillet")
    assert isinstance(check_record(stock("limited", "probably three or four left"), job,
                                   call(asked, "Yep, probably three or four left.")), Accepted)
    got = check_record(stock("limited", "we have 3", 3), job, call(asked, "Hmm, the 10 inch, we have 3."))
    assert isinstance(got, Refused) and got.rule == 6
    got = check_record(stock("in_stock", "we have plenty"), job, call("Hi there.", "Hello, we have plenty."))
    assert isinstance(got, Refused) and got.rule == 6


@given(st.sampled_from((("enamel", "bare"), ("black", "red"), ("small", "large"))), st.booleans(), st.integers(2, 30))
def test_rule_6_a_question_back_and_the_agents_choice_stand_between_the_ask_and_the_answer(
        kinds: tuple[str, str], first: bool, n: int) -> None:
    mine, other = kinds if first else kinds[::-1]
    turns = call("Which aisle is the garden hose in?", f"The {kinds[0]} or the {kinds[1]}?", f"The {mine} one.",
                 f"The {mine} is aisle {n}. The {other} is in the yard.")
    assert isinstance(check_record(aisle(f"aisle {n}", f"aisle {n}"), AISLE, turns), Accepted)
    assert isinstance(check_record(aisle("the yard", f"The {other} is in the yard"), AISLE, turns), Refused)  # not the choice
    unasked = call("Hi, is this Hardware Plus?", f"The {kinds[0]} or the {kinds[1]}?", f"The {mine} one.",
                   f"The {mine} is aisle {n}.")
    assert isinstance(check_record(aisle(f"aisle {n}", f"aisle {n}"), AISLE, unasked), Refused)  # no question named the item


def test_rule_7_closed_around_the_clock_and_no_set_hours_need_their_words() -> None:
    for words, field in ((c.CLOSED, "closed"), (c.ALWAYS, "around_the_clock")):
        for w in words:
            turns = call("Hours on Sunday?", f"On Sunday we're {w}.")
            r = {"days": ["sunday"], "days_quote": "On Sunday", "times_quote": f"we're {w}", field: True}
            assert isinstance(check_record(hours(r), HOURS, turns), Accepted), w
        turns = call("Hours on Sunday?", "On Sunday we're around.")
        r = {"days": ["sunday"], "days_quote": "On Sunday", "times_quote": "we're around", field: True}
        assert check_record(hours(r), HOURS, turns).rule == 7  # type: ignore[union-attr]
    for w in c.NO_SET_HOURS:
        args = answered(hours={"ranges": [], "no_set_hours": True, "no_set_hours_quote": f"it's {w}"})
        assert isinstance(check_record(args, HOURS, call("Hours?", f"Oh, it's {w}.")), Accepted), w
    args = answered(hours={"ranges": [], "no_set_hours": True, "no_set_hours_quote": "it's open"})
    assert check_record(args, HOURS, call("Hours?", "Oh, it's open.")).rule == 7  # type: ignore[union-attr]


def test_rules_8_and_9_a_yes_holds_no_no_and_a_no_holds_one() -> None:
    asked = "Do you have the cast iron skillet?"
    for no in [*c.NOT, "don't", *c.OUT]:
        said = f"we have {no} cast iron skillets"
        assert check_record(stock("in_stock", said), STOCK, call(asked, said)).rule == 8, no  # type: ignore[union-attr]
        assert isinstance(check_record(stock("out_of_stock", said), STOCK, call(asked, said)), Accepted), no
    assert check_record(stock("out_of_stock", "we have cast iron skillets"), STOCK,  # type: ignore[union-attr]
                        call(asked, "we have cast iron skillets")).rule == 9
    for past in c.PAST:
        said = f"the skillets {past} be in aisle 4"
        assert check_record(aisle("aisle 4", said), QuickAskJob(QuestionType.AISLE, "skillet"),  # type: ignore[union-attr]
                            call("Where are skillets?", said)).rule == 8, past
    for failure in c.FAILURE:
        said = f"we're {failure} for that"
        assert isinstance(check_record(declined(said), BOOK, call("Table for 2?", said)), Accepted), failure
        assert check_record(booked(2, "7 pm", outcome_quote=said, party_readback=True, time_readback=True),  # type: ignore[union-attr]
                            BOOK, call("Table for 2 at 7?", said)).rule == 8, failure
    assert check_record(declined("see you then"), BOOK, call("Table for 2?", "see you then")).rule == 9  # type: ignore[union-attr]


def test_rule_10_a_failure_after_the_booked_outcome_refuses_it_unless_the_time_is_said_again() -> None:
    args = booked(2, "Friday at 7 pm", outcome_quote="you're booked", party_quote="2 at 7 on Friday",
                  time_quote="2 at 7 on Friday", date_quote="2 at 7 on Friday")
    ok = call("A table please.", "2 at 7 on Friday, you're booked.")
    assert isinstance(check_record(args, BOOK, ok), Accepted)
    for after in ("Oh sorry, that failed.", "Hmm, I couldn't book it after all.", "Sorry, there's no table at all."):
        got = check_record(args, BOOK, (*ok, Turn("agent", "Thanks."), Turn("business", after)))
        assert isinstance(got, Refused) and got.rule == 10, after
    again = (*ok, Turn("agent", "Thanks."), Turn("business", "Sorry, the system failed. Ok, it is in, at 7 on Friday."))
    assert isinstance(check_record(args, BOOK, again), Accepted)
    # a no said by a word of GONE before a read-back booking's "yes" (its farewell); a gone of another time is none
    read_back = booked(2, "Friday at 7 pm", outcome_quote="Take care now", party_readback=True, time_readback=True,
                       date_readback=True)
    for said, stands in (("Friday's gone, sorry. Take care now.", False), ("The 8 o'clock is gone. 7 is fine. Take care now.", True),
                         ("Sure thing, youre all booked. Take care now.", True), ("Sure, that's all booked. Take care now.", True)):
        got = check_record(read_back, BOOK, call("Could I get a table for 2 at 7 on Friday?", said))
        assert isinstance(got, Accepted) == stands, (said, got)


def test_rule_10_a_no_said_before_the_outcome_in_its_turn_refuses_it_unless_the_time_is_said() -> None:
    readback = {"party_readback": True, "time_readback": True, "date_readback": True}
    for said, outcome in (("We don't do reservations. Walk up whenever.", "Walk up whenever"),
                          ("We don't do reservations, walk up whenever.", "walk up whenever")):
        turns = call("A table for two at 7 on Friday?", said)
        got = check_record(booked(2, "Friday 19:00", outcome_quote=outcome, **readback), BOOK, turns)
        assert isinstance(got, Refused) and got.rule == 10, said
    # the no was of another time, and the outcome says the booked one
    turns = call("A table for two at 7 on Friday?", "No table at 7, sorry. I've put you in at 8 on Friday for two.")
    args = booked(2, "Friday 20:00", outcome_quote="I've put you in at 8 on Friday for two", time_quote="at 8",
                  party_quote="for two", date_quote="on Friday")
    assert isinstance(check_record(args, BOOK, turns), Accepted)


def test_rule_11_a_later_correction_refuses_the_earlier_value() -> None:
    turns = call("Which aisle is the garden hose in?", "Aisle five, no sorry, six.")
    assert check_record(aisle("aisle 5", "Aisle five"), AISLE, turns).rule == 11  # type: ignore[union-attr]
    assert isinstance(check_record(aisle("aisle 6", "six"), AISLE, turns), Accepted)
    for word in c.CORRECTIONS:
        said = call("What time do you close?", f"We close at 9. {word.capitalize()}, 8.")
        r = {"closes": "21:00", "times_quote": "We close at 9"}
        assert check_record(hours(r), HOURS, said).rule == 11, word  # type: ignore[union-attr]
    other_day = call("What time do you close?", "We close at 9 on weekdays. Sorry, on Sunday at 6.")
    r = {"days": list(c.WEEKDAYS[:5]), "closes": "21:00", "times_quote": "We close at 9", "days_quote": "on weekdays"}
    assert isinstance(check_record(hours(r), HOURS, other_day), Accepted)


def test_rule_12_voicemail_needs_a_recorded_greeting_or_the_carriers_detection() -> None:
    args = answered(status="voicemail", answer_text=None)
    assert isinstance(check_record(args, HOURS, call("Hi.", "Please leave a message after the tone.")), Accepted)
    assert check_record(args, HOURS, call("Hi.", "Hello, Joe's.")).rule == 12  # type: ignore[union-attr]
    assert isinstance(check_record(args, HOURS, call("Hi.", "Hello, Joe's."), machine="machine"), Accepted)


def test_the_entry_point_takes_the_json_as_sent_and_refuses_what_the_schema_refuses() -> None:
    got = check_record('{"status": "booked"}', BOOK, call("Hi.", "Hello."))
    assert isinstance(got, Refused) and got.rule == 0 and got.text.startswith("rule 0: invalid arguments")
    assert "confirmed_party" in got.text  # it names what to send: a field the schema requires
    said = call("Hi.", "Please don't call this number again. We're full.")
    got = check_record(declined("We're full") | {"opt_out_quote": "don't call this number again"}, BOOK, said)
    assert isinstance(got, Accepted) and got.opt_out is not None and got.reason == "fully_booked"


def test_word_lists_are_short() -> None:
    """Every word list, found by its shape (a public upper-case name of a tuple, set or dict), in the check and the two
    readers it rests on (tokens; spoken, which reads clock times and days), the calendar aside, and NOT_A_NAME, the
    union of lists checked here (CLOCK_CUES, RUNS, the weekdays, NAME_ENDS)."""
    lists = {name: v for name, v in (vars(c) | vars(tokens) | vars(spoken)).items() if name.isupper() and not name.startswith("_")
             and isinstance(v, (tuple, frozenset, dict)) and not name.startswith(("WEEKDAYS", "MONTHS")) and name != "NOT_A_NAME"}
    assert {"CLOCK_CUES", "DAY_GROUPS", "NAME_ENDS", "STREETS", "DAYPARTS"} <= set(lists)
    assert {"FILLERS", "GONE", "OFFERS", "FULL", "NOT"} <= set(lists) and len(lists) >= 26
    assert all(len(x) <= 15 for x in lists.values()), {n: len(x) for n, x in lists.items() if len(x) > 15}


# -- the reducer checks a record through the entry point, on the arguments as sent -------------------------------


def _recorded(call_id: str, args: dict[str, Any]) -> Any:
    from calld.adapters import gpt_live

    raw = json.dumps(args)
    return gpt_live.recorded(call_id, gpt_live.read_record(raw, "quick_ask"), raw)


def test_the_reducer_takes_or_refuses_a_per_fact_record_by_the_entry_point() -> None:
    from calld.core import events as ev
    from calld.core.effects import SendToolOutput
    from tests.core_helpers import HEARD, drive

    r = {"days": list(c.WEEKDAYS[:6]), "opens": "09:00", "closes": "17:00", "days_quote": "Monday to Saturday",
         "times_quote": "nine to five"}
    run = drive(HEARD)
    (out, *_) = run.feed(_recorded("fc_1", hours(r | {"closes": "18:00"})))
    assert isinstance(out, SendToolOutput) and "rule 4" in out.output and run.call.task is None
    run.feed(ev.ResponseDone("completed"))
    (out, *_) = run.feed(_recorded("fc_2", hours(r)))
    assert isinstance(out, SendToolOutput) and json.loads(out.output)["recorded"] is True
    assert run.call.task is not None and run.call.verdict is not None
    assert [q.text for q in run.call.verdict.quotes] == ["We're open nine to five, Monday to Saturday."]


def test_an_answer_pointing_at_no_words_is_refused_and_a_read_back_stock_answers_a_question_naming_the_item() -> None:
    turns = call("Do you have the cast iron skillet?", "Yes, we do.")
    assert check_record(answered(), STOCK, turns).rule == 1  # type: ignore[union-attr]
    assert isinstance(check_record(answered(outcome_quote="Yes, we do"), STOCK, turns), Accepted)
    back = stock("in_stock", None, readback=True) | {"outcome_quote": "Yes, we do"}
    assert isinstance(check_record(back, STOCK, turns), Accepted)
    assert check_record(back, STOCK, call("Do you have the dutch oven?", "Yes, we do.")).rule == 6  # type: ignore[union-attr]


def test_rule_4_a_number_that_begins_an_address_is_no_time_nor_count() -> None:
    ok = call("A table for 3 at 11:15 today?", "Your table for 3 today at 11:15 am is booked. We're at 5 Elm Parkway.")
    args = booked(3, "today at 11:15 am", outcome_quote="is booked", party_quote="Your table for 3 today at 11:15 am",
                  time_quote="Your table for 3 today at 11:15 am", date_quote="Your table for 3 today at 11:15 am")
    assert isinstance(check_record(args, BOOK, ok), Accepted)
    # an address is no count either: a party of 5 does not stand in it
    assert check_record(args | {"confirmed_party": 5, "party_quote": "We're at 5 Elm Parkway"}, BOOK, ok).rule == 5  # type: ignore[union-attr]
    # a time said before other words is still a time ("at 5 on Elm Street")
    late = (*ok, Turn("agent", "Great."), Turn("business", "Sorry, make that at 5 on Elm Street."))
    assert check_record(args, BOOK, late).rule == 11  # type: ignore[union-attr]


def test_rule_8_not_open_or_close_until_a_time_is_the_time_not_a_no() -> None:
    for said in ("We don't close until 9", "we do not open until 9 am"):
        r = {"closes": "21:00"} if "close" in said else {"opens": "09:00"}
        got = check_record(hours(r | {"times_quote": said}), HOURS, call("What are your hours?", said + "."))
        assert isinstance(got, Accepted), said
    assert check_record(hours({"closes": "21:00", "times_quote": "we don't close at 9"}), HOURS,  # type: ignore[union-attr]
                        call("What are your hours?", "No, we don't close at 9.")).rule == 8


def test_rule_3_a_question_joined_by_and_is_a_clause_of_its_own() -> None:
    said = "Sorry, I couldn't get you a table and can I help with anything else?"
    assert isinstance(check_record(declined("I couldn't get you a table"), BOOK, call("Table for 2?", said)), Accepted)
    asked = "Sorry, I couldn't get you a table at 7 pm?"
    assert check_record(declined("I couldn't get you a table at 7 pm"), BOOK, call("Table for 2?", asked)).rule == 3  # type: ignore[union-attr]


def test_rule_4_a_booked_time_of_no_clock_words_stands_by_its_words() -> None:
    said = call("A table for 2 on Friday?", "On Friday I can give you the early sitting, you're booked.")
    args = booked(2, "Friday, the early sitting", outcome_quote="you're booked", party_readback=True,
                  time_quote="I can give you the early sitting", date_quote="On Friday")
    assert isinstance(check_record(args, BOOK, said), Accepted)
    assert check_record(args | {"confirmed_time": "Friday, the late sitting"}, BOOK, said).rule == 4  # type: ignore[union-attr]
    assert check_record(args | {"confirmed_time": "Friday"}, BOOK, said).rule == 4  # type: ignore[union-attr]


def test_rule_9_an_answers_outcome_says_no_only_of_stock_out_and_need_only_be_said_of_hours() -> None:
    asked = "Do you have the cast iron skillet?"
    said = "We've got none at the moment."
    q = "We've got none at the moment"
    assert isinstance(check_record(stock("out_of_stock", q) | {"outcome_quote": said}, STOCK, call(asked, said)), Accepted)
    assert check_record(stock("in_stock", q) | {"outcome_quote": said}, STOCK, call(asked, said)).rule == 8  # type: ignore[union-attr]
    assert isinstance(check_record(stock("out_of_stock", "on back order"), STOCK, call(asked, "That one's on back order.")), Accepted)
    moved = "We don't open at nine anymore, we open at ten now."
    r = {"opens": "10:00", "times_quote": "we open at ten now"}
    assert isinstance(check_record(hours(r) | {"outcome_quote": moved}, HOURS, call("Hours?", moved)), Accepted)


def test_rule_8_reads_the_no_in_the_quotes_clause() -> None:
    said = "We don't open at nine anymore, we open at ten now."
    got = check_record(hours({"opens": "09:00", "times_quote": "open at nine"}), HOURS, call("Hours?", said))
    assert isinstance(got, Refused) and got.rule == 8
    but = "Not on Sundays, but we open at nine."
    assert isinstance(check_record(hours({"opens": "09:00", "times_quote": "we open at nine"}), HOURS, call("Hours?", but)), Accepted)


def test_rule_4_a_ranges_days_and_times_have_no_other_day_or_number_between_them() -> None:
    said = call("Hours?", "We're open 9 to 5 on weekdays, and 10 to 2 on Saturdays.")
    wrong = {"days": ["saturday"], "opens": "09:00", "closes": "17:00", "days_quote": "Saturdays", "times_quote": "9 to 5"}
    got = check_record(hours(wrong), HOURS, said)
    assert isinstance(got, Refused) and got.rule == 5  # its clause gives 9 to 5 to the weekdays
    most = call("Hours?", "We're open 9 to 5 most days, and 10 to 2 on Saturdays.")
    got = check_record(hours(wrong), HOURS, most)
    assert isinstance(got, Refused) and got.rule == 4
    right = {"days": ["saturday"], "opens": "10:00", "closes": "14:00", "days_quote": "Saturdays", "times_quote": "10 to 2"}
    assert isinstance(check_record(hours(right), HOURS, said), Accepted)


def test_rule_5_and_6_an_items_place_points_at_one_number() -> None:
    job = QuickAskJob(QuestionType.AISLE, "claw hammer")
    said = call("Which aisle are the claw hammers in?", "The paint is in aisle 3 and the claw hammers are in aisle 12.")
    got = check_record(aisle("aisle 3", "The paint is in aisle 3"), job, said)
    assert isinstance(got, Refused) and got.rule == 6
    got = check_record(aisle("aisle 3", "The paint is in aisle 3 and the claw hammers are in aisle 12"), job, said)
    assert isinstance(got, Refused) and got.rule == 5
    assert isinstance(check_record(aisle("aisle 12", "the claw hammers are in aisle 12"), job, said), Accepted)
    moved = call("Where's the claw hammer?", "It used to be in aisle 5 but we moved it to aisle 9.")
    assert isinstance(check_record(aisle("aisle 9", "we moved it to aisle 9"), job, moved), Accepted)


def test_rule_11_a_read_back_party_answered_with_another_number_is_refused() -> None:
    args = booked(2, "Friday at 7 pm", outcome_quote="You're all booked", party_readback=True, time_readback=True,
                  date_readback=True)
    asked = "So a table for 2 on Friday at 7 pm, is that right?"
    assert isinstance(check_record(args, BOOK, call(asked, "Yes, that's right. You're all booked.")), Accepted)
    got = check_record(args, BOOK, call(asked, "Yes, that's right, a table for four at seven on Friday. You're all booked."))
    assert isinstance(got, Refused) and got.rule == 11


def test_rule_8_a_no_after_and_is_another_clause() -> None:
    said = "Your table is booked and they don't have live music."
    args = booked(2, "Friday at 7 pm", outcome_quote="Your table is booked", party_readback=True, time_readback=True,
                  date_readback=True)
    assert isinstance(check_record(args, BOOK, call("So a table for 2 on Friday at 7 pm?", said)), Accepted)
    args = booked(2, "Friday at 7 pm", outcome_quote="booked", party_readback=True, time_readback=True, date_readback=True)
    got = check_record(args, BOOK, call("So a table for 2 on Friday at 7 pm?", "It's not booked and we're sorry."))
    assert isinstance(got, Refused) and got.rule == 8


def test_a_correction_after_a_range_is_read_not_raised() -> None:
    """ "Monday to Friday we're 9 to 5. Sorry, 6.": the range's check once rebound the name of the record's counts to
    None (its days' own times: none), and the correction's bare number then raised TypeError inside a live call. The
    correction refuses the record (rule 11); the corrected record stands."""
    turns = call("What are your hours?", "Monday to Friday we're 9 to 5. Sorry, 6.")
    r = {"days": list(c.WEEKDAYS[:5]), "opens": "09:00", "closes": "17:00", "days_quote": "Monday to Friday", "times_quote": "9 to 5"}
    assert check_record(hours(r), HOURS, turns).rule == 11  # type: ignore[union-attr]


def test_docs_state_the_rules_word_for_word() -> None:
    """docs/evidence.md says exactly what is checked: its twelve rules are check.py's header, word for word."""
    header = (c.__doc__ or "")
    rules = header[header.index(" 1. Said."):].strip()
    docs = (pathlib.Path(__file__).parent.parent / "docs" / "evidence.md").read_text()
    assert " ".join(rules.split()) in " ".join(docs.split())
    forms = (spoken.__doc__ or "")[(spoken.__doc__ or "").index("Clock times (clocks):"):]  # the forms rules 4 and 5 read
    assert " ".join(forms.split()) in " ".join(docs.split())
