"""GPT-Live adapter: server events -> domain events; client events as dicts."""

from __future__ import annotations

import base64
import json
import logging
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from unittest.mock import patch

from calld.adapters import gpt_live
from calld.adapters.fixtures import FIXTURES_DIR, load_fixture
from calld.adapters.gpt_live import LiveEventMalformed, LiveInbound, LiveProtocolError
from calld.core.events import (
    DtmfRequested,
    EndCallRequested,
    InputTranscript,
    LiveClosed,
    LiveError,
    LiveStarted,
    OutputAudio,
    OutputTranscript,
    ResponseDone,
    TaskRecorded,
    ToolCallRejected,
)
from calld.core.answers import Aisle, DayRange, Hours, KindStock, NoSetHours, Stock
from calld.core.plan import LivePlan

RECORD_CALL_ID = "call_Qm4pX7rT2vLs9KdE"


def text(name: str) -> str:
    return json.dumps(load_fixture("gpt_live", name))


def live(*, started: bool = True) -> LiveInbound:
    inbound = LiveInbound()
    if started:
        inbound.feed(text("session_started"))
    return inbound


def item_done(name: str = "record_task_result", arguments: Any = None, **item: Any) -> str:
    """The record_task_result fixture with its function_call item changed."""
    event = load_fixture("gpt_live", "response_event_record_task_result")
    event["event"]["item"] |= {"name": name, **item}
    if arguments is not None:
        event["event"]["item"]["arguments"] = arguments if isinstance(arguments, str) else json.dumps(arguments)
    return json.dumps(event)


def nested(inner: dict[str, Any]) -> str:
    return json.dumps({"type": "response.event", "event_id": "event_1", "delegation_id": None, "event": inner})


# -- server events -------------------------------------------------------------------------------

MAPPED = {
    "session_started": [LiveStarted("live_68a3f1c2d94b4e07")],
    "input_transcript_delta": [InputTranscript(" We open at nine on Saturdays", 14200, 16400)],
    "output_transcript_delta": [OutputTranscript(" Hi, this is an automated assistant", 1200, 3000)],
    "response_event_completed": [ResponseDone("completed")],
    "response_event_record_task_result": [
        TaskRecorded(RECORD_CALL_ID, "answered", "We open at nine on Saturdays.", None, quotes=("We open at nine on Saturdays.",),
                     answer=Hours((DayRange(("saturday",), "09:00", None),)))
    ],
    "response_event_end_call": [EndCallRequested("call_Hn8wB3cY6zJq1FtU", "question answered")],
    "session_closed": [LiveClosed("close_requested")],
}
NO_OPS = ["delegation_created", "response_event_created", "usage_updated", "commentary_appended"]
REALTIME = ["realtime_session_created", "realtime_input_audio_buffer_append", "realtime_response_audio_delta"]


@pytest.mark.parametrize(("name", "expected"), MAPPED.items())
def test_fixture_maps_to_its_event(name: str, expected: list[object]) -> None:
    assert live().feed(text(name)) == expected


def test_output_audio_is_base64_decoded() -> None:
    raw = load_fixture("gpt_live", "output_audio_delta")
    [event] = live().feed(json.dumps(raw))
    assert event == OutputAudio(base64.b64decode(raw["delta"]))
    assert len(event.pcm) == 3200  # 100 ms of 16 kHz PCM16


def test_session_started_flips_started() -> None:
    inbound = LiveInbound()
    assert not inbound.started
    inbound.feed(text("session_started"))
    assert inbound.started


@pytest.mark.parametrize("name", NO_OPS)
def test_bookkeeping_events_are_no_ops_and_not_logged(name: str, caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.DEBUG, logger="calld.live"):
        assert live().feed(text(name)) == []
    assert caplog.records == []


