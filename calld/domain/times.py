"""How far apart two spoken booking times are, when the words say so. Pure.

A booking's window is checked by the app, not left to the model: when both the
time the user asked for and the time the business confirmed name a clock time
("Friday 7pm", "7:30 on Friday", "half past eight" is not read), the gap comes
from the words themselves. A clock time without am/pm takes whichever reading is
nearest the other time; a weekday on both sides counts whole days between them.
When a side names no clock time, the answer is None and the caller falls back to
the model's own count.
"""

from __future__ import annotations

import re
from datetime import date, datetime, time

_DAY = 24 * 60
_WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
_WEEKDAY = re.compile(r"\b(mon|tue|tues|wed|thu|thur|thurs|fri|sat|sun)(?:day|nesday|rsday|urday|sday)?\b", re.I)
_RELATIVE = re.compile(r"\b(today|tonight|this evening|tomorrow)\b", re.I)
_MERIDIEM = r"(a\.?\s?m\.?|p\.?\s?m\.?)"
_CLOCK_WITH_MERIDIEM = re.compile(rf"\b(\d{{1,2}})(?:[:.](\d{{2}}))?\s*{_MERIDIEM}(?![a-z])", re.I)
_CLOCK_24 = re.compile(r"\b(\d{1,2}):(\d{2})\b")
_CLOCK_AT = re.compile(r"\b(?:at|around|about)\s+(\d{1,2})(?:\s*o'?clock)?\b(?!\s*(?:people|person|guests|of us))", re.I)
_CLOCK_OCLOCK = re.compile(r"\b(\d{1,2})\s*o'?clock\b", re.I)
_NOON = re.compile(r"\b(noon|midday)\b", re.I)
_MIDNIGHT = re.compile(r"\bmidnight\b", re.I)


def _clock(text: str) -> tuple[int, ...]:
    """Minutes after midnight that the first clock time in `text` may mean (one or two readings)."""
    if m := _CLOCK_WITH_MERIDIEM.search(text):
        hour, minute = int(m.group(1)), int(m.group(2) or 0)
        if not (1 <= hour <= 12 and minute < 60):
            return ()
        pm = m.group(3).lower().startswith("p")
        return ((hour % 12 + (12 if pm else 0)) * 60 + minute,)
    if _NOON.search(text):
        return (12 * 60,)
    if _MIDNIGHT.search(text):
        return (0,)
    m = _CLOCK_24.search(text) or _CLOCK_OCLOCK.search(text) or _CLOCK_AT.search(text)
    if m is None:
        return ()
    hour = int(m.group(1))
    minute = int(m.group(2)) if m.re is _CLOCK_24 else 0
    if hour > 23 or minute > 59:
        return ()
    if hour == 0 or hour > 12:
        return (hour * 60 + minute,)
    return ((hour % 12) * 60 + minute, (hour % 12 + 12) * 60 + minute)


def _day(text: str) -> int | None:
    """A day index: 0-6 for a weekday, or 100 + offset for today/tomorrow; None when unnamed."""
    if m := _WEEKDAY.search(text):
        prefix = m.group(1).lower()[:3]
        return next(i for i, d in enumerate(_WEEKDAYS) if d.startswith(prefix))
    if m := _RELATIVE.search(text):
        return 101 if m.group(1).lower() == "tomorrow" else 100
    return None


def _days_between(a: int | None, b: int | None) -> int | None:
    if a is None or b is None or a == b:
        return 0
    if a >= 100 and b >= 100:
        return b - a
    if a < 100 and b < 100:
        diff = (b - a) % 7
        return diff - 7 if diff > 3 else diff
    return None  # "tomorrow" against "Saturday": the words alone cannot say


def minutes_between(requested: str, offered: str) -> int | None:
    """Signed minutes from the requested time to the offered one, or None when the words can't say."""
    asked, got = _clock(requested), _clock(offered)
    if not asked or not got:
        return None
    days = _days_between(_day(requested), _day(offered))
    if days is None:
        return None
    return min((days * _DAY + g - a for a in asked for g in got), key=abs)


def clock_phrase(text: str) -> str | None:
    """The first clock time in `text`, as written there ("7:30pm", "noon"); None without one."""
    for pattern in (_CLOCK_WITH_MERIDIEM, _NOON, _MIDNIGHT, _CLOCK_24, _CLOCK_OCLOCK):
        if m := pattern.search(text):
            return m.group(0).strip()
    return None


def day_phrase(text: str) -> str | None:
    """The day `text` names ("Friday", "tomorrow"), as written there; None without one."""
    m = _WEEKDAY.search(text) or _RELATIVE.search(text)
    return m.group(0) if m else None


def clock_label(clock: time) -> str:
    """7pm, 7:30pm, noon, midnight: a clock time as people say it."""
    if clock.minute == 0 and clock.hour in (0, 12):
        return "midnight" if clock.hour == 0 else "noon"
    hour = clock.hour % 12 or 12
    return f"{hour}{f':{clock.minute:02d}' if clock.minute else ''}{'am' if clock.hour < 12 else 'pm'}"


def day_label(when: date | datetime) -> str:
    """Fri 11 Dec: a day as people write it."""
    return f"{when:%a} {when.day} {when:%b}"


def when_label(when: datetime) -> str:
    """Fri 11 Dec 7pm: a booking's resolved day and time, as history and show print it."""
    return f"{day_label(when)} {clock_label(when.time())}"
