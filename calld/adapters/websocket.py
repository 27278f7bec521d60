"""A WebSocket on a trio stream, spoken by websockets' sans-I/O protocol: the lean audio sockets.

Why this and not hypercorn's or trio-websocket's WebSocket: a call's audio is 50 messages a
second each way on each of two sockets. websockets' protocol frames, masks (in C) and parses a
message in a third of wsproto's time (bench/ws_layers.py prints both), and reading in the caller's
own task costs one wakeup per read instead of a reader task, a channel and a lock per message.

`WebSocket` is a MessageSocket (text in, text out, SocketClosed when the connection ends):
- `receive` reads the stream in the caller's task and keeps every message a read brought, so one
  wakeup serves them all. Only one task receives at a time (the call's reader).
- `send` may run beside `receive`, from another task. Whoever writes first drains the protocol's
  whole output queue in order, so frames never overtake each other and the stream never sees two
  writers (trio would raise BusyResourceError).
- `aclose` says goodbye (close frame, then the peer's answer for at most `close_timeout_s`; a
  reader in progress takes that answer) and closes the stream whatever happened. It never raises.

On a plain TCP stream the bytes go straight to the socket underneath, non-blocking: a read waits
for the socket to be readable and then reads once, and a write the kernel takes whole returns
without a trip through the scheduler. trio's own stream calls cost two scheduler trips per
message (the sync attempt's checkpoint, or a wasted read before the wait); at 100 messages a
second per call that was a fifth of the daemon's CPU. TLS streams (wss to GPT-Live) and test
streams go through trio's stream calls as before.

Whole, unfragmented data frames (every audio message) are framed and parsed here, at a frame
boundary, with websockets' C mask: the protocol's generator parser and Frame objects cost three
to four times as much per message (bench/ws_layers.py). Everything else (control frames,
fragments, anything that breaks RFC 6455, every frame once a close has begun) goes to the
protocol, which stays the judge of the connection's state.

The protocol answers pings and close frames itself; a peer that breaks RFC 6455 gets the close code
that says how, and the reader gets SocketClosed naming it.
"""

from __future__ import annotations

import os
import socket as stdlib_socket
import struct
from collections import deque
from collections.abc import Callable, Iterable, Sequence
from typing import Literal

import trio
from attrs import frozen
from websockets.exceptions import InvalidState
from websockets.frames import Frame, Opcode
from websockets.client import ClientProtocol
from websockets.http11 import Request, Response
from websockets.protocol import OPEN, Protocol, Side
from websockets.server import ServerProtocol

try:
    from websockets.speedups import apply_mask
except ImportError:  # pragma: no cover - websockets ships the C extension for CPython on Linux
    from websockets.utils import apply_mask

from calld.runtime.sockets import SocketClosed

READ_BYTES = 65536
MASK_POOL_BYTES = 4096  # a client's masking keys, 1024 at a time: one getrandom call, not one a frame
CLOSE_TIMEOUT_S = 2.0
_HEAD16 = struct.Struct("!BBH").pack  # a frame's header with a 16-bit length
_HEAD64 = struct.Struct("!BBQ").pack
STREAM_ERRORS = (trio.BrokenResourceError, trio.ClosedResourceError, trio.BusyResourceError, OSError)


@frozen
class Early:
    """What the handshake's last read brought after the handshake itself: the frames the protocol
    parsed from it, and whether those bytes ended at a frame boundary. When they did not, the
    protocol is mid-frame, and this connection's frames all go through the protocol."""

    frames: Sequence[Frame] = ()
    aligned: bool = True


def _frame_total(buf: bytes | bytearray, i: int) -> int | None:
    """The length of the frame whose header starts at buf[i], or None if the header is not all here."""
    n = len(buf) - i
    if n < 2:
        return None
    b1 = buf[i + 1]
    length, head = b1 & 0x7F, 2
    if length == 126:
        if n < 4:
            return None
        length, head = int.from_bytes(buf[i + 2:i + 4], "big"), 4
    elif length == 127:
        if n < 10:
            return None
        length, head = int.from_bytes(buf[i + 2:i + 10], "big"), 10
    return head + (4 if b1 & 0x80 else 0) + length


