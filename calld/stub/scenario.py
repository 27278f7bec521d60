"""Scripted businesses for stub calls: what the business says, when, and which faults occur.

A Scenario is data. The stub world plays it: Telnyx (REST, webhooks, media) on one
side and a fake GPT-Live on the other, each reacting to what the app sends.

A booking business is a small state machine (`BookingScript`): in each state it
waits for the agent's words, as it heard them played on the line, to match one of
its replies, says that reply and moves on. So it reacts to what the agent really
said: a callback number it never heard is asked for again; a counter-offer the
agent turned down is not booked.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Literal

from attrs import evolve, frozen

ModelVerdict = Literal["answered", "declined", "none"]
# How the fake backend treats the user's window: checks it itself (careful), books whatever is
# offered and reports the true minutes (careless), or books it and reports 0 minutes (careless_lying).
# The last two are what the app's own window check is for.
BrainStyle = Literal["careful", "careless", "careless_lying"]


@frozen
class Reply:
    """Say `say` once the agent's words since the business last spoke match `when`; go to `then`."""

    say: str
    when: str = "."
    then: str = "done"

    def matches(self, heard: str) -> bool:
        return re.search(self.when, heard, re.IGNORECASE | re.DOTALL) is not None


@frozen
class ModelRecord:
    """One record_task_result the fake backend makes, right or wrong: the model's mistakes are data.

    It is sent once the line named by `after` has been heard whole ("greeting": the business's
    first line, "answer": its answer). `answer_text` "{heard}" stands for the words of that line.
    `deliveries` > 1 sends the same call_id again (a duplicate delivery); `same_response` puts it
    in one backend response with the record before it.
    """

    status: str
    answer_text: str | None = "{heard}"
    after: Literal["greeting", "answer"] = "answer"
    delay_s: float = 0.3
    deliveries: int = 1
    same_response: bool = False


@frozen
class BookingScript:
    states: tuple[tuple[str, tuple[Reply, ...]], ...]
    start: str = "ask"

    def replies(self, state: str) -> tuple[Reply, ...]:
        return next((replies for name, replies in self.states if name == state), ())


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
    far_party_hangup: Literal["never", "mid_ask", "after_ask", "after_answer"] = "never"
    silent_after_greeting: bool = False  # the business never answers the question
    end_call_after_closing: bool = True  # the backend calls end_call after the closing line
    duplicate_webhooks: bool = False
    reorder_webhooks: bool = False  # call.answered and streaming.started before call.initiated
    goodbye_stall_s: float = 0.0  # GPT-Live goes silent this long halfway through the closing line
    booking: BookingScript | None = None  # a restaurant taking a booking, instead of answering one question
    brain: BrainStyle = "careful"  # how the fake backend treats the window (booking only)
    # The fake backend's records, when scripted; empty: it records `model_verdict` after the answer.
    model_records: tuple[ModelRecord, ...] = ()


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
        # Hears the whole request, says nothing, hangs up.
        Scenario("far_party_after_ask", far_party_hangup="after_ask", silent_after_greeting=True, model_verdict="none"),
        Scenario("dont_know", answer="Honestly, I don't know, I just started here.", model_verdict="declined"),
        Scenario("stall", silent_after_greeting=True, model_verdict="none"),
        Scenario("duplicates", duplicate_webhooks=True),
        Scenario("reordered", reorder_webhooks=True, duplicate_webhooks=True),
        # The business asks not to be called again; its (careless) model records it as an answer anyway.
        Scenario(
            "opt_out",
            answer="Please stop calling us, and take this number off your list.",
            model_verdict="answered",
        ),
        Scenario("goodbye_stall", goodbye_stall_s=0.5, closing_line="Thank you so much for your help today, that is everything I needed, goodbye!"),
        # -- a model that gets it wrong: the app, not the model, decides what the user is told --
        # It records an answer while the business has only said hello; then the real one.
        Scenario("model_early", model_records=(
            ModelRecord("answered", "They are open 9 AM to 5 PM.", after="greeting"), ModelRecord("answered"))),
        # It hears "9 AM to 5 PM" and records "until 9 PM"; it never records again.
        Scenario("model_hallucinates", model_records=(ModelRecord("answered", "They are open until 9 PM tonight."),)),
        # The business refuses and the model calls it an answer; then it declines.
        Scenario("model_mislabels_refusal", answer="Sorry, we can't give that out over the phone.", model_records=(
            ModelRecord("answered", "They won't say."), ModelRecord("declined", None, delay_s=1.0))),
        # The business answers and the model records a refusal.
        Scenario("model_mislabels_answer", model_records=(ModelRecord("declined", None),)),
        # Two records in one backend response that disagree: the first that holds wins.
        Scenario("model_conflicts", model_records=(
            ModelRecord("answered"), ModelRecord("declined", None, same_response=True))),
        # The same function call delivered twice.
        Scenario("model_duplicates", model_records=(ModelRecord("answered", deliveries=2),)),
        # The business answers and stays on the line; the model never records anything.
        Scenario("model_silent", model_verdict="none"),
        # A recorded greeting that gives only hours; the model takes it for an answer about stock.
        Scenario(
            "model_from_recording",
            greeting="You've reached Copperline Kitchen Supply. Our hours are 9 AM to 5 PM. Please leave a message after the tone.",
            silent_after_greeting=True,
            model_records=(ModelRecord("answered", "Yes, it is in stock.", after="greeting"),
                           ModelRecord("voicemail", None, after="greeting", delay_s=2.0)),
        ),
    )
}


