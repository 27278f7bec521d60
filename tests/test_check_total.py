"""check_record is total: any record the tool's schema allows, on any transcript, gets a verdict (Accepted or
Refused), never an exception, which inside a live call would end it failed/internal. A transcript is built from
phrases the rules read (days, times, counts, no-words, corrections, runs) around the words a true record's facts
stand in, so that records get past the first rules and reach the later ones; the record is then true, or has one
value or quote changed."""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from calld.core.plan import BookJob, QuickAskJob
from calld.domain.ids import E164
from calld.domain.questions import QuestionType
from calld.domain.transcript import Turn
from calld.evidence import Accepted, Refused, check_record
from tests.records import aisle, booked, declined, hours, stock

ASIDES = ("sorry", "no", "not", "closed", "actually", "make it 6", "and", "but", "from 9", "back at 9", "the day after",
          "we close at 5", "till midnight", "is fine", "10 inch", "all gone", "let me check", "one left", "Sorry, 6",
          "the 20th", "about 3", "Saturday", "two adults and two kids", "out of stock", "eight o'clock")
WEEK, WEEKEND = ["monday", "tuesday", "wednesday", "thursday", "friday"], ["saturday", "sunday"]
DAYS = (("Monday to Friday", WEEK), ("weekends", WEEKEND), ("Saturday", ["saturday"]), ("every day", WEEK + WEEKEND))
TIMES = (("9 to 5", "09:00", "17:00"), ("half six till 10", "18:30", "22:00"), ("noon till midnight", "12:00", "00:00"),
         ("till 4", None, "16:00"), ("from 8", "08:00", None))
PARTIES = (("a table for two", 2), ("three people", 3), ("two adults and two kids", 4))
WHEN = (("at 8", "Friday 20:00"), ("7 pm", "Friday 19:00"), ("seven it is", "Friday 19:00"))
DATES = (("Friday", "Friday"), ("the 13th", "Sunday 13 December"), ("Hogmanay", "Thursday 31 December"), ("tomorrow", "tomorrow"))


def _asides(draw: Any) -> str:
    return " ".join(draw(st.lists(st.sampled_from(ASIDES), max_size=3)))


def _turn(draw: Any, said: list[str]) -> str:
    """The facts' words, in some order, among asides, with any separators."""
    parts = [*said, *draw(st.lists(st.sampled_from(ASIDES), max_size=4))]
    parts = draw(st.permutations(parts))
    return "".join(p + draw(st.sampled_from((", ", ". ", "? ", " ", "! "))) for p in parts).strip()


def _maybe_wrong(draw: Any, value: Any, others: list[Any]) -> Any:
    return draw(st.sampled_from(others)) if others and draw(st.integers(0, 3)) == 0 else value


@st.composite
def calls(draw: Any) -> tuple[dict[str, Any], QuickAskJob | BookJob, tuple[Turn, ...]]:
    kind = draw(st.sampled_from(("hours", "booked", "declined", "stock", "aisle")))
    ask = Turn("agent", "Hi, I'm an automated assistant. " + _asides(draw) + "?")
    more = [Turn("agent", _asides(draw) or "Thanks."), Turn("business", _turn(draw, []))] if draw(st.booleans()) else []
    if kind == "hours":
        ranges = [(draw(st.sampled_from(DAYS)), draw(st.sampled_from(TIMES))) for _ in range(draw(st.integers(1, 3)))]
        text = _turn(draw, [f"{d[0]} we're {t[0]}" for d, t in ranges])
        rs = [{"days": _maybe_wrong(draw, d[1], [WEEKEND, WEEK]), "opens": _maybe_wrong(draw, t[1], ["10:00"]) or "07:00" if t[1] or t[2] is None else None,
               "closes": t[2], "days_quote": d[0], "times_quote": _maybe_wrong(draw, t[0], ["9 to", "we're"]),
               "context_quote": None} for d, t in ranges]
        return hours(*rs), QuickAskJob(QuestionType.HOURS, None), (ask, Turn("business", text), *more)
    job = BookJob(2, "Friday 7pm", None, 60, E164("+15555550123"), when=draw(st.sampled_from((None, "2026-12-13T19:00:00-05:00"))),
                  today=draw(st.sampled_from((None, "2026-12-06"))))
    if kind in ("booked", "declined"):
        (pq, party), (tq, time), (dq, day) = draw(st.sampled_from(PARTIES)), draw(st.sampled_from(WHEN)), draw(st.sampled_from(DATES))
        outcome = draw(st.sampled_from(("you're booked", "we're fully booked", "that's done", "sorry")))
        text = _turn(draw, [pq, tq, dq, outcome])
        if kind == "declined":
            return declined(outcome) | {"alternative_offered": draw(st.sampled_from((None, "Friday 21:30", "Saturday")))}, job, (
                ask, Turn("business", text), *more)
        return booked(_maybe_wrong(draw, party, [5]), f"{day.split()[0]} {time.split()[-1]}" if draw(st.booleans()) else time,
                      outcome_quote=outcome, party_quote=pq, time_quote=_maybe_wrong(draw, tq, ["at"]), date_quote=dq,
                      party_readback=False), job, (ask, Turn("business", text), *more)
    item = QuickAskJob(QuestionType.STOCK if kind == "stock" else QuestionType.AISLE, "12 inch cast iron skillet")
    said = draw(st.sampled_from(("we've 3 of the 12 inch skillet", "the skillet's in aisle 12", "no skillets, sorry")))
    text = _turn(draw, [said])
    if kind == "stock":
        return stock(draw(st.sampled_from(("in_stock", "out_of_stock", "limited"))), said, draw(st.sampled_from((None, 3, 12)))), item, (
            ask, Turn("business", text), *more)
    return aisle(_maybe_wrong(draw, "aisle 12", ["aisle 3", "the back"]), said), item, (ask, Turn("business", text), *more)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(calls())
def test_every_record_on_every_transcript_gets_a_verdict(case: tuple[dict[str, Any], QuickAskJob | BookJob, tuple[Turn, ...]]) -> None:
    args, request, turns = case
    assert isinstance(check_record(args, request, turns), Accepted | Refused)
