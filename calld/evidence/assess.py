"""The transcript assessment: what the business's words state when no record was accepted. Pure.

It reads with the citation check's vocabulary (calld.evidence.vocab) and never guesses:
 - hours: a business sentence that states a time (or "24/7", "24 hours") with a word of opening hours ("open",
   "close", "until", "from", a day), or a range of times ("nine to five"), not asked back ("until nine? who is this?") and not a phone
   menu's prompt, states them; a recording's greeting counts too, as a recorded line states hours;
 - aisle: a sentence after the ask that names an aisle by its number or letter ("aisle 14");
 - stock: nothing the vocabulary can read states stock, so the words are kept as candidates and the
   answer is left unconfirmed.
The typed answer of hours it states is read only where it is unambiguous: a sentence with one run of
days (or none) and one time, or one range of times; the rest keep their words (a text answer).
Agent speech is never evidence: only `ask_said` reads it, to know the request was made.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import attrs
from attrs import frozen

from calld.core import situations
from calld.core.answers import Aisle, Answer, DayRange, Hours, TextOnly
from calld.domain.questions import QuestionType
from calld.domain.transcript import Turn
from calld.evidence import vocab as v
from calld.evidence.cite import Quote, Supported, Unsupported


@frozen
class Sentence:
    turn: int
    start: int
    end: int
    text: str
    after_ask: bool  # said after the agent first spoke on the line


def business_sentences(turns: Sequence[Turn]) -> list[Sentence]:
    out: list[Sentence] = []
    asked = False
    for i, turn in enumerate(turns):
        if turn.speaker == "agent":
            asked = asked or (turn.on_line and bool(turn.text.strip()))
            continue
        out.extend(Sentence(i, a, b, turn.text[a:b], asked) for a, b in v.sentence_spans(turn.text))
    return out


def quote(turns: Sequence[Turn], s: Sentence) -> Quote:
    start_ms, end_ms = turns[s.turn].place(s.start, s.end)
    return Quote(s.turn, s.start, s.end, s.text, start_ms, end_ms)


def ask_said(ask_line: str, turns: Sequence[Turn]) -> bool:
    """Did the agent get the whole request out on the line? Most of the ask's words are in its played speech."""
    asked = set(v.tokens(ask_line))
    spoken = set(v.tokens(" ".join(t.text for t in turns if t.speaker == "agent" and t.on_line)))
    return bool(asked) and len(asked & spoken) >= 0.8 * len(asked)


# Open at every hour: "24 hours" only beside "open" ("we'll call back within 24 hours" states no hours).
_ALWAYS_SAID = re.compile(r"\b24 ?/ ?7\b|\baround the clock\b|^(?=.*\bopen\b).*\b24 hours\b")
_HOURS_WORDS = re.compile(r"\b(?:open|opens|opening|close|closes|closing|closed|hours|until|till|til|from|shut|shuts|"
                          r"24 ?/ ?7|around the clock)\b")
_AISLE = re.compile(r"\baisle (?:\d+|[a-z])\b")


def _states(s: Sentence, question: QuestionType) -> bool:
    if s.text.rstrip().endswith("?") or situations.menu_prompt(s.text) is not None:
        return False
    n = v.normal(s.text)
    if question is QuestionType.HOURS:
        times = v.clocks(n)
        return bool(times or _ALWAYS_SAID.search(n)) and bool(
            _HOURS_WORDS.search(n) or v.days_said(n) or len(times) >= 2)  # "nine to five" is hours said
    if question is QuestionType.AISLE:
        return s.after_ask and _AISLE.search(n) is not None
    return False  # stock: no word of the vocabulary states it


def find_answers(turns: Sequence[Turn], question: QuestionType) -> tuple[Quote, ...]:
    """Every business sentence that states the asked fact, in order, a later correction included."""
    return tuple(quote(turns, s) for s in business_sentences(turns) if _states(s, question))


def find_answer(turns: Sequence[Turn], question: QuestionType) -> Quote | None:
    return next(iter(find_answers(turns, question)), None)


def answered_after_ask(turns: Sequence[Turn], question: QuestionType) -> bool:
    return any(s.after_ask and _states(s, question) for s in business_sentences(turns))


def candidates(turns: Sequence[Turn], limit: int = 3) -> tuple[Quote, ...]:
    """The business's last sentences after the ask: what it said, for a person to read."""
    return tuple(quote(turns, s) for s in business_sentences(turns) if s.after_ask and s.text.strip())[-limit:]


def voicemail(turns: Sequence[Turn], machine: str | None) -> Supported | Unsupported:
    """A recorded greeting in the business's words, or the carrier's machine detection."""
    hits = [s for s in business_sentences(turns) if situations.recording(s.text) is not None]
    if hits:
        return Supported(tuple(quote(turns, s) for s in hits[:3]), "a recorded greeting")
    if machine == "machine":
        return Supported((), "the carrier detected an answering machine")
    return Unsupported("nothing the business said is a recorded greeting",
                       "if a person is on the line, talk to them; record voicemail only for a recorded greeting")


