"""Telnyx wire audio <-> calld's internal audio (16 kHz mono PCM16 little-endian).

The codec for a call is chosen by the `media_format` Telnyx names in its `start` frame
(telnyx.md §3.2, §3.6), never by what the dial asked for. Supported:

- L16 at 16 kHz: passed through, swapping bytes when the wire is big-endian;
- L16 at 8 kHz: same byte-order handling, resampled 8 kHz <-> 16 kHz;
- PCMU and PCMA at 8 kHz: G.711 via libsndfile (`soundfile`), resampled 8 kHz <-> 16 kHz.

L16's byte order on Telnyx's wire is contested (§3.6), so it is a setting: `le`, `be` or
`auto`. In `auto` the codec listens to the first ~200 ms of inbound *speech*, reads it both
ways and keeps the smoother reading (mean |x[n]-x[n-1]| / RMS: a wrong byte order turns
speech into white noise). Until then it plays out little-endian, and inbound it never lets
the wrong reading through: a frame without speech is quiet in its true order and loud
noise in the other (0x0003 read big-endian is 768), so it is decoded in its quieter
reading; speech frames are held back (at most ~200 ms, once per call) and released in the
decided order. The decision and the figures it rests on are kept in `Codec.byte_order`
for the call report.

Resampling uses libsamplerate (`samplerate`), streaming: one resampler per direction per
call keeps its filter state across 20 ms frames, so frame boundaries are seamless and the
result equals resampling the whole signal at once. libsamplerate emits output for every
input frame (about 6 ms of filter delay with `sinc_medium`), unlike libsoxr's streaming
API, which hands out audio in ~100 ms blocks and would add that much latency to the call.
"""

from __future__ import annotations

import io
import math
from dataclasses import dataclass
from typing import Final, Literal

import numpy as np
import numpy.typing as npt
import samplerate
import soundfile

ByteOrder = Literal["le", "be"]
ByteOrderSetting = Literal["le", "be", "auto"]
Samples = npt.NDArray[np.int16]

PCM_RATE: Final = 16000  # calld's internal rate: what GPT-Live takes and gives
FRAME_MS: Final = 20  # Telnyx media messages carry whole 20 ms frames
SUPPORTED: Final = (("L16", 16000), ("L16", 8000), ("PCMU", 8000), ("PCMA", 8000))

RESAMPLER: Final = "sinc_medium"  # libsamplerate converter: ~6 ms delay, passband to 90 % of Nyquist
PROBE_SECONDS: Final = 0.2  # how much inbound speech `auto` listens to before deciding
PROBE_SPEECH_RMS: Final = 300.0  # a frame quieter than this in either reading is not evidence (-41 dBFS)

_G711_SUBTYPE: Final = {"PCMU": "ULAW", "PCMA": "ALAW"}
_EMPTY: Final[Samples] = np.zeros(0, dtype=np.int16)


class CodecError(ValueError):
    """Audio a codec cannot take (e.g. half a sample); the message says why."""


class UnsupportedCodec(CodecError):
    """A media format calld has no codec for."""


def supported_formats() -> str:
    return ", ".join(f"{enc}/{rate} Hz" for enc, rate in SUPPORTED)


# -- byte order decision -------------------------------------------------------------------------


@dataclass(frozen=True)
class ByteOrderDecision:
    """Which byte order L16 audio is read and written in, and how calld came to it.

    method: `configured` (the setting said le/be), `auto` (decided from inbound speech),
    `pending` (auto, nothing decided yet: le is assumed), or `not-applicable` (G.711).
    For `auto`, the roughness of both readings, how many samples of speech were judged,
    and how far into the inbound stream (seconds of wire audio) the decision fell.
    """

    order: ByteOrder | None
    method: Literal["configured", "auto", "pending", "not-applicable"]
    roughness_le: float | None = None
    roughness_be: float | None = None
    samples: int = 0
    at_s: float | None = None

    def __str__(self) -> str:
        match self.method:
            case "configured":
                return f"{self.order} (configured)"
            case "auto":
                return (
                    f"{self.order} (auto: roughness le {self.roughness_le:.3f} vs be {self.roughness_be:.3f} "
                    f"over {self.samples} samples of speech, decided {self.at_s:.2f} s into the stream)"
                )
            case "pending":
                return "le (auto: undecided, not enough speech heard yet; little-endian assumed for playback)"
            case _:
                return "not applicable (8-bit G.711 has no byte order)"


