"""More general forms of the evidence check (calld.evidence.check_record), found on conversations written outside the
project (docs/evidence.md): how a business says no, a limit, a day or its hours on the phone, and whose item a
clause is of. Each a form, not a sentence, with the rule it belongs to; the first forms are in
tests/test_check_forms.py, the properties and each rule's own test in tests/test_check.py."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from calld.core.plan import BookJob, QuickAskJob
from calld.domain.ids import E164
from calld.domain.questions import QuestionType
from calld.domain.transcript import Turn
from calld.evidence import Accepted, check_record
from calld.evidence import check as c
from tests.records import AISLE, BOOK, HOURS, STOCK, aisle, answered, booked, call, declined, hours, stock


@given(st.sampled_from(c.APOLOGY), st.sampled_from(("Friday night is a zoo", "Seven is madness here", "We have the whole place on")))
def test_rule_9_an_apology_is_a_declines_no(apology: str, state: str) -> None:
    """A decline said as a state with an apology in its clause ("..., sorry"): the apology is the no."""
    said = f"{state}, {'I am ' if apology == 'afraid' else ''}{apology}"
    assert isinstance(check_record(declined(said), BOOK, call("A table for two at 7 on Friday?", f"Oh. {said}.")), Accepted)
    assert check_record(declined(state), BOOK, call("A table for two at 7 on Friday?", f"Oh. {state}.")).rule == 9  # type: ignore[union-attr]
    yes = f"{apology.capitalize()} for the wait, you're booked for 7 on Friday"  # an apology takes no yes away
    args = booked(2, "Friday 19:00", outcome_quote=yes, party_readback=True, time_quote="you're booked for 7 on Friday",
                  date_quote="you're booked for 7 on Friday")
    assert isinstance(check_record(args, BOOK, call("A table for two at 7 on Friday?", f"{yes}.")), Accepted)


@given(st.sampled_from(("Please be here by 6:45", "We need the table back by nine", "Our bar is open from five till eleven",
                        "The set menu runs until 8", "Try to arrive before quarter to seven", "Drinks are from 6 to 11",
                        "The kitchen closes at 10", "Heads up, we're open till eleven", "Last orders are at half eight",
                        "We'll need the table back at ten", "The kitchen shuts at 10")))
def test_rule_11_a_later_limit_or_range_is_no_other_booked_time(aside: str) -> None:
    """After the booked time, a time said as a limit or a range of something else ("be here by 6:45") is no correction."""
    turns = call("A table for two at 7 on Friday?", f"Yes, two at 7 on Friday, you're booked. {aside}.")
    args = booked(2, "Friday 19:00", outcome_quote="you're booked", party_quote="two at 7 on Friday",
                  time_quote="two at 7 on Friday", date_quote="two at 7 on Friday")
    assert isinstance(check_record(args, BOOK, turns), Accepted), aside
    # a time said otherwise in a later turn is still another value, and a limit with a no is a no
    for later in ("Sorry, make it 8", "Twenty to eight would suit us better", "Nothing free until 9"):
        again = call("A table for two at 7 on Friday?", "Yes, two at 7 on Friday, you're booked.", "Thank you.", f"{later}.")
        assert check_record(args, BOOK, again).rule in (10, 11), later  # type: ignore[union-attr]
    hours_only = call("A table for two at 7 on Friday?", "The kitchen closes at 6:30 on Friday.")  # their hours, no yes
    args = booked(2, "Friday 19:00", outcome_quote="The kitchen closes at 6:30 on Friday", party_readback=True,
                  time_readback=True, date_readback=True)
    assert check_record(args, BOOK, hours_only).rule == 8  # type: ignore[union-attr]
    sorry = call("A table for two at 7 on Friday?", "Oh. Sorry about that.")  # an apology is no yes
    assert check_record(args | {"outcome_quote": "Sorry about that"}, BOOK, sorry).rule == 8  # type: ignore[union-attr]


@given(st.sampled_from(("We do a quiz at nine", "Another party comes in at 8:30", "Our band plays at ten", "The second sitting is 9:15")),
       st.sampled_from(("booked", "read back")))
def test_rule_11_another_time_in_the_rest_of_the_outcomes_turn_needs_a_correction(aside: str, how: str) -> None:
    """Said after the outcome in its own turn, another time is an aside of the business's (its other times, its
    limits) unless a word of CORRECTIONS makes it one; said in a later turn, it is a new time for the booking."""
    if how == "booked":
        args = booked(2, "Friday 19:00", outcome_quote="you're booked", party_quote="Two at 7 on Friday",
                      time_quote="Two at 7 on Friday", date_quote="Two at 7 on Friday")
        turns = ("A table for two at 7 on Friday?", f"Two at 7 on Friday, you're booked. {aside}.")
    else:
        args = booked(2, "Friday 19:00", outcome_quote="That works", party_readback=True, time_readback=True,
                      date_readback=True)
        turns = ("A table for two at 7 on Friday, is that right?", f"That works. {aside}.")
    assert isinstance(check_record(args, BOOK, call(*turns)), Accepted), aside
    corrected = (*turns[:-1], f"{turns[-1]} Sorry, make that 9.")  # "sorry", "make": words of CORRECTIONS
    assert check_record(args, BOOK, call(*corrected)).rule == 11  # type: ignore[union-attr]
    later = (*turns, "Thanks. And it's under Nathan.", f"Lovely. {aside}.")
    assert check_record(args, BOOK, call(*later)).rule == 11, aside  # type: ignore[union-attr]


def test_rule_1_a_quote_may_end_before_its_clitic() -> None:
    """"Friday's fine" says Friday: a quote may end before the 's of its last word, and nowhere else."""
    turns = call("A table for two at 7 on Friday?", "Friday's fine, two at 7, you're booked.")
    args = booked(2, "Friday 19:00", outcome_quote="you're booked", party_quote="two at 7", time_quote="two at 7",
                  date_quote="Friday")
    assert isinstance(check_record(args, BOOK, turns), Accepted)
    assert check_record(args | {"date_quote": "Fri"}, BOOK, turns).rule == 1  # type: ignore[union-attr]
    assert check_record(args | {"date_quote": "Friday fine"}, BOOK, turns).rule == 1  # type: ignore[union-attr]


