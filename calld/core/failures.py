"""What a failed call says happened: the detail sentence beside its reason code, for a person to act on.

The reducer (calld.core.reduce) decides that a call fails and with which reason
(calld.domain.status.FailedReason); the longer sentences, those that name the setting that bounded
the wait or what to check, are worded here from the values they name. Each says what happened and,
where calld cannot mend it itself, what to fix. Where the failure follows from what was heard on a
call that goes on ending its own way (a far-party hangup, the wrong party), the Failure itself is read
here from the call, the first one standing. Like the rest of the core: no trio, sockets, clock or files.
"""

from __future__ import annotations

from calld.core.queries import wrong_party_sentence
from calld.core.state import Call, Failure, LiveStarting

ANSWER_MISSED = (
    "the business answered (SIP 200) and hung up before call.answered reached calld, which opens GPT-Live only "
    "on it: the agent never spoke"
)
HUNG_UP_BEFORE_MODEL = "the business hung up while calld waited for GPT-Live's session.started: the agent never spoke"


def far_party_hung_up(call: Call, *, answer_missed: bool) -> Failure | None:
    """The call's failure once the business hung up on a call calld had not ended: a failure already in
    stands; a call.hangup whose SIP 200 overtook call.answered was answered, and calld never knew in time;
    and one that comes while GPT-Live is starting is calld's: the business picked up and waited on a line
    where the agent could not yet speak (the line was not silent: its greeting is in the recording)."""
    if call.failure is not None:
        return call.failure
    if answer_missed:
        return Failure("no_call_events", ANSWER_MISSED)
    if isinstance(call.live, LiveStarting):
        return Failure("model_unavailable", HUNG_UP_BEFORE_MODEL)
    return None


def no_answer_on_stream(ring_timeout_s: float) -> str:
    """no_call_events: media streamed, but call.answered never came within the ring bound."""
    return (
        f"the media stream started but call.answered never came within RING_TIMEOUT_S={ring_timeout_s:.0f} s of the "
        "dial: calld opens GPT-Live only on call.answered (a stream may carry ringback before the pickup), so the "
        "business would have waited on a silent line; check that every webhook reaches this daemon (the proxy and "
        "PUBLIC_BASE_URL)"
    )


def no_webhooks(ring_timeout_s: float, *, initiated: bool) -> str:
    """no_call_events: nothing, or only call.initiated, came within the ring bound."""
    heard = "only call.initiated" if initiated else "no webhook at all"
    return (
        f"the carrier accepted the dial {ring_timeout_s:.0f} s ago and calld has had {heard} since (no call.answered, "
        "no hangup, no media): its webhooks are not reaching this daemon (check the proxy and PUBLIC_BASE_URL)"
    )


def no_media(media_start_s: float, *, socket_opened: bool) -> str:
    """no_media: answered, and the media stream did not start within its bound."""
    opened = "its socket opened but sent no start frame" if socket_opened else "no media socket came"
    return (
        f"the call was answered {media_start_s:.0f} s ago and its media stream never started ({opened}): check the "
        "proxy rule for /telnyx/media/ and PUBLIC_MEDIA_URL"
    )


def no_session_started(live_ready_s: float) -> str:
    """model_unavailable: GPT-Live said nothing at all to session.start within its bound."""
    return (
        f"GPT-Live sent no session.started within LIVE_READY_S={live_ready_s:g} s of session.start (and no error): "
        "the call ends rather than keep the business on a silent line"
    )


def live_silent(quiet_s: float) -> str:
    """model_lost: a started session whose socket went quiet mid-conversation."""
    return (
        f"GPT-Live sent nothing at all (no audio, no silence, no event) for LIVE_QUIET_S={quiet_s:g} s in the middle "
        "of the call, its socket still open: the session is lost"
    )


def menu_loop(presses: int, limit: int) -> str:
    """ivr_unnavigable: the loop guard on menu presses."""
    return f"{presses} menu presses in a row reached no person and no answer (DTMF_MAX_PRESSES={limit})"


def hold_too_long(hold_max_s: float, cue: str) -> str:
    """hold_timeout: the hold budget ran out."""
    return f"on hold longer than {hold_max_s:g} s (cue: {cue})"


# Was reduce._wrong_party_heard, which set it on the call: it gives the Failure, the reducer sets it.
def wrong_number(call: Call) -> Failure | None:
    """The call's failure once the wrong party is heard: wrong_number, quoting the business's own sentence
    that says so (as far as it has been heard), never the phrase that matched mid-sentence ("you have the
    wrong"). A failure already in stands."""
    if call.failure is not None and call.failure.reason != "wrong_number":
        return call.failure
    if (sentence := wrong_party_sentence(call)) is None:
        return call.failure
    return Failure("wrong_number", f'the business said "{sentence}": not the business that was asked for')
