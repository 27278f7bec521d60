"""The GPT-Live WebSocket: trio-websocket behind the MessageSocket seam.

`open_live_socket(url, api_key=...)` is an async context manager yielding a `LiveSocket`
(text in, text out, `SocketClosed` when the session's transport ends). `live_connector(settings)`
binds it to calld's settings, which is what `CallPorts.connect_live` wants.

Resource handling: we open the TCP (or TLS) stream ourselves and hand it to
`trio_websocket.wrap_client_stream`, with trio-websocket's reader task in a nursery of our
own. trio-websocket 0.12.2 never closes a client's stream after the *server* closes, or
after the TCP connection drops (STACK.md §3), so we close it ourselves on every way out:
the fd is gone when the context exits, whatever happened. Every close is bounded: the
close handshake gets at most `close_timeout_s` (shielded when the context exits, so even a
cancelled call closes cleanly), then the stream is closed forcefully. trio-websocket's reader
task runs shielded from the caller's cancellation until we stop it, so the server's answer to
our close frame is still read after the call was cancelled.

Error handling: failing to connect raises `LiveConnectError` (an `OSError`) saying what
to check; once connected, `receive()` and `send()` raise `SocketClosed` with the close
code and reason, or the transport error. An exception from the body of the context
leaves it unchanged (never wrapped in an exception group). The API key is sent in one
header and never appears in a message or a log line.
"""

from __future__ import annotations

import errno
import json
import logging
import re
import socket as stdlib_socket
import ssl
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import TYPE_CHECKING, cast
from urllib.parse import urlsplit

import trio
import wsproto.utilities
from attrs import frozen
from trio_websocket import (
    CloseReason,
    ConnectionClosed,
    ConnectionRejected,
    WebSocketConnection,
    wrap_client_stream,
)

from calld.runtime.sockets import MessageSocket, SocketClosed

if TYPE_CHECKING:
    from calld.settings import Settings

log = logging.getLogger("calld.live_socket")

REDACTED = "[redacted]"
ABNORMAL_CLOSURE = 1006  # no close frame: the TCP connection ended first
_TOKEN = re.compile(r"^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$")  # an HTTP header name (RFC 9110 token)
_HINTS = {
    401: "check OPENAI_API_KEY",
    403: "check OPENAI_API_KEY, and that its project may use GPT-Live",
    404: "check OPENAI_LIVE_URL",
    429: "rate limited, or at the cap on concurrent sessions; try again later",
}


class LiveConnectError(OSError):
    """GPT-Live could not be reached, or refused the WebSocket. The message says what to check."""


# -- configuration ---------------------------------------------------------------------------------


