"""One status taxonomy with reasons: what the user is told, and why.

Every call ends with exactly one status; every status but answered, booked and voicemail
carries a reason code from a closed set, so a script can act on it and a person can read it
(the human sentence is `detail`). `refused` is a request turned down before anything was
dialled. The CLI's exit code follows the status.

Status      reasons
answered    -
booked      -
declined    refused, unknown, hung_up, fully_booked, no_slot_in_window, details_missing, opt_out, unconfirmed
no_answer   ring_timeout, busy, rejected, silent_line, went_silent
voicemail   -
failed      wrong_number, number_unreachable, ivr_unnavigable, hold_timeout, media_lost,
            no_call_events, no_media, model_unavailable, model_lost, time_limit, internal, daemon_restart,
            shutdown
refused     a policy rule's code (destination, calling window, opt-out, rate limit, words)
"""

from __future__ import annotations

from typing import Literal, get_args

Status = Literal["answered", "booked", "declined", "no_answer", "voicemail", "failed", "refused"]

DeclinedReason = Literal[
    "refused",  # the business would not say
    "unknown",  # the business did not know
    "hung_up",  # the business heard the request and hung up without answering
    "fully_booked",  # no table at all
    "no_slot_in_window",  # a table was offered, but outside the user's window
    "details_missing",  # the business needs something the request does not give
    "opt_out",  # the business asked not to be called again
    "unconfirmed",  # the business spoke after the ask, but no answer could be confirmed from its words (evidence: what it said)
]
NoAnswerReason = Literal[
    "ring_timeout",  # nobody picked up
    "busy",
    "rejected",  # the far end refused the call
    "hung_up_early",  # answered, then hung up before the question was asked
    "silent_line",  # answered, but nobody ever spoke
    "went_silent",  # the business heard the whole request, then said nothing more
]
FailedReason = Literal[
    "wrong_number",  # the party that answered is not the business
    "number_unreachable",  # not in service, unallocated, invalid
    "ivr_unnavigable",  # a phone menu that never reached a person or the answer
    "hold_timeout",  # held past HOLD_MAX_S
    "media_lost",  # the audio stream died
    "no_call_events",  # the dial was accepted, then no call.answered (media or not) and no hangup within RING_TIMEOUT_S
    "no_media",  # answered, but the media stream never started within MEDIA_START_S
    "model_unavailable",  # GPT-Live refused or could not start the session
    "model_lost",  # GPT-Live went away mid-call
    "time_limit",  # the whole-call cap
    "internal",  # calld's own failure (a write error, a crash, the agent silent when it owed a reply)
    "daemon_restart",  # the daemon died with the call in flight
    "shutdown",  # the daemon was stopped and the call's drain ran out (or a second SIGTERM cut it)
]

VerdictSource = Literal[
    "tool",  # the model's record, accepted by the evidence gate
    "transcript",  # no accepted record: the app read the business's words itself
    "greeting",  # a recorded greeting or information line stated the fact
    "none",  # nothing the business said decided it (the call's ending did)
]

DECLINED_REASONS: frozenset[str] = frozenset(get_args(DeclinedReason))
NO_ANSWER_REASONS: frozenset[str] = frozenset(get_args(NoAnswerReason))
FAILED_REASONS: frozenset[str] = frozenset(get_args(FailedReason))

EXIT_CODES: dict[str, int] = {
    "answered": 0,
    "booked": 0,
    "declined": 3,
    "no_answer": 4,
    "voicemail": 5,
    "failed": 6,
    "refused": 2,
}
