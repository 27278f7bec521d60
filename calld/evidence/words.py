"""Reading facts out of spoken words: clock times, days, stock, places, refusals. Pure.

Everything here is a deterministic reading of text as GPT-Live transcribed it: lower-cased,
with number words read as numbers ("nine thirty" is 9:30), so "we're open eight to six"
and "8 AM to 6 PM" state the same hours. A clock time without am/pm keeps both readings
until something settles it; support compares hours on the 12-hour dial when either side
left am/pm out, so "until 9" supports "9 PM" but "9 AM" never supports "9 PM".
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from functools import lru_cache

from attrs import frozen

WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")

_UNITS = {
    "zero": 0, "no": 0, "one": 1, "a": 1, "an": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6,
    "seven": 7, "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "thirteen": 13,
    "fourteen": 14, "fifteen": 15, "sixteen": 16, "seventeen": 17, "eighteen": 18, "nineteen": 19,
    "twenty": 20, "thirty": 30, "forty": 40, "fifty": 50, "a couple": 2, "couple": 2, "a dozen": 12, "dozen": 12,
}
_UNITS |= {"hundred": 100, "a hundred": 100, "one hundred": 100, "thousand": 1000, "a thousand": 1000,
           "half a dozen": 6, "a half dozen": 6, "half dozen": 6, "a single": 1}
_UNITS |= {f"{u} hundred": n * 100 for u, n in _UNITS.items() if 2 <= n <= 9 and " " not in u}  # "two hundred bags"
_TENS = {"twenty": 20, "thirty": 30, "forty": 40, "fifty": 50, "sixty": 60, "seventy": 70, "eighty": 80, "ninety": 90}
_UNITS |= _TENS | {f"{t}{sep}{u}": n + _UNITS[u] for t, n in _TENS.items() for u in
                   ("one", "two", "three", "four", "five", "six", "seven", "eight", "nine") for sep in (" ", "-")}
_UNIT_WORDS = "|".join(sorted(_UNITS, key=len, reverse=True))  # longest first, so "twenty one" beats "twenty"
_CLOCK_WORDS = {w: n for w, n in _UNITS.items() if 1 <= n <= 12 and w not in ("a", "an", "couple", "a couple", "dozen", "a dozen",
                                                                               "half a dozen", "a half dozen", "half dozen", "a single")}
_MINUTE_WORDS = {"fifteen": 15, "thirty": 30, "forty-five": 45, "forty five": 45, "oh five": 5, "ten": 10,
                 "twenty": 20, "forty": 40, "fifty": 50}

_HOUR = r"(\d{1,2}|" + "|".join(sorted(_CLOCK_WORDS, key=len, reverse=True)) + r")"
_MINUTE = r"(?:[:.](\d{2})|\s+(" + "|".join(sorted(_MINUTE_WORDS, key=len, reverse=True)) + r"))?"
_MERIDIEM = r"(?:\s*(a\.?\s?m\b\.?|p\.?\s?m\b\.?|in the morning|in the evening|at night|in the afternoon))?"
_CLOCK = re.compile(rf"\b{_HOUR}{_MINUTE}{_MERIDIEM}(?:\s*o'?clock)?", re.I)
_NOON = re.compile(r"\b(noon|midday|midnight)\b", re.I)
# A bare number is a clock time only where hours are being talked about.
_TIME_CONTEXT = re.compile(
    r"\b(open|opens|opening|close|closes|closing|closed|until|till|til|from|to|through|at|after|before|"
    r"by|around|between|and|am|pm|a\.m\.|p\.m\.|o'clock|-|(?:can|could) do|how about|what about|"
    r"(?:earliest|latest|first|last)(?: one)? (?:i|we) (?:have|got|can do) is)"
    r"(?:[\s,]*\b(?:uh+|um+|erm?|ah+|hmm+)\b)*[\s,]*(?:(?:about|around|roughly|approximately|like)\s+)?$",  # "at, uh, nine"
    re.I,
)

_RANGE_AHEAD = re.compile(rf"\s*(?:to|until|till|-|–)\s*{_HOUR}\b", re.I)  # "8 to 6": both ends are clocks
# "at 7 on weekdays, 8 on Saturdays": a bare number said for days goes on a list of times, so it is
# one only after a time and a comma or "and", or after a correction ("actually, 8 on Sundays"); never
# a party or a count ("for 2 on Friday", "we have 3 on Saturday").
_DAYS_AHEAD = re.compile(
    r"\s+(?:on\s+|every\s+)?(?:(?:mon|tue|wed|thu|fri|sat|sun)[a-z]*|weekdays?|weekends?|today|tonight|tomorrow)\b", re.I)
_EVENING_AHEAD = re.compile(r"\s*(?:o'?clock\s*)?(?:tonight|this evening)\b", re.I)
_CORRECTED_BEFORE = re.compile(r"\b(?:actually|i mean|sorry|no|wait|correction)\s*,?\s*$", re.I)
# The words that take back a number just said, and the fillers after them: "no, uh, ", "sorry, ",
# "i mean ". A bare number after them corrects a time ("nine, no, eight") or an aisle ("sorry, 16").
_CORRECTING = (r"\b(?:i mean|no|sorry|wait|actually|er|correction|make (?:it|that)|scratch that)\b[\s,.]*"
               r"(?:(?:uh|um|no|wait|sorry|actually|oh|er)\b[\s,.]*)*(?:it'?s\s+)?")
_RETRACTING = re.compile(r"\b(?:i mean|wait|actually|correction|make (?:it|that)|scratch that)\b", re.I)  # not a bare "no" or "sorry"
_CORRECTED_TO = re.compile(rf"{_CORRECTING}(?:make (?:it|that)\s+)?(?:at\s+)?$", re.I)
_LIST_BEFORE = re.compile(r"(?:,|;|\band\b)\s*$", re.I)
# A number said as the whole answer, after fillers at most, and before days or nothing ("nine.",
# "um, eight.", "ten thirty", "five today, six tomorrow", "nine or so").
_FILLERS_ONLY = re.compile(r"\W*(?:(?:uh|um|er|oh|so|well|like|it'?s|its|about|around|maybe)\W+)*", re.I)
_ALONE_END = re.compile(r"\s*(?:now\b)?\s*(?:(?:on\s+)?(?:mon|tue|wed|thu|fri|sat|sun)[a-z]*\b|today\b|tomorrow\b|tonight\b)?\s*[.!]*\s*$", re.I)
_ALONE_AFTER = re.compile(
    r"\s*(?:or so\b|ish\b|now\b)?\s*(?:(?:on\s+)?(?:mon|tue|wed|thu|fri|sat|sun)[a-z]*\b|today\b|tomorrow\b|tonight\b)?\s*(?:[.,!]|$)", re.I)
# "7 days a week", "24 hours", "2 people": a number with a unit is no clock time.
_UNIT_AHEAD = re.compile(r"\s*(?:days?|hours?|hrs|minutes?|mins|weeks?|months?|years?|people|persons|guests|items|"
                         r"units|pieces|left|of (?:them|those|these))\b", re.I)


@frozen(order=True)
class Clock:
    """A clock time as said: hour 0-23 when am/pm (or 24-hour form) settles it, else 1-12 with `pm` None."""

    hour: int
    minute: int
    pm: bool | None  # None: the words did not say

    def minutes(self, *, assume_pm: bool | None = None) -> int:
        pm = self.pm if self.pm is not None else assume_pm
        hour = self.hour % 12 + (12 if pm else 0) if self.hour <= 12 else self.hour
        return hour * 60 + self.minute

    def same_time(self, other: Clock) -> bool:
        """Could the two be the same time of day? am/pm must agree when both said it."""
        if self.minute != other.minute:
            return False
        if self.pm is not None and other.pm is not None:
            return self.minutes() == other.minutes()
        return self.hour % 12 == other.hour % 12

    def hhmm(self, *, assume_pm: bool | None = None) -> str:
        m = self.minutes(assume_pm=assume_pm)
        return f"{m // 60:02d}:{m % 60:02d}"


@frozen
class Found:
    """A fact and where it is in the text it was read from (character offsets)."""

    start: int
    end: int


@frozen
class ClockFound(Found):
    clock: Clock
    bare: bool = False  # a number said alone ("uh, three."): a time only where one was asked for


def _hour_value(token: str) -> int:
    return int(token) if token.isdigit() else _CLOCK_WORDS[token.lower()]


# Pure, and asked of the same sentences again and again (each judgement and the result read every
# business sentence): remembered, for as many sentences as the daemon's calls hold at once.
_REMEMBERED = 4096


# "half past nine", "a quarter to six", "ten minutes past five", "twenty past five", "ten after
# six", "half seven" (7:30). A bare "five to six" is a range, unless said as a moment: "at five to nine".
_MINUTES_SAID = r"(\d{1,2}|five|ten|twenty|twenty-five|twenty five)"
_PAST_TO = re.compile(
    rf"\b(?:(a\s+)?(quarter|half)|{_MINUTES_SAID}\s+minutes|{_MINUTES_SAID}(?=\s+(?:past|after))"
    rf"|(?<=\bat\s){_MINUTES_SAID}(?=\s+(?:to|till|of|before)\b))\s+(past|after|to|till|of|before)\s+{_HOUR}\b{_MERIDIEM}"
    rf"|\bhalf\s+{_HOUR}\b(?!\s*(?:hours?|minutes?|an?\b)){_MERIDIEM}", re.I)
_PAST_TO_MINUTES = {"quarter": 15, "half": 30, "five": 5, "ten": 10, "twenty": 20, "twenty-five": 25, "twenty five": 25}


def _past_to(m: re.Match[str]) -> Clock | None:
    """The time a "past"/"to" phrase says, or None when it says none ("half to six", "70 past 5")."""
    if m.group(9):  # "half seven": half past seven
        hour = _hour_value(m.group(9))
        return Clock(hour, 30, _meridiem(m.group(10) or "")) if 1 <= hour <= 12 else None
    hour = _hour_value(m.group(7))
    said = next(g for g in m.group(2, 3, 4, 5) if g).lower()
    minutes = int(said) if said.isdigit() else _PAST_TO_MINUTES[said]
    if not 1 <= hour <= 12 or not 1 <= minutes <= 30 or (not m.group(3) and said.isdigit() and minutes % 5):
        return None  # a bare "7 past 5" is no way to say a time; "17 minutes past" is
    if m.group(6).lower() in ("to", "till", "of", "before"):
        if minutes == 30:
            return None  # "half to six" is no way to say a time
        hour, minutes = (hour - 2) % 12 + 1, 60 - minutes
    return Clock(hour, minutes, _meridiem(m.group(8) or ""))


def _meridiem(word: str) -> bool | None:
    word = word.lower()
    if word.startswith("p") or word in ("in the evening", "at night", "in the afternoon"):
        return True
    if word.startswith("a") or word == "in the morning":
        return False
    return None


@lru_cache(maxsize=_REMEMBERED)
def clocks(text: str) -> tuple[ClockFound, ...]:
    """Every clock time in `text`, in order."""
    found: list[ClockFound] = []
    for m in _NOON.finditer(text):
        word = m.group(1).lower()
        found.append(ClockFound(m.start(), m.end(), Clock(0 if word == "midnight" else 12, 0, word != "midnight")))
    for m in _PAST_TO.finditer(text):
        if (clock := _past_to(m)) is not None:
            found.append(ClockFound(m.start(), m.end(), clock))
    taken = [(f.start, f.end) for f in found]
    for m in _CLOCK.finditer(text):
        if any(a < m.end() and m.start() < b for a, b in taken):
            continue
        hour = _hour_value(m.group(1))
        minute = int(m.group(2)) if m.group(2) else _MINUTE_WORDS.get((m.group(3) or "").lower(), 0)
        meridiem = (m.group(4) or "").lower()
        oclock = "clock" in m.group(0).lower()
        # A clock by its form (9:30), its words (9 pm, nine o'clock), or its place (open eight to six).
        if not (m.group(2) or meridiem or oclock) and _UNIT_AHEAD.match(text, m.end()):
            continue
        listed = _DAYS_AHEAD.match(text[m.end():]) and (
            (_LIST_BEFORE.search(text[: m.start()]) and any(f.end <= m.start() for f in found))
            or _CORRECTED_BEFORE.search(text[: m.start()]))  # "Actually, 8 on Sundays"
        # "we close at nine, no, eight": after a time said before it; "no wait, 7.": the whole sentence;
        # never "sorry, one sec" or "no, two of us"
        cm = _CORRECTED_TO.search(text[: m.start()])
        # a sentence that opens by taking back what was said before it: "oh no wait, it's eight now, ..."
        retracting = bool(cm and _FILLERS_ONLY.fullmatch(text, 0, cm.start()) and _RETRACTING.search(cm.group(0)))
        corrected_to = cm and (
            ((any(f.end <= m.start() for f in found) or retracting) and _ALONE_AFTER.match(text, m.end()))
            or _ALONE_END.match(text, m.end()))
        alone = bool(_FILLERS_ONLY.fullmatch(text, 0, m.start()) and _ALONE_AFTER.match(text, m.end()))  # "nine.", "uh ten on saturday"
        if not (m.group(2) or meridiem or oclock or _TIME_CONTEXT.search(text[: m.start()])
                or _RANGE_AHEAD.match(text[m.end():]) or listed or corrected_to or alone):
            continue
        if minute > 59 or hour > 23:
            continue
        pm: bool | None
        if meridiem.startswith("p") or meridiem in ("in the evening", "at night", "in the afternoon"):
            pm = True
        elif meridiem.startswith("a") or meridiem == "in the morning":
            pm = False
        else:
            pm = None if 1 <= hour <= 12 else hour >= 12
        if pm is not None and not (0 <= hour <= 12) and meridiem:
            continue  # "14 pm"
        if hour == 0 and meridiem:
            continue
        if pm is None and _EVENING_AHEAD.match(text, m.end()):
            pm = True  # "until 9 tonight"
        bare = alone and not (m.group(2) or meridiem or oclock or _TIME_CONTEXT.search(text[: m.start()]) or listed or corrected_to)
        found.append(ClockFound(m.start(), m.end(), Clock(hour, minute, pm), bare=bool(bare)))
    return tuple(sorted(found, key=lambda f: f.start))


# -- days ---------------------------------------------------------------------------------------------

_DAY_NAME = r"(mon|tue|tues|wed|thu|thur|thurs|fri|sat|sun)(?:day|nesday|rsday|urday|sday)?s?"
_DAY = re.compile(rf"\b{_DAY_NAME}\b", re.I)
_DAY_RANGE = re.compile(rf"\b{_DAY_NAME}\s*(?:through|thru|to|till|until|-|–)\s*{_DAY_NAME}\b", re.I)
_DAY_GROUPS = (
    (re.compile(r"\b(every day|everyday|daily|(?:seven|7) days(?: a week)?(?! (?:ago|later|notice|from|before|after))|all week)\b", re.I),
     range(7)),
    (re.compile(r"\bweekdays?\b", re.I), range(5)),
    (re.compile(r"\bweekends?\b", re.I), range(5, 7)),
)
_RELATIVE_DAY = re.compile(r"\b(today|tonight|tomorrow)\b", re.I)


def _day_index(token: str) -> int:
    prefix = token.lower()[:3]
    return next(i for i, d in enumerate(WEEKDAYS) if d.startswith(prefix))


@frozen
class DaysFound(Found):
    days: frozenset[int]  # 0 = Monday
    relative: str | None = None  # "today" / "tomorrow": no weekday until a date says which


@lru_cache(maxsize=_REMEMBERED)
def days(text: str) -> tuple[DaysFound, ...]:
    """Every day or run of days in `text`, in order (a range counts once, not as its two ends)."""
    found: list[DaysFound] = []
    for m in _DAY_RANGE.finditer(text):
        a, b = _day_index(m.group(1)), _day_index(m.group(2))
        run = frozenset((a + i) % 7 for i in range((b - a) % 7 + 1))
        found.append(DaysFound(m.start(), m.end(), run))
    for pattern, run in _DAY_GROUPS:
        for m in pattern.finditer(text):
            found.append(DaysFound(m.start(), m.end(), frozenset(run)))
    for m in _DAY.finditer(text):
        if not any(f.start <= m.start() < f.end for f in found):
            found.append(DaysFound(m.start(), m.end(), frozenset({_day_index(m.group(1))})))
    for m in _RELATIVE_DAY.finditer(text):
        word = m.group(1).lower()
        found.append(DaysFound(m.start(), m.end(), frozenset(), "tomorrow" if word == "tomorrow" else "today"))
    return tuple(sorted(found, key=lambda f: f.start))


# -- what a fact means where it is said ---------------------------------------------------------------
# A day can be said closed ("not open on Sunday", "every day except Sunday"), a time can be the
# opening or the closing one, a place can be where the item is not or no longer is, and a fact can
# be about another store. Each is read from the words before the fact in its clause (a comma, a
# semicolon or "but" ends one), which is where English puts these words.

_CLAUSE_BREAK = re.compile(r"[,;:()]|\s[-–—]\s|\b(?:but|only|however|instead|whereas|although|though)\b", re.I)


def clause_before(text: str, pos: int) -> str:
    """The words of `pos`'s clause that come before it."""
    start = 0
    for m in _CLAUSE_BREAK.finditer(text, 0, pos):
        start = m.end()
    return text[start:pos]


