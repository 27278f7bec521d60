"""Telnyx Call Control webhooks (raw POST bodies) -> domain events.

Telnyx reports each step of a call as a JSON envelope `{"data": {...}, "meta": {...}}`
(telnyx.md §2). The reducer needs only a handful of event types and a few fields of
each; Telnyx keeps adding both, so unknown types and extra keys are ignored rather
than rejected, and a new Telnyx feature cannot break a call. Pure translation: bytes
in, values out, no IO.
"""

from __future__ import annotations

import base64
import binascii
import logging
from typing import Annotated, Any

from attrs import frozen
from pydantic import BaseModel, ConfigDict, Discriminator, Field, Tag, TypeAdapter, ValidationError, model_validator

from calld.adapters._wire import problem
from calld.core.events import (
    CallAnswered,
    CallHungUp,
    CallInitiated,
    Event,
    MachineDetected,
    MachineGreetingEnded,
    StreamingFailed,
)
from calld.domain.ids import CallControlId, RunId

log = logging.getLogger("calld.telnyx")


class WebhookError(ValueError):
    """The body is not a Call Control webhook calld can act on; the message says why."""


@frozen
class Webhook:
    """One delivery. `event_id` is the dedupe key (Telnyx redelivers); `event` None = ignored type."""

    event_id: str
    event_type: str
    call_control_id: CallControlId | None
    run_id: RunId | None
    event: Event | None
    # The daemon that placed the call (from client_state): a webhook that reaches another daemon is
    # routed to it, never acted on (calld.daemon.public). None: a lone daemon's call, or no state.
    instance: int | None = None


# -- client_state: our run id (and the daemon that dialled) travel through Telnyx as base64 -------

INSTANCE_SEPARATOR = "@"  # "run_<hex>@2": run ids are hex after run_, so the separator is unambiguous


@frozen
class ClientState:
    run_id: RunId
    instance: int | None  # CALLD_INSTANCE of the daemon that placed the call; None: a lone daemon's call


def encode_client_state(run_id: RunId, instance: int | None = None) -> str:
    # A lone daemon's state stays the bare run id, as it always was: calls placed before an upgrade
    # are still recognized.
    text = run_id if instance is None else f"{run_id}{INSTANCE_SEPARATOR}{instance}"
    return base64.b64encode(text.encode("ascii")).decode("ascii")


def read_client_state(value: str | None) -> ClientState | None:
    """The run id and the dialling daemon inside a client_state, or None: other apps' or missing
    states are not errors."""
    if not value:
        return None
    try:
        run, sep, instance = base64.b64decode(value, validate=True).decode("ascii").partition(INSTANCE_SEPARATOR)
        if sep and not (instance.isdigit() and instance[0] != "0"):
            return None
        return ClientState(RunId(run), int(instance) if sep else None)
    except (binascii.Error, UnicodeDecodeError, ValueError):
        return None


def decode_client_state(value: str | None) -> RunId | None:
    """The run id inside a client_state, or None."""
    state = read_client_state(value)
    return state.run_id if state is not None else None


# -- wire models ---------------------------------------------------------------------------------


class _Wire(BaseModel):
    model_config = ConfigDict(extra="ignore", frozen=True)


class _CallPayload(_Wire):
    call_control_id: CallControlId
    client_state: str | None = None


class _HangupPayload(_CallPayload):
    hangup_cause: str | None = None
    hangup_source: str | None = None
    sip_hangup_cause: str | None = None


class _MachinePayload(_CallPayload):
    result: str = "not_sure"  # Telnyx's own "no verdict"; AMD is advisory anyway


class _StreamingFailedPayload(_CallPayload):
    failure_reason: str | None = None


class _AnyPayload(_Wire):
    # Unknown events need not concern a call (e.g. number orders), so the id is optional here,
    # and a payload of a shape calld does not know is no error: the event is only logged.
    call_control_id: CallControlId | None = None
    client_state: str | None = None

    @model_validator(mode="before")
    @classmethod
    def _what_is_readable(cls, value: Any) -> dict[str, Any]:
        if not isinstance(value, dict):
            return {}
        out: dict[str, Any] = {}
        try:
            out["call_control_id"] = CallControlId(value["call_control_id"])
        except (KeyError, TypeError, ValueError):
            pass
        if isinstance(value.get("client_state"), str):
            out["client_state"] = value["client_state"]
        return out


