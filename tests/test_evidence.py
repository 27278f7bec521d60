"""The evidence gate's rules, one by one: what the business's own words support, and what they do not."""

from __future__ import annotations

import datetime as dt

import pytest

from calld.domain.questions import QuestionType as Q
from calld.domain.transcript import Span, Turn
from calld.evidence import answers, judge
from calld.evidence import words as w


def turns(*lines: str) -> tuple[Turn, ...]:
    """Alternate speakers by prefix: 'A: ...' is the agent, 'B: ...' the business."""
    return tuple(Turn("agent" if line.startswith("A:") else "business", line[2:].strip()) for line in lines)


ASKED = "A: Hi, this is an automated assistant calling on behalf of Nathan. What are your opening hours?"


def supported(j: judge.Judgement) -> judge.Supported:
    assert isinstance(j, judge.Supported), j
    return j


def refused(j: judge.Judgement) -> str:
    assert isinstance(j, judge.Unsupported), j
    return j.why


# -- reading words -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "clocks"),
    [
        ("9 AM to 5 PM", [(9, 0, False), (5, 0, True)]),
        ("we're open eight to six", [(8, 0, None), (6, 0, None)]),
        ("until nine thirty in the evening", [(9, 30, True)]),
        ("from 7:45", [(7, 45, None)]),
        ("noon till midnight", [(12, 0, True), (0, 0, False)]),
        ("we have three of those", []),  # a quantity is not a time
        ("aisle 14", []),
        ("we open at 7 on weekdays, 8 on Saturdays", [(7, 0, None), (8, 0, None)]),  # a number said for days
        ("a table for 2 on Friday", []),  # a party said for a day is not a time
        ("we're open 24/7", []),
        ("half past nine", [(9, 30, None)]),
        ("we close at a quarter to six", [(5, 45, None)]),
        ("a quarter past five in the evening", [(5, 15, True)]),
        ("ten minutes to nine", [(8, 50, None)]),
        ("open five to six", [(5, 0, None), (6, 0, None)]),  # a range, not "five minutes to six"
        ("Seven a.m. to ten p.m.", [(7, 0, False), (10, 0, True)]),
        ("we open at 9.30", [(9, 30, None)]),
        ("we close at half to six", [(6, 0, None)]),  # no such time: only the hour is read
        ("twenty-five minutes to nine", [(8, 35, None)]),
        ("we got some today, 3 on Saturday", []),  # a list of times needs a time before it
        ("we're down to 3 left", []),
    ],
)
def test_clock_times_are_read_with_number_words(text, clocks):
    assert [(f.clock.hour, f.clock.minute, f.clock.pm) for f in w.clocks(text)] == clocks


@pytest.mark.parametrize(
    ("text", "sentences"),
    [
        ("Open 9 a.m. to 5 p.m. Thanks!", ["Open 9 a.m. to 5 p.m.", "Thanks!"]),
        ("We open at 9.30. Bye.", ["We open at 9.30.", "Bye."]),
        ("We're on Main St. near the park.", ["We're on Main St. near the park."]),
        ("Let me check... yes, we have one.", ["Let me check...", "yes, we have one."]),
        ("Hello? Yes!", ["Hello?", "Yes!"]),
        ("We open at 9 a.m. 7 days a week.", ["We open at 9 a.m. 7 days a week."]),
    ],
)
def test_sentences_end_where_a_person_would_end_them(text, sentences):
    assert [text[a:b] for a, b in w.sentence_spans(text)] == sentences


def test_am_and_pm_must_agree_only_when_both_said_it():
    nine_pm, nine_am, nine = w.Clock(9, 0, True), w.Clock(9, 0, False), w.Clock(9, 0, None)
    assert nine.same_time(nine_pm) and nine.same_time(nine_am)
    assert not nine_am.same_time(nine_pm)


@pytest.mark.parametrize(
    ("text", "availability", "quantity"),
    [
        ("Yes, we have three of those on the shelf right now.", "in_stock", 3),
        ("No, we don't have any left.", "out_of_stock", 0),
        ("We're sold out.", "out_of_stock", 0),
        ("Only two left.", "limited", 2),
        ("We have plenty.", "in_stock", None),
    ],
)
def test_stock_statements_and_negations(text, availability, quantity):
    (found,) = w.stock(text)
    assert (found.availability, found.quantity) == (availability, quantity)


# -- answered: hours -----------------------------------------------------------------------------------


def test_hours_said_by_the_business_support_the_record():
    t = turns(ASKED, "B: We're open Monday through Friday, 9 AM to 5 PM.")
    j = supported(judge.judge_answer(t, Q.HOURS, "Monday to Friday, 9 to 5"))
    assert [q.text for q in j.quotes] == ["We're open Monday through Friday, 9 AM to 5 PM."]
    assert j.quotes[0].turn == 1


def test_a_time_the_business_never_said_is_refused():
    t = turns(ASKED, "B: We're open Monday through Friday, 9 AM to 5 PM.")
    assert "has not said 9:00 PM" in refused(judge.judge_answer(t, Q.HOURS, "Open until 9 PM."))


def test_a_day_the_business_never_named_is_refused():
    t = turns(ASKED, "B: We're open 9 AM to 5 PM on weekdays.")
    assert "Sunday" in refused(judge.judge_answer(t, Q.HOURS, "Sundays 9 to 5"))


def test_agent_speech_never_counts():
    t = turns("A: So you're open 9 AM to 9 PM?", "B: Let me check on that for you.")
    assert "has not said" in refused(judge.judge_answer(t, Q.HOURS, "9 AM to 9 PM"))


def test_an_answer_that_states_no_hours_does_not_answer_the_question():
    t = turns(ASKED, "B: Sorry, we can't give that out.")
    assert "does not state any hours" in refused(judge.judge_answer(t, Q.HOURS, "They won't say."))


def test_number_words_support_digits():
    t = turns(ASKED, "B: We're open eight to six, Sundays till four.")
    supported(judge.judge_answer(t, Q.HOURS, "8 AM to 6 PM, Sundays until 4 PM"))


# -- answered: stock and aisle ---------------------------------------------------------------------------


STOCK_ASK = "A: Do you have the cast iron skillet in stock right now?"


def test_stock_needs_the_same_polarity_after_the_ask():
    t = turns(STOCK_ASK, "B: No, we don't have any left.")
    assert "has not said the item is in stock" in refused(judge.judge_answer(t, Q.STOCK, "Yes, in stock."))
    supported(judge.judge_answer(t, Q.STOCK, "Out of stock."))


def test_a_quantity_must_be_the_one_said():
    t = turns(STOCK_ASK, "B: Yes, we have three of those on the shelf.")
    supported(judge.judge_answer(t, Q.STOCK, "In stock, three on the shelf."))
    assert "(5)" in refused(judge.judge_answer(t, Q.STOCK, "We have 5 in stock."))


def test_a_greeting_before_the_ask_is_not_a_stock_answer():
    t = turns("B: Yes, we have everything you need at Copperline!", STOCK_ASK, "B: Let me check.")
    assert "has not said" in refused(judge.judge_answer(t, Q.STOCK, "Yes, they have it in stock."))


def test_aisle_must_be_the_aisle_said():
    t = turns("A: Which aisle is the WD-40 in?", "B: That's in aisle 14, next to the grills.")
    supported(judge.judge_answer(t, Q.AISLE, "Aisle 14"))
    assert "aisle 41" in refused(judge.judge_answer(t, Q.AISLE, "Aisle 41"))
    assert "does not name" in refused(judge.judge_answer(t, Q.AISLE, "Near the grills somewhere"))


# -- declined, voicemail ----------------------------------------------------------------------------------


def test_declined_needs_a_refusal_or_dont_know():
    assert supported(judge.judge_declined(turns(ASKED, "B: Sorry, we can't give that out."), Q.HOURS, None)).reason == "refused"
    assert supported(judge.judge_declined(turns(ASKED, "B: Honestly, I don't know."), Q.HOURS, None)).reason == "unknown"
    assert "has not refused" in refused(judge.judge_declined(turns(ASKED, "B: Hang on."), Q.HOURS, None))


def test_declined_when_the_business_answered_is_refused():
    t = turns(ASKED, "B: We're open 9 AM to 5 PM.")
    assert "did answer" in refused(judge.judge_declined(t, Q.HOURS, None))


def test_voicemail_needs_a_recording_or_the_carrier():
    greeting = turns("B: You've reached Joe's. Please leave a message after the tone.")
    supported(judge.judge_voicemail(greeting, None))
    supported(judge.judge_voicemail(turns("B: Hello?"), "machine"))
    assert "recording" in refused(judge.judge_voicemail(turns("B: Hello, Joe's Hardware?"), "human"))


# -- bookings ----------------------------------------------------------------------------------------------

BOOK_ASK = "A: I'd like to book a table for 2 on Friday at 7pm."


