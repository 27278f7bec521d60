"""General forms of the evidence check (calld.evidence.check_record) for the quick asks, found on fresh corpora written
outside the project (docs/evidence.md): a wait before the answer, a run of days said loosely, one week's day, a
closing said with its day, "two" heard for "to", a quote that stops inside a time. Each a form, not a sentence, with
the rule it belongs to; the first forms are in tests/test_check_forms.py."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from calld.core.plan import QuickAskJob
from calld.domain.questions import QuestionType
from calld.domain.spoken import clocks, days_in
from calld.evidence import Accepted, check_record
from tests.records import BOOK, HOURS, aisle, booked, call, hours, stock

WEEK = ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"]
SHOVELS = QuickAskJob(QuestionType.STOCK, "snow shovels")


@given(st.sampled_from(("Hang on, let me look", "Hold on, I'll check", "Bear with me", "One sec, let me check the back",
                        "Which ones, the steel? Hang on, I'll look")))  # a wait may ask too: no question back to choose by
def test_rule_6_a_wait_that_names_the_item_and_its_sure_are_passed_over(wait: str) -> None:
    """"Snow shovels. Hang on." / "Sure." / "Yeah we do.": the answer after a wait is of the item the wait named."""
    turns = call("Do you have snow shovels in stock?", f"Snow shovels. {wait}.", "Sure.", "Yeah we do, going fast.")
    assert isinstance(check_record(stock("in_stock", "Yeah we do"), SHOVELS, turns), Accepted)
    unnamed = call("Do you have snow shovels in stock?", f"{wait}.", "Sure.", "Yeah we do, going fast.")
    assert check_record(stock("in_stock", "Yeah we do"), SHOVELS, unnamed).rule == 6  # type: ignore[union-attr]


@pytest.mark.parametrize("said", ["Monday straight through Saturday", "Monday right through Saturday",
                                  "Monday through to Saturday"])
def test_rule_5_a_run_of_days_with_a_word_inside_it(said: str) -> None:
    turns = call("What are your hours?", f"We're open ten to six, {said}.")
    run = {"days": WEEK[:6], "opens": "10:00", "closes": "18:00", "days_quote": said, "times_quote": "ten to six"}
    assert isinstance(check_record(hours(run), HOURS, turns), Accepted)
    assert check_record(hours(run | {"days": WEEK[:5]}), HOURS, turns).rule == 5  # type: ignore[union-attr]
    assert days_in("monday closed through friday".split()) == {"monday"}  # a word that sets a day apart makes no run


@pytest.mark.parametrize("which", ["this", "next", "first", "last"])
def test_rule_5_a_day_of_one_week_is_not_set_apart_from_a_run(which: str) -> None:
    """"Monday to Saturday 8 till 5, but this Monday we're shut": a date, not every Monday set apart."""
    run = {"days": WEEK[:6], "opens": "08:00", "closes": "17:00", "days_quote": "Monday to Saturday", "times_quote": "eight till five"}
    dated = call("What are your hours?", f"Monday to Saturday eight till five, but {which} Monday we're shut.")
    assert isinstance(check_record(hours(run), HOURS, dated), Accepted)
    every = call("What are your hours?", "Monday to Saturday eight till five, but Monday we're shut.")
    assert check_record(hours(run), HOURS, every).rule == 5  # type: ignore[union-attr]


def test_rule_7_a_date_said_closed_in_its_clause_has_no_hours() -> None:
    turns = call("What are your hours?", "Nine to five every day, but this Monday we're shut for the bank holiday.")
    said = {"date": "this Monday", "days_quote": "this Monday"}
    opened = hours(said | {"opens": "09:00", "closes": "17:00", "times_quote": "Nine to five"})
    assert check_record(opened, HOURS, turns).rule == 7  # type: ignore[union-attr]
    assert isinstance(check_record(hours(said | {"closed": True, "times_quote": "we're shut"}), HOURS, turns), Accepted)


@given(st.sampled_from(("We close Sundays", "We close on Mondays", "We close Christmas Day", "The shop closes Sundays")))
def test_rule_7_close_said_with_its_day_and_no_time_is_closed(said: str) -> None:
    day = said.split()[-1].removesuffix("s").lower()
    closed = hours({"days": [day] if day in WEEK else [], "date": None if day in WEEK else "December 25", "closed": True,
                    "days_quote": said.split(" ", 2)[-1].removeprefix("on "), "times_quote": said})
    assert isinstance(check_record(closed, HOURS, call("What are your hours?", f"Nine to five. {said}.")), Accepted)
    for more in (" at 4", " in January", " a bit earlier"):  # the day must end its clause: a time, a season, a "how" are more
        assert check_record(closed, HOURS, call("What are your hours?", f"Nine to five. {said}{more}.")).rule == 7  # type: ignore[union-attr]


@pytest.mark.parametrize(("said", "opens", "closes"), [("nine two six", "09:00", "18:00"), ("eight two noon", "08:00", "12:00"),
                                                       ("half nine two five", "09:30", "17:00")])
def test_rule_4_two_heard_for_to_between_two_times(said: str, opens: str, closes: str) -> None:
    turns = call("What are your hours?", f"Yeah so we're {said} weekdays.")
    run = {"days": WEEK[:5], "opens": opens, "closes": closes, "days_quote": "weekdays", "times_quote": said}
    assert isinstance(check_record(hours(run), HOURS, turns), Accepted)
    assert check_record(hours(run | {"closes": "14:00"}), HOURS, turns).rule == 4  # type: ignore[union-attr]


@pytest.mark.parametrize(("sentence", "cut", "ends", "whole"), [
    ("Weekdays we're 9 to 5 30.", "9 to 5", ("09:00", "17:00"), ("9 to 5 30", "17:30")),
    ("Weekdays we're nine to five thirty.", "nine to five", ("09:00", "17:00"), ("nine to five thirty", "17:30")),
    ("Weekdays 10 to 4 days a week.", "10 to 4", ("10:00", "16:00"), None)])
def test_rule_4_a_times_quote_that_stops_inside_a_time_or_a_measure(sentence: str, cut: str, ends: tuple[str, str],
                                                                    whole: tuple[str, str] | None) -> None:
    turns = call("What are your hours?", sentence)
    run = {"days": WEEK[:5], "opens": ends[0], "closes": ends[1], "days_quote": "Weekdays", "times_quote": cut}
    assert check_record(hours(run), HOURS, turns).rule == 4  # type: ignore[union-attr]
    if whole is not None:  # the whole time quoted stands
        assert isinstance(check_record(hours(run | {"times_quote": whole[0], "closes": whole[1]}), HOURS, turns), Accepted)
    assert clocks("open 4 days a week".split()) == []  # a number before "days" counts them


@pytest.mark.parametrize(("said", "time", "quote"), [("At one fifteen 10 people", "1:15", "At one fifteen"), ("At seven, 10 people", "7:00", "At seven")])
def test_rule_4_a_number_after_a_times_minutes_or_a_comma_starts_something_else(said: str, time: str, quote: str) -> None:
    turns = call("A table for ten on Monday?", f"{said} on Monday, you're all set.")
    args = booked(10, f"Monday at {time} pm", outcome_quote="you're all set", party_quote="10 people", time_quote=quote, date_quote="on Monday")
    assert isinstance(check_record(args, BOOK, turns), Accepted)


def test_rule_11_a_correction_counts_after_the_ranges_times_and_days() -> None:
    """"10 to 6 Monday through Saturday, and Sunday 11 to, oh no wait, noon to 5": Sunday's correction, not theirs."""
    run = {"days": WEEK[:6], "opens": "10:00", "closes": "18:00", "days_quote": "Monday through Saturday", "times_quote": "ten to six"}
    sunday = call("What are your hours?", "We're open ten to six Monday through Saturday, and Sunday eleven to, "
                                          "oh no wait, sorry, Sundays it's noon to five now.")
    assert isinstance(check_record(hours(run), HOURS, sunday), Accepted)
    theirs = call("What are your hours?", "We're open ten to six Monday through Saturday, oh no wait, sorry, half nine to six.")
    assert check_record(hours(run), HOURS, theirs).rule == 11  # type: ignore[union-attr]


