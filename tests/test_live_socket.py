"""The GPT-Live socket against an in-process fake GPT-Live on loopback.

Every test that connects checks that the client's fd is closed once the context exits, and
runs the garbage collector: with filterwarnings=error an unclosed socket fails the test.
"""

from __future__ import annotations

import gc
import ipaddress
import json
import socket as stdlib_socket
import ssl
import struct
import tempfile
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime, timedelta
from functools import partial
from pathlib import Path
from typing import Any

import pytest
import trio
import wsproto
import wsproto.events
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID
from trio_websocket import (
    ConnectionClosed,
    WebSocketConnection,
    WebSocketRequest,
    serve_websocket,
)

from calld.adapters.live_socket import (
    LiveConnectError,
    LiveSocket,
    LiveTarget,
    live_connector,
    live_headers,
    open_live_socket,
    parse_extra_header,
    parse_live_url,
)
from calld.runtime.sockets import MessageSocket, SocketClosed
from calld.settings import load_settings

KEY = "sk-test-Zq81secretkey0000"
ALPHA = "OpenAI-Alpha: quicksilver=v3"
PATH = "/v1/live/sessions"
HANDSHAKE_HEADERS = {b"host", b"upgrade", b"connection", b"sec-websocket-key", b"sec-websocket-version"}

Handler = Callable[[WebSocketRequest], Awaitable[None]]


async def serve(nursery: trio.Nursery, handler: Handler) -> str:
    """A fake GPT-Live (trio-websocket's server) on 127.0.0.1, for the life of the test."""
    server = await nursery.start(partial(serve_websocket, handler, "127.0.0.1", 0, ssl_context=None))
    return f"ws://127.0.0.1:{server.port}{PATH}"


async def serve_raw(nursery: trio.Nursery, handler: Callable[[trio.SocketStream], Awaitable[None]]) -> str:
    """A bare TCP server, for peers trio-websocket's server will not imitate."""
    listeners = await nursery.start(partial(trio.serve_tcp, handler, 0, host="127.0.0.1"))
    port = listeners[0].socket.getsockname()[1]
    return f"ws://127.0.0.1:{port}{PATH}"


def assert_released(sock: LiveSocket) -> None:
    assert sock._transport.raw_socket.fileno() == -1, "the client's TCP socket is still open"
    gc.collect()  # an unclosed socket would now warn, and filterwarnings=error fails the test


async def until_closed(ws: WebSocketConnection) -> int:
    """Read and drop messages until the client closes; the close code."""
    try:
        while True:
            await ws.get_message()
    except ConnectionClosed as exc:
        assert exc.reason is not None
        return exc.reason.code


def header(headers: list[tuple[bytes, bytes]], name: bytes) -> bytes | None:
    return next((v for n, v in headers if n.lower() == name), None)


# -- configuration ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("url", "target"),
    [
        ("wss://api.openai.com/v1/live/sessions", LiveTarget("api.openai.com", 443, "/v1/live/sessions", True)),
        ("ws://localhost/v1/live/sessions", LiveTarget("localhost", 80, "/v1/live/sessions", False)),
        ("wss://gw.example:8443/openai/v1/live/sessions?api-version=2026-01-01",
         LiveTarget("gw.example", 8443, "/openai/v1/live/sessions?api-version=2026-01-01", True)),
        ("ws://127.0.0.1:9000", LiveTarget("127.0.0.1", 9000, "/", False)),
        ("WSS://Example.COM/x?a=1&b=2#frag", LiveTarget("example.com", 443, "/x?a=1&b=2", True)),
        ("ws://[::1]:8080/v1?x", LiveTarget("::1", 8080, "/v1?x", False)),
    ],
)
def test_parse_live_url(url: str, target: LiveTarget) -> None:
    assert parse_live_url(url) == target


def test_host_header_and_display_url() -> None:
    assert parse_live_url("wss://api.openai.com:443/v1/live/sessions").host_header == "api.openai.com"
    assert parse_live_url("wss://gw.example:8443/a").host_header == "gw.example:8443"
    assert parse_live_url("ws://[::1]:8080/").host_header == "[::1]:8080"
    assert parse_live_url("wss://user:pw@gw.example/a?q=1").display == "wss://gw.example/a?q=1"