def _at_boundary(tail: bytes | bytearray) -> bool:
    i = 0
    while i < len(tail):
        total = _frame_total(tail, i)
        if total is None or i + total > len(tail):
            return False
        i += total
    return True


def _after_head(seen: bytes | bytearray, frames: list[Frame]) -> Early:
    end = seen.find(b"\r\n\r\n")
    return Early(tuple(frames), end < 0 or _at_boundary(seen[end + 4:]))


@frozen
class Ending:
    """How a connection ended, for the words a SocketClosed carries."""

    how: Literal["close", "eof", "lost", "violation", "ours"]  # close frame / TCP end without one / stream error / RFC 6455 broken / we closed
    code: int = 1006  # the peer's close code; 1006 when none came
    reason: str = ""  # the peer's close reason
    error: str = ""  # the stream error, or the protocol violation


def plain_words(name: str, ending: Ending) -> str:
    match ending.how:
        case "close":
            return f"{name}: closed by the peer (code {ending.code}{', ' + ending.reason if ending.reason else ''})"
        case "eof":
            return f"{name}: the peer ended the connection without a close frame (1006)"
        case "lost":
            return f"{name}: connection lost ({ending.error})"
        case "violation":
            return f"{name}: the peer broke the WebSocket protocol ({ending.error})"
        case "ours":
            return f"{name}: closed"