def test_rule_4_days_after_but_with_times_of_their_own_take_those() -> None:
    turns = call("What are your hours?", "Weekdays 8 to 5 but Saturday 9 to 12.")
    saturday = {"days": ["saturday"], "opens": "08:00", "closes": "17:00", "days_quote": "Saturday", "times_quote": "8 to 5"}
    assert check_record(hours(saturday), HOURS, turns).rule == 5  # type: ignore[union-attr]  # its clause's days are the weekdays
    bare = call("What are your hours?", "Usually 8 to 5, but Saturday 9 to 12.")
    assert check_record(hours(saturday), HOURS, bare).rule == 4  # type: ignore[union-attr]
    assert isinstance(check_record(hours(saturday | {"opens": "09:00", "closes": "12:00", "times_quote": "9 to 12"}), HOURS, turns), Accepted)


def test_spoken_days_and_times_said_loosely() -> None:
    """"Monday threw Friday" (speech-to-text's "through"), "quarter tae twelve" (Scots "to"), "365 days a year"."""
    assert days_in("monday threw friday".split()) == set(WEEK[:5])
    assert [(c.hour, c.minute) for c in clocks("till quarter tae 12".split())] == [(11, 45)]
    assert days_in("open 365 days a year".split()) == set(WEEK)


def test_rule_6_a_wait_names_the_item_by_its_words_not_its_size() -> None:
    melt = QuickAskJob(QuestionType.STOCK, "ice melter 10 kg bag")
    turns = call("Do you have ice melter, the ten kilo bag?", "Oh ice melt, flying off the shelves. Just a sec, I'll check.",
                 "Thank you.", "Okay so it's zero in store for the ten kilo, sorry.")
    assert isinstance(check_record(stock("out_of_stock", "zero in store for the ten kilo"), melt, turns), Accepted)