def clause_of(text: str, pos: int) -> str:
    """The whole clause `pos` is in."""
    end = m.start() if (m := _CLAUSE_BREAK.search(text, pos)) is not None else len(text)
    return clause_before(text, pos) + text[pos:end]


def said_with(text: str, pos: int) -> str:
    """The words said with the thing at `pos`: its clause, cut at an "and" too ("the paint is in aisle 3
    and the hammers are in aisle 12"; "aisle 3 for the paint and aisle 12 for the hammers")."""
    clause, at = clause_of(text, pos), len(clause_before(text, pos))
    cuts = [0, *(m.end() for m in _AND.finditer(clause) if m.end() <= at)]
    end = next((m.start() for m in _AND.finditer(clause) if m.start() >= at), len(clause))
    return clause[cuts[-1]:end]


def naming_the_item(text: str, place: Found, item: str) -> int:
    """How well the words said with a place name the item; its last word, what it is ("lids" of
    "mason jar lids"), counts the most."""
    head = words_of(item.split()[-1]) if item.split() else set()
    said = words_of(said_with(text, place.start))
    return len(said & words_of(item)) + 2 * len(said & head)


_NOT_A_DAY_OFF = r"(?!\s+(?:at|by|from|until|till|til|for|during|over|early)\b)"  # "shut at 6", "closed for lunch"
_CLOSED_BEFORE = re.compile(
    rf"\b(?:closed|shut){_NOT_A_DAY_OFF}|\b(?:except|excluding|other than)\b"
    r"|(?:\bnot|n't|\bnever|\bno longer)\s+(?:be\s+)?open\b(?!\s+(?:until|till|til|before|after|at|from)\b)"
    r"|\b(?:not|never)\s+(?:on\s+)?$",
    re.I,
)
_DAY_ENDS_CLAUSE = re.compile(r"\s*(?:[,.;:!?]|$|\band\b|\bwe'?re closed\b|\bclosed\b)", re.I)
_NOT_DOING = re.compile(r"(?:n't|\bnot)\s+(?:do|work)\s+(?:on\s+)?$", re.I)
# "every day but Sunday": the "but" ends a clause, so this is read from the words before it
_DAYS_BEFORE = rf"(?:(?:{_DAY_NAME})\s*(?:,\s*(?:and\s+|or\s+)?|and\s+|&\s*|or\s+)(?:on\s+)?)*"  # "mondays and " before "tuesdays"
_ALL_BUT = re.compile(rf"\b(?:every ?day|daily|all week|(?:seven|7) days(?: a week)?)\s+but\s+(?:on\s+)?{_DAYS_BEFORE}$", re.I)
# "closed every day except Saturday", "closed except for Saturdays": the days set apart are the open ones
_CLOSED_ALL_BUT = re.compile(
    rf"\b(?:closed|shut)\s+(?:(?:every ?day|daily|all week|the rest of the week)\s+)?(?:except|but|other than|apart from)"
    rf"(?:\s+for)?\s+(?:on\s+)?{_DAYS_BEFORE}$", re.I)
# "Mondays and Tuesdays we're closed": days named together share what is said after the last
_MORE_DAYS = re.compile(rf"(?:\s*(?:,|and|&|or)\s*(?:on\s+)?{_DAY_NAME}\b)*", re.I)


_CLOSED_AFTER = re.compile(
    rf"[\s,]*(?:(?:we'?re|we are|they'?re|they are|it'?s|it is|are|is)\s+)?(?:closed|shut){_NOT_A_DAY_OFF}"
    r"(?!\s+(?:on\b|mon|tue|wed|thu|fri|sat|sun|week|every|daily|today|tonight|tomorrow))"
    # "Sundays we're not open", "Sunday we're not", "Sunday's our day off", "tomorrow's a holiday"
    r"|[\s,]*(?:we'?re|we are|they'?re|they are|it'?s|it is)\s+not\b(?!\s+open\s+(?:until|till|til|before|after|past|at)\b)"
    r"(?:\s+open\b)?(?!\s+(?:until|till|til|before|after|past|at)\b)"
    r"|(?:'s|\s+is)\s+(?:our|a|the)\s+(?:day off|holiday)\b|\s+off\b",
    re.I)  # "Monday to Friday, closed on holidays" or "..., closed Sundays" is about other days


_OTHER_HOURS_APART = re.compile(r"\b(?:except|but)\s+(?:that\s+)?(?:we|they|it)\s+(?:open|opens|close|closes)\b"
                                r"(?:\s+(?:early|late|earlier|later))?\s+(?:on\s+)?$", re.I)