@pytest.mark.parametrize(
    "kind",
    [
        "session.updated",
        "session.input_audio.muted",
        "session.input_audio.unmuted",
        "session.instructions.appended",
        "session.thinking.appended",
        "info",
    ],
)
def test_other_known_no_ops(kind: str) -> None:
    assert live().feed(json.dumps({"type": kind, "event_id": "event_1"})) == []


def test_unknown_event_types_are_ignored_and_logged(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.INFO, logger="calld.live"):
        assert live().feed('{"type": "session.output_audio.fixture.played", "event_id": "e"}') == []
    assert "session.output_audio.fixture.played" in caplog.text


def test_error_before_started_is_fatal() -> None:
    assert LiveInbound().feed(text("error_startup")) == [
        LiveError("credit_balance_exhausted", "Your credit balance is too low to start a session.", fatal=True)
    ]


def test_error_after_started_is_a_command_error() -> None:
    assert live().feed(text("error_command")) == [
        LiveError("unknown_parameter", "Unknown parameter: 'session.voice'.", fatal=False)
    ]


def test_error_without_code_falls_back_to_its_type() -> None:
    event = {"type": "error", "error": {"type": "server_error", "message": "boom"}}
    assert live().feed(json.dumps(event)) == [LiveError("server_error", "boom", fatal=False)]


# -- tool calls ----------------------------------------------------------------------------------


def test_tool_calls_use_call_id_not_item_id() -> None:
    item = load_fixture("gpt_live", "response_event_record_task_result")["event"]["item"]
    [event] = live().feed(item_done(id="fc_other", call_id="call_abc"))
    assert isinstance(event, TaskRecorded) and event.call_id == "call_abc" != item["id"]


@pytest.mark.parametrize(
    ("arguments", "expected"),
    [
        (
            {"status": "declined", "answer_text": "we won't say", "notes": "asked twice", "reason": "refused"},
            ("declined", None, "asked twice"),
        ),
        ({"status": "voicemail", "answer_text": None, "notes": None}, ("voicemail", None, None)),
        ({"status": "unclear"}, ("unclear", None, None)),
        (
            {"status": "answered", "answer_text": "  Yes, until 6.  ", "notes": None},
            ("answered", "Yes, until 6.", None),
        ),
    ],
)
def test_record_task_result_arguments(arguments: dict[str, Any], expected: tuple[Any, str | None, str | None]) -> None:
    status, answer_text, notes = expected
    reason = arguments.get("reason")
    assert live().feed(item_done(arguments=arguments)) == [TaskRecorded(RECORD_CALL_ID, status, answer_text, notes, reason=reason)]


@pytest.mark.parametrize(
    ("arguments", "error"),
    [
        ({"status": "answered", "answer_text": None, "notes": None}, "status 'answered' needs a non-empty answer_text"),
        (
            {"status": "answered", "answer_text": "   ", "notes": None},
            "status 'answered' needs a non-empty answer_text",
        ),
        (
            {"status": "maybe", "answer_text": None},
            "status: Input should be 'answered', 'declined', 'voicemail' or 'unclear'",
        ),
        ({"answer_text": "9am"}, "status: missing"),
        ({"status": "voicemail", "notes": 42}, "notes: Input should be a valid string"),
        ('{"status": "answered", ', "not valid JSON"),
        ("", "not valid JSON"),
        ('["answered"]', "not a JSON object"),
    ],
)
def test_bad_record_task_result_arguments_are_rejected_with_a_reason(arguments: Any, error: str) -> None:
    [event] = live().feed(item_done(arguments=arguments))
    assert isinstance(event, ToolCallRejected)
    assert (event.call_id, event.name) == (RECORD_CALL_ID, "record_task_result")
    assert event.error.startswith("invalid arguments: ") and error in event.error


@pytest.mark.parametrize(
    ("arguments", "reason"),
    [({"reason": "done"}, "done"), ({"reason": None}, None), ("{}", None), ("", None), ("not json", None)],
)
def test_end_call_is_honoured_whatever_its_arguments(arguments: Any, reason: str | None) -> None:
    events = live().feed(item_done(name="end_call", arguments=arguments, call_id="call_end"))
    assert events == [EndCallRequested("call_end", reason)]