class _Data(_Wire):
    id: str = Field(min_length=1)
    event_type: str


class _Call(_Data):
    payload: _CallPayload


class _Hangup(_Data):
    payload: _HangupPayload


class _Machine(_Data):
    payload: _MachinePayload


class _StreamingFailed(_Data):
    payload: _StreamingFailedPayload


class _Other(_Data):
    payload: _AnyPayload = _AnyPayload()


_TAG_BY_TYPE = {
    "call.initiated": "call",
    "call.answered": "call",
    "call.hangup": "hangup",
    "call.machine.detection.ended": "machine",
    "call.machine.premium.detection.ended": "machine",
    "call.machine.greeting.ended": "machine",
    "call.machine.premium.greeting.ended": "machine",
    "streaming.failed": "streaming_failed",
}
_QUIET_TYPES = frozenset({"streaming.started", "streaming.stopped"})  # expected, nothing to do


def _data_tag(value: Any) -> str:
    event_type = value.get("event_type") if isinstance(value, dict) else getattr(value, "event_type", None)
    return _TAG_BY_TYPE.get(event_type, "other") if isinstance(event_type, str) else "other"


class _Envelope(_Wire):
    data: Annotated[
        Annotated[_Call, Tag("call")]
        | Annotated[_Hangup, Tag("hangup")]
        | Annotated[_Machine, Tag("machine")]
        | Annotated[_StreamingFailed, Tag("streaming_failed")]
        | Annotated[_Other, Tag("other")],
        Discriminator(_data_tag),
    ]


_envelope = TypeAdapter(_Envelope)


def _explain(exc: ValidationError) -> str:
    """'where: what' per problem, in the wire's own dotted names."""
    parts = []
    for err in exc.errors(include_url=False):
        loc = list(err["loc"])
        if loc[:1] == ["data"] and len(loc) > 1:
            del loc[1]  # the union tag pydantic inserts; not a wire name
        where = ".".join(map(str, loc)) or "body"
        parts.append(problem(err, where))
    return "; ".join(parts)


# -- parsing -------------------------------------------------------------------------------------


def parse_webhook(body: bytes) -> Webhook:
    """Parse one raw webhook body (after its signature was checked).

    Raises WebhookError when the body is not JSON, lacks `data.id`/`data.event_type`, or a
    known event lacks a valid `call_control_id`. Unknown event types are not errors.
    """
    try:
        data = _envelope.validate_json(body).data
    except ValidationError as exc:
        raise WebhookError(f"bad Telnyx webhook: {_explain(exc)}") from None
    state = read_client_state(data.payload.client_state)
    return Webhook(
        event_id=data.id,
        event_type=data.event_type,
        call_control_id=data.payload.call_control_id,
        run_id=state.run_id if state is not None else None,
        event=_to_event(data),
        instance=state.instance if state is not None else None,
    )


def _to_event(data: _Data) -> Event | None:
    match data:
        case _Call(event_type="call.initiated", payload=p):
            return CallInitiated(p.call_control_id)
        case _Call(payload=p):
            return CallAnswered(p.call_control_id)
        case _Hangup(payload=p):
            return CallHungUp(
                p.call_control_id,
                cause=p.hangup_cause or "unspecified",
                source=p.hangup_source or "unknown",
                sip_cause=p.sip_hangup_cause,
            )
        case _Machine(event_type=kind, payload=p) if kind.endswith(".greeting.ended"):
            return MachineGreetingEnded(p.result)
        case _Machine(payload=p):
            return MachineDetected(p.result)
        case _StreamingFailed(payload=p):
            return StreamingFailed(p.failure_reason or "unspecified")
        case _:
            level = logging.DEBUG if data.event_type in _QUIET_TYPES else logging.INFO
            log.log(level, "ignoring Telnyx webhook %s (%s)", data.event_type, data.id)
            return None
