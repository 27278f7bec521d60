"""How clock times and days are said, read from tokens (calld.domain.tokens). Shared by the evidence check (its rules 4
and 5 say what counts), the transcript's assessment and the web view, which finds the moment a time was said. Pure: no
clock, no IO. Word lists: named constants of at most 15 entries.

Clock times (clocks): "7:30", "7.30", "7 30", "0930" (in no phone number), a number before am/pm, o'clock, "noon" or
"ish", or after a word of CLOCK_CUES, "noon", "midnight", "half past 7", "half five", "at 9 and a half", "ten to nine"
(after "at", or as a booking's one time), "19 30" or "20 hours" (13 to 23: 24-hour); am/pm, where said (DAYPARTS: "in
the morning", "morning 10 until night 10"; "07:00": 24-hour), agrees. A dash between numbers ("9-6"), a word of RUNS
("9 while 5") and "and" after "between" make a run; number words said apart (",") are two. A number that begins an
address (names, then a word of STREETS), measures (before a word of UNITS: "20 quid"; not "at 10 hours"), is a month's
day ("13 May 12 noon": the 13) or counts days ("open 7 days", "4 days a week") is no time; after LOOSE_CUES it is a
count too. One end of a range said alone (alone) may be its quote's one number, 1 to 12 ("eight on the weekends").
Days (days_in): by name, by a run ("Mon-Fri", "Monday to Friday", a word inside it: "Monday straight through
Saturday") or by DAY_GROUPS ("weekends"); a day after a word of SET_APART is not among them ("except Sunday"), but for
one week's day ("but this Monday we're shut", "first Monday of the month"): a date, not the weekday set apart."""

from __future__ import annotations

import contextlib
import itertools
import re
from collections.abc import Iterable, Sequence
from datetime import date

from attrs import frozen

from calld.domain.tokens import WEEKDAYS, at, tokens, weekday

CLOCK_CUES = frozenset({"at", "until", "till", "til", "from", "by", "around", "about", "before", "after", "open",
                        "opens", "close", "closes", "between"})
DAYPARTS = {"morning": "am", "afternoon": "pm", "evening": "pm", "night": "pm", "tonight": "pm"}  # "7 in the morning"
NOON = {"noon": "pm", "midnight": "am"}
RELATIVE = {"today": 0, "tonight": 0, "tomorrow": 1, "overmorrow": 2}  # days after the call's own (BookJob.today)
LOOSE_CUES = frozenset({"around", "about"})  # "about 3" is as much three people, or three left, as 3 o'clock
MONTHS = ("january", "february", "march", "april", "may", "june", "july", "august", "september", "october", "november", "december")
DAY_GROUPS = {"weekday": WEEKDAYS[:5], "weeknight": WEEKDAYS[:5], "weekend": WEEKDAYS[5:], "every night": WEEKDAYS,
              "daily": WEEKDAYS, "everyday": WEEKDAYS, "every day": WEEKDAYS, "7 days": WEEKDAYS, "24/7": WEEKDAYS,
              "all week": WEEKDAYS, "each day": WEEKDAYS, "the week": WEEKDAYS[:5], "24 7": WEEKDAYS,
              "all days": WEEKDAYS, "365 days": WEEKDAYS}
RUNS = frozenset({"to", "through", "thru", "threw", "till", "til", "until", "upto", "tae", "while"})  # "9 while 5": Yorkshire's until
SET_APART = frozenset({"except", "but", "bar", "besides", "excluding", "apart", "other", "not", "closed"})
UNITS = ("minute", "hour", "dollar", "buck", "cent", "percent", "pound", "quid", "euro", "inch", "foot", "feet", "litre",
         "liter", "pack")  # a number before one ("for 15 minutes", "6 dollars") measures, it counts nothing
STREETS = ("street", "st", "avenue", "ave", "road", "rd", "boulevard", "blvd", "parkway", "drive", "lane", "way",
           "court", "circle", "highway")  # a number before one (names between) is an address: no time, no count
WEEKDAYS_SET, MONTHS_SET = frozenset(WEEKDAYS), frozenset(MONTHS)
NAME_ENDS = frozenset({"am", "pm", "oclock", "s", "is", "on", "in", "for", "and", "today", "tonight", "tomorrow", "people",
                       "guests", "ish"})  # with the cues, runs and days: words that end an address's names, a time's or a party's
