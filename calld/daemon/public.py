"""The public app: what Telnyx reaches (webhooks, the media socket) and the /health probe.

Routes translate and enqueue; they never run call logic inline (Telnyx wants an
answer within about 2 s). Media frames are read by the route's own task, which owns
the WebSocket, and handed to the call through a channel, so a dropped socket ends
the call's reader cleanly instead of leaving it blocked.
"""

from __future__ import annotations

import hmac
import logging
import time
from collections.abc import Callable

import trio
from quart import Response, request, websocket
from quart_trio import QuartTrio

from calld.adapters.telnyx_webhook import WebhookError, parse_webhook
from calld.daemon.callbook import CallBook
from calld.runtime.sockets import SocketClosed

log = logging.getLogger("calld.public")

MAX_WEBHOOK_BYTES = 256 * 1024
WEBHOOK_ENQUEUE_BOUND_S = 1.0


class RouteSocket:
    """A quart WebSocket as the call sees it. The call's media task reads it directly (no extra hop
    per frame); the route's task owns its lifetime and, when the peer goes, `aclose` cancels any
    read in progress so the call sees SocketClosed instead of waiting forever."""

    def __init__(self, ws: object) -> None:
        self._ws = ws
        self._reading = trio.CancelScope()
        self.closed = False

    async def send(self, text: str) -> None:
        if self.closed:
            raise SocketClosed("media socket closed")
        try:
            await self._ws.send(text)  # type: ignore[attr-defined]
        except Exception as exc:  # the peer is gone; the route's reader will notice too
            raise SocketClosed(f"media send failed: {exc}") from None

    async def receive(self) -> str:
        if not self.closed:
            self._reading = trio.CancelScope()  # one per read: a scope is entered once
            with self._reading:
                try:
                    message = await self._ws.receive()  # type: ignore[attr-defined]
                except Exception as exc:  # the peer is gone
                    raise SocketClosed(f"media socket closed: {exc}") from None
                return message if isinstance(message, str) else message.decode("utf-8", "replace")
        raise SocketClosed("media socket closed")

    async def aclose(self) -> None:
        self.closed = True
        self._reading.cancel()


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

    @app.websocket("/telnyx/media/<token>")
    async def telnyx_media(token: str) -> tuple[str, int] | None:
        handle = next((h for h in book.handles() if hmac.compare_digest(h.media_token, token)), None)
        header = websocket.headers.get("x-telnyx-streaming-auth-token", "")
        if handle is None or not hmac.compare_digest(header, handle.stream_auth_token):
            log.warning("media socket refused: unknown token or bad auth header")
            return "forbidden", 403
        ws = websocket._get_current_object()  # noqa: SLF001 - handed to the call's tasks
        sock = RouteSocket(ws)
        started = time.monotonic()
        try:
            await handle.attach_media(sock)  # returns when the call no longer needs the socket
        finally:
            with trio.CancelScope(shield=True):
                await sock.aclose()
            log.info("%s media socket closed after %.1f s", handle.plan.run_id, time.monotonic() - started)
        return None

    return app