@given(st.sampled_from((("for for", 4), ("for to", 2), ("for too", 2), ("for won", 1))))
def test_rule_1_a_numbers_homophone_counts_in_a_quote_with_no_number(heard: tuple[str, int]) -> None:
    """Speech-to-text writes "a table for for": where a count's or a time's quote says no number, a word of HEARD is
    its number; where it says one, or in a place's quote ("next to the tills"), it is the word it is."""
    said, party = heard
    turns = call(f"A table for {party} at 8 on Friday?", f"yeah a table {said} at ate on friday your booked")
    args = booked(party, "Friday 20:00", outcome_quote="your booked", party_quote=f"a table {said}", time_quote="at ate",
                  date_quote="on friday")
    request = BookJob(party, "Friday 8pm", None, 60, E164("+15555550123"))
    assert isinstance(check_record(args, request, turns), Accepted), said
    assert check_record(args | {"confirmed_party": party + 1}, request, turns).rule == 5  # type: ignore[union-attr]
    with_a_number = call("A table for 2 at 8 on Friday?", "yeah a table for for 3 at ate on friday your booked")
    assert check_record(args | {"confirmed_party": 4, "party_quote": "a table for for 3"}, request,
                        with_a_number).rule == 5  # type: ignore[union-attr]
    place = call("Which aisle is the garden hose in?", "its next to the tills")
    assert check_record(aisle("aisle 2", "its next to the tills"), AISLE, place).rule == 5  # type: ignore[union-attr]
    numbered = call("Which aisle is the garden hose in?", "hoses are in isle for with the rakes")  # after a word of NUMBERED
    assert isinstance(check_record(aisle("aisle 4", "hoses are in isle for"), AISLE, numbered), Accepted)
    assert check_record(aisle("aisle 5", "hoses are in isle for"), AISLE, numbered).rule == 5  # type: ignore[union-attr]


