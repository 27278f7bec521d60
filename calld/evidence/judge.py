"""Does what the business said support this record? The app's judgement, not the model's. Pure.

How support is judged (deterministic; every verdict carries a `why` for the journal):
 - Only business turns count. Agent speech is never support, whatever it says.
 - Text is read sentence by sentence with `calld.evidence.words`: clock times (number words read
   as numbers, am/pm compared only where both sides said it), days and runs of days, stock
   statements (a negation wins over the "have" inside it), places in a store, refusals,
   "don't know", booking confirmations, recorded greetings.
 - A positive record must answer the question asked and every key fact in it must have been
   said by the business:
     hours   answer_text states a time or a day; each time and day in it is in the business's words,
             a time for the days the business said it for, a day open or closed as they said,
             and "open 24 hours" only when they said it ("24/7", "around the clock"); a time said
             not to be it ("not at nine"), or in the past, is none, and one for a holiday, a season
             or next month counts only with that qualifier in answer_text;
     stock   answer_text says in / out of stock (or limited); the business's last word on it after
             the ask says the same (limited counts as in stock), with the same quantity when
             answer_text gives one, and every number in answer_text was said;
     aisle   answer_text names an aisle, department or place; the business named the same one, as
             where the item is (not a landmark near it), and did not correct it after;
     booked  the business confirmed (a confirmation, not only agent words; not a question, not
             denied, not a waitlist, an offer or a condition, not a "that's right" to a no), and
             each of day, time and party is either said by the business or is what the user asked
             for; a time, day or party in the confirmation is the booking's, and the time asked
             for, once said full or passed over for another offered, must be confirmed by name.
 - A declined record needs business words that refuse, do not know, or (a booking) say it is full
   or offer only another time; it is refused when the business's last word on it was the answer.
 - A voicemail record needs a recorded greeting in the business's words or the carrier's machine
   detection.
The quotes that carried the support become the result's evidence.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from attrs import frozen

from calld.domain.questions import QuestionType
from calld.domain.transcript import Turn
from calld.evidence import words as w


from calld.evidence.cite import Judgement, Quote, Supported, Unsupported  # noqa: E402  (one set of verdict types)



@frozen
class _Sentence:
    turn: int
    start: int
    end: int
    text: str
    after_ask: bool
    prompt: str = ""  # the agent's last words on the line before it: what it answers
    # The days the agent's question just before names, for a reply that names none of its own:
    # "Are you open on Sunday?" "Nope." / "What time do you close on Sunday?" "Six."
    asked_days: frozenset[w.DayKey] | None = None


def _question_days(prompt: str) -> frozenset[w.DayKey] | None:
    """The days named in the agent's last question, when its words end with one."""
    spans = [(a, b) for a, b in w.sentence_spans(prompt) if prompt[a:b].rstrip().endswith("?")]
    if not spans or spans[-1][1] < len(prompt.rstrip()):
        return None
    question = prompt[spans[-1][0]:spans[-1][1]]
    return frozenset().union(*(w.day_keys(d) for d in w.days(question))) or None


def _business_sentences(turns: Sequence[Turn]) -> list[_Sentence]:
    out: list[_Sentence] = []
    asked = False
    prompt = ""
    replying: frozenset[w.DayKey] | None = None  # the days asked, until the business names a day itself
    for i, turn in enumerate(turns):
        if turn.speaker == "agent":
            if turn.on_line and turn.text.strip():  # words kept off the line asked nobody
                asked, prompt = True, turn.text
                replying = _question_days(turn.text)
            continue
        for a, b in w.sentence_spans(turn.text):
            text = turn.text[a:b]
            if replying is not None and w.days(text):
                replying = None
            out.append(_Sentence(i, a, b, text, asked, prompt, replying))
        replying = None  # only the reply right after the question
    return out


def business_sentences(turns: Sequence[Turn]) -> list[_Sentence]:
    """The business's sentences, each knowing whether it came after the agent's ask."""
    return _business_sentences(turns)


def quote(turns: Sequence[Turn], s: _Sentence) -> Quote:
    start_ms, end_ms = turns[s.turn].place(s.start, s.end)
    return Quote(s.turn, s.start, s.end, s.text, start_ms, end_ms)


def _quotes(turns: Sequence[Turn], sentences: Sequence[_Sentence]) -> tuple[Quote, ...]:
    seen: dict[tuple[int, int], _Sentence] = {}
    for s in sentences:
        seen.setdefault((s.turn, s.start), s)
    return tuple(quote(turns, s) for _, s in sorted(seen.items()))


_OPEN_WORDS = re.compile(r"\b(open|close[sd]?|hours)\b", re.I)
_KEEP_LISTENING = "do not record yet: keep listening, and record only what the business itself says"


# -- answered --------------------------------------------------------------------------------------------


def _clock_phrase(c: w.Clock) -> str:
    ampm = "" if c.pm is None else (" PM" if c.pm else " AM")
    return f"{c.hour % 12 or 12}:{c.minute:02d}{ampm}" if c.hour <= 12 else f"{c.hour}:{c.minute:02d}"


_DaysSaid = dict[int | str, tuple[bool, _Sentence, int]]  # a day: open or closed, where the business last said it
_TimeSaid = tuple[int, _Sentence, w.ClockFound, str | None]  # a time: its sentence's place, the sentence, its role


