"""The evidence gate over public conversations: how many true records it accepts, and how many wrong ones.

    uv run python bench/evidence_eval.py --sgd PATH [--multiwoz PATH] [--backend judge|cite] [--split train] [--limit N]
                                         [--show-failed-as-booked]

Bookings come from Google's Schema-Guided Dialogue dataset (--sgd: a folder holding its split
folders, e.g. a checkout of github.com/google-research-datasets/dstc8-schema-guided-dialogue):
the restaurant dialogues, where the dataset's SYSTEM side is the business and its USER side our
agent. The model's record is simulated from the dialogue acts, deterministically:
 - true booked: after the system's NOTIFY_SUCCESS, with party, date and time as the system last
   confirmed or offered them (CONFIRM / OFFER slot values), citing the system turns that said
   them and the success turn;
 - wrong booked: the same record with one fact changed (time +1 h, party +1, another date);
 - failure recorded as booked: after the system's first NOTIFY_FAILURE, a careless booked record
   of what was confirmed before it, citing the CONFIRM turn (target: none accepted);
 - declined: the same failure recorded as book_declined, citing the failure turn (with the time
   the system offered instead, if it offered one);
 - success recorded as declined: after NOTIFY_SUCCESS, a careless book_declined citing the
   success turn (target: none accepted).
Hours come from MultiWOZ's attraction database (--multiwoz: its checkout or db/attraction_db.json):
each opening-hours sentence is a business turn, and the true per-day records are read from it by
the small rules below (the labels); sentences the rules cannot read (seasons, events) are left out.

Backends: `judge` is the gate as it was (calld.evidence.judge reads the transcript itself and
ignores quotes; deleted after 2022086: where it is missing the bench says so in one line and goes on
with cite; docs/evidence.md gives the command for the before figures); `cite` is the citation
check (calld.evidence.cite, deleted in issue 52: where it is missing the bench says so); `check` is
the token check through its one entry point (calld.evidence.check_record). Nothing of either corpus is
written anywhere: only figures, and the first refused true records, go to the terminal
(--show-failed-as-booked also prints each accepted failure recorded as booked, with the business's
turns from the cited one on, to the terminal only).
A benchmark, not a test (tests/test_evidence_eval.py keeps it from rotting).
"""

from __future__ import annotations

import argparse
import importlib
import json
import re
import sys
import time
from collections.abc import Callable, Iterable, Sequence
from itertools import pairwise
from pathlib import Path
from typing import Any

from attrs import define, evolve, field, frozen

from calld.domain.questions import QuestionType
from calld.domain.transcript import Turn

WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")


# -- records ---------------------------------------------------------------------------------------------


@frozen
class Booked:
    turns: tuple[Turn, ...]  # up to and including the turn the record is made after
    quotes: tuple[str, ...]
    party: int
    time: str  # "March 9th at 6:40 pm": the system's date and time slot values, as it wrote them
    requested_party: int  # the user's first ask (the job), for the old judge
    requested_time: str
    facts: dict[str, Any] = {}  # the per-fact quotes and readbacks a model would send (record_arguments)


@frozen
class Declined:
    turns: tuple[Turn, ...]
    quotes: tuple[str, ...]
    alternative_offered: str | None
    party: int
    outcome_quote: str | None = None


@define
class Bookings:
    true: list[tuple[str, Booked]] = field(factory=list)  # (after a failure or not, record)
    wrong: list[tuple[str, Booked]] = field(factory=list)  # (what was changed, record)
    failed_as_booked: list[Booked] = field(factory=list)
    declined: list[Declined] = field(factory=list)
    booked_as_declined: list[Declined] = field(factory=list)

    def extend(self, other: Bookings) -> None:
        self.true.extend(other.true)
        self.wrong.extend(other.wrong)
        self.failed_as_booked.extend(other.failed_as_booked)
        self.declined.extend(other.declined)
        self.booked_as_declined.extend(other.booked_as_declined)


@frozen
class DayHours:
    """One run of days in an hours record: the same opening and closing (HH:MM, 24-hour), or closed."""

    days: tuple[str, ...]
    opens: str | None
    closes: str | None
    closed: bool = False


@frozen
class HoursRecord:
    turns: tuple[Turn, ...]
    quotes: tuple[str, ...]
    ranges: tuple[DayHours, ...]
    days_quote: str | None = None  # the words naming the day, and of its times, as a model points at them
    times_quote: str | None = None


