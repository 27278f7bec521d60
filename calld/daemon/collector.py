"""When the garbage collector may walk the whole heap.

A full (generation 2) collection stops the event loop, and with it every call's audio, for as
long as the walk takes: 35-75 ms at 50-100 calls on a 2-core machine, where the young
generations' walks stay under 10 ms (bench/load.py prints both by generation). So a daemon that
owns its process keeps the young generations automatic (the middle one walked more often, so each
walk is shorter) and takes the full walks itself, at moments no call can feel:

- when the last call in flight has ended (nothing is listening to the pause), and
- when calls never stop, at a call's start or end once `max_interval_s` has passed since the
  last full walk: a pause taken knowingly, so that cyclic garbage that reached the old
  generation cannot grow without bound.

The start-up heap is frozen first (modules, apps, settings live as long as the process), so even
those walks see only what calls made. Everything here is synchronous; the caller passes the time.
"""

from __future__ import annotations

import gc
import logging
import time

log = logging.getLogger("calld.gc")

NEVER = 2**30  # a generation-2 threshold no count reaches: CPython then never starts a full walk itself
# Generation 1 is walked after this many young walks (CPython's default is 10). A middle walk costs
# about what is alive and young at that moment (every suspended task's fresh coroutines, the calls'
# newest state) plus what the young walks since the last one promoted; walked half as far apart,
# the longest collection at 150 calls went from 14.8-18.8 ms to 7.7-11.0 ms (bench/load.py 150,
# two runs each), for the same total.
MIDDLE_THRESHOLD = 5
# The young threshold stays CPython's 700. A young walk costs mostly what the waiting tasks hold
# young (each wait makes a fresh coroutine chain: about 2,000 coroutines among the 8,000-14,000
# young objects a walk met at 100 calls), not what was allocated since the last walk: at 700, 350
# and 200, the most CPU one collection took was 9.8, 8.0 and 7.6 ms at 100 calls, for 475, 797
# and 1,053 ms of collections in all (bench/load.py 100, one run each, the machine equally slow).
MAX_INTERVAL_S = 600.0


class FullCollections:
    def __init__(self, *, max_interval_s: float = MAX_INTERVAL_S) -> None:
        self.max_interval_s = max_interval_s
        self._saved: tuple[int, int, int] | None = None
        self._last = 0.0
        self.taken = 0  # full walks this policy took

    @property
    def owned(self) -> bool:
        return self._saved is not None

    def take_over(self, now: float) -> None:
        """Freeze the start-up heap and stop automatic full walks (until `give_back`)."""
        if self._saved is not None:
            return
        gc.collect()
        gc.freeze()
        self._saved = gc.get_threshold()
        young, middle, _ = self._saved
        gc.set_threshold(young, min(middle, MIDDLE_THRESHOLD), NEVER)
        self._last = now

    def give_back(self) -> None:
        """The collector as it was (thresholds); the frozen start-up heap stays frozen."""
        if self._saved is not None:
            gc.set_threshold(*self._saved)
            self._saved = None

    def call_started(self, now: float) -> bool:
        """A call is about to begin: a full walk only if one is overdue. True if one was taken."""
        return self._overdue(now) and self._collect(now, "overdue")

    def call_ended(self, calls_in_flight: int, now: float) -> bool:
        """A call has ended: a full walk if none is left to feel it, or if one is overdue."""
        if calls_in_flight == 0:
            return self._collect(now, "idle")
        return self._overdue(now) and self._collect(now, "overdue")

    def _overdue(self, now: float) -> bool:
        return self._saved is not None and now - self._last >= self.max_interval_s

    def _collect(self, now: float, why: str) -> bool:
        if self._saved is None:
            return False
        started = time.perf_counter()  # the pause itself is wall time, whatever clock the caller keeps
        found = gc.collect()
        self._last = now
        self.taken += 1
        log.debug("full collection (%s): %d unreachable, %.1f ms", why, found, (time.perf_counter() - started) * 1000)
        return True
