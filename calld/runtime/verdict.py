"""From a finished call's Outcome to the closed result the user gets (result.json, the control API).

The result types refuse contradictions (an answer without evidence, a booking outside the
window); an Outcome that cannot make a valid result is a bug caught here, and the user gets
failed/internal saying so, never a half-true answer.
"""

from __future__ import annotations

import datetime as dt
import logging
from zoneinfo import ZoneInfo
from typing import Any

from pydantic import ValidationError

from calld.core.outcome import Outcome
from calld.core.plan import BookJob, CallPlan
from calld.core.state import Call
from calld.domain import results
from calld.core import answers
from calld.domain.transcript import Quote
from calld.domain.times import when_label
from calld.policy.window import zones_for

log = logging.getLogger("calld.call")


def business_date(number: str, at: dt.datetime) -> dt.date | None:
    """The business's date when the call started, by its number's zones; None if they disagree or are unknown.

    "Open today until nine" then names a date the user can act on, whatever zone the daemon runs in.
    """
    dates = {at.astimezone(ZoneInfo(zone)).date() for zone in zones_for(number)}
    return dates.pop() if len(dates) == 1 else None


def evidence(quotes: tuple[Quote, ...]) -> tuple[results.Evidence, ...]:
    return tuple(results.Evidence(quote=q.text, turn=q.turn, start_ms=q.start_ms, end_ms=q.end_ms) for q in quotes)


def typed_answer(answer: answers.Answer | None) -> (results.HoursAnswer | results.NoSetHoursAnswer | results.StockAnswer
                                                   | results.AisleAnswer | results.TextAnswer):
    match answer:
        case answers.NoSetHours():
            return results.NoSetHoursAnswer()
        case answers.Hours(ranges=ranges):
            return results.HoursAnswer(ranges=tuple(
                results.DayHours(days=r.days, opens=r.opens, closes=r.closes, closed=r.closed,
                                 around_the_clock=r.around_the_clock, date=r.date)  # type: ignore[arg-type]
                for r in ranges
            ))
        case answers.Stock(availability=availability, quantity=quantity, kinds=kinds):
            return results.StockAnswer(availability=availability, quantity=quantity,  # type: ignore[arg-type]
                                       kinds=tuple(results.KindStock(kind=k.kind, availability=k.availability,  # type: ignore[arg-type]
                                                                     quantity=k.quantity) for k in kinds))
        case answers.Aisle(location=location):
            return results.AisleAnswer(location=location)
        case _:
            return results.TextAnswer()


def _quoted(words: str | None, limit: int = 2000) -> str | None:
    """Their words, cut to what a result holds: a sentence transcribed without a stop can run on, and
    an answer must not fail for the length of an aside."""
    if words is None or len(words) <= limit:
        return words
    return words[: limit - 1].rstrip() + "\u2026"


def build_result(plan: CallPlan, call: Call, outcome: Outcome, refs: dict[str, str], *,
                 audio_incomplete: str | None = None, line_may_be_up: str | None = None) -> results.CallResult:
    """The closed result for this job; an outcome that cannot make a valid one makes failed/internal.
    `audio_incomplete`: what the run directory says of a recording cut short (RunDir.audio_gap)."""
    ccid = call.call_control_id
    job = plan.job
    completed = outcome.status in ("answered", "booked", "declined", "voicemail")
    common: dict[str, Any] = {"run_id": plan.run_id, "call_control_id": ccid, "opt_out": _quoted(outcome.opt_out),
                              "honesty": "corrected" if call.honesty_claim is not None else None,
                              "audio_incomplete": audio_incomplete, "line_may_be_up": line_may_be_up}
    if isinstance(job, BookJob) and job.when is not None:
        common |= {"booking_at": job.when, "booking_for": when_label(dt.datetime.fromisoformat(job.when))}
    if completed and ccid is not None:
        common |= {"transcript_ref": refs["transcript.json"], "audio_ref": refs["audio/inbound.wav"],
                   "verdict_source": outcome.verdict_source, "evidence": evidence(outcome.evidence)}
    detail: str | None = None
    try:
        match outcome.status:
            case "answered" if ccid is not None and outcome.answer_text and not isinstance(job, BookJob):
                return results.Answered(answer_text=outcome.answer_text, answer=typed_answer(outcome.answer),
                                        corrected=outcome.corrected, **common)
            case "booked" if ccid is not None and isinstance(job, BookJob) and outcome.booking is not None:
                b = outcome.booking
                return results.Booked(
                    confirmation_text=b.confirmation_text, confirmed_party=b.party, confirmed_time=b.time,
                    confirmed_constraints=b.constraints, minutes_from_requested=b.minutes_from_requested,
                    requested=results.Requested(party=job.party, time=job.time, notes=job.notes,
                                                window_minutes=job.window_minutes),
                    unanswered_questions=call.unanswered, corrected=outcome.corrected, **common,
                )
            case "declined" if ccid is not None and isinstance(job, BookJob):
                b = outcome.booking
                return results.BookDeclined(
                    reason=outcome.reason, detail=(b.reason if b is not None and b.reason else outcome.detail),
                    alternative_offered=b.alternative_offered if b is not None else None,
                    unanswered_questions=call.unanswered, **common,
                )
            case "declined" if ccid is not None:
                return results.Declined(reason=outcome.reason, detail=outcome.detail, **common)
            case "voicemail" if ccid is not None:
                return results.Voicemail(**common)
            case "no_answer":
                ended = call.telnyx
                return results.NoAnswer(
                    reason=outcome.reason, detail=outcome.detail, hangup_cause=getattr(ended, "cause", None),
                    sip_cause=getattr(ended, "sip_cause", None), **common,
                )
            case "failed":
                return results.Failed(reason=outcome.reason, detail=outcome.detail or "the call failed",
                                      transcript_ref=refs["transcript.json"], audio_ref=refs["audio/inbound.wav"],
                                      **common)
    except ValidationError as exc:
        log.error("%s %s outcome makes no valid result: %s", plan.run_id, outcome.status, exc)
        detail = f"the {outcome.status} outcome could not make a valid result: {exc.errors()[0]['msg']}"
    detail = detail or f"the call ended as {outcome.status} without what that needs"
    return results.Failed(reason="internal", detail=detail, transcript_ref=refs["transcript.json"],
                          audio_ref=refs["audio/inbound.wav"], run_id=plan.run_id, call_control_id=ccid,
                          honesty="corrected" if call.honesty_claim is not None else None, audio_incomplete=audio_incomplete,
                          line_may_be_up=line_may_be_up)
