"""The media listener and the lean WebSocket under it, against independent clients: trio-websocket
(another RFC 6455 implementation) and raw bytes for what a well-behaved client never sends."""

from __future__ import annotations

import base64
import json
import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from functools import partial
from types import SimpleNamespace

import pytest
import trio
from trio_websocket import ConnectionClosed, ConnectionRejected, WebSocketConnection, wrap_client_stream

from calld.daemon import media_listener
from calld.daemon.callbook import CallBook
from calld.daemon.media_listener import serve_media
from calld.runtime.sockets import MessageSocket, SocketClosed

TOKEN, AUTH = "mt_test_token_0142", "auth-0142"


class Line:
    """What the listener needs of a call: its tokens, and a place to hand the socket."""

    def __init__(self, talk) -> None:
        self.media_token, self.stream_auth_token = TOKEN, AUTH
        self.plan = SimpleNamespace(run_id="run-0142")
        self._talk = talk
        self.attached = 0
        self.media_claimed = False

    def claim_media(self) -> bool:
        claimed, self.media_claimed = self.media_claimed, True
        return not claimed

    async def attach_media(self, socket: MessageSocket) -> None:
        self.attached += 1
        await self._talk(socket)


async def listen(nursery: trio.Nursery, line: Line, refused=lambda reason: None) -> tuple[int, trio.Event]:
    book = CallBook()
    book._handles[line.plan.run_id] = line  # type: ignore[assignment]
    stop = trio.Event()
    bound = await nursery.start(partial(serve_media, book, "127.0.0.1:0", stop, refused=refused))
    return int(bound.rsplit(":", 1)[1]), stop


def upgrade(path: str, headers: dict[str, str] | None = None) -> bytes:
    key = base64.b64encode(os.urandom(16)).decode()
    lines = [f"GET {path} HTTP/1.1", "Host: 127.0.0.1", "Upgrade: websocket", "Connection: Upgrade",
             f"Sec-WebSocket-Key: {key}", "Sec-WebSocket-Version: 13", *(f"{k}: {v}" for k, v in (headers or {}).items())]
    return ("\r\n".join(lines) + "\r\n\r\n").encode()


def masked(opcode: int, payload: bytes, *, fin: bool = True) -> bytes:
    """A client frame (clients mask; payloads here are under 126 bytes)."""
    mask = os.urandom(4)
    return bytes([(0x80 if fin else 0) | opcode, 0x80 | len(payload)]) + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(payload))


async def read_until(stream: trio.SocketStream, marker: bytes) -> bytes:
    data = b""
    while marker not in data:
        chunk = await stream.receive_some()
        if not chunk:
            break
        data += chunk
    return data


@asynccontextmanager
async def telnyx(port: int, path: str, headers: dict[str, str]) -> AsyncIterator[WebSocketConnection]:
    """Telnyx's side, by trio-websocket on a stream we close ourselves (trio-websocket leaks it
    when the handshake is refused: STACK.md)."""
    stream = await trio.open_tcp_stream("127.0.0.1", port)
    try:
        async with trio.open_nursery() as n:
            ws = await wrap_client_stream(n, stream, "127.0.0.1", path, extra_headers=[(k.encode(), v.encode()) for k, v in headers.items()])
            try:
                yield ws
            finally:
                await ws.aclose()
    finally:
        await trio.aclose_forcefully(stream)


async def status_of(port: int, path: str, headers: dict[str, str]) -> int | None:
    """The HTTP status the handshake was refused with; None when it was accepted."""
    statuses: list[int] = []
    try:
        async with telnyx(port, path, headers):
            pass
    except* ConnectionRejected as group:
        statuses = [e.status_code for e in _leaves(group) if isinstance(e, ConnectionRejected)]
    return statuses[0] if statuses else None


def _leaves(exc: BaseException):
    if isinstance(exc, BaseExceptionGroup):
        for sub in exc.exceptions:
            yield from _leaves(sub)
    else:
        yield exc


