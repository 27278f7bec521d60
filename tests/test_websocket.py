"""The lean WebSocket's own I/O: direct socket calls on plain TCP, the trio stream path for
anything else, big messages through a full kernel buffer, and a close beside a reader."""

from __future__ import annotations

import socket as stdlib_socket

import pytest
import trio
import trio.testing
from websockets.client import ClientProtocol
from websockets.protocol import OPEN
from websockets.server import ServerProtocol
from websockets.uri import parse_uri

from calld.adapters.websocket import WebSocket, plain_socket
from calld.runtime.sockets import SocketClosed


class Wrapped(trio.abc.Stream):
    """A stream that is not a plain TCP stream (as TLS is not): trio's stream calls serve it."""

    def __init__(self, inner: trio.SocketStream) -> None:
        self.inner = inner

    async def send_all(self, data) -> None:
        await self.inner.send_all(data)

    async def wait_send_all_might_not_block(self) -> None:
        await self.inner.wait_send_all_might_not_block()

    async def receive_some(self, max_bytes=None):
        return await self.inner.receive_some(max_bytes)

    async def aclose(self) -> None:
        await self.inner.aclose()


def pair(*, wrap: bool = False, close_timeout_s: float = 2.0, max_size: int = 2**20,
         buffer_bytes: int | None = None) -> tuple[WebSocket, WebSocket]:
    """A server WebSocket and a client WebSocket on a connected socket pair, handshakes done."""
    a, b = trio.socket.socketpair()
    if buffer_bytes is not None:
        for s in (a, b):
            s.setsockopt(stdlib_socket.SOL_SOCKET, stdlib_socket.SO_SNDBUF, buffer_bytes)
            s.setsockopt(stdlib_socket.SOL_SOCKET, stdlib_socket.SO_RCVBUF, buffer_bytes)
    server_stream: trio.abc.Stream = trio.SocketStream(a)
    if wrap:
        server_stream = Wrapped(server_stream)  # type: ignore[arg-type]
    server = WebSocket(server_stream, ServerProtocol(state=OPEN, max_size=max_size), "server", close_timeout_s=close_timeout_s)
    client = WebSocket(trio.SocketStream(b), ClientProtocol(parse_uri("ws://peer/"), state=OPEN, max_size=max_size), "client",
                       close_timeout_s=close_timeout_s)
    return server, client


async def test_plain_tcp_is_read_directly_and_anything_else_through_trio() -> None:
    a, b = trio.socket.socketpair()
    assert isinstance(plain_socket(trio.SocketStream(a)), stdlib_socket.socket)
    assert plain_socket(Wrapped(trio.SocketStream(b))) is None  # type: ignore[arg-type]
    a.close()
    b.close()


@pytest.mark.parametrize("wrap", [False, True], ids=["plain", "through-trio"])
async def test_a_send_the_kernel_takes_whole_costs_no_trip_through_the_scheduler(
        wrap: bool, nursery: trio.Nursery, autojump_clock: trio.testing.MockClock) -> None:
    server, client = pair(wrap=wrap)
    ran = []

    async def mark() -> None:
        ran.append(True)

    nursery.start_soon(mark)  # runs at the first scheduler trip
    await server.send('{"event":"media"}')
    assert ran == ([] if not wrap else [True])  # trio's send_all always checkpoints; the direct send does not
    assert await client.receive() == '{"event":"media"}'
    await server.aclose()
    await client.aclose()


async def test_a_cancelled_sender_stops_at_send(autojump_clock: trio.testing.MockClock) -> None:
    server, client = pair()
    with trio.CancelScope() as scope:
        scope.cancel()
        await server.send("never")
    assert scope.cancelled_caught
    with trio.move_on_after(0.5):
        await client.receive()
        pytest.fail("a cancelled send went out")
    await server.aclose()
    await client.aclose()


async def test_a_message_bigger_than_the_kernel_buffers_waits_for_room_and_arrives_whole(
        nursery: trio.Nursery, autojump_clock: trio.testing.MockClock) -> None:
    server, client = pair(buffer_bytes=4096, max_size=4 * 2**20)
    big = "x" * (3 * 2**20)
    sent = trio.Event()

    async def send_big() -> None:
        await server.send(big)
        sent.set()

    nursery.start_soon(send_big)
    await trio.sleep(1)
    assert not sent.is_set()  # nobody reads: the writer waits for room, it does not spin or drop
    with trio.fail_after(5):
        assert await client.receive() == big
    await sent.wait()
    await server.send("after")  # the stream is in order after the partial writes
    assert await client.receive() == "after"
    await server.aclose()
    await client.aclose()


async def test_closing_beside_a_reader_lets_the_reader_take_the_answer(nursery: trio.Nursery, autojump_clock: trio.testing.MockClock) -> None:
    server, client = pair(close_timeout_s=10.0)
    heard: list[str] = []
    done = trio.Event()

    async def read_server() -> None:
        try:
            await server.receive()
        except SocketClosed as exc:
            heard.append(exc.reason)
        done.set()

    async def answer_client() -> None:  # the peer answers our close frame with its own
        with pytest.raises(SocketClosed):
            await client.receive()
        await client.aclose()

    nursery.start_soon(read_server)
    nursery.start_soon(answer_client)
    await trio.sleep(0.1)
    t0 = trio.current_time()
    await server.aclose()
    assert trio.current_time() - t0 < 1.0  # the answer came; close_timeout_s was not waited out
    with trio.fail_after(1):
        await done.wait()
    assert heard == ["server: closed"]
    assert server._protocol.close_rcvd is not None and server._protocol.close_rcvd.code == 1000


async def test_closing_beside_a_reader_with_a_silent_peer_is_bounded(nursery: trio.Nursery, autojump_clock: trio.testing.MockClock) -> None:
    server, client = pair(close_timeout_s=3.0)
    heard: list[str] = []

    async def read_server() -> None:
        try:
            await server.receive()
        except SocketClosed as exc:
            heard.append(exc.reason)

    nursery.start_soon(read_server)
    await trio.sleep(0.1)
    t0 = trio.current_time()
    await server.aclose()  # the client never reads, so never answers
    assert trio.current_time() - t0 == pytest.approx(3.0)
    await trio.sleep(0.1)
    assert heard == ["server: closed"]  # the reader is let go when the stream closes
    await client.aclose()
