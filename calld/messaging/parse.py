"""Understanding a text, deterministically: the common forms people type, and the keywords.

Pure functions of the text. A text is one of:

- a Keyword (STOP, START, HELP, YES, NO, in the spellings people use);
- an AskIntent or a BookIntent: what `calld-ctl ask` / `book` would be given, still unvalidated
  (the request models validate it, as they validate calld-ctl's flags);
- Incomplete: clearly a request, but a part is missing (the reply says which);
- Several: two questions in one text (each is asked for in its own text, never guessed at);
- FollowUp: a question that names no number ("what about Sunday?", "do they have propane?",
  "which aisle?", "call them again"): it is about the business of the sender's last request,
  which the port finds in the store (`follow_up` turns the two into a request);
- Unrecognized: anything else (a text model may try; see calld.messaging.model).

Forms understood: "hours +1 415 555 0142", "is the cast iron skillet in stock at 415-555-0142?",
"which aisle is the WD-40 at +1 415 555 0142", "book a table for 2 Friday 7pm at +1 415 555 0142,
outdoor if possible". A text with two phone numbers is not guessed at.
"""

from __future__ import annotations

import re
import unicodedata
from typing import Literal

from attrs import frozen

from calld.domain.ids import DEFAULT_REGION, typed_number

KeywordWord = Literal["stop", "start", "help", "yes", "no", "thanks"]


@frozen
class Keyword:
    word: KeywordWord


@frozen
class AskIntent:
    to: str  # E.164
    ask: Literal["hours", "stock", "aisle"]
    item: str | None = None


@frozen
class BookIntent:
    to: str  # E.164
    party: int
    time: str
    notes: str | None = None


@frozen
class Incomplete:
    missing: Literal["number", "area_code", "party", "time", "item"]
    kind: Literal["ask", "book"]


@frozen
class Several:
    """Two questions in one text ("hours, and do you have duct tape?"): one call asks one thing."""


@frozen
class Unrecognized:
    pass


Weekday = Literal["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"]
WEEK: tuple[Weekday, ...] = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
DayWord = Weekday | Literal["today", "tomorrow"]


@frozen
class FollowUp:
    """A question that names no number: it is about the business of the sender's last request.

    - "hours": opening hours, no day named ("what time do they close?");
    - "day": opening hours on `days` ("what about Sunday?", "and Saturday?", "open this weekend?");
    - "stock" / "aisle": about `item`, or the last request's item when None ("which aisle is it in?");
    - "same": the last question again about another `item` ("what about propane?");
    - "again": the last request again ("call them again", "try again");
    - "book": a table (`party`, `time`, `notes`) where the last request was;
    - "elsewhere": the last request again, at another number `to` ("what about 555-555-0143?").
    A "day" follow-up may name the number it is about (`to`: "what about Sunday at 555-555-0143?").
    """

    what: Literal["hours", "day", "stock", "aisle", "same", "again", "book", "elsewhere"]
    days: tuple[DayWord, ...] = ()
    item: str | None = None
    party: int | None = None
    time: str | None = None
    notes: str | None = None
    to: str | None = None


Parsed = Keyword | AskIntent | BookIntent | Incomplete | Several | FollowUp | Unrecognized

# Messaging's conventional keywords. Linq marks a chat opted out on STOP, UNSUBSCRIBE, OPTOUT,
# CANCEL, END, QUIT and OPT OUT (the whole message); calld honours those in any case, too.
_KEYWORDS: dict[str, KeywordWord] = {
    **dict.fromkeys(("stop", "stopall", "stop all", "unsubscribe", "optout", "opt out", "opt-out", "cancel", "end", "quit",
                     "stop please", "please stop", "stop texting", "stop texting me", "stop messaging me"), "stop"),
    **dict.fromkeys(("start", "unstop", "subscribe"), "start"),
    **dict.fromkeys(("help", "info", "?", "commands"), "help"),
    **dict.fromkeys(("yes", "y", "yep", "yeah", "yes please", "ok", "okay", "sure", "go ahead", "do it", "call", "call them", "👍"), "yes"),
    **dict.fromkeys(("no", "n", "nope", "nah", "no thanks", "no thank you", "no thx", "don't", "dont", "never mind", "nevermind",
                     "nvm", "nm", "nvm then", "never mind then", "skip", "forget it", "forget about it"), "no"),
}

