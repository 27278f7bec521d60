"""The stub world: Telnyx and GPT-Live played in memory, from raw wire JSON, for one call.

Everything the app sees arrives as wire JSON built from fixtures/ and goes through
the same parsers a live call uses; everything the app sends is read back as wire
JSON. The fakes react to what the app sends (a mark is echoed only once the audio
before it has played; a tool output and response.create lead to the next line;
session.close flushes the rest of the speech, then session.closed). They supply
transcripts and tool calls, heard from the audio that actually arrived; they never
supply a verdict.

A booking session (one whose session.start carries a booking request) gets a
scripted brain (calld.stub.brain) in place of the quick ask's single answer; the
restaurant (Scenario.booking) replies to the agent's lines as they played on the
line, once the agent has paused.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import logging
import re
import uuid
from collections import deque
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any

import httpx
import orjson
import pybase64
import trio

from calld.adapters.fixtures import load_fixture
from calld.core.plan import USER_WORDS_MARK, parse_booking_request
from calld.runtime.sockets import (
    MemorySocket,
    MessageSocket,
    SocketClosed,
    memory_socket_pair,
)
from calld.stub.brain import BookBrain
from calld.stub.scenario import ModelRecord, Reply, Scenario
from calld.stub.carrier import LineFormat
from calld.stub.speech import FRAME_BYTES, FRAMES_PER_WORD, MUSIC, SILENCE, Listener, line_frames, read_frame

FRAME_MS = 20
MEDIA_CLOSE_BOUND_S = 3.0  # closing the media socket when the stream ends without a stop (the close handshake is bounded inside too)

log = logging.getLogger("calld.stub")

PostWebhook = Callable[[bytes], Awaitable[None]]
# The media seam, one of two: OpenMedia is handed the app's end of a memory pair (the in-process
# stub); ConnectMedia returns the world's own end of a real socket (the simulator: no bridge hop).
OpenMedia = Callable[[str, dict[str, str], MemorySocket], Awaitable[None]]
ConnectMedia = Callable[[str, dict[str, str]], Awaitable[MessageSocket]]


class _Template:
    """A fixture rendered to JSON once, with named string fields filled in per use: the stubs send
    50 frames a second per call, so each frame is one string join, not a parse and a dump."""

    def __init__(self, group: str, name: str, fields: dict[tuple[str, ...], str]) -> None:
        doc = load_fixture(group, name)
        for path, slot in fields.items():
            node = doc
            for key in path[:-1]:
                node = node[key]
            node[path[-1]] = f"\x00{slot}\x00"
        self._parts = json.dumps(doc).split("\\u0000")

    def render(self, **values: str) -> str:
        parts = self._parts
        out = [parts[0]]
        for i in range(1, len(parts), 2):
            out.append(values[parts[i]])  # every value here is base64, digits or an id: no escaping needed
            out.append(parts[i + 1])
        return "".join(out)


_MEDIA_FRAME = _Template("telnyx", "media_media", {
    ("stream_id",): "stream_id", ("sequence_number",): "sequence_number", ("media", "chunk"): "chunk",
    ("media", "timestamp"): "timestamp", ("media", "payload"): "payload", ("media", "track"): "track",
})
_OUTPUT_DELTA = _Template("gpt_live", "output_audio_delta", {("delta",): "delta"})

_DIGITS_TO_LETTERS = str.maketrans("0123456789", "ghijklmnop")
_CALL_NUMBERS = itertools.count(1)  # Telnyx names every call differently; so does the stub (the random tail: across restarts too)
DELTA_FRAMES = 5  # GPT-Live paces output at about 100 ms a delta
STUB_PUBLIC_KEY = ""  # the stub does not sign webhooks; live verification is the route's job


def _first_name(instructions: str) -> str:
    """The user's first name, from the words session.start carries as data (calld.core.plan.user_words)."""
    _, mark, words = instructions.partition(USER_WORDS_MARK)
    try:
        return str(json.loads(words.strip().splitlines()[0]).get("first_name", "")) if mark else ""
    except (ValueError, IndexError, AttributeError):
        return ""


def _b64(pcm: bytes) -> str:
    return pybase64.b64encode(pcm).decode("ascii")


_SILENCE_B64 = _b64(SILENCE)  # most frames either way are silence