def test_rule_6_a_question_back_need_not_end_its_turn() -> None:
    """"Is this for Eastgate or downtown? 'Cause this line rings both." / "Downtown." / "Downtown they're in 32.\""""
    strips = QuickAskJob(QuestionType.AISLE, "Command strips")
    def said(choice: str) -> tuple:
        return call("Which aisle are Command strips in?", "Command strips. Is this for Eastgate or downtown? 'Cause this line rings both.",
                    f"{choice}, please.", "Okay, downtown they're in aisle thirty-two with the hooks.")
    record = aisle("aisle 32", "downtown they're in aisle thirty-two")
    assert isinstance(check_record(record, strips, said("Downtown")), Accepted)
    assert check_record(record, strips, said("Eastgate")).rule == 6  # type: ignore[union-attr]


def test_rule_4_days_whose_clause_says_the_same_times_again() -> None:
    every = {"days": WEEK, "opens": "07:00", "closes": "22:00", "days_quote": "every day", "times_quote": "Seven in the morning till ten at night"}
    again = call("What are your hours?", "Oh right, we're seven till ten every day. Seven in the morning till ten at night.")
    assert isinstance(check_record(hours(every), HOURS, again), Accepted)
    other = call("What are your hours?", "Oh right, we're seven till nine every day. Seven in the morning till ten at night.")
    assert check_record(hours(every), HOURS, other).rule == 4  # type: ignore[union-attr]
    part = {"days": ["saturday"], "opens": "08:00", "closes": "14:00", "days_quote": "Saturday", "times_quote": "Eight to two"}
    once = call("What are your hours?", "Eight to two. Saturday from eight.")  # one of its times is not all of them
    assert check_record(hours(part), HOURS, once).rule == 4  # type: ignore[union-attr]


@pytest.mark.parametrize(("said", "quote", "context", "ends"), [
    ("Ten till six. Thursdays till eight.", "Thursdays till eight", "Ten till six", ("10:00", "20:00")),
    ("We close at ten every night. Sundays we open from noon.", "Sundays we open from noon", "We close at ten", ("12:00", "22:00")),
    ("We open at twelve. Sunday to Thursday we close at half eleven.", "Sunday to Thursday we close at half eleven",
     "We open at twelve", ("12:00", "23:30"))])
