"""When a user means: a day and a clock time, read in the target's own zone. Pure.

Used for a booking's `--time` ("Friday 7pm", "tomorrow 19:30", "December 4 at 8pm",
"2026-12-04 19:00") and for `--at` (the same, or ISO 8601 with an offset). A weekday
means the next one still ahead; a month and day without a year means the next one.
A clock time that could be morning or evening ("at 7") is refused rather than guessed.
A refusal names everything missing at once (a day, a time of day, am or pm), a clock
time that cannot be ("25pm", "7:75") as such, and a word one typo away from a day's
name ("Fryday") with the name it resembles, so one correction is enough.

Words that name a day already gone are read as that day, never as a later one, so the
caller can refuse a past time as past: a year given with the date ("January 1 1999 7pm",
"1 Jan, 2020"), "yesterday", "the day before yesterday", "last night", "last Friday",
"3 days ago", "a week ago".
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import UTC, date, datetime, time, timedelta
from difflib import get_close_matches
from zoneinfo import ZoneInfo

from calld.domain.times import _WEEKDAYS, _clock, _day, clock_label, day_label

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
# An hour said right after a day with nothing to make it a clock: "Friday 7", "tomorrow 8" (not "December 4": a date)
_BARE_HOUR = re.compile(r"\b(?:mon|tue|wed|thu|fri|sat|sun)[a-z]*\.?\s+(1[0-2]|[1-9])(?![\d:./]|\s*(?:st|nd|rd|th)\b)"
                        r"|\b(?:today|tonight|tomorrow)\s+(1[0-2]|[1-9])(?![\d:./]|\s*(?:st|nd|rd|th)\b)", re.IGNORECASE)
_NEXT = re.compile(r"\bnext\s+(?:mon|tue|wed|thu|fri|sat|sun)", re.IGNORECASE)
_EXAMPLE = 'e.g. "Friday 7pm", "tomorrow 19:30" or "2026-12-04 19:00"'
_CLOCK_MERIDIEM = re.compile(r"\b(\d{1,2})(?:[:.](\d{2}))?\s*(?:a\.?\s?m\.?|p\.?\s?m\.?)(?![a-z])", re.IGNORECASE)
_CLOCK_COLON = re.compile(r"\b(\d{1,2}):(\d{2})\b")
_DAY_NAMES = (*_WEEKDAYS, "today", "tonight", "tomorrow", "january", "february", "march", "april", "june", "july",
              "august", "september", "october", "november", "december")


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


def _impossible_clock(text: str) -> str | None:
    """A clock time as written in `text` that no clock shows ("25pm", "13pm", "7:75pm", "24:30"); None without one."""
    for m in _CLOCK_MERIDIEM.finditer(text):
        if not (1 <= int(m.group(1)) <= 12 and int(m.group(2) or 0) < 60):
            return m.group(0).strip()
    for m in _CLOCK_COLON.finditer(text):
        if int(m.group(1)) > 23 or int(m.group(2)) > 59:
            return m.group(0)
    return None


def _near_day_names(text: str) -> str:
    """' ("Fryday": Friday?)' for each word one typo away from a day or month name; "" for none."""
    hints = []
    for word in re.findall(r"[a-z]{4,}", text, re.IGNORECASE):
        if word.lower() not in _DAY_NAMES and (close := get_close_matches(word.lower(), _DAY_NAMES, n=1, cutoff=0.75)):
            hints.append(f"{word!r}: {close[0].capitalize()}?")
    return f" ({'; '.join(hints)})" if hints else ""


def _refuse_unreadable(text: str, readings: tuple[int, ...], has_day: bool) -> None:
    """Raise one WhenError naming everything `text` lacks (day, time of day, am or pm); return if nothing."""
    if (impossible := _impossible_clock(text)) is not None and not readings:
        raise WhenError(f"{impossible!r} in {text!r} is not a time of day; say one, {_EXAMPLE}")
    no_day = "" if has_day else f"names no day{_near_day_names(text)}"
    if not readings and (bare := _BARE_HOUR.search(text)) is not None:
        hour = bare.group(1) or bare.group(2)  # "Friday 7": an hour with no "at", am or pm is still meant as one
        raise WhenError(f"{text!r}{' ' + no_day + ', and' if no_day else ''}: is {hour} a time? say {hour}am or {hour}pm, {_EXAMPLE}")
    if not readings:
        raise WhenError(f"{text!r} {no_day + ' and ' if no_day else 'names '}no time of day; say "
                        f"{'both' if no_day else 'one'}, {_EXAMPLE}")
    if len(readings) > 1:
        raise WhenError(f"{text!r} {no_day + ', and its time ' if no_day else ''}could be morning or evening; say "
                        f"{'which day, and ' if no_day else ''}am or pm, {_EXAMPLE}")
    if no_day:
        raise WhenError(f"{text!r} {no_day}; say which, {_EXAMPLE}")


def resolve_local(text: str, now_local: datetime) -> datetime:
    """The naive local date and time `text` names, seen from `now_local`; WhenError says what is missing."""
    if _ISO_LOCAL.fullmatch(text.strip()):  # ISO 8601 without an offset: a 24-hour clock, nothing to guess
        try:
            return datetime.fromisoformat(text.strip().upper())
        except ValueError:
            raise WhenError(f"{text.strip()!r} is not a date and time on the calendar") from None
    readings = _clock(text)
    if len(readings) == 2 and (m := _CLOCK_COLON.search(text)) and m.group(1).startswith("0") and not _CLOCK_MERIDIEM.search(text):
        readings = readings[:1]  # "03:00", "07:30": a leading zero is the 24-hour clock's
    today = now_local.date()
    named = _named_date(text, today)
    gone = _day_gone(text, today) if named is None else None
    day = _day(text)
    _refuse_unreadable(text, readings, has_day=named is not None or gone is not None or day is not None)
    clock = time(readings[0] // 60, readings[0] % 60)
    if named is not None:
        return datetime.combine(named, clock)
    if gone is not None:
        return datetime.combine(gone, clock)
    assert day is not None  # _refuse_unreadable refused a text with no day
    if day >= 100:  # today / tonight / tomorrow
        return datetime.combine(today + timedelta(days=day - 100), clock)
    ahead = (day - today.weekday()) % 7
    if ahead == 0 and _NEXT.search(text):
        ahead = 7  # "next Friday" said on a Friday: a week on, never today
    when = datetime.combine(today + timedelta(days=ahead), clock)
    if when <= now_local.replace(tzinfo=None):
        # "Friday 7pm" said on a Friday at 22:12: today's is gone, and next week's may not be what was
        # meant (a slip of the day, or of am/pm). Asked about, never moved a week silently.
        later = when + timedelta(days=7)
        raise WhenError(f"{text!r} names today, {day_label(when)}, and {clock_label(clock)} has passed there "
                        f"(it is {now_local:%H:%M}); for {day_label(later)} say 'next {weekday_name(day)} "
                        f"{clock_label(clock)}' or give the date, e.g. '{later:%B} {later.day} {clock_label(clock)}'")
    return when


SMALL_HOURS_END = 6  # a booking before 6 am is asked about: "3am" is far more often a slip for 3pm


def small_hours(text: str, local: datetime) -> str | None:
    """The question to ask when `text` resolved to a time between midnight and 6 am (`local`), or None:
    none when it is later, or when a date and a 24-hour time were written ("2026-12-07 03:00"), the
    way to insist."""
    if local.hour >= SMALL_HOURS_END:
        return None
    if _ISO_LOCAL.fullmatch(text.strip()):
        return None  # "2026-12-07T03:00": a date and a 24-hour time
    written_24h = _CLOCK_COLON.search(text) is not None and _CLOCK_MERIDIEM.search(text) is None
    dated = _ISO_DATE.search(text) is not None or _MONTH_DAY.search(text) is not None or _DAY_MONTH.search(text) is not None
    if written_24h and dated:
        return None
    meant = clock_label((local + timedelta(hours=12)).time())
    return (f"{text!r} is {clock_label(local.time())} on {day_label(local)}, in the small hours: did you mean {meant}? "
            f"(to insist, write a date and a 24-hour time, e.g. '{local:%Y-%m-%d %H:%M}')")


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
