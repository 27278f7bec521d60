"""The simulator's sockets: the stub world's in-memory seams put on real loopback sockets.

The stub world talks through three seams (a REST handler, a webhook poster, and message
sockets for media and GPT-Live). Here each seam meets the network: a quart-trio app serves
the REST handler, webhooks are signed and POSTed, and a WebSocket is bridged to a memory
socket in both directions until either side ends.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from urllib.parse import urlsplit

import httpx
import trio
from quart import Response, request
from quart_trio import QuartTrio
from trio_websocket import ConnectionClosed, WebSocketConnection, wrap_client_stream

from calld.adapters.webhook_auth import sign_webhook
from calld.runtime.sockets import MemorySocket, SocketClosed

log = logging.getLogger("calld.sim")

RestHandler = Callable[[httpx.Request], Awaitable[httpx.Response]]


def rest_app(handler: RestHandler) -> QuartTrio:
    """Serve an httpx-style handler (the stub Telnyx REST API) over real HTTP."""
    app = QuartTrio("calld.sim.telnyx")

    @app.route("/v2/<path:rest>", methods=["GET", "POST", "PATCH", "PUT", "DELETE"])
    async def v2(rest: str) -> Response:
        body = await request.get_data()
        req = httpx.Request(request.method, str(request.url), headers=list(request.headers.items()), content=body)
        resp = await handler(req)
        return Response(resp.content, status=resp.status_code, content_type="application/json")

    return app


async def bridge(ws: WebSocketConnection, sock: MemorySocket) -> None:
    """Copy messages both ways between a WebSocket and a memory socket until one side ends."""

    async def ws_to_sock() -> None:
        try:
            while True:
                await sock.send(await ws.get_message())
        except (ConnectionClosed, SocketClosed):
            pass

    async def sock_to_ws() -> None:
        try:
            while True:
                await ws.send_message(await sock.receive())
        except (ConnectionClosed, SocketClosed):
            pass

    async with trio.open_nursery() as n:
        async def one(fn: Callable[[], Awaitable[None]]) -> None:
            await fn()
            n.cancel_scope.cancel()  # either side ending ends the bridge

        n.start_soon(one, ws_to_sock)
        n.start_soon(one, sock_to_ws)


async def open_ws_client(url: str, headers: dict[str, str], sock: MemorySocket, *, close_timeout_s: float = 2.0) -> None:
    """Connect to `url` (ws://) as Telnyx does and bridge it to `sock`; owns and closes the TCP stream."""
    parts = urlsplit(url)
    resource = parts.path + (f"?{parts.query}" if parts.query else "")
    stream = await trio.open_tcp_stream(parts.hostname or "127.0.0.1", parts.port or 80)
    try:
        async with trio.open_nursery() as n:
            ws = await wrap_client_stream(
                n, stream, parts.hostname or "127.0.0.1", resource,
                extra_headers=[(k.encode(), v.encode()) for k, v in headers.items()], message_queue_size=256,
            )
            try:
                await bridge(ws, sock)
            finally:
                with trio.move_on_after(close_timeout_s) as scope:
                    scope.shield = True
                    await ws.aclose()
                n.cancel_scope.cancel()
    except* SocketClosed:
        pass
    finally:
        await trio.aclose_forcefully(stream)
        await sock.aclose()


class WebhookPoster:
    """Posts webhooks as Telnyx does: signed, to the URL the dial named."""

    def __init__(self, client: httpx.AsyncClient, private_key: object, clock: Callable[[], float]) -> None:
        self._client = client
        self._key = private_key
        self._clock = clock
        self.statuses: list[int] = []

    async def post(self, url: str, raw: bytes) -> None:
        headers = {"content-type": "application/json", **sign_webhook(raw, self._key, int(self._clock()))}  # type: ignore[arg-type]
        try:
            resp = await self._client.post(url, content=raw, headers=headers)
            self.statuses.append(resp.status_code)
        except httpx.HTTPError as exc:
            log.warning("webhook to %s failed: %s", url, exc)
            self.statuses.append(0)