def test_rule_4_one_end_alone_takes_the_other_from_its_context_quote(said: str, quote: str, context: str,
                                                                    ends: tuple[str, str]) -> None:
    """The model points at the other end of a range said apart ("Thursdays till 8" / "Ten till six"): each end by its cue."""
    days = sorted(days_in(quote.lower().split()), key=WEEK.index)
    r = {"days": days, "opens": ends[0], "closes": ends[1], "days_quote": quote.split(" we ")[0].removesuffix(" till eight"),
         "times_quote": quote, "context_quote": context}
    turns = call("What are your hours?", said)
    assert isinstance(check_record(hours(r), HOURS, turns), Accepted)
    assert check_record(hours(r | {"context_quote": None}), HOURS, turns).rule == 4  # type: ignore[union-attr]
    other = "opens" if "till" in quote or "close" in quote else "closes"  # the end the context gives, changed
    assert check_record(hours(r | {other: "07:00" if other == "opens" else "23:00"}), HOURS, turns).rule == 4  # type: ignore[union-attr]
    unnamed = r | {"times_quote": quote.split(" ", 1 + quote.startswith("Sunday to"))[-1]}  # its days not in it: no end alone
    assert check_record(hours(unnamed), HOURS, turns).rule == 4  # type: ignore[union-attr]


def test_rule_4_the_other_end_is_taken_by_its_cue_in_both_quotes() -> None:
    """The context's end must be of the other kind ("Ten till six": six closes); a quote's end with no cue is that other."""
    turns = call("What are your hours?", "Ten till six. Thursdays till eight.")
    r = {"days": ["thursday"], "opens": "06:00", "closes": "20:00", "days_quote": "Thursdays", "times_quote": "Thursdays till eight",
         "context_quote": "Ten till six"}  # the opening read from the context's closing
    assert check_record(hours(r), HOURS, turns).rule == 4  # type: ignore[union-attr]
    bare = call("What are your hours?", "We close at ten every night. Sundays noon.")  # no cue: the opening, as ten closes
    s = {"days": ["sunday"], "opens": "12:00", "closes": "22:00", "days_quote": "Sundays", "times_quote": "Sundays noon",
         "context_quote": "We close at ten"}
    assert isinstance(check_record(hours(s), HOURS, bare), Accepted)
    assert check_record(hours(s | {"opens": "09:00", "closes": "12:00"}), HOURS, bare).rule == 4  # type: ignore[union-attr]
    two = call("What are your hours?", "We close at ten every night. Sundays ten till four.")  # two times: no end alone
    assert check_record(hours(s | {"opens": "10:00", "times_quote": "Sundays ten till four"}), HOURS, two).rule == 4  # type: ignore[union-attr]
    assert isinstance(check_record(hours(s | {"times_quote": "Sundays from noon"}), HOURS,
                                   call("What are your hours?", "We close at ten every night. Sundays from noon.")), Accepted)


def test_rule_4_an_end_alone_may_be_its_quotes_one_number() -> None:
    """"Nine on Sundays" / "We shut at five every day": one number alone is that end, of the kind its context's is not."""
    turns = call("What are your hours?", "We shut at five every day. Nine on Sundays.")
    r = {"days": ["sunday"], "opens": "09:00", "closes": "17:00", "days_quote": "Sundays", "times_quote": "Nine on Sundays",
         "context_quote": "We shut at five every day"}
    assert isinstance(check_record(hours(r), HOURS, turns), Accepted)
    assert check_record(hours(r | {"opens": "10:00"}), HOURS, turns).rule == 4  # type: ignore[union-attr]
    two = call("What are your hours?", "We shut at five every day. Nine or ten on Sundays.")  # two numbers: no end alone
    assert check_record(hours(r | {"times_quote": "Nine or ten on Sundays"}), HOURS, two).rule == 4  # type: ignore[union-attr]


def test_rule_4_the_days_may_be_named_by_the_context_and_it_names_no_other_day_nor_a_date() -> None:
    """The range's days stand in one of its two ends ("Closing time is half five" / "We open at eight, every day of the
    week"); a context naming another day ("Saturdays we open at nine") or a date ("On New Year's Eve ...") is not theirs."""
    turns = call("What are your hours?", "We open at eight, every day of the week. Closing time is half five.")
    r = {"days": WEEK, "opens": "08:00", "closes": "17:30", "days_quote": "every day of the week",
         "times_quote": "Closing time is half five", "context_quote": "We open at eight, every day of the week"}
    assert isinstance(check_record(hours(r), HOURS, turns), Accepted)
    assert check_record(hours(r | {"closes": "18:30"}), HOURS, turns).rule == 4  # type: ignore[union-attr]
    other = call("What are your hours?", "Saturdays we open at nine. Sundays we close at four.")
    s = {"days": ["sunday"], "opens": "09:00", "closes": "16:00", "days_quote": "Sundays", "times_quote": "Sundays we close at four",
         "context_quote": "Saturdays we open at nine"}
    assert check_record(hours(s), HOURS, other).rule == 4  # type: ignore[union-attr]
    for day in ("On New Year's Eve", "Tomorrow", "On the 3rd of January"):
        dated = call("What are your hours?", f"Weekdays we open at seven. {day} we close at three.")
        w = {"days": WEEK[:5], "opens": "07:00", "closes": "15:00", "days_quote": "Weekdays", "times_quote": "Weekdays we open at seven",
             "context_quote": f"{day} we close at three"}
        assert check_record(hours(w), HOURS, dated).rule == 4, day  # type: ignore[union-attr]
        plain = call("What are your hours?", "Weekdays we open at seven. We close at three.")
        assert isinstance(check_record(hours(w | {"context_quote": "We close at three"}), HOURS, plain), Accepted)


