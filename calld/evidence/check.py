"""The evidence check: do the business's own words hold a record? It checks tokens, never meaning.

The model points at the words for each fact and the outcome; this file checks that the business said them and that each
typed value stands in them (which number is the party is the model's reading). Entry point: check_record. Word lists:
named constants of at most 15 entries (FILLERS, EASE in calld.domain.tokens; CLOCK_CUES, DAYPARTS, LOOSE_CUES, RUNS,
SET_APART, UNITS, STREETS, DAY_GROUPS, RELATIVE in calld.domain.spoken, which reads clock times, days and dates for this
file, the assessment and the web view). The rules, all of them:

 1. Said. Each quote stands as one run of tokens (calld.domain.tokens: lower case, without punctuation, FILLERS or a no
    of EASE, number words as digits) in a business turn before the record, its last word without "'s", "4 b" as "4b";
    HEARD's numbers where a count's, a time's or, after NUMBERED, a place's quote says none ("for for"), and in a time's
    beside a word of RUNS or after "at" ("8 till for"). Agent speech never counts; each fact needs a quote or a
    read-back; a time offered instead (alternative_offered) is one a business clause says.
 2. Read back. A readback fact stands in the agent's turn just before the outcome_quote's (then needed); a closed day's
    word of CLOSED (or a no to "open ...?") may stand in the outcome_quote's sentence of no time ("Sunday?" / "Shut.").
 3. Statements. A quote's clause is not a question (but one begun by one of STATING, with no "you" nor "if": "we're
    open?"), nor a phone menu's prompt; an outcome's yes is in no question nor, booked, before the agent's first turn
    nor holds a bare "confirm" or "verify" but after one of CONFIRMS or last in its clause after none of "please", "me",
    "you", "to", "will", nor HOLDS; only a booking's fact may stand in the business's question before the outcome_quote,
    and a range's days its times answer ("Sundays? No."). A clause ends at , ; ? . ! "but" or "and can I".
 4. Clock times. Each time reads as one in its own quote, as calld.domain.spoken reads clock times (its docstring has
    the forms; am/pm, where said, agrees), or as the quote's one number ("Ten."; in a booking's time, "make that five",
    one beside the party's: "two for seven", or, the record giving a party, none before "people", "guests", "of" or a
    word of UNITS nor after "a", "for" or NUMBERED: "Seven it is"); a count too after LOOSE_CUES or by "tonight" after
    it alone, it is no time where another is said ("for four tonight at 8"). A quote stops at no time nor measure its
    sentence goes on with ("5" of "5 30", "4" of "4 days"); in a range's, "2" between two numbers is "to" ("nine two
    six"). A range's two times are said one after the other in its times_quote, the opening first unless a word of
    closing is their last cue ("until 9 from 5"; of RUNS, just before it: "open to 9"), the closing later where neither
    says its half of the day, or only one end in a clause with its days and no other time (nor after, until another
    day): a closing, with no "open" or "from" but before a word of RUNS; an opening, after "open", "from" or a no before
    "open till", with no other closing said after it in its turn; where an earlier sentence of its turn gives days a
    range with its other end, closing after it opens or before 4 ("Mon to Thu 8 till 7, Fri and Sat till 10"); a bare
    "half past" takes its hour from the context_quote, and one end alone (a time, or its one number) its other end
    there, each by its cue (one with none, the kind the other is not), closing after it opens where neither says its
    half of the day, one of them naming the range's days, its own a date ("Christmas Eve we close at 6"), and the
    context no other day nor a date ("Thursdays till 8" / "Ten till six"; "Closing, it's 3" / "we open at 6, 7 days a
    week"); days_quote and times_quote, said in one turn, have no other day or number between them but a split shift's
    other times or the range's own said first, each in its part (an opening; a closing after a word of closing), in
    words of saying hours (_SAYING_HOURS), and no time, day nor word of RUNS or CLOCK_CUES after its times in their
    sentence ("Sundays we open at 10, 10 till 4"), and days whose own clause (or its part after "but") says other times
    take those ("Mon-Fri 8 to 6, Sat 9 to 1"). A booked time in no clock words stands by them; with no half of the day,
    it is the half nearer the time asked; with LIMITS or HOURS_CUES in the four words before each time it reads ("we
    open at 5", "back at 9"), it is none.
 5. Own words. Each day, date, count, party size, place or kind stands in its own quote: a count as a number that is no
    part of a clock time nor a day of a month ("march 5"; "the 12th", no month said, for the date), nor before a word of
    UNITS or before or after one of NUMBERED ("table 12", "2 tables") nor, an item's, LOOSE_CUES ("about 12"), a party
    of two also by a word of PAIR, a party also as the sum of counts ("a" one) each before a word of PEOPLE, joined by
    "and" or "plus" ("2 adults and 2 kids", not "4 and 2 high chairs"); days as calld.domain.spoken reads them, every
    day the days_quote names being recorded, and a range's times_quote, and its clause, naming no day but its own, where
    a word of OTHER_DAYS ("rest of the week") names the days its turn names nowhere else; a place or kind by its words
    (PLACE_WORDS aside; a place's may stand in the rest of its sentence or a sentence of its turn naming the item, but
    in a clause of a no, of PAST or after "but", where its quote says one of them; its numbers not, nor in a clock time
    or after a word of NUMBERED the place does not say: "by till 3", "bay 11"). A closed day's days_quote may say
    "closed" before it. An item's count or place quote holds no other number (but the item's own: "the 12 inch"). A
    typed date is read as said (with its year, by its day; "Dec"); the date asked stands unsaid beside its weekday said;
    RELATIVE words ("tomorrow", in a read-back too) and HOLIDAYS (not after "before" or "after") say their dates
    (BookJob.today: the day dialled); the date asked stands by its day said where no other month is.
 6. The item. A stock or aisle fact names the item asked about: in its quote, or in the agent's question before it (over
    the agent's follow-ups, a wait that names the item and its "Sure.", or a question back and the agent's choice, which
    the fact's sentence names), with no number of another size of it nor a word of INSTEAD said in between; in its own
    quote (or its sentence from a "but" to it: "..., but the soda's in 12") where its sentence gives another number of
    its kind but the kinds' own ("3 boxes, in aisle 8" holds one of each) or its clause a word of INSTEAD ("the M12
    though"). Said again or read back, a place or count stands on the question first answered.
 7. Word lists. A closed day's quote (its times_quote, else its days_quote) holds a word of CLOSED (or a no just before
    "open", not "until"; or a no answering a question with "open"; or "close" ending its clause where the rest of its
    turn says no time: "Sunday we close. Walk-ins only."; or "close" before the day or holiday ending its clause: "we
    close Sundays"); open around the clock, of ALWAYS; no set hours, of NO_SET_HOURS. An open range's days or date are
    none its days_quote's clause says closed (CLOSED, no "open" nor time: "shut Sundays", "this Monday we're shut").
 8. Yes. The clause of a quote of what is holds no word of NOT (nor in n't or "nae"; not before a word of OPEN_CLOSE and
    "until"; not a "no" before a word of CORRECTIONS; not "not many") nor of PAST; of stock, none of OUT ("out the back"
    aside) nor COMING, "will" ('ll, "gonna") nor a day: stock to come is none now, and a stock's yes a number or a word
    of HAVE or FEW (limited, of FEW); of a booking, none of FAILURE, FULL or CLOSED (but a party's or date's no of
    another clock time or ANOTHER_TIME), nor, in an outcome_quote, a word of GONE with only WHEN_WORDS, days and times
    after it and no "you" in the clause ("Seven's gone"), as in a booked time's own quote. A booked outcome_quote holds
    no word of OFFERS nor HOURS_CUES, nor is each of its clauses an apology. Clauses end before "and".
 9. No. The clause of a quote of what is not (a decline, out of stock, not known) holds a word of NOT (or ending in
    n't or "nae") or of APOLOGY (in a stock quote, no apology nor a no before a word of KNOWING: "I don't know"),
    for stock of OUT or COMING or stock to come, for a booking of FAILURE, FULL, CLOSED, OFFERS or HOURS_CUES, or
    the word of GONE of rule 8 ("all booked" only where it ends the clause, WHEN_WORDS aside). An answer's
    outcome_quote says a yes or a no only of stock; of hours, an aisle or kinds it need only be said.
10. Said after. In a booked outcome_quote's turn before it, and after it, a business sentence with a word of
    FAILURE, or of NOT beside one of BOOKING (no "if" or "unless"), or the word of GONE of rule 8 said of no other
    time ("Friday's gone"), refuses the record unless the booked time is said later. After a declined outcome_quote,
    the agent's last sentence settling on a time (one, and no no, nor a word of DECLINES after its last time in a
    sentence with no "but" that asks nothing: "9 is too late") refuses it when the business's next turn says that
    time with no no, or first answers with no no, question, wait or offer, and the agent takes nothing back after.
11. Corrections. Business words after a fact's quote (a range's: after its days_quote too, said after it in its
    sentence; a read-back fact's: from the reply on) holding another value of its kind (a clock time; a number of one or
    two digits, not the record's party nor, for a party, its booked time; a day or, for a date with its day of the
    month, another "the 20th") refuse the record when they hold a word of CORRECTIONS (a count's or place's: or their
    sentence before, "Naw, wait. Aisle 8."), or always for a booking's time and date (and a read-back party) but in the
    rest of its outcome's turn ("booked. Last orders at 9"), or for stock held a no (not one of another kind the record
    gives alone: "No hardback though"); unless they name a day the fact is not for. A time said gone or full or after
    "not" ("not six"), the party said alone, a measure (rule 4) or a day after a word of RUNS or "by" ("hold it till
    Monday") is no other value, nor, of a booking, in a sentence with no word of NOT, one just after a word of RUNS,
    "by", "from", "after" or "between" or in the three after "or" ("7:45, or a 9:15 in the bar"), or as in rule 4 ("from
    10 to 6").
    A fact quoted from the business's question is refused where the agent's reply, in clauses of no no, says a value of
    its kind and not its own ("Just the two?" / "Three people."): a clock time (no limit, none after RUNS, "by", "from"
    or "after"; a bare "half past": its minutes), a day, or a number before "people", "person" or PEOPLE (or their sum).
12. Voicemail. A voicemail record stands on a recorded greeting said, or the carrier's answering-machine detection.
"""

