"""Telnyx media WebSocket frames <-> domain events and outbound JSON text frames.

Telnyx connects to us and sends JSON text frames (telnyx.md §3.2); we answer with
`media`, `mark` and `clear` frames (§3.3). Inside calld audio is always 16 kHz mono
PCM16 little-endian; this module is where Telnyx's wire audio becomes that, and back.
The wire format is the one the `start` frame names (L16 at 16 or 8 kHz, PCMU, PCMA), and
its codec (calld.adapters.codecs) is built from it; L16's byte order is still unverified
(§3.6), so it is a constructor argument, `auto` meaning "learn it from the first speech".
Pure translation: one InboundMedia and one OutboundMedia per call, sharing the inbound
side's codec, no IO.
"""

from __future__ import annotations

import binascii
import logging
from typing import Annotated, Any, Literal

import orjson
import pybase64
from pydantic import BaseModel, ConfigDict, Discriminator, Tag, TypeAdapter, ValidationError

from calld.adapters._wire import problem
from calld.adapters.codecs import ByteOrderSetting, Codec, CodecError, UnsupportedCodec, codec_for
from calld.adapters.telnyx_webhook import decode_client_state
from calld.core.events import (
    DtmfReceived,
    Event,
    MarkEchoed,
    MediaAudio,
    MediaConnected,
    MediaError,
    MediaStarted,
    MediaStopped,
)
from calld.domain.ids import CallControlId, RunId, StreamId

log = logging.getLogger("calld.telnyx")

ByteOrder = Literal["le", "be"]
SAMPLE_RATE = 16000
FRAME_BYTES = 640  # 20 ms of 16 kHz L16; other wire formats: Codec.wire_frame_bytes
_INBOUND_TRACKS = frozenset({"inbound", "inbound_track", None})  # None: track omitted
_b64decode = pybase64.b64decode


class MediaFrameError(ValueError):
    """A frame calld cannot use (bad JSON, missing fields, bad audio); the message says why."""


class UnsupportedMediaFormat(MediaFrameError):
    """The stream's `media_format` is one calld has no codec for; the message lists those it has."""


# -- wire models ---------------------------------------------------------------------------------


class _Wire(BaseModel):
    model_config = ConfigDict(extra="ignore", frozen=True)


class _Frame(_Wire):
    event: str


class _MediaFormat(_Wire):
    encoding: str
    sample_rate: int
    channels: int = 1


class _StartBody(_Wire):
    call_control_id: CallControlId | None = None
    client_state: str | None = None
    media_format: _MediaFormat


class _Start(_Frame):
    stream_id: StreamId  # top-level, not inside `start`
    start: _StartBody


class _MediaBody(_Wire):
    track: str | None = None
    chunk: int  # Telnyx sends counters as strings; lax int parsing accepts both
    payload: str


class _Media(_Frame):
    stream_id: str | None = None  # top-level on every frame; omitted: the socket's one stream
    media: _MediaBody


class _MarkBody(_Wire):
    name: str


class _Mark(_Frame):
    stream_id: str | None = None
    mark: _MarkBody


class _DtmfBody(_Wire):
    digit: str


class _Dtmf(_Frame):
    dtmf: _DtmfBody


class _ErrorBody(_Wire):
    code: int
    title: str
    detail: str | None = None


class _Error(_Frame):
    payload: _ErrorBody


_KNOWN_EVENTS = frozenset({"connected", "start", "media", "mark", "dtmf", "stop", "error"})


def _frame_tag(value: Any) -> str:
    event = value.get("event") if isinstance(value, dict) else getattr(value, "event", None)
    return event if isinstance(event, str) and event in _KNOWN_EVENTS else "other"


_frame = TypeAdapter(
    Annotated[
        Annotated[_Frame, Tag("connected")]
        | Annotated[_Start, Tag("start")]
        | Annotated[_Media, Tag("media")]
        | Annotated[_Mark, Tag("mark")]
        | Annotated[_Dtmf, Tag("dtmf")]
        | Annotated[_Frame, Tag("stop")]
        | Annotated[_Error, Tag("error")]
        | Annotated[_Frame, Tag("other")],
        Discriminator(_frame_tag),
    ]
)


def _explain(exc: ValidationError) -> str:
    """'where: what' per problem; loc[0] is the union tag, already named by the frame's event."""
    parts = []
    for err in exc.errors(include_url=False):
        where = ".".join(map(str, err["loc"][1:])) or "frame"
        parts.append(problem(err, where))
    return "; ".join(parts)


def _check_byte_order(byte_order: str, allowed: tuple[str, ...]) -> None:
    if byte_order not in allowed:
        raise ValueError(f"byte_order must be {' or '.join(map(repr, allowed))}, got {byte_order!r}")


# -- inbound -------------------------------------------------------------------------------------