@define
class HoursCases:
    sentences: int = 0  # distinct sentences read
    labelled: int = 0  # of which the rules could label
    true: list[HoursRecord] = field(factory=list)
    wrong: list[tuple[str, HoursRecord]] = field(factory=list)


# -- bookings from SGD -----------------------------------------------------------------------------------

_SLOTS = ("party_size", "date", "time")
_CLOCK = re.compile(r"^(\d{1,2})(?::(\d\d))?\s*([ap]m)$", re.I)
_DATE = re.compile(r"^(\w+ )(\d{1,2})(st|nd|rd|th)$")  # "March 5th"


def _when(date: str | None, clock: str) -> str:
    return f"{date} at {clock}" if date else clock


def _later(clock: str, minutes: int = 60) -> str | None:
    """"7 pm" an hour later, written as SGD's system writes times ("8 pm", "12:30 pm")."""
    if not (m := _CLOCK.match(clock.strip())):
        return None
    t = (int(m[1]) % 12 + (12 if m[3].lower() == "pm" else 0)) * 60 + int(m[2] or 0) + minutes
    h, mm = divmod(t % (24 * 60), 60)
    return f"{h % 12 or 12}{f':{mm:02d}' if mm else ''} {'pm' if h >= 12 else 'am'}"


def _ordinal(n: int) -> str:
    return f"{n}{'th' if 10 <= n % 100 <= 20 else {1: 'st', 2: 'nd', 3: 'rd'}.get(n % 10, 'th')}"


def _another_day(date: str) -> str | None:
    """Another day than `date`, in the same form: the next date or weekday; today and tomorrow swapped."""
    relative = {"today": "tomorrow", "tomorrow": "today", "day after tomorrow": "today"}
    if date.lower() in relative:
        return relative[date.lower()]
    if m := _DATE.match(date):
        return f"{m[1]}{_ordinal(int(m[2]) % 28 + 1)}"
    for i, day in enumerate(WEEKDAYS):
        if re.search(rf"\b{day}\b", date, re.I):
            return re.sub(rf"\b{day}\b", WEEKDAYS[(i + 1) % 7].capitalize(), date, flags=re.I)
    return None


def _acts(turn: dict[str, Any]) -> list[tuple[str, str, list[str]]]:
    """The turn's restaurant acts; the party is `number_of_seats` in Restaurants_2 (dev, test)."""
    return [(a["act"], "party_size" if a["slot"] == "number_of_seats" else a["slot"], a["values"])
            for f in turn["frames"] if f["service"].startswith("Restaurants") for a in f["actions"]]


_SENTENCE = re.compile(r"[^.!?]+(?:[.!?]+(?=\s|$|[A-Z])|$)")
_NUMBER_WORDS = ("zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve")


def _sentences(words: str) -> list[tuple[int, int, str]]:
    """A system turn cut into sentences (at . ! ? before a space), as a model would quote one."""
    return [(m.start(), m.end(), m.group().strip()) for m in _SENTENCE.finditer(words) if m.group().strip()]


def _sentence_at(words: str, start: int) -> str:
    """The clause (of its sentence, cut at , ; and 'but') a model would quote for the words at `start`."""
    return next((m.group().strip() for m in _CLAUSE.finditer(words) if m.start() <= start < m.end() + 1), words)


def _value_at(turn: dict[str, Any], slot: str, value: str) -> int | None:
    """Where a slot's value is said in a turn: its span, else the value (or, for a party, its number word)."""
    for frame in turn["frames"]:
        for span in frame.get("slots", []):
            if span["slot"] in (slot, "number_of_seats" if slot == "party_size" else slot):
                return int(span["start"])
    low = turn["utterance"].lower()
    forms = [value.lower()] + ([_NUMBER_WORDS[int(value)]] if slot == "party_size" and value.isdigit()
                               and int(value) < len(_NUMBER_WORDS) else [])
    for form in forms:
        if (m := re.search(rf"(?<![\w:.]){re.escape(form)}(?![\w:])", low)) is not None:
            return m.start()
    return None


