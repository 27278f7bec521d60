"""General forms of days, dates and times as businesses say and text them (calld.evidence.check_record and
calld.domain.tokens): a relative day in any spelling, a 24-hour "19h30", a day before its month with the time after it,
and the measures and limits said after a booking that change none of it. Each a form, with the rule it belongs to."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from calld.core.plan import BookJob
from calld.domain.ids import E164
from calld.domain.tokens import tokens, weekday, words_of
from calld.evidence import Accepted, check_record
from tests.records import BOOK, HOURS, STOCK, booked, call, hours, stock

DAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")

TODAY = "2026-12-05"  # a Saturday


def _job(when: str) -> BookJob:
    return BookJob(2, "7pm", None, 60, E164("+15555550123"), when=when, today=TODAY)


@given(st.sampled_from(("tmr", "tmrw", "Tomorow", "the morra", "tomorrow")), st.sampled_from(("tonite", "tonight")))
def test_short_spellings_of_a_day_are_the_day(tomorrow: str, tonight: str) -> None:
    assert words_of(tokens(f"2 pax {tomorrow} 6pm")) == ["2", "pax", *(["the"] if "the" in tomorrow else []), "tomorrow", "6", "pm"]
    assert words_of(tokens(f"{tonight} at 8")) == ["tonight", "at", "8"]


def test_the_day_after_tomorrow_is_one_word_with_its_place() -> None:
    text = "Three of you the day after tomorrow at seven"
    toks = tokens(text)
    assert words_of(toks) == ["3", "of", "you", "the", "overmorrow", "at", "7"]
    assert text[toks[4].start:toks[4].end] == "day after tomorrow"  # a quote ending on it still finds its sentence end
    assert words_of(tokens("the day after the party")) == ["the", "day", "after", "the", "party"]


@given(st.sampled_from(("tmrw", "the morra", "the day after tomorrow", "Sunday", "tomorrow")))
def test_rule_5_a_relative_day_in_any_spelling_says_its_date(said: str) -> None:
    """A relative day said ("tmrw", "the day after tomorrow") stands for the date it names from the day dialled;
    another date is not said by it."""
    day = {"the day after tomorrow": "2026-12-07"}.get(said, "2026-12-06")
    turns = call("A table for two tomorrow at 7pm?", f"Two {said} at seven, you're booked.")
    args = booked(2, f"{day} 19:00", outcome_quote="you're booked", party_quote=f"Two {said} at seven",
                  time_quote=f"Two {said} at seven", date_quote=f"Two {said} at seven")
    assert isinstance(check_record(args, _job(f"{day}T19:00:00-05:00"), turns), Accepted), said
    other = "2026-12-08" if day == "2026-12-07" else "2026-12-07"
    assert check_record(args | {"confirmed_time": f"{other} 19:00"}, _job(f"{other}T19:00:00-05:00"), turns).rule == 5  # type: ignore[union-attr]


@given(st.sampled_from(("tomorrow", "tmrw")))
def test_rule_2_a_read_back_relative_day_says_its_date(said: str) -> None:
    """The agent reads back "tomorrow" and the business agrees: the booked date is the day after the one dialled."""
    turns = call(f"So that's two people {said} at 7pm?", "Yep, all sorted.")
    args = booked(2, "Sunday 6 December 2026, 19:00", outcome_quote="Yep, all sorted", party_readback=True,
                  time_readback=True, date_readback=True)
    assert isinstance(check_record(args, _job("2026-12-06T19:00:00-05:00"), turns), Accepted)
    assert check_record(args | {"confirmed_time": "Monday 7 December 2026, 19:00"}, _job("2026-12-07T19:00:00-05:00"),
                        turns).rule == 2  # type: ignore[union-attr]


@given(st.sampled_from(("19h30", "19:30", "7.30pm")))
def test_rule_4_a_24_hour_time_written_with_h(said: str) -> None:
    assert words_of(tokens(f"4 people Friday {said}"))[3] in ("19:30", "7:30")
    turns = call("A table for four on Friday at 7:30pm?", f"4 people Friday {said}, booked.")
    args = booked(4, "Friday 19:30", outcome_quote="booked", party_quote=f"4 people Friday {said}",
                  time_quote=f"4 people Friday {said}", date_quote=f"4 people Friday {said}")
    assert isinstance(check_record(args, BookJob(4, "Friday 7:30pm", None, 60, E164("+15555550123")), turns), Accepted)
    assert check_record(args | {"confirmed_time": "Friday 19:00"}, BookJob(4, "Friday 7pm", None, 60, E164("+15555550123")),
                        turns).rule == 4  # type: ignore[union-attr]


@given(st.sampled_from((("thirteen December, twelve noon", "12:00"), ("13th of December twelve fifteen", "12:15"),
                        ("the 13th December 19 45", "19:45"), ("13 December, half past seven", "19:30"))))
def test_rule_5_a_day_before_its_month_leaves_the_number_after_it_a_time(said_time: tuple[str, str]) -> None:
    """A month with its day said before it ("13 December") takes no day after it where a time follows ("12 noon",
    "12 15"): the number is the time, and the date is the 13th, not the 12th."""
    said, time = said_time
    turns = call("A table for two on the 13th?", f"Okay, two, {said}, confirmed.")
    args = booked(2, f"Sunday 13 December 2026, {time}", outcome_quote="confirmed", party_quote="two",
                  time_quote=said, date_quote=said)
    job = BookJob(2, f"13 December {time}", None, 60, E164("+15555550123"))
    assert isinstance(check_record(args, job, turns), Accepted), said
    assert check_record(args | {"confirmed_time": f"Saturday 12 December 2026, {time}"}, job, turns).rule == 5  # type: ignore[union-attr]
    # a month's day said after it, with nothing before, is still its day: "for 3, December 12"
    late = call("A table for three?", "For 3, December 12, at 7, confirmed.")
    args = booked(3, "Saturday 12 December 2026, 19:00", outcome_quote="confirmed", party_quote="For 3",
                  time_quote="at 7", date_quote="December 12")
    assert isinstance(check_record(args, BOOK, late), Accepted)


@given(st.sampled_from(("We've got a 50 dollar no show fee", "There's a two-hour limit on tables",
                        "Just so you know, cancellations are 25 pounds per head", "Mains are about 20 quid",
                        "Oh sorry, it's a 2 hour limit", "The kitchen shuts at 10, mind")))
def test_rule_11_a_measure_said_later_is_no_other_party_or_time(aside: str) -> None:
    """After a booking is read back and agreed, a price or a length of time said in a later turn ("a 50 dollar fee",
    "a two-hour limit") counts no party and tells no hour, nor does a time the kitchen shuts at (HOURS_CUES); a party
    said again otherwise still does."""
    turns = call("A table for three on Friday at 7pm?", "Three on Friday at seven, done.", "Thank you.", f"{aside}.")
    args = booked(3, "Friday 19:00", outcome_quote="done", party_readback=True, time_readback=True, date_readback=True)
    job = BookJob(3, "Friday 7pm", None, 60, E164("+15555550123"))
    assert isinstance(check_record(args, job, turns), Accepted), aside
    again = call("A table for three on Friday at 7pm?", "Three on Friday at seven, done.", "Thank you.", "Sorry, no, 5 of you.")
    assert check_record(args, job, again).rule == 11  # type: ignore[union-attr]


def test_rule_11_a_day_said_as_a_limit_is_no_other_date() -> None:
    """ "I'll hold it till Monday" after a booking for Thursday tells a limit, not another date; "no, Monday" does."""
    turns = call("A table for two on Thursday at 7pm?", "Thursday at seven for two, booked.", "Great.",
                 "For you I'll hold it till Monday.")
    args = booked(2, "Thursday 19:00", outcome_quote="booked", party_quote="for two", time_quote="Thursday at seven",
                  date_quote="Thursday at seven")
    job = BookJob(2, "Thursday 7pm", None, 60, E164("+15555550123"))
    assert isinstance(check_record(args, job, turns), Accepted)
    moved = call("A table for two on Thursday at 7pm?", "Thursday at seven for two, booked.", "Great.", "Oh sorry, no, Monday.")
    assert check_record(args, job, moved).rule == 11  # type: ignore[union-attr]


@given(st.sampled_from(("Lemme see", "lemme check")))
def test_rule_3_a_short_wait_is_no_yes(wait: str) -> None:
    turns = call("A table for two on Friday at 7pm?", f"{wait}... two on Friday at seven.")
    args = booked(2, "Friday 19:00", outcome_quote=wait, party_readback=True, time_readback=True, date_readback=True)
    assert check_record(args, BOOK, turns).rule == 3  # type: ignore[union-attr]


@given(st.sampled_from((("two for seven", 2, "19:00"), ("six for five", 5, "18:00"), ("3 tomorrow arvo for 6", 6, "15:00"))))
def test_rule_4_a_booked_time_said_bare_beside_the_party(said_party_time: tuple[str, int, str]) -> None:
    """A booking's time quote that is its party's too may say the time as its one other number ("two for seven");
    a quote with only the party's number says no time, and a third number leaves it unread."""
    said, party, time = said_party_time
    turns = call(f"A table for {party} tomorrow?", f"Yep, {said}, sorted.")
    args = booked(party, f"2026-12-06 {time}", outcome_quote="sorted", party_quote=said, time_quote=said, date_readback=True)
    job = _job(f"2026-12-06T{time}:00-05:00")
    assert isinstance(check_record(args, job, turns), Accepted), said
    only_party = call(f"A table for {party} tomorrow?", f"Yep, table for {party}, sorted.")
    quoted = {"party_quote": f"table for {party}", "time_quote": f"table for {party}"}
    assert check_record(args | quoted, job, only_party).rule == 4  # type: ignore[union-attr]
    three = call(f"A table for {party} tomorrow?", f"Yep, {said} or 9, sorted.")
    assert check_record(args | {"party_quote": f"{said} or 9", "time_quote": f"{said} or 9"}, job, three).rule == 4  # type: ignore[union-attr]


