"""One fsync of the ledger for every call that needs one within a short window (a group commit).

A call's claim is made durable before it is dialled, and its result before the user is told
(calld.daemon.service). Each was an fsync of its own in a worker thread. The daemon is pinned to
its core (docs/scaling.md), so every such thread woke on the event loop's core, and each wake-up
stopped the loop for a scheduler tick, about 4 ms: at 100 calls ending within a second, dozens
of stalls that every other call's audio waited out (bench/load.py, the batch's last second).

Here a caller waits `window_s` for others to join, then one fsync covers every commit made
before it started; a caller who comes while it runs waits for the next. The user's answer waits
`window_s` longer, next to a call of many seconds.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

import trio

from calld.runtime.disk import DiskWork

log = logging.getLogger("calld.daemon")

WINDOW_S = 0.05


class GroupSync:
    def __init__(self, sync: Callable[[], None], *, disk: DiskWork, window_s: float = WINDOW_S) -> None:
        self._sync = sync
        self._window_s = window_s
        self._disk = disk  # off the loop and its core (calld serve); inline in tests (calld.runtime.disk)
        self._asked = 0  # callers so far, each after its own commit
        self._covered = 0  # callers whose commits a finished fsync covered
        self._running: trio.Event | None = None  # set when the fsync under way has ended

    async def __call__(self) -> None:
        """Return once everything committed before this call is on disk (or the fsync failed: logged)."""
        self._asked += 1
        ticket = self._asked
        while self._covered < ticket:
            if self._running is not None:
                await self._running.wait()
                continue
            running = self._running = trio.Event()
            try:
                await trio.sleep(self._window_s)  # the calls ending beside this one join it
                cover = self._asked
                try:
                    await self._disk(self._sync)
                except OSError as exc:
                    log.error("the ledger could not be synced to disk: %s", exc)
                self._covered = cover
            finally:
                self._running = None
                running.set()
