"""Does the record cite the business? The app checks the model's citation, and only that. Pure.

Semantics come from the model, grounding from code. A terminal record carries `quotes` (the
business's own words that carry the answer) and the answer as typed fields. It is accepted when:
 1. Each quote was said: it stands in one business turn heard before the record. The match
    tolerates what transcription changes (case, punctuation, fillers, "9" against "nine": the
    normal form of calld.evidence.vocab) and a little more (rapidfuzz, score >= QUOTE_SCORE), but
    every content word and number of the quote is in the words it matched. Agent speech never counts.
 2. Each fact was said in the quotes: every time, day, date, number, party size and place of the
    typed answer stands in the quoted words, read with calld.evidence.vocab and nothing else (days
    set apart, "every day but monday", are named too). A time, or "closed", given for days stands in
    a clause that names those days (a clause with a time and no days takes the days of the clause
    beside it: "monday to saturday, 10 to 5"; a day named in several, the one naming fewest days:
    "9 to 6 daily, sunday 11 to 5"), or in a sentence that names no other days; never for a day the sentence
    names without that time ("monday to saturday 9 to 9, closed sunday" gives Sunday no 9 to 9); a time
    said only as a closing ("we close at 5, and in the summer at 8") is no opening, and the other way round; clauses are cut at
    commas, and at an "and" between two numbers each with its own days ("9 on weekdays and 10 on
    saturday"), and before a day said right after a number in a clause that opens on a day ("today til 5 tomorrow
    til 8"). A day set apart for one of its times keeps the run's other ("8 to 8 on weekdays, but on friday we stay
    open till 10": friday opens at 8). An opening and a closing said only as the ends of two different ranges are
    no one span ("lunch 11:30 to 2:30 and dinner 5 to 10" is no 11:30 to 10). No set hours stands only in a quoted
    statement that says so ("by appointment only", "there aren't set hours") where no quoted words state a time.
    A clause for "the rest of the week" or "other days" gives no hours of the days the sentence names. A
    time given for another part of the place as its subject ("the deli closes at 3") is not the business's where
    the quotes give the place's own time of that kind ("but the store's open till 9"), unless the agent asked about
    that part. A range dated today or tomorrow (and naming no days) takes those as its days. A booking's day,
    time and party may also stand in the agent's read-back that the quoted business turn answers
    ("a table for 4 at 7 on Friday, is that right?" "Yes, you're all set"); "half past" with no hour is of the hour
    said before it ("seven is gone, I put you in for half past" is 7:30). An aisle's number said bare where a place
    goes ("screws are in 14") stands for the aisle. A day the business names only to
    refuse it ("Friday's no good, but Saturday at 7, you're all set") is not the booking's day.
    Stock is read sentence by sentence, each in the parts its words turn at ("but", an answer after a wait): the last
    part that says anything is what the sentence says ("the box is empty but I found two in the back" has them; "we
    normally have those but we're out" does not); a hedge ("there might be some") says nothing, and another kind
    after a denial ("but we have the enameled ones") is not the item.
 3. Nothing later contradicts it, by a short list of high-precision signs in the quoted sentence
    or after it:
     - the clause that states the fact denies it ("we don't open at 9"); in stock, a quoted clause that
       only denies having ("we don't carry those", "we're sold out") where no quoted clause says they have
       (another store's having is none: "they have them at the store down the road");
     - a booking: the business says it could not book ("can't", "unable to", "not possible",
       "unsuccessful", "fully booked", "no tables", "we're all booked", "that time is all booked",
       "sorry, I couldn't", "that's not working", "nothing is available", ...; a failure word one letter off,
       "unsucessful", counts as the word; another thing unavailable, "the patio isn't available", is none)
       from the first quote on, about the time recorded or about no time at all, unless the business states the recorded time again after
       it with no other party or day beside it (a retried booking: the time offered, then booked);
     - a decline: a quoted clause names the time or day the agent asked for, and no other, and says it is
       fine ("we're closed Mondays, but Friday at seven is fine", "Friday at seven works");
     - a decline: a quoted clause says the booking was made ("your table is booked", "I've made the
       reservation", "you're all set", "it was successful"; a success word one letter off, "sucessful",
       counts as the word) with no failure or negation in it, in a sentence with no regret ("sorry,
       it's booked" is the business's loss of the slot, not a booking);
     - a correction: a business sentence, quoted or later, whose words after a correction cue
       ("actually", "wait", "sorry, I mean") state another value of the same kind (a time, a count, a
       party, an aisle number): "aisle 5, no wait, aisle 6" holds 6; in a quoted sentence an opening
       "sorry" is an apology; an aisle is also corrected by moving what is in it, or by "now" ("they moved
       them, it's aisle 8 now", "that was before the remodel, now they're in 8");
     - an aisle named only where it was: denied, used to be, moved from ("we moved them from 5"), said as
       "aisle 5" or as the bare number;
     - a booking cited only by the business's request to confirm it ("confirm 2 people at 7", "4 at 8,
       is that right?"): the agent's yes is not the business's word that the booking was made;
     - a booking: the business's last word on it wins. After the last words that state the record's
       party, date, day or time (the business's, or a read-back it agreed to), a business sentence
       or an agreed read-back states another party size or date, or, in words about the booking
       ("table", "book", "reserve", "confirm", or a party size: "for 2 people at 6"), another time
       or day.
Nothing else is refused: a record the code does not understand is not refused for that. A refusal
says only what was checked, quoting the business's words where it cites them.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from functools import lru_cache

from attrs import frozen
from rapidfuzz import fuzz
from rapidfuzz.distance import OSA

from calld.core import situations
from calld.core.answers import Aisle, DayRange, Hours, NoSetHours, Stock
from calld.domain.questions import QuestionType
from calld.domain.transcript import Turn
from calld.evidence import vocab as v
from calld.evidence.check import Quote

QUOTE_SCORE = 90  # rapidfuzz partial_ratio: above it, a quote differs from the words by transcription only




@frozen
class Supported:
    quotes: tuple[Quote, ...]
    why: str
    reason: str | None = None  # declined: the reason code


@frozen
class Unsupported:
    why: str  # said to the model, and journaled
    next: str  # what the model should do instead


Judgement = Supported | Unsupported

_AGAIN = "cite the business's own words in quotes, verbatim, and give only facts those words state"


# -- 1. each quote was said ------------------------------------------------------------------------------


@frozen
class _Sentence:
    turn: int
    start: int
    end: int
    text: str
    normal: str


def _sentences(turns: Sequence[Turn], turn: int) -> list[_Sentence]:
    text = turns[turn].text
    return [_Sentence(turn, a, b, text[a:b], v.normal(text[a:b])) for a, b in v.sentence_spans(text)]


_FUNCTION_WORDS = frozenset(
    "the a an and or but of to in on at for with is are was were be it its it's that this we we're i i'm you you're "
    "our your they them he she so do does did have has had just yes yeah no oh well okay ok".split()
)


def _content(words: Sequence[str]) -> list[str]:
    return [w for w in words if w not in _FUNCTION_WORDS and (any(c.isdigit() for c in w) or len(w) >= 3)]


def locate(turns: Sequence[Turn], quote: str) -> tuple[Quote, ...] | None:
    """The business sentences that hold `quote`, or None when no business turn does."""
    q = v.normal(quote)
    if not q:
        return None
    wanted = _content(q.split()) or q.split()
    best: tuple[float, list[_Sentence]] | None = None
    for i, turn in enumerate(turns):
        if turn.speaker != "business" or not turn.text.strip():
            continue
        sentences = _sentences(turns, i)
        joined, starts = "", []
        for s in sentences:
            starts.append(len(joined))
            joined += s.normal + " "
        if (at := joined.find(q)) >= 0:
            score, lo, hi = 100.0, at, at + len(q)
        else:
            found = fuzz.partial_ratio_alignment(q, joined)
            if found is None or found.score < QUOTE_SCORE:
                continue
            score, lo, hi = found.score, found.dest_start, found.dest_end
            window = joined[max(0, lo - 1): hi + 1].split()
            if any(w not in window for w in wanted):
                continue  # close in letters, not in content: "we close at 9" is not "we close at 8"
        covered = [s for s, a in zip(sentences, starts) if a < hi and a + len(s.normal) >= lo]
        if covered and (best is None or score > best[0]):
            best = (score, covered)
    if best is None:
        return None
    return tuple(_quote(turns, s) for s in best[1])


def _quote(turns: Sequence[Turn], s: _Sentence) -> Quote:
    start_ms, end_ms = turns[s.turn].place(s.start, s.end)
    return Quote(s.turn, s.start, s.end, s.text, start_ms, end_ms)


def _located(turns: Sequence[Turn], quotes: Sequence[str]) -> tuple[tuple[Quote, ...], Unsupported | None]:
    """Every quote's sentences, in the order said; or why a quote was not found."""
    if not [q for q in quotes if q.strip()]:
        return (), Unsupported("your record cites no words of the business", _AGAIN)
    found: dict[tuple[int, int], Quote] = {}
    for q in quotes:
        if not q.strip():
            continue
        where = locate(turns, q)
        if where is None:
            agent = any(t.speaker == "agent" and v.normal(q) in v.normal(t.text) for t in turns)
            whose = " (those are the agent's words, not the business's)" if agent else ""
            return (), Unsupported(f"your quote {q!r} is not in what the business said{whose}", _AGAIN)
        for x in where:
            found[(x.turn, x.start)] = x
    return tuple(found[k] for k in sorted(found)), None


# -- 2. each fact was said in the quotes ------------------------------------------------------------------


def _clock_in(normal_text: str, hhmm: str) -> v.ClockAt | None:
    return next((c for c in v.clocks(normal_text) if c.clock.means(hhmm)), None)


def _days_phrase(days: Sequence[str]) -> str:
    return ", ".join(d.capitalize() for d in days)


def _date_said(normal_text: str, date: str) -> bool:
    """A range's date ("today", "December 24", "Christmas Eve") stands in the words."""
    d = v.normal(date)
    if d in ("today", "tonight"):
        return "today" in v.days_said(normal_text)
    if d == "tomorrow":
        return "tomorrow" in v.days_said(normal_text)
    wanted = v.dates(d)
    if wanted:
        said = v.dates(normal_text)
        return all(any(s.day == w.day and (w.month is None or s.month in (None, w.month)) for s in said) for w in wanted)
    words = normal_text.split()
    return all(w in words for w in _content(d.split()) or d.split())


_AROUND_THE_CLOCK = re.compile(r"\b(?:24 ?/ ?7|24 7|24 hours|around the clock|round the clock|never close|all day and (?:all )?night)\b")


_EVERY_DAY = re.compile(r"\b24 ?/ ?7\b|\b24 7\b")  # "24/7" names every day of the week


# A bare number said in answer to the agent's question about a time is that time, of the kind asked ("What time
# do you open?" "Ten."; "How late are you open?" "Nine, usually."); and a clock corrected with "make that" is the
# number after it ("we close at nine, make it ten").
_BARE_TIME = re.compile(r"^(?:(?:about|around|at|maybe|probably|usually|normally|it's|its|oh|yeah|yes|yep|so|well|we open at|"
                        r"we close at) )*(?P<at>\d{1,2}(?: \d{2})?(?: (?:am|pm|o'?clock|oclock))?"
                        r"(?: (?:in the (?:morning|afternoon|evening)|at night|tonight|sharp))?)(?: (?:usually|or so|i think|normally|probably))?$")
_ASKS_TIME = re.compile(r"\b(?:(?:what time|when) (?:do|does|are|is|will|would)\b[^?]*?\b(?:open|opens|close|closes|opening|closing|shut)\b|"
                        r"how late|how early|(?:till|until) what|closing time|opening time)")
_ASKS_CLOSING = re.compile(r"\b(?:close|closes|closing|shut|how late|till what|until what)\b")
_MAKE_THAT = re.compile(r"\bmake (?:that|it) (\d{1,2}(?: [0-5]\d)?(?: am| pm)?)\b")


def _times_said_bare(turns: Sequence[Turn], found: Sequence[Quote]) -> dict[str, str]:
    """Times the quotes give in words the clock reading does not take alone, as "at ..." text, by the range's field
    they can stand for ("opens", "closes")."""
    out: dict[str, list[str]] = {"opens": [], "closes": []}
    for q in found:
        n = v.normal(q.text)
        asked = next((v.normal(t.text) for t in reversed(turns[:q.turn]) if t.speaker == "agent"), "")  # the question before it
        if _ASKS_TIME.search(asked) and (bare := _BARE_TIME.match(n)):
            out["closes" if _ASKS_CLOSING.search(asked) else "opens"].append(f"at {bare['at']}")
        if v.clocks(n):
            for m in _MAKE_THAT.finditer(n):
                for field in out:
                    out[field].append(f"at {m.group(1)}")
    return {field: " ".join(texts) for field, texts in out.items()}


