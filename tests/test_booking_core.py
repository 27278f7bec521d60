"""Booking a table, without IO: the request, the plan, the adapter's record, the reducer's rules, the result.

The reducer tests drive `reduce_step` with a booking plan (window 30 minutes, notes
"outdoor if possible") through `tests.core_helpers.Run`, like tests/test_reduce.py.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from attrs import evolve
from pydantic import TypeAdapter, ValidationError

from calld.adapters import gpt_live
from calld.adapters.fixtures import load_fixture
from calld.adapters.gpt_live import LiveInbound
from calld.core import events as ev
from calld.core.effects import AppendCommentary, ContinueResponse, SendToolOutput
from calld.core.outcome import conclude
from calld.core.plan import BOOK_STEER_LINE, BookJob, QuickAskJob, parse_booking_request
from calld.core.state import Call, ConvConcluded, ConvTalking, HangupFarewell, HangupNone
from calld.domain.requests import BookRequest, explain_book_errors
from calld.domain.results import BookResult
from calld.domain.times import clock_phrase, minutes_between
from tests.core_helpers import LIVE, Run, make_book_plan, new_call

B = ev.BookingDetails


# What the restaurant said before the records these tests make: enough to support each of them
# (the evidence gate has its own tests in tests/test_evidence.py).
OFFERS = (
    ev.OutputTranscript("I'd like to book a table for 2 on Friday at 7pm."),
    ev.InputTranscript("We're fully booked at seven. I could do 7:30pm or 9:30pm on Friday."),
    ev.OutputTranscript("7:30 works for the 2 of us, outdoor if possible. Can you read that back?"),
    ev.InputTranscript("Yes, that's right, you're all booked."),
)
OFFERED = ("I could do 7:30pm or 9:30pm on Friday.", "Yes, that's right, you're all booked.")


# The time asked for is free: the business confirms it as asked.
AS_ASKED = (
    ev.OutputTranscript("I'd like to book a table for 2 on Friday at 7pm."),
    ev.InputTranscript("Friday at seven is fine."),
    ev.OutputTranscript("A table for 2, outdoor if possible. Can you read that back?"),
    ev.InputTranscript("Yes, that's right, you're all booked."),
)
CONFIRMED_AS_ASKED = ("Friday at seven is fine.", "Yes, that's right, you're all booked.")


def book_call(offers: tuple[ev.Event, ...] = OFFERS, **plan: Any) -> Run:
    run = Run(Call(plan=make_book_plan(**plan)))
    run.feed(*LIVE, *offers)
    return run


def _arguments(details: ev.BookingDetails, status: str, quotes: tuple[str, ...], **facts: Any) -> str:
    """The record's JSON as a model sends it (the booking schema, per-fact quotes): what check_record reads."""
    return json.dumps({
        "status": status, "confirmation_text": details.confirmation_text, "confirmed_party": details.party,
        "confirmed_time": details.time, "confirmed_constraints": details.constraints,
        "minutes_from_requested": details.minutes_from_requested, "alternative_offered": details.alternative_offered,
        "reason": details.reason, "reason_code": details.reason_code, "quotes": list(quotes),
        "unanswered_questions": list(details.unanswered_questions), "opt_out_quote": None, "outcome_quote": None,
        "party_quote": None, "time_quote": None, "date_quote": None, "party_readback": False, "time_readback": False,
        "date_readback": False} | facts)


def booked(call_id: str = "fc_b", *, time: str = "Friday 7:30pm", minutes: int | None = 30, party: int = 2,
           constraints: str | None = "outdoor table", quotes: tuple[str, ...] = OFFERED, **more: Any) -> ev.TaskRecorded:
    """Booked: the time and day in the first quote, the party read back, the outcome "you're all booked"."""
    details = B(confirmation_text="You're booked.", party=party, time=time, constraints=constraints,
                minutes_from_requested=minutes, **more)
    said = quotes[0].rstrip(".")
    return ev.TaskRecorded(call_id, "booked", None, None, details, quotes=quotes, arguments=_arguments(
        details, "booked", quotes, outcome_quote="you're all booked", time_quote=said, date_quote=said, party_readback=True))


def note(call_id: str = "fc_n", *questions: str) -> ev.TaskRecorded:
    return ev.TaskRecorded(call_id, "in_progress", None, None, B(unanswered_questions=questions))