def test_a_booking_needs_the_business_to_confirm():
    t = turns(BOOK_ASK, "B: Let me see.")
    assert "not confirmed" in refused(judge.judge_booked(t, party=2, time="Friday 7pm", requested_party=2, requested_time="Friday 7pm"))
    t = turns(BOOK_ASK, "B: Yes, you're all booked.")
    supported(judge.judge_booked(t, party=2, time="Friday 7pm", requested_party=2, requested_time="Friday 7pm"))


def test_a_booked_time_other_than_asked_must_be_the_businesss():
    t = turns(BOOK_ASK, "B: We could do 7:30pm. You're all booked.")
    supported(judge.judge_booked(t, party=2, time="Friday 7:30pm", requested_party=2, requested_time="Friday 7pm"))
    assert "not offered" in refused(judge.judge_booked(t, party=2, time="Friday 8pm", requested_party=2, requested_time="Friday 7pm"))


@pytest.mark.parametrize(
    ("business", "time", "because"),
    [
        (("B: We're fully booked at 7, I can do 8:30.", "A: Okay.", "B: Great, you're booked for 8:30."), "Friday 7pm",
         "confirmed 8:30, not Friday 7pm"),
        (("B: Friday's full, but Saturday at 7 works. You're all set for Saturday at 7.",), "Friday 7pm",
         "confirmed Saturday, not Friday 7pm"),
        (("B: We're full at 7.", "A: Oh.", "B: Okay, you're all set."), "Friday 7pm", "is full and did not confirm it"),
        (("B: Confirmed? No, not confirmed yet, let me check with my manager.",), "Friday 7pm", "not confirmed a booking"),
        (("B: Is that right?",), "Friday 7pm", "not confirmed a booking"),  # a question confirms nothing
        (("B: We don't have anything at 7. I've got you down for 8.",), "Friday 7pm", "confirmed 8:00, not Friday 7pm"),
        (("B: We can't do that at 7, only 9. All set for nine then.",), "Friday 7pm", "confirmed 9:00"),
        (("B: Seven's no good, how about eight? Okay, you're all set.",), "Friday 7pm", "did not confirm it"),
        (("B: 7 is taken, sorry. You're all set though.",), "Friday 7pm", "did not confirm it"),
        (("B: You're booked. Oh wait, we're actually full Friday, sorry.",), "Friday 7pm", "took the booking back"),
        (("B: Got you down. Actually no, sorry, we can't do that.",), "Friday 7pm", "took the booking back"),
        (("B: Ok you're booked, party of six.",), "Friday 7pm", "party of 6, not 2"),
        (("B: Well, I can't say you're all set yet.",), "Friday 7pm", "not confirmed a booking"),
    ],
)
def test_a_booking_is_what_the_business_confirmed_not_what_was_asked(business, time, because):
    said = turns(BOOK_ASK, *business)
    assert because in refused(judge.judge_booked(said, party=2, time=time, requested_party=2, requested_time="Friday 7pm"))


def test_the_confirmed_time_and_day_support_the_booking_they_confirm():
    moved = turns(BOOK_ASK, "B: We're fully booked at 7, I can do 8:30.", "A: Okay.", "B: Great, you're booked for 8:30.")
    supported(judge.judge_booked(moved, party=2, time="Friday 8:30pm", requested_party=2, requested_time="Friday 7pm"))
    plain = turns(BOOK_ASK, "B: You're all set, table for 2 at 7.")
    supported(judge.judge_booked(plain, party=2, time="Friday 7pm", requested_party=2, requested_time="Friday 7pm"))
    for said, time in (("B: We don't have anything at 7. I've got you down for 8.", "Friday 8pm"),
                       ("B: Perfect, see you Friday at 7.", "Friday 7pm"), ("B: Great, you're booked for 2 at 7.", "Friday 7pm"),
                       ("B: We're full at 7. Oh wait, one just freed up, you're booked for 7pm.", "Friday 7pm")):
        supported(judge.judge_booked(turns(BOOK_ASK, said), party=2, time=time, requested_party=2, requested_time="Friday 7pm"))


@pytest.mark.parametrize(
    ("business", "record", "holds"),
    [
        ("Yes we do.", "In stock.", True),
        ("We do, yeah, aisle 4.", "In stock.", True),
        ("Yep, plenty.", "In stock, plenty.", True),
        ("Let me check... yes, we have one left.", "Limited: one left.", True),
        ("It's on backorder.", "Out of stock.", True),
        ("It's on backorder.", "In stock.", False),
        ("We have them online only, not in the store.", "In stock.", False),
        ("We have them online only, not in the store.", "Not in the store, online only.", True),
        ("I see two in the system but I can't promise they're on the shelf.", "In stock, 2.", False),
        ("Do you want me to check if we have some?", "In stock.", False),  # a question states nothing
        ("Yes, go ahead.", "In stock.", False),
        ("Yes, how can I help you?", "In stock.", False),
    ],
)
def test_stock_answers_are_read_as_said(business, record, holds):
    judged = judge.judge_answer(turns("B: Hello.", "A: Is the cast iron skillet in stock?", f"B: {business}"), Q.STOCK, record)
    assert isinstance(judged, judge.Supported) is holds, judged


@pytest.mark.parametrize(
    ("business", "record", "holds"),
    [
        ("It's in the housewares section.", "Housewares section.", True),
        ("It's in the housewares section.", "Aisle 12.", False),
        ("It's in the back, by the paint.", "Back of the store.", True),
        ("It's in the back, by the paint.", "Front of the store.", False),
        ("They're at the front, near the registers.", "Front of the store.", True),
        ("Check the seasonal aisle.", "Seasonal aisle.", True),
        ("It's in the garden center.", "Garden center.", True),
        ("It's in aisle 3, I think, or maybe 4.", "Aisle 3.", False),  # the doubt comes after the place
        ("It's in aisle 3, I think, or maybe 4.", "Aisle 3, they think, maybe 4.", True),
        ("It's in aisle 3, but I think the lids are in 4.", "Aisle 3.", True),
        ("Go past the front desk, it's in aisle 2.", "Aisle 2.", True),
        ("Aisle 5, but I'm not sure.", "Aisle 5.", False),  # a doubt after "but" that says nothing new
        ("Aisle 5, but I'm not sure.", "Aisle 5, they were not sure.", True),
        ("Aisle 5 or 6.", "Aisle 5.", False),
        ("It's at the front desk.", "Front of the store.", False),
    ],
)
def test_places_are_read_as_said(business, record, holds):
    judged = judge.judge_answer(turns("B: Hello.", "A: Which aisle is the skillet in?", f"B: {business}"), Q.AISLE, record)
    assert isinstance(judged, judge.Supported) is holds, judged


@pytest.mark.parametrize("business", ["You'd have to come in to check.", "Check our website.", "It's all on our website.",
                                      "We don't give that out over the phone.", "I'd rather not say.",
                                      "We don't give out stock information over the phone.",
                                      "Just ask someone when you get here."])
def test_being_sent_elsewhere_for_the_answer_is_a_refusal(business):
    said = turns("B: Hello.", ASKED, f"B: {business}")
    assert supported(judge.judge_declined(said, Q.HOURS, None)).reason == "refused"


def test_book_declined_reasons_come_from_the_words():
    full = turns(BOOK_ASK, "B: I'm sorry, we're fully booked on Friday evening.")
    assert supported(judge.judge_book_declined(full, alternative_offered=None)).reason == "fully_booked"
    later = turns(BOOK_ASK, "B: We're fully booked at seven. The earliest is 9:30pm.")
    assert supported(judge.judge_book_declined(later, alternative_offered="9:30pm")).reason == "no_slot_in_window"
    assert "has not said" in refused(judge.judge_book_declined(turns(BOOK_ASK, "B: Sure!"), alternative_offered=None))


# -- provenance and typed answers ----------------------------------------------------------------------------


def test_a_quote_is_placed_by_the_fragments_it_touches():
    turn = Turn("business", "Hello. We open at nine.", (Span(0, 1000, 1400), Span(6, 1500, 2200), Span(15, 2200, 2900)))
    t = (Turn("agent", "What are your hours?"), turn)
    (q,) = supported(judge.judge_answer(t, Q.HOURS, "They open at nine.")).quotes
    assert (q.text, q.start_ms, q.end_ms) == ("We open at nine.", 1500, 2900)


def test_typed_hours_from_the_words():
    hours = answers.read_answer(Q.HOURS, ["Monday to Saturday 8 to 6, closed on Sundays."])
    assert hours == answers.Hours((
        answers.DayRange(("monday", "tuesday", "wednesday", "thursday", "friday", "saturday"), "08:00", "18:00"),
        answers.DayRange(("sunday",), None, None, closed=True),
    ))


_SATURDAY_AT_THREE = [(tuple(d for d in w.WEEKDAYS if d != "saturday"), "09:00", "18:00", False), (("saturday",), "09:00", "15:00", False)]