class InboundMedia:
    """Frames from Telnyx -> domain events, for one call's stream.

    Stateful because `media` is only meaningful after `start` has fixed the format.
    `run_id` is the run named by the start frame's client_state, once it came. `codec` is
    the codec the start frame's media_format chose (None before start): build the call's
    OutboundMedia from it so playback uses the same format and byte-order decision, and
    read `codec.byte_order` for the report. `byte_order` applies to L16 only.
    """

    def __init__(self, byte_order: ByteOrderSetting = "le") -> None:
        _check_byte_order(byte_order, ("le", "be", "auto"))
        self._byte_order: ByteOrderSetting = byte_order
        self.codec: Codec | None = None
        self.run_id: RunId | None = None
        self.stream_id: str | None = None  # the started stream's; every frame's events name theirs

    def audio(self, text: str) -> tuple[bytes, int] | None:
        """(pcm, chunk) of a well-formed media frame once the stream has started, read without
        building an event: the steady uplink's 50 frames a second, which the runtime forwards
        and records before the reducer is told of them as a stretch. pcm is b"" for a frame that
        carries nothing to hear (our own track, an empty payload, speech `auto` holds back).
        None for every other frame, and for a media frame whose fields are not plainly of their
        types: `feed` reads it, and its validating parser accepts or explains it. Raises
        MediaFrameError as `feed` would.

        One function, with nothing it calls but the C parsers and the codec: at 50 frames a
        second a call, every Python call on this path is a measurable share of the daemon
        (docs/performance.md, the thirteenth session)."""
        codec = self.codec
        if codec is None or '"media"' not in text:
            return None
        try:
            frame = orjson.loads(text)
        except (ValueError, RecursionError):
            return None
        if type(frame) is not dict or frame.get("event") != "media" or type(media := frame.get("media")) is not dict:
            return None
        if (stream := self.stream_id) is not None and frame.get("stream_id", stream) != stream:
            return None  # another stream's frame: `feed` names it, and the reducer ignores it
        chunk, payload = media.get("chunk"), media.get("payload")
        if type(chunk) is not int:
            if type(chunk) is not str or not (chunk.isascii() and chunk.isdigit()):
                return None
            chunk = int(chunk)
        if type(payload) is not str:
            return None
        if (track := media.get("track")) is not None:
            if type(track) is not str:
                return None
            if track not in _INBOUND_TRACKS:
                return b"", chunk  # our own playback, when both tracks are streamed
        try:
            wire = _b64decode(payload, validate=True)
        except (binascii.Error, ValueError) as exc:  # ValueError: non-ASCII text in the payload
            raise MediaFrameError(f"bad Telnyx media frame: media.payload is not base64 ({exc})") from None
        try:
            return codec.decode(wire), chunk
        except CodecError as exc:
            raise MediaFrameError(f"bad Telnyx media frame: {exc}") from None

    def feed(self, text: str) -> list[Event]:
        """Translate one text frame. Raises MediaFrameError for frames that are malformed."""
        if (audio := self.audio(text)) is not None:
            pcm, chunk = audio
            return [MediaAudio(pcm, chunk, self.stream_id)] if pcm else []
        try:
            frame = _frame.validate_json(text)
        except ValidationError as exc:
            raise MediaFrameError(f"bad Telnyx media frame: {_explain(exc)}") from None
        match frame:
            case _Start(stream_id=stream_id, start=start):
                if self.codec is not None:  # one stream, one format: another start names another stream
                    raise MediaFrameError(f"bad Telnyx media frame: a second start frame (stream {stream_id}) on a started stream")
                fmt = start.media_format
                try:
                    self.codec = codec_for(fmt.encoding, fmt.sample_rate, self._byte_order, channels=fmt.channels)
                except UnsupportedCodec as exc:
                    raise UnsupportedMediaFormat(str(exc)) from None
                self.run_id = decode_client_state(start.client_state)
                self.stream_id = stream_id
                return [MediaStarted(stream_id, start.call_control_id, fmt.encoding, fmt.sample_rate)]
            case _Media(media=media, stream_id=frame_stream):
                if self.codec is None:
                    raise MediaFrameError("bad Telnyx media frame: media arrived before start (format unknown)")
                if media.track not in _INBOUND_TRACKS:
                    return []  # our own playback, when both tracks are streamed
                pcm = self._decode(self.codec, media.payload)
                # empty: an empty payload, or speech the codec holds until it knows L16's byte order
                return [MediaAudio(pcm, media.chunk, frame_stream or self.stream_id)] if pcm else []
            case _Mark(mark=mark, stream_id=frame_stream):
                return [MarkEchoed(mark.name, frame_stream or self.stream_id)]
            case _Dtmf(dtmf=dtmf):
                return [DtmfReceived(dtmf.digit)]
            case _Error(payload=err):
                log.warning("Telnyx media error %s %s: %s", err.code, err.title, err.detail or "no detail")
                return [MediaError(err.code, err.title)]
            case _Frame(event="connected"):
                return [MediaConnected()]
            case _Frame(event="stop"):
                return [MediaStopped(reason="stop")]
            case _:
                log.info("ignoring Telnyx media frame %r", frame.event)
                return []

    @staticmethod
    def _decode(codec: Codec, payload: str) -> bytes:
        try:
            wire = pybase64.b64decode(payload, validate=True)
        except (binascii.Error, ValueError) as exc:  # ValueError: non-ASCII text in the payload
            raise MediaFrameError(f"bad Telnyx media frame: media.payload is not base64 ({exc})") from None
        try:
            return codec.decode(wire)
        except CodecError as exc:
            raise MediaFrameError(f"bad Telnyx media frame: {exc}") from None