def declined(call_id: str = "fc_d", alternative: str | None = "Friday 9:30pm",
             quotes: tuple[str, ...] = ("We're fully booked at seven.", "I could do 7:30pm or 9:30pm on Friday.")) -> ev.TaskRecorded:
    details = B(reason="Full at seven.", alternative_offered=alternative, reason_code="no_slot_in_window")
    return ev.TaskRecorded(call_id, "declined", None, None, details, quotes=quotes,
                           arguments=_arguments(details, "declined", quotes, outcome_quote=quotes[0].rstrip(".")))


def respond(run: Run, event: ev.Event) -> list[Any]:
    """One backend response carrying `event`: its effects, then those of the response's end."""
    return run.feed(event, ev.ResponseDone("completed"))


def output(effect: Any) -> dict[str, Any]:
    assert isinstance(effect, SendToolOutput)
    return json.loads(effect.output)


# -- the request -------------------------------------------------------------------------------------

GOOD = {"to": "+15555550142", "name": "Nathan", "party": 2, "time": "Friday 7pm"}


def test_a_good_request_with_defaults():
    req = BookRequest.model_validate(GOOD | {"notes": "  outdoor   if possible "})
    assert (req.party, req.time, req.notes, req.window, req.user) == (2, "Friday 7pm", "outdoor if possible", 0, "default")


@pytest.mark.parametrize(("field", "value"), [("party", "4"), ("party", 4.0), ("window", "15"), ("window", 0)])
def test_whole_numbers_come_as_text_or_numbers(field, value):
    assert getattr(BookRequest.model_validate(GOOD | {field: value}), field) == int(value)


@pytest.mark.parametrize(
    ("changes", "needles"),
    [
        ({"party": 0}, ["--party", "from 1 to 20", "got 0", "at least one person"]),
        ({"party": -1}, ["--party", "whole number", "got -1"]),
        ({"party": 2.5}, ["--party", "whole number", "got 2.5"]),
        ({"party": "2.5"}, ["--party", "whole number", "'2.5'"]),
        ({"party": True}, ["--party", "whole number"]),
        ({"party": 500}, ["--party", "got 500", "call the business yourself"]),
        ({"time": ""}, ["--time is empty", '--time "Friday 7pm"']),
        ({"time": "   "}, ["--time is empty"]),
        ({"time": "x" * 81}, ["--time", "under 80"]),
        ({"window": -5}, ["--window", "from 0 to 180", "got -5", "how far from --time"]),
        ({"window": 1.5}, ["--window", "whole number"]),
        ({"window": 600}, ["--window", "got 600"]),
        ({"to": "555"}, ["--to", "E.164"]),
        ({"party": None}, ["--party", "whole number"]),
    ],
)
def test_bad_requests_say_what_to_fix(changes, needles):
    with pytest.raises(ValidationError) as caught:
        BookRequest.model_validate(GOOD | changes)
    message = explain_book_errors(caught.value)
    for needle in needles:
        assert needle in message, message


def test_a_missing_time_names_its_flag():
    data = dict(GOOD)
    del data["time"]
    with pytest.raises(ValidationError) as caught:
        BookRequest.model_validate(data)
    assert explain_book_errors(caught.value) == "--time: is required"


# -- spoken times ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("asked", "offered", "minutes"),
    [
        ("Friday 7pm", "Friday 7pm", 0),
        ("Friday 7pm", "Friday at 7:30pm", 30),
        ("Friday 7pm", "9:30 PM on Friday", 150),
        ("Friday 7pm", "7:30", 30),  # no am/pm: the nearer reading
        ("Friday 7pm", "Friday 6:45 p.m.", -15),
        ("Friday 7pm", "Saturday 7pm", 1440),
        ("Friday 7pm", "Thursday 7pm", -1440),
        ("tomorrow at 8pm", "tomorrow 8:15pm", 15),
        ("Friday at 19:00", "Friday 7.45pm", 45),
        ("Friday 7pm", "Friday", None),
        ("Friday 7pm", "the usual slot", None),
        ("tomorrow 7pm", "Saturday 7pm", None),  # the words alone cannot say
        ("a table for 2, Friday 7pm", "for 2 on Friday", None),  # a party size is not a clock time
    ],
)
def test_minutes_between(asked, offered, minutes):
    assert minutes_between(asked, offered) == minutes


def test_clock_phrase():
    assert clock_phrase("The earliest I could do is 9:30pm on Friday.") == "9:30pm"
    assert clock_phrase("for 2 people") is None


