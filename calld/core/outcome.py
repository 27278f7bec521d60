"""What a finished call concluded, and from what evidence. Pure.

The product verdict is the model's record_task_result; `assess_transcript` reads
what the business said and is only the fallback (a far-party hangup before any
record, say). The fallback never overrules a recorded verdict; the report keeps
what it would have said, so a disagreement is visible.
"""

from __future__ import annotations

from typing import Literal

from attrs import frozen

from calld.core.events import BookingDetails
from calld.core.plan import QuickAskJob
from calld.core.state import Call, DialRejected, TelnyxEnded
from calld.domain.questions import DECLINE_NEEDLES, QUESTIONS, QuestionType


@frozen
class TranscriptVerdict:
    status: Literal["answered", "declined"]
    answer_text: str | None


def assess_transcript(business_turns: list[str], question: QuestionType) -> TranscriptVerdict | None:
    """Answered (with the business's words), declined, or None when nothing settles it."""
    needles = QUESTIONS[question].answer_needles
    for text in business_turns:
        if any(n.search(text) for n in DECLINE_NEEDLES):
            return TranscriptVerdict("declined", None)
        if any(n.search(text) for n in needles):
            return TranscriptVerdict("answered", text.strip())
    return None


@frozen
class Outcome:
    status: Literal["answered", "booked", "declined", "voicemail", "no_answer", "failed"]
    answer_text: str | None
    reason: str | None
    verdict_source: Literal["tool", "transcript", "none"]
    transcript_verdict: str | None  # what the fallback reads, recorded even when the tool decided
    booking: BookingDetails | None = None  # a booking's recorded details (booked or declined)


_NOT_CONNECTED_CAUSES = {"timeout", "no_answer", "user_busy", "call_rejected", "originator_cancel", "not_found"}


def conclude(call: Call) -> Outcome:
    """A booking has no transcript fallback: a table is booked only on the record the app accepted."""
    business = [t.text for t in call.transcript if t.speaker == "business"]
    job = call.plan.job
    fallback = assess_transcript(business, job.question) if isinstance(job, QuickAskJob) else None
    seen = fallback.status if fallback else None
    if isinstance(call.dial, DialRejected):
        return Outcome("failed", None, f"the dial was refused: {call.dial.reason}", "none", seen)
    ended = call.telnyx if isinstance(call.telnyx, TelnyxEnded) else None
    if ended is not None and not ended.was_answered and not call.transcript:
        if ended.cause in _NOT_CONNECTED_CAUSES:
            return Outcome("no_answer", None, ended.cause, "none", seen)
        return Outcome("failed", None, f"the call ended before it was answered ({ended.cause})", "none", seen)
    if (task := call.task) is not None:
        reason = task.booking.reason if task.booking is not None else task.notes
        return Outcome(task.status, task.answer_text, reason, "tool", seen, task.booking)  # type: ignore[arg-type]
    if call.failure is not None:
        return Outcome("failed", None, call.failure, "none", seen)
    if call.machine == "machine":
        return Outcome("voicemail", None, "answering machine detected", "transcript", seen)
    if fallback is not None:
        return Outcome(fallback.status, fallback.answer_text, None, "transcript", seen)
    if not isinstance(job, QuickAskJob):
        return Outcome("failed", None, "the call ended before a booking or a refusal was recorded", "none", seen)
    return Outcome("failed", None, "the call ended without an answer", "none", seen)
