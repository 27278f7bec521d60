"""Telnyx adapters: webhook bodies and media frames -> domain events; playback -> text frames."""

from __future__ import annotations

import base64
import json
import logging
from array import array
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from calld.adapters.codecs import codec_for
from calld.adapters.fixtures import FIXTURES_DIR, load_fixture
from calld.adapters.telnyx_media import (
    FRAME_BYTES,
    InboundMedia,
    MediaFrameError,
    OutboundMedia,
    UnsupportedMediaFormat,
)
from calld.adapters.telnyx_webhook import (
    Webhook,
    WebhookError,
    decode_client_state,
    encode_client_state,
    parse_webhook,
)
from calld.core.events import (
    CallAnswered,
    CallHungUp,
    CallInitiated,
    DtmfReceived,
    MachineDetected,
    MachineGreetingEnded,
    MarkEchoed,
    MediaAudio,
    MediaConnected,
    MediaError,
    MediaStarted,
    MediaStopped,
    StreamingFailed,
)
from calld.domain.ids import CallControlId, RunId, StreamId

CCID = CallControlId("v3:u5OAKGEPT3Dx8SZSSDRWEMdNH2OripQhO2Jm1-Xg8Q6Hj1hOXzJtzg")
RUN = RunId("run_5f0c2a9e1b7d4c3a8e6f")
STREAM = StreamId("6c1a2f7e-3b9d-4e0a-9f51-2d8c7b4a0e13")


def webhook(name: str, **payload: Any) -> bytes:
    """A webhook fixture as raw bytes, with `payload` keys overridden (None deletes a key)."""
    body = load_fixture("telnyx", name)
    for key, value in payload.items():
        if value is None:
            body["data"]["payload"].pop(key, None)
        else:
            body["data"]["payload"][key] = value
    return json.dumps(body).encode()


def frame(name: str, **overrides: Any) -> str:
    """A media fixture as text, with nested keys overridden: frame('media_media', media__track='x')."""
    body = load_fixture("telnyx", name)
    for path, value in overrides.items():
        *parents, leaf = path.split("__")
        target = body
        for key in parents:
            target = target[key]
        if value is None:
            target.pop(leaf, None)
        else:
            target[leaf] = value
    return json.dumps(body)


def started(byte_order: str = "le") -> InboundMedia:
    media = InboundMedia(byte_order)  # type: ignore[arg-type]
    media.feed(frame("media_start"))
    return media


def swapped(pcm: bytes) -> bytes:
    samples = array("h", pcm)
    samples.byteswap()
    return samples.tobytes()


# -- webhooks ------------------------------------------------------------------------------------

KNOWN_WEBHOOKS = {
    "webhook_call_initiated": CallInitiated(CCID),
    "webhook_call_answered": CallAnswered(CCID),
    "webhook_call_hangup": CallHungUp(CCID, cause="normal_clearing", source="caller", sip_cause="200"),
    "webhook_machine_detection_ended": MachineDetected("human"),
    "webhook_call_machine_premium_detection_ended": MachineDetected("human_business"),
    "webhook_call_machine_premium_greeting_ended": MachineGreetingEnded("beep_detected"),
    "webhook_streaming_failed": StreamingFailed("connection_failed"),
}
IGNORED_WEBHOOKS = {
    "webhook_streaming_started": "streaming.started",
    "webhook_streaming_stopped": "streaming.stopped",
    "webhook_unknown": "call.cost",
}


@pytest.mark.parametrize(("name", "expected"), KNOWN_WEBHOOKS.items())
def test_webhook_fixture_parses_to_its_event(name: str, expected: object) -> None:
    raw = load_fixture("telnyx", name)
    hook = parse_webhook(json.dumps(raw).encode())
    assert hook == Webhook(
        event_id=raw["data"]["id"],
        event_type=raw["data"]["event_type"],
        call_control_id=CCID,
        run_id=RUN,
        event=expected,  # type: ignore[arg-type]
    )
    assert type(hook.call_control_id) is CallControlId and type(hook.run_id) is RunId