@pytest.mark.parametrize(("said", "typed"), [
    # times before their days
    ("We're open eight to eight, seven days a week.", [(tuple(w.WEEKDAYS), "08:00", "20:00", False)]),
    # days set apart after "except" / "but": closed, or with a time of their own
    ("We're open every day but Sunday, nine to five.",
     [(("sunday",), None, None, True), (tuple(w.WEEKDAYS[:6]), "09:00", "17:00", False)]),
    ("We're open nine to six every day except sundays when we close at four.",
     [(tuple(w.WEEKDAYS[:6]), "09:00", "18:00", False), (("sunday",), "09:00", "16:00", False)]),
    ("We open at 9 every day except Sunday.", [(tuple(w.WEEKDAYS[:6]), "09:00", None, False), (("sunday",), None, None, True)]),
    # after "closed every day", the days set apart are the open ones
    ("We're closed every day except saturday, ten to two.",
     [(tuple(d for d in w.WEEKDAYS if d != "saturday"), None, None, True), (("saturday",), "10:00", "14:00", False)]),
    ("We're closed every day except saturday.", [(tuple(d for d in w.WEEKDAYS if d != "saturday"), None, None, True)]),
    ("Nine to five Monday to Friday, but not weekends.",
     [(tuple(w.WEEKDAYS[:5]), "09:00", "17:00", False), (("saturday", "sunday"), None, None, True)]),
    # a day set apart to close early: its closing time, the opening the other days'
    ("We're open nine to six every day, except we close early on Saturday at three.", _SATURDAY_AT_THREE),
    ("we're open nine to six every day except we close early on saturday at three", _SATURDAY_AT_THREE),
    ("We're open nine to six every day, but on Saturdays we close early, at three.", _SATURDAY_AT_THREE),
    ("We're open nine to six every day, Saturdays we close at three instead.", _SATURDAY_AT_THREE),
    ("we're open nine to six every day saturdays we close at three instead", _SATURDAY_AT_THREE),
    # the days set apart, then ", when" and their own hours
    ("We're open every day except Sundays, when we're open eleven to four.", [(("sunday",), "11:00", "16:00", False)]),
    ("We're open nine to six every day except Sundays, when we're open eleven to four.",
     [(tuple(w.WEEKDAYS[:6]), "09:00", "18:00", False), (("sunday",), "11:00", "16:00", False)]),
    # no commas: a day said closed, then days with their own time
    ("sundays we're closed monday through saturday nine to six.",
     [(("sunday",), None, None, True), (tuple(w.WEEKDAYS[:6]), "09:00", "18:00", False)]),
    # more days for the time just said
    ("We close at midnight on Fridays and Saturdays.", [(("friday", "saturday"), None, "00:00", False)]),
    ("Open till ten on Fridays and on Saturdays, and Sundays we close at six.",
     [(("friday", "saturday"), None, "22:00", False), (("sunday",), None, "18:00", False)]),
    # which end of the day a lone time is, by the words before it
    ("We don't open until ten on Sundays.", [(("sunday",), "10:00", None, False)]),
    # days set apart for a time to come: an opening time is their opening, not their closing
    ("We're open nine to six every day, but on Sundays we open late, at noon.",
     [(tuple(w.WEEKDAYS[:6]), "09:00", "18:00", False), (("sunday",), "12:00", "18:00", False)]),
    # days set apart and said closed are closed, though "open" is said of them too
    ("Nine to five weekdays, but on Sundays we are closed and don't open.",
     [(tuple(w.WEEKDAYS[:5]), "09:00", "17:00", False), (("sunday",), None, None, True)]),
])
def test_typed_hours_where_days_come_after_times_or_are_set_apart(said, typed):
    got = answers.read_answer(Q.HOURS, [said]).ranges
    assert [(r.days, r.opens, r.closes, r.closed) for r in got] == typed


def test_open_around_the_clock_is_a_typed_reading_of_its_own():
    assert answers.read_answer(Q.HOURS, ["We're open 24/7."]).ranges == (
        answers.DayRange(tuple(w.WEEKDAYS), None, None, around_the_clock=True),)
    assert answers.read_answer(Q.HOURS, ["Open 24 hours on weekdays, 8 to 8 on weekends."]).ranges == (
        answers.DayRange(tuple(w.WEEKDAYS[:5]), None, None, around_the_clock=True),
        answers.DayRange(("saturday", "sunday"), "08:00", "20:00"))
    from calld.domain.results import DayHours

    for contradiction in ({"closed": True, "around_the_clock": True}, {"around_the_clock": True, "opens": "09:00"},
                          {"closed": True, "closes": "17:00"}):
        with pytest.raises(ValueError, match="around the clock|no opening or closing"):
            DayHours(days=("monday",), **contradiction)


def test_today_becomes_the_businesss_date():
    hours = answers.read_answer(Q.HOURS, ["We close at 9 tonight."], today=dt.date(2026, 11, 30))
    assert hours.ranges == (answers.DayRange(("monday",), None, "21:00", date="2026-11-30"),)


def test_typed_stock_and_aisle():
    assert answers.read_answer(Q.STOCK, ["Only two left."]) == answers.Stock("limited", 2)
    assert answers.read_answer(Q.AISLE, ["It's in the garden department."]) == answers.Aisle("garden department")


@pytest.mark.parametrize(("said", "typed"), [
    ("We have two hundred bags.", ("in_stock", 200)),
    ("We have half a dozen.", ("in_stock", 6)),
    ("We've got a single one left.", ("limited", 1)),
    ("We have a dozen or so.", ("in_stock", None)),  # roughly: no exact quantity
])
def test_typed_stock_counts_said_in_words(said, typed):
    assert answers.read_answer(Q.STOCK, [said]) == answers.Stock(*typed)


@pytest.mark.parametrize(("item", "typed"), [
    ("12 inch skillet", answers.Stock("in_stock", None)),
    ("10 inch skillet", answers.Stock("out_of_stock", 0)),
    ("cast iron skillet", answers.Stock("some_kinds", None, (answers.KindStock("twelve inch", "in_stock", None),
                                                             answers.KindStock("ten inch", "out_of_stock", None)))),
])
def test_typed_stock_sizes_said_in_words_are_kinds(item, typed):
    said = ["We have the twelve inch, we're out of the ten inch."]
    assert answers.read_answer(Q.STOCK, said, item=item) == typed


def test_typed_stock_kind_by_kind_when_the_business_spoke_only_of_kinds():
    from calld.runtime.verdict import typed_answer

    said = ["The 10-inch is sold out but we have the 12-inch."]
    typed = answers.read_answer(Q.STOCK, said, item="cast iron skillet")
    assert typed == answers.Stock("some_kinds", None, (answers.KindStock("10-inch", "out_of_stock", None),
                                                       answers.KindStock("12-inch", "in_stock", None)))
    assert [(k.kind, k.availability) for k in typed_answer(typed).kinds] == [("10-inch", "out_of_stock"), ("12-inch", "in_stock")]
    cheap = answers.read_answer(Q.STOCK, ["The cheap ones are gone, but the deluxe ones we have."], item="cast iron skillet")
    assert [(k.kind, k.availability) for k in cheap.kinds] == [("cheap ones", "out_of_stock"), ("deluxe ones", "in_stock")]
    # the kind asked for is the item: its word decides, the other kind is not it
    assert answers.read_answer(Q.STOCK, said, item="10-inch cast iron skillet") == answers.Stock("out_of_stock", 0)
    # a kind's last word counts: both gone is out of stock
    both = answers.read_answer(Q.STOCK, [*said, "Oh wait, the 12-inch is gone too."], item="cast iron skillet")
    assert both.availability == "out_of_stock"
    # the item itself said in stock, a kind of it out: in stock
    assert answers.read_answer(Q.STOCK, ["Yes we have them.", "We're out of the blue ones though."], item="mugs").availability == "in_stock"


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


# -- honesty in the instructions ------------------------------------------------------------------------------


def test_both_jobs_tell_the_agent_to_answer_are_you_a_robot_truthfully():
    from calld.core.plan import EVIDENCE_RULE, HONESTY
    from tests.core_helpers import make_book_plan, make_plan

    for plan in (make_plan(), make_book_plan()):
        assert HONESTY in plan.live.instructions
        assert "real person" in HONESTY and "Never say or suggest that you are a person" in HONESTY
        assert EVIDENCE_RULE in plan.live.backend_instructions


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


# -- what a fact means where it is said: closed days, which end of the day, corrections, doubt ---------------


def _after_ask(business: str) -> tuple[Turn, ...]:
    return turns("B: Hello.", ASKED, f"B: {business}")