from __future__ import annotations

import functools
import itertools
import re
from collections.abc import Mapping, Sequence
from datetime import date, timedelta
from typing import Any

from attrs import frozen
from pydantic import ValidationError

from calld.adapters import gpt_live
from calld.core import situations
from calld.core.answers import Accepted, Cited, Fact, Refused, Verdict
from calld.core.plan import BookJob, QuickAskJob
from calld.domain.spoken import CLOCK_CUES, DAYPARTS, LOOSE_CUES, MONTHS, MONTHS_SET, NOON, RUNS, SET_APART, UNITS, WEEKDAYS_SET, Clock, clocks
from calld.domain.spoken import RELATIVE, alone, date_words, days_in, has_phrase
from calld.domain.spoken import NOT_A_NAME as _NOT_A_NAME, addresses as _addresses, hhmm as _hhmm, near as _near
from calld.domain.spoken import reads_as as _reads_as, typed as _typed
from calld.domain.tokens import WEEKDAYS, at as _at, tokens, weekday as _weekday, words_of as _words
from calld.domain.transcript import SENTENCE_END, Quote, Turn, sentence_spans

PAIR = ("both", "pair", "couple")  # a party of two ("the pair of ye"), not a stock's count ("a couple left")
PEOPLE = ("adult", "kid", "kiddo", "child", "children", "little", "grown", "wean", "baby", "babies", "toddler", "teen",
          "people", "person", "guest")  # after each count of a party said as a sum ("2 adults and 3 kids"), not "2 dogs"
OTHER_DAYS = ("rest of the week", "the rest", "other days", "other day", "other nights", "otherwise", "remaining days")  # the days not named
HEARD = {"for": "4", "to": "2", "too": "2", "ate": "8", "won": "1"}  # a number's homophone, in a quote with no number
PLACE_WORDS = frozenset({"the", "a", "an", "in", "on", "at", "of", "aisle", "department", "dept", "section", "area"})
CLOSED = ("closed", "shut", "day off", "off", "holiday")  # or a no just before "open": "not open", "won't be open"
ALWAYS = ("24 hours", "24 hour", "24/7", "24 7", "around the clock", "round the clock", "never close", "never closes",
          "all night", "all day and all night", "open all day and night")
NO_SET_HOURS = ("appointment", "appointments", "no set", "vary", "varies", "depends", "call ahead", "not set",
                "no fixed", "whenever", "irregular", "flexible")
NOT = frozenset({"no", "not", "never", "none", "nothing", "nope", "nah", "nobody", "cannot", "unable", "neither", "nor",
                 "nuh"})  # and a word ending in n't or nae ("cannae", "nae")
OUT = ("out", "oot", "sold", "gone", "0", "finished", "done", "stopped", "discontinued", "unavailable", "empty")  # "oot": Scots
COMING = ("order", "backorder", "backordered", "shipment", "restock", "waiting", "more coming", "more come")  # more to come: none now
FAILURE = ("unable", "couldn't", "could not", "can't", "not able", "fail", "failed", "unsuccessful", "booked up",
           "booked solid", "impossible", "unavailable", "full", "fully", "problem")  # "cannot" is of NOT
BOOKING = ("table", "reservation", "booking", "book", "booked", "reserve", "reserved", "seat", "spot", "available",
           "availability", "slot", "opening", "space", "room")  # matched with or without a plural s
CONFIRMS = ("can", "able", "did", "happy", "pleased", "glad", "is")  # a "confirm" after one gives it: "I was able to confirm"
ANOTHER_TIME = ("that time", "that hour", "requested time", "time you asked")  # the time that failed, said again
HAVE = ("have", "got", "get", "yes", "yeah", "yep", "do", "there", "in", "shelf", "available", "plenty", "loads", "heaps", "tons")
FEW = ("couple", "few", "handful", "low", "last", "only", "just", "left", "remaining", "not many", "limited", "down to")
PAST = ("used to", "formerly", "previously", "anymore", "no longer", "last year", "last month", "last week", "yesterday")
FULL = ("booked out", "capacity", "waitlist", "waiting list", "wait list", "we're all booked", "is taken",
        "are taken", "walk in", "walk ins", "private party", "private event", "call you back",
        "get back to you", "first come")  # a booking's no too ("you're all booked" is a yes)
OFFERS = ("only", "earliest", "latest", "closest", "next available", "first available", "they're all booked",
          "last seating", "stop seating", "stops seating", "too late", "too early")  # for a decline: the time asked is not to be had
GONE = ("gone", "went", "taken", "out", "spoken for", "filled", "packed", "slammed", "rammed", "we're booked",
        "totally booked", "completely booked", "all booked", "all reserved")  # a booking's no, ending its clause: "Seven's gone."
APOLOGY = ("sorry", "afraid", "unfortunately", "apologies", "apologise", "apologize", "regret", "regrettably")  # a no's
WHEN_WORDS = frozenset({"for", "on", "at", "that", "this", "night", "tonight", "tomorrow", "today", "already",
                        "now", "i'm", "afraid", "sorry", "too"})  # after GONE
HOLIDAYS = {"christmas eve": "december 24", "christmas day": "december 25", "boxing day": "december 26",
            "new year's eve": "december 31", "hogmanay": "december 31", "new year's day": "january 1"}  # dates by name (bare "Christmas" is a season)
NUMBERED = ("aisle", "isle", "bay", "shelf", "row", "lane", "rack", "size", "table")  # a number after one counts nothing
OPENING = frozenset({"open", "opens", "from"})  # a time after one is an opening ("we open at 9", "from 10")
OPEN_CLOSE = ("open", "opens", "close", "closes")  # "not <one> until 9" is the time it opens or closes, not a no
HOURS_CUES = ("we open", "we're open", "opens", "close", "closes", "closing", "shuts")  # a time after one is the hours' ("we open at 7")
HOLDS = ("let me check", "let me see", "let me look", "let me have a look", "hold on", "hang on", "1 moment",
         "1 sec", "1 second", "just a moment", "just a sec", "bear with me", "lemme see", "lemme check")  # a wait, not an answer (as tokens: "one" is 1)
LIMITS = ("before", "back", "last", "ends", "starts", "start")  # "table back at 9": a time not the booking's
INSTEAD = ("instead", "though", "alternatively", "substitute", "alternative", "similar", "equivalent", "generic")
DECLINES = ("decline", "leave it", "too early", "too late", "outside", "earlier than", "later than")  # the agent's no, rule 10
KNOWING = ("know", "sure", "idea", "tell", "remember", "certain", "check")  # "I don't know" says no no of stock
STATING = ("we", "we're", "we've", "i", "i'm", "it", "it's", "its", "they", "they're", "there's")  # "we're open till 8?"
_SAYING_HOURS = frozenset({*STATING, *CLOCK_CUES, *RUNS, *OPEN_CLOSE, *LIMITS, "shut", "shuts", "the", "in", "and", "oclock"})  # "we're back at 9"
CORRECTIONS = frozenset({"actually", "sorry", "wait", "correction", "mean", "rather", "instead", "oops", "scratch",
                         "make", "change", "changed", "no"})
_AGAIN = "point each fact at the business's own words that state it, verbatim, and record again"


def _negated(words: Sequence[str]) -> bool:
    """A word of NOT (or ending in n't), but for "not open until 9", "don't close till 5": a time, not a no; and but
    for a "no" that begins a correction ("aisle 7, no, sorry, 8"): what follows it is said instead, not denied."""
    return any((w in NOT or w.endswith(("n't", "nae"))) and not (_at(words, i + 1) in OPEN_CLOSE and _at(words, i + 2) in ("until", "till", "til"))
               and not (w == "not" and _at(words, i + 1) in ("many", "much"))  # "not many" is a few
               and not (w == "no" and _at(words, i + 1) in CORRECTIONS - {"no"}  # but a bare "no, sorry" is a no
                        and any(v[0].isdigit() or _weekday(v) for v in words[i + 2:i + 5]))
               for i, w in enumerate(words))


def _closing(words: Sequence[str], c: Clock) -> bool:
    """Rule 4: a time after a word of closing as its last cue ("until 9 from 5"), but "don't open till 10": an opening."""
    cues = [(i, w) for i, w in enumerate(words[:min(c.at)]) if w in (*OPEN_CLOSE, "from", "until", "till", "til", "shut", "shuts")
            or w in RUNS and i == min(c.at) - 1]  # "we stay open to 9", not "Monday to Friday 9 to 5"
    return bool(cues) and cues[-1][1] not in OPENING and not (
        cues[-1][1] in ("until", "till", "til") and _at(words, cues[-1][0] - 1) == "open" and (
            _at(words, cues[-1][0] - 2) in NOT or _at(words, cues[-1][0] - 2).endswith("n't")))


