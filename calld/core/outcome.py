"""What a finished call concluded, and from what evidence. Pure.

The order of precedence, first match wins:
 1. The call never connected: the dial was refused, or Telnyx ended it unanswered. The hangup
    cause and SIP code decide (`ENDINGS`, `SIP_ENDINGS` below), unless calld sent the hangup itself:
    then the carrier's event is only its echo, and the reason calld hung up (its failure, the time
    limit) is the ending.
 2. The wrong party (failed/wrong_number), whenever the business said so: an answer heard or
    recorded before it was the wrong business's.
 3. A record the evidence gate accepted during the call (verdict_source `tool`), with the typed
    answer the model gave. It stands whatever happens after it, but the wrong party and an answer
    the business later corrected with no record citing the correction (checked again on the whole
    call: then the transcript's reading, correction included).
 4. The transcript assessment (calld.core.assessment): with no accepted record (far-party hangup,
    no tool at all, the model or the media lost, a stall), the app reads the business's words with
    the evidence check's tokens: a stated answer -> answered (`transcript`); the business hung
    up after hearing the ask -> declined/hung_up. When the model ended the call, or the app heard
    something it could not confirm, the call ends declined/unconfirmed with the business's last
    words as evidence: never failed/internal, which is calld's own. A booking is never booked from
    the transcript: only an accepted record books a table.
 5. Otherwise the call's ending: its failure (reason code), an answering machine, a silent line,
    the time limit, a line that went quiet after a phone menu (ivr_unnavigable), a business that
    heard the whole request and then said nothing until the stall failsafe (no_answer/went_silent; what it said
    after the request, stated and never recorded, is declined/unconfirmed). Only a silence the agent owed after
    the business's question, or before the request was out, is calld's own (failed/internal). Agent speech is never evidence
    for anything here.
"""

from __future__ import annotations

import datetime as dt

from attrs import evolve, frozen

from calld.core import assessment, judging, situations
from calld.core.events import BookingDetails
from calld.core.plan import BookJob, QuickAskJob
from calld.core.state import Call, ConvTalking, DialRejected, HangupDone, TelnyxEnded
from calld.domain.status import Status, VerdictSource
from calld.core.answers import Answer, Hours, TextOnly
from calld.core.state import ConvConcluded
from calld.evidence import check
from calld.domain.transcript import Quote, sentence_spans


@frozen
class Outcome:
    status: Status
    reason: str | None  # a code from calld.domain.status for the status
    detail: str | None  # a sentence for a person
    answer_text: str | None
    verdict_source: VerdictSource
    transcript_verdict: str | None  # what the assessment reads, recorded even when the tool decided
    booking: BookingDetails | None = None  # a booking's recorded details (booked or declined)
    evidence: tuple[Quote, ...] = ()
    answer: Answer | None = None
    opt_out: str | None = None  # the business asked not to be called again, in these words (any status)
    corrected: bool = False  # the business corrected itself and a later record, citing it, took the first's place


# Telnyx hangup causes of a call that was never answered -> (status, reason). Open set: unknown
# causes fall to the SIP code, then to no_answer/rejected.
ENDINGS: dict[str, tuple[Status, str]] = {
    "timeout": ("no_answer", "ring_timeout"),
    "no_answer": ("no_answer", "ring_timeout"),
    "no_user_response": ("no_answer", "ring_timeout"),
    "user_busy": ("no_answer", "busy"),
    "call_rejected": ("no_answer", "rejected"),
    "not_found": ("failed", "number_unreachable"),
    "unallocated_number": ("failed", "number_unreachable"),
    "invalid_number_format": ("failed", "number_unreachable"),
    "destination_out_of_order": ("failed", "number_unreachable"),
    "number_changed": ("failed", "number_unreachable"),
}
# SIP final responses (RFC 3261 §21) that say more than the cause does; they win over it.
SIP_ENDINGS: dict[str, tuple[Status, str]] = {
    "404": ("failed", "number_unreachable"),  # Not Found
    "410": ("failed", "number_unreachable"),  # Gone
    "484": ("failed", "number_unreachable"),  # Address Incomplete
    "485": ("failed", "number_unreachable"),  # Ambiguous
    "604": ("failed", "number_unreachable"),  # Does Not Exist Anywhere
    "486": ("no_answer", "busy"),  # Busy Here
    "600": ("no_answer", "busy"),  # Busy Everywhere
    "603": ("no_answer", "rejected"),  # Decline
    "480": ("no_answer", "ring_timeout"),  # Temporarily Unavailable
    "408": ("no_answer", "ring_timeout"),  # Request Timeout
    "487": ("no_answer", "ring_timeout"),  # Request Terminated (the ring was cancelled)
}