# "sundays we're closed | monday through saturday nine to six": what follows a day said closed, and
# the same words read back from the days after them
_CLOSED_THEN_DAYS = re.compile(r"\s*(?:(?:we'?re|we are|they'?re|they are|it'?s|it is)\s+)?(?:closed|shut)\s+(?:on\s+)?", re.I)
_CLOSED_AT_A_DAY = re.compile(rf"\b(?:{_DAY_NAME}){_CLOSED_THEN_DAYS.pattern}$", re.I)


def day_open(text: str, day: DaysFound) -> bool:
    """False when the words say the business is closed that day ("we're closed Sundays", "not open on
    Saturday", "Sundays we're closed", "Sun closed")."""
    before = clause_before(text, day.start)
    if _OPENS_LATER.match(text, day.end):
        return True  # "we don't open Sundays until noon": open, later
    if _EXCEPT.search(before) and day.days and any(
            day.days <= (clock_days(text, f) or frozenset()) for f in clocks(text)):
        return True  # "we close at 5 except on Fridays, when it's 6": set apart with a time of their own
    if days_after_closed(text, day) is not None:
        return False  # "sundays we're closed monday through saturday nine to six": Sunday
    if _OTHER_HOURS_APART.search(before):
        return True  # "every day, except we close early on Saturday": open, at other hours
    if _CLOSED_AT_A_DAY.search(before) and _has_own_time(text, day):
        return True  # ... and Monday through Saturday, at their own time
    after = _MORE_DAYS.match(text, day.end)
    if _CLOSED_ALL_BUT.search(text, 0, day.start):
        return True
    if _ALL_BUT.search(text, 0, day.start) and _DAY_ENDS_CLAUSE.match(text, after.end() if after else day.end):
        return False
    if _NOT_DOING.search(before) and _DAY_ENDS_CLAUSE.match(text, after.end() if after else day.end):
        return False  # "we don't do weekends", not "we don't do sundays the same"
    return _CLOSED_BEFORE.search(before) is None and _CLOSED_AFTER.match(text, after.end() if after else day.end) is None


_OPENS_LATER = re.compile(r"\s*(?:until|till|til|before)\b", re.I)


_OPEN_CUE = re.compile(r"\b(?:(?:re)?opens?|(?:re)?opening|from|starts?|starting|back open)\b", re.I)
_CLOSE_CUE = re.compile(r"\b(?:close[sd]?|closing|until|till|til|shuts?)\b", re.I)
_OPEN_UNTIL = re.compile(r"(?:\bnot|n't|\bnever)\s+open\b[^,;.]*\b(?:until|till|til|before)\s*$", re.I)  # "we don't open (Sundays) until 10"
_RANGE_JOIN = re.compile(r"\s*(?:to|until|till|til|-|–)\s*$", re.I)


def clock_role(text: str, found: ClockFound) -> str | None:
    """"open" or "close" when the words say which end of the day a time is, else None."""
    if _RANGE_AHEAD.match(text[found.end:]):
        return "open"  # the first end of "9 to 5"
    before = clause_before(text, found.start)
    if any(_RANGE_JOIN.fullmatch(text[f.end:found.start]) for f in clocks(text) if f.end <= found.start):
        return "close"  # the second end
    if _OPEN_UNTIL.search(before):
        return "open"
    cues = [(m.end(), "open") for m in _OPEN_CUE.finditer(before)] + [(m.end(), "close") for m in _CLOSE_CUE.finditer(before)]
    return max(cues)[1] if cues else None


# Which days a time is said for. A sentence is cut where a clause ends and at every "and"; a piece
# with no time joins the next ("Monday and Tuesday 9 to 5"), or the one before when it is days only
# after a time said before its days ("at 5 on Monday and Tuesday"), or at the end ("9 to 5, Monday
# to Friday"). A piece with no days of its own takes the days before it ("On weekdays we open at 9
# and close at 6"); times before any days are for the days not named later when those are set apart
# ("until 9, but on Sundays until 6"), else not known. Said of "other days", they are the weekdays
# not named before ("Sundays 11 to 4, otherwise 9 to 6"); around an "except", not known.
_AND = re.compile(r"\band\b", re.I)
_OTHER_DAYS = re.compile(r"\b(?:otherwise|other (?:days|nights)|rest of the week|the rest|all other|every other (?:day|night))\b", re.I)
_EXCEPT = re.compile(r"\b(?:except|excluding|other than|apart from|(?:every ?day|daily|all week) but)\b", re.I)

DayKey = int | str  # a weekday (0 = Monday) or a relative day ("today", "tomorrow")


def day_keys(found: DaysFound) -> frozenset[DayKey]:
    return frozenset({found.relative}) if found.relative is not None else frozenset(found.days)


def _days_only(text: str, a: int, b: int) -> bool:
    """Is text[a:b] days and joining words only ("and Tuesday", ", Saturday")?"""
    rest = text[a:b]
    for d in sorted((d for d in days(text) if a <= d.start < b), key=lambda d: -d.start):
        rest = rest[: d.start - a] + rest[d.end - a:]
    return bool(rest != text[a:b]) and not re.sub(r"(?i)\b(?:and|on|the)\b|[\s,;&]", "", rest)


def _time_first(text: str, a: int, b: int) -> bool:
    """Does the piece say its time before its days ("at 5 on Monday"), not after ("weekdays till 6")?"""
    first_day = next((d.start for d in days(text) if a <= d.start < b), None)
    first_clock = next((f.start for f in clocks(text) if a <= f.start < b), None)
    return first_day is not None and first_clock is not None and first_clock < first_day


_CUE_AFTER_DAYS = re.compile(r"\s+(?:til|till|until|from|open|opens|close|closes)\b", re.I)
_DAYS_THEN_TIME = re.compile(r"\s*(?:(?:we'?re|we are|it'?s)\s+)?(?:open\s+)?(?:from\s+)?", re.I)


@lru_cache(maxsize=_REMEMBERED)
def _time_pieces(text: str) -> tuple[tuple[int, int], ...]:
    # Transcripts often have no commas: days that follow a time at once, with their own time after
    # them, start a piece of their own ("monday through saturday nine to nine sunday eleven to six").
    found = clocks(text)
    unpunctuated = [d.start for d in days(text)
                    if any(f.end <= d.start and not text[f.end:d.start].strip() for f in found)
                    and any(_DAYS_THEN_TIME.fullmatch(text, d.end, f.start) for f in found if f.start >= d.end)]
    # ... and a time cue right after days said for the time before them ("til 9 pm on weekdays til 6 on saturday")
    unpunctuated += [d.end for d in days(text) if _CUE_AFTER_DAYS.match(text, d.end)
                     and any(f.end <= d.start for f in found) and any(f.start >= d.end for f in found)]
    # ... and days right after days that follow a time, with a time of their own ("nine to five
    # monday through friday saturdays ten to two")
    ends = {f.end for f in found}
    named = days(text)
    unpunctuated += [d1.start for d0, d1 in zip(named, named[1:]) if not text[d0.end:d1.start].strip()
                     and len(text[:d0.start].rstrip()) in ends and _has_own_time(text, d1)]
    cuts = sorted({0, len(text), *(m.start() for m in _CLAUSE_BREAK.finditer(text)), *(m.start() for m in _AND.finditer(text)),
                   *unpunctuated})
    pieces = [(a, b) for a, b in zip(cuts, cuts[1:]) if text[a:b].strip()]
    starts = [f.start for f in clocks(text)] + [m.start() for m in ALWAYS_OPEN.finditer(text)]
    timed = [any(a <= s < b for s in starts) for a, b in pieces]
    merged: list[tuple[int, int]] = []
    pending: int | None = None  # the start of untimed pieces waiting for the next timed one
    for (a, b), has_time in zip(pieces, timed):
        if not has_time:
            if pending is None and merged and _time_first(text, *merged[-1]) and _days_only(text, a, b):
                merged[-1] = (merged[-1][0], b)  # "at 5 on Monday and Tuesday": more days for that time
            else:
                pending = a if pending is None else pending
            continue
        merged.append((a if pending is None else pending, b))
        pending = None
    if pending is not None:
        if merged:
            merged[-1] = (merged[-1][0], len(text))
        else:
            merged.append((pending, len(text)))
    return tuple(merged)


# "sundays we're closed monday through saturday nine to six" (no commas): the closed word is the
# day's before it, and the days after it are open at the time that follows them.


def days_after_closed(text: str, day: DaysFound) -> int | None:
    """Where days with a time of their own begin, when the words right after `day` say it is closed
    and then name them ("sundays we're closed monday through saturday nine to six"); else None."""
    m = _CLOSED_THEN_DAYS.match(text, day.end)
    if m is None:
        return None
    later = next((d for d in days(text) if d.start == m.end()), None)
    return m.end() if later is not None and _has_own_time(text, later) else None


def _has_own_time(text: str, day: DaysFound) -> bool:
    run = _MORE_DAYS.match(text, day.end)
    end = run.end() if run else day.end
    return any(_DAYS_THEN_TIME.fullmatch(text, end, f.start) for f in clocks(text) if f.start >= end)


def _open_days(text: str, a: int, b: int) -> frozenset[DayKey]:
    """The days named in text[a:b] that a time there can be for: not one said closed just before
    days with a time of their own."""
    named = [d for d in days(text) if a <= d.start < b]
    every = frozenset().union(*(day_keys(d) for d in named))
    closed = frozenset().union(*(day_keys(d) for d in named if days_after_closed(text, d) is not None))
    return every - closed if every - closed else every


_SETS_APART = re.compile(r"\s*(?:[,;:]|[-–—]|\b(?:but|except|however|only|whereas|though|although)\b)", re.I)


@lru_cache(maxsize=_REMEMBERED)
def clock_days(text: str, found: Found) -> frozenset[DayKey] | None:
    """The days `text` says the time (or the "24 hours") at `found` is for; None when it does not say."""
    pieces = _time_pieces(text)
    owns = [_open_days(text, a, b) for a, b in pieces]
    # Times said before any days, then days set apart with their own times ("open until 9, but on
    # Sundays until 6"; "8 to 8, weekends 10 to 4"): the first times are for the other days.
    first = next((i for i, own in enumerate(owns) if own), None)
    leading: frozenset[DayKey] | None = None
    if first:
        later = frozenset(k for own in owns[first:] for k in own if isinstance(k, int))
        if _SETS_APART.match(text, pieces[first][0]) and later and len(later) < 7:
            leading = frozenset(range(7)) - later
    carried: frozenset[DayKey] | None = leading
    named: frozenset[DayKey] = frozenset()
    excepted = False  # the piece before set days apart
    for (a, b), own in zip(pieces, owns):
        if (cut := _EXCEPT.search(text, a, b)) is not None:
            if a <= found.start < b:
                return _except_days(text, (a, b), cut, found)
            # "at 5 except on Fridays, when it's 6": the next piece, if it says "when", is the days set apart
            carried = frozenset(k for d in days(text) if cut.end() <= d.start < b for k in day_keys(d)) or None
            excepted = True
        elif excepted and not own and _WHEN_THOSE.match(text, a):
            pass  # carried: the days set apart just before
        elif _OTHER_DAYS.search(text, a, b):
            rest = frozenset(range(7)) - named
            carried = rest if named and rest and not own else None
        elif own:
            carried = own - _set_apart_next(text, pieces, (a, b), own)
        else:
            carried = None if excepted else carried
        excepted = excepted and cut is not None
        named |= own
        if a <= found.start < b:
            return carried
    return None