def _fact_quotes(sgd_turns: Sequence[dict[str, Any]], said: dict[str, tuple[str, int]], outcome_turn: int) -> dict[str, Any]:
    """The per-fact quotes a model would send: each fact's sentence in the system turn that said it; a fact
    that turn does not say, read back from the user's turn just before the outcome (readback), else null."""
    out: dict[str, Any] = {}
    for slot, name in (("party_size", "party"), ("time", "time"), ("date", "date")):
        quote, readback = None, False
        if slot in said:
            value, at = said[slot]
            if (start := _value_at(sgd_turns[at], slot, value)) is not None:
                quote = _sentence_at(sgd_turns[at]["utterance"], start)
            elif outcome_turn > 0 and _value_at(sgd_turns[outcome_turn - 1], slot, value) is not None:
                readback = True
        out[f"{name}_quote"], out[f"{name}_readback"] = quote, readback
    return out


# The simulated model's reading of which words say the outcome (its labels, as the hours labels are the
# bench's): the first clause holding one of these, else the turn's first sentence.
_BOOKED_READ = re.compile(r"booked|reserved|confirmed|made|successful|all set|success|done|complete|secured|set up", re.I)
_FAILED_READ = re.compile(r"unable|couldn't|could not|fail|not able|wasn't able|can't|cannot|unsuccessful|not possible|"
                          r"full|not go through|unavailable|no table|not available|no reservations|don.t have|aren.t any|all booked|"
                          r"booked up|n't (?:available|successful|go through|have)|not have|wasn't able|nothing (?:for|available|left)|"
                          r"no can do", re.I)
_CLAUSE = re.compile(r"[^.!?,;]+?(?=\s+but\s|[.!?,;]|$)")
# An outcome's clause is cut at "and" too: a careful model quotes "your reservation is confirmed", not the
# "and they do not serve alcohol" said in the same breath.
_OUTCOME_CLAUSE = re.compile(r"[^.!?,;]+?(?=\s+(?:but|and)\s|[.!?,;]|$)")


def _outcome_words(words: str, read: re.Pattern[str], *, sentence: bool = False) -> str:
    """The words a model would quote for the outcome: the clause (or the sentence) that says it."""
    pieces = [text for _, _, text in _sentences(words)] if sentence else [
        m.group().strip() for m in _OUTCOME_CLAUSE.finditer(words) if m.group().strip()]
    return next((c for c in pieces if read.search(c)), _first_sentence(words))


def _first_sentence(words: str) -> str:
    return next((text for _, _, text in _sentences(words)), words)


def record_arguments(r: Booked | Declined) -> dict[str, Any]:
    """The record_task_result arguments a model would send for a simulated record (the booking schema)."""
    base: dict[str, Any] = {"confirmation_text": None, "confirmed_party": None, "confirmed_time": None,
                            "confirmed_constraints": None, "minutes_from_requested": None, "alternative_offered": None,
                            "reason": None, "reason_code": None, "quotes": list(r.quotes), "unanswered_questions": [],
                            "opt_out_quote": None, "party_quote": None, "time_quote": None, "date_quote": None,
                            "party_readback": False, "time_readback": False, "date_readback": False}
    if isinstance(r, Declined):
        return base | {"status": "declined", "reason": "They could not book it.", "reason_code": "fully_booked",
                       "alternative_offered": r.alternative_offered, "outcome_quote": r.outcome_quote}
    return base | {"status": "booked", "confirmation_text": r.quotes[-1], "confirmed_party": r.party,
                   "confirmed_time": r.time, "minutes_from_requested": 0} | r.facts