async def test_telnyx_talks_to_the_call_both_ways_in_order(nursery):
    heard: list[str] = []

    async def talk(socket: MessageSocket) -> None:
        for _ in range(30):
            heard.append(await socket.receive())
        for n in range(30):
            await socket.send(json.dumps({"event": "media", "n": n}))

    line = Line(talk)
    port, _ = await listen(nursery, line)
    async with telnyx(port, f"/telnyx/media/{TOKEN}", {"x-telnyx-streaming-auth-token": AUTH}) as ws:
        for n in range(30):
            await ws.send_message(json.dumps({"event": "media", "n": n}))
        back = [json.loads(await ws.get_message())["n"] for _ in range(30)]
        with pytest.raises(ConnectionClosed) as info:
            await ws.get_message()  # the call no longer needs the socket: the listener closes it
    assert [json.loads(t)["n"] for t in heard] == list(range(30)) and back == list(range(30))
    assert info.value.reason.code == 1000


@pytest.mark.parametrize(("path", "headers", "status"), [
    (f"/telnyx/media/{TOKEN}", {"x-telnyx-streaming-auth-token": AUTH}, None),
    ("/telnyx/media/not-the-token", {"x-telnyx-streaming-auth-token": AUTH}, 403),
    (f"/telnyx/media/{TOKEN}", {}, 403),
    (f"/telnyx/media/{TOKEN}", {"x-telnyx-streaming-auth-token": "guess"}, 403),
    (f"/elsewhere/{TOKEN}", {"x-telnyx-streaming-auth-token": AUTH}, 404),
])
async def test_only_the_calls_own_token_and_header_reach_the_call(nursery, path, headers, status):
    async def talk(socket: MessageSocket) -> None:
        pass

    line = Line(talk)
    port, _ = await listen(nursery, line)
    assert await status_of(port, path, headers) == status
    assert line.attached == (1 if status is None else 0)


async def test_a_second_connection_with_the_calls_token_is_refused_logged_and_counted(nursery, caplog):
    on_call, second_tried = trio.Event(), trio.Event()

    async def talk(socket: MessageSocket) -> None:
        on_call.set()
        await second_tried.wait()

    refusals: list[str] = []
    line = Line(talk)
    port, _ = await listen(nursery, line, refusals.append)
    right = {"x-telnyx-streaming-auth-token": AUTH}
    async with telnyx(port, f"/telnyx/media/{TOKEN}", right):
        await on_call.wait()
        assert await status_of(port, f"/telnyx/media/{TOKEN}", right) == 409
        second_tried.set()
    assert line.attached == 1 and refusals == ["second_connection"]
    assert "run-0142 media socket refused: a second connection" in caplog.text
    assert await status_of(port, f"/telnyx/media/{TOKEN}", right) == 409  # the call had its one socket
    assert await status_of(port, "/telnyx/media/not-the-token", right) == 403
    assert refusals == ["second_connection", "second_connection", "unknown_token"]


async def test_bad_requests_get_a_clear_answer_and_the_listener_keeps_serving(nursery):
    async def talk(socket: MessageSocket) -> None:
        pass

    line = Line(talk)
    port, _ = await listen(nursery, line)
    answers = []
    for request in (f"GET /telnyx/media/{TOKEN} HTTP/1.1\r\nHost: a\r\nx-telnyx-streaming-auth-token: {AUTH}\r\n\r\n".encode(),  # no upgrade
                    b"\x16\x03\x01 not http at all\r\n\r\n"):  # TLS to a plain port, say
        stream = await trio.open_tcp_stream("127.0.0.1", port)
        async with stream:
            await stream.send_all(request)
            answers.append(await read_until(stream, b"\r\n\r\n"))
    assert answers[0].startswith(b"HTTP/1.1 426") and b"Upgrade" in answers[0]
    assert answers[1].startswith(b"HTTP/1.1 400") and b"WebSocket" in answers[1]
    # A request line too long for the protocol gets the protocol's own answer (not our 400, not nothing).
    stream = await trio.open_tcp_stream("127.0.0.1", port)
    async with stream:
        await stream.send_all(b"GET /telnyx/media/" + b"x" * 9000 + b" HTTP/1.1\r\nHost: a\r\n\r\n")
        assert (await read_until(stream, b"\r\n\r\n")).startswith(b"HTTP/1.1 414")
    assert await status_of(port, f"/telnyx/media/{TOKEN}", {"x-telnyx-streaming-auth-token": AUTH}) is None