_WHEN_THOSE = re.compile(r"[\s,;:]*(?:when|then|on those days|those days|on which)\b", re.I)
_APART_NEXT = re.compile(r"[\s,;:]*(?:but|except|excluding|however|only|whereas|though|although)\b", re.I)


def _set_apart_next(text: str, pieces: tuple[tuple[int, int], ...], piece: tuple[int, int],
                    own: frozenset[DayKey]) -> frozenset[DayKey]:
    """Weekdays the piece after this one sets apart from this one's days ("nine to six every day,
    except we close early on Saturday at three"; "... every day, but on Saturdays we close early"):
    this piece's time is not theirs. Nothing when the next piece does not set days apart."""
    at = pieces.index(piece) + 1
    if at == len(pieces) or _APART_NEXT.match(text, pieces[at][0]) is None:
        return frozenset()
    a, b = pieces[at]
    apart = frozenset(k for d in days(text) if a <= d.start < b and d.relative is None for k in day_keys(d))
    return apart if apart < own else frozenset()


# Between the days set apart and a time that follows them: nothing but the joint ("every day
# except Sunday, 8 to 6"), not a clause of their own ("except on Fridays, when it's 6").
# "every day except Sundays, when we close at four": the time after "when" is the set-apart days' own
_WHEN_JOINT = re.compile(r"[\s,;:]*(?:when|where)\s+(?:we|they|it)(?:'re|\s+are|\s+is|'s)?\s*(?:only\s+)?"
                         r"(?:open|opens|close|closes|shut|shuts)?\s*(?:early\s+|late\s+)?(?:at|from|until|till|til)?\s*", re.I)
# "except we close early on Saturday at three": after the "except", a clause of the days' own
_OWN_CLAUSE = re.compile(r"\s*(?:that\s+|when\s+)?(?:we|they|it)(?:'re|'s|\s+are|\s+is)?\s+(?:only\s+)?"
                         r"(?:open|opens|close|closes|shut|shuts)\b(?:\s+(?:early|late))?\s*(?:on\s+)?", re.I)
_AT_JOINT = re.compile(r"[\s,]*(?:at|from|until|till|til)?\s*", re.I)
_EXCEPT_JOINT = re.compile(r"[\s,;:]*(?:(?:we'?re|we are|it'?s|it is)\s+)?(?:open\s+)?(?:from\s+)?", re.I)


def _except_days(text: str, piece: tuple[int, int], cut: re.Match[str], found: Found) -> frozenset[DayKey] | None:
    """The days of a time said around an "except": the days named before it (every day when none
    are) without the days set apart ("24 hours except Sundays", "every day except Sunday, 8 to 6")."""
    a, b = piece
    before = [d for d in days(text) if a <= d.start < cut.start()]
    apart = [d for d in days(text) if cut.end() <= d.start < b and d.relative is None]
    if not apart:
        return None  # "except holidays": which days, these words do not say
    if found.start > cut.start():
        # after the days set apart: the time that follows them at once, or the range it opens
        ends = [d.end for d in apart if d.end <= found.start]
        after = [f for f in clocks(text) if ends and max(ends) <= f.start <= found.start]
        if after and after[0].start == found.start and _OWN_CLAUSE.fullmatch(text, cut.end(), min(d.start for d in apart)) \
                and _AT_JOINT.fullmatch(text, max(ends), found.start):
            return frozenset(k for d in apart for k in d.days) or None  # "except we close early on Saturday at three"
        if after and _WHEN_JOINT.fullmatch(text, max(ends), after[0].start) and (
                after[0].start == found.start or _RANGE_JOIN.fullmatch(text[after[0].end:found.start])):
            return frozenset(k for d in apart for k in d.days) or None
        if not after or _EXCEPT_JOINT.fullmatch(text, max(ends), after[0].start) is None or not (
                after[0].start == found.start or _RANGE_JOIN.fullmatch(text[after[0].end:found.start])):
            return None
        if " but" in cut.group(0).lower() and not re.search(r"[,;:]", text[max(ends):after[0].start]):
            return frozenset(k for d in apart for k in d.days) or None  # "every day but sundays it's ten to four"
    base = frozenset().union(*(d.days for d in before)) if before else frozenset(range(7))
    rest = base - frozenset().union(*(d.days for d in apart))
    return frozenset(rest) or None


def other_days(text: str) -> tuple[frozenset[int], bool, int] | None:
    """"Otherwise" and "the rest of the week" after named days: the weekdays not named, whether the
    words say them open, and where the words are ("Sundays 11 to 4, otherwise 9 to 6")."""
    m = _OTHER_DAYS.search(text)
    if m is None:
        return None
    named = frozenset().union(*(d.days for d in days(text) if d.start < m.start()))
    rest = frozenset(range(7)) - named
    if not named or not rest:
        return None
    clause = clause_of(text, m.start())
    closed = re.search(rf"\b(?:closed|shut){_NOT_A_DAY_OFF}", clause, re.I) is not None
    return rest, not closed, m.start()


def days_fit(said: frozenset[DayKey] | None, claimed: frozenset[DayKey] | None) -> bool:
    """Could a time said for `said` days be the one claimed for `claimed`? Unknown days fit any, and
    a relative day fits any weekday (which weekday "today" is, these words do not say)."""
    if said is None or claimed is None or said & claimed:
        return True
    def relative(keys: frozenset[DayKey]) -> bool:
        return any(isinstance(k, str) for k in keys)
    def weekday(keys: frozenset[DayKey]) -> bool:
        return any(isinstance(k, int) for k in keys)
    return (relative(said) and weekday(claimed)) or (weekday(said) and relative(claimed))


_ELSEWHERE = re.compile(
    r"\b(?:other|another|sister|second|new|old) (?:store|location|branch|shop|site)\b"
    r"|\bthe (?:store|shop|branch|location) (?:on|at|in|over|down|across|near|by|up)\b"
    r"|\b(?:downtown|uptown|mall) (?:store|location|branch|shop)\b"
    r"|\bthe (?:store|shop|branch|location) (?:downtown|uptown|across town|in town)\b"
    r"|\bthe one (?:(?:on|at|in|by|near|off|over on|down on|up on) (?:\w+ ){0,2}(?:street|st|avenue|ave|road|rd|boulevard|"
    r"blvd|drive|highway|hwy|lane|way|plaza|mall|square)|downtown|uptown|across town|in town|on main)\b"
    r"|\bour (?!(?:main|own|local) (?:store|location|branch|shop)\b)\w+(?: \w+)? (?:store|location|branch|shop)\b"
    r"|\bthe \w+ (?:across the street|down the street|next door|across town|up the road|down the road)\b"
    r"|\b(?:at|in) the [\w.]+(?: [\w.]+)? (?:location|branch)\b",
    re.I,
)


# Words that put a fact in the past: "we used to close at 9".
FORMERLY_WORDS = (r"\b(?:used to|formerly|previously|no longer|last (?:year|month|week)|before covid|"
                  r"(?:we|it|they) (?:were|was) (?:open|closed|closing))\b")
FORMERLY = re.compile(FORMERLY_WORDS, re.I)


# A time said not to be the time: "we don't open at nine", "not at 10", "it's not 9 to 5"; but
# "we don't open until 10" and "not before 9" say when it is.
_NEGATED_TIME = re.compile(
    r"(?:\bnot\b|\b\w+n't\b|\b(?:dont|doesnt|isnt|arent|wont|cant|cannot|never)\b)"
    r"(?:\s+(?!(?:until|till|til|before|after|past|we|we're|we'?ll|it's|they|they're|i|i'm|you|you're)\b)[\w']+){0,4}\s+$", re.I)
_NOT_STAYING = re.compile(r"(?:\bnot|n't|\b(?:do|does|did|wo)nt|\bnever)\s+(?:stay|remain|keep|be)\s+open\b", re.I)  # "we don't stay open till ten"


def negated_time(text: str, found: Found) -> bool:
    before = clause_before(text, found.start)
    return bool(_NOT_STAYING.search(before) or _NEGATED_TIME.search(before))


# Hours for some days or seasons only: the user asked for the usual ones, so a record gives such a
# time only with its qualifier ("on Christmas Eve they close at 2").
_QUALIFIER = re.compile(
    r"\b(?:(?:on|for|during|over|this|around|at|before)\s+(?:the\s+)?(?:christmas(?: eve| day)?|thanksgiving|new year'?s(?: eve| day)?|"
    r"easter|holidays?|labor day|memorial day|fourth of july|july (?:4th|fourth))|"
    r"(?:christmas|holiday|summer|winter|seasonal|thanksgiving) hours|(?:in|during) the (?:summer|winter|fall|autumn|spring)|"
    r"(?:(?:starting|from|beginning|as of|after) )?next (?:week|month|year)|"
    r"(?:first|second|third|last) \w+ of the month|(?<!don't )(?<!do not )closed for lunch|lunch (?:break|hour))\b", re.I)
_NOT_A_QUALIFIER = re.compile(r"\b(?:even|including|except|and|closed|open|plus)\s*(?:on\s+)?(?:the\s+)?$", re.I)  # "even on holidays"


_USUAL = re.compile(r"\b(?:normally|usually|regularly|ordinarily|typically|the rest of the (?:year|time))\b", re.I)
_QUALIFIER_GLUE = frozenset("on for during over this around at before in the starting from beginning as of after closed hours".split())


def qualified_as(q: str, text: str) -> bool:
    """Does `text` say the qualifier too ("On Christmas Eve they close at 2", "closed 12 to 1 for lunch")?"""
    said = text.lower()
    return all(re.search(rf"\b{re.escape(word)}\b", said) for word in q.split() if word not in _QUALIFIER_GLUE)


def qualifier(text: str, pos: int) -> str | None:
    """The day or season a time at `pos` is said for, when it is not every week's ("holiday"): in the
    time's clause, or a first clause that is only the qualifier ("during the holidays, we're open till ten")."""
    clause = clause_of(text, pos)
    if _USUAL.search(clause):
        return None  # "closed today for the holiday, but normally nine to six": the usual hours
    first = text[: m.start()] if (m := _CLAUSE_BREAK.search(text)) is not None else ""
    for where in (clause, first if not clocks(first) else ""):
        for q in _QUALIFIER.finditer(where):
            if not _NOT_A_QUALIFIER.search(where[: q.start()]):
                return q.group(0).strip().lower()
    return None