class _ByteOrderProbe:
    """Collects smoothness statistics of both readings over frames that carry speech.

    `observe` tells whether a frame carries speech and which reading is quieter; once
    PROBE_SECONDS of speech were heard, `decision` is set.
    """

    def __init__(self, wire_rate: int) -> None:
        self._rate = wire_rate
        self._needed = int(wire_rate * PROBE_SECONDS)
        self._heard = 0  # all samples seen, speech or not
        self._samples = 0
        self._diffs = 0
        self._abs_diff = {"le": 0.0, "be": 0.0}
        self._energy = {"le": 0.0, "be": 0.0}
        self.decision: ByteOrderDecision | None = None

    def observe(self, payload: bytes) -> tuple[bool, ByteOrder]:
        """(whether the frame carries speech, its quieter reading)."""
        readings: dict[ByteOrder, npt.NDArray[np.float64]] = {
            "le": np.frombuffer(payload, dtype="<i2").astype(np.float64),
            "be": np.frombuffer(payload, dtype=">i2").astype(np.float64),
        }
        n = len(readings["le"])
        self._heard += n
        energy = {order: float(np.dot(x, x)) for order, x in readings.items()}
        quieter: ByteOrder = "be" if energy["be"] < energy["le"] else "le"
        # Quiet in either reading means no speech: near-silence read the wrong way is loud noise.
        if n < 2 or energy[quieter] / n < PROBE_SPEECH_RMS**2:
            return False, quieter
        for order, x in readings.items():
            self._abs_diff[order] += float(np.abs(np.diff(x)).sum())
            self._energy[order] += energy[order]
        self._samples += n
        self._diffs += n - 1
        if self._samples >= self._needed:
            self.decision = self._decide()
        return True, quieter

    def _decide(self) -> ByteOrderDecision:
        rough = {
            order: (self._abs_diff[order] / self._diffs) / math.sqrt(self._energy[order] / self._samples)
            for order in ("le", "be")
        }
        return ByteOrderDecision(
            order="be" if rough["be"] < rough["le"] else "le",
            method="auto",
            roughness_le=rough["le"],
            roughness_be=rough["be"],
            samples=self._samples,
            at_s=self._heard / self._rate,
        )


# -- resampling ----------------------------------------------------------------------------------


def _to_float(samples: Samples) -> npt.NDArray[np.float32]:
    return samples.astype(np.float32) / np.float32(32768.0)


def _to_int16(signal: npt.NDArray[np.float32]) -> Samples:
    return np.clip(np.rint(signal * 32768.0), -32768, 32767).astype(np.int16)


class StreamResampler:
    """One direction of one call's audio, int16 at `rate_in` -> int16 at `rate_out`.

    The filter state carries over from chunk to chunk. `flush()` hands out what the
    filter still holds, so that over a segment exactly len(in) * rate_out / rate_in
    samples come out, then starts afresh (after silence, so without a click).
    """

    def __init__(self, rate_in: int, rate_out: int) -> None:
        self.ratio = rate_out / rate_in
        self._src = samplerate.Resampler(RESAMPLER, channels=1)
        self._fed = 0
        self._made = 0

    def process(self, samples: Samples) -> Samples:
        if not len(samples):
            return _EMPTY
        out = _to_int16(self._src.process(_to_float(samples), self.ratio))
        self._fed += len(samples)
        self._made += len(out)
        return out

    def flush(self) -> Samples:
        owed = round(self._fed * self.ratio) - self._made
        out = _EMPTY
        if owed > 0:
            # Silence pushes the held samples out; end_of_input drains the filter completely.
            pad = np.zeros(math.ceil(owed / self.ratio) + 64, dtype=np.float32)
            out = _to_int16(self._src.process(pad, self.ratio, end_of_input=True)[:owed])
        self.reset()
        return out

    def reset(self) -> None:
        self._src.reset()
        self._fed = self._made = 0


# -- codecs --------------------------------------------------------------------------------------


