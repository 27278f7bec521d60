"""Linq's Partner API v3 on the wire: inbound webhooks in, outbound message bodies out.

Wire JSON is parsed by the private pydantic models here into frozen domain values; nothing
past this module sees Linq's JSON. The shapes are those of the `linq-python` SDK's generated
types (webhook version 2026-02-03: `MessageReceivedWebhookEvent` / `MessageEventV2`; sending:
`MessageSendParams` / `MessageContentParam`); tests/test_messaging_contracts.py holds calld to
them. Open questions about the wire are in docs/linq.md.

Signatures are Standard Webhooks (`webhook-id`, `webhook-timestamp`, `webhook-signature`:
HMAC-SHA256 over `id.timestamp.body` with the `whsec_` secret), verified with the
`standardwebhooks` package, which also refuses timestamps more than 5 minutes off.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any, Literal

import standardwebhooks
from attrs import frozen
from pydantic import BaseModel, ConfigDict, Field, ValidationError

WEBHOOK_VERSION = "2026-02-03"
SIGNATURE_HEADERS = ("webhook-id", "webhook-timestamp", "webhook-signature")


class LinqWireError(ValueError):
    """A webhook body calld cannot read; the message says what is wrong (safe to log)."""


class LinqSignatureError(ValueError):
    """A webhook that must not be trusted; the route answers 401 and does nothing."""


# -- inbound -----------------------------------------------------------------------------------------


@frozen
class InboundText:
    """One text a person sent to our Linq line, as calld needs it."""

    event_id: str  # Linq's id for this delivery's event: the dedupe key
    message_id: str  # the message's own id: one request id per message
    chat_id: str  # replies go into this chat
    handle: str  # who sent it (E.164 or an Apple ID email), normalized
    text: str  # the text parts joined; "" when the message had only media
    service: str  # iMessage, SMS or RCS
    late: bool  # recovered by Linq's reconciliation: history, not a live message


@frozen
class Ignored:
    """A verified webhook calld has nothing to do with (another event type, our own message)."""

    event_id: str
    why: str


Inbound = InboundText | Ignored


class _Wire(BaseModel):
    model_config = ConfigDict(extra="ignore", frozen=True)  # Linq adds fields; do not break


class _Handle(_Wire):
    handle: str = Field(min_length=1)
    is_me: bool | None = None


class _Chat(_Wire):
    id: str = Field(min_length=1)
    is_group: bool | None = None


class _Part(_Wire):
    type: str
    value: str | None = None


class _MessageEvent(_Wire):
    id: str = Field(min_length=1)
    chat: _Chat
    direction: Literal["inbound", "outbound"]
    parts: list[_Part]
    sender_handle: _Handle
    service: str
    reconciled_at: str | None = None


class _Envelope(_Wire):
    event_id: str = Field(min_length=1)
    event_type: str
    webhook_version: str | None = None
    data: dict[str, Any]


def normalize_handle(handle: str) -> str:
    """One spelling per sender: E.164 digits as they are, email addresses in lower case."""
    handle = handle.strip()
    return handle.lower() if "@" in handle else handle


def parse_webhook(raw: bytes) -> Inbound:
    """A verified webhook body -> InboundText, or Ignored for what calld does not handle.

    Raises LinqWireError for a body that is not a Linq webhook, or a message.received that is
    not in the 2026-02-03 shape (the subscription URL must say ?version=2026-02-03).
    """
    try:
        envelope = _Envelope.model_validate_json(raw)
    except ValidationError as exc:
        raise LinqWireError(f"not a Linq webhook: {_first_problem(exc)}") from None
    if envelope.event_type != "message.received":
        return Ignored(envelope.event_id, f"event type {envelope.event_type}")
    if envelope.webhook_version != WEBHOOK_VERSION:
        raise LinqWireError(
            f"message.received in webhook version {envelope.webhook_version!r}; calld reads {WEBHOOK_VERSION} "
            f"(add ?version={WEBHOOK_VERSION} to the subscription URL)"
        )
    try:
        msg = _MessageEvent.model_validate(envelope.data)
    except ValidationError as exc:
        raise LinqWireError(f"message.received: {_first_problem(exc)}") from None
    if msg.direction != "inbound" or msg.sender_handle.is_me:
        return Ignored(envelope.event_id, "our own message")
    if msg.chat.is_group:
        return Ignored(envelope.event_id, "a group chat")  # one person, one request: groups are not served
    text = "\n".join(p.value.strip() for p in msg.parts if p.type == "text" and p.value and p.value.strip())
    return InboundText(
        event_id=envelope.event_id,
        message_id=msg.id,
        chat_id=msg.chat.id,
        handle=normalize_handle(msg.sender_handle.handle),
        text=text,
        service=msg.service,
        late=msg.reconciled_at is not None,
    )


def _first_problem(exc: ValidationError) -> str:
    e = exc.errors(include_url=False)[0]
    where = ".".join(str(p) for p in e["loc"]) or "body"
    return f"{where}: {e['msg']}"


# -- signatures ----------------------------------------------------------------------------------------


class WebhookVerifier:
    """Checks Standard Webhooks signatures with the line's signing secret (`whsec_...`)."""

    def __init__(self, secret: str) -> None:
        try:
            self._webhook = standardwebhooks.Webhook(secret)
        except (ValueError, standardwebhooks.webhooks.EmptyWebhookSecretError) as exc:
            raise ValueError(f"not a Standard Webhooks secret (whsec_ and base64): {exc}") from None

    def verify(self, raw: bytes, headers: dict[str, str]) -> None:
        """Raises LinqSignatureError saying why (never echoing the secret)."""
        try:
            self._webhook.verify(raw, headers, json_parse=False)
        except standardwebhooks.webhooks.WebhookVerificationError as exc:
            raise LinqSignatureError(str(exc).lower() or "bad signature") from None
        except (ValueError, UnicodeDecodeError):
            raise LinqSignatureError("malformed signature headers") from None


def sign_webhook(secret: str, raw: bytes, event_id: str, when: datetime | None = None) -> dict[str, str]:
    """The headers Linq sends with a body (for the fake Linq and tests)."""
    when = when or datetime.now(UTC)
    signature = standardwebhooks.Webhook(secret).sign(event_id, when, raw.decode())
    return {"webhook-id": event_id, "webhook-timestamp": str(int(when.timestamp())), "webhook-signature": signature}


# -- outbound ------------------------------------------------------------------------------------------


def send_body(text: str, idempotency_key: str, *, override_optout: bool = False) -> dict[str, Any]:
    """POST /v3/chats/{chat_id}/messages: one text part, keyed so a retry never sends twice."""
    body: dict[str, Any] = {"message": {"parts": [{"type": "text", "value": text}], "idempotency_key": idempotency_key}}
    if override_optout:
        body["override_optout"] = True
    return body


def error_code(body: bytes) -> int | str | None:
    """Linq's error code from an error response (`{"error": {"code": ...}}`, or a bare `code`)."""
    try:
        data = json.loads(body)
    except ValueError:
        return None
    if isinstance(data, dict):
        inner = data.get("error", data)
        if isinstance(inner, dict):
            code = inner.get("code")
            if isinstance(code, (int, str)):
                return code
    return None
