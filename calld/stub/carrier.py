"""The stub carrier's line: what Telnyx does to audio on the wire, written apart from calld's own
codecs (adapters/codecs.py) so a bug there cannot cancel out here.

Inbound (the business to calld) goes out in the format the media start frame announces; outbound
(calld to the business) is played as the dial asked (`stream_bidirectional_codec` and its rate),
whatever the start frame said. L16 honours the carrier's byte order. G.711 follows the classic
ITU-T G.711 segment tables; 8 kHz audio is taken from 16 kHz by averaging pairs, and brought back
by repeating samples (crude, and enough: the stub's watermarked words only survive lossless lines).
"""

from __future__ import annotations

import struct

_SEG_END = (0x1F, 0x3F, 0x7F, 0xFF, 0x1FF, 0x3FF, 0x7FF, 0xFFF)
_ULAW_BIAS = 0x84
_ULAW_CLIP = 32635


def _alaw(sample: int) -> int:
    pcm = sample >> 3
    if pcm >= 0:
        mask = 0xD5
    else:
        mask, pcm = 0x55, -pcm - 1
    seg = next((i for i, end in enumerate(_SEG_END) if pcm <= end), 8)
    if seg >= 8:
        return 0x7F ^ mask
    aval = seg << 4
    aval |= (pcm >> 1) & 0x0F if seg < 2 else (pcm >> seg) & 0x0F
    return aval ^ mask


def _alaw_linear(byte: int) -> int:
    a = byte ^ 0x55
    t = (a & 0x0F) << 4
    seg = (a & 0x70) >> 4
    if seg == 0:
        t += 8
    else:
        t = (t + 0x108) << (seg - 1) if seg > 1 else t + 0x108
    return t if a & 0x80 else -t


def _ulaw(sample: int) -> int:
    sign = 0x80 if sample < 0 else 0
    mag = min(abs(sample), _ULAW_CLIP) + _ULAW_BIAS
    exponent = max(0, min(7, mag.bit_length() - 8))
    mantissa = (mag >> (exponent + 3)) & 0x0F
    return ~(sign | exponent << 4 | mantissa) & 0xFF


def _ulaw_linear(byte: int) -> int:
    b = ~byte & 0xFF
    mag = (((b & 0x0F) << 3) + _ULAW_BIAS) << ((b >> 4) & 0x07)
    mag -= _ULAW_BIAS
    return -mag if b & 0x80 else mag


class LineFormat:
    """One direction of the carrier's line: 16 kHz PCM16LE <-> the wire payload."""

    def __init__(self, encoding: str, rate: int, byte_order: str = "le") -> None:
        self.encoding, self.rate, self.byte_order = encoding.upper(), int(rate), byte_order
        if self.encoding not in ("L16", "PCMU", "PCMA") or self.rate not in (8000, 16000):
            raise ValueError(f"the stub carrier does not speak {encoding}/{rate}")

    @property
    def plain(self) -> bool:
        """16 kHz little-endian L16: the bytes go through as they are."""
        return (self.encoding, self.rate, self.byte_order) == ("L16", 16000, "le")

    def encode(self, pcm16k: bytes) -> bytes:
        samples = list(struct.unpack(f"<{len(pcm16k) // 2}h", pcm16k[: len(pcm16k) // 2 * 2]))
        if self.rate == 8000:
            samples = [(samples[i] + samples[i + 1]) // 2 for i in range(0, len(samples) - 1, 2)]
        if self.encoding == "L16":
            return struct.pack(f"{'>' if self.byte_order == 'be' else '<'}{len(samples)}h", *samples)
        table = _alaw if self.encoding == "PCMA" else _ulaw
        return bytes(table(s) for s in samples)

    def decode(self, payload: bytes) -> bytes:
        if self.encoding == "L16":
            n = len(payload) // 2
            samples = list(struct.unpack(f"{'>' if self.byte_order == 'be' else '<'}{n}h", payload[: n * 2]))
        else:
            table = _alaw_linear if self.encoding == "PCMA" else _ulaw_linear
            samples = [table(b) for b in payload]
        if self.rate == 8000:
            samples = [s for s in samples for _ in (0, 1)]
        return struct.pack(f"<{len(samples)}h", *samples)