def booking_records(dialogue: dict[str, Any]) -> Bookings:
    """The records a model would make in one SGD dialogue (see the module's docstring)."""
    out = Bookings()
    turns: list[Turn] = []
    said: dict[str, tuple[str, int]] = {}  # slot -> (value, the system turn that last said it)
    asked: dict[str, str] = {}  # slot -> the user's first value
    failed = succeeded = False
    sgd_turns: list[dict[str, Any]] = []
    for turn in dialogue["turns"]:
        sgd_turns.append(turn)
        system = turn["speaker"] == "SYSTEM"
        words: str = turn["utterance"]
        turns.append(Turn("business" if system else "agent", words))
        acts = _acts(turn)
        if not system:
            for act, slot, values in acts:
                if act == "INFORM" and slot in _SLOTS and values:
                    asked.setdefault(slot, values[0])
            continue
        names = {act for act, _, _ in acts}
        if {"party_size", "time"} <= said.keys() and ("NOTIFY_SUCCESS" in names and not succeeded
                                                      or "NOTIFY_FAILURE" in names and not failed):
            party, clock = int(said["party_size"][0]), said["time"][0]
            date = said["date"][0] if "date" in said else None
            requested_party = int(asked.get("party_size", str(party)))  # unasked: the system's default
            requested_time = _when(asked.get("date", date), asked.get("time", clock))
            cited = tuple(turns[i].text for i in sorted({i for _, i in said.values()}))  # the turns that said the facts
            # a careless booked record after a failure: the facts' quotes, and its outcome, from the confirmation
            careless = _fact_quotes(sgd_turns, said, len(turns) - 1) | {
                "outcome_quote": _sentences(turns[max(i for _, i in said.values())].text)[-1][2]}
            confirmed = Booked(tuple(turns), cited, party, _when(date, clock), requested_party, requested_time, careless)
            if "NOTIFY_SUCCESS" in names and not succeeded:
                succeeded = True
                facts = _fact_quotes(sgd_turns, said, len(turns) - 1) | {"outcome_quote": _outcome_words(words, _BOOKED_READ)}
                true = evolve(confirmed, quotes=(*cited, words), facts=facts)
                out.true.append(("after a failure" if failed else "no failure before", true))
                out.booked_as_declined.append(Declined(tuple(turns), (words,), None, party, _outcome_words(words, _BOOKED_READ)))
                if (later := _later(clock)) is not None:
                    out.wrong.append(("time +1 h", evolve(true, time=_when(date, later))))
                out.wrong.append(("party +1", evolve(true, party=party + 1)))
                if date is not None and (other := _another_day(date)) is not None:
                    out.wrong.append(("another date", evolve(true, time=_when(other, clock))))
            if "NOTIFY_FAILURE" in names and not failed:
                failed = True
                out.failed_as_booked.append(confirmed)
                offered = {slot: values[0] for act, slot, values in acts if act == "OFFER" and values}
                alternative = _when(offered.get("date"), offered["time"]) if "time" in offered else None
                out.declined.append(Declined(tuple(turns), (words,), alternative, party, _outcome_words(words, _FAILED_READ)))
        for act, slot, values in acts:  # after the records: a failure's offer is not what failed
            if act in ("CONFIRM", "OFFER") and slot in _SLOTS and values:
                said[slot] = (values[0], len(turns) - 1)
    return out


def sgd_dialogues(root: Path, split: str) -> Iterable[dict[str, Any]]:
    """The split's restaurant dialogues; `root` holds the split folders."""
    files = sorted((root / split).glob("dialogues_*.json"))
    if not files:
        sys.exit(f"no {split}/dialogues_*.json under {root}")
    for path in files:
        for dialogue in json.loads(path.read_bytes()):
            if any(s.startswith("Restaurants") for s in dialogue["services"]):
                yield dialogue


# -- hours from MultiWOZ: the labels ---------------------------------------------------------------------

# The rules read the forms these sentences take: times "8:15 a.m. to 4:45 p.m." (and "12 to 3 p.m.",
# see _range), days "tuesday to thursday" (runs wrap the week), lists, "daily", "every day"; "closed
# on friday". A time range and a run of days pair in whichever order they come ("8 to 4 on friday",
# "friday 8 to 4"); a day said later wins ("8 to 4 every day, but friday 8 to 1"). Months, seasons
# and events are not read: such a sentence has no label.
_T = r"(?:\d{1,2}(?::\d\d)?(?:\s*[ap]m)?|midnight|noon)"
_D = r"(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday)"
_TOKEN = re.compile(
    rf"(?P<range>{_T}\s+to\s+{_T})"
    rf"|(?P<run>{_D}\s+to\s+{_D})"
    rf"|(?P<list>{_D}(?:\s*(?:,\s*and|,|and)\s+(?:{_D}|bank holidays))*)"
    r"|(?P<daily>\bdaily\b|\bevery day\b)"
    r"|(?P<closed>\bclosed\b)"
)
_UNREAD = re.compile(r"\b(?:january|february|march|april|may|june|july|august|september|sept|october|november|"
                     r"december|depending|always|any time)\b")


