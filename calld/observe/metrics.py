"""Prometheus metrics for operators, served on the control socket (`GET /metrics`).

Each daemon owns one registry (tests run many daemons in one process). Calls are counted
after they finish, from the artifacts they left (result.json, call_report.json and the
journal's frame numbers), so a metric says what the files say. Names start with `calld_`.
"""

from __future__ import annotations

import gc
import time
from collections.abc import Callable

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

from calld.observe.artifacts import RunArtifacts
from calld.observe.figures import CallFigures, call_figures

CONTENT_TYPE = CONTENT_TYPE_LATEST
disable_created_metrics()  # the *_created series only restate the start time
_CALL_BUCKETS = (5, 10, 15, 20, 30, 45, 60, 90, 120, 180, 300, 600)
_RING_BUCKETS = (0.5, 1, 2, 3, 5, 8, 12, 20, 30, 60)
_GC_BUCKETS = (0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5)


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
        self.media_refusals = Counter("calld_media_sockets_refused", "Media WebSocket connections refused, by reason "
                                      "(unknown_token, bad_auth, second_connection).", ("reason",), registry=r)
        self.tool_refusals = Counter("calld_tool_record_refusals", "Tool records the call refused (the model was told why).",
                                     registry=r)
        self.timeline_failures = Counter("calld_timeline_failures", "Timeline pictures that could not be drawn.", registry=r)
        # A collection stops every call's audio for its length: the audio path's worst pause.
        self.gc_pauses = Histogram("calld_gc_pause_seconds", "Garbage collections, by how long they stopped the daemon.",
                                   ("generation",), buckets=_GC_BUCKETS, registry=r)
        self.gc_pause_max = Gauge("calld_gc_pause_max_seconds", "The longest garbage collection since start.", registry=r)
        # The loop's thread's own CPU in a collection: what the collector's work cost. A pause far
        # longer than its CPU was the machine taking the core away meanwhile (a VM's stall, another
        # process), which no collector setting changes.
        self.gc_pause_cpu_max = Gauge("calld_gc_pause_cpu_max_seconds",
                                      "The most CPU one garbage collection took since start.", registry=r)
        # Collections with no call in flight (the daemon's own full walks when the last call ends)
        # stop nobody's audio: counted apart, so the two above say what calls felt.
        self.gc_unfelt = Histogram("calld_gc_unfelt_pause_seconds", "Garbage collections while no call was in flight.",
                                   buckets=_GC_BUCKETS, registry=r)
        self._calls_in_flight = in_flight
        self.gc_frozen = Gauge("calld_gc_frozen_objects", "Start-up objects kept out of the collector's walks (gc.freeze).",
                               registry=r)
        self.gc_frozen.set_function(lambda: float(gc.get_freeze_count()))
        self._gc_started = 0.0
        self._gc_started_cpu = 0.0
        self._gc_max = 0.0
        self._gc_cpu_max = 0.0

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
            self._gc_started_cpu = time.thread_time()
            return
        pause = time.perf_counter() - self._gc_started
        cpu = time.thread_time() - self._gc_started_cpu
        if not self._calls_in_flight():
            self.gc_unfelt.observe(pause)
            return
        self.gc_pauses.labels(generation=str(info.get("generation", "?"))).observe(pause)
        if pause > self._gc_max:
            self._gc_max = pause
            self.gc_pause_max.set(pause)
        if cpu > self._gc_cpu_max:
            self._gc_cpu_max = cpu
            self.gc_pause_cpu_max.set(cpu)

    def _cpu_per_call_second(self) -> float:
        return (time.process_time() - self._started_cpu) / self._call_seconds if self._call_seconds else 0.0

    def media_refused(self, reason: str) -> None:
        self.media_refusals.labels(reason=reason).inc()

    def refused(self, rule: str) -> None:
        """A request refused before anything was dialled (policy rules call this with their name)."""
        self.refusals.labels(rule=rule).inc()

    def observe(self, run: RunArtifacts) -> None:
        self.count(call_figures(run))

    def count(self, f: CallFigures) -> None:
        """Count one finished call (its figures made from its artifacts: calld.observe.figures)."""
        self.calls.labels(status=f.status, reason=f.reason).inc()
        self.call_seconds.observe(f.seconds)
        self.call_seconds_total.inc(f.seconds)
        self._call_seconds += f.seconds
        if f.ring_s is not None:
            self.ring_seconds.observe(f.ring_s)
        self.hangups.labels(path=f.hangup_path).inc()
        self.pickup_frames.labels(fate="held").inc(f.held_frames)
        self.pickup_frames.labels(fate="dropped").inc(f.dropped_frames)
        self.frames_lost.inc(f.frames_lost)
        if f.live_s is not None:
            self.live_seconds.observe(f.live_s)
        self.tool_refusals.inc(f.tool_refusals)

    def exposition(self) -> bytes:
        return generate_latest(self.registry)
