"""What a failed call says happened: the detail sentence beside its reason code, for a person to act on.

The reducer (calld.core.reduce) decides that a call fails and with which reason
(calld.domain.status.FailedReason); the longer sentences, those that name the setting that bounded
the wait or what to check, are worded here from the values they name. Each says what happened and,
where calld cannot mend it itself, what to fix. Pure text: no trio, sockets, clock or files.
"""

from __future__ import annotations

# call.hangup's SIP 200 overtook call.answered: the call was answered, and calld never knew it in time.
ANSWER_MISSED = (
    "the business answered (SIP 200) and hung up before call.answered reached calld, which opens GPT-Live only "
    "on it: the agent never spoke"
)
# The business picked up and hung up while GPT-Live was still starting: calld's model failed it.
HUNG_UP_BEFORE_MODEL = "the business hung up while calld waited for GPT-Live's session.started: the agent never spoke"


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


def wrong_number(sentence: str) -> str:
    """wrong_number, quoting the business's own sentence that says so."""
    return f'the business said "{sentence}": not the business that was asked for'
