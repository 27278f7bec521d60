"""The message-socket seam: what a WebSocket is to the call, and an in-memory pair for stubs.

Live sockets (GPT-Live's and Telnyx media's, both calld.adapters.websocket) and the stub's
memory pair all look the same to the CallHandle: text in, text out.
"""

from __future__ import annotations

import math
from typing import Protocol

import trio


class SocketClosed(Exception):
    """The peer went away. `reason` says how, for the journal."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class MessageSocket(Protocol):
    async def send(self, text: str) -> None: ...
    async def receive(self) -> str: ...
    async def aclose(self) -> None: ...


class MemorySocket:
    """One end of an in-memory duplex text socket."""

    def __init__(self, tx: trio.MemorySendChannel[str], rx: trio.MemoryReceiveChannel[str], name: str) -> None:
        self._tx, self._rx, self.name = tx, rx, name

    async def send(self, text: str) -> None:
        try:
            await self._tx.send(text)
        except (trio.BrokenResourceError, trio.ClosedResourceError):
            raise SocketClosed(f"{self.name}: peer closed") from None

    async def receive(self) -> str:
        try:
            return await self._rx.receive()
        except (trio.EndOfChannel, trio.ClosedResourceError):
            raise SocketClosed(f"{self.name}: closed") from None

    async def aclose(self) -> None:
        await self._tx.aclose()
        await self._rx.aclose()


def memory_socket_pair(name: str) -> tuple[MemorySocket, MemorySocket]:
    a_tx, b_rx = trio.open_memory_channel[str](math.inf)
    b_tx, a_rx = trio.open_memory_channel[str](math.inf)
    return MemorySocket(a_tx, a_rx, f"{name}/app"), MemorySocket(b_tx, b_rx, f"{name}/peer")
