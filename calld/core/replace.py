"""`evolve` for the reducer's frozen attrs classes, at a fraction of attrs.evolve's cost.

attrs.evolve walks every field of the class and calls `__init__`, which sets each field
one by one (27 for `Call`); the reducer evolves a Call and its counters on every audio
frame, 50 times a second each way. The classes the reducer copies on every frame (`Call`,
`Counters`, ...) are frozen attrs classes without slots and without validators or
converters, so a copy is their `__dict__` copied in C with the changed names written over
it: the same frozen type, equal and hashing alike to what attrs.evolve would build. Any
other class (slotted, validated, converted) goes through attrs.evolve unchanged.
"""

from __future__ import annotations

from typing import Any, TypeVar

import attrs

T = TypeVar("T")

# Per class: the field names a copy may change, or None when only attrs.evolve is right for it.
_PLAIN: dict[type, frozenset[str] | None] = {}
_new = object.__new__


def evolve(inst: T, **changes: Any) -> T:
    """A copy of the frozen attrs instance `inst` with `changes` applied (by field name)."""
    cls = type(inst)
    try:
        names = _PLAIN[cls]
    except KeyError:
        names = _PLAIN[cls] = _plain_fields(cls)
    if names is None or not changes.keys() <= names:
        return attrs.evolve(inst, **changes)  # its own error for a name the class does not have
    new = _new(cls)
    state = new.__dict__
    state.update(inst.__dict__)
    state.update(changes)
    return new


def _plain_fields(cls: type) -> frozenset[str] | None:
    """The names a dict copy may set for `cls`, or None if building it may do more than set fields."""
    if "__dict__" not in dir(cls) or getattr(cls, "__attrs_post_init__", None) is not None:
        return None
    fields = attrs.fields(cls)
    if any(f.validator is not None or f.converter is not None or not f.init or f.alias != f.name for f in fields):
        return None
    return frozenset(f.name for f in fields)
