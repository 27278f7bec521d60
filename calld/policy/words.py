"""Words as data, and spoken only when item-like: the user's words that are said on the call.

An item and a booking's time are spoken inside the opening line the model is told to say
exactly; a booking's notes are read back to the restaurant. Each is checked first
(calld.domain.words.spoken_problem): no word that addresses the model ("ignore", "say",
"pretend", "you are", ...), no phone number, no web address, and short. Anything else is
refused before anything is written or dialled, with the flag named for calld-ctl and plain
words for a person who texted it.
"""

from __future__ import annotations

from calld.domain.words import item_problem, notes_problem, time_problem
from calld.policy.refusal import Refusal

ITEM_FOR_PEOPLE = "I can only ask about a product name, like \"cast iron skillet\"."
NOTES_FOR_PEOPLE = "I can only pass on short notes about the table, like \"outdoor if possible\"."
TIME_FOR_PEOPLE = "I can only say when you'd like the table, like \"Friday 7pm\"."


def _shown(text: str) -> str:
    return repr(text if len(text) <= 60 else text[:57] + "...")


def check_spoken(*, item: str | None = None, notes: str | None = None, time: str | None = None) -> Refusal | None:
    """None when every given text may be spoken on the call; else the refusal of the first that may not."""
    if item is not None and (why := item_problem(item)):
        return Refusal("words", f"--item {_shown(item)} is not spoken on a call: {why}. Give only the product's name, "
                                'e.g. --item "cast iron skillet"; nothing was placed', people=ITEM_FOR_PEOPLE)
    if notes is not None and (why := notes_problem(notes)):
        return Refusal("words", f"--notes {_shown(notes)} is not spoken on a call: {why}. Give only the table's constraints, "
                                'e.g. --notes "outdoor if possible"; nothing was placed', people=NOTES_FOR_PEOPLE)
    if time is not None and (why := time_problem(time)):
        return Refusal("words", f"--time {_shown(time)} is not spoken on a call: {why}. Give only the day and time, "
                                'e.g. --time "Friday 7pm"; nothing was placed', people=TIME_FOR_PEOPLE)
    return None


def check_request(request: object) -> Refusal | None:
    """`check_spoken` on a request's item, notes and time (an AskRequest or a BookRequest)."""
    return check_spoken(item=getattr(request, "item", None), notes=getattr(request, "notes", None),
                        time=getattr(request, "time", None))