def _one_end(days: Sequence[str], ends: Sequence[tuple[int, int]], words: Sequence[str], context: Sequence[str]) -> bool:
    """Rule 4: one end of a range alone in its quote, the other in its context_quote, by their cues, as the header says."""
    one, other, named, need, dated = alone(words), alone(context), set(days_in(context)), set(days) & WEEKDAYS_SET, set(days) - WEEKDAYS_SET
    if len(one) != 1 or not (need or dated) or not (named or set(days_in(words))) >= need or set(context) & (MONTHS_SET | set(RELATIVE)) or any(
            has_phrase(context, [h]) for h in HOLIDAYS) or dated and (named not in (set(), WEEKDAYS_SET) or not all(_date_stands(d, words) for d in dated)):
        return False
    cue = [1 if _closing(w, c) else 0 if OPENING & set(w[:min(c.at)]) else -1 for w, c in [(words, one[0]), *((context, k) for k in other)]]
    end = cue[0] if cue[0] >= 0 else next((1 - c for c in cue[1:] if c >= 0), -1)  # none: the kind its context's is not
    return end >= 0 and _reads_as(one[0], *ends[end]) and any(c != end and _reads_as(k, *ends[1 - end]) and (
        k.meridiem or one[0].meridiem or ends[1] > ends[0]) for c, k in zip(cue[1:], other))  # it closes after it opens


def _counts(words: Sequence[str], measures: bool = True) -> set[str]:
    return {words[i] for i in _counted(words, measures)}


def _counted(words: Sequence[str], measures: bool = True) -> list[int]:
    """Where the numbers said are that are no part of a clock time (but a loose one) nor a date's day (see _near), nor,
    with `measures` off, a measure ("6 dollars", "a 2 hour limit": before a word of UNITS)."""
    taken = {i for c in clocks(words) if not c.loose for i in c.at} | _addresses(words)
    taken |= {j for i, w in enumerate(words) if w in MONTHS or w == "the" for j in _near(words, i)}
    taken |= {i for i, w in enumerate(words) if w.isdigit() and _at(words, i + 1) == "th"}  # "on 12th": a date's day
    taken |= {i for i in range(len(words)) if not measures and _at(words, i + 1).rstrip("s") in UNITS}
    return [i for i, w in enumerate(words) if w.isdigit() and i not in taken]


def _date_stands(value: str, words: Sequence[str], asked: Sequence[str] = ()) -> bool:
    """Rule 5; the date asked (`asked`) stands unsaid beside its weekday or day said ("the 11th" for Friday 11 December)."""
    said = {"today" if w == "tonight" else w for w in (w.removesuffix("'s") for w in words)} | days_in(words)  # "tomorrow's"
    said |= {f"{m} {words[j]}" for i, m in enumerate(words) if m in MONTHS or m == "the" for j in _near(words, i)}
    said |= {day for name, day in HOLIDAYS.items() if any(has_phrase(w, [name]) and not has_phrase(w, [f"after {name}", f"before {name}"])
                                                         for w in (words, [w.removesuffix("'s") for w in words]))}
    # "Christmas Eve" says December 24, "Hogmanay's" December 31; "the day after Boxing Day" does not
    said |= {f"the {w.split()[-1]}" for w in said if " " in w and w.split()[0] in MONTHS}  # "june 12" says "the 12th"
    said |= {f"the {w}" for i, w in enumerate(words) if w.isdigit() and _at(words, i + 1) == "th"}  # "on 12th"
    unnamed = not MONTHS_SET & set(words)  # "on the 12th" for June 12, where no month is said
    mine, given = date_words(value), set(date_words(" ".join(asked)))
    given |= {f"the {w.split()[-1]}" for w in given if " " in w}  # "Tuesday 15th" for Tuesday December 15 asked
    asked_month = {w.split()[0] for w in given if " " in w and w.split()[0] in MONTHS}  # its day said, and no other month
    given = given if set(mine) & said & given & WEEKDAYS_SET or {w for w in said & given if w.startswith("the ")} and not (
        MONTHS_SET & set(words)) - asked_month else set()
    stands = [w in said or w in given or unnamed and w.split()[0] in MONTHS and f"the {w.split()[-1]}" in said for w in mine]
    year = next((w for w in _typed(value) if len(w) == 4 and w.isdigit()), None)  # a day with its year names its weekday
    dated = {_typed(f"{year}-{MONTHS.index(v.split()[0]) + 1:02d}-{int(v.split()[1]):02d}")[0] for v, ok in zip(mine, stands)
             if ok and year and " " in v and v.split()[0] in MONTHS}  # "the 19th" says "Saturday 19 December 2026"
    return all(ok or w in dated for w, ok in zip(mine, stands))


# A clause also ends where "and" starts a question of its own ("I couldn't book it and can I help with anything?")
_CLAUSE_END = re.compile(r"[,;?]|(?<![ap]\.m)(?<!\b[ap])[.!](?=\s|$|[A-Z])"
                         r"|\s(?=(?i:and\s+(?:can|could|would|shall|should|will|do|may)\s+(?:i|you|we)\b))")
@frozen
class Found:
    """A quote located: its turn, its tokens' span in the turn's tokens, its sentence."""
    turn: int
    first: int
    last: int  # exclusive, in the turn's tokens
    words: tuple[str, ...]
    sentence: Quote
    question: bool  # the clause it ends in is a question
    in_question: bool = False  # its sentence is


_BUT, _BUT_ALONE = re.compile(r"\s(?=(?:but|and)\b)", re.IGNORECASE), re.compile(r"\s(?=but\b)", re.IGNORECASE)


def _sentence(turns: Sequence[Turn], turn: int, start: int, end: int) -> tuple[Quote, bool, bool]:
    text = turns[turn].text
    a = max((m.end() for m in SENTENCE_END.finditer(text, 0, start)), default=0)
    b = m.end() if (m := SENTENCE_END.search(text, end)) else len(text)
    a, b = a + len(text[a:b]) - len(text[a:b].lstrip()), a + len(text[a:b].rstrip())
    # the clause the quote ends in: "sorry, we're full, shall I try 8?"; not "we're full for 7 but if you'd sit outside?"
    clause_end = min((m for m in (_CLAUSE_END.search(text, end), _BUT_ALONE.search(text, end)) if m),
                     key=lambda m: m.start(), default=None)
    return turns[turn].quote(turn, a, b), bool(clause_end and clause_end.group() == "?"), bool(m and "?" in m.group())


def locate(turns: Sequence[Turn], quote: str | None, speaker: str = "business", near: Found | None = None) -> Found | None:
    """The last place the quote's tokens were said, as one run, in a turn of `speaker`; or, said in the turn of `near`,
    there, nearest after it ("Saturday 10 to 4, and Sunday 10 to 4": Sunday's is the second)."""
    if not (want := _words(tokens(quote or ""))):
        return None
    for t in sorted((t for t in range(len(turns) - 1, -1, -1) if turns[t].speaker == speaker), key=lambda t: near is not None and t != near.turn):
        words = _words(toks := tokens(turns[t].text))
        places = [k for k in range(len(words) - len(want), -1, -1) if words[k:k + len(want) - 1] == want[:-1]
                  and words[k + len(want) - 1] in (want[-1], want[-1] + "'s")]  # "Tuesday" of "Tuesday's quiet"
        if near is not None and near.turn == t and places:
            places.sort(key=lambda k: (k < near.first, abs(k - near.last)))
        for k in places[:1]:
            sentence, asked, in_question = _sentence(turns, t, toks[k].start, toks[k + len(want) - 1].end)
            return Found(t, k, k + len(want), tuple(want), sentence, asked, in_question)
    return None


def _said_after(turns: Sequence[Turn], at: Found | Quote, last: int = -1) -> list[list[str]]:
    """The business's words after a located quote or a sentence, sentence by sentence, to the turn `last` (-1: all)."""
    end = at.end if isinstance(at, Quote) else tokens(turns[at.turn].text)[at.last - 1].end if at.last else 0
    return [w for t in range(at.turn, len(turns) if last < 0 else last + 1) if turns[t].speaker == "business"
            for p in SENTENCE_END.split(turns[t].text[end if t == at.turn else 0:]) if (w := _words(tokens(p)))]


def _clause(turns: Sequence[Turn], at: Found) -> tuple[list[str], list[list[str]]]:
    """The words of the clause a quote stands in (rule 8: "we don't open at nine anymore" holds "open at nine"), and
    each clause it spans, apart ("We're rammed Tuesday, sorry love": two)."""
    text, toks = turns[at.turn].text, tokens(turns[at.turn].text)
    a, b = _span(text, toks[at.first].start, toks[at.last - 1].end, _BUT)
    return _words(tokens(text[a:b])), [w for p in _CLAUSE_END.split(text[a:b]) if (w := _words(tokens(p)))]


def _span(text: str, start: int, end: int, *more: re.Pattern[str]) -> tuple[int, int]:
    """The clause around text[start:end]: from the last _CLAUSE_END (or `more`) before it to the first after it."""
    return (max([m.end() for m in _CLAUSE_END.finditer(text, 0, start)] + [m.end() for e in more for m in e.finditer(text)
                                                                            if m.end() <= start], default=0),
            min([m.start() for e in (_CLAUSE_END, *more) if (m := e.search(text, end))], default=len(text)))


def _standing_numbers(text: str) -> set[str]:
    """The numbers of clauses that say what is, not taken back by a later word of CORRECTIONS ("aisle 5, no sorry, 6")."""
    standing: set[str] = set()
    for words in (_words(tokens(clause)) for part in _CLAUSE_END.split(text) for clause in _BUT.split(part)):
        standing = (set() if CORRECTIONS & set(words) else standing) | (set() if _negated(words) or has_phrase(words, PAST) else _counts(words))
    return standing


def _standing_words(text: str) -> list[str]:
    """Rule 5: a text's words but in its clauses of a no, of PAST or after "but" ("near the front, not the back")."""
    parts = [_words(tokens(p)) for c in _CLAUSE_END.split(text) for p in _BUT_ALONE.split(c)]
    return [w for p in parts if not _negated(p) and not has_phrase(p, PAST) and _at(p, 0) != "but" for w in p]


def _asked_before(turns: Sequence[Turn], turn: int) -> int | None:
    """The agent's turn just before a business turn (its question), if the agent spoke before it."""
    return next((t for t in range(turn - 1, -1, -1) if turns[t].speaker == "agent" and turns[t].text.strip()), None)


