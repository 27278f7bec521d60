"""The simulator's HTTP: the stub world's REST and webhook seams put on real loopback sockets.

The stub world talks through three seams (a REST handler, a webhook poster, and message
sockets for media and GPT-Live). Here the first two meet the network: a quart-trio app serves
the REST handler, and webhooks are signed and POSTed. The message sockets are real
WebSockets handed to the world directly (calld.sim.ws).
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable

import httpx
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