_LOCAL_NUMBER = re.compile(r"(?<![\d:])\d{3}[-.\s]?\d{4}(?![\d:])")  # seven digits, no area code
_PHONE_RUN = re.compile(r"\+?\(?\d[\d\s().\-]{5,}\d\)?")
_WEEKDAY = r"(?:mon(?:day)?|tue(?:s|sday)?|wed(?:nesday)?|thu(?:rs|rsday)?|fri(?:day)?|sat(?:urday)?|sun(?:day)?)"
_MONTH = r"(?:jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*\.?"
_DATE = rf"(?:{_MONTH}\s+\d{{1,2}}(?:st|nd|rd|th)?|\d{{1,2}}(?:st|nd|rd|th)?\s+(?:of\s+)?{_MONTH})(?:,?\s+\d{{4}})?"
# The day as the booking time reads it (calld.policy.when), days already gone included, so that
# "last Friday 7pm" is refused as past rather than read as the Friday ahead.
_DAY = (rf"(?:today|tonight|tomorrow|(?:the\s+)?day\s+before\s+yesterday|yesterday|last\s+night|"
        rf"(?:\d{{1,3}}|an?|one|two|three|four|five|six|seven)\s+(?:day|week)s?\s+ago|"
        rf"(?:last\s+|this\s+|next\s+)?{_WEEKDAY}|{_DATE})")
_CLOCK = r"(?:\d{1,2}(?::\d{2})?\s*(?:am|pm|a\.m\.|p\.m\.)|\d{1,2}:\d{2}|noon|midnight)"
_TIME = re.compile(rf"\b(?:(?:on\s+)?{_DAY}\s*(?:at\s+)?{_CLOCK}|{_CLOCK}\s*(?:on\s+)?{_DAY}|{_CLOCK}|{_DAY})\b", re.IGNORECASE)
_PARTY = re.compile(r"\b(?:for|party of|table of)\s+(\d{1,3})\b|\b(\d{1,3})\s+(?:people|persons|guests|of us|adults)\b", re.IGNORECASE)
_WORD_NUMBERS = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9, "ten": 10}
_HOURS = re.compile(r"\b(hours?|open(?:ing)?|clos(?:e|es|ing)|what time)\b", re.IGNORECASE)
_BOOK = re.compile(r"\b(book|reserve|reservation|table for)\b", re.IGNORECASE)
_AISLE = [
    re.compile(r"^where\s+(?:can|could|do|would|will)\s+(?:i|we|you)\s+find\s+(?P<item>.+?)(?:\s+(?:in|at))?$", re.IGNORECASE),
    re.compile(r"^(?:which|what)\s+aisle\s+(?:is|are)\s+(?P<item>.+?)(?:\s+(?:in|at|on|kept))?$", re.IGNORECASE),
    re.compile(r"^(?:which|what)\s+aisle\s+(?:has|have|carries|stocks|for)\s+(?P<item>.+?)(?:\s+(?:in|at|on))?$", re.IGNORECASE),
    re.compile(r"^where\s+(?:is|are|do you keep|do they keep)\s+(?P<item>.+?)(?:\s+(?:in|at|on|kept))?$", re.IGNORECASE),
    re.compile(r"^aisle\s+(?:for\s+)?(?P<item>.+?)(?:\s+(?:at|in))?$", re.IGNORECASE),
]
_STOCK = [
    re.compile(r"^(?:is|are)\s+(?:there\s+)?(?P<item>.+?)\s+(?:in stock|available|on the shelf)(?:\s+(?:at|in))?$", re.IGNORECASE),
    re.compile(r"^(?:do|does)\s+(?:you|they|it|the store)\s+(?:have|carry|stock)\s+(?P<item>.+?)(?:\s+(?:in stock|at|in))?$", re.IGNORECASE),
    re.compile(r"^(?:stock|in stock)\s+(?P<item>.+?)(?:\s+(?:at|in))?$", re.IGNORECASE),
    re.compile(r"^(?!(?:is|are|do|does)\b)(?P<item>.+?)\s+in stock(?:\s+(?:at|in))?$", re.IGNORECASE),
]
# Where one question ends and another begins ("hours, and is the skillet in stock?").
_CLAUSES = re.compile(r"[?;!,]|\b(?:and|also|plus)\b", re.IGNORECASE)
_ARTICLE = re.compile(r"^(?:the|a|an|any|some)\s+", re.IGNORECASE)
_POINTER = re.compile(r"(?:it|them|that|this|those|these|one|ones|the|a|an|any|some)", re.IGNORECASE)
# Follow-ups: what opens a reply to the last answer ("and ...", "ok so ..."), the days a text names,
# and the ways of asking for the last request again.
_LEAD = re.compile(r"^(?:(?:and|also|ok(?:ay)?|so|oh|hmm+|great|cool|thanks|thank you|then|but|well)\b[\s,.!]*)+", re.IGNORECASE)
_WEEKDAY = {"mon": "monday", "tue": "tuesday", "tues": "tuesday", "wed": "wednesday", "thu": "thursday", "thur": "thursday",
            "thurs": "thursday", "fri": "friday", "sat": "saturday", "sun": "sunday"}