def test_unknown_tool_is_rejected() -> None:
    [event] = live().feed(item_done(name="book_table", arguments={}))
    assert isinstance(event, ToolCallRejected)
    assert (event.call_id, event.name) == (RECORD_CALL_ID, "book_table")
    assert event.error.startswith("unknown tool")


@pytest.mark.parametrize(
    "inner",
    [
        {"type": "response.in_progress", "response": {"id": "resp_1"}},
        {
            "type": "response.output_item.added",
            "item": {
                "type": "function_call",
                "status": "in_progress",
                "call_id": "call_1",
                "name": "end_call",
                "arguments": "",
            },
        },
        {"type": "response.function_call_arguments.done", "item_id": "fc_1", "arguments": '{"reason": null}'},
        {
            "type": "response.output_item.done",
            "item": {
                "type": "function_call",
                "status": "incomplete",
                "call_id": "call_1",
                "name": "end_call",
                "arguments": "{",
            },
        },
        {
            "type": "response.output_item.done",
            "item": {
                "type": "message",
                "status": "completed",
                "role": "assistant",
                "content": [{"type": "output_text", "text": "Done."}],
            },
        },
    ],
)
def test_other_nested_response_events_give_nothing(inner: dict[str, Any]) -> None:
    assert live().feed(nested(inner)) == []


@pytest.mark.parametrize("end", ["completed", "failed", "incomplete"])
def test_the_end_of_a_backend_response_is_an_event(end: str) -> None:
    """All of a response's function calls are in once it ends: response.create may follow then."""
    inner = {"type": f"response.{end}", "response": {"id": "resp_1", "status": end, "output": []}}
    assert live().feed(nested(inner)) == [ResponseDone(end)]


# -- rejected and malformed ----------------------------------------------------------------------


@pytest.mark.parametrize("name", REALTIME)
def test_realtime_fixtures_are_rejected(name: str) -> None:
    kind = load_fixture("gpt_live", name)["type"]
    with pytest.raises(LiveProtocolError, match="is a Realtime API event, not GPT-Live") as caught:
        live().feed(text(name))
    assert repr(kind) in str(caught.value)


@pytest.mark.parametrize(
    "kind",
    [
        "input_audio_buffer.speech_started",
        "conversation.item.created",
        "output_audio_buffer.cleared",
        "rate_limits.updated",
        "transcription_session.updated",
        "response.done",
        "response.output_audio.delta",
        "response.function_call_arguments.done",
        "response.created",
    ],
)
def test_realtime_shapes_are_rejected(kind: str) -> None:
    with pytest.raises(LiveProtocolError, match=f"'{kind}' is a Realtime API event"):
        LiveInbound().feed(json.dumps({"type": kind, "event_id": "event_1"}))


@pytest.mark.parametrize(
    ("frame", "message"),
    [
        ('{"type": "session.started"', "not valid JSON"),
        ('"session.started"', "not a JSON object"),
        ('{"event_id": "event_1"}', "type: missing"),
        ('{"type": 7}', "type: Input should be a valid string"),
        ('{"type": "session.started", "session": {}}', "session.id: missing"),
        ('{"type": "session.output_audio.delta"}', "delta: missing"),
        ('{"type": "session.output_audio.delta", "delta": "%%%%"}', "delta is not base64"),
        ('{"type": "session.input_transcript.delta", "delta": null}', "delta: Input should be a valid string"),
        ('{"type": "error"}', "error: missing"),
        ('{"type": "response.event"}', "event: missing"),
        (
            nested(
                {
                    "type": "response.output_item.done",
                    "item": {"type": "function_call", "status": "completed", "name": "end_call"},
                }
            ),
            "has no call_id or name",
        ),
    ],
)
def test_malformed_events_say_what_is_wrong(frame: str, message: str) -> None:
    # Each is one unreadable event (the call drops it and goes on), not a session on the wrong endpoint.
    with pytest.raises(LiveEventMalformed) as caught:
        live().feed(frame)
    assert message in str(caught.value)
    assert isinstance(caught.value, LiveProtocolError) and isinstance(caught.value, ValueError)


