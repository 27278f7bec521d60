"""events.jsonl rows: events and effects in one sequence, tagged by their `kind`.

cattrs with explicit `kind` tags (a class rename must not change the format).
Audio payloads are journaled as their byte length: the WAV files hold the sound.
"""

from __future__ import annotations

import json
import math
from typing import Any, get_args

import attrs
from cattrs.preconf.json import make_converter
from cattrs.strategies import configure_tagged_union

from calld.core import events as ev
from calld.core.effects import Cancel, Effect, Schedule, SendLiveAudio, SendMediaAudio
from calld.domain.ids import BRANDS

converter = make_converter(forbid_extra_keys=True)
converter.register_unstructure_hook(bytes, len)
for _brand in BRANDS:
    converter.register_structure_hook(_brand, lambda v, cl: cl(v))
# Order matters: Schedule carries a TimerEvent, so that union is configured first.
for _union in (ev.TimerEvent, ev.Event, Effect):
    configure_tagged_union(_union, converter, tag_generator=lambda cl: cl.kind, tag_name="kind")


_string = json.encoder.encode_basestring_ascii  # what json.dumps writes for a str, in C
_PLAIN_TIMERS = frozenset(cl for cl in get_args(ev.TimerEvent) if not attrs.fields(cl))  # rows of just their kind
_TIMES = (int, type(None))
_JSON_BOOLS = ("false", "true")  # indexed by a bool


def _int(value: int | None) -> str:
    return "null" if value is None else str(value)


def event_row(seq: int, t_ms: int, event: ev.Event, changed: dict[str, list[str]], ignored: str | None) -> str:
    # Audio frames are most of the journal (50 a second each way): write them without the converter.
    if not changed and ignored is None:
        if type(event) is ev.MediaAudio:
            stream = "null" if event.stream_id is None else _string(event.stream_id)
            return (f'{{"seq": {seq}, "t_ms": {t_ms}, "event": {{"pcm": {len(event.pcm)}, "chunk": {event.chunk}, '
                    f'"stream_id": {stream}, "kind": "media.audio"}}}}')
        if type(event) is ev.OutputAudio:
            return f'{{"seq": {seq}, "t_ms": {t_ms}, "event": {{"pcm": {len(event.pcm)}, "kind": "live.output_audio"}}}}'
        if type(event) is ev.InboundForwarded:  # the converter's row, written by hand: one per stretch
            loud = ", ".join(map(_JSON_BOOLS.__getitem__, event.loud))  # in C: a stretch has 25
            return (f'{{"seq": {seq}, "t_ms": {t_ms}, "event": {{"frames": {event.frames}, "pcm_bytes": {event.pcm_bytes}, '
                    f'"first_chunk": {event.first_chunk}, "last_chunk": {event.last_chunk}, "loud": [{loud}], '
                    f'"kind": "media.audio_forwarded"}}}}')
        if type(event) is ev.OutputForwarded:
            return (f'{{"seq": {seq}, "t_ms": {t_ms}, "event": {{"deltas": {event.deltas}, "pcm_bytes": {event.pcm_bytes}, '
                    f'"kind": "live.output_audio_forwarded"}}}}')
        if ((type(event) is ev.InputTranscript or type(event) is ev.OutputTranscript)  # a few a second each way
                and type(event.start_ms) in _TIMES and type(event.end_ms) in _TIMES):
            return (f'{{"seq": {seq}, "t_ms": {t_ms}, "event": {{"text": {_string(event.text)}, "start_ms": {_int(event.start_ms)}, '
                    f'"end_ms": {_int(event.end_ms)}, "kind": "{event.kind}"}}}}')
    row: dict[str, Any] = {"seq": seq, "t_ms": t_ms, "event": converter.unstructure(event, ev.Event)}
    if changed:
        row["changed"] = changed
    if ignored:
        row["ignored"] = ignored
    return json.dumps(row)  # the row is plain data already: the converter's dumps would walk it again


def effect_row(seq: int, t_ms: int, cause: int, effect: Effect) -> str:
    if type(effect) is SendLiveAudio:
        held = "true" if effect.held else "false"
        return (f'{{"seq": {seq}, "t_ms": {t_ms}, "cause": {cause}, "effect": {{"pcm": {len(effect.pcm)}, '
                f'"chunk": {effect.chunk}, "held": {held}, "kind": "live.audio"}}}}')
    if type(effect) is SendMediaAudio:
        return f'{{"seq": {seq}, "t_ms": {t_ms}, "cause": {cause}, "effect": {{"pcm": {len(effect.pcm)}, "kind": "media.audio"}}}}'
    # The stall failsafe is re-armed on every fragment of speech: its rows are written by hand too.
    if type(effect) is Schedule and type(effect.event) in _PLAIN_TIMERS and type(effect.delay_s) in (int, float) and math.isfinite(effect.delay_s):
        return (f'{{"seq": {seq}, "t_ms": {t_ms}, "cause": {cause}, "effect": {{"key": {_string(effect.key)}, '
                f'"delay_s": {effect.delay_s!r}, "event": {{"kind": "{effect.event.kind}"}}, "kind": "schedule"}}}}')
    if type(effect) is Cancel:
        return f'{{"seq": {seq}, "t_ms": {t_ms}, "cause": {cause}, "effect": {{"key": {_string(effect.key)}, "kind": "cancel"}}}}'
    return json.dumps({"seq": seq, "t_ms": t_ms, "cause": cause, "effect": converter.unstructure(effect, Effect)})