@pytest.mark.parametrize(("name", "event_type"), IGNORED_WEBHOOKS.items())
def test_other_webhook_types_are_ignored_but_still_identified(
    name: str, event_type: str, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.DEBUG, logger="calld.telnyx"):
        hook = parse_webhook(webhook(name))
    assert (hook.event_type, hook.event, hook.call_control_id, hook.run_id) == (event_type, None, CCID, RUN)
    assert event_type in caplog.text


def test_unknown_webhook_types_are_logged_at_info(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.INFO, logger="calld.telnyx"):
        parse_webhook(webhook("webhook_unknown"))
        parse_webhook(webhook("webhook_streaming_started"))  # expected: debug only
    assert [r.getMessage() for r in caplog.records] == [
        "ignoring Telnyx webhook call.cost (71d4a385-c294-4f56-818e-adbecfd0e1f8)"
    ]


@pytest.mark.parametrize("payload", [{"id": "order-1"}, None, [1, 2], "text", {"call_control_id": 5, "client_state": 7}])
def test_unknown_webhook_needs_no_call_nor_a_payload_of_a_known_shape(payload: object) -> None:
    body = {"data": {"id": "e1", "event_type": "number_order.complete", "payload": payload}}
    hook = parse_webhook(json.dumps(body).encode())
    assert (hook.event, hook.call_control_id, hook.run_id) == (None, None, None)


def test_an_unknown_webhook_still_names_its_call_when_it_can() -> None:
    body = {"data": {"id": "e1", "event_type": "call.recording.saved", "payload": {"call_control_id": "v3:abc"}}}
    assert parse_webhook(json.dumps(body).encode()).call_control_id == "v3:abc"


def test_premium_machine_detection_maps_too() -> None:
    raw = load_fixture("telnyx", "webhook_machine_detection_ended")
    raw["data"]["event_type"] = "call.machine.premium.detection.ended"
    raw["data"]["payload"]["result"] = "human_business"
    assert parse_webhook(json.dumps(raw).encode()).event == MachineDetected("human_business")


def test_hangup_without_cause_fields_gets_defaults() -> None:
    body = webhook("webhook_call_hangup", hangup_cause=None, hangup_source=None, sip_hangup_cause=None)
    assert parse_webhook(body).event == CallHungUp(CCID, cause="unspecified", source="unknown", sip_cause=None)


def test_streaming_failed_without_reason_gets_a_default() -> None:
    assert parse_webhook(webhook("webhook_streaming_failed", failure_reason=None)).event == StreamingFailed(
        "unspecified"
    )


@pytest.mark.parametrize("client_state", [None, "", "aGF2ZSBhIG5pY2UgZGF5", "not base64!"])
def test_foreign_or_missing_client_state_gives_no_run_id(client_state: str | None) -> None:
    raw = load_fixture("telnyx", "webhook_call_answered")
    raw["data"]["payload"]["client_state"] = client_state
    hook = parse_webhook(json.dumps(raw).encode())
    assert hook.run_id is None and hook.event == CallAnswered(CCID)


def test_client_state_round_trips_and_matches_the_fixtures() -> None:
    encoded = encode_client_state(RUN)
    assert encoded == load_fixture("telnyx", "webhook_call_initiated")["data"]["payload"]["client_state"]
    assert decode_client_state(encoded) == RUN


@pytest.mark.parametrize(
    "value",
    [None, "", "!!!", "cnVu", base64.b64encode(b"\xff\xfe").decode(), base64.b64encode(b"run_XYZ").decode()],
)
def test_decode_client_state_is_tolerant(value: str | None) -> None:
    assert decode_client_state(value) is None


DROP = object()