_DAYS = re.compile(r"\b(?:(?P<day>mon(?:day)?|tue(?:s|sday)?|wed(?:nesday)?|thu(?:r|rs|rsday)?|fri(?:day)?|sat(?:urday)?|sun(?:day)?)s?"
                   r"|(?P<weekend>(?:the\s+|this\s+)?weekends?)|(?P<rel>today|tonight|tomorrow))\b", re.IGNORECASE)
_ONE_DAY = re.sub(r"\?P<\w+>", "?:", _DAYS.pattern)
_DAY_LIST = rf"(?:{_ONE_DAY})(?:\s*(?:,|and|or|&|\+|\bn\b)\s*(?:{_ONE_DAY}))*"
_DAY_ONLY = re.compile(rf"^(?:(?:what|how)\s+about\s+)?(?:on\s+|for\s+)?{_DAY_LIST}(?:\s+(?:then|too|as well))?$", re.IGNORECASE)
_SAME = re.compile(r"^(?:what|how)\s+about\s+(?P<item>.+)$", re.IGNORECASE)
_AGAIN = re.compile(
    r"^(?:please\s+)?(?:(?:can|could|would|will)\s+you\s+)?(?:"
    r"(?:call|ring|phone|try|ask|dial)(?:\s+(?:them|him|her|it|that|the store|the place|that number))?"
    r"\s+(?:again|back|once more|one more time)|retry|redial|again|one more time|once more)(?:\s+please)?$",
    re.IGNORECASE,
)


def parse_text(text: str, region: str = DEFAULT_REGION) -> Parsed:
    """What a text asks for; a number without + in it is read as dialled in `region` (CALLD_REGION)."""
    text = _plain_quotes(text)
    words = _fold(text)
    if _THANKS.fullmatch(words):
        return Keyword("thanks")
    if words in _KEYWORDS:
        return Keyword(_KEYWORDS[words])
    if (asked := words.rstrip(" ?")) in _KEYWORDS and _KEYWORDS[asked] == "help":  # "help?"
        return Keyword("help")
    numbers = find_numbers(text, region)
    rest = text
    for raw, _ in numbers:
        rest = rest.replace(raw, " ")
    rest = _expand_shorthand(" ".join(rest.split()).strip(" ,;:-?!."))
    rest = _LEAD.sub("", rest).strip(" ,;:-?!.")  # "and do they have propane?", "ok, which aisle?"
    kind = _kind(rest)
    if kind is None:
        if not numbers and not _LOCAL_NUMBER.search(text):
            return _follow_up(rest)
        if len(numbers) == 1:
            return _elsewhere(rest, numbers[0][1])
        return Unrecognized()
    if kind != "book" and len({k for clause in _CLAUSES.split(rest) if (k := _kind(clause))}) > 1:
        return Several()
    if len(numbers) != 1:
        if numbers:
            return Unrecognized()
        if _LOCAL_NUMBER.search(text):  # "555-0142": which area?
            return Incomplete("area_code", "book" if kind == "book" else "ask")
        return _follow_up_asked(rest, kind)
    to = numbers[0][1]
    if kind == "book":
        return _book(rest, to)
    if kind == "hours":
        return AskIntent(to, "hours")
    item = _item(rest, _STOCK if kind == "stock" else _AISLE)
    if item is None:
        return Incomplete("item", "ask")
    return AskIntent(to, kind, item)


# "Thanks" after an answer: a courtesy, not a request.
_THANKS = re.compile(r"(?:(?:ok(?:ay)?|k|cool|great|perfect|awesome|nice|got it|amazing|wonderful)[\s,.!]+)*"
                     r"(?:thanks?(?:\s+(?:a lot|so much|again|a bunch))?|thank you(?:\s+(?:so much|again))?|thx|thnx|ty|tysm|cheers)"
                     r"(?:[\s,.!]+(?:(?:so much|again)[\s,.!]*)?)?[\s!.]*")