# -- the typed answer of words stated ----------------------------------------------------------------------


def _hhmm(c: v.Clock, *, opening: bool) -> str:
    """A time said without am/pm, as the business day suggests: opening 5-11 is morning, else afternoon."""
    hour = c.hour
    if c.either and c.hour != 12:
        hour = c.hour if (opening and 5 <= c.hour <= 11) else c.hour + 12
    return f"{hour % 24:02d}:{c.minute:02d}"


_CLOSING = re.compile(r"\b(?:close|closes|closing|until|till|til|shut|shuts)\b")
_OPENING = re.compile(r"\b(?:open|opens|opening|from)\b")


def read_hours(text: str) -> list[DayRange]:
    """The ranges a sentence gives, clause by clause: a clause with times and no days takes the days of
    the clause next to it that has days and no times ("Monday through Saturday, 8 to 8, and Sunday 10
    to 4"); an opening and a closing said in clauses of their own are one range ("we open at 9, and close
    at 5"). Empty when a clause holds two runs of days or two ranges of times, when clauses give two sets
    of times for no day ("lunch 11:30 to 2:30, and dinner 5 to 10"), or a clause with times is left without
    days while the sentence names days: then the words alone are the answer."""
    ranges: list[DayRange] = []
    days: tuple[str, ...] | None = None  # days said in a clause of their own, waiting for times
    times: str | None = None  # a clause of times said before its days
    times_closing: bool | None = None  # whether that clause's one time closes (None: it holds a range)
    named = bool(v.days_said(v.normal(text)) - {"today", "tomorrow"})
    ends_in_day = False  # the last clause gave a range and ended on its days: a clause of days alone goes on its list
    last_closing: bool | None = None  # whether the last clause's one time was a closing one
    for clause in _exceptions_joined(v.normal_clauses(text)):
        if ends_in_day and _DAYS_ALONE.match(clause):
            last, more = ranges[-1], v.days_said(clause)
            ranges[-1] = attrs.evolve(last, days=tuple(d for d in v.WEEK if d in last.days or d in more))
            continue  # "10 to 2 on saturdays, and sundays"; "closed monday, and tuesday"
        given = len(ranges)
        said_times = v.clocks(clause)
        # "we close at 5 on weekdays and 3 on saturdays": a clause cut at "and" with no verb of its own gives the
        # last one's kind of time
        head = clause[:said_times[0].start] if said_times else ""
        inherits = clause.startswith("and ") and not (_CLOSING.search(head) or _OPENING.search(head))
        closing_before = last_closing if inherits else None
        if len(said_times) == 1:
            last_closing = closing_before if closing_before is not None else _CLOSING.search(head) is not None
        runs = [d for d in v.days(clause) if not d.days & {"today", "tomorrow"}]
        own = tuple(d for d in v.WEEK if any(d in r.days for r in runs))
        when = "today" if "today" in v.days_said(clause) else "tomorrow" if "tomorrow" in v.days_said(clause) else None
        timed = bool(said_times) or _ALWAYS.search(clause) is not None
        one_closing = bool(last_closing) if len(said_times) == 1 else None  # the kind of a clause's one time
        if len(runs) > 1 or len(said_times) > 2:
            return []  # two readings in one clause ("weekdays and saturdays from 9 to 5 and 10 to 2"): the words answer
        if timed and (own or when):
            ranges.append(_range(clause, own, when, closing_before))
        elif timed and days is not None:
            ranges.append(_range(clause, days, None))
            days = None
        elif one_closing is not None and (filled := _filled(ranges, given, one_closing, said_times[0].clock)) is not None:
            ranges[-1] = filled  # "we open at 9 on weekdays, and close at 5"
        elif timed and times is not None:
            if one_closing is None or times_closing is None or times_closing == one_closing:
                return []  # two sets of times and no days ("lunch 11:30 to 2:30, and dinner 5 to 10"): the words answer
            # "we open at 9, and close at 5": the opening's clause first, so the range reads in order
            times = f"{clause} {times}" if times_closing else f"{times} {clause}"
            times_closing = None
        elif timed:
            times, times_closing = clause, one_closing
        elif own and times is not None:
            ranges.append(_range(times, own, None))
            times = None
        elif (own or when) and _CLOSED.search(clause):
            ranges.append(DayRange(own, None, None, closed=True, date=when))  # "closed mondays"; "closed today"
        elif own:
            days = tuple(d for d in v.WEEK if d in own or d in (days or ()))  # "monday, and tuesday, 9 to 5"
        found_days = v.days(clause)
        ends_in_day = len(ranges) > given and bool(found_days) and found_days[-1].end == len(clause)
    if times is not None:
        if named:
            return []  # times whose days cannot be told apart: the words alone answer
        ranges.append(_range(times, (), None))
    return ranges