class Codec:
    """One call's wire format <-> 16 kHz PCM16LE, with per-direction streaming state.

    `decode` takes one inbound payload (RTP payload bytes, no header) and returns 16 kHz
    PCM16LE; `encode` takes 16 kHz PCM16LE (an even number of bytes) and returns wire bytes.
    `flush` returns what the outbound resampler still holds (call it before a mark);
    `reset_outbound` forgets it (after a clear). Inbound and outbound share the byte-order
    decision, so playback follows what `auto` learnt from the business's audio.
    """

    def __init__(self, encoding: str, sample_rate: int, byte_order: ByteOrderSetting) -> None:
        self.encoding = encoding
        self.sample_rate = sample_rate
        self.resampled = sample_rate != PCM_RATE
        self._linear = encoding == "L16"
        self.bytes_per_sample = 2 if self._linear else 1
        self.wire_frame_bytes = sample_rate * FRAME_MS // 1000 * self.bytes_per_sample
        self._probe: _ByteOrderProbe | None = None
        self._held: list[bytes] = []  # inbound speech waiting for the byte-order decision
        if not self._linear:
            self.byte_order = ByteOrderDecision(None, "not-applicable")
        elif byte_order == "auto":
            self.byte_order = ByteOrderDecision("le", "pending")
            self._probe = _ByteOrderProbe(sample_rate)
        else:
            self.byte_order = ByteOrderDecision(byte_order, "configured")
        self._inbound = StreamResampler(sample_rate, PCM_RATE) if self.resampled else None
        self._outbound = StreamResampler(PCM_RATE, sample_rate) if self.resampled else None
        self.silence_byte = self._pack(np.zeros(1, dtype=np.int16))[:1]
        self._as_is()

    def _as_is(self) -> None:
        """Whether 16 kHz L16 little-endian passes through each way untouched (50 payloads a second
        a way): read once here, and again when `auto` decides the byte order."""
        self._out_as_is = self._linear and not self.resampled and self.byte_order.order == "le"
        self._in_as_is = self._out_as_is and self._probe is None

    def __repr__(self) -> str:
        return f"<Codec {self.encoding}/{self.sample_rate} Hz, byte order {self.byte_order}>"

    @property
    def _dtype(self) -> str:
        return ">i2" if self.byte_order.order == "be" else "<i2"

    # wire bytes <-> int16 samples at the wire rate

    def _unpack(self, payload: bytes, order: ByteOrder | None = None) -> Samples:
        if self._linear:
            dtype = self._dtype if order is None else ("<i2" if order == "le" else ">i2")
            return np.frombuffer(payload, dtype=dtype).astype(np.int16)
        samples, _ = soundfile.read(
            io.BytesIO(payload),
            dtype="int16",
            samplerate=self.sample_rate,
            channels=1,
            format="RAW",
            subtype=_G711_SUBTYPE[self.encoding],
        )
        return np.asarray(samples, dtype=np.int16)

    def _pack(self, samples: Samples) -> bytes:
        if self._linear:
            return samples.astype(self._dtype).tobytes()
        out = io.BytesIO()
        soundfile.write(out, samples, self.sample_rate, format="RAW", subtype=_G711_SUBTYPE[self.encoding])
        return out.getvalue()

    # the two directions

    def decode(self, payload: bytes) -> bytes:
        """16 kHz PCM16LE for one inbound payload; b"" while `auto` holds speech back."""
        if self._in_as_is:  # the common case stays a pass-through, bit for bit
            if len(payload) % 2:
                raise CodecError(f"L16 payload has an odd length ({len(payload)} bytes)")
            return payload
        if not payload:
            return b""
        if not self._linear:
            return self._to_pcm(self._unpack(payload))
        if len(payload) % 2:
            raise CodecError(f"L16 payload has an odd length ({len(payload)} bytes)")
        if self._probe is None:
            return self._to_pcm(self._unpack(payload))
        speech, quieter = self._probe.observe(payload)
        if self._probe.decision is not None:
            self.byte_order, self._probe = self._probe.decision, None
            self._as_is()
            held, self._held = [*self._held, payload], []
            return b"".join(self._to_pcm(self._unpack(p)) for p in held)
        if speech:
            self._held.append(payload)
            return b""
        return self._to_pcm(self._unpack(payload, quieter))

    def _to_pcm(self, samples: Samples) -> bytes:
        if self._inbound is not None:
            samples = self._inbound.process(samples)
        return samples.astype("<i2").tobytes()

    def encode(self, pcm16k: bytes) -> bytes:
        if len(pcm16k) % 2:
            raise CodecError(f"PCM16 audio has an odd length ({len(pcm16k)} bytes)")
        if not pcm16k:
            return b""
        if self._out_as_is:
            return pcm16k
        samples = np.frombuffer(pcm16k, dtype="<i2").astype(np.int16)
        if self._outbound is not None:
            samples = self._outbound.process(samples)
        return self._pack(samples) if len(samples) else b""

    def flush(self) -> bytes:
        if self._outbound is None:
            return b""
        samples = self._outbound.flush()
        return self._pack(samples) if len(samples) else b""

    def reset_outbound(self) -> None:
        if self._outbound is not None:
            self._outbound.reset()

    def silence(self, n_bytes: int) -> bytes:
        """n_bytes of wire silence (zero for L16, 0xFF for PCMU, 0xD5 for PCMA)."""
        return self.silence_byte * n_bytes


def codec_for(encoding: str, sample_rate: int, byte_order: ByteOrderSetting = "le", *, channels: int = 1) -> Codec:
    """The codec for a stream's `media_format`. Raises UnsupportedCodec naming the format."""
    if byte_order not in ("le", "be", "auto"):
        raise ValueError(f"byte_order must be 'le', 'be' or 'auto', got {byte_order!r}")
    key = (encoding.upper(), sample_rate)
    if key not in SUPPORTED or channels != 1:
        raise UnsupportedCodec(
            f"Telnyx media format {encoding}/{sample_rate} Hz/{channels} channel(s) is not supported: "
            f"calld decodes mono {supported_formats()}"
        )
    return Codec(key[0], sample_rate, byte_order)
