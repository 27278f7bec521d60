"""What the web view shows, as plain data for the templates. Pure: no IO, no web framework.

A call's page is built from what `show` reads (calld.observe.history.call_detail): the result,
the report and the transcript. The facts of the typed answer are listed each with the quotes of
the accepted record that say it; a quote is tied to a fact when the fact's time, day, number or
place stands in the quote's words (read on calld.domain.tokens, as the evidence check reads
them), and a fact no quote names in those terms is tied to every quote (the quotes were accepted
as a whole). This is a reading aid, never a second check: the verdict is the result's.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from typing import Any

from calld.domain.tokens import tokens
from calld.domain import spoken
from calld.observe.summary import booked_line, status_line, why_words

WEEK = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
SHORT = {d: d[:3].capitalize() for d in WEEK}
ARTIFACT_LINKS = ("result.json", "call_report.json", "events.jsonl", "transcript.json", "task.json", "hangup.json")


@dataclass(frozen=True)
class Quote:
    n: int  # 1-based, as the page numbers them
    text: str
    turn: int
    start_ms: int | None
    end_ms: int | None
    facts: tuple[int, ...] = ()  # indexes into the page's facts
    call_ms: int | None = None  # where it starts on the call's clock (the timeline picture's), when known

    @property
    def at_s(self) -> str:
        """Its offset in audio/inbound.wav, in seconds: where the player seeks."""
        return "" if self.start_ms is None else f"{self.start_ms / 1000:.2f}"

    @property
    def said_at(self) -> str:
        """The moment it was said, as a person reads it: time into the call, else into the recording."""
        if self.call_ms is not None:
            return f"{self.call_ms / 1000:.1f} s into the call"
        return "" if self.start_ms is None else f"{self.start_ms / 1000:.1f} s into the recording"


@dataclass(frozen=True)
class Fact:
    label: str
    value: str
    quotes: tuple[int, ...]  # the quotes' numbers (1-based)


@dataclass(frozen=True)
class Piece:
    text: str
    quote: Quote | None = None


@dataclass(frozen=True)
class Turn:
    speaker: str
    start_ms: int | None
    end_ms: int | None
    pieces: tuple[Piece, ...]
    call_ms: int | None = None  # its start on the call's clock; start_ms/end_ms are the recording's (the player's)

    @property
    def at(self) -> str:
        if self.call_ms is not None:
            return f"{self.call_ms / 1000:.1f} s"
        return "" if self.start_ms is None else f"{self.start_ms / 1000:.1f} s in the recording"


@dataclass(frozen=True)
class HoursRow:
    days: str
    hours: str
    quotes: tuple[int, ...]


@dataclass
class CallPage:
    ident: str
    result: dict[str, Any]
    report: dict[str, Any]
    status: str
    status_words: str
    why: str | None
    answer_line: str | None
    facts: list[Fact]
    hours: list[HoursRow]
    quotes: list[Quote]
    turns: list[Turn]
    corrected: bool
    honesty: str
    refused: list[dict[str, Any]]
    hangup: dict[str, Any] | None
    hangup_words: str
    files: list[str]
    publication: dict[str, Any] | None
    request: dict[str, Any] | None
    pruned: bool
    has_audio: bool
    has_outbound: bool
    has_timeline: bool
    opt_out: str | None = None  # the business's words asking not to be called again
    opt_out_turn: Turn | None = None  # the business's turn that says them, when found
    meta: list[tuple[str, str]] = field(default_factory=list)


def days_words(days: list[str] | tuple[str, ...]) -> str:
    """Monday..Friday as 'Mon–Fri', a scattered set as 'Mon, Wed, Sat'."""
    idx = sorted(WEEK.index(d) for d in days if d in WEEK)
    if not idx:
        return "Days not said"
    if len(idx) == 7:
        return "Every day"
    if len(idx) >= 3 and idx == list(range(idx[0], idx[-1] + 1)):
        return f"{SHORT[WEEK[idx[0]]]}\u2013{SHORT[WEEK[idx[-1]]]}"
    return ", ".join(SHORT[WEEK[i]] for i in idx)


def _hours_words(r: dict[str, Any]) -> str:
    if r.get("closed"):
        return "closed"
    if r.get("around_the_clock"):
        return "open 24 hours"
    opens = say_clock(r["opens"]) if r.get("opens") else "?"
    closes = say_clock(r["closes"]) if r.get("closes") else "?"
    return f"{opens} \u2013 {closes}"


def say_clock(hhmm: str) -> str:
    """'19:30' as a person says it: '7:30 PM' ('12:00 PM' is noon, '12:00 AM' midnight)."""
    h, m = (int(x) for x in hhmm.split(":"))
    return f"{(h % 12) or 12}:{m:02d} {'AM' if h < 12 else 'PM'}"


def _said(quote: str) -> list[str]:
    return [t.word for t in tokens(quote)]


def _hhmm(clock: spoken.Clock) -> str | None:
    """A clock time said with its half of the day (or a 24-hour one), as HH:MM; None where it is not said."""
    if clock.hour is None:
        return None
    if clock.meridiem is not None:
        return f"{clock.hour % 12 + (12 if clock.meridiem == 'pm' else 0):02d}:{clock.minute:02d}"
    return f"{clock.hour % 24:02d}:{clock.minute:02d}"


def _quotes_with_clock(quotes: list[Quote], *hhmm: str | None) -> tuple[int, ...]:
    wanted = [tuple(int(x) for x in h.split(":")) for h in hhmm if h]
    return tuple(q.n for q in quotes if any(spoken.reads_as(k, *w) for k in spoken.clocks(_said(q.text)) for w in wanted))


def _quotes_with_days(quotes: list[Quote], days: set[str]) -> tuple[int, ...]:
    return tuple(q.n for q in quotes if spoken.days_in(_said(q.text)) & days)


def _numbers(words: list[str]) -> set[float]:
    return {float(w) for w in words if w.isdigit()}


def _quotes_with_number(quotes: list[Quote], n: float | None) -> tuple[int, ...]:
    if n is None:
        return ()
    return tuple(q.n for q in quotes if float(n) in _numbers(_said(q.text)))


def _all(quotes: list[Quote]) -> tuple[int, ...]:
    return tuple(q.n for q in quotes)


def _or_all(found: tuple[int, ...], quotes: list[Quote]) -> tuple[int, ...]:
    return found or _all(quotes)


def facts_of(result: dict[str, Any], quotes: list[Quote]) -> tuple[list[Fact], list[HoursRow]]:
    """The typed answer's facts, each with the quotes that say it; hours also as table rows."""
    facts: list[Fact] = []
    hours: list[HoursRow] = []
    status = result.get("status")
    answer = result.get("answer") or {}
    kind = answer.get("kind")
    if kind == "hours":
        for r in answer.get("ranges") or []:
            days = set(r.get("days") or [])
            tied = tuple(sorted(set(_quotes_with_clock(quotes, r.get("opens"), r.get("closes")))
                                | set(_quotes_with_days(quotes, days))))
            if r.get("closed") or r.get("around_the_clock"):
                tied = tuple(sorted(set(tied) | set(_quotes_with_days(quotes, days))))
            row = HoursRow(days_words(r.get("days") or []) + (f" ({r['date']})" if r.get("date") else ""),
                           _hours_words(r), _or_all(tied, quotes))
            hours.append(row)
            facts.append(Fact(row.days, row.hours, row.quotes))
    elif kind == "no_set_hours":
        facts.append(Fact("Hours", "no set hours", _all(quotes)))
    elif kind == "stock":
        avail = str(answer.get("availability", "?")).replace("_", " ")
        facts.append(Fact("Stock", avail, _or_all(_quotes_with_number(quotes, answer.get("quantity")), quotes)
                          if answer.get("quantity") is not None else _all(quotes)))
        if answer.get("quantity") is not None:
            facts.append(Fact("Quantity", str(answer["quantity"]), _or_all(_quotes_with_number(quotes, answer["quantity"]), quotes)))
        for k in answer.get("kinds") or []:
            name = str(k.get("kind", "?"))
            tied = tuple(q.n for q in quotes if set(_said(name)) & set(_said(q.text)))
            value = str(k.get("availability", "?")).replace("_", " ")
            if k.get("quantity") is not None:
                value += f" ({k['quantity']})"
            facts.append(Fact(f"Kind: {name}", value, _or_all(tied, quotes)))
    elif kind == "aisle":
        location = str(answer.get("location", "?"))
        numbers = _numbers(_said(location))
        tied = tuple(q.n for q in quotes if (numbers and numbers & _numbers(_said(q.text)))
                     or " ".join(_said(location)) in " ".join(_said(q.text)))
        facts.append(Fact("Where", location, _or_all(tied, quotes)))
    if status == "booked":
        party = result.get("confirmed_party")
        when = str(result.get("confirmed_time") or "?")
        clocks = [h for k in spoken.clocks(_said(when)) if (h := _hhmm(k)) is not None]
        days = spoken.days_in(_said(when))
        facts.append(Fact("Party", str(party), _or_all(_quotes_with_number(quotes, party), quotes)))
        when_tied = tuple(sorted(set(_quotes_with_clock(quotes, *clocks)) | set(_quotes_with_days(quotes, days))))
        facts.append(Fact("Time", when, _or_all(when_tied, quotes)))
        if result.get("confirmed_constraints"):
            facts.append(Fact("Noted", str(result["confirmed_constraints"]), _all(quotes)))
    if status == "declined" and quotes:
        facts.append(Fact("Declined", str(result.get("reason") or "declined"), _all(quotes)))
    if not facts and quotes:
        facts.append(Fact("Answer", str(result.get("answer_text") or result.get("confirmation_text") or status), _all(quotes)))
    return facts, hours