def ending_for(cause: str, sip_cause: str | None) -> tuple[Status, str]:
    """The status and reason of a call that ended before anyone answered."""
    if sip_cause is not None and sip_cause in SIP_ENDINGS:
        return SIP_ENDINGS[sip_cause]
    return ENDINGS.get(cause, ("no_answer", "rejected"))


def conclude(call: Call, *, today: dt.date | None = None) -> Outcome:
    """`today` is the business's date when the caller knows it: "open today" becomes that date."""
    return evolve(_conclude(call, today), opt_out=call.opt_out)


def on_date(outcome: Outcome, today: dt.date | None) -> Outcome:
    """`conclude(call)` as `conclude(call, today=today)` would have it, without concluding again:
    `today` changes only the answer's relative days, and every answer is dated the same way."""
    if today is None or outcome.answer is None:
        return outcome
    return evolve(outcome, answer=_dated(outcome.answer, today))


def _conclude(call: Call, today: dt.date | None) -> Outcome:
    job = call.plan.job
    question = job.question if isinstance(job, QuickAskJob) else None
    found = assessment.find_answer(call.transcript, question) if question is not None else None
    seen = "answered" if found is not None else None
    if isinstance(call.dial, DialRejected):
        detail = call.failure.detail if call.failure else f"the dial was refused: {call.dial.reason}"
        return Outcome("failed", call.failure.reason if call.failure else "internal", detail, None, "none", seen)
    ended = call.telnyx if isinstance(call.telnyx, TelnyxEnded) else None
    # A call calld hung up itself while it rang (a failure of its own, the time limit) ends as that: the
    # carrier's hangup event (normal_clearing, SIP 200 or whatever it says) is only the echo of calld's hangup.
    ours = isinstance(call.hangup, HangupDone) and call.counters.hangups_sent > 0
    if ended is not None and not ended.was_answered and not call.transcript and not ours:
        status, reason = ending_for(ended.cause, ended.sip_cause)
        sip = f", SIP {ended.sip_cause}" if ended.sip_cause else ""
        return Outcome(status, reason, f"Telnyx: {ended.cause}{sip}", None, "none", seen)
    if call.recording is not None:
        return _from_recording(call, today, seen)
    if call.failure is not None and call.failure.reason == "wrong_number":
        # Whatever was said or recorded before it ("we open at 9?"), it was the wrong business's.
        return Outcome("failed", "wrong_number", call.failure.detail, None, "none", seen)
    if call.task is not None and call.verdict is not None:
        return _accepted(call, today, seen)
    if call.opt_out is not None:
        # The business asked not to be called again, in its own words (calld.policy.optout).
        booking = BookingDetails(reason=call.opt_out) if isinstance(job, BookJob) else None
        return Outcome("declined", "opt_out", call.opt_out, None, "transcript", seen, booking)
    if (assessed := _assess(call, today, seen)) is not None:
        return assessed
    if call.failure is not None:
        return Outcome("failed", call.failure.reason, call.failure.detail, None, "none", seen)
    if call.machine == "machine":
        return Outcome("voicemail", None, "the carrier detected an answering machine", None, "none", seen)
    business_spoke = any(t.speaker == "business" and t.text.strip() for t in call.transcript)
    via = call.hangup.via if isinstance(call.hangup, HangupDone) else None
    if via == "time_limit":
        return Outcome("failed", "time_limit", "the call reached its time limit without an answer", None, "none", seen)
    if not business_spoke and via in ("stall", "far_party"):
        return Outcome("no_answer", "silent_line", "the line was answered but nobody spoke", None, "none", seen)
    if via == "far_party":
        return Outcome("no_answer", "hung_up_early", "the business picked up, then hung up before the question was asked", None, "none", seen)
    if via == "stall" and (menu := _stuck_at_menu(call)) is not None:
        return Outcome("failed", "ivr_unnavigable", f'the call never got past the phone menu ("{menu}")', None, "none", seen)
    # A record was made (and refused): the request was out, whatever words the agent put it in.
    requested = _ask_heard(call) or bool(call.refused_records)
    if via == "stall" and requested and _business_owed_the_word(call):
        if _said_after_ask(call):  # it answered something (a live model reading it back again, unheard): unconfirmed
            return _unconfirmed(call, seen)
        return Outcome("no_answer", "went_silent", "the business heard the request, then said nothing more", None, "none", seen)
    what = "a booking or a refusal" if isinstance(job, BookJob) else "an answer"
    if (via in ("tool", "answer_heard") or call.refused_records) and _said_after_ask(call):
        # The model ended the call (or the app heard an answer, or refused every record) and the words settle
        # nothing the assessment can read: that is the business's answer unconfirmed, in its last words, not
        # calld's failure. The business's words count from the agent's first (a live model words the request
        # its own way, so no token count of the app's ask line decides it).
        return _unconfirmed(call, seen)
    if via == "stall" and isinstance(call.conversation, ConvTalking) and call.conversation.quiet_after == "business":
        said = " ".join(next(t.text for t in reversed(call.transcript) if t.speaker == "business" and t.text.strip()).split())
        if _said_after_ask(call) and not said.rstrip().endswith("?"):  # it stated something the model never recorded
            return _unconfirmed(call, seen)
        last = _last_words(said, 200)
        return Outcome("failed", "internal", f'the agent did not reply to the business\'s last words ("{last}"), and the '
                       f"line went quiet: calld's failure, not the business's", None, "none", seen)
    if via == "stall":
        return Outcome("failed", "internal", f"the agent never got the whole request out before the line went quiet, "
                       f"so the call ended without {what}", None, "none", seen)
    return Outcome("failed", "internal", f"the call ended without {what} ({_ENDED_BY.get(via or '', 'by a path calld does not expect')})",
                   None, "none", seen)