class StubWorld:
    """One scripted business and one fake GPT-Live, for one call at a time."""

    def __init__(self, scenario: Scenario, nursery: trio.Nursery, *, post_webhook: PostWebhook,
                 open_media: OpenMedia | None = None, connect_media: ConnectMedia | None = None) -> None:
        if (open_media is None) == (connect_media is None):
            raise ValueError("give the world exactly one media seam: open_media or connect_media")
        self.scenario = scenario
        self._nursery = nursery
        self._post_webhook = post_webhook
        self._open_media = open_media
        self._connect_media = connect_media
        self.codebook: dict[int, list[str]] = {}
        self.roles: dict[int, str] = {}
        self.dial_requests: list[dict[str, Any]] = []
        self.hangup_requests: list[str] = []
        self.webhooks_sent: list[str] = []
        self.live_received: list[dict[str, Any]] = []
        # Every inbound PCM byte GPT-Live was sent, in the order it came, as a running digest and a
        # count: a long call at scale keeps no copy of its audio (32 KB a second) in the world.
        self.live_heard = hashlib.sha256()
        self.live_heard_bytes = 0
        # How the line's 20 ms clock and GPT-Live's delta pacing wait: trio's own sleep, or a clock
        # shared by many worlds (the simulator's calld.sim.ticks.TickGrid).
        self.sleep_until: Callable[[float], Awaitable[None]] = trio.sleep_until
        self.media_received: list[dict[str, Any]] = []
        self.wire_bytes_received = 0  # the agent's audio as it arrived on the wire, before the line decodes it
        self.heard_on_line: list[str] = []  # the agent's words as the business heard them played
        self.dtmf_received: list[tuple[str, str]] = []  # (digits, command_id) of every send_dtmf
        # A phone menu or a call screener answers first; a person only after the right key or reply.
        self._person = not scenario.menu and not scenario.screener
        self._ccid = ""
        self._call: dict[str, Any] = {}
        self._line_in = LineFormat(scenario.media_encoding, scenario.media_rate, scenario.carrier_byte_order)
        self._line_out = LineFormat("L16", 16000, scenario.carrier_byte_order)  # set from the dial
        self._ended = False
        self._webhook_n = 0
        self._media_scope: trio.CancelScope | None = None
        self._media_peer: MessageSocket | None = None
        self._media_stopping = False  # _stop_media closes the socket after its stop frame
        self._business_queue: deque[bytes] = deque()
        self._business_heard_ask = False
        self._answer_line: int | None = None
        self._goodbye_talked = False
        # The first line each fake GPT-Live session says. A set (shareable between worlds) so a business
        # reacts to the opener it hears on its own line, whichever session said it.
        self.opener_lines: set[int] = set()
        self.line_owner: dict[int, StubWorld] = {}  # whose business or session said each line
        self.meter: Any = None  # calld.sim.meter.CallMeter when the simulator measures this call
        self._plays_audio = True
        self._booking_state = scenario.booking.start if scenario.booking is not None else ""
        self._heard_mark = 0  # heard_on_line[_heard_mark:] is what the agent said since the business spoke
        self.replies: dict[int, Reply] = {}  # the booking script's reply each business line said
        self._agent_voice_t = 0.0  # when the line last played a frame of the agent's speech
        self._playout: deque[bytes | tuple[str, str]] = deque()  # the agent's frames and marks, not yet played
        self._playing: bytes | None = None  # the agent's frame on the line this 20 ms

    @property
    def ended(self) -> bool:
        """The line has been hung up, by either side (its last frames and webhooks may still follow)."""
        return self._ended

    def _line(self, role: str, text: str) -> tuple[int, list[bytes]]:
        line = len(self.codebook) + 1
        words = text.split()
        self.codebook[line] = words
        self.roles[line] = role
        self.line_owner[line] = self
        return line, line_frames(line, words)

    # -- Telnyx REST -------------------------------------------------------------------------------

    def transport(self) -> httpx.MockTransport:
        return httpx.MockTransport(self._rest)

    async def _rest(self, request: httpx.Request) -> httpx.Response:
        path = request.url.path
        if request.method == "POST" and path == "/v2/calls":
            return self._dial(json.loads(request.content))
        if request.method == "POST" and (m := re.fullmatch(r"/v2/calls/(.+)/actions/hangup", path)):
            return self._hangup(m.group(1))
        if request.method == "POST" and (m := re.fullmatch(r"/v2/calls/(.+)/actions/send_dtmf", path)):
            return self._send_dtmf(m.group(1), json.loads(request.content))
        if request.method == "GET" and (m := re.fullmatch(r"/v2/calls/([^/]+)", path)):
            return self._call_status(m.group(1))
        body = load_fixture("telnyx", "hangup_already_ended")
        body["errors"][0].update(code="10005", title="Resource not found", detail=f"no stub route for {path}")
        return httpx.Response(404, json=body)

    def _dial(self, body: dict[str, Any]) -> httpx.Response:
        missing = [k for k in ("connection_id", "from", "to", "stream_url") if not body.get(k)]
        if missing:
            err = load_fixture("telnyx", "hangup_already_ended")
            err["errors"][0].update(code="10015", title="Invalid parameter", detail=f"missing {missing}")
            return httpx.Response(422, json=err)
        self.dial_requests.append(body)
        # In mp3 mode Telnyx drops raw audio we send: the business would hear nothing.
        self._plays_audio = body.get("stream_bidirectional_mode") == "rtp"
        # The tail is letters only: a run of digits in a call id reads as a phone number (publish keys).
        self._ccid = f"v3:stub-call-{next(_CALL_NUMBERS):04d}-{uuid.uuid4().hex[:8].translate(_DIGITS_TO_LETTERS)}"
        self._call = body
        self._line_out = LineFormat(body.get("stream_bidirectional_codec") or "L16",
                                    body.get("stream_bidirectional_sampling_rate") or 16000, self.scenario.carrier_byte_order)
        resp = load_fixture("telnyx", "dial_response")
        resp["data"].update(call_control_id=self._ccid, client_state=body.get("client_state"))
        self._nursery.start_soon(self._telnyx_script)
        return httpx.Response(200, json=resp)

    def _hangup(self, ccid: str) -> httpx.Response:
        self.hangup_requests.append(ccid)
        if self._ended or ccid != self._ccid:
            return httpx.Response(422, json=load_fixture("telnyx", "hangup_already_ended"))
        self._ended = True
        self._nursery.start_soon(self._line_goes_down, "caller", self.scenario.confirm_hangup)
        return httpx.Response(200, json=load_fixture("telnyx", "hangup_ok"))

    def _call_status(self, ccid: str) -> httpx.Response:
        """GET /v2/calls/{id}: is_alive until the line has been hung up, by either side."""
        if ccid != self._ccid:
            body = load_fixture("telnyx", "error_404")
            return httpx.Response(404, json=body)
        status = load_fixture("telnyx", "call_status")
        status["data"].update(call_control_id=ccid, is_alive=not self._ended)
        return httpx.Response(200, json=status)

    def _send_dtmf(self, ccid: str, body: dict[str, Any]) -> httpx.Response:
        """Keys pressed out of band: the menu hears them, and only them (never a spoken number)."""
        if self._ended or ccid != self._ccid:
            return httpx.Response(422, json=load_fixture("telnyx", "hangup_already_ended"))
        digits = str(body.get("digits", ""))
        self.dtmf_received.append((digits, str(body.get("command_id", ""))))
        route = self.scenario.menu_routes.get(digits)
        if route is not None and not self._person:
            self._nursery.start_soon(self._menu_route, route)
        return httpx.Response(200, json=load_fixture("telnyx", "hangup_ok"))

    async def _menu_route(self, route: str) -> None:
        await trio.sleep(0.5)
        if route == "@person":
            await self._await_pause()
        if route == "@person":
            self._person = True
            _, frames = self._line("greeting", self.scenario.greeting)
        elif route == "@menu":
            _, frames = self._line("menu", self.scenario.menu)
        else:
            _, frames = self._line("answer", route)
            _, more = self._line("menu", self.scenario.menu)
            frames = frames + more
        self._business_queue.extend(frames)

    # -- Telnyx webhooks ---------------------------------------------------------------------------

    async def _webhook(self, event_type: str, **payload: Any) -> None:
        name = "webhook_" + event_type.replace(".", "_")
        body = load_fixture("telnyx", name)
        self._webhook_n += 1
        body["data"]["id"] = f"stub-evt-{self._webhook_n:04d}"
        body["data"]["event_type"] = event_type
        body["data"]["payload"].update(
            call_control_id=self._ccid,
            client_state=self._call.get("client_state"),
            to=self._call.get("to"),
            **{"from": self._call.get("from")},
            **payload,
        )
        raw = json.dumps(body).encode()
        self.webhooks_sent.append(event_type)
        await self._post_webhook(raw)
        if self.scenario.duplicate_webhooks:
            await self._post_webhook(raw)  # Telnyx may deliver an event twice

    async def _telnyx_script(self) -> None:
        if self.scenario.not_answered is not None:
            # Busy, rejected, unanswered or not in service: the call ends while it rings.
            await self._webhook("call.initiated")
            await trio.sleep(self.scenario.ring_s)
            self._ended = True
            await self._webhook("call.hangup", hangup_cause=self.scenario.not_answered, hangup_source="callee",
                                sip_hangup_cause=self.scenario.not_answered_sip or "unspecified")
            return
        if self.scenario.reorder_webhooks:
            # Telnyx does not promise order: answered (and streaming) before initiated.
            await trio.sleep(self.scenario.ring_s)
            self._nursery.start_soon(self._media)
            await self._webhook("streaming.started")
            await self._webhook("call.answered")
            await self._webhook("call.initiated")
            return
        await self._webhook("call.initiated")
        await trio.sleep(self.scenario.ring_s)
        if self.scenario.media_before_answer:
            self._nursery.start_soon(self._media)
            await trio.sleep(0.05)
            await self._webhook("call.answered")
        else:
            await self._webhook("call.answered")
            self._nursery.start_soon(self._media)
        await self._webhook("streaming.started")
        if self.scenario.amd_result is not None:
            await trio.sleep(1.5)  # premium AMD listens a moment, then advises
            if not self._ended:
                await self._webhook("call.machine.premium.detection.ended", result=self.scenario.amd_result)

    async def _line_goes_down(self, source: str, announce: bool) -> None:
        await trio.sleep(0.05)
        await self._stop_media()
        if announce:
            await self._webhook("streaming.stopped")
            await self._webhook("call.hangup", hangup_cause="normal_clearing", hangup_source=source)

    async def _far_party_hangup(self, delay: float) -> None:
        await trio.sleep(delay)
        if not self._ended:
            self._ended = True
            await self._line_goes_down("callee", True)

    # -- Telnyx media ------------------------------------------------------------------------------

    async def _media(self) -> None:
        url, token = self._call["stream_url"], self._call.get("stream_auth_token", "")
        headers = {"x-telnyx-streaming-auth-token": token}
        with trio.CancelScope() as scope:
            self._media_scope = scope
            peer: MessageSocket
            if self._connect_media is not None:
                try:
                    peer = await self._connect_media(url, headers)
                except SocketClosed as exc:
                    log.warning("media stream not opened: %s", exc.reason)
                    return
            else:
                assert self._open_media is not None
                app_end, peer = memory_socket_pair("telnyx-media")
                self._nursery.start_soon(self._open_media, url, headers, app_end)
            self._media_peer = peer
            try:
                await self._stream_media(peer)
            finally:
                # A stop closes the socket itself, after its stop frame. However else the stream
                # ended (the app gone, the world torn down), it is closed here, bounded, so its fd
                # never waits for the garbage collector.
                if not self._media_stopping:
                    with trio.CancelScope(shield=True), trio.move_on_after(MEDIA_CLOSE_BOUND_S):
                        await peer.aclose()

    async def _stream_media(self, peer: MessageSocket) -> None:
        await peer.send(json.dumps(load_fixture("telnyx", "media_connected")))
        if self.scenario.media_drop == "before_start":
            await peer.aclose()  # gone before the start frame, and no stop frame
            return
        if self.scenario.media_drop == "garbage":
            await peer.send("<html>502 Bad Gateway</html>")
            await trio.sleep_forever()  # the socket stays open; nothing valid ever comes
        start = load_fixture("telnyx", "media_start")
        start["stream_id"] = stream_id = f"stub-stream-{self._ccid[-4:]}"
        start["start"].update(call_control_id=self._ccid, client_state=self._call.get("client_state"))
        start["start"]["media_format"].update(encoding=self.scenario.media_encoding, sample_rate=self.scenario.media_rate, channels=1)
        await peer.send(json.dumps(start))
        try:
            async with trio.open_nursery() as n:
                n.start_soon(self._line_clock, peer, stream_id)
                n.start_soon(self._read_outbound, peer, stream_id)
                if self.scenario.media_drop == "mid_call":
                    n.start_soon(self._drop_media, peer)
                await trio.sleep(self.scenario.greet_after_s)
                if self.scenario.menu:
                    _, frames = self._line("menu", self.scenario.menu)
                    self._business_queue.extend(frames)
                elif self.scenario.greeting:  # "" is a line nobody speaks on
                    _, frames = self._line("greeting", self.scenario.greeting)
                    if self.scenario.amd_beep:
                        n.start_soon(self._beep_after, len(frames) * 0.02)
                    self._business_queue.extend(frames)
        except* SocketClosed:
            pass  # the app let go of the media socket: the stream is over

    async def _beep_after(self, delay: float) -> None:
        await trio.sleep(delay + 0.3)
        if not self._ended:
            await self._webhook("call.machine.premium.greeting.ended", result="beep_detected")

    async def _drop_media(self, peer: MessageSocket) -> None:
        """The media socket dies mid-call: no stop frame, and Telnyx says nothing else."""
        await trio.sleep(self.scenario.media_drop_after_s)
        await peer.aclose()
        raise SocketClosed("the stub dropped the media socket")

    async def _stop_media(self) -> None:
        peer = self._media_peer
        self._media_stopping = True
        if self._media_scope is not None:
            self._media_scope.cancel()
        if peer is None:
            return
        stop = load_fixture("telnyx", "media_stop")
        stop["stop"]["call_control_id"] = self._ccid
        try:
            await peer.send(json.dumps(stop))
        except SocketClosed:
            pass
        await peer.aclose()

    async def _line_clock(self, peer: MessageSocket, stream_id: str) -> None:
        """The line's 20 ms clock, one task for both directions, as Telnyx keeps it: each tick sends
        the business's next frame (its speech, or silence) and finishes playing the agent's frame
        that started at the tick before; marks after it echo as they are reached."""
        template = _MEDIA_FRAME
        plain = self._line_in.plain
        ear = Listener(self.codebook)
        chunk, start = 0, trio.current_time()
        while True:
            chunk += 1
            await self.sleep_until(start + chunk * 0.02)
            pcm = self._business_queue.popleft() if self._business_queue else SILENCE
            if plain:
                payload = _SILENCE_B64 if pcm is SILENCE else _b64(pcm)
            else:
                payload = _b64(self._line_in.encode(pcm))
            await peer.send(template.render(stream_id=stream_id, track="inbound", sequence_number=str(chunk + 2), chunk=str(chunk),
                                            timestamp=str(chunk * 20), payload=payload))
            if self.meter is not None:
                self.meter.uplink.sent(len(pcm))
            if self._playing is not None:
                self._played(self._playing, ear)
            self._playing = None
            while self._playout and self._playing is None:
                item = self._playout.popleft()
                if isinstance(item, tuple):
                    await self._echo(peer, stream_id, item[1])
                else:
                    self._playing = item

    def _played(self, pcm: bytes, ear: Listener) -> None:
        """A frame of the agent's audio has played on the line: the business heard it."""
        if read_frame(pcm) is not None:
            self._agent_voice_t = trio.current_time()
        for line, index, word in ear.hear(pcm):
            self.heard_on_line.append(word)
            self._business_heard(line, index)

    async def _read_outbound(self, peer: MessageSocket, stream_id: str) -> None:
        while True:
            msg = orjson.loads(await peer.receive())  # the frames that come 50 a second: the C parser
            self.media_received.append({k: v for k, v in msg.items() if k != "media"})
            match msg.get("event"):
                case "media" if self._plays_audio:
                    pcm = pybase64.b64decode(msg["media"]["payload"])
                    self.wire_bytes_received += len(pcm)
                    if not self._line_out.plain:
                        pcm = self._line_out.decode(pcm)  # played as the dial asked, whatever calld meant
                    if self.meter is not None:
                        self.meter.downlink.received(len(pcm))
                    self._playout.extend(pcm[i : i + FRAME_BYTES] for i in range(0, len(pcm), FRAME_BYTES))
                case "mark" if self._playing is None and not self._playout:
                    await self._echo(peer, stream_id, msg["mark"]["name"])  # nothing left to play: reached now
                case "mark":
                    self._playout.append(("mark", msg["mark"]["name"]))
                case "clear":
                    # Telnyx empties its queue and echoes every pending mark at once.
                    pending = [item for item in self._playout if isinstance(item, tuple)]
                    self._playout.clear()
                    for _, name in pending:
                        await self._echo(peer, stream_id, name)

    async def _echo(self, peer: MessageSocket, stream_id: str, name: str) -> None:
        if self.scenario.echo_marks:
            echo = load_fixture("telnyx", "media_mark")
            echo["stream_id"] = stream_id
            echo["mark"]["name"] = name
            await peer.send(json.dumps(echo))

    def _business_heard(self, line: int, index: int) -> None:
        if self.scenario.booking is not None:
            if self.roles.get(line) == "agent" and index == len(self.codebook[line]) - 1:
                self._booking_turn()
            return
        last = index == len(self.codebook[line]) - 1
        if (self.scenario.goodbye_talk and not self._goodbye_talked and index == 1 and self.roles.get(line) == "agent"
                and " ".join(self.codebook[line]) == self.scenario.closing_line):
            self._goodbye_talked = True  # over the agent's goodbye, at once: no waiting for a pause
            _, frames = self._line("goodbye", self.scenario.goodbye_talk)
            self._business_queue.extend(frames)
            return
        if self.scenario.screener and not self._person and last and self.roles.get(line) == "agent":
            if "calling to ask" in " ".join(self.codebook[line]):  # who and why: put through
                self._person = self._business_heard_ask = True
                self._nursery.start_soon(self._answer)
            return
        if line not in self.opener_lines or not self._person:
            return  # a phone menu or a screener does not take the question
        words = len(self.codebook[line])
        if self.scenario.far_party_hangup == "mid_ask" and index == 2:
            self._nursery.start_soon(self._far_party_hangup, 0.0)
        if index == words - 1 and not self._business_heard_ask:
            self._business_heard_ask = True
            if self.scenario.far_party_hangup == "after_ask":
                self._nursery.start_soon(self._far_party_hangup, 1.0)
            if not self.scenario.silent_after_greeting:
                self._nursery.start_soon(self._answer)

    def _booking_turn(self) -> None:
        """The agent finished a line: reply if what it said since the business spoke fits the script."""
        assert self.scenario.booking is not None
        heard = " ".join(self.heard_on_line[self._heard_mark :])
        for reply in self.scenario.booking.replies(self._booking_state):
            if reply.matches(heard):
                self._heard_mark = len(self.heard_on_line)
                self._booking_state = reply.then
                self._nursery.start_soon(self._business_says, reply)
                return

    async def _business_says(self, reply: Reply) -> None:
        """A person waits for a pause: the reply starts once the agent has been quiet a moment."""
        while trio.current_time() < (pause_over := self._agent_voice_t + self.scenario.answer_delay_s):
            await trio.sleep_until(pause_over)
        line, frames = self._line("business", reply.say)
        self.replies[line] = reply  # the script of what the fake model makes of it
        self._business_queue.extend(frames)
        if reply.hangup:  # and puts the phone down once it has said it
            self._nursery.start_soon(self._far_party_hangup, len(frames) * 0.02 + 0.3)

    async def _await_pause(self) -> None:
        """A person waits for the agent to stop talking before speaking."""
        while trio.current_time() < (pause_over := self._agent_voice_t + self.scenario.answer_delay_s):
            await trio.sleep_until(pause_over)

    async def _answer(self) -> None:
        scenario = self.scenario
        if scenario.menu or scenario.screener:
            await self._await_pause()  # put through mid-sentence: let the agent finish first
        else:
            await trio.sleep(scenario.answer_delay_s)
        if scenario.hold_line:
            _, frames = self._line("business", scenario.hold_line)
            self._business_queue.extend(frames)
            await trio.sleep(len(frames) * 0.02)
        if scenario.hold_music:
            self._business_queue.extend(MUSIC for _ in range(round(scenario.hold_s / 0.02)))
        await trio.sleep(scenario.hold_s)
        self._answer_line, frames = self._line("answer", self.scenario.answer)
        self._business_queue.extend(frames)
        if self.scenario.far_party_hangup == "after_answer":
            self._nursery.start_soon(self._far_party_hangup, len(frames) * 0.02 + 1.0)

    # -- GPT-Live ----------------------------------------------------------------------------------

    @asynccontextmanager
    async def connect_live(self) -> AsyncIterator[MemorySocket]:
        app_end, peer = memory_socket_pair("gpt-live")
        self._nursery.start_soon(FakeLive(self, peer).run)
        yield app_end

    async def serve_live(self, peer: MessageSocket) -> None:
        """Be GPT-Live on `peer` (a real socket the simulator accepted) until the session ends."""
        await FakeLive(self, peer).run()