def _clock(said: str) -> tuple[int, int, bool | None]:
    """"5:30 pm" -> (5, 30, True): the hour on a 12-hour clock, minutes, pm (None: not said)."""
    if said in ("noon", "midnight"):
        return 0, 0, said == "noon"
    m = re.fullmatch(r"(\d+)(?::(\d\d))?\s*(?:([ap])m)?", said)
    assert m is not None
    return int(m[1]) % 12, int(m[2] or 0), None if m[3] is None else m[3] == "p"


def _range(said: str) -> tuple[str, str]:
    """(opens, closes). A bare hour takes the other end's half of the day when that keeps the
    opening first ("12 to 3 p.m.", "2 to 6 p.m."), else the other half ("10 to 4 p.m.", "8 p.m. to 1")."""
    (a, a_min, a_pm), (b, b_min, b_pm) = (_clock(end) for end in re.split(r"\s+to\s+", said))
    if a_pm is None:
        a_pm = (b_pm if a < b else not b_pm) if b_pm is not None else False
    if b_pm is None:
        b_pm = a_pm if b > a else not a_pm
    return f"{a + 12 * a_pm:02d}:{a_min:02d}", f"{b + 12 * b_pm:02d}:{b_min:02d}"


def _days(kind: str, said: str) -> tuple[str, ...]:
    if kind == "daily":
        return WEEKDAYS
    named = [WEEKDAYS.index(d) for d in re.findall(_D, said)]
    if kind == "run":
        first, last = named
        return tuple(WEEKDAYS[(first + i) % 7] for i in range((last - first) % 7 + 1))
    return tuple(WEEKDAYS[i] for i in named)


def hours_labels(sentence: str) -> dict[str, tuple[str, str] | None] | None:
    """Each day the sentence states: its (opens, closes), or None when closed. None: no label."""
    said = _said_hours(sentence)
    return {day: hours for day, (hours, _, _) in said.items()} if said else None


def _said_hours(sentence: str) -> dict[str, tuple[tuple[str, str] | None, str, str]]:
    """Each day the sentence states, with the words a model would point at: (hours or None when closed,
    the words naming the day, the words of its times or of "closed")."""
    text = re.sub(r"\b([ap])\.m\b\.?", r"\1m", sentence.lower())
    if _UNREAD.search(text):
        return {}
    labels: dict[str, tuple[tuple[str, str] | None, str, str]] = {}
    days: tuple[tuple[str, ...], str] | None = None  # waiting for its times
    hours: tuple[tuple[str, str], str] | None = None  # waiting for its days
    closing: str | None = None
    for m in _TOKEN.finditer(text):
        kind = m.lastgroup or ""
        if kind == "closed":
            closing = m[0]
        elif kind == "range":
            if days is not None:
                labels.update(dict.fromkeys(days[0], (_range(m[0]), days[1], m[0])))
                days = None
            else:
                hours = (_range(m[0]), m[0])
        else:
            named = _days(kind, m[0])
            for day in named:
                labels.pop(day, None)  # a day said later wins, and keeps the week's order of saying
            if closing is not None:
                labels.update(dict.fromkeys(named, (None, m[0], closing)))
                closing = None
            elif hours is not None:
                labels.update(dict.fromkeys(named, (hours[0], m[0], hours[1])))
                hours = None
            else:
                days = (named, m[0])
    return labels


def _runs(labels: dict[str, tuple[str, str] | None]) -> tuple[DayHours, ...]:
    """The days grouped by the same hours, in the order of the week."""
    groups: dict[tuple[str, str] | None, list[str]] = {}
    for day in WEEKDAYS:
        if day in labels:
            groups.setdefault(labels[day], []).append(day)
    return tuple(DayHours(tuple(days), hours[0], hours[1]) if hours else DayHours(tuple(days), None, None, closed=True)
                 for hours, days in groups.items())


_HOURS_ASK = Turn("agent", "Hello, could you tell me your opening hours?")


