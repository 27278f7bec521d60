"""calld.core.replace.evolve: attrs.evolve's result for the reducer's per-frame copies, cheaper."""

from __future__ import annotations

import attrs
import pytest
from attrs import field, frozen

from calld.core import events as ev
from calld.core.replace import evolve
from calld.core.state import Call, Counters, Hold
from tests.core_helpers import HEARD, drive


def test_a_copy_of_a_call_is_what_attrs_evolve_builds_and_leaves_the_original_alone():
    call = drive(HEARD).call
    counters = evolve(call.counters, audio_in=call.counters.audio_in + 1)
    copy = evolve(call, counters=counters, line_sound=7)
    assert copy == attrs.evolve(call, counters=counters, line_sound=7)
    assert hash(copy) == hash(attrs.evolve(call, counters=counters, line_sound=7))
    assert type(copy) is Call and type(copy.counters) is Counters
    assert (copy.line_sound, copy.counters.audio_in) == (7, call.counters.audio_in + 1)
    assert (call.line_sound, call.counters.audio_in) == (0, counters.audio_in - 1)
    assert copy.transcript is call.transcript  # unchanged fields are shared, as attrs.evolve shares them


def test_a_copy_stays_frozen():
    copy = evolve(Hold("please hold"), quiet=3)
    with pytest.raises(attrs.exceptions.FrozenInstanceError):
        copy.quiet = 4  # type: ignore[misc]


def test_a_name_the_class_does_not_have_is_refused():
    with pytest.raises(TypeError):
        evolve(Counters(), audio_inn=1)


@frozen
class Checked:
    n: int = field(validator=attrs.validators.ge(0))


@frozen(slots=False)
class Converted:
    n: int = field(converter=int)


def test_classes_whose_construction_does_more_than_set_fields_still_get_it():
    assert evolve(ev.MediaAudio(b"\x00\x00", 1), chunk=2) == ev.MediaAudio(b"\x00\x00", 2)  # slotted
    with pytest.raises(ValueError):
        evolve(Checked(1), n=-1)
    assert evolve(Converted(1), n="5").n == 5