# -- restaurants taking a booking --------------------------------------------------------------------

_RESTAURANT = "Good evening, Trattoria Roma, how can I help you?"
_ASKS_TO_BOOK = r"book a table"
_NUMBER = r"\+\d{10,15}"

# The tail every booking shares: special requests, then the read-back, then the confirmation.
_REQUESTS = ("requests", (Reply("Lovely, that's all noted.", then="readback"),))
_READBACK = (
    "readback",
    (Reply("Yes, that's right. You're all booked, we'll see you then.", when=r"read that back|is that right", then="booked"),),
)
# An agent that takes a booking back is let off politely.
_BOOKED = ("booked", (Reply("Oh, no problem, I'll cancel it. Goodbye.", when=r"don't hold|cancel", then="done"),))
_COUNTER = (
    "offer",
    (
        Reply("No problem, maybe another time. Goodbye.", when=r"doesn't work|leave it|no,? thank", then="done"),
        Reply("Great. Any special requests?", when=r"\bworks\b|\byes\b|that's fine", then="requests"),
    ),
)


def _booking(name: str, first: Reply, *states: tuple[str, tuple[Reply, ...]], **kw: object) -> Scenario:
    script = BookingScript(states=(("ask", (first,)), *states, _REQUESTS, _READBACK, _BOOKED))
    return Scenario(name, greeting=_RESTAURANT, booking=script, **kw)  # type: ignore[arg-type]


BOOK_SCENARIOS: dict[str, Scenario] = {
    s.name: s
    for s in (
        # Books straight away; asks only for special requests.
        _booking(
            "book_straight",
            Reply("Of course, we have a table for you then. Any special requests?", when=_ASKS_TO_BOOK, then="requests"),
        ),
        # Wants the name and a callback number first, and asks again until it has heard both.
        _booking(
            "book_details",
            Reply(
                "Sure, I can do that. What name is the booking under, and what number can we reach you on?",
                when=_ASKS_TO_BOOK,
                then="details",
            ),
            (
                "details",
                (
                    Reply("Thank you. Any special requests?", when=rf"(?=.*\bunder\b)(?=.*{_NUMBER})", then="requests"),
                    Reply("Sorry, I didn't catch that. What name, and what number?", then="details"),
                ),
            ),
        ),
        # The time asked for is full; 30 minutes later is free.
        _booking(
            "book_counter_inside",
            Reply(
                "We're full at seven, but I could do 7:30pm on Friday. Would that work?",
                when=_ASKS_TO_BOOK,
                then="offer",
            ),
            _COUNTER,
        ),
        # The time asked for is full; only two and a half hours later is free.
        _booking(
            "book_counter_outside",
            Reply(
                "I'm sorry, we're fully booked at seven. The earliest I could do is 9:30pm on Friday. Would that work?",
                when=_ASKS_TO_BOOK,
                then="offer",
            ),
            _COUNTER,
        ),
        # No table at all, and nothing else offered.
        _booking(
            "book_full",
            Reply("I'm sorry, we're fully booked on Friday evening.", when=_ASKS_TO_BOOK, then="done"),
        ),
        # Needs a card number the request does not give, and will not hold a table without it.
        _booking(
            "book_needs_card",
            Reply("Sure. Which credit card can we hold the table with?", when=_ASKS_TO_BOOK, then="card"),
            ("card", (Reply("Sorry, we can't hold a table without a card. Goodbye.", when=r"check with", then="done"),)),
        ),
        # Asks something the request does not answer; books once the agent says it will check.
        _booking(
            "book_unanswered",
            Reply("Sure, we can do that. Any allergies we should know about?", when=_ASKS_TO_BOOK, then="allergies"),
            (
                "allergies",
                (Reply("No problem, just let us know. Any special requests?", when=r"check with", then="requests"),),
            ),
        ),
    )
}
# Careless backends book an out-of-window offer (one even says it is 0 minutes off): the app refuses it.
for _style in ("careless", "careless_lying"):
    _s = evolve(BOOK_SCENARIOS["book_counter_outside"], name=f"book_counter_outside_{_style}", brain=_style)
    BOOK_SCENARIOS[_s.name] = _s


def load_scenario(path: Path) -> Scenario:
    """A scenario from a JSON file: {"name": ..., any Scenario field: value}. Unknown keys are refused."""
    import json

    from cattrs import Converter, transform_error
    from cattrs.errors import ClassValidationError

    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError) as exc:
        raise ValueError(f"{path}: cannot read a JSON scenario: {exc}") from None
    converter = Converter(forbid_extra_keys=True)
    try:
        return converter.structure(data, Scenario)
    except ClassValidationError as exc:
        raise ValueError(f"{path}: " + "; ".join(transform_error(exc))) from None