@pytest.mark.parametrize(
    ("url", "says"),
    [("https://api.openai.com/v1/live/sessions", "wss://"), ("api.openai.com/v1", "wss://"),
     ("wss:///v1/live/sessions", "no host"), ("ws://host:99999/", "not a URL")],
)
def test_parse_live_url_rejects(url: str, says: str) -> None:
    with pytest.raises(ValueError, match="OPENAI_LIVE_URL") as info:
        parse_live_url(url)
    assert says in str(info.value)


def test_extra_header_parsing() -> None:
    assert parse_extra_header(ALPHA) == (b"OpenAI-Alpha", b"quicksilver=v3")
    assert parse_extra_header("  X-Trace :  a: b ") == (b"X-Trace", b"a: b")
    assert parse_extra_header("") is None
    assert parse_extra_header("   ") is None
    for bad in ("no colon", "bad name: x", ": value"):
        with pytest.raises(ValueError, match="OPENAI_LIVE_EXTRA_HEADER"):
            parse_extra_header(bad)
    assert live_headers(KEY) == [(b"Authorization", f"Bearer {KEY}".encode())]
    assert live_headers(f" {KEY}\n") == [(b"Authorization", f"Bearer {KEY}".encode())]  # a credential file's newline
    for bad in (f"{KEY}\r\nX-Evil: 1", f"sk-{chr(0x2019)}", "sk bad"):
        with pytest.raises(ValueError, match="OPENAI_API_KEY has characters") as info:
            live_headers(bad)
        assert "sk-" not in str(info.value)
    assert live_headers(KEY, ALPHA)[1] == (b"OpenAI-Alpha", b"quicksilver=v3")


# -- talking -----------------------------------------------------------------------------------------


@pytest.mark.parametrize("extra", [ALPHA, ""])
async def test_server_sees_the_headers(nursery: trio.Nursery, extra: str) -> None:
    seen: list[tuple[bytes, bytes]] = []

    async def handler(request: WebSocketRequest) -> None:
        seen.extend(request.headers)
        assert request.path == PATH
        ws = await request.accept()
        await ws.send_message("hello")
        await until_closed(ws)

    url = await serve(nursery, handler)
    async with open_live_socket(url, api_key=KEY, extra_header=extra) as sock:
        assert await sock.receive() == "hello"
    assert_released(sock)
    assert header(seen, b"authorization") == f"Bearer {KEY}".encode()
    names = {n.lower() for n, _ in seen} - HANDSHAKE_HEADERS
    if extra:
        assert names == {b"authorization", b"openai-alpha"}
        assert header(seen, b"openai-alpha") == b"quicksilver=v3"
    else:
        assert names == {b"authorization"}


async def test_messages_flow_both_ways_in_order(nursery: trio.Nursery) -> None:
    received: list[str] = []

    async def handler(request: WebSocketRequest) -> None:
        ws = await request.accept()
        for _ in range(50):
            text = await ws.get_message()
            received.append(str(text))
            await ws.send_message(json.dumps({"type": "echo", "of": json.loads(text)["n"]}))
        await ws.send_message(b'{"type":"as.bytes"}')
        await until_closed(ws)

    url = await serve(nursery, handler)
    sock: MessageSocket
    async with open_live_socket(url, api_key=KEY) as sock:
        async with trio.open_nursery() as inner:

            async def sender() -> None:
                for n in range(50):
                    await sock.send(json.dumps({"type": "session.input_audio.append", "n": n}))

            inner.start_soon(sender)
            echoes = [json.loads(await sock.receive())["of"] for _ in range(50)]
        assert echoes == list(range(50))
        assert await sock.receive() == '{"type":"as.bytes"}'  # a binary frame, decoded
    assert [json.loads(t)["n"] for t in received] == list(range(50))
    assert_released(sock)


async def test_server_close_after_session_closed(nursery: trio.Nursery) -> None:
    server_done = trio.Event()

    async def handler(request: WebSocketRequest) -> None:
        ws = await request.accept()
        assert json.loads(await ws.get_message())["type"] == "session.start"
        for i in range(3):
            await ws.send_message(json.dumps({"type": "session.output_audio.delta", "i": i}))
        await ws.send_message(json.dumps({"type": "session.closed", "reason": "close_requested"}))
        server_done.set()  # its close waits for our answer: the socket is read in our task, not behind our back
        await ws.aclose(1000, "session over")

    url = await serve(nursery, handler)
    async with open_live_socket(url, api_key=KEY) as sock:
        await sock.send('{"type":"session.start"}')
        await server_done.wait()  # the server has said everything and is closing before we read anything
        kinds = [json.loads(await sock.receive())["type"] for _ in range(4)]
        assert kinds == ["session.output_audio.delta"] * 3 + ["session.closed"]
        with pytest.raises(SocketClosed) as info:
            await sock.receive()
        assert "1000" in info.value.reason and "session over" in info.value.reason
        with pytest.raises(SocketClosed, match="1000"):
            await sock.send('{"type":"session.close"}')
        assert sock._transport.raw_socket.fileno() == -1  # the server's close, answered, released the fd at once
    assert_released(sock)


