"""The ledger's group commit (calld.daemon.groupsync): calls that need an fsync at about the same
moment share one, nobody returns before an fsync that started after its commit has ended, and a
failed fsync is logged, not raised."""

from __future__ import annotations

import logging
import threading

import trio

from calld.daemon.groupsync import GroupSync
from calld.runtime.disk import inline, off_the_loop


class Disk:
    def __init__(self) -> None:
        self.synced = 0  # commits made durable so far
        self.committed = 0
        self.fail = False
        self.syncs = 0  # fsyncs asked for, failed ones too

    def sync(self) -> None:
        self.syncs += 1
        if self.fail:
            raise OSError(5, "Input/output error")
        self.synced = self.committed


async def test_calls_within_the_window_share_one_fsync_and_none_returns_before_it(autojump_clock):
    disk = Disk()
    group = GroupSync(disk.sync, window_s=0.05, disk=inline)
    durable_when_told: list[bool] = []

    async def call_ends() -> None:
        disk.committed += 1
        mine = disk.committed
        await group()
        durable_when_told.append(disk.synced >= mine)

    async with trio.open_nursery() as n:
        for _ in range(10):
            n.start_soon(call_ends)
            await trio.sleep(0.004)  # ten results 4 ms apart: one window
    assert disk.syncs == 1
    assert durable_when_told == [True] * 10


async def test_a_call_after_the_window_closed_gets_an_fsync_of_its_own(autojump_clock):
    disk = Disk()
    synced_at: list[int] = []

    def sync() -> None:
        synced_at.append(disk.committed)
        disk.sync()

    group = GroupSync(sync, window_s=0.05, disk=inline)
    told: list[tuple[int, int]] = []

    async def call_ends(at: float) -> None:
        await trio.sleep_until(at)
        disk.committed += 1
        mine = disk.committed
        await group()
        told.append((mine, disk.synced))

    async with trio.open_nursery() as n:
        t0 = trio.current_time()
        n.start_soon(call_ends, t0)
        n.start_soon(call_ends, t0 + 0.2)
    assert synced_at == [1, 2]
    assert told == [(1, 1), (2, 2)]


async def test_an_fsync_that_fails_is_logged_and_the_next_call_tries_again(autojump_clock, caplog):
    disk = Disk()
    group = GroupSync(disk.sync, window_s=0.05, disk=inline)
    disk.committed, disk.fail = 1, True
    with caplog.at_level(logging.ERROR, logger="calld.daemon"):
        await group()
    assert "could not be synced" in caplog.text and disk.synced == 0
    disk.committed, disk.fail = 2, False
    await group()
    assert disk.synced == 2 and disk.syncs == 2


async def test_a_commit_made_while_an_fsync_runs_waits_for_the_next_one(autojump_clock):
    # The real shape (calld serve): the fsync runs in a worker thread, and the loop goes on
    # committing while it does. That fsync may have started before the new commit reached the
    # file, so it cannot be the one that makes the commit durable.
    disk = Disk()
    started, release = threading.Event(), threading.Event()
    syncs_seen: list[int] = []

    def slow_sync() -> None:
        syncs_seen.append(disk.committed)  # what this fsync can cover: what was committed before it
        started.set()
        release.wait(10)
        disk.synced = syncs_seen[-1]

    group = GroupSync(slow_sync, window_s=0.01, disk=off_the_loop)
    told: list[tuple[int, int]] = []

    async def call_ends() -> None:
        disk.committed += 1
        mine = disk.committed
        await group()
        told.append((mine, disk.synced))

    async with trio.open_nursery() as n:
        n.start_soon(call_ends)
        assert await trio.to_thread.run_sync(started.wait, 10)  # the first fsync is under way
        n.start_soon(call_ends)
        await trio.sleep(0.05)  # the second caller is waiting, well past its window
        assert told == []
        release.set()
    assert syncs_seen == [1, 2]
    assert told == [(1, 1), (2, 2)]