def _check_range(r: DayRange, said: str, sentences: Sequence[Quote], bare: dict[str, str] | None = None,
                 asked: str = "") -> str | None:
    """Why this range is not in the quotes (`said`: their normal form), or None. `bare`: times said in words the
    clock reading takes only in context (_times_said_bare), by field; `asked`: the agent's words before the quotes."""
    if r.around_the_clock and not _AROUND_THE_CLOCK.search(said):
        return "open around the clock is not in your quotes"
    named = v.days_named(said) | (v.ALL_WEEK if _EVERY_DAY.search(said) else frozenset())
    missing = [d for d in r.days if d not in named]
    if missing:
        return f"{_days_phrase(missing)} is not in your quotes"
    if r.date is not None and not _date_said(said, r.date):
        return f"{r.date!r} is not in your quotes"
    if r.closed and r.days and not _closed_with_days(frozenset(r.days), sentences):
        return (f"closed stands in your quotes only beside other days than {_days_phrase(r.days)}: "
                "quote the words that say it is closed on those days")
    if r.opens is not None and r.closes is not None and (apart := _windows_apart(r.opens, r.closes, sentences)) is not None:
        return (f"{v.say_clock(r.opens)!r} and {v.say_clock(r.closes)!r} stand in your quotes in different ranges "
                f"({apart}): record each range as said")
    for field, hhmm in (("opens", r.opens), ("closes", r.closes)):
        if hhmm is None:
            continue
        if _clock_in(said, hhmm) is None:
            if bare and _clock_in(bare[field], hhmm) is not None:
                continue  # "Ten.", "nine tonight", "Saturday? Ten.": a bare answer names no day but its own
            return f"{v.say_clock(hhmm)!r} is not in your quotes"
        if not r.days and not _said_as(hhmm, field, sentences):
            other = "closing" if field == "opens" else "opening"
            return f"{v.say_clock(hhmm)!r} stands in your quotes as a {other} time, not as the {field[:-1]}ing time"
        if r.date is None and (part := _another_parts(hhmm, field, sentences, asked)) is not None:
            return (f"{v.say_clock(hhmm)!r} stands in your quotes as the {part}'s hours, not the business's: "
                    "quote the words that give the business's own")
        if r.days and not _time_with_days(hhmm, frozenset(r.days), sentences, field=field):
            return (f"{v.say_clock(hhmm)!r} stands in your quotes only beside other days than "
                    f"{_days_phrase(r.days)}: quote the words that give it for those days")
        if (not r.days and (day := _RELATIVE.get(v.normal(r.date or ""))) and not _same_both_days(sentences)
                and not _time_with_days(hhmm, frozenset({day}), sentences, also=frozenset(), field=field)):
            return (f"{v.say_clock(hhmm)!r} stands in your quotes only beside another day than {r.date}: "
                    "quote the words that give it for that day")
    return None


# a range as said, from its first time's words to its second's: "11:30 to 2:30", "5 till 10", "noon to 9"
_RANGE_JOIN = re.compile(r"(?:noon|midnight|[\d: ]+(?: ?[ap]m)?)\s*(?:o'?clock\s*)?(?:to|till|til|until|through|thru)\s*")


def _windows_apart(opens: str, closes: str, sentences: Sequence[Quote]) -> str | None:
    """Where the quotes give the opening only as the start of one range said ("lunch 11:30 to 2:30") and the closing
    only as the end of another ("dinner 5 to 10"), the two ranges as said: one span from one to the other is not what
    was said (the business is shut between). None where either time also stands on its own, or in one range."""
    windows, alone = [], []
    for s in sentences:
        for clause in v.normal_clauses(s.text):
            times = v.clocks(clause)
            paired: set[int] = set()
            for k in range(len(times) - 1):
                a, b = times[k], times[k + 1]
                if k not in paired and _RANGE_JOIN.fullmatch(clause, a.start, b.start):
                    windows.append((a.clock, b.clock))
                    paired |= {k, k + 1}
            alone.extend(t.clock for k, t in enumerate(times) if k not in paired)
    if any(c.means(opens) or c.means(closes) for c in alone):
        return None
    starts = [w for w in windows if w[0].means(opens)]
    ends = [w for w in windows if w[1].means(closes)]
    if not starts or not ends or any(w in ends for w in starts):
        return None
    return ", ".join(f"{a} to {b}" for a, b in dict.fromkeys([*starts, *ends]))


# A range's date that names a day of the quotes' own: its time must stand beside it ("today until 5, tomorrow until 9"),
# unless the words give both days the same hours ("till 5 today, and tomorrow too", "tomorrow's the same").
_RELATIVE = {"today": "today", "tonight": "today", "tomorrow": "tomorrow"}
_SAME_HOURS = re.compile(r"\b(?:too|as well|the same|same as|both days)\b")


def _same_both_days(sentences: Sequence[Quote]) -> bool:
    return any(_SAME_HOURS.search(v.normal(s.text)) for s in sentences)


_CLOSES_BEFORE = re.compile(r"\b(?:close|closes|closing|until|till|til|shut|shuts)\b")
_OPENS_BEFORE = re.compile(r"\b(?:open|opens|opening|from)\b")


def _said_as(hhmm: str, field: str, sentences: Sequence[Quote]) -> bool:
    """The time stands in a quoted clause that may give it as `field` ("in the winter we close at 5, and in the
    summer at 8" gives 8 as a closing time only)."""
    for s in sentences:
        timed = [c for c in v.normal_clauses(s.text) if v.clocks(c)]
        if any(_clock_in(c, hhmm) is not None and field in said for c, said in zip(timed, _fields_said(timed))):
            return True
    return False


def _fields_said(clauses: Sequence[str]) -> list[frozenset[str]]:
    """Which of a range's times each timed clause gives: both for two times; for one, the kind the words before it
    say ("close at 5", "open at 9", "until 10"), the last clause's for a clause cut at "and" that says none ("and 3
    on weekends"), else either."""
    out: list[frozenset[str]] = []
    for clause in clauses:
        times = v.clocks(clause)
        head = clause[:times[0].start] if times else clause
        if len(times) >= 2:
            said = frozenset({"opens", "closes"})
        elif _CLOSES_BEFORE.search(head):
            said = frozenset({"closes"})
        elif _OPENS_BEFORE.search(head):
            said = frozenset({"opens"})
        elif clause.startswith("and ") and out:
            said = out[-1]
        else:
            said = frozenset({"opens", "closes"})
        out.append(said)
    return out


# "the rest of the week", "other days": a clause for the days the sentence does not name
_OTHER_DAYS = re.compile(r"\b(?:(?:all |the |every )?other days?|the rest of the (?:week|time)|rest of the week|otherwise)\b")


def _time_with_days(hhmm: str, wanted: frozenset[str], sentences: Sequence[Quote],
                    also: frozenset[str] = frozenset({"today", "tomorrow"}), field: str | None = None) -> bool:
    """The time stands in a clause that names some of `wanted`, or in a sentence naming no other days
    (`also`: days that do not count as other ones). A day named in several clauses with times takes the
    clause that names the fewest days ("9 to 6 every day, and sunday 11 to 5": Sunday's hours are 11 to 5)."""
    for s in sentences:
        n = v.normal(s.text)
        if _clock_in(n, hhmm) is None:
            continue
        holding = [c for c in v.normal_clauses(s.text) if _clock_in(c, hhmm) is not None]
        if v.days_said(n) & wanted and holding and all(_OTHER_DAYS.search(c) for c in holding):
            continue  # "closed mondays, open 11 to 10 the rest of the week": no monday 11 to 10
        alone = not (v.days_said(n) - wanted - also) and not wanted & _set_apart_days(s.text)
        all_timed = timed = [(text, days) for text, days in _clauses_with_days(s.text) if v.clocks(text)]
        if field is not None:  # "open at 9 every day and close at 5 on weekdays": weekdays open at 9 all the same
            timed = [(text, days) for (text, days), said in zip(timed, _fields_said([t for t, _ in timed])) if field in said]
        stands = []
        spoken_of = v.days_said(n) | _set_apart_days(s.text)
        for day in wanted:
            beside = [(text, days) for text, days in timed if day in days]
            if beside:
                fewest = min(len(days) for _, days in beside)
                stands.append(any(_clock_in(text, hhmm) is not None for text, days in beside if len(days) == fewest))
            elif field is not None and any(day in days for _, days in all_timed):
                # a day set apart for its other time only keeps the run's time of this kind ("8 to 8 on weekdays, but on
                # friday we stay open till 10": friday opens at 8): a clause not set apart that names the day itself,
                # or that names no days and is said for none
                run = [text for text, days in timed if not _SET_APART.match(text)
                       and (day in v.days_said(text) or not (v.days_said(text) or days))]
                stands.append(any(_clock_in(text, hhmm) is not None for text in run))
            elif day in spoken_of:
                # a day the sentence names with no time of its own ("monday to saturday 9 to 9, closed sunday", "every
                # day but sunday, 9 to 9"): the time is not that day's
                stands.append(False)
        if stands and all(stands):
            return True
        if alone and all(stands):
            return True  # a sentence naming no other days, unless it names these only to set them apart or without the time
    return False


_CLOSED = re.compile(r"\b(?:closed|shut|not open|don't open|do not open)\b")


# Another part of the place, named as the subject of its own opening or closing ("the deli closes at 3", "kitchen
# closes at 9", "our bakery counter opens at 6", "the bar stays open till 1"): its hours are not the business's
# where the same words give the business's own ("... but the store's open till 9", "we're here till 9").
_PART_SUBJECT = re.compile(
    r"^(?:(?:but|and|so|well|oh|though|yeah|also|then|now|just|like) )*(?:the |our |your )?(?P<part>[a-z']+(?: [a-z']+)?) "
    r"(?:is |are |s |stays? |will be |'ll be )?(?:open|opens|opening|close|closes|closing|shut|shuts)\b")
_THE_PLACE = frozenset("we we're i i'm us you store store's shop shop's restaurant restaurant's place place's business "
                       "location building it it's its everything everyone hours doors door front main whole rest they "
                       "they're office".split())
_NOT_A_PART = frozenset("and but so well oh though yeah yes also then now just like usually normally generally typically always "
                        "only still sometimes we'll don't doesn't won't will do does to we'd i'd and we usually that this "
                        "which who when where what if or".split())


def _part_named(clause: str) -> str | None:
    """The part of the place a clause gives the hours of, when it names one as its subject ("the deli closes at 3")."""
    m = _PART_SUBJECT.match(clause)
    if m is None:
        return None
    words = m["part"].split()
    if any(w in _THE_PLACE or w in _NOT_A_PART or v.days_said(w) or len(w) < 3 for w in words):
        return None
    return " ".join(words)


def _subject_pieces(clause: str) -> list[str]:
    """A clause cut where a new subject starts after a time ("the store closes at 9 and the pharmacy closes at 7", "the
    cafe opens at 7 we open at 9"): pieces with no time of their own stay with the one before."""
    pieces: list[str] = []
    for piece in re.split(r" (?=(?:and )?(?:the|our|we|we're|we are)\b)", clause):
        if pieces and (not v.clocks(piece) or not v.clocks(pieces[-1])):
            pieces[-1] = f"{pieces[-1]} {piece}"
        else:
            pieces.append(piece)
    return pieces


def _another_parts(hhmm: str, field: str, found: Sequence[Quote], asked: str) -> str | None:
    """The part whose hours the time is, where the quotes give the same kind of time (opening, closing) for the place
    itself too, and the agent did not ask about that part."""
    timed = [piece for s in found for c in v.normal_clauses(s.text) for piece in _subject_pieces(c) if v.clocks(piece)]
    fields = _fields_said(timed)
    holding = [(c, f) for c, f in zip(timed, fields) if _clock_in(c, hhmm) is not None and field in f]
    parts = [_part_named(c) for c, _ in holding]
    if not holding or not all(parts):
        return None
    if not any(field in f and _part_named(c) is None for c, f in zip(timed, fields)):
        return None  # no time of the place's own beside it
    part = parts[0]
    return None if part is None or all(w in asked.split() for w in part.split()) else part


def _closed_with_days(wanted: frozenset[str], sentences: Sequence[Quote]) -> bool:
    """Closed on these days: said in a clause that names some of them, or in a sentence naming no other days."""
    for s in sentences:
        n = v.normal(s.text)
        if not _CLOSED.search(n):
            continue
        if not (v.days_said(n) - wanted - {"today", "tomorrow"}):
            return True
        if any(_CLOSED.search(text) and days & wanted for text, days in _clauses_with_days(s.text)):
            return True
    return False


_LIST_WORDS = frozenset({"and", "or", "on", "also", "plus"})


def _days_alone(clause: str, words: frozenset[str] = _LIST_WORDS) -> bool:
    """'friday and saturday', 'and on sunday': days and list words, nothing else."""
    found = v.days(clause)
    rest = clause
    for d in reversed(found):
        rest = rest[:d.start] + " " + rest[d.end:]
    return bool(found) and set(rest.split()) <= words


_OPENING_WORDS = _LIST_WORDS | {"while", "whereas", "then", "but"}


