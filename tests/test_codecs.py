"""Codecs: round-trip quality on speech, L16 byte-order detection, streaming state, framing.

Each measurement runs on two signals: real synthesized speech when espeak-ng is installed
(`apt-get install espeak-ng`; the WAV is made at test time, nothing is downloaded; without
it this one falls back too), and a vowel-like harmonic signal with a pitch contour, moving
formants and a syllable envelope. Quality is
measured as SNR after aligning the two signals (the resampler's delay is searched for, not
assumed); the measured figures are printed (`pytest -s`) and shown in every failure.
"""

from __future__ import annotations

import base64
import json
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

import numpy as np
import numpy.typing as npt
import pytest
import samplerate
import soundfile

from calld.adapters.codecs import (
    PCM_RATE,
    SUPPORTED,
    ByteOrderDecision,
    Codec,
    CodecError,
    UnsupportedCodec,
    codec_for,
)
from calld.adapters.fixtures import load_fixture
from calld.adapters.telnyx_media import InboundMedia, MediaFrameError, OutboundMedia, UnsupportedMediaFormat
from calld.core.events import MediaAudio, MediaStarted

Signal = npt.NDArray[np.float64]
SPEECH_TEXT = (
    "Hello, this is Sam calling on behalf of Alex. Could you tell me whether you are open on "
    "Saturday morning, and until what time? Thank you very much."
)
PEAK = 0.5  # -6 dBFS: a healthy telephone level with headroom


# -- test audio ----------------------------------------------------------------------------------


def vowel_speech(seconds: float = 3.0, rate: int = PCM_RATE) -> Signal:
    """Voiced speech stand-in: harmonics of a gliding pitch through moving formants, in syllables."""
    t = np.arange(int(seconds * rate)) / rate
    f0 = 125 + 25 * np.sin(2 * np.pi * 0.6 * t) + 12 * np.sin(2 * np.pi * 2.1 * t + 1.0)
    phase = 2 * np.pi * np.cumsum(f0) / rate
    # F1..F3 of /a/ /i/ /u/ /e/ /o/, gliding from one syllable's vowel to the next
    vowels = np.array([[730, 1090, 2440], [270, 2290, 3010], [300, 870, 2240], [530, 1840, 2480], [570, 840, 2410]])
    syllable_s = 0.28
    index = (t / syllable_s).astype(int)
    within = (t / syllable_s) % 1.0
    glide = (0.5 - 0.5 * np.cos(np.pi * np.clip((within - 0.6) / 0.4, 0, 1)))[:, None]
    formants = vowels[index % len(vowels)] * (1 - glide) + vowels[(index + 1) % len(vowels)] * glide
    bandwidths, gains = np.array([90.0, 110.0, 160.0]), np.array([1.0, 0.5, 0.25])
    signal = np.zeros_like(t)
    for k in range(1, 60):
        fk = k * f0
        amplitude = (gains / np.sqrt(1 + ((fk[:, None] - formants) / bandwidths) ** 2)).sum(axis=1) / np.sqrt(k)
        amplitude[fk > 0.45 * rate] = 0
        signal += amplitude * np.sin(k * phase)
    envelope = np.sin(np.pi * np.clip(within / 0.85, 0, 1)) ** 0.6 * (within < 0.85)
    envelope *= 0.6 + 0.4 * np.sin(2 * np.pi * 0.35 * t) ** 2
    envelope[(t > 1.3) & (t < 1.6)] = 0  # a pause between phrases
    return signal * envelope


def espeak_speech(directory: Path) -> Signal | None:
    espeak = shutil.which("espeak-ng")
    if espeak is None:
        return None
    wav = directory / "speech.wav"
    subprocess.run([espeak, "-v", "en-us", "-s", "160", "-w", str(wav), SPEECH_TEXT], check=True, timeout=60)
    audio, rate = soundfile.read(wav, dtype="float32")
    return np.asarray(samplerate.resample(audio, PCM_RATE / rate, "sinc_best"), dtype=np.float64)