@pytest.mark.parametrize(
    ("question", "business", "record", "because"),
    [
        (Q.HOURS, "We are not open on Saturday or Sunday, only weekdays 9 to 5.", "They are open on Saturday and Sunday.",
         "closed then"),
        (Q.HOURS, "We're closed today, sorry.", "They're open today.", "closed then"),
        (Q.HOURS, "We're open every day except Sunday, eight to six.", "Open Sunday.", "closed then"),
        (Q.HOURS, "We're open Monday through Friday.", "Closed on Friday.", "open then"),
        (Q.HOURS, "We open at 9 and close at 5.", "They open at 5 PM and close at 9 PM.", "as its closing time"),
        (Q.HOURS, "I can't tell you our hours, but the store on Main Street opens at 8.", "They open at 8.",
         "has not said 8:00"),
        (Q.HOURS, "We're open Monday through Friday, 9 AM to 5 PM. Actually no, sorry, on Fridays we close at 4 PM.",
         "Open Friday until 5 PM.", "later said 4:00 PM"),
        (Q.HOURS, "We open at 9. Actually, wait, we open at 10 now.", "They open at 9.", "later said 10:00"),
        (Q.HOURS, "I'm not sure, I think maybe 9 to 5, but don't quote me.", "9 to 5.", "not sure"),
        (Q.AISLE, "It's not in aisle 5, it's in aisle 7.", "It's in aisle 5.", "in aisle 5 now"),
        (Q.AISLE, "We used to keep it in aisle 3.", "Aisle 3.", "in aisle 3 now"),
        (Q.AISLE, "It's in aisle 3 but we don't stock it anymore.", "Aisle 3.", "do not have it"),
        (Q.AISLE, "It's in aisle 5. Oh wait, we moved it to aisle 9.", "Aisle 5.", "later said aisle 9"),
        (Q.AISLE, "It should be in aisle 5, I think.", "Aisle 5.", "not sure"),
        (Q.STOCK, "I think we have some, probably.", "They have it in stock.", "not sure"),
    ],
)
def test_a_record_the_business_s_words_contradict_is_refused(question, business, record, because):
    assert because in refused(judge.judge_answer(_after_ask(business), question, record))


@pytest.mark.parametrize(
    ("question", "business", "record"),
    [
        (Q.HOURS, "We are not open on Saturday or Sunday, only weekdays 9 to 5.", "Weekdays 9 to 5, closed weekends."),
        (Q.HOURS, "We're closed today, sorry.", "They are closed today."),
        (Q.HOURS, "We're open every day except Sunday, eight to six.", "Monday to Saturday 8 to 6."),
        (Q.HOURS, "We open at 9 and close at 5.", "They open at 9 and close at 5."),
        (Q.HOURS, "We don't open until 10 on Saturdays.", "They open at 10 on Saturday."),
        (Q.HOURS, "We don't close until 9 on Fridays.", "Open until 9 on Friday."),
        (Q.HOURS, "We're open Monday through Friday, 9 AM to 5 PM. Actually no, sorry, on Fridays we close at 4 PM.",
         "Monday to Thursday 9 AM to 5 PM, Friday until 4 PM."),
        (Q.HOURS, "Weekdays nine to five. The pharmacy opens at 10.", "They open at 9 on weekdays."),
        (Q.HOURS, "I'm not sure, I think maybe 9 to 5, but don't quote me.", "They think 9 to 5, but were not sure."),
        (Q.AISLE, "It's not in aisle 5, it's in aisle 7.", "Aisle 7."),
        (Q.AISLE, "It's in aisle 5, and the lids are in aisle 9.", "Aisle 5."),
        (Q.AISLE, "It's in aisle 3 but we don't stock it anymore.", "Aisle 3, but they don't stock it anymore."),
    ],
)
def test_the_same_words_support_the_record_that_says_what_they_say(question, business, record):
    supported(judge.judge_answer(_after_ask(business), question, record))


@pytest.mark.parametrize(
    ("text", "roles"),
    [
        ("9 AM to 5 PM", ["open", "close"]),
        ("we open at 9 and close at 5", ["open", "close"]),
        ("open until 9", ["close"]),
        ("we don't open until 10", ["open"]),
        ("from 8 in the morning", ["open"]),
        ("at 9", [None]),
    ],
)
def test_a_time_is_read_as_the_opening_or_the_closing_one_from_its_words(text, roles):
    assert [w.clock_role(text, f) for f in w.clocks(text)] == roles


@pytest.mark.parametrize(
    ("business", "record", "holds"),
    [
        ("We're open till 6 on weekdays and till 4 on Saturday.", "They close at 4 on weekdays.", False),
        ("We're open till 6 on weekdays and till 4 on Saturday.", "They close at 6 on weekdays and 4 on Saturday.", True),
        ("Monday to Friday we're open 9 to 5, and Saturday 10 to 2.", "Open 10 to 2 on weekdays.", False),
        ("Monday to Friday we're open 9 to 5, and Saturday 10 to 2.", "Weekdays 9 to 5, Saturday 10 to 2.", True),
        ("On Saturdays, we open at 10 and close at 2.", "Open until 2 on Fridays.", False),  # the days carry on
        ("On Saturdays, we open at 10 and close at 2.", "Saturday 10 to 2.", True),
        ("We open at 9 and close at 6 on weekdays.", "Open at 9 on weekdays.", True),  # no days before: not known
        ("Monday and Tuesday 9 to 5.", "Open 9 to 5 on Monday.", True),  # both days take the hours after them
        ("We close at 6 today but tomorrow at 4.", "They close at 4 today.", False),
        ("We close at 6 today but tomorrow at 4.", "They close at 4 tomorrow.", True),
        ("Weekdays we're open from 9 until 6, but Saturday only until 4.", "Closes at 4 on weekdays.", False),
        ("We're open 9 to 5 on Saturday, otherwise 8 to 8.", "Open at 8 on Saturday.", False),
        ("We're open 9 to 5 on Saturday, otherwise 8 to 8.", "Opens at 8 on Monday.", True),
    ],
)
def test_a_time_is_for_the_days_it_was_said_for(business, record, holds):
    said = _after_ask(business)
    judged = judge.judge_answer(said, Q.HOURS, record)
    assert isinstance(judged, judge.Supported) is holds, judged
    if not holds:
        assert "not for" in judged.why or "later said" in judged.why
    if business.startswith("We're open till 6 on weekdays") and not holds:
        assert "said 4:00 for Saturday, not for weekdays" in judged.why  # the days named as a person names them


@pytest.mark.parametrize(
    ("business", "record", "holds"),
    [
        # more days for a time said before them, or for the time after them, as the sentence runs
        ("We close at 5 on Monday and Tuesday and 6 on Wednesday.", "Closes at 5 on Tuesday.", True),
        ("We close at 5 on Monday and Tuesday and 6 on Wednesday.", "Closes at 6 on Tuesday.", False),
        ("We open at 9 Monday, Tuesday and Wednesday and 10 Thursday and Friday.", "Opens at 9 on Wednesday.", True),
        ("We open at 9 Monday, Tuesday and Wednesday and 10 Thursday and Friday.", "Opens at 10 on Wednesday.", False),
        ("Weekdays till 6, Saturday and Sunday till 4.", "Closes at 4 on Saturday.", True),
        ("Weekdays till 6, Saturday and Sunday till 4.", "Closes at 6 on Saturday.", False),
        # times before days set apart are for the other days; a later time for the same days wins
        ("We're open until 9, but on Sundays until 6.", "Closes at 9 on Sunday.", False),
        ("We're open 9 to 5, Saturday 10 to 2.", "Saturday 9 to 5.", False),
        ("We're open every day 9 to 5 but Sundays only till 3.", "Closes at 5 on Sunday.", False),
        ("We're open every day 9 to 5 but Sundays only till 3.", "Closes at 3 on Sunday.", True),
        # counts and spans are no times
        ("Open 7 days a week, 9 to 5.", "Open at 7.", False),
        ("We have 3 on Saturday.", "Opens at 3 on Saturday.", False),
        ("We need 3 weekdays notice. We open at 9.", "Opens at 3.", False),
        # around the clock: said now, of this store, for the days claimed
        ("We're open 24 hours on weekends, 9 to 5 on weekdays.", "Open 24 hours on weekdays.", False),
        ("We're open 24 hours on weekends, 9 to 5 on weekdays.", "Open 24 hours on weekends, 9 to 5 on weekdays.", True),
        ("We're not open 24 hours, we close at 10.", "Open 24 hours.", False),
        ("We're not open 24 hours, we close at 10.", "Not open 24 hours; they close at 10.", True),
        ("We used to be 24/7 but now we're 6 to midnight.", "Open 24/7.", False),
        ("Our pharmacy is open 24 hours, the store closes at 9.", "Open 24 hours.", False),
        ("Our drive-thru is 24 hours.", "Open 24 hours.", False),
        ("Weekdays nine to five. The pharmacy opens at 10.", "They open at 10.", False),
        ("We never close.", "Open 24 hours.", True),
        ("We're not open 24/7, weekdays only.", "Open Saturday.", False),
        ("The store downtown is open 24/7; we're open 9 to 5 weekdays.", "Open Saturday.", False),
        ("If it's a holiday we close early, otherwise we're open 9 to 6.", "Open Sunday.", False),
    ],
)
def test_hours_are_read_day_by_day_as_a_person_would(business, record, holds):
    judged = judge.judge_answer(_after_ask(business), Q.HOURS, record)
    assert isinstance(judged, judge.Supported) is holds, judged


