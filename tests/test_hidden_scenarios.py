"""Whole calls the 56 named scenarios do not play: what real businesses and real models do, and what
the user is told (status, reason, typed answer, the text reply). Stub world, autojump clock."""

from __future__ import annotations

import json

import pytest

from calld.domain.questions import QuestionType
from calld.messaging.parse import AskIntent
from calld.messaging.replies import outcome
from calld.stub.scenario import (WEEK, BookingScript, ModelRecord, Reply, Scenario, hours_range, aisle_field, hours_field,
                                 stock_field)
from tests.stubcall import stub_book, stub_call, variant


def told(run, ask="hours", item=None) -> str:
    """The text message the user gets for this call."""
    return outcome(run.result.model_dump(mode="json"), AskIntent(to="+15555550142", ask=ask, item=item))


def refused_outputs(run) -> list[dict]:
    outs = [json.loads(r["effect"]["output"]) for r in run.rows() if "effect" in r and r["effect"]["kind"] == "live.tool_output"]
    return [o for o in outs if o.get("recorded") is False]


# -- hours -------------------------------------------------------------------------------------------


async def test_a_hold_then_a_transfer_then_someone_new_answers(tmp_path, autojump_clock):
    scenario = variant("hours", hold_line="Let me transfer you to the front desk.", hold_s=30.0,
                       answer="Front desk, this is Maria. We're open Monday to Saturday, eight to eight.",
                       model_records=(ModelRecord("answered", fields=hours_field(hours_range(
                           WEEK[:6], "08:00", "20:00", days_quote="Monday to Saturday", times_quote="eight to eight"))),))
    run = await stub_call(tmp_path, scenario)
    assert (run.result.status, run.result.verdict_source) == ("answered", "tool")
    (hold,) = run.report["holds"]
    assert hold["ended"] == "returned" and "transfer" in hold["cue"]
    (r,) = run.result.answer.ranges
    assert (r.opens, r.closes, len(r.days)) == ("08:00", "20:00", 6)


async def test_weekdays_and_closed_weekends_in_one_breath(tmp_path, autojump_clock):
    run = await stub_call(tmp_path, variant("hours", answer="Nine to five weekdays, closed weekends.", model_records=(
        ModelRecord("answered", fields=hours_field(
            hours_range(WEEK[:5], "09:00", "17:00", days_quote="weekdays", times_quote="Nine to five"),
            hours_range(WEEK[5:], None, None, closed=True, days_quote="weekends", times_quote="closed"))),)))
    assert run.result.status == "answered"
    open_days, closed = run.result.answer.ranges
    assert (open_days.opens, open_days.closes, open_days.days[0], open_days.days[-1]) == ("09:00", "17:00", "monday", "friday")
    assert closed.closed and set(closed.days) == {"saturday", "sunday"}


async def test_every_day_but_one_is_not_read_as_every_day(tmp_path, autojump_clock):
    run = await stub_call(tmp_path, variant("hours", answer="Every day but Sunday, nine to nine.", model_records=(
        ModelRecord("answered", fields=hours_field(
            hours_range(WEEK[:6], "09:00", "21:00", days_quote="Every day but Sunday", times_quote="nine to nine"))),)))
    assert (run.result.status, run.result.verdict_source) == ("answered", "tool")
    (r,) = run.result.answer.ranges
    assert (r.opens, r.closes, "sunday" in r.days, len(r.days)) == ("09:00", "21:00", False, 6)


@pytest.mark.parametrize("model_verdict", ["answered", "none"])
async def test_open_24_hours_is_answered_around_the_clock(tmp_path, autojump_clock, model_verdict):
    """Scripted for the stand-in (its record must pass the check: it names no day) or, with no record, read by the app."""
    records = (ModelRecord("answered", fields=hours_field(hours_range((), None, None, around_the_clock=True, times_quote="open 24 hours"))),)
    run = await stub_call(tmp_path, variant("hours", greeting="Quick Stop Pharmacy.", answer="We're open 24 hours.",
                                            model_verdict=model_verdict, model_records=records if model_verdict == "answered" else ()))
    assert run.result.status == "answered"
    assert run.result.verdict_source == ("tool" if model_verdict == "answered" else "transcript")
    (r,) = run.result.answer.ranges
    assert (r.around_the_clock, r.opens, r.closes) == (True, None, None)