def _stands(fact: Fact, words: Sequence[str], context: Sequence[str] = (), rest: Sequence[str] = (),
            item: str | None = None, party: str | None = None, today: date | None = None) -> str | None:
    """Rules 4, 5, 7: why the value does not stand in `words` (`rest`: the sentence's rest; `item`'s numbers: its size;
    `party`: its quote's, beside which a booked time may be one bare number; `today`: the day RELATIVE words count from)."""
    kind, value = fact.kind, fact.value
    if kind in ("count", "clock", "place") and re.search(r"\d", value) and not any(w.isdigit() for w in words):  # "for for"
        words = [w if _at(words, i + 1) in HEARD or kind == "place" and _at(words, i - 1) not in NUMBERED else HEARD.get(w, w)
                 for i, w in enumerate(words)]  # the last of "for to"; a place's after a word of NUMBERED ("aisle for")
    if kind in ("clock", "range"):  # and a time's beside a word of RUNS, or after "at": "8 till for", "ate to 4", "at for 30"
        words = [HEARD.get(w, w) if _at(words, i - 1) in RUNS | {"at"} or _at(words, i + 1) in RUNS else w for i, w in enumerate(words)]
    if kind == "range":  # and "two" heard for "to" between two numbers: "nine two six", "eight two noon"
        words = ["to" if w == "2" and _at(words, i - 1).isdigit() and (_at(words, i + 1).isdigit() or _at(words, i + 1) in NOON) else w
                 for i, w in enumerate(words)]
        ends = [_hhmm(v) for v in value.split("-")]
        said = clocks(words)
        # said one after the other; where neither says its half of the day ("six till six"), it closes after it opens
        if None in ends or not any(_reads_as(a, *ends[0], clocks(context)) and _reads_as(b, *ends[1], clocks(context)) and (  # type: ignore[misc]
                a.meridiem or b.meridiem or not 0 < (a.hour or 0) <= 12 or not 0 < (b.hour or 0) <= 12 or ends[1] > ends[0])
                                   for x, y in zip(said, said[1:]) for a, b in [(y, x) if _closing(words, x) else (x, y)]) and not _one_end(
                fact.days, ends, words, context):  # type: ignore[arg-type]  # or one end alone, the other in the context_quote
            return f"{value.replace('-', ' to ')} does not read as two clock times in {' '.join(words)!r}"
    elif kind == "clock":
        hhmm = _hhmm(value)
        if hhmm is None:  # a time said in no clock words ("the early sitting") stands by its words, as a place does
            want = [w for w in _typed(value) if w not in PLACE_WORDS and w not in date_words(value)]
            missing = [w for w in want if w not in words]
            return f"{value!r} is not a clock time, nor said there" if missing or not want else None
        said = clocks(words, one=party is not None)  # a booking's one time: "ten to eight" is 7:50
        said = [c for c in said if not c.loose] or said  # "for four tonight at 8": the loose 4 is the party where 8 is said
        numbers = [w for w in words if w.isdigit()]
        numbers = numbers[:numbers.index(party)] + numbers[numbers.index(party) + 1:] if party in numbers else numbers
        at = words.index(numbers[0]) if len(numbers) == 1 else -1
        if not said and at >= 0 and 0 < int(numbers[0]) <= 12 and (  # "make that five", "seven on Wednesday", "seven it is"
                _at(words, at + 1) in _NOT_A_NAME - {"people", "guests"} or at == len(words) - 1 or party is not None and not (
                    _at(words, at + 1) in ("people", "guests", "of", *UNITS) or _at(words, at - 1) in (*NUMBERED, "for", "a"))):  # not "2 people"
            said = [Clock(int(numbers[0]), 0, None, frozenset({at}), True)]
        if not any(_reads_as(c, *hhmm, clocks(context)) for c in said):
            return f"{hhmm[0]:02d}:{hhmm[1]:02d} does not read as a clock time in {' '.join(words)!r}"
    elif kind == "count" and (value not in {words[i] for i in _counted(words, measures=False) if _at(words, i - 1) not in (
            {*NUMBERED, *LOOSE_CUES} if item else NUMBERED) and _at(words, i + 1).rstrip("s") not in NUMBERED}  # "about 12", "2 tables"
                              | (set() if item else _party_said(words)) or value in re.findall(r"\d+", item or "")):
        return f"the number {value} is not said there apart from a clock time, a measure or a place"
    elif item and kind in ("count", "place") and (others := _counts(words) - set(_words(tokens(f"{value} {item or ''}"))) - set(re.findall(r"\d+", value))):
        return f"{', '.join(sorted(others))} is another number said there: quote only the words of {value!r}"
    elif kind == "days" and (missing := [d for d in value.split(",") if d not in days_in(
            [w for w in words if w != "closed" or fact.topic != "closed"], rest)]):
        return f"{', '.join(missing)} {'is' if len(missing) == 1 else 'are'} not named there"
    elif kind == "date" and not _date_stands(value, [*words, *(v for w in words if w in RELATIVE and today for v in _typed(
            str(today + timedelta(RELATIVE[w]))))], context):
        return f"the day or date of {value!r} is not said there"
    elif kind in ("place", "kind"):
        want = [w.removesuffix("'s").rstrip("s") for w in _words(tokens(value)) if w not in PLACE_WORDS]  # "the children's section"
        quoted = {w.removesuffix("'s").rstrip("s") for w in words} | {a + b for a, b in zip(words, words[1:]) if a.isdigit() and len(b) == 1}
        # "the green's sold out", "mediums" say green, medium; "aisle 22 b" (speech-to-text spacing) says 22b; a place's
        # words may stand in the rest of its sentence where its quote says one of them, its numbers not
        said = quoted | {w.removesuffix("'s").rstrip("s") for w in rest if not w[0].isdigit()}
        timed, its_own = ({ws[i] for c in clocks(ws) for i in c.at} for ws in (words, _words(tokens(value))))  # "by till 3": no aisle 3
        placed, its_place = ({({"isle": "aisle"}.get(a, a), w) for a, w in zip(["", *(x.rstrip("s") for x in ws)], ws)
                              if w.isdigit() and a in NUMBERED} for ws in (words, _words(tokens(value))))  # "bay 11" is no "aisle 11"
        missing = [w for w in want if w not in said - (timed - its_own) and not (w.isdigit() and w in _counts(words))]
        missing += [n for a, n in its_place - placed if n in {m for _, m in placed}]
        if missing or not want or not quoted & set(want):
            return f"{value!r} is not said there"
    elif kind in ("closed", "always", "no_set_hours"):
        lists = {"closed": CLOSED, "always": ALWAYS, "no_set_hours": NO_SET_HOURS}
        shut = kind == "closed" and any(w == "open" and _negated(words[max(0, i - 3):i]) and _at(words, i + 1) not in (
            "until", "till", "til", "before") for i, w in enumerate(words))  # "not open until 9" opens at 9
        shut = shut or kind == "closed" and _negated(words) and "open" in context and not clocks(words)
        if not (has_phrase(words, lists[kind]) or shut):
            return f"no word of {kind.replace('_', ' ')} ({', '.join(lists[kind][:4])}...) is said there"
    return None


def _party_said(words: Sequence[str]) -> set[str]:
    """A party said other than as one number: two by a word of PAIR, or a sum of PEOPLE ("3 adults and a child": 4)."""
    people = {i for i in range(len(words)) if _at(words, i + 1) in PEOPLE or _at(words, i + 1).rstrip("s") in PEOPLE}
    at = sorted({*_counted(words, measures=False), *(i for i in people if words[i] in ("a", "an"))})
    summed = len(at) > 1 and set(at) <= people and all(b - a < 5 and {"and", "plus"} & set(words[a:b]) for a, b in zip(at, at[1:]))
    return ({"2"} if set(PAIR) & set(words) else set()) | ({str(sum(int(words[i]) if words[i].isdigit() else 1 for i in at))} if summed else set())


def _sign(fact: Fact, words: Sequence[str], parts: Sequence[Sequence[str]] = (), *, outcome: bool = False) -> str | None:
    """Rules 8 and 9: a yes holds no word of no, a no holds one; GONE refuses only an outcome's yes: a fact may stand
    in the clause of a no a later yes overcame ("we're packed Friday but I'll pencil you in")."""
    extra = (*OUT, *COMING) if fact.topic == "stock" else (*FAILURE, *FULL, *CLOSED) if fact.topic == "booking" else ()
    words = [w for i, w in enumerate(words) if (w != "out" or _at(words, i + 1 + (_at(words, i + 1) == "the")) not in (
        "back", "front", "there", "here")) and not (w == "never" and _at(words, i + 1) in ("close", "closes"))]
    # "out the back" is a place; "never close" says open (ALWAYS)
    # stock to come ("we'll have them next week", "should be in Tuesday") is none now, as a restock is
    to_come = fact.topic == "stock" and any(w in ("will", "gonna", "tomorrow") or w.endswith("'ll") or _weekday(w)
                                            or w == "next" and _at(words, i + 1) in ("week", "month") for i, w in enumerate(words))
    gone = fact.topic == "booking" and (outcome or fact.kind == "no") and any(_gone(p, yes=fact.kind == "yes") for p in (parts or [words]))
    if fact.kind == "yes" and to_come:
        return "it says what is to come, not what is there now"
    if outcome and fact.kind == "yes" and fact.topic == "booking" and (has_phrase(words, (*OFFERS, *HOURS_CUES))  # "we close at 8"
                                                                         or all(has_phrase(p, APOLOGY) for p in parts or [words])):
        return "it offers or limits, it does not confirm: quote the words that confirm the booking, or record declined"
    if fact.kind == "yes" and (_negated(words) or has_phrase(words, PAST) or has_phrase(words, extra) or gone):
        return "it says no, or says it of the past"
    have = ("FEW", FEW) if fact.value == "limited" else ("HAVE or FEW", (*HAVE, *FEW))  # "we've a few", "yes, loads"
    if fact.kind == "yes" and fact.topic == "stock" and not outcome and not (_counts(words) or has_phrase(
            ["have" if w.endswith("'ve") else w.removesuffix("'s") for w in words], have[1])):  # "we've", "there's"
        return f"it says no number nor a word of {have[0]}: quote the words that say what they have"
    plain = fact.topic != "stock" or outcome  # a stock quote's apology and its no of KNOWING are none ("no, sorry, 4" corrects)
    knows = [w for i, w in enumerate(words) if plain or _at(words, i + 1) not in KNOWING]
    if fact.kind == "no" and not (_negated(knows) or has_phrase(knows, (*extra, *APOLOGY) if plain else extra) or to_come or gone
                                  or fact.topic == "booking" and has_phrase(words, (*OFFERS, *HOURS_CUES))):
        return "it holds no word of a no"
    return None


