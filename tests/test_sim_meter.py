"""The simulator's latency meter: latency by audio position, and the worst of each second."""

from __future__ import annotations

from calld.sim.meter import CallMeter, summarize


def test_latency_is_measured_by_position_and_the_worst_of_each_second_is_kept() -> None:
    m = CallMeter(clock=lambda: 0.0)
    # Three 20 ms frames sent at 0.00, 0.02, 0.04 s; received at 0.005, 0.030, 1.500 s.
    for at in (0.00, 0.02, 0.04):
        m.uplink.sent(640, at=at)
    for at in (0.005, 0.030, 1.500):
        m.uplink.received(640, at=at)
    s = summarize([m])
    assert round(s["uplink_ms"][100]) == 1460  # the third frame, by its own position
    assert round(s["uplink_ms"][50]) == 10
    assert {k: round(v) for k, v in s["uplink_worst_by_second_ms"].items()} == {0: 10, 1: 1460}
    assert s["downlink_worst_by_second_ms"] == {}