# A part of the business with hours of its own: its times are not the store's.
_OTHER_PART = re.compile(
    r"\b(?:pharmacy|gas station|gas pumps?|pumps|drive[- ]?thr(?:u|ough)|atm|kiosk|ice machine|car wash|deli|bakery|"
    r"hotline|phone line|customer service|website|online orders?|the app|the kitchen|the bar|the lobby|the caf[eé]|the clinic|"
    r"the (?:garden|auto|tire|service|lawn and garden) (?:center|centre|department|desk|shop))\b", re.I)


_AND_THE = re.compile(r"\band (?=the|our|we)\b", re.I)


def other_part(text: str, pos: int) -> bool:
    """True when the clause at `pos` is about a part with hours of its own ("the pharmacy closes at 4")."""
    clause = clause_of(text, pos)
    at = len(clause_before(text, pos))
    parts = [0, *(m.start() for m in _AND_THE.finditer(clause)), len(clause)]  # "the pharmacy ... and the store ..."
    a, b = max(p for p in parts if p <= at), min(p for p in parts if p > at)
    return _OTHER_PART.search(clause[a:b]) is not None


_NOT_NOW = re.compile(rf"{FORMERLY_WORDS}|\b(?:not|never|were|was)\b|n't", re.I)


def always_open(text: str) -> list[Found]:
    """Where `text` says the business is open around the clock now ("we're open 24/7"), not that it
    is not ("we're not open 24 hours") or was ("we used to be open 24 hours")."""
    return [Found(m.start(), m.end()) for m in ALWAYS_OPEN.finditer(text)
            if not _NOT_NOW.search(clause_before(text, m.start()))]


def elsewhere(text: str, pos: int) -> bool:
    """True when the clause at `pos` is about another store ("the store on Main Street opens at 8")."""
    return _ELSEWHERE.search(clause_of(text, pos)) is not None


_NOT_THERE_BEFORE = re.compile(
    r"\bused to\b|\bformerly\b|\b(?:was|were) in\b|\b(?:it|they|that|those) (?:was|were)\s+(?:the\s+)?$|\bmoved\b[^,;]*\bfrom\s+(?:the\s+)?$|\b(?:not|never)\s+$"
    r"|(?:\bnot|n't|\bnever|\bno longer)\s+(?:\w+\s+){0,2}?(?:in|at|on|by|near|from)\s+(?:the\s+)?$",
    re.I,
)


_BESIDE_BEFORE = re.compile(
    r"\b(?:near|nearby|next to|beside|by|across from|opposite|behind|past|close to|facing|in front of|around the corner from|"
    r"just (?:before|after))\s+(?:the\s+)?$", re.I)


def beside(text: str, place: PlaceFound) -> bool:
    """True when the place is said as a landmark ("near aisle 20", "next to the paint counter"):
    the item is somewhere else, by it."""
    start = place.start
    if text[max(0, start - 4):start].lower() == "the ":
        start -= 4
    return _BESIDE_BEFORE.search(text, 0, start) is not None


_NUMBER_CORRECTED = re.compile(
    rf"{_CORRECTING}(?:(?:over\s+)?in\s+)?(?:(?:aisle|isle|row|bay)\s+(?=\w)|(?=\w+\s*(?:now\b)?\s*(?:not \w+\s*)?(?:[.,!?;]|$)))"
    r"(\d{1,3}[a-z]?|" + _UNIT_WORDS + r")\b"
    r"(?!\s+(?:more|moment|sec|second|minute|thing|of|or|problem))", re.I)


def corrected_number(text: str, start: int = 0) -> str | None:
    """A number said to correct one before it ("aisle three, no, four", "sorry, 16"), as an aisle's id."""
    m = _NUMBER_CORRECTED.search(text, start)
    if m is None or m.group(1).lower() in ("a", "an", "no"):
        return None
    raw = m.group(1).lower()
    return raw if raw[:1].isdigit() else str(number(raw))


def place_stated(text: str, place: PlaceFound) -> bool:
    """False when the words put the item anywhere but there now ("not in aisle 5", "used to be in
    aisle 3", "moved it from aisle 3"): read from the words since the place said before it."""
    if re.search(r"\bmoved\b", text[: place.start], re.I) and re.search(r"\bfrom\s+(?:the\s+)?$", text[: place.start], re.I):
        return False  # "they moved it to aisle 9 from aisle 3"
    start = max((f.end for f in places(text) if f.end <= place.start), default=0)
    before = clause_before(text, place.start)
    return _NOT_THERE_BEFORE.search(before[max(0, len(before) - (place.start - start)):]) is None


# Open all day and night: no clock time says it, these words do ("24/7" says every day too).
EVERY_DAY_AROUND_THE_CLOCK = re.compile(r"\b(?:24\s*/\s*7|twenty[- ]four seven)\b", re.I)
ALWAYS_OPEN = re.compile(
    r"\b(?:24\s*/\s*7|24\s*(?:hours|hrs)|twenty[- ]four(?:\s+|-)hours?|twenty[- ]four seven|around the clock|"
    r"round the clock|(?:we )?never close)\b", re.I)




CORRECTION = re.compile(
    r"\b(actually|i mean|correction|scratch that|wait|my mistake|i was wrong|let me correct|no,? sorry|sorry,? no|but now|"
    r"oh no|we moved)\b",
    re.I,
)
# Between two times in one sentence, fewer words correct the first: "nine, no, eight", "8... uh no, 8:30".
CORRECTS_BETWEEN = re.compile(rf"{CORRECTION.pattern}|\b(?:no|sorry|i mean)\b", re.I)
# A sentence that opens by taking back what came before: "uh no, 8:30", "sorry, it's 7".
OPENS_WITH_NO = re.compile(r"^\W*(?:(?:uh|um|oh|er)\b\W*)*(?:no|nope|sorry)\b", re.I)
HEDGE = re.compile(
    r"\b(not sure|unsure|not certain|i think|i believe|maybe|probably|don'?t quote me|i guess|i'?m guessing|"
    r"might be|could be|should be|not a hundred percent|or so|if i remember|can'?t (?:promise|guarantee)|no guarantee|"
    r"(?:says|shows) (?:we have|we'?ve got|there (?:are|is)|\w+ (?:in stock|left|on hand))|in the system|"
    r"i (?:wanna|want to) say|don'?t hold me to (?:it|that)|i'?d (?:guess|say)|give or take|roughly|-?ish|"
    r"or (?:maybe |possibly |perhaps )?(?:aisle |row |bay )?(?:\d{1,3}[a-z]?|" + "|".join(_CLOCK_WORDS) + r")(?=[\s.,!?]|$))",
    re.I,
)


# When it is due back, said with a hedge ("we're out, should be back in a couple weeks"): doubt about
# the date, not about the stock now.
RESTOCK_HEDGE = re.compile(r"[,;]?\s*(?:(?:it|they|we)(?:'?ll| will)?\s+)?(?:should|might|may|could|probably)\s+(?:be\s+)?"
                           r"(?:back|in|here|restocked|get(?:ting)? (?:more|some|them|it)|coming)\b[^.?!]*", re.I)
# A count said roughly: the count stays ("a dozen or so", "twenty-ish", "give or take").
_ROUGHLY = r"(?:\s*,?\s*(?:or so|give or take(?: a few)?)|-?ish)\b"
ROUGH_COUNT = re.compile(r"\b((?:\d+|" + _UNIT_WORDS + r")(?:\s+\w+)?)" + _ROUGHLY, re.I)


_ROUGHLY_BEFORE = re.compile(r"\b(?:about|around|roughly|approximately|maybe|like|some)\s+$|~\s*$", re.I)
_ROUGHLY_AFTER = re.compile(_ROUGHLY, re.I)


def exact_count(text: str) -> bool:
    """Does `text` state a count as exact ("12 in stock"), not roughly ("about 12", "a dozen or so")?"""
    return any(not _ROUGHLY_BEFORE.search(text, 0, m.start()) and not _ROUGHLY_AFTER.match(text, m.end())
               for m in _NUMBER.finditer(text) if m.group(1).lower() not in ("a", "an", "no", "one"))


# -- numbers -------------------------------------------------------------------------------------------

_NUMBER = re.compile(r"\b(\d+|" + _UNIT_WORDS + r")\b", re.I)


def number(token: str) -> int | None:
    token = token.lower().strip()
    if token.isdigit():
        return int(token)
    return _UNITS.get(token)


# A number that sizes the item ("the 12-inch skillet", "a 5 gallon bucket") is its name, not a count.
_SIZE_AHEAD = re.compile(r"\s*-?\s*(?:inch(?:es)?|in\.(?=\s|$)|\"|oz|ounces?|lbs?|pounds?|quarts?|qt|gallons?|gal|mm|cm|ft|foot|feet|"
                         r"volts?|v\b|watts?|w\b|amps?|piece|pc|pack|count|ct|%|percent|gauge|grit|mil)\b", re.I)


_ORDINALS = {"first": 1, "second": 2, "third": 3, "fourth": 4, "fifth": 5, "sixth": 6, "seventh": 7, "eighth": 8,
             "ninth": 9, "tenth": 10}


def counts(text: str) -> set[int]:
    """The numbers `text` says, other than sizes ("12-inch") and "a"/"an" ("a skillet"); ordinals too
    ("second shelf" says 2)."""
    out = {n for word, n in _ORDINALS.items() if re.search(rf"\b{word}\b", text, re.I)}
    for m in _NUMBER.finditer(text):
        if m.group(1).lower() in ("a", "an", "no") or _SIZE_AHEAD.match(text, m.end()):
            continue
        if (n := number(m.group(1))) is not None:
            out.add(n)
    return out


# -- stock ---------------------------------------------------------------------------------------------