@pytest.mark.parametrize("how", ["reset", "fin"])
async def test_tcp_drop(nursery: trio.Nursery, how: str) -> None:
    async def handler(request: WebSocketRequest) -> None:
        ws = await request.accept()
        await ws.send_message("last words")
        stream = ws._stream
        assert isinstance(stream, trio.SocketStream)
        if how == "reset":  # SO_LINGER 0: close sends RST
            stream.socket.setsockopt(stdlib_socket.SOL_SOCKET, stdlib_socket.SO_LINGER, struct.pack("ii", 1, 0))
        await stream.aclose()

    url = await serve(nursery, handler)
    async with open_live_socket(url, api_key=KEY) as sock:
        assert await sock.receive() == "last words"
        with pytest.raises(SocketClosed) as info:
            await sock.receive()
        reason = info.value.reason
        assert "connection lost" in reason and "1006" in reason
        if how == "reset":
            assert "reset" in reason.lower()
        else:
            assert "without a close frame" in reason
        with pytest.raises(SocketClosed):
            await sock.send("anyone?")
    assert_released(sock)


async def upgrade_request(stream: trio.SocketStream) -> wsproto.WSConnection | None:
    """A bare server's side of the handshake: the request read, nothing answered yet."""
    conn = wsproto.WSConnection(wsproto.ConnectionType.SERVER)
    while data := await stream.receive_some():
        conn.receive_data(data)
        if any(isinstance(event, wsproto.events.Request) for event in conn.events()):
            return conn
    return None


async def deaf_peer(stream: trio.SocketStream) -> None:
    """Completes the WebSocket handshake, says one thing, then ignores everything: close frames too."""
    async with stream:
        if conn := await upgrade_request(stream):
            accept = conn.send(wsproto.events.AcceptConnection())
            await stream.send_all(accept + conn.send(wsproto.events.TextMessage("session.started")))
            await drain(stream)


async def drain(stream: trio.SocketStream) -> None:
    while await stream.receive_some():
        pass


async def test_unanswered_close_is_bounded(nursery: trio.Nursery, autojump_clock: trio.testing.MockClock) -> None:
    url = await serve_raw(nursery, deaf_peer)
    async with open_live_socket(url, api_key=KEY, close_timeout_s=3.0) as sock:
        assert await sock.receive() == "session.started"
        t0 = trio.current_time()
    assert trio.current_time() - t0 == pytest.approx(3.0)
    assert_released(sock)


async def test_explicit_aclose_is_bounded_and_idempotent(nursery: trio.Nursery, autojump_clock: trio.testing.MockClock) -> None:
    url = await serve_raw(nursery, deaf_peer)
    async with open_live_socket(url, api_key=KEY, close_timeout_s=2.0) as sock:
        await sock.receive()
        t0 = trio.current_time()
        await sock.aclose()
        assert trio.current_time() - t0 == pytest.approx(2.0)
        assert sock._transport.raw_socket.fileno() == -1
        with pytest.raises(SocketClosed, match="closed by calld"):
            await sock.send("late")
        with pytest.raises(SocketClosed, match="closed by calld"):
            await sock.receive()
        t1 = trio.current_time()
    assert trio.current_time() == t1  # nothing left to wait for on the way out
    assert_released(sock)


async def test_aclose_honours_the_callers_bounds(nursery: trio.Nursery, autojump_clock: trio.testing.MockClock) -> None:
    url = await serve_raw(nursery, deaf_peer)
    # The runtime's shape: a shielded bound shorter than close_timeout_s wins.
    async with open_live_socket(url, api_key=KEY, close_timeout_s=5.0) as sock:
        await sock.receive()
        t0 = trio.current_time()
        with trio.move_on_after(1.0) as bound:
            bound.shield = True
            await sock.aclose()
        assert trio.current_time() - t0 == pytest.approx(1.0)
        assert sock._transport.raw_socket.fileno() == -1
    assert_released(sock)
    # A cancelled caller gets a forceful close at once.
    async with open_live_socket(url, api_key=KEY, close_timeout_s=5.0) as sock:
        await sock.receive()
        t0 = trio.current_time()
        with trio.CancelScope() as scope:
            scope.cancel()
            await sock.aclose()
        assert trio.current_time() == t0
        assert sock._transport.raw_socket.fileno() == -1
    assert_released(sock)