def test_every_gpt_live_fixture_is_covered_here() -> None:
    on_disk = {p.stem for p in (FIXTURES_DIR / "gpt_live").glob("*.json")}
    others = {"output_audio_delta", "error_startup", "error_command"}
    others |= {"response_event_record_booking"}  # a booking session's record: tests/test_booking_core.py
    assert on_disk == set(MAPPED) | set(NO_OPS) | set(REALTIME) | others


# -- client events -------------------------------------------------------------------------------

PLAN = LivePlan(
    model="gpt-live-1",
    instructions="live prompt",
    backend_model="gpt-5.5",
    backend_instructions="backend prompt",
    reasoning_effort="low",
    voice="marin",
)


def test_session_start_asks_for_responses_delegation_with_both_tools() -> None:
    start = gpt_live.session_start(PLAN, "start_1")
    assert (start["type"], start["event_id"]) == ("session.start", "start_1")
    session = start["session"]
    assert (session["model"], session["instructions"]) == ("gpt-live-1", "live prompt")
    assert session["audio"] == {"format": {"type": "audio/pcm", "rate": 16000}, "output": {"voice": "marin"}}
    delegation = session["delegation"]
    assert delegation["type"] == "responses"
    responses = delegation["responses"]
    assert (responses["model"], responses["instructions"]) == ("gpt-5.5", "backend prompt")
    assert responses["reasoning"] == {"effort": "low"}
    assert (responses["tool_choice"], responses["parallel_tool_calls"]) == ("auto", False)
    assert [(t["type"], t["name"], t["strict"]) for t in responses["tools"]] == [
        ("function", "record_task_result", True),
        ("function", "end_call", True),
        ("function", "send_dtmf", True),
    ]
    assert json.loads(json.dumps(start)) == start  # plain JSON all the way down


def test_session_start_takes_effort_and_rate_from_the_plan() -> None:
    plan = LivePlan("gpt-live-1.1", "i", "gpt-6-luna", "b", reasoning_effort="high", voice="cedar", sample_rate=24000)
    session = gpt_live.session_start(plan, "s")["session"]
    assert session["delegation"]["responses"]["reasoning"]["effort"] == "high"
    assert session["audio"]["format"]["rate"] == 24000


HOURS_ARGS = {"status": "answered", "quotes": ["  We're open nine to five on weekdays. ", ""], "answer_text": "9 to 5 weekdays",
              "notes": None, "reason": None, "stock": None, "aisle": None,
              "hours": {"ranges": [{"days": ["monday", "friday"], "opens": "09:00", "closes": "17:00", "closed": False,
                                    "around_the_clock": False, "date": None}]}}


def test_a_record_cites_quotes_and_gives_typed_fields() -> None:
    [event] = live().feed(item_done(arguments=json.dumps(HOURS_ARGS)))
    assert isinstance(event, TaskRecorded)
    assert event.quotes == ("We're open nine to five on weekdays.",)  # trimmed, empty ones dropped
    assert event.answer == Hours((DayRange(("monday", "friday"), "09:00", "17:00"),))
    stock = HOURS_ARGS | {"hours": None, "stock": {"availability": "some_kinds", "quantity": None, "kinds": [
        {"kind": "12-inch", "availability": "in_stock", "quantity": 3}, {"kind": "10-inch", "availability": "out_of_stock",
                                                                          "quantity": None}]}}
    [event] = live().feed(item_done(arguments=json.dumps(stock)))
    assert event.answer == Stock("some_kinds", None, (KindStock("12-inch", "in_stock", 3), KindStock("10-inch", "out_of_stock", None)))
    [event] = live().feed(item_done(arguments=json.dumps(HOURS_ARGS | {"hours": None, "aisle": {"location": "aisle 14"}})))
    assert event.answer == Aisle("aisle 14")
    [event] = live().feed(item_done(arguments=json.dumps(HOURS_ARGS | {"hours": {"ranges": [], "no_set_hours": True}})))
    assert event.answer == NoSetHours()  # "by appointment only": no ranges, by the answer's own shape