def hours_records(sentences: Iterable[str]) -> HoursCases:
    """Per distinct sentence: a true record for each run of days it names together (every day its words name,
    as the schema asks), and wrong ones (a time an hour later, a day swapped for one it gives other hours or
    none, a day of the run left out)."""
    out = HoursCases()
    for sentence in dict.fromkeys(s.strip() for s in sentences if s.strip() and s.strip() != "?"):
        out.sentences += 1
        if not (labels := _said_hours(sentence)):
            continue
        out.labelled += 1
        said: dict[tuple[tuple[str, str] | None, str | None, str | None], list[str]] = {}
        for day, (hours, days_quote, times_quote) in labels.items():
            said.setdefault((hours, days_quote, times_quote), []).append(day)
        for (hours, days_quote, times_quote), days in said.items():
            asked = HoursRecord((_HOURS_ASK, Turn("business", sentence)), (sentence,), (), days_quote, times_quote)
            (true,) = _runs(dict.fromkeys(days, hours))
            out.true.append(evolve(asked, ranges=(true,)))
            if hours is not None:
                out.wrong.append(("closes +1 h", evolve(asked, ranges=(evolve(true, closes=_plus_hour(hours[1])),))))
            if (other := next((d for d in WEEKDAYS if labels.get(d, ("unsaid",))[0] != hours), None)) is not None:
                out.wrong.append(("another day", evolve(asked, ranges=(evolve(true, days=(other,)),))))
            if len(true.days) > 1:
                out.wrong.append(("a day left out", evolve(asked, ranges=(evolve(true, days=true.days[:-1]),))))
    return out


def _plus_hour(hhmm: str) -> str:
    h, m = map(int, hhmm.split(":"))
    return f"{(h + 1) % 24:02d}:{m:02d}"


def multiwoz_hours(path: Path) -> list[str]:
    """The attraction database's opening-hours sentences; `path` is the file or a folder holding it."""
    for candidate in (path, path / "db" / "attraction_db.json", path / "attraction_db.json"):
        if candidate.is_file():
            return [str(place.get("openhours", "")) for place in json.loads(candidate.read_bytes())]
    sys.exit(f"no attraction_db.json at {path}")


# -- backends --------------------------------------------------------------------------------------------


@frozen
class Verdict:
    accepted: bool
    why: str


@frozen
class Backend:
    name: str
    booked: Callable[[Booked], Verdict]
    declined: Callable[[Declined], Verdict]
    hours: Callable[[HoursRecord], Verdict]


def _verdict(module: Any, judged: Any) -> Verdict:
    return Verdict(isinstance(judged, module.Supported), judged.why)


def _clock_words(hhmm: str) -> str:
    h, m = map(int, hhmm.split(":"))
    if (h, m) == (0, 0):
        return "midnight"
    return f"{h % 12 or 12}{f':{m:02d}' if m else ''} {'PM' if h >= 12 else 'AM'}"


def _day_words(days: Sequence[str]) -> str:
    names = [d.capitalize() for d in days]
    idx = [WEEKDAYS.index(d) for d in days]
    if len(days) > 2 and all(b - a == 1 for a, b in pairwise(idx)):
        return f"{names[0]} to {names[-1]}"
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"


def answer_text(ranges: Sequence[DayHours]) -> str:
    """The old record's free text for typed hours: "Open Monday to Friday, 10 AM to 5 PM"."""
    parts = [f"closed on {_day_words(r.days)}" if r.closed else
             f"{_day_words(r.days)}, {_clock_words(r.opens or '')} to {_clock_words(r.closes or '')}" for r in ranges]
    text = "; ".join(parts)
    return text[0].upper() + text[1:] if text.startswith("closed") else f"Open {text}"


JUDGE_MISSING = ("judge: not in this checkout; for the before figures run this bench in a worktree at 2022086 "
                 "(git worktree add /tmp/before 2022086)")


def judge_backend() -> Backend | None:
    """The gate as it was, where this checkout still has it (it was deleted after 2022086)."""
    try:
        judge = importlib.import_module("calld.evidence.judge")
    except ModuleNotFoundError:
        return None

    return Backend(
        "judge",
        lambda r: _verdict(judge, judge.judge_booked(r.turns, party=r.party, time=r.time, requested_party=r.requested_party,
                                                     requested_time=r.requested_time)),
        lambda r: _verdict(judge, judge.judge_book_declined(r.turns, alternative_offered=r.alternative_offered, party=r.party)),
        lambda r: _verdict(judge, judge.judge_answer(r.turns, QuestionType.HOURS, answer_text(r.ranges))),
    )