def test_rule_4_a_context_end_with_no_cue_is_the_kind_the_other_is_not() -> None:
    """"Sundays we open at eleven." / "Four o'clock.": the context's bare end closes; an opening there does not."""
    turns = call("What are your hours?", "Sundays we open at eleven.", "And when do you close?", "Four o'clock.")
    r = {"days": ["sunday"], "opens": "11:00", "closes": "16:00", "days_quote": "Sundays", "times_quote": "Sundays we open at eleven",
         "context_quote": "Four o'clock"}
    assert isinstance(check_record(hours(r), HOURS, turns), Accepted)
    both = call("What are your hours?", "Sundays we open at eleven.", "And the weekdays?", "We open at four.")
    assert check_record(hours(r | {"context_quote": "We open at four"}), HOURS, both).rule == 4  # type: ignore[union-attr]
    bare = call("What are your hours?", "Five every day. Nine on Sundays.")  # neither end says its kind: no reading
    for opens, closes in (("09:00", "17:00"), ("05:00", "21:00")):
        s = r | {"opens": opens, "closes": closes, "times_quote": "Nine on Sundays", "context_quote": "Five every day"}
        assert check_record(hours(s), HOURS, bare).rule == 4, opens  # type: ignore[union-attr]


@pytest.mark.parametrize(("said", "quote", "ends"), [
    ("We open at six every morning. Ten p.m. Monday through Saturday.", "Ten p.m. Monday through Saturday", ("06:00", "22:00")),
    ("We open at noon every day. Closing's half eleven Sunday to Thursday.", "Closing's half eleven Sunday to Thursday",
     ("12:00", "23:30"))])
def test_rule_4_a_bare_or_closing_end_takes_the_kind_its_context_leaves(said: str, quote: str, ends: tuple[str, str]) -> None:
    """A bare end is the kind the context_quote's end is not ("We open at six" / "Ten p.m. Monday through Saturday");
    with no half of the day said, the range closes after it opens."""
    context = said.split(". ")[0]
    r = {"days": sorted(days_in(quote.lower().split()), key=WEEK.index), "opens": ends[0], "closes": ends[1],
         "days_quote": " ".join(quote.split()[-3:]), "times_quote": quote, "context_quote": context}
    turns = call("What are your hours?", said)
    assert isinstance(check_record(hours(r), HOURS, turns), Accepted)
    assert check_record(hours(r | {"opens": "07:00"}), HOURS, turns).rule == 4  # type: ignore[union-attr]
    late = call("What are your hours?", "We're open from half twelve every day. Friday and Saturday it's half twelve.")
    noon = {"days": ["friday", "saturday"], "opens": "12:30", "closes": "12:30", "days_quote": "Friday and Saturday",
            "times_quote": "Friday and Saturday it's half twelve", "context_quote": "We're open from half twelve every day"}
    assert check_record(hours(noon), HOURS, late).rule == 4  # type: ignore[union-attr]


def test_rule_11_a_count_or_place_corrected_in_the_sentence_after_a_correction_word() -> None:
    """"Aisle nine. Oh, hold up, sorry. It's on twelve now.": the sentence after a word of CORRECTIONS says the place
    instead; a place said after no such word is not a correction ("The duct tape's on twelve")."""
    tape = QuickAskJob(QuestionType.AISLE, "masking tape")
    asked = "Which aisle is the masking tape in?"
    record = aisle("aisle 9", "Masking tape is aisle nine")
    fixed = call(asked, "Masking tape is aisle nine. Oh, hold up, sorry. It's on twelve now.")
    assert check_record(record, tape, fixed).rule == 11  # type: ignore[union-attr]
    other = call(asked, "Masking tape is aisle nine. The duct tape's on twelve.")
    assert isinstance(check_record(record, tape, other), Accepted)
    left = call("Do you have any snow shovels?", "Snow shovels, we've four left. Hang on, sorry. There's three.")
    assert check_record(stock("limited", "Snow shovels, we've four left", 4), SHOVELS, left).rule == 11  # type: ignore[union-attr]