@pytest.mark.parametrize(("change", "says"), [
    ({"hours": {"ranges": [{"days": ["monday"], "opens": "9am", "closes": None, "closed": False, "around_the_clock": False,
                            "date": None}]}}, "hours.ranges.0.opens"),
    ({"hours": {"ranges": [{"days": ["monday"], "opens": "09:00", "closes": None, "closed": True, "around_the_clock": False,
                            "date": None}]}}, "closed or open around the clock has no opens"),
    ({"hours": {"ranges": []}}, "hours need at least one range, or no_set_hours"),
    ({"hours": {"ranges": [{"days": [], "opens": "09:00", "closes": None, "closed": False, "around_the_clock": False,
                            "date": None}], "no_set_hours": True}}, "no_set_hours has no ranges"),
    ({"stock": {"availability": "in_stock", "quantity": None, "kinds": [{"kind": "x", "availability": "in_stock", "quantity": None}]}},
     "only some_kinds names kinds"),
    ({"aisle": {"location": "aisle 3"}}, "one of hours, stock or aisle"),
])
def test_contradictory_typed_fields_are_refused_at_the_wire(change: dict[str, Any], says: str) -> None:
    [event] = live().feed(item_done(arguments=json.dumps(HOURS_ARGS | change)))
    assert isinstance(event, ToolCallRejected) and says in event.error, event


def test_a_decline_whose_reason_was_not_said_is_taken_as_the_schema_allows() -> None:
    """The published schema lets reason be null on a decline: the record was refused as invalid arguments,
    and the call ended failed/internal. Null is "not said"."""
    [event] = live().feed(item_done(arguments=json.dumps(HOURS_ARGS | {"status": "declined", "reason": None})))
    assert isinstance(event, TaskRecorded) and (event.status, event.reason) == ("declined", None)


def test_an_opt_out_quote_is_read_from_a_record_and_from_one_that_is_refused() -> None:
    said = "Don't bother us again."
    [event] = live().feed(item_done(arguments=json.dumps(HOURS_ARGS | {"opt_out_quote": f"  {said} "})))
    assert isinstance(event, TaskRecorded) and event.opt_out == said
    [event] = live().feed(item_done(arguments=json.dumps(HOURS_ARGS | {"opt_out_quote": said, "status": "maybe"})))
    assert isinstance(event, ToolCallRejected) and event.opt_out == said
    [event] = live().feed(item_done(arguments=json.dumps(HOURS_ARGS | {"opt_out_quote": " "})))
    assert event.opt_out is None