def _days_said_open(sentences: Sequence[_Sentence]) -> _DaysSaid:
    """Each weekday (0-6) or relative day ("today", "tomorrow"), and whether the business's last word
    on it was open or closed, with the sentence that said so. Later sentences win (a correction
    comes after what it corrects); in one sentence a day named alone wins over a run that covers it
    ("open every day except Sunday")."""
    said: dict[int | str, tuple[tuple[int, int, int], bool, _Sentence, int]] = {}
    for n, s in enumerate(sentences):
        if ((m := w.EVERY_DAY_AROUND_THE_CLOCK.search(s.text)) and not _not_this_store(s.text, m.start())
                and w.always_open(s.text)):
            for key in range(7):  # "24/7": open every day
                if key not in said or said[key][0] <= (n, -1, m.start()):
                    said[key] = ((n, -1, m.start()), True, s, m.start())
        # A time said for days says they are open, below any word naming them ("until 9, but on
        # Sundays until 6": Monday is open; "24 hours except Sundays": Saturday is).
        for f in [*w.clocks(s.text), *w.always_open(s.text)]:
            if (_not_this_store(s.text, f.start) or w.FORMERLY.search(w.clause_of(s.text, f.start))
                    or w.negated_time(s.text, f)):
                continue
            for key in sorted(k for k in w.clock_days(s.text, f) or () if isinstance(k, int)):
                if key not in said or said[key][0] <= (n, -2, f.start):
                    said[key] = ((n, -2, f.start), True, s, f.start)
        if (rest := w.other_days(s.text)) is not None:  # "otherwise 9 to 6": the days not named
            rest_days, rest_open, at = rest
            for key in rest_days:
                if key not in said or said[key][0] <= (n, -1, at):
                    said[key] = ((n, -1, at), rest_open, s, at)
        if s.asked_days is not None and (is_open := _yes_or_no(s)) is not None:
            for key in s.asked_days:
                if key not in said or said[key][0] <= (n, 0, 0):
                    said[key] = ((n, 0, 0), is_open, s, 0)
        for d in w.days(s.text):
            if _not_this_store(s.text, d.start):
                continue
            keys: list[int | str] = [d.relative] if d.relative is not None else sorted(d.days)
            rank = (n, 1 if d.relative is not None or len(d.days) == 1 else 0, d.start)
            for key in keys:
                if key not in said or said[key][0] <= rank:
                    said[key] = (rank, w.day_open(s.text, d), s, d.start)
    return {k: (is_open, s, at) for k, (_, is_open, s, at) in said.items()}


def _yes_or_no(s: _Sentence) -> bool | None:
    """A reply to a question about days that names none: open when it gives a time or says yes to
    "are you open?", closed when it says no to it or "we're closed"; else it says nothing of them."""
    if _asked(s) or _not_this_store(s.text, 0):
        return None
    if any(not w.negated_time(s.text, f) for f in w.clocks(s.text)):
        return True  # "what time do you close on Sunday?" "six."
    if w.SAYS_NO.match(s.text) and (w.ASKED_IF_OPEN.search(s.prompt) or re.search(r"\bclosed\b", s.text, re.I)):
        return False
    if w.SAYS_YES.match(s.text) and w.ASKED_IF_OPEN.search(s.prompt):
        return True
    return None


def _days_of(s: _Sentence, f: w.Found) -> frozenset[w.DayKey] | None:
    """The days a time the business said is for: named by its words, or by the question it answers."""
    return w.clock_days(s.text, f) or s.asked_days


def _day_names(keys: frozenset[w.DayKey]) -> str:
    weekdays = sorted(k for k in keys if isinstance(k, int))
    named = [w.WEEKDAYS[k].title() for k in weekdays] + sorted(k for k in keys if isinstance(k, str))
    if weekdays == list(range(5)) and len(named) == 5:
        return "weekdays"
    return ", ".join(named) or "days it did not name"


def _not_this_store(text: str, pos: int) -> bool:
    """Hours said of another store, or of a part with hours of its own (the pharmacy, the drive-thru)."""
    return w.elsewhere(text, pos) or w.other_part(text, pos)


def _days_in(text: str) -> set[int]:
    return {i for d in w.days(text) for i in d.days}


def _asked(s: _Sentence) -> bool:
    """A question states nothing: "Until 9 tonight?" asks it back."""
    return s.text.rstrip().endswith("?")


# What a number said alone answers: a time, when the agent asked about hours ("And weekends?"), not
# "How many locations do you have?" or "For how many?".
_TIME_ASKED = re.compile(r"\b(?:hours?|open|opens|opening|close|closes|closing|what time|when|until|till|late|early|today|"
                         r"tomorrow|tonight|weekends?|weekdays?|(?:mon|tues|wednes|thurs|fri|satur|sun)days?)\b", re.I)


def _clocks_said(sentences: Sequence[_Sentence]) -> list[_TimeSaid]:
    """Every clock time the business said about this store, with its sentence's place and its role."""
    return [(n, s, f, w.clock_role(s.text, f)) for n, s in enumerate(sentences) for f in w.clocks(s.text)
            if not _asked(s) and (not f.bare or _TIME_ASKED.search(s.prompt)) and not _not_this_store(s.text, f.start) and not w.FORMERLY.search(w.clause_of(s.text, f.start))
            and not w.negated_time(s.text, f)]


_Facts = list[tuple[_Sentence, int]]  # each fact a record rests on: its sentence and where in it


def _hours(turns: Sequence[Turn], answer: str) -> Judgement:
    clocks, days, always = w.clocks(answer), w.days(answer), w.always_open(answer)
    if not clocks and not days and not always:  # "not open 24 hours" claims no such thing
        return Unsupported(
            "answer_text does not state any hours (no time and no day)",
            "record answered only once the business has said when it is open; otherwise keep listening",
        )
    sentences = _business_sentences(turns)
    facts: _Facts = []
    said_times = _clocks_said(sentences) if clocks else []
    open_days = _days_said_open(sentences) if days else {}
    for found in ([_around_the_clock(sentences, answer, always[0])] if always else []) + [
            _time_said(said_times, answer, c) for c in clocks] + [_day_said(open_days, answer, d) for d in days]:
        if isinstance(found, Unsupported):
            return found
        facts.extend(found)
    said = ", ".join([_clock_phrase(c.clock) for c in clocks] + [answer[d.start:d.end] for d in days]
                     + (["open around the clock"] if always else []))
    supported = Supported(_quotes(turns, [s for s, _ in facts]), f"hours {said} all said by the business")
    return _unless_unsure(answer, facts, supported)