async def test_cancelled_while_receiving_closes_everything(nursery: trio.Nursery) -> None:
    connected, server_saw = trio.Event(), trio.Event()
    codes: list[int] = []
    cancelled_at: list[float] = []

    async def handler(request: WebSocketRequest) -> None:
        ws = await request.accept()
        connected.set()
        codes.append(await until_closed(ws))
        server_saw.set()

    async def cancel_soon(scope: trio.CancelScope) -> None:
        await trio.sleep(0.01)
        cancelled_at.append(trio.current_time())
        scope.cancel()

    url = await serve(nursery, handler)
    with trio.CancelScope() as scope:
        async with open_live_socket(url, api_key=KEY, close_timeout_s=10.0) as sock:
            await connected.wait()
            nursery.start_soon(cancel_soon, scope)
            await sock.receive()
            pytest.fail("received a message nobody sent")
    assert scope.cancelled_caught
    # trio-websocket's reader still runs while we close, so the server's answer to our close
    # frame is read: no waiting out close_timeout_s.
    assert trio.current_time() - cancelled_at[0] < 5.0
    assert_released(sock)
    with trio.fail_after(5):
        await server_saw.wait()
    assert codes == [1000]  # a clean close handshake, though we were cancelled


async def test_cancelled_while_connecting(nursery: trio.Nursery, autojump_clock: trio.testing.MockClock) -> None:
    async def silent(stream: trio.SocketStream) -> None:
        async with stream:
            await drain(stream)

    url = await serve_raw(nursery, silent)
    with trio.move_on_after(1.0) as scope:
        async with open_live_socket(url, api_key=KEY, connect_timeout_s=10.0):
            pytest.fail("a silent server connected")
    assert scope.cancelled_caught and trio.current_time() == pytest.approx(1.0)
    gc.collect()


async def test_an_error_in_the_body_comes_out_unwrapped(nursery: trio.Nursery) -> None:
    async def handler(request: WebSocketRequest) -> None:
        ws = await request.accept()
        await until_closed(ws)

    url = await serve(nursery, handler)
    with pytest.raises(RuntimeError, match="^the call broke$"):  # not an ExceptionGroup
        async with open_live_socket(url, api_key=KEY) as sock:
            raise RuntimeError("the call broke")
    assert_released(sock)


# -- TLS -------------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def tls_pair() -> tuple[ssl.SSLContext, ssl.SSLContext]:
    """A server context with a self-signed certificate for 127.0.0.1, and a client context trusting it."""
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "fake GPT-Live")])
    now = datetime.now(UTC)
    cert = (
        x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
        .serial_number(x509.random_serial_number()).not_valid_before(now - timedelta(hours=1))
        .not_valid_after(now + timedelta(hours=1))
        .add_extension(x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]), critical=False)
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    cert_pem = cert.public_bytes(serialization.Encoding.PEM)
    key_pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    with tempfile.TemporaryDirectory() as tmp:
        (Path(tmp) / "cert.pem").write_bytes(cert_pem)
        (Path(tmp) / "key.pem").write_bytes(key_pem)
        server = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        server.load_cert_chain(Path(tmp) / "cert.pem", Path(tmp) / "key.pem")
    client = ssl.create_default_context(cadata=cert_pem.decode())
    return server, client


async def serve_tls(nursery: trio.Nursery, handler: Handler, context: ssl.SSLContext) -> str:
    server = await nursery.start(partial(serve_websocket, handler, "127.0.0.1", 0, ssl_context=context))
    return f"wss://127.0.0.1:{server.port}{PATH}"


async def test_wss(nursery: trio.Nursery, tls_pair: tuple[ssl.SSLContext, ssl.SSLContext]) -> None:
    seen: list[tuple[bytes, bytes]] = []

    async def handler(request: WebSocketRequest) -> None:
        seen.extend(request.headers)
        ws = await request.accept()
        await ws.send_message(await ws.get_message())
        await ws.send_message(json.dumps({"type": "session.closed"}))
        await ws.aclose(1000, "bye")

    server_context, client_context = tls_pair
    url = await serve_tls(nursery, handler, server_context)
    async with open_live_socket(url, api_key=KEY, ssl_context=client_context) as sock:
        assert isinstance(sock._transport.inner, trio.SSLStream)
        await sock.send('{"type":"session.start"}')
        assert await sock.receive() == '{"type":"session.start"}'
        assert json.loads(await sock.receive())["type"] == "session.closed"
        with pytest.raises(SocketClosed, match="1000 NORMAL_CLOSURE \\(bye\\)"):
            await sock.receive()
    assert header(seen, b"authorization") == f"Bearer {KEY}".encode()
    assert_released(sock)