@given(st.sampled_from((("Tomorrow", "2026-12-06", "Sunday"), ("Tonight", "2026-12-05", "Saturday"), ("Today", "2026-12-05", "Saturday"))))
def test_rule_5_a_relative_day_is_said_of_the_day_the_call_is_dialled(said: tuple[str, str, str]) -> None:
    """"Tomorrow" said by the business is the day after the call's own (BookJob.today, Saturday 5 December here),
    whatever the user's words named; with no day of the call known it says no date."""
    word, day, weekday = said
    turns = call(f"A table for two on {weekday} at 7pm?", f"{word} at 7 for two, you're booked.")
    args = booked(2, f"{day} 19:00", outcome_quote="you're booked", party_quote="for two", time_quote="at 7", date_quote=word)
    request = BookJob(2, f"{weekday} at 7pm", None, 60, E164("+15555550123"), when=f"{day}T19:00:00-05:00", today="2026-12-05")
    assert isinstance(check_record(args, request, turns), Accepted)
    assert isinstance(check_record(args | {"confirmed_time": f"{weekday} 7pm"}, request, turns), Accepted)
    assert check_record(args | {"confirmed_time": "2026-12-07 19:00"}, request, turns).rule == 5  # type: ignore[union-attr]
    unknown = BookJob(2, f"{weekday} at 7pm", None, 60, E164("+15555550123"), when=f"{day}T19:00:00-05:00")
    assert check_record(args, unknown, turns).rule == 5  # type: ignore[union-attr]


def test_a_booking_is_dialled_with_the_restaurants_today() -> None:
    """BookJob.dialled: its time as read, and the day it is dialled where the restaurant is (23:30 in New York on
    Friday is Saturday in UTC, and Friday there)."""
    from datetime import UTC, datetime
    job = BookJob(2, "tomorrow 7pm", None, 60, E164("+15555550123")).dialled("2026-12-05T19:00:00-05:00",
                                                                            datetime(2026, 12, 5, 4, 30, tzinfo=UTC))
    assert (job.when, job.today) == ("2026-12-05T19:00:00-05:00", "2026-12-04")


@given(st.sampled_from(("The 11th", "On the eleventh", "December 11")))
def test_rule_5_an_iso_dates_weekday_is_its_dates(said: str) -> None:
    """A date typed with its year (ISO 8601 or in words) needs its day said, not its weekday, which is the date's own
    (if it is); a weekday typed with no year needs saying."""
    turns = call("A table for two on the 11th at 7pm?", f"{said} at 7 for two, you're booked.")
    args = booked(2, "2026-12-11 19:00", outcome_quote="you're booked", party_quote="for two", time_quote="at 7", date_quote=said)
    assert isinstance(check_record(args, BOOK, turns), Accepted), said
    assert check_record(args | {"confirmed_time": "2026-12-12 19:00"}, BOOK, turns).rule == 5  # type: ignore[union-attr]
    assert check_record(args | {"confirmed_time": "Friday 11 December at 7pm"}, BOOK, turns).rule == 5  # type: ignore[union-attr]
    for typed in ("Friday 11 December 2026, 19:00", "Friday, December 11, 2026 at 7pm", "11 December 2026 19:00"):
        assert isinstance(check_record(args | {"confirmed_time": typed}, BOOK, turns), Accepted), (said, typed)
    wrong_day = args | {"confirmed_time": "Thursday 11 December 2026, 19:00"}  # a weekday that is not that date's
    assert check_record(wrong_day, BOOK, turns).rule == 5  # type: ignore[union-attr]