class WebSocket:
    def __init__(self, stream: trio.abc.Stream, protocol: Protocol, name: str, *, close_timeout_s: float = CLOSE_TIMEOUT_S,
                 early: Early = Early(), words: Callable[[str, Ending], str] = plain_words) -> None:
        """`protocol` is OPEN (its handshake done); `early` is what the handshake's last read
        brought after the handshake itself."""
        self.name = name
        self._stream = stream
        self._protocol = protocol
        self._close_timeout_s = close_timeout_s
        self._messages: deque[str] = deque()
        self._fragments: list[bytes] = []
        self._writing = False
        self._words = words
        self._sock = plain_socket(stream)  # direct I/O when the stream is plain TCP
        self._rx = bytearray()  # bytes of a frame at a boundary of ours, not all here yet
        self._handover = 0  # bytes of a frame the protocol is parsing that are still to come
        self._masked_in = protocol.side is Side.SERVER  # clients mask what they send, servers never (RFC 6455 5.1)
        self._mask_bit = 0x80 if protocol.side is Side.CLIENT else 0
        self._masks = b""  # unused masking keys from the OS's random source (_framed)
        self._mask_at = 0
        self._aligned = early.aligned  # False: the protocol is mid-frame, so it parses everything
        self.ending: Ending | None = None  # why the connection is over, once it is
        self._in_read = False
        self._read_over: trio.Event | None = None  # made by aclose to hear when a reader is done
        self._closed = False
        self._released = False
        for frame in early.frames:
            self._frame(frame)
        if protocol.parser_exc is not None:  # what came with the handshake already broke the protocol
            self._end(Ending("violation", error=_describe(protocol.parser_exc)))

    async def receive(self) -> str:
        while not self._messages:
            if self.ending is not None or self._closed:
                if not self._closed and not self._released:
                    await self._release()
                raise self._closed_error()
            self._in_read = True
            try:
                if (sock := self._sock) is None:
                    data = await self._stream.receive_some(READ_BYTES)
                else:  # _read, inline: a coroutine fewer per message, and in every waiting reader's chain
                    await trio.lowlevel.wait_readable(sock)  # the checkpoint: a cancelled reader leaves here
                    try:
                        data = sock.recv(READ_BYTES)
                    except BlockingIOError:
                        continue  # woken for nothing: wait again
            except STREAM_ERRORS as exc:
                self._end(Ending("lost", error=_describe(exc)))
                continue
            finally:
                self._in_read = False
                if self._read_over is not None:
                    self._read_over.set()
            if data:
                self._take(data)
            else:
                self._protocol.receive_eof()
                self._end(Ending("eof"))
            if self._protocol.writes:  # what reading owes the peer (a pong, a close's answer); mostly nothing
                await self._write()
        return self._messages.popleft()

    async def send(self, text: str) -> None:
        await trio.lowlevel.checkpoint_if_cancelled()  # a cancelled sender stops here; a send rarely waits
        if self.ending is not None or self._closed:
            raise self._closed_error()
        frame = self._framed(text)
        if frame is None:
            try:
                self._protocol.send_text(text.encode())
            except InvalidState:  # a close frame came in: the protocol takes no more messages
                raise self._closed_error() from None
        elif self._sock is not None and not self._writing and not self._protocol.writes:
            # Nothing ahead of it: straight to the socket, and done when the kernel takes it whole
            # (almost always). Whatever is left, or went wrong, is the write step's to finish or name.
            try:
                sent = self._sock.send(frame)
            except OSError:
                sent = 0
            if sent == len(frame):
                return
            self._protocol.writes.append(frame[sent:])
        else:
            self._protocol.writes.append(frame)  # behind what is queued: the write step keeps the order
        await self._write()

    async def flush(self) -> None:
        """Write what the protocol has queued (a handshake's answer). Raises SocketClosed."""
        await self._write()

    async def aclose(self, code: int = 1000, reason: str = "") -> None:
        """Close frame, the peer's answer within close_timeout_s, then the stream. Idempotent.

        As trio's `aclose` contract has it, a cancelled caller gets a forceful close at once; to
        give the goodbye its time anyway, shield the call (every caller in calld does)."""
        if self._closed:
            return
        self._closed = True
        try:
            with trio.move_on_after(self._close_timeout_s):
                await self._goodbye(code, reason)
        finally:
            await trio.aclose_forcefully(self._stream)
            self._end(Ending("ours"))

    async def _goodbye(self, code: int, reason: str) -> None:
        try:
            if self._protocol.state is OPEN:
                self._protocol.send_close(code, reason)
            await self._write()  # our close frame, or the one the protocol queued when the peer broke it
            # The peer's close frame; a client also waits for the server to end the stream, as
            # the server closes TCP first (RFC 6455 7.1.1).
            while not self._protocol.reader.eof and not self._released:
                if self._protocol.close_rcvd is not None and self._protocol.side is Side.SERVER:
                    return
                if self._in_read:  # a reader is reading: it takes the answer; look again once it is done
                    self._read_over = trio.Event()
                    await self._read_over.wait()
                    continue
                data = await self._read()
                if not data:
                    self._protocol.receive_eof()
                    return
                self._take(data)
                await self._write()
        except (*STREAM_ERRORS, SocketClosed):
            pass

    # -- inside ------------------------------------------------------------------------------------

    def _framed(self, text: str) -> bytes | None:
        """A text message framed by us; None when the protocol must frame it (not OPEN, or
        mid-fragment), which also says why it cannot."""
        protocol = self._protocol
        if protocol.state is not OPEN or protocol.expect_continuation_frame or protocol.extensions:
            return None
        payload = text.encode()
        n = len(payload)
        mask_bit = self._mask_bit
        if n < 126:
            head = bytes((0x81, mask_bit | n))
        elif n < 65536:
            head = _HEAD16(0x81, mask_bit | 126, n)
        else:
            head = _HEAD64(0x81, mask_bit | 127, n)
        if not mask_bit:
            return head + payload
        # A fresh masking key: RFC 6455 5.3 asks for keys a peer cannot predict, so each is four bytes
        # of os.urandom, used once, read 1024 keys at a time (a client sends 50 frames a second).
        at = self._mask_at
        if at + 4 > len(self._masks):
            self._masks, at = os.urandom(MASK_POOL_BYTES), 0
        self._mask_at = at + 4
        mask = self._masks[at:at + 4]
        return head + mask + apply_mask(payload, mask)

    def _fast_in(self) -> bool:
        protocol = self._protocol
        return (protocol.state is OPEN and self._aligned and not self._fragments and protocol.parser_exc is None
                and not protocol.extensions)

    def _take(self, data: bytes | bytearray) -> None:
        """Parse what a read brought: whole simple data frames here, the rest by the protocol.

        Each frame's header is read once, in this loop, and whether the fast way still applies is
        asked again only after the protocol was fed (nothing else changes it within a read): this
        is all of calld's reading of a message, some 60 a second a call."""
        if self._rx:
            self._rx += data
            buf: bytes | bytearray = self._rx
        else:
            buf = data
        i, n = 0, len(buf)
        limit = self._protocol.max_message_size
        masked_in = 0x80 if self._masked_in else 0
        messages = self._messages
        fast = self._fast_in()
        while i < n:
            if self._handover:  # inside a frame the protocol is parsing: its bytes go there
                take = min(self._handover, n - i)
                self._handover -= take
                self._feed(buf[i:i + take])
                i += take
                fast = self._fast_in()
                continue
            if not fast:  # a close has begun, or the peer broke the protocol: all of it goes there
                self._feed(buf[i:])
                i = n
                break
            left = n - i
            if left < 2:
                break
            b0, b1 = buf[i], buf[i + 1]
            length = b1 & 0x7F
            if length < 126:
                head = 2
            elif length == 126:
                if left < 4:
                    break
                length, head = int.from_bytes(buf[i + 2:i + 4], "big"), 4
            else:
                if left < 10:
                    break
                length, head = int.from_bytes(buf[i + 2:i + 10], "big"), 10
            masked = b1 & 0x80
            if masked:
                head += 4
            total = head + length
            # FIN set, no RSV bits, text or binary (0x81, 0x82), masked as this side expects
            if (b0 != 0x81 and b0 != 0x82) or masked != masked_in or (limit is not None and length > limit):
                self._handover = total  # a control frame, a fragment, or a violation the protocol names
                continue
            if left < total:
                break  # the rest of this frame is still to come
            if masked:
                payload = apply_mask(buf[i + head:i + total], buf[i + head - 4:i + head])
            else:
                payload = buf[i + head:i + total]
            # Telnyx and GPT-Live send text; bytes that are not UTF-8 (or a binary message) are read
            # as text all the same, and the JSON parser says what is wrong with them.
            messages.append(payload.decode("utf-8", "replace"))
            i += total
        if buf is self._rx:
            del self._rx[:i]
        elif i < n:
            self._rx += buf[i:]

    def _feed(self, data: bytes | bytearray) -> None:
        self._protocol.receive_data(bytes(data))
        for frame in self._protocol.events_received():
            self._frame(frame)
        if self._protocol.parser_exc is not None:
            self._end(Ending("violation", error=_describe(self._protocol.parser_exc)))

    def _frame(self, frame: Frame) -> None:
        match frame.opcode:
            case Opcode.TEXT | Opcode.BINARY | Opcode.CONT:
                if not frame.fin:
                    self._fragments.append(frame.data)
                    return
                data = b"".join((*self._fragments, frame.data)) if self._fragments else frame.data
                self._fragments.clear()
                # Telnyx and GPT-Live send text; a binary message is read as text all the same.
                self._messages.append(bytes(data).decode("utf-8", "replace"))
            case Opcode.CLOSE:
                close = self._protocol.close_rcvd
                self._end(Ending("close", code=close.code, reason=close.reason) if close is not None else Ending("eof"))
            case _:
                pass  # ping (the protocol answers it) and pong

    async def _release(self) -> None:
        """The peer ended the connection: send what the protocol still owes it (the answer to its
        close), then let the stream go, so a socket nobody closes leaves no fd behind."""
        self._released = True
        try:
            await self._write()
        except SocketClosed:
            pass
        await trio.aclose_forcefully(self._stream)

    def _end(self, ending: Ending) -> None:
        if self.ending is None:
            self.ending = ending

    def _closed_error(self) -> SocketClosed:
        # After our own close, that is what the caller hears, whatever the peer did meanwhile.
        return SocketClosed(self._words(self.name, Ending("ours") if self._closed else self.ending or Ending("ours")))

    async def _write(self) -> None:
        """Write everything the protocol has queued. One writer at a time: a task that finds a write
        in progress leaves its frames to that writer, which takes the queue again before it stops."""
        if self._writing:
            return
        self._writing = True
        try:
            while chunks := self._protocol.data_to_send():
                for chunk in chunks:
                    if chunk:
                        await self._send_bytes(chunk)
                    elif isinstance(self._stream, trio.SocketStream):
                        await self._stream.send_eof()  # the protocol's end-of-stream: half-close
        except STREAM_ERRORS as exc:
            self._end(Ending("lost", error=_describe(exc)))
            if not self._closed and not self._released:  # the stream is broken: let the fd go now, not at GC
                self._released = True
                await trio.aclose_forcefully(self._stream)
            raise self._closed_error() from None
        finally:
            self._writing = False


    async def _read(self) -> bytes:
        sock = self._sock
        if sock is None:
            return await self._stream.receive_some(READ_BYTES)
        while True:
            await trio.lowlevel.wait_readable(sock)  # the checkpoint: a cancelled reader leaves here
            try:
                return sock.recv(READ_BYTES)
            except BlockingIOError:
                pass

    async def _send_bytes(self, data: bytes) -> None:
        sock = self._sock
        if sock is None:
            await self._stream.send_all(data)
            return
        try:
            sent = sock.send(data)
        except BlockingIOError:
            sent = 0
        view = memoryview(data)
        while sent < len(data):  # the kernel's buffer is full: wait for room, as trio's send_all would
            await trio.lowlevel.wait_writable(sock)
            try:
                sent += sock.send(view[sent:])
            except BlockingIOError:
                pass


