"""What `/metrics` counts of one finished call, read from the artifacts it left.

A pure reading of `RunArtifacts` into a small frozen record, so that it can be made where the
artifacts are read: in the drawing process (calld.observe.painter), which reads them anyway to
draw the call. Reading a call's journal is about 2 ms of Python; in a worker thread of the
daemon that is time the audio path waits for the GIL, at the moment many calls end together.
"""

from __future__ import annotations

from typing import Any

from attrs import frozen

from calld.observe.artifacts import RunArtifacts, refused_records


@frozen
class CallFigures:
    status: str
    reason: str  # "" when there is none, or it is not a short code (a label must stay a small set)
    seconds: float
    ring_s: float | None  # dial placed -> answered; None when it was never answered
    hangup_path: str  # calld's hangup path, or far_party / none
    held_frames: int
    dropped_frames: int
    frames_lost: int
    live_s: float | None  # the GPT-Live session's length (billed time); None when none started
    tool_refusals: int


def _span_s(timing: dict[str, Any], track: str, start: set[str], end: set[str] | None, default_end_ms: int) -> float | None:
    """Seconds from the track's first state in `start` to its first later state in `end` (or the call's end)."""
    moves = timing.get(track) or []
    began = next((m["t_ms"] for m in moves if m["state"] in start), None)
    if began is None:
        return None
    finished = next((m["t_ms"] for m in moves if m["t_ms"] >= began and end is not None and m["state"] in end), default_end_ms)
    return max(finished - began, 0) / 1000


def call_figures(run: RunArtifacts) -> CallFigures:
    res, rep = run.result, run.report
    reason = res.get("reason")
    timing = rep.get("timing_ms") or {}
    ring = _span_s(timing, "telnyx", {"initiated"}, {"answered"}, -1)
    answered = any(m["state"] == "answered" for m in timing.get("telnyx") or [])
    hangup = rep.get("hangup") or {}
    counts = rep.get("counts") or {}
    return CallFigures(
        status=str(res.get("status") or rep.get("status") or "unknown"),
        reason=reason if isinstance(reason, str) and " " not in reason and len(reason) <= 40 else "",
        seconds=run.duration_ms / 1000,
        ring_s=ring if ring is not None and answered else None,
        hangup_path=hangup.get("via") or ("far_party" if hangup.get("cause") else "none"),
        held_frames=int(counts.get("held_frames", 0)),
        dropped_frames=int(counts.get("dropped_frames", 0)),
        frames_lost=run.inbound_frames_lost,
        live_s=_span_s(timing, "live", {"starting"}, {"closed", "failed"}, run.duration_ms),
        tool_refusals=len(refused_records(run.rows)),
    )