def test_rule_4_a_booked_time_said_as_the_hours_is_none() -> None:
    turns = call("A table for two at 7pm on Friday?", "We open at 5 on Friday, so two at 7 is fine, you're booked.")
    args = booked(2, "Friday 19:00", outcome_quote="you're booked", party_quote="two at 7", time_quote="two at 7 is fine",
                  date_quote="We open at 5 on Friday")
    assert isinstance(check_record(args, BOOK, turns), Accepted)
    wrong = args | {"confirmed_time": "Friday 17:00", "time_quote": "We open at 5 on Friday"}
    assert check_record(wrong, BOOK, turns).rule == 4  # type: ignore[union-attr]
    for aside in ("we need the table back at 9", "last orders at 9", "the music starts at 9"):
        later = call("A table for two at 7pm on Friday?", f"Two at 7 on Friday, you're booked, {aside}.")
        wrong = args | {"confirmed_time": "Friday 21:00", "time_quote": aside, "party_quote": "Two at 7", "date_quote": "on Friday"}
        assert check_record(wrong, BOOK, later).rule == 4, aside  # type: ignore[union-attr]
    by = call("A table for two at 7pm on Friday?", "We will expect you two by 7 on Friday, you're booked.")
    expected = args | {"party_quote": "you two", "time_quote": "by 7 on Friday", "date_quote": "on Friday"}
    assert isinstance(check_record(expected, BOOK, by), Accepted)  # "by" is "at" in many Englishes
    table = call("A table for two at 7pm on Friday?", "We've a table for two open at 7 on Friday, you're booked.")
    open_at = {"party_quote": "a table for two", "time_quote": "open at 7", "date_quote": "on Friday"}
    assert isinstance(check_record(args | open_at, BOOK, table), Accepted)


@given(st.sampled_from(c.STATING))
def test_rule_3_a_statement_said_rising_is_no_question(subject: str) -> None:
    """Speech-to-text writes a rising statement with "?": a clause that begins with the business's own subject and asks
    nothing of the caller states ("I think we're open 9 to 5?"); one that asks the caller, or offers, does not."""
    said = f"{subject} open 9 to 5 on Saturday"
    args = hours({"days": ["saturday"], "opens": "09:00", "closes": "17:00", "days_quote": "on Saturday", "times_quote": said})
    assert isinstance(check_record(args, HOURS, call("Your hours on Saturday?", f"Um, {said}?")), Accepted), said
    for asked in (f"{said} for you", f"{said} if that helps", f"Can we say {said}"):
        args = args | {"hours": args["hours"] | {"ranges": [args["hours"]["ranges"][0] | {"times_quote": asked}]}}
        assert check_record(args, HOURS, call("Your hours on Saturday?", f"Um, {asked}?")).rule == 3, asked  # type: ignore[union-attr]


@given(st.sampled_from(c.INSTEAD))
def test_rule_6_a_clause_of_another_one_instead_names_the_item_itself(word: str) -> None:
    """"We have the enamel pan instead": a clause with a word of INSTEAD is of another thing, unless it names the item."""
    asked = "Do you have the cast iron skillet?"
    other = call(asked, f"Sorry, no. We have the enamel pan {word}.")
    assert check_record(stock("in_stock", f"We have the enamel pan {word}"), STOCK, other).rule == 6  # type: ignore[union-attr]
    assert isinstance(check_record(stock("in_stock", "We have the enamel pan"), STOCK, call(asked, "We have the enamel pan.")), Accepted)
    named = call(asked, f"Not on the shelf. We have a cast iron skillet out back {word}.")
    assert isinstance(check_record(stock("in_stock", f"We have a cast iron skillet out back {word}"), STOCK, named), Accepted)
    aside = call(asked, f"We've got one left, it's the display model {word}.")  # the word in another clause
    assert isinstance(check_record(stock("in_stock", "We've got one left", 1), STOCK, aside), Accepted)