# -- outbound ------------------------------------------------------------------------------------


class OutboundMedia:
    """16 kHz PCM16LE from GPT-Live -> Telnyx text frames, for one call's stream.

    Audio is encoded to the wire format as it comes (the codec's outbound resampler keeps
    its state across deltas), then sent in whole 20 ms frames of that format (640 bytes
    of L16 at 16 kHz, 320 at 8 kHz, 160 of PCMU/PCMA), as few messages as possible (many
    tiny ones cause audible holes). A tail shorter than a frame waits for the next delta;
    a mark first drains the resampler and pads the tail with wire silence, so nothing is
    lost and the mark's echo means everything sent so far has played.

    Build it from the call's codec (`OutboundMedia(codec=inbound.codec, stream_id=...)`);
    without one it speaks L16 at 16 kHz in the given byte order (`le` or `be`).
    """

    def __init__(
        self, byte_order: ByteOrder | None = None, stream_id: str | None = None, *, codec: Codec | None = None
    ) -> None:
        if codec is None:
            byte_order = byte_order or "le"
            _check_byte_order(byte_order, ("le", "be"))  # `auto` needs inbound audio: pass its codec
            codec = codec_for("L16", SAMPLE_RATE, byte_order)
        elif byte_order is not None:
            raise ValueError("give OutboundMedia a codec or a byte_order, not both: the codec decides byte order")
        self.codec = codec
        self._stream_id = stream_id
        self._odd = b""  # half a PCM16 sample, waiting for its other byte
        self._tail = b""  # wire bytes short of a whole frame

    def audio(self, pcm: bytes) -> list[str]:
        codec = self.codec
        if codec._out_as_is and not self._odd and not len(pcm) % 2:  # noqa: SLF001 - read per delta: `auto` may change it
            # The steady downlink (10 deltas a second a call): 16 kHz L16 little-endian goes out as it
            # came, so this is the general way below with the codec's identity and its calls written out.
            buffered = self._tail + pcm if self._tail else pcm
            whole = len(buffered) - len(buffered) % codec.wire_frame_bytes
            self._tail = buffered[whole:]
            if not whole:
                return []
            media = {"payload": pybase64.b64encode(buffered[:whole]).decode("ascii")}
            if self._stream_id is None:
                return [orjson.dumps({"event": "media", "media": media}).decode()]
            return [orjson.dumps({"event": "media", "stream_id": self._stream_id, "media": media}).decode()]
        return self._audio(pcm)

    def _audio(self, pcm: bytes) -> list[str]:
        """`audio`, every case: an odd byte carried, a codec that converts."""
        pcm = self._odd + pcm
        even = len(pcm) - len(pcm) % 2
        self._odd = pcm[even:]
        return self._send(self.codec.encode(pcm[:even]))

    def mark(self, name: str) -> list[str]:
        """Flush everything, then the mark: its echo then means all audio so far has played."""
        frame = self.codec.wire_frame_bytes
        if self._odd:
            wire = self.codec.encode(self._odd + b"\0") + self.codec.flush()
            self._odd = b""
        else:
            wire = self.codec.flush()
        out = self._send(wire)
        if self._tail:
            out.append(self._media(self._tail + self.codec.silence(frame - len(self._tail))))
            self._tail = b""
        out.append(self._message("mark", mark={"name": name}))
        return out

    def clear(self) -> list[str]:
        # unsent audio is as stale as the queued audio Telnyx drops
        self._odd = self._tail = b""
        self.codec.reset_outbound()
        return [self._message("clear")]

    def _send(self, wire: bytes) -> list[str]:
        buffered = self._tail + wire
        whole = len(buffered) - len(buffered) % self.codec.wire_frame_bytes
        self._tail = buffered[whole:]
        return [self._media(buffered[:whole])] if whole else []

    def _media(self, wire: bytes) -> str:
        return self._message("media", media={"payload": pybase64.b64encode(wire).decode("ascii")})

    def _message(self, event: str, **body: Any) -> str:
        message: dict[str, Any] = {"event": event}
        if self._stream_id is not None:
            message["stream_id"] = self._stream_id
        return orjson.dumps(message | body).decode()