# -- the plan ----------------------------------------------------------------------------------------


def test_the_plan_is_a_booking_job_with_the_did_as_callback():
    plan = make_book_plan(window=15)
    assert plan.job == BookJob(party=2, time="Friday 7pm", notes="outdoor if possible", window_minutes=15,
                               callback=plan.dial.from_)
    assert plan.question is None and plan.item is None
    assert plan.live.job == "book" and plan.steer_line == BOOK_STEER_LINE
    assert isinstance(new_call().plan.job, QuickAskJob) and new_call().plan.live.job == "quick_ask"


def test_the_opener_discloses_first_then_asks_to_book():
    opener = make_book_plan().opener
    disclosure = opener.find("automated assistant calling on behalf of Nathan")
    ask = opener.find("book a table for 2 people, Friday 7pm")
    assert 0 <= disclosure < ask


def test_both_models_get_the_request_and_the_rules():
    plan = make_book_plan(window=30)
    for text in (plan.live.instructions, plan.live.backend_instructions):
        assert parse_booking_request(text) == {
            "name": "Nathan", "party": 2, "time": "Friday 7pm", "notes": "outdoor if possible",
            "window_minutes": 30, "callback_number": "+15555550100",
        }
        assert "within 30 minutes of the request's time" in text
        assert "Never invent" in text
    assert "check with the person" in plan.live.instructions
    assert "read it back" in plan.live.instructions
    assert "in_progress" in plan.live.backend_instructions
    assert "Accept only the time asked for" in make_book_plan(window=0).live.instructions
    assert parse_booking_request(new_call().plan.live.instructions) is None


def test_session_start_gives_a_booking_session_the_booking_schema():
    plan = make_book_plan()
    record, end, _dtmf = gpt_live.session_start(plan.live, "s")["session"]["delegation"]["responses"]["tools"]
    params = record["parameters"]
    assert record["name"] == "record_task_result" and record["strict"] is True
    assert params["properties"]["status"]["enum"] == ["booked", "declined", "voicemail", "in_progress"]
    assert params["required"] == list(params["properties"]) and params["additionalProperties"] is False
    assert params["properties"]["minutes_from_requested"]["type"] == ["integer", "null"]
    assert params["properties"]["unanswered_questions"]["type"] == "array"
    assert end["name"] == "end_call"
    quick = gpt_live.session_start(new_call().plan.live, "s")["session"]["delegation"]["responses"]["tools"][0]
    assert quick["parameters"]["properties"]["status"]["enum"] == ["answered", "declined", "voicemail", "unclear"]


# -- the adapter reads a booking's record by the session's job ------------------------------------------


def book_live() -> LiveInbound:
    inbound = LiveInbound(job="book")
    inbound.feed(json.dumps(load_fixture("gpt_live", "session_started")))
    return inbound


def record_item(arguments: Any) -> str:
    event = load_fixture("gpt_live", "response_event_record_booking")
    event["event"]["item"]["arguments"] = arguments if isinstance(arguments, str) else json.dumps(arguments)
    return json.dumps(event)


def test_the_booking_fixture_maps_to_a_booking_record():
    [event] = book_live().feed(json.dumps(load_fixture("gpt_live", "response_event_record_booking")))
    assert event == ev.TaskRecorded(
        "call_Bk7tR2wQ9mXe4LpA", "booked", None, None,
        B(confirmation_text="That's all booked, two at seven thirty on Friday, outside.", party=2,
          time="Friday 7:30pm", constraints="outdoor table", minutes_from_requested=30,
          unanswered_questions=("Any allergies we should know about?",)),
        quotes=("That's all booked, two at seven thirty on Friday, outside.",),
    )


def test_a_quick_ask_session_refuses_a_booking_record_and_vice_versa():
    fixture = json.dumps(load_fixture("gpt_live", "response_event_record_booking"))
    inbound = LiveInbound()
    inbound.feed(json.dumps(load_fixture("gpt_live", "session_started")))
    [event] = inbound.feed(fixture)
    assert isinstance(event, ev.ToolCallRejected) and "status" in event.error
    [event] = book_live().feed(json.dumps(load_fixture("gpt_live", "response_event_record_task_result")))
    assert isinstance(event, ev.ToolCallRejected) and "status" in event.error


