"""The GPT-Live WebSocket: websockets' sans-I/O client protocol on a trio stream we own.

`open_live_socket(url, api_key=...)` is an async context manager yielding a `LiveSocket`
(text in, text out, `SocketClosed` when the session's transport ends). `live_connector(settings)`
binds it to calld's settings, which is what `CallPorts.connect_live` wants.

Why not trio-websocket (the design's first choice): its reader task, channel and lock per message,
and wsproto's framing and masking in Python, were a fifth of the daemon's CPU at 50 calls
(bench/ws_layers.py and the README's load figures). The socket here is calld.adapters.websocket:
frames masked in C, read in the call's own task.

Resource handling: we open the TCP (or TLS) stream ourselves and close it on every way out: the
fd is gone when the context exits, whatever happened. Every close is bounded: the close handshake
gets at most `close_timeout_s` (shielded when the context exits, so even a cancelled call closes
cleanly), then the stream is closed forcefully.

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
from collections.abc import AsyncIterator, Callable, Coroutine, Iterator
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

import trio
from attrs import frozen
from websockets.client import ClientProtocol
from websockets.exceptions import InvalidStatus
from websockets.frames import CloseCode
from websockets.http11 import Response
from websockets.uri import parse_uri

from calld.adapters.websocket import Early, Ending, WebSocket, send_request
from calld.runtime.sockets import MessageSocket

if TYPE_CHECKING:
    from calld.settings import Settings

log = logging.getLogger("calld.live_socket")

REDACTED = "[redacted]"
MAX_MESSAGE_BYTES = 16 << 20  # GPT-Live's largest events (session.updated, long transcripts) are far smaller
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
    """The TCP/TLS stream under the WebSocket. It remembers why it failed (a reset, a TLS error),
    which the close words name."""

    def __init__(self, inner: trio.SocketStream | trio.SSLStream[trio.SocketStream]) -> None:
        self.inner = inner
        self.error: str | None = None
        self.eof = False

    def _failed(self, exc: BaseException | None) -> None:
        if exc is not None and self.error is None:
            self.error = _describe(exc)

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
    def plain_stream(self) -> trio.SocketStream | None:
        """The TCP stream itself when there is no TLS: the WebSocket then reads and writes its socket
        directly. Errors are then named by the WebSocket (`Ending.error`), not recorded here."""
        return self.inner if isinstance(self.inner, trio.SocketStream) else None

    @property
    def raw_socket(self) -> trio.socket.SocketType:
        inner = self.inner
        return inner.socket if isinstance(inner, trio.SocketStream) else inner.transport_stream.socket


class LiveSocket:
    """A connected GPT-Live WebSocket, as a MessageSocket. Made by `open_live_socket`."""

    def __init__(self, transport: _Transport, protocol: ClientProtocol, early: Early, *,
                 close_timeout_s: float, redact: Callable[[str], str]) -> None:
        self._transport = transport
        self._redact = redact
        self._ws = WebSocket(transport, protocol, "gpt-live", close_timeout_s=close_timeout_s, early=early, words=self._words)
        # The WebSocket's own calls, not wrappers around them: 50 messages a second per call.
        # `receive` returns messages that arrived before a server close too; GPT-Live speaks
        # JSON text, and a stray binary frame goes on to the JSON parser, which says so.
        self.send: Callable[[str], Coroutine[Any, Any, None]] = self._ws.send
        self.receive: Callable[[], Coroutine[Any, Any, str]] = self._ws.receive

    async def aclose(self) -> None:
        """Close handshake, waiting at most close_timeout_s for the server's answer; then the fd.

        Idempotent. As trio's `aclose` contract has it, a cancelled caller gets a forceful close
        at once; to give the handshake its time anyway, shield the call (leaving the context
        does, and the runtime's bounded `finally` does).
        """
        try:
            await self._ws.aclose()
        finally:
            await self._transport.close_now()

    def _words(self, _name: str, ending: Ending) -> str:
        match ending.how:
            case "ours":
                text = "closed by calld"
            case "close":
                try:
                    name = CloseCode(ending.code).name
                except ValueError:
                    name = "UNKNOWN"
                text = f"GPT-Live closed the socket: {ending.code} {name}"
                if ending.reason:
                    text += f" ({ending.reason})"
            case "lost":
                text = f"GPT-Live connection lost: {self._transport.error or ending.error} (1006, no close frame)"
            case "eof":
                text = "GPT-Live connection lost: the server ended TCP without a close frame (1006)"
            case "violation":
                text = f"GPT-Live socket failed: {ending.error}"
        return self._redact(text)


@asynccontextmanager
async def open_live_socket(
    url: str,
    *,
    api_key: str,
    extra_header: str = "",
    connect_timeout_s: float = 10.0,
    close_timeout_s: float = 5.0,
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
    try:
        protocol = ClientProtocol(parse_uri(target.display), max_size=MAX_MESSAGE_BYTES)
        response: Response | None = None
        early = Early()
        with trio.CancelScope(deadline=deadline):
            try:
                response, early = await send_request(transport, protocol, [(k.decode("ascii"), v.decode("latin-1")) for k, v in headers])
            except (trio.BrokenResourceError, trio.ClosedResourceError, OSError):
                pass  # the transport remembers why
        if response is None or response.status_code != 101 or protocol.handshake_exc is not None:
            raise _connect_error(protocol.handshake_exc, response, transport, where, connect_timeout_s, redact)
        socket = LiveSocket(transport, protocol, early, close_timeout_s=close_timeout_s, redact=redact)
        log.debug("connected to GPT-Live at %s", where)
        try:
            yield socket
        finally:
            with trio.CancelScope(shield=True):  # bounded by close_timeout_s inside
                await socket.aclose()
    finally:
        await transport.close_now()


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


def _connect_error(exc: Exception | None, response: Response | None, transport: _Transport, where: str, timeout_s: float,
                   redact: Callable[[str], str]) -> LiveConnectError:
    if isinstance(exc, InvalidStatus):
        return LiveConnectError(_rejected(exc.response.status_code, exc.response.body, where, redact))
    if transport.error is not None:
        text = f"cannot open a WebSocket to GPT-Live at {where}: {transport.error}"
    elif transport.eof and response is None:
        text = f"GPT-Live at {where} closed the connection during the WebSocket handshake"
    elif exc is not None:
        text = f"cannot open a WebSocket to GPT-Live at {where}: {_describe(exc)}"
    else:
        text = f"GPT-Live at {where} did not complete the WebSocket handshake within {timeout_s:g} s (timed out)"
    return LiveConnectError(redact(text))


def _rejected(status: int, body: bytes | None, where: str, redact: Callable[[str], str]) -> str:
    hint = _HINTS.get(status) or ("GPT-Live is having trouble; try again later" if status >= 500
                                  else "check OPENAI_LIVE_URL and OPENAI_LIVE_EXTRA_HEADER")
    text = f"GPT-Live at {where} refused the WebSocket with HTTP {status}: {hint}"
    if detail := _body_detail(body):
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
