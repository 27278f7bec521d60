"""Telnyx REST through httpx under trio: numbers, number orders, dial, hangup, DTMF, call status.

The dial body is built here from a DialPlan plus the per-call secrets the runtime
holds (stream URL token, stream auth token); `redacted` copies are what artifacts keep.
In stub mode a MockTransport serves raw fixtures, so the same request and parsing code runs.

Retries: every request goes through one bounded loop (`RetryPolicy.attempts`) with
exponential backoff slept on trio's clock, honouring Retry-After. A command (dial, hangup,
send_dtmf) is resent byte for byte, so it carries the SAME command_id every time and Telnyx
drops duplicates. Reads are safe to repeat. A number order has no idempotency key: it is
resent only when Telnyx cannot have acted on it (429, or the connection never opened);
after a timeout or a 5xx the order may exist, so the caller must look it up by its
customer_reference instead of ordering again (see calld.numbers).
"""

from __future__ import annotations

import logging
from typing import Any, Literal
from urllib.parse import quote

import httpx
import trio
from attrs import frozen
from pydantic import BaseModel, ConfigDict, ValidationError

from calld.adapters.telnyx_webhook import encode_client_state
from calld.core.plan import DialPlan
from calld.domain.ids import E164, CallControlId

log = logging.getLogger("calld.telnyx")

REDACTED = "[redacted]"
TELNYX_BASE_URL = "https://api.telnyx.com"
ALREADY_ENDED = "90018"
RATE_LIMITED = "10011"
DIALS_PER_SECOND = "90103"
_DTMF_DIGITS = frozenset("0123456789ABCD*#wW")


Reached = Literal["no", "maybe", "yes"]


class TelnyxError(RuntimeError):
    """Telnyx refused, failed, or did not answer. The message says what to do about it.

    `reached`: whether the request got to Telnyx: "yes" (Telnyx answered it), "no" (it never left:
    the connection was never made), "maybe" (it broke once the request was on its way: Telnyx may
    have acted on it)."""

    def __init__(self, message: str, *, status: int | None = None, codes: tuple[str, ...] = (),
                 reached: Reached = "yes") -> None:
        super().__init__(message)
        self.status = status
        self.codes = codes
        self.reached = reached


@frozen
class RetryPolicy:
    attempts: int = 4  # tries in all, the first included
    backoff_s: float = 0.5  # wait before the second try; doubles each time
    max_backoff_s: float = 8.0
    max_retry_after_s: float = 30.0  # Telnyx asks for a longer wait: give up and say so


# -- wire models (private): what we read from Telnyx, anything else ignored ------------------------


class _Wire(BaseModel):
    model_config = ConfigDict(extra="ignore", frozen=True)


class _DialData(_Wire):
    call_control_id: CallControlId


class _DialResponse(_Wire):
    data: _DialData


class _CallData(_Wire):
    call_control_id: CallControlId
    is_alive: bool
    call_leg_id: str | None = None
    call_session_id: str | None = None
    client_state: str | None = None
    start_time: str | None = None
    end_time: str | None = None
    call_duration: int | None = None


class _CallResponse(_Wire):
    data: _CallData


class _Cost(_Wire):
    currency: str | None = None
    monthly_cost: str | None = None
    upfront_cost: str | None = None


class _Feature(_Wire):
    name: str


class _Available(_Wire):
    phone_number: E164
    features: list[_Feature] = []
    cost_information: _Cost | None = None


class _AvailableList(_Wire):
    data: list[_Available]


class _OrderNumber(_Wire):
    id: str | None = None
    phone_number: E164 | None = None
    status: str | None = None
    requirements_status: str | None = None


class _Order(_Wire):
    id: str
    status: str
    phone_numbers: list[_OrderNumber] = []
    customer_reference: str | None = None
    connection_id: str | None = None
    created_at: str | None = None


class _OrderResponse(_Wire):
    data: _Order


class _OrderList(_Wire):
    data: list[_Order]


class _Owned(_Wire):
    id: str
    phone_number: E164
    status: str | None = None
    connection_id: str | None = None
    customer_reference: str | None = None