@pytest.mark.parametrize(
    ("question", "business", "record", "holds"),
    [
        (Q.HOURS, "We close at 9, sorry no, at 8.", "Closes at 9 PM.", False),
        (Q.HOURS, "We close at 9, sorry no, at 8.", "Closes at 8 PM.", True),
        (Q.HOURS, "We used to close at 9 but now it's 8.", "Closes at 9 PM.", False),
        (Q.HOURS, "We close at 9. Actually, 8 on Sundays.", "Sunday closes at 9 PM.", False),
        (Q.HOURS, "We're open until 9 tonight.", "Open until 9 AM today.", False),
        (Q.HOURS, "We're open until 9 tonight.", "Open until 9 PM today.", True),
        (Q.AISLE, "Aisle 4, wait, no, aisle 14.", "Aisle 4.", False),
        (Q.AISLE, "Aisle 4, wait, no, aisle 14.", "Aisle 14.", True),
        (Q.STOCK, "We do not.", "In stock.", False),
        (Q.STOCK, "We do not.", "Out of stock.", True),
        (Q.STOCK, "We don't.", "Out of stock.", True),
        (Q.STOCK, "We sold our last one this morning.", "In stock.", False),
        (Q.STOCK, "It's available online.", "In stock.", False),
        (Q.STOCK, "We have lots on order but none in the store.", "In stock.", False),
    ],
)
def test_a_fact_taken_back_or_in_the_past_is_not_the_answer(question, business, record, holds):
    said = turns("B: Hello.", "A: What are your hours? Is it in stock? Which aisle?", f"B: {business}")
    assert isinstance(judge.judge_answer(said, question, record), judge.Supported) is holds


@pytest.mark.parametrize(
    ("question", "business"),
    [
        (Q.STOCK, "We're out of stock. You'd need to check our website for restock."),
        (Q.AISLE, "Aisle 12. I don't know about the lithium ones."),
        (Q.HOURS, "We're open 9 to 5. I can't tell you about the holidays though."),
    ],
)
def test_an_answer_after_the_ask_refuses_a_declined_record_whatever_else_they_would_not_say(question, business):
    said = turns("B: Hello.", "A: What are your hours? Is it in stock? Which aisle?", f"B: {business}")
    assert "did answer" in refused(judge.judge_declined(said, question, None))


def test_a_later_time_for_other_days_does_not_undo_an_earlier_one():
    said = turns("B: Hello.", ASKED, "B: Weekdays we close at 6.", "A: Thanks.", "B: Saturdays we close at 4, and weekdays we open at 9.")
    supported(judge.judge_answer(said, Q.HOURS, "Closes at 6 on weekdays."))


def test_open_around_the_clock_is_an_answer_heard_and_quoted():
    said = _after_ask("We're open 24 hours.")
    assert judge.answered_after_ask(said, Q.HOURS)
    assert [q.text for q in supported(judge.judge_answer(said, Q.HOURS, "Open 24 hours.")).quotes] == ["We're open 24 hours."]


@pytest.mark.parametrize(
    ("text", "days"),
    [
        ("till 6 on weekdays and till 4 on Saturday", [{0, 1, 2, 3, 4}, {5}]),
        ("On Saturdays, we open at 10 and close at 2", [{5}, {5}]),
        ("We open at 9 and close at 6 on weekdays", [None, {0, 1, 2, 3, 4}]),
        ("9 to 5, Monday to Friday", [{0, 1, 2, 3, 4}, {0, 1, 2, 3, 4}]),
        ("Sundays 11 to 4, otherwise 9 to 6", [{6}, {6}, set(range(6)), set(range(6))]),
        ("every day except Sunday, 8 to 6", [set(range(6)), set(range(6))]),  # the days not set apart
        ("open 24 hours except Sundays, Sundays 8 to 8", [{6}, {6}]),
        ("9 to 5 except holidays", [None, None]),  # which days, these words do not say
        ("we close at 5 except on Fridays, when it's 6 o'clock", [{0, 1, 2, 3, 5, 6}, {4}]),
        ("we close at 6 today", [{"today"}]),
    ],
)
def test_the_days_a_time_is_said_for(text, days):
    assert [w.clock_days(text, f) for f in w.clocks(text)] == [None if d is None else frozenset(d) for d in days]


def test_an_ask_that_never_reached_the_line_asked_nobody():
    unheard = (Turn("business", "You've reached Joe's."), Turn("agent", "What are your hours?", on_line=False),
               Turn("business", "We're open 9 to 5."))
    assert not judge.answered_after_ask(unheard, Q.HOURS)
    heard = (unheard[0], Turn("agent", "What are your hours?"), unheard[2])
    assert judge.answered_after_ask(heard, Q.HOURS)


def test_the_business_s_whole_answer_is_read_a_later_correction_included():
    said = _after_ask("We're open Monday through Friday, 9 AM to 5 PM. Actually no, sorry, on Fridays we close at 4 PM.")
    found = judge.find_answers(said, Q.HOURS)
    assert [q.text for q in found] == ["We're open Monday through Friday, 9 AM to 5 PM.",
                                       "Actually no, sorry, on Fridays we close at 4 PM."]
    assert judge.find_answer(said, Q.HOURS) == found[0]


@pytest.mark.parametrize(
    ("question", "business", "record", "holds"),
    [
        (Q.HOURS, ("Sundays we're closed.",), "Closed on Sunday.", True),
        (Q.HOURS, ("Sundays we're closed.",), "Open Sundays.", False),
        (Q.HOURS, ("Sunday, we're closed.",), "Closed on Sunday.", True),
        (Q.HOURS, ("Today we're closed, but tomorrow we're open 9 to 5.",), "Closed today, open tomorrow 9 to 5.", True),
        (Q.HOURS, ("We're open nine to five, Monday to Saturday, closed Sundays.",), "Mon-Sat 9am-5pm, Sun closed.", True),
        (Q.HOURS, ("We shut at 6 on Fridays.",), "Open until 6 on Friday.", True),
        (Q.HOURS, ("We're closed for lunch on Mondays from 12 to 1.",), "Open on Monday.", True),
        (Q.HOURS, ("We don't open Sundays until noon.",), "They open at noon on Sundays.", True),
        (Q.HOURS, ("We're open Monday to Friday, closed on holidays.",), "Open Monday to Friday.", True),
        (Q.HOURS, ("Closed Sunday, open every day otherwise.",), "Open Sunday.", False),  # the day named alone wins
        (Q.HOURS, ("The store on Main Street is closed Sundays, we're open every day.",), "Open Sunday.", True),
        (Q.HOURS, ("We're open 9 to 5, but I think the pharmacy closes at 4.",), "Open 9 to 5.", True),
        (Q.HOURS, ("Maybe you could call back tomorrow, but we're open 9 to 5.",), "Open 9 to 5.", True),
        (Q.HOURS, ("I don't know exactly, around 9 to 5.",), "9 to 5.", False),
        (Q.HOURS, ("Sundays 11 to 4, otherwise we're open 9 to 6.",), "Open at 9 on Monday.", True),
        (Q.HOURS, ("Sundays 11 to 4, otherwise we're open 9 to 6.",), "Closed on Monday.", False),
        (Q.HOURS, ("We're open Saturday 10 to 2, closed the rest of the week.",), "Open Monday.", False),
        (Q.HOURS, ("We're open Saturday 10 to 2, closed the rest of the week.",), "Saturday 10 to 2, closed Monday.", True),
        (Q.AISLE, ("We moved it from aisle 3 to aisle 9.",), "Aisle 9.", True),
        (Q.AISLE, ("We moved it from aisle 3 to aisle 9.",), "Aisle 3.", False),
        (Q.AISLE, ("It was moved to aisle 9.",), "Aisle 9.", True),
        (Q.AISLE, ("You can't miss it it's in aisle 5.",), "Aisle 5.", True),
        (Q.AISLE, ("It was in aisle 3, now it's in aisle 5.",), "Aisle 3.", False),
        (Q.AISLE, ("Aisle 4, next to the batteries. I mean, it's at the end of aisle 4.",), "Aisle 4.", True),
        (Q.AISLE, ("It's in aisle 5.", "We're out of the large size though."), "Aisle 5.", True),
        (Q.AISLE, ("Get the one on the top shelf in aisle 3.",), "Aisle 3, top shelf.", True),
        (Q.AISLE, ("The store on Main Street has it in aisle 5.",), "Aisle 5.", False),
        (Q.AISLE, ("It's in the garden center, not aisle 5.",), "Aisle 5.", False),
        (Q.AISLE, ("It's in the garden center, not aisle 5.",), "In the garden center.", True),
        (Q.HOURS, ("We open at 7 on weekdays, 8 on Saturdays.",), "Opens at 7 on weekdays and 8 on Saturday.", True),
        (Q.HOURS, ("We open at 7 on weekdays, 8 on Saturdays.",), "Opens at 8 on weekdays.", False),
        (Q.HOURS, ("We're open 24/7.",), "Open 24 hours, every day.", True),
        (Q.HOURS, ("Twenty four hours, seven days a week.",), "Open 24/7.", True),
        (Q.HOURS, ("We're open 9 to 5.",), "Open 24 hours.", False),
        (Q.HOURS, ("The store downtown is open 24 hours, we close at 9.",), "Open 24 hours.", False),
    ],
)
def test_ordinary_answers_are_read_as_a_person_would(question, business, record, holds):
    said = turns("B: Hello.", ASKED, *(f"B: {b}" for b in business))
    assert isinstance(judge.judge_answer(said, question, record), judge.Supported) is holds


