"""events.jsonl rows: the fast path for audio writes exactly what the converter would."""

from __future__ import annotations

import json

import pytest

from calld.core import events as ev
from calld.core.effects import Cancel, Schedule, SendLiveAudio, SendMediaAudio
from calld.runtime.journal import converter, effect_row, event_row
from calld.core.effects import Effect


@pytest.mark.parametrize("event", [
    ev.MediaAudio(b"\x00" * 640, 7), ev.MediaAudio(b"\x00" * 640, 8, "6c1a2f7e-\"3b9d"), ev.OutputAudio(b"\x01" * 3200),
    ev.InboundForwarded(frames=3, pcm_bytes=1920, first_chunk=10, last_chunk=12, loud=(True, False, True)),
    ev.InboundForwarded(frames=2, pcm_bytes=1280, first_chunk=1, last_chunk=3), ev.OutputForwarded(deltas=4, pcm_bytes=12800),
    ev.InputTranscript(" We open at 9.", 4000, 4300), ev.OutputTranscript(' "Thanks" \u2014 caf\u00e9\n', None, None),
    ev.InputTranscript("\x00\\ \U0001f600", 0, None),
])
def test_fast_event_rows_match_the_converter(event):
    # The very text the converter's row would be (json.dumps of it), not only the same data.
    assert event_row(3, 40, event, {}, None) == json.dumps({"seq": 3, "t_ms": 40, "event": converter.unstructure(event, ev.Event)})


@pytest.mark.parametrize("effect", [
    SendLiveAudio(b"\x00" * 640, 9, held=True), SendLiveAudio(b"", 1), SendMediaAudio(b"\x02" * 640),
    Schedule("stall", 20.0, ev.StallElapsed()), Schedule("drain", 10, ev.DrainTimedOut()), Schedule("trail", 0.4, ev.TrailElapsed()),
    Schedule("odd \"key\"", float("inf"), ev.CallCapElapsed()), Cancel("farewell"),
])
def test_fast_effect_rows_match_the_converter(effect):
    assert effect_row(5, 60, 4, effect) == json.dumps({"seq": 5, "t_ms": 60, "cause": 4, "effect": converter.unstructure(effect, Effect)})


def test_an_audio_event_that_changed_a_track_keeps_its_changes():
    row = json.loads(event_row(1, 0, ev.MediaAudio(b"", 1), {"live": ["idle", "starting"]}, None))
    assert row["changed"] == {"live": ["idle", "starting"]}
