"""The call handler's codec wiring, end to end through a stub carrier that speaks the line's format:
L16 big-endian (as configured, and as `auto` learns it), and a start frame announcing another
encoding than the dial asked for (decoded as announced, while calld's own audio stays in the codec
and rate its dial asked for: that is what the carrier plays)."""

from __future__ import annotations

import math
import struct

import pytest

from calld.stub.carrier import LineFormat
from tests.stubcall import stub_call, variant


def tone(n: int = 320, amp: int = 8000) -> bytes:
    return struct.pack(f"<{n}h", *(round(amp * math.sin(2 * math.pi * 440 * i / 16000)) for i in range(n)))


@pytest.mark.parametrize("encoding", ["PCMU", "PCMA"])
def test_the_stub_carrier_g711_round_trips_within_its_quantisation(encoding):
    line = LineFormat(encoding, 8000)
    pcm = tone()
    wire = line.encode(pcm)
    assert len(wire) == 160  # 20 ms at 8 kHz, one byte a sample
    back = struct.unpack("<320h", line.decode(wire))
    orig = struct.unpack("<320h", pcm)
    err = max(abs(a - b) for a, b in zip(back[::2], orig[::2], strict=True))
    assert err < 8000 * 0.12  # G.711's steps near the peak, plus the crude 8 kHz trip


def test_the_stub_carrier_l16_honours_its_byte_order():
    pcm = tone()
    be = LineFormat("L16", 16000, "be")
    assert be.encode(pcm) == struct.pack(">320h", *struct.unpack("<320h", pcm))
    assert be.decode(be.encode(pcm)) == pcm and not be.plain and LineFormat("L16", 16000).plain


async def test_l16_big_endian_as_configured_end_to_end(autojump_clock, tmp_path):
    run = await stub_call(tmp_path, variant("hours", carrier_byte_order="be"), telnyx_l16_byte_order="be")
    assert run.result.status == "answered"  # GPT-Live heard the business: inbound decoded big-endian
    assert "automated" in run.world.heard_on_line  # the business heard the agent: outbound encoded big-endian
    assert run.report["media"]["byte_order"] == "be (configured)"


async def test_l16_byte_order_setting_is_applied(autojump_clock, tmp_path):
    # The carrier is big-endian but calld is told little-endian: neither side hears the other.
    run = await stub_call(tmp_path, variant("hours", carrier_byte_order="be"), telnyx_l16_byte_order="le")
    assert run.result.status != "answered" and run.world.heard_on_line == []


async def test_l16_auto_learns_big_endian_from_the_business(autojump_clock, tmp_path):
    run = await stub_call(tmp_path, variant("hours", carrier_byte_order="be"), telnyx_l16_byte_order="auto")
    assert run.result.status == "answered"
    assert "automated" in run.world.heard_on_line  # playback follows what auto learnt
    assert run.report["media"]["byte_order"].startswith("be (auto")


@pytest.mark.parametrize("encoding", ["PCMA", "PCMU", "L16"])
async def test_a_start_frame_announcing_another_codec_leaves_our_audio_as_dialled(autojump_clock, tmp_path, encoding):
    # The dial asks for L16 at 16 kHz both ways; the carrier's start frame announces 8 kHz (G.711 or L16) for the
    # inbound leg. Inbound is decoded as announced; what calld sends must stay L16 16 kHz, which is what the
    # carrier plays: otherwise the business hears noise.
    run = await stub_call(tmp_path, variant("hours", media_encoding=encoding, media_rate=8000))
    assert (run.report["media"]["encoding"], run.report["media"]["sample_rate"]) == (encoding, 8000)
    assert run.report["media"]["resampled"] is True
    assert run.world.dial_requests[0]["stream_bidirectional_codec"] == "L16"
    assert "automated" in run.world.heard_on_line and "behalf" in run.world.heard_on_line
    assert run.world.wire_bytes_received % 640 == 0  # whole 20 ms frames of L16 at 16 kHz