def test_rule_11_hours_are_not_corrected_by_the_sentence_after_a_no() -> None:
    """A split shift's other part after a "no" that answers the agent is no correction of the first."""
    turns = call("What are your hours?", "Monday to Saturday, nine to one, then four to eight.", "Is that nine to eight?",
                 "No, no, we close in the afternoon. We open again at four.")
    days = WEEK[:6]
    r = hours({"days": days, "opens": "09:00", "closes": "13:00", "days_quote": "Monday to Saturday", "times_quote": "nine to one"},
              {"days": days, "opens": "16:00", "closes": "20:00", "days_quote": "Monday to Saturday", "times_quote": "four to eight"})
    assert isinstance(check_record(r, HOURS, turns), Accepted)


def test_rule_5_a_place_number_in_a_clock_time_is_no_place_unless_the_place_says_it_so() -> None:
    """"On the stand by till three": the 3 reads as a clock time there, so it holds no "aisle 3"; a place that says
    "by till 3" itself stands, and "aisle three" is a place."""
    minis = QuickAskJob(QuestionType.AISLE, "travel minis")
    turns = call("Which aisle are the travel minis in?", "Travel minis are on the stand by till three.")
    assert check_record(aisle("aisle 3", "Travel minis are on the stand by till three"), minis, turns).rule == 5  # type: ignore[union-attr]
    assert isinstance(check_record(aisle("on the stand by till 3", "Travel minis are on the stand by till three"), minis, turns), Accepted)
    plain = call("Which aisle are the travel minis in?", "Travel minis are in aisle three.")
    assert isinstance(check_record(aisle("aisle 3", "Travel minis are in aisle three"), minis, plain), Accepted)


def test_rule_4_a_word_of_runs_just_before_a_time_makes_it_a_closing() -> None:
    """"Thursdays we stay open to nine": the time after "to" closes (the days' run "Monday to Friday" is no cue of 9)."""
    turns = call("What are your hours?", "We're open ten to six. Thursdays we stay open to nine.")
    r = {"days": ["thursday"], "opens": "10:00", "closes": "21:00", "days_quote": "Thursdays",
         "times_quote": "Thursdays we stay open to nine", "context_quote": "We're open ten to six"}
    assert isinstance(check_record(hours(r), HOURS, turns), Accepted)
    assert check_record(hours(r | {"opens": "09:00", "closes": "18:00"}), HOURS, turns).rule == 4  # type: ignore[union-attr]
    week = call("What are your hours?", "Monday to Friday nine to five.")
    w = {"days": WEEK[:5], "opens": "09:00", "closes": "17:00", "days_quote": "Monday to Friday", "times_quote": "Monday to Friday nine to five"}
    assert isinstance(check_record(hours(w), HOURS, week), Accepted)


def test_rule_4_a_dates_end_alone_names_its_date_and_its_context_every_day_or_none() -> None:
    """"Christmas Eve we close at four" / "seven to ten, every day": the date's range opens at the context's seven."""
    said = "Our hours are seven to ten every day. Christmas Eve we close at four."
    r = {"days": [], "date": "December 24", "opens": "07:00", "closes": "16:00", "days_quote": "Christmas Eve",
         "times_quote": "Christmas Eve we close at four", "context_quote": "Our hours are seven to ten every day"}
    assert isinstance(check_record(hours(r), HOURS, call("What are your hours?", said)), Accepted)
    some = call("What are your hours?", said.replace("every day", "Monday to Saturday"))
    assert check_record(hours(r | {"context_quote": "Our hours are seven to ten Monday to Saturday"}), HOURS, some).rule == 4  # type: ignore[union-attr]
    bare = call("What are your hours?", "Our hours are seven to ten every day. On Christmas Eve, we close at four.")
    assert check_record(hours(r | {"times_quote": "we close at four"}), HOURS, bare).rule == 4  # type: ignore[union-attr]


