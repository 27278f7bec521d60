"""The media listener: Telnyx's media WebSockets on a trio listener of their own, beside hypercorn.

A call's media socket carries 50 frames a second each way; through hypercorn's ASGI WebSocket each
frame cost wsproto's parsing, hypercorn's task hops and an ASGI message. Here a frame costs
websockets' C-masked parser and one read in the call's own media task (calld.adapters.websocket).
Webhooks, /health and the control socket stay on hypercorn.

It listens on CALLD_MEDIA_BIND. Telnyx reaches it at PUBLIC_MEDIA_URL, by default
PUBLIC_BASE_URL's origin + /telnyx/media: the reverse proxy in front routes that path prefix
(with the WebSocket upgrade) to CALLD_MEDIA_BIND and everything else to CALLD_BIND (README).

A connection: the HTTP upgrade is read within HANDSHAKE_BOUND_S; the path must be
/telnyx/media/<token> of a call in flight and the x-telnyx-streaming-auth-token header that call's
(both compared in constant time), else 404 or 403 and nothing reaches a call. An accepted socket
belongs to the call until it no longer needs it, then it is closed.
"""

from __future__ import annotations

import hmac
import json
from http import HTTPStatus
import logging
import time
from collections.abc import Callable
from functools import partial

import trio
from websockets.http11 import Request
from websockets.server import ServerProtocol

from calld.adapters.websocket import STREAM_ERRORS, Early, WebSocket, read_request, write_pending
from calld.daemon.callbook import CallBook
from calld.runtime.sockets import SocketClosed

log = logging.getLogger("calld.media")

MEDIA_PREFIX = "/telnyx/media/"
HEALTH_PATH = MEDIA_PREFIX + "health"  # not a token: tokens are 32 characters
HANDSHAKE_BOUND_S = 10.0
MAX_MESSAGE_BYTES = 1 << 20  # a Telnyx media frame is a few KiB; a MiB is plenty and bounds memory


async def serve_media(book: CallBook, bind: str, stop: trio.Event, serve_token: str = "", *,
                      refused: Callable[[str], None] = lambda reason: None,
                      task_status: trio.TaskStatus[str] = trio.TASK_STATUS_IGNORED) -> None:
    """Listen on `bind` (HOST:PORT, port 0 picks one) until `stop`; started with 'HOST:PORT' bound.

    `GET /telnyx/media/health` answers like the public /health, with `serve_token`: the ingress
    check proves the proxy's media rule reaches this daemon, as it does for the webhooks.
    `refused(reason)` is told of each socket refused (the daemon counts them in its metrics)."""
    host, _, port = bind.rpartition(":")
    listeners = await trio.open_tcp_listeners(int(port), host=host.strip("[]"))
    bound_port = listeners[0].socket.getsockname()[1]
    async with trio.open_nursery() as nursery:
        await nursery.start(trio.serve_listeners, partial(_connection, book, serve_token, refused), listeners)
        task_status.started(f"{host}:{bound_port}")
        await stop.wait()
        nursery.cancel_scope.cancel()


async def _connection(book: CallBook, serve_token: str, refused: Callable[[str], None], stream: trio.SocketStream) -> None:
    try:
        await _serve(book, serve_token, refused, stream)
    except SocketClosed as exc:
        log.info("media socket ended: %s", exc.reason)
    except Exception:  # a bug here must cost one connection, never the listener (and every call's media)
        log.exception("media socket failed")
    finally:
        await trio.aclose_forcefully(stream)


async def _serve(book: CallBook, serve_token: str, refused: Callable[[str], None], stream: trio.SocketStream) -> None:
    protocol = ServerProtocol(max_size=MAX_MESSAGE_BYTES)
    request: Request | None = None
    early = Early()
    with trio.move_on_after(HANDSHAKE_BOUND_S):
        request, early = await read_request(stream, protocol)
    if request is None:
        if protocol.handshake_exc is not None:
            log.warning("media socket refused: %s", protocol.handshake_exc)
            if not await write_pending(stream, protocol):  # no answer queued (not HTTP at all): say so
                await _answer(stream, 400, "Not a WebSocket upgrade request: Telnyx media streams open here.\n")
        return
    if request.path == HEALTH_PATH:
        await _answer(stream, 200, json.dumps({"ok": True, "serve_token": serve_token}), "application/json")
        return
    if not request.path.startswith(MEDIA_PREFIX):
        log.warning("media socket refused: %s is not under %s", request.path[:64], MEDIA_PREFIX)
        protocol.send_response(protocol.reject(404, f"Media sockets are at {MEDIA_PREFIX}<token>.\n"))
        await write_pending(stream, protocol)
        return
    token = request.path[len(MEDIA_PREFIX):]
    handle = book.for_media_token(token)
    if handle is None:  # 403 like a bad auth header: the answer says nothing of which tokens exist
        log.warning("media socket refused: unknown token")
        refused("unknown_token")
        protocol.send_response(protocol.reject(403, "Unknown stream.\n"))
        await write_pending(stream, protocol)
        return
    auth = request.headers.get("x-telnyx-streaming-auth-token", "")
    if not hmac.compare_digest(auth.encode(), handle.stream_auth_token.encode()):
        log.warning("%s media socket refused: bad or missing x-telnyx-streaming-auth-token", handle.plan.run_id)
        refused("bad_auth")
        protocol.send_response(protocol.reject(403, "Bad stream auth token.\n"))
        await write_pending(stream, protocol)
        return
    if handle.media_claimed:  # valid token and header, but the call has its media socket already
        log.warning("%s media socket refused: a second connection while the call has its stream", handle.plan.run_id)
        refused("second_connection")
        protocol.send_response(protocol.reject(409, "This stream is already connected.\n"))
        await write_pending(stream, protocol)
        return
    response = protocol.accept(request)
    protocol.send_response(response)
    if response.status_code != 101:  # not a WebSocket upgrade after all: the protocol said why
        log.warning("%s media socket refused: %s", handle.plan.run_id, protocol.handshake_exc)
        await write_pending(stream, protocol)
        return
    claimed = handle.claim_media()  # no checkpoint since media_claimed was read: this socket is the call's
    assert claimed
    socket = WebSocket(stream, protocol, "telnyx-media", early=early)  # type: ignore[arg-type]
    started = time.monotonic()
    try:
        await socket.flush()  # the 101
        await handle.attach_media(socket)  # returns when the call no longer needs the socket
    finally:
        with trio.CancelScope(shield=True):  # bounded inside (CLOSE_TIMEOUT_S)
            await socket.aclose()
        log.info("%s media socket closed after %.1f s", handle.plan.run_id, time.monotonic() - started)


async def _answer(stream: trio.SocketStream, status: int, text: str, content_type: str = "text/plain; charset=utf-8") -> None:
    body = text.encode()
    head = f"HTTP/1.1 {status} {HTTPStatus(status).phrase}\r\nContent-Type: {content_type}\r\nContent-Length: {len(body)}\r\nConnection: close\r\n\r\n"
    try:
        await stream.send_all(head.encode() + body)
    except STREAM_ERRORS:
        pass