@given(st.sampled_from(c.KNOWING))
def test_rule_9_a_no_of_knowing_is_no_stocks_no(verb: str) -> None:
    """"I don't know" says nothing of the stock: no out_of_stock stands on it; an unknown answer does."""
    said = f"I don't {verb}, sorry"
    turns = call("Do you have the cast iron skillet?", f"Hmm. {said}.")
    assert check_record(stock("out_of_stock", said), STOCK, turns).rule == 9  # type: ignore[union-attr]
    assert isinstance(check_record(answered(stock={"availability": "unknown", "quantity": None, "kinds": [], "quote": None,
                                                   "readback": False}, outcome_quote=said), STOCK, turns), Accepted)
    none = call("Do you have the cast iron skillet?", "We don't have any, sorry.")
    assert isinstance(check_record(stock("out_of_stock", "We don't have any"), STOCK, none), Accepted)


@given(st.sampled_from(("last week", "last month")))
def test_rule_8_a_yes_of_last_week_is_of_the_past(when: str) -> None:
    turns = call("Do you have the cast iron skillet?", f"No. We had loads of them {when}.")
    assert check_record(stock("in_stock", f"We had loads of them {when}"), STOCK, turns).rule == 8  # type: ignore[union-attr]


@given(st.sampled_from(("We've got a few, not many", "Not much left, but we have some", "There's no shortage of them")))
def test_rules_8_and_9_few_and_plenty_said_with_a_no_are_a_yes(said: str) -> None:
    """"Not many" is a few, "no shortage" plenty: a yes of stock, no no."""
    turns = call("Do you have the cast iron skillet?", f"Oh. {said}.")
    assert isinstance(check_record(stock("in_stock", said), STOCK, turns), Accepted), said
    assert check_record(stock("out_of_stock", said), STOCK, turns).rule == 9, said  # type: ignore[union-attr]


def test_rule_5_the_items_own_size_is_no_count_of_it() -> None:
    bags = QuickAskJob(QuestionType.STOCK, "40 pound bag of rice")
    turns = call("Do you have the 40 pound bag of rice?", "The 40 pound, yeah, we've got 3 of those.")
    assert isinstance(check_record(stock("in_stock", "The 40 pound, yeah, we've got 3 of those", 3), bags, turns), Accepted)
    plenty = call("Do you have the 40 pound bag of rice?", "Yeah 40 we've got plenty.")
    assert check_record(stock("in_stock", "Yeah 40 we've got plenty", 40), bags, plenty).rule == 5  # type: ignore[union-attr]


@given(st.sampled_from(sorted(c.HOLIDAYS.items())))
def test_rule_5_a_date_said_by_its_name(holiday: tuple[str, str]) -> None:
    name, day = holiday
    month, dom = day.split()
    year = 2027 if month == "january" else 2026
    typed = f"{year}-{c.MONTHS.index(month) + 1:02d}-{int(dom):02d} 19:00"
    turns = call("A table for two at 7pm?", f"{name.title()} at 7 for two, you're booked.")
    args = booked(2, typed, outcome_quote="you're booked", party_quote="for two", time_quote="at 7", date_quote=name.title())
    assert isinstance(check_record(args, BOOK, turns), Accepted), name
    later = f"{year}-{c.MONTHS.index(month) + 1:02d}-{int(dom) + 1 if int(dom) < 31 else 1:02d} 19:00"
    assert check_record(args | {"confirmed_time": later}, BOOK, turns).rule == 5, name  # type: ignore[union-attr]


@given(st.sampled_from(c.HOURS_CUES))
def test_rule_9_a_decline_may_say_only_the_hours(cue: str) -> None:
    """"We close at 7 on Friday" asked for 8 declines: the business's hours are a booking's no."""
    said = f"{cue.capitalize()} at 7 on Friday"
    assert isinstance(check_record(declined(said), BOOK, call("A table for two at 8 on Friday?", f"Ah. {said}.")), Accepted), cue
    assert check_record(declined("Friday at 7"), BOOK, call("A table for two at 8 on Friday?", "Ah. Friday at 7.")).rule == 9  # type: ignore[union-attr]