def _pieces(text: str, marks: list[Quote]) -> tuple[Piece, ...]:
    """A turn's text cut around the quotes said in it (case and spacing forgiven); a quote that
    cannot be found word for word marks the whole turn."""
    spans: list[tuple[int, int, Quote]] = []
    low = text.lower()
    for q in marks:
        needle = " ".join(q.text.split()).lower()
        at = low.find(needle)
        if at < 0:
            spans = [(0, len(text), q)]
            break
        if not any(a < at + len(needle) and at < b for a, b, _ in spans):
            spans.append((at, at + len(needle), q))
    spans.sort(key=lambda s: s[0])
    out: list[Piece] = []
    pos = 0
    for a, b, q in spans:
        if a > pos:
            out.append(Piece(text[pos:a]))
        out.append(Piece(text[a:b], q))
        pos = b
    if pos < len(text):
        out.append(Piece(text[pos:]))
    return tuple(out)


def refused_claims(rows: Iterable[dict[str, Any]], call_ids: set[str]) -> dict[str, dict[str, Any]]:
    """What each refused record said and when (the call's clock), from the call's journal
    (events.jsonl's rows): the report keeps only its status and the rule it broke."""
    found: dict[str, dict[str, Any]] = {}
    for row in rows:
        event = row.get("event")
        if not isinstance(event, dict) or event.get("call_id") not in call_ids or "status" not in event:
            continue
        found.setdefault(str(event["call_id"]), {
            "t_ms": row.get("t_ms"), "answer_text": event.get("answer_text"),
            "quotes": [str(q) for q in event.get("quotes") or [] if q]})
    return found


