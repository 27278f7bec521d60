"""When a user means: a day and a clock time, read in the target's own zone. Pure.

Used for a booking's `--time` ("Friday 7pm", "tomorrow 19:30", "December 4 at 8pm",
"2026-12-04 19:00") and for `--at` (the same, or ISO 8601 with an offset). A weekday
means the next one still ahead; a month and day without a year means the next one.
A clock time that could be morning or evening ("at 7") is refused rather than guessed.

Words that name a day already gone are read as that day, never as a later one, so the
caller can refuse a past time as past: a year given with the date ("January 1 1999 7pm",
"1 Jan, 2020"), "yesterday", "the day before yesterday", "last night", "last Friday",
"3 days ago", "a week ago".
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import UTC, date, datetime, time, timedelta
from zoneinfo import ZoneInfo

from calld.domain.times import _WEEKDAYS, _clock, _day

_ISO_DATE = re.compile(r"\b(\d{4})-(\d{2})-(\d{2})\b")
_ISO_LOCAL = re.compile(r"\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(?::\d{2})?", re.IGNORECASE)
_MONTHS = ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec")
_MONTH = r"(jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*\.?"
_YEAR = r"(?:,?\s+(\d{4})\b)?"  # "January 1 1999", "Jan 1, 2020", "1 January 2020"
_MONTH_DAY = re.compile(rf"\b{_MONTH}\s+(\d{{1,2}})(?:st|nd|rd|th)?\b{_YEAR}", re.IGNORECASE)
_DAY_MONTH = re.compile(rf"\b(\d{{1,2}})(?:st|nd|rd|th)?\s+(?:of\s+)?{_MONTH}{_YEAR}", re.IGNORECASE)
_COUNTS = {"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7}
_DAYS_BACK = re.compile(r"\b(?:(the\s+)?day\s+before\s+yesterday|yesterday|last\s+night)\b", re.IGNORECASE)
_AGO = re.compile(rf"\b(\d{{1,3}}|{'|'.join(_COUNTS)})\s+(day|week)s?\s+ago\b", re.IGNORECASE)
_LAST_WEEKDAY = re.compile(r"\blast\s+(mon|tue|wed|thu|fri|sat|sun)[a-z]*\b", re.IGNORECASE)
_EXAMPLE = 'e.g. "Friday 7pm", "tomorrow 19:30" or "2026-12-04 19:00"'


class WhenError(ValueError):
    pass


def _named_date(text: str, today: date) -> date | None:
    if m := _ISO_DATE.search(text):
        try:
            return date(int(m.group(1)), int(m.group(2)), int(m.group(3)))
        except ValueError:
            raise WhenError(f"{m.group(0)} is not a date on the calendar") from None
    m = _MONTH_DAY.search(text)
    month, day_s, year_s = (m.group(1), m.group(2), m.group(3)) if m else (None, None, None)
    if m is None and (m := _DAY_MONTH.search(text)):
        month, day_s, year_s = m.group(2), m.group(1), m.group(3)
    if month is None or day_s is None:
        return None
    number = _MONTHS.index(month.lower()[:3]) + 1
    years = (int(year_s),) if year_s else (today.year, today.year + 1)  # a year given is that year, past or not
    for year in years:
        try:
            found = date(year, number, int(day_s))
        except ValueError:
            raise WhenError(f"{m.group(0)!r} is not a date on the calendar") from None
        if found >= today or year_s:
            return found
    return None


def _day_gone(text: str, today: date) -> date | None:
    """The day `text` names as already gone ("yesterday", "last Friday", "3 days ago"); None when it names none."""
    if m := _DAYS_BACK.search(text):
        return today - timedelta(days=2 if m.group(0).lower().endswith("before yesterday") else 1)
    if m := _AGO.search(text):
        count = _COUNTS.get(m.group(1).lower()) or int(m.group(1))
        return today - timedelta(days=count * (7 if m.group(2).lower() == "week" else 1))
    if m := _LAST_WEEKDAY.search(text):
        weekday = next(i for i, d in enumerate(_WEEKDAYS) if d.startswith(m.group(1).lower()))
        return today - timedelta(days=(today.weekday() - weekday) % 7 or 7)
    return None


def resolve_local(text: str, now_local: datetime) -> datetime:
    """The naive local date and time `text` names, seen from `now_local`; WhenError says what is missing."""
    if _ISO_LOCAL.fullmatch(text.strip()):  # ISO 8601 without an offset: a 24-hour clock, nothing to guess
        try:
            return datetime.fromisoformat(text.strip().upper())
        except ValueError:
            raise WhenError(f"{text.strip()!r} is not a date and time on the calendar") from None
    readings = _clock(text)
    if not readings:
        raise WhenError(f"{text!r} names no time of day; say one, {_EXAMPLE}")
    if len(readings) > 1:
        raise WhenError(f"{text!r} could be morning or evening; say am or pm, {_EXAMPLE}")
    clock = time(readings[0] // 60, readings[0] % 60)
    today = now_local.date()
    if (named := _named_date(text, today)) is not None:
        return datetime.combine(named, clock)
    if (gone := _day_gone(text, today)) is not None:
        return datetime.combine(gone, clock)
    day = _day(text)
    if day is None:
        raise WhenError(f"{text!r} names no day; say which, {_EXAMPLE}")
    if day >= 100:  # today / tonight / tomorrow
        return datetime.combine(today + timedelta(days=day - 100), clock)
    ahead = (day - today.weekday()) % 7
    when = datetime.combine(today + timedelta(days=ahead), clock)
    if when <= now_local.replace(tzinfo=None):
        when += timedelta(days=7)  # "Friday" said on a Friday evening means next week's
    return when


def resolve(text: str, zones: Sequence[str], now: datetime) -> tuple[datetime, ...]:
    """The instants (UTC) `text` means in each of the target's zones (UTC when it has none).

    ISO 8601 with an offset names one instant wherever the target is.
    """
    try:
        exact = datetime.fromisoformat(text.strip())
    except ValueError:
        exact = None
    if exact is not None and exact.tzinfo is not None:
        return (exact.astimezone(UTC),)
    tzs = [ZoneInfo(z) for z in zones] or [ZoneInfo("UTC")]
    out = []
    for tz in tzs:
        local = resolve_local(text, now.astimezone(tz))
        out.append(local.replace(tzinfo=tz).astimezone(UTC))
    return tuple(out)


def weekday_name(index: int) -> str:
    return _WEEKDAYS[index].capitalize()