@pytest.mark.parametrize(
    ("text", "clocks"),
    [
        ("we close at five to nine", [(8, 55, None)]),  # a moment: "at" before it
        ("from five to nine", [(5, 0, None), (9, 0, None)]),  # a range
        ("twenty past five", [(5, 20, None)]),
        ("ten after six pm", [(6, 10, True)]),
        ("we open at half seven and close at half five", [(7, 30, None), (5, 30, None)]),
        ("it takes half an hour", []),
        ("7 past 5", []),  # nobody says a time so
        ("17 minutes past 5", [(5, 17, None)]),
    ],
)
def test_minutes_past_and_to_the_hour_are_read_as_said(text, clocks):
    assert [(f.clock.hour, f.clock.minute, f.clock.pm) for f in w.clocks(text)] == clocks


@pytest.mark.parametrize(
    ("question", "business", "record", "holds"),
    [
        # days set apart by "except" are not the time's; the others are, and are open
        (Q.HOURS, "We're open 24 hours except Sundays, Sundays 8 to 8.", "Open 24 hours on Sunday.", False),
        (Q.HOURS, "We're open 24 hours except Sundays, Sundays 8 to 8.", "Open 24 hours Monday to Saturday.", True),
        (Q.HOURS, "We're open 24 hours except Sundays, Sundays 8 to 8.", "Sunday 8 AM to 8 PM.", True),
        (Q.HOURS, "We're open every day except Sunday, 8 to 6.", "Saturday 8 to 6.", True),
        (Q.HOURS, "We're open every day except Sunday, 8 to 6.", "Sunday 8 to 6.", False),
        (Q.HOURS, "We close at 5 except on Fridays, when it's 6 o'clock.", "Closes at 6 on Monday.", False),
        (Q.HOURS, "We close at 5 except on Fridays, when it's 6 o'clock.", "Closes at 6 on Friday.", True),
        # a time said for the days not set apart names them ("Monday until 9")
        (Q.HOURS, "We're open until 9, but on Sundays until 6.", "Open until 9 on Monday.", True),
        (Q.HOURS, "We're open until 9, but on Sundays until 6.", "Open until 9 on Sunday.", False),
        (Q.HOURS, "We close at five to nine.", "Closes at 8:55.", True),
        (Q.HOURS, "We close at five to nine.", "Open 5 to 9.", False),
        (Q.HOURS, "We close at twenty past five.", "Closes at 5:20.", True),
        (Q.HOURS, "We open at half seven.", "Opens at 7:30.", True),
        (Q.HOURS, "We close at ten after six.", "Closes at 6.", False),
        # a landmark is not the place
        (Q.AISLE, "It's near aisle 20.", "Aisle 20.", False),
        (Q.AISLE, "It's near aisle 20.", "Near aisle 20.", True),
        (Q.AISLE, "It's next to aisle 20, in aisle 21.", "Aisle 21.", True),
        (Q.AISLE, "It's by the paint counter.", "By the paint counter.", True),
        (Q.AISLE, "It's in aisle 20, next to the paint.", "Aisle 20.", True),
        # every number in the record was said
        (Q.AISLE, "It's aisle 5, bay 3.", "Aisle 5, bay 30.", False),
        (Q.AISLE, "Aisle 5.", "Aisle 5, bay 3.", False),
        (Q.STOCK, "We've got two.", "In stock, 20.", False),
        (Q.STOCK, "Yes, we've got twenty.", "In stock, 20.", True),
        (Q.STOCK, "Yeah we have a dozen.", "In stock, 12 of them.", True),
        (Q.STOCK, "Yes, we have the WD-40.", "WD-40 is in stock.", True),
        (Q.STOCK, "Yes, we have the 12 inch one.", "The 12-inch skillet is in stock.", True),
        (Q.STOCK, "We're out, more in two weeks.", "Out of stock, back in 3 weeks.", False),
        # not to be had now
        (Q.STOCK, "Yes, it's available for pickup tomorrow.", "In stock.", False),
        (Q.STOCK, "Yes, it's available for pickup tomorrow.", "Not in stock now; available for pickup tomorrow.", True),
        (Q.STOCK, "It'll be back in stock next week.", "In stock.", False),
        (Q.STOCK, "We have them on the shelf until Sunday.", "In stock.", True),
        (Q.STOCK, "We have one but it's reserved for a customer.", "In stock.", False),
    ],
)
def test_what_is_said_around_a_fact_is_read_too(question, business, record, holds):
    said = turns("B: Hello.", ASKED, f"B: {business}")
    assert isinstance(judge.judge_answer(said, question, record), judge.Supported) is holds


# -- answers as real clerks give them: a correction, a negation, a qualifier, no punctuation ----------


@pytest.mark.parametrize(
    ("question", "business", "record", "holds"),
    [
        # closed days, said the ways people say them
        (Q.HOURS, ("we're open every day but sunday",), "Open Sunday.", False),
        (Q.HOURS, ("every day but sunday, nine to six",), "Saturday 9 to 6.", True),
        (Q.HOURS, ("every day but sunday, nine to six",), "Open Sunday 9 to 6.", False),
        (Q.HOURS, ("mondays and tuesdays we're closed",), "Open Monday.", False),
        (Q.HOURS, ("mondays and tuesdays we're closed",), "Closed Monday and Tuesday.", True),
        (Q.HOURS, ("sundays we're not open",), "Open Sunday.", False),
        (Q.HOURS, ("we're open saturday, sunday we're not",), "Open Sunday.", False),
        (Q.HOURS, ("sunday's our day off",), "Open Sunday.", False),
        (Q.HOURS, ("we take sundays off",), "Open Sunday.", False),
        (Q.HOURS, ("we don't do weekends",), "Open Saturday.", False),
        (Q.HOURS, ("tomorrow's a holiday so we're closed",), "Open tomorrow.", False),
        (Q.HOURS, ("we're open late on thursdays till nine, other nights we close at six",), "Closes at 6 PM on Thursday.", False),
        # no punctuation: the days after a time, with their own time, are a piece of their own
        (Q.HOURS, ("monday through saturday nine to nine sunday eleven to six",), "Monday 11 to 6.", False),
        (Q.HOURS, ("monday through saturday nine to nine sunday eleven to six",), "Mon-Sat 9 to 9, Sunday 11 to 6.", True),
        (Q.HOURS, ("we're open eight to six monday through friday and eight to noon on saturday",), "Friday 8 to 12.", False),
        # spoken corrections
        (Q.HOURS, ("we open at nine, i mean ten",), "Opens at 9 AM.", False),
        (Q.HOURS, ("we open at nine, i mean ten",), "Opens at 10 AM.", True),
        (Q.HOURS, ("we close at nine, no, eight",), "Closes at 9 PM.", False),
        (Q.HOURS, ("we open at 8... uh no, 8:30",), "Opens at 8 AM.", False),
        (Q.HOURS, ("we open at 8. no wait, 7",), "Opens at 8 AM.", False),
        # a time said not to be it
        (Q.HOURS, ("we don't open at nine, we open at ten",), "Opens at 9 AM.", False),
        (Q.HOURS, ("we don't open at nine, we open at ten",), "Opens at 10 AM.", True),
        (Q.HOURS, ("it's not 9 to 5, it's 10 to 6",), "9 to 5.", False),
        (Q.HOURS, ("no, we don't stay open till ten",), "Open until 10 PM.", False),
        (Q.HOURS, ("we don't open until 10",), "Opens at 10.", True),  # "not until" says when it is
        (Q.HOURS, ("we were open till ten last year",), "Open until 10 PM.", False),
        # hours for some days or seasons only
        (Q.HOURS, ("on christmas eve we close at two",), "Closes at 2 PM.", False),
        (Q.HOURS, ("on christmas eve we close at two",), "On Christmas Eve they close at 2 PM.", True),
        (Q.HOURS, ("right now we close at nine, next month it goes to eight",), "Closes at 8 PM.", False),
        (Q.HOURS, ("right now we close at nine, next month it goes to eight",), "Closes at 9 PM.", True),
        (Q.HOURS, ("we're open 9 to 5 but closed for lunch 12 to 1",), "Open 9 AM to 1 PM.", False),
        # other stores and parts
        (Q.HOURS, ("the one on fifth street closes at ten, we close at nine",), "Closes at 10 PM.", False),
        (Q.HOURS, ("our westside store is open till ten, this one closes at nine",), "Open until 10 PM.", False),
        (Q.HOURS, ("the target across the street opens at seven, we open at eight",), "Opens at 7 AM.", False),
        (Q.HOURS, ("we close at nine but the kitchen closes at eight",), "Closes at 8 PM.", False),
        (Q.HOURS, ("we close at nine but the kitchen closes at eight",), "Closes at 9 PM.", True),
        (Q.HOURS, ("the garden center closes at six, the store's open till nine",), "Closes at 6 PM.", False),
        (Q.AISLE, ("Get the one on the top shelf in aisle 3.",), "Aisle 3, top shelf.", True),  # not another store
        # hedges
        (Q.HOURS, ("i wanna say we open at nine",), "Opens at 9 AM.", False),
        (Q.HOURS, ("we close at nine, don't hold me to that though",), "Closes at 9 PM.", False),
        (Q.AISLE, ("aisle five or six",), "Aisle 5.", False),
        # stock: the last word, what "none" and "not available" say, what is no answer
        (Q.STOCK, ("we do carry it. we're out right now though",), "In stock.", False),
        (Q.STOCK, ("yeah we have them", "A: Great, how many?", "oh actually hold on, it says zero, sorry, we're sold out"), "In stock.", False),
        (Q.STOCK, ("we have one left. actually no, someone just bought it",), "Limited: one left.", False),
        (Q.STOCK, ("we've got none",), "In stock.", False),
        (Q.STOCK, ("zero on hand",), "In stock.", False),
        (Q.STOCK, ("it isn't available right now",), "In stock.", False),
        (Q.STOCK, ("it's available to order online",), "In stock.", False),
        (Q.STOCK, ("we have them at our other store, not here",), "In stock.", False),
        (Q.STOCK, ("yeah, hold on, let me have a look",), "In stock.", False),
        (Q.STOCK, ("yes, i can do that, one sec",), "In stock.", False),
        (Q.STOCK, ("sure, do you have the sku",), "In stock.", False),
        (Q.STOCK, ("we've got thirty two of them",), "In stock, 2.", False),
        (Q.STOCK, ("we have twenty five in stock",), "25 in stock.", True),
        (Q.STOCK, ("no we're completely out",), "Out of stock.", True),
        (Q.STOCK, ("we stopped carrying those",), "Out of stock.", True),
        (Q.STOCK, ("yes, we definitely have them",), "In stock.", True),
        # places: numbers in words, corrections by a bare number, moved, gone
        (Q.AISLE, ("that's aisle twenty two",), "Aisle 20.", False),
        (Q.AISLE, ("that's aisle twenty two",), "Aisle 22.", True),
        (Q.AISLE, ("aisle twelve b",), "Aisle 12B.", True),
        (Q.AISLE, ("aisle twelve b",), "Aisle 12.", False),
        (Q.AISLE, ("it's in aisle three, no, four",), "Aisle 3.", False),
        (Q.AISLE, ("aisle 6... sorry, 16",), "Aisle 6.", False),
        (Q.AISLE, ("aisle 8", "A: Aisle 8, thanks.", "oh sorry, it's 18 not 8"), "Aisle 8.", False),
        (Q.AISLE, ("aisle 5, sorry, one more thing, it's on the top shelf",), "Aisle 5.", True),
        (Q.AISLE, ("they moved it to aisle 9 from aisle 3",), "Aisle 3.", False),
        (Q.AISLE, ("it was aisle 3 but they moved everything around, it's in 11 now",), "Aisle 3.", False),
        (Q.AISLE, ("our elm street store has them in aisle 5",), "Aisle 5.", False),
        (Q.AISLE, ("it'd be in aisle 9 but we're out",), "Aisle 9.", False),
        (Q.AISLE, ("it's in the back room, ask at the front",), "Front of the store.", False),
        (Q.AISLE, ("that'd be over in plumbing",), "Plumbing department.", True),
        (Q.AISLE, ("they're on an end cap up front",), "Front of the store, on an end cap.", True),
    ],
)
def test_answers_are_read_as_clerks_give_them(question, business, record, holds):
    said = turns("B: Hello.", ASKED, *(b if b.startswith("A:") else f"B: {b}" for b in business))
    assert isinstance(judge.judge_answer(said, question, record), judge.Supported) is holds


