"""A refusal: which rule said no, and the one line that says why."""

from __future__ import annotations

from typing import Literal

from attrs import frozen

Rule = Literal[
    "destination", "calling_window", "opt_out", "rate_limit", "booking_time", "schedule", "words",
]


@frozen
class Refusal:
    rule: Rule
    message: str  # for calld-ctl and the control API: may name flags, settings and commands
    # The same refusal for someone who texted the request: no flags, settings or commands, which a
    # text reply must not show (calld.messaging.replies); None where `message` is already plain.
    people: str | None = None

    def as_dict(self) -> dict[str, str]:
        return {"rule": self.rule, "message": self.message}


class Refused(ValueError):
    """A request the policy will not place. Nothing was written and nothing was dialled."""

    def __init__(self, refusal: Refusal) -> None:
        super().__init__(refusal.message)
        self.refusal = refusal

    @property
    def user_text(self) -> str | None:
        """Words for a person who texted the request (the messaging port reads this), if any."""
        return self.refusal.people
