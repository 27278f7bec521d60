"""Progress lines for a person watching a call: the track moves that matter, in words."""

from __future__ import annotations

from typing import Any

_PHASES: dict[tuple[str, str], str] = {
    ("dial", "requested"): "dialing",
    ("dial", "accepted"): "dial accepted",
    ("dial", "rejected"): "dial refused",
    ("telnyx", "answered"): "answered",
    ("media", "streaming"): "media streaming",
    ("live", "active"): "session live",
    ("conversation", "talking"): "asking",
    ("hangup", "draining"): "closing the session",
    ("hangup", "marked"): "goodbye sent; waiting until it has played",
    ("hangup", "requested"): "hanging up",
    ("hangup", "done"): "hung up",
}


# The conversation concludes on an accepted record; its status says what was heard.
_RECORDED = {"answered": "answer heard", "declined": "they declined", "voicemail": "voicemail reached",
             "booked": "booking confirmed"}


# The goodbye, by what started it: no goodbye is said to a recording, only listened to its end.
_FAREWELL = {"voicemail": "recording heard: listening to its end, saying nothing",
             "information_line": "recorded hours heard: listening to its end, saying nothing",
             "answer_heard": "answer heard; saying goodbye", "opt_out": "asked not to call: apologising",
             "wrong_party": "wrong party: apologising"}


def phases(progress: dict[str, Any], recorded: str | None = None, via: str | None = None) -> list[str]:
    """The phases one journal step reached (usually none, sometimes two). `recorded`: the status of
    the record the conversation concluded on, when it did; `via`: what the hangup is for, once
    one is under way."""
    out = []
    for track, (_old, new) in progress["changed"].items():
        if (track, new) == ("conversation", "concluded"):
            out.append(_RECORDED.get(recorded or "", "outcome recorded"))
        elif (track, new) == ("hangup", "farewell"):
            out.append(_FAREWELL.get(via or "", "farewell"))
        elif (track, new) == ("hangup", "marked") and via in ("voicemail", "information_line"):
            out.append("end of the call marked; waiting until the line has played everything sent")
        elif phase := _PHASES.get((track, new)):
            out.append(phase)
    return out