def _answered(**data: Any) -> bytes:
    """The call.answered fixture with `data` keys replaced (DROP removes one)."""
    raw = load_fixture("telnyx", "webhook_call_answered")
    for key, value in data.items():
        if value is DROP:
            del raw["data"][key]
        else:
            raw["data"][key] = value
    return json.dumps(raw).encode()


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (b'{"data": {', "not valid JSON"),
        (b"[1, 2]", "body: not a JSON object"),
        (b"{}", "data: missing"),
        (b'{"data": "call.answered"}', "data: not a JSON object"),
        (_answered(id=DROP), "data.id: missing"),
        (_answered(event_type=DROP), "data.event_type: missing"),
        (_answered(id=""), "data.id: String should have at least 1 character"),
        (_answered(event_type=None), "data.event_type: Input should be a valid string"),
        (webhook("webhook_call_answered", call_control_id=None), "data.payload.call_control_id: missing"),
        (
            webhook("webhook_call_hangup", call_control_id="v3 has spaces"),
            "data.payload.call_control_id: 'v3 has spaces' is not a Telnyx call_control_id",
        ),
        (_answered(payload=None), "data.payload: not a JSON object"),
    ],
)
def test_malformed_webhooks_say_what_is_wrong(body: bytes, message: str) -> None:
    with pytest.raises(WebhookError, match=r"^bad Telnyx webhook: ") as caught:
        parse_webhook(body)
    assert message in str(caught.value)
    assert isinstance(caught.value, ValueError)


# -- inbound media -------------------------------------------------------------------------------


def test_connected_and_start_frames() -> None:
    media = InboundMedia()
    assert media.feed(frame("media_connected")) == [MediaConnected()]
    assert media.run_id is None
    assert media.feed(frame("media_start")) == [MediaStarted(STREAM, CCID, "L16", 16000)]
    assert media.run_id == RUN


def test_start_without_call_control_id_or_client_state() -> None:
    media = InboundMedia()
    events = media.feed(frame("media_start", start__call_control_id=None, start__client_state=None))
    assert events == [MediaStarted(STREAM, None, "L16", 16000)]
    assert media.run_id is None


def test_media_frame_gives_its_pcm_unchanged_when_little_endian() -> None:
    payload = base64.b64decode(load_fixture("telnyx", "media_media")["media"]["payload"])
    [audio] = started("le").feed(frame("media_media"))
    assert audio == MediaAudio(payload, chunk=2, stream_id=STREAM)
    assert len(audio.pcm) == FRAME_BYTES  # 20 ms at 16 kHz


def test_media_frame_is_byteswapped_when_big_endian() -> None:
    payload = base64.b64decode(load_fixture("telnyx", "media_media")["media"]["payload"])
    [audio] = started("be").feed(frame("media_media"))
    assert isinstance(audio, MediaAudio)
    assert audio.pcm == swapped(payload)
    assert audio.pcm[:4] == payload[1::-1] + payload[3:1:-1]


def test_counters_may_be_strings_or_ints() -> None:
    text = frame("media_media", sequence_number=4, media__chunk=7, media__timestamp=140)
    [audio] = started().feed(text)
    assert isinstance(audio, MediaAudio) and audio.chunk == 7


@pytest.mark.parametrize(
    ("track", "passed"), [("inbound", True), ("inbound_track", True), (None, True), ("outbound", False)]
)
def test_only_the_inbound_track_is_passed_on(track: str | None, passed: bool) -> None:
    events = started().feed(frame("media_media", media__track=track))
    assert [type(e) for e in events] == ([MediaAudio] if passed else [])


