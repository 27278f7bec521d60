"""The SQLite ledger: who owns which Telnyx number, and which request dialled which call.

Every side effect is keyed on the thing being done, never on an attempt:

- a number is keyed on the user (UNIQUE(user_id), UNIQUE(did)): a second number for one
  user cannot be written, and an interrupted order is found again through its row;
- a call is keyed on the request id (PRIMARY KEY): the same request never dials twice,
  a repeat gets the stored result or the call already in flight.

Schema changes go through MIGRATIONS, numbered by PRAGMA user_version: append, never edit
one that has shipped. Each check-and-write runs inside BEGIN IMMEDIATE, so two writers
(threads, processes, or two connections in one trio run) cannot both pass the check.
All calls are synchronous and short; async callers call them directly.
"""

from __future__ import annotations

import json
import os
import sqlite3
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

from attrs import frozen

from calld.domain.ids import E164, CallControlId, RunId, UserId

MIGRATIONS: tuple[str, ...] = (
    # 1: users' numbers
    """
    CREATE TABLE dids (
        user_id TEXT NOT NULL UNIQUE,
        did TEXT UNIQUE,
        status TEXT NOT NULL CHECK (status IN ('ordering', 'active', 'failed')),
        order_id TEXT,
        customer_reference TEXT NOT NULL,
        failure TEXT,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL
    );
    """,
    # 2: call requests, keyed on the request id
    """
    CREATE TABLE requests (
        request_id TEXT PRIMARY KEY,
        run_id TEXT NOT NULL UNIQUE,
        user_id TEXT NOT NULL,
        kind TEXT NOT NULL CHECK (kind IN ('ask', 'book')),
        params TEXT NOT NULL,
        status TEXT NOT NULL CHECK (status IN ('placing', 'in_flight', 'done')),
        call_control_id TEXT,
        result TEXT,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL
    );
    CREATE INDEX requests_by_created ON requests (created_at);
    """,
    # 3: who is placing a user's number order right now (a lease, so a crash does not wedge it)
    """
    ALTER TABLE dids ADD COLUMN order_holder TEXT;
    ALTER TABLE dids ADD COLUMN order_held_until REAL;
    """,
    # 4: texting calld (calld.messaging.store): linked handles, inbound events, opt-outs, pending confirmations
    """
    CREATE TABLE message_links (
        handle TEXT PRIMARY KEY,
        user_id TEXT NOT NULL,
        name TEXT NOT NULL,
        created_at TEXT NOT NULL
    );
    CREATE TABLE message_events (
        event_id TEXT PRIMARY KEY,
        message_id TEXT NOT NULL,
        handle TEXT NOT NULL,
        chat_id TEXT NOT NULL,
        outcome TEXT NOT NULL DEFAULT 'received',
        request_id TEXT,
        received_at REAL NOT NULL
    );
    CREATE INDEX message_events_by_handle ON message_events (handle, received_at);
    CREATE TABLE message_optouts (
        handle TEXT PRIMARY KEY,
        at TEXT NOT NULL
    );
    CREATE TABLE message_pending (
        handle TEXT PRIMARY KEY,
        chat_id TEXT NOT NULL,
        message_id TEXT NOT NULL,
        intent TEXT NOT NULL,
        expires_at REAL NOT NULL
    );
    """,
    # 5: publishing a finished call's artifacts (calld.publish): what is unpublished, and where
    # the published objects are once the run directory may be gone
    """
    CREATE TABLE publications (
        run_id TEXT PRIMARY KEY,
        call_control_id TEXT,
        user_id TEXT NOT NULL,
        run_dir TEXT NOT NULL,
        status TEXT NOT NULL CHECK (status IN ('pending', 'published')),
        bucket TEXT,
        key_prefix TEXT,
        objects TEXT,
        local TEXT NOT NULL DEFAULT 'kept' CHECK (local IN ('kept', 'audio_deleted', 'deleted')),
        attempts INTEGER NOT NULL DEFAULT 0,
        last_error TEXT,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL
    );
    CREATE INDEX publications_by_status ON publications (status, created_at);
    CREATE INDEX publications_by_call ON publications (call_control_id);
    """,
    # 6: policy (calld.policy): numbers that asked not to be called, the dial log the rate limits
    # count, and requests queued for later. Times are UTC ISO 8601 text (they sort as text).
    """
    CREATE TABLE opt_outs (
        number TEXT PRIMARY KEY,
        said_at TEXT NOT NULL,
        quote TEXT NOT NULL,
        user_id TEXT NOT NULL,
        run_id TEXT NOT NULL
    );
    CREATE TABLE dial_log (
        request_id TEXT PRIMARY KEY,
        number TEXT NOT NULL,
        user_id TEXT NOT NULL,
        dialled_at TEXT NOT NULL
    );
    CREATE INDEX dial_log_by_number ON dial_log (number, dialled_at);
    CREATE INDEX dial_log_by_user ON dial_log (user_id, dialled_at);
    CREATE TABLE schedule (
        request_id TEXT PRIMARY KEY,
        user_id TEXT NOT NULL,
        kind TEXT NOT NULL CHECK (kind IN ('ask', 'book')),
        params TEXT NOT NULL,
        due_at TEXT NOT NULL,
        mode TEXT NOT NULL CHECK (mode IN ('when_open', 'at')),
        status TEXT NOT NULL CHECK (status IN ('queued', 'dialled', 'cancelled', 'refused')),
        reason TEXT,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL
    );
    CREATE INDEX schedule_by_due ON schedule (status, due_at);
    """,
    # 7: texting calld: the request a text asked for (its intent), so a follow-up that names no number
    # ("what about Sunday?", "call them again") finds the sender's last request and its result
    """
    ALTER TABLE message_events ADD COLUMN intent TEXT;
    """,
)

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


