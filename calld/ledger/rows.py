"""The ledger's rows, claims and errors: plain frozen values, the same whichever engine read them."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any, Literal

from attrs import frozen

from calld.domain.ids import E164, CallControlId, RunId, UserId
from calld.ledger.engine import Row

# Stub numbers come from the range reserved for fiction: +1 555 555 0100 to 0199.
_STUB_POOL = tuple(E164(f"+1555555{n:04d}") for n in range(100, 200))

DidStatus = Literal["ordering", "active", "failed"]
RequestKind = Literal["ask", "book"]
RequestStatus = Literal["placing", "in_flight", "done"]
_KINDS = ("ask", "book")


def customer_reference(user_id: UserId) -> str:
    """What a user's Telnyx number order carries, so an order can be found again by user."""
    return f"calld:user:{user_id}"


class LedgerError(RuntimeError):
    """The ledger was asked for a step its rows do not allow (a bug, or a newer schema)."""


class UnknownUser(LookupError):
    def __init__(self, user_id: UserId, status: str | None = None, failure: str | None = None) -> None:
        if status == "ordering":
            state = f"user {user_id!r} has no Telnyx number yet (its order has not finished)"
        elif status == "failed":
            state = f"user {user_id!r} has no Telnyx number (its last order failed: {failure or 'no reason given'})"
        else:
            state = f"user {user_id!r} has no Telnyx number yet"
        super().__init__(f"{state}; run: calld-ctl did provision --user {user_id}")


class UnknownRequest(LookupError):
    def __init__(self, request_id: str) -> None:
        super().__init__(f"no request {request_id!r} in the ledger")


class RequestConflict(ValueError):
    """The request id is taken by a request with other parameters. Nothing was written."""

    def __init__(self, request_id: str, differs: list[str]) -> None:
        self.request_id = request_id
        self.differs = tuple(differs)
        super().__init__(
            f"request id {request_id!r} was already used for a different request "
            f"(its {', '.join(differs)} differ); pick a new --request-id, "
            "or repeat the original request exactly to get its result"
        )


@frozen
class DidRow:
    user_id: UserId
    did: E164 | None
    status: str
    order_id: str | None
    customer_reference: str = ""
    failure: str | None = None


# -- request claims: a closed union ----------------------------------------------------------------


@frozen
class Fresh:
    """The row is written and the request is ours: dial it (with this run id)."""

    run_id: RunId


@frozen
class InFlight:
    """The same request is being placed or is on a call: attach to it and wait for its result."""

    run_id: RunId
    call_control_id: CallControlId | None


@frozen
class Finished:
    """The same request already finished: here is what it returned."""

    result: dict[str, Any]
    run_id: RunId


Claim = Fresh | InFlight | Finished


@frozen
class RequestRow:
    request_id: str
    run_id: RunId
    user_id: UserId
    kind: str
    params: dict[str, Any]
    status: str
    call_control_id: CallControlId | None
    result: dict[str, Any] | None
    created_at: str
    updated_at: str
    instance: str = ""  # the daemon that owns it (CALLD_INSTANCE; '' for the one daemon of a host)
    # A booking's --time as calld read it: ISO 8601 in the restaurant's zone, with its offset (None: an
    # ask, or a row from before ledger version 10)
    booking_at: str | None = None


