"""Prometheus metrics for operators, served on the control socket (`GET /metrics`).

Each daemon owns one registry (tests run many daemons in one process). Calls are counted
after they finish, from the artifacts they left (result.json, call_report.json and the
journal's frame numbers), so a metric says what the files say. Names start with `calld_`.
"""

from __future__ import annotations

import gc
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from prometheus_client import (
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    ProcessCollector,
    disable_created_metrics,
    generate_latest,
)
from prometheus_client.exposition import CONTENT_TYPE_LATEST

from calld.observe.artifacts import RunArtifacts, load_run, refused_records

CONTENT_TYPE = CONTENT_TYPE_LATEST
disable_created_metrics()  # the *_created series only restate the start time
_CALL_BUCKETS = (5, 10, 15, 20, 30, 45, 60, 90, 120, 180, 300, 600)
_RING_BUCKETS = (0.5, 1, 2, 3, 5, 8, 12, 20, 30, 60)
_GC_BUCKETS = (0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5)


def _span_s(timing: dict[str, Any], track: str, start: set[str], end: set[str] | None, default_end_ms: int) -> float | None:
    """Seconds from the track's first state in `start` to its first later state in `end` (or the call's end)."""
    moves = timing.get(track) or []
    began = next((m["t_ms"] for m in moves if m["state"] in start), None)
    if began is None:
        return None
    finished = next((m["t_ms"] for m in moves if m["t_ms"] >= began and end is not None and m["state"] in end), default_end_ms)
    return max(finished - began, 0) / 1000