async def test_wss_with_an_untrusted_certificate(nursery: trio.Nursery, tls_pair: tuple[ssl.SSLContext, ssl.SSLContext]) -> None:
    async def handler(request: WebSocketRequest) -> None:
        pytest.fail("the handshake should not get this far")

    url = await serve_tls(nursery, handler, tls_pair[0])
    t0 = trio.current_time()
    with pytest.raises(LiveConnectError) as info:
        async with open_live_socket(url, api_key=KEY):  # the system's trust store: not our fake's
            pytest.fail("connected to an untrusted server")
    message = str(info.value)
    assert url in message and "CERTIFICATE_VERIFY_FAILED" in message
    assert trio.current_time() - t0 < 5  # said at once, not at the connect timeout
    gc.collect()


# -- failing to connect ------------------------------------------------------------------------------


async def test_refused() -> None:
    probe = trio.socket.socket()
    await probe.bind(("127.0.0.1", 0))
    port = probe.getsockname()[1]
    probe.close()  # bound, never listened, now closed: connecting is refused
    url = f"ws://127.0.0.1:{port}{PATH}"
    with pytest.raises(LiveConnectError) as info:
        async with open_live_socket(url, api_key=KEY):
            pytest.fail("connected to a closed port")
    message = str(info.value)
    assert url in message and "refused" in message and "OPENAI_LIVE_URL" in message
    assert isinstance(info.value, OSError)


class NoSuchHost(trio.abc.HostnameResolver):
    """A trio hostname resolver that knows no names."""

    async def getaddrinfo(self, host: bytes | None, port: bytes | str | int | None, family: int = 0, type: int = 0,
                          proto: int = 0, flags: int = 0) -> list[Any]:
        raise stdlib_socket.gaierror(stdlib_socket.EAI_NONAME, "Name or service not known")

    async def getnameinfo(self, sockaddr: tuple[str, int] | tuple[str, int, int, int], flags: int) -> tuple[str, str]:
        raise NotImplementedError


async def test_dns_failure() -> None:
    trio.socket.set_custom_hostname_resolver(NoSuchHost())  # this run only: it lives in a RunVar
    with pytest.raises(LiveConnectError) as info:
        async with open_live_socket("wss://live.example/v1/live/sessions", api_key=KEY):
            pytest.fail("resolved a name nobody knows")
    message = str(info.value)
    assert "DNS lookup of live.example failed (Name or service not known)" in message
    assert "wss://live.example/v1/live/sessions" in message


@pytest.mark.parametrize(
    ("status", "hint"),
    [(401, "check OPENAI_API_KEY"), (403, "check OPENAI_API_KEY"), (404, "check OPENAI_LIVE_URL"),
     (429, "concurrent sessions"), (503, "try again later")],
)
async def test_rejected_handshake(nursery: trio.Nursery, status: int, hint: str) -> None:
    async def handler(request: WebSocketRequest) -> None:
        body = {"error": {"message": f"Incorrect API key provided: {KEY}.", "type": "invalid_request_error"}}
        await request.reject(status, body=json.dumps(body).encode())
        # trio-websocket's server leaves a rejected stream open; close ours in the fake.
        await request._connection._stream.aclose()

    url = await serve(nursery, handler)
    with pytest.raises(LiveConnectError) as info:
        async with open_live_socket(url, api_key=KEY):
            pytest.fail("a rejected handshake connected")
    message = str(info.value)
    assert f"HTTP {status}" in message and hint in message and url in message
    assert KEY not in message and "[redacted]" in message  # the server echoed the key; we did not
    assert info.value.__cause__ is None  # the rejection (and the body it carries) is not chained as a cause


async def test_silent_server_times_out(nursery: trio.Nursery, autojump_clock: trio.testing.MockClock) -> None:
    async def silent(stream: trio.SocketStream) -> None:
        async with stream:
            await drain(stream)  # reads the upgrade request, never answers it

    url = await serve_raw(nursery, silent)
    t0 = trio.current_time()
    with pytest.raises(LiveConnectError, match=r"did not complete the WebSocket handshake within 2 s"):
        async with open_live_socket(url, api_key=KEY, connect_timeout_s=2.0):
            pytest.fail("a silent server connected")
    assert trio.current_time() - t0 == pytest.approx(2.0)


