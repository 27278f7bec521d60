"""The one small vocabulary the citation check reads facts with. Pure.

It knows numbers, clock times, days and party sizes, and nothing else about English:
 - text is compared in a normal form (`normal`): lower case, plain quotes, "a.m." as "am", hyphens
   as spaces, number words as digits (text2num's `alpha2digit`: "seven thirty" is "7 30", "two
   hundred" is "200"), fillers and punctuation dropped, a transcript's contractions without their
   apostrophe ("youre", "thats", "dont") as written with it, a number word's "'s" kept on its digits ("eight
   thirty's" is "8 30's"), so "Nine to five, um, Monday-Friday." and
   "9 to 5 monday friday" read alike;
 - a clock is "7:30", "7 pm", "7.30 pm", "7 30" or "7" after a time word ("at", "until", "from ... to"),
   "noon", "midnight", "half past 7", "7 o'clock", "10 past 5", "10 to 5" after a word that takes one
   time ("we close at 10 to 5" is 4:50; "open 10 to 5" is a range), "now it's 10"; without am/pm it
   stands for both halves of the day ("9" is 9:00 or 21:00), with it for one, and a meal said with it for the meal's
   ("dinner 5 to 10" is 17:00 to 22:00). A bare number is never a clock on its own: "2033 Camden
   Avenue" and "a rating of 3.7" state no time;
 - days are weekday names (singular or plural), runs ("monday through friday", "mon - fri"),
   "weekdays", "weekends", "every day" / "daily" / "7 days a week", less the days set apart after it
   ("every day but sunday"; `days_named` keeps them), and "today", "tonight", "tomorrow";
 - a party size is a number said with people ("4 people", "party of 4", "table for 4", "4 of you").
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from functools import lru_cache

from attrs import frozen
from text_to_num import alpha2digit

WEEK = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
RELATIVE = ("today", "tomorrow")  # days said relative to the call; "tonight" is today
ALL_WEEK = frozenset(WEEK)

# -- the normal form ------------------------------------------------------------------------------------

_FILLERS = re.compile(r"\b(?:um+|uh+|uhm+|erm+|er|hmm+|ah+|eh)\b")
_MERIDIEM = re.compile(r"\b([ap])\.?\s?m\b\.?")
_HYPHEN = re.compile(r"(?<=\w)[-\u2010\u2011\u2012\u2013\u2014](?=\w)")
_DIGIT_RANGE = re.compile(r"(?<=\d)\s?[-\u2013\u2014]\s?(?=\d)")
_DAY_RANGE = re.compile(r"(?<=[a-z])\s?[-\u2013\u2014]\s?(?=(?:mon|tue|wed|thu|fri|sat|sun)[a-z]*\b)")
_PUNCT = re.compile(r"(?<!\d)[.:](?!\d)|[^\w\s:./']|(?<=\d)\.(?!\d)|(?<!\w)'|'(?!\w)")
_SPACES = re.compile(r"\s+")
# Contractions a transcript writes without the apostrophe ("youre all set", "thats two"), as written with it; only
# those that are no other word ("were", "well", "its", "id", "ill", "lets" are left as they are)
_BARE_CONTRACTION = re.compile(
    r"\b(you|they|we)re\b(?<!\bwere)|\b(that|what|there|here)s\b|\b(i|you|we|they)(ve|ll)\b(?<!\bwell)(?<!\bill)|\bim\b"
    r"|\b(do|does|did|ca|is|are|was|were|could|would|should|have|has|had|wo)nt\b")
_DOZEN = re.compile(r"\b(?:(half) )?an? dozen\b")
# A number word keeps its "'s" from text2num ("eight thirty's open", "seven's taken"): set apart for it, joined after
_NUMBER_WORD_IS = re.compile(r"\b(one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|fifteen|twenty|thirty|forty|"
                             r"fifty)'s\b")
_DIGIT_IS = re.compile(r"(?<=\d) 's\b")


# normal, normal_clauses and clocks are pure and each costs tens of microseconds a sentence; a call's
# verdict reads the same sentences several times (the record's check, the transcript's assessment,
# the conclusion at the end), so each keeps what it read last. Their results are immutable.
_MEMO = 4096


@lru_cache(maxsize=_MEMO)
def normal(text: str) -> str:
    """The normal form two wordings are compared in (see the module's header)."""
    t = text.lower().replace("\u2019", "'").replace("\u2018", "'")
    t = _DIGIT_RANGE.sub(" to ", t)
    t = _DAY_RANGE.sub(" to ", t)
    t = _HYPHEN.sub(" ", t)
    t = _BARE_CONTRACTION.sub(_with_apostrophe, t)
    t = _MERIDIEM.sub(lambda m: f" {m.group(1)}m ", t)
    t = _DOZEN.sub(lambda m: "6" if m.group(1) else "12", t)
    t = _DIGIT_IS.sub("'s", alpha2digit(_NUMBER_WORD_IS.sub(r"\1 's", t), "en", threshold=0))
    t = _PUNCT.sub(" ", t)
    t = _FILLERS.sub(" ", t)
    return _SPACES.sub(" ", t).strip()


def _with_apostrophe(m: re.Match[str]) -> str:
    w = m.group()
    if w == "im":
        return "i'm"
    if w.endswith("nt"):
        return f"{w[:-2]}n't"
    cut = 1 if w.endswith("s") else 2  # that's; you're, i've, we'll
    return f"{w[:-cut]}'{w[-cut:]}"


def tokens(text: str) -> list[str]:
    """The words of `text` in the normal form."""
    return normal(text).split()


# -- sentences and clauses --------------------------------------------------------------------------------

# A sentence ends at . ? ! before a space or the end, and at a full stop typed with no space before the next
# sentence's capital ("the reservation was made.Alcohol is not served"): never inside "a.m." or "U.S.".
_SENTENCE_END = re.compile(r"[.?!]+(?=\s|$)|(?<=[a-z]{2})[.?!]+(?=[A-Z][a-z])")
# "a.m." and "St." end no sentence when it goes on in lower case or with a number ("9 a.m. to 5 p.m.")
_ABBREVIATION = re.compile(r"(?:\b[ap]\.\s?m|\b(?:st|dr|mr|mrs|ms|no|ave|rd|blvd|approx|vs|etc))\.$", re.I)


def sentence_spans(text: str) -> Iterator[tuple[int, int]]:
    """(start, end) of each sentence of `text`, whitespace trimmed."""
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


# A clause ends at a comma or semicolon, and before "but", "except", "and" + a day: "9 to 5 on weekdays,
# 10 to 2 on saturdays" and "9 to 5 monday to friday and saturdays 10 to 2" are two clauses each.
_CLAUSE_CUT = re.compile(
    r"[,;]|\s(?=(?:but|except|other than|apart from|whereas|while)\b)|\s(?=and (?:on )?(?:" + "|".join(WEEK) + r"|week))"
)


def clauses(normal_text: str) -> list[str]:
    """The clauses of a sentence, in the normal form (commas kept by `normal_clauses`)."""
    return [part for c in _CLAUSE_CUT.split(normal_text) if c.strip() for cut in _cut_at_and(c.strip())
            for part in _cut_at_next_day(cut)]


def _cut_at_next_day(clause: str) -> list[str]:
    """'today til 5 tomorrow til 8', 'monday to friday 9 to 6 saturday 10 to 2' (a transcript with no commas): two
    clauses, each day with its own numbers. Cut before a day said right after a number, where the words before it
    name a day too and the words after it hold a number ("9 to 5 monday to friday" stays whole)."""
    found = days(clause)
    if len(found) < 2:
        return [clause]
    out, start = [], 0
    for d in found[1:]:
        head, tail = clause[start:d.start].strip(), clause[d.start:]
        if re.search(r"(?:\d|\bam|\bpm|noon|midnight)$", head) and days(head) and re.search(r"\d", tail):
            out.append(head)
            start = d.start
    return [*out, clause[start:].strip()]


_AND = re.compile(r" (?=and )")


def _cut_at_and(clause: str) -> list[str]:
    """'we open at 9 on weekdays and 10 on saturday': two clauses, each a number with its own days. Cut at an
    "and" only where the words on both sides of it each hold a number and a day; anything else stays whole."""
    out = [clause]
    for m in reversed(list(_AND.finditer(clause))):
        head, tail = out[0][:m.start()], out[0][m.end():]
        if all(re.search(r"\d", part) and _DAYS.search(part) for part in (head, tail)):
            out[0:1] = [head, tail]
    return out


@lru_cache(maxsize=_MEMO)
def normal_clauses(sentence: str) -> tuple[str, ...]:
    """A sentence's clauses, each in the normal form (cut where the words had a comma)."""
    return tuple(n for part in re.split(r"[,;]", sentence) for n in clauses(normal(part)) if n)


# -- clock times ------------------------------------------------------------------------------------------


@frozen
class Clock:
    """A time said: `hour` 0-23 when the words fix the half of the day (am/pm, a 24-hour clock,
    noon, midnight), else 1-12 with `either` set (said without am/pm)."""

    hour: int
    minute: int
    either: bool

    def means(self, hhmm: str) -> bool:
        """Could these words be the 24-hour time `hhmm`?"""
        h, m = (int(x) for x in hhmm.split(":"))
        if self.minute != m and not (self.hour == 0 and self.minute == 0 and (h, m) == (23, 59)):
            return False
        if self.either:
            return h % 12 == self.hour % 12
        return h == self.hour or (self.hour == 0 and (h, m) in ((0, 0), (23, 59)))

    def __str__(self) -> str:
        if self.either:
            return f"{self.hour}:{self.minute:02d}"
        suffix = "AM" if self.hour < 12 else "PM"
        return f"{(self.hour % 12) or 12}:{self.minute:02d} {suffix}"


def say_clock(hhmm: str) -> str:
    """'19:30' as a person says it: '7:30 PM' ('12:00 PM' is noon, '12:00 AM' midnight)."""
    h, m = (int(x) for x in hhmm.split(":"))
    return f"{(h % 12) or 12}:{m:02d} {'AM' if h < 12 else 'PM'}"


_AMPM = r"(?:\s?(am|pm))?"
_CUES = (r"(?:at|until|till|til|by|around|from|after|before|to|through|thru|between|and|opens?|closes?|open|close|closing|opening|say|is|about|"
         # a time said as what it is now: "we used to open at 9, now it's 10", "it's 9 now"
         r"now (?:it's|its|it is)|(?:it's|its|it is)(?= \d{1,2}(?: [0-5]\d)?(?: am| pm)? now\b))")
_NOT_A_TIME_AFTER = (r"(?!\s?(?:people|persons?|guests?|adults?|kids?|child|children|days?|weeks?|months?|years?|minutes?|mins?|hours?|"
                     r"dollars?|bucks|cents|percent|inch(?:es)?|feet|foot|of|pieces?|bags?|boxes?|units?|items?|in stock|left|"
                     r"seats?|tables?|more|st|nd|rd|th|star|stars|rating)\b)")
_CLOCK = re.compile(
    r"\b(?:(?P<noon>noon|midday)|(?P<midnight>midnight)"
    r"|(?P<h1>\d{1,2}):(?P<m1>\d{2})" + _AMPM.replace("(am|pm)", "(?P<a1>am|pm)") +
    r"|(?P<h2>\d{1,2})\.(?P<m2>\d{2})\s?(?P<a2>am|pm)"
    r"|(?P<h3>\d{1,2})\s?(?P<a3>am|pm)"
    r"|(?P<h4>\d{1,2}) o ?'?clock"
    r"|half past (?P<h5>\d{1,2})|quarter past (?P<h6>\d{1,2})|quarter to (?P<h7>\d{1,2})"
    r"|(?P<hn>\d{1,2}) (?:to|till|til|until|through) (?=noon\b|midnight\b)"  # "eight to noon": a range's other end
    # minutes past or to the hour: "ten past five" is 5:10; "we close at ten to five" is 4:50, but only after a word
    # that takes one time ("at", "until", "by"), since "open ten to five" and "from ten to five" are ranges
    r"|(?P<mp>5|10|20|25) (?:past|after) (?P<hp>\d{1,2})(?![:./]?\d)"
    r"|\b(?:(?<!open )(?<!opens )(?<!opening )at|until|till|til|by|before|around|about) (?P<mt>5|10|20|25) to (?P<ht>\d{1,2})"
    r"(?![:./]?\d)(?!\s?(?:am|pm)? (?:to|till|til|until)\b)"
    r"|\b" + _CUES + r" (?P<h8>\d{1,2})(?![:./]?\d|/| (?:past|after) \d)(?: (?P<m8>[0-5]\d))?" + _AMPM.replace("(am|pm)", "(?P<a8>am|pm)") + _NOT_A_TIME_AFTER +
    r")\b"
)
# "9 to 5", "9 - 5", "from 9 till 5": the other end of a range with a clock is a clock too
_RANGE = re.compile(r"(?<![\d:./])\b(\d{1,2})(?: ([0-5]\d))?(?:\s?(am|pm))? (?:to|till|til|until|through|and) (\d{1,2})(?: ([0-5]\d))?(?:\s?(am|pm))?\b"
                    + _NOT_A_TIME_AFTER)
_HALF_OF_DAY = re.compile(r"^\s?(?:in the (morning)|in the (afternoon|evening)|at (night)|(tonight))\b")


_A_COUNT_IS = re.compile(r"\b(?:people|persons|guests|diners|size|count|number)(?: will)? (?:is|be) $")


@frozen
class ClockAt:
    clock: Clock
    start: int
    end: int


def _clock(hour: int, minute: int, ampm: str | None) -> Clock | None:
    if not (0 <= minute <= 59) or hour > 24:
        return None
    if ampm is not None:
        if not 1 <= hour <= 12:
            return None
        return Clock(hour % 12 + (12 if ampm == "pm" else 0), minute, False)
    if hour == 0 or hour >= 13:
        return Clock(hour % 24, minute, False)
    return Clock(hour, minute, True)


@lru_cache(maxsize=_MEMO)
def clocks(normal_text: str) -> tuple[ClockAt, ...]:
    """Every time said in `normal_text` (in the normal form), in order."""
    found: dict[int, ClockAt] = {}
    for m in _CLOCK.finditer(normal_text):
        g = m.groupdict()
        if g["noon"]:
            c: Clock | None = Clock(12, 0, False)
        elif g["midnight"]:
            c = Clock(0, 0, False)
        elif g["h1"]:
            c = _clock(int(g["h1"]), int(g["m1"]), g["a1"])
            if c is not None and g["h1"].startswith("0"):
                c = Clock(int(g["h1"]), c.minute, False)  # "09:00" is a 24-hour clock
        elif g["h2"]:
            c = _clock(int(g["h2"]), int(g["m2"]), g["a2"])
        elif g["h3"]:
            c = _clock(int(g["h3"]), 0, g["a3"])
        elif g["h4"]:
            c = _clock(int(g["h4"]), 0, None)
        elif g["h5"]:
            c = _clock(int(g["h5"]), 30, None)
        elif g["h6"]:
            c = _clock(int(g["h6"]), 15, None)
        elif g["h7"]:
            c = _clock((int(g["h7"]) - 1) or 12, 45, None)
        elif g["hn"]:
            c = _clock(int(g["hn"]), 0, None)
        elif g["hp"]:
            c = _clock(int(g["hp"]), int(g["mp"]), None)
        elif g["ht"]:
            c = _clock((int(g["ht"]) - 1) or 12, 60 - int(g["mt"]), None)
        else:
            c = _clock(int(g["h8"]), int(g["m8"] or 0), g["a8"])
            if g["a8"] is None and _A_COUNT_IS.search(normal_text, 0, m.start("h8")):
                c = None  # "the number of people is 2": a count, not a time
        if c is not None:
            at = m.start("h8") if g["h8"] else m.start("mt") if g["mt"] else m.start()
            end = m.end("hn") if g["hn"] else m.end()
            found[at] = ClockAt(_half_of_day(c, normal_text[end:]), at, end)
    taken = [(c.start, c.end) for c in found.values()]  # "ten to five" read as 4:50 holds no range
    for m in _RANGE.finditer(normal_text):
        for h, mi, a, at, end in ((m.group(1), m.group(2), m.group(3), m.start(1), m.start(4) - 1),
                                  (m.group(4), m.group(5), m.group(6), m.start(4), m.end())):
            if at not in found and not any(a0 < at < b0 for a0, b0 in taken) and (c := _clock(int(h), int(mi or 0), a)) is not None and (
                    m.start(1) in found or m.start(4) in found or a or m.group(3) or m.group(6) or _said_as_hours(normal_text, m.start())
                    or not normal_text[m.end():].strip()):  # "like I said, nine to five.": a range that closes the words
                found[at] = ClockAt(_half_of_day(c, normal_text[end:]), at, end)
    return tuple(_of_the_meal(found[k], normal_text) for k in sorted(found))


# A meal names its half of the day for the times said with it ("dinner 5 to 10" is 5 PM to 10 PM, "lunch 11:30 to
# 2:30" 11:30 AM to 2:30 PM, "5 to 10 for dinner"): only where the words between them only join the two, never across
# other words ("breakfast from 7, and we close at 3" leaves 3 as said); after the times, only with "for" ("we open
# at 9, lunch is 12 to 2": 9 is no lunch time).
_MEAL = re.compile(r"\b(breakfast|brunch|lunch|dinner|supper)\b")
_MEAL_TO_CLOCK = re.compile(r"(?:\s*(?:is|s|'s|service|served|hours|from|runs|goes|starts?|begins?|ends?|at|to|till|til|until|"
                            r"through|and|we do|we serve|time|\d{1,2}(?::\d\d| [0-5]\d)?(?: ?[ap]m)?))*\s*")
_CLOCK_TO_MEAL = re.compile(r"(?:\s*(?:to|till|til|until|through|and|\d{1,2}(?::\d\d| [0-5]\d)?(?: ?[ap]m)?))*\s*for\s*")


def _of_the_meal(c: ClockAt, normal_text: str) -> ClockAt:
    if not c.clock.either or c.clock.hour == 12:
        return c
    before = [m for m in _MEAL.finditer(normal_text, 0, c.start) if _MEAL_TO_CLOCK.fullmatch(normal_text, m.end(), c.start)]
    after = _MEAL.search(normal_text, c.end)
    meal = before[-1].group(1) if before else (
        after.group(1) if after and _CLOCK_TO_MEAL.fullmatch(normal_text, c.end, after.start()) else None)
    if meal is None:
        return c
    h = c.clock.hour
    morning = {"breakfast": True, "brunch": h >= 8, "lunch": h >= 10}.get(meal, False)  # dinner, supper: evening
    return ClockAt(Clock(h if morning else h + 12, c.clock.minute, False), c.start, c.end)


_HOURS_CUE = re.compile(r"\b(?:open|opens|opening|close|closes|closing|hours|from|shut|shuts|weekdays?|weekends?|daily|every ?day|"
                        + "|".join(WEEK) + r")s?\b")


def _said_as_hours(normal_text: str, at: int) -> bool:
    """'9 to 5' is a time range in a sentence about opening: not '2 to 3 weeks'."""
    return _HOURS_CUE.search(normal_text[max(0, at - 40): at + 40]) is not None


def _half_of_day(c: Clock, after: str) -> Clock:
    """'7 in the evening' is 19:00: the words after a bare clock fix its half of the day."""
    if not c.either or (m := _HALF_OF_DAY.match(after)) is None:
        return c
    return Clock(c.hour % 12 + (0 if m.group(1) else 12), c.minute, False)


def is_clock(hhmm: str) -> bool:
    return re.fullmatch(r"([01]\d|2[0-3]):[0-5]\d", hhmm) is not None


# -- days -----------------------------------------------------------------------------------------------

_DAY_NAME = {
    "monday": "monday", "mondays": "monday",
    "tuesday": "tuesday", "tuesdays": "tuesday", "tues": "tuesday",
    "wednesday": "wednesday", "wednesdays": "wednesday", "weds": "wednesday",
    "thursday": "thursday", "thursdays": "thursday", "thurs": "thursday",
    "friday": "friday", "fridays": "friday", "fri": "friday",
    "saturday": "saturday", "saturdays": "saturday",
    "sunday": "sunday", "sundays": "sunday",
}
_ONE_DAY = r"(?:" + "|".join(sorted(_DAY_NAME, key=len, reverse=True)) + r")"
# "mon", "sat", "sun" and "wed" are words of their own ("the sun"); they name days only as a run's ends
_SHORT = {"mon": "monday", "tue": "tuesday", "wed": "wednesday", "thu": "thursday", "thur": "thursday", "sat": "saturday",
          "sun": "sunday"}
_RUN_DAY = r"(?:" + "|".join(sorted([*_DAY_NAME, *_SHORT], key=len, reverse=True)) + r")"
_DAYS = re.compile(
    r"\b(?:(?P<from>" + _RUN_DAY + r") (?:through|thru|to|till|til|until|and through) (?P<to>" + _RUN_DAY + r")"
    r"|(?P<one>" + _ONE_DAY + r")|(?P<weekdays>weekdays?|weeknights?|work ?days|during the week|m(?: through| thru| to) f)"
    r"|(?P<weekends>weekends?)"
    r"|(?P<all>every ?day|daily|7 days a week|(?<=open )7 days|all week|each day|every day of the week|every night|nightly|"
    r"7 nights a week|every day and night)"
    r"|(?P<rel>today|tonight|tomorrow))\b"
)
_SET_APART = re.compile(r"^\s?(?:except|but|other than|apart from|besides|excluding)(?: for)?(?: on)? ")


@frozen
class DaysAt:
    days: frozenset[str]  # weekday names, and "today" / "tomorrow"
    start: int
    end: int


def _run(a: str, b: str) -> frozenset[str]:
    names = _DAY_NAME | _SHORT
    i, j = WEEK.index(names[a]), WEEK.index(names[b])
    return frozenset(WEEK[(i + k) % 7] for k in range((j - i) % 7 + 1))


def _one(m: re.Match[str]) -> frozenset[str]:
    g = m.groupdict()
    if g["from"]:
        return _run(g["from"], g["to"])
    if g["one"]:
        return frozenset({_DAY_NAME[g["one"]]})
    if g["weekdays"]:
        return frozenset(WEEK[:5])
    if g["weekends"]:
        return frozenset(WEEK[5:])
    if g["all"]:
        return ALL_WEEK
    return frozenset({"tomorrow" if g["rel"] == "tomorrow" else "today"})


def days(normal_text: str) -> list[DaysAt]:
    """Every mention of days in `normal_text`, in order; days set apart after a run are taken out
    of it ("every day but sunday" is monday to saturday; "monday to friday except wednesday")."""
    out: list[DaysAt] = []
    matches = list(_DAYS.finditer(normal_text))
    skip: set[int] = set()
    for k, m in enumerate(matches):
        if k in skip:
            continue
        got = _one(m)
        end = m.end()
        if len(got) > 1:
            rest = normal_text[end:]
            if (apart := _SET_APART.match(rest)) is not None:
                taken: frozenset[str] = frozenset()
                pos = end + apart.end()
                for j in range(k + 1, len(matches)):
                    n = matches[j]
                    if n.start() != pos:
                        break
                    taken |= _one(n)
                    skip.add(j)
                    gap = re.match(r"(?: and| or)? ", normal_text[n.end():])
                    pos = n.end() + (gap.end() if gap else 0)
                    end = n.end()
                if taken:
                    got = got - taken
        out.append(DaysAt(got, m.start(), end))
    return out


def days_said(normal_text: str) -> frozenset[str]:
    return frozenset().union(*(d.days for d in days(normal_text)))


def days_named(normal_text: str) -> frozenset[str]:
    """Every day the words name, days set apart included ("every day except wednesday" names them all)."""
    return frozenset().union(*(_one(m) for m in _DAYS.finditer(normal_text)))


# -- numbers and party sizes --------------------------------------------------------------------------------

_NUMBER = re.compile(r"(?<![\d.:/])\d+(?:\.\d+)?(?![\d:/]|\.\d)")


def numbers(normal_text: str) -> list[float]:
    """Every number said, as a value ("3.7", "200")."""
    return [float(m.group()) for m in _NUMBER.finditer(normal_text)]


_NOT_A_PARTY_AFTER = r"(?! ?(?:am|pm|o ?clock|:|\d|minutes?|hours?|days?|weeks?|dollars?|bucks|tonight|tomorrow))"
_PARTY = re.compile(
    r"\b(?:(?P<n1>\d{1,3}) (?:people|persons|person|guests|adults|diners|of you|of us|in your party|seats|covers|pax)"
    r"|party of (?P<n2>\d{1,3})|(?:table|reservation|booking|seating) for (?P<n3>\d{1,3})" + _NOT_A_PARTY_AFTER +
    # "got you down for 7", "you're in for 7", "good for 7": the time the caller is down for ("all set for 2 at 7" is a party)
    r"|(?<!down )(?<!\bin )(?<!good )for (?P<n4>\d{1,3})" + _NOT_A_PARTY_AFTER +
    r"|(?:just )?the (?P<n5>\d) of (?:us|you|them)|party size (?:is |of )?(?P<n6>\d{1,3})"
    # a read-back's count before the meal or the time it is for, where the read-back opens: "ok, I have 2 for
    # dinner", "to confirm: 2 for 6:15 pm" (never "we open at 11 for lunch", "the deposit is 25 for dinner")
    r"|(?:^|\b(?:have|confirm|confirming|confirmed|that's|thats|so|ok|okay|sure|yes|got|booked|book|reserved)\s)"
    r"(?P<n7>\d{1,3}) for (?:dinner|lunch|breakfast|brunch|supper|today|tonight|tomorrow|" + "|".join(WEEK) +
    r"|\d{1,2}(?::\d\d)? ?[ap]m)"
    r"|(?<!maximum )(?<!minimum )(?<!max )(?<!min )number of (?:people|guests|persons|diners) (?:is |will be |of )?(?P<n8>\d{1,3}))\b"
)


def party_sizes(normal_text: str) -> list[int]:
    out = []
    for m in _PARTY.finditer(normal_text):
        value = next(v for v in m.groups() if v is not None)
        out.append(int(value))
    return out


# -- dates --------------------------------------------------------------------------------------------------

_MONTHS = ("january", "february", "march", "april", "may", "june", "july", "august", "september", "october",
           "november", "december")
_MONTH = r"(?P<month>" + "|".join(_MONTHS) + r"|jan|feb|mar|apr|jun|jul|aug|sept?|oct|nov|dec)"
_DATE = re.compile(
    r"\b(?:" + _MONTH + r" (?:the )?(?P<d1>\d{1,2})(?:st|nd|rd|th)?"
    r"|(?:the )?(?P<d2>\d{1,2})(?:st|nd|rd|th)? of " + _MONTH.replace("month", "month2") +
    r"|the (?P<d3>\d{1,2})(?:st|nd|rd|th))\b"
)


@frozen
class DateAt:
    month: int | None  # None: "the 5th", the month not said
    day: int
    start: int
    end: int


def dates(normal_text: str) -> list[DateAt]:
    """Calendar dates said: 'march 5th', 'the 5th of march', 'the 5th'."""
    out = []
    for m in _DATE.finditer(normal_text):
        g = m.groupdict()
        name = g["month"] or g["month2"]
        month = next((i + 1 for i, n in enumerate(_MONTHS) if name and n.startswith(name)), None)
        day = int(g["d1"] or g["d2"] or g["d3"])
        if 1 <= day <= 31:
            out.append(DateAt(month, day, m.start(), m.end()))
    return out


# -- what a typed fact looks like when it is said ----------------------------------------------------------


def weekday_of(word: str) -> str | None:
    """'Saturdays' -> 'saturday'; None for anything else."""
    return _DAY_NAME.get(word.strip().lower())


_NEGATION = re.compile(r"\b(?:not|no longer|never|cannot|\w+n't|cant|dont|doesnt|wont|isnt|arent|wasnt|didnt|couldnt)\b")
_NEGATION_SPARED = re.compile(r"\b(?:\w+n't|not|dont|doesnt) (?:\w+ ){0,2}(?:until|till|til)\b")


def negated(normal_clause: str) -> bool:
    """Does the clause deny what it says ("we don't open at 9")? "We don't close until 9" does not."""
    return _NEGATION.search(_NEGATION_SPARED.sub(" ", normal_clause)) is not None
