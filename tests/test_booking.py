"""Booking a table end to end: scripted restaurants through the stub world, on trio's autojump clock.

The same CallHandle, reducer, adapters, artifacts and hangup path as a quick ask. The
restaurant hears the agent's audio as it played on the line and reacts to it; the fake
GPT-Live hears the restaurant the same way, answers from the request it was given in
session.start, and records progress and the outcome. The app decides what stands.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from calld.booking import book_scenario, prepare_book, run_stub_book
from calld.core import events as ev
from calld.core import reduce as reducer
from attrs import evolve
from calld.domain.ids import UserId
from calld.domain.requests import BookRequest
from calld.ledger import Ledger, UnknownUser
from calld.settings import load_settings
from calld.verify import BookVerifyInput, verify_book
from tests.stubcall import Run, stub_book

NOTES = "outdoor if possible"
ASKED = {"party": 2, "time": "Friday 7pm", "notes": NOTES}


def records(run: Run) -> list[dict[str, Any]]:
    return run.events("tool.record_task_result")


def caused(run: Run, row: dict[str, Any]) -> list[dict[str, Any]]:
    """What a record caused: its own effects, then what the end of its backend response caused."""
    rows = run.rows()
    done = next(r for r in rows if r["seq"] > row["seq"] and r.get("event", {}).get("kind") == "live.response_done")
    return [r for r in rows if r.get("cause") in (row["seq"], done["seq"])]


def agent_text(run: Run) -> str:
    return run.json("transcript.json")["agent_text"]


def assert_clean_tool_hangup(run: Run) -> None:
    assert [h["effect"]["via"] for h in run.effects("hangup")] == ["tool"]
    assert len(run.world.hangup_requests) == 1
    assert run.report["hangup"]["confirmed"] is True
    assert run.report["tools"][-1] == "end_call"


def read_back_before(run: Run, row: dict[str, Any], time: str) -> None:
    """The booking was read back (party, time, constraints) before the record that booked it."""
    before = "".join(r["event"]["text"] for r in run.events("live.output_transcript") if r["seq"] < row["seq"])
    readback = before[before.rfind("read that back"):]
    assert "read that back" in before
    assert "2 people" in readback and time in readback and NOTES in readback


# -- each restaurant ends with the right status and fields ----------------------------------------------


async def test_a_restaurant_that_books_straight_away(autojump_clock, tmp_path):
    run = await stub_book(tmp_path, "book_straight")
    r = run.result
    assert r.status == "booked" and r.verdict_source == "tool"
    assert (r.confirmed_party, r.confirmed_time, r.confirmed_constraints) == (2, "Friday 7pm", NOTES)
    assert r.minutes_from_requested == 0 and r.unanswered_questions == ()
    assert "You're all booked" in r.confirmation_text
    assert r.requested.model_dump() == ASKED | {"window_minutes": 0}
    read_back_before(run, records(run)[-1], "Friday 7pm")
    assert_clean_tool_hangup(run)
    task = run.json("task.json")
    assert task["status"] == "booked" and task["booking"]["confirmation_text"] == r.confirmation_text
    report = run.report
    assert report["job"] == "book" and report["question"] is None and report["status"] == "booked"
    assert report["booking"] == ASKED | {"window_minutes": 0, "callback": report["from_did"], "unanswered_questions": [],
                                 "when": None, "today": None}  # dialled by no daemon: no time read, no today
    redacted = run.json("call_report.redacted.json")
    assert report["from_did"] not in json.dumps(redacted)


async def test_a_restaurant_that_asks_for_the_name_and_a_callback_number_first(autojump_clock, tmp_path):
    run = await stub_book(tmp_path, "book_details")
    did = run.report["from_did"]
    assert run.result.status == "booked" and run.result.confirmed_time == "Friday 7pm"
    said = agent_text(run)
    assert "under Nathan" in said and did in said  # the callback number is the user's own DID
    assert did in " ".join(run.world.heard_on_line)  # and it really played on the line
    business = run.json("transcript.json")["business_text"]
    assert "What name is the booking under" in business
    assert "didn't catch" not in business  # it heard both the first time
    assert "Thank you. Any special requests?" in business
    assert_clean_tool_hangup(run)


def test_the_restaurant_reacts_to_what_it_heard():
    details = book_scenario("book_details").booking.replies("details")
    heard = "The booking is under Nathan. You can reach Nathan on +15555550100."
    assert next(r for r in details if r.matches(heard)).then == "requests"
    no_number = next(r for r in details if r.matches("The booking is under Nathan."))
    assert no_number.say.startswith("Sorry, I didn't catch that") and no_number.then == "details"
    offer = book_scenario("book_counter_outside").booking.replies("offer")
    assert next(r for r in offer if r.matches("Thank you, but Friday 9:30pm doesn't work for Nathan")).then == "done"
    assert next(r for r in offer if r.matches("Yes, Friday 9:30pm works.")).then == "requests"


async def test_a_counter_offer_inside_the_window_is_accepted_and_recorded(autojump_clock, tmp_path):
    run = await stub_book(tmp_path, "book_counter_inside", window=30)
    r = run.result
    assert r.status == "booked"
    assert (r.confirmed_time, r.minutes_from_requested, r.requested.window_minutes) == ("Friday 7:30pm", 30, 30)
    assert "Friday 7:30pm works" in agent_text(run)
    read_back_before(run, records(run)[-1], "Friday 7:30pm")
    assert_clean_tool_hangup(run)


async def test_the_same_counter_offer_with_no_window_is_declined(autojump_clock, tmp_path):
    run = await stub_book(tmp_path, "book_counter_inside", window=0)
    r = run.result
    assert r.status == "declined" and r.alternative_offered == "Friday 7:30pm"
    assert r.reason == "no_slot_in_window" and "full at seven" in r.detail
    assert [rec["event"]["status"] for rec in records(run)] == ["declined"]
    assert_clean_tool_hangup(run)


async def test_a_counter_offer_outside_the_window_is_declined_with_the_alternative(autojump_clock, tmp_path):
    run = await stub_book(tmp_path, "book_counter_outside", window=30)
    r = run.result
    assert r.status == "declined"
    assert r.alternative_offered == "Friday 9:30pm" and r.reason == "no_slot_in_window" and "fully booked at seven" in r.detail
    assert "doesn't work for Nathan" in agent_text(run)
    assert "booked" not in [rec["event"]["status"] for rec in records(run)]
    business = run.json("transcript.json")["business_text"]
    assert "You're all booked" not in business  # the restaurant never booked it either
    assert_clean_tool_hangup(run)


@pytest.mark.parametrize("style", ["careless", "careless_lying"])
async def test_the_app_refuses_an_out_of_window_booking_and_the_call_goes_on(autojump_clock, tmp_path, style):
    run = await stub_book(tmp_path, f"book_counter_outside_{style}", window=30)
    statuses = [rec["event"]["status"] for rec in records(run)]
    assert statuses == ["in_progress", "booked", "declined"]
    attempt = records(run)[1]
    claimed = attempt["event"]["booking"]["minutes_from_requested"]
    assert claimed == (150 if style == "careless" else 0)  # the lying backend said it was on time
    assert "changed" not in attempt  # refused: no track moved
    out_row, create = caused(run, attempt)
    out = json.loads(out_row["effect"]["output"])
    assert out["recorded"] is False and "150 minutes later" in out["why"] and "outside Nathan's window" in out["why"]
    assert create["effect"]["kind"] == "live.response_create"
    # The brain took it back and declined, with the alternative; that is what the call ended on.
    assert "outside the time Nathan can make" in agent_text(run)
    r = run.result
    assert r.status == "declined" and r.alternative_offered == "Friday 9:30pm"
    assert run.json("task.json")["call_id"] == records(run)[2]["event"]["call_id"]
    assert_clean_tool_hangup(run)


async def test_a_fully_booked_restaurant_is_declined_with_its_reason(autojump_clock, tmp_path):
    run = await stub_book(tmp_path, "book_full")
    r = run.result
    assert r.status == "declined"
    assert r.reason == "fully_booked" and r.detail == "I'm sorry, we're fully booked on Friday evening." and r.alternative_offered is None
    assert_clean_tool_hangup(run)


async def test_a_question_the_user_did_not_answer_is_listed_and_checked_with_the_user(autojump_clock, tmp_path):
    run = await stub_book(tmp_path, "book_unanswered")
    r = run.result
    assert r.status == "booked"
    assert r.unanswered_questions == ("Any allergies we should know about?",)
    said = agent_text(run)
    assert "check with Nathan" in said
    assert said.find("check with Nathan") < said.find("Let me read that back")
    assert "allerg" not in said.lower()  # nothing invented about allergies
    assert run.report["booking"]["unanswered_questions"] == ["Any allergies we should know about?"]
    assert run.json("task.json")["booking"]["unanswered_questions"] == ["Any allergies we should know about?"]
    assert_clean_tool_hangup(run)


# -- the conversation goes on after a tool result --------------------------------------------------------


async def test_a_progress_note_keeps_the_agent_talking(autojump_clock, tmp_path):
    run = await stub_book(tmp_path, "book_straight")
    note = next(r for r in records(run) if r["event"]["status"] == "in_progress")
    out, create = caused(run, note)
    assert (out["effect"]["kind"], create["effect"]["kind"]) == ("live.tool_output", "live.response_create")
    assert json.loads(out["effect"]["output"])["recorded"] is True
    nxt = next(r["seq"] for r in run.rows() if r["seq"] > note["seq"] and r.get("event", {}).get("kind", "").startswith("tool."))
    after = "".join(r["event"]["text"] for r in run.events("live.output_transcript") if create["seq"] < r["seq"] < nxt)
    assert "Let me read that back" in after
    # On the wire: the output, then one response.create, in that order.
    sent = [m["type"] for m in run.world.live_received]
    i = sent.index("response.item.create")
    assert sent[i : i + 2] == ["response.item.create", "response.create"]


async def test_without_the_response_create_the_agent_goes_quiet(autojump_clock, tmp_path, monkeypatch):
    drop_after_progress(monkeypatch)
    run = await stub_book(tmp_path, "book_straight")
    # The business said it had a table and noted the request; the agent never read it back nor recorded it:
    # the user gets those words, unconfirmed (never "booked" from the transcript).
    assert (run.result.status, run.result.reason) == ("declined", "unconfirmed")
    assert "Let me read that back" not in agent_text(run)
    assert [h["effect"]["via"] for h in run.effects("hangup")] == ["stall"]


def drop_after_progress(monkeypatch: pytest.MonkeyPatch) -> None:
    """Break the rule under test: no response.create after a non-terminal record."""
    original = reducer._HANDLERS[ev.TaskRecorded]

    def handler(call, event):
        out = original(call, event)
        if isinstance(out, tuple) and event.status not in ev.TERMINAL_TASK_STATUSES:
            call, effects = out
            return evolve(call, continue_due=False), effects
        return out

    monkeypatch.setitem(reducer._HANDLERS, ev.TaskRecorded, handler)


# -- the lever -------------------------------------------------------------------------------------------

BOOK_CHECKS = [
    "did_in_ledger",
    "dial_payload",
    "disclosure_first",
    "disclosure_honest",
    "clean_hangup",
    "result_artifact",
    "evidence_supported",
    "multi_turn_booking",
    "keeps_talking",
    "session_delegation",
    "tool_loop",
    "app_owned_hangup",
    "pickup_held",
]


def test_verify_book_passes_every_check(tmp_path):
    report = verify_book(workspace=tmp_path)
    assert [c.name for c in report.checks] == BOOK_CHECKS
    assert not [c.line() for c in report.checks if not c.passed]
    assert report.lines()[-1] == "13/13 passed"


def test_verify_book_fails_keeps_talking_without_the_continued_response(tmp_path, monkeypatch):
    drop_after_progress(monkeypatch)
    report = verify_book(workspace=tmp_path)
    failed = {c.name: c.evidence for c in report.checks if not c.passed}
    assert "keeps_talking" in failed and "led to 0 response.create, not one" in failed["keeps_talking"]
    assert not report.passed


def test_verify_book_fails_on_a_call_that_booked_nothing(tmp_path):
    # A restaurant that only has a table outside the window: no booking, and verify says so.
    report = verify_book(BookVerifyInput(scenario="book_counter_outside", window=30), workspace=tmp_path)
    failed = {c.name for c in report.checks if not c.passed}
    assert {"clean_hangup", "multi_turn_booking"} <= failed


# -- the request and the runner ---------------------------------------------------------------------------


def test_prepare_book_needs_the_users_number_and_writes_nothing_without_it(tmp_path):
    settings = load_settings(calld_state_dir=tmp_path)
    ledger = Ledger(settings.db_path)
    try:
        request = BookRequest(to="+15555550142", name="Nathan", party=2, time="Friday 7pm", user=UserId("nobody"))
        with pytest.raises(UnknownUser, match="calld-ctl did provision --user nobody"):
            prepare_book(request, settings, ledger)
        assert ledger.rows() == []
    finally:
        ledger.close()
    assert not settings.artifacts_dir.exists() or not any(settings.artifacts_dir.iterdir())


async def test_run_stub_book_refuses_a_quick_ask_plan_and_unknown_restaurants(tmp_path):
    from tests.core_helpers import make_book_plan, make_plan

    settings = load_settings(calld_state_dir=tmp_path)
    with pytest.raises(ValueError, match="needs a booking plan"):
        await run_stub_book(make_plan(), settings)
    with pytest.raises(ValueError, match=r"unknown booking scenario 'hours' \('hours' is a quick ask's: use it with calld-ctl ask\); choose one of book_"):
        await run_stub_book(make_book_plan(), settings, "hours")
    assert book_scenario(None).name == "book_straight"


def test_verify_book_fails_evidence_supported_when_the_time_is_not_the_restaurants(tmp_path, monkeypatch):
    from calld import verify

    original = verify.run_book_checks

    def tampered(inp, settings, ledger, run_dir):
        path = run_dir / "result.json"
        result = json.loads(path.read_text())
        result["confirmed_time"] = "Friday 8:15pm"  # never offered by the restaurant
        path.write_text(json.dumps(result))
        return original(inp, settings, ledger, run_dir)

    monkeypatch.setattr(verify, "run_book_checks", tampered)
    report = verify_book(workspace=tmp_path)
    failed = {c.name: c.evidence for c in report.checks if not c.passed}
    assert "do not hold the result" in failed["evidence_supported"]


async def test_a_restaurant_that_needs_a_missing_detail_is_declined_details_missing(autojump_clock, tmp_path):
    run = await stub_book(tmp_path, "book_needs_card")
    r = run.result
    assert (r.status, r.reason) == ("declined", "details_missing")
    assert r.unanswered_questions == ("Which credit card can we hold the table with?",)
    assert "without a card" in r.evidence[0].quote
    assert_clean_tool_hangup(run)


async def test_an_earlier_counter_offer_outside_the_window_is_declined(autojump_clock, tmp_path):
    run = await stub_book(tmp_path, "book_counter_earlier", window=30)
    r = run.result
    assert r.status == "declined" and r.alternative_offered == "Friday 5pm"
    assert "booked" not in [rec["event"]["status"] for rec in records(run)]
    assert_clean_tool_hangup(run)


async def test_the_app_refuses_an_earlier_out_of_window_booking(autojump_clock, tmp_path):
    run = await stub_book(tmp_path, "book_counter_earlier_careless", window=30)
    statuses = [rec["event"]["status"] for rec in records(run)]
    assert statuses == ["in_progress", "booked", "declined"]
    attempt = records(run)[1]
    assert attempt["event"]["booking"]["minutes_from_requested"] == -120
    assert "changed" not in attempt  # refused: no track moved
    out = json.loads(caused(run, attempt)[0]["effect"]["output"])
    assert out["recorded"] is False and "120 minutes earlier" in out["why"]
    assert run.result.status == "declined"