def test_the_steady_read_gives_what_feed_would_and_leaves_the_rest_to_it() -> None:
    """`audio` is the media task's read of the 50 frames a second: the same PCM and chunk as feed's
    event, nothing to hear from our own track, and every frame that is not plain media left to feed."""
    payload = base64.b64decode(load_fixture("telnyx", "media_media")["media"]["payload"])
    assert InboundMedia("le").audio(frame("media_media")) is None  # before start: the format is unknown
    media = started("be")
    assert media.audio(frame("media_media", media__chunk="9")) == (swapped(payload), 9)
    assert media.audio(frame("media_media", media__track="outbound")) == (b"", 2)
    assert media.audio(frame("media_mark")) is None
    assert media.audio(frame("media_media", media__chunk=-1.5)) is None  # not plain: feed explains it
    with pytest.raises(MediaFrameError, match="not base64"):
        media.audio(frame("media_media", media__payload="!!"))


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("media_mark", MarkEchoed("HANGUP_MARK", STREAM)),
        ("media_dtmf", DtmfReceived("1")),
        ("media_stop", MediaStopped(reason="stop")),
        ("media_error", MediaError(100003, "malformed_frame")),
    ],
)
def test_control_frames(name: str, expected: object) -> None:
    assert started().feed(frame(name)) == [expected]


def test_unknown_media_events_are_ignored_and_logged(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.INFO, logger="calld.telnyx"):
        assert started().feed('{"event": "transcription", "stream_id": "x", "text": "hi"}') == []
    assert "'transcription'" in caplog.text


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('{"event": "media", ', "not valid JSON"),
        ('["media"]', "frame: not a JSON object"),
        (frame("media_media", media__payload=None), "media.payload: missing"),
        (frame("media_media", media__chunk=None), "media.chunk: missing"),
        (frame("media_media", media=None), "media: missing"),
        (frame("media_media", media__payload="%%%not-base64%%%"), "media.payload is not base64"),
        (frame("media_media", media__payload=base64.b64encode(b"\x01\x02\x03").decode()), "odd length (3 bytes)"),
        (frame("media_mark", mark__name=None), "mark.name: missing"),
        (frame("media_error", payload__code="oops"), "payload.code: Input should be a valid integer"),
    ],
)
def test_malformed_media_frames_say_what_is_wrong(text: str, message: str) -> None:
    with pytest.raises(MediaFrameError, match=r"^bad Telnyx media frame: ") as caught:
        started().feed(text)
    assert message in str(caught.value)


@pytest.mark.parametrize(
    ("mutation", "message"),
    [
        ({"start__media_format": None}, "start.media_format: missing"),
        ({"stream_id": None}, "stream_id: missing"),
        ({"start__call_control_id": "bad id"}, "start.call_control_id: 'bad id' is not a Telnyx call_control_id"),
    ],
)
def test_malformed_start_frames_say_what_is_wrong(mutation: dict[str, Any], message: str) -> None:
    with pytest.raises(MediaFrameError) as caught:
        InboundMedia().feed(frame("media_start", **mutation))
    assert message in str(caught.value)


def test_a_second_start_frame_is_refused_and_the_stream_keeps_its_format() -> None:
    media = InboundMedia()
    media.feed(frame("media_start"))
    codec = media.codec
    other = frame("media_start", stream_id="s2", start__call_control_id="v3:other",
                  start__media_format={"encoding": "PCMU", "sample_rate": 8000, "channels": 1})
    with pytest.raises(MediaFrameError, match="a second start frame"):
        media.feed(other)
    assert media.codec is codec and media.run_id == RUN


def test_media_before_start_is_an_error() -> None:
    media = InboundMedia()
    media.feed(frame("media_connected"))
    with pytest.raises(MediaFrameError, match="before start"):
        media.feed(frame("media_media"))


@pytest.mark.parametrize(
    ("encoding", "rate", "channels"),
    [("G722", 8000, 1), ("PCMU", 16000, 1), ("L16", 24000, 1), ("L16", 16000, 2), ("OPUS", 16000, 1)],
)
def test_start_in_a_format_calld_cannot_decode_is_refused(encoding: str, rate: int, channels: int) -> None:
    # PCMU, PCMA and L16 at 8 kHz are decoded now: tests/test_codecs.py covers them
    fmt = {"encoding": encoding, "sample_rate": rate, "channels": channels}
    media = InboundMedia()
    with pytest.raises(UnsupportedMediaFormat) as caught:
        media.feed(frame("media_start", start__media_format=fmt))
    assert f"{encoding}/{rate} Hz/{channels} channel(s) is not supported" in str(caught.value)
    assert "L16/16000 Hz, L16/8000 Hz, PCMU/8000 Hz, PCMA/8000 Hz" in str(caught.value)
    assert isinstance(caught.value, MediaFrameError)
    with pytest.raises(MediaFrameError, match="before start"):  # the stream never started
        media.feed(frame("media_media"))