@pytest.mark.parametrize("model_verdict", ["answered", "none"])
async def test_an_opening_and_a_closing_said_apart_are_one_range(tmp_path, autojump_clock, model_verdict):
    """Scripted for the stand-in's record, which stands on its quote; with no record the app types no range it would
    have to guess the half of the day for."""
    records = (ModelRecord("answered", fields=hours_field(hours_range((), "09:00", "17:00", times_quote="We open at 9, and close at 5"))),)
    run = await stub_call(tmp_path, variant("hours", answer="We open at 9, and close at 5.", model_verdict=model_verdict,
                                            model_records=records if model_verdict == "answered" else ()))
    assert run.result.status == "answered"
    if model_verdict == "none":  # read by the app: no half of the day said, so the user gets the words, not a guess
        assert (run.result.answer.kind, run.result.answer_text) == ("text", "We open at 9, and close at 5.")
        return
    (r,) = run.result.answer.ranges
    assert (r.opens, r.closes) == ("09:00", "17:00")


async def test_by_appointment_only_is_answered_as_no_set_hours(tmp_path, autojump_clock):
    """No hours to give is an answer: the stand-in records no set hours, the check finds it in their words, and the
    user is told so in words (not failed/internal, which would blame calld)."""
    run = await stub_call(tmp_path, variant("hours", greeting="Smith Tailoring.",
                                            answer="By appointment only, there aren't set hours.", model_records=(
        ModelRecord("answered", fields={"hours": {"ranges": [], "no_set_hours": True,
                                                  "no_set_hours_quote": "By appointment only, there aren't set hours"}}),)))
    assert (run.result.status, run.result.verdict_source, run.result.answer.kind) == ("answered", "tool", "no_set_hours")
    assert told(run).startswith("They don't keep set hours. They said: \"By appointment only, there aren't set hours.\"")


async def test_a_refusal_then_a_hangup_with_no_record_is_declined_in_their_words(tmp_path, autojump_clock):
    """No record, and the app reads no refusal into the words: the business hung up after the request, and
    the user is given what it said."""
    scenario = variant("hours", answer="We don't give that out over the phone. Bye.", far_party_hangup="after_answer",
                       model_verdict="none")
    run = await stub_call(tmp_path, scenario)
    assert (run.result.status, run.result.reason, run.result.verdict_source) == ("declined", "hung_up", "transcript")
    assert "don't give that out over the phone" in told(run)


async def test_a_full_mailbox_is_voicemail_and_nothing_is_left(tmp_path, autojump_clock):
    scenario = variant("voicemail", greeting="You have reached Joe's Hardware. The mailbox is full and cannot accept "
                       "any messages at this time. Goodbye.")
    run = await stub_call(tmp_path, scenario)
    assert run.result.status == "voicemail" and run.report["hangup"]["via"] == "voicemail"
    assert "voicemail" in told(run)


async def test_the_agents_own_question_recorded_as_the_answer_is_refused(tmp_path, autojump_clock):
    scenario = variant("hours", model_records=(ModelRecord("answered", "9 to 5.", outcome_quote="What are your opening hours?"),))
    run = await stub_call(tmp_path, scenario)
    assert refused_outputs(run)
    assert (run.result.status, run.result.verdict_source) == ("answered", "transcript")
    assert run.result.answer_text == "We're open Monday through Friday, 9 AM to 5 PM."


async def test_please_call_back_later_is_a_refusal_not_calld_s_failure(tmp_path, autojump_clock):
    """The business is too busy and asks for a call back: the user hears that, not 'the call didn't work out'."""
    scenario = variant("hours", answer="We're really busy right now, can you call back later?", model_verdict="declined")
    run = await stub_call(tmp_path, scenario)
    result = run.result.model_dump(mode="json")
    assert result["status"] == "declined" and result.get("reason") != "internal"  # the stand-in quotes a question: refused
    assert "call back later" in told(run)


async def test_a_correction_talked_over_the_goodbye_is_what_the_user_is_told(tmp_path, autojump_clock):
    run = await stub_call(tmp_path, variant("hours", goodbye_talk="Oh wait, actually on Fridays we close at four."))
    assert run.report["counts"]["farewells_reopened"] == 1
    assert run.result.verdict_source == "transcript"
    assert "actually on Fridays we close at four" in run.result.answer_text  # the correction is in what the user reads