def plain_socket(stream: trio.abc.Stream) -> stdlib_socket.socket | None:
    """The non-blocking stdlib socket under a plain trio TCP stream (or a wrapper that names one as
    `plain_stream`), for direct I/O; None for TLS and anything else, which keep trio's calls."""
    inner = getattr(stream, "plain_stream", stream)
    if isinstance(inner, trio.SocketStream):
        sock = getattr(inner.socket, "_sock", None)  # trio's wrapped socket; absent, the slow path serves
        if isinstance(sock, stdlib_socket.socket):
            return sock
    return None


def _describe(exc: BaseException) -> str:
    return str(exc) or type(exc).__name__


# -- handshakes ------------------------------------------------------------------------------------


async def read_request(stream: trio.abc.Stream, protocol: ServerProtocol) -> tuple[Request | None, Early]:
    """Read a client's upgrade request: (it, what came after it in the same read), or (None, Early())
    when the stream ended or failed first, or the bytes are not HTTP (`protocol.handshake_exc` says
    so). The caller bounds it and answers (`protocol.accept` or `reject`, then `send_response`)."""
    seen = bytearray()
    while True:
        try:
            data = await stream.receive_some(READ_BYTES)
        except STREAM_ERRORS:
            return None, Early()
        if not data:
            return None, Early()
        seen += data
        protocol.receive_data(data)
        if protocol.handshake_exc is not None:
            return None, Early()
        if events := protocol.events_received():
            request = events[0]
            assert isinstance(request, Request)
            return request, _after_head(seen, [e for e in events[1:] if isinstance(e, Frame)])