def _starts_with_days(clause: str) -> bool:
    """'sunday we're open 10 to 4', 'monday and holidays 12 to 5': the clause opens on a day."""
    found = v.days(clause)
    return bool(found) and set(clause[:found[0].start].split()) <= _LIST_WORDS


def _clauses_with_days(sentence: str) -> list[tuple[str, frozenset[str]]]:
    """The sentence's clauses with the days each is said for: a clause of days alone after one that ends
    in a day goes on its list ("on tuesday, friday and saturday"), and so does a clause that opens on a
    day after a clause of days alone ("saturday, sunday we're open 10 to 4"); a clause with a time, or "closed", and
    no days takes the days of the clause next to it that has days and no time ("monday to saturday, 10
    to 5"); days set apart from a run in the next clause are taken out of it ("every day, except monday")."""
    groups: list[tuple[str, frozenset[str]]] = []
    for clause in v.normal_clauses(sentence):
        if groups and _days_alone(clause) and (last := v.days(groups[-1][0])) and last[-1].end == len(groups[-1][0]):
            text, days = groups.pop()
            groups.append((f"{text} {clause}", days | v.days_said(clause)))
        elif groups and _days_alone(groups[-1][0], _OPENING_WORDS) and _starts_with_days(clause):
            # the list goes on into the clause that gives its time: "saturday, sunday we're open 10 to 4",
            # "while on sunday, monday and holidays it opens from 12 to 5"
            text, days = groups.pop()
            groups.append((f"{text} {clause}", days | v.days_said(clause)))
        else:
            groups.append((clause, v.days_said(clause)))
    runs = []  # each clause's own days, a run's days set apart in the next clause taken out of it
    for i, (text, days) in enumerate(groups):
        if len(days) > 1 and i + 1 < len(groups) and _SET_APART.match(groups[i + 1][0]) and (apart := v.days(groups[i + 1][0])):
            days = days - apart[0].days
        runs.append((text, days))
    out = []
    for i, (text, days) in enumerate(runs):
        if not days and (v.clocks(text) or _CLOSED.search(text)):
            beside = []
            for k in (i - 1, i + 1):
                if not 0 <= k < len(runs):
                    continue
                if not _SET_APART.match(runs[k][0]):
                    beside.append(runs[k])
                elif k == i - 1 and _FOR_THOSE.match(text):
                    beside.append(runs[k])  # "except fridays, when we close at 11": the days set apart
                elif k == i - 1 and k > 0:
                    beside.append(runs[k - 1])  # "every day but monday, 11 to 10": the run, without them
            days = next((d for t, d in beside if d and not v.clocks(t)), days)
        out.append((text, days))
    return out


# A clause that gives the days set apart just before it their own hours: "except fridays, when we close at 11"
_FOR_THOSE = re.compile(r"(?:when|where|then|on (?:those|that|which)(?: days?)?|on them)\b")


def _set_apart_days(sentence: str) -> frozenset[str]:
    """The days a sentence sets apart ("except fridays", "but monday", "except saturday 10 to 2")."""
    return frozenset().union(*(days for text, days in _clauses_with_days(sentence) if _SET_APART.match(text)))


_SET_APART = re.compile(r"(?:except|but|other than|apart from|besides|excluding)\b")


def _place_said(location: str, said: str) -> bool:
    words = said.split()
    wanted = _content(v.normal(location).split()) or v.normal(location).split()
    return bool(wanted) and all(w in words for w in wanted)


def _place_with_item(location: str, item: str, found: Sequence[Quote]) -> bool:
    """Where the quotes name the item beside a place in one clause and other places in others ("the paint is
    in aisle 3 and the claw hammers are in aisle 12"; "Screws are aisle 15. Bolts are aisle 16."), the place
    is the one beside the item. Clauses are cut where the words had a comma, and at and, but, while."""
    wanted = {_stem(w) for w in _content(v.normal(item).split())}
    if not wanted:
        return True
    parts = [p.strip() for s in found for c in v.normal_clauses(s.text)
             for p in re.split(r"\band\b|\bbut\b|\bwhile\b", c) if p.strip()]
    # a place beside the item: an aisle, or a bare number where an aisle goes ("and extension cords are in 10")
    placed = [p for p in parts if wanted <= {_stem(w) for w in p.split()}
              and re.search(r"\baisle \w+|\b(?:in|at|is|are|'s|'re) \d+\b", p)]
    return not placed or any(_place_said(location, p) or _aisle_named(location, p) for p in placed)


def _aisle_said_bare(location: str, said: str) -> bool:
    """An aisle's number said bare where a place goes, in answer to which aisle ("screws are in 14", "try 9"); never a
    time or an amount ("at 5 pm", "in 10 minutes"). Which item it is beside is _place_with_item's to check."""
    number = re.fullmatch(r"aisle (\d+)", v.normal(location))
    return number is not None and re.search(
        rf"\b(?:in|at|is|are|'s|'re|try|number) {number.group(1)}\b(?! ?(?:am|pm|o ?'?clock|:|minutes?|mins?|hours?|days?|"
        r"weeks?|dollars?|bucks|percent|inch(?:es)?|feet|foot|pieces?|left|more|in stock)\b)", said) is not None


def _aisle_named(location: str, clause: str) -> re.Match[str] | None:
    """Where the clause names the location's aisle number, as "aisle 5" or as a bare 5 ("they used to be in 5")."""
    number = _AISLE_NUMBER.search(v.normal(location))
    return re.search(rf"\b(?:aisle )?{number.group(1)}\b", clause) if number else None


def _place_denied(location: str, found: Sequence[Quote], turns: Sequence[Turn]) -> str | None:
    """The quoted sentence where the place stands, when every clause that names it denies it ("it's not in
    aisle 5 anymore, they moved it to 9"), or asks it back to answer no ("Aisle 5? No, it's seven.")."""
    named = [(s, c) for s in found for c in v.normal_clauses(s.text) if _place_said(location, c) or _aisle_named(location, c)]
    if named and all(v.negated(c) or _was_there(location, c) or _asked_back_no(s, turns) or _moved_from(location, c)
                     for s, c in named):
        return named[0][0].text
    return None


def _moved_from(location: str, clause: str) -> bool:
    """'we moved them from 5 last week': the aisle it was moved from."""
    number = _AISLE_NUMBER.search(v.normal(location))
    return number is not None and re.search(rf"\bfrom (?:aisle )?{number.group(1)}\b", clause) is not None


_ANSWERED_NO = re.compile(r"\s*(?:(?:uh|um|oh|well|hmm)[,.]? )*(?:no|nope|nah|not)\b", re.IGNORECASE)


def _asked_back_no(s: Quote, turns: Sequence[Turn]) -> bool:
    """The sentence echoes a question ("Aisle 5?") and the business's next words answer it no."""
    return s.text.rstrip().endswith("?") and _ANSWERED_NO.match(turns[s.turn].text[s.end:]) is not None


_BEFORE = re.compile(r"\b(?:used to|formerly|previously)\b")


def _was_there(location: str, clause: str) -> bool:
    """'it used to be aisle five': a place it was, said after the word that puts it in the past, with no "now"
    between (not "aisle 12, which used to be the paint aisle"; not "they used to be by the door and now they're in 5")."""
    past = _BEFORE.search(clause)
    place = re.search(r"\b" + re.escape(v.normal(location)) + r"\b", clause) or _aisle_named(location, clause)
    return past is not None and place is not None and past.start() < place.start() and "now" not in clause[past.end():place.start()].split()


def _number_said(n: int, said: str) -> bool:
    return float(n) in v.numbers(said)


# -- 3. nothing later contradicts it -----------------------------------------------------------------------

_CORRECTION = re.compile(r"\b(?:actually|wait|sorry|correction|i mean|my mistake|my bad|oops|scratch that|let me correct|rather|"
                         r"make (?:that|it)(?= (?:aisle |at )?\d))\b"
                         # a bare "no" between a value and the next: "aisle 12, no, 13"; "we've got 2, no, 3"
                         r"|(?<=\d )no\b(?= (?:it's |its |it is |aisle |at )?\d)")
_NOT_BOOKED = re.compile(
    r"\b(?:can ?not|can't|cant|couldn't|couldnt|could not|unable to|wasn't able to|were not able to|weren't able to|"
    r"not able to|not been able to|won't be able to|wouldn't let me|would not let me)\b(?: \w+){0,3} (?:book|reserve|make|do|fit|seat|accommodate|get|hold|confirm|"
    r"process|complete|place|secure|finali[sz]e|submit)\b"
    r"|\b(?:is|are|was|were|'s|'re) (?:\w+ )?full\b"  # "friday at seven is actually full"
    # an hour or a slot gone ("seven is gone", "that slot's gone"); never "it's gone through", nor another thing gone
    r"|\b(?:\d{1,2}(?: [0-5]\d)?|slot|time|table|spot|that)(?:'s| s| is| was| are| were)(?: all| already)? gone\b(?! through)"
    r"|\b(?:i|we) (?:could not|couldn't|couldnt|was unable|were unable|wasn't able|weren't able|was not able|were not able)(?: to)?$"
    # the booking verb left unsaid: "sorry, I couldn't", "we weren't able to"
    r"|\bwe(?:'re| are| re| were)(?: all| fully| completely)? booked\b(?! for you)"  # the business full: "we're all booked"
    r"|\b(?:that|this|the) (?:time|slot|hour|date|day|night|evening)(?: is| was|'s)(?: all| fully| completely| already) booked\b"
    r"(?! for you)"  # "that time is all booked"; never "you're all booked", "your table is booked"
    r"|\b(?:not possible|unsuccessful|not successful|fully booked|booked up|no tables?|no availability|not available|unavailable|"
    r"failed|no longer available|didn't go through|did not go through|won't go through|will not go through|"
    r"no (?:reservations?|bookings?)(?: (?:were|are|is))? available|no available (?:reservations?|bookings?|tables?|times?|slots?)|"
    r"there (?:seems|seemed|appears|appeared) to (?:have been|be) (?:a |some )?(?:problem|issue|error)|"
    r"there (?:was|has been) (?:a |some )?(?:problem|issue|error)|fail(?:ed)? to|(?:\w+n't|not) (?:be )?available|"
    r"no (?:reservations?|bookings?) (?:for|at) that|"
    r"(?:could not|couldn't|can ?not|can't) be (?:made|completed|processed|confirmed|booked|reserved|placed|done)|"
    r"(?:wasn't|was not|isn't|is not|weren't|were not|has not been|hasn't been) (?:successful|possible|made|done|completed|confirmed)|"
    r"nothing(?: (?:is|was|'s|s))?(?: \w+)? available|(?:didn't|did not) work|(?:that|this|it)(?:'s| is| s| was)? not working|(?:that|this|it) (?:isn't|wasn't|won't|will not) work(?:ing)?|impossible|not an? (?:table|reservation|booking) available|"
    r"(?:don't|doesn't|do not|does not) have (?:a |any )?(?:table|tables|availability)|no can do)\b"
)

# The words that carry a failure, matched tolerantly: a word one letter off ("unsucessful", "coudn't",
# "posible", "availabilty": a letter dropped, doubled, changed or two swapped) is read as the word, when it
# begins with the same two letters and is not the word with an ending of its own ("possibly", "problems").
_FAILURE_WORDS = ("couldn't", "cannot", "unable", "possible", "impossible", "successful", "unsuccessful", "available",
                  "unavailable", "availability", "problem", "failed", "tables", "wasn't", "weren't", "didn't")
_ENDING = re.compile(r"(?:s|y)$")


@lru_cache(maxsize=4096)
def _as_spelled(word: str) -> str:
    if len(word) < 6 or word in _FAILURE_WORDS:
        return word
    return next((w for w in _FAILURE_WORDS if w[:2] == word[:2] and OSA.distance(word, w) <= 1
                 and not (_ENDING.search(word) and not _ENDING.search(w))), word)


# Something else said to be unavailable ("outdoor seating isn't available", "the patio is not available tonight",
# "valet parking is unavailable"): a clause that begins with its subject, an amenity named in _AMENITY and nothing
# of the booking. Any other subject may be the booking itself ("the restaurant", "christmas eve", "the main hall").
_UNAVAILABLE = re.compile(
    r"^(?:(?:but|and|also|so|sorry|unfortunately|however|oh|well|just|though) )*(?P<thing>[a-z']+(?: [a-z']+){0,2}?) "
    r"(?:is|are|was|were|isn't|aren't|wasn't|weren't|s)(?: not)?(?: currently| really| actually| also)? (?:available|unavailable)\b"
)
_AMENITY = re.compile(
    r"\b(?:outdoor|outside|patio|terrace|rooftop|garden|sidewalk|bar|valet|parking|music|wifi|delivery|takeout|"
    r"view|window|booth|booths|karaoke|tv|dance floor|high chairs?|booster|wine|beer|alcohol|liquor|tunes|cocktails?|"
    r"menu|kids menu|gluten|vegan|vegetarian|cash|checks?|amex|dress code)\b"
)
_OF_THE_BOOKING = re.compile(
    r"\b(?:tables?|book\w*|reserv\w*|confirm\w*|times?|slots?|dates?|days?|hours?|nights?|evening|afternoon|morning|"
    r"lunch|dinner|brunch|breakfast|tonight|today|tomorrow|" + "|".join(v.WEEK) + r")\b"
)