async def test_a_two_language_menu_that_plays_the_hours_after_a_press(tmp_path, autojump_clock):
    hours = "Our store hours are Monday through Saturday, 8 AM to 8 PM, and Sunday 10 AM to 4 PM."
    scenario = variant("menu", menu="Thanks for calling Joe's Hardware. Para espanol, oprima dos. For store hours, press 1. "
                       "For the operator, press 0.", menu_routes={"1": hours}, model_dtmf="1", model_records=(
                           ModelRecord("answered", fields=hours_field(
                               hours_range(WEEK[:6], "08:00", "20:00", days_quote="Monday through Saturday", times_quote="8 AM to 8 PM"),
                               hours_range(("sunday",), "10:00", "16:00", days_quote="Sunday", times_quote="10 AM to 4 PM"))),))
    run = await stub_call(tmp_path, scenario)
    assert run.result.status == "answered"
    days = {d for r in run.result.answer.ranges for d in r.days}
    assert "monday" in days and "sunday" in days


# -- stock -------------------------------------------------------------------------------------------

_LIDS = "We've got the lids for those in stock, but the cast iron skillets themselves are sold out."


_SOLD_OUT = ModelRecord("answered", "The skillets are sold out.", delay_s=1.0,
                        fields=stock_field("out_of_stock", quote="the cast iron skillets themselves are sold out"))


@pytest.mark.parametrize("records", [(ModelRecord("answered", "Yes, they are in stock.",
                                                  fields=stock_field("in_stock", quote="We've got the lids for those in stock")),
                                      _SOLD_OUT),
                                     (_SOLD_OUT,)], ids=["wrong_record", "right_record"])
async def test_the_item_sold_out_beside_something_else_in_stock(tmp_path, autojump_clock, records):
    run = await stub_call(tmp_path, variant("stock", answer=_LIDS, model_records=records), ask=QuestionType.STOCK,
                          item="cast iron skillet")
    assert len(refused_outputs(run)) == len(records) - 1  # the lids' stock is not the skillets'
    assert (run.result.status, run.result.verdict_source) == ("answered", "tool")
    assert run.result.answer.availability == "out_of_stock"


@pytest.mark.parametrize("answer, availability, quote", [
    ("That one's on back order, we should get more in next week.", "out_of_stock", "That one's on back order"),
    ("Oh, sorry, we sold the last one this morning.", "out_of_stock", "we sold the last one this morning"),
    ("We've got none at the moment.", "out_of_stock", "We've got none at the moment"),
    ("Not right now, but a shipment is due Thursday.", "out_of_stock", "Not right now"),
    ("We ran out over the weekend.", "out_of_stock", "We ran out over the weekend"),
    ("We have a few, maybe three or four.", "limited", "We have a few"),
    ("We only sell those online now, not in the store.", "out_of_stock", "We only sell those online now, not in the store"),
])
async def test_stock_said_in_everyday_words_as_a_model_reads_it_stands(tmp_path, autojump_clock, answer, availability, quote):
    scenario = variant("stock", answer=answer, model_records=(ModelRecord("answered", fields=stock_field(availability, quote=quote)),))
    run = await stub_call(tmp_path, scenario, ask=QuestionType.STOCK, item="cast iron skillet")
    assert not refused_outputs(run)
    assert (run.result.status, run.result.verdict_source, run.result.answer_text) == ("answered", "tool", answer)
    assert run.result.answer.availability == availability


@pytest.mark.parametrize("records", [(ModelRecord("answered", "they have them at the hardware store down the road",
                                                 fields={"stock": {"availability": "in_stock", "quantity": None, "kinds": []}}),
                                      ModelRecord("answered", "No, but they have them at the hardware store down the road.", delay_s=1.0,
                                                  fields=stock_field("out_of_stock", quote="No"))),
                                     (ModelRecord("answered", fields=stock_field("out_of_stock", quote="No")),)],
                         ids=["in_stock_then_out", "out"])
async def test_another_store_having_it_is_out_of_stock_here(tmp_path, autojump_clock, records):
    scenario = variant("stock", answer="No, but they have them at the hardware store down the road.", model_records=records)
    run = await stub_call(tmp_path, scenario, ask=QuestionType.STOCK, item="cast iron skillet")
    refused = [o["why"] for o in refused_outputs(run)]
    assert refused == (["rule 8: your outcome_quote 'No, but they have them at the hardware store down the road.': "
                        "it says no, or says it of the past"] if len(records) == 2 else [])
    assert (run.result.status, run.result.answer.availability) == ("answered", "out_of_stock")