async def test_a_handshake_that_never_completes_is_dropped(nursery, autojump_clock):
    async def talk(socket: MessageSocket) -> None:
        pass

    port, _ = await listen(nursery, Line(talk))
    stream = await trio.open_tcp_stream("127.0.0.1", port)
    t0 = trio.current_time()
    async with stream:
        await stream.send_all(b"GET /telnyx/media/")  # and nothing more
        assert await stream.receive_some() == b""  # the listener closed it
    assert trio.current_time() - t0 == pytest.approx(media_listener.HANDSHAKE_BOUND_S)


async def test_frames_sent_with_the_handshake_fragments_and_pings(nursery, autojump_clock):
    """Frames in the handshake's own packet reach the call; a fragmented message arrives whole;
    a ping is answered with a pong carrying its payload."""
    heard: list[str] = []
    done = trio.Event()

    async def talk(socket: MessageSocket) -> None:
        heard.append(await socket.receive())
        heard.append(await socket.receive())
        done.set()
        with pytest.raises(SocketClosed, match="1001"):
            await socket.receive()

    port, _ = await listen(nursery, Line(talk))
    stream = await trio.open_tcp_stream("127.0.0.1", port)
    with trio.fail_after(5):  # virtual seconds: a frame never delivered or answered fails at once, not hangs
        async with stream:
            await stream.send_all(upgrade(f"/telnyx/media/{TOKEN}", {"x-telnyx-streaming-auth-token": AUTH})
                                  + masked(0x1, b'{"event":"connected"}'))
            head = await read_until(stream, b"\r\n\r\n")
            assert head.startswith(b"HTTP/1.1 101")
            await stream.send_all(masked(0x1, b'{"event":', fin=False) + masked(0x9, b"are you there") + masked(0x0, b'"start"}'))
            answer = await read_until(stream, b"are you there")
            assert answer[-15:-13] == bytes([0x8A, 13])  # pong, unmasked, 13 bytes
            await done.wait()
            await stream.send_all(masked(0x8, (1001).to_bytes(2, "big") + b"going away"))
            closing = await read_until(stream, b"\x88")
            assert b"\x88" in closing  # the close is answered
    assert heard == ['{"event":"connected"}', '{"event":"start"}']


async def test_a_failing_call_costs_one_connection_not_the_listener(nursery):
    calls = 0

    async def talk(socket: MessageSocket) -> None:
        nonlocal calls
        calls += 1
        if calls == 1:
            raise RuntimeError("a bug in the call")

    line = Line(talk)
    port, _ = await listen(nursery, line)
    for _ in range(2):
        assert await status_of(port, f"/telnyx/media/{TOKEN}", {"x-telnyx-streaming-auth-token": AUTH}) is None
        line.media_claimed = False  # the next connection stands for the next call's (one socket per call)
    assert calls == 2


async def test_stop_ends_the_listener(nursery):
    async def talk(socket: MessageSocket) -> None:
        pass

    port, stop = await listen(nursery, Line(talk))
    stop.set()
    await trio.sleep(0.1)  # wall-clock ok: the listener's task ends at its next checkpoint
    with pytest.raises(OSError):
        await trio.open_tcp_stream("127.0.0.1", port)


async def test_two_writers_never_interleave_frames(nursery):
    """The call's loop sends audio while a timer task sends a mark: each message arrives whole,
    each task's in its own order."""
    async def talk(socket: MessageSocket) -> None:
        async def writer(name: str) -> None:
            for n in range(200):
                await socket.send(json.dumps({"w": name, "n": n, "pad": "x" * 600}))

        async with trio.open_nursery() as n:
            n.start_soon(writer, "audio")
            n.start_soon(writer, "mark")
        await socket.receive()

    port, _ = await listen(nursery, Line(talk))
    got: dict[str, list[int]] = {"audio": [], "mark": []}
    async with telnyx(port, f"/telnyx/media/{TOKEN}", {"x-telnyx-streaming-auth-token": AUTH}) as ws:
        for _ in range(400):
            m = json.loads(await ws.get_message())
            got[m["w"]].append(m["n"])
        await ws.send_message("bye")
    assert got == {"audio": list(range(200)), "mark": list(range(200))}

