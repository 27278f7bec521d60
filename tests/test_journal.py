"""events.jsonl rows: the fast path for audio writes exactly what the converter would."""

from __future__ import annotations

import json

import pytest

from calld.core import events as ev
from calld.core.effects import SendLiveAudio, SendMediaAudio
from calld.runtime.journal import converter, effect_row, event_row
from calld.core.effects import Effect


@pytest.mark.parametrize("event", [
    ev.MediaAudio(b"\x00" * 640, 7), ev.OutputAudio(b"\x01" * 3200),
    ev.InboundForwarded(frames=3, pcm_bytes=1920, first_chunk=10, last_chunk=12, loud=(True, False, True)),
    ev.InboundForwarded(frames=2, pcm_bytes=1280, first_chunk=1, last_chunk=3), ev.OutputForwarded(deltas=4, pcm_bytes=12800),
])
def test_audio_event_rows_match_the_converter(event):
    fast = json.loads(event_row(3, 40, event, {}, None))
    assert fast == {"seq": 3, "t_ms": 40, "event": converter.unstructure(event, ev.Event)}


@pytest.mark.parametrize("effect", [SendLiveAudio(b"\x00" * 640, 9, held=True), SendLiveAudio(b"", 1), SendMediaAudio(b"\x02" * 640)])
def test_audio_effect_rows_match_the_converter(effect):
    fast = json.loads(effect_row(5, 60, 4, effect))
    assert fast == {"seq": 5, "t_ms": 60, "cause": 4, "effect": converter.unstructure(effect, Effect)}


def test_an_audio_event_that_changed_a_track_keeps_its_changes():
    row = json.loads(event_row(1, 0, ev.MediaAudio(b"", 1), {"live": ["idle", "starting"]}, None))
    assert row["changed"] == {"live": ["idle", "starting"]}