class _OwnedList(_Wire):
    data: list[_Owned]


class _ErrorSource(_Wire):
    pointer: str | None = None
    parameter: str | None = None


class _Error(_Wire):
    code: str | int | None = None
    title: str | None = None
    detail: str | None = None
    source: _ErrorSource | None = None


class _Errors(_Wire):
    errors: list[_Error] = []


# -- public values ---------------------------------------------------------------------------------


@frozen
class DialSecrets:
    stream_url: str  # carries the per-call media token in its path
    stream_auth_token: str
    webhook_url: str | None


@frozen
class Dialled:
    call_control_id: CallControlId
    request: dict[str, Any]  # the body as sent, secrets replaced by REDACTED


@frozen
class AvailableNumber:
    phone_number: E164
    features: tuple[str, ...]
    monthly_cost: str | None
    upfront_cost: str | None
    currency: str | None


@frozen
class OrderedNumber:
    phone_number: E164 | None
    status: str | None
    requirements_status: str | None


ORDER_DONE = "success"
ORDER_PENDING = "pending"


@frozen
class NumberOrder:
    id: str
    status: str  # pending, success, failure; Telnyx also documents cancelled and deleted
    phone_numbers: tuple[OrderedNumber, ...]
    customer_reference: str | None
    connection_id: str | None
    created_at: str | None = None

    @property
    def succeeded(self) -> bool:
        return self.status == ORDER_DONE

    @property
    def pending(self) -> bool:
        return self.status == ORDER_PENDING

    def number(self) -> E164 | None:
        """The number this order bought (calld orders one per order)."""
        return next((n.phone_number for n in self.phone_numbers if n.phone_number), None)

    def failure_reason(self) -> str:
        """Telnyx's own words for why the order ended without a number."""
        parts = []
        for n in self.phone_numbers:
            said = ", ".join(
                f"{k} {v}" for k, v in (("status", n.status), ("requirements", n.requirements_status)) if v
            )
            if said:
                parts.append(f"{n.phone_number or 'number'}: {said}")
        detail = f" ({'; '.join(parts)})" if parts else ""
        return f"Telnyx number order {self.id} ended {self.status!r}{detail}"


@frozen
class PhoneNumber:
    id: str
    phone_number: E164
    status: str | None
    connection_id: str | None
    customer_reference: str | None


@frozen
class CallInfo:
    call_control_id: CallControlId
    is_alive: bool
    start_time: str | None
    end_time: str | None
    call_duration: int | None
    client_state: str | None


# -- dial body -------------------------------------------------------------------------------------


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
        "client_state": encode_client_state(plan.run_id, plan.instance),
        "command_id": plan.command_id,
        "timeout_secs": plan.timeout_secs,
        "time_limit_secs": plan.time_limit_secs,
    }
    if plan.amd_mode != "disabled":
        body["answering_machine_detection"] = plan.amd_mode
    if secrets.webhook_url:
        body["webhook_url"] = secrets.webhook_url
    return body


def redact_dial_body(body: dict[str, Any], secrets: DialSecrets) -> dict[str, Any]:
    out = dict(body)
    out["stream_auth_token"] = REDACTED
    base, _, _token = secrets.stream_url.rpartition("/")
    out["stream_url"] = f"{base}/{REDACTED}"
    return out


# -- errors ----------------------------------------------------------------------------------------


def _errors(resp: httpx.Response) -> list[_Error]:
    try:
        return _Errors.model_validate_json(resp.content).errors
    except ValidationError:
        return []


def _codes(resp: httpx.Response) -> tuple[str, ...]:
    return tuple(str(e.code) for e in _errors(resp) if e.code is not None)


def _field(pointer: str) -> str:
    """'/phone_numbers/0/phone_number' -> 'phone_numbers[0].phone_number'."""
    out = ""
    for part in (p for p in pointer.split("/") if p):
        out += f"[{part}]" if part.isdigit() else (f".{part}" if out else part)
    return out or pointer


