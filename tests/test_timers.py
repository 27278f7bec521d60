"""The runtime's timers (CallHandle performing Schedule and Cancel): a call's timers share one task,
which ends when none is armed; a re-armed timer starts no task and fires once, at its new deadline, with
the latest event; a cancelled one never fires; and their journal rows are not flushed on their own."""

from __future__ import annotations

import json

import trio
import trio.testing

from calld.core import events as ev
from calld.core.effects import Cancel, Schedule, SendMark
from calld.domain.ids import RunId
from calld.runtime.handle import CallHandle, CallPorts
from calld.runtime.rundir import RunDir
from tests.core_helpers import make_plan


def _handle(tmp_path) -> CallHandle:
    ports = CallPorts(telnyx=None, connect_live=None, public_media_url="wss://calld.test/media", webhook_url=None)  # type: ignore[arg-type]
    return CallHandle(make_plan(), ports, RunDir(tmp_path, RunId.new(), []))


def _delivered(handle: CallHandle) -> list[ev.Event]:
    out = []
    while True:
        try:
            out.append(handle._events_rx.receive_nowait())  # noqa: SLF001
        except trio.WouldBlock:
            return out


async def test_a_rearmed_timer_fires_once_at_its_new_deadline_with_the_new_event(autojump_clock, tmp_path):
    handle = _handle(tmp_path)
    async with trio.open_nursery() as nursery:
        handle._nursery = nursery  # noqa: SLF001
        start = trio.current_time()
        handle._schedule("stall", 5.0, ev.StallElapsed())  # noqa: SLF001
        await trio.sleep(1)
        tasks = len(nursery.child_tasks)
        for _ in range(10):  # speech re-arms the stall failsafe on every fragment
            await trio.sleep(0.3)
            handle._schedule("stall", 5.0, ev.FarewellElapsed())  # noqa: SLF001
            assert len(nursery.child_tasks) == tasks  # the same waiting task, moved
        rearmed_at = trio.current_time()
        await trio.sleep(4.9)
        assert _delivered(handle) == []  # the first deadline (start + 5 s) has passed without it
        await trio.sleep(0.2)
        assert _delivered(handle) == [ev.FarewellElapsed()]
        assert abs(rearmed_at - start - 4.0) < 1e-6
        await trio.sleep(60)
        assert _delivered(handle) == [] and not nursery.child_tasks
    handle.rundir.close()


async def test_a_cancelled_timer_never_fires_and_a_fired_one_can_be_armed_again(autojump_clock, tmp_path):
    handle = _handle(tmp_path)
    async with trio.open_nursery() as nursery:
        handle._nursery = nursery  # noqa: SLF001
        handle._schedule("drain", 2.0, ev.DrainTimedOut())  # noqa: SLF001
        await trio.sleep(1)
        handle._cancel_timer("drain")  # noqa: SLF001
        await trio.sleep(5)
        assert _delivered(handle) == []
        handle._schedule("drain", 2.0, ev.DrainTimedOut())  # noqa: SLF001
        await trio.sleep(3)
        assert _delivered(handle) == [ev.DrainTimedOut()]
        handle._schedule("drain", 1.0, ev.TrailElapsed())  # noqa: SLF001
        await trio.sleep(2)
        assert _delivered(handle) == [ev.TrailElapsed()]
    handle.rundir.close()


async def test_a_calls_timers_share_one_task_and_each_fires_at_its_own_deadline(autojump_clock, tmp_path):
    handle = _handle(tmp_path)
    async with trio.open_nursery() as nursery:
        handle._nursery = nursery  # noqa: SLF001
        start = trio.current_time()
        handle._schedule("call_cap", 10.0, ev.CallCapElapsed())  # noqa: SLF001
        handle._schedule("stall", 3.0, ev.StallElapsed())  # noqa: SLF001
        handle._schedule("farewell", 6.0, ev.FarewellElapsed())  # noqa: SLF001
        await trio.sleep(0)
        assert len(nursery.child_tasks) == 1
        fired = []
        for _ in range(3):
            fired.append((await handle._events_rx.receive(), round(trio.current_time() - start, 6)))  # noqa: SLF001
        assert fired == [(ev.StallElapsed(), 3.0), (ev.FarewellElapsed(), 6.0), (ev.CallCapElapsed(), 10.0)]
        await trio.sleep(0)
        assert not nursery.child_tasks  # nothing armed: no task waits
    handle.rundir.close()


async def test_cancelling_every_timer_ends_the_timer_task_and_a_new_one_arms_again(autojump_clock, tmp_path):
    handle = _handle(tmp_path)
    async with trio.open_nursery() as nursery:
        handle._nursery = nursery  # noqa: SLF001
        handle._schedule("stall", 3.0, ev.StallElapsed())  # noqa: SLF001
        handle._schedule("call_cap", 9.0, ev.CallCapElapsed())  # noqa: SLF001
        await trio.sleep(1)
        handle._cancel_timer("stall")  # noqa: SLF001
        handle._cancel_timer("call_cap")  # noqa: SLF001
        handle._schedule("drain", 2.0, ev.DrainTimedOut())  # noqa: SLF001  (before the task has woken)
        await trio.sleep(1.5)
        assert _delivered(handle) == [] and len(nursery.child_tasks) == 1
        await trio.sleep(1)
        assert _delivered(handle) == [ev.DrainTimedOut()]
        handle._schedule("stall", 2.0, ev.StallElapsed())  # noqa: SLF001
        handle._cancel_timer("stall")  # noqa: SLF001
        await trio.sleep(0.001)
        assert not nursery.child_tasks  # cancelled with nothing left: the task has ended
        await trio.sleep(10)
        assert _delivered(handle) == []
    handle.rundir.close()


async def test_timer_rows_wait_in_the_buffer_for_the_next_flushed_row(autojump_clock, tmp_path):
    """The failsafe is re-armed on every word: its rows cost no write of their own, and lose no order."""
    handle = _handle(tmp_path)
    journal = handle.rundir.path / "events.jsonl"
    async with trio.open_nursery() as nursery:
        handle._nursery = nursery  # noqa: SLF001
        await handle._perform_all((Schedule("stall", 5.0, ev.StallElapsed()), Cancel("drain")), 1, 0)  # noqa: SLF001
        assert journal.read_text() == ""
        await handle._perform_all((SendMark("goodbye"),), 4, 10)  # noqa: SLF001  (no media socket: only its row)
        rows = [json.loads(line) for line in journal.read_text().splitlines()]
        assert [r["effect"]["kind"] for r in rows] == ["schedule", "cancel", "media.mark"]
        nursery.cancel_scope.cancel()
    handle.rundir.close()