def test_rule_4_the_date_a_relative_word_says_is_no_clock_time() -> None:
    """ "eight tonight" books 20:00: the date "tonight" stands for (its year, 2026) is read for the date alone, not
    as a 20:26 beside the 8."""
    turns = call("A table for three tonight at 8?", "Three people eight tonight, you good.")
    args = booked(3, "2026-12-05 20:00", outcome_quote="you good", party_quote="Three people eight tonight",
                  time_quote="Three people eight tonight", date_quote="Three people eight tonight")
    assert isinstance(check_record(args, _job("2026-12-05T20:00:00-05:00"), turns), Accepted)


def test_rule_4_a_number_before_a_unit_is_no_time_but_at_ten_hours_is() -> None:
    from calld.evidence.check import clocks
    assert clocks(["about", "20", "quid"]) == [] and clocks(["a", "2", "hour", "limit"]) == []
    assert [c.hour for c in clocks(["at", "10", "hours"])] == [10] and [c.hour for c in clocks(["at", "20", "hours"])] == [20]
    assert [(c.hour, c.meridiem) for c in clocks(["at", "12", "noon"])] == [(12, "pm")]
    from calld.evidence.check import _counts
    assert _counts(["13", "december", "12", "noon"]) == set()  # the 13 is the date's day, the 12 the time's