def _around_the_clock(sentences: Sequence[_Sentence], answer: str, claim: w.Found) -> Unsupported | _Facts:
    """"Open 24 hours": said by the business of itself, now, for the days claimed."""
    said = [(s, f) for s in sentences for f in w.always_open(s.text) if not _not_this_store(s.text, f.start)]
    if not said:
        return Unsupported("the business has not said it is open around the clock", _KEEP_LISTENING)
    claimed_for = w.clock_days(answer, claim)
    said = [(s, f) for s, f in said if w.days_fit(_days_of(s, f), claimed_for)]
    if not said:
        return Unsupported(f"the business did not say it is open around the clock on {_day_names(claimed_for or frozenset())}",
                           "record each day's hours the way the business said them, with their words in answer_text")
    return [(said[-1][0], said[-1][1].start)]


def _time_said(said_times: Sequence[_TimeSaid], answer: str, c: w.ClockFound) -> Unsupported | _Facts:
    """A time in the record: said by the business, in the same role (opening or closing), for the
    days the record gives it, and not replaced by a later word."""
    role = w.clock_role(answer, c)
    same = [(n, s, f, r) for n, s, f, r in said_times if f.clock.same_time(c.clock)]
    if not same:
        return Unsupported(f"the business has not said {_clock_phrase(c.clock)}", _KEEP_LISTENING)
    fitting = [x for x in same if role is None or x[3] is None or x[3] == role]
    if not fitting:
        other = "opening" if same[0][3] == "open" else "closing"
        return Unsupported(
            f"the business said {_clock_phrase(c.clock)} as its {other} time, not its "
            f"{'opening' if role == 'open' else 'closing'} time",
            "record the opening and closing times the way the business said them",
        )
    claimed_for = w.clock_days(answer, c)
    placed = [x for x in fitting if w.days_fit(_days_of(x[1], x[2]), claimed_for)]
    if not placed:
        said_for = _days_of(fitting[-1][1], fitting[-1][2]) or frozenset()
        return Unsupported(
            f"the business said {_clock_phrase(c.clock)} for {_day_names(said_for)}, not for "
            f"{_day_names(claimed_for or frozenset())}: {fitting[-1][1].text!r}",
            "record each day's hours the way the business said them, with their words in answer_text",
        )
    usual = [x for x in placed if (q := w.qualifier(x[1].text, x[2].start)) is None or w.qualified_as(q, answer)]
    if not usual:
        q = w.qualifier(placed[-1][1].text, placed[-1][2].start)
        return Unsupported(
            f"the business said {_clock_phrase(c.clock)} for {re.sub(r'^(?:for|on|during|over) ', '', q)} only: {placed[-1][1].text!r}",
            f"record the usual hours, or say in answer_text that this time is for {q}",
        )
    n, hit, at, _ = usual[-1]
    if role is not None:
        # A later time for the same end of the day replaces it: for the same days, or, said
        # without days, as a correction ("actually, we close at 4").
        own_days: frozenset[w.DayKey] = claimed_for or frozenset(_days_in(answer))
        for m, s, f, r in said_times:
            later_days = _days_of(s, f)
            # In one sentence: for days named ("every day till 5 but Sundays till 3"), or after a
            # correction ("we close at 9, sorry no, at 8").
            corrected = bool(w.CORRECTS_BETWEEN.search(s.text, at.end, f.start) if m == n
                             else w.CORRECTION.search(s.text) or w.OPENS_WITH_NO.match(s.text))
            later = m > n or (m == n and f.start > at.start and (bool(later_days) or corrected))
            # a corrected time takes the role of the one it corrects ("at 9, sorry no, at 8")
            if (later and (r == role or (r is None and corrected)) and not f.clock.same_time(c.clock)
                    and ((later_days & own_days) if later_days else corrected)):
                return Unsupported(
                    f"the business later said {_clock_phrase(f.clock)}: {s.text!r}",
                    "record the business's last word on the hours, with their words in answer_text",
                )
    return [(hit, at.start)]


def _day_said(open_days: _DaysSaid, answer: str, d: w.DaysFound) -> Unsupported | _Facts:
    """A day in the record, open or closed as the business last said it was."""
    claims_open = w.day_open(answer, d)
    keys: list[int | str] = [d.relative] if d.relative is not None else sorted(d.days)
    said = d.relative if d.relative is not None else ", ".join(w.WEEKDAYS[i].title() for i in sorted(d.days))
    if any(k not in open_days for k in keys):
        return Unsupported(f"the business has not said anything about {said}", _KEEP_LISTENING)
    contrary = [open_days[k][1] for k in keys if open_days[k][0] is not claims_open]
    if contrary:
        return Unsupported(
            f"the business said it is {'closed' if claims_open else 'open'} then: {contrary[0].text!r}",
            "record answered with what the business said, open or closed, in answer_text",
        )
    return [(open_days[k][1], open_days[k][2]) for k in keys]


_CONTRAST = re.compile(r"\b(?:but|however|though|although)\b", re.I)