@frozen
class LiveTarget:
    """Where a ws:// or wss:// URL points."""

    host: str
    port: int
    resource: str  # path and query, as sent in the request line
    tls: bool

    @property
    def host_header(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return host if self.port == (443 if self.tls else 80) else f"{host}:{self.port}"

    @property
    def display(self) -> str:
        """The URL for messages: no user info, whatever the setting held."""
        return f"{'wss' if self.tls else 'ws'}://{self.host_header}{self.resource}"


def parse_live_url(url: str) -> LiveTarget:
    """Split a ws:// or wss:// URL. Raises ValueError naming OPENAI_LIVE_URL."""
    try:
        parts = urlsplit(url.strip())
        port = parts.port
    except ValueError as exc:
        raise ValueError(f"OPENAI_LIVE_URL is not a URL ({exc})") from None
    scheme = parts.scheme.lower()
    if scheme not in ("ws", "wss"):
        raise ValueError(f"OPENAI_LIVE_URL must start with wss:// (or ws://), got {scheme + '://' if scheme else 'no scheme'}")
    if not parts.hostname:
        raise ValueError("OPENAI_LIVE_URL has no host")
    tls = scheme == "wss"
    resource = parts.path or "/"
    if parts.query:
        resource += "?" + parts.query
    return LiveTarget(host=parts.hostname, port=port if port is not None else (443 if tls else 80), resource=resource, tls=tls)


def parse_extra_header(spec: str) -> tuple[bytes, bytes] | None:
    """'Name: value' -> (b'Name', b'value'); empty -> None. Raises ValueError naming OPENAI_LIVE_EXTRA_HEADER."""
    if not spec.strip():
        return None
    name, sep, value = spec.partition(":")
    name, value = name.strip(), value.strip()
    if not sep or not _TOKEN.match(name):
        raise ValueError("OPENAI_LIVE_EXTRA_HEADER must be 'Name: value', e.g. 'OpenAI-Alpha: quicksilver=v3'")
    if any(c in value for c in "\r\n\0"):
        raise ValueError("OPENAI_LIVE_EXTRA_HEADER's value must be one line")
    return name.encode("ascii"), value.encode("latin-1")


def live_headers(api_key: str, extra_header: str = "") -> list[tuple[bytes, bytes]]:
    """The handshake's headers: the bearer key, then the optional extra header."""
    key = api_key.strip()
    if not (key.isascii() and key.isprintable()) or any(c.isspace() for c in key):
        # Said without the key: h11 would refuse it later with the key in its message.
        raise ValueError("OPENAI_API_KEY has characters an API key cannot have (spaces, control or non-ASCII)")
    headers = [(b"Authorization", b"Bearer " + key.encode("ascii"))]
    if (extra := parse_extra_header(extra_header)) is not None:
        headers.append(extra)
    return headers


def live_connector(settings: Settings) -> Callable[[], AbstractAsyncContextManager[MessageSocket]]:
    """`CallPorts.connect_live` from settings. Checks the URL and extra header now (ValueError)."""
    url = settings.openai_live_url
    extra_header = settings.openai_live_extra_header
    parse_live_url(url)
    parse_extra_header(extra_header)
    api_key = settings.openai_api_key.get_secret_value()

    def connect_live() -> AbstractAsyncContextManager[MessageSocket]:
        return open_live_socket(url, api_key=api_key, extra_header=extra_header)

    return connect_live


# -- the socket ------------------------------------------------------------------------------------


class _Transport(trio.abc.Stream):
    """The TCP/TLS stream under the WebSocket. It remembers why it failed, which trio-websocket
    folds into a bare 1006, and can wake the handshake when the stream dies before it completes."""

    def __init__(self, inner: trio.SocketStream | trio.SSLStream[trio.SocketStream]) -> None:
        self.inner = inner
        self.error: str | None = None
        self.eof = False
        self.on_failure: Callable[[], None] | None = None

    def _failed(self, exc: BaseException | None) -> None:
        if exc is not None and self.error is None:
            self.error = _describe(exc)
        if self.on_failure is not None:
            self.on_failure()

    async def send_all(self, data: bytes | bytearray | memoryview) -> None:
        try:
            await self.inner.send_all(data)
        except trio.BrokenResourceError as exc:
            self._failed(exc)
            raise

    async def wait_send_all_might_not_block(self) -> None:
        await self.inner.wait_send_all_might_not_block()

    async def receive_some(self, max_bytes: int | None = None) -> bytes | bytearray:
        try:
            data = await self.inner.receive_some(max_bytes)
        except trio.BrokenResourceError as exc:
            self._failed(exc)
            raise
        if not data:
            self.eof = True
            self._failed(None)
        return data

    async def aclose(self) -> None:
        await self.inner.aclose()

    async def close_now(self) -> None:
        """Close the fd, without a TLS goodbye and whatever the surrounding cancellation."""
        with trio.CancelScope(shield=True):
            await trio.aclose_forcefully(self.inner)

    @property
    def raw_socket(self) -> trio.socket.SocketType:
        inner = self.inner
        return inner.socket if isinstance(inner, trio.SocketStream) else inner.transport_stream.socket


class _Reader:
    """Stands in for the nursery wrap_client_stream wants: it only calls `start_soon`, once, for
    trio-websocket's reader task. We run that task

    - shielded from the caller's cancellation, so a cancelled call still has its close frame
      answered and the bounded close is quick; `stop()` ends it, and we always call it;
    - catching what it raises (a rejected handshake raises there): the failure is recorded, the
      handshake woken, and the stream closed, so it ends the socket instead of crashing our
      nursery. The caller then sees LiveConnectError, or SocketClosed, never an exception group.
    """

    def __init__(self, nursery: trio.Nursery, transport: _Transport) -> None:
        self._nursery = nursery
        self._transport = transport
        self._scope = trio.CancelScope(shield=True)
        self.error: Exception | None = None
        self.running = False
        self.finished = trio.Event()
        self.on_failure: Callable[[], None] | None = None

    def start_soon(self, async_fn: Callable[[], Awaitable[object]], *, name: object = None) -> None:
        self.running = True
        self._nursery.start_soon(self._run, async_fn, name=name)

    async def _run(self, async_fn: Callable[[], Awaitable[object]]) -> None:
        try:
            with self._scope:
                await async_fn()
        except Exception as exc:
            if not isinstance(exc, ConnectionRejected):
                log.warning("trio-websocket's reader task failed; dropping the GPT-Live connection", exc_info=True)
            self.error = exc
            if self.on_failure is not None:
                self.on_failure()
            await self._transport.close_now()
        finally:
            self.running = False
            self.finished.set()

    def stop(self) -> None:
        self._scope.cancel()


class LiveSocket:
    """A connected GPT-Live WebSocket, as a MessageSocket. Made by `open_live_socket`."""

    def __init__(self, ws: WebSocketConnection, transport: _Transport, reader: _Reader, *,
                 close_timeout_s: float, redact: Callable[[str], str]) -> None:
        self._ws = ws
        self._transport = transport
        self._reader = reader
        self._close_timeout_s = close_timeout_s
        self._redact = redact
        self._closed_by_us = False

    @property
    def handshake_headers(self) -> tuple[tuple[bytes, bytes], ...]:
        return self._ws.handshake_headers

    async def send(self, text: str) -> None:
        try:
            await self._ws.send_message(text)
        except ConnectionClosed as exc:
            raise SocketClosed(await self._reason(exc.reason)) from None
        except wsproto.utilities.LocalProtocolError:  # the close handshake is under way
            raise SocketClosed(await self._reason(self._ws.closed)) from None

    async def receive(self) -> str:
        """The next message. Messages that arrived before a server close are still returned."""
        try:
            message = await self._ws.get_message()
        except ConnectionClosed as exc:
            raise SocketClosed(await self._reason(exc.reason)) from None
        if isinstance(message, bytes):
            # GPT-Live speaks JSON text; a stray binary frame goes on to the JSON parser, which says so.
            return message.decode("utf-8", errors="replace")
        return message

    async def aclose(self) -> None:
        """Close handshake, waiting at most close_timeout_s for the server's answer; then the fd.

        Idempotent. As trio's `aclose` contract has it, a cancelled caller gets a forceful close
        at once; to give the handshake its time anyway, shield the call (leaving the context
        does, and the runtime's bounded `finally` does).
        """
        if self._ws.closed is None:
            self._closed_by_us = True
        # Without the reader nobody would read the server's answer: don't wait for it.
        bound_s = self._close_timeout_s if self._reader.running else 0.0
        try:
            with trio.move_on_after(bound_s) as bound:
                await self._ws.aclose()
            if bound.cancelled_caught and bound_s:
                log.debug("GPT-Live did not answer the close within %.3g s; dropping the connection", bound_s)
        finally:
            await self._transport.close_now()

    async def _reason(self, close: CloseReason | None) -> str:
        if close is None and not self._closed_by_us and self._reader.running:
            # No close reason: the reader is dying of an exception. Its channel closed (waking
            # us) on the way out, just before it records why; give it that moment.
            with trio.move_on_after(1.0):
                await self._reader.finished.wait()
        if self._closed_by_us:
            text = "closed by calld"
        elif self._reader.error is not None:
            text = f"GPT-Live socket failed: {_describe(self._reader.error)}"
        elif close is None:
            text = f"GPT-Live socket ended: {self._transport.error or 'no close frame'}"
        elif close.code == ABNORMAL_CLOSURE:
            if self._transport.error is not None:
                text = f"GPT-Live connection lost: {self._transport.error} (1006, no close frame)"
            else:
                text = "GPT-Live connection lost: the server ended TCP without a close frame (1006)"
        else:
            text = f"GPT-Live closed the socket: {close.code} {close.name}"
            if close.reason:
                text += f" ({close.reason})"
        return self._redact(text)


@asynccontextmanager
async def open_live_socket(
    url: str,
    *,
    api_key: str,
    extra_header: str = "",
    connect_timeout_s: float = 10.0,
    close_timeout_s: float = 5.0,
    message_queue_size: int = 64,
    ssl_context: ssl.SSLContext | None = None,
) -> AsyncIterator[LiveSocket]:
    """Connect to GPT-Live; yield the socket; close it (bounded) and its stream on the way out.

    Raises LiveConnectError when the connection cannot be made, within connect_timeout_s in all
    (DNS, TCP, TLS and the WebSocket handshake). Leaving the context takes at most about
    close_timeout_s beyond the body, however the body ended, and re-raises what the body raised.
    """
    redact = _redactor(api_key)
    try:
        target = parse_live_url(url)
        headers = live_headers(api_key, extra_header)
    except ValueError as exc:
        raise LiveConnectError(redact(str(exc))) from None
    where = redact(target.display)
    if not api_key.strip():
        raise LiveConnectError(f"cannot connect to GPT-Live at {where}: OPENAI_API_KEY is empty")
    deadline = trio.current_time() + connect_timeout_s
    transport = await _open_transport(target, where, deadline, connect_timeout_s, ssl_context)
    socket: LiveSocket | None = None
    body_error: BaseException | None = None
    try:
        async with trio.open_nursery() as nursery:
            reader = _Reader(nursery, transport)
            try:
                ws = await _handshake(reader, transport, target, headers, deadline, message_queue_size)
                if ws is not None:
                    socket = LiveSocket(ws, transport, reader, close_timeout_s=close_timeout_s, redact=redact)
                    log.debug("connected to GPT-Live at %s", where)
                    try:
                        yield socket
                    except BaseException as exc:  # noqa: BLE001 -- re-raised below, outside the nursery: never wrapped
                        body_error = exc
                    finally:
                        with trio.CancelScope(shield=True):  # bounded by close_timeout_s inside
                            await socket.aclose()
            finally:
                reader.stop()
    finally:
        await transport.close_now()
    if socket is None:
        raise _connect_error(reader, transport, where, connect_timeout_s, redact)
    if body_error is not None:
        raise body_error


# -- connecting ------------------------------------------------------------------------------------


async def _open_transport(target: LiveTarget, where: str, deadline: float, timeout_s: float,
                          ssl_context: ssl.SSLContext | None) -> _Transport:
    stream: trio.SocketStream | trio.SSLStream[trio.SocketStream] | None = None
    with trio.CancelScope(deadline=deadline):
        try:
            if target.tls:
                stream = await trio.open_ssl_over_tcp_stream(
                    target.host, target.port, https_compatible=True, ssl_context=ssl_context)
            else:
                stream = await trio.open_tcp_stream(target.host, target.port)
        except stdlib_socket.gaierror as exc:
            raise LiveConnectError(
                f"cannot connect to GPT-Live at {where}: DNS lookup of {target.host} failed ({exc.strerror or exc}); "
                "check OPENAI_LIVE_URL and the network") from exc
        except OSError as exc:
            raise LiveConnectError(
                f"cannot connect to GPT-Live at {where}: {_connect_failure(exc)}; "
                "check OPENAI_LIVE_URL and the network") from exc
    if stream is None:
        raise LiveConnectError(f"cannot connect to GPT-Live at {where}: no TCP connection within {timeout_s:g} s "
                               "(timed out); check the network")
    return _Transport(stream)


async def _handshake(reader: _Reader, transport: _Transport, target: LiveTarget, headers: list[tuple[bytes, bytes]],
                     deadline: float, message_queue_size: int) -> WebSocketConnection | None:
    """The WebSocket, or None: timed out, rejected, or the stream died (see `_connect_error`)."""
    # trio-websocket waits for the handshake even after its reader has given up, so the reader
    # and the transport wake us (cancel `wake`) when either fails.
    with trio.CancelScope(deadline=deadline), trio.CancelScope() as wake:
        transport.on_failure = reader.on_failure = wake.cancel
        try:
            # wrap_client_stream is annotated for trio's own nursery and streams; it only calls
            # start_soon on the one and the Stream API on the other.
            return await wrap_client_stream(
                cast(trio.Nursery, reader), cast(trio.SocketStream, transport), target.host_header,
                target.resource, extra_headers=headers, message_queue_size=message_queue_size)
        finally:
            transport.on_failure = reader.on_failure = None
    return None


def _connect_error(reader: _Reader, transport: _Transport, where: str, timeout_s: float,
                   redact: Callable[[str], str]) -> LiveConnectError:
    if isinstance(reader.error, ConnectionRejected):
        return LiveConnectError(_rejected(reader.error, where, redact))
    if reader.error is not None:
        text = f"cannot open a WebSocket to GPT-Live at {where}: {_describe(reader.error)}"
    elif transport.error is not None:
        text = f"cannot open a WebSocket to GPT-Live at {where}: {transport.error}"
    elif transport.eof:
        text = f"GPT-Live at {where} closed the connection during the WebSocket handshake"
    else:
        text = f"GPT-Live at {where} did not complete the WebSocket handshake within {timeout_s:g} s (timed out)"
    return LiveConnectError(redact(text))


def _rejected(exc: ConnectionRejected, where: str, redact: Callable[[str], str]) -> str:
    status = exc.status_code
    hint = _HINTS.get(status) or ("GPT-Live is having trouble; try again later" if status >= 500
                                  else "check OPENAI_LIVE_URL and OPENAI_LIVE_EXTRA_HEADER")
    text = f"GPT-Live at {where} refused the WebSocket with HTTP {status}: {hint}"
    if detail := _body_detail(exc.body):
        text += f" (server said: {detail})"
    return redact(text)


def _body_detail(body: bytes | None) -> str:
    if not body:
        return ""
    text = body.decode("utf-8", errors="replace")
    try:
        data = json.loads(text)
    except ValueError:
        pass
    else:
        error = data.get("error") if isinstance(data, dict) else None
        if isinstance(error, dict) and isinstance(error.get("message"), str):
            text = error["message"]
        elif isinstance(error, str):
            text = error
    text = " ".join(text.split())
    return text if len(text) <= 200 else text[:199] + "…"


def _connect_failure(exc: OSError) -> str:
    """'connection refused', 'host unreachable', ... from trio's happy-eyeballs OSError."""
    cause = exc.__cause__
    attempts = [e for e in _leaves(cause) if isinstance(e, OSError)] if isinstance(cause, BaseExceptionGroup) else [exc]
    codes = {e.errno for e in attempts}
    words = {
        errno.ECONNREFUSED: "connection refused (nothing listening there)",
        errno.ENETUNREACH: "network unreachable",
        errno.EHOSTUNREACH: "host unreachable",
        errno.ETIMEDOUT: "timed out",
    }
    if len(codes) == 1 and (code := next(iter(codes))) in words:
        return words[code]
    return "; ".join(dict.fromkeys(e.strerror or str(e) for e in attempts)) or str(exc)


# -- small helpers ---------------------------------------------------------------------------------


def _redactor(secret: str) -> Callable[[str], str]:
    def redact(text: str) -> str:
        return text.replace(secret, REDACTED) if secret else text

    return redact


def _describe(exc: BaseException) -> str:
    """An exception and its cause in one line: 'socket connection broken: [Errno 104] ...',
    'TLS failed: [SSL: CERTIFICATE_VERIFY_FAILED] ...'."""
    text, cause = str(exc), exc.__cause__
    if cause is not None and str(cause) and str(cause) not in text:
        text = f"{text}: {cause}" if text else str(cause)
    if isinstance(cause, ssl.SSLError):
        text = f"TLS failed: {text}"
    return text or type(exc).__name__


def _leaves(exc: BaseException | None) -> Iterator[BaseException]:
    if isinstance(exc, BaseExceptionGroup):
        for sub in exc.exceptions:
            yield from _leaves(sub)
    elif exc is not None:
        yield exc