@given(st.sampled_from((("open eight till for", "08:00", "16:00"), ("from ten to for", "10:00", "16:00"),
                        ("ate to for thirty", "08:00", "16:30"), ("nine to five for the holidays", "09:00", "17:00"))))
def test_rule_1_a_homophone_beside_a_run_is_its_number(said_open_close: tuple[str, str, str]) -> None:
    """Speech-to-text's "for", "ate" beside a word of RUNS ("eight till for") are the numbers of a range said with
    others; elsewhere ("five for the holidays") they stay words, and the hours they would give are not said."""
    said, opens, closes = said_open_close
    turns = call("What are your hours on Monday?", f"Monday we're {said}.")
    args = hours({"days": ["monday"], "opens": opens, "closes": closes, "days_quote": "Monday", "times_quote": said})
    assert isinstance(check_record(args, HOURS, turns), Accepted), said
    later = f"{int(closes[:2]) + 1}:{closes[3:]}"
    assert check_record(hours({"days": ["monday"], "opens": opens, "closes": later, "days_quote": "Monday", "times_quote": said}),
                        HOURS, turns).rule == 4  # type: ignore[union-attr]
    if "holidays" in said:
        four = hours({"days": ["monday"], "opens": "09:00", "closes": "16:00", "days_quote": "Monday", "times_quote": said})
        assert check_record(four, HOURS, turns).rule == 4  # type: ignore[union-attr]