def _said(errors: list[_Error], resp: httpx.Response) -> str:
    parts = []
    for e in errors:
        head = " ".join(x for x in (f"{e.code}" if e.code is not None else "", e.title or "") if x)
        parts.append(f"{head}: {e.detail}" if head and e.detail else head or (e.detail or ""))
    text = "; ".join(p for p in parts if p)
    return text or (resp.text[:200].strip() or "no error body")


def error_for(resp: httpx.Response, what: str) -> TelnyxError:
    """A TelnyxError whose message says what failed and what to fix."""
    status = resp.status_code
    errors = _errors(resp)
    codes = tuple(str(e.code) for e in errors if e.code is not None)
    said = _said(errors, resp)
    if status == 401:
        msg = f"Telnyx refused the API key (401) when {what}: check TELNYX_API_KEY ({said})"
    elif status == 403:
        msg = (
            f"Telnyx forbade {what} (403): {said}. The API key's account is not allowed to do this;"
            " check the account's verification level, its outbound voice profile and the Call Control"
            " connection (TELNYX_CONNECTION_ID)"
        )
    elif status == 422:
        fields = []
        for e in errors:
            where = (e.source.pointer or e.source.parameter) if e.source else None
            about = e.detail or e.title or "invalid"
            fields.append(f"field {_field(where)!r}: {about}" if where else about)
        msg = f"Telnyx rejected {what} (422): {'; '.join(fields) or said}"
    elif status == 429:
        if DIALS_PER_SECOND in codes:
            why = f"code {DIALS_PER_SECOND}: over the account's dials-per-second limit (30 a second by default)"
        elif RATE_LIMITED in codes:
            why = f"code {RATE_LIMITED}: over the API rate limit"
        else:
            why = said
        msg = f"Telnyx rate-limited {what} (429, {why}); wait and try again, or place fewer calls at once"
    elif status >= 500:
        msg = f"Telnyx failed {what} ({status}, a Telnyx-side error): {said}"
    else:
        msg = f"Telnyx refused {what} ({status}): {said}"
    return TelnyxError(msg, status=status, codes=codes)


def _retry_after(resp: httpx.Response) -> float | None:
    for header, scale in (("retry-after-ms", 0.001), ("retry-after", 1.0)):
        raw = resp.headers.get(header)
        if raw is None:
            continue
        try:
            seconds = float(raw) * scale
        except ValueError:
            continue  # an HTTP date; Telnyx sends seconds
        if seconds >= 0:
            return seconds
    return None


def _path(call_control_id: CallControlId, action: str | None = None) -> str:
    # call_control_id is opaque ('v3:...'); keep RFC 3986 pchars as they are, escape the rest.
    ccid = quote(call_control_id, safe=":@!$&'()*+,;=-._~")
    return f"/v2/calls/{ccid}" + (f"/actions/{action}" if action else "")


# Failures where the request never reached Telnyx: resending cannot duplicate anything.
_UNSENT = (httpx.ConnectError, httpx.ConnectTimeout, httpx.PoolTimeout, httpx.ProxyError, httpx.UnsupportedProtocol)
# Every other httpx.HTTPError (timeouts and broken reads or writes, protocol errors either side, a
# connection that failed to close, a body that would not decode, redirects without end) may come
# once the request was on its way, or after Telnyx answered: Telnyx may have acted, so only what is
# idempotent is resent.

Resend = Literal["idempotent", "unsent_only"]


def open_client(
    api_key: str, *, transport: httpx.AsyncBaseTransport | None = None, base_url: str = TELNYX_BASE_URL
) -> httpx.AsyncClient:
    """The AsyncClient TelnyxHttp expects (base URL, bearer key, sane timeouts). Use `async with`."""
    return httpx.AsyncClient(
        base_url=base_url,
        headers={"Authorization": f"Bearer {api_key}"},
        timeout=httpx.Timeout(10.0, connect=3.0),
        limits=httpx.Limits(max_connections=20),
        transport=transport,
    )