NOT_A_NAME = CLOCK_CUES | RUNS | WEEKDAYS_SET | NAME_ENDS  # "at 5 on Main Street" is a time


def has_phrase(words: Sequence[str], phrases: Iterable[str]) -> bool:
    joined = f" {' '.join(words)} "
    return any(f" {p} " in joined for p in phrases)


def addresses(words: Sequence[str]) -> set[int]:
    """The indices of numbers that begin an address: only names, then a word of STREETS ("5 Padre Parkway")."""
    def names_then_street(i: int) -> bool:
        names = list(itertools.takewhile(lambda w: w.isalpha() and w not in NOT_A_NAME and w not in STREETS, words[i + 1:i + 4]))
        return at(words, i + 1 + len(names)) in STREETS and len(names) < 3
    return {i for i, w in enumerate(words) if w.isdigit() and names_then_street(i)}


@frozen
class Clock:
    hour: int | None  # None: a bare "half past", its hour said elsewhere
    minute: int
    meridiem: str | None
    at: frozenset[int]  # the token indices it reads
    loose: bool = False  # a bare number read as a time only by LOOSE_CUES ("how about 3"): a count too


def clocks(words: Sequence[str], *, one: bool = False) -> list[Clock]:
    """The clock times the words say. `one`: a booking's single time, where "ten to eight" is 7:50 with no "at" (in
    hours, more often 10 to 8). A number before UNITS is none ("20 quid"), but "at 10 hours"."""
    out, n, address, i = list[Clock](), len(words), addresses(words), 0
    while i < n:
        w, nxt, after = words[i], words[i + 1] if i + 1 < n else "", words[i + 2] if i + 2 < n else ""
        cued = i > 0 and words[i - 1] in CLOCK_CUES
        hour: int | None = None
        minute, used, loose = 0, [i], False
        if i in address or (i > 0 and words[i - 1] in MONTHS and i in near(words, i - 1)) or nxt in ("day", "days") or (
                " ".join(words[i:i + 2]) in DAY_GROUPS) or (  # "5 Elm St", "march 4 12 pm", "4 days a week", "24 7"
                nxt.rstrip("s") in UNITS and (nxt.rstrip("s") != "hour" or w.isdigit() and int(w) <= 12 and not cued)):  # "20 quid"
            i += 1
            continue
        # "half past 7", "quarter to 8", "at ten past five", "at twenty to nine"; "half five" is 5:30
        by = 30 if w == "half" else 15 if w == "quarter" else int(w) if w.isdigit() and int(w) < 30 and (
            nxt == "past" or one or i > 0 and words[i - 1] in ("at", "by", "around", "about", "until", "till")) else None
        if by is not None and (nxt in ("past", "after") or nxt in ("to", "tae", "till", "til", "of") and w in ("half", "quarter", "5", "10", "20", "25")
                                                        and (nxt, w) != ("of", "half")):  # "quarter of 8": 7:45
            minute = by if nxt in ("past", "after") or w == "half" else 60 - by
            used.append(i + 1)
            if after.isdigit() and 0 < int(after) <= 12:
                hour = int(after) - (1 if minute > 30 else 0) or 12
                used.append(i + 2)
            elif minute > 30:
                i += 2
                continue
        elif w == "half" and nxt.isdigit() and 0 < int(nxt) <= 12:
            hour, minute = int(nxt), 30
            used.append(i + 1)
        elif ":" in w and w.replace(":", "").isdigit():
            hour, minute = (int(x) for x in w.split(":"))
        elif w.isdigit() and len(w) in (3, 4) and int(w[:-2]) < 24 and int(w[-2:]) < 60 and not nxt.isdigit() and (
                one or nxt in ("am", "pm", "hours", "hrs") or nxt in RUNS and after.isdigit()  # "0900 to 1730", "730 pm"
                or i > 1 and words[i - 1] in RUNS and bool(out) and max(out[-1].at) == i - 2):
            hour, minute = int(w[:-2]), int(w[-2:])
        elif w.isdigit() and 0 < int(w) <= 12 and (cued or one) and nxt == "and" and "half" in words[i + 2:i + 4]:
            hour, minute = int(w), 30  # "at nine and a half"
            used += list(range(i + 1, words.index("half", i + 2) + 1))
        elif w.isdigit() and int(w) <= 24 and nxt.isdigit() and len(nxt) == 2 and int(nxt) < 60 and (
                12 < int(w) < 24 or cued or after.rstrip("s") not in UNITS):
            hour, minute = int(w), int(nxt)  # "7 30", "19 30", not "eight 10 inch"
            used.append(i + 1)
        elif w.isdigit() and int(w) <= 24 and (
                nxt in ("am", "pm", "oclock", "ish", "noon", "midnight") or cued or 12 < int(w) < 24 and nxt in ("hours", "hrs") or n == 1 or daypart(words, i + 1)
                or DAYPARTS.get(at(words, i - 1).rstrip("s")) and (nxt in RUNS or at(words, i - 2) in RUNS | CLOCK_CUES)  # "morning 10 until night 10"
                or (nxt in RUNS and (after.isdigit() or ":" in after or after in ("noon", "midnight", "half", "quarter")))
                or (i > 1 and bool(out) and max(out[-1].at) == i - 2 and (words[i - 1] in RUNS or words[i - 1] == "and"
                    and min(out[-1].at) > 0 and words[min(out[-1].at) - 1] == "between"))):  # "9 to 5:30", "9 till half 5", "between 9 and 6"
            hour, minute = int(w), int(after) if nxt in ("hours", "hrs") and after.isdigit() and int(after) < 60 else 0
            used += [i + 1, i + 2] if minute else []  # "20 hours 30"
            loose = n == 1 or nxt not in ("am", "pm", "oclock") and i > 0 and words[i - 1] in LOOSE_CUES
            used += [i + 1] if nxt in ("ish", "noon", "midnight") else []  # "seven-ish", "12 noon"
        elif w in ("noon", "midnight"):
            hour = 12 if w == "noon" else 0
        else:
            i += 1
            continue
        end = max(used) + 1
        meridiem = words[end] if end < n and words[end] in ("am", "pm") else None
        used += [end] if meridiem or (end < n and words[end] == "oclock") else []
        meridiem = meridiem or daypart(words, end) or DAYPARTS.get(at(words, i - 1).rstrip("s")) or ("am" if w[0] == "0" else None)
        meridiem = NOON.get(w) or NOON.get(words[max(used)]) or meridiem
        # "a table for four tonight at 8": a number read a time only by "tonight" after it is a count as much
        out.append(Clock(hour, minute, meridiem, frozenset(used), loose and meridiem is None or nxt == "tonight" and not cued))
        i = max(used) + 1
    return out