@pytest.mark.parametrize(
    ("question", "business"),
    [
        (Q.STOCK, "not at the moment, i don't know when we'll get more"),
        (Q.STOCK, "we're completely out, no idea when the truck comes"),
        (Q.AISLE, "it's over in plumbing, i don't know the aisle number"),
    ],
)
def test_a_dont_know_after_the_answer_is_not_a_decline(question, business):
    assert isinstance(judge.judge_declined(_after_ask(business), question, None), judge.Unsupported)


BOOK_ASKED = "A: Hi, this is an automated assistant calling on behalf of Nathan. I'd like to book a table for 2 on Friday at 7pm."


@pytest.mark.parametrize(
    ("business", "time", "holds"),
    [
        (("okay i've put you down for seven on friday, two people",), "Friday 7pm", True),
        (("alright, penciled you in for seven",), "Friday 7pm", True),
        (("great, we'll have a table ready for you at seven",), "Friday 7pm", True),
        (("you're all set for seven thirty",), "Friday 7pm", False),  # the minutes are the business's
        (("you're all set for seven thirty",), "Friday 7:30pm", True),
        (("got you down for 4 at 7",), "Friday 7pm", False),  # a party of 4
        (("okay four people at seven, you're all set",), "Friday 7pm", False),
        (("we don't take reservations, just come on in, see you then",), "Friday 7pm", False),
        (("oh we're walk-ins only, but we'll see you when you get here",), "Friday 7pm", False),
        (("A: So you don't have anything at 7?", "that's right"), "Friday 7pm", False),
        (("A: You're fully booked Friday, is that right?", "that's right, we're full"), "Friday 7pm", False),
        (("A: So that's a table for 2 on Friday at 7?", "that's right"), "Friday 7pm", True),
        (("friday night the whole place is reserved for a private party",), "Friday 7pm", False),
        (("you'll get a text once it's confirmed",), "Friday 7pm", False),
        (("i can put you on the waitlist, okay, got you down on the waitlist",), "Friday 7pm", False),
        (("we have a table at nine if you want it",), "Friday 9pm", False),
        (("we can do that if you put down a deposit, do you want to",), "Friday 7pm", False),
        (("we can do that for parties of six or more only",), "Friday 7pm", False),
        (("we're booked solid at seven. okay, you're all set",), "Friday 7pm", False),
        (("we're slammed at seven, all set for nine then",), "Friday 7pm", False),
        (("you're all set for seven, uh, actually no we can't, we're full",), "Friday 7pm", False),
        # another time offered, and the one asked never said: the booking is not at the time asked
        (("I could do 7:30pm on Friday. Would that work?", "A: Yes, 7:30 works.", "Great, you're all set."), "Friday 7pm", False),
        (("I could do 7:30pm on Friday. Would that work?", "A: Yes, 7:30 works.", "Great, you're all set."), "Friday 7:30pm", True),
        (("How about 8? Or actually, 7 is fine. You're all set for 7.",), "Friday 7pm", True),
    ],
)
def test_a_booking_is_confirmed_as_a_host_confirms_it(business, time, holds):
    said = turns("B: Hello.", BOOK_ASKED, *(b if b.startswith("A:") else f"B: {b}" for b in business))
    got = judge.judge_booked(said, party=2, time=time, requested_party=2, requested_time="Friday 7pm")
    assert isinstance(got, judge.Supported) is holds, got


@pytest.mark.parametrize(
    ("business", "reason"),
    [("we don't take reservations", "refused"), ("we're walk-in only", "refused"), ("we're booked solid friday", "fully_booked")],
)
def test_no_reservations_and_booked_solid_decline_a_booking(business, reason):
    got = judge.judge_book_declined(turns("B: Hello.", BOOK_ASKED, f"B: {business}"), alternative_offered=None)
    assert isinstance(got, judge.Supported) and got.reason == reason, got


def test_a_question_about_tables_is_not_full():
    said = turns("B: Hello.", BOOK_ASKED, "B: no tables? no, we have tables, what time")
    assert isinstance(judge.judge_book_declined(said, alternative_offered=None), judge.Unsupported)


STOCK_ASKED = "A: Hi, this is an automated assistant calling on behalf of Nathan. Do you have cast iron skillets in stock?"


def test_where_the_business_disagrees_the_words_that_name_the_item_decide():
    said = turns("B: Hello.", STOCK_ASKED,
                 "B: We don't carry cast iron skillets anymore. We do have nonstick pans in stock though.")
    assert "not said the item is in stock" in refused(
        judge.judge_answer(said, Q.STOCK, "Yes, they have them in stock.", item="cast iron skillet"))
    supported(judge.judge_answer(said, Q.STOCK, "They no longer carry cast iron skillets.", item="cast iron skillet"))
    # words that agree need not name it
    agreed = turns("B: Hello.", STOCK_ASKED, "B: Yes, we have them. Plenty on the shelf.")
    supported(judge.judge_answer(agreed, Q.STOCK, "In stock.", item="cast iron skillet"))


@pytest.mark.parametrize(
    "business",
    [
        "Until 9 tonight? Who is this?",  # asked back
        "Hours? Wait, are you the guy who called about the 5 PM pickup?",
        "This location is closed for renovation. Our Main Street store is open 8 AM to 6 PM.",  # another store
        "Our pharmacy is open 9 AM to 6 PM. For the front store, press 1.",  # a part with its own hours
    ],
)
def test_a_question_or_another_stores_hours_states_no_answer(business):
    said = _after_ask(business)
    assert judge.find_answers(said, Q.HOURS) == ()
    assert not judge.answered_after_ask(said, Q.HOURS)