@pytest.mark.parametrize(
    ("arguments", "error"),
    [
        ({"status": "booked", "confirmed_party": 2, "confirmed_time": "7pm"}, "needs confirmation_text"),
        ({"status": "booked", "confirmation_text": "ok"}, "needs confirmed_party, confirmed_time"),
        ({"status": "booked", "confirmation_text": "ok", "confirmed_party": 0, "confirmed_time": "7pm"}, "at least 1"),
        ({"status": "maybe"}, "status"),
        ({"status": "in_progress", "unanswered_questions": "allergies?"}, "unanswered_questions"),
    ],
)
def test_bad_booking_records_are_rejected_with_a_reason(arguments, error):
    [event] = book_live().feed(record_item(arguments))
    assert isinstance(event, ev.ToolCallRejected)
    assert event.error.startswith("invalid arguments: ") and error in event.error


def test_a_decline_whose_reason_was_not_said_is_taken_as_the_schema_allows():
    """reason and reason_code are nullable in the published schema: a decline without them was refused as
    invalid arguments (and the call ended failed/internal). Null is "not said"; the outcome's code is refused."""
    [event] = book_live().feed(record_item({"status": "declined", "reason": None, "reason_code": None,
                                            "quotes": ["We're full."], "opt_out_quote": "Don't call here again.",
                                            "outcome_quote": "we're full"}))
    assert isinstance(event, ev.TaskRecorded) and event.status == "declined"
    assert (event.booking.reason, event.booking.reason_code, event.opt_out) == (None, None, "Don't call here again.")
    run = book_call(offers=(ev.OutputTranscript("Could I book a table for 2 on Friday at 7pm?"), ev.InputTranscript("Sorry, we're full.")))
    run.feed(evolve(event, quotes=("Sorry, we're full.",)))
    outcome = conclude(run.call)
    assert (outcome.status, outcome.reason, outcome.detail) == ("declined", "refused", "Sorry, we're full.")
    from calld.runtime.verdict import build_result

    refs = {"transcript.json": "x/transcript.json", "audio/inbound.wav": "x/audio/inbound.wav"}
    result = build_result(run.call.plan, run.call, outcome, refs)
    assert (result.status, result.reason, result.detail) == ("declined", "refused", "Sorry, we're full.")  # not failed/internal


def test_only_a_booked_record_carries_a_confirmation():
    [event] = book_live().feed(record_item({"status": "declined", "reason": "Full.", "reason_code": "fully_booked",
                                            "confirmation_text": "booked!"}))
    assert event.status == "declined" and event.booking.confirmation_text is None
    [event] = book_live().feed(record_item({"status": "in_progress", "unanswered_questions": ["Allergies?", ""]}))
    assert event.booking == B(unanswered_questions=("Allergies?",))


# -- the reducer -------------------------------------------------------------------------------------


def test_a_progress_note_returns_its_output_and_one_response_create_and_the_call_goes_on():
    run = book_call()
    effects = respond(run, note("fc_1", "Any allergies?"))
    assert len(effects) == 2 and effects[1] == ContinueResponse()
    assert output(effects[0]) == {"recorded": True, "next": "go on with the booking"}
    assert isinstance(run.call.conversation, ConvTalking) and isinstance(run.call.hangup, HangupNone)
    assert run.call.unanswered == ("Any allergies?",)


def test_every_tool_output_while_talking_comes_with_exactly_one_response_create():
    run = book_call()
    for event in (note("fc_1"), booked("fc_2", time="Friday 9:30pm", minutes=150), note("fc_3"),
                  ev.ToolCallRejected("fc_4", "lookup", "unknown tool"), booked("fc_5", party=3)):
        effects = respond(run, event)
        assert [type(e) for e in effects] == [SendToolOutput, ContinueResponse], event
    assert isinstance(run.call.conversation, ConvTalking)


def test_a_booking_inside_the_window_concludes_the_call():
    run = book_call(window=30)
    effects = respond(run, booked("fc_b", time="Friday 7:30pm", minutes=30))
    assert output(effects[0])["recorded"] is True and effects[-1] == ContinueResponse()
    assert isinstance(run.call.conversation, ConvConcluded) and isinstance(run.call.hangup, HangupFarewell) and run.call.hangup.via == "tool"
    assert run.call.task.booking.minutes_from_requested == 30