def _doubted(text: str, at: int, *, counts: bool = False) -> bool:
    """Doubt about the fact at `at`; with `counts` (stock), a count said roughly ("a dozen or so") is
    still a count they have, and a hedged date it is due back is no doubt that it is out now."""
    if counts:
        text = w.ROUGH_COUNT.sub(lambda m: m.group(1) + " " * (len(m.group(0)) - len(m.group(1))), text)
        text = w.RESTOCK_HEDGE.sub(lambda m: " " * len(m.group(0)), text)  # doubt about when, not whether
    lead = text[:at]
    contrasts = list(_CONTRAST.finditer(lead))
    scope = lead[contrasts[-1].end():] if contrasts else lead
    trail = text[at:]
    if (contrast := _CONTRAST.search(trail)) is not None:
        rest = trail[contrast.end():]
        # "aisle 5, but I'm not sure": a doubt after a "but" that states nothing new is about this fact
        only_doubt = len(rest.split()) <= 5 and not (w.clocks(rest) or w.places(rest) or w.days(rest) or w.stock(rest))
        trail = trail if only_doubt else trail[:contrast.start()]
    scope += trail  # "aisle 3, I think, or maybe 4": a doubt tagged on after the fact is doubt too
    return bool(w.HEDGE.search(scope) or w.UNKNOWN.search(scope))


def _unless_unsure(answer: str, facts: Sequence[tuple[_Sentence, int]], supported: Supported, *,
                   counts: bool = False) -> Judgement:
    """A business that was not sure of what it said is not quoted as sure: answer_text says so too.
    Doubt counts in the sentence that says the fact, before it ("I don't know exactly, around 9 to
    5") or tagged on after it ("aisle 3, I think"), not across a "but" either way ("we're open 9 to
    5, but I think the pharmacy closes at 4")."""
    unsure = next((s for s, at in facts if _doubted(s.text, at, counts=counts)), None)
    rough = next((s for s, _ in facts if w.ROUGH_COUNT.search(s.text)), None) if counts else None
    if rough is not None and w.exact_count(answer):
        return Unsupported(f"the business gave the count roughly: {rough.text!r}",
                           "record the count as roughly as they said it (\"about 12\"), or no count")
    if unsure is not None and not (w.HEDGE.search(answer) or w.UNKNOWN.search(answer)):
        return Unsupported(
            f"the business was not sure: {unsure.text!r}",
            "record answered with their words, and say in answer_text that they were not sure",
        )
    return supported


def _numbers_unsaid(turns: Sequence[Turn], answer: str) -> Unsupported | None:
    """Every number in a stock or place record was said on the call: by the business after the ask
    ("we've got two" is not "in stock, 20"; "aisle 5" is not "aisle 5, bay 30"), or in the ask
    itself, the agent's first words, where the item's name is ("WD-40"); not in the agent's later
    words ("so you have five?" answered "yes we do" says no five)."""
    ask = next((t for t in turns if t.speaker == "agent" and t.on_line and t.text.strip()), None)
    said = set().union(*(w.counts(s.text) for s in _business_sentences(turns) if s.after_ask),
                       w.counts(ask.text) if ask is not None else set())
    unsaid = sorted(w.counts(answer) - said)
    if not unsaid:
        return None
    return Unsupported(f"the business has not said {unsaid[0]}",
                       "record only the numbers the business said, with their words in answer_text")


_STOCK_ASKED = re.compile(r"\b(?:have|got|carry|stock|in stock|left|how many|any more|available|sold|out|sure|check)\b", re.I)


def _answers_another_question(s: _Sentence, first_prompt: str, item: str | None) -> bool:
    """An answer to the agent's later question about something else ("could you hold one for me?",
    "do you have the matching lid?"), not about the item's stock."""
    if s.prompt == first_prompt or _names(s.text, item):
        return False
    return not _STOCK_ASKED.search(s.prompt) or _about_something_else(w.asked_about(s.prompt), item)


def _names(text: str, item: str | None) -> bool:
    return bool(item and w.words_of(text) & w.words_of(item))


def _about_something_else(subject: str | None, item: str | None) -> bool:
    """Words that name a thing that is not the item ("the batteries" for a drill), nor a kind of it ("the deluxe ones")."""
    return bool(subject and item and w.words_of(subject) and not w.words_of(subject) & w.words_of(item)
                and w.kind_of_the_item(subject, item) is None)


def _stock(turns: Sequence[Turn], answer: str, item: str | None = None) -> Judgement:
    claimed = w.stock(answer)
    if not claimed:
        return Unsupported(
            "answer_text does not say whether the item is in stock or not",
            "say in answer_text what the business said: in stock, out of stock, or how many",
        )
    claim = claimed[0]
    fits = {"in_stock": ("in_stock", "limited"), "limited": ("limited",), "out_of_stock": ("out_of_stock",)}
    # The business's last word on it counts: "we do carry it. we're out right now though" is out; not
    # words about something else ("we don't sell the batteries separately", "no" to "the matching lid?").
    sentences = _business_sentences(turns)
    first_prompt = next((s.prompt for s in sentences if s.after_ask), "")
    said = [(s, f) for s in sentences if s.after_ask  # a greeting is not an answer about this item
            for f in w.stock(s.text) if not w.elsewhere(s.text, f.start)
            and not _about_something_else(f.subject, item) and not _answers_another_question(s, first_prompt, item)]
    if apart := w.kinds_apart([(s.text, f) for s, f in said], item):
        return _by_kind(turns, answer, claimed, [said[i] for i in apart])
    # Where they disagree, the words that name the item best decide: the rest may be about something else.
    said = [said[i] for i in w.on_the_item([(s.text, f) for s, f in said], item)]
    last_fits = bool(said) and said[-1][1].availability in fits[claim.availability]
    if not last_fits and any(f.availability in fits[claim.availability] for _, f in said):
        return Unsupported(f"the business later said otherwise: {said[-1][0].text!r}",
                           "record the business's last word on the stock, with their words in answer_text")
    for s, f in said if last_fits else []:
        if f.availability not in fits[claim.availability]:
            continue
        if claim.quantity is not None and claim.availability != "out_of_stock" and f.quantity != claim.quantity:
            continue
        if (unsaid := _numbers_unsaid(turns, answer)) is not None:
            return unsaid
        return _unless_unsure(answer, [(s, f.start)], Supported(_quotes(turns, [s]), f"stock {claim.availability} said by the business"),
                              counts=True)
    said_as = claim.availability.replace("_", " ")
    if claim.quantity is not None and claim.availability != "out_of_stock":
        said_as += f" ({claim.quantity})"
    return Unsupported(f"the business has not said the item is {said_as}", _KEEP_LISTENING)