@pytest.mark.parametrize(
    ("question", "business", "record", "holds"),
    [
        # a time said as the whole answer, with fillers or days at most
        (Q.HOURS, ("ten thirty",), "Opens at 10:30 AM.", True),
        (Q.HOURS, ("eleven",), "Opens at 11 AM.", True),
        (Q.HOURS, ("uh ten on saturday",), "Opens at 10 AM Saturday.", True),
        (Q.HOURS, ("five today, six tomorrow",), "Closes at 5 PM today.", True),
        (Q.HOURS, ("five today, six tomorrow",), "Closes at 6 PM today.", False),
        (Q.HOURS, ("nine or so",), "Closes at 9 PM.", False),  # "or so" is doubt
        (Q.HOURS, ("until about nine",), "Open until about 9 PM.", True),
        (Q.HOURS, ("we're open seven days, eight to eight",), "Open Sunday 8 to 8.", True),
        (Q.HOURS, ("we're open til 9 pm on weekdays til 6 on saturday",), "Weekdays until 9 PM, Saturday until 6.", True),
        (Q.HOURS, ("we're open til 9 pm on weekdays til 6 on saturday",), "Weekdays until 6.", False),
        (Q.HOURS, ("the pharmacy is open nine to nine and the store is open seven to eleven",), "Open 7 to 11.", True),
        (Q.HOURS, ("the pharmacy is open nine to nine and the store is open seven to eleven",), "Open 9 to 9.", False),
        # stock said in more ways
        (Q.STOCK, ("we have a couple",), "In stock, 2.", True),
        (Q.STOCK, ("we have like five",), "In stock, 5.", True),
        (Q.STOCK, ("we have tons",), "In stock.", True),
        (Q.STOCK, ("yeah we've got three in the back",), "In stock, 3.", True),  # "in" is not inches
        (Q.STOCK, ("we are out of those right now",), "Out of stock.", True),
        (Q.STOCK, ("sorry, none",), "Out of stock.", True),
        (Q.STOCK, ("we had some yesterday but they're gone",), "Out of stock.", True),
        (Q.STOCK, ("we haven't had those in a while",), "Out of stock.", True),
        (Q.STOCK, ("we're down to our last one",), "Limited: one left.", True),
        (Q.STOCK, ("A: So you have five in stock?", "yes we do"), "In stock, 5.", False),  # the agent's five
        # an aisle given by its number alone, as a correction
        (Q.AISLE, ("aisle nine, uh, no, it's in eleven now",), "Aisle 11.", True),
        (Q.AISLE, ("A: So that's aisle 9?", "no, nineteen"), "Aisle 19.", True),
        (Q.AISLE, ("it's in the lawn and garden section",), "Lawn and garden section.", True),
    ],
)
def test_short_and_spoken_answers_are_read(question, business, record, holds):
    said = turns("B: Hello.", ASKED, *(b if b.startswith("A:") else f"B: {b}" for b in business))
    assert isinstance(judge.judge_answer(said, question, record), judge.Supported) is holds


@pytest.mark.parametrize(
    ("question", "business", "holds"),
    [
        (Q.HOURS, "i have no clue, sorry", True),
        (Q.HOURS, "i couldn't tell ya", True),
        (Q.HOURS, "that's not something i can share", True),
        (Q.STOCK, "i can't look that up right now, we're slammed", True),
        (Q.STOCK, "we don't do stock checks over the phone", True),
        (Q.AISLE, "i don't know, maybe aisle 5?", True),  # a guess asked back is no answer
    ],
)
def test_not_knowing_and_refusing_in_everyday_words(question, business, holds):
    assert isinstance(judge.judge_declined(_after_ask(business), question, None), judge.Supported) is holds


@pytest.mark.parametrize(
    ("business", "time", "holds"),
    [
        (("we can't do seven but i can do eight fifteen. okay you're all set",), "Friday 8:15pm", True),
        (("you're booked for seven. oh wait, i don't have your number, what's a good number",), "Friday 7pm", True),
        (("you're booked. sorry, we're not able to seat you on the patio though",), "Friday 7pm", True),
    ],
)
def test_a_booking_with_an_afterthought_is_still_booked(business, time, holds):
    said = turns("B: Hello.", BOOK_ASKED, *(f"B: {b}" for b in business))
    got = judge.judge_booked(said, party=2, time=time, requested_party=2, requested_time="Friday 7pm")
    assert isinstance(got, judge.Supported) is holds, got


@pytest.mark.parametrize(
    ("business", "alternative", "holds"),
    [
        ("sorry, we only take reservations for parties of six or more", None, True),
        ("we don't have any openings friday night", None, True),
        ("the earliest i have is nine", "9pm", True),
        ("i can't do seven, sorry", None, True),
        ("we're not full at all, come on in", None, False),
    ],
)
def test_a_booking_declined_in_everyday_words(business, alternative, holds):
    got = judge.judge_book_declined(turns("B: Hello.", BOOK_ASKED, f"B: {business}"), alternative_offered=alternative, party=2)
    assert isinstance(got, judge.Supported) is holds, got


def test_the_typed_hours_leave_out_a_time_said_not_to_be_it():
    typed = answers.read_answer(Q.HOURS, ["On weekdays we don't open at nine, we open at ten."])
    assert [(r.days[0], r.opens) for r in typed.ranges] == [("monday", "10:00")]


def test_the_typed_hours_take_a_later_word_on_a_day():
    typed = answers.read_answer(Q.HOURS, ["We're open Monday through Friday, 9 AM to 5 PM.",
                                          "Oh wait, sorry, on Fridays we actually close at 4 PM now."])
    assert [(r.days, r.opens, r.closes) for r in typed.ranges] == [
        (("monday", "tuesday", "wednesday", "thursday"), "09:00", "17:00"), (("friday",), "09:00", "16:00")]
    closed = answers.read_answer(Q.HOURS, ["We're open 9 to 5 every day.", "Closed Sundays though."])
    assert [(r.days[-1], r.closed) for r in closed.ranges] == [("saturday", False), ("sunday", True)]


def test_two_things_places_in_one_sentence_the_one_said_of_the_item_is_its_place():
    said = turns("B: Hello.", "A: Hi, which aisle are the mason jar lids in?",
                 "B: the jars are in aisle 5, the lids are over in aisle 9")
    assert "aisle 9 for the mason jar lids" in refused(judge.judge_answer(said, Q.AISLE, "Aisle 5.", item="mason jar lids"))
    supported(judge.judge_answer(said, Q.AISLE, "Aisle 9.", item="mason jar lids"))
    one = turns("B: Hello.", "A: Hi, which aisle are the mason jar lids in?", "B: they're in aisle 5, next to the paint in aisle 6")
    supported(judge.judge_answer(one, Q.AISLE, "Aisle 5.", item="mason jar lids"))


def test_typed_hours_days_after_and_join_a_weekly_time_never_a_date():
    # "today" is one date: "and saturdays" after its time are not that date
    got = answers.read_answer(Q.HOURS, ["Today we close at three and saturdays."], today=dt.date(2026, 6, 10)).ranges
    assert [(r.days, r.date) for r in got if r.date] == [(("wednesday",), "2026-06-10")]


def test_typed_stock_kinds_are_named_without_the_words_around_them():
    typed = answers.read_answer(Q.STOCK, ["The 10-inch right now is sold out but we have the 12-inch."], item="cast iron skillet")
    assert [(k.kind, k.availability) for k in typed.kinds] == [("10-inch", "out_of_stock"), ("12-inch", "in_stock")]


@pytest.mark.parametrize(("said", "typed"), [
    # the item itself in stock, then kinds of it: its stock, not kind by kind
    ("Yes we have them, the 10-inch is sold out but we have the 12-inch.", "in_stock"),
    ("The cheap ones are gone, the deluxe ones we have to order.", "out_of_stock"),  # to order: none on hand
])
def test_typed_stock_is_by_kind_only_when_the_kinds_are_all_they_spoke_of(said, typed):
    assert answers.read_answer(Q.STOCK, [said], item="cast iron skillet").availability == typed


def test_the_summary_names_each_kind_and_its_stock():
    from calld.observe.summary import typed_answer

    answer = {"kind": "stock", "availability": "some_kinds", "quantity": None,
              "kinds": [{"kind": "10-inch", "availability": "out_of_stock", "quantity": None},
                        {"kind": "12-inch", "availability": "in_stock", "quantity": 3}]}
    assert typed_answer(answer) == "stock: some kinds: 10-inch out of stock; 12-inch in stock, 3"



@pytest.mark.parametrize("said", ["We're open nine to six every day, except we close early on Saturday.",
                                  "We're open nine to six every day, except we close on Saturday by three."])
def test_a_day_that_closes_early_is_not_a_day_closed(said):
    turns = (Turn("business", "Hello."), Turn("agent", "What are your hours?"), Turn("business", said))
    assert not isinstance(judge.judge_answer(turns, Q.HOURS, "Closed on Saturday."), judge.Supported)