def _last_words(text: str, limit: int) -> str:
    """The last whole sentences of `text` that fit in `limit` characters (the end of one, if none fits)."""
    out = ""
    for a, b in reversed(list(sentence_spans(text))):
        if out and len(text[a:b]) + 1 + len(out) > limit:
            break
        out = f"{text[a:b]} {out}".strip()
    return out if len(out) <= limit else "..." + out[-(limit - 3):]


# Words for each way a call can end that reaches no outcome of its own above.
_ENDED_BY = {
    "tool": "the model ended it before the business had said anything after the request", "drain_timeout": "the session would not close",
    "answer_heard": "after the agent's goodbye, though no answer could be read back",
    "not_connected": "the line never connected", "wrong_party": "the wrong party answered",
    "information_line": "a recorded line answered", "voicemail": "a recording answered",
}


def _business_owed_the_word(call: Call) -> bool:
    """The silence that drew the steer came after the agent's words: the business owed the reply.
    (After the business's, the agent owed it, and that silence is calld's own.)"""
    return isinstance(call.conversation, ConvTalking) and call.conversation.quiet_after == "agent"


def _stuck_at_menu(call: Call) -> str | None:
    """The menu prompt that was the business's last words, when the line then went quiet: the call is
    stuck at a phone menu (no press, or a press that led nowhere), not failed by calld itself."""
    last = next((t.text.strip() for t in reversed(call.transcript) if t.speaker == "business" and t.text.strip()), None)
    return last if last is not None and situations.menu_prompt(last) is not None else None


def _from_recording(call: Call, today: dt.date | None, seen: str | None) -> Outcome:
    """A recorded greeting answers only what it states (verdict_source greeting); else it is voicemail,
    whatever the model recorded."""
    job = call.plan.job
    if isinstance(job, QuickAskJob) and (found := assessment.find_answers(call.transcript, job.question)):
        return _heard(job, found, "greeting", seen, today)
    if call.task is not None and call.verdict is not None and call.task.status == "voicemail":
        return _accepted(call, today, seen)
    heard = check.voicemail(call.transcript, call.machine)
    quotes = heard.quotes if isinstance(heard, check.Accepted) else ()
    return Outcome("voicemail", None, f"a recorded greeting ({call.recording})", None, "greeting", seen, evidence=quotes)