def _refused(report: dict[str, Any], claims: dict[str, dict[str, Any]]) -> list[dict[str, Any]]:
    out = []
    for r in report.get("refused_records") or []:
        claim = claims.get(str(r.get("call_id", ""))) or {}
        t_ms = claim.get("t_ms")
        out.append({"status": str(r.get("status", "?")), "why": str(r.get("why", "")), "call_id": str(r.get("call_id", "")),
                    "at": f"{t_ms / 1000:.1f} s into the call" if isinstance(t_ms, int | float) else "",
                    "answer_text": claim.get("answer_text") or "", "quotes": claim.get("quotes") or []})
    return out


# Why calld hung up, in words (calld.core.state.Via): the page is read by someone who was not on the call.
HANGUP_VIA = {
    "tool": "after the goodbye played on the line (its mark echoed)",
    "drain_timeout": "when no echo of the last audio came in time (the goodbye may be cut)",
    "opt_out": "once the business asked not to be called again",
    "failure": "because the call failed",
    "stall": "after the line stayed silent too long",
    "far_party": "after the business hung up",
    "time_limit": "at the call's time limit",
    "not_connected": "because the call never connected",
    "wrong_party": "on reaching the wrong party",
    "voicemail": "on reaching voicemail",
    "information_line": "on reaching a recorded information line",
    "answer_heard": "once the answer was heard",
}


def _hangup_words(hangup: dict[str, Any] | None) -> str:
    if not hangup:
        return "no hangup recorded"
    via = HANGUP_VIA.get(str(hangup.get("via")), f"via {hangup.get('via')}")
    who = hangup.get("source")
    cause = hangup.get("cause")
    words = f"Hung up {via}"
    if cause:
        words += f"; the carrier says {cause}" + (f" from the {who}" if who else "")
    if hangup.get("confirmed") is False:
        words += "; the carrier never confirmed it"
    return words