def _not_booked(clause: str) -> bool:
    """The clause says the booking could not be made (_NOT_BOOKED), its failure words read tolerantly. An
    amenity unavailable is not the booking ("the patio is not available tonight"); seating alone is."""
    if (m := _UNAVAILABLE.match(clause)) and _AMENITY.search(m["thing"]) and not _OF_THE_BOOKING.search(m["thing"]):
        clause = clause[m.end():]
    return _NOT_BOOKED.search(clause) is not None or _NOT_BOOKED.search(" ".join(map(_as_spelled, clause.split()))) is not None


def _later_sentences(turns: Sequence[Turn], after: Quote) -> list[Quote]:
    """Business sentences said after `after` (its own turn's later sentences included)."""
    out = []
    for i in range(after.turn, len(turns)):
        if turns[i].speaker != "business":
            continue
        for s in _sentences(turns, i):
            if (i, s.start) > (after.turn, after.start):
                out.append(_quote(turns, s))
    return out


def _from_first(turns: Sequence[Turn], found: Sequence[Quote]) -> list[Quote]:
    return [*found[:1], *_later_sentences(turns, found[0])] if found else []


def _denied(found: Sequence[Quote], hhmm: str) -> str | None:
    """The clause that states the time and denies it ("we don't open at 9"), or a clause cut from it at "and" that
    gives another time with no verb of its own ("we don't open at 9 on saturdays and 10 on sundays"), or says it
    was the time once ("we used to open at 9", "until last month we opened at nine")."""
    for s in found:
        denied = False
        for clause in v.normal_clauses(s.text):
            denied = v.negated(clause) or (denied and re.match(r"and (?:on |at |from )?\d", clause) is not None)
            if (at := _clock_in(clause, hhmm)) is not None and (denied or _said_of_the_past(clause, at.start)):
                return s.text
    return None


_THE_PAST = re.compile(r"\b(?:used to|formerly|previously|until (?:last|recently)|back in|we were)\b")


def _said_of_the_past(clause: str, at: int) -> bool:
    """A word of the past before the time, with no "now" between ("we used to open at 9")."""
    past = _THE_PAST.search(clause[:at])
    return past is not None and "now" not in clause[past.end():at].split()


_AISLE_NUMBER = re.compile(r"\baisle (\d+)")


def _values(kind: str, n: str) -> list[str]:
    """The counts ("number") or aisle numbers ("aisle") stated in the normal words `n`, as `kept` holds them.
    (Times are compared by what they may mean, in _corrected.)"""
    if kind == "number":
        return [str(int(x)) for x in v.numbers(n) if x == int(x)]
    return _AISLE_NUMBER.findall(n)


def _corrected(turns: Sequence[Turn], found: Sequence[Quote], kind: str, kept: set[str],
               item: str | None = None) -> tuple[Quote, bool] | None:
    """A business sentence, from the first quoted one on, in which the business corrects a value of this kind
    to one the record does not hold: the words after a correction cue state it ("we close at nine. oh wait,
    actually seven"; "aisle 5, no wait, aisle 6"). (the sentence, whether it is one of the quotes). In a
    quoted sentence an opening "sorry" is an apology, not a correction ("sorry, we close at 9", "I'm so sorry
    but ...")."""
    if not found:
        return None
    quoted = {(q.turn, q.start) for q in found}
    for s in [*found, *_later_sentences(turns, found[-1])]:
        n = v.normal(s.text)
        inside = (s.turn, s.start) in quoted
        # An opening "sorry" in a quoted sentence is an apology where times are said ("sorry, we close at 9"); an
        # aisle or a count after it is checked like any ("Aisle 9. Sorry, aisle 10.").
        cue = next((m for m in (_MOVED_TO if kind == "aisle" else _CORRECTION).finditer(n)
                    if not (kind != "aisle" and inside and m.group() == "sorry" and _opens(n, m.start()))
                    and not (_MOVED.fullmatch(m.group()) and not _moves_the_item(n, m, item))), None)
        if cue is None:
            continue
        after = n[cue.end():]
        if kind == "aisle":
            after = re.sub(r"\bfrom (?:aisle )?\d+", "", after)  # "moved here from aisle 3": where it was, not where it is
        if cue.group().startswith("make") or _MOVED.fullmatch(cue.group()):
            # "make that three, someone just bought one", "moved them to aisle 5, and the nails are in 6": these
            # cues give one value, the first after them
            first = re.match(r"(?:\s?[^\d\s]+){0,6}?\s?(\d+(?: \d\d)?(?: am| pm)?)\b", after)
            if first is None:
                continue
            after = {"clock": "at ", "aisle": "aisle "}.get(kind, "") + first.group(1)
        if kind == "clock":
            if any(not any(c.clock.means(k) for k in kept) for c in v.clocks(after)):
                return s, inside
        elif any(x not in kept for x in _values(kind, after)):
            return s, inside
        elif kind == "aisle" and (bare := re.match(r" ?(?:it's |its |it is |in |at |(?:\w+ )?(?:to|into) )?(\d+)\b", after)) and bare.group(1) not in kept:
            return s, inside  # the number right after the cue is the aisle it corrects to: "aisle 12, actually 13"
    return None


# An aisle is also corrected by moving what is in it: "they were in aisle 5, we moved them to 8" (_moves_the_item).
_MOVED = re.compile(r"moved|relocated|switched|shifted|(?<!right )now")  # "that was before the remodel, now they're in 8"
_MOVED_TO = re.compile(_CORRECTION.pattern + r"|\b(?:" + _MOVED.pattern + r")\b")
_NOT_MOVED_YET = re.compile(r"\b(?:will|'ll|get|gets|getting|going to|gonna|supposed to|since|be|to be|might|may)(?: \w+)?$")
_MOVED_WORDS = frozenset("them it those these that they everything all of em the over to into in aisle here there down up "
                         "back now just it's its is they're are things stuff around".split())
_ANOTHER_TOPIC = re.compile(r"\b(?:if you need|if you're looking for|if you are looking for|as for|also)\b")


def _moves_the_item(n: str, cue: re.Match[str], item: str | None) -> bool:
    """'moved' corrects the aisle only when it is said of the item, or of them or it, already done: not "they're
    supposed to get moved", "since we moved in 2019", "we moved the paint to aisle 6", "if you need paint, we moved
    that to 12"."""
    if _NOT_MOVED_YET.search(n[:cue.start()].rstrip()) or _ANOTHER_TOPIC.search(n):
        return False
    before_number = re.match(r"[^\d]*", n[cue.end():]).group().split()
    named = {_stem(w) for w in _content(v.normal(item or "").split())}
    return all(w in _MOVED_WORDS or _stem(w) in named for w in before_number)
_APOLOGY_OPENERS = frozenset({"i'm", "im", "i", "am", "m", "so", "very", "really", "oh", "uh", "um", "well", "ah"})


def _opens(n: str, at: int) -> bool:
    """Does the cue at `at` open the sentence ("sorry, ...", "i'm so sorry but ...")?"""
    return set(n[:at].split()) <= _APOLOGY_OPENERS


def _correction_refusal(at: tuple[Quote, bool]) -> Unsupported:
    s, inside = at
    if inside:
        return Unsupported(f"in your quote {s.text!r} the business corrects itself",
                           "record the value the business settled on, citing the words that give it")
    return _said_after(s)


_NOT_HAD = re.compile(r"\b(?:out of stock|sold out|none left|out of those|discontinued)\b")


def _stem(word: str) -> str:
    return word[:-1] if word.endswith("s") and len(word) > 3 else word


def _item_denied(found: Sequence[Quote], item: str) -> str | None:
    """A quoted clause that names the item and denies having it ("we don't carry cast iron skillets")."""
    wanted = {_stem(w) for w in _content(v.normal(item).split())}
    for s in found:
        for clause in v.normal_clauses(s.text):
            named = {_stem(w) for w in clause.split()}
            if wanted and wanted <= named and (v.negated(clause) or _NOT_HAD.search(clause)):
                return s.text
    return None


# "We don't carry those", "we're sold out", "nope, none left": having denied with no other thing named, the
# item being the one asked about. And a clause that says they have something, which keeps such a denial from
# deciding ("we don't carry those, but we have the nonstick ones" names another thing the code cannot weigh).
_NOT_HAD_PLAINLY = re.compile(
    r"^(?:(?:no|nope|nah|sorry|unfortunately|uh|um|oh|well|but|so|yeah|actually) )*(?:"
    r"(?:we|i)(?: do| are|'re| re)? ?(?:not|don't|dont|do not|no longer|never|haven't|have not|didn't|don't currently) "
    r"(?:currently |really |actually |even )?(?:have|carry|stock|sell|got|keep|get) ?(?:any|it|them|those|these|that|this|one|ones|"
    r"any more|anymore|in stock|of those|of them|right now|at the moment|here| )*"
    r"|(?:we're|we are|we re|it's|it is|they're|they are|those are|that's|that is)? ?(?:completely |currently )?"
    r"(?:sold out|out of stock|out of those|out of them|all out|none left|all gone)(?: right now| at the moment| for now| today)?"
    r"|none left|(?:there are |there's )?(?:none|no more|nothing) (?:left|in stock|on the shelf)"
    r")$"
)
# Any word that they have something, anywhere ("there's plenty", "the warehouse has twelve"): then a denial does not
# decide. Broad on purpose: it only ever keeps a record standing.
_HAS = re.compile(r"\b(?:has|have|got|there's|there is|there are|plenty|lots|tons|bunch|in stock|on the shelf|on hand|"
                  r"in the back|available|warehouse)\b")


# What makes a clause say they have it, beyond _HAS: a plain yes ("yes, we do", "yep"), a place it is in ("aisle 3",
# "on display", "out on the floor"), some left ("3 left", "a few left"), or never running out. What keeps a clause
# from saying so: none of it ("we have none", "we've got zero"), or only later ("we'll have forty on Friday").
_YES_HAVE = re.compile(r"^(?:(?:oh|well|so|and|ok|okay) )*(?:yes|yeah|yep|yup|sure|definitely|absolutely|of course|"
                       r"we do|we sure do|sure do|we certainly do|i do)\b")
_HAVE_PLACE = re.compile(r"\b(?:aisle \w+|on display|on the (?:floor|shelf|shelves|rack|wall)|out front|in the back|from the back|"
                         r"in (?:the )?(?:stock ?room|storeroom|back ?room)|"
                         r"(?:\d+|a few|some|a couple|several|plenty) left)\b")
_NEVER_OUT = re.compile(r"\bnever (?:run |runs |ran )?out\b")
_NONE_OF_IT = re.compile(r"\b(?:none|no more|zero|nothing|not any|no \w+ left|no idea|not sure|don't know)\b|(?<![\d.])0(?![\d.])")
_ONLY_LATER = re.compile(r"\b(?:will|'ll|ll|gonna|going to|expect\w*|next (?:week|month)|tomorrow|on order|back ?order\w*|"
                         r"restock(?:ing|s)?|"
                         r"used to|coming in|by the weekend|by next)\b")
# A sentence that also says they are out, or that someone will check, gives no yes of having ("yes, we're out";
# "sure, I can check the back"; "usually in aisle 7 but the shelf is empty").
_OUT_NOW = re.compile(r"\b(?:(?:we're|we are|they're|they are) (?:all |fresh |completely |currently )?out\b(?! (?:on|front|back|there))|"
                      r"unavailable|empty|sold out|ran out|out of stock|(?:someone|somebody|a customer|a guy|a lady) (?:just )?bought (?:them|em|it|those|the last|all|the rest|every))\b"
                      r"|^(?:(?:well|oh|uh|so) )*(?:we )?had\b")  # "well, had two, someone just bought them"


# Having somewhere else: another store has it, not this one ("they have them at the hardware store down the
# road", "our other location carries those", "try the shop across the street").
# Never words that can name a place in this store ("over at the garden center", "around the corner from aisle 5",
# "the other store room"). Only the part of a clause that holds them is set aside: "we have them and so does the
# store next door" still says they have them.
_ELSEWHERE = re.compile(r"\b(?:(?:down|up|across|over) the (?:road|street)|next door|(?:other|sister) (?:store|shop|location|branch)s?\b(?! room)|"
                        r"another (?:(?:one|1) of our )?(?:store|shop|location|branch)s?\b(?! room)|elsewhere|somewhere else|"
                        r"(?:the|a) (?:[\w']+ ){0,2}(?:store|shop)s? (?:around|over|on|in|down|up|across)\b|try (?:our|the) [\w']+|"
                        r"(?<!this )(?<!our )location\b)")
_ELSEWHERE_CUT = re.compile(r"\b(?:and|but|unlike|just like|while|whereas)\b")


