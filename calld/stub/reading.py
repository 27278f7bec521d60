"""The fake model's reading of what the business said: the typed fields a record carries.

The live model reads the business's words into typed fields (hours as ranges, stock, the aisle) and
cites them. The stub world's stand-in does the same, crudely, for the lines its scenarios say: a
person's reading of "We're open Monday through Friday, 9 AM to 5 PM", not the app's. It uses the
app's vocabulary (calld.evidence.vocab) only to find the times and days in the words, as any reader
would; whether its fields hold is still the app's check to make, and scenarios that script a wrong
record give their fields outright (calld.stub.scenario.ModelRecord.fields).
"""

from __future__ import annotations

import re
from typing import Any

from calld.domain.questions import QuestionType
from calld.evidence import vocab as v


def question_of(instructions: str) -> QuestionType:
    """Which question the session asks, from its instructions (the ask line is in them)."""
    if "in stock" in instructions:
        return QuestionType.STOCK
    if "Which aisle" in instructions:
        return QuestionType.AISLE
    return QuestionType.HOURS


def fields(question: QuestionType, heard: str) -> dict[str, Any]:
    """The typed fields of an answer to `question` read from `heard`: hours, stock and aisle (two null)."""
    out: dict[str, Any] = {"hours": None, "stock": None, "aisle": None}
    match question:
        case QuestionType.HOURS:
            out["hours"] = {"ranges": hours(heard)}
        case QuestionType.STOCK:
            out["stock"] = stock(heard)
        case QuestionType.AISLE:
            out["aisle"] = {"location": aisle(heard)}
    return out


def _hhmm(c: v.Clock, *, opening: bool) -> str:
    hour = c.hour
    if c.either:  # as a person hears it: opening 5-11 is morning, closing 1-11 is afternoon or evening
        morning = opening and 5 <= c.hour <= 11
        hour = 12 if c.hour == 12 else c.hour if morning else c.hour + 12
    return f"{hour:02d}:{c.minute:02d}"


_CLOSING = re.compile(r"\b(?:close|closes|closing|until|till|til|shut)\b")
_CLOSED = re.compile(r"\b(?:closed|shut)\b")
_ALWAYS = re.compile(r"\b(?:24 ?/ ?7|24 hours|around the clock)\b")


def hours(heard: str) -> list[dict[str, Any]]:
    """Ranges of days with times, clause by clause; a clause with times and no days takes the days of
    the clause next to it that has days and no times ("Monday through Friday, 9 to 5")."""
    ranges: list[dict[str, Any]] = []
    pending_days: list[str] | None = None
    pending_times: list[v.ClockAt] | None = None
    for a, b in v.sentence_spans(heard):
        for clause in v.normal_clauses(heard[a:b]):
            named = sorted(v.days_said(clause) - {"today", "tomorrow"}, key=v.WEEK.index)
            when = "today" if "today" in v.days_said(clause) else "tomorrow" if "tomorrow" in v.days_said(clause) else None
            times = v.clocks(clause)
            if _ALWAYS.search(clause):
                ranges.append(_range(named or list(v.WEEK), None, None, around=True))
            elif _CLOSED.search(clause) and named and not times:
                ranges.append(_range(named, None, None, closed=True))
            elif times and (named or when):
                ranges.append(_timed(named, when, times, clause))
            elif times and pending_days is not None:
                ranges.append(_timed(pending_days, None, times, clause))
                pending_days = None
            elif times:
                pending_times = times
            elif named and pending_times is not None:
                ranges.append(_timed(named, None, pending_times, clause))
                pending_times = None
            elif named:
                pending_days = named
    if pending_times is not None:
        ranges.append(_timed([], None, pending_times, ""))
    return ranges


def _timed(days: list[str], when: str | None, times: list[v.ClockAt], clause: str) -> dict[str, Any]:
    if len(times) >= 2:
        return _range(days, _hhmm(times[0].clock, opening=True), _hhmm(times[1].clock, opening=False), date=when)
    c = times[0]
    if _CLOSING.search(clause[: c.start]):
        return _range(days, None, _hhmm(c.clock, opening=False), date=when)
    return _range(days, _hhmm(c.clock, opening=True), None, date=when)


def _range(days: list[str], opens: str | None, closes: str | None, *, closed: bool = False, around: bool = False,
           date: str | None = None) -> dict[str, Any]:
    return {"days": days, "opens": opens, "closes": closes, "closed": closed, "around_the_clock": around, "date": date}


_OUT = re.compile(r"\b(?:out of stock|sold out|don't have|do not have|dont have|none left|we're out|we are out|not in stock|"
                  r"don't carry|do not carry|dont carry|no longer)\b")
_LIMITED = re.compile(r"\b(?:only|last|just a few|few left|limited)\b")
_COUNT = re.compile(r"\b(\d+) (?:of (?:those|them|each)|left|in stock|on the shelf|units|bags|boxes)\b")


def stock(heard: str) -> dict[str, Any]:
    said = v.normal(heard)
    if _OUT.search(said):
        return {"availability": "out_of_stock", "quantity": None, "kinds": []}
    count = _COUNT.search(said)
    quantity = int(count.group(1)) if count else None
    availability = "limited" if _LIMITED.search(said) else "in_stock"
    return {"availability": availability, "quantity": quantity, "kinds": []}


_PLACE = re.compile(r"\b(?:aisle \w+|[\w-]+ (?:department|section|counter|wall)|(?:back|front) of the store|end ?cap|garden cent(?:er|re))\b",
                    re.I)


def aisle(heard: str) -> str:
    m = _PLACE.search(heard)
    return m.group() if m else heard.strip().rstrip(".")
