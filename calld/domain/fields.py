"""A request's JSON fields and the calld-ctl flags they are typed as: one table, both ways. Pure.

The rules that check a request speak to the person at calld-ctl, so their messages name flags
("--party must be a whole number ..."). The control API speaks JSON: its errors name the field
instead, written `party` (`for_api`), and say which field in "field". calld-ctl's client turns each
`field` back into its flag (`for_ctl`), so one message reads right on both sides. A calld-ctl command
a message suggests ("run: calld-ctl did provision --user alice") is left as typed: it is a command.
"""

from __future__ import annotations

import re

FLAGS: dict[str, str] = {
    "to": "--to", "ask": "--ask", "name": "--name", "item": "--item", "user": "--user", "request_id": "--request-id",
    "party": "--party", "time": "--time", "notes": "--notes", "window": "--window",
    "scenario": "--scenario", "when_open": "--when-open", "at": "--at",
}
FIELDS: dict[str, str] = {flag: field for field, flag in FLAGS.items()}

_FLAG = re.compile(r"(?<![\w-])(--[a-z][a-z-]*)(?![\w-])")
_FIELD = re.compile(r"`([a-z_]+)`")
_COMMAND = re.compile(r"calld-ctl(?: (?!--)[\w.:/+-]+| --[a-z-]+(?: (?!--)[\w.:/+-]+)?)+")  # a command as typed


def for_api(message: str) -> str:
    """`message` with each calld-ctl flag of a request named as its JSON field (`party`), outside commands."""
    out, at = [], 0
    for command in _COMMAND.finditer(message):
        out += [_fields(message[at:command.start()]), command.group(0)]
        at = command.end()
    return "".join([*out, _fields(message[at:])])


def _fields(text: str) -> str:
    return _FLAG.sub(lambda m: f"`{FIELDS[m.group(1)]}`" if m.group(1) in FIELDS else m.group(1), text)


def for_ctl(message: str) -> str:
    """The control API's `message` as calld-ctl says it: each `field` of a request as its flag."""
    return _FIELD.sub(lambda m: FLAGS.get(m.group(1), m.group(0)), message)


def field_named(message: str) -> str | None:
    """The first request field `message` (as for_api wrote it) names, or None."""
    for m in _FIELD.finditer(message):
        if m.group(1) in FLAGS:
            return m.group(1)
    return None