_OUT = re.compile(
    r"\b(out of stock|sold out|all out|we'?re out|(?:do not|don't|dont|doesn't) (?:have|carry|stock|sell)|"
    r"(?:have|has)n'?t got|no longer (?:carry|have|stock|sell)|none left|not in stock|no,? we don'?t|"
    r"(?:are|is) not available|unavailable|don'?t have (?:any|it|them|those|that)|nothing left|ran out|run out|"
    r"on back-? ?order|back-? ?ordered|special order|only (?:available )?online|online only|not in (?:the )?stores?|"
    r"(?<!also )(?<!\balso be )available online|none (?:in (?:the )?store|here|on the shelf)|on order|sold (?:our|the) last|we have none|nope|"
    r"unfortunately not|we do not|reserved (?:for|by)|on hold for (?:a|another|someone|somebody)|spoken for|"
    r"set aside for|(?:got|have|there(?:'s| is| are)) (?:none|zero|nothing)|zero (?:on hand|in stock|left|available)|"
    r"(?:is|are|was|were)n'?t available|not available|(?:available )?to order online|order (?:it|them|one) online|"
    r"available (?:at|in|from) (?:the|our) (?:warehouse|distribution center)|not at this (?:store|location)|on layaway|"
    r"none for sale|none in (?:the )?(?:box|back|stock)|(?:were|was|got|been|just) sold|(?:someone|somebody) (?:just )?bought|"
    r"we'?re (?:completely |all |fresh |totally )?out\b|we are (?:completely |all |totally )?out\b|stopped (?:carrying|selling|stocking)|"
    r"discontinued|(?:they'?re|it'?s|all|(?:is|are)(?: all)?) gone|no [\w-]+ ones\b|haven'?t had (?:those|them|it|any|that))",
    re.I,
)
_LIMITED = re.compile(
    r"\b(only (?:\w+ )?(?:\d+|one|two|three|four|five|a few|a couple)(?: \w+)? left|just (?:\d+|one|two|three|a few|a couple)"
    r"(?: \w+)? left|running low|limited|last (?:one|two|few)|a few left|a couple left|"
    r"(?:have|got|is|are) (?:\d|one|two|three|four|five)(?: \w+)? left|(?:down to|on) (?:our|the|my) last (?:one|\w+)|"
    r"(?:just|only) the one|a single (?:one|\w+) left)\b",
    re.I,
)
_IN = re.compile(
    r"\b(in stock|on the shelf|on the shelves|on hand|we (?:do |still )?have (?:some|them|it|those|that|a few|a couple|a bunch|plenty|"
    r"lots|tons|loads|(?:like |about |around |maybe )?(?:\d+|one|two|three|four|five|six|seven|eight|nine|ten|twelve|fifteen|twenty|thirty|forty|fifty|a hundred|hundreds|a dozen|half a dozen|a half dozen)|\w+ of)|"
    r"we'?ve got|we got (?:some|them|it|a few|plenty|lots|\d+)|there (?:are|is) (?:some|a few|plenty|\d+)|"
    r"(?:yes|yeah|yep|yup|sure)\b[,!]?\s*(?:(?:we|i|they)\s+(?:\w+ly\s+|still\s+)?(?:have|got|carry|stock|sell)\b"
    r"(?!\s+(?:a look|a check|a peek|to\b|stock checks))|(?:we|they|it) (?:do|does)(?=\s*(?:[.,!]|$)))|"
    r"(?:yes|yeah|yep|yup|sure)\b[,!]?\s*(?:(?:we\s+)?(?:got|have)\s+)?(?:plenty|lots|loads|a bunch|a few|a couple|tons)|"
    # restocked since: "they were sold out last week but we restocked"
    r"we(?:'ve| have)?\s+(?:just\s+)?restocked|(?:they'?re|it'?s|we'?re) (?:back in stock|restocked)|got (?:some )?more in|^\s*we (?:sure )?do\b(?!\s*(?:not|n'?t))|available|"
    # a kind of it: "we have the 12-inch", "the deluxe ones we have"
    r"(?:we|they) (?:do |still )?have the (?=[\w-]*\d|[\w-]+ ones\b|(?:one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|"
    r"fourteen|sixteen|eighteen|twenty|thirty|forty|fifty)[\s-]+(?:inch|volt|gallon|quart|pound|foot|ounce|piece|watt|amp))|(?<=\bones )we (?:do |still )?(?:have|got|carry)\b(?!\s+(?:no|none|to)\b))\b",
    re.I,
)
_COUNT = r"(\d+|" + _UNIT_WORDS + r")"
# A count: the number before what is counted ("3 of those", "two left", "12 skillets"), not a name
# ("WD-40 is"), or right after having ("we have a dozen", "we've got about twenty").
_QUANTITY = re.compile(
    rf"(?<![-\w]){_COUNT}\s+(?:of (?:those|them|these|it)|left|in stock|on the shelf|on hand|units?|pieces?|in the back|"
    r"available|\w{2,}s\b)"
    rf"|\b(?:have|got|there (?:are|is)|there'?s)\s+(?:about\s+|around\s+|like\s+|maybe\s+)?(?!(?:an?|no)\b(?!\s+(?:dozen|couple)\b)){_COUNT}\b(?!\s*-)",
    re.I,
)


_BARE_NO = re.compile(r"(?:no,?\s*)?we (?:don'?t|do not)(?: (?:have|carry|stock|sell) (?:it|them|that|those|any))?[.!]*", re.I)


# Had later, not now: "available for pickup tomorrow", "back in stock next week".
_LATER = re.compile(r"\b(?:tomorrow|next (?:week|month)|later (?:today|this week)|this (?:weekend|afternoon|evening)|"
                    r"(?:on|by) (?:mon|tue|wed|thu|fri|sat|sun)[a-z]*|in (?:a|an|\d+|a few|a couple of|two|three|four|five) "
                    r"(?:days?|weeks?|hours?))\b", re.I)


@frozen
class StockFound(Found):
    availability: str  # in_stock | out_of_stock | limited
    quantity: int | None
    subject: str | None = None  # what it names, when it does ("the batteries")


_CONTRAST_PART = re.compile(r"\s*(?:\bbut\b|\bthough\b|\bhowever\b|;)\s*|,\s*(?=the\s|no [\w-]+ ones\b"
                            r"|(?:we'?re|we are|we'?ve|we have|we got|we don'?t|we do not) (?:all )?(?:out|got|have|sold|carry)\b)", re.I)  # ", the 10-inch is sold out", ", no blue ones"


def _parts(sentence: str) -> list[tuple[int, int]]:
    cuts = [0, *(m.start() for m in _CONTRAST_PART.finditer(sentence)), len(sentence)]
    return [(x, y) for x, y in zip(cuts, cuts[1:]) if sentence[x:y].strip(" ,;")]


# Said at the start of what they say: "not right now", "sorry, none", "not at the moment".
_OUT_AT_START = re.compile(r"\W*(?:(?:no|nope|sorry|uh|um|oh|but)\b\W*)*(?:not (?:right now|at the moment|today|the\b(?=\s+[\w-])|here\b(?=\W+(?:you'?d|you will|you'?ll|try|check|go)\b))"
                           r"|none(?! of)|nothing)\b", re.I)  # "..., but not the 20 volt"
# "We're out of the blue ones": a kind of it, not the item.
_A_KIND_OF_IT = re.compile(
    r"\s+of (?:the|our) (?:\w+ )?(?:ones?|size|sizes|model|models|colou?rs?|kinds?|versions?|styles?|flavou?rs?)\b", re.I)
_NEGATED_BEFORE = re.compile(r"(?:\bnot|n't)\s+(?:an?\s+)?$", re.I)  # "it's not reserved", "they're not discontinued"
# What a statement is about when it names it: "we don't sell the batteries separately".
_SUBJECT = re.compile(r"\b(?:have|carry|sell|stock|out of|not)\s+(?:the|any|those|these)\s+([a-z0-9][\w'-]*(?:\s+[a-z][\w'-]*){0,2})", re.I)
# ... or before it, said first: "the 10-inch is sold out", "the cheap ones are gone", "the deluxe ones we have"
_SUBJECT_FIRST = re.compile(r"\W*(?:(?:yes|yeah|no|so|well|um|uh|oh|but|and)\b\W*)*(?:the|those|these)\s+"
                            r"([a-z0-9][\w'-]*(?:\s+[a-z][\w'-]*){0,2}?)\s+(?:is|are|was|were|(?<=ones )we)\b|\W*no\s+([\w-]+\s+ones)\b", re.I)


def asked_about(question: str) -> str | None:
    """What a question asks the stock of, when it names it ("do you have the matching lid?")."""
    m = _SUBJECT.search(question)
    return m.group(1).lower() if m else None


def _out_at(part: str) -> re.Match[str] | None:
    for m in _OUT.finditer(part):
        if _NEGATED_BEFORE.search(part, 0, m.start()) or _A_KIND_OF_IT.match(part, m.end()):
            continue
        return m
    return _OUT_AT_START.match(part) or _BARE_NO.fullmatch(part)


def stock(text: str) -> list[StockFound]:
    """Stock statements, one per part of a sentence (a "but" or "though" starts a part): a negation
    wins over the 'have' inside it, a kind of it ("out of the blue ones") is not the item, and a
    question states nothing ("want me to check if we have some?")."""
    found: list[StockFound] = []
    for a, b in [(a + x, a + y) for a, b in sentence_spans(text) if not text[a:b].endswith("?")
                 for x, y in _parts(text[a:b])]:
        s = text[a:b]
        qty_m = _QUANTITY.search(s)
        qty = number(qty_m.group(1) or qty_m.group(2)) if qty_m else None
        subject = (sm.group(sm.lastindex or 1).lower() if (sm := _SUBJECT_FIRST.match(s) or _SUBJECT.search(s)) else None)
        if (m := _out_at(s)) is not None:
            found.append(StockFound(a + m.start(), b, "out_of_stock", 0, subject))
        elif (m := _LIMITED.search(s)) is not None:
            if qty is None and re.search(r"\b(?:last|the) one\b", m.group(0), re.I):
                qty = 1  # "down to our last one", "just the one"
            found.append(StockFound(a + m.start(), b, "limited", qty, subject))
        elif (m := _IN.search(s)) is not None:
            stop = m.end() + len(clause_of(s, m.end())) - len(clause_before(s, m.end()))  # the end of its clause
            if _LATER.search(s, m.end(), stop):
                found.append(StockFound(a + m.start(), b, "out_of_stock", 0, subject))  # "available for pickup tomorrow": not now
            else:
                found.append(StockFound(a + m.start(), b, "in_stock", qty, subject))
    return found


# What a stock statement is about, against the item asked: the item itself, another kind of it, or
# another thing. The judge and the typed answer both read it here, so they never disagree on it.
_NOT_NAMING = frozenset({"one", "ones"})
_A_KIND = re.compile(r"\bones?\b|\b(?:size|model|colou?r|kind|version|style|flavou?r|type|brand|make)s?\b|\b\d"
                     r"|\b(?:inch|volt|gallon|quart|pound|foot|ounce|watt|amp)", re.I)  # "the twelve inch": a size
_SUBJECT_TAIL = re.compile(r"\s+(?:in|on|at|for|right|now|here|left|today|though|either|themselves|itself)\b.*$", re.I)


def kind_of_the_item(subject: str | None, item: str | None) -> str | None:
    """The kind a statement names when it is not the item asked but a kind of it, as said ("12-inch"
    of a cast iron skillet, "deluxe ones", "18 volt" of a 20 volt drill, "ryobi drill" of a dewalt
    drill); None for the item itself ("10-inch" of a 10-inch skillet), no kind, or another thing
    ("batteries" of a drill)."""
    if not subject or not item:
        return None
    subject = _SUBJECT_TAIL.sub("", subject)
    said, own = words_of(subject) - _NOT_NAMING, words_of(item) - _NOT_NAMING
    if not said or said <= own or not (said & own or _A_KIND.search(subject)):
        return None
    return subject


def naming_in_stock(text: str, found: StockFound, item: str) -> int:
    """How well a stock statement names the item: the item's words in its part of the sentence, less
    the words of another kind or thing it names ("the ryobi drill" names a dewalt drill less than
    "the dewalt one")."""
    own = words_of(item) - _NOT_NAMING
    part = next((text[a:b] for a, b in _parts(text) if a <= found.start < b), text)
    subject = words_of(_SUBJECT_TAIL.sub("", found.subject or ""))
    return len((words_of(part) | subject) & own) - len(subject - own - _NOT_NAMING)


