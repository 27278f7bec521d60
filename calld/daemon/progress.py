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
    ("conversation", "concluded"): "answer heard",
    ("hangup", "farewell"): "farewell",
    ("hangup", "draining"): "closing the session",
    ("hangup", "marked"): "goodbye sent; waiting until it has played",
    ("hangup", "requested"): "hanging up",
    ("hangup", "done"): "hung up",
}


def phases(progress: dict[str, Any]) -> list[str]:
    """The phases one journal step reached (usually none, sometimes two)."""
    return [phase for track, (_old, new) in progress["changed"].items() if (phase := _PHASES.get((track, new)))]