async def test_a_hold_then_two_left_is_not_the_model_s_twelve(tmp_path, autojump_clock):
    twelve = {"stock": {"availability": "in_stock", "quantity": 12, "kinds": []}}
    scenario = variant("stock", hold_line="Let me go check in the back.", hold_s=40.0, answer="Okay, yes, we have two left.",
                       model_records=(ModelRecord("answered", "Yes, 12 in stock.", fields=twelve),
                                      ModelRecord("answered", "Two left.", delay_s=1.0,
                                                  fields=stock_field("limited", 2, quote="we have two left"))))
    run = await stub_call(tmp_path, scenario, ask=QuestionType.STOCK, item="cast iron skillet")
    assert [o["why"] for o in refused_outputs(run)] == ["rule 1: the stock fact has no quote and is not read back"]
    assert (run.result.status, run.result.verdict_source) == ("answered", "tool")
    assert (run.result.answer.availability, run.result.answer.quantity) == ("limited", 2)


# -- aisle -------------------------------------------------------------------------------------------


async def test_we_dont_carry_it_is_not_answered_with_the_store_s_name(tmp_path, autojump_clock):
    run = await stub_call(tmp_path, variant("aisle", answer="Sorry, we don't carry WD-40.", model_verdict="none"),
                          ask=QuestionType.AISLE, item="WD-40")
    result = run.result.model_dump(mode="json")
    assert result["status"] != "answered"  # no aisle was said: the store's name in the greeting is none
    assert "Valley Home Center" not in json.dumps(result.get("answer") or {})
    said = " ".join([e["quote"] for e in result.get("evidence") or []] + [result.get("detail") or ""])
    assert "don't carry WD-40" in said  # their words reach the user


@pytest.mark.parametrize("record", [ModelRecord("declined", None), ModelRecord("answered", "They don't carry WD-40.")],
                         ids=["declined", "answered"])
async def test_we_dont_carry_it_is_what_the_user_is_told(tmp_path, autojump_clock, record):
    run = await stub_call(tmp_path, variant("aisle", answer="Sorry, we don't carry WD-40.", model_records=(record,)),
                          ask=QuestionType.AISLE, item="WD-40")
    assert run.result.status in ("answered", "declined")
    assert "don't carry WD-40" in told(run, "aisle", "WD-40")


async def test_an_item_that_moved_is_where_it_is_now(tmp_path, autojump_clock):
    run = await stub_call(tmp_path, variant("aisle", answer="It used to be in aisle 5 but we moved it to aisle 9.", model_records=(
        ModelRecord("answered", fields=aisle_field("aisle 9", quote="we moved it to aisle 9")),)), ask=QuestionType.AISLE, item="caulk")
    assert not refused_outputs(run)
    assert (run.result.status, run.result.verdict_source, run.result.answer.location) == ("answered", "tool", "aisle 9")


@pytest.mark.parametrize("answer", ["The paint is in aisle 3 and the claw hammers are in aisle 12.",
                                    "Aisle 3 for the paint and aisle 12 for the claw hammers."])
async def test_the_aisle_of_another_thing_in_the_same_sentence_is_refused(tmp_path, autojump_clock, answer):
    scenario = variant("aisle", answer=answer, model_records=(
        ModelRecord("answered", "Aisle 3.", fields=aisle_field("aisle 3", quote=answer.split(" and ")[0])),))
    run = await stub_call(tmp_path, scenario, ask=QuestionType.AISLE, item="claw hammer")
    assert [o["why"] for o in refused_outputs(run)] == [
        f"rule 6: your quote {answer.split(' and ')[0]!r} does not name 'claw hammer', and its sentence gives another place"]
    assert (run.result.status, run.result.verdict_source, run.result.answer.kind) == ("answered", "transcript", "text")
    assert run.result.answer_text == answer  # two aisles in one sentence: the user gets the words, not a reading


# -- bookings ----------------------------------------------------------------------------------------

_RESTAURANT = "Good evening, Trattoria Roma, how can I help you?"


