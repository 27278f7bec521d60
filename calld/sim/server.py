"""calld-sim: a simulated Telnyx and a simulated GPT-Live on loopback, for the daemon's live path.

Fake Telnyx: the REST API the daemon uses (dial, hangup, a call's status, numbers), signed webhooks posted to
the URL each dial names, and the media WebSocket opened to each dial's stream_url, as Telnyx
does. Fake GPT-Live: a WebSocket server speaking the GPT-Live protocol. Behind both is the stub
world (calld.stub): the same scripted businesses and fake model the stub mode uses, reacting
to what the daemon sends, paced in real time.

A GPT-Live session carries no call id. It starts on the oldest call whose media is streaming
(for its timings) and is bound to its real call by the first business words it hears: every
call's audio is watermarked from one shared codebook. Calls that overlap should share a
scenario (as in the load benchmark); run distinct scenarios one call at a time.
"""

from __future__ import annotations

import json
import logging
import re
import time
from collections import deque
from contextlib import aclosing
from functools import partial
from typing import Any

import httpx
import trio
import attrs
from attrs import frozen
from hypercorn.config import Config
from hypercorn.trio import serve

from calld.adapters.webhook_auth import generate_keypair
from calld.runtime.sockets import MessageSocket
from calld.sim.meter import CallMeter, summarize
from calld.sim.ticks import TickGrid
from calld.sim.net import WebhookPoster, rest_app
from calld.sim.ws import WsSocket, serve_ws, ws_connect
from calld.stub.linq import FakeLinq
from calld.stub.scenario import Scenario
from calld.stub.text_model import ScriptedResponses
from calld.stub.telnyx_numbers import StubNumbers
from calld.stub.world import StubWorld

log = logging.getLogger("calld.sim")


@frozen
class SimAddresses:
    telnyx_api_base: str  # http://127.0.0.1:PORT
    live_url: str  # ws://127.0.0.1:PORT/v1/live/sessions
    public_key: str  # base64 Ed25519 key the daemon verifies webhooks with
    linq_api_base: str = ""  # the fake Linq's Partner API (LINQ_API_BASE)
    linq_webhook_secret: str = ""  # what the fake Linq signs its webhooks with (LINQ_WEBHOOK_SECRET)
    openai_api_base: str = ""  # the scripted Responses API for texts (OPENAI_API_BASE)


class Simulator:
    def __init__(self, scenario: Scenario) -> None:
        self.scenario = scenario
        self.private_key, self.public_key = generate_keypair()
        self.numbers = StubNumbers(pending_gets=1)
        self.worlds: dict[str, StubWorld] = {}
        # Shared by every world, so a session can hear any call's audio and be bound to it by the
        # first line it hears (see _bind in calld.stub.world.FakeLive).
        self.codebook: dict[int, list[str]] = {}
        self.roles: dict[int, str] = {}
        self.opener_lines: set[int] = set()
        self.line_owner: dict[int, StubWorld] = {}
        self.finished: list[StubWorld] = []
        self.ticks = TickGrid()  # every line's 20 ms clock and every session's pacing, on one timer a slot
        self._unbound: deque[StubWorld] = deque()
        self._unbound_changed = trio.Event()
        self._nursery: trio.Nursery | None = None
        self._poster: WebhookPoster | None = None
        # Texting: a fake Linq (signed webhooks to the daemon, sends recorded) and a scripted text model.
        self.linq = FakeLinq()
        self.text_model = ScriptedResponses()

    # -- REST ----------------------------------------------------------------------------------

    async def rest(self, request: httpx.Request) -> httpx.Response:
        path = request.url.path
        if path.startswith("/api/partner/v3/"):
            return self.linq.handle(request)
        if path == "/v1/responses":
            return self.text_model.handle(request)
        if path == "/sim/linq/text" and request.method == "POST":
            # Someone texts the line: {"from": "+1555...", "text": "...", "url": daemon's /linq/webhook}
            body = json.loads(request.content)
            statuses = await self.linq.text(body["from"], body["text"], url=body.get("url"))
            return httpx.Response(200, json={"statuses": statuses})
        if path == "/sim/linq/conversation":
            return httpx.Response(200, json=[attrs.asdict(line) for line in self.linq.conversation])
        if request.method == "POST" and path == "/v2/calls":
            world = self._new_world()
            resp = await world.transport().handle_async_request(request)
            await resp.aread()
            if resp.status_code == 200:
                self.worlds[resp.json()["data"]["call_control_id"]] = world
            return resp
        if m := re.fullmatch(r"/v2/calls/([^/]+)(?:/actions/.+)?", path):  # a call's actions, and its status
            world = self.worlds.get(m.group(1))
            if world is not None:
                resp = await world.transport().handle_async_request(request)
                await resp.aread()
                return resp
        return await self.numbers(request)

    def _new_world(self) -> StubWorld:
        assert self._nursery is not None and self._poster is not None
        poster = self._poster
        holder: list[StubWorld] = []

        async def post_webhook(raw: bytes) -> None:
            url = holder[0]._call.get("webhook_url")
            if url:
                await poster.post(url, raw)

        async def connect_media(url: str, headers: dict[str, str]) -> MessageSocket:
            self._unbound.append(holder[0])
            self._unbound_changed.set()
            return await ws_connect(url, headers, "telnyx-media")

        world = StubWorld(self.scenario, self._nursery, post_webhook=post_webhook, connect_media=connect_media)
        world.codebook, world.roles = self.codebook, self.roles
        world.opener_lines, world.line_owner = self.opener_lines, self.line_owner
        world.meter = CallMeter()
        world.sleep_until = self.ticks.sleep_until
        holder.append(world)
        return world

    def metrics(self) -> dict[str, Any]:
        return summarize([w.meter for w in self.worlds.values() if w.meter is not None], self.ticks.late_by_tenth)

    # -- GPT-Live ------------------------------------------------------------------------------

    async def _live_session(self, ws: WsSocket) -> None:
        while not self._unbound:
            self._unbound_changed = trio.Event()
            with trio.move_on_after(5):
                await self._unbound_changed.wait()
            if not self._unbound:
                await ws.aclose(code=1011, reason="no call is waiting for a GPT-Live session")
                return
        world = self._unbound.popleft()
        await world.serve_live(ws)

    # -- serving -------------------------------------------------------------------------------

    async def serve(self, *, host: str = "127.0.0.1", telnyx_port: int = 0, live_port: int = 0,
                    task_status: trio.TaskStatus[SimAddresses] = trio.TASK_STATUS_IGNORED) -> None:
        self._poster = WebhookPoster(self.private_key, time.time)
        async with aclosing(self._poster), trio.open_nursery() as n:
            self._nursery = n
            await n.start(self.ticks.run)
            cfg = Config()
            cfg.bind = [f"{host}:{telnyx_port}"]
            cfg.accesslog = None
            cfg.errorlog = None
            binds = await n.start(partial(serve, rest_app(self.rest), cfg))
            live_port = await n.start(serve_ws, self._live_session, host, live_port)
            task_status.started(SimAddresses(binds[0], f"ws://{host}:{live_port}/v1/live/sessions", self.public_key,
                                             linq_api_base=f"{binds[0]}/api/partner", linq_webhook_secret=self.linq.secret,
                                             openai_api_base=f"{binds[0]}/v1"))
