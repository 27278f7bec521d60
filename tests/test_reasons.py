"""Every status and reason a user can be told, each reached by a scripted business (stub, autojump clock).

The reasons that need phone situations (holds, menus, carriers, lost transports) and policy
(opt-out, refusals before dial) have their own tests beside those features; this file covers the
ones the conversation itself decides.
"""

from __future__ import annotations

import pytest

from calld.domain.questions import QuestionType
from tests.stubcall import stub_book, stub_call


@pytest.mark.parametrize(
    ("scenario", "status", "reason", "source"),
    [
        ("hours", "answered", None, "tool"),
        ("decline", "declined", "refused", "tool"),
        ("dont_know", "declined", "unknown", "tool"),
        ("far_party_after_ask", "declined", "hung_up", "transcript"),
        ("far_party_unrecorded", "answered", None, "transcript"),
        ("far_party_mid_ask", "no_answer", "hung_up_early", "none"),
    ],
)
async def test_a_quick_ask_ends_with_the_right_status_and_reason(scenario, status, reason, source, tmp_path, autojump_clock):
    run = await stub_call(tmp_path, scenario, ask=QuestionType.HOURS)
    r = run.result
    assert (r.status, r.reason, getattr(r, "verdict_source", "none")) == (status, reason, source)
    if status in ("answered",) or reason in ("refused", "unknown"):
        business = [t["text"] for t in run.json("transcript.json")["turns"] if t["speaker"] == "business"]
        assert all(any(e.quote in text for text in business) for e in r.evidence) and r.evidence


@pytest.mark.parametrize(
    ("scenario", "window", "status", "reason"),
    [
        ("book_straight", 0, "booked", None),
        ("book_full", 0, "declined", "fully_booked"),
        ("book_counter_outside", 30, "declined", "no_slot_in_window"),
        ("book_needs_card", 0, "declined", "details_missing"),
    ],
)
async def test_a_booking_ends_with_the_right_status_and_reason(scenario, window, status, reason, tmp_path, autojump_clock):
    run = await stub_book(tmp_path, scenario, window=window)
    assert (run.result.status, run.result.reason) == (status, reason)
    assert run.result.evidence  # the restaurant's own words, whichever way it went


async def test_the_time_limit_is_failed_time_limit(tmp_path, autojump_clock):
    run = await stub_call(tmp_path, "stall", max_call_s=10)
    assert (run.result.status, run.result.reason) == ("failed", "time_limit")