def _by_kind(turns: Sequence[Turn], answer: str, claimed: list[w.StockFound],
             kinds: list[tuple[_Sentence, w.StockFound]]) -> Judgement:
    """Some kinds of the item in stock and others not ("the 10-inch is sold out but we have the
    12-inch"): a flat yes or no is not what they said; answer_text must say both."""
    if len({c.availability != "out_of_stock" for c in claimed}) < 2:
        return Unsupported(f"the business has some kinds and not others: {' '.join(dict.fromkeys(s.text for s, _ in kinds))!r}",
                           "say in answer_text which kinds they have and which they do not, in their words")
    if (unsaid := _numbers_unsaid(turns, answer)) is not None:
        return unsaid
    return _unless_unsure(answer, [(s, f.start) for s, f in kinds],
                          Supported(_quotes(turns, [s for s, _ in kinds]), "stock said kind by kind by the business"))


# The item is not there at all (not "we're out of the large size"): then where it would be is not the answer.
_NOT_CARRIED = re.compile(
    r"\b(?:out of stock|sold out|not in stock|none left|discontinued|no longer (?:carry|have|stock|sell|keep)|"
    r"we'?re (?:completely |all |fresh |totally )?out\b(?! of (?!(?:those|them|it|stock)\b))|stopped (?:carrying|selling)|"
    r"(?:do not|don'?t|doesn'?t) (?:stock|carry|sell|have|keep) (?:it|that|those|them|these|any)\b)",
    re.I,
)


# Words every place has: sharing one says nothing ("front of the store" is not "back of the store").
_PLACE_KINDS = frozenset({"store", "department", "section", "area", "aisle", "center", "centre", "wall", "counter", "corner"})


def _same_place(f: w.PlaceFound, claim: w.PlaceFound) -> bool:
    return f.key == claim.key or (claim.key.startswith("area:") and f.key.startswith("area:")
                                  and bool((set(f.key[5:].split()) & set(claim.key[5:].split())) - _PLACE_KINDS))


def _said_of_the_item(text: str, at: w.PlaceFound, item: str) -> w.PlaceFound | None:
    """Another place in the sentence whose own clause names the item better than this one's does."""
    others = [f for f in w.places(text) if f.key.split(":")[0] == at.key.split(":")[0] and f.key != at.key
              and w.said_with(text, f.start) != w.said_with(text, at.start)]
    best = max(others, key=lambda f: w.naming_the_item(text, f, item), default=None)
    return best if best is not None and w.naming_the_item(text, best, item) > w.naming_the_item(text, at, item) else None


def _not_carried(s: _Sentence, item: str | None) -> bool:
    """Does the sentence say the store has none of the item ("Sorry, we don't carry WD-40"), not of
    something else ("we don't sell the batteries separately") or at another store?"""
    if not s.after_ask or _asked(s):
        return False
    out = [f for f in w.stock(s.text) if f.availability == "out_of_stock" and not w.elsewhere(s.text, f.start)]
    return bool(out) and not any(_about_something_else(f.subject, item) for f in out) and (
        item is None or _NOT_CARRIED.search(s.text) is not None or _names(s.text, item))


def _aisle(turns: Sequence[Turn], answer: str, item: str | None = None) -> Judgement:
    claimed = w.places(answer)
    if not claimed and any(f.availability == "out_of_stock" for f in w.stock(answer)):
        # "which aisle?" answered "we don't carry it": that is the answer, in their words
        gone = [s for s in _business_sentences(turns) if _not_carried(s, item)]
        if gone:
            return _unless_unsure(answer, [(gone[-1], 0)],
                                  Supported(_quotes(turns, gone[-1:]), "the business said they do not have it"))
        return Unsupported("the business has not said they do not have it", _KEEP_LISTENING)
    if not claimed:
        return Unsupported(
            "answer_text does not name an aisle, a department or a place in the store",
            "say in answer_text where the business said the item is",
        )
    claim = claimed[0]
    sentences = _business_sentences(turns)
    hit: tuple[int, _Sentence, w.PlaceFound] | None = None
    denied: _Sentence | None = None
    by_it: _Sentence | None = None  # the place said as a landmark, where the record puts the item in it (or the reverse)
    for n, s in enumerate(sentences):
        for f in w.places(s.text) if s.after_ask else ():  # a greeting's place is the store's name
            if not _same_place(f, claim) or w.elsewhere(s.text, f.start):
                continue
            if w.beside(s.text, f) != w.beside(answer, claim):
                by_it = s
                continue
            if w.place_stated(s.text, f):
                hit = (n, s, f)
                break
            denied = s
        if hit is not None:
            break
    if hit is None and claim.key.startswith("aisle:"):
        # the aisle said as a correction, by its number alone ("aisle nine, uh, no, it's in eleven now")
        fixed = next(((n, s) for n, s in enumerate(sentences) if f"aisle:{w.corrected_number(s.text)}" == claim.key), None)
        if fixed is not None:
            hit = (fixed[0], fixed[1], w.PlaceFound(0, len(fixed[1].text), claim.location, claim.key))
    if hit is None:
        if denied is not None:
            return Unsupported(f"the business did not say the item is in {claim.location} now: {denied.text!r}", _KEEP_LISTENING)
        if by_it is not None:
            return Unsupported(f"the business did not say the item is {'by' if w.beside(answer, claim) else 'in'} "
                               f"{claim.location}: {by_it.text!r}",
                               "record where the business said it is, in their words (\"near aisle 20\" is not \"aisle 20\")")
        return Unsupported(f"the business has not said {claim.location}", _KEEP_LISTENING)
    n, s, at = hit
    # Another place of the same kind (an aisle for an aisle) said with a correction, later in this
    # sentence ("aisle 4, wait, no, aisle 14") or in a later one; not a closer look ("the end of aisle 4").
    for later, after in [(s, at.end), *((x, 0) for x in sentences[n + 1:])]:
        moved = [f for f in w.places(later.text) if f.start >= after and not _same_place(f, claim)
                 and w.place_stated(later.text, f) and f.key.split(":")[0] == claim.key.split(":")[0]]
        if moved and (w.CORRECTION.search(later.text, after, moved[-1].start if later is s else len(later.text))
                      or (later is s and re.search(r"\bbut\b", later.text[after:moved[-1].start], re.I))):
            return Unsupported(f"the business later said {moved[-1].location}: {later.text!r}",
                               "record the business's last word on where it is, with their words in answer_text")
        # a bare number said to correct it: "aisle three, no, four", "sorry, 16"
        said_to_it = later is s or later.prompt == s.prompt or "aisle" in later.prompt.lower()  # not another question's answer
        if (claim.key.startswith("aisle:") and said_to_it and (fixed := w.corrected_number(later.text, after)) is not None
                and f"aisle:{fixed}" != claim.key):
            return Unsupported(f"the business later said aisle {fixed}: {later.text!r}",
                               "record the business's last word on where it is, with their words in answer_text")
    # Two things' places in one sentence: the one said of the item is its place ("the jars are in aisle
    # 5, the lids are over in aisle 9", for the lids).
    if item and (other := _said_of_the_item(s.text, at, item)) is not None:
        return Unsupported(f"the business said {other.location} for the {item}: {s.text!r}",
                           "record where the business said the item itself is, with their words in answer_text")
    gone = next((x for x in sentences[n:] if x.after_ask and _NOT_CARRIED.search(x.text)), None)
    if gone is not None and not any(f.availability == "out_of_stock" for f in w.stock(answer)):
        return Unsupported(
            f"the business said they do not have it: {gone.text!r}",
            "say in answer_text that they do not have it, as well as where it would be",
        )
    if (unsaid := _numbers_unsaid(turns, answer)) is not None:
        return unsaid
    return _unless_unsure(answer, [(s, at.start)], Supported(_quotes(turns, [s]), f"place {claim.location} said by the business"))