# Shorthand and the common misspellings people text, as the words the forms above know.
_SHORTHAND = [(re.compile(p, re.IGNORECASE), w) for p, w in (
    (r"\b(?:what|wat|wht|whut|how)\s+(?:abt|abut|bout|aboot)\b", "what about"),
    (r"\bwat\s+about\b", "what about"),
    (r"\b(?:hbu|wbu|hby|wby)\b", "what about"),
    (r"\b(?:tmrw|tmrow|tmr|tmw|tmrrw|tomm?orr?ow|tomm?or?row|tomorow|tomoro|2moro|2morrow|2mrw)\b", "tomorrow"),
    (r"\b(?:pls|plz|plez|pleez)\b", "please"),
    (r"(?<![\w'-])u(?![\w'-])", "you"),
    (r"(?<![\w'-])em(?![\w'-])", "them"),
    (r"(?<![\w'-])r(?![\w'-])", "are"),
)]


def _plain_quotes(text: str) -> str:
    """A phone's smart punctuation as the plain marks ("don\u2019t", "12\u201d")."""
    return text.translate({0x2018: "'", 0x2019: "'", 0x201B: "'", 0x2032: "'", 0x201C: '"', 0x201D: '"', 0x201F: '"', 0x2033: '"'})


def _expand_shorthand(rest: str) -> str:
    for pattern, words in _SHORTHAND:
        rest = pattern.sub(words, rest)
    return rest


def _fold(text: str) -> str:
    # Full-width letters ("ＳＴＯＰ") read as their plain forms; zero-width and other format characters
    # pasted along with a word (U+200B, U+FEFF) are not part of it.
    plain = "".join(c for c in unicodedata.normalize("NFKC", text) if unicodedata.category(c) != "Cf")
    return " ".join(plain.lower().split()).strip(" .!")


def _kind(rest: str) -> Literal["book", "hours", "stock", "aisle"] | None:
    if _BOOK.search(rest):
        return "book"
    if re.search(r"\baisle\b|^where\s+(?:is|are|do|can|could|would|will)\b", rest, re.IGNORECASE):
        return "aisle"
    if re.search(r"\b(in stock|available|on the shelf|do (?:you|they) (?:have|carry|stock)|stock)\b", rest, re.IGNORECASE):
        return "stock"
    if _HOURS.search(rest):
        return "hours"
    return None


def find_numbers(text: str, region: str = DEFAULT_REGION) -> list[tuple[str, str]]:
    """Each phone number in the text: (as written, as E.164). A number without + is read as dialled
    in `region` (CALLD_REGION), the way calld-ctl's --to is read (calld.domain.ids.typed_number)."""
    found = []
    for m in _PHONE_RUN.finditer(text):
        raw = m.group(0).strip()
        # A bare number just before it ("for 2 at 7 555-555-0142") is not part of it: try the run
        # whole, then without its leading words, one at a time.
        for start in (w.start() for w in re.finditer(r"\S+", raw)):
            if (e164 := _e164(raw[start:], region)) is not None:
                found.append((raw[start:], e164))
                break
    return found


def _e164(raw: str, region: str) -> str | None:
    try:
        return str(typed_number(raw, region))
    except ValueError:
        return None


def _item(rest: str, patterns: list[re.Pattern[str]]) -> str | None:
    for pattern in patterns:
        if m := pattern.match(rest):
            item = _ARTICLE.sub("", m.group("item").strip(" ,;:-?!.\"'"))
            # Only a pointer or an article names nothing to ask about ("is the  in stock at ...").
            if item and not _POINTER.fullmatch(item):
                return item
    return None


def _book(rest: str, to: str) -> BookIntent | Incomplete:
    head, _, tail = rest.partition(",")
    notes = tail.strip(" ,;:-?!.") or None
    party_match = _PARTY.search(head)
    if party_match is None:
        word = re.search(r"\b(?:for|party of)\s+(" + "|".join(_WORD_NUMBERS) + r")\b", head, re.IGNORECASE)
        party = _WORD_NUMBERS[word.group(1).lower()] if word else None
    else:
        party = int(party_match.group(1) or party_match.group(2))
    if party is None:
        return Incomplete("party", "book")
    when = _TIME.search(_PARTY.sub(" ", head))
    if when is None:
        return Incomplete("time", "book")
    time = " ".join(when.group(0).split())
    return BookIntent(to, party, time, notes)