def _gone(words: Sequence[str], *, yes: bool) -> bool:
    """Rule 8's word of GONE: only WHEN_WORDS, days and times after it, no "you" in its clause ("Seven's gone"; not "it's
    gone through"); "all booked" ends its clause but for WHEN_WORDS and refuses no yes ("that's all booked" is one)."""
    return not {"you", "your", "you're"} & set(words) and any(
        not (g.startswith("all ") and (yes or not set(rest) <= WHEN_WORDS)) and all(w in WHEN_WORDS or _weekday(w) or w[0].isdigit() or w in
                                                             ("am", "pm", "oclock", "s") for w in rest)
        for g in GONE for i in range(len(words)) if words[i:i + len(g.split())] == g.split() for rest in [words[i + len(g.split()):]])


def _other_half(value: str, words: Sequence[str], request: BookJob) -> bool:
    """Rule 4: a booked time said with no half of the day is the half nearer the time asked ("7pm", "19:00", or as read)."""
    typed = _typed(request.when or request.time)
    hhmm, want = _hhmm(value), _hhmm(request.when or request.time) if request.when or {"am", "pm"} & set(typed) or any(":" in w for w in typed) else None
    if hhmm is None or want is None or any(c.meridiem or (c.hour or 12) > 12 for c in clocks(words, one=True) if _reads_as(c, *hhmm)):
        return False
    gap = [min(d, 1440 - d) for d in (abs((h % 24 - want[0]) * 60 + hhmm[1] - want[1]) for h in (hhmm[0], hhmm[0] + 12))]
    return gap[1] < gap[0]


def _tried_another_time(clause: Sequence[str], facts: Sequence[Fact]) -> bool:
    """Rule 8: the no was of another time ("I couldn't book 2 at 7", "at that time", then booked at 8)."""
    booked = [t for f in facts if f.kind == "clock" and (t := _hhmm(f.value)) is not None]
    return bool(booked) and (any(c.hour is not None and not _reads_as(c, *booked[0]) for c in clocks(clause)) or has_phrase(clause, ANOTHER_TIME))


def _names_item(item: str, words: Sequence[str]) -> bool:
    want = [w for w in _words(tokens(item)) if w not in PLACE_WORDS]
    stems = {w.removesuffix("'s").rstrip("s") for w in words}  # "grout's in 7" names grout
    return all(n in words for n in want if n.isdigit()) and any(w.rstrip("s") in stems for w in want if not w.isdigit())


def _another_size(item: str, words: Sequence[str]) -> bool:
    """The item has a size ("12 inch skillet") and the words give another number of that unit ("the 10 inch")."""
    mine = _words(tokens(item))
    sizes = {(n, u.rstrip("s")) for n, u in zip(mine, mine[1:]) if n.isdigit()}
    return any(w.isdigit() and (w, words[i + 1].rstrip("s")) not in sizes and words[i + 1].rstrip("s") in {u for _, u in sizes}
               for i, w in enumerate(words[:-1]))


def _item_named(item: str | None, turns: Sequence[Turn], at: Found | None, asked: int | None) -> bool:
    """Rule 6: the item in the fact's words, or in the agent's question before them (over follow-ups: "Which aisle?",
    and a question back whose choice the words' sentence names: "The tin or the carton?" / "The tin." / "Tin's lane 7.")."""
    if not item or at is not None and _names_item(item, at.words) and not _another_size(item, at.words):
        return True
    if at is not None and set(INSTEAD) & set(_clause(turns, at)[0]):  # "We have the M12 though": another one
        return False
    choice: set[str] = set()  # the agent's answer to the question back: the fact's words name its choice ("tin")
    while asked and not _names_item(item, _words(tokens(turns[asked].text))) and turns[asked - 1].speaker == "business":
        if not has_phrase(waits := _words(tokens(turns[asked - 1].text)), HOLDS) and "?" in turns[asked - 1].text:  # a question
            choice = choice or set(_words(tokens(turns[asked].text))) - PLACE_WORDS  # back, if not last ("Eastgate? 'Cause...")
        elif at is None or not (turns[asked].text.rstrip().endswith("?") or has_phrase(  # a read-back's question is its own;
                waits, HOLDS) and _names_item(re.sub(r"\d\S*", "", item), waits)):  # "Shovels. Hang on." / "Sure."
            break
        asked = _asked_before(turns, asked - 1)
    if asked is None or not _names_item(item, _words(tokens(turns[asked].text))) or (
            choice and at is not None and not choice & set(_words(tokens(at.sentence.text)))):
        return False
    end = at.turn if at is not None else len(turns) - 1
    between = [w for t in range(asked + 1, end + 1) if turns[t].speaker == "business"
               for w in _words(tokens(turns[t].text))[: (at.last if at is not None and t == at.turn else None)]]
    return not _another_size(item, between) and not set(INSTEAD) & set(between)


def _answered_before(fact: Fact, item: str | None, turns: Sequence[Turn], asked: int | None) -> bool:
    """Rule 6 for a read-back ("Was that aisle 7?" / "Yep."): the value said earlier to a question naming the item."""
    return fact.kind in ("place", "count") and any(  # a yes or a no has no value to have said before
        (q := _asked_before(turns, t) if turns[t].speaker == "business" else None) is not None
        and _item_named(item, turns, None, q) and _stands(fact, _words(tokens(turns[t].text))) is None for t in range(asked or 0))


def _corrected(fact: Fact, turns: Sequence[Turn], at: Found, booking: bool, readback: bool = False,
               own: frozenset[str] = frozenset(), settled: Quote | None = None,
               kinds: tuple[str, Sequence[str]] = ("", ())) -> str | None:
    """Rule 11, as the header says (`settled`: the outcome's sentence). `own`: counts a bare number may say; `kinds`: the
    fact's kind and the record's others, whose no is not the fact's ("paperback, yeah. No hardback though.")."""
    after = _said_after(turns, at)  # aside: the sentences after the outcome's in its turn
    aside = range(a := len(after) - len(_said_after(turns, settled)), a + len(_said_after(turns, settled, settled.turn))) if settled else range(0)
    for i, words in enumerate(after):
        if not (booking and i not in aside and fact.kind in ("clock", "date", "count" if readback else "date")) \
                and not CORRECTIONS & set(words) and not (i and fact.kind in ("count", "place") and CORRECTIONS & set(after[i - 1])):
            continue
        days = days_in([w for i, w in enumerate(words) if w != "but" and not (_weekday(w) and _at(words, i - 1) in RUNS | {"by"})])  # "till Monday" limits
        mine = [t for v in fact.value.split("-") if (t := _hhmm(v)) is not None] if fact.kind in ("clock", "range") else []
        if mine:
            # another time said gone or full is no new one ("make that 8, 9's taken"), nor the party said alone ("Two.")
            # of a booking, a limit or a range's end ("come by 12:45", "from 10 to 6") is no time of it; "nothing until 10" a no
            limits = [c for c in clocks(words) if booking and not NOT & set(words) and (
                _aside(words, c) or _at(words, min(c.at) - 1) in RUNS | {"by", "from", "after", "between"} or "or" in words[max(0, min(c.at) - 3):min(c.at)])]
            denied = {i for i, w in enumerate(words) if _at(words, i - 1) == "not"}  # "half six now, not six": no other time
            said = [c for c in clocks(words) if c.hour is not None and not (c.loose and str(c.hour) in own) and c not in limits
                    and (CORRECTIONS & set(words) or not (_gone(words, yes=False) or has_phrase(words, FULL))) and min(c.at) not in denied]
            said += [Clock(int(words[i]), 0, None, frozenset()) for i in _counted(words, measures=False)  # and a bare hour: "sorry, 8"
                     if int(words[i]) <= 12 and words[i] not in own and CORRECTIONS & set(words) and i not in denied]
            other = [c for c in said if not any(_reads_as(c, *t) for t in mine)]
            its_days = set(fact.days) & WEEKDAYS_SET | {w for w in date_words(fact.value) if w in WEEKDAYS}
            if other and not (days and its_days and not days & its_days):
                return " ".join(words)
        elif fact.kind in ("count", "place") and (mine := {w for w in _words(tokens(fact.value)) if w.isdigit()}) and any(
                len(w) <= 2 and w not in mine | own for w in _counts(words, measures=False)) \
                or fact.kind == "date" and (mine := {w for w in date_words(fact.value) if w in WEEKDAYS}) and days - mine \
                or fact.kind == "date" and (mine := {w.split()[-1] for w in date_words(fact.value) if " " in w}) and {
                    words[j] for i, w in enumerate(words) if w in MONTHS or w == "the" for j in _near(words, i)} - mine \
                or fact.topic == "stock" and fact.kind == "yes" and (has_phrase(words, OUT) or _negated(words)) and not (
                    any(_names_item(k, words) for k in kinds[1]) and not (kinds[0] and _names_item(kinds[0], words))
                    and not CORRECTIONS - {"no"} & set(words)):
            return " ".join(words)  # "oh wait, sorry, we just sold the last one"
    return None