def judge_answer(turns: Sequence[Turn], question: QuestionType, answer_text: str | None, item: str | None = None) -> Judgement:
    """`item`: what was asked about (stock), so that when the business's words disagree, those that
    name it decide ("we don't carry cast iron skillets. we do have nonstick pans though")."""
    if not (answer_text or "").strip():
        return Unsupported("answered needs answer_text", "record answered with the business's answer in answer_text")
    answer = answer_text or ""
    judged = {QuestionType.HOURS: lambda: _hours(turns, answer), QuestionType.STOCK: lambda: _stock(turns, answer, item),
              QuestionType.AISLE: lambda: _aisle(turns, answer, item)}[question]()
    if isinstance(judged, Unsupported) and judged.next == _KEEP_LISTENING and (said := find_answer(turns, question)) is not None:
        # The business did answer, only not what the record says: quote it back rather than wait for more.
        return Unsupported(judged.why, f"the business said: {said.text!r}. Record answered with their words in answer_text")
    return judged


# -- declined, voicemail ---------------------------------------------------------------------------------


def declined_reason(turns: Sequence[Turn]) -> tuple[str, list[_Sentence]] | None:
    """refused / unknown from the business's own words after the ask, with the sentences that say it."""
    for s in _business_sentences(turns):
        if not s.after_ask:
            continue
        if w.REFUSE.search(s.text):
            return "refused", [s]
        if w.UNKNOWN.search(s.text):
            return "unknown", [s]
    return None


def judge_declined(turns: Sequence[Turn], question: QuestionType, answer_text: str | None) -> Judgement:
    refusal = declined_reason(turns)
    # An answer given after the ask is the answer, whatever else they would not say ("Aisle 12. I
    # don't know about the lithium ones"; "We're out of stock, check our website for restock").
    after = [s for s in _business_sentences(turns) if s.after_ask and _states_answer(s, question)]
    answered = quote(turns, after[0]) if after else None
    if refusal is not None and answered is None:
        reason, sentences = refusal
        return Supported(_quotes(turns, sentences), f"the business {'would not say' if reason == 'refused' else 'did not know'}", reason)
    if answered is not None:
        return Unsupported(
            f"the business did answer: {answered.text!r}",
            "record answered, with their words in answer_text",
        )
    return Unsupported("the business has not refused or said it does not know", _KEEP_LISTENING)


def judge_voicemail(turns: Sequence[Turn], machine: str | None) -> Judgement:
    hits = [s for s in _business_sentences(turns) if w.RECORDING.search(s.text)]
    if hits:
        return Supported(_quotes(turns, hits[:3]), "a recorded greeting")
    if machine in ("machine",):
        return Supported((), "the carrier detected an answering machine")
    return Unsupported(
        "nothing the business said sounds like a recording",
        "if a person is on the line, talk to them; record voicemail only for a recorded greeting",
    )


# -- what the business said, read without any record (the transcript assessment) ---------------------------


def _states_answer(s: _Sentence, question: QuestionType) -> bool:
    if question is QuestionType.HOURS:  # of this store, and not asked back ("Until 9 tonight? Who is this?")
        return bool(_clocks_said([s]) or any(not _not_this_store(s.text, f.start) for f in w.always_open(s.text))
                    or (_OPEN_WORDS.search(s.text) and any(not _not_this_store(s.text, d.start) for d in w.days(s.text)))
                    ) and not _asked(s)
    if question is QuestionType.STOCK:
        return s.after_ask and bool(w.stock(s.text))
    # "maybe aisle 5?" asks; a greeting's place ("Hi there, Valley Home Center") is the store's name;
    # "we don't carry it" answers where it is too
    return (s.after_ask and bool(w.places(s.text)) and not _asked(s)) or _not_carried(s, None)