def test_tool_schemas_match_what_the_parser_accepts() -> None:
    record, end, _dtmf = gpt_live.session_start(PLAN, "s")["session"]["delegation"]["responses"]["tools"]
    params = record["parameters"]
    assert params["type"] == "object" and params["additionalProperties"] is False
    assert params["required"] == ["status", "quotes", "answer_text", "notes", "reason", "hours", "stock", "aisle",
                                  "outcome_quote", "opt_out_quote"] == list(params["properties"])
    assert params["properties"]["opt_out_quote"]["type"] == ["string", "null"]
    assert params["properties"]["status"]["enum"] == ["answered", "declined", "voicemail", "unclear"]
    assert params["properties"]["answer_text"]["type"] == params["properties"]["notes"]["type"] == ["string", "null"]
    assert params["properties"]["quotes"]["type"] == "array"
    # strict: every object in the typed fields requires all its properties and allows no others
    for name in ("hours", "stock", "aisle"):
        obj = params["properties"][name]["anyOf"][0]
        assert obj["required"] == list(obj["properties"]) and obj["additionalProperties"] is False
        assert params["properties"][name]["anyOf"][1] == {"type": "null"}
    ranges = params["properties"]["hours"]["anyOf"][0]["properties"]["ranges"]["items"]
    assert ranges["required"] == ["days", "opens", "closes", "closed", "around_the_clock", "date", "days_quote", "times_quote",
                                  "context_quote", "readback"]
    assert params["properties"]["hours"]["anyOf"][0]["properties"]["no_set_hours"]["type"] == "boolean"
    assert end["parameters"] == {
        "type": "object",
        "properties": {
            "reason": {
                "type": ["string", "null"],
                "description": end["parameters"]["properties"]["reason"]["description"],
            }
        },
        "required": ["reason"],
        "additionalProperties": False,
    }


def test_commentary_append_sends_a_null_delegation_id() -> None:
    event = gpt_live.commentary_append("Say hello.")
    assert event == {"type": "session.commentary.append", "content": "Say hello.", "delegation_id": None}
    assert '"delegation_id": null' in json.dumps(event)


def test_input_audio_append_is_base64() -> None:
    event = gpt_live.input_audio_append(b"\x01\x00\xff\x7f", event_id="a1")
    assert event == {"type": "session.input_audio.append", "event_id": "a1", "audio": "AQD/fw=="}


def test_function_call_output_and_response_create() -> None:
    assert gpt_live.function_call_output("call_1", '{"ok": true}') == {
        "type": "response.item.create",
        "item": {"type": "function_call_output", "call_id": "call_1", "output": '{"ok": true}'},
    }
    assert gpt_live.response_create() == {"type": "response.create"}
    assert gpt_live.response_create(event_id="r1") == {"type": "response.create", "event_id": "r1"}


def test_session_close() -> None:
    assert gpt_live.session_close() == {"type": "session.close"}
    assert gpt_live.session_close(event_id="close_1") == {"type": "session.close", "event_id": "close_1"}


def test_builders_return_fresh_dicts() -> None:
    first = gpt_live.session_start(PLAN, "s")
    first["session"]["delegation"]["responses"]["tools"][0]["strict"] = False
    assert gpt_live.session_start(PLAN, "s")["session"]["delegation"]["responses"]["tools"][0]["strict"] is True


def test_input_audio_append_text_is_the_same_event_on_the_wire() -> None:
    for pcm in (b"", b"\x01\x00\xff\x7f", bytes(range(256)) * 3):
        assert json.loads(gpt_live.input_audio_append_text(pcm)) == gpt_live.input_audio_append(pcm)


def _dtmf_call(arguments: str) -> str:
    msg = load_fixture("gpt_live", "response_event_record_task_result")
    msg["event"]["item"].update(call_id="call_d1", name="send_dtmf", arguments=arguments)
    return json.dumps(msg)


def test_send_dtmf_is_read_with_its_keys_checked() -> None:
    assert gpt_live.LiveInbound().feed(_dtmf_call('{"digits": "0#"}')) == [DtmfRequested("call_d1", "0#")]
    for bad in ('{"digits": ""}', '{"digits": "zero"}', '{"digits": "1w2"}', '{}'):
        (event,) = gpt_live.LiveInbound().feed(_dtmf_call(bad))
        assert isinstance(event, ToolCallRejected) and event.name == "send_dtmf", bad
    (event,) = gpt_live.LiveInbound().feed(_dtmf_call('{"digits": "zero"}'))
    assert "not keys: e o r z" in event.error