def call_page(ident: str, detail: dict[str, Any]) -> CallPage:
    """The call page's data from what `show` reads (calld.observe.history.call_detail)."""
    result = detail.get("result") or {}
    report = detail.get("report") or {}
    transcript = detail.get("transcript") or {}
    # The quotes' and turns' offsets are audio/inbound.wav's (the player's clock); a person reads the
    # call's clock, the one the timeline picture and `show` use: the recording starts that far in.
    inbound_at = detail.get("inbound_audio_at_ms")
    on_call = inbound_at if isinstance(inbound_at, int | float) else None
    quotes = [Quote(i + 1, str(e.get("quote", "")), int(e.get("turn", -1)), e.get("start_ms"), e.get("end_ms"),
                    call_ms=round(e["start_ms"] + on_call) if on_call is not None and isinstance(e.get("start_ms"), int | float)
                    else None)
              for i, e in enumerate(result.get("evidence") or report.get("evidence") or [])]
    facts, hours = facts_of(result, quotes)
    by_quote: dict[int, list[int]] = {}
    for fi, f in enumerate(facts):
        for n in f.quotes:
            by_quote.setdefault(n, []).append(fi)
    quotes = [replace(q, facts=tuple(by_quote.get(q.n, ()))) for q in quotes]
    times = detail.get("turn_times_ms") or []
    turns = []
    for i, t in enumerate(transcript.get("turns") or []):
        text = str(t.get("text", "")).strip()
        marks = [q for q in quotes if q.turn == i] if t.get("speaker") == "business" else []
        call_ms = times[i][0] if i < len(times) and times[i] else None
        turns.append(Turn(str(t.get("speaker", "?")), t.get("start_ms"), t.get("end_ms"), _pieces(text, marks), call_ms))
    opt_out = str(result["opt_out"]) if result.get("opt_out") else None
    said = " ".join(opt_out.split()).lower() if opt_out else ""
    opt_out_turn = next((t for t in turns if said and t.speaker == "business"
                         and said in " ".join("".join(x.text for x in t.pieces).split()).lower()), None)
    files = detail.get("files") or {}
    status = str(result.get("status") or report.get("status") or "?")
    if result.get("honesty") == "corrected":
        honesty = "The agent said it was a person, or denied being automated, and was made to correct itself at once."
    elif any(t.speaker == "agent" for t in turns):
        honesty = "The agent said it was an automated assistant and never claimed to be a person."
    else:
        honesty = "The agent never spoke on this call."
    meta = [(k, str(val)) for k, val in (
        ("Run", result.get("run_id") or report.get("run_id")),
        ("Call control id", result.get("call_control_id") or report.get("call_control_id")),
        ("User", report.get("user_id") or (detail.get("request") or {}).get("user")),
        ("To", report.get("to")),
        ("From", report.get("from_did")),
        ("Asked", _asked(report, detail.get("request"))),
        ("Started", report.get("started_at")),
        ("Duration", f"{report['duration_ms'] / 1000:.1f} s" if isinstance(report.get("duration_ms"), int) else None),
        ("Verdict from", result.get("verdict_source")),
        ("Audio incomplete", result.get("audio_incomplete")),  # the recording stopped short; the answer did not
    ) if val]
    return CallPage(
        ident=ident, result=result, report=report, status=status, status_words=status_line(result) if result else status,
        why=why_words(result) if result else None,
        answer_line=booked_line(result) or result.get("answer_text") or result.get("confirmation_text"),
        facts=facts, hours=hours, quotes=quotes, turns=turns, corrected=bool(result.get("corrected")),
        honesty=honesty, refused=_refused(report, detail.get("refused_claims") or {}), hangup=report.get("hangup"), hangup_words=_hangup_words(report.get("hangup")),
        files=[n for n in ARTIFACT_LINKS if n in files], publication=detail.get("publication"), request=detail.get("request"),
        pruned=bool(detail.get("pruned")), has_audio="audio/inbound.wav" in files, has_outbound="audio/outbound.wav" in files,
        has_timeline=bool(report) and not detail.get("pruned"), opt_out=opt_out, opt_out_turn=opt_out_turn, meta=meta,
    )


def _asked(report: dict[str, Any], request: dict[str, Any] | None) -> str | None:
    if report.get("booking"):
        b = report["booking"]
        return f"book a table for {b.get('party')} at {b.get('time')}"
    if report.get("question"):
        return " ".join(str(x) for x in (report.get("question"), report.get("item")) if x)
    if request:
        p = request.get("params") or {}
        return " ".join(str(x) for x in (p.get("ask"), p.get("item")) if x) or None
    return None