def canonical_json(value: dict[str, Any]) -> str:
    """One spelling per value: sorted keys, no spaces, no NaN. Equal params compare equal as text."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="microseconds")



_DID_COLUMNS = "user_id, did, status, order_id, customer_reference, failure"
_REQUEST_COLUMNS = (
    "request_id, run_id, user_id, kind, params, status, call_control_id, result, created_at, updated_at, instance,"
    " booking_at"
)


def _did(r: Row) -> DidRow:
    return DidRow(
        user_id=UserId(r["user_id"]),
        did=E164(r["did"]) if r["did"] else None,
        status=r["status"],
        order_id=r["order_id"],
        customer_reference=r["customer_reference"],
        failure=r["failure"],
    )


def _request(r: Row) -> RequestRow:
    return RequestRow(
        request_id=r["request_id"],
        run_id=RunId(r["run_id"]),
        user_id=UserId(r["user_id"]),
        kind=r["kind"],
        params=json.loads(r["params"]),
        status=r["status"],
        call_control_id=CallControlId(r["call_control_id"]) if r["call_control_id"] else None,
        result=json.loads(r["result"]) if r["result"] is not None else None,
        created_at=r["created_at"],
        updated_at=r["updated_at"],
        instance=r["instance"],
        booking_at=r["booking_at"],
    )


_PUBLICATION_COLUMNS = (
    "run_id, call_control_id, user_id, run_dir, status, bucket, key_prefix, objects, local, attempts, last_error,"
    " created_at, updated_at, owner"
)


@frozen
class PublicationRow:
    run_id: RunId
    call_control_id: CallControlId | None
    user_id: UserId
    run_dir: str  # the run directory's name under the artifacts dir
    status: Literal["pending", "published"]
    bucket: str | None
    key_prefix: str | None
    objects: list[dict[str, Any]]  # name, key, sha256, size, content_type; empty until published
    local: Literal["kept", "audio_deleted", "deleted"]
    attempts: int
    last_error: dict[str, Any] | None
    created_at: str
    updated_at: str
    owner: str = ""  # the daemon that wrote the artifacts (and so publishes them)


def _publication(r: Row) -> PublicationRow:
    return PublicationRow(
        run_id=RunId(r["run_id"]),
        call_control_id=CallControlId(r["call_control_id"]) if r["call_control_id"] else None,
        user_id=UserId(r["user_id"]),
        run_dir=r["run_dir"],
        status=r["status"],
        bucket=r["bucket"],
        key_prefix=r["key_prefix"],
        objects=json.loads(r["objects"]) if r["objects"] else [],
        local=r["local"],
        attempts=r["attempts"],
        last_error=json.loads(r["last_error"]) if r["last_error"] else None,
        created_at=r["created_at"],
        updated_at=r["updated_at"],
        owner=r["owner"],
    )


# -- policy rows -------------------------------------------------------------------------------------


@frozen
class OptOutRow:
    number: str
    said_at: datetime
    quote: str
    user_id: str
    run_id: str


@frozen
class ScheduledRow:
    request_id: str
    user_id: UserId
    kind: str
    params: dict[str, Any]
    due_at: datetime
    mode: str
    status: str
    reason: str | None
    created_at: str
    claimed_by: str | None = None  # status 'claimed': the daemon placing it, until claimed_until (epoch s)
    claimed_until: float | None = None
    booking_at: str | None = None  # as RequestRow's: the booking's time as read when it was queued


_DAEMON_COLUMNS = "instance, lease_until, started_at, holder"


def _daemon(r: Row) -> DaemonRow:
    return DaemonRow(r["instance"], float(r["lease_until"]), r["started_at"], r["holder"])


_OPT_OUT_COLUMNS = "number, said_at, quote, user_id, run_id"
_SCHEDULE_COLUMNS = ("request_id, user_id, kind, params, due_at, mode, status, reason, created_at, claimed_by, claimed_until,"
                     " booking_at")


def _utc(at: datetime) -> str:
    if at.tzinfo is None:
        raise ValueError("ledger times must be timezone-aware")
    return at.astimezone(UTC).isoformat(timespec="seconds")


def _opt_out(r: Row) -> OptOutRow:
    return OptOutRow(r["number"], datetime.fromisoformat(r["said_at"]), r["quote"], r["user_id"], r["run_id"])


def _scheduled(r: Row) -> ScheduledRow:
    return ScheduledRow(
        request_id=r["request_id"], user_id=UserId(r["user_id"]), kind=r["kind"], params=json.loads(r["params"]),
        due_at=datetime.fromisoformat(r["due_at"]), mode=r["mode"], status=r["status"], reason=r["reason"],
        created_at=r["created_at"], claimed_by=r["claimed_by"], claimed_until=r["claimed_until"], booking_at=r["booking_at"],
    )


def _same(row: Row, user_id: str, kind: str, params: str) -> bool:
    return not _differs(row, user_id, kind, params)


def _differs(row: Row, user_id: str, kind: str, params: str) -> list[str]:
    pairs = (("user", row["user_id"], user_id), ("kind", row["kind"], kind),
             ("parameters", canonical_json(json.loads(row["params"])), params))
    return [name for name, ours, theirs in pairs if ours != theirs]




# -- daemons and texting rows --------------------------------------------------------------------


@frozen
class DaemonRow:
    instance: str
    lease_until: float  # epoch seconds: past it, another daemon may take its unfinished calls over
    started_at: str
    holder: str = ""  # host:state dir of the daemon that holds this instance ('' before ledger version 9)


@frozen
class MessageLinkRow:
    handle: str
    user_id: str
    name: str
    created_at: str


@frozen
class PendingRow:
    handle: str
    chat_id: str
    message_id: str
    intent: str  # JSON, as calld.messaging.store writes it
    expires_at: float


@frozen
class LastRequestRow:
    intent: str  # JSON
    request_id: str | None
    received_at: float
    result: dict[str, Any] | None