class TelnyxHttp:
    """Telnyx over REST. `client` carries base_url and the Authorization header."""

    def __init__(self, client: httpx.AsyncClient, connection_id: str, *, retry: RetryPolicy | None = None) -> None:
        self._client = client
        self._connection_id = connection_id
        self._retry = retry or RetryPolicy()
        if self._retry.attempts < 1:
            raise ValueError("RetryPolicy.attempts must be at least 1")

    # -- the one request loop ----------------------------------------------------------------------

    async def _request(
        self,
        method: str,
        path: str,
        *,
        what: str,
        params: dict[str, str | int] | None = None,
        body: dict[str, Any] | None = None,
        resend: Resend = "idempotent",
    ) -> httpx.Response:
        """The final response (2xx or an error not worth resending), or TelnyxError when none came."""
        policy = self._retry
        delay = policy.backoff_s
        reached: Reached = "no"  # an earlier attempt may have got there even if the last did not
        for attempt in range(1, policy.attempts + 1):
            last = attempt == policy.attempts
            try:
                resp = await self._client.request(method, path, params=params, json=body)
            except httpx.HTTPError as exc:
                unsent = isinstance(exc, _UNSENT)
                if not unsent:
                    reached = "maybe"
                safe = unsent or resend == "idempotent"
                if last or not safe:
                    more = "" if safe else " (not resent: Telnyx may have acted on it)"
                    raise TelnyxError(
                        f"Telnyx did not answer when {what}, after {attempt} attempt(s){more}:"
                        f" {type(exc).__name__} {exc}".rstrip(),
                        reached=reached,
                    ) from exc
                wait = delay
                log.warning("telnyx: %s: %s; retrying in %.2fs", what, type(exc).__name__, wait)
            else:
                reached = "maybe"  # a later attempt's failure cannot say Telnyx never saw this one
                status = resp.status_code
                if resend == "idempotent":
                    retryable = status in (408, 429) or status >= 500
                else:
                    retryable = status == 429
                if not retryable or last:
                    return resp
                asked = _retry_after(resp)
                if asked is not None and asked > policy.max_retry_after_s:
                    return resp  # the error says rate-limited; waiting that long is the caller's call
                wait = max(delay, asked) if asked is not None else delay
                log.warning("telnyx: %s: HTTP %s; retrying in %.2fs", what, status, wait)
            await trio.sleep(wait)
            delay = min(delay * 2, policy.max_backoff_s)
        raise AssertionError("unreachable: the last attempt returns or raises")

    async def _ok(self, method: str, path: str, *, what: str, **kw: Any) -> httpx.Response:
        resp = await self._request(method, path, what=what, **kw)
        if resp.status_code >= 300:
            raise error_for(resp, what)
        return resp

    @staticmethod
    def _parse[M: BaseModel](model: type[M], resp: httpx.Response, what: str) -> M:
        try:
            return model.model_validate_json(resp.content)
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(map(str, first["loc"]))
            raise TelnyxError(
                f"Telnyx answered {what} with a body calld cannot read ({where}: {first['msg']})",
                status=resp.status_code,
            ) from exc

    # -- numbers -----------------------------------------------------------------------------------

    async def available_numbers(
        self,
        country: str = "US",
        features: tuple[str, ...] = ("voice",),
        limit: int = 5,
        *,
        number_type: str = "local",
    ) -> list[AvailableNumber]:
        what = f"searching {country} {number_type} numbers with {', '.join(features)}"
        params: dict[str, str | int] = {
            "filter[country_code]": country,
            "filter[phone_number_type]": number_type,
            "filter[limit]": limit,
        }
        if features:
            params["filter[features]"] = ",".join(features)
        resp = await self._ok("GET", "/v2/available_phone_numbers", what=what, params=params)
        return [
            AvailableNumber(
                phone_number=a.phone_number,
                features=tuple(f.name for f in a.features),
                monthly_cost=a.cost_information.monthly_cost if a.cost_information else None,
                upfront_cost=a.cost_information.upfront_cost if a.cost_information else None,
                currency=a.cost_information.currency if a.cost_information else None,
            )
            for a in self._parse(_AvailableList, resp, what).data
        ]

    async def create_number_order(self, phone_number: E164, connection_id: str, customer_reference: str) -> NumberOrder:
        """Order one number on the Call Control connection. Resent only when Telnyx cannot have acted."""
        what = f"ordering {phone_number}"
        body = {
            "phone_numbers": [{"phone_number": phone_number}],
            "connection_id": connection_id,
            "customer_reference": customer_reference,
        }
        resp = await self._ok("POST", "/v2/number_orders", what=what, body=body, resend="unsent_only")
        return _order(self._parse(_OrderResponse, resp, what).data)

    async def get_number_order(self, order_id: str) -> NumberOrder:
        what = f"reading number order {order_id}"
        resp = await self._ok("GET", f"/v2/number_orders/{quote(order_id, safe='')}", what=what)
        return _order(self._parse(_OrderResponse, resp, what).data)

    async def list_number_orders(self, customer_reference: str, *, page_size: int = 50) -> list[NumberOrder]:
        what = f"listing number orders for {customer_reference}"
        params: dict[str, str | int] = {"filter[customer_reference]": customer_reference, "page[size]": page_size}
        resp = await self._ok("GET", "/v2/number_orders", what=what, params=params)
        return [_order(o) for o in self._parse(_OrderList, resp, what).data]

    async def list_phone_numbers(
        self,
        *,
        customer_reference: str | None = None,
        phone_number: E164 | None = None,
        status: str | None = None,
        connection_id: str | None = None,
        page_size: int = 25,
    ) -> list[PhoneNumber]:
        what = "listing the account's phone numbers"
        params: dict[str, str | int] = {"page[size]": page_size}
        for key, value in (
            ("customer_reference", customer_reference),
            ("phone_number", phone_number),
            ("status", status),
            ("connection_id", connection_id),
        ):
            if value is not None:
                params[f"filter[{key}]"] = value
        resp = await self._ok("GET", "/v2/phone_numbers", what=what, params=params)
        return [
            PhoneNumber(n.id, n.phone_number, n.status, n.connection_id, n.customer_reference)
            for n in self._parse(_OwnedList, resp, what).data
        ]

    # -- calls -------------------------------------------------------------------------------------

    async def dial(self, plan: DialPlan, secrets: DialSecrets) -> Dialled:
        body = dial_body(plan, self._connection_id, secrets)
        what = f"dialling {plan.to.masked()}"
        resp = await self._ok("POST", "/v2/calls", what=what, body=body)
        ccid = self._parse(_DialResponse, resp, what).data.call_control_id
        return Dialled(ccid, redact_dial_body(body, secrets))

    async def hangup(self, call_control_id: CallControlId, command_id: str) -> str:
        """'requested', or 'already_ended' when Telnyx says the call is over (422, code 90018)."""
        what = f"hanging up {call_control_id}"
        resp = await self._request("POST", _path(call_control_id, "hangup"), what=what, body={"command_id": command_id})
        if resp.status_code < 300:
            return "requested"
        if resp.status_code == 422 and ALREADY_ENDED in _codes(resp):
            return "already_ended"
        raise error_for(resp, what)

    async def send_dtmf(self, call_control_id: CallControlId, digits: str, command_id: str) -> None:
        if not digits or len(digits) > 64 or not set(digits) <= _DTMF_DIGITS:
            raise ValueError(f"DTMF digits must be 1 to 64 of 0-9 A-D * # w W, not {digits!r}")
        what = f"sending DTMF to {call_control_id}"
        await self._ok(
            "POST",
            _path(call_control_id, "send_dtmf"),
            what=what,
            body={"digits": digits, "command_id": command_id},
        )

    async def get_call(self, call_control_id: CallControlId) -> CallInfo:
        what = f"reading call {call_control_id}"
        resp = await self._ok("GET", _path(call_control_id), what=what)
        d = self._parse(_CallResponse, resp, what).data
        return CallInfo(d.call_control_id, d.is_alive, d.start_time, d.end_time, d.call_duration, d.client_state)


def _order(o: _Order) -> NumberOrder:
    return NumberOrder(
        id=o.id,
        status=o.status,
        phone_numbers=tuple(OrderedNumber(n.phone_number, n.status, n.requirements_status) for n in o.phone_numbers),
        customer_reference=o.customer_reference,
        connection_id=o.connection_id,
        created_at=o.created_at,
    )
