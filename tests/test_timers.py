"""The runtime's timers (CallHandle performing Schedule and Cancel): a re-armed timer moves its
deadline instead of starting a task, fires once with the latest event, and a cancelled one never fires."""

from __future__ import annotations

import trio
import trio.testing

from calld.core import events as ev
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
