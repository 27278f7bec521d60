"""The lean WebSocket's own I/O: direct socket calls on plain TCP, the trio stream path for
anything else, big messages through a full kernel buffer, and a close beside a reader."""

from __future__ import annotations

import socket as stdlib_socket
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Protocol

import pytest
import trio
import trio.testing
from websockets.client import ClientProtocol
from websockets.protocol import OPEN
from websockets.server import ServerProtocol
from websockets.uri import parse_uri

from calld.adapters.websocket import Early, WebSocket, plain_socket
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


PEER_WAIT_S = 10.0  # virtual seconds; every wait in these tests is far shorter


class Closes(Protocol):
    async def aclose(self) -> None: ...


@asynccontextmanager
async def bounded_then_closed[A: Closes, B: Closes](a: A, b: B) -> AsyncIterator[tuple[A, B]]:
    """Both ends of a socketpair for the block, closed after it whatever it did.

    The block is bounded: an end waiting for something the other never writes (a pong, a close
    code, a message) fails the test, saying so, instead of hanging it. On the autojump clock
    that costs no wall time, and it cannot fire while bytes are on their way: both ends are one
    in-process socketpair, whose bytes are readable the moment they are sent, so virtual time only
    jumps when every task waits for something nobody will send."""
    try:
        with trio.fail_after(PEER_WAIT_S):
            yield a, b
    except trio.TooSlowError:
        pytest.fail(f"stuck for {PEER_WAIT_S:g} s of virtual time: every task waits for bytes nobody sends "
                    "(the traceback above shows which wait)")
    finally:
        await a.aclose()
        await b.aclose()


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


class Yields(trio.abc.Instrument):
    """How often one task gave the scheduler its turn (each step of it that ended)."""

    def __init__(self, task: trio.lowlevel.Task) -> None:
        self.task, self.count = task, 0

    def after_task_step(self, task: trio.lowlevel.Task) -> None:
        if task is self.task:
            self.count += 1


@pytest.mark.parametrize("wrap", [False, True], ids=["plain", "through-trio"])
async def test_a_send_the_kernel_takes_whole_costs_no_trip_through_the_scheduler(
        wrap: bool, autojump_clock: trio.testing.MockClock) -> None:
    async with bounded_then_closed(*pair(wrap=wrap)) as (server, client):
        yields = Yields(trio.lowlevel.current_task())
        trio.lowlevel.add_instrument(yields)
        try:
            await server.send('{"event":"media"}')
        finally:
            trio.lowlevel.remove_instrument(yields)
        assert yields.count == (0 if not wrap else 1)  # trio's send_all always checkpoints; the direct send does not
        assert await client.receive() == '{"event":"media"}'


async def test_a_reader_woken_with_nothing_to_read_waits_again(autojump_clock: trio.testing.MockClock, monkeypatch) -> None:
    # epoll may say readable when a read then finds nothing (EAGAIN): the reader waits again
    # for the message rather than failing or reading the stream as ended.
    import calld.adapters.websocket as websocket_module

    wait = trio.lowlevel.wait_readable
    spurious = [1]

    async def sometimes_for_nothing(sock: object) -> None:
        if spurious[0]:
            spurious[0] -= 1
            await trio.lowlevel.checkpoint()  # "readable", with nothing there yet
            return
        await wait(sock)

    async with bounded_then_closed(*pair()) as (server, client):
        monkeypatch.setattr(websocket_module.trio.lowlevel, "wait_readable", sometimes_for_nothing)
        async with trio.open_nursery() as nursery:
            got: list[str] = []

            async def read() -> None:
                got.append(await server.receive())

            nursery.start_soon(read)
            await trio.testing.wait_all_tasks_blocked()
            await client.send('{"event":"media"}')
        monkeypatch.undo()
        assert got == ['{"event":"media"}'] and spurious == [0] and server.ending is None


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


# -- frames parsed and framed here, and what still goes to the protocol ------------------------------