def _answered_otherwise(fact: Fact, turns: Sequence[Turn], at: Found) -> str | None:
    """Rule 11: the agent's reply to the business's question a fact is quoted from, where it says a value of the fact's
    kind and not the fact's ("Just the two?" / "Three people, please."), in none of its clauses of a no ("not half 7")."""
    reply = next((t for t in turns[at.turn + 1:] if t.text.strip()), None)
    if reply is None or reply.speaker != "agent":
        return None
    parts = [w for c in _CLAUSE_END.split(reply.text) if (w := _words(tokens(c))) and not _negated(w)]
    words = [w for p in parts for w in p]
    if fact.kind == "clock" and (mine := _hhmm(fact.value)) is not None:  # "half past, please": its minutes
        said = [c for p in parts for c in clocks(p) if not _aside(p, c) and _at(p, min(c.at) - 1) not in (*RUNS, "by", "from", "after")]
        agrees = [_reads_as(c, *mine) if c.hour is not None else c.minute == mine[1] for c in said]
        other = bool(said) and not any(agrees)
    elif fact.kind == "count":  # a number of people ("Three people"; "2 adults and a baby"), not of tables nor digits
        counts = {w for i, w in enumerate(words) if w.isdigit() and _at(words, i + 1).rstrip("s") in ("people", "person", *PEOPLE)}
        parts_of = sum(int(w) if w.isdigit() else 1 for i, w in enumerate(words) if (w.isdigit() or w in ("a", "an")) and (
            _at(words, i + 1) in PEOPLE or _at(words, i + 1).rstrip("s") in PEOPLE))  # "two adults, two kids"
        other = bool(counts) and fact.value not in counts | _party_said(words) | {str(parts_of)}
    else:
        days, mine_days = days_in(words), {w for w in date_words(fact.value) if w in WEEKDAYS}
        other = fact.kind == "date" and bool(days) and bool(mine_days) and not days & mine_days
    return reply.text if other else None


def _aside(words: Sequence[str], c: Clock) -> bool:  # rules 4, 11: a limit, the hours, another's ("last orders at 9")
    return has_phrase(words[max(0, min(c.at) - 4):min(c.at)], (*LIMITS, *HOURS_CUES))


def _failed_after(booked: Fact, turns: Sequence[Turn], at: Found) -> str | None:
    """Rule 10: a failure word in the booked outcome's turn (its own words aside), the booked time not said after it."""
    hhmm, text = _hhmm(booked.value), turns[at.turn].text
    before = [w for p in SENTENCE_END.split(text[:tokens(text)[at.first].start]) if (w := _words(tokens(p)))]
    failed: str | None = None
    for words in (w for w in [*before, list(at.words), *_said_after(turns, at)] if not {"if", "unless"} & set(w)):
        if failed is not None and hhmm is not None and any(_reads_as(c, *hhmm) for c in clocks(words)):
            failed = None
        if has_phrase(words, FAILURE) or (_negated(words) and has_phrase([w.removesuffix("s") for w in words], BOOKING)) or (
                _gone(words, yes=True) and not _tried_another_time(words, [booked])):  # "Saturday's gone", not "9's taken"
            failed = " ".join(words)  # "if you can't make it..." is none
    return failed


def _agreed_after(turns: Sequence[Turn], at: Found) -> str | None:
    """Rule 10: after a decline, the business takes the time the agent's last sentence settled on ("6:30 suits." / "Lovely")."""
    for t in range(at.turn + 1, len(turns) - 1):
        if turns[t].speaker != "agent" or turns[t + 1].speaker != "business" or not (spans := sentence_spans(turns[t].text)):
            continue
        last = _words(tokens(turns[t].text[slice(*spans[-1])]))
        asked = [c for c in clocks(last) if c.hour is not None]
        declines = not turns[t].text.rstrip().endswith("?") and "but" not in last and any(  # after its times: "9 is too late"
            has_phrase(last[max(c.at) + 1:], DECLINES) for c in asked[-1:])
        if not asked or _negated(last) or declines:
            continue
        reply = turns[t + 1].text
        said_ = [(reply[a:b], w) for a, b in sentence_spans(reply) if (w := _words(tokens(reply[a:b])))]  # "Hmm." says nothing
        for i, (part, words) in enumerate(said_):
            said = [c for clause in _CLAUSE_END.split(part) for c in clocks(_words(tokens(clause))) if c.hour is not None]
            plain = _sign(Fact("yes", "", part, topic="booking"), words, outcome=True) is None and not has_phrase(words, HOLDS)
            again = any((c.hour or 0) % 12 == (a.hour or 0) % 12 and c.minute == a.minute for c in said for a in asked)
            taken_back = any(turns[k].speaker == "agent" and _negated(_words(tokens(turns[k].text)))
                             for k in range(t + 2, len(turns)))  # "...so please don't hold the table"
            if plain and (again or i == 0 and not part.endswith("?")) and not taken_back:
                return " ".join(words)
    return None


def _unoffered(alternative: str | None, turns: Sequence[Turn]) -> Refused | None:
    """Rule 1: an alternative offered at a clock time is one a business clause says ("I could do nine thirty", "like 8?")."""
    clauses = [_words(tokens(c)) for t in turns if t.speaker == "business" for c in _CLAUSE_END.split(t.text)]
    if not alternative or (hhmm := _hhmm(alternative)) is None or any(any(_reads_as(c, *hhmm) for c in clocks(w, one=True)) or (
            not hhmm[1] and {str(hhmm[0]), str(hhmm[0] % 12 or 12)} & set(w)) for w in clauses):
        return None
    return Refused(1, f"the alternative offered, {alternative!r}, is no time the business said", "record the time offered, or null")


def check_record(arguments: str | Mapping[str, Any], request: QuickAskJob | BookJob, turns: Sequence[Turn],
                 *, machine: str | None = None) -> Verdict:
    """The one public entry point: a record's arguments as the model sent them (JSON or its object), the request and
    the transcript so far -> Accepted (the business's sentences that hold it) or Refused (the rule, why, what to do)."""
    try:
        args = gpt_live.read_record(arguments, "book" if isinstance(request, BookJob) else "quick_ask")
    except ValidationError as exc:
        return Refused(0, f"invalid arguments: {gpt_live.explain(exc, tagged=False)}", "send arguments the tool's schema allows")
    opt_out = at.sentence if (at := locate(turns, (cited := args.cited()).opt_out_quote)) is not None else None
    if isinstance(verdict := _unoffered(getattr(args, "alternative_offered", None), turns) or _check(cited, request, turns, machine), Refused):
        return Refused(verdict.rule, verdict.why, verdict.next, opt_out)
    reason = getattr(args, "reason_code", None) or getattr(args, "reason", None) or "refused"
    return Accepted(verdict.quotes, reason if cited.status == "declined" else None, opt_out)