def alone(words: Sequence[str]) -> list[Clock]:
    """The times a quote of one end of a range says: its clock times, else its one number of 1 to 12 ("eight on weekends")."""
    numbers = [i for i, w in enumerate(words) if w.isdigit()]
    return [c for c in clocks(words) if c.hour is not None] or [
        Clock(int(words[i]), 0, None, frozenset({i}), True) for i in numbers if len(numbers) == 1 and 0 < int(words[i]) <= 12]


def daypart(words: Sequence[str], end: int) -> str | None:
    """The half of the day a part of it says after a time: "7 in the morning", "10 at night", "6 tonight", "8 morning"."""
    m = re.match(r"(?:in the |at |this |every )?(\w+)", " ".join(words[end:end + 3]))
    return DAYPARTS.get(m[1]) if m else None


def hhmm(value: str) -> tuple[int, int] | None:
    """The clock time of a typed value ("19:30", "Friday at 7:30 pm")."""
    c = next((c for c in clocks(typed(value)) if c.hour is not None), None)
    return None if c is None else (((c.hour or 0) % 12 + (12 if c.meridiem == "pm" else 0) if c.meridiem else c.hour or 0) % 24, c.minute)


def typed(value: str) -> list[str]:
    """A typed value's words, an ISO 8601 date and time and a month's short name read as said ("2026-12-11T19:00"
    as "december 11 19:00")."""
    def said_as(m: re.Match[str]) -> str:  # no such date ("2026-02-30"): its words as typed, which nothing says
        with contextlib.suppress(ValueError):
            day = date(*map(int, m.groups()[:3]))
            return f"{WEEKDAYS[day.weekday()]} {MONTHS[day.month - 1]} {day.day} {day.year} {m[4] or ''}"
        return m[0]
    said = tokens(re.sub(r"\b(\d{4})-(\d\d)-(\d\d)(?:[T ](\d\d:\d\d)(?::\d\d(?:\.\d+)?)?(?:Z|[+-]\d\d:?\d\d)?)?", said_as, value))
    return [next((m for m in MONTHS if len(t.word) >= 3 and m.startswith(t.word)), t.word) for t in said]  # "Dec"