def client_frame(opcode: int, payload: bytes, *, fin: bool = True, mask: bytes = b"\x01\x02\x03\x04") -> bytes:
    """A masked client frame in every length encoding (7-bit, 16-bit, 64-bit)."""
    n = len(payload)
    head = bytes([(0x80 if fin else 0) | opcode])
    if n < 126:
        head += bytes([0x80 | n])
    elif n < 65536:
        head += bytes([0x80 | 126]) + n.to_bytes(2, "big")
    else:
        head += bytes([0x80 | 127]) + n.to_bytes(8, "big")
    return head + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(payload))


@asynccontextmanager
async def raw_pair(*, max_size: int = 2**20, protocol: ServerProtocol | None = None,
                   early: Early = Early()) -> AsyncIterator[tuple[WebSocket, trio.SocketStream]]:
    """A server WebSocket and the raw stream of its peer (which writes frames by hand), bounded
    and closed as `bounded_then_closed` has it."""
    a, b = trio.socket.socketpair()
    server = WebSocket(trio.SocketStream(a), protocol or ServerProtocol(state=OPEN, max_size=max_size), "server", early=early)
    async with bounded_then_closed(server, trio.SocketStream(b)) as (server, peer):
        yield server, peer


async def test_frames_split_anywhere_and_mixed_with_control_frames_arrive_whole_and_in_order(autojump_clock) -> None:
    texts = ["a" * 10, "é" * 100, "b" * 70_000, '{"event":"media"}']
    wire = (client_frame(0x9, b"ping!") + client_frame(0x1, texts[0].encode()) + client_frame(0x1, texts[1].encode())
            + client_frame(0x1, b"frag", fin=False) + client_frame(0x0, b"ment")  # a fragmented message: the protocol's
            + client_frame(0x1, texts[2].encode()) + client_frame(0x2, texts[3].encode()))
    async def send() -> None:
        for i in range(0, len(wire), 7):  # seven bytes at a time: every header and payload split somewhere
            await peer.send_all(wire[i:i + 7])

    async with raw_pair() as (server, peer):
        async with trio.open_nursery() as nursery:
            nursery.start_soon(send)
            got = [await server.receive() for _ in range(5)]
        assert got == [texts[0], texts[1], "fragment", texts[2], texts[3]]
        pong = await peer.receive_some(64)  # owed by the read that brought the ping, so already sent
        assert pong[:2] == b"\x8a\x05" and pong[2:7] == b"ping!"  # the protocol answered the ping


async def test_a_text_frame_that_is_not_utf8_is_read_with_replacement_characters(autojump_clock) -> None:
    async with raw_pair() as (server, peer):
        await peer.send_all(client_frame(0x1, b"ok") + client_frame(0x1, b"\xff{bad") + client_frame(0x2, b"\xfe}"))
        assert [await server.receive() for _ in range(3)] == ["ok", "\ufffd{bad", "\ufffd}"]  # the JSON parser names it


async def test_an_unmasked_client_frame_is_a_violation_the_protocol_names(autojump_clock) -> None:
    async with raw_pair() as (server, peer):
        await peer.send_all(b"\x81\x02hi")  # clients must mask
        with pytest.raises(SocketClosed):
            await server.receive()
        answer = await peer.receive_some(64)
        assert answer[0] == 0x88 and int.from_bytes(answer[2:4], "big") == 1002


def test_a_handshake_read_that_ends_mid_frame_is_seen() -> None:
    from calld.adapters.websocket import _after_head

    whole = client_frame(0x1, b"hello")
    assert _after_head(b"HTTP/1.1 101 x\r\n\r\n" + whole, []).aligned
    assert _after_head(b"HTTP/1.1 101 x\r\n\r\n", []).aligned
    for cut in range(1, len(whole)):
        assert not _after_head(b"HTTP/1.1 101 x\r\n\r\n" + whole[:cut], []).aligned


