"""The ingress check: before a live dial, {PUBLIC_BASE_URL}/health and the media URL's /health must answer
with this daemon's serve token (through its own /d/N/ prefix), and a webhook for another daemon's call is
sent on through the public origin. One probe serves a burst of dials, and a good answer stands for
INGRESS_CHECK_TTL_S."""

from __future__ import annotations

import math
from contextlib import AbstractAsyncContextManager, nullcontext
from typing import TYPE_CHECKING

import httpx
import trio

from calld.daemon.errors import DaemonError
from calld.daemon.forward import forward_webhook

if TYPE_CHECKING:
    from calld.daemon.service import Daemon

INGRESS_CHECK_TTL_S = 60.0  # how long a good /health probe stands before the next dial checks again


class Ingress:
    def __init__(self, daemon: Daemon) -> None:
        self.daemon = daemon
        self.ok_until = -math.inf
        self.probing: trio.Event | None = None  # set when the check in progress has its answer
        self.client: httpx.AsyncClient | None = None  # the probe's client (live, while serving)

    async def check(self) -> None:
        """Before any live dial: {PUBLIC_BASE_URL}/health and the media URL's /health must answer with
        this process's serve token, or Telnyx's webhooks or media would go to someone else (or nowhere)."""
        if self.daemon.settings.calld_mode != "live" or trio.current_time() < self.ok_until:
            return
        while self.probing is not None:  # a call placed a moment ago is checking: its answer serves this one
            await self.probing.wait()
            if trio.current_time() < self.ok_until:
                return
        self.probing = trio.Event()
        try:
            await self._probe()
        finally:
            self.probing.set()
            self.probing = None

    def open_client(self) -> AbstractAsyncContextManager[httpx.AsyncClient | None]:
        """The ingress probe's client, made once at start: a client's TLS context takes 40-250 ms of
        the loop's CPU to build, which every call's audio would feel each time the check comes due.
        No keep-alive: each probe takes the route as it is now, as Telnyx will."""
        if self.daemon.settings.calld_mode != "live":
            return nullcontext(None)
        return httpx.AsyncClient(timeout=5.0, limits=httpx.Limits(max_keepalive_connections=0))

    async def _probe(self) -> None:
        probe = self.client
        assert probe is not None, "the ingress is probed only by a live daemon that is serving"
        # Through this daemon's own /d/N/ prefix: a proxy rule that sends it to another daemon answers
        # with that daemon's token, and is refused here before a dial.
        where = f"/d/{self.daemon.settings.calld_instance}/" if self.daemon.settings.calld_instance is not None else "/"
        for url, fix in ((self.daemon.settings.health_url(), f"check PUBLIC_BASE_URL and the proxy rule for {where} (to CALLD_BIND)"),
                         (self.daemon.settings.media_health_url(),
                          f"check the proxy rule that sends {where}telnyx/media/ to CALLD_MEDIA_BIND (or PUBLIC_MEDIA_URL)")):
            try:
                resp = await probe.get(url)
                token = resp.json().get("serve_token") if resp.status_code == 200 else None
            except (httpx.HTTPError, ValueError, AttributeError) as exc:
                raise DaemonError(f"refusing to dial: {url} is unreachable ({exc}); {fix}") from None
            if token != self.daemon.serve_token:
                raise DaemonError(f"refusing to dial: {url} answered, but not from this daemon; {fix}")
        self.ok_until = trio.current_time() + INGRESS_CHECK_TTL_S

    async def forward(self, owner: int, raw: bytes, headers: dict[str, str]) -> int | None:
        """A webhook for daemon `owner`'s call, sent on through the public origin (calld.daemon.forward)."""
        assert self.client is not None, "webhooks are forwarded only by a live daemon that is serving"
        return await forward_webhook(self.client, self.daemon.settings.webhook_url(owner), raw, headers, self.daemon.settings.calld_instance)
