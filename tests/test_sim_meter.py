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
    assert {k: round(v) for k, v in s["uplink_p99_by_second_ms"].items()} == {0: 10, 1: 1460}  # and each second's p99


def test_every_20_ms_position_counts_once_however_the_audio_is_cut() -> None:
    """A 100 ms delta sent at 0 s and played out as five 20 ms frames, 0.02 s apart from 0.01 s:
    five positions, each measured when its own frame arrived (not once, at the last byte)."""
    m = CallMeter(clock=lambda: 0.0)
    m.downlink.sent(5 * 640, at=0.0)
    for k in range(5):
        m.downlink.received(640, at=0.01 + 0.02 * k)
    lat = [round(x * 1000) for _, x in m.downlink.timed_latencies()]
    assert lat == [10, 30, 50, 70, 90]
    # The other way round: one 100 ms message received for five 20 ms frames sent 20 ms apart.
    m = CallMeter(clock=lambda: 0.0)
    for k in range(5):
        m.uplink.sent(640, at=0.02 * k)
    m.uplink.received(5 * 640, at=0.1)
    assert [round(x * 1000) for _, x in m.uplink.timed_latencies()] == [100, 80, 60, 40, 20]


def test_the_simulators_own_lateness_is_reported_by_second_of_the_batch() -> None:
    m = CallMeter(clock=lambda: 0.0)
    m.uplink.sent(640, at=100.0)  # the batch's first frame: second 0
    m.uplink.received(640, at=100.004)
    # the timer's lateness by tenth of a second of trio's clock; what came before the batch is not its own
    s = summarize([m], {995: 0.3, 1000: 0.002, 1004: 0.001, 1031: 0.045, 1039: 0.012})
    assert {k: round(v) for k, v in s["sim_late_worst_by_second_ms"].items()} == {0: 2, 3: 45}
    assert summarize([m])["sim_late_worst_by_second_ms"] == {}
