"""Judging a record_task_result, without changing the call: does it fit the job, does a booking
hold against the request, does the evidence gate accept it, does it correct the verdict in.

The reducer (calld.core.reduce) acts on the answers (accept, refuse back to the model, supersede);
what the model is told when a record does not hold is worded here.
"""

from __future__ import annotations

import functools

from attrs import frozen

from calld.core import events as ev
from calld.core.answers import Stock
from calld.core.plan import BookJob, QuickAskJob
from calld.core.queries import live_is_open
from calld.core.replace import evolve
from calld.core.state import Call, ConvConcluded, Verdict
from calld.domain.times import minutes_between
from calld.domain.transcript import Quote, Turn
from calld.evidence import check


def merge_questions(have: tuple[str, ...], new: tuple[str, ...]) -> tuple[str, ...]:
    seen = {" ".join(q.lower().split()) for q in have}
    out = list(have)
    for q in new:
        key = " ".join(q.lower().split())
        if key and key not in seen:
            seen.add(key)
            out.append(q.strip())
    return tuple(out)


def wrong_job(call: Call, event: ev.TaskRecorded) -> str | None:
    """A record that does not fit what this call is for (the adapter checks too; this is the rule)."""
    job = call.plan.job
    if isinstance(job, BookJob):
        if event.booking is None or event.status in ("answered", "unclear"):
            return f"status {event.status} is not a booking outcome (booked, declined, voicemail or in_progress)"
    elif event.booking is not None or event.status in ("booked", "in_progress"):
        return f"status {event.status} is not a quick-ask outcome (answered, declined, voicemail or unclear)"
    return None


def refuse_booking(call: Call, job: BookJob, d: ev.BookingDetails) -> tuple[str, str] | int:
    """(why, what to do instead) when a booked record does not hold; else the minutes from the asked time.

    The window is the app's to check: when the words of both times name a clock time, the gap
    comes from them, whatever the model counted; only when they do not is the model's count used.
    """
    name = call.plan.first_name
    if d.party != job.party:
        return (
            f"the booking is for {d.party}, but {name} asked for a table for {job.party}",
            f"never change the party size: ask for a table for {job.party}, or decline and record status declined",
        )
    said = minutes_between(job.time, d.time or "")
    minutes = said if said is not None else d.minutes_from_requested
    if minutes is None:
        return (
            f"it does not say how far {d.time!r} is from the requested {job.time!r}",
            "record booked again with minutes_from_requested (0 when it is the requested time)",
        )
    if abs(minutes) > job.window_minutes:
        side = "later" if minutes > 0 else "earlier"
        return (
            f"{d.time} is {abs(minutes)} minutes {side} than the requested {job.time}: outside {name}'s window "
            f"of {job.window_minutes} minutes, so it is not a booking",
            f"do not book it: thank them, decline politely, and record status declined with the alternative "
            f"offered ({d.time})",
        )
    if job.notes and not (d.constraints or "").strip():
        return (
            f"{name} asked for {job.notes!r} and the booking says nothing about it",
            "read the constraints back to them, then record booked with confirmed_constraints",
        )
    return minutes


@frozen
class Refusal:
    """A record that does not hold: why, told to the model, and what it should do instead."""

    why: str
    instead: str


def record_holds(call: Call, event: ev.TaskRecorded, *, recording: bool = False) -> Refusal | tuple[ev.TaskRecorded, Verdict]:
    """A terminal record that fits the job, judged by every other rule: the booking against the request,
    what a recording can state (`recording`: the business's words are one), and the evidence gate. When
    it holds: the record (a booking's minutes counted from the words of both times) and its verdict."""
    job = call.plan.job
    if event.status == "booked" and isinstance(job, BookJob) and event.booking is not None:
        checked = refuse_booking(call, job, event.booking)
        if not isinstance(checked, int):
            return Refusal(*checked)
        event = evolve(event, booking=evolve(event.booking, minutes_from_requested=checked))
    if recording and event.status == "answered" and isinstance(event.answer, Stock):
        # A recording answers only what it states, and no greeting knows what is on the shelf now.
        return Refusal("a recorded greeting cannot say what is in stock now", "record voicemail: no person is on the line")
    judged = judge(call, event)
    if isinstance(judged, check.Refused):
        return Refusal(f"rule {judged.rule}: {judged.why}", judged.next)
    return event, Verdict(judged.quotes, judged.reason)


def correcting(call: Call, event: ev.TaskRecorded) -> tuple[ev.TaskRecorded, Verdict] | None:
    """A terminal record after the verdict that holds, by every rule a first record must pass, and
    cites business words said after the verdict's: the business corrected itself."""
    concluded = call.conversation
    if not isinstance(concluded, ConvConcluded) or event.status not in ev.TERMINAL_TASK_STATUSES or not live_is_open(call):
        return None
    if wrong_job(call, event) is not None:
        return None
    held = record_holds(call, event)
    if isinstance(held, Refusal) or not cites_later(held[1].quotes, concluded.verdict.quotes):
        return None
    return held


def cites_later(quotes: tuple[Quote, ...], than: tuple[Quote, ...]) -> bool:
    """Some quote was said after every quote of the earlier verdict: the record cites newer words."""
    return bool(quotes) and bool(than) and max((q.turn, q.start) for q in quotes) > max((q.turn, q.start) for q in than)


def judge(call: Call, event: ev.TaskRecorded) -> check.Verdict:
    """The evidence gate: the one entry point, on the record's arguments exactly as the model sent them."""
    return judged(event.arguments, call.plan.job, call.transcript, call.machine)


@functools.lru_cache(maxsize=32)
def judged(arguments: str, job: QuickAskJob | BookJob, turns: tuple[Turn, ...], machine: str | None) -> check.Verdict:
    """check_record, remembered: the outcome asks again at once about the record just judged (the task.json preview,
    the finish), on the same words. A transcript is a tuple of frozen turns, so equal words get the equal verdict."""
    return check.check_record(arguments, job, turns, machine=machine)
