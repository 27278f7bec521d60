"""The ledger as the daemon's event loop sees it: every method awaited.

The ledger's methods are synchronous, each one transaction. Where the ledger is a file on this
host (SQLite) a transaction is a few hundred microseconds of local work, and runs inline, as it
always has: no thread hop on the path of a call. Where it is across a network (PostgreSQL), a
transaction is a round trip that may stall (a server restarting, a lock held by another daemon),
and the loop every call's audio shares must never wait on it: those run in worker threads, a few
at a time (psycopg's async API is asyncio-only; its sync API in threads is the way on trio).

`run(fn)` runs any synchronous function of the ledger the same way, so a rule that reads several
rows (the gate, the history) reads them in one place, on the right thread.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from functools import partial
from typing import Any, TypeVar

import trio

T = TypeVar("T")

THREADS = 4  # a daemon's ledger round trips at once; its pool holds as many connections


class AsyncLedger:
    def __init__(self, ledger: Any, *, threaded: bool | None = None) -> None:
        self.sync = ledger
        self.threaded = getattr(ledger, "engine", "sqlite") == "postgresql" if threaded is None else threaded
        self._limiter = trio.CapacityLimiter(THREADS)

    async def run(self, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        """fn(ledger, *args, **kwargs), inline for a local ledger, in a worker thread for a remote one."""
        if not self.threaded:
            return fn(self.sync, *args, **kwargs)
        # abandon_on_cancel=False: a transaction in flight finishes (or rolls back) before its caller
        # hears of the cancel, so nothing a cancelled caller started is left half known.
        return await trio.to_thread.run_sync(partial(fn, self.sync, *args, **kwargs), limiter=self._limiter)

    def __getattr__(self, name: str) -> Callable[..., Awaitable[Any]]:
        method = getattr(self.sync, name)
        if not callable(method):
            raise AttributeError(f"ledger attribute {name!r} is not a method; read it from .sync")

        async def call(*args: Any, **kwargs: Any) -> Any:
            if not self.threaded:
                return method(*args, **kwargs)
            return await trio.to_thread.run_sync(partial(method, *args, **kwargs), limiter=self._limiter)

        call.__name__ = name
        return call


def awaitable(ledger: Any) -> AsyncLedger:
    """An AsyncLedger for `ledger`, whichever it is already (tests hand modules the plain ledger)."""
    return ledger if isinstance(ledger, AsyncLedger) else AsyncLedger(ledger)