# A sentence's words turn at "but" ("the box is empty but I found two more in the back"), and after a wait that the
# answer follows ("let me see, yes, we have twelve"): each part is read on its own, and the last that says anything
# is what the sentence says.
_TURNS = re.compile(r"^(?:but|however|though|although|still)\b")
_ANSWER_AFTER_WAIT = re.compile(r"^(?:(?:ok|okay|alright|so|and|oh) )*(?:yes|yeah|yep|yup|ok|okay|alright|sure|found|here)\b")
# A hedge says nothing either way ("there might be some in the back"); another kind than the one denied is not the
# item ("we don't have those, but we have the enameled ones").
_MAYBE = re.compile(r"\b(?:might|maybe|possibly|perhaps|could be|may be|may have)\b")
_OTHER_KIND = re.compile(r"\b(?:the|some|these|those) (?:[\w']+ ){1,2}(?:ones|1)\b|\b(?:other|different|another) "
                         r"(?:kinds?|types?|brands?|sizes?|models?|ones?|colou?rs?|styles?)\b|\binstead\b")


def _turns_of(sentence: str) -> list[list[str]]:
    """The sentence's clauses, in the parts its words turn at (_TURNS, an answer after a wait)."""
    parts: list[list[str]] = [[]]
    for c in v.normal_clauses(sentence):
        wait = _NOT_AN_ANSWER_YET.search(c)
        rest = c[wait.end():].strip() if wait else ""
        if parts[-1] and (_TURNS.match(c) or (any(_NOT_AN_ANSWER_YET.search(p) for p in parts[-1]) and _ANSWER_AFTER_WAIT.match(c))):
            parts.append([])
        if wait and rest and _ANSWER_AFTER_WAIT.match(rest):
            parts[-1].append(c[:wait.end()])
            parts.append([rest])  # "let me see yes we have twelve": a transcript with no commas
            continue
        parts[-1].append(c)
    return [p for p in parts if p]


def _had_said(found: Sequence[Quote]) -> bool:
    return _stock_said(found)[0]


def _stock_said(found: Sequence[Quote]) -> tuple[bool, str]:
    """Whether some quoted words say they have it: a clause of having, a yes, a place it is in; or a "no" to an
    echoed denial ("out of stock? nope"). A question says nothing itself. Each sentence says what the last of
    its parts (_turns_of) that says anything says: a part that is out, waits or denies says no. A later sentence
    that says they are out now takes back an earlier having ("We have two. Well, had two, someone just bought
    them."); a later plain denial does not ("We have them. None in red though."). With it, the words from the
    last part that says they have it on (where a hedge must stand to hedge it)."""
    asked_if_out = False
    had_it, tail = False, ""
    for s in found:
        question = s.text.rstrip().endswith("?")
        said: bool | None = None
        out_now = False
        for k, part in enumerate(parts := _turns_of(s.text)):
            if question:
                asked_if_out = asked_if_out or any(_NOT_HAD.search(c) or c.startswith(("out", "sold", "none")) for c in part)
                continue
            if any((_OUT_NOW.search(c) and not _NEVER_OUT.search(c)) or _NOT_AN_ANSWER_YET.search(c) for c in part):
                said, out_now = False, out_now or any(_OUT_NOW.search(c) and not _NEVER_OUT.search(c) for c in part)
                continue
            had = denied = False
            for c in part:
                if asked_if_out and re.match(r"(?:no|nope|nah|not at all)\b", c) or _NEVER_OUT.search(c):
                    return True, " ".join(c for p in parts[k:] for c in p)
                if _ELSEWHERE.search(c):
                    c = " ".join(piece for piece in _ELSEWHERE_CUT.split(c) if not _ELSEWHERE.search(piece))
                if _NONE_OF_IT.search(c) or _ONLY_LATER.search(c) or _NOT_HAD.search(c) or v.negated(c):
                    denied = denied or bool(_NONE_OF_IT.search(c) or _NOT_HAD.search(c) or v.negated(c))
                    continue
                if _MAYBE.search(c):
                    continue
                if _HAVE_PLACE.search(c) or _HAS.search(c) or _YES_HAVE.match(c):
                    had = had or not (said is False and _OTHER_KIND.search(c))
            if had:
                said, tail = True, " ".join(c for p in parts[k:] for c in p)
            elif denied:
                said = False
        if said:
            had_it = True
        elif said is False and out_now:
            had_it = False
    return had_it, tail


# Words of not having, any of which will do for an out-of-stock record (a sentence said with no other
# cue, "Yes, we have three of those", is no way to say they are out): a denial, a none, out or sold,
# only later, only elsewhere.
_OUT_WORDS = re.compile(r"\b(?:no|nope|nah|not|none|nothing|zero|out|outta|sold|gone|went fast|last one|last 1|the last of|discontinued|"
                        r"had|bought|"
                        r"empty|bare|unavailable|back ?order\w*|on order|restocking|waiting on|shipment|truck|"
                        r"stopped (?:carrying|selling|stocking)|only (?:carry|have|stock|sell|got)|spoken for|used to|elsewhere|somewhere else|another store|"
                        r"other store)\b"
                        r"|(?<![\w.:])0(?![\w.:])")  # "zero" in the normal form ("we have zero in stock" is "we have 0 in stock")
# Words that hedge what the clerk says of having it: an unknown record may cite them beside a yes.
_UNSURE = re.compile(r"\b(?:not sure|unsure|no idea|no clue|don't know|dont know|do not know|dunno|not certain|can't tell|"
                     r"cannot tell|can't check|can't promise|cannot promise|can't vouch|can't say|"
                     r"(?:computer|system|website|inventory|screen|it) (?:says|shows|has|lists)|"
                     r"(?:should|might|may|probably) (?:have|be|still)|i think|i guess|maybe|supposed to)\b")


def _out_said(found: Sequence[Quote]) -> bool:
    """Some quoted words say they do not have it now (_OUT_WORDS, a denial, a having only later or elsewhere)."""
    for s in found:
        for n in v.normal_clauses(s.text):
            if _NOT_KNOWN.search(n):
                continue  # "I really don't know" says nothing of being out
            if _OUT_WORDS.search(n) or v.negated(n) or _ONLY_LATER.search(n) or _ELSEWHERE.search(n):
                return True
    return False


_NOT_KNOWN = re.compile(r"\b(?:don't know|dont know|do not know|not sure|no idea|no clue|dunno|unsure|not certain|can't tell|cannot tell)\b")


def _had_denied(found: Sequence[Quote]) -> str | None:
    """A quoted clause that denies having, plainly, where no quoted clause says they have anything. A question
    is no denial ("sold out? no, there's a whole pallet")."""
    clauses = [(s, c) for s in found if not s.text.rstrip().endswith("?") for c in v.normal_clauses(s.text)]
    if any(_HAS.search(c) and not v.negated(c) and not _NOT_HAD.search(c) for _, c in clauses):
        return None
    return next((s.text for s, c in clauses if _NOT_HAD_PLAINLY.match(c.strip())), None)


def _said_after(s: Quote) -> Unsupported:
    return Unsupported(f"after your quote the business said {s.text!r}",
                       "record what the business said last, citing those words")


# -- the checks, by record ---------------------------------------------------------------------------------


def check_answer(turns: Sequence[Turn], question: QuestionType, quotes: Sequence[str],
                 answer: Hours | NoSetHours | Stock | Aisle | None, *, item: str | None = None) -> Judgement:
    """An answered quick ask: its quotes and its typed answer (`item`: what a stock question asks about)."""
    found, bad = _located(turns, quotes)
    if bad is not None:
        return bad
    if (menu := next((q for q in found if situations.menu_prompt(q.text) is not None), None)) is not None:
        return Unsupported(f"your quote {menu.text!r} is a phone menu's prompt, not an answer",
                           "press or say what the menu asks, or wait for a person; then record their answer")
    said = v.normal(" ".join(quotes))
    match question, answer:
        case QuestionType.HOURS, Hours(ranges=ranges) if ranges:
            bare = _times_said_bare(turns, found)
            asked = " ".join(v.normal(t.text) for t in turns[:found[0].turn] if t.speaker == "agent")
            for r in ranges:
                if (why := _check_range(r, said, found, bare, asked)) is not None:
                    return Unsupported(why, _AGAIN)
                for hhmm in (r.opens, r.closes):
                    if hhmm is not None and not r.closed and (denial := _denied(found, hhmm)) is not None:
                        return Unsupported(f"your quote {denial!r} denies {v.say_clock(hhmm)}", _AGAIN)
            kept = {h for r in ranges for h in (r.opens, r.closes) if h is not None}
            if (later := _corrected(turns, found, "clock", kept)) is not None:
                return _correction_refusal(later)
            return Supported(found, "the hours stand in the business's words")
        case QuestionType.HOURS, NoSetHours():
            if (c := v.clocks(said)) or _AROUND_THE_CLOCK.search(said):
                return Unsupported(f"your quotes state {'a time (' + str(c[0].clock) + ')' if c else 'open around the clock'}: "
                                   "the business gave hours", "record the hours they give, as ranges, with the words that give them")
            if not any(no_set_hours_said(q.text) for q in found):
                return Unsupported(f"your quotes do not say there are no set hours ({found[-1].text!r})",
                                   "record no_set_hours citing the words that say so (by appointment only, no set hours, "
                                   "they vary, call ahead), or the hours they give as ranges")
            if (later := _corrected(turns, found, "clock", set())) is not None:
                return _correction_refusal(later)
            return Supported(found, "no set hours stands in the business's words")
        case QuestionType.HOURS, _:
            return Unsupported("an hours answer needs the hours as ranges of days and times, or no_set_hours",
                               "record the hours the business gave, as ranges, with the words that give them")
        case QuestionType.STOCK, Stock() as stock:
            if stock.availability in ("in_stock", "limited") and item and (denial := _item_denied(found, item)) is not None:
                return Unsupported(f"your quote {denial!r} says they do not have the {item}", _AGAIN)
            if stock.availability in ("in_stock", "limited") and (denial := _had_denied(found)) is not None:
                return Unsupported(f"your quote {denial!r} says they do not have it", _AGAIN)
            if stock.availability in ("in_stock", "limited") and not _had_said(found):
                return Unsupported(f"your quotes do not say they have it ({found[-1].text!r})",
                                   "record in_stock citing the business's words that say they have it, or out_of_stock if they do not")
            if stock.availability == "out_of_stock" and (not _out_said(found) or _had_said(found)):
                return Unsupported(f"your quotes do not say they are out ({found[-1].text!r})",
                                   "record out_of_stock citing the business's words that say they do not have it, or in_stock if they do")
            if stock.availability == "unknown" and (had := _stock_said(found))[0] and not _UNSURE.search(had[1]):
                return Unsupported(f"your quotes say they have it ({found[-1].text!r})",
                                   "record in_stock citing those words, or unknown citing the words that say they could not tell")
            if stock.quantity is not None and not _number_said(stock.quantity, said):
                return Unsupported(f"the quantity {stock.quantity} is not in your quotes", _AGAIN)
            for k in stock.kinds:
                if not _place_said(k.kind, said):
                    return Unsupported(f"the kind {k.kind!r} is not in your quotes", _AGAIN)
                if k.quantity is not None and not _number_said(k.quantity, said):
                    return Unsupported(f"the quantity {k.quantity} of {k.kind!r} is not in your quotes", _AGAIN)
            kept = {str(n) for n in [stock.quantity, *(k.quantity for k in stock.kinds)] if n is not None}
            if kept and (later := _corrected(turns, found, "number", kept)) is not None:
                return _correction_refusal(later)
            return Supported(found, "the stock stands in the business's words")
        case QuestionType.STOCK, _:
            return Unsupported("a stock answer needs the stock field", "record the availability the business gave")
        case QuestionType.AISLE, Aisle(location=location):
            if not _place_said(location, said) and not _aisle_said_bare(location, said):
                return Unsupported(f"the place {location!r} is not in your quotes", _AGAIN)
            if (denial := _place_denied(location, found, turns)) is not None:
                return Unsupported(f"your quote {denial!r} says it is not {location!r}", _AGAIN)
            if item and not _place_with_item(location, item, found):
                return Unsupported(f"{location!r} stands in your quotes only beside another item than the {item}", _AGAIN)
            kept = set(_AISLE_NUMBER.findall(v.normal(location)))
            if kept and (later := _corrected(turns, found, "aisle", kept, item)) is not None:
                return _correction_refusal(later)
            return Supported(found, "the place stands in the business's words")
        case _:
            return Unsupported("an aisle answer needs the aisle field, the place as said",
                               "record the place the business named, with the words that name it")


# No set hours, in the words that say so: "by appointment only", "there aren't set hours", "our hours vary", "call
# ahead". The first list is said plainly (a clause that denies it, "you don't need an appointment", "we're not
# appointment only", says the other thing); the second holds its own negation.
_NO_SET_HOURS = re.compile(r"\b(?:(?:by|with an?) appointments?|appointments? only|(?:our |the )?hours (?:vary|change|differ)|"
                           r"(?:it|that|they|schedule) (?:varies|vary|changes|depends)|varies|call (?:ahead|first|before you come))\b")
