"""Telnyx media WebSocket frames <-> domain events and outbound JSON text frames.

Telnyx connects to us and sends JSON text frames (telnyx.md §3.2); we answer with
`media`, `mark` and `clear` frames (§3.3). Inside calld audio is always 16 kHz mono
PCM16 little-endian; this module is where Telnyx's L16 becomes that, and back. Its
byte order on the wire is still unverified (§3.6), so it is a constructor argument.
Pure translation: one InboundMedia and one OutboundMedia per call, no IO.
"""

from __future__ import annotations

import base64
import binascii
import json
import logging
from array import array
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Discriminator, Tag, TypeAdapter, ValidationError

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
FRAME_BYTES = 640  # 20 ms of 16 kHz PCM16: Telnyx wants whole 20 ms frames per message
_INBOUND_TRACKS = frozenset({"inbound", "inbound_track", None})  # None: track omitted


class MediaFrameError(ValueError):
    """A frame calld cannot use (bad JSON, missing fields, bad audio); the message says why."""


class UnsupportedMediaFormat(MediaFrameError):
    """The stream's `media_format` is one calld cannot decode yet."""


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
    media: _MediaBody


class _MarkBody(_Wire):
    name: str


class _Mark(_Frame):
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
        match err["type"]:
            case "json_invalid":
                what = f"not valid JSON ({err['ctx']['error']})"
            case "missing":
                what = "missing"
            case "model_type" | "model_attributes_type" | "dict_type":
                what = "not a JSON object"
            case _:
                what = err["msg"].removeprefix("Value error, ")
        parts.append(f"{where}: {what}")
    return "; ".join(parts)


def _swap16(pcm: bytes) -> bytes:
    samples = array("h", pcm)
    samples.byteswap()
    return samples.tobytes()


def _check_byte_order(byte_order: str) -> bool:
    """True when samples must be swapped (wire is big-endian)."""
    if byte_order not in ("le", "be"):
        raise ValueError(f"byte_order must be 'le' or 'be', got {byte_order!r}")
    return byte_order == "be"


# -- inbound -------------------------------------------------------------------------------------


class InboundMedia:
    """Frames from Telnyx -> domain events, for one call's stream.

    Stateful because `media` is only meaningful after `start` has fixed the format.
    `run_id` is the run named by the start frame's client_state, once it came.
    """

    def __init__(self, byte_order: ByteOrder = "le") -> None:
        self._swap = _check_byte_order(byte_order)
        self._started = False
        self.run_id: RunId | None = None

    def feed(self, text: str) -> list[Event]:
        """Translate one text frame. Raises MediaFrameError for frames that are malformed."""
        try:
            frame = _frame.validate_json(text)
        except ValidationError as exc:
            raise MediaFrameError(f"bad Telnyx media frame: {_explain(exc)}") from None
        match frame:
            case _Start(stream_id=stream_id, start=start):
                fmt = start.media_format
                if (fmt.encoding.upper(), fmt.sample_rate, fmt.channels) != ("L16", SAMPLE_RATE, 1):
                    raise UnsupportedMediaFormat(
                        f"Telnyx media format {fmt.encoding}/{fmt.sample_rate} Hz/{fmt.channels} channel(s) "
                        "is not supported: calld decodes only L16 at 16 kHz mono so far"
                    )
                self._started = True
                self.run_id = decode_client_state(start.client_state)
                return [MediaStarted(stream_id, start.call_control_id, fmt.encoding, fmt.sample_rate)]
            case _Media(media=media):
                if not self._started:
                    raise MediaFrameError("bad Telnyx media frame: media arrived before start (format unknown)")
                if media.track not in _INBOUND_TRACKS:
                    return []  # our own playback, when both tracks are streamed
                return [MediaAudio(self._decode(media.payload), media.chunk)]
            case _Mark(mark=mark):
                return [MarkEchoed(mark.name)]
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

    def _decode(self, payload: str) -> bytes:
        try:
            pcm = base64.b64decode(payload, validate=True)
        except binascii.Error as exc:
            raise MediaFrameError(f"bad Telnyx media frame: media.payload is not base64 ({exc})") from None
        if len(pcm) % 2:
            raise MediaFrameError(f"bad Telnyx media frame: L16 payload has an odd length ({len(pcm)} bytes)")
        return _swap16(pcm) if self._swap else pcm


# -- outbound ------------------------------------------------------------------------------------


class OutboundMedia:
    """16 kHz PCM16LE from GPT-Live -> Telnyx text frames, for one call's stream.

    Every media message carries whole 20 ms frames (shorter chunks are out of spec), as
    few messages as possible (many tiny ones cause audible holes). A tail shorter than
    a frame waits for the next delta; a mark pads it with silence so nothing is lost.
    """

    def __init__(self, byte_order: ByteOrder = "le", stream_id: str | None = None) -> None:
        self._swap = _check_byte_order(byte_order)
        self._stream_id = stream_id
        self._tail = b""

    def audio(self, pcm: bytes) -> list[str]:
        buffered = self._tail + pcm
        whole = len(buffered) - len(buffered) % FRAME_BYTES
        self._tail = buffered[whole:]
        return [self._media(buffered[:whole])] if whole else []

    def mark(self, name: str) -> list[str]:
        """Flush the tail, then the mark: its echo then means all audio so far has played."""
        out = []
        if self._tail:
            out.append(self._media(self._tail.ljust(FRAME_BYTES, b"\0")))
            self._tail = b""
        out.append(self._message("mark", mark={"name": name}))
        return out

    def clear(self) -> list[str]:
        self._tail = b""  # unsent audio is as stale as the queued audio Telnyx drops
        return [self._message("clear")]

    def _media(self, pcm: bytes) -> str:
        wire = _swap16(pcm) if self._swap else pcm
        return self._message("media", media={"payload": base64.b64encode(wire).decode("ascii")})

    def _message(self, event: str, **body: Any) -> str:
        message: dict[str, Any] = {"event": event}
        if self._stream_id is not None:
            message["stream_id"] = self._stream_id
        return json.dumps(message | body, separators=(",", ":"))
