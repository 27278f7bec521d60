"""A WebSocket (RFC 6455) as a MessageSocket, read in the caller's own task.

trio-websocket runs a reader task per connection and hands every message through a
channel; bridged to a memory socket, that was three task wakeups per message before
the stub world saw it. Here `receive` reads the TCP stream itself and keeps whatever
else came in the same read, so one wakeup serves every message a read brings. Frames
are built and parsed here too (no extensions, no subprotocols: what calld speaks), as
wsproto spent more time per 20 ms frame than the rest of the simulator's frame work.
"""

from __future__ import annotations

import base64
import hashlib
import os
from collections import deque
from collections.abc import Awaitable, Callable
from urllib.parse import urlsplit

import trio

from calld.runtime.sockets import SocketClosed

_READ = 65536
_MAX_HEAD = 65536
_GUID = b"258EAFA5-E914-47DA-95CA-C5AB0DC85B11"
_STREAM_ERRORS = (trio.BrokenResourceError, trio.ClosedResourceError, OSError)
_CONT, _TEXT, _BINARY, _CLOSE, _PING, _PONG = 0x0, 0x1, 0x2, 0x8, 0x9, 0xA


class ProtocolViolation(Exception):
    """The peer broke RFC 6455; `code` is the close code that says so."""

    def __init__(self, code: int, reason: str) -> None:
        super().__init__(reason)
        self.code, self.reason = code, reason