_NO_SET_HOURS_DENIED = re.compile(
    r"\b(?:no|aren't(?: any)?|are not(?: any)?|isn't(?: a)?|is not(?: a)?|don't have(?: any)?|do not have(?: any)?|don't keep(?: any)?|"
    r"have no|without) (?:set|regular|fixed|normal|posted|standard|official|real) (?:hours|schedule|times|opening hours)\b")


def no_set_hours_said(sentence: str) -> bool:
    """A statement (no question) with a clause that says the business keeps no set hours."""
    if sentence.rstrip().endswith("?"):
        return False
    return any(_NO_SET_HOURS_DENIED.search(c) or (_NO_SET_HOURS.search(c) and not v.negated(c)) for c in v.normal_clauses(sentence))


def check_declined(turns: Sequence[Turn], question: QuestionType, quotes: Sequence[str], reason: str) -> Judgement:
    """A quick ask the business would not or could not answer: the quotes were said, and they do not
    themselves state the asked fact (a time for hours, an aisle's number)."""
    found, bad = _located(turns, quotes)
    if bad is not None:
        return bad
    said = v.normal(" ".join(q.text for q in found))
    if question is QuestionType.HOURS and (c := v.clocks(said)):
        return Unsupported(f"your quotes state a time ({c[0].clock}): the business did answer",
                           "record answered, with those words and the hours they give")
    if question is QuestionType.AISLE and re.search(r"\baisle \d+", said):
        return Unsupported("your quotes name an aisle: the business did answer",
                           "record answered, with the place they named")
    return Supported(found, "the business's words say it would not or could not answer", reason)


def check_booked(turns: Sequence[Turn], quotes: Sequence[str], *, party: int, time: str) -> Judgement:
    """A booked table: the quotes were said, the party and the time stand in them (or in the agent's
    read-back a quoted turn answers), and the business did not say after them that it could not book."""
    found, bad = _located(turns, quotes)
    if bad is not None:
        return bad
    readback = _readbacks(turns, found)
    said = _hour_filled(v.normal(" ".join(quotes)), [x.clock for x in v.clocks(readback)])
    both = f"{said} {readback}"
    t = v.normal(time)
    times = [c.clock for c in v.clocks(t)]
    if not times and not _place_said(time, both):
        # a time without a clock ("the early sitting") stands in the words as a place does: word for word
        return Unsupported(f"{time!r} is not in your quotes", _AGAIN)
    for c in times:
        if not any(_same(c, x.clock) for x in v.clocks(both)):
            return Unsupported(f"{str(c)!r} is not in your quotes", _AGAIN)
    for d in sorted(v.days_said(t) - v.days_said(both)):
        return Unsupported(f"{d.capitalize()} is not in your quotes", _AGAIN)
    for d in v.dates(t):
        if not any(s.day == d.day and (d.month is None or s.month in (None, d.month)) for s in v.dates(both)):
            return Unsupported(f"the date in {time!r} is not in your quotes", _AGAIN)
    if party not in v.party_sizes(both):
        return Unsupported(f"a party of {party} is not in your quotes", _AGAIN)
    if all(_asks_to_confirm(q.text) for q in found):
        return Unsupported(f"your quotes only ask to confirm the booking ({found[-1].text!r}); whether it was made is in "
                           "what the business said after the agent answered",
                           "record booked citing the business's words after that answer, or book_declined if it could not book")
    said_from_first = [(s, k, clause) for s in _from_first(turns, found) for k, clause in enumerate(v.normal_clauses(s.text))]
    for at, (s, _, clause) in enumerate(said_from_first):
        if not _not_booked(clause) and not v.negated(clause):
            continue
        if any(not any(_same(x, c) for c in times) for x in _clocks_of(clause)):
            continue  # about another time ("7 is gone, but 8 works", "7:30 instead, 7 was full")
        if _not_booked(clause):
            if _restated(said_from_first[at + 1:], times, party, t):
                continue  # retried: the time was offered or confirmed again after the failure
            return _said_after(s) if s != found[0] else Unsupported(f"your quote {s.text!r} says it could not book", _AGAIN)
        if v.clocks(clause):
            return Unsupported(f"your quote {s.text!r} denies {time}", _AGAIN)
    if (later := _corrected(turns, found, "clock", {_hhmm(c) for c in times})) is not None:
        return _correction_refusal(later)
    if (overruled := _overruled(turns, found, party=party, times=times, when=t)) is not None:
        return overruled
    if not any(_affirms_booking(q.text) for q in found):
        # The agent's question can carry the party and the time; only the business can say yes to it.
        return Unsupported(f"your quotes do not say the booking was made ({found[-1].text!r})",
                           "record booked citing the business's words that confirm the table, or book_declined if it could not book")
    if (other := _other_value_stated(said, times, t)) is not None:
        return other
    return Supported(found, "the booking stands in the business's words")


# A person's plain yes to the caller's booking ("sure, see you then", "got you down for 7", "perfect, that
# works"): with _MADE, what says the table was given. Never a question ("sure, what name?") nor a wait
# ("ok, let me check"): those come before the answer, not as it.
_AFFIRMED = re.compile(
    r"^(?:(?:oh|well|so|and|ok|okay|alright|all right|great|perfect) )*(?:yes|yeah|yep|yup|sure|certainly|absolutely|definitely|"
    r"of course|perfect|great|wonderful|excellent|lovely|done|no problem|you got it|will do|sounds good|that works|works|noted|"
    r"(?:that|the|this)(?: time)? works|"
    r"booked|reserved|confirmed|all booked|all set|got it|all done|that's fine|fine|(?:that's|that is|thats) (?:right|correct)|correct|exactly|(?:that|it)(?:'s| is) (?:booked|reserved|confirmed|done)|"
    r"is (?:booked|reserved|confirmed|done|ok|okay|fine))"  # said with no subject, as a speaker of another language may
    r"(?: (?:thing|thanks|thank you|for you|then|no problem|that works|we can do that|we have that|we have you|done))*$"
    r"|\b(?:see you|got you down|have you down|put you down|(?:put|pencil(?:led)?|squeeze|fit|book|booked|reserved|got) you in\b|"
    r"(?:booked|reserved) you\b|you(?:'re| re| are) (?:in|on the books|booked in|down|good for)\b|on the books\b|that works\b|"
    r"works (?:for us|fine|great)\b|we can do (?:that|it)\b|(?:the|that|this|your) table(?:'s| is) yours\b|we(?:'ll| will) have (?:a|the|your) table\b|we(?:'ve| have) got you\b)"
)
# Said to the caller, of the caller's booking, in any order of words: "I have confirmed those reservations for
# you", "you should be all set", "you are hereby reserved", "we've booked you for 8". Never of a time or of the
# business ("7 is booked solid", "we're all booked", "it's booked already").
_CONFIRMED_TO_YOU = re.compile(
    r"\b(?:you(?:'re| re| are)?|i(?:'ve| ve| have)?|we(?:'ve| ve| have)|your (?:table|reservations?|booking|seats?))\b"
    r"(?: [\w':]+){0,8} (?:confirmed|booked|reserved|all set|set|secured|scheduled|good to go|taken care of)\b(?! (?:solid|up|out|full))"
    r"|\byou got it\b|\bi got you\b(?! (?:on|a|the|another))"
    r"|\b(?:i|we)(?:'ve| ve| have)? (?:put|pencil(?:l?ed)|got|squeezed|fit) you (?:in|down)\b"  # "I've put you in for 7:30 instead"
    r"|^(?:(?:sure|sure thing|ok|okay|alright|great|yes|yeah|yep) )*got you (?:down )?for\b"  # "sure thing, got you for two at 7:15"
    # the booking as done, said in the perfect ("it's been booked", "it is done", "it went through") or of the attempt
    r"|\b(?:it|that|this|everything)(?:'s| s| is| has| was)?(?: all)?(?: been)? (?:booked|reserved|confirmed|made|done|set up|all set|"
    r"taken care of|finali[sz]ed)\b(?! (?:solid|up|out|full|already|by))(?<!\bit booked)(?<!\bit's booked)(?<!\bit s booked)"
    r"(?<!\bit is booked)(?<!\bthat's booked)(?<!\bthat is booked)"
    r"|\b(?:it|that|your (?:reservation|booking|request))(?: has| have)? (?:went|gone|go) through\b"
    r"|\b(?:i|we)(?: was| were|'ve been| have been)? (?:successful|succeeded|able to (?:book|reserve|get))\b"
    r"|\b(?:reservation|booking|appointment)(?: has| have| was| is)?(?: been)?(?: successfully)? "
    r"(?:booked|made|set up|taken care of|taken place|complete|completed|successful|confirm|confirmed|reserved)\b(?! (?:solid|up|out|full))"
    r"|\bi(?: have|'ve| ve|'ve got| got)? (?:your|that|the|a) (?:reservation|booking|table|appointment)(?: set up| for you| booked)\b"
    r"|\b(?:set|booked|reserved) (?:it )?(?:up )?for you\b|\byou have it set up\b|\b(?:procedure|process) is complete\b"
    r"|\b(?:the|your) table(?: for \d+)? has been (?:booked|reserved)\b(?! by)"
)
# Words about someone else's table, a list or a machine: no yes to the caller ("you're set for the waitlist",
# "I just booked the last table for another party", "it went through to voicemail").
_NOT_YOURS = re.compile(r"\b(?:another|other|someone else|somebody else|wait ?list|waiting list|voicemail|"
                        r"(?:every|all(?: the| our)?|any|no) (?:tables?|reservations?|bookings?))\b")
_NOT_AN_ANSWER_YET = re.compile(r"\b(?:let me (?:check|see|ask|look|find)|hold on|hang on|(?:one|1) (?:moment|second|sec|minute)|just a (?:moment|second|sec|minute)|"
                                r"call you back|check (?:with|on|for)|i'll (?:check|ask|see if|see what|see whether)|i can (?:check|ask|look)|"
                                r"(?:have|need|had) to (?:check|ask|look|see|go (?:look|check)))\b")  # "I'd have to ask my manager"


def _affirms_booking(sentence: str) -> bool:
    """The business's sentence says the booking was made, or says yes to it."""
    clauses = v.normal_clauses(sentence)

    def confirmed(c: str) -> bool:
        # each statement of the clause on its own: "your reservation is confirmed and they don't serve alcohol"
        return not _NOT_YOURS.search(c) and (_made(c) or any(
            _CONFIRMED_TO_YOU.search(part) is not None and not v.negated(part) for part in _AND.split(c)))

    if any(confirmed(c) for c in clauses):
        return True  # "you're all set for 7, anything else?" says so, question and all
    if any(_PARTY_RESERVED.search(c) and not _NOT_YOURS.search(c) and not any(_REGRET.search(x) for x in clauses[max(k - 1, 0):k + 1])
           for k, c in enumerate(clauses)):
        return True  # "we're all good, table for two at seven is reserved"; not after "sorry"
    if sentence.rstrip().endswith("?") or any(_NOT_AN_ANSWER_YET.search(c) or _NOT_YOURS.search(c) for c in clauses):
        return False  # a yes to a wait, or to a place on the list ("sure, I can put you on the waitlist")
    # A bare yes counts only as the whole sentence ("sure, that works"; "yep, no problem"): a yes with more
    # words is a yes to those ("yes, we're open Friday at 8", "no problem, just walk in").
    yes = [c for c in clauses if (_AFFIRMED.search(c) is not None or _yes_with_facts(c)) and not v.negated(c)]
    return bool(yes) and all(c in yes or _facts_only(c) or _FILLER.fullmatch(c) for c in clauses)


# beside a yes, words that say nothing more: "ok cool", "yes ma'am" (a term of address)
_FILLER = re.compile(r"(?:(?:ok|okay|alright|all right|great|perfect|so|well|oh|and|yes|yeah|yep|sure|cool|right|"
                     r"ma am|maam|sir|hon|honey|dear|buddy|my friend) ?)+")


def _yes_with_facts(clause: str) -> bool:
    """A bare yes with the booking's facts after it, in one clause: "yes, it's booked for two at 7 on Friday"."""
    words = clause.split()
    return any(_AFFIRMED.fullmatch(" ".join(words[:k])) is not None and _facts_only(" ".join(words[k:]))
               for k in range(1, len(words)))


_FACT_WORDS = frozenset({"a", "the", "table", "party", "for", "at", "on", "of", "and", "am", "pm", "people", "person", "persons",
                         "reservation", "booking", "o'clock", "oclock",
                         "guests", "guest", "this", "next", "evening", "night", "tonight", "today", "tomorrow", "so", "that's", "thats"})


def _facts_only(clause: str) -> bool:
    """A clause that only says the booking's facts back ("four people", "Saturday at 8:30"): no word of its own."""
    return all(w in _FACT_WORDS or w.rstrip("s") in v.WEEK or w.replace(":", "").isdigit() for w in clause.split())


