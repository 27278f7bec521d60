"""Finishing work behind live frames: what follows a call's hangup waits for a loop with nothing to do.

Every call's audio shares one event loop, and trio runs every runnable task before it looks at
the sockets again; so a hundred calls ending in one second, each concluding, building its result
and report and writing its files in one go, held every other call's frames for tens of
milliseconds (docs/performance.md, issue 54). Here that work takes its turn instead:

- A *job* (one call's finish, its verdict's preview, its ledger row, its picture) queues for the
  daemon's one turn, first come, first served, so the oldest job is finished first.
- Inside its turn the job runs in *steps*, each a millisecond or two of plain work; before each
  step it waits until no task is runnable and no socket has anything to read (trio's own idle
  test: `wait_all_tasks_blocked`, which a loop with a frame waiting does not pass).
- A job that has waited `bound_s` since it was queued stops waiting for idle: from then its steps
  only yield (a checkpoint), so a loop that is never idle (a core saturated by calls) still gets
  every result out, `bound_s` plus the steps of the jobs ahead of it after the hangup.
- `hurry()` (the daemon is stopping: its drain is over) lets every step go at once, so what was
  queued is finished before the daemon exits; a daemon killed meanwhile leaves those calls'
  ledger rows in flight, and the next start recovers them as it recovers a crash
  (calld.ops.recovery).

Resource handling: a job holds the turn while it awaits (the disk port's thread included); a job
cancelled while it waits gives the turn back. Error handling: nothing here raises but the caller's
own errors and trio's Cancelled.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager

import trio
from trio.testing import wait_all_tasks_blocked

FINISH_BOUND_S = 3.0  # the longest a finishing job waits for an idle loop before it steps regardless

Step = Callable[[], Awaitable[None]]


class Behind:
    """The daemon's queue of finishing work (see the module's docstring). One per daemon: calls
    that share it finish one at a time."""

    def __init__(self, bound_s: float = FINISH_BOUND_S) -> None:
        self.bound_s = bound_s
        self._turn = trio.Lock()  # fair: the job that queued first goes first
        self._hurried = False
        self._waiting: trio.CancelScope | None = None  # the idle wait of the job in its turn
        self.queued = 0  # jobs waiting for their turn or in it
        self.steps = 0  # steps taken, all jobs
        self.steps_when_idle = 0  # of which after an idle loop (the rest: past the bound, or hurried)

    def hurry(self) -> None:
        """From now on no step waits: the daemon is stopping and its calls are over or being torn down."""
        self._hurried = True
        if self._waiting is not None:
            self._waiting.cancel()

    @property
    def hurried(self) -> bool:
        return self._hurried

    @asynccontextmanager
    async def job(self) -> AsyncIterator[Step]:
        """Queue a job; inside, `await step()` before each part of it."""
        deadline = trio.current_time() + self.bound_s
        self.queued += 1
        try:
            async with self._turn:
                yield lambda: self._step(deadline)
        finally:
            self.queued -= 1

    async def _step(self, deadline: float) -> None:
        self.steps += 1
        if self._hurried or trio.current_time() >= deadline:
            await trio.lowlevel.checkpoint()
            return
        with trio.CancelScope(deadline=deadline) as scope:
            self._waiting = scope
            try:
                await wait_all_tasks_blocked()
            finally:
                self._waiting = None
        if not scope.cancelled_caught:
            self.steps_when_idle += 1
