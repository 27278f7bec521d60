"""Records of the tool's schemas and calls, built for the evidence check's tests (tests/test_check*.py)."""

from __future__ import annotations

from typing import Any

from calld.core.plan import BookJob, QuickAskJob
from calld.domain.ids import E164
from calld.domain.questions import QuestionType
from calld.domain.transcript import Turn

BOOK = BookJob(2, "Friday 7pm", None, 60, E164("+15555550123"))
HOURS = QuickAskJob(QuestionType.HOURS, None)
STOCK = QuickAskJob(QuestionType.STOCK, "cast iron skillet")
AISLE = QuickAskJob(QuestionType.AISLE, "garden hose")
DAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
WORDS = ("one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve")


def booked(party: int, time: str, **quotes: Any) -> dict[str, Any]:
    return {"status": "booked", "confirmation_text": "booked", "confirmed_party": party, "confirmed_time": time,
            "confirmed_constraints": None, "minutes_from_requested": 0, "alternative_offered": None, "reason": None,
            "reason_code": None, "quotes": [], "unanswered_questions": [], "opt_out_quote": None, "outcome_quote": None,
            "party_quote": None, "time_quote": None, "date_quote": None, "party_readback": False,
            "time_readback": False, "date_readback": False} | quotes


def declined(outcome: str | None) -> dict[str, Any]:
    return booked(0, "") | {"status": "declined", "confirmed_party": None, "confirmed_time": None,
                            "reason": "full", "reason_code": "fully_booked", "outcome_quote": outcome}


def answered(**answer: Any) -> dict[str, Any]:
    return {"status": "answered", "quotes": [], "answer_text": "the answer", "notes": None, "reason": None,
            "hours": None, "stock": None, "aisle": None, "outcome_quote": None, "opt_out_quote": None} | answer


def hours(*ranges: dict[str, Any]) -> dict[str, Any]:
    return answered(hours={"ranges": [{"days": [], "opens": None, "closes": None, "closed": False,
                                       "around_the_clock": False, "date": None, "days_quote": None, "times_quote": None,
                                       "context_quote": None, "readback": False} | r for r in ranges],
                           "no_set_hours": False, "no_set_hours_quote": None})


def stock(availability: str, quote: str | None, quantity: int | None = None, **more: Any) -> dict[str, Any]:
    return answered(stock={"availability": availability, "quantity": quantity, "kinds": [], "quote": quote,
                           "readback": False} | more)


def aisle(location: str, quote: str | None, readback: bool = False, outcome: str | None = None) -> dict[str, Any]:
    return answered(aisle={"location": location, "quote": quote, "readback": readback}, outcome_quote=outcome)


def call(*lines: str) -> tuple[Turn, ...]:
    """Turns alternating agent, business, agent...: the agent asks first."""
    return tuple(Turn("agent" if i % 2 == 0 else "business", text) for i, text in enumerate(lines))


def hhmm(hour: int, minute: int) -> str:
    return f"{hour + 12:02d}:{minute:02d}"