def test_the_send_dtmf_schema_pattern_matches_the_parser() -> None:
    tool = gpt_live.session_start(PLAN, "s")["session"]["delegation"]["responses"]["tools"][2]
    assert tool["name"] == "send_dtmf"
    assert tool["parameters"]["properties"]["digits"]["pattern"] == "^[0-9*#A-D]{1,16}$"


_TIMES = st.one_of(st.none(), st.integers(-(2**70), 2**70), st.booleans(), st.floats(allow_nan=False), st.text(max_size=3),
                   st.sampled_from(["12", "1.0", " 7"]))


@settings(max_examples=400, deadline=None)
@given(
    kind=st.one_of(st.sampled_from(["session.input_transcript.delta", "session.output_transcript.delta", "session.output_audio.delta",
                                    "session.input_transcript.done"]), st.lists(st.integers(), max_size=1), st.none()),
    delta=st.one_of(st.text(max_size=12), st.none(), st.integers(), st.lists(st.text(max_size=2), max_size=2)),
    start=_TIMES, end=_TIMES,
    drop=st.sets(st.sampled_from(["delta", "start_ms", "end_ms"])),
    extra=st.booleans(),
)
def test_the_quick_read_of_a_word_gives_exactly_what_the_validating_parser_gives(kind, delta, start, end, drop, extra) -> None:
    """Transcript deltas skip the models when they are plainly well formed: whatever the fields
    hold, feed's answer (the event, or the message of the error) is the validating parser's."""
    event = {"type": kind, "delta": delta, "start_ms": start, "end_ms": end, **({"item_id": "i1"} if extra else {})}
    for key in drop:
        del event[key]
    text_ = json.dumps(event)

    def answer(feed):
        try:
            return feed(text_)
        except LiveEventMalformed as exc:
            return str(exc)

    quick = answer(live().feed)
    with patch.object(gpt_live, "_plain_transcript_delta", lambda _: None):
        validated = answer(live().feed)
    assert quick == validated
    if type(quick) is list and quick and type(quick[0]) in (InputTranscript, OutputTranscript):
        assert type(quick[0].start_ms) in (int, type(None)) and type(quick[0].end_ms) in (int, type(None))


def test_a_word_is_read_without_the_models(monkeypatch) -> None:
    """The plain transcript delta (a few a second each way) never reaches the validating parser."""
    inbound = live()
    calls = []
    real = gpt_live._server_event.validate_json
    monkeypatch.setattr(gpt_live, "_server_event", type("Spy", (), {"validate_json": staticmethod(lambda t: calls.append(t) or real(t))}))
    assert inbound.feed(text("input_transcript_delta")) == [InputTranscript(" We open at nine on Saturdays", 14200, 16400)]
    assert inbound.feed(text("output_transcript_delta")) == [OutputTranscript(" Hi, this is an automated assistant", 1200, 3000)]
    assert calls == []
    assert inbound.feed('{"type": "session.output_transcript.delta", "delta": "x", "start_ms": "5"}') == [OutputTranscript("x", 5, None)]
    assert len(calls) == 1  # a time as text: the validating parser reads it


def test_the_steady_read_of_a_delta_gives_what_feed_would_and_leaves_the_rest_to_it() -> None:
    """`audio` is the GPT-Live task's read of the output deltas: feed's PCM, and every other event
    (a word, a started session) left to feed; a delta that is not base64 is refused as feed refuses it."""
    inbound = live()
    pcm = bytes(range(256)) * 4
    delta = json.dumps({"type": "session.output_audio.delta", "delta": base64.b64encode(pcm).decode()})
    assert inbound.audio(delta) == pcm and inbound.feed(delta) == [OutputAudio(pcm)]
    assert inbound.audio(text("output_transcript_delta")) is None
    assert inbound.audio('{"type": "session.output_audio.delta", "delta": 5}') is None  # not plain: feed explains it
    with pytest.raises(LiveEventMalformed, match="not base64"):
        inbound.audio('{"type": "session.output_audio.delta", "delta": "!!"}')
