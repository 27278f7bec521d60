"""The simulator's WebSocket ends (calld.sim.ws) against trio-websocket, an independent
implementation, and against each other: handshakes, masking, big and fragmented
messages, pings, and closes from either side."""

from __future__ import annotations

from functools import partial

import pytest
import trio
import trio.testing
from trio_websocket import (
    ConnectionClosed,
    WebSocketRequest,
    open_websocket_url,
    serve_websocket,
)

from calld.runtime.sockets import SocketClosed
from calld.sim.ws import WsSocket, serve_ws, ws_connect


def frame(opcode: int, payload: bytes, *, mask: bool) -> bytes:
    """One final frame as a client (masked) or a server would send it; payloads under 126 bytes."""
    key = b"\x5a\x17\xc3\x08"
    head = bytes([0x80 | opcode, (0x80 if mask else 0) | len(payload)])
    return head + key + bytes(b ^ key[i % 4] for i, b in enumerate(payload)) if mask else head + payload


async def echo_reversed(sock: WsSocket) -> None:
    try:
        while True:
            text = await sock.receive()
            await sock.send(text[::-1])
            if text == "bye":
                await sock.aclose()
                return
    except SocketClosed:
        pass


@pytest.fixture
def idle_jump_clock(mock_clock: trio.testing.MockClock) -> trio.testing.MockClock:
    """Virtual time that jumps only after half a second of real idleness. trio-websocket talks over
    loopback TCP through its own reader task: with autojump_threshold=0, time could jump (and a
    bound fire) in the instant the kernel still holds bytes on their way. Half a second of
    nothing at all is a deadlock, cut off by the test's bound in that half second of wall time."""
    mock_clock.autojump_threshold = 0.5
    return mock_clock


async def test_a_trio_websocket_client_talks_to_serve_ws(nursery, idle_jump_clock):
    port = await nursery.start(serve_ws, echo_reversed, "127.0.0.1", 0)
    async with open_websocket_url(f"ws://127.0.0.1:{port}/v1/live/sessions") as ws:
        for text in ("hello", "x" * 125, "y" * 126, "z" * 65535, "w" * 70000 + "é"):
            await ws.send_message(text)
            assert await ws.get_message() == text[::-1]
        with trio.move_on_after(10) as waited:
            await ws.ping(b"still there?")
        assert not waited.cancelled_caught, "serve_ws never answered the ping with a pong"
    assert ws.closed is not None and ws.closed.code == 1000  # our close was answered


async def test_ws_connect_talks_to_a_trio_websocket_server_with_its_headers(nursery):
    seen: list[tuple[str, bytes | None]] = []

    async def handler(request: WebSocketRequest) -> None:
        seen.append((request.path, dict(request.headers).get(b"x-telnyx-streaming-auth-token")))
        ws = await request.accept()
        try:
            while True:
                await ws.send_message("got " + await ws.get_message())
        except ConnectionClosed:
            pass

    server = await nursery.start(partial(serve_websocket, handler, "127.0.0.1", 0, ssl_context=None))
    sock = await ws_connect(f"ws://127.0.0.1:{server.port}/telnyx/media/tok?a=1", {"x-telnyx-streaming-auth-token": "abc"},
                            "media")
    for text in ("a", "b" * 3000, "c" * 70000):
        await sock.send(text)
        assert await sock.receive() == "got " + text
    await sock.aclose()
    assert seen == [("/telnyx/media/tok?a=1", b"abc")]
    with pytest.raises(SocketClosed):
        await sock.send("after the close")


async def test_the_peer_closing_ends_receive_and_send(nursery):
    port = await nursery.start(serve_ws, echo_reversed, "127.0.0.1", 0)
    sock = await ws_connect(f"ws://127.0.0.1:{port}/", {}, "client")
    await sock.send("bye")
    assert await sock.receive() == "eyb"
    with pytest.raises(SocketClosed):
        await sock.receive()  # the server's close, answered
    with pytest.raises(SocketClosed):
        await sock.send("too late")


async def test_fragments_are_joined_and_unmasked_client_frames_refused(nursery):
    got: list[str] = []

    async def keep(sock: WsSocket) -> None:
        try:
            while True:
                got.append(await sock.receive())
        except SocketClosed:
            pass

    port = await nursery.start(serve_ws, keep, "127.0.0.1", 0)
    async with await trio.open_tcp_stream("127.0.0.1", port) as stream:
        await talk_raw(stream)
    await trio.testing.wait_all_tasks_blocked()  # the server's task takes what it read before the bad frame
    assert got == ["hello"]


async def talk_raw(stream: trio.SocketStream) -> None:
    await stream.send_all(b"GET / HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                          b"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n")
    head = b""
    while b"\r\n\r\n" not in head:
        head += await stream.receive_some(4096)
    assert b" 101 " in head and b"s3pPLMBiTxaQ9kYGzzhZRbK+xOo=" in head  # RFC 6455's own example
    first = bytearray(frame(0x1, b"hel", mask=True))
    first[0] &= 0x7F  # not final
    await stream.send_all(bytes(first) + frame(0x0, b"lo", mask=True))
    await stream.send_all(frame(0x1, b"unmasked", mask=False))
    reply = b""
    while len(reply) < 2:
        reply += await stream.receive_some(4096)
    assert reply[0] == 0x88 and int.from_bytes(reply[2:4], "big") == 1002  # closed as a protocol error