def _accepted(call: Call, today: dt.date | None, seen: str | None) -> Outcome:
    task, verdict = call.task, call.verdict
    assert task is not None and verdict is not None
    job = call.plan.job
    corrected = isinstance(call.conversation, ConvConcluded) and call.conversation.corrected
    if task.booking is not None:
        # A decline's reason not said (null): the business's own words that the record cites say it instead.
        said = " ".join(q.text for q in verdict.quotes) or "the business did not say why"
        detail = (task.booking.reason or said) if task.status == "declined" else None
        return Outcome(task.status, verdict.reason, detail, None, "tool", seen, task.booking, verdict.quotes,  # type: ignore[arg-type]
                       corrected=corrected)
    answer: Answer | None = None
    if task.status == "answered" and isinstance(job, QuickAskJob):
        # Checked again on the whole call: a correction said after it ("on Fridays we actually close at 4")
        # that no later record cited makes it stale, and the business's own words decide instead.
        again = judging.judged(task.arguments, job, call.transcript, call.machine)
        if isinstance(again, check.Refused):
            if (found := assessment.find_answers(call.transcript, job.question)):
                return _heard(job, found, "transcript", seen, today)
            return _unconfirmed(call, seen)
        answer = _dated(task.answer, today) if task.answer is not None else TextOnly()
    return Outcome(task.status, verdict.reason, task.notes, task.answer_text, "tool", seen,  # type: ignore[arg-type]
                   evidence=verdict.quotes, answer=answer, corrected=corrected)


def _dated(answer: Answer, today: dt.date | None) -> Answer:
    """"today" and "tomorrow" in the model's hours become dates when the business's date is known."""
    if today is None or not isinstance(answer, Hours):
        return answer
    when = {"today": today, "tonight": today, "tomorrow": today + dt.timedelta(days=1)}
    return Hours(tuple(evolve(r, date=when[r.date.lower()].isoformat()) if r.date and r.date.lower() in when else r
                       for r in answer.ranges))


def _said_after_ask(call: Call) -> bool:
    return any(s.after_ask for s in assessment.business_sentences(call.transcript))


def _unconfirmed(call: Call, seen: str | None) -> Outcome:
    """No answer could be confirmed from the business's words: say so, with what they said after the ask."""
    return Outcome("declined", "unconfirmed", "the business's answer could not be confirmed from its words", None,
                   "transcript", seen, evidence=assessment.candidates(call.transcript))


def _ask_heard(call: Call) -> bool:
    """Did the agent get the whole request out?"""
    return assessment.ask_said(call.plan.ask_line, call.transcript)


def _heard(job: QuickAskJob, found: tuple[Quote, ...], source: VerdictSource, seen: str | None,
           today: dt.date | None) -> Outcome:
    """An answer read from the business's words alone: all the sentences that state it, a later word included."""
    texts = [q.text for q in found]
    answer = _dated(assessment.read_answer(job.question, found, job.item), today)
    return Outcome("answered", None, None, " ".join(texts), source, seen, evidence=found, answer=answer)


def _assess(call: Call, today: dt.date | None, seen: str | None) -> Outcome | None:
    """The business's own words, read without a record; None when they settle nothing."""
    job, turns = call.plan.job, call.transcript
    found = assessment.find_answers(turns, job.question) if isinstance(job, QuickAskJob) else ()
    if isinstance(job, QuickAskJob) and found:
        return _heard(job, found, "transcript", seen, today)
    asked = _ask_heard(call)
    far_party = isinstance(call.hangup, HangupDone) and call.hangup.via == "far_party"
    if asked and far_party and call.failure is None:
        return Outcome("declined", "hung_up", "the business hung up after hearing the request", None, "transcript", seen,
                       evidence=assessment.candidates(turns))
    if far_party and call.failure is None and (last := assessment.candidates(turns)):
        # The business answered the agent in words (however the agent put the request: a live model words it
        # its own way, "we're full" may come before the ask is out) and hung up: what it said is its answer.
        return Outcome("declined", "hung_up", "the business answered the agent, then hung up before any answer was recorded",
                       None, "transcript", seen, evidence=last)
    return None