_ALWAYS = re.compile(r"\b24 ?/ ?7\b|\baround the clock\b|\b24 hours\b")


def _filled(ranges: list[DayRange], given: int, closing: bool, clock: v.Clock) -> DayRange | None:
    """The range the clause before gave, with the one time it lacked: a clause of one time and no days
    that goes on it ("we open at 9 on weekdays, and close at 5"). None when it does not fit so."""
    if given == 0 or len(ranges) != given:
        return None
    last = ranges[-1]
    if last.closed or last.around_the_clock or (last.closes if closing else last.opens) is not None:
        return None
    if (last.opens if closing else last.closes) is None:
        return None
    at = _hhmm(clock, opening=not closing)
    return attrs.evolve(last, closes=at) if closing else attrs.evolve(last, opens=at)
_EVERY_DAY = re.compile(r"\b24 ?/ ?7\b")
_EXCEPT = re.compile(r"^(?:but|except)\b")


def _exceptions_joined(clauses: Sequence[str]) -> list[str]:
    """The clauses, with an exception cut off at its comma put back on the days it takes from ("every day,
    but sunday"; "open every day except sunday from 9 to 9"): read alone, "but sunday" would add Sunday.
    Joined only where the vocabulary then reads one run with fewer days than the clause before it, so "9 to 6, but
    sunday we're closed" and "we close at 5, but on fridays at 4" stay two."""
    out: list[str] = []
    for clause in clauses:
        before = v.days(out[-1]) if out else []
        after = v.days(joined := f"{out[-1]} {clause}") if out and _EXCEPT.match(clause) and len(before) == 1 else []
        if len(after) == 1 and after[0].days < before[0].days:
            out[-1] = joined
        else:
            out.append(clause)
    return out
_DAYS_ALONE = re.compile(r"^(?:(?:and|or|on|also|plus) )*(?:" + "|".join(v.WEEK) + r")s?(?: (?:and|or) (?:" + "|".join(v.WEEK) + r")s?)*$")
_CLOSED = re.compile(r"\b(?:closed|shut)\b")


def _range(clause: str, days: tuple[str, ...], when: str | None, closing: bool | None = None) -> DayRange:
    """`closing`: whether a clause's one time closes, when the clause does not say (it goes on the last one's)."""
    times = v.clocks(clause)
    if not times:
        # "24/7" names every day; "open 24 hours" or "around the clock" alone names none
        return DayRange(days or (v.WEEK if _EVERY_DAY.search(clause) else ()), None, None, around_the_clock=True, date=when)
    if len(times) >= 2:
        return DayRange(days, _hhmm(times[0].clock, opening=True), _hhmm(times[1].clock, opening=False), date=when)
    if closing is None:
        closing = _CLOSING.search(clause[: times[0].start]) is not None
    at = _hhmm(times[0].clock, opening=not closing)
    return DayRange(days, None if closing else at, at if closing else None, date=when)


def _last_word_per_day(ranges: Sequence[DayRange]) -> tuple[DayRange, ...]:
    """A later range for a day replaces what an earlier one said of it, and keeps the end it did not
    say ("9 to 5 weekdays. Actually on Fridays we close at 4": Friday 9 to 4)."""
    out: list[DayRange] = []
    for new in ranges:
        for k, old in enumerate(out):
            shared = tuple(d for d in old.days if d in new.days)
            if not shared or old.date != new.date:
                continue
            out[k] = attrs.evolve(old, days=tuple(d for d in old.days if d not in shared))
            if not (new.closed or new.around_the_clock or old.closed or old.around_the_clock):
                new = attrs.evolve(new, opens=new.opens or old.opens, closes=new.closes or old.closes)
        out.append(new)
    return tuple(r for r in out if r.days or r.date or not (r.opens is None and r.closes is None and not r.around_the_clock))


def read_answer(question: QuestionType, found: Sequence[Quote], item: str | None = None) -> Answer:
    """The typed answer of sentences that state it, where each reads one way; else their words alone."""
    if question is QuestionType.HOURS:
        ranges = [read_hours(q.text) for q in found]
        if ranges and all(ranges):
            return Hours(_last_word_per_day([r for rs in ranges for r in rs]))
    if question is QuestionType.AISLE:
        places = [p for q in found if (p := _place_of(q.text, item)) is not None]
        if places and len(set(places)) == 1:
            return Aisle(places[0])
    return TextOnly()


def _place_of(sentence: str, item: str | None) -> str | None:
    """The one aisle a sentence names, or of several, the one in the clause that names the item."""
    n = v.normal(sentence)
    places = [m.group() for m in _AISLE.finditer(n)]
    if len(set(places)) <= 1:
        return places[0] if places else None
    wanted = {w.rstrip("s") for w in v.tokens(item or "") if len(w) > 2}
    for clause in re.split(r",|;|\band\b|\bbut\b", n):
        if wanted and wanted <= {w.rstrip("s") for w in clause.split()} and (m := _AISLE.search(clause)):
            return m.group()
    return None