def _restaurant(name: str, first: str, readback: str) -> Scenario:
    script = BookingScript(states=(
        ("ask", (Reply(first, when=r"book a table", then="requests"),)),
        ("requests", (Reply("Lovely, that's all noted.", then="readback"),)),
        ("readback", (Reply(readback, when=r"read that back|is that right", then="booked"),)),
        ("booked", (Reply("Oh, no problem, I'll cancel it. Goodbye.", when=r"don't hold|cancel", then="done"),)),
    ))
    return Scenario(name, greeting=_RESTAURANT, booking=script)


async def test_let_me_check_then_yes_books_the_table(tmp_path, autojump_clock):
    run = await stub_book(tmp_path, _restaurant(
        "check_then_yes", "One moment, let me check the book. Yes, we have a table for two at seven on Friday. Any special requests?",
        "Yes, that's right. You're all booked, we'll see you then."))
    assert run.result.status == "booked"
    assert (run.result.confirmed_party, run.result.confirmed_time) == (2, "Friday 7pm")


async def test_a_booking_confirmed_then_taken_back_is_not_booked(tmp_path, autojump_clock):
    run = await stub_book(tmp_path, _restaurant(
        "taken_back", "Sure, we can do that. Any special requests?",
        "Yes, that's right, you're all booked. Oh, wait, sorry, I was looking at Saturday. Friday at seven is actually full."))
    assert run.result.status == "declined"
    assert any("i was looking at saturday" in o["why"] for o in refused_outputs(run))


async def test_a_confirmation_for_another_party_size_is_not_the_users_booking(tmp_path, autojump_clock):
    run = await stub_book(tmp_path, _restaurant(
        "other_party", "Sure, we can do that. Any special requests?",
        "Yes, that's right, a table for four at seven on Friday. You're all booked."))
    assert not (run.result.status == "booked" and run.result.confirmed_party == 2)


def _one_line(name: str, line: str) -> Scenario:
    """A restaurant that answers the request with one line and says nothing more."""
    return Scenario(name, greeting=_RESTAURANT, booking=BookingScript(states=(("ask", (Reply(line, when=r"book a table"),)),)))


@pytest.mark.parametrize("line, reason", [
    ("Oh, I'm sorry, Friday night we're completely full.", "fully_booked"),
    ("We're booked solid all weekend, I'm afraid.", "fully_booked"),
    ("Sorry, we don't take reservations, it's walk-ins only.", "refused"),
])
async def test_no_table_in_other_words_is_declined_in_their_words(tmp_path, autojump_clock, line, reason):
    run = await stub_book(tmp_path, _one_line("no_table", line))
    assert (run.result.status, run.result.reason, run.result.verdict_source) == ("declined", reason, "tool")
    assert run.result.model_dump(mode="json")["detail"] == line


@pytest.mark.parametrize("first, readback", [
    ("Sure thing. Anything special we should know?", "Perfect, we'll see you Friday at seven."),
    ("Sure. Any special requests?", "That's correct, two people Friday at seven. See you then."),
])
async def test_a_yes_to_the_read_back_in_other_words_books(tmp_path, autojump_clock, first, readback):
    run = await stub_book(tmp_path, _restaurant("yes_in_words", first, readback))
    assert (run.result.status, run.result.confirmed_party, run.result.confirmed_time) == ("booked", 2, "Friday 7pm")
    assert run.result.confirmation_text == readback


@pytest.mark.parametrize("offer, booked_at", [  # the offer as the model writes it is the scenario's (Reply.offer)
    ("Seven's gone, I could do eight o'clock on Friday. Would that work?", "Friday 8pm"),
    ("Seven is taken, but I have 7:15 on Friday. Does that work?", "Friday 7:15pm"),
    ("We could do half past eight on Friday, would that work?", "Friday 8:30pm"),
])
async def test_another_time_offered_in_words_is_booked_at_that_time(tmp_path, autojump_clock, offer, booked_at):
    script = BookingScript(states=(
        ("ask", (Reply(offer, when=r"book a table", then="offer", offer=booked_at),)),
        ("offer", (Reply("Great. Any special requests?", when=r"\bworks\b", then="requests"),)),
        ("requests", (Reply("Lovely, that's all noted.", then="readback"),)),
        ("readback", (Reply("Yes, that's right. See you Friday.", when=r"is that right", then="booked"),)),
    ))
    run = await stub_book(tmp_path, Scenario("offer_in_words", greeting=_RESTAURANT, booking=script), window=90)
    assert (run.result.status, run.result.confirmed_time) == ("booked", booked_at)
