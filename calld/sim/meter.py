"""Forwarding latency by audio position, measured where the simulator sends and receives.

The bridge forwards both directions in order, so the k-th byte the fake Telnyx sends
is the k-th byte the fake GPT-Live receives (after the pickup hold), and the other way
round. Each side records (byte position, time); latency at a position is the receive
time minus the send time of the same position. Loopback transit is included, as it is
for every figure compared with.
"""

from __future__ import annotations

import bisect
from collections.abc import Callable
from typing import Any

import trio


POSITION_BYTES = 640  # 20 ms of L16 16 kHz mono, the simulator's audio


class Stream:
    """One direction of one call: send marks and receive marks, each as cumulative bytes."""

    def __init__(self, clock: Callable[[], float]) -> None:
        self._clock = clock
        self.sent_pos: list[int] = []
        self.sent_t: list[float] = []
        self.recv_pos: list[int] = []
        self.recv_t: list[float] = []
        self._sent = 0
        self._recv = 0

    def sent(self, n: int, *, at: float | None = None) -> None:
        self._sent += n
        self.sent_pos.append(self._sent)
        self.sent_t.append(self._clock() if at is None else at)

    def received(self, n: int, *, at: float | None = None) -> None:
        self._recv += n
        self.recv_pos.append(self._recv)
        self.recv_t.append(self._clock() if at is None else at)

    def bytes_sent_before(self, t: float) -> int:
        i = bisect.bisect_right(self.sent_t, t)
        return self.sent_pos[i - 1] if i else 0

    def timed_latencies(self, skip_bytes: int = 0, step: int = POSITION_BYTES) -> list[tuple[float, float]]:
        """(receive time, latency) for every `step` bytes of audio past `skip_bytes`: the time the
        message holding that position arrived minus the time the message holding it was sent.
        Every 20 ms of audio counts once, however the two sides cut it into messages (a 100 ms
        delta out is five positions, each measured when its own 20 ms frame arrives)."""
        out = []
        end = min(self._recv, self._sent)
        pos = skip_bytes + step
        while pos <= end:
            r, s = bisect.bisect_left(self.recv_pos, pos), bisect.bisect_left(self.sent_pos, pos)
            out.append((self.recv_t[r], self.recv_t[r] - self.sent_t[s]))
            pos += step
        return out

    @property
    def bytes_sent(self) -> int:
        return self._sent

    @property
    def bytes_received(self) -> int:
        return self._recv


class CallMeter:
    """Both directions of one call. `uplink`: Telnyx frame -> GPT-Live append; `downlink`: GPT-Live
    delta -> Telnyx frame. `hold_bytes`: inbound audio sent before GPT-Live was ready (held on purpose)."""

    def __init__(self, clock: Callable[[], float] = trio.current_time) -> None:
        self.uplink = Stream(clock)
        self.downlink = Stream(clock)
        self.hold_bytes = 0
        self.sent_at_close = 0  # uplink bytes the business had sent when session.close came


def percentile(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    s = sorted(values)
    return s[min(len(s) - 1, max(0, round(q / 100 * (len(s) - 1))))]


def worst_by_second(timed: list[tuple[float, float]], t0: float) -> dict[int, float]:
    """The worst latency (ms) among the audio received in each second since `t0`."""
    worst: dict[int, float] = {}
    for t, lat in timed:
        sec = int(t - t0)
        worst[sec] = max(worst.get(sec, 0.0), lat * 1000)
    return dict(sorted(worst.items()))


def p99_by_second(timed: list[tuple[float, float]], t0: float) -> dict[int, float]:
    """The 99th percentile of the latency (ms) among the audio received in each second since `t0`."""
    by: dict[int, list[float]] = {}
    for t, lat in timed:
        by.setdefault(int(t - t0), []).append(lat)
    return {sec: percentile(lats, 99) * 1000 for sec, lats in sorted(by.items())}


def summarize(meters: list[CallMeter], late_by_tenth: dict[int, float] | None = None) -> dict[str, Any]:
    """The batch's figures; `late_by_tenth` is the simulator's own timer lateness (calld.sim.ticks)."""
    timed_up = [x for m in meters for x in m.uplink.timed_latencies(skip_bytes=m.hold_bytes)]
    timed_down = [x for m in meters for x in m.downlink.timed_latencies()]
    up, down = [lat for _, lat in timed_up], [lat for _, lat in timed_down]
    t0 = min((m.uplink.sent_t[0] for m in meters if m.uplink.sent_t), default=0.0)
    frames = 640
    # In flight at the close is not lost: allow 100 ms (5 frames) of audio on the wire.
    lost_up = sum(max(0, (m.sent_at_close - m.uplink.bytes_received) // frames - 5) for m in meters if m.sent_at_close)
    lost_down = sum(max(0, (m.downlink.bytes_sent - m.downlink.bytes_received) // frames) for m in meters)
    return {
        "frames_lost_uplink": lost_up,
        "frames_lost_downlink": lost_down,
        "calls": len(meters),
        "frames_in": sum(m.uplink.bytes_sent for m in meters) // frames,
        "frames_to_live": sum(m.uplink.bytes_received for m in meters) // frames,
        "frames_from_live": sum(m.downlink.bytes_sent for m in meters) // frames,
        "frames_out": sum(m.downlink.bytes_received for m in meters) // frames,
        "uplink_ms": {q: percentile(up, q) * 1000 for q in (50, 99, 100)},
        "downlink_ms": {q: percentile(down, q) * 1000 for q in (50, 99, 100)},
        # Seconds since the first call's first frame -> the worst latency heard in that second.
        "uplink_worst_by_second_ms": worst_by_second(timed_up, t0),
        "downlink_worst_by_second_ms": worst_by_second(timed_down, t0),
        "uplink_p99_by_second_ms": p99_by_second(timed_up, t0),
        "downlink_p99_by_second_ms": p99_by_second(timed_down, t0),
        # ... and how late the simulator's own timer fired in that second (its loop was busy).
        "sim_late_worst_by_second_ms": worst_by_second([(tenth / 10, late) for tenth, late in (late_by_tenth or {}).items()
                                                        if tenth / 10 >= t0], t0),
    }
