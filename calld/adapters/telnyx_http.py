"""Telnyx REST: dial and hangup, through httpx (a MockTransport serves fixtures in stub mode).

The dial body is built here from a DialPlan plus the per-call secrets the runtime
holds (stream URL token, stream auth token); `redacted` copies are what artifacts keep.
"""

from __future__ import annotations

from typing import Any

import httpx
from attrs import frozen
from pydantic import BaseModel, ConfigDict

from calld.adapters.telnyx_webhook import encode_client_state
from calld.core.plan import DialPlan
from calld.domain.ids import CallControlId

REDACTED = "[redacted]"


class TelnyxError(RuntimeError):
    pass


class _Wire(BaseModel):
    model_config = ConfigDict(extra="ignore", frozen=True)


class _DialData(_Wire):
    call_control_id: CallControlId


class _DialResponse(_Wire):
    data: _DialData


@frozen
class DialSecrets:
    stream_url: str  # carries the per-call media token in its path
    stream_auth_token: str
    webhook_url: str | None


@frozen
class Dialled:
    call_control_id: CallControlId
    request: dict[str, Any]  # the body as sent, secrets replaced by REDACTED


def dial_body(plan: DialPlan, connection_id: str, secrets: DialSecrets) -> dict[str, Any]:
    body: dict[str, Any] = {
        "connection_id": connection_id,
        "from": plan.from_,
        "to": plan.to,
        "stream_url": secrets.stream_url,
        "stream_track": "inbound_track",
        "stream_codec": plan.codec,
        # rtp, not the default mp3: in mp3 mode Telnyx silently drops raw audio we send.
        "stream_bidirectional_mode": "rtp",
        "stream_bidirectional_codec": plan.codec,
        "stream_bidirectional_sampling_rate": plan.sample_rate,
        "stream_bidirectional_target_legs": plan.target_legs,
        "stream_auth_token": secrets.stream_auth_token,
        "client_state": encode_client_state(plan.run_id),
        "command_id": plan.command_id,
        "timeout_secs": plan.timeout_secs,
        "time_limit_secs": plan.time_limit_secs,
    }
    if secrets.webhook_url:
        body["webhook_url"] = secrets.webhook_url
    return body


def redact_dial_body(body: dict[str, Any], secrets: DialSecrets) -> dict[str, Any]:
    out = dict(body)
    out["stream_auth_token"] = REDACTED
    base, _, _token = secrets.stream_url.rpartition("/")
    out["stream_url"] = f"{base}/{REDACTED}"
    return out


def _error_text(resp: httpx.Response) -> str:
    try:
        errors = resp.json().get("errors") or []
    except ValueError:
        return resp.text[:200]
    parts = [f"{e.get('code')}: {e.get('title')} {e.get('detail') or ''}".strip() for e in errors]
    return "; ".join(parts) or resp.text[:200]


class TelnyxHttp:
    """Call Control over REST. `client` carries base_url and the Authorization header."""

    def __init__(self, client: httpx.AsyncClient, connection_id: str) -> None:
        self._client = client
        self._connection_id = connection_id

    async def dial(self, plan: DialPlan, secrets: DialSecrets) -> Dialled:
        body = dial_body(plan, self._connection_id, secrets)
        resp = await self._client.post("/v2/calls", json=body)
        if resp.status_code == 401:
            raise TelnyxError("Telnyx refused the API key (401): check TELNYX_API_KEY")
        if resp.status_code >= 400:
            raise TelnyxError(f"Telnyx refused the dial ({resp.status_code}): {_error_text(resp)}")
        ccid = _DialResponse.model_validate_json(resp.content).data.call_control_id
        return Dialled(ccid, redact_dial_body(body, secrets))

    async def hangup(self, call_control_id: CallControlId, command_id: str) -> str:
        """'requested', or 'already_ended' when Telnyx says the call is over (422, code 90018)."""
        resp = await self._client.post(
            f"/v2/calls/{call_control_id}/actions/hangup", json={"command_id": command_id}
        )
        if resp.status_code < 300:
            return "requested"
        if resp.status_code == 422:
            try:
                codes = {str(e.get("code")) for e in resp.json().get("errors") or []}
            except ValueError:
                codes = set()
            if "90018" in codes:
                return "already_ended"
        raise TelnyxError(f"Telnyx refused the hangup ({resp.status_code}): {_error_text(resp)}")
