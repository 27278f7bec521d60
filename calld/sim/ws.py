"""The simulator's WebSocket ends: Telnyx's media client and GPT-Live's server, on the same lean
layer as the daemon's sockets (calld.adapters.websocket: websockets' sans-I/O protocol, read in
the caller's own task). The simulator must stay cheaper than the daemon it loads, so it pays no
reader task and no Python masking per frame either.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from functools import partial
from urllib.parse import urlsplit

import trio
from websockets.client import ClientProtocol
from websockets.server import ServerProtocol
from websockets.uri import parse_uri

from calld.adapters.websocket import STREAM_ERRORS, Early, WebSocket, read_request, send_request, write_pending
from calld.runtime.sockets import SocketClosed

MAX_MESSAGE_BYTES = 16 << 20
HANDSHAKE_BOUND_S = 10.0

WsSocket = WebSocket


async def ws_connect(url: str, headers: dict[str, str], name: str) -> WebSocket:
    """Open a client WebSocket to `url` (ws://), as Telnyx opens the media stream. SocketClosed if refused."""
    parts = urlsplit(url)
    try:
        stream = await trio.open_tcp_stream(parts.hostname or "127.0.0.1", parts.port or 80)
    except OSError as exc:
        raise SocketClosed(f"{name}: cannot connect: {exc}") from None
    protocol = ClientProtocol(parse_uri(url), max_size=MAX_MESSAGE_BYTES)
    try:
        with trio.move_on_after(HANDSHAKE_BOUND_S):
            response, early = await send_request(stream, protocol, headers.items())
            if response is not None and response.status_code == 101 and protocol.handshake_exc is None:
                return WebSocket(stream, protocol, name, early=early)
        refused = f"HTTP {response.status_code}" if response is not None else protocol.handshake_exc or "no answer"
    except STREAM_ERRORS as exc:
        refused = str(exc)
    except BaseException:  # cancelled mid-handshake: the fd goes now, not at garbage collection
        await trio.aclose_forcefully(stream)
        raise
    await trio.aclose_forcefully(stream)
    raise SocketClosed(f"{name}: handshake refused ({refused})")


async def serve_ws(handler: Callable[[WebSocket], Awaitable[None]], host: str, port: int, *,
                   task_status: trio.TaskStatus[int] = trio.TASK_STATUS_IGNORED) -> None:
    """Accept WebSockets on host:port (any path) and run `handler` on each; reports the bound port."""
    listeners = await trio.open_tcp_listeners(port, host=host)
    task_status.started(listeners[0].socket.getsockname()[1])
    await trio.serve_listeners(partial(_one, handler), listeners)


async def _one(handler: Callable[[WebSocket], Awaitable[None]], stream: trio.SocketStream) -> None:
    protocol = ServerProtocol(max_size=MAX_MESSAGE_BYTES)
    try:
        request, early = None, Early()
        with trio.move_on_after(HANDSHAKE_BOUND_S):
            request, early = await read_request(stream, protocol)
            if request is not None:
                protocol.send_response(protocol.accept(request))  # a bad upgrade gets its 4xx here
            await write_pending(stream, protocol)
        if request is not None and protocol.handshake_exc is None:
            sock = WebSocket(stream, protocol, "ws-server", early=early)
            try:
                await handler(sock)
            finally:
                with trio.CancelScope(shield=True):
                    await sock.aclose()
    except STREAM_ERRORS:
        pass
    finally:
        await trio.aclose_forcefully(stream)
