"""The simulator's HTTP: the stub world's REST and webhook seams put on real loopback sockets.

The stub world talks through three seams (a REST handler, a webhook poster, and message
sockets for media and GPT-Live). Here the first two meet the network: a quart-trio app serves
the REST handler, and webhooks are signed and POSTed. The message sockets are real
WebSockets handed to the world directly (calld.sim.ws).
"""

from __future__ import annotations

import logging
from collections import defaultdict
from collections.abc import Awaitable, Callable
from urllib.parse import urlsplit

import h11
import httpx
import trio
from quart import Response, request
from quart_trio import QuartTrio

from calld.adapters.webhook_auth import sign_webhook

log = logging.getLogger("calld.sim")

RestHandler = Callable[[httpx.Request], Awaitable[httpx.Response]]


def rest_app(handler: RestHandler) -> QuartTrio:
    """Serve an httpx-style handler (the stub Telnyx REST API) over real HTTP."""
    app = QuartTrio("calld.sim.telnyx")

    # Every path: Telnyx's /v2, and the fake Linq's and text model's routes beside it.
    @app.route("/<path:rest>", methods=["GET", "POST", "PATCH", "PUT", "DELETE"])
    async def v2(rest: str) -> Response:
        body = await request.get_data()
        req = httpx.Request(request.method, str(request.url), headers=list(request.headers.items()), content=body)
        resp = await handler(req)
        return Response(resp.content, status=resp.status_code, content_type=resp.headers.get("content-type", "application/json"))

    return app


POST_TIMEOUT_S = 5.0


class WebhookPoster:
    """Posts webhooks as Telnyx does: signed, to the URL the dial named.

    Over kept-alive HTTP/1.1 connections spoken by h11, not httpx: when a batch of calls ends
    together, hundreds of webhooks go out within a second, and through httpx each cost the
    simulator's loop about 1.5 ms, the wait that the latencies it measured then included."""

    def __init__(self, private_key: object, clock: Callable[[], float], *, timeout_s: float = POST_TIMEOUT_S) -> None:
        self._key = private_key
        self._clock = clock
        self._timeout_s = timeout_s
        self._idle: defaultdict[tuple[str, int], list[tuple[trio.SocketStream, h11.Connection]]] = defaultdict(list)
        self.statuses: list[int] = []

    async def post(self, url: str, raw: bytes) -> None:
        parts = urlsplit(url)
        if parts.scheme != "http" or not parts.hostname:
            # Logged, not raised: one bad URL must not end the simulated call, let alone the simulator.
            log.warning("webhook to %s not sent: the simulator posts over plain http on loopback; "
                        "set PUBLIC_WEBHOOK_URL to an http:// URL", url)
            self.statuses.append(0)
            return
        where = (parts.hostname, parts.port or 80)
        headers = [("host", parts.netloc), ("content-type", "application/json"), ("content-length", str(len(raw))),
                   *sign_webhook(raw, self._key, int(self._clock())).items()]  # type: ignore[arg-type]
        target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        conn = self._idle[where].pop() if self._idle[where] else None
        try:
            with trio.fail_after(self._timeout_s):
                if conn is None:
                    conn = (await trio.open_tcp_stream(*where), h11.Connection(h11.CLIENT))
                status = await _exchange(*conn, h11.Request(method="POST", target=target, headers=headers), raw)
        except (OSError, trio.BrokenResourceError, trio.TooSlowError, h11.ProtocolError) as exc:
            log.warning("webhook to %s failed: %s", url, exc or type(exc).__name__)
            self.statuses.append(0)
            if conn is not None:
                await conn[0].aclose()
            return
        except BaseException:  # cancelled mid-exchange (the simulator stops): let the socket go now, not at GC
            if conn is not None:
                await trio.aclose_forcefully(conn[0])
            raise
        self.statuses.append(status)
        stream, http = conn
        if http.our_state is h11.DONE and http.their_state is h11.DONE:
            http.start_next_cycle()
            self._idle[where].append(conn)
        else:
            await stream.aclose()

    async def aclose(self) -> None:
        for conns in self._idle.values():
            for stream, _ in conns:
                await stream.aclose()
        self._idle.clear()


async def _exchange(stream: trio.SocketStream, http: h11.Connection, req: h11.Request, body: bytes) -> int:
    """One request and its response on a connection; the response's status."""
    await stream.send_all(http.send(req) + http.send(h11.Data(data=body)) + http.send(h11.EndOfMessage()))
    status = 0
    while True:
        event = http.next_event()
        if event is h11.NEED_DATA:
            http.receive_data(await stream.receive_some(65536))
        elif isinstance(event, h11.Response):
            status = event.status_code
        elif isinstance(event, h11.EndOfMessage):
            return status
        elif isinstance(event, h11.ConnectionClosed):
            raise trio.BrokenResourceError("the daemon closed the connection before its answer")