def cite_backend() -> Backend | None:
    """The citation check, where this commit has it (imported late: it is being built)."""
    try:
        cite = importlib.import_module("calld.evidence.cite")
        answers = importlib.import_module("calld.core.answers")
    except ModuleNotFoundError:
        return None

    def hours(r: HoursRecord) -> Any:
        return answers.Hours(ranges=tuple(
            answers.DayRange(days=x.days, opens=x.opens, closes=x.closes, closed=x.closed, around_the_clock=False, date=None)
            for x in r.ranges))

    return Backend(
        "cite",
        lambda r: _verdict(cite, cite.check_booked(r.turns, r.quotes, party=r.party, time=r.time)),
        lambda r: _verdict(cite, cite.check_book_declined(r.turns, r.quotes, alternative_offered=r.alternative_offered)),
        lambda r: _verdict(cite, cite.check_answer(r.turns, QuestionType.HOURS, r.quotes, hours(r))),
    )


def check_backend() -> Backend | None:
    """The token check, through its one public entry point (calld.evidence.check_record), with the per-fact
    quotes a model would send."""
    try:
        evidence = importlib.import_module("calld.evidence")
        plan = importlib.import_module("calld.core.plan")
    except ModuleNotFoundError:
        return None
    if not hasattr(evidence, "check_record"):
        return None

    def job(party: int) -> Any:
        return plan.BookJob(party=party, time="", notes=None, window_minutes=0, callback="+15555550100")

    def verdict(judged: Any) -> Verdict:
        return Verdict(isinstance(judged, evidence.Accepted), getattr(judged, "why", ""))

    return Backend(
        "check",
        lambda r: verdict(evidence.check_record(record_arguments(r), job(r.party), r.turns)),
        lambda r: verdict(evidence.check_record(record_arguments(r), job(r.party), r.turns)),
        lambda r: verdict(evidence.check_record(hours_arguments(r), plan.QuickAskJob(QuestionType.HOURS, None), r.turns)),
    )


def hours_arguments(r: HoursRecord) -> dict[str, Any]:
    """The quick ask's record a model would send for one day's hours: its days' and times' words."""
    ranges = [{"days": list(x.days), "opens": x.opens, "closes": x.closes, "closed": x.closed, "around_the_clock": False,
               "date": None, "days_quote": r.days_quote, "times_quote": r.times_quote, "context_quote": None,
               "readback": False} for x in r.ranges]
    return {"status": "answered", "quotes": list(r.quotes), "answer_text": answer_text(r.ranges), "notes": None,
            "reason": None, "hours": {"ranges": ranges, "no_set_hours": False, "no_set_hours_quote": None},
            "stock": None, "aisle": None, "outcome_quote": None, "opt_out_quote": None}


# -- counting and printing -------------------------------------------------------------------------------


@define
class Tally:
    """accepted / N per line of the report, and the first refusals of true records."""

    counts: dict[str, list[int]] = field(factory=dict)
    refusals: list[tuple[str, Sequence[str], str]] = field(factory=list)  # (record, cited words, why)
    shown: int = 5  # refusals kept per kind of true record
    failed_as_booked: list[Booked] = field(factory=list)  # the failures recorded as booked it accepted

    def add(self, line: str, verdict: Verdict, *, record: str | None = None, quotes: Sequence[str] = ()) -> None:
        n = self.counts.setdefault(line, [0, 0])
        if record is not None and not verdict.accepted and n[1] - n[0] < self.shown:
            self.refusals.append((record, quotes, verdict.why))
        n[0] += verdict.accepted
        n[1] += 1


LINES = (  # the report's lines, in order; indented ones split the line above them
    "bookings: true booked records accepted", "  no failure before", "  after a failure",
    "bookings: wrong records accepted", "  time +1 h", "  party +1", "  another date",
    "bookings: failures recorded as booked, accepted", "bookings: declines accepted",
    "bookings: successes recorded as declined, accepted",
    "hours: true one-day records accepted", "hours: wrong one-day records accepted", "  closes +1 h", "  another day",
)