def _check(cited: Cited, request: QuickAskJob | BookJob, turns: Sequence[Turn], machine: str | None) -> Verdict:
    if cited.status not in ("answered", "declined", "booked"):
        return voicemail(turns, machine) if cited.status == "voicemail" else Accepted(())
    item = request.item if isinstance(request, QuickAskJob) else None
    evidence, outcome = list[Quote](), cited.outcome
    at_outcome = locate(turns, outcome.quote) if outcome is not None else None
    if cited.status == "answered" and not cited.facts and (outcome is None or not outcome.quote):
        return Refused(1, "the answer points at none of the business's words", "give a quote for each fact, or the outcome_quote")
    if (cited.status in ("declined", "booked") or any(f.readback for f in cited.facts)) and (outcome is None or not outcome.quote):
        return Refused(1, "the record has no outcome_quote", "give the business's words that say the outcome")
    if outcome is not None and outcome.quote:
        if at_outcome is None:
            return _unsaid(turns, outcome.quote)
        clause, parts = _clause(turns, at_outcome)  # "please confirm" (not "I can confirm", "ok, confirm"), a wait: no yes
        asks = outcome.kind != "no" and (has_phrase(clause, HOLDS) or any(w in ("confirm", "verify") and not (set(CONFIRMS) & set(
            b := clause[max(0, i - 3):i]) and "you" not in b) and not (_at(clause, i + 1) in ("", "already") and not {
                "please", "me", "you", "to", "will", "i'll", "we'll"} & set(b)) for i, w in enumerate(clause)))
        asked_back = at_outcome.in_question if outcome.kind != "no" else at_outcome.question and not (  # "we don't take bookings?"
            _at(clause, 0) in STATING and not {"you", "your", "if"} & set(clause))
        if asked_back or asks or situations.menu_prompt(at_outcome.sentence.text) or (
                cited.status == "booked" and _asked_before(turns, at_outcome.turn) is None):  # a greeting books nothing
            return Refused(3, f"your outcome_quote {outcome.quote!r} is a question, a phone menu's prompt or said before the ask",
                           "quote the business's answer, not a question")
        if (why := _sign(outcome, clause, parts, outcome=True)) is not None:
            return Refused(9 if outcome.kind == "no" else 8, f"your outcome_quote {outcome.quote!r}: {why}", _AGAIN)
        evidence.append(at_outcome.sentence)
    asked = _asked_before(turns, at_outcome.turn) if at_outcome is not None else None
    own = frozenset(f.value for f in cited.facts if f.kind == "count")  # and the booked time's numbers ("for 2 at 7, 7's fine")
    timed = frozenset(str(x) for f in cited.facts if f.kind == "clock" and (t := _hhmm(f.value)) for x in (t[0], t[0] % 12 or 12, t[1]))
    # the days of every range: days a quote names but its range leaves out must have hours of their own
    recorded_days = {d for f in cited.facts if f.kind == "days" for d in f.value.split(",")}
    # the quotes of a booking's party or date that are not its time's: their no may have been of another time
    partial = {f.quote for f in cited.facts if f.kind in ("count", "date")} - {f.quote for f in cited.facts if f.kind == "clock"}
    today = date.fromisoformat(request.today) if isinstance(request, BookJob) and request.today else None  # "tomorrow"'s
    for fact in cited.facts:
        if fact.kind == "date" and not date_words(fact.value):
            continue  # a booked time with no day or date words: nothing to check
        if fact.readback:
            if fact.kind not in ("yes", "no"):
                asked_words = _words(tokens(turns[asked].text)) if asked is not None else []  # "Sunday?" / "Shut.": the answer's word
                replied = _words(tokens(at_outcome.sentence.text)) if at_outcome else []  # (no time in it: "Shut at 4.")
                asked_words += replied if fact.kind in ("closed", "always", "no_set_hours") and not clocks(replied) else []
                if asked is None or at_outcome is None or (why := _stands(fact, asked_words, asked_words, today=today)) is not None:
                    return Refused(2, f"read back: {why or 'the agent asked nothing before the outcome_quote'}", _AGAIN)
                answer = Found(at_outcome.turn, 0, 0, (), at_outcome.sentence, False)  # the business's reply, whole
                if (later := _corrected(fact, turns, answer, isinstance(request, BookJob), True, timed, at_outcome.sentence)) is not None:
                    return Refused(11, f"after your read-back of {fact.value!r} the business said {later!r}",
                                   "record what the business said")
            if fact.item and not _item_named(item, turns, None, asked) and not _answered_before(fact, item, turns, asked):
                return Refused(6, f"the question before your outcome_quote does not name {item!r}, nor did the business say its "
                                  "value earlier in answer to one that does", "quote the business's first answer, which did")
            continue
        if not fact.quote:
            named = f"{fact.topic or fact.kind} fact" + (f" {fact.value!r}" if fact.value else "")
            return Refused(1, f"the {named} has no quote and is not read back", _AGAIN)
        if (at := locate(turns, fact.quote, near=locate(turns, fact.beside) if fact.beside else None)) is None:
            return _unsaid(turns, fact.quote)
        may_ask = cited.status == "booked" and at_outcome is not None and (at.turn, at.first) < (at_outcome.turn, at_outcome.first)
        # the business's echo of the days asked, answered in the same turn ("Sundays? No, we're not.")
        answer = next((locate(turns, f.quote) for f in cited.facts if f.beside == fact.quote and f.kind != "days"), None)
        may_ask = may_ask or fact.kind == "days" and answer is not None and (answer.turn, answer.first) > (at.turn, at.first) \
            and answer.turn == at.turn
        clause, parts = _clause(turns, at)  # a clause that states, said rising: "I think we're open till 8?"
        stated = _at(clause, 0) in STATING and not {"you", "your", "if"} & set(clause)
        if (at.question and not may_ask and not stated) or situations.menu_prompt(at.sentence.text):
            return Refused(3, f"your quote {fact.quote!r} is a question or a phone menu's prompt", "quote the business's statement")
        if (at.question or at.in_question) and (reply := _answered_otherwise(fact, turns, at)) is not None:
            return Refused(11, f"the agent answered your quote's question {fact.quote!r} with {reply!r}", "record what was agreed")
        context = _words(tokens(fact.context or "")) if locate(turns, fact.context) is not None else []
        context = _typed(request.when) if fact.kind == "date" and isinstance(request, BookJob) and request.when else context
        if fact.kind == "closed" and (q := _asked_before(turns, at.turn)) is not None:
            context = _words(tokens(turns[q].text))  # "Are you open on Sunday?" / "No, we're not."
        named = _other_days(turns, at)  # "Rest of the week we're closed": the days its turn names nowhere else
        text, toks = turns[at.turn].text, tokens(turns[at.turn].text)  # a days quote's rest of its sentence (a day set apart
        rest = (_words(tokens(text[toks[at.last - 1].end:at.sentence.end if fact.kind == "days" else None]))  # there; a closed
                + (_words(tokens(at.sentence.text)) if fact.kind == "closed" and clocks(_words(tokens(at.sentence.text))) else [])
                if fact.kind in ("days", "closed")  # quote's: the rest of its turn, its sentence if timed), a place's sentences
                else [w for a, b in sentence_spans(text) if (a, b) == (at.sentence.start, at.sentence.end) or item and _names_item(
                    item, _words(tokens(text[a:b]))) for w in _standing_words(text[a:b])] if fact.kind == "place" else [])
        party = next((f.value for f in cited.facts if f.kind == "count"), None) if isinstance(request, BookJob) else None  # "two for seven"
        its_kind = " ".join(f.value for f in cited.facts if f.kind == "kind" and f.quote == fact.quote)  # "one of the 11 speed"
        if (why := _stands(fact, named if fact.kind == "days" else at.words, context, rest, item and f"{item} {its_kind}", party, today)
                ) is not None and not (fact.kind == "range" and _carried(turns, at, fact) or fact.kind == "closed" and _closes_on(clause, rest)):
            rule = 4 if fact.kind in ("clock", "range") else 7 if fact.kind in ("closed", "always", "no_set_hours") else 5
            return Refused(rule, f"{why} (your quote {fact.quote!r})", _AGAIN)
        if fact.kind in ("clock", "range") and at.words[-1].isdigit() and int(at.words[-1]) <= 12 and at.last < len(toks) and not text[
                toks[at.last - 1].end:toks[at.last].start].strip() and (re.fullmatch(r"[0-5]\d", n := toks[at.last].word) or n.rstrip("s") in (*UNITS, "day")):
            return Refused(4, f"your quote {fact.quote!r} stops inside a time or a measure (before {n!r})", "quote the whole time")
        if fact.kind == "clock" and isinstance(request, BookJob) and _other_half(fact.value, at.words, request):
            return Refused(4, f"{fact.value!r} is said with no half of the day, and its other half is nearer the time asked "
                              f"for, {request.time!r} (your quote {fact.quote!r})", "record the half of the day nearer it")
        if fact.kind == "clock" and isinstance(request, BookJob) and (hhmm := _hhmm(fact.value)) and (said := [
                c for c in clocks(at.words, one=True) if _reads_as(c, *hhmm)]) and all(_aside(at.words, c) for c in said):
            return Refused(4, f"your quote {fact.quote!r} says that time as a limit or the hours", "quote the booked time")
        if fact.kind == "clock" and isinstance(request, BookJob) and _gone(list(at.words), yes=True):  # "the half seven's gone"
            return Refused(8, f"your quote {fact.quote!r} says that time is gone", "quote the time they booked")
        if fact.kind == "days" and (left := days_in([w for w in named if w != "closed" or fact.topic != "closed"], rest)
                                    - set(fact.value.split(",")) - recorded_days):
            return Refused(5, f"your quote {fact.quote!r} names {', '.join(sorted(left, key=WEEKDAYS.index))} too, "
                              "which the record gives no hours", "record every day the quoted words name")
        if fact.kind in ("clock", "range") and (other := _another_day(named, fact.days) or not has_phrase(clause, OTHER_DAYS) and _another_day(clause, fact.days)):
            return Refused(5, f"your quote {fact.quote!r} names {other}, not a day of its range", "quote the times of its own days")
        if fact.kind in ("days", "date") and fact.topic != "closed" and (shut := _shut(_clause(turns, at)[0], fact)):
            return Refused(7, f"your quote {fact.quote!r} says {', '.join(shut)} closed",
                           "record those days closed, and the hours of the days said open")
        shared = [f.quote for f in cited.facts if f.beside == fact.beside and f.quote not in (fact.quote, None)]  # split shifts
        said_first = fact.kind == "range" and not shared and _said_first(turns, at, locate(turns, fact.beside), fact.value)
        if fact.beside and not said_first and (between := _between(turns, at, locate(turns, fact.beside), shared)):
            return Refused(4, f"between your days {fact.beside!r} and times {fact.quote!r} the business said {between!r}",
                           "a range's days and times are words said together: point at those")
        if fact.kind in ("range", "clock") and fact.beside and not shared and not said_first and (days := locate(turns, fact.beside)) and (
                theirs := _own_times(turns, days, at, fact.value)):
            return Refused(4, f"your days {fact.beside!r} have times of their own in their clause, {theirs!r}, not {fact.quote!r}",
                           "give those days the times said with them")
        if (why := _sign(fact, clause, parts)) is not None and not (
                cited.status == "booked" and fact.quote in partial and _tried_another_time(clause, cited.facts)):
            return Refused(9 if fact.kind == "no" else 8, f"your quote {fact.quote!r}: {why}", _AGAIN)
        sentence = _words(tokens(at.sentence.text))  # another number of its kind: no "3 cartons left" of a place, no
        kind = {w for i, w in enumerate(sentence) if not (re.fullmatch(r"(?!(?:is|has|was|does)$)[a-z]+s|left", _at(sentence, i + 1)) if fact.kind == "place"
                else _at(sentence, i - 1).rstrip("s") in NUMBERED or _at(sentence, i - 1) in ("or", "and", "to")
                and _at(sentence, i - 3).rstrip("s") in NUMBERED)}  # "aisles 8 or 9" of a count
        since_but = _BUT_ALONE.split(text[at.sentence.start:toks[at.last - 1].end])  # "..., but the soda's in 12"
        if item and fact.kind in ("place", "count") and not _names_item(item, at.words) and not (
                len(since_but) > 1 and _names_item(item, _words(tokens(since_but[-1])))) and len(
                _standing_numbers(at.sentence.text) & kind - set(_words(tokens(" ".join([item, *(f.value for f in cited.facts if f.kind == "kind")]))))
        ) > max(1, len(set(re.findall(r"\d+", fact.value)))):  # the kinds' own numbers aside ("one of the 11 speed, the 12 speed's out")
            return Refused(6, f"your quote {fact.quote!r} does not name {item!r}, and its sentence gives another {fact.kind}",
                           "quote the words that name the item with its value")
        if fact.item and not _item_named(item, turns, at, q := _asked_before(turns, at.turn)) and not _answered_before(fact, item, turns, q):
            return Refused(6, f"your quote {fact.quote!r} does not name {item!r}, nor answers a question that does",
                           "quote the words that name the item, or record what they said of it as unknown")
        others = tuple(f.value for f in cited.facts if f.kind == "kind" and f.quote != fact.quote and f.value != its_kind)
        last = d if fact.beside and (d := locate(turns, fact.beside, near=at)) and d.sentence == at.sentence and d.first > at.first else at
        if (later := _corrected(fact, turns, last, isinstance(request, BookJob), own=timed if fact.kind == "count" else own,
                                settled=at_outcome.sentence if at_outcome is not None else None, kinds=(its_kind, others))) is not None:
            return Refused(11, f"after your quote {fact.quote!r} the business said {later!r}", "record what the business said last")
        evidence.append(at.sentence)
    if cited.status == "booked" and at_outcome is not None and outcome is not None:
        clock = next((f for f in cited.facts if f.kind == "clock"), outcome)
        if (failed := _failed_after(clock, turns, at_outcome)) is not None:
            return Refused(10, f"in your outcome_quote's turn or after it the business said {failed!r}",
                           "the booking was not made: record declined, or ask them to confirm it")
    if cited.status == "declined" and at_outcome is not None and (agreed := _agreed_after(turns, at_outcome)) is not None:
        return Refused(10, f"after your outcome_quote the business said {agreed!r}, a time the agent asked for",
                       "record what was agreed last: booked, with its quotes")
    return Accepted(tuple(dict.fromkeys(evidence)))