def _other_value_stated(said: str, times: Sequence[v.Clock], when: str) -> Unsupported | None:
    """The business's own quoted words (`said`, normal) name a time, or a day, and none is the record's: what
    the agent asked for is not what was given ("sure, two at eight, you're all set" after "two at 7?")."""
    stated = [x.clock for x in v.clocks(said)]
    if times and stated and not any(_same(c, x) for c in times for x in stated):
        return Unsupported(f"your quotes give {stated[-1]}, not {times[0]}", _AGAIN)
    wanted = v.days_said(when)
    # a day named only to refuse it is not given ("Friday's no good, but Saturday at seven, you're all set")
    named = frozenset().union(*(v.days_said(c) for c in v.normal_clauses(said) if not _refuses(c))) or v.days_said(said)
    if wanted and named and not wanted & named:
        return Unsupported(f"your quotes give {sorted(named)[0].capitalize()}, not {sorted(wanted)[0].capitalize()}", _AGAIN)
    return None


_REFUSED = re.compile(r"\b(?:no good|full|packed|slammed|booked (?:solid|up|out)|all booked|closed|shut|no room|nothing|taken)\b")


def _refuses(clause: str) -> bool:
    """The clause says no to what it names ("we're closed fridays", "friday's no good", "we can't do 7")."""
    return v.negated(clause) or _not_booked(clause) or _REFUSED.search(clause) is not None


_ABOUT_THE_BOOKING = re.compile(r"\b(?:table|book\w*|reserv\w*|confirm\w*)\b")


def _about_the_booking(n: str) -> bool:
    """Words about a booking: they name a table, booking or confirming, or a party size ("for 2 people")."""
    return _ABOUT_THE_BOOKING.search(n) is not None or bool(v.party_sizes(n))


def _overruled(turns: Sequence[Turn], found: Sequence[Quote], *, party: int, times: Sequence[v.Clock],
               when: str) -> Unsupported | None:
    """The business's last word on the party, the date, the day and the time wins: after the last
    words that state the record's value (the business's, or a read-back it agreed to), words that
    state another value of the same kind: any other party size or date; another time or day only
    in words about the booking, or beside a party size ("we close at 10" after a table at 7 is no
    other time; "for 2 at 6" is)."""
    readback = set(_readback_turns(turns, found))
    said: list[tuple[str, Unsupported]] = []  # in the order said: (normal words, the refusal they would give)
    for i, turn in enumerate(turns):
        if turn.speaker == "business":
            said.extend((s.normal, _said_after(_quote(turns, s))) for s in _sentences(turns, i))
        elif i in readback:
            said.append((v.normal(turn.text), Unsupported(f"after your quote the business agreed to {turn.text!r}",
                                                          "record what the business agreed to last, citing those words")))
    dates = v.dates(when)

    def party_said(n: str) -> tuple[bool, bool]:  # (the record's value said, another said)
        sizes = v.party_sizes(n)
        return party in sizes, bool(sizes) and party not in sizes

    def time_said(n: str) -> tuple[bool, bool]:
        said_clocks = [x.clock for x in v.clocks(n)]
        same = [any(_same(c, x) for x in said_clocks) for c in times]
        return all(same), bool(said_clocks) and not any(same) and _about_the_booking(n)

    def date_said(n: str) -> tuple[bool, bool]:
        said_dates = v.dates(n)
        same = any(d.day == w.day and (w.month is None or d.month in (None, w.month)) for d in said_dates for w in dates)
        return same, bool(said_dates) and not same

    def days_said(kind: frozenset[str]) -> Callable[[str], tuple[bool, bool]]:
        wanted = v.days_said(when) & kind  # weekdays, or today / tomorrow: each compared with its own kind

        def check(n: str) -> tuple[bool, bool]:
            named = v.days_said(n) & kind
            return bool(named & wanted), bool(named) and not named & wanted and _about_the_booking(n)
        return check

    kinds = [party_said, time_said, *([date_said] if dates else []),
             *(days_said(k) for k in (v.ALL_WEEK, frozenset(v.RELATIVE)) if v.days_said(when) & k)]
    for kind in kinds:
        last = max((k for k, (n, _) in enumerate(said) if kind(n)[0]), default=None)
        if last is not None and (refusal := next((r for n, r in said[last + 1:] if kind(n)[1]), None)) is not None:
            return refusal
    return None


def _restated(after: Sequence[tuple[Quote, int, str]], times: Sequence[v.Clock], party: int, when: str) -> bool:
    """Does a business clause after a failure state the recorded time again, with no other party or day
    beside it (the rest of its sentence from it on)? A retried booking's offer or confirmation."""
    for s, k, clause in after:
        if not all(any(_same(c, x.clock) for x in v.clocks(clause)) for c in times):
            continue
        rest = " ".join(v.normal_clauses(s.text)[k:])
        parties, days, dates = v.party_sizes(rest), v.days_said(rest), v.dates(rest)
        if parties and party not in parties:
            continue
        if days and v.days_said(when) and not days & v.days_said(when):
            continue
        if dates and v.dates(when) and not any(d.day == w.day for d in dates for w in v.dates(when)):
            continue
        return True
    return False


_HOUR_AS_SUBJECT = re.compile(r"^(?:(?:but|and|so|oh|well|sorry|though) )*(\d{1,2})(?: ([0-5]\d))?(?: on \w+| tonight| tomorrow)? "
                              r"(?:is|was|s|'s|are|were|works|work|would work)\b|^(?:(?:but|and|so|oh|well|sorry|though) )*(\d{1,2})(?: ([0-5]\d))?'s\b")


def _clocks_of(clause: str) -> list[v.Clock]:
    """The times a clause says, a bare hour as its subject among them ("7 was full", "seven's taken", "eight works",
    "nine on friday is fine")."""
    out = [x.clock for x in v.clocks(clause)]
    if not out and (m := _HOUR_AS_SUBJECT.match(clause)) and 1 <= int(hour := m.group(1) or m.group(3)) <= 12:
        out.append(v.Clock(int(hour), int(m.group(2) or m.group(4) or 0), True))
    return out


# "half past", "quarter past", "quarter to" with no hour after them are of the hour said last before them ("seven is
# gone, I put you in for half past" is 7:30), or else of the hour the agent asked for.
_NO_HOUR = re.compile(r"\b(?:half|quarter) (?:past|after)\b(?! \d)|\bquarter (?:to|till|til)\b(?! \d)")


def _hour_filled(n: str, before: Sequence[v.Clock] = ()) -> str:
    """The normal words `n` with the hour written after each "half past" that has none (_NO_HOUR): the last time
    said before it in `n` (a bare hour as a clause's subject counts: "seven is gone"), else the last of `before`."""
    for m in reversed(list(_NO_HOUR.finditer(n))):
        said = [x for clause in v.clauses(n[:m.start()]) for x in _clocks_of(clause)] or list(before)
        if said:
            n = f"{n[:m.end()]} {(said[-1].hour % 12) or 12}{n[m.end():]}"
    return n


def _hhmm(c: v.Clock) -> str:
    return f"{c.hour:02d}:{c.minute:02d}"


def _same(a: v.Clock, b: v.Clock) -> bool:
    """Could two times said be the same time ("7" and "7 pm" can; "7 am" and "7 pm" cannot)?"""
    return a.means(_hhmm(b)) or b.means(_hhmm(a))


def _readbacks(turns: Sequence[Turn], found: Sequence[Quote]) -> str:
    """The agent's question just before each quoted business turn: what a plain "yes, that's right"
    agrees to. Only a question: an agent's request answered by "we're full" was read back to nobody."""
    return " ".join(v.normal(turns[k].text) for k in _readback_turns(turns, found))


def _readback_turns(turns: Sequence[Turn], found: Sequence[Quote]) -> list[int]:
    out = []
    for q in found:
        k = q.turn - 1
        while k >= 0 and turns[k].speaker != "agent":
            k -= 1
        if k >= 0 and turns[k].on_line and "?" in turns[k].text:
            out.append(k)
    return out


# A request to confirm states no booking ("confirm 2 people at 11:45 on march 1st", "please confirm the details:
# ...", "a table for 4 at 8, is that right?", "shall I book 4 at 8?"): the agent's yes to it is the agent's word,
# and whether the booking was made is in what the business says next. A request: a clause that begins by asking
# to confirm, or a question whose last clause asks ("..., is that right?"; not "..., anything else?"). A
# sentence that says the booking was made is never one.
_CONFIRM_REQUEST = re.compile(r"^(?:(?:ok|okay|so|and|then|now|great|perfect|alright|please|kindly|just|can|could|would|"
                              r"will|you|me)\s+)*(?:confirm|verify)\b")


def _asks_to_confirm(sentence: str) -> bool:
    clauses = v.normal_clauses(sentence)
    if not clauses or _MADE.search(v.normal(sentence)):
        return False
    return (any(_CONFIRM_REQUEST.match(c) for c in clauses)
            or (sentence.rstrip().endswith("?") and _ASKED.match(clauses[-1]) is not None))


# The booking was made, said of the caller's booking ("your table is booked", "reservation complete",
# "I've made the reservation", "you're all set", "it was successful", "a table will be held for you");
# never of a time or a table alone ("sorry, 7 is booked"), nor of the business ("we're booked up")
_MADE = re.compile(
    r"\b(?:reservations?|booking|table)(?: (?:is|was|are|were|has|have|had|is has))?(?: now| just)?(?: successfully)?(?: been)?(?: successfully| just)? "
    r"(?:made|booked|reserved|confirmed|placed|complete|completed|done|secured|successful|a success|accepted|"
    r"scheduled|registered|set|all set|all lined up)\b(?! (?:solid|up|out|full))"
    # the caller's own booking, with the words that say which before its verb: "your reservation at drakes is all lined up"
    r"|\byour (?:reservations?|booking|table|seats?)(?: (?:at|for|on)(?: [\w']+){1,3}){0,3} (?:is|was|are|were|has been|have been)"
    r"(?: now| just)?(?: successfully)? (?:made|booked|reserved|confirmed|placed|complete|completed|done|secured|successful|"
    r"a success|set|all set|all lined up)\b(?! (?:solid|up|out|full))"
    r"|\b(?:reservation|booking) (?:went|has gone|got) (?:through|though)\b|\b(?:reserved|booked|made|confirmed) successfully\b"
    r"|\bi(?: have|'ve| ve| did)?(?: successfully| successful| now| just| went ahead and)? (?:made|booked|reserved|placed|secured|confirmed|"
    r"completed|finished|registered|confirm)(?: you| for you)? (?:(?:your|the|a|that|this) (?:table|reservation|booking)|it\b|you in\b)"
    r"|\b(?:i|we)(?: have|'ve| ve)? recorded (?:your|the) (?:table|reservation|booking)\b(?! request)"
    r"|\bi(?: was| have| 've|'ve)?(?: successfully)? (?:able|managed) to(?: successfully)? (?:book|reserve|make|confirm|complete|place|secure)\b"
    # said of the attempt, as the whole clause: "it was successful", "that one worked" (never "it worked last time")
    r"|^(?:(?:ok|okay|great|good news|yes|yep|so|and) )*(?:it|that|this)(?: one| 1)?(?: was| is|'s| has been|'s been) "
    r"(?:a success|successful|successfully (?:booked|reserved|made|placed))$"
    r"|^(?:(?:ok|okay|great|good news|yes|yep|so|and) )*(?:that|this|(?:your|the) (?:reservation|booking))(?: one| 1)? (?:worked|succeeded)$"
    r"|\byou(?: are|'re| re)(?: now)? (?:all set|good to go|booked|confirmed|reserved|set for (?:a |your |the )?(?:reservation|table|booking))\b"
    r"|\beverything(?:'s| is) all set\b|\b(?:booked|reserved) (?:it )?for you\b"
    r"|\b(?:a|the|your) table (?:will be|is being|has been|is) (?:held|saved|kept) for you\b"
    r"|\b(?:table|reservation|booking)(?: has been| is| was)? (?:saved|held|reserved|booked|made) (?:in|under) your name\b"
    r"|\byou(?: have|'ve| ve)? successfully (?:booked|reserved|made|secured)\b"
    r"|\byou(?: now| do)? (?:have|got)(?: yourself)?(?: a| your)?(?: successful| confirmed)? (?:table|reservations?|booking)\b"
    r"(?! (?:available|free|open|already))"
)
# Success words as a hurried transcript or typist spells them ("sucessful", "conifrmed", "reservtion"): read as
# the word, by the failure words' rule (_as_spelled), before _MADE looks again.
_SUCCESS_WORDS = ("successful", "successfully", "confirmed", "reservation", "reserved")


@lru_cache(maxsize=4096)
def _as_success_spelled(word: str) -> str:
    if len(word) < 6 or word in _SUCCESS_WORDS:
        return word
    # never a word that is the start of one ("reserve", "confirm": another tense), nor a plural of another
    return next((w for w in _SUCCESS_WORDS if w[:2] == word[:2] and not w.startswith(word)
                 and OSA.distance(word, w) <= (2 if len(w) >= 10 else 1)
                 and not (_ENDING.search(word) and not _ENDING.search(w))), word)


