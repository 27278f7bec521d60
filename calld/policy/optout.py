"""Opt-outs: a business that asks not to be called again is not called again.

`detect_opt_out` judges the business's own words (a transcript turn): it is deterministic and
pure, and the reducer calls it on every business turn. The model may also report an opt-out with
its quote (record_task_result's opt_out_quote); `said_by_business` checks the business said those
words, and either path binds. `check_opt_out` refuses a request to a number on the list, naming when it was said.
"""

from __future__ import annotations

import re
from datetime import datetime
from functools import lru_cache

from attrs import frozen

from calld.policy.refusal import Refusal

_US = r"(?:us|me|this number|our number|this business|this store|here)"
_LIST = r"(?:your|the|this)\s+(?:calling\s+|call\s+|contact\s+|phone\s+|mailing\s+)?list"
_PHRASES = (
    r"\bstop\s+(?:calling|ringing|phoning)\b",
    rf"\b(?:take|remove|delete|drop|cross)\s+{_US}\s+(?:off|from|out of)\s+{_LIST}",
    rf"\b(?:take|remove|delete|drop|cross)\s+(?:off|from)\s+{_LIST}",
    rf"\b(?:don'?t|do\s+not|never)\s+(?:ever\s+)?(?:call|ring|phone|contact)\s+{_US}\b",
    r"\b(?:don'?t|do\s+not|never)\s+(?:ever\s+)?(?:call|ring|phone)\s+again\b",
    r"\bdo[\s-]+not[\s-]+call\s+list\b",
    r"\bno\s+more\s+calls\b",
    rf"\b(?:put|add)\s+{_US}\s+on\s+(?:your|the)\s+do[\s-]+not[\s-]+call\b",
)
_PATTERNS = tuple(re.compile(p, re.IGNORECASE) for p in _PHRASES)
# One pass of all the phrases rules a sentence out (the usual answer) at a fraction of trying each.
_ANY = re.compile("|".join(f"(?:{p})" for p in _PHRASES), re.IGNORECASE)
# "Don't call us, we'll call you" asks not to be called; "I didn't say stop calling" does not.
_NEGATED = re.compile(r"\b(?:didn'?t|did\s+not|never)\s+(?:say|said|ask|asked)\b[^.?!]*$", re.IGNORECASE)
_SENTENCE = re.compile(r"[^.?!]*[.?!]?")


def detect_opt_out(business_text: str) -> str | None:
    """The sentence in which the business asks not to be called again, as it said it; else None.

    Asked on every word the business says, over its whole turn: a finished sentence is judged
    once (remembered), so only the sentence being spoken costs anything each time."""
    for sentence in _SENTENCE.findall(business_text):
        finished = sentence[-1:] in (".", "?", "!")
        if (_asks_not_to_call_again_finished if finished else _asks_not_to_call_again)(sentence):
            return sentence.strip()
    return None


def _asks_not_to_call_again(sentence: str) -> bool:
    if _ANY.search(sentence) is None:
        return False
    for pattern in _PATTERNS:
        m = pattern.search(sentence)
        if m and not _NEGATED.search(sentence[: m.start()]):
            return True
    return False


_asks_not_to_call_again_finished = lru_cache(maxsize=4096)(_asks_not_to_call_again)


_WORD = re.compile(r"[a-z0-9]+(?:'[a-z]+)?")


def said_by_business(quote: str, business_text: str) -> bool:
    """The model's opt-out quote is the business's words: its words stand in order, one after another, in
    what the business said (case, punctuation and spacing aside)."""
    words, said = _WORD.findall(quote.lower()), " ".join(_WORD.findall(business_text.lower()))
    return bool(words) and f" {' '.join(words)} " in f" {said} "


@frozen
class OptOut:
    """One number's opt-out, as the ledger keeps it."""

    number: str
    said_at: datetime
    quote: str
    user_id: str  # whose call heard it
    run_id: str


def check_opt_out(number: str, entry: OptOut | None) -> Refusal | None:
    if entry is None:
        return None
    return Refusal(
        "opt_out",
        f"{number} asked not to be called again on {entry.said_at:%Y-%m-%d} (\"{entry.quote}\"); "
        f"an operator can lift it with: calld-ctl optout remove {number}",
        f"They asked not to be called again (on {entry.said_at:%Y-%m-%d}: \"{entry.quote}\"), so I won't call them.",
    )