def test_byte_order_must_be_le_or_be() -> None:
    with pytest.raises(ValueError, match="byte_order"):
        InboundMedia("big")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="byte_order"):
        OutboundMedia("auto")  # type: ignore[arg-type]


# -- outbound media ------------------------------------------------------------------------------


def pcm(n: int, start: int = 0) -> bytes:
    """n bytes of recognisable, never-silent audio."""
    return bytes((start + i) % 251 + 1 for i in range(n))


def decoded(message: str) -> tuple[dict[str, Any], bytes]:
    body = json.loads(message)
    return body, base64.b64decode(body["media"]["payload"]) if body["event"] == "media" else b""


def test_a_delta_sends_its_whole_frames_and_carries_the_rest() -> None:
    out = OutboundMedia()
    first, second = pcm(1000), pcm(1000, start=1000)
    [message] = out.audio(first)
    body, sent = decoded(message)
    assert body == {"event": "media", "media": {"payload": body["media"]["payload"]}}
    assert sent == first[:640]
    # the next delta joins the carried 360 bytes: 1360 -> two frames in one message, 80 carried
    [message] = out.audio(second)
    assert decoded(message)[1] == first[640:] + second[:920]
    assert out.audio(b"") == []


def test_less_than_a_frame_waits_and_exact_frames_leave_nothing() -> None:
    out = OutboundMedia()
    assert out.audio(pcm(639)) == []
    [message] = out.audio(pcm(1, start=639) + pcm(FRAME_BYTES * 3, start=640))
    assert decoded(message)[1] == pcm(FRAME_BYTES * 4)
    assert [json.loads(m)["event"] for m in out.mark("m")] == ["mark"]


def test_mark_flushes_the_tail_padded_with_silence_first() -> None:
    out = OutboundMedia()
    out.audio(pcm(1000))
    media, mark = out.mark("HANGUP_MARK")
    assert decoded(media)[1] == pcm(1000)[640:] + bytes(280)
    assert json.loads(mark) == {"event": "mark", "mark": {"name": "HANGUP_MARK"}}
    assert out.mark("again") == ['{"event":"mark","mark":{"name":"again"}}']


def test_clear_drops_the_tail() -> None:
    out = OutboundMedia()
    out.audio(pcm(100))
    assert out.clear() == ['{"event":"clear"}']
    assert len(out.mark("m")) == 1


@settings(max_examples=200, deadline=None)
@given(steps=st.lists(st.one_of(st.binary(max_size=3000), st.just(b"\x01" * 3200), st.just("mark")), max_size=12),
       stream=st.sampled_from([None, STREAM]),
       fmt=st.sampled_from([("L16", 16000, "le"), ("L16", 16000, "be"), ("L16", 8000, "le"), ("PCMU", 8000, "le")]))
def test_the_steady_downlink_way_sends_what_the_general_way_sends(steps: list[bytes | str], stream: str | None,
                                                                  fmt: tuple[str, int, str]) -> None:
    """`audio` takes a short way for 16 kHz L16 little-endian with no odd byte carried; the messages, the
    carried tail and what a mark flushes are the general way's, byte for byte, for any deltas."""
    fast, general = (OutboundMedia(codec=codec_for(*fmt), stream_id=stream) for _ in range(2))
    for step in steps:
        if step == "mark":
            assert fast.mark("m") == general.mark("m")
        else:
            assert fast.audio(step) == general._audio(step)  # noqa: SLF001


