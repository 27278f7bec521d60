"""The statements more than one of the ledger's methods runs, each inside the caller's transaction.

The Ledger (calld.ledger.ledger) opens one transaction per method; these read and write rows on
the `Tx` they are handed, and open none of their own.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from calld.domain.ids import RunId, UserId
from calld.ledger.engine import IntegrityViolation, Tx, all_rows, count, one
from calld.ledger.rows import (
    _DID_COLUMNS,
    _KINDS,
    _OPT_OUT_COLUMNS,
    _PUBLICATION_COLUMNS,
    _REQUEST_COLUMNS,
    _SCHEDULE_COLUMNS,
    Claim,
    DidRow,
    Finished,
    Fresh,
    InFlight,
    LedgerError,
    MessageLinkRow,
    OptOutRow,
    PublicationRow,
    RequestConflict,
    RequestRow,
    ScheduledRow,
    UnknownRequest,
    UnknownUser,
    _did,
    _now,
    _opt_out,
    _publication,
    _request,
    _scheduled,
    _utc,
    canonical_json,
)



def _request_key(request_id: str) -> str:
    return f"calld:request:{request_id}"


def _request_args(request_id: str, user_id: UserId, kind: str, params: dict[str, Any],
                  run_id: RunId) -> tuple[UserId, RunId, str]:
    if not request_id:
        raise ValueError("a request id must not be empty")
    if kind not in _KINDS:
        raise ValueError(f"request kind must be one of {', '.join(_KINDS)}, not {kind!r}")
    return UserId(user_id), RunId(run_id), canonical_json(params)


def _existing_claim(tx: Tx, request_id: str, user_id: UserId, kind: str, text: str, run_id: RunId) -> Claim | None:
    """What a known request id answers (None: it is new). Raises RequestConflict for other parameters."""
    r = one(tx, f"SELECT {_REQUEST_COLUMNS} FROM requests WHERE request_id = ?", (request_id,))
    if r is None:
        return None
    row = _request(r)
    differs = [
        name
        for name, ours, theirs in (
            ("user", row.user_id, user_id),
            ("kind", row.kind, kind),
            ("parameters", canonical_json(row.params), text),
        )
        if ours != theirs
    ]
    if differs:
        raise RequestConflict(request_id, differs)
    if row.status == "done":
        assert row.result is not None
        return Finished(row.result, row.run_id)
    if row.run_id == run_id and row.status == "placing" and row.call_control_id is None:
        # Our own claim, committed by an attempt whose answer was lost (a dropped connection): still ours.
        return Fresh(run_id)
    return InFlight(row.run_id, row.call_control_id)


def _insert_request(tx: Tx, request_id: str, user_id: UserId, kind: str, text: str, run_id: RunId,
                    instance: str, booking_at: str | None = None) -> bool:
    """True when the row is new; False when the request id is taken (a concurrent insert of it waits
    for the other transaction, then finds it: the key, not a read, decides)."""
    now = _now()
    try:
        return tx.execute(
            "INSERT INTO requests (request_id, run_id, user_id, kind, params, status, created_at, updated_at, instance, booking_at)"
            " VALUES (?, ?, ?, ?, ?, 'placing', ?, ?, ?, ?) ON CONFLICT (request_id) DO NOTHING",
            (request_id, run_id, user_id, kind, text, now, now, instance, booking_at),
        ).rowcount == 1
    except IntegrityViolation as exc:  # run_id UNIQUE: a caller reused a run id
        raise LedgerError(f"run id {run_id} already belongs to another request") from exc


def _log_dial(tx: Tx, request_id: str, number: str, user_id: str, at: datetime) -> None:
    tx.execute(
        "INSERT INTO dial_log (request_id, number, user_id, dialled_at) VALUES (?, ?, ?, ?)"
        # a request id given back (nothing dialled) and dialled again: its call is the new one
        " ON CONFLICT (request_id) DO UPDATE SET dialled_at = excluded.dialled_at",
        (request_id, number, user_id, _utc(at)),
    )


def _did_row(tx: Tx, user_id: str, *, lock: bool = False) -> DidRow | None:
    r = one(tx, f"SELECT {_DID_COLUMNS} FROM dids WHERE user_id = ?{' FOR UPDATE' if lock else ''}", (user_id,))
    return None if r is None else _did(r)


def _did_rows(tx: Tx) -> list[DidRow]:
    return [_did(r) for r in all_rows(tx, f"SELECT {_DID_COLUMNS} FROM dids ORDER BY user_id")]


def _must_did(tx: Tx, user_id: str, *, lock: bool = False) -> DidRow:
    row = _did_row(tx, user_id, lock=lock)
    if row is None:
        raise UnknownUser(UserId(user_id))
    return row


def _must_request(tx: Tx, request_id: str, *, lock: bool = False) -> RequestRow:
    r = one(tx, f"SELECT {_REQUEST_COLUMNS} FROM requests WHERE request_id = ?{' FOR UPDATE' if lock else ''}",
            (request_id,))
    if r is None:
        raise UnknownRequest(request_id)
    return _request(r)


def _must_publication(tx: Tx, run_id: str) -> PublicationRow:
    r = one(tx, f"SELECT {_PUBLICATION_COLUMNS} FROM publications WHERE run_id = ?", (run_id,))
    if r is None:
        raise LedgerError(f"no publication for run {run_id!r}")
    return _publication(r)


def _must_scheduled(tx: Tx, request_id: str) -> ScheduledRow:
    r = one(tx, f"SELECT {_SCHEDULE_COLUMNS} FROM schedule WHERE request_id = ?", (request_id,))
    if r is None:
        raise UnknownRequest(request_id)
    return _scheduled(r)


def _opt_out_row(tx: Tx, number: str) -> OptOutRow | None:
    r = one(tx, f"SELECT {_OPT_OUT_COLUMNS} FROM opt_outs WHERE number = ?", (number,))
    return None if r is None else _opt_out(r)


def _dials_to(tx: Tx, number: str, since: datetime, until: datetime) -> int:
    return count(tx, "SELECT count(*) AS n FROM dial_log WHERE number = ? AND dialled_at > ? AND dialled_at <= ?",
                 (number, _utc(since), _utc(until)))


def _dials_by(tx: Tx, user_id: str, since: datetime, until: datetime) -> int:
    return count(tx, "SELECT count(*) AS n FROM dial_log WHERE user_id = ? AND dialled_at > ? AND dialled_at <= ?",
                 (user_id, _utc(since), _utc(until)))


def _calls_on_line_to(tx: Tx, number: str, since: datetime) -> int:
    return count(
        tx,
        "SELECT count(*) AS n FROM dial_log JOIN requests USING (request_id) WHERE number = ? AND status != 'done'"
        " AND dialled_at > ?",
        (number, _utc(since)),
    )


def _message_link(tx: Tx, handle: str) -> MessageLinkRow | None:
    r = one(tx, "SELECT handle, user_id, name, created_at FROM message_links WHERE handle = ?", (handle,))
    return None if r is None else MessageLinkRow(r["handle"], r["user_id"], r["name"], r["created_at"])