def test_rule_3_a_greeting_said_before_the_ask_books_nothing() -> None:
    turns = (Turn("business", "Hello, Luigi's, lovely evening."), Turn("agent", "A table for two at 7 on Friday?"),
             Turn("business", "Sure, two at 7 on Friday, you're booked."))
    args = booked(2, "Friday 19:00", outcome_quote="you're booked", party_readback=True, time_readback=True, date_readback=True)
    assert isinstance(check_record(args, BOOK, turns), Accepted)
    assert check_record(args | {"outcome_quote": "lovely evening"}, BOOK, turns).rule == 3  # type: ignore[union-attr]


@given(st.sampled_from(("Do you know which aisle?", "Which one?", "And is it on a shelf with a number?")))
def test_rule_6_the_agents_follow_up_question_asks_of_the_item_still(follow_up: str) -> None:
    """"It's in the back." / "Which aisle?" / "Seven.": the agent's follow-up asks of the item its first question named,
    unless the business spoke of another one between."""
    turns = call("Where is the garden hose?", "It's in the back.", follow_up, "Aisle 7.")
    assert isinstance(check_record(aisle("aisle 7", "Aisle 7"), AISLE, turns), Accepted), follow_up
    other = call("Where is the garden hose?", "We've sprinklers instead.", follow_up, "Aisle 7.")
    assert check_record(aisle("aisle 7", "Aisle 7"), AISLE, other).rule == 6, follow_up  # type: ignore[union-attr]
    nothing = call("Where are the rakes?", "It's in the back.", follow_up, "Aisle 7.")
    assert check_record(aisle("aisle 7", "Aisle 7"), AISLE, nothing).rule == 6, follow_up  # type: ignore[union-attr]


@given(st.sampled_from((("seven o clock", "19:00"), ("at eleven o clock", "11:00"), ("two o clock sunday", "14:00"))))
def test_rule_4_oclock_written_apart_is_oclock(said: tuple[str, str]) -> None:
    """Speech-to-text writes "seven o clock": its "o" is no zero, the time is 7 o'clock ("two clock towers" stays)."""
    quote, hhmm = said
    turns = call(f"A table for two at {hhmm} on Sunday?", f"ok two people {quote} sunday your booked")
    args = booked(2, f"Sunday {hhmm}", outcome_quote="your booked", party_quote="two people", time_quote=quote,
                  date_quote="sunday")
    request = BookJob(2, f"Sunday {hhmm}", None, 60, E164("+15555550123"))
    assert isinstance(check_record(args, request, turns), Accepted), quote
    assert check_record(args | {"confirmed_time": "Sunday 10:00"}, request, turns).rule == 4  # type: ignore[union-attr]
    assert [t.word for t in c.tokens("two clock towers")] == ["2", "clock", "towers"]


@given(st.sampled_from(("seven thirty, done", "seven thirty evening", "seven thirty party of six", "seven-thirty, Keisha")))
def test_rule_4_an_hour_and_its_minutes_before_any_word_but_a_measure(quote: str) -> None:
    """"Seven thirty" is 7:30 whatever word follows it, but a word of UNITS: "eight 10 inch pans" is no 8:10."""
    turns = call("A table for six at 7:30 pm on Friday?", f"Friday, six of you, {quote}, booked.")
    args = booked(6, "Friday 19:30", outcome_quote="booked", party_quote="six of you", time_quote=quote, date_quote="Friday")
    assert isinstance(check_record(args, BookJob(6, "Friday 7:30pm", None, 60, E164("+15555550123")), turns), Accepted), quote
    assert c.clocks(["8", "10", "inch", "pans"]) == []