def test_stream_id_is_sent_only_when_given() -> None:
    out = OutboundMedia(stream_id=STREAM)
    messages = [*out.audio(pcm(700)), *out.mark("m"), *out.clear()]
    assert [json.loads(m)["stream_id"] for m in messages] == [STREAM] * 4
    assert all("stream_id" not in json.loads(m) for m in OutboundMedia().mark("m"))


def test_big_endian_playback_is_byteswapped_and_round_trips() -> None:
    audio = pcm(FRAME_BYTES * 2)
    [message] = OutboundMedia("be").audio(audio)
    wire = decoded(message)[1]
    assert wire == swapped(audio) and wire != audio
    # what we send as big-endian reads back as the same little-endian audio
    echo = frame("media_media", media__payload=json.loads(message)["media"]["payload"])
    assert started("be").feed(echo) == [MediaAudio(audio, chunk=2, stream_id=STREAM)]


# -- fixtures themselves -------------------------------------------------------------------------

REST_BODIES = {"dial_response", "hangup_ok", "hangup_already_ended"}
# Parsed through TelnyxHttp in tests/test_telnyx_http.py (and served by the numbers stub).
NUMBERS_AND_ERROR_BODIES = {
    "available_numbers",
    "number_order_pending",
    "number_order_success",
    "number_order_failure",
    "number_orders_list",
    "phone_numbers",
    "call_status",
    "error_401",
    "error_403",
    "error_404",
    "error_422",
    "error_429",
    "error_429_dials",
    "error_500",
}


def test_every_telnyx_fixture_is_covered_here() -> None:
    on_disk = {p.stem for p in (FIXTURES_DIR / "telnyx").glob("*.json")}
    media = {"media_connected", "media_start", "media_media", "media_mark", "media_dtmf", "media_stop", "media_error"}
    assert on_disk == set(KNOWN_WEBHOOKS) | set(IGNORED_WEBHOOKS) | media | REST_BODIES | NUMBERS_AND_ERROR_BODIES


def test_rest_bodies_have_their_documented_shapes() -> None:
    dial = load_fixture("telnyx", "dial_response")["data"]
    assert CallControlId(dial["call_control_id"]) == CCID and dial["is_alive"] is False
    assert load_fixture("telnyx", "hangup_ok") == {"data": {"result": "ok"}}
    [error] = load_fixture("telnyx", "hangup_already_ended")["errors"]
    assert error["code"] == "90018"


def test_load_fixture_returns_a_fresh_copy_each_time() -> None:
    first = load_fixture("telnyx", "media_start")
    first["start"]["media_format"]["sample_rate"] = 8000
    assert load_fixture("telnyx", "media_start.json")["start"]["media_format"]["sample_rate"] == 16000


def test_missing_fixture_names_what_exists() -> None:
    with pytest.raises(FileNotFoundError, match=r"no fixture telnyx/nope\.json .*media_start"):
        load_fixture("telnyx", "nope")
    with pytest.raises(FileNotFoundError, match="there is no group 'nowhere'"):
        load_fixture("nowhere", "x")


def test_every_frame_names_its_stream_and_another_stream_s_media_leaves_the_steady_path():
    media = started()
    assert media.stream_id == STREAM
    other = frame("media_media", stream_id="another-stream")
    assert media.audio(other) is None  # not forwarded without the reducer: it goes to feed, which names it
    [audio] = media.feed(other)
    assert audio.stream_id == "another-stream" and audio.chunk == 2
    assert media.audio(frame("media_media"))[1] == 2  # the started stream's: the steady path takes it
    assert media.feed(frame("media_mark", stream_id="another-stream")) == [MarkEchoed("HANGUP_MARK", "another-stream")]
    # A frame that names no stream is the socket's own.
    assert media.feed(frame("media_mark", stream_id=None)) == [MarkEchoed("HANGUP_MARK", STREAM)]
    assert media.audio(frame("media_media", stream_id=None))[1] == 2