@pytest.mark.parametrize("claimed", [150, 0, None], ids=["honest", "lying", "silent"])
def test_a_booking_outside_the_window_is_refused_whatever_the_model_counted(claimed):
    run = book_call(window=30)
    effects = respond(run, booked("fc_b", time="Friday 9:30pm", minutes=claimed))
    out = output(effects[0])
    assert out["recorded"] is False
    assert "150 minutes later than the requested Friday 7pm" in out["why"] and "window of 30 minutes" in out["why"]
    assert "decline" in out["next"] and "alternative" in out["next"]
    assert effects[1:] == [ContinueResponse()]
    assert isinstance(run.call.conversation, ConvTalking) and isinstance(run.call.hangup, HangupNone)
    # The model then declines, with the alternative: that ends the call.
    run.feed(declined("fc_d", "Friday 9:30pm"))
    assert run.call.task.status == "declined" and run.call.task.booking.alternative_offered == "Friday 9:30pm"


def test_window_zero_accepts_only_the_time_asked_for():
    assert output(book_call(window=0).feed(booked(time="Friday 7:15pm", minutes=15))[0])["recorded"] is False
    assert output(book_call(AS_ASKED, window=0).feed(booked(time="Friday 7pm", minutes=0, quotes=CONFIRMED_AS_ASKED))[0])["recorded"] is True
    # Where seven was full and the business confirmed another time, 7pm is not in the words it confirmed.
    refused = output(book_call(window=0).feed(booked(time="Friday 7pm", minutes=0))[0])
    assert refused["recorded"] is False and refused["why"].startswith("rule 4: 19:00 does not read as a clock time")


SITTINGS = (
    ev.OutputTranscript("I'd like to book a table for 2 on Friday at 7pm."),
    ev.InputTranscript("On Friday I can give you the early sitting or the late sitting."),
    ev.OutputTranscript("The early sitting for the 2 of us, outdoor if possible. Can you read that back?"),
    ev.InputTranscript("Yes, that's right, you're all booked."),
)
SAID = ("On Friday I can give you the early sitting or the late sitting.", "Yes, that's right, you're all booked.")


def test_when_the_words_name_no_clock_time_the_model_count_decides():
    assert output(book_call(SITTINGS, window=30).feed(booked(time="the early sitting", minutes=20, quotes=SAID))[0])["recorded"] is True
    out = output(book_call(SITTINGS, window=30).feed(booked(time="the late sitting", minutes=90, quotes=SAID))[0])
    assert out["recorded"] is False and "90 minutes later" in out["why"]
    out = output(book_call(window=30).feed(booked(time="the early sitting", minutes=20))[0])
    assert out["recorded"] is False and out["why"].startswith("rule 4: 'the early sitting' is not a clock time")
    out = output(book_call(SITTINGS, window=30).feed(booked(time="the early sitting", minutes=None, quotes=SAID))[0])
    assert out["recorded"] is False and "minutes_from_requested" in out["next"]


def test_a_booking_for_another_party_size_is_refused():
    out = output(book_call().feed(booked(party=4))[0])
    assert out["recorded"] is False and "asked for a table for 2" in out["why"]


def test_a_booking_that_drops_the_users_constraints_is_refused():
    out = output(book_call().feed(booked(constraints=None))[0])
    assert out["recorded"] is False and "outdoor if possible" in out["why"]
    assert output(book_call(notes=None).feed(booked(constraints=None))[0])["recorded"] is True


def test_a_record_that_does_not_fit_the_job_is_refused():
    run = book_call()
    effects = respond(run, ev.TaskRecorded("fc_q", "answered", "9 to 5"))
    assert output(effects[0])["recorded"] is False and effects[1:] == [ContinueResponse()]
    assert isinstance(run.call.conversation, ConvTalking)
    quick = Run(new_call())
    quick.feed(*LIVE)
    effects = quick.feed(booked())
    assert output(effects[0])["recorded"] is False and "not a quick-ask outcome" in output(effects[0])["why"]
    assert isinstance(quick.call.conversation, ConvTalking)


def test_unanswered_questions_gather_across_records_once_each():
    run = book_call()
    run.feed(note("fc_1", "Any allergies?"), note("fc_2", "any  ALLERGIES?", "A card to hold it?"))
    run.feed(booked("fc_3", unanswered_questions=("A card to hold it?",)))
    assert run.call.unanswered == ("Any allergies?", "A card to hold it?")


def test_a_booking_steer_asks_about_the_table():
    run = book_call()
    effects = run.feed(ev.StallElapsed())
    assert AppendCommentary(BOOK_STEER_LINE) in effects


