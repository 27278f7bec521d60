"""The simulator's own garbage collection: no automatic full walks, one each time every line is down.

The simulator measures the daemon's latency; a full walk of its own heap mid-batch stops its loop,
and the pause is charged to the daemon (bench/load.py's "simulator's own timer" line).
"""

from __future__ import annotations

import gc
from types import SimpleNamespace

import trio

from calld.daemon.collector import NEVER
from calld.sim.cli import _collect_when_idle, _take_over_collections


class Walks:
    def __init__(self) -> None:
        self.at: list[float] = []

    def call_ended(self, calls_in_flight: int, now: float) -> bool:
        assert calls_in_flight == 0
        self.at.append(now)
        return True


def line(ended: bool) -> SimpleNamespace:
    return SimpleNamespace(ended=ended)


async def test_one_full_walk_each_time_every_line_has_been_down_a_while(autojump_clock: trio.testing.MockClock) -> None:
    sim = SimpleNamespace(worlds={})
    walks = Walks()
    async with trio.open_nursery() as n:
        n.start_soon(_collect_when_idle, sim, walks)  # looks every 0.5 s
        await trio.sleep(3.25)  # off its beat, so each change below falls between two looks
        assert walks.at == []  # idle from the start: nothing was made to walk
        sim.worlds["a"], sim.worlds["b"] = line(False), line(False)
        await trio.sleep(3)
        sim.worlds["a"] = line(True)
        await trio.sleep(3)
        assert walks.at == []  # one line still up: its audio is being measured
        sim.worlds["b"] = line(True)
        await trio.sleep(0.6)
        assert walks.at == []  # just down: its last webhooks may still be going out
        await trio.sleep(5)
        assert len(walks.at) == 1  # once, not every half second while idle
        sim.worlds["c"] = line(False)
        await trio.sleep(1)
        sim.worlds["c"] = line(True)
        await trio.sleep(2)
        assert len(walks.at) == 2
        n.cancel_scope.cancel()


def test_the_simulator_process_takes_full_walks_over() -> None:
    saved = gc.get_threshold()
    try:
        collections = _take_over_collections(0.0)
        assert collections.owned and gc.get_threshold()[2] == NEVER
    finally:
        gc.set_threshold(*saved)
        gc.unfreeze()