def _follow_up(rest: str) -> FollowUp | Unrecognized:
    """A text with no number and no question word of its own: a day, "again", or "what about X"."""
    if _DAY_ONLY.fullmatch(rest):
        return FollowUp("day", days=days_named(rest))
    if _AGAIN.fullmatch(rest):
        return FollowUp("again")
    if m := _SAME.fullmatch(rest):
        item = _ARTICLE.sub("", m.group("item").strip(" ,;:-?!.\"'"))
        if item and not _POINTER.fullmatch(item):
            return FollowUp("same", item=item)
    return Unrecognized()


_ELSEWHERE = re.compile(
    r"^(?:(?:what|how)\s+about|same(?:\s+question)?|try|ask|call|and|or|ok(?:ay)?)?(?:\s+(?:at|for|with|to))?"
    r"(?:\s+(?:instead|then|too|as well|please))?$", re.IGNORECASE)


def _elsewhere(rest: str, to: str) -> FollowUp | Unrecognized:
    """A number and no question of its own: "what about 555-555-0143?" and "call them again at
    555-555-0142" ask the last question there; "what about Sunday at 555-555-0143?" is a day
    follow-up about that number (answered like any other day follow-up)."""
    bare = re.sub(r"\s+(?:at|for|to)$", "", rest, flags=re.IGNORECASE)
    if _ELSEWHERE.fullmatch(rest) or _ELSEWHERE.fullmatch(bare) or _AGAIN.fullmatch(bare):
        return FollowUp("elsewhere", to=to)  # "call them again 555-555-0142": the last request, at that number
    if _DAY_ONLY.fullmatch(bare):
        return FollowUp("day", days=days_named(bare), to=to)
    return Unrecognized()


def _follow_up_asked(rest: str, kind: Literal["book", "hours", "stock", "aisle"]) -> FollowUp | Incomplete:
    """A question that names no number: about the last request's business."""
    if kind == "hours":
        days = days_named(rest)
        return FollowUp("day", days=days) if days else FollowUp("hours")
    if kind == "book":
        booking = _book(rest, "")
        if isinstance(booking, Incomplete):
            return booking
        return FollowUp("book", party=booking.party, time=booking.time, notes=booking.notes)
    return FollowUp(kind, item=_item(rest, _STOCK if kind == "stock" else _AISLE))


def days_named(text: str) -> tuple[DayWord, ...]:
    """The days a text names, in order, once each: "saturday and sunday", "the weekend", "tonight"."""
    found: list[DayWord] = []
    for m in _DAYS.finditer(text):
        if m.group("day"):
            word = m.group("day").lower()
            named: tuple[DayWord, ...] = (_WEEKDAY.get(word, word),)  # type: ignore[assignment]
        elif m.group("weekend"):
            named = ("saturday", "sunday")
        else:
            named = ("tomorrow",) if m.group("rel").lower() == "tomorrow" else ("today",)
        found.extend(d for d in named if d not in found)
    return tuple(found)


# "the 12 inch one", "a bigger one", "the red ones": a kind of the item asked about last.
_ONE_OF = re.compile(r"(?P<which>.+?)\s+(?:one|ones|kind|size|version)", re.IGNORECASE)


def follow_up(parsed: FollowUp, last: AskIntent | BookIntent) -> AskIntent | BookIntent | None:
    """The request a follow-up makes of the last request's business; None when it makes none by itself
    (hours on a day, which may be answered from the last result, or an item the last request never had)."""
    match parsed.what:
        case "again":
            return last
        case "hours":
            return AskIntent(last.to, "hours")
        case "stock" | "aisle":
            before = last.item if isinstance(last, AskIntent) else None
            item = parsed.item or before
            if parsed.item and before and (m := _ONE_OF.fullmatch(parsed.item)):  # "the 12 inch one": of the last item
                item = f"{m.group('which')} {before}"
            return AskIntent(last.to, parsed.what, item) if item else None
        case "same":
            if isinstance(last, AskIntent) and last.ask in ("stock", "aisle") and parsed.item:
                return AskIntent(last.to, last.ask, parsed.item)
            return None
        case "elsewhere":
            assert parsed.to is not None
            if isinstance(last, AskIntent):
                return AskIntent(parsed.to, last.ask, last.item)
            return BookIntent(parsed.to, last.party, last.time, last.notes)
        case "book":
            assert parsed.party is not None and parsed.time is not None
            return BookIntent(last.to, parsed.party, parsed.time, parsed.notes)
    return None
