"""Timed wake-ups for many paced streams, on one shared grid.

Every simulated line sends a frame each 20 ms and every simulated GPT-Live session a delta each
100 ms. With `trio.sleep_until` each of those wake-ups is a cancel scope of its own, raised and
caught: at 150 calls, 9,000 a second (with the stub world's frame parsing, the simulator went
from 81% to 71% of its core when both moved off the slow path). Here the waiters due in
the same slot of the grid (1 ms by default) park together, and one timer a slot wakes them all,
so the cost follows the slots, not the streams.

A waiter wakes in the first slot at or after its deadline: never early, at most one slot late.
Each stream keeps its own phase (lines started at different moments stay spread over the
20 ms), which is how a carrier's independent calls arrive at the daemon.

The grid also says how late its own timer fired (`late_by_tenth`): the simulator's event loop
was busy for that long, and a latency it measured at that moment includes the wait. The load
benchmark prints it beside the latencies, so a spike can be told apart: the daemon's or the
simulator's own.
"""

from __future__ import annotations

import heapq
import math

import trio
from trio.lowlevel import ParkingLot


class TickGrid:
    def __init__(self, resolution_s: float = 0.001) -> None:
        if resolution_s <= 0:
            raise ValueError(f"resolution_s must be positive, got {resolution_s}")
        self.resolution_s = resolution_s
        self._due: dict[int, ParkingLot] = {}  # slot -> the waiters due in it
        self._slots: list[int] = []  # heap of the slots with waiters
        self._sleep: trio.CancelScope | None = None  # the runner's wait for the earliest slot
        self.wakeups = 0  # slots the runner has woken: what the grid costs
        # tenth of a second of trio's clock -> the longest the timer fired after its slot in it (s)
        self.late_by_tenth: dict[int, float] = {}

    async def sleep_until(self, deadline: float) -> None:
        """Return at or after `deadline` (trio's clock), at most one slot after it."""
        slot = math.ceil(deadline / self.resolution_s)
        at = slot * self.resolution_s
        if at <= trio.current_time():
            await trio.lowlevel.checkpoint()  # due already: a checkpoint, as trio.sleep_until gives
            return
        lot = self._due.get(slot)
        if lot is None:
            lot = self._due[slot] = ParkingLot()
            heapq.heappush(self._slots, slot)
            if self._sleep is not None and at < self._sleep.deadline:
                self._sleep.deadline = at  # earlier than what the runner waits for
        await lot.park()

    async def run(self, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        """The one timer: start it in a nursery that outlives every waiter."""
        task_status.started()
        while True:
            with trio.CancelScope(deadline=self._slots[0] * self.resolution_s if self._slots else math.inf) as sleep:
                self._sleep = sleep
                await trio.sleep_forever()
            self._sleep = None
            now = trio.current_time()
            if self._slots and (late := now - self._slots[0] * self.resolution_s) > 0:
                tenth = int(now * 10)
                if late > self.late_by_tenth.get(tenth, 0.0):
                    self.late_by_tenth[tenth] = late
            while self._slots and self._slots[0] * self.resolution_s <= now:
                self._due.pop(heapq.heappop(self._slots)).unpark_all()
                self.wakeups += 1