def _made(clause: str) -> bool:
    """The clause says the booking was made (_MADE), its success words read tolerantly."""
    return _MADE.search(clause) is not None or _MADE.search(" ".join(map(_as_success_spelled, clause.split()))) is not None


# The caller's table named by its party, and its time or day, before the verb: "table for two at seven is reserved",
# "your booking for 4 on friday is confirmed". The party names whose table it is; a bare "the table at 7 is reserved"
# may be the slot taken, and stays unread. A regret in its clause or the one before ("sorry, the table for two at
# seven is reserved") may say the same of another's table: _affirms_booking and the decline's spare leave it then.
_FACT_WORD = r"(?:\d{1,2}(?::\d\d)?|am|pm|at|on|for|this|next|tonight|tomorrow|today|people|persons|guests|o'?clock|" + "|".join(v.WEEK) + ")"
_PARTY_RESERVED = re.compile(
    r"\b(?:table|reservation|booking) for \d{1,3}(?: " + _FACT_WORD + r"){0,6} (?:is|has been|'s|s)(?: now| all)? "
    r"(?:reserved|booked|confirmed|set)\b(?! (?:solid|up|out|full|by|for|already))")


_AND = re.compile(r"\b(?:and|so|then)\b")  # "your table is booked and they don't serve wine": two statements
_ASKED = re.compile(r"(?:is|was|are|were|has|have|had|did|do|does|can|could|shall|should|would|will)\b")
_NONE_MADE = re.compile(r"\bno (?:\w+ )?(?:reservations?|bookings?|tables?)\b")
# Regret in the sentence that says "made" makes it no plain word of success ("sorry, it's booked", "regretfully,
# your reservation was made ..."): a decline citing it is not refused for it.
_REGRET = re.compile(r"\b(?:sorry|unfortunately|regretfully|regret|afraid|apologi[sz]e)\b")


# A booking made, as a person on the phone says so to the caller ("we'll see you at 7", "got you down for two",
# "I'll put you in for 8", "you're on the books", "your table's booked", a bare "reserved."): what a decline
# cannot cite. Narrower than a yes (_AFFIRMED): "sure" or "that works" can open a refusal.
_MADE_FOR_YOU = re.compile(
    r"\b(?:see you (?:at|then|on|tonight|tomorrow|soon|\d)|got you down|have you down|put you (?:in|down)|pencil(?:led)? you in|"
    r"(?:booked|reserved) you\b|you(?:'re| re| are) (?:on the books|in for|booked|all booked|all set|confirmed|good to go)|on the books|"
    r"table(?:'s| s) (?:booked|reserved|confirmed|all set)|(?:is|'s| s) all yours)\b"
    r"|^(?:booked|reserved|confirmed|all booked|all set)$|\byou(?:'re| re| are) in$"  # "sure, you're in."
)


# "We'll see you Friday", "see ya this Saturday", "looking forward to seeing you Fri": a booking made, but only
# in a sentence that says nothing else of the booking: not a hope or an offer ("we'd love to see you Saturday
# instead", "we could see you Sunday"), not a walk-in ("just come in and we'll see you Friday"), not a failure ("we're full Friday, see you next time").
_SEE_YOU_ON = re.compile(r"\b(?:see|seeing) (?:you|ya|y'?all|y all)(?: guys| all| both| two)? (?:(?:this|next|on) )?"
                         r"(?:(?:mon|tues|wednes|thurs|fri|satur|sun)day|fri|sat|sun|weekend)\b")
_NOT_A_BOOKING_YET = re.compile(r"\b(?:hope|hoping|love|could|can|maybe|if|would|instead|walk ins?|(?:first|1st) come|come (?:in|by|on in)|stop by|drop (?:by|in)|swing by)\b|'d\b")


def _seen_on_a_day(sentence: str) -> bool:
    n = v.normal(sentence)
    return (_SEE_YOU_ON.search(n) is not None and _NOT_A_BOOKING_YET.search(n) is None and not v.negated(n)
            and not _not_booked(n))


def check_book_declined(turns: Sequence[Turn], quotes: Sequence[str], *, alternative_offered: str | None) -> Judgement:
    """No booking: the quotes were said, they do not say the booking was made, and another time
    offered, if recorded, stands in the quotes."""
    found, bad = _located(turns, quotes)
    if bad is not None:
        return bad
    # A booking taken back by a later correction that says no ("you're all booked. Oh, wait, sorry, I was looking at
    # Saturday. Friday at seven is actually full."): the words before the correction are not the last word.
    taken_back = max((i for i, s in enumerate(found) if _CORRECTION.search(n := v.normal(s.text))
                      and _says_no(_CORRECTION.sub(" ", _REGRET.sub(" ", n)))), default=-1)
    for i, s in enumerate(found):
        if i < taken_back:
            continue
        if _seen_on_a_day(s.text) and not any(_SEE_YOU_ON.search(c) and _REGRET.search(c) for c in v.normal_clauses(s.text)):
            return Unsupported(f"your quote {s.text!r} says the booking was made",
                               "record booked, with the words that confirm the table, its time and party")
        whole = v.normal_clauses(s.text)
        # "see you then", "you're all booked and ready": words of a booking made that the cut at "then" or "and" splits
        if any(_MADE_FOR_YOU.search(c) and not (_NOT_YOURS.search(c) or _REGRET.search(c) or _not_booked(c)
                                                 or v.negated(c) or _NONE_MADE.search(c)) for c in whole):
            return Unsupported(f"your quote {s.text!r} says the booking was made",
                               "record booked, with the words that confirm the table, its time and party")
        spared = 0  # clauses a regret still spares
        for clause in (part.strip() for c in whole for part in _AND.split(c)):
            # "sorry, it's booked": a regret says whose loss its own words and the next are; said after a booking
            # made ("your booking has been made, but unfortunately there's no live music"), or long before it
            # ("sorry, hold on, okay, I've booked you a table"), it is not that.
            spared = 2 if _REGRET.search(clause) else max(spared - 1, 0)
            if spared or _ASKED.match(clause):
                continue  # "is your table booked": asked, not said
            if ((_made(clause) or _PARTY_RESERVED.search(clause) or (_MADE_FOR_YOU.search(clause) and not _NOT_YOURS.search(clause)))
                    and not (_not_booked(clause) or v.negated(clause) or _NONE_MADE.search(clause))):
                return Unsupported(f"your quote {s.text!r} says the booking was made",
                                   "record booked, with the words that confirm the table, its time and party")
    if (yes := _yes_to_the_asked(turns, found)) is not None:
        return Unsupported(f"your quote {yes.text!r} says the time asked for can be had",
                           "record booked, with the words that confirm the table, its time and party")
    said = v.normal(" ".join(quotes))
    offered = False
    if alternative_offered:
        asked = [x.clock for t in turns[:found[0].turn] if t.speaker == "agent" for x in v.clocks(v.normal(t.text))][-1:]
        stated: list[v.Clock] = []
        for clause in (c for q in quotes for c in v.normal_clauses(q)):
            stated.extend(_clocks_of(_hour_filled(clause, stated or asked)))  # "seven's full, but half past works"
        for c in v.clocks(v.normal(alternative_offered)):
            if not any(_same(c.clock, x) for x in stated):
                return Unsupported(f"the time offered, {str(c.clock)!r}, is not in your quotes", _AGAIN)
            offered = True
    if not offered and not any(_says_no(s.text) for s in found):
        return Unsupported(f"your quotes do not say the table cannot be had ({' | '.join(s.text for s in found)!r})",
                           "record declined with the business's words that say no (full, closed, no reservations, "
                           "a time they cannot do), or booked with the words that confirm the table")
    return Supported(found, "the business's words say it could not book")


# The time or day the agent asked for, said to be fine ("We're closed Mondays, but Friday at seven is fine", "Friday at
# seven works", "Friday at seven is no problem"): a no about something else beside it does not make the booking a decline.
_SLOT_OK = re.compile(r"\b(?:is|'s|s|are)(?: totally| still| absolutely)? (?:fine|good|great|ok|okay|perfect|doable|open|free|available|"
                      r"no problem|not a problem)\b|\bworks\b|\b(?:we|i) can (?:do|take|seat|fit)\b")


def _yes_to_the_asked(turns: Sequence[Turn], found: Sequence[Quote]) -> Quote | None:
    """A quoted sentence with a clause that names the time or day the agent last asked for, no other, and says it is
    fine. Only a statement: "Friday at seven is fine?" asks."""
    asked = next((v.normal(t.text) for t in reversed(turns[:found[0].turn]) if t.speaker == "agent"
                  and (v.clocks(v.normal(t.text)) or v.days_said(v.normal(t.text)))), None) if found else None
    if asked is None:
        return None
    asked_times, asked_days = [x.clock for x in v.clocks(asked)], v.days_said(asked)
    for s in found:
        if s.text.rstrip().endswith("?"):
            continue
        for clause in v.normal_clauses(s.text):
            if not _SLOT_OK.search(clause) or _refuses(_POLITE_NO.sub(" ", clause)) or _REGRET.search(clause):
                continue
            times, days = _clocks_of(clause), v.days_said(clause)
            if not times and not days:
                continue
            if not times and {int(n) % 12 for n in v.numbers(clause) if n <= 24} - {a.hour % 12 for a in asked_times}:
                continue  # a bare number beside the day may be another hour ("but nine on Friday is fine")
            if all(any(_same(x, a) for a in asked_times) for x in times) and days <= asked_days and not v.dates(clause):
                return s
    return None


# A decline's outcome is a fact like a booking's: its quotes must hold the business's no. Any word of one
# will do, since a decline is told in more ways than a list holds ("we're full", "walk-ins only", "we're
# closed Fridays", "the earliest I have is 9", "we'd need a card to hold it", "nope, sorry"): what this
# refuses is a decline cited by words that say nothing against the table ("Done.", "It's been booked.",
# "Their phone number is 707-585-7505").
_NO_WORDS = re.compile(
    r"\b(?:no|nope|nah|not|never|nothing|nothin|none|nobody|zero|0 (?:room|tables?|seats?|space)|negative|sorry|unfortunately|afraid|fraid|regret|"
    r"regretfully|apologi[sz]e|closed|close|closes|closing|shut|full|packed|slammed|maxed|capacity|filled up|"
    r"fully committed|spoken for|(?:is|are|'s|'re|been|already) taken|gone|only|outta|out of (?:tables|room|seats|space)|"
    r"walk ?ins?|walk in|(?:first|1st) come|earliest|latest|next available|first available|soonest|instead|how about|"
    r"what about|would \w+ work|deposit|credit card|card|prepay\w*|wait ?list|call back|call us back|check back|"
    r"try again|online|website|app|opentable|resy|policy|stopped taking|buy ?out|rented out|private (?:event|function)|"
    # taken by others: "it's all booked", "booked solid", "reserved for a private party", "every table"
    r"(?:all|fully|completely|totally|already) (?:booked|reserved)|booked (?:solid|up|out)|"
    r"(?:booked|reserved) (?:for|by) (?:a|an|another|other|someone|somebody|private|the evening|the night|tonight|that)|"
    r"(?:another|other|private) party|last table|every table|all (?:the|our) tables|"
    r"(?:is|are|'s) (?:open|free|available)|(?:at|for) \d+(?: \d\d)?(?: am| pm)? (?:it's|its|it is|is) (?:booked|reserved))\b")
# A no said only to be kind is no refusal: "no problem", "no worries", "no deposit needed", "nothing else".
_POLITE_NO = re.compile(r"\b(?:no (?:problem|problemo|worries|worry|trouble|rush|charge|need|deposit(?: needed| required)?)|"
                        r"not a problem|nothing else(?: needed)?|no no)\b")


_REGRET_ALONE = re.compile(r"(?:(?:oh|so|well|i'm|im|i am|we're|we are|very|really|but) )*(?:sorry|unfortunately|regretfully|afraid|no|nope|nah)")


def _says_no(sentence: str) -> bool:
    """Some clause of the sentence says no, and not only of an amenity ("they don't have live music",
    "sorry, no liquor"): a regret or a no said alone goes with the clause after it ("no, there's no live
    music"), and counts alone only at the sentence's end ("Nope, sorry.")."""
    clauses = [part.strip() for c in v.normal_clauses(sentence) for part in _AND.split(c) if part.strip()]
    for i, clause in enumerate(clauses):
        if _REGRET_ALONE.fullmatch(clause) and i + 1 < len(clauses):
            clause = f"{clause} {clauses[i + 1]}"
        if _AMENITY.search(clause) and not _OF_THE_BOOKING.search(clause):
            continue
        clause = _POLITE_NO.sub(" ", clause)
        if _NO_WORDS.search(clause) or v.negated(clause) or _not_booked(clause):
            return True
    return False
