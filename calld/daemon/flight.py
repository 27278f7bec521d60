"""A request's call in flight, for everyone waiting on it: progress told to each watcher, the outcome once."""

from __future__ import annotations

import math
from typing import Any

import trio


class Flight:
    """One request's call, for everyone waiting on it (a repeat of the same request id attaches here)."""

    def __init__(self, request_id: str, run_id: str) -> None:
        self.request_id = request_id
        self.run_id = run_id
        self.done = trio.Event()
        self.outcome: dict[str, Any] = {}
        self.watchers: set[trio.MemorySendChannel[dict[str, Any]]] = set()

    def watch(self) -> trio.MemoryReceiveChannel[dict[str, Any]]:
        tx, rx = trio.open_memory_channel[dict[str, Any]](math.inf)
        if self.done.is_set():
            tx.close()
        else:
            self.watchers.add(tx)
        return rx

    def tell(self, item: dict[str, Any]) -> None:
        for tx in list(self.watchers):
            try:
                tx.send_nowait(item)
            except (trio.ClosedResourceError, trio.BrokenResourceError):
                self.watchers.discard(tx)

    def finish(self, outcome: dict[str, Any]) -> None:
        self.outcome = outcome
        self.done.set()
        for tx in self.watchers:
            tx.close()
        self.watchers.clear()