def test_a_booking_without_a_record_fails_without_a_transcript_fallback():
    run = book_call()
    run.feed(ev.InputTranscript("We're open Monday to Friday, 9 AM to 5 PM."))
    run.feed(ev.CallHungUp(run.call.call_control_id, "normal_clearing", "callee"))
    outcome = conclude(run.call)
    assert outcome.status != "booked"



def test_a_restaurant_that_books_only_larger_parties_is_declined_by_the_model_s_record_not_by_the_app_s_reading():
    """Without a record the app never reads a decline's meaning from the words ("parties under six"):
    the business hung up after the request, and that is what the user is told. The model's own
    declined record, citing those words, is accepted in the call."""
    said = (ev.OutputTranscript("I'd like to book a table for 2 on Friday at 7pm."),
            ev.InputTranscript("Sorry, we don't take reservations for parties under six."))
    run = book_call(said, party=2)
    run.feed(ev.CallHungUp(run.call.call_control_id, "normal_clearing", "callee"))
    outcome = conclude(run.call)
    assert (outcome.status, outcome.reason, outcome.verdict_source) == ("declined", "hung_up", "transcript")
    run = book_call(said, party=2)
    record = declined(alternative=None, quotes=("we don't take reservations for parties under six",))
    assert output(respond(run, record)[0])["recorded"] is True
    assert run.call.verdict.quotes[0].text == "Sorry, we don't take reservations for parties under six."


# -- the result --------------------------------------------------------------------------------------

RESULT = TypeAdapter(BookResult)
COMMON = {"run_id": "run_5f0c2a9e1b7d4c3a8e6f", "call_control_id": "v3:x", "transcript_ref": "x/transcript.json",
          "audio_ref": "x/audio/inbound.wav", "verdict_source": "tool"}
ASKED = {"party": 2, "time": "Friday 7pm", "notes": "outdoor if possible", "window_minutes": 30}
EVIDENCE = [{"quote": "Yes, that's right, you're all booked.", "turn": 4, "start_ms": 9000, "end_ms": 11000}]
BOOKED = {"status": "booked", "confirmation_text": "You're booked.", "confirmed_party": 2,
          "confirmed_time": "Friday 7:30pm", "confirmed_constraints": "outside", "minutes_from_requested": 30,
          "requested": ASKED, "evidence": EVIDENCE} | COMMON


def test_a_booked_result_holds_what_was_confirmed():
    result = RESULT.validate_python(BOOKED | {"unanswered_questions": ["Any allergies?"]})
    assert (result.status, result.confirmed_time, result.unanswered_questions) == ("booked", "Friday 7:30pm", ("Any allergies?",))
    assert result.answer_text is None


@pytest.mark.parametrize(
    "changes",
    [
        {"confirmation_text": None},
        {"confirmation_text": "  "},
        {"confirmed_party": 3},  # not what the user asked for
        {"confirmed_time": None},
        {"minutes_from_requested": 45},  # outside the window
        {"minutes_from_requested": -31},
        {"confirmed_constraints": None},  # the user had notes
        {"reason": "full"},  # a booked result has no refusal
        {"answer_text": "yes"},
        {"transcript_ref": None},
        {"evidence": []},  # a booking nobody at the restaurant confirmed
        {"verdict_source": "none"},
    ],
)
def test_a_contradictory_booked_result_cannot_be_built(changes):
    with pytest.raises(ValidationError):
        RESULT.validate_python(BOOKED | changes)


def test_a_declined_result_needs_a_reason_and_no_confirmation():
    ok = RESULT.validate_python({"status": "declined", "reason": "no_slot_in_window", "detail": "Full at seven.",
                                 "alternative_offered": "9:30pm"} | COMMON)
    assert ok.alternative_offered == "9:30pm"
    for bad in ({"status": "declined"}, {"status": "declined", "reason": "fully_booked"},
                {"status": "declined", "reason": "Full at seven.", "detail": "Full at seven."},
                {"status": "declined", "reason": "fully_booked", "detail": "x", "confirmation_text": "booked"}):
        with pytest.raises(ValidationError):
            RESULT.validate_python(bad | COMMON)


def test_no_answer_and_failed_are_shared_with_the_quick_ask():
    no_answer = {"status": "no_answer", "reason": "busy", "run_id": COMMON["run_id"], "call_control_id": None}
    assert RESULT.validate_python(no_answer).status == "no_answer"
    with pytest.raises(ValidationError):
        RESULT.validate_python({"status": "answered", "answer_text": "9 to 5"} | COMMON)