def find_answer(turns: Sequence[Turn], question: QuestionType) -> Quote | None:
    """The first business sentence that states the asked fact; None when there is none."""
    return next((quote(turns, s) for s in _business_sentences(turns) if _states_answer(s, question)), None)


def ask_said(ask_line: str, turns: Sequence[Turn]) -> bool:
    """Did the agent get the whole request out on the line? Most of the ask's words must be in its
    played speech (GPT-Live words the line never heard ask nobody)."""
    asked = w.words_of(ask_line)
    spoken = w.words_of(" ".join(t.text for t in turns if t.speaker == "agent" and t.on_line))
    return bool(asked) and len(asked & spoken) >= 0.8 * len(asked)


def answered_after_ask(turns: Sequence[Turn], question: QuestionType) -> bool:
    """Has the business stated the asked fact since the agent first spoke (a greeting's hours do not count)?"""
    return any(s.after_ask and _states_answer(s, question) for s in _business_sentences(turns))


def find_answers(turns: Sequence[Turn], question: QuestionType) -> tuple[Quote, ...]:
    """Every business sentence that states the asked fact, in order: the business's whole answer,
    a later word or a correction included ("...9 to 5. Actually, on Fridays we close at 4.")."""
    return tuple(quote(turns, s) for s in _business_sentences(turns) if _states_answer(s, question))


# -- bookings --------------------------------------------------------------------------------------------


def judge_booked(
    turns: Sequence[Turn], *, party: int, time: str | None, requested_party: int, requested_time: str
) -> Judgement:
    sentences = _business_sentences(turns)
    confirmations = [s for s in sentences if s.after_ask and w.confirms(s.text) and not _agrees_to_a_no(s)
                     and not w.no_reservations(s.text, party)]
    if not confirmations:
        return Unsupported(
            "the business has not confirmed a booking",
            "wait for them to confirm the table (read it back if you need to), then record booked",
        )
    used = list(confirmations[-1:])
    said_time = w.clocks(time or "")
    asked_time = w.clocks(requested_time)
    last = confirmations[-1]
    if (back := next((x for x in sentences if (x.turn, x.start) > (last.turn, last.start)
                      and (w.TAKEN_BACK.search(x.text) or w.FULL.search(x.text))), None)) is not None:
        return Unsupported(f"the business took the booking back: {back.text!r}",
                           "record book_declined with their words, or ask what they can offer")
    # The confirming turn's every confirmation says the party: "Yes, that's right, a table for four at
    # seven. You're all booked." is a table for four.
    for said in [c for c in confirmations if c.turn == last.turn]:
        if (other := [n for n in w.parties_said(said.text) if n != party]):
            return Unsupported(f"the business confirmed a party of {other[0]}, not {party}: {said.text!r}",
                               "record booked with the party the business confirmed")
    # The time the business confirmed is the booking's, whatever was asked: "you're booked for 8:30"
    # never supports a booking at 7.
    confirmed_clocks = [f.clock for f in w.clocks(last.text) if not w.NOT_FREE.search(w.clause_of(last.text, f.start))
                        and not w.hours_told(last.text, f)]
    confirmed_clocks += [c for c in w.confirmed_clocks(last.text, party)
                         if not any(x.same_time(c) for x in confirmed_clocks)]
    if said_time and confirmed_clocks and not any(c.same_time(said_time[0].clock) for c in confirmed_clocks):
        return Unsupported(
            f"the business confirmed {_clock_phrase(confirmed_clocks[-1])}, not {time}: {confirmations[-1].text!r}",
            "record booked with the time the business confirmed",
        )
    confirmed_days = [d for d in w.days(confirmations[-1].text) if d.days]
    record_days = [d for d in w.days(time or "") if d.days]
    if record_days and confirmed_days and not any(d.days & record_days[0].days for d in confirmed_days):
        return Unsupported(
            f"the business confirmed {confirmations[-1].text[confirmed_days[-1].start:confirmed_days[-1].end]}, not {time}: "
            f"{confirmations[-1].text!r}",
            "record booked with the day the business confirmed",
        )
    full_at_asked = [s for s in sentences if s.after_ask and asked_time and w.NOT_FREE.search(s.text)
                     and _names_hour(s.text, asked_time[0].clock)]
    if (said_time and asked_time and said_time[0].clock.same_time(asked_time[0].clock) and full_at_asked
            and not any(c.same_time(said_time[0].clock) for c in confirmed_clocks)):
        return Unsupported(
            f"the business said {requested_time} is full and did not confirm it: {full_at_asked[-1].text!r}",
            "record booked with the time the business confirmed, or book_declined if it confirmed none",
        )
    # Another time offered ("I could do 7:30, would that work?") and the one asked never said by the
    # business: a booking at the time asked is what the model wanted, not what was agreed.
    offered = [s for s in sentences if s.after_ask and asked_time and _OFFER.search(s.text)
               and not _names_exactly(s.text, asked_time[0].clock)  # "we have 7 or 8:30": the asked one among them
               and any(not f.clock.same_time(asked_time[0].clock) and w.clock_role(s.text, f) is None for f in w.clocks(s.text))]
    if (said_time and asked_time and said_time[0].clock.same_time(asked_time[0].clock) and offered
            and not any(c.same_time(said_time[0].clock) for c in confirmed_clocks)
            and not any(s.after_ask and not w.NOT_FREE.search(s.text) and _names_hour(s.text, asked_time[0].clock)
                        for s in sentences if (s.turn, s.start) > (offered[0].turn, offered[0].start))):
        return Unsupported(
            f"the business offered another time and did not confirm {requested_time}: {offered[-1].text!r}",
            "record booked with the time the business confirmed, or book_declined if it confirmed none",
        )
    if said_time and not (asked_time and said_time[0].clock.same_time(asked_time[0].clock)):
        hit = next((s for s in sentences if any(f.clock.same_time(said_time[0].clock) for f in w.clocks(s.text)
                                                if not f.bare or _WHAT_TIME.search(s.prompt))  # "uh, four." is a party
                    or (s.after_ask and w.confirms(s.text)
                        and any(c.same_time(said_time[0].clock) for c in w.confirmed_clocks(s.text, party)))), None)
        if hit is None:
            return Unsupported(f"the business has not offered {time}", _KEEP_LISTENING)
        used.append(hit)
    said_days = [d for d in w.days(time or "") if d.days]
    asked_days = [d for d in w.days(requested_time) if d.days]
    if said_days and not (asked_days and said_days[0].days == asked_days[0].days):
        hit = next((s for s in sentences if any(f.days & said_days[0].days for f in w.days(s.text))), None)
        if hit is None:
            return Unsupported(f"the business has not offered {time}", _KEEP_LISTENING)
        used.append(hit)
    if party != requested_party:
        hit = next((s for s in sentences if any(w.number(t) == party for t in re.findall(r"[\w-]+", s.text))), None)
        if hit is None:
            return Unsupported(f"the business has not offered a table for {party}", _KEEP_LISTENING)
        used.append(hit)
    return Supported(_quotes(turns, used), "the business confirmed the booking")


