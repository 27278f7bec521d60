"""Which cores a daemon's event loop is not pinned to, and moving the caller onto them (Linux).

The daemon is pinned to its core (CPUAffinity, docs/scaling.md). Its helpers (the drawing
process, the disk threads) take the other cores, so that none of them wakes on the loop's."""

from __future__ import annotations

import os


def cores_besides(tid: int) -> set[int]:
    """The cores thread or process `tid` is not pinned to; empty when it may run on all of them,
    when it is gone, or off Linux."""
    try:
        theirs = os.sched_getaffinity(tid)
    except (AttributeError, OSError):
        return set()
    return set(range(os.cpu_count() or 1)) - theirs


def move_to(cores: set[int]) -> None:
    """Pin the calling thread to `cores`, unless it is there already. A core the machine lists but
    has not online refuses the move: where the caller is will do."""
    try:
        if os.sched_getaffinity(0) != cores:
            os.sched_setaffinity(0, cores)  # 0: this thread, not the process
    except (AttributeError, OSError):
        pass