def on_the_item(said: list[tuple[str, StockFound]], item: str | None) -> list[int]:
    """Which stock statements decide for the item: all, or where they disagree, those naming it best
    (the rest may be about something else: "we don't carry cast iron skillets. we do have nonstick pans")."""
    every = list(range(len(said)))
    if not item or len({f.availability != "out_of_stock" for _, f in said}) < 2:
        return every
    named = [naming_in_stock(text, f, item) for text, f in said]
    return [i for i in every if named[i] == max(named)] if max(named) > 0 else every


def kinds_apart(said: list[tuple[str, StockFound]], item: str | None) -> list[int]:
    """Where the deciding statements are all about kinds of the item and the kinds' last words
    disagree ("the 10-inch is sold out but we have the 12-inch"): each kind's last word, in the order
    said; else none, and the item's stock is the last word on it."""
    deciding = on_the_item(said, item)
    last: dict[str, int] = {}
    for i in deciding:
        if (kind := kind_of_the_item(said[i][1].subject, item)) is None:
            return []
        last.pop(kind.lower(), None)
        last[kind.lower()] = i
    kept = sorted(last.values())
    return kept if len({said[i][1].availability != "out_of_stock" for i in kept}) > 1 else []


# -- places in a store -----------------------------------------------------------------------------------

_AISLE = re.compile(r"\b(aisle|isle|row|bay)\s+(\d{1,3}[a-z]?|[a-z]\b|" + _UNIT_WORDS + r")"
                    r"(?:[\s-]([a-h])(?=[.,!?]|$))?", re.I)
# Departments a store names without the word "department" ("it's over in plumbing").
_DEPARTMENTS = (r"plumbing|electrical|hardware|housewares|seasonal|automotive|lawn and garden|garden|paint|lumber|"
                r"bath|tools|pet supplies|grocery|produce|dairy|frozen foods?|toys|sporting goods|electronics|appliances|"
                r"furniture|patio|crafts|stationery|office supplies|cleaning supplies|home decor|kitchenware")
_KIND = r"(?:[ -](?:department|section|area|aisle|center|centre))?"
# A department named alone counts after "in", "over in", "try" or "check" ("it's over in plumbing"), not
# where someone looks or would be sent ("people look in plumbing", "talk to electrical"), nor as a
# time ("seasonal hours"); or as a whole clause ("Housewares.").
_BARE_DEPARTMENT = re.compile(
    rf"(?<!\blook )(?<!\blooks )(?<!\blooking )(?<!\bthinks it's )(?<!\bthink it's )(?<!\bshipment )"
    rf"\b(?:in|over in|try|check(?: in)?)\s+(?:the\s+)?((?:{_DEPARTMENTS}){_KIND})\b"
    r"(?!\s+(?:hours|today|right now|staff|team|guys?|people|department hours))", re.I)
# ... or as all a clause says it is ("it's not plumbing, it's electrical")
_DEPARTMENT_ALONE = re.compile(
    rf"(?:^|[,;:.]\s*)(?:(?:it'?s|it is|that'?s|that is|they'?re|they are)\s+(?:in\s+)?)?((?:{_DEPARTMENTS}){_KIND})\s*(?=[.,!?]|$)", re.I)
_END_CAP = re.compile(r"(?:\b(?:on|at|by|in|to|check|try)\s+(?:an?\s+|the\s+)?|^\s*)(end ?caps?(?: up front)?)\b", re.I)
_AREA_NAME = (r"(?:back|front|middle|rear|corner|end|left|right|far \w+)(?: \w+)? of the store"
              r"|(?!(?:near|nearby|by|next|beside|behind|past|in|at|to|try|check|see|the|across|opposite|facing)\b)"
              r"[a-z]+(?: [a-z]+)? (?:department|section|area|counter|aisle|center|centre|corner|wall)")
# After a word that points somewhere ("in", "by", "try", "check"), or opening a clause: a record is
# often the place alone ("Housewares section.").
_AREA = re.compile(rf"(?:\b(?:in|on|at|by|near|next to|behind|to|try|check|see)\s+|(?:^|[,;:.]\s*))(?:the\s+)?({_AREA_NAME})\b",
                   re.I)
# "In the back", "at the front": of the store (not "the front door" or "the back counter").
_BACK_OR_FRONT = re.compile(
    r"(?:(?<!\bask\s)(?<!\bpay\s)(?<!\bcheck\s)(?<!\bstop\s)\b(?:in|at|to|toward|towards|by|near)\s+|^\s*)the\s+(back|front|rear)\b(?!\s+(?:of|door|desk|counter|entrance|wall)\b)",
    re.I)


# Not where the item is: a place someone is put through to ("I'll call over to the garden center"), or
# a place whose hours are being told ("the garden center closes at six").
_SENT_TO = re.compile(r"\b(?:call(?:ing)?|ring(?:ing)?|transfer(?:ring)?(?: you)?|put(?:ting)? you through|connect(?:ing)? you|"
                      r"check(?:ing)? with|ask(?:ing)?|talk(?:ing)? to|speak(?:ing)? (?:to|with))(?:\s+(?:over|back|up))?"
                      r"(?:\s+(?:to|with))?\s+(?:the\s+)?$", re.I)
_ITS_HOURS = re.compile(r"\s+(?:closes|opens|is (?:open|closed)|shuts|hours|'s (?:open|closed|hours))\b", re.I)


@frozen
class PlaceFound(Found):
    location: str  # "aisle 14", "garden section", "back of the store"
    key: str  # what must match: "aisle:14" or the area words


def places(text: str) -> list[PlaceFound]:
    found: list[PlaceFound] = []
    for m in _AISLE.finditer(text):
        raw = m.group(2).lower()
        n = number(raw)
        ident = str(n) if n is not None and not raw.isdigit() and raw not in ("a",) else raw
        if raw == "a" and not re.match(r"\s*[a-z]\b", text[m.end(1):], re.I):
            continue
        ident += (m.group(3) or "").lower()  # "aisle twelve b"
        found.append(PlaceFound(m.start(), m.end(), f"aisle {ident}", f"aisle:{ident}"))
    areas = [*_AREA.finditer(text), *_BARE_DEPARTMENT.finditer(text), *_DEPARTMENT_ALONE.finditer(text), *_END_CAP.finditer(text)]
    for m in areas:
        loc = m.group(1).lower()
        if any(f.start <= m.start(1) < f.end for f in found):
            continue  # the same words read twice
        if _SENT_TO.search(text, 0, m.start(1)) or _ITS_HOURS.match(text, m.end(1)):
            continue
        found.append(PlaceFound(m.start(1), m.end(1), loc, "area:" + " ".join(w for w in loc.split() if w not in ("the", "of"))))
    for m in _BACK_OR_FRONT.finditer(text):
        word = m.group(1).lower()
        found.append(PlaceFound(m.start(1), m.end(1), f"{word} of the store", f"area:{word} store"))
    return sorted(found, key=lambda f: f.start)


# -- refusals, not knowing, confirmations, recordings ------------------------------------------------------

REFUSE = re.compile(
    r"\b((?:can't|cannot|can not|won't|will not|not able to|unable to|not allowed to|not supposed to)\b[^.?!]{0,30}"
    r"\b(?:give|share|say|tell|help|disclose|discuss|provide|answer)|don't give (?:that|this|it|those) out|no comment|"
    r"(?:that's|it's) (?:confidential|private)|not something (?:we|i) (?:can )?(?:share|give out|say)|we don't do that over the phone|"
    r"can'?t look (?:that|it|them) up|(?:don'?t|do not) do (?:stock|price|inventory) checks|"
    # sent elsewhere for it: the answer is not given on this call
    r"(?:you'?d|you will|you'?ll|you would) (?:have|need) to (?:come in|come by|stop by|check|call|look|visit|ask)|"
    r"(?:check|see|try|look at|go to|visit) (?:our|the) (?:website|web site|app|site)|(?:it'?s|that'?s|everything'?s|they'?re) (?:all )?(?:on|listed on) (?:our|the) website|"
    r"look (?:it|that) up online|i'?d rather not say|"
    # not now: "can you call back later?", "try us again tomorrow"
    r"(?:call|ring|try) (?:us |me )?(?:back|again|back again) (?:later|tomorrow|another time|some other time|in (?:a|an|half an) (?:bit|while|hour|few minutes))|(?:don'?t|do not|can'?t|cannot|won'?t) (?:give out|check|look up|share)\b"
    r"[^.?!]{0,40}\b(?:over the phone|by phone|on the phone)|just ask (?:someone|somebody|us) when you)",
    re.I,
)
UNKNOWN = re.compile(
    r"\b(i (?:don't|do not|really don't) know|no idea|no clue|not sure|i'?m not certain|couldn'?t tell (?:you|ya)|"
    r"can't tell you for sure|have no way (?:of|to) know)\b",
    re.I,
)
# A yes or no to "are you open (on Sunday)?": the question, and the replies.
ASKED_IF_OPEN = re.compile(r"\b(?:are|is) (?:you|y'?all|it|the store|the shop)(?: guys)?(?: still)? open\b|\bdo you (?:guys )?open\b", re.I)
SAYS_YES = re.compile(r"\W*(?:(?:uh|um|oh|well|so)\W+)*(?:yes|yeah|yep|yup|sure|of course|absolutely|we are|we sure are)\b", re.I)
SAYS_NO = re.compile(r"\W*(?:(?:uh|um|oh|well|sorry|so)\W+)*(?:no\b(?!\s+(?:idea|clue|problem|worries))|nope|nah|we'?re not|we are not|not on \w+|(?:we'?re |we are )?closed)\b"
                     r"(?!\s+(?:at|by|until|till|from)\b)", re.I)
NEEDS = re.compile(  # the business will not go on without a detail the request does not give
    r"\b((?:can't|cannot|can not|won't|unable to|not able to)\b[^.?!]{0,40}\bwithout\b|we (?:need|require) (?:a|an|your)\b)",
    re.I,
)
FULL = re.compile(r"\b(fully booked|no tables?|booked up|booked solid|no availability|no openings|we'?re full|completely full|"
                  r"(?:don'?t|do not) have any (?:openings|tables|availability|room)|"
                  r"nothing available|nothing open|no room)\b", re.I)
# No booking to be had at all, whatever the time: "we don't take reservations", "walk-ins only".
NO_RESERVATIONS = re.compile(
    r"\b((?:do not|don'?t|doesn'?t|can'?t|cannot) (?:take|do|accept|make) (?:reservations|bookings)|no reservations|"
    r"walk-? ?ins? only|only walk-? ?ins?|first come,? first serve[d]?|only take reservations for (?:parties|groups))\b", re.I)