def canonical_json(value: dict[str, Any]) -> str:
    """One spelling per value: sorted keys, no spaces, no NaN. Equal params compare equal as text."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="microseconds")


class Ledger:
    def __init__(self, path: Path, *, clock: Callable[[], float] = time.time) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self._clock = clock  # wall time, for order leases only
        # isolation_level=None: we issue BEGIN IMMEDIATE ourselves, so the lock covers the check.
        self._db = sqlite3.connect(path, isolation_level=None, timeout=10.0)
        self._db.row_factory = sqlite3.Row
        try:
            self._db.execute("PRAGMA journal_mode=WAL")
            # A commit writes the WAL without an fsync (4 ms p50, 12 ms p99 on a VM's disk, on the
            # event loop every call's audio shares). Durability comes from flush_to_disk, which the
            # daemon runs in a worker thread at the two moments that need it: before a dial (one
            # request, one call, even across a power cut) and before a result is told.
            self._db.execute("PRAGMA synchronous=NORMAL")
            self._db.execute("PRAGMA foreign_keys=ON")
            self._migrate()
        except BaseException:
            self._db.close()
            raise

    def flush_to_disk(self) -> None:
        """Make every committed transaction durable: fsync the write-ahead log. Blocking (an fsync);
        safe from a worker thread while the connection goes on committing in its own."""
        try:
            fd = os.open(f"{self.path}-wal", os.O_RDONLY)
        except FileNotFoundError:
            return  # checkpointed into the database file, which the checkpoint synced
        try:
            os.fsync(fd)
        finally:
            os.close(fd)

    def close(self) -> None:
        self._db.close()

    @property
    def schema_version(self) -> int:
        return int(self._db.execute("PRAGMA user_version").fetchone()[0])

    def _migrate(self) -> None:
        with self._write():
            version = self.schema_version
            if version > len(MIGRATIONS):
                raise LedgerError(
                    f"{self.path} has schema version {version}, newer than this calld knows "
                    f"({len(MIGRATIONS)}); run the calld that wrote it, or upgrade"
                )
            for number, sql in enumerate(MIGRATIONS[version:], start=version + 1):
                for statement in _statements(sql):
                    self._db.execute(statement)
                self._db.execute(f"PRAGMA user_version = {number}")

    @contextmanager
    def _write(self) -> Iterator[sqlite3.Connection]:
        self._db.execute("BEGIN IMMEDIATE")
        try:
            yield self._db
        except BaseException:
            self._db.execute("ROLLBACK")
            raise
        else:
            self._db.execute("COMMIT")

    # -- numbers -------------------------------------------------------------------------------------

    def did_for(self, user_id: UserId) -> E164:
        row = self._did_row(self._db, user_id)
        if row is None or row.status != "active" or row.did is None:
            raise UnknownUser(user_id, row.status if row else None, row.failure if row else None)
        return row.did

    def did_row(self, user_id: UserId) -> DidRow | None:
        return self._did_row(self._db, user_id)

    def rows(self) -> list[DidRow]:
        return [_did(r) for r in self._db.execute(f"SELECT {_DID_COLUMNS} FROM dids ORDER BY user_id")]

    def reserve_did(self, user_id: UserId) -> DidRow:
        """The user's row whatever its status; if there is none, a new 'ordering' row (one, ever)."""
        user_id = UserId(user_id)
        with self._write() as db:
            now = _now()
            db.execute(
                "INSERT INTO dids (user_id, status, customer_reference, created_at, updated_at)"
                " VALUES (?, 'ordering', ?, ?, ?) ON CONFLICT (user_id) DO NOTHING",
                (user_id, customer_reference(user_id), now, now),
            )
            return self._must_did(db, user_id)

    def claim_order(self, user_id: UserId, holder: str, *, lease_s: float) -> bool:
        """Take the right to place this user's order. True for one holder at a time.

        Only an 'ordering' row with no order id yet can be claimed. A lease that ran out
        (its holder crashed, or hung past it) can be taken over.
        """
        with self._write() as db:
            row = db.execute(
                "SELECT status, order_id, order_holder, order_held_until FROM dids WHERE user_id = ?", (user_id,)
            ).fetchone()
            if row is None or row["status"] != "ordering" or row["order_id"] is not None:
                return False
            now = self._clock()
            held = row["order_holder"] is not None and (row["order_held_until"] or 0.0) > now
            if held and row["order_holder"] != holder:
                return False
            db.execute(
                "UPDATE dids SET order_holder = ?, order_held_until = ?, updated_at = ? WHERE user_id = ?",
                (holder, now + lease_s, _now(), user_id),
            )
            return True

    def release_order(self, user_id: UserId, holder: str) -> None:
        """Give the claim back (nothing recorded); a no-op when someone else holds it."""
        with self._write() as db:
            db.execute(
                "UPDATE dids SET order_holder = NULL, order_held_until = NULL, updated_at = ?"
                " WHERE user_id = ? AND order_holder = ?",
                (_now(), user_id, holder),
            )

    def record_order(self, user_id: UserId, order_id: str) -> DidRow:
        """Save the Telnyx order id on the 'ordering' row, as soon as Telnyx names it."""
        with self._write() as db:
            row = self._must_did(db, user_id)
            if row.order_id == order_id:
                return row
            if row.status != "ordering" or row.order_id is not None:
                raise LedgerError(
                    f"cannot record order {order_id!r} for user {user_id!r}: the row is {row.status}"
                    f" with order {row.order_id!r}"
                )
            db.execute(
                "UPDATE dids SET order_id = ?, order_holder = NULL, order_held_until = NULL, updated_at = ?"
                " WHERE user_id = ?",
                (order_id, _now(), user_id),
            )
            return self._must_did(db, user_id)

    def activate_did(self, user_id: UserId, did: E164) -> DidRow:
        did = E164(did)
        with self._write() as db:
            row = self._must_did(db, user_id)
            if row.status == "active":
                if row.did != did:
                    raise LedgerError(f"user {user_id!r} already has {row.did}; not replacing it with {did}")
                return row
            owner = db.execute("SELECT user_id FROM dids WHERE did = ?", (did,)).fetchone()
            if owner is not None:
                raise LedgerError(f"{did} already belongs to user {owner['user_id']!r}")
            db.execute(
                "UPDATE dids SET did = ?, status = 'active', failure = NULL, order_holder = NULL,"
                " order_held_until = NULL, updated_at = ? WHERE user_id = ?",
                (did, _now(), user_id),
            )
            return self._must_did(db, user_id)

    def fail_did(self, user_id: UserId, reason: str) -> DidRow:
        with self._write() as db:
            row = self._must_did(db, user_id)
            if row.status == "active":
                raise LedgerError(f"user {user_id!r} already has {row.did}; not marking it failed")
            if row.status == "failed":
                return row  # the first reason stands
            db.execute(
                "UPDATE dids SET status = 'failed', failure = ?, order_holder = NULL, order_held_until = NULL,"
                " updated_at = ? WHERE user_id = ?",
                (reason, _now(), user_id),
            )
            return self._must_did(db, user_id)

    def retry_did(self, user_id: UserId) -> DidRow:
        """failed -> ordering, with the old order and reason cleared. Other statuses: unchanged."""
        with self._write() as db:
            db.execute(
                "UPDATE dids SET status = 'ordering', order_id = NULL, failure = NULL, order_holder = NULL,"
                " order_held_until = NULL, updated_at = ? WHERE user_id = ? AND status = 'failed'",
                (_now(), user_id),
            )
            return self._must_did(db, user_id)

    def provision_stub(self, user_id: UserId) -> E164:
        """Stub mode: give the user the first free fictional number, once."""
        with self._write() as db:
            row = self._did_row(db, user_id)
            if row is not None and row.did:
                return row.did
            taken = {r["did"] for r in db.execute("SELECT did FROM dids WHERE did IS NOT NULL")}
            free = next((d for d in _STUB_POOL if d not in taken), None)
            if free is None:
                raise RuntimeError("the stub number pool (+15555550100..0199) is used up")
            now = _now()
            db.execute(
                "INSERT INTO dids (user_id, did, status, order_id, customer_reference, created_at, updated_at)"
                " VALUES (?, ?, 'active', 'stub-order', ?, ?, ?)"
                " ON CONFLICT (user_id) DO UPDATE SET did = excluded.did, status = 'active',"
                " order_id = excluded.order_id, failure = NULL, order_holder = NULL, order_held_until = NULL,"
                " updated_at = excluded.updated_at",
                (user_id, free, customer_reference(user_id), now, now),
            )
            return free

    def _did_row(self, db: sqlite3.Connection, user_id: str) -> DidRow | None:
        r = db.execute(f"SELECT {_DID_COLUMNS} FROM dids WHERE user_id = ?", (user_id,)).fetchone()
        return None if r is None else _did(r)

    def _must_did(self, db: sqlite3.Connection, user_id: str) -> DidRow:
        row = self._did_row(db, user_id)
        if row is None:
            raise UnknownUser(UserId(user_id))
        return row

    # -- requests ------------------------------------------------------------------------------------

    def claim_request(
        self,
        request_id: str,
        *,
        user_id: UserId,
        kind: RequestKind,
        params: dict[str, Any],
        run_id: RunId,
    ) -> Claim:
        """Write the request before anything is dialled, or say what already happened to it.

        Fresh: the row is new and the caller must dial. InFlight: the same request is being
        placed or is on a call. Finished: its stored result. A different request under the same
        id raises RequestConflict and writes nothing.
        """
        if not request_id:
            raise ValueError("a request id must not be empty")
        if kind not in _KINDS:
            raise ValueError(f"request kind must be one of {', '.join(_KINDS)}, not {kind!r}")
        user_id, run_id = UserId(user_id), RunId(run_id)
        text = canonical_json(params)
        with self._write() as db:
            now = _now()
            try:
                added = db.execute(
                    "INSERT INTO requests (request_id, run_id, user_id, kind, params, status, created_at, updated_at)"
                    " VALUES (?, ?, ?, ?, ?, 'placing', ?, ?) ON CONFLICT (request_id) DO NOTHING",
                    (request_id, run_id, user_id, kind, text, now, now),
                ).rowcount
            except sqlite3.IntegrityError as exc:  # run_id UNIQUE: a caller reused a run id
                raise LedgerError(f"run id {run_id} already belongs to another request") from exc
            if added:
                return Fresh(run_id)
            row = self._must_request(db, request_id)
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
            return InFlight(row.run_id, row.call_control_id)

    def mark_dialled(self, request_id: str, call_control_id: CallControlId) -> RequestRow:
        """Telnyx accepted the dial: placing -> in_flight, with the call's id."""
        call_control_id = CallControlId(call_control_id)
        with self._write() as db:
            row = self._must_request(db, request_id)
            if row.call_control_id == call_control_id:
                return row
            if row.status != "placing":
                raise LedgerError(
                    f"request {request_id!r} is {row.status} with call {row.call_control_id!r};"
                    f" not attaching call {call_control_id!r}"
                )
            db.execute(
                "UPDATE requests SET status = 'in_flight', call_control_id = ?, updated_at = ? WHERE request_id = ?",
                (call_control_id, _now(), request_id),
            )
            return self._must_request(db, request_id)

    def finish_request(self, request_id: str, result: dict[str, Any]) -> RequestRow:
        """Store the result, once. A second finish keeps the first result and returns the row."""
        text = canonical_json(result)
        with self._write() as db:
            row = self._must_request(db, request_id)
            if row.status == "done":
                return row
            db.execute(
                "UPDATE requests SET status = 'done', result = ?, updated_at = ? WHERE request_id = ?",
                (text, _now(), request_id),
            )
            return self._must_request(db, request_id)

    def forget_request(self, request_id: str) -> bool:
        """Give a request id back when nothing was dialled for it (the row is still 'placing' with
        no call): a local failure before the dial does not use the id up. True if it was removed."""
        with self._write() as db:
            return bool(db.execute(
                "DELETE FROM requests WHERE request_id = ? AND status = 'placing' AND call_control_id IS NULL",
                (request_id,),
            ).rowcount)

    def requests_for_call(self, ident: str) -> list[RequestRow]:
        """The requests whose run id or call control id is `ident` (more than one only if a
        carrier reused a call id)."""
        rows = self._db.execute(
            f"SELECT {_REQUEST_COLUMNS} FROM requests WHERE run_id = ? OR call_control_id = ? ORDER BY created_at",
            (ident, ident),
        )
        return [_request(r) for r in rows]

    def request(self, request_id: str) -> RequestRow | None:
        r = self._db.execute(f"SELECT {_REQUEST_COLUMNS} FROM requests WHERE request_id = ?", (request_id,)).fetchone()
        return None if r is None else _request(r)

    def requests(self, limit: int = 50, *, status: RequestStatus | None = None) -> list[RequestRow]:
        """The newest requests first; `status` picks e.g. the unfinished ones after a restart."""
        if limit < 1:
            raise ValueError("limit must be at least 1")
        where, args = ("WHERE status = ?", (status,)) if status else ("", ())
        rows = self._db.execute(
            f"SELECT {_REQUEST_COLUMNS} FROM requests {where} ORDER BY created_at DESC, rowid DESC LIMIT ?",
            (*args, limit),
        )
        return [_request(r) for r in rows]

    # -- history (calld-ctl history, show) ----------------------------------------------------------

    def history(self, *, user: UserId | None = None, status: str | None = None, since: str | None = None,
                limit: int = 50) -> list[RequestRow]:
        """Requests newest first. `status` is the call's (answered, failed, ...) once it is done, else the
        request's own (placing, in_flight); `since` an ISO 8601 UTC time the request was made at or after."""
        if limit < 1:
            raise ValueError("limit must be at least 1")
        clauses, args = [], []
        if user is not None:
            clauses.append("user_id = ?")
            args.append(user)
        if status is not None:
            clauses.append("(CASE WHEN status = 'done' THEN json_extract(result, '$.status') ELSE status END) = ?")
            args.append(status)
        if since is not None:
            clauses.append("created_at >= ?")
            args.append(since)
        where = f"WHERE {' AND '.join(clauses)}" if clauses else ""
        rows = self._db.execute(
            f"SELECT {_REQUEST_COLUMNS} FROM requests {where} ORDER BY created_at DESC, rowid DESC LIMIT ?",
            (*args, limit),
        )
        return [_request(r) for r in rows]

    def request_for_call(self, ident: str) -> RequestRow | None:
        """The request that placed a call, by its run id or call_control_id (the result outlives the artifacts)."""
        r = self._db.execute(
            f"SELECT {_REQUEST_COLUMNS} FROM requests WHERE run_id = ? OR call_control_id = ? LIMIT 1", (ident, ident)
        ).fetchone()
        return None if r is None else _request(r)

    def _must_request(self, db: sqlite3.Connection, request_id: str) -> RequestRow:
        r = db.execute(f"SELECT {_REQUEST_COLUMNS} FROM requests WHERE request_id = ?", (request_id,)).fetchone()
        if r is None:
            raise UnknownRequest(request_id)
        return _request(r)


    # -- publishing (calld.publish) -------------------------------------------------------------------

    def enqueue_publication(self, run_id: RunId, call_control_id: CallControlId | None, user_id: UserId, run_dir: str) -> PublicationRow:
        """A finished call's artifacts are to be published; once per run (a repeat returns the row)."""
        with self._write() as db:
            now = _now()
            db.execute(
                "INSERT INTO publications (run_id, call_control_id, user_id, run_dir, status, created_at, updated_at)"
                " VALUES (?, ?, ?, ?, 'pending', ?, ?) ON CONFLICT (run_id) DO NOTHING",
                (RunId(run_id), call_control_id, UserId(user_id), run_dir, now, now),
            )
            return self._must_publication(db, run_id)

    def publication(self, ident: str) -> PublicationRow | None:
        """By run id or call_control_id."""
        r = self._db.execute(
            f"SELECT {_PUBLICATION_COLUMNS} FROM publications WHERE run_id = ? OR call_control_id = ?"
            " ORDER BY created_at DESC LIMIT 1",
            (ident, ident),
        ).fetchone()
        return None if r is None else _publication(r)

    def unpublished(self) -> list[PublicationRow]:
        """Oldest first: what a (re)started daemon still owes the bucket."""
        rows = self._db.execute(
            f"SELECT {_PUBLICATION_COLUMNS} FROM publications WHERE status = 'pending' ORDER BY created_at, rowid"
        )
        return [_publication(r) for r in rows]

    def publication_failed(self, run_id: str, error: dict[str, Any]) -> PublicationRow:
        with self._write() as db:
            db.execute(
                "UPDATE publications SET attempts = attempts + 1, last_error = ?, updated_at = ?"
                " WHERE run_id = ? AND status = 'pending'",
                (canonical_json(error), _now(), run_id),
            )
            return self._must_publication(db, run_id)

    def publication_done(self, run_id: str, *, bucket: str, key_prefix: str, objects: list[dict[str, Any]]) -> PublicationRow:
        with self._write() as db:
            db.execute(
                "UPDATE publications SET status = 'published', bucket = ?, key_prefix = ?, objects = ?,"
                " attempts = attempts + 1, last_error = NULL, updated_at = ? WHERE run_id = ?",
                (bucket, key_prefix, json.dumps(objects, separators=(",", ":")), _now(), run_id),
            )
            return self._must_publication(db, run_id)

    def publication_local(self, run_id: str, local: Literal["kept", "audio_deleted", "deleted"]) -> PublicationRow:
        with self._write() as db:
            db.execute("UPDATE publications SET local = ?, updated_at = ? WHERE run_id = ?", (local, _now(), run_id))
            return self._must_publication(db, run_id)

    def result_of_run(self, run_id: str) -> dict[str, Any] | None:
        """The stored result of the request that ran as `run_id` (its run directory may be gone)."""
        r = self._db.execute("SELECT result FROM requests WHERE run_id = ?", (run_id,)).fetchone()
        return json.loads(r["result"]) if r is not None and r["result"] is not None else None

    def _must_publication(self, db: sqlite3.Connection, run_id: str) -> PublicationRow:
        r = db.execute(f"SELECT {_PUBLICATION_COLUMNS} FROM publications WHERE run_id = ?", (run_id,)).fetchone()
        if r is None:
            raise LedgerError(f"no publication for run {run_id!r}")
        return _publication(r)

    # -- policy: opt-outs, the dial log, the schedule (calld.policy) ---------------------------------

    def opt_out(self, number: str) -> OptOutRow | None:
        r = self._db.execute(f"SELECT {_OPT_OUT_COLUMNS} FROM opt_outs WHERE number = ?", (number,)).fetchone()
        return None if r is None else _opt_out(r)

    def opt_outs(self) -> list[OptOutRow]:
        return [_opt_out(r) for r in self._db.execute(f"SELECT {_OPT_OUT_COLUMNS} FROM opt_outs ORDER BY said_at, number")]

    def add_opt_out(self, number: str, *, said_at: datetime, quote: str, user_id: str, run_id: str) -> OptOutRow:
        """Put `number` on the opt-out list; a number already on it keeps its first entry."""
        with self._write() as db:
            db.execute(
                "INSERT INTO opt_outs (number, said_at, quote, user_id, run_id) VALUES (?, ?, ?, ?, ?)"
                " ON CONFLICT (number) DO NOTHING",
                (number, _utc(said_at), quote, user_id, run_id),
            )
        row = self.opt_out(number)
        assert row is not None
        return row

    def remove_opt_out(self, number: str) -> bool:
        with self._write() as db:
            return db.execute("DELETE FROM opt_outs WHERE number = ?", (number,)).rowcount > 0

    def log_dial(self, request_id: str, *, number: str, user_id: str, at: datetime) -> None:
        """One row per call placed: what the rate limits count."""
        with self._write() as db:
            db.execute(
                "INSERT INTO dial_log (request_id, number, user_id, dialled_at) VALUES (?, ?, ?, ?)"
                # a request id given back (nothing dialled) and dialled again: its call is the new one
                " ON CONFLICT (request_id) DO UPDATE SET dialled_at = excluded.dialled_at",
                (request_id, number, user_id, _utc(at)),
            )

    def dials_to(self, number: str, *, since: datetime, until: datetime) -> int:
        return int(self._db.execute(
            "SELECT count(*) FROM dial_log WHERE number = ? AND dialled_at > ? AND dialled_at <= ?",
            (number, _utc(since), _utc(until)),
        ).fetchone()[0])

    def calls_on_line_to(self, number: str, *, since: datetime) -> int:
        """Calls placed to `number` after `since` whose request is not done yet."""
        return int(self._db.execute(
            "SELECT count(*) FROM dial_log JOIN requests USING (request_id) WHERE number = ? AND status != 'done'"
            " AND dialled_at > ?",
            (number, _utc(since)),
        ).fetchone()[0])

    def dials_by(self, user_id: str, *, since: datetime, until: datetime) -> int:
        return int(self._db.execute(
            "SELECT count(*) FROM dial_log WHERE user_id = ? AND dialled_at > ? AND dialled_at <= ?",
            (user_id, _utc(since), _utc(until)),
        ).fetchone()[0])

    def queue_request(
        self, request_id: str, *, user_id: UserId, kind: RequestKind, params: dict[str, Any], due_at: datetime,
        mode: Literal["when_open", "at"],
    ) -> tuple[ScheduledRow | None, bool]:
        """Queue a request for later: (its row, True) when new; a repeat of the same request gets
        (the row it has, False), or (None, False) when it was already placed; another request under
        the same id raises RequestConflict and writes nothing."""
        text = canonical_json(params)
        with self._write() as db:
            taken = db.execute("SELECT user_id, kind, params FROM requests WHERE request_id = ?", (request_id,)).fetchone()
            if taken is not None:  # already placed: the caller answers it as a repeat
                if not _same(taken, user_id, kind, text):
                    raise RequestConflict(request_id, _differs(taken, user_id, kind, text))
                return None, False
            now = _now()
            added = db.execute(
                "INSERT INTO schedule (request_id, user_id, kind, params, due_at, mode, status, created_at, updated_at)"
                " VALUES (?, ?, ?, ?, ?, ?, 'queued', ?, ?) ON CONFLICT (request_id) DO NOTHING",
                (request_id, user_id, kind, text, _utc(due_at), mode, now, now),
            ).rowcount
            row = self._must_scheduled(db, request_id)
            if not added:
                theirs = db.execute("SELECT user_id, kind, params FROM schedule WHERE request_id = ?", (request_id,)).fetchone()
                if not _same(theirs, user_id, kind, text):
                    raise RequestConflict(request_id, _differs(theirs, user_id, kind, text))
            return row, bool(added)

    def scheduled(self, request_id: str) -> ScheduledRow | None:
        r = self._db.execute(f"SELECT {_SCHEDULE_COLUMNS} FROM schedule WHERE request_id = ?", (request_id,)).fetchone()
        return None if r is None else _scheduled(r)

    def schedule_rows(self, *, status: str | None = "queued") -> list[ScheduledRow]:
        where, args = ("WHERE status = ?", (status,)) if status else ("", ())
        rows = self._db.execute(f"SELECT {_SCHEDULE_COLUMNS} FROM schedule {where} ORDER BY due_at, request_id", args)
        return [_scheduled(r) for r in rows]

    def set_schedule(self, request_id: str, *, status: str, due_at: datetime | None = None, reason: str | None = None,
                     only_from: str = "queued") -> bool:
        """Move a queued row on (dialled, cancelled, refused) or to a new due time; False when it was not `only_from`."""
        with self._write() as db:
            fields, args = ["status = ?", "updated_at = ?"], [status, _now()]
            if due_at is not None:
                fields.append("due_at = ?")
                args.append(_utc(due_at))
            if reason is not None:
                fields.append("reason = ?")
                args.append(reason)
            return db.execute(
                f"UPDATE schedule SET {', '.join(fields)} WHERE request_id = ? AND status = ?",
                (*args, request_id, only_from),
            ).rowcount > 0

    def _must_scheduled(self, db: sqlite3.Connection, request_id: str) -> ScheduledRow:
        r = db.execute(f"SELECT {_SCHEDULE_COLUMNS} FROM schedule WHERE request_id = ?", (request_id,)).fetchone()
        if r is None:
            raise UnknownRequest(request_id)
        return _scheduled(r)


