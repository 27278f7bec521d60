"""The public app: what Telnyx reaches (webhooks, the media socket) and the /health probe.

Routes translate and enqueue; they never run call logic inline (Telnyx wants an
answer within about 2 s). The media socket is served at the ASGI layer in front of
quart (MediaRoute): 50 frames a second per call each way, so each frame should cost
one task hop and no more. The route's task owns the socket; the call's media task
reads it, and a dropped socket ends that reader cleanly instead of leaving it blocked.
"""

from __future__ import annotations

import hmac
import logging
import time
from collections.abc import Awaitable, Callable
from typing import Any

import trio
from quart import Response, request
from quart_trio import QuartTrio

from calld.adapters.telnyx_webhook import WebhookError, parse_webhook
from calld.daemon.callbook import CallBook
from calld.runtime.sockets import SocketClosed

log = logging.getLogger("calld.public")

MAX_WEBHOOK_BYTES = 256 * 1024
WEBHOOK_ENQUEUE_BOUND_S = 1.0
MEDIA_CLOSE_BOUND_S = 2.0
MEDIA_PREFIX = "/telnyx/media/"
ASGIReceive = Callable[[], Awaitable[dict[str, Any]]]
ASGISend = Callable[[dict[str, Any]], Awaitable[None]]
ASGIApp = Callable[[dict[str, Any], ASGIReceive, ASGISend], Awaitable[None]]


class AsgiSocket:
    """Telnyx's media WebSocket as the call sees it, straight on hypercorn's ASGI channel.

    The call's media task reads the ASGI `receive` itself, so a frame costs one task hop from
    hypercorn's reader to the call (quart's websocket layer would add a task, a queue and a
    signal per frame). The route's task owns the socket's lifetime; `aclose` cancels any read
    in progress so the call sees SocketClosed instead of waiting forever.
    """

    def __init__(self, receive: ASGIReceive, send: ASGISend) -> None:
        self._receive = receive
        self._send = send
        self._reading = trio.CancelScope()
        self.closed = False
        self.peer_gone = False

    async def send(self, text: str) -> None:
        if self.closed:
            raise SocketClosed("media socket closed")
        try:
            await self._send({"type": "websocket.send", "text": text})
        except Exception as exc:  # noqa: BLE001 - the peer is gone; the reader will notice too
            raise SocketClosed(f"media send failed: {exc}") from None

    async def receive(self) -> str:
        if not self.closed:
            self._reading = trio.CancelScope()  # one per read: a scope is entered once
            with self._reading:
                try:
                    message = await self._receive()
                except Exception as exc:  # noqa: BLE001 - hypercorn is tearing the connection down
                    self.peer_gone = True
                    raise SocketClosed(f"media socket closed: {exc}") from None
                if message["type"] == "websocket.receive":
                    text = message.get("text")
                    return text if text is not None else (message.get("bytes") or b"").decode("utf-8", "replace")
                self.peer_gone = True
                raise SocketClosed(f"media socket closed by Telnyx (code {message.get('code', 1005)})")
        raise SocketClosed("media socket closed")

    async def aclose(self) -> None:
        if not self.closed:
            self.closed = True
            self._reading.cancel()
            if not self.peer_gone:
                with trio.move_on_after(MEDIA_CLOSE_BOUND_S):
                    await self._send({"type": "websocket.close", "code": 1000})


class MediaRoute:
    """ASGI middleware in front of the quart app: serves `/telnyx/media/<token>` WebSockets itself
    (see AsgiSocket for why) and passes everything else to quart."""

    def __init__(self, inner: ASGIApp, book: CallBook) -> None:
        self._inner = inner
        self._book = book

    async def __call__(self, scope: dict[str, Any], receive: ASGIReceive, send: ASGISend) -> None:
        if scope["type"] == "websocket" and scope["path"].startswith(MEDIA_PREFIX):
            await self._media(scope["path"][len(MEDIA_PREFIX):], scope, receive, send)
        else:
            await self._inner(scope, receive, send)

    async def _media(self, token: str, scope: dict[str, Any], receive: ASGIReceive, send: ASGISend) -> None:
        if (await receive())["type"] != "websocket.connect":
            return
        header = next((v.decode("latin-1") for k, v in scope["headers"] if k == b"x-telnyx-streaming-auth-token"), "")
        handle = next((h for h in self._book.handles() if hmac.compare_digest(h.media_token, token)), None)
        if handle is None or not hmac.compare_digest(header, handle.stream_auth_token):
            log.warning("media socket refused: unknown token or bad auth header")
            await send({"type": "websocket.close", "code": 1008})  # before accept: hypercorn answers 403
            return
        await send({"type": "websocket.accept"})
        sock = AsgiSocket(receive, send)
        started = time.monotonic()
        try:
            await handle.attach_media(sock)  # returns when the call no longer needs the socket
        finally:
            with trio.CancelScope(shield=True):
                await sock.aclose()
            log.info("%s media socket closed after %.1f s", handle.plan.run_id, time.monotonic() - started)


def create_public_app(book: CallBook, *, serve_token: str, verify: Callable[[bytes, dict[str, str]], None] | None) -> QuartTrio:
    """`verify` checks a webhook's signature and raises on a bad one (None: unsigned, stub only)."""
    app = QuartTrio("calld.public")
    app.config["MAX_CONTENT_LENGTH"] = MAX_WEBHOOK_BYTES

    @app.get("/health")
    async def health() -> Response:
        return Response(f'{{"ok": true, "serve_token": "{serve_token}"}}', content_type="application/json")

    @app.post("/telnyx/webhook")
    async def telnyx_webhook() -> tuple[dict[str, object], int]:
        raw = await request.get_data(cache=False)
        if verify is not None:
            try:
                verify(raw, dict(request.headers))
            except ValueError as exc:
                log.warning("webhook refused: %s", exc)
                return {"error": f"signature: {exc}"}, 401
        try:
            webhook = parse_webhook(raw)
        except WebhookError as exc:
            log.warning("webhook refused: %s", exc)
            return {"error": str(exc)}, 400
        handle = book.for_webhook(webhook)
        if handle is None:
            log.info("webhook %s %s for no call of ours (%s)", webhook.event_type, webhook.event_id, webhook.call_control_id)
            return {"ok": True, "note": "unknown call"}, 200
        with trio.move_on_after(WEBHOOK_ENQUEUE_BOUND_S) as scope:
            await handle.deliver_webhook(webhook)
        if scope.cancelled_caught:
            log.error("%s webhook %s dropped: the call is not keeping up", handle.plan.run_id, webhook.event_id)
            return {"error": "busy"}, 503  # Telnyx retries 5xx
        return {"ok": True}, 200

    app.asgi_app = MediaRoute(app.asgi_app, book)  # type: ignore[method-assign]
    return app