def _between(turns: Sequence[Turn], a: Found, b: Found | None, shared: Sequence[str] = ()) -> str | None:
    """Rule 4: another day or number between a range's days and times in one turn, but `shared` times of the same days."""
    if b is None or b.turn != a.turn:
        return None
    first, second = (a, b) if a.first <= b.first else (b, a)
    said = f" {' '.join(_words(tokens(turns[a.turn].text))[first.last:second.first])} "
    words = functools.reduce(lambda text, q: text.replace(f" {' '.join(_words(tokens(q)))} ", " "), shared, said).split()
    return said.strip() if days_in(words) or any(w[0].isdigit() for w in words) else None


def _said_first(turns: Sequence[Turn], times: Found, days: Found | None, value: str) -> bool:
    """Rule 4: between a range's days and times only its own times, each in its part, in words of saying hours, and no
    time, day nor clock cue after its times in their sentence ("Saturdays we open at ten, ten till four")."""
    ends = [_hhmm(v) for v in value.split("-")]
    if days is None or days.turn != times.turn or days.last > times.first or len(ends) != 2 or None in ends:
        return False
    words, text = _words(tokens(turns[times.turn].text))[days.last:times.first], turns[times.turn].text
    said = [c for c in clocks(words) if c.hour is not None]
    theirs = {i for c in said for i in c.at}
    if not said or len(said) > 2 or any(i not in theirs and not (w in _SAYING_HOURS or w in DAYPARTS or w.endswith("n't"))
                                        for i, w in enumerate(words)):
        return False
    own = (_reads_as(said[0], *ends[0]) and _reads_as(said[1], *ends[1]) if len(said) == 2  # type: ignore[misc]
           else _reads_as(said[0], *ends[1 if _closing(words, said[0]) else 0]))  # type: ignore[misc]
    after = _words(tokens(text[tokens(text)[times.last - 1].end:times.sentence.end]))  # ", all year round" but ", till 5"
    return own and not clocks(after) and not days_in(after) and not any(w[0].isdigit() or w in CLOCK_CUES | RUNS for w in after)


def _carried(turns: Sequence[Turn], at: Found, fact: Fact) -> bool:
    """Rule 4: a times_quote of one end, in a clause with its days, no other time nor (of a closing) an opening, where an
    earlier sentence of its turn naming days gives its other end ("Mon to Thu 8 till 7, Fri and Sat we go till 10")."""
    ends, text, toks = [_hhmm(v) for v in fact.value.split("-")], turns[at.turn].text, tokens(turns[at.turn].text)
    a, b = _span(text, toks[at.first].start, toks[at.last - 1].end)
    clause = _words(tokens(text[a:b]))
    said, days = clocks(clause), [d for d in fact.days if d in WEEKDAYS_SET]
    if None in ends or len(said) != 1 or not days or not set(days) <= days_in(clause) or not (said[0].meridiem or ends[0] < ends[1] or ends[1] < (4, 0)):
        return False
    opening = bool(set(clause[:min(said[0].at)]) & OPENING) and not _closing(clause, said[0])
    after = list(itertools.takewhile(lambda w: not days_in([w]), _words(tokens(text[toks[at.last - 1].end:at.sentence.end]))))
    later = _words(tokens(text[toks[at.last - 1].end:]))  # an opening's turn says no other closing after it ("close early")
    if opening and (any(not _reads_as(c, *ends[1]) for c in clocks(later)) or not clocks(later) and {"close", "closes", "shut"} & set(later)):  # type: ignore[misc]
        return False
    if not _reads_as(said[0], *ends[0 if opening else 1]) or not (opening or _closing(clause, said[0])) or clocks(after) or (  # type: ignore[misc]
            not opening and (OPENING & set(after) or any(w in OPENING and _at(clause, i + 1) not in RUNS for i, w in enumerate(clause)))):
        return False  # (the rest of its sentence until another day: ", from noon")
    before = [(_words(tokens(c)), _words(tokens(text[x:y]))) for x, y in sentence_spans(text[:a]) for c in _CLAUSE_END.split(text[x:y])]
    return any(days_in(whole) and any(_reads_as(y if _closing(c, x) else x, *ends[0]) if not opening  # type: ignore[misc]
                                      else _reads_as(x if _closing(c, x) else y, *ends[1]) for x, y in itertools.pairwise(clocks(c)))
               for c, whole in before)


def _other_days(turns: Sequence[Turn], at: Found) -> Sequence[str]:
    """Rule 5: a quote's words, where one of OTHER_DAYS stands for the days its turn names nowhere else (apart or not)."""
    joined = f" {' '.join(at.words)} "
    if (phrase := next((p for p in OTHER_DAYS if f" {p} " in joined), None)) is None:
        return at.words
    words = _words(tokens(turns[at.turn].text))
    said = days_in([w for w in words[:at.first] + words[at.last:] if w not in SET_APART])
    return [*(d for d in WEEKDAYS if d not in said), *joined.replace(f" {phrase} ", " ").split()]


def _shut(clause: Sequence[str], fact: Fact) -> list[str]:
    """Rule 7: the days (or date) of `fact` its clause says closed: CLOSED, no "open" nor time ("this Monday we're shut")."""
    said = has_phrase(clause, CLOSED) and not {"open", "opens"} & set(clause) and not any(c.hour is not None for c in clocks(clause))
    shut = days_in([w for w in clause if w != "closed"]) if said else set()
    return ([fact.value] if said else []) if fact.kind == "date" else [d for d in WEEKDAYS if d in shut and d in fact.value.split(",")]


def _closes_on(clause: Sequence[str], rest: Sequence[str]) -> bool:
    """Rule 7: "close" ending its clause where the rest of its turn says no time, or before the day or holiday ending it."""
    return clause[-1:] in (["close"], ["closes"]) and not clocks(rest) or any(w in ("close", "closes") and (
        _weekday(_at(clause, j := i + 1 + (_at(clause, i + 1) == "on"))) and j == len(clause) - 1 or " ".join(clause[j:]) in HOLIDAYS)
        for i, w in enumerate(clause))


def _own_times(turns: Sequence[Turn], days: Found, times: Found, value: str) -> str | None:
    """Rule 4: the clause of a range's days where it says other times than its times_quote ("Mon-Fri 8 to 6, Sat 9 to 1")."""
    if times.turn != days.turn:
        return None
    text, toks = turns[days.turn].text, tokens(turns[days.turn].text)
    a, b = _span(text, toks[days.first].start, toks[days.last - 1].end, _BUT_ALONE)  # ("8 to 5 but Saturday 9 to 12")
    said = _words(tokens(text[a:b]))
    apart = not (toks[times.first].start < b and toks[times.last - 1].end > a)
    theirs, ends = [c for c in clocks(said) if c.hour is not None], [t for t in map(_hhmm, value.split("-")) if t]
    return " ".join(said) if apart and theirs and not (len(theirs) == len(ends) and all(map(_reads_as, theirs, *zip(*ends)))) else None


def _another_day(words: Sequence[str], days: Sequence[str]) -> str | None:
    """Rule 5: a range's times quote names only days it is not for ("back tomorrow at nine" for today's)."""
    rel = {"today" if w == "tonight" else w for w in words if w in RELATIVE}
    return next((", ".join(sorted(n)) for n, m in ((days_in(words), set(days) & WEEKDAYS_SET), (rel, set(days) & {"today", "tomorrow"}))
                 if n and m and not n & m), None)


def voicemail(turns: Sequence[Turn], machine: str | None) -> Verdict:
    """Rule 12: the sentences of a recorded greeting that hold its cue ("...after the tone"), or machine detection."""
    heard = [_sentence(turns, t, at, at + len(cue))[0] for t, turn in enumerate(turns) if turn.speaker == "business"
             and (cue := situations.recording(turn.text)) is not None for at in [max(turn.text.lower().find(cue.lower()), 0)]]
    return Accepted(tuple(heard[:3])) if heard or machine == "machine" else Refused(
        12, "nothing the business said is a recorded greeting", "if a person is on the line, talk to them; record voicemail only for a recorded greeting")


def _unsaid(turns: Sequence[Turn], quote: str) -> Refused:
    agent = " (those are the agent's words, not the business's)" if locate(turns, quote, "agent") is not None else ""
    return Refused(1, f"your quote {quote!r} is not in what the business said{agent}", _AGAIN)