def reads_as(c: Clock, hour: int, minute: int, context: Sequence[Clock] = ()) -> bool:
    if c.minute != minute or c.hour is None:  # a bare "half past" takes its hour from the context's times
        return c.minute == minute and any(k.hour is not None and reads_as(
            Clock(k.hour, minute, c.meridiem or k.meridiem, c.at), hour, minute) for k in context)
    if c.meridiem:
        return hour == c.hour % 12 + (12 if c.meridiem == "pm" else 0)
    return hour == c.hour % 24 if c.hour > 12 or c.hour == 0 else hour % 12 == c.hour % 12


def date_words(value: str) -> list[str]:
    """The day and date words a typed value needs said ("Friday at 7", "tonight"; "March 5th" as "march 5")."""
    words = typed(value)
    out = ["today" if w == "tonight" else w for w in words if w in RELATIVE]
    out += [d for w in words if (d := weekday(w)) is not None]
    for i, w in enumerate(words):
        day = next((words[j] for j in near(words, i) if words[j].isdigit()), None) if w in MONTHS or w == "the" else None
        out += [f"{w} {day}" if day else w] if w in MONTHS else [f"the {day}"] if day else []
        out += [f"the {w}"] if w.isdigit() and at(words, i + 1) == "th" and at(words, i - 1) not in (*MONTHS, "the") else []
    return out


def days_in(words: Sequence[str], rest: Sequence[str] = ()) -> set[str]:
    """The weekdays the words name (by name, run or group), less those set apart there or in `rest`."""
    named, apart, setting_apart = set[str](), set[str](), False
    for i, w in enumerate(words):
        setting_apart = setting_apart or w in SET_APART
        if (group := DAY_GROUPS.get(" ".join(words[i:i + 2])) or DAY_GROUPS.get(w.removesuffix("s"))) and not setting_apart:
            named.update(group)
        if (d := weekday(w)) is None:
            continue
        run, j = [d], i + 1 + (at(words, i + 2) in RUNS and at(words, i + 1).isalpha() and weekday(words[i + 1]) is None
                               and words[i + 1] not in ("and", "or", *SET_APART))  # "monday straight through saturday", "through to"
        if at(words, j) in RUNS and (e := weekday(at(words, j + 1))) is not None:
            a, b = WEEKDAYS.index(d), WEEKDAYS.index(e)
            run = [WEEKDAYS[k % 7] for k in range(a, b + 1 if b >= a else b + 8)]
        one_week = at(words, i - 1) in ("this", "next", "first", "second", "third", "fourth", "last")  # "but this monday": a date
        (apart if setting_apart and not one_week else named).update(run)
    return named - apart - (WEEKDAYS_SET - days_in(["every", "day", "except", *rest]) if rest else set())


def near(words: Sequence[str], i: int) -> list[int]:
    """Where a month's day is said: "march 5" ("for 3 march 1"), "5 march", "5th of march" ("13 march 12 noon"), "the 12th"."""
    nxt, then = at(words, i + 1), at(words, i + 2)
    j = i - 1 - (at(words, i - 1) == "of")
    j -= at(words, j) == "th" and j > 0
    before = [j] if j >= 0 and words[j].isdigit() and words[i] != "the" else []
    timed = before and (then in ("noon", "midnight", "am", "pm", "oclock") or len(then) == 2 and then.isdigit())
    if words[i] == "the" or (nxt.isdigit() and int(nxt) <= 31 and not timed):
        return [i + 1] if nxt.isdigit() and (words[i] != "the" or then == "th") else []
    return before
