"""Scripted businesses for stub calls: what the business says, when, and which faults occur.

A Scenario is data. The stub world plays it: Telnyx (REST, webhooks, media) on one
side and a fake GPT-Live on the other, each reacting to what the app sends.
"""

from __future__ import annotations

from typing import Literal

from attrs import frozen

ModelVerdict = Literal["answered", "declined", "none"]


@frozen
class Scenario:
    name: str
    greeting: str = "Hello, Joe's Hardware, how can I help you?"
    answer: str = "We're open Monday through Friday, 9 AM to 5 PM."
    # What the fake backend records once it has heard the answer ("none": it never records).
    model_verdict: ModelVerdict = "answered"
    closing_line: str = "Thank you so much for your help. Goodbye!"
    ring_s: float = 1.0  # dial -> call.answered
    greet_after_s: float = 0.2  # media start -> the business starts talking
    live_ready_after_s: float = 1.2  # session.start -> session.started
    answer_delay_s: float = 0.6  # the business has heard the ask -> starts answering
    media_before_answer: bool = False  # the media start frame beats the call.answered webhook
    echo_marks: bool = True
    confirm_hangup: bool = True  # Telnyx sends call.hangup after our hangup
    # The business hangs up on us: while the agent asks, or right after giving its answer.
    far_party_hangup: Literal["never", "mid_ask", "after_answer"] = "never"
    silent_after_greeting: bool = False  # the business never answers the question
    end_call_after_closing: bool = True  # the backend calls end_call after the closing line
    duplicate_webhooks: bool = False


SCENARIOS: dict[str, Scenario] = {
    s.name: s
    for s in (
        Scenario("hours"),
        Scenario(
            "stock",
            greeting="Good afternoon, Copperline Kitchen Supply.",
            answer="Yes, we have three of those on the shelf right now.",
        ),
        Scenario(
            "aisle",
            greeting="Hi there, Valley Home Center.",
            answer="That's in aisle 14, next to the grills.",
        ),
        Scenario(
            "decline",
            answer="Sorry, we can't give that out over the phone.",
            model_verdict="declined",
        ),
        Scenario("late_answer", answer_delay_s=9.0),
        Scenario("early_greeting", greet_after_s=0.1, live_ready_after_s=3.0),
        Scenario("media_first", media_before_answer=True),
        Scenario("no_echo", echo_marks=False),
        Scenario("no_confirm", confirm_hangup=False),
        Scenario("far_party_mid_ask", far_party_hangup="mid_ask", model_verdict="none"),
        Scenario("far_party_after_answer", far_party_hangup="after_answer"),
        Scenario("far_party_unrecorded", far_party_hangup="after_answer", model_verdict="none"),
        Scenario("stall", silent_after_greeting=True, model_verdict="none"),
        Scenario("duplicates", duplicate_webhooks=True),
    )
}