def test_rule_4_a_booked_time_said_only_as_a_limit_is_none() -> None:
    """"I can do 5:15, but we'd need the table back by 7": 5:15 is the time said as the booking's, 7 only as a limit."""
    quote = "I can do 5:15, but we'd need the table back by 7"
    turns = call("A table for two at 7 on Friday?", f"Friday? {quote}. Booked.")
    args = booked(2, "Friday 17:15", outcome_quote="Booked", party_readback=True, time_quote=quote, date_quote="Friday")
    assert isinstance(check_record(args, BOOK, turns), Accepted)
    assert check_record(args | {"confirmed_time": "Friday 19:00"}, BOOK, turns).rule == 4  # type: ignore[union-attr]


@given(st.sampled_from(("We've a couple left", "Just the one", "Three on the shelf", "We're running low", "Only a few left")))
def test_rule_8_a_limited_stock_says_a_number_or_a_word_of_few(said: str) -> None:
    """Limited stock stands on a number or a word of FEW; "plenty", with neither, is in stock and no limited one."""
    turns = call("Is the cast iron skillet in stock?", f"The skillet? {said}.")
    assert isinstance(check_record(stock("limited", said), STOCK, turns), Accepted), said
    plenty = call("Is the cast iron skillet in stock?", "The skillet? We have plenty.")
    assert isinstance(check_record(stock("in_stock", "We have plenty"), STOCK, plenty), Accepted)
    assert check_record(stock("limited", "We have plenty"), STOCK, plenty).rule == 8  # type: ignore[union-attr]


def test_rule_9_stock_unknown_out_the_back_and_a_lone_o() -> None:
    """"I can't check" is no stock's no (KNOWING); "out the back" is a place, not out; "four o' them" is no zero."""
    turns = call("Is the cast iron skillet in stock?", "The skillet? Sorry, I can't check right now.")
    assert check_record(stock("out_of_stock", "I can't check right now"), STOCK, turns).rule == 9  # type: ignore[union-attr]
    back = call("Is the cast iron skillet in stock?", "The skillet? We've got heaps out the back.")
    assert isinstance(check_record(stock("in_stock", "We've got heaps out the back"), STOCK, back), Accepted)
    assert check_record(stock("out_of_stock", "We've got heaps out the back"), STOCK, back).rule == 9  # type: ignore[union-attr]
    corrected = call("Is the cast iron skillet in stock?", "The skillet? We've six, no, sorry, four.")  # a correction, no no
    assert check_record(stock("out_of_stock", "We've six, no, sorry, four"), STOCK, corrected).rule == 9  # type: ignore[union-attr]
    four = call("Is the cast iron skillet in stock?", "The skillet? Aye, we've four o' them in.")
    assert check_record(stock("out_of_stock", "we've four o' them in"), STOCK, four).rule == 9  # type: ignore[union-attr]
    assert isinstance(check_record(stock("in_stock", "we've four o' them in", 4), STOCK, four), Accepted)


def test_rule_9_finished_is_a_word_of_out() -> None:
    """"The skillet is finished" (West African, Indian English): out of stock, and no yes."""
    turns = call("Is the cast iron skillet in stock?", "The skillet is finished, we expect more.")
    assert isinstance(check_record(stock("out_of_stock", "The skillet is finished"), STOCK, turns), Accepted)
    assert check_record(stock("in_stock", "The skillet is finished"), STOCK, turns).rule == 8  # type: ignore[union-attr]


@given(st.sampled_from(("We've loads", "Tons of them", "There's a box behind the counter", "Black is there", "Yes, on the shelf",
                        "We get plenty")))
def test_rule_8_a_stocks_yes_says_a_number_or_a_word_of_having(said: str) -> None:
    """A yes of stock stands on a number or a word of HAVE or FEW; words that say nothing of having it are no yes."""
    turns = call("Is the cast iron skillet in stock?", f"The skillet? {said}. The manager's off today.")
    assert isinstance(check_record(stock("in_stock", said), STOCK, turns), Accepted), said
    assert check_record(stock("in_stock", "The manager's off today"), STOCK, turns).rule == 8  # type: ignore[union-attr]