async def test_after_a_handshake_that_ended_mid_frame_the_protocol_parses_everything(autojump_clock) -> None:
    protocol = ServerProtocol(state=OPEN)
    frame = client_frame(0x1, b"split by the handshake")
    protocol.receive_data(frame[:3])  # the handshake's last read brought the start of a frame
    async with raw_pair(protocol=protocol, early=Early((), aligned=False)) as (server, peer):
        await peer.send_all(frame[3:] + client_frame(0x1, b"next"))
        assert [await server.receive(), await server.receive()] == ["split by the handshake", "next"]


async def test_client_frames_are_masked_and_server_frames_are_not(autojump_clock) -> None:
    async with bounded_then_closed(*pair()) as (server, client):
        await client.send("to the server")
        await server.send("to the client")
        assert await server.receive() == "to the server"
        assert await client.receive() == "to the client"
        # What went on the wire, read back by the protocol of the other side (which checks the mask bit).
        assert server._protocol.parser_exc is None and client._protocol.parser_exc is None  # noqa: SLF001


async def test_whole_data_frames_skip_the_protocols_parser_and_framer(autojump_clock, monkeypatch) -> None:
    """The audio path's per-message cost (bench/ws_layers.py): a whole text frame each way is
    framed and parsed here; the protocol sees only what is not one."""
    async with bounded_then_closed(*pair()) as (server, client):
        calls: list[str] = []
        for proto in (server._protocol, client._protocol):  # noqa: SLF001
            for name in ("send_text", "receive_data"):
                original = getattr(proto, name)
                monkeypatch.setattr(proto, name, lambda *a, _n=name, _o=original: (calls.append(_n), _o(*a))[1])
        await client.send('{"type":"session.input_audio.append"}')
        await server.send('{"event":"media"}')
        assert await server.receive() == '{"type":"session.input_audio.append"}'
        assert await client.receive() == '{"event":"media"}'
        assert calls == []


async def test_a_message_over_the_size_limit_gets_the_protocols_1009(autojump_clock) -> None:
    async with raw_pair(max_size=1000) as (server, peer):
        await peer.send_all(client_frame(0x1, b"small") + client_frame(0x1, b"x" * 1001))
        assert await server.receive() == "small"
        with pytest.raises(SocketClosed):
            await server.receive()
        answer = await peer.receive_some(64)
        assert answer[0] == 0x88 and int.from_bytes(answer[2:4], "big") == 1009


async def test_a_client_masks_each_frame_with_the_next_unused_random_key(autojump_clock, monkeypatch) -> None:
    """Masking keys come from os.urandom, each used once, read a pool at a time: one getrandom call
    serves 1024 frames, where one a frame was 50 syscalls a second per call."""
    import calld.adapters.websocket as websocket

    reads: list[int] = []

    def urandom(n: int) -> bytes:
        reads.append(n)
        return bytes((len(reads) + i) % 256 for i in range(n))  # a pattern: each key says where it came from

    monkeypatch.setattr(websocket.os, "urandom", urandom)
    async with bounded_then_closed(*pair()) as (server, client):
        reads.clear()  # the handshakes' own
        sent = [f"frame {i}" for i in range(1030)]
        wire = [client._framed(text) for text in sent]  # noqa: SLF001
        pool = websocket.MASK_POOL_BYTES
        assert reads == [pool, pool]  # two reads for 1030 frames
        first, second = (bytes((k + i) % 256 for i in range(pool)) for k in (1, 2))  # what they returned
        keys = [frame[2:6] for frame in wire]
        assert keys[:1024] == [first[i:i + 4] for i in range(0, pool, 4)]
        assert keys[1024:] == [second[i:i + 4] for i in range(0, 24, 4)]
        for frame, text in zip(wire, sent, strict=True):  # and each still unmasks to its text on the other side
            await client._send_bytes(frame)  # noqa: SLF001
            assert await server.receive() == text
