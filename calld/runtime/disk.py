"""Where disk work runs: `off_the_loop` (calld serve) or `inline` (a daemon or call inside a test).

The JSON files a call writes once under way (dial, session start, task, hangup; at its end the
transcript, result and both reports: about 1 ms of opens, writes and renames a call) and the
ledger's group fsync go through a `DiskWork`, a port chosen at the edge. On the loop, every other
call's audio would wait for them, and at the end of a batch of calls they all come in one second.

The daemon is pinned to its core (docs/scaling.md), and a worker thread inherits that. There, each
wake-up of the thread stopped the loop for a scheduler tick (about 4 ms, bench/load.py's batch
end). So the thread moves itself to the cores the loop's thread is not pinned to, when
there are any; otherwise it stays where it is, which is still off the loop's critical path.

`inline` runs the work on the loop, at once. On pytest-trio's autojump clock a task waiting for a
thread looks idle, and virtual time would leap past every deadline meanwhile (a drain's bound, a
call's timers), so a daemon or a call inside a test writes inline; so does the stub demo.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Protocol, TypeVar

import trio

from calld.ops.cores import cores_besides, move_to

T = TypeVar("T")


def loop_free_cores() -> set[int]:
    """The cores the main thread (the event loop's) is not pinned to."""
    return cores_besides(threading.main_thread().native_id)


def _off_the_loops_core(fn: Callable[[], T]) -> T:
    # Asked again on every trip (two system calls): trio keeps its threads for later jobs, and
    # the loop's pinning may have changed since this thread last looked (taskset -p).
    if others := loop_free_cores():
        move_to(others)
    return fn()


class DiskWork(Protocol):
    async def __call__(self, fn: Callable[[], T], /) -> T: ...


async def off_the_loop(fn: Callable[[], T]) -> T:
    """Run `fn` (file work: it must not touch trio) in a worker thread off the loop's core."""
    return await trio.to_thread.run_sync(_off_the_loops_core, fn)


async def inline(fn: Callable[[], T]) -> T:
    """Run `fn` on the loop, now."""
    return fn()