@pytest.fixture(scope="module", params=["spoken", "synthesized"])
def speech(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> tuple[str, Signal]:
    """(what it is, 16 kHz full-band speech as floats): espeak-ng's when it is installed, and the stand-in."""
    spoken = espeak_speech(tmp_path_factory.mktemp("speech")) if request.param == "spoken" else None
    return ("espeak-ng speech", spoken) if spoken is not None else ("synthesized vowels", vowel_speech())


def band_limited(signal: Signal, low: float = 100.0, high: float = 3400.0) -> Signal:
    """The telephone band only, as a business's line would deliver it."""
    spectrum = np.fft.rfft(signal)
    freqs = np.fft.rfftfreq(len(signal), 1 / PCM_RATE)
    spectrum[(freqs < low) | (freqs > high)] = 0
    return np.fft.irfft(spectrum, len(signal))


def pcm16(signal: Signal, peak: float = PEAK) -> npt.NDArray[np.int16]:
    out: npt.NDArray[np.int16] = np.rint(signal / np.max(np.abs(signal)) * peak * 32767).astype(np.int16)
    return out


def samples(pcm: bytes) -> Signal:
    return np.frombuffer(pcm, dtype="<i2").astype(np.float64)


def round_trip(codec: Codec, pcm: bytes) -> bytes:
    """16 kHz PCM -> wire -> 16 kHz PCM, 20 ms at a time in both directions, as in a call."""
    wire = b"".join(codec.encode(pcm[i : i + 640]) for i in range(0, len(pcm), 640)) + codec.flush()
    step = codec.wire_frame_bytes
    return b"".join(codec.decode(wire[i : i + step]) for i in range(0, len(wire), step))


def aligned_snr(reference: Signal, received: Signal, max_lag: int = 160) -> tuple[float, int]:
    """(SNR in dB, lag in samples) after shifting `received` by the lag that best matches."""
    n = min(len(reference), len(received))
    size = 1 << (2 * n).bit_length()
    xcorr = np.fft.irfft(np.fft.rfft(received[:n], size) * np.conj(np.fft.rfft(reference[:n], size)), size)
    lags = np.r_[0 : max_lag + 1, -max_lag:0]
    lag = int(lags[np.argmax(xcorr[lags])])
    ref = reference[max(0, -lag) : n - max(0, lag)]
    got = received[max(0, lag) : n - max(0, -lag)]
    noise = float(np.sum((ref - got) ** 2))
    return (float("inf") if noise == 0 else 10 * np.log10(float(np.sum(ref**2)) / noise)), lag


def wire_order(pcm: npt.NDArray[np.int16], order: str) -> bytes:
    return pcm.astype("<i2" if order == "le" else ">i2").tobytes()


# -- quality -------------------------------------------------------------------------------------

# Floors sit a few dB under what was measured here on telephone-band (100-3400 Hz) speech,
# espeak-ng 1.51 / synthesized vowels, by peak level:
#               -6 dBFS          -26 dBFS
#   L16 8 kHz   74.8 / 58.0 dB   55.1 / 56.1 dB   (resampling twice, 16-bit rounding)
#   PCMU        37.7 / 38.0 dB   34.1 / 36.1 dB   (G.711's ~38 dB companding noise)
#   PCMA        37.9 / 38.0 dB   31.7 / 35.4 dB   (A-law's linear low segment costs quiet speech)
BAND_FLOOR_DB = {
    ("L16", -6.0): 50.0,
    ("L16", -26.0): 50.0,
    ("PCMU", -6.0): 34.0,
    ("PCMU", -26.0): 31.0,
    ("PCMA", -6.0): 34.0,
    ("PCMA", -26.0): 29.0,
}
# Full-band speech (GPT-Live's own voice) through an 8 kHz wire loses everything above 4 kHz:
# measured 18.6 / 26.8 dB for all three; what is left must still be the same speech.
FULL_BAND_FLOOR_DB = 15.0
EIGHT_K = [("L16", 8000), ("PCMA", 8000), ("PCMU", 8000)]


@pytest.mark.parametrize("byte_order", ["le", "be"])
def test_l16_16k_round_trip_is_bit_exact(speech: tuple[str, Signal], byte_order: str) -> None:
    pcm = pcm16(speech[1]).tobytes()
    codec = codec_for("L16", 16000, byte_order)  # type: ignore[arg-type]
    assert not codec.resampled and codec.wire_frame_bytes == 640
    assert codec.encode(pcm) == (pcm if byte_order == "le" else wire_order(pcm16(speech[1]), "be"))
    assert round_trip(codec, pcm) == pcm


@pytest.mark.parametrize(("encoding", "rate"), EIGHT_K)
@pytest.mark.parametrize("level_db", [-6.0, -26.0])
def test_8k_round_trip_of_telephone_band_speech_keeps_a_quality_floor(
    speech: tuple[str, Signal], encoding: str, rate: int, level_db: float
) -> None:
    source, signal = speech
    reference = pcm16(band_limited(signal), peak=10 ** (level_db / 20))
    codec = codec_for(encoding, rate, "le")
    received = samples(round_trip(codec, reference.tobytes()))
    snr, lag = aligned_snr(reference.astype(np.float64), received)
    floor = BAND_FLOOR_DB[(encoding, level_db)]
    figure = f"{encoding}/{rate} round trip of {source} at {level_db:+.0f} dBFS peak: SNR {snr:.1f} dB, lag {lag}"
    print(figure)
    assert snr >= floor, f"{figure}; floor {floor} dB"
    assert abs(lag) <= 16, figure  # libsamplerate compensates its own delay
    assert len(reference) - len(received) <= 0.01 * PCM_RATE, f"{figure}; {len(received)} of {len(reference)} samples"


@pytest.mark.parametrize(("encoding", "rate"), EIGHT_K)
def test_8k_round_trip_of_full_band_speech_keeps_the_speech(
    speech: tuple[str, Signal], encoding: str, rate: int
) -> None:
    source, signal = speech
    reference = pcm16(signal)
    received = samples(round_trip(codec_for(encoding, rate), reference.tobytes()))
    snr, lag = aligned_snr(reference.astype(np.float64), received)
    figure = f"{encoding}/{rate} round trip of full-band {source}: SNR {snr:.1f} dB, lag {lag}"
    print(figure)
    assert snr >= FULL_BAND_FLOOR_DB, f"{figure}; floor {FULL_BAND_FLOOR_DB} dB"


def test_the_quality_measure_catches_the_wrong_codec(speech: tuple[str, Signal]) -> None:
    """Decoding A-law as µ-law (a real failure on non-US legs) must fall far below the floors."""
    reference = pcm16(band_limited(speech[1]))
    wire = codec_for("PCMA", 8000).encode(reference.tobytes())
    snr, _ = aligned_snr(reference.astype(np.float64), samples(codec_for("PCMU", 8000).decode(wire)))
    assert snr < 10, f"A-law decoded as µ-law still measured {snr:.1f} dB"


# -- streaming -----------------------------------------------------------------------------------


@pytest.mark.parametrize(("encoding", "rate"), [("L16", 8000), ("PCMU", 8000), ("PCMA", 8000)])
def test_streaming_frame_by_frame_equals_one_shot(speech: tuple[str, Signal], encoding: str, rate: int) -> None:
    pcm = pcm16(speech[1]).tobytes()
    framed, whole = codec_for(encoding, rate), codec_for(encoding, rate)
    wire = b"".join(framed.encode(pcm[i : i + 640]) for i in range(0, len(pcm), 640)) + framed.flush()
    assert wire == whole.encode(pcm) + whole.flush()
    assert len(wire) == len(pcm) // 2 * rate // PCM_RATE * framed.bytes_per_sample  # every sample accounted for
    step = framed.wire_frame_bytes
    by_frame = samples(b"".join(framed.decode(wire[i : i + step]) for i in range(0, len(wire), step)))
    at_once = samples(whole.decode(wire))
    assert len(by_frame) == len(at_once)
    assert np.max(np.abs(by_frame - at_once)) <= 1  # same filter state: no seams at 20 ms boundaries


def test_frame_boundaries_leave_no_clicks() -> None:
    """A steady 1 kHz tone through L16 8 kHz, 20 ms at a time, comes back as the same tone."""
    t = np.arange(PCM_RATE) / PCM_RATE
    tone = np.rint(np.sin(2 * np.pi * 1000 * t) * 10000).astype(np.int16)
    received = samples(round_trip(codec_for("L16", 8000), tone.tobytes()))
    error = np.abs(received - tone[: len(received)])[400:-400]  # away from the start and the flushed end
    assert error.max() <= 2, f"worst deviation {error.max():.0f} at sample {400 + int(error.argmax())}"


def test_decoding_8k_yields_16k() -> None:
    codec = codec_for("PCMU", 8000)
    pcm = b"".join(codec.decode(bytes([0xFF]) * 160) for _ in range(50))  # one second of µ-law silence
    assert len(pcm) % 2 == 0 and abs(len(pcm) // 2 - PCM_RATE) <= 160  # less only the filter's delay
    assert set(pcm) == {0}


# -- byte order ----------------------------------------------------------------------------------


def call_audio(speech: Signal, rate: int) -> npt.NDArray[np.int16]:
    """What a business's line sends at `rate`: 100 ms digital silence, 300 ms line noise, then speech."""
    if rate != PCM_RATE:
        speech = np.asarray(samplerate.resample(speech.astype(np.float32), rate / PCM_RATE, "sinc_best"), np.float64)
    noise = np.random.default_rng(7).normal(0, 25, int(0.3 * rate))
    silence = np.zeros(int(0.1 * rate))
    line = np.r_[silence, noise, speech / np.max(np.abs(speech)) * PEAK * 32767]
    out: npt.NDArray[np.int16] = np.clip(np.rint(line), -32768, 32767).astype(np.int16)
    return out


def decode_frames(codec: Codec, wire: bytes) -> list[bytes]:
    step = codec.wire_frame_bytes
    return [codec.decode(wire[i : i + step]) for i in range(0, len(wire), step)]


@pytest.mark.parametrize("rate", [16000, 8000])
@pytest.mark.parametrize("order", ["le", "be"])
def test_auto_byte_order_decides_from_speech_and_records_how(speech: tuple[str, Signal], rate: int, order: str) -> None:
    audio = call_audio(speech[1], rate)
    wire = wire_order(audio, order)
    codec = codec_for("L16", rate, "auto")
    assert codec.byte_order == ByteOrderDecision("le", "pending")
    outputs = decode_frames(codec, wire)
    decision = codec.byte_order
    figure = f"{speech[0]} in {order} at {rate} Hz: {decision}"
    print(figure)
    assert (decision.order, decision.method) == (order, "auto"), figure
    assert decision.roughness_le is not None and decision.roughness_be is not None
    right, wrong = (decision.roughness_le, decision.roughness_be)[:: 1 if order == "le" else -1]
    assert right < 0.75 < 0.9 < wrong, figure  # speech is smooth; the wrong order is white noise (~1.13)
    assert decision.samples >= 0.2 * rate and decision.at_s is not None and 0.6 <= decision.at_s <= 1.2, figure
    assert str(decision).startswith(f"{order} (auto: roughness le ")
    # Nothing was ever decoded the wrong way round: the stream equals a decode with the order configured.
    assert b"".join(outputs) == b"".join(decode_frames(codec_for("L16", rate, order), wire))  # type: ignore[arg-type]
    # Playback follows the decision.
    pcm = pcm16(speech[1][: PCM_RATE // 10]).tobytes()
    assert codec.encode(pcm) == codec_for("L16", rate, order).encode(pcm)  # type: ignore[arg-type]


def test_auto_holds_speech_until_it_knows_and_reads_silence_the_quiet_way() -> None:
    rate = 16000
    audio = call_audio(vowel_speech(1.0), rate)
    wire = wire_order(audio, "be")
    codec = codec_for("L16", rate, "auto")
    outputs = decode_frames(codec, wire)
    lengths = [len(out) for out in outputs]
    first_speech = next(i for i, out in enumerate(outputs) if not out)
    decided = next(i for i in range(first_speech, len(outputs)) if outputs[i])
    # before speech: every frame out at once, quiet (the line noise, read big-endian as it was sent)
    assert all(n == 640 for n in lengths[:first_speech]) and first_speech >= 20
    assert max(np.sqrt(np.mean(samples(out) ** 2)) for out in outputs[:first_speech]) < 40
    # speech is held for about 200 ms, then comes out all at once, then frame by frame again
    assert 9 <= decided - first_speech <= 14
    assert lengths[decided] == 640 * (decided - first_speech + 1)
    assert all(n == 640 for n in lengths[decided + 1 :])


def test_auto_stays_undecided_on_silence_and_plays_little_endian() -> None:
    codec = codec_for("L16", 16000, "auto")
    noise = np.random.default_rng(1).normal(0, 30, 16000).astype(np.int16)
    for order in ("le", "be"):
        out = samples(b"".join(decode_frames(codec, wire_order(noise, order))))
        assert np.sqrt(np.mean(out**2)) < 40  # line noise stays quiet whichever way it was sent
    assert codec.byte_order.method == "pending" and codec.byte_order.order == "le"
    assert "undecided" in str(codec.byte_order)
    assert codec.encode(b"\x01\x00") == b"\x01\x00"


def test_byte_order_is_recorded_for_every_codec() -> None:
    assert codec_for("L16", 16000, "be").byte_order == ByteOrderDecision("be", "configured")
    assert str(codec_for("L16", 8000, "le").byte_order) == "le (configured)"
    for encoding in ("PCMU", "PCMA"):
        decision = codec_for(encoding, 8000, "auto").byte_order
        assert (decision.order, decision.method) == (None, "not-applicable")
        assert "not applicable" in str(decision)


# -- formats -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("encoding", "rate", "frame", "resampled", "silence"),
    [
        ("L16", 16000, 640, False, b"\x00"),
        ("L16", 8000, 320, True, b"\x00"),
        ("PCMU", 8000, 160, True, b"\xff"),
        ("PCMA", 8000, 160, True, b"\xd5"),
    ],
)
def test_codec_shapes(encoding: str, rate: int, frame: int, resampled: bool, silence: bytes) -> None:
    codec = codec_for(encoding.lower(), rate)  # Telnyx's spelling may vary in case
    assert (codec.encoding, codec.sample_rate, codec.wire_frame_bytes, codec.resampled) == (
        encoding,
        rate,
        frame,
        resampled,
    )
    assert codec.silence(3) == silence * 3
    assert codec.encode(bytes(640 * 10)) + codec.flush() == silence * frame * 10


@pytest.mark.parametrize(
    ("encoding", "rate", "channels"),
    [("G722", 8000, 1), ("OPUS", 16000, 1), ("PCMU", 16000, 1), ("L16", 48000, 1), ("L16", 16000, 2)],
)
def test_unsupported_formats_are_named_with_what_is_supported(encoding: str, rate: int, channels: int) -> None:
    with pytest.raises(UnsupportedCodec) as caught:
        codec_for(encoding, rate, "le", channels=channels)
    message = str(caught.value)
    assert f"{encoding}/{rate} Hz/{channels} channel(s) is not supported" in message
    assert all(f"{enc}/{r} Hz" in message for enc, r in SUPPORTED)
    assert isinstance(caught.value, ValueError)


def test_bad_settings_and_bad_audio_are_refused() -> None:
    with pytest.raises(ValueError, match="byte_order must be 'le', 'be' or 'auto'"):
        codec_for("L16", 16000, "network")  # type: ignore[arg-type]
    with pytest.raises(CodecError, match=r"odd length \(3 bytes\)"):
        codec_for("L16", 8000).decode(b"\x01\x02\x03")
    with pytest.raises(CodecError, match="PCM16 audio has an odd length"):
        codec_for("PCMU", 8000).encode(b"\x01")


# -- through the Telnyx media adapter ------------------------------------------------------------


def start_frame(encoding: str, rate: int) -> str:
    body = load_fixture("telnyx", "media_start")
    body["start"]["media_format"] = {"encoding": encoding, "sample_rate": rate, "channels": 1}
    return json.dumps(body)


def media_frame(wire: bytes, chunk: int = 1) -> str:
    body = load_fixture("telnyx", "media_media")
    body["media"]["payload"] = base64.b64encode(wire).decode()
    body["media"]["chunk"] = str(chunk)
    return json.dumps(body)


def payloads(messages: list[str]) -> list[bytes]:
    return [base64.b64decode(json.loads(m)["media"]["payload"]) for m in messages if json.loads(m)["event"] == "media"]


@pytest.mark.parametrize(("encoding", "rate"), [("PCMU", 8000), ("PCMA", 8000), ("L16", 8000)])
def test_inbound_media_decodes_by_the_start_frame_format(speech: tuple[str, Signal], encoding: str, rate: int) -> None:
    inbound = InboundMedia()
    [started] = inbound.feed(start_frame(encoding, rate))
    assert isinstance(started, MediaStarted) and (started.encoding, started.sample_rate) == (encoding, rate)
    assert inbound.codec is not None and inbound.codec.encoding == encoding
    reference = pcm16(band_limited(speech[1]))
    wire = codec_for(encoding, rate).encode(reference.tobytes())
    step = inbound.codec.wire_frame_bytes
    events = [e for i in range(0, len(wire), step) for e in inbound.feed(media_frame(wire[i : i + step], i // step))]
    audio = [e for e in events if isinstance(e, MediaAudio)]
    assert len(audio) == len(events) >= len(wire) // step - 1  # only the first frame may be all filter delay
    received = samples(b"".join(e.pcm for e in audio))
    snr, _ = aligned_snr(reference.astype(np.float64), received)
    floor = BAND_FLOOR_DB[(encoding, -6.0)]
    assert snr >= floor, f"{encoding}/{rate} one-way decode through InboundMedia: SNR {snr:.1f} dB, floor {floor} dB"


def test_a_bad_start_leaves_no_codec_and_media_stays_refused() -> None:
    inbound = InboundMedia("auto")
    with pytest.raises(UnsupportedMediaFormat, match="G722/8000 Hz"):
        inbound.feed(start_frame("G722", 8000))
    assert inbound.codec is None
    with pytest.raises(MediaFrameError, match="before start"):
        inbound.feed(media_frame(bytes(160)))


def test_outbound_follows_the_byte_order_auto_learnt_inbound(speech: tuple[str, Signal]) -> None:
    inbound = InboundMedia("auto")
    inbound.feed(start_frame("L16", 16000))
    assert inbound.codec is not None
    out = OutboundMedia(codec=inbound.codec, stream_id="s1")
    tone = np.full(320, 0x0102, dtype=np.int16).tobytes()
    assert payloads(out.audio(tone)) == [tone]  # undecided: little-endian
    wire = wire_order(call_audio(speech[1], 16000), "be")
    for i in range(0, len(wire), 640):
        inbound.feed(media_frame(wire[i : i + 640], i // 640))
    assert inbound.codec.byte_order.order == "be"
    assert payloads(out.audio(tone)) == [bytes([1, 2]) * 320]  # now big-endian, same codec object


def test_outbound_needs_a_codec_or_a_fixed_byte_order() -> None:
    with pytest.raises(ValueError, match="not both"):
        OutboundMedia("be", codec=codec_for("PCMU", 8000))
    with pytest.raises(ValueError, match="byte_order"):
        OutboundMedia("auto")  # type: ignore[arg-type]
    assert OutboundMedia().codec.byte_order == ByteOrderDecision("le", "configured")


DELTAS = [1000, 333, 4801, 2, 639, 6400, 97]  # bytes of 16 kHz PCM, odd sizes included


@pytest.mark.parametrize(("encoding", "rate"), [("L16", 16000), ("L16", 8000), ("PCMU", 8000), ("PCMA", 8000)])
@pytest.mark.parametrize("byte_order", ["le", "be"])
def test_outbound_sends_whole_wire_frames_and_pads_only_before_a_mark(
    speech: tuple[str, Signal], encoding: str, rate: int, byte_order: str
) -> None:
    codec = codec_for(encoding, rate, byte_order)  # type: ignore[arg-type]
    out = OutboundMedia(codec=codec)
    pcm = pcm16(speech[1]).tobytes()
    sent: list[bytes] = []
    offset = 0
    for size in DELTAS * 3:
        sent += payloads(out.audio(pcm[offset : offset + size]))
        offset += size
    frame = codec.wire_frame_bytes
    assert sent and all(len(p) % frame == 0 and p for p in sent)
    *flushed, mark = out.mark("HANGUP_MARK")
    assert json.loads(mark) == {"event": "mark", "mark": {"name": "HANGUP_MARK"}}
    tail = payloads(flushed)
    assert all(len(p) % frame == 0 for p in tail)
    total = sum(map(len, sent + tail))
    owed = -(-(offset // 2) * rate // PCM_RATE * codec.bytes_per_sample // frame) * frame  # whole frames, rounded up
    assert total == owed, f"{total} wire bytes sent for {offset // 2} samples at 16 kHz"
    padding = owed - offset // 2 * rate // PCM_RATE * codec.bytes_per_sample
    assert tail[-1].endswith(codec.silence(padding))
    assert out.mark("again") == ['{"event":"mark","mark":{"name":"again"}}']  # nothing left to flush


@pytest.mark.parametrize(("encoding", "rate"), [("L16", 8000), ("PCMU", 8000)])
def test_clear_drops_what_the_resampler_and_the_tail_hold(encoding: str, rate: int) -> None:
    out = OutboundMedia(codec=codec_for(encoding, rate), stream_id="s1")
    out.audio(pcm16(vowel_speech(0.1)).tobytes()[:1001])
    assert out.clear() == ['{"event":"clear","stream_id":"s1"}']
    assert out.mark("m") == ['{"event":"mark","stream_id":"s1","mark":{"name":"m"}}']


@pytest.mark.parametrize("make", [lambda: OutboundMedia(), lambda: OutboundMedia(codec=codec_for("L16", 16000))])
def test_default_outbound_is_l16_16k_little_endian(make: Callable[[], OutboundMedia]) -> None:
    audio = pcm16(vowel_speech(0.05)).tobytes()
    out = make()
    sent = payloads(out.audio(audio)) + payloads(out.mark("m"))
    assert b"".join(sent) == audio + bytes(-len(audio) % 640)


def test_without_espeak_the_stand_in_is_used(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setattr(shutil, "which", lambda name: None)
    assert espeak_speech(tmp_path) is None and not list(tmp_path.iterdir())
    signal = vowel_speech()
    assert len(signal) == 3 * PCM_RATE and np.max(np.abs(signal)) > 0
    assert np.all(signal[int(1.35 * PCM_RATE) : int(1.55 * PCM_RATE)] == 0)  # it pauses, as speech does