async def write_pending(stream: trio.abc.Stream, protocol: Protocol) -> bool:
    """Write what the protocol has queued (a handshake's answer) before any WebSocket exists; True if
    there was anything. A peer gone meanwhile is not an error here: the connection is ending anyway."""
    chunks = [c for c in protocol.data_to_send() if c]
    try:
        for chunk in chunks:
            await stream.send_all(chunk)
    except STREAM_ERRORS:
        pass
    return bool(chunks)


async def send_request(stream: trio.abc.Stream, protocol: ClientProtocol,
                       headers: Iterable[tuple[str, str]] = ()) -> tuple[Response | None, Early]:
    """Send the upgrade and read the answer: (the response, what came after it), or (None, Early())
    when the stream failed or ended first. Stream errors propagate (the caller names them); the
    caller bounds it. A refusal or a bad answer leaves `protocol.handshake_exc` set."""
    request = protocol.connect()
    for name, value in headers:
        request.headers[name] = value
    protocol.send_request(request)
    await stream.send_all(b"".join(protocol.data_to_send()))
    seen = bytearray()
    while True:
        data = await stream.receive_some(READ_BYTES)
        if data:
            seen += data
            protocol.receive_data(data)
        else:
            protocol.receive_eof()  # a refusal's body may run to the end of the stream
        events = protocol.events_received()
        if events and isinstance(events[0], Response):
            return events[0], _after_head(seen, [e for e in events[1:] if isinstance(e, Frame)])
        if not data or protocol.handshake_exc is not None:
            return None, Early()
