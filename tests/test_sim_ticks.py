"""The simulator's shared pacing clock (calld.sim.ticks): never early, at most a slot late, one
timer per slot however many streams wait in it, and an earlier deadline is not held up behind a
later one."""

from __future__ import annotations

import math
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import pytest
import trio
import trio.testing

from calld.sim.ticks import TickGrid


GRID_WAIT_S = 60.0  # virtual seconds; the latest deadline in these tests is 5 s away


@asynccontextmanager
async def running(grid: TickGrid) -> AsyncIterator[None]:
    """The grid's timer for the block, and a bound on it: a waiter the timer never wakes fails the
    test at once instead of hanging it. Nothing here waits on real I/O, so on the autojump clock
    virtual time reaches the bound only when every waiter is parked for good, at no wall time."""
    try:
        with trio.fail_after(GRID_WAIT_S):
            async with trio.open_nursery() as n:
                await n.start(grid.run)
                yield
                n.cancel_scope.cancel()
    except trio.TooSlowError:
        pytest.fail(f"a waiter was still parked {GRID_WAIT_S:g} s (virtual) later: the grid's timer never woke it")


async def _woken(grid: TickGrid, deadlines: list[float]) -> dict[int, float]:
    """Each waiter's wake-up time (trio's clock), waiters started in the order given."""
    woke: dict[int, float] = {}

    async def wait(i: int, deadline: float) -> None:
        await grid.sleep_until(deadline)
        woke[i] = trio.current_time()

    async with running(grid), trio.open_nursery() as waiters:
        for i, deadline in enumerate(deadlines):
            waiters.start_soon(wait, i, deadline)
            await trio.testing.wait_all_tasks_blocked()
    return woke


async def test_a_waiter_wakes_at_or_after_its_deadline_and_within_one_slot(autojump_clock):
    grid = TickGrid(resolution_s=0.001)
    t0 = trio.current_time()
    deadlines = [t0 + 0.0203, t0 + 0.02, t0 + 0.5, t0 + 0.0001]
    woke = await _woken(grid, deadlines)
    for i, deadline in enumerate(deadlines):
        assert deadline <= woke[i] <= deadline + 0.001 + 1e-9, (i, deadline, woke[i])


async def test_waiters_due_in_one_slot_share_one_wakeup(autojump_clock):
    grid = TickGrid(resolution_s=0.001)
    t0 = trio.current_time()
    # 150 streams in 20 phases: 20 slots, not 150 timers
    deadlines = [t0 + 0.1 + (i % 20) * 0.001 + 0.0004 for i in range(150)]
    woke = await _woken(grid, deadlines)
    assert len(woke) == 150
    assert grid.wakeups == 20
    assert len({round(t, 6) for t in woke.values()}) == 20


async def test_an_earlier_deadline_registered_later_is_not_held_behind_a_later_one(autojump_clock):
    grid = TickGrid(resolution_s=0.001)
    t0 = trio.current_time()
    woke = await _woken(grid, [t0 + 5.0, t0 + 0.05])  # the runner is already waiting for the 5 s slot
    assert woke[1] == pytest.approx(t0 + 0.05, abs=0.0011)
    assert woke[0] == pytest.approx(t0 + 5.0, abs=0.0011)


async def test_a_cancelled_waiter_leaves_the_others_on_time(autojump_clock):
    grid = TickGrid(resolution_s=0.001)
    t0 = trio.current_time()
    woke: list[float] = []

    async def wait() -> None:
        await grid.sleep_until(t0 + 0.2)
        woke.append(trio.current_time())

    async with running(grid):
        with trio.move_on_after(0.1):
            await grid.sleep_until(t0 + 0.2)  # the same slot, given up halfway
        await wait()
    assert woke == [pytest.approx(t0 + 0.2, abs=0.0011)]


async def test_a_deadline_already_past_is_a_checkpoint_not_a_wait(autojump_clock):
    grid = TickGrid()
    async with running(grid):
        t0 = trio.current_time()
        await grid.sleep_until(t0 - 1)
        assert trio.current_time() == t0
        with trio.CancelScope() as scope:
            scope.cancel()
            await grid.sleep_until(t0 - 1)  # a checkpoint: a cancelled caller leaves here
        assert scope.cancelled_caught


def test_a_grid_needs_a_positive_resolution():
    with pytest.raises(ValueError, match="positive"):
        TickGrid(resolution_s=0)
    assert math.isfinite(TickGrid().resolution_s)


async def test_the_grid_says_how_late_its_timer_fired_when_the_loop_was_busy(autojump_clock):
    grid = TickGrid(resolution_s=0.001)
    t0 = trio.current_time()
    woke: list[float] = []

    async def wait(deadline: float) -> None:
        await grid.sleep_until(deadline)
        woke.append(trio.current_time())

    async def busy_loop() -> None:
        # Half a millisecond before the slot, something holds the loop for 50 ms.
        await trio.sleep_until(t0 + 0.9995)
        autojump_clock.jump(0.05)

    async with running(grid), trio.open_nursery() as waiters:
        waiters.start_soon(wait, t0 + 0.5)
        waiters.start_soon(wait, t0 + 1.0)
        waiters.start_soon(busy_loop)
    assert woke[1] == pytest.approx(t0 + 1.0495, abs=1e-6)
    late = {tenth / 10: s for tenth, s in grid.late_by_tenth.items()}
    # the on-time slot left no mark; the late one is filed under the tenth of a second it fired in
    assert list(late.values()) == [pytest.approx(0.0495, abs=1e-6)]
    assert list(late)[0] == pytest.approx(math.floor((t0 + 1.0495) * 10) / 10)