@given(st.sampled_from((("Satdy", "saturday"), ("Satdee", "saturday"), ("Thursdy", "thursday"), ("Mondays", "monday"),
                        ("study", None), ("sandy", None), ("fridge", None))))
def test_a_weekday_said_short_is_the_day(said_day: tuple[str, str | None]) -> None:
    said, day = said_day
    assert weekday(said.lower()) == day


@given(st.sampled_from((("every night", list(DAYS)), ("weeknights", list(DAYS[:5])), ("weekdays", list(DAYS[:5])),
                        ("weekends", list(DAYS[5:])))))
def test_rule_5_a_group_of_days_in_the_singular_or_plural(said_days: tuple[str, list[str]]) -> None:
    said, days = said_days
    turns = call("What are your hours?", f"We're open {said} from 5 to 11.")
    args = hours({"days": days, "opens": "17:00", "closes": "23:00", "days_quote": f"We're open {said}", "times_quote": "from 5 to 11"})
    assert isinstance(check_record(args, HOURS, turns), Accepted), said
    fewer = hours({"days": days[:-1], "opens": "17:00", "closes": "23:00", "days_quote": f"We're open {said}", "times_quote": "from 5 to 11"})
    assert check_record(fewer, HOURS, turns).rule == 5  # type: ignore[union-attr]


@given(st.sampled_from(("No wahala, it's booked", "No problem, you're booked", "Nae bother, you're booked")))
def test_rule_8_a_no_of_ease_is_a_yes(yes: str) -> None:
    """ "No wahala" (Nigerian English), like "no problem", is one "ok": a yes with no no in it."""
    assert words_of(tokens(yes))[0] == "ok"
    turns = call("So two on Friday at 7pm?", f"{yes}.")
    args = booked(2, "Friday 19:00", outcome_quote=yes, party_readback=True, time_readback=True, date_readback=True)
    assert isinstance(check_record(args, BOOK, turns), Accepted), yes


@given(st.sampled_from(("both of you", "the pair of ye", "a couple")))
def test_rule_5_a_party_of_two_said_as_both_or_a_pair(said: str) -> None:
    """A booking's party of two stands on "both", "pair" or "couple" ("the pair of ye at half six"); no other party
    does, and a stock's count of two does not ("a couple left" is a few, not a number)."""
    turns = call("A table for two on Friday at 7pm?", f"Grand, {said} on Friday at seven, you're booked.")
    args = booked(2, "Friday 19:00", outcome_quote="you're booked", party_quote=f"{said} on Friday at seven",
                  time_quote=f"{said} on Friday at seven", date_quote=f"{said} on Friday at seven")
    assert isinstance(check_record(args, BOOK, turns), Accepted), said
    assert check_record(args | {"confirmed_party": 3}, BookJob(3, "Friday 7pm", None, 60, E164("+15555550123")),
                        turns).rule == 5  # type: ignore[union-attr]
    few = call("Do you have the cast iron skillet?", f"Yes, {said} left.")
    assert check_record(stock("in_stock", f"{said} left", quantity=2), STOCK, few).rule == 5  # type: ignore[union-attr]