def _xor(payload: bytes, key: bytes) -> bytes:
    """Mask or unmask: one big-integer XOR is far cheaper than a loop over the bytes."""
    n = len(payload)
    pad = (key * (n // 4 + 1))[:n]
    return (int.from_bytes(payload, "little") ^ int.from_bytes(pad, "little")).to_bytes(n, "little")


def frame(opcode: int, payload: bytes, *, mask: bool) -> bytes:
    """One final frame. A client masks every frame (RFC 6455 5.3), a server none."""
    n = len(payload)
    bit = 0x80 if mask else 0
    if n < 126:
        head = bytes((0x80 | opcode, bit | n))
    elif n < 65536:
        head = bytes((0x80 | opcode, bit | 126)) + n.to_bytes(2, "big")
    else:
        head = bytes((0x80 | opcode, bit | 127)) + n.to_bytes(8, "big")
    if mask:
        key = os.urandom(4)
        return head + key + _xor(payload, key)
    return head + payload


def _accept_key(key: str) -> str:
    return base64.b64encode(hashlib.sha1(key.encode() + _GUID).digest()).decode()  # RFC 6455 says SHA-1


class WsSocket:
    """One open WebSocket. Any number of tasks may send; one task at a time receives."""

    def __init__(self, stream: trio.SocketStream, name: str, *, client: bool) -> None:
        self._stream = stream
        self.name = name
        self._client = client  # a client masks what it sends and expects unmasked frames back
        self._buf = bytearray()
        self._inbox: deque[str] = deque()
        self._partial: list[bytes] = []
        self._partial_op = _TEXT
        self._send_lock = trio.StrictFIFOLock()
        self._receiving = False
        self._close_sent = False
        self._closed = False  # the stream is gone (closed by either side)

    async def send(self, text: str) -> None:
        if self._close_sent or self._closed:
            raise SocketClosed(f"{self.name}: closed")
        await self._send_frame(_TEXT, text.encode())

    async def receive(self) -> str:
        """The next message. Messages that came before a close or a protocol error are still returned."""
        while not self._inbox:
            if self._closed:
                raise SocketClosed(f"{self.name}: closed")
            try:
                await self._read()
            except SocketClosed:
                if not self._inbox:
                    raise
        return self._inbox.popleft()

    async def aclose(self, *, code: int = 1000, reason: str = "", timeout_s: float = 2.0) -> None:
        """Close as trio-websocket does: send the close frame, wait a while for the peer's, drop the stream."""
        if self._closed:
            return
        with trio.CancelScope(shield=True):
            with trio.move_on_after(timeout_s):
                await self._send_close(code, reason)
                # A task blocked in receive sees the stream close; otherwise read the peer's close here.
                while not self._closed and not self._receiving:
                    try:
                        await self._read()
                    except SocketClosed:
                        break
            await self._drop()

    async def _send_frame(self, opcode: int, payload: bytes) -> None:
        data = frame(opcode, payload, mask=self._client)
        # Frames from several tasks must not interleave; the lock is taken without a yield when free.
        try:
            try:
                self._send_lock.acquire_nowait()
            except trio.WouldBlock:
                await self._send_lock.acquire()
            try:
                await self._stream.send_all(data)
            finally:
                self._send_lock.release()
        except _STREAM_ERRORS:
            await self._drop()
            raise SocketClosed(f"{self.name}: peer gone") from None

    async def _send_close(self, code: int, reason: str = "") -> None:
        if self._close_sent or self._closed:
            return
        self._close_sent = True
        try:
            await self._send_frame(_CLOSE, code.to_bytes(2, "big") + reason.encode()[:123])
        except SocketClosed:
            pass

    async def _read(self) -> None:
        """One read of the stream, its whole messages queued; a close or the stream's end closes the socket."""
        self._receiving = True
        try:
            data = await self._stream.receive_some(_READ)
        except _STREAM_ERRORS:
            data = b""
        finally:
            self._receiving = False
        if not data:
            await self._drop()
            raise SocketClosed(f"{self.name}: peer gone")
        await self._feed(data)

    async def _feed(self, data: bytes) -> None:
        self._buf += data
        try:
            await self._parse()
        except ProtocolViolation as exc:
            await self._send_close(exc.code, exc.reason)
            await self._drop()
            raise SocketClosed(f"{self.name}: {exc.reason}") from None

    async def _parse(self) -> None:
        buf = self._buf
        while len(buf) >= 2:
            b0, b1 = buf[0], buf[1]
            fin, opcode, masked, n, i = b0 & 0x80, b0 & 0x0F, b1 & 0x80, b1 & 0x7F, 2
            if b0 & 0x70:
                raise ProtocolViolation(1002, "reserved bits set without an extension")
            if bool(masked) == self._client:
                raise ProtocolViolation(1002, "client frames must be masked, server frames must not")
            if n == 126:
                if len(buf) < 4:
                    return
                n, i = int.from_bytes(buf[2:4], "big"), 4
            elif n == 127:
                if len(buf) < 10:
                    return
                n, i = int.from_bytes(buf[2:10], "big"), 10
            end = i + (4 if masked else 0) + n
            if len(buf) < end:
                return
            payload = _xor(bytes(buf[i + 4 : end]), bytes(buf[i : i + 4])) if masked else bytes(buf[i:end])
            del buf[:end]
            await self._on_frame(bool(fin), opcode, payload)
            if self._closed:
                return

    async def _on_frame(self, fin: bool, opcode: int, payload: bytes) -> None:
        if opcode in (_TEXT, _BINARY, _CONT):
            if (opcode == _CONT) != bool(self._partial):
                raise ProtocolViolation(1002, "continuation out of place")
            if opcode != _CONT:
                self._partial_op = opcode
            self._partial.append(payload)
            if fin:
                data = b"".join(self._partial)
                self._partial.clear()
                try:
                    self._inbox.append(data.decode())
                except UnicodeDecodeError:
                    raise ProtocolViolation(1007, "a message is not UTF-8") from None
        elif opcode == _PING:
            await self._send_frame(_PONG, payload)
        elif opcode == _CLOSE:
            # Answer a close the peer started with its own code; a reply to ours ends it.
            await self._send_close(int.from_bytes(payload[:2], "big") if len(payload) >= 2 else 1000)
            await self._drop()
        elif opcode != _PONG:
            raise ProtocolViolation(1002, f"unknown opcode {opcode:#x}")

    async def _drop(self) -> None:
        self._closed = True
        await trio.aclose_forcefully(self._stream)


async def _read_head(stream: trio.SocketStream) -> tuple[list[str], bytes]:
    """An HTTP head's lines and whatever came after it."""
    data = b""
    while b"\r\n\r\n" not in data:
        more = await stream.receive_some(_READ)
        if not more or len(data) > _MAX_HEAD:
            raise SocketClosed("handshake: peer gone")
        data += more
    head, rest = data.split(b"\r\n\r\n", 1)
    return head.decode("latin-1").split("\r\n"), rest


def _headers(lines: list[str]) -> dict[str, str]:
    out: dict[str, str] = {}
    for line in lines:
        name, _, value = line.partition(":")
        out[name.strip().lower()] = value.strip()
    return out


async def ws_connect(url: str, headers: dict[str, str], name: str) -> WsSocket:
    """Open a client WebSocket to `url` (ws://), as Telnyx opens the media stream. SocketClosed if refused."""
    parts = urlsplit(url)
    host = parts.hostname or "127.0.0.1"
    resource = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    try:
        stream = await trio.open_tcp_stream(host, parts.port or 80)
    except OSError as exc:
        raise SocketClosed(f"{name}: cannot connect: {exc}") from None
    key = base64.b64encode(os.urandom(16)).decode()
    extra = "".join(f"{k}: {v}\r\n" for k, v in headers.items())
    request = (f"GET {resource} HTTP/1.1\r\nHost: {host}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
               f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n{extra}\r\n")
    try:
        await stream.send_all(request.encode())
        lines, rest = await _read_head(stream)
        status = lines[0].split(" ", 2)
        if len(status) < 2 or status[1] != "101":
            raise SocketClosed(f"{name}: handshake rejected ({lines[0]})")
        if _headers(lines[1:]).get("sec-websocket-accept") != _accept_key(key):
            raise SocketClosed(f"{name}: handshake answered with the wrong Sec-WebSocket-Accept")
    except BaseException as exc:
        await trio.aclose_forcefully(stream)
        if isinstance(exc, _STREAM_ERRORS):
            raise SocketClosed(f"{name}: handshake failed: {exc}") from None
        raise
    sock = WsSocket(stream, name, client=True)
    if rest:
        await sock._feed(rest)  # frames that came in the same read as the acceptance
    return sock


async def serve_ws(handler: Callable[[WsSocket], Awaitable[None]], host: str, port: int, *,
                   task_status: trio.TaskStatus[int] = trio.TASK_STATUS_IGNORED) -> None:
    """Accept WebSockets on host:port (any path) and run `handler` on each; reports the bound port."""

    async def one(stream: trio.SocketStream) -> None:
        try:
            lines, rest = await _read_head(stream)
            fields = _headers(lines[1:])
            key = fields.get("sec-websocket-key", "")
            if not lines[0].startswith("GET ") or fields.get("upgrade", "").lower() != "websocket" or not key:
                await stream.send_all(b"HTTP/1.1 400 Bad Request\r\ncontent-length: 0\r\nconnection: close\r\n\r\n")
                await trio.aclose_forcefully(stream)
                return
            await stream.send_all(b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                                  b"Sec-WebSocket-Accept: " + _accept_key(key).encode() + b"\r\n\r\n")
        except (SocketClosed, *_STREAM_ERRORS):
            await trio.aclose_forcefully(stream)
            return
        sock = WsSocket(stream, "ws-server", client=False)
        try:
            if rest:
                await sock._feed(rest)
            await handler(sock)
        finally:
            await sock.aclose()

    listeners = await trio.open_tcp_listeners(port, host=host)
    task_status.started(listeners[0].socket.getsockname()[1])
    await trio.serve_listeners(one, listeners)