def evaluate(backend: Backend, bookings: Bookings, hours: HoursCases | None) -> Tally:
    tally = Tally()
    for kind, r in bookings.true:
        tally.add("bookings: true booked records accepted", v := backend.booked(r),
                  record=f"booked, {r.party} at {r.time}", quotes=r.quotes)
        tally.add(f"  {kind}", v)
    for kind, r in bookings.wrong:
        tally.add("bookings: wrong records accepted", v := backend.booked(r))
        tally.add(f"  {kind}", v)
    for r in bookings.failed_as_booked:
        tally.add("bookings: failures recorded as booked, accepted", v := backend.booked(r))
        if v.accepted:
            tally.failed_as_booked.append(r)
    for d in bookings.declined:
        tally.add("bookings: declines accepted", backend.declined(d))
    for d in bookings.booked_as_declined:
        tally.add("bookings: successes recorded as declined, accepted", backend.declined(d))
    for h in hours.true if hours else ():
        tally.add("hours: true one-day records accepted", backend.hours(h), record=answer_text(h.ranges), quotes=h.quotes)
    for kind, h in hours.wrong if hours else ():
        tally.add("hours: wrong one-day records accepted", v := backend.hours(h))
        tally.add(f"  {kind}", v)
    return tally


def show_failed_as_booked(name: str, t: Tally) -> None:
    """Each accepted failure recorded as booked: the record, and every turn from the first cited one on."""
    print(f"\n{name}: failures recorded as booked, accepted ({len(t.failed_as_booked)})")
    for r in t.failed_as_booked:
        first = next((i for i, turn in enumerate(r.turns) if turn.speaker == "business" and turn.text in r.quotes), 0)
        print(f"  record: booked, {r.party} at {r.time}")
        for turn in r.turns[first:]:
            print(f"    {turn.speaker:>8}: {turn.text}")


def report(tallies: dict[str, Tally | None]) -> None:
    lines = [line for line in LINES if any(t and line in t.counts for t in tallies.values())]
    width = max(map(len, LINES)) + 2
    print("".ljust(width) + "".join(f"{name:>22}" for name in tallies))
    for line in lines:
        cells = []
        for t in tallies.values():
            n, total = t.counts.get(line, [0, 0]) if t else (0, 0)
            cells.append(f"{n}/{total} ({100 * n / total:.1f}%)" if t and total else "-")
        print(line.ljust(width) + "".join(f"{c:>22}" for c in cells))
    for name, t in tallies.items():
        if t is None:
            print(f"\n{name}: not available at this commit")
            continue
        print(f"\n{name}: first refusals of true records")
        for what, quotes, why in t.refusals:
            print(f"  record: {what}\n    cited: {' | '.join(quotes)}\n    why:   {why}")


def main(argv: Sequence[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0] if __doc__ else None)
    p.add_argument("--sgd", type=Path, required=True, help="SGD folder holding train/ dev/ test/")
    p.add_argument("--multiwoz", type=Path, help="MultiWOZ checkout, or its db/attraction_db.json")
    p.add_argument("--split", default="train", choices=("train", "dev", "test"))
    p.add_argument("--limit", type=int, help="read at most N restaurant dialogues")
    p.add_argument("--backend", choices=("judge", "cite", "check"), help="one backend (default: all, side by side)")
    p.add_argument("--show-failed-as-booked", action="store_true",
                   help="print each accepted failure recorded as booked, with its turns (terminal only)")
    args = p.parse_args(argv)
    began = time.monotonic()
    bookings, dialogues = Bookings(), 0
    for dialogue in sgd_dialogues(args.sgd, args.split):
        if args.limit is not None and dialogues >= args.limit:
            break
        dialogues += 1
        bookings.extend(booking_records(dialogue))
    hours = hours_records(multiwoz_hours(args.multiwoz)) if args.multiwoz else None
    print(f"SGD {args.split}: {dialogues} restaurant dialogues, {len(bookings.true)} bookings, "
          f"{len(bookings.failed_as_booked)} with a failure")
    if hours:
        print(f"MultiWOZ attractions: {hours.sentences} distinct hours sentences, {hours.labelled} labelled by the rules")
    made = {name: make() for name, make in (("judge", judge_backend), ("cite", cite_backend), ("check", check_backend))
            if args.backend in (None, name)}
    if "judge" in made and made["judge"] is None:
        print(JUDGE_MISSING)  # and go on with the token check
        del made["judge"]
        made.setdefault("check", check_backend())
    tallies = {name: (evaluate(b, bookings, hours) if b else None) for name, b in made.items()}
    report(tallies)
    if args.show_failed_as_booked:
        for name, t in tallies.items():
            if t is not None:
                show_failed_as_booked(name, t)
    print(f"\nelapsed {time.monotonic() - began:.1f} s")


if __name__ == "__main__":
    main()