CONFIRM = re.compile(
    r"\b(you'?re (?:all )?(?:booked|set|confirmed)|all set|(?:is |it's |that's )?confirmed|that's right|that is right|"
    r"we have a table|got you down|have you down|put you down|pencil(?:l?ed)? you in|see you then|we'll see you|"
    r"booked (?:you|it|that) in|(?:i'?ve|we'?ve|i have|we have|i|we) reserved|reserved (?:it |that |a table |the table )?for you|"
    r"(?:have|get) a table ready|"
    r"see you (?:on |at )?(?:mon|tue|wed|thu|fri|sat|sun|tomorrow|tonight|at \w+)\w*|"
    r"(?:we )?can do that|have a table for you)\b",
    re.I,
)
# The time asked for is not to be had ("7 is taken", "seven's no good", "nothing at 7").
NOT_FREE = re.compile(
    r"\b(?:no good|taken|not available|unavailable|(?:can'?t|cannot|can not) do|don'?t have anything|nothing (?:at|for)|"
    r"booked up|booked solid|slammed|packed|full|fully booked|no tables?|no openings|not going to work|won'?t work|doesn'?t work)\b", re.I)
# A confirmation taken back after it was given.
TAKEN_BACK = re.compile(
    r"\b(?:actually|oh wait|wait|sorry|i'?m sorry)\b[^.?!]*\b(?:full|no tables?|booked up|booked solid|"
    r"(?:can'?t|cannot|can not) (?:do|book|seat|fit|make|take)(?![^.?!]{0,25}\b(?:patio|outside|outdoors|window|booth|bar)\b)|"
    r"(?:don'?t|do not) have (?:a |any )?(?:table|room|space|anything|availability)|not (?:available|going to work|possible))\b", re.I)
_FOR_HOUR = re.compile(rf"\b(?:for|at)\s+{_HOUR}\b{_MINUTE}"
                       r"(?!\s*(?:people|persons|guests|of you|adults|kids|children|seats|tables?|at\b))", re.I)
_PARTY_SAID = re.compile(r"\b(?:(?:party of|table for|for)\s+)?(\d{1,2}|" + _UNIT_WORDS + r")"
                         r"(?:\s+(?:people|persons|guests|adults))?\b(?![:.]\d|\s*(?:[ap]\.?m\b|o'?clock|thirty|fifteen|forty))", re.I)  # not "a table for 7:30"


# The place's own hours told beside a booking ("just so you know the kitchen closes at ten"): not its time.
_HOURS_TOLD = re.compile(r"\b(?:we|they|kitchen|bar|restaurant|dining room)\s+(?:close|closes|open|opens|stop serving|stops serving)"
                         r"\s+(?:at|until|till|til|by)?\s*$", re.I)


def hours_told(sentence: str, found: ClockFound) -> bool:
    """Is the time at `found` the place's hours, not a table's ("the kitchen closes at ten")?"""
    return _HOURS_TOLD.search(clause_before(sentence, found.start)) is not None


def confirmed_clocks(sentence: str, party: int) -> list[Clock]:
    """Times a confirmation names with a bare number ("you're booked for 8", "all set for seven
    thirty"): a number after "for" or "at" that is not the party's size nor a count of people ("for
    4 at 7"), and not said to be full ("we're slammed at seven, all set for nine")."""
    out = []
    for m in _FOR_HOUR.finditer(sentence):
        n = _hour_value(m.group(1))
        minute = int(m.group(2)) if m.group(2) else _MINUTE_WORDS.get((m.group(3) or "").lower(), 0)
        if 1 <= n <= 12 and not (n == party and m.group(0).lower().startswith("for")) and minute <= 59 \
                and not NOT_FREE.search(clause_of(sentence, m.start())) and not _HOURS_TOLD.search(clause_before(sentence, m.start())):
            out.append(Clock(n, minute, None))
    return out


def parties_said(sentence: str) -> list[int]:
    """Party sizes a sentence names ("party of six", "a table for 4 people", "four people", "for 4 at 7")."""
    return [n for m in _PARTY_SAID.finditer(sentence) if (n := number(m.group(1))) is not None
            and (m.group(0).lower().lstrip().startswith(("party", "table")) or re.search(r"people|persons|guests|adults", m.group(0), re.I)
                 or (m.group(0).lower().lstrip().startswith("for") and re.match(rf"\s+at\s+(?:{_HOUR}\b|noon)", sentence[m.end():], re.I)))]


# "n't", or "nt" where the apostrophe was dropped ("dont"), never the end of "went" or "sent"
_NOT_WORD = r"(?:\bnot|n't|\b(?:do|does|did|ca|wo|is|are|was|were|could|would|should|have|has|had)nt|\bnever|\bno)"
_NEGATED = re.compile(rf"{_NOT_WORD}\s+(?:\w+\s+){{0,2}}$", re.I)


# Words that make a confirmation something else: a waitlist, an offer still to be taken ("a table
# at nine if you want it"), a condition ("if you put down a deposit", "for parties of six or more").
# Read in the confirmation's own clause: "you're all set for seven, if you want to add anyone just call
# us" is a booking; "we have a table at nine if you want it" is not yet.
_NOT_A_BOOKING = re.compile(
    r"\b(?:(?<!off the )(?<!no need for the )(?:wait ?list|waiting list)|if you (?:want|like|put|pay)|do you want|does that work|"
    r"would that work|parties of \w+ or more|only for parties)\b", re.I)
_PENDING_BEFORE = re.compile(r"\b(?:once|until|after|if|before)\b[^,;.]*$", re.I)  # "a text once it's confirmed"
# No bookings at all, said of the whole place (not "the patio is first come first served").
_NO_RESERVATIONS_OF_A_PART = re.compile(r"\b(?:patio|bar|brunch|outside|terrace|deck|counter|lunch|happy hour|parties of|groups)\b", re.I)


_PARTIES_OF = re.compile(rf"\b(?:parties|groups) of\s+({_COUNT})\s+or more\b", re.I)


def no_reservations(sentence: str, party: int | None = None) -> bool:
    """The business takes no bookings ("we don't take reservations", "walk-ins only"), not only for a
    part ("the patio is first come first served"); or only for parties larger than this one."""
    if party is not None and any((n := number(m.group(1))) is not None and party < n for m in _PARTIES_OF.finditer(sentence)):
        return True
    return any(not _NO_RESERVATIONS_OF_A_PART.search(m.group(0) + clause_of(sentence, m.end() - 1))
               for m in NO_RESERVATIONS.finditer(sentence))


def says_full(sentence: str) -> bool:
    """The business says it is full, or cannot take a time ("we're booked solid", "I can't do seven"),
    not that it is not ("we're not full at all")."""
    return any(not _NEGATED.search(clause_before(sentence, m.start()))
               for m in [*FULL.finditer(sentence), *(m for m in NOT_FREE.finditer(sentence) if clocks(clause_of(sentence, m.start()))
                                                     or re.search(rf"\b{_HOUR}\b", clause_of(sentence, m.start()), re.I))])


def confirms(sentence: str) -> bool:
    """A booking confirmed in this sentence: not asked ("Confirmed?", "Is that right?"), not denied
    ("not confirmed yet", "I can't say you're all set"), not a waitlist, an offer or a condition, and
    not where they take no bookings or are full ("that's right, we're full")."""
    if sentence.rstrip().endswith("?"):
        return False
    if no_reservations(sentence):
        return False  # "parties of six or more" is left to the party's size, which the booking judge knows
    return any(not _NEGATED.search(before := clause_before(sentence, m.start())) and not _NOT_A_BOOKING.search(clause_of(sentence, m.start()))
               and not ("confirmed" in m.group(0).lower() and _PENDING_BEFORE.search(before))
               and not (FULL.search(sentence) and m.group(0).lower().startswith("that"))
               and not TAKEN_BACK.search(sentence, m.end())  # "all set for seven, uh, actually no we can't"
               for m in CONFIRM.finditer(sentence))


RECORDING = re.compile(
    r"\b(leave (?:a|your) (?:message|name)|after the (?:tone|beep)|voice ?mail|mailbox|not available to take your call|"
    r"can'?t (?:come to|take) the phone|our (?:regular |business )?hours are|thank you for calling|press \d|"
    r"you have reached|you've reached)\b",
    re.I,
)
# An agent line that claims to be a person, or denies being automated: never allowed.
CLAIMS_HUMAN = re.compile(
    r"\b(i'?m|i am)\s+(?:a\s+)?(?:real\s+|actual\s+)?(?:person|human(?: being)?)\b|"
    r"\b(i'?m|i am)\s+not\s+(?:a|an)\s+(?:robot|bot|machine|computer|ai|automated|artificial|assistant)\b|"
    r"\b(i'?m|i am)\s+not\s+(?:automated|artificial)|\bnot\s+an?\s+(?:robot|bot|ai)\b",
    re.I,
)
HOLD_CUE = re.compile(r"\b(let me (?:check|see|look|find out)|hang on|hold on|one (?:moment|second|sec)|just a (?:moment|second|sec)|please hold)\b", re.I)


# A sentence ends at . ? or ! before a space or the end; not inside "9.30", nor after "a.m." or
# "St." when the sentence goes on in lower case or with a number ("9 a.m. to 5 p.m.").
_SENTENCE_END = re.compile(r"[.?!]+(?=\s|$)")
_ABBREVIATION = re.compile(r"(?:\b[ap]\.\s?m|\b(?:st|dr|mr|mrs|ms|no|ave|rd|blvd|approx|vs|etc))\.$", re.I)


def sentence_spans(text: str) -> Iterator[tuple[int, int]]:
    """(start, end) of each sentence, whitespace trimmed."""
    start = 0
    ends = []
    for m in _SENTENCE_END.finditer(text):
        after = text[m.end():].lstrip()
        if _ABBREVIATION.search(text, 0, m.end()) and after and (after[0].islower() or after[0].isdigit()):
            continue
        ends.append(m.end())
    for end in [*ends, len(text)]:
        a, b = start, end
        start = end
        while a < b and text[a].isspace():
            a += 1
        while b > a and text[b - 1].isspace():
            b -= 1
        if b > a:
            yield a, b


_SIZE_WORDS = frozenset(w for w, n in _UNITS.items() if " " not in w and "-" not in w and w not in ("a", "an", "no", "couple", "dozen"))


def words_of(text: str) -> set[str]:
    """Content words, for matching item names: lower-case, no short or common words, crude singular."""
    out = set()
    for w in re.findall(r"[a-z0-9][a-z0-9'-]*", text.lower()):
        if w.isdigit() or (w in _SIZE_WORDS and _SIZE_AHEAD.match(text.lower(), text.lower().find(w) + len(w))):
            out.add(str(number(w)))  # a size names the item: "12 inch" is "twelve inch", and not "10 inch"
            continue
        if len(w) < 3 or w in _COMMON:
            continue
        out.add(w[:-1] if w.endswith("s") and len(w) > 3 else w)
    return out


_COMMON = frozenset(
    "the and for you your our have has had are was were this that those these them they with any some what which "
    "when where how who why can could would will does did not yes yeah right now there here about just from into "
    "stock aisle store shelf".split()
)