async def test_server_hangs_up_during_handshake(nursery: trio.Nursery, autojump_clock: trio.testing.MockClock) -> None:
    async def rude(stream: trio.SocketStream) -> None:
        async with stream:
            await stream.receive_some()

    url = await serve_raw(nursery, rude)
    t0 = trio.current_time()
    with pytest.raises(LiveConnectError, match="closed the connection during the WebSocket handshake"):
        async with open_live_socket(url, api_key=KEY, connect_timeout_s=10.0):
            pytest.fail("connected to a server that hung up")
    assert trio.current_time() == t0  # it said so at once, not at the connect timeout


async def test_configuration_errors_are_connect_errors() -> None:
    with pytest.raises(LiveConnectError, match="OPENAI_API_KEY is empty"):
        async with open_live_socket("wss://api.openai.com/v1/live/sessions", api_key=""):
            pytest.fail("connected without a key")
    with pytest.raises(LiveConnectError, match="OPENAI_LIVE_URL"):
        async with open_live_socket("https://api.openai.com/v1/live/sessions", api_key=KEY):
            pytest.fail("connected to an https URL")
    with pytest.raises(LiveConnectError, match="OPENAI_LIVE_EXTRA_HEADER"):
        async with open_live_socket("wss://api.openai.com/v1/live/sessions", api_key=KEY, extra_header="nope"):
            pytest.fail("connected with a malformed header")


# -- from settings -------------------------------------------------------------------------------------


async def test_live_connector_from_settings(nursery: trio.Nursery) -> None:
    seen: list[tuple[bytes, bytes]] = []

    async def handler(request: WebSocketRequest) -> None:
        seen.extend(request.headers)
        ws: WebSocketConnection = await request.accept()
        await ws.send_message(await ws.get_message())
        await until_closed(ws)

    url = await serve(nursery, handler)
    settings = load_settings(openai_api_key=KEY, openai_live_url=url, openai_live_extra_header=ALPHA, _env_file=None)
    connect_live = live_connector(settings)
    async with connect_live() as sock:
        await sock.send("ping")
        assert await sock.receive() == "ping"
    assert header(seen, b"authorization") == f"Bearer {KEY}".encode()
    assert header(seen, b"openai-alpha") == b"quicksilver=v3"
    assert isinstance(sock, LiveSocket)
    assert_released(sock)


def test_live_connector_checks_settings_up_front() -> None:
    settings = load_settings(openai_api_key=KEY, openai_live_url="https://api.openai.com/v1/live/sessions", _env_file=None)
    with pytest.raises(ValueError, match="OPENAI_LIVE_URL"):
        live_connector(settings)


async def test_a_peer_that_breaks_the_protocol_ends_the_socket(nursery: trio.Nursery) -> None:
    """A server frame with the mask bit set is forbidden (RFC 6455 5.1): the socket ends, saying
    why, and the client tells the server with close code 1002."""
    closes: list[bytes] = []

    async def rude_peer(stream: trio.SocketStream) -> None:
        async with stream:
            if conn := await upgrade_request(stream):
                accept = conn.send(wsproto.events.AcceptConnection())
                hello = conn.send(wsproto.events.TextMessage("hello"))
                masked = bytes([0x81, 0x80 | 2]) + b"\x01\x02\x03\x04" + bytes([ord("h") ^ 1, ord("i") ^ 2])
                await stream.send_all(accept + hello + masked)
                closes.append(await stream.receive_some())
                await drain(stream)

    url = await serve_raw(nursery, rude_peer)
    async with open_live_socket(url, api_key=KEY) as sock:
        assert await sock.receive() == "hello"
        with pytest.raises(SocketClosed, match="GPT-Live socket failed: .*mask") as info:
            await sock.receive()
        assert KEY not in info.value.reason
        with pytest.raises(SocketClosed):
            await sock.send("anyone?")
    assert_released(sock)
    frame = closes[0]  # the client's close frame, masked as a client's frames are
    assert frame[0] == 0x88 and frame[1] & 0x80
    mask, payload = frame[2:6], frame[6:6 + (frame[1] & 0x7F)]
    unmasked = bytes(b ^ mask[i % 4] for i, b in enumerate(payload))
    assert int.from_bytes(unmasked[:2], "big") == 1002  # protocol error
