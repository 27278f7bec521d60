"""Typed answers read from the business's own words (the evidence quotes), never from the model's. Pure.

hours  runs of days with opening and closing times ("Monday through Friday, 9 AM to 5 PM"), or
       open around the clock ("24 hours", "24/7": every day unless days are named);
       a clock without am/pm reads as the business day suggests: opening 5-11 is morning,
       closing 1-11 is afternoon or evening. "today"/"tomorrow" become a date when the caller
       knows the business's date; otherwise they stay relative. Words with times but no
       readable days give no ranges: the text still holds them.
stock  in_stock | out_of_stock | limited | unknown, with the quantity when one was said exactly: the last word
       on it counts ("we do carry it. we're out right now though" is out of stock); some_kinds, with
       each kind's, when the business spoke only of kinds of it and has some, not others ("the 10-inch
       is sold out but we have the 12-inch").
aisle  the place as said: "aisle 14", "garden department", "back of the store"; of two in one
       sentence, the one said with the item.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Sequence

import attrs
from attrs import frozen

from calld.domain.questions import QuestionType
from calld.evidence import words as w


from calld.core.answers import Aisle, Answer, DayRange, Hours, KindStock, Stock, TextOnly  # noqa: E402



_CLOSED = re.compile(r"\bclosed\b", re.I)
_BETWEEN = re.compile(r"^\s*(?:to|until|till|til|through|-|–|and)\s*$", re.I)


def _opening(c: w.Clock) -> str:
    return c.hhmm(assume_pm=c.hour == 12 or c.hour < 5)


def _closing(c: w.Clock) -> str:
    return c.hhmm(assume_pm=1 <= c.hour <= 11 or c.hour == 12)


# Clauses: at commas, at an "and" before days, and before "except" / "but" ("nine to six every day
# except Sundays when we close at four"), which set days apart from what was said before.
_CLAUSES = re.compile(r"[,;](?!\s*when\b)|\band\b(?=\s+(?:on\s+)?(?:mon|tue|wed|thu|fri|sat|sun|week))|(?=\b(?:except|but|other than|apart from)\b)",
                      re.I)
_DAYS_ONLY = re.compile(r"\s*(?:on\s+)?(?:(?:mon|tues|wednes|thurs|fri|satur|sun)days?|weekends?|weekdays?)[\s.!]*", re.I)
_SET_APART = re.compile(r"^\s*(?:except|but|other than|apart from)\b(?:\s+(?:for|not|on))*", re.I)
# "but on Saturdays we close early": days set apart for a time still to come, not days closed
_TIME_TO_COME = re.compile(r"\b(?:close|closes|closing|shut|shuts|open|opens|opening)\b", re.I)


def _clauses(text: str) -> list[str]:
    """The clauses of a sentence; without commas, days said right after a time, or after days said
    right after one, start a clause when it has days already ("nine to six every day saturdays we
    close at three", "monday through saturday nine to nine sunday eleven to six"), and so do days
    with a time of their own after a day said closed ("sundays we're closed monday through ...")."""
    cuts = {0, len(text)}
    for m in _CLAUSES.finditer(text):
        cuts |= {m.start(), m.end()}
    ends = {f.end for f in w.clocks(text)}
    named = []
    for d in w.days(text):
        if (later := w.days_after_closed(text, d)) is not None:
            cuts.add(later)  # "sundays we're closed | monday through saturday nine to six"
        if len(text[:d.start].rstrip()) in ends:
            ends.add(d.end)
            if any(e.start >= max(c for c in cuts if c <= d.start) for e in named):
                cuts.add(d.start)
        named.append(d)
    marks = sorted(cuts)
    return [text[a:b] for a, b in zip(marks, marks[1:]) if not _CLAUSES.fullmatch(text[a:b])]


def _hours(sentences: Sequence[str], today: dt.date | None) -> Hours:
    ranges: list[DayRange] = []
    for text in sentences:
        pending: DayRange | None = None  # times said before their days ("eight to eight, seven days a week")
        role: str | None = None  # "close" for the time after "on Saturdays we close early,"
        timed: int | None = None  # the range the clause before gave a time, if it did
        for clause in _clauses(text):
            found_days = w.days(clause)
            clocks = [f for f in w.clocks(clause) if not w.negated_time(clause, f)]  # "not at nine" is no opening time
            if not found_days and not clocks and not w.always_open(clause):
                if clause.strip().lower() != "and":
                    timed = None
                continue
            was_timed, timed = timed, None
            weekdays: set[int] = set()
            date = None
            for d in found_days:
                weekdays |= d.days
                if d.relative and today is not None:
                    when = today + dt.timedelta(days=1 if d.relative == "tomorrow" else 0)
                    weekdays.add(when.weekday())
                    date = when.isoformat()
            names = tuple(w.WEEKDAYS[i] for i in sorted(weekdays))
            hint, role = role, None
            if names and not clocks and was_timed is not None and _DAYS_ONLY.fullmatch(clause):
                # "we close at midnight on Fridays and Saturdays": more days for the time just said
                prev = ranges[was_timed]
                ranges[was_timed] = attrs.evolve(prev, days=tuple(d for d in w.WEEKDAYS if d in prev.days or d in names))
                timed = was_timed
                continue
            if (names and not clocks and pending is None and (verb := _TIME_TO_COME.search(clause)) is not None
                    and not _CLOSED.search(clause) and not w.always_open(clause)):
                ranges.append(DayRange(names, None, None, date=date))  # its time finishes it
                role = "close" if verb.group(0).lower().startswith(("clos", "shut")) else "open"
                continue
            if names and not clocks and _SET_APART.match(clause) and not _CLOSED.search(clause):
                # "... every day except Sundays": those days are closed; after "closed every day", open
                # (the times after it then finish the days left open: "every day but Sunday, nine to five")
                prev = ranges[-1] if ranges else None
                rest = tuple(d for d in prev.days if d not in names) if prev is not None else ()
                if prev is not None and prev.closed:
                    ranges[-1:] = [attrs.evolve(prev, days=rest), DayRange(names, None, None, date=date)]
                elif prev is not None and rest != prev.days and prev.opens is None and prev.closes is None:
                    ranges[-1:] = [DayRange(names, None, None, closed=True, date=date), attrs.evolve(prev, days=rest)]
                else:
                    ranges.append(DayRange(names, None, None, closed=True, date=date))
                continue
            if names and not clocks and pending is not None and not _CLOSED.search(clause):
                ranges.append(attrs.evolve(pending, days=names, date=date))
                pending = None
                continue
            if w.always_open(clause) and not clocks:
                ranges.append(DayRange(names or tuple(w.WEEKDAYS), None, None, date=date, around_the_clock=True))
                continue
            if _CLOSED.search(clause) and not clocks:
                ranges.append(DayRange(names, None, None, closed=True, date=date))
                continue
            opens = closes = None
            if len(clocks) >= 2 and _BETWEEN.match(clause[clocks[0].end:clocks[1].start]):
                opens, closes = _opening(clocks[0].clock), _closing(clocks[1].clock)
            elif len(clocks) == 1:
                if (w.clock_role(clause, clocks[0]) or hint) == "close":  # "we close early on Saturday at three"
                    closes = _closing(clocks[0].clock)
                else:
                    opens = _opening(clocks[0].clock)
            if not names and ranges and (opens or closes):
                # "Monday through Friday, 9 AM to 5 PM": the times finish the days of the clause before.
                prev = ranges[-1]
                if prev.opens is None and prev.closes is None and not prev.closed:
                    ranges[-1] = DayRange(prev.days, opens, closes, date=prev.date)
                    continue
            if not names and opens and closes:
                pending = DayRange((), opens, closes)
            if names or opens or closes:
                ranges.append(DayRange(names, opens, closes, date=date))
                if names and (opens or closes) and not date:
                    timed = len(ranges) - 1
    return Hours(_later_wins(tuple(r for r in ranges if r.days and (r.opens or r.closes or r.closed or r.around_the_clock))))


def _later_wins(ranges: tuple[DayRange, ...]) -> tuple[DayRange, ...]:
    """A later word on a day replaces the earlier one for that day ("Monday through Friday, 9 to 5.
    Actually, on Fridays we close at 4": Friday 9 to 4, the other days 9 to 5); a time it leaves out
    is the earlier one's."""
    out: list[DayRange] = []
    for later in ranges:
        kept: list[DayRange] = []
        for earlier in out:
            shared = set(earlier.days) & set(later.days)
            if not shared or earlier.date != later.date:
                kept.append(earlier)
                continue
            if (rest := tuple(d for d in earlier.days if d not in shared)):
                kept.append(attrs.evolve(earlier, days=rest))
            if (later.opens is None) != (later.closes is None) and not (earlier.closed or earlier.around_the_clock
                                                                      or later.closed or later.around_the_clock):
                later = attrs.evolve(later, opens=later.opens or earlier.opens, closes=later.closes or earlier.closes)
        out = [*kept, later]
    return tuple(out)


def _stock(sentences: Sequence[str], item: str | None) -> Stock:
    """The business's last word on the item, as the evidence gate reads it; where their words
    disagree, the clauses that name the item best decide ("we've got the lids in stock, but the
    skillets themselves are sold out" is sold out for the skillets)."""
    said = [(text, f) for text in sentences for f in w.stock(text) if not w.elsewhere(text, f.start)]
    if apart := w.kinds_apart(said, item):
        return Stock("some_kinds", None, tuple(KindStock(w.kind_of_the_item(f.subject, item) or "", f.availability,
                                                         f.quantity or None) for _, f in (said[i] for i in apart)))
    said = [said[i] for i in w.on_the_item(said, item)]
    if not said:
        return Stock("unknown", None)
    text, last = said[-1]
    # a count said roughly ("a dozen or so") is no exact quantity: the words keep it
    return Stock(last.availability, None if w.ROUGH_COUNT.search(text) else last.quantity)


def read_answer(question: QuestionType, sentences: Sequence[str], *, today: dt.date | None = None,
                item: str | None = None) -> Answer:
    if question is QuestionType.HOURS:
        return _hours(sentences, today)
    if question is QuestionType.STOCK:
        return _stock(sentences, item)
    return _aisle(sentences, item)


def _aisle(sentences: Sequence[str], item: str | None) -> Answer:
    """The first place said; where one sentence gives two things' places, the one said with the item
    ("the paint is in aisle 3 and the hammers are in aisle 12" is aisle 12 for the hammers)."""
    for text in sentences:
        if not (found := w.places(text)):
            continue
        if item and len(found) > 1:
            def named(f: w.PlaceFound) -> int:
                return w.naming_the_item(text, f, item)
            best = max(found, key=named)
            return Aisle((best if named(best) > named(found[0]) else found[0]).location)
        return Aisle(found[0].location)
    return TextOnly()