_DID_COLUMNS = "user_id, did, status, order_id, customer_reference, failure"
_REQUEST_COLUMNS = "request_id, run_id, user_id, kind, params, status, call_control_id, result, created_at, updated_at"


def _did(r: sqlite3.Row) -> DidRow:
    return DidRow(
        user_id=UserId(r["user_id"]),
        did=E164(r["did"]) if r["did"] else None,
        status=r["status"],
        order_id=r["order_id"],
        customer_reference=r["customer_reference"],
        failure=r["failure"],
    )


def _request(r: sqlite3.Row) -> RequestRow:
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
    )


_PUBLICATION_COLUMNS = (
    "run_id, call_control_id, user_id, run_dir, status, bucket, key_prefix, objects, local, attempts, last_error,"
    " created_at, updated_at"
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


def _publication(r: sqlite3.Row) -> PublicationRow:
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


_OPT_OUT_COLUMNS = "number, said_at, quote, user_id, run_id"
_SCHEDULE_COLUMNS = "request_id, user_id, kind, params, due_at, mode, status, reason, created_at"


def _utc(at: datetime) -> str:
    if at.tzinfo is None:
        raise ValueError("ledger times must be timezone-aware")
    return at.astimezone(UTC).isoformat(timespec="seconds")


def _opt_out(r: sqlite3.Row) -> OptOutRow:
    return OptOutRow(r["number"], datetime.fromisoformat(r["said_at"]), r["quote"], r["user_id"], r["run_id"])


def _scheduled(r: sqlite3.Row) -> ScheduledRow:
    return ScheduledRow(
        request_id=r["request_id"], user_id=UserId(r["user_id"]), kind=r["kind"], params=json.loads(r["params"]),
        due_at=datetime.fromisoformat(r["due_at"]), mode=r["mode"], status=r["status"], reason=r["reason"],
        created_at=r["created_at"],
    )


def _same(row: sqlite3.Row, user_id: str, kind: str, params: str) -> bool:
    return not _differs(row, user_id, kind, params)


def _differs(row: sqlite3.Row, user_id: str, kind: str, params: str) -> list[str]:
    pairs = (("user", row["user_id"], user_id), ("kind", row["kind"], kind),
             ("parameters", canonical_json(json.loads(row["params"])), params))
    return [name for name, ours, theirs in pairs if ours != theirs]


def _statements(sql: str) -> list[str]:
    # executescript would COMMIT our BEGIN IMMEDIATE; run each statement inside it instead.
    return [s.strip() for s in sql.split(";") if s.strip()]