@given(st.sampled_from((("two adults and two kids", 4), ("4 adults plus 2 children", 6), ("three grown-ups and one baby", 4))))
def test_rule_5_a_party_said_as_a_sum(said_party: tuple[str, int]) -> None:
    """A booking's party stands as the sum of its quote's counts of PEOPLE joined by "and" or "plus" ("two adults and
    two kids": 4); no other number does, nor do counts of things ("two high chairs") or numbers said apart ("one table
    for 2" is a party of 2, not 3)."""
    said, party = said_party
    turns = call(f"A table for {party} on Friday at 7pm?", f"No bother, {said}, Friday at seven, you're booked in.")
    args = booked(party, "Friday 19:00", outcome_quote="you're booked in", party_quote=said, time_quote="Friday at seven",
                  date_quote="Friday at seven")
    job = BookJob(party, "Friday 7pm", None, 60, E164("+15555550123"))
    assert isinstance(check_record(args, job, turns), Accepted), said
    assert check_record(args | {"confirmed_party": party + 1}, job, turns).rule == 5  # type: ignore[union-attr]
    for things in ("four and two high chairs", "four adults and two dogs", "4 plus the 2 from last week"):  # not people, or not joined
        turns6 = call("A table for 6 on Friday at 7pm?", f"Sure, {things}, Friday at seven, you're booked in.")
        job6 = BookJob(6, "Friday 7pm", None, 60, E164("+15555550123"))
        assert check_record(args | {"confirmed_party": 6, "party_quote": things}, job6, turns6).rule == 5, things  # type: ignore[union-attr]
    apart = call("A table for 2 on Friday at 7pm?", "Yes, one table for 2, Friday at seven, you're booked in.")
    quoted = {"party_quote": "one table for 2", "confirmed_party": 3}
    assert check_record(args | quoted, BookJob(3, "Friday 7pm", None, 60, E164("+15555550123")), apart).rule == 5  # type: ignore[union-attr]


def test_rule_4_a_number_of_days_is_no_time() -> None:
    """ "Open seven days, eight till ten": the 7 counts days; the days' clause says no time of its own."""
    turns = call("What are your hours?", "Open seven days, eight till ten.")
    args = hours({"days": list(DAYS), "opens": "08:00", "closes": "22:00", "days_quote": "Open seven days",
                  "times_quote": "eight till ten"})
    assert isinstance(check_record(args, HOURS, turns), Accepted)
    wrong = hours({"days": list(DAYS), "opens": "07:00", "closes": "22:00", "days_quote": "Open seven days",
                   "times_quote": "Open seven days"})
    assert check_record(wrong, HOURS, turns).rule == 4  # type: ignore[union-attr]


@given(st.sampled_from(("the thirteenth", "the 13th")))
def test_rule_5_the_date_asked_stands_by_its_day_said(said: str) -> None:
    """The business says the day of the month asked ("the thirteenth" for Sunday 13 December): the booked weekday
    and month stand by it; another day of the month says neither."""
    turns = call("A table for two next Sunday at 1pm?", f"{said} yeah? One o'clock, two of you, that's done.")
    args = booked(2, "Sunday 13 December 13:00", outcome_quote="that's done", party_quote="two of you",
                  time_quote="One o'clock", date_quote=said)
    assert isinstance(check_record(args, _job("2026-12-13T13:00:00-05:00"), turns), Accepted), said
    other = call("A table for two next Sunday at 1pm?", f"{said.replace('thirteenth', 'fourteenth').replace('13', '14')} yeah? "
                 "One o'clock, two of you, that's done.")
    quoted = {"date_quote": said.replace("thirteenth", "fourteenth").replace("13", "14")}
    assert check_record(args | quoted, _job("2026-12-13T13:00:00-05:00"), other).rule == 5  # type: ignore[union-attr]