class FakeLive:
    """A fake GPT-Live session with Responses delegation, reacting to what the app sends."""

    def __init__(self, world: StubWorld, peer: MessageSocket) -> None:
        self.world = world
        self.peer = peer
        self.said_opener = False
        self.opener_text = ""
        self.closing_line: int | None = None
        self.stalled = False
        self.bound = False
        self._unmetered: list[tuple[int, float]] = []
        self._unmetered_down: list[float] = []
        self._started_at = 0.0
        self.ear = Listener(world.codebook)
        self.speaking: deque[bytes] = deque()
        self.heard: dict[int, list[str]] = {}
        self.closing = False
        self.pending_output: str | None = None
        self.tool_n = 0
        self.after_line: dict[int, Callable[[], Awaitable[None]]] = {}
        self.out_ear = Listener(world.codebook)
        self.waiting: deque[list[bytes]] = deque()  # lines to say once the business stops talking
        self.business_talking = False
        self.spoke = {"agent": False, "business": False}
        self.brain: BookBrain | None = None  # a booking session's script (from the request in session.start)
        self.first_name = ""  # from the user's words in session.start
        self.recorded: dict[str, Any] | None = None  # the quick ask's record, as it was sent
        self.outputs: list[tuple[str, dict[str, Any]]] = []  # tool outputs since the last response.create
        self.timeline_ms = 0  # the session timeline: it advances with the audio appended
        self.muted = False  # gone quiet (scenario.live_mute): the socket stays open, nothing more is sent

    async def _out(self, text: str) -> None:
        if not self.muted:
            await self.peer.send(text)

    async def send(self, fixture: str, **fields: Any) -> None:
        msg = load_fixture("gpt_live", fixture)
        msg.update(fields)
        await self._out(json.dumps(msg))

    async def run(self) -> None:
        try:
            first = json.loads(await self.peer.receive())
            self.world.live_received.append(first)
            if first.get("type") != "session.start":
                err = load_fixture("gpt_live", "error_startup")
                err["error"].update(code="invalid_request", message="the first event must be session.start")
                await self._out(json.dumps(err))
                return
            if self.world.scenario.live_drop == "refuse":
                await self.send("error_startup")
                return
            request = parse_booking_request(first["session"].get("instructions", ""))
            self.first_name = _first_name(first["session"].get("instructions", ""))
            if request is not None:
                scenario = self.world.scenario
                self.brain = BookBrain(self, request, scenario.brain, scenario.closing_line)
            if self.world.scenario.live_mute == "before_start":
                self.muted = True
                while True:  # reads on, says nothing, until the app gives up on the session
                    await self.peer.receive()
            await trio.sleep(self.world.scenario.live_ready_after_s)
            started = load_fixture("gpt_live", "session_started")
            started["session"].update(id="live_stub_0001", model=first["session"].get("model"))
            started["client_event_id"] = first.get("event_id")
            await self._out(json.dumps(started))
            self._started_at = trio.current_time()
            async with trio.open_nursery() as n:
                n.start_soon(self._speak)
                await self._read()  # returns at session.close; _speak then flushes and ends
        except* SocketClosed:
            pass  # the app hung up on us: a session simply ends
        finally:
            with trio.CancelScope(shield=True):
                await self.peer.aclose()

    async def _read(self) -> None:
        while True:
            msg = orjson.loads(await self.peer.receive())
            kind = msg.get("type")
            if kind != "session.input_audio.append":
                self.world.live_received.append(msg)
            match kind:
                case "session.input_audio.append":
                    pcm = pybase64.b64decode(msg["audio"])
                    self.world.live_heard.update(pcm)
                    self.world.live_heard_bytes += len(pcm)
                    self._meter_append(len(pcm))
                    for i in range(0, len(pcm), FRAME_BYTES):  # frame by frame: each word's time on the timeline
                        self.timeline_ms += FRAME_MS
                        for line, index, word in self.ear.hear(pcm[i : i + FRAME_BYTES]):
                            await self._heard(line, index, word)
                case "session.start":
                    err = load_fixture("gpt_live", "error_command")
                    err["error"].update(code="invalid_request", message="session.start may be sent only once")
                    await self._out(json.dumps(err))
                case "session.commentary.append":
                    quoted = re.search(r'"([^"]+)"', msg["content"])
                    if quoted is None and "quiet for a while" not in msg["content"]:
                        continue  # a note to the model, not words to say (the script knows what to do)
                    text = quoted.group(1) if quoted else "Hello? Are you still there?"
                    line = self._say("agent", text)
                    if not self.said_opener:
                        self.said_opener = True
                        self.opener_text = text
                        self.world.opener_lines.add(line)
                case "response.item.create":
                    self.pending_output = msg["item"]["call_id"]
                    self.outputs.append((msg["item"]["call_id"], json.loads(msg["item"]["output"])))
                case "response.create" if self.brain is not None:
                    outputs, self.outputs = self.outputs, []
                    for call_id, output in outputs:
                        self.brain.continued(call_id, output)
                    self.pending_output = None
                case "response.create":
                    # The app's output says when to say goodbye: a record accepted, or one already recorded.
                    accepted = any(str(out.get("next", "")).startswith("thank them") for _, out in self.outputs)
                    self.outputs = []
                    if accepted and self.pending_output is not None and self.pending_output.startswith("call_record"):
                        line = self._say("agent", self.world.scenario.closing_line)
                        self.closing_line = line
                        if self.world.scenario.end_call_after_closing:
                            self.after_line[line] = self._end_call
                    self.pending_output = None
                case "session.close":
                    self.closing = True
                    if self.bound and self.world.meter is not None:
                        self.world.meter.sent_at_close = self.world.meter.uplink.bytes_sent
                    return

    # -- what the booking brain may do (calld.stub.brain.Voice) ---------------------------------

    def say(self, text: str, then: Callable[[], Awaitable[None]] | None = None) -> None:
        line = self._say("agent", text)
        if then is not None:
            self.after_line[line] = then

    def record(self, arguments: dict[str, Any], purpose: str, delay: float = 0.3) -> None:
        call_id = self._next_call_id("record_task_result")
        assert self.brain is not None
        self.brain.purpose[call_id] = purpose
        self.world._nursery.start_soon(self._function_call_later, delay, "record_task_result", arguments, call_id)

    async def end_call(self) -> None:
        await self._function_call("end_call", {"reason": "the booking is settled"})

    def _say(self, role: str, text: str) -> int:
        """Queue a line; like the real model, it waits for the business to finish talking."""
        line, frames = self.world._line(role, text)
        self.waiting.append(frames)
        return line

    def _fragment(self, speaker: str, word: str) -> str:
        # Fragments carry their own spacing, as GPT-Live's do.
        text = (" " if self.spoke[speaker] else "") + word
        self.spoke[speaker] = True
        return text

    def _meter_append(self, n: int) -> None:
        # Until the session knows its call (the simulator binds it by the first line it hears),
        # appends are kept and credited to the right call's meter once it does.
        if not self.bound:
            self._unmetered.append((n, trio.current_time()))
        elif self.world.meter is not None:
            self.world.meter.uplink.received(n)

    def _bind(self, line: int) -> None:
        """The session belongs to the call whose business said `line` (the simulator cannot tell sooner)."""
        owner = self.world.line_owner.get(line, self.world)
        self.world, self.bound = owner, True
        meter = owner.meter
        if meter is not None:
            meter.hold_bytes = meter.uplink.bytes_sent_before(self._started_at)
            for n, t in self._unmetered:
                meter.uplink.received(n, at=t)
            for t in self._unmetered_down:
                meter.downlink.sent(DELTA_FRAMES * FRAME_BYTES, at=t)
        self._unmetered.clear()
        self._unmetered_down.clear()

    async def _heard(self, line: int, index: int, word: str) -> None:
        if not self.bound:
            self._bind(line)
        self.business_talking = index < len(self.world.codebook[line]) - 1
        if self.world.scenario.live_mute == "mid_call":
            self.muted = True  # from the business's first word on, nothing at all
        end = self.timeline_ms  # the word's last frame just arrived
        await self.send("input_transcript_delta", delta=self._fragment("business", word),
                        start_ms=end - FRAMES_PER_WORD * FRAME_MS, end_ms=end)
        self.heard.setdefault(line, []).append(word)
        last = index == len(self.world.codebook[line]) - 1
        role = self.world.roles.get(line)
        if last and role == "menu" and self.brain is None:
            scenario = self.world.scenario
            if scenario.model_dtmf:
                self.world._nursery.start_soon(self._function_call_later, 0.3, "send_dtmf", {"digits": scenario.model_dtmf})
            elif scenario.model_dtmf_spoken:
                self._say("agent", "Pressing zero.")  # words only: no key is pressed
        if last and role == "greeting" and self.world.scenario.menu and self.opener_text:
            # A person after the menu: ask again, and the business listens for this line.
            self.world.opener_lines.add(self._say("agent", self.opener_text))
        drop = self.world.scenario.live_drop
        if index == len(self.world.codebook[line]) - 1 and drop == f"after_{self.world.roles.get(line)}":
            await self.peer.aclose()  # GPT-Live goes away mid-call: no session.closed
            raise SocketClosed("the stub dropped the GPT-Live socket")
        if self.brain is not None:
            if index == len(self.world.codebook[line]) - 1 and self.world.roles.get(line) == "business":
                self.brain.heard_business(" ".join(self.heard[line]), self.world.replies.get(line))
            return
        role = self.world.roles.get(line)
        if role == "goodbye":
            self._talked_over(index == len(self.world.codebook[line]) - 1)
            return
        if index == len(self.world.codebook[line]) - 1:
            self._scripted_records(role, " ".join(self.heard[line]))

    @staticmethod
    def _quick_record(record: ModelRecord, heard: str) -> dict[str, Any]:
        """A quick ask's record_task_result as the scenario scripts it, "{heard}" filled in with the line heard,
        and every argument the strict schema requires (null unless scripted)."""
        def filled(text: str | None) -> str | None:
            return text.replace("{heard}", heard) if text is not None else None

        answered = record.status == "answered"
        typed: dict[str, Any] = {"hours": None, "stock": None, "aisle": None}
        if answered and record.fields is not None:
            typed |= record.fields
        return {"status": record.status, "quotes": [filled(q) for q in record.quotes],
                "answer_text": filled(record.answer_text) if answered else None, "notes": None,
                "reason": record.reason if record.status == "declined" else None,
                "outcome_quote": filled(record.outcome_quote), "opt_out_quote": filled(record.opt_out_quote), **typed}

    def _talked_over(self, heard_whole: bool) -> None:
        """The business talks during our goodbye. A scripted reply means it asked something: stop the
        goodbye at once (as GPT-Live stops when talked over), answer once they finish, record again."""
        reply = self.world.scenario.goodbye_reply
        if not reply:
            return  # a courtesy: the goodbye goes on
        if self.closing_line is not None:
            self.after_line.pop(self.closing_line, None)
            if any((wf := read_frame(pcm)) is not None and wf.line == self.closing_line for pcm in self.speaking):
                self.speaking.clear()
        if heard_whole and self.recorded is not None:
            args = self.recorded
            if (again := self.world.scenario.goodbye_record) is not None:
                args = self._quick_record(again, self.world.scenario.goodbye_talk)
            self.say(reply.replace("{name}", self.first_name),
                     then=lambda: self._function_call_later(0.3, "record_task_result", args))

    def _scripted_records(self, role: str | None, heard: str) -> None:
        """The scenario's records due once a `role` line was heard whole, grouped into backend responses."""
        due = [r for r in self.world.scenario.answer_records() if r.after == role]
        responses: list[list[tuple[float, int, tuple[str, dict[str, Any], str]]]] = []
        for record in due:
            args = self._quick_record(record, heard)
            self.recorded = self.recorded or args  # what it records again when asked over its goodbye
            call = (record.delay_s, record.deliveries, ("record_task_result", args, self._next_call_id("record_task_result")))
            if record.same_response and responses:
                responses[-1].append(call)
            else:
                responses.append([call])
        for calls in responses:
            delay, repeat = calls[0][0], max(c[1] for c in calls)
            self.world._nursery.start_soon(self._respond_later, delay, [c[2] for c in calls], repeat)

    async def _respond_later(self, delay: float, calls: list[tuple[str, dict[str, Any], str]], repeat: int) -> None:
        await trio.sleep(delay)  # the backend thinks
        if not self.closing:
            await self._respond(calls, repeat=repeat)

    def _next_call_id(self, name: str) -> str:
        self.tool_n += 1
        tag = {"record_task_result": "record", "send_dtmf": "dtmf"}.get(name, "end")
        return f"call_{tag}_{self.tool_n}"

    async def _function_call(self, name: str, arguments: dict[str, Any], call_id: str | None = None) -> None:
        await self._respond([(name, arguments, call_id or self._next_call_id(name))])

    async def _respond(self, calls: list[tuple[str, dict[str, Any], str]], *, repeat: int = 1) -> None:
        """One backend response: each function call as a completed item (`repeat` times), then response.completed."""
        for name, arguments, call_id in calls:
            msg = load_fixture("gpt_live", "response_event_record_task_result")
            item = msg["event"]["item"]
            item.update(call_id=call_id, id="fc_" + call_id.rsplit("_", 1)[-1], name=name, arguments=json.dumps(arguments))
            for _ in range(repeat):
                await self._out(json.dumps(msg))
        await self._out(json.dumps(load_fixture("gpt_live", "response_event_completed")))

    async def _function_call_later(
        self, delay: float, name: str, arguments: dict[str, Any], call_id: str | None = None
    ) -> None:
        await trio.sleep(delay)  # the backend thinks
        if not self.closing:
            await self._function_call(name, arguments, call_id)

    async def _after_line(self, then: Callable[[], Awaitable[None]]) -> None:
        """What the model does once a line is said; a session the app closed meanwhile just ends."""
        try:
            await then()
        except SocketClosed:
            pass

    async def _end_call(self) -> None:
        await self._function_call("end_call", {"reason": "the question is answered"})

    async def _maybe_stall(self, frames: list[bytes]) -> None:
        """A network stall in the middle of the goodbye, once: nothing at all for goodbye_stall_s."""
        stall = self.world.scenario.goodbye_stall_s
        if not stall or self.stalled or self.closing_line is None:
            return
        marks = [wf for pcm in frames if (wf := read_frame(pcm)) is not None and wf.line == self.closing_line]
        if marks and marks[0].word >= len(self.world.codebook[self.closing_line]) // 2:
            self.stalled = True
            await trio.sleep(stall)

    async def _speak(self) -> None:
        """Continuous output, paced in real time, silence included, until the session closes."""
        tick = trio.current_time()
        while True:
            if not self.closing:
                tick += 0.1
                await self.world.sleep_until(tick)
            if not self.speaking and self.waiting and (self.closing or not self.business_talking):
                self.speaking.extend(self.waiting.popleft())
            frames = [self.speaking.popleft() if self.speaking else SILENCE for _ in range(DELTA_FRAMES)]
            await self._maybe_stall(frames)
            for pcm in frames:
                for line, index, word in self.out_ear.hear(pcm):
                    await self.send("output_transcript_delta", delta=self._fragment("agent", word),
                                    start_ms=self.timeline_ms, end_ms=self.timeline_ms)
                    if index == len(self.world.codebook[line]) - 1 and line in self.after_line:
                        self.world._nursery.start_soon(self._after_line, self.after_line.pop(line))
            await self._out(_OUTPUT_DELTA.render(delta=_b64(b"".join(frames))))
            if not self.bound:
                self._unmetered_down.append(trio.current_time())
            elif self.world.meter is not None:
                self.world.meter.downlink.sent(DELTA_FRAMES * FRAME_BYTES)
            if self.closing and not self.speaking:
                closed = load_fixture("gpt_live", "session_closed")
                closed["reason"] = "close_requested"
                await self._out(json.dumps(closed))
                return