_WHAT_TIME = re.compile(r"\b(?:what time|when|which time|how late|how early|times?)\b", re.I)  # asked of a booking
_OFFER = re.compile(r"\b(?:(?:could|can) do|how about|what about|(?:i|we) can offer|would .{0,20}work|earliest|latest|instead|"
                    r"closest|(?:i|we) (?:have|got) (?:a table |something |an opening )?(?:at|for))\b", re.I)
_NO_AGAIN = re.compile(r"n't|\b(?:not|no|nothing|full|booked up|none)\b", re.I)


_BOOKED_WORDS = re.compile(r"\b(?:all set|set for|got you|have you|put you|booked|reserved|confirmed|see you|table for you|can do)\b", re.I)


def _agrees_to_a_no(s: _Sentence) -> bool:
    """"That's right" to the agent's "so you don't have anything at 7?": agreement with a no, not a
    booking. Only a bare agreement, to a question with a no in it."""
    if not re.match(r"\W*(?:yes|yeah|yep|that'?s right|that is right|correct|right)\b", s.text, re.I) or _BOOKED_WORDS.search(s.text):
        return False
    return s.prompt.rstrip().endswith("?") and _NO_AGAIN.search(s.prompt) is not None


def _names_exactly(text: str, clock: w.Clock) -> bool:
    """Does `text` name that very time: as a clock, or a bare number outside any clock ("7 or 8:30"
    names 7; "7:30" does not)?"""
    found = w.clocks(text)
    if any(f.clock.same_time(clock) for f in found):
        return True
    return any(w.number(m.group(0)) == clock.hour % 12 for m in re.finditer(r"[a-z0-9]+", text.lower())
               if not any(f.start <= m.start() < f.end for f in found))


def _names_hour(text: str, clock: w.Clock) -> bool:
    """Does `text` name that time, as a clock or a bare number ("seven's no good", "7 is taken")?"""
    return (any(f.clock.same_time(clock) for f in w.clocks(text))
            or any(w.number(t) == clock.hour % 12 or (clock.hour % 12 == 0 and w.number(t) == 12)
                   for t in re.findall(r"[a-z0-9]+", text.lower())))


def judge_book_declined(turns: Sequence[Turn], *, alternative_offered: str | None, party: int | None = None) -> Judgement:
    sentences = [s for s in _business_sentences(turns) if s.after_ask]
    # A table confirmed, and no other time in the record: nothing was declined ("we're packed at seven
    # but i can squeeze you in, you're all set"). With another time, it may be one the window rules out.
    confirmed = [s for s in sentences if w.confirms(s.text)]
    if confirmed and alternative_offered is None and not any((x.turn, x.start) > (confirmed[-1].turn, confirmed[-1].start)
                             and (w.TAKEN_BACK.search(x.text) or w.says_full(x.text)) for x in sentences):
        return Unsupported(f"the business confirmed a booking: {confirmed[-1].text!r}",
                           "record booked with the table the business confirmed")
    if none := [s for s in sentences if w.no_reservations(s.text, party)]:
        return Supported(_quotes(turns, none[-1:]), "the business takes no reservations", "refused")
    if full := [s for s in sentences if w.says_full(s.text) and not _asked(s)]:
        offered = [s for s in sentences if w.clocks(s.text) and s not in full]
        if alternative_offered or any(w.clocks(s.text) for s in full):
            return Supported(_quotes(turns, full + offered), "the business offered only another time", "no_slot_in_window")
        return Supported(_quotes(turns, full), "the business is fully booked", "fully_booked")
    if alternative_offered:
        clock = w.clocks(alternative_offered)
        hit = next((s for s in sentences if clock and any(f.clock.same_time(clock[0].clock) for f in w.clocks(s.text))), None)
        if hit is not None:
            return Supported(_quotes(turns, [hit]), "the business offered only another time", "no_slot_in_window")
    if needs := [s for s in sentences if w.NEEDS.search(s.text)]:
        return Supported(_quotes(turns, needs[-1:]), "the business needs a detail the request does not give",
                         "details_missing")
    if (refusal := declined_reason(turns)) is not None:
        return Supported(_quotes(turns, refusal[1]), "the business would not book", refusal[0])
    return Unsupported(
        "the business has not said it is full, offered another time, or refused",
        "keep talking with them: ask for the table again, or ask what they can offer",
    )