def test_rule_4_ten_to_two_in_hours_is_a_run_not_one_fifty() -> None:
    """Only a booking's one time reads "ten to eight" as 7:50 (calld.domain.spoken); in hours it is ten till two."""
    turns = call("What are your hours?", "Sundays, ten to two.")
    one = {"days": ["sunday"], "opens": "13:50", "days_quote": "Sundays", "times_quote": "ten to two"}
    assert check_record(hours(one), HOURS, turns).rule == 4  # type: ignore[union-attr]
    assert isinstance(check_record(hours(one | {"opens": "10:00", "closes": "14:00"}), HOURS, turns), Accepted)
    said = "ten to eight on Friday for two"
    booking = call("A table for two on Friday around 8?", f"I can do {said}.", "Great.", "Lovely, you're booked.")
    args = booked(2, "Friday at 7:50 pm", outcome_quote="you're booked", party_quote=said, time_quote=said, date_quote=said)
    assert isinstance(check_record(args, BOOK, booking), Accepted)


def test_rule_1_a_quote_said_in_its_days_turn_is_the_one_beside_them() -> None:
    """"Eight till two on Saturdays" and, a turn later, "Eight till two Sundays as well": Saturday's quote is the one
    beside its days, not the last said (whose clause names Sunday)."""
    turns = call("What are your hours?", "We're seven till three weekdays, and eight till two on Saturdays.", "And Sundays?",
                 "Eight till two Sundays as well.")
    r = {"days": ["saturday"], "opens": "08:00", "closes": "14:00", "days_quote": "on Saturdays", "times_quote": "eight till two"}
    assert isinstance(check_record(hours(r), HOURS, turns), Accepted)
    assert check_record(hours(r | {"closes": "15:00"}), HOURS, turns).rule == 4  # type: ignore[union-attr]


def test_rule_2_a_read_back_closed_day_stands_on_a_no_to_a_question_with_open() -> None:
    """"And are you open on Sundays?" / "Nope. Family day.": a no to "open" says closed, as a quote's would."""
    turns = call("What are your hours?", "We're ten to eight, Monday through Saturday.", "And are you open on Sundays?", "Nope. Family day.")
    args = hours({"days": ["sunday"], "closed": True, "readback": True}) | {"outcome_quote": "Nope"}
    assert isinstance(check_record(args, HOURS, turns), Accepted)
    other = call("What are your hours?", "We're ten to eight, Monday through Saturday.", "And what about Sundays?", "Nope. Family day.")
    assert check_record(args, HOURS, other).rule == 2  # type: ignore[union-attr]


def test_rule_5_a_place_number_after_another_word_of_numbered_is_not_the_places() -> None:
    """"Aisle 22, bay 6": 6 is the bay's, no aisle 6; "isle" heard for "aisle" is the same word."""
    cement = QuickAskJob(QuestionType.AISLE, "PVC cement")
    said = "PVC cement is in aisle twenty-two, bay six"
    turns = call("Which aisle is the PVC cement in?", f"{said}.")
    assert isinstance(check_record(aisle("aisle 22, bay 6", said), cement, turns), Accepted)
    assert check_record(aisle("aisle 6", said), cement, turns).rule == 5  # type: ignore[union-attr]
    assert check_record(aisle("row 22, bay 6", said), cement, turns).rule == 5  # type: ignore[union-attr]
    isle = call("Which aisle is the PVC cement in?", "PVC cement's in isle eleven.")
    assert isinstance(check_record(aisle("aisle 11", "PVC cement's in isle eleven"), cement, isle), Accepted)


def test_rule_8_open_around_the_clock_is_no_yes_said_of_the_past() -> None:
    """"We used to be open twenty-four hours": a quote of what is holds no word of PAST, for open around the clock too."""
    turns = call("What are your hours?", "We used to be open twenty-four hours every day. Now it's six to midnight.")
    always = {"days": WEEK, "around_the_clock": True, "days_quote": "every day", "times_quote": "We used to be open twenty-four hours"}
    assert check_record(hours(always), HOURS, turns).rule == 8  # type: ignore[union-attr]
    now = call("What are your hours?", "We're open twenty-four hours, every day.")
    assert isinstance(check_record(hours(always | {"times_quote": "We're open twenty-four hours"}), HOURS, now), Accepted)