class Metrics:
    def __init__(self, *, max_calls: int, in_flight: Callable[[], int]) -> None:
        self.registry = CollectorRegistry(auto_describe=True)
        r = self.registry
        self._started_cpu = time.process_time()
        self._call_seconds = 0.0
        ProcessCollector(registry=r, namespace="calld")
        self.calls = Counter("calld_calls", "Finished calls by status and reason.", ("status", "reason"), registry=r)
        self.call_seconds = Histogram("calld_call_duration_seconds", "Call length, dial to end.", buckets=_CALL_BUCKETS, registry=r)
        self.ring_seconds = Histogram("calld_ring_duration_seconds", "From the dial being placed to the answer.",
                                      buckets=_RING_BUCKETS, registry=r)
        self.hangups = Counter("calld_hangups", "How calls ended: calld's hangup path, or far_party / none.", ("path",),
                               registry=r)
        self.pickup_frames = Counter("calld_pickup_audio_frames", "Callee audio that came before GPT-Live was ready.",
                                     ("fate",), registry=r)
        self.frames_lost = Counter("calld_media_frames_lost", "Inbound media frames missing from the chunk sequence.",
                                   registry=r)
        self.live_seconds = Histogram("calld_live_session_seconds", "GPT-Live session length per call (billed time).",
                                      buckets=_CALL_BUCKETS, registry=r)
        self.call_seconds_total = Counter("calld_call_seconds", "Sum of every finished call's length.", registry=r)
        self.cpu_per_call_second = Gauge("calld_cpu_seconds_per_call_second",
                                         "Process CPU since start over call-seconds finished since start.", registry=r)
        self.cpu_per_call_second.set_function(self._cpu_per_call_second)
        self.in_flight = Gauge("calld_calls_in_flight", "Calls on the line now.", registry=r)
        self.in_flight.set_function(lambda: float(in_flight()))
        self.max_calls = Gauge("calld_max_calls", "CALLD_MAX_CALLS: new calls past this are refused.", registry=r)
        self.max_calls.set(max_calls)
        self.refusals = Counter("calld_refusals", "Requests refused before any dial, by rule.", ("rule",), registry=r)
        self.tool_refusals = Counter("calld_tool_record_refusals", "Tool records the call refused (the model was told why).",
                                     registry=r)
        self.timeline_failures = Counter("calld_timeline_failures", "Timeline pictures that could not be drawn.", registry=r)
        # A collection stops every call's audio for its length: the audio path's worst pause.
        self.gc_pauses = Histogram("calld_gc_pause_seconds", "Garbage collections, by how long they stopped the daemon.",
                                   ("generation",), buckets=_GC_BUCKETS, registry=r)
        self.gc_pause_max = Gauge("calld_gc_pause_max_seconds", "The longest garbage collection since start.", registry=r)
        # Collections with no call in flight (the daemon's own full walks when the last call ends)
        # stop nobody's audio: counted apart, so the two above say what calls felt.
        self.gc_unfelt = Histogram("calld_gc_unfelt_pause_seconds", "Garbage collections while no call was in flight.",
                                   buckets=_GC_BUCKETS, registry=r)
        self._calls_in_flight = in_flight
        self.gc_frozen = Gauge("calld_gc_frozen_objects", "Start-up objects kept out of the collector's walks (gc.freeze).",
                               registry=r)
        self.gc_frozen.set_function(lambda: float(gc.get_freeze_count()))
        self._gc_started = 0.0
        self._gc_max = 0.0

    def watch_gc(self) -> None:
        """Time every collection from now on (until `unwatch_gc`)."""
        if self._on_gc not in gc.callbacks:
            gc.callbacks.append(self._on_gc)

    def unwatch_gc(self) -> None:
        if self._on_gc in gc.callbacks:
            gc.callbacks.remove(self._on_gc)

    def _on_gc(self, phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            self._gc_started = time.perf_counter()
            return
        pause = time.perf_counter() - self._gc_started
        if not self._calls_in_flight():
            self.gc_unfelt.observe(pause)
            return
        self.gc_pauses.labels(generation=str(info.get("generation", "?"))).observe(pause)
        if pause > self._gc_max:
            self._gc_max = pause
            self.gc_pause_max.set(pause)

    def _cpu_per_call_second(self) -> float:
        return (time.process_time() - self._started_cpu) / self._call_seconds if self._call_seconds else 0.0

    def refused(self, rule: str) -> None:
        """A request refused before anything was dialled (policy rules call this with their name)."""
        self.refusals.labels(rule=rule).inc()

    def observe_call(self, run_dir: Path) -> None:
        """Count one finished call from its artifacts."""
        self.observe(load_run(run_dir))

    def observe(self, run: RunArtifacts) -> None:
        res, rep = run.result, run.report
        status = str(res.get("status") or rep.get("status") or "unknown")
        reason = res.get("reason")
        reason = reason if isinstance(reason, str) and " " not in reason and len(reason) <= 40 else ""
        self.calls.labels(status=status, reason=reason).inc()
        seconds = run.duration_ms / 1000
        self.call_seconds.observe(seconds)
        self.call_seconds_total.inc(seconds)
        self._call_seconds += seconds
        timing = rep.get("timing_ms") or {}
        ring = _span_s(timing, "telnyx", {"initiated"}, {"answered"}, -1)
        if ring is not None and any(m["state"] == "answered" for m in timing.get("telnyx") or []):
            self.ring_seconds.observe(ring)
        hangup = rep.get("hangup") or {}
        path = hangup.get("via") or ("far_party" if hangup.get("cause") else "none")
        self.hangups.labels(path=path).inc()
        counts = rep.get("counts") or {}
        self.pickup_frames.labels(fate="held").inc(counts.get("held_frames", 0))
        self.pickup_frames.labels(fate="dropped").inc(counts.get("dropped_frames", 0))
        self.frames_lost.inc(run.inbound_frames_lost)
        live = _span_s(timing, "live", {"starting"}, {"closed", "failed"}, run.duration_ms)
        if live is not None:
            self.live_seconds.observe(live)
        self.tool_refusals.inc(len(refused_records(run.rows)))

    def exposition(self) -> bytes:
        return generate_latest(self.registry)
