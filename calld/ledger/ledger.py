"""The ledger: who owns which Telnyx number, and which request dialled which call.

Every side effect is keyed on the thing being done, never on an attempt:

- a number is keyed on the user (UNIQUE(user_id), UNIQUE(did)): a second number for one
  user cannot be written, and an interrupted order is found again through its row;
- a call is keyed on the request id (PRIMARY KEY): the same request never dials twice,
  a repeat gets the stored result or the call already in flight.

Each method is one transaction on its engine (calld.ledger.engine), written once: on SQLite a
write holds BEGIN IMMEDIATE, so two writers cannot both pass a check; on PostgreSQL the same
check is made atomic across daemons by `ON CONFLICT`, row locks (`FOR UPDATE`) or advisory
locks on what the check counts. All calls are synchronous and short.
The statements several methods share run on the caller's transaction (calld.ledger.statements).
"""

from __future__ import annotations

import functools
import json
import sqlite3
import time
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import Any, Concatenate, Literal

from attrs import frozen

from calld.domain.ids import E164, CallControlId, RunId, UserId
from calld.ledger.engine import Engine, IntegrityViolation, PostgresEngine, SqliteEngine, Tx, all_rows, count, one
from calld.ledger.migrations import MIGRATIONS, POSTGRES_MIGRATIONS
from calld.ledger.rows import (
    _OPT_OUT_COLUMNS,
    _PUBLICATION_COLUMNS,
    _REQUEST_COLUMNS,
    _SCHEDULE_COLUMNS,
    _STUB_POOL,
    Claim,
    DaemonRow,
    DidRow,
    Fresh,
    LastRequestRow,
    LedgerError,
    MessageLinkRow,
    OptOutRow,
    PendingRow,
    PublicationRow,
    RequestConflict,
    RequestKind,
    RequestRow,
    RequestStatus,
    ScheduledRow,
    UnknownUser,
    _DAEMON_COLUMNS,
    _daemon,
    _differs,
    _now,
    _opt_out,
    _publication,
    _request,
    _same,
    _scheduled,
    _utc,
    canonical_json,
    customer_reference,
)
from calld.ledger.statements import (
    _calls_on_line_to,
    _dials_by,
    _dials_to,
    _did_row,
    _did_rows,
    _existing_claim,
    _insert_request,
    _log_dial,
    _message_link,
    _must_did,
    _must_publication,
    _must_request,
    _must_scheduled,
    _opt_out_row,
    _request_args,
    _request_key,
)
from calld.ledger.target import is_postgres

# Every table, in the order a copy fills them (calld-ctl ledger migrate) and counts are shown.
TABLES = (
    "dids", "requests", "dial_log", "opt_outs", "schedule", "publications", "daemons",
    "message_links", "message_events", "message_optouts", "message_pending", "shared_keys",
)

# The status of a finished request's call, read from its stored result (history's filter).
_RESULT_STATUS = {"sqlite": "json_extract(result, '$.status')", "postgresql": "(result::json ->> 'status')"}

Target = Path | str


def _tx[**P, R](*, write: bool, idempotent: bool = True) -> Callable[
    [Callable[Concatenate[Ledger, Tx, P], R]], Callable[Concatenate[Ledger, P], R]
]:
    """Run the method as one transaction, handing it the transaction. `idempotent`: a repeat
    after a COMMIT whose answer was lost gives the same answer, so the engine may retry it."""

    def wrap(fn: Callable[Concatenate[Ledger, Tx, P], R]) -> Callable[Concatenate[Ledger, P], R]:
        @functools.wraps(fn)
        def method(self: Ledger, /, *args: P.args, **kwargs: P.kwargs) -> R:
            return self._engine.run(lambda tx: fn(self, tx, *args, **kwargs), write=write, idempotent=idempotent)

        return method

    return wrap


_read = _tx(write=False)
_write = _tx(write=True)
_write_once = _tx(write=True, idempotent=False)  # its answer says what this call did: never repeated blindly


def _engine_for(target: Target) -> Engine:
    if isinstance(target, str) and is_postgres(target):
        return PostgresEngine(target)
    return SqliteEngine(Path(target))


def open_ledger(target: Target, *, clock: Callable[[], float] = time.time) -> Ledger:
    """The ledger at `target`: a SQLite file (a Path) or a PostgreSQL server (a postgresql:// URL)."""
    return Ledger(target, clock=clock)


@frozen
class DialView:
    """What the gate reads about a dial, inside the transaction that admits it (Ledger.admit_dial):
    the opt-out list, every daemon's dial log and the users' numbers as they are at that moment."""

    _tx: Tx

    def opt_out(self, number: str) -> OptOutRow | None:
        return _opt_out_row(self._tx, number)

    def dials_to(self, number: str, *, since: datetime, until: datetime) -> int:
        return _dials_to(self._tx, number, since, until)

    def dials_by(self, user_id: str, *, since: datetime, until: datetime) -> int:
        return _dials_by(self._tx, user_id, since, until)

    def calls_on_line_to(self, number: str, *, since: datetime) -> int:
        return _calls_on_line_to(self._tx, number, since)

    def rows(self) -> list[DidRow]:
        return _did_rows(self._tx)


class Ledger:
    def __init__(self, target: Target, *, clock: Callable[[], float] = time.time) -> None:
        self._engine = _engine_for(target)
        self.engine = self._engine.name
        self.path: Path | None = self._engine.path if isinstance(self._engine, SqliteEngine) else None
        self._clock = clock  # wall time, for leases only
        self.migrations = POSTGRES_MIGRATIONS if self.engine == "postgresql" else MIGRATIONS
        try:
            self._engine.migrate(self.migrations)
        except BaseException:
            self._engine.close()
            raise

    @property
    def _db(self) -> sqlite3.Connection:
        """The SQLite connection (for SQLite-only tools and tests: PRAGMAs, checkpoints)."""
        if not isinstance(self._engine, SqliteEngine):
            raise LedgerError("this ledger is on PostgreSQL; it has no SQLite connection")
        return self._engine.db

    def describe(self) -> str:
        """Where it is: the SQLite file, or the PostgreSQL URL with its password redacted."""
        return self._engine.describe()

    def flush_to_disk(self) -> None:
        """Make every committed transaction durable (SQLite: fsync the WAL; PostgreSQL: a commit
        already is). Blocking; safe from a worker thread."""
        self._engine.flush_to_disk()

    def close(self) -> None:
        self._engine.close()

    @property
    def schema_version(self) -> int:
        return self._engine.schema_version()

    @_read
    def table_counts(self, tx: Tx) -> dict[str, int]:
        """Rows per table (calld-ctl ledger migrate compares them)."""
        return {t: count(tx, f"SELECT count(*) AS n FROM {t}") for t in TABLES}  # noqa: S608 - our names

    # -- numbers -------------------------------------------------------------------------------------

    @_read
    def did_for(self, tx: Tx, user_id: UserId) -> E164:
        row = _did_row(tx, user_id)
        if row is None or row.status != "active" or row.did is None:
            raise UnknownUser(user_id, row.status if row else None, row.failure if row else None)
        return row.did

    @_read
    def did_row(self, tx: Tx, user_id: UserId) -> DidRow | None:
        return _did_row(tx, user_id)

    @_read
    def rows(self, tx: Tx) -> list[DidRow]:
        return _did_rows(tx)

    @_write
    def reserve_did(self, tx: Tx, user_id: UserId) -> DidRow:
        """The user's row whatever its status; if there is none, a new 'ordering' row (one, ever)."""
        user_id = UserId(user_id)
        now = _now()
        tx.execute(
            "INSERT INTO dids (user_id, status, customer_reference, created_at, updated_at)"
            " VALUES (?, 'ordering', ?, ?, ?) ON CONFLICT (user_id) DO NOTHING",
            (user_id, customer_reference(user_id), now, now),
        )
        return _must_did(tx, user_id)

    @_write
    def claim_order(self, tx: Tx, user_id: UserId, holder: str, *, lease_s: float) -> bool:
        """Take the right to place this user's order. True for one holder at a time.

        Only an 'ordering' row with no order id yet can be claimed. A lease that ran out
        (its holder crashed, or hung past it) can be taken over.
        """
        row = one(tx, "SELECT status, order_id, order_holder, order_held_until FROM dids WHERE user_id = ?"
                      " FOR UPDATE", (user_id,))
        if row is None or row["status"] != "ordering" or row["order_id"] is not None:
            return False
        now = self._clock()
        held = row["order_holder"] is not None and (row["order_held_until"] or 0.0) > now
        if held and row["order_holder"] != holder:
            return False
        tx.execute(
            "UPDATE dids SET order_holder = ?, order_held_until = ?, updated_at = ? WHERE user_id = ?",
            (holder, now + lease_s, _now(), user_id),
        )
        return True

    @_write
    def release_order(self, tx: Tx, user_id: UserId, holder: str) -> None:
        """Give the claim back (nothing recorded); a no-op when someone else holds it."""
        tx.execute(
            "UPDATE dids SET order_holder = NULL, order_held_until = NULL, updated_at = ?"
            " WHERE user_id = ? AND order_holder = ?",
            (_now(), user_id, holder),
        )

    @_write
    def record_order(self, tx: Tx, user_id: UserId, order_id: str) -> DidRow:
        """Save the Telnyx order id on the 'ordering' row, as soon as Telnyx names it."""
        row = _must_did(tx, user_id, lock=True)
        if row.order_id == order_id:
            return row
        if row.status != "ordering" or row.order_id is not None:
            raise LedgerError(
                f"cannot record order {order_id!r} for user {user_id!r}: the row is {row.status}"
                f" with order {row.order_id!r}"
            )
        tx.execute(
            "UPDATE dids SET order_id = ?, order_holder = NULL, order_held_until = NULL, updated_at = ?"
            " WHERE user_id = ?",
            (order_id, _now(), user_id),
        )
        return _must_did(tx, user_id)

    @_write
    def activate_did(self, tx: Tx, user_id: UserId, did: E164) -> DidRow:
        did = E164(did)
        row = _must_did(tx, user_id, lock=True)
        if row.status == "active":
            if row.did != did:
                raise LedgerError(f"user {user_id!r} already has {row.did}; not replacing it with {did}")
            return row
        owner = one(tx, "SELECT user_id FROM dids WHERE did = ?", (did,))
        if owner is not None:
            raise LedgerError(f"{did} already belongs to user {owner['user_id']!r}")
        try:
            tx.execute(
                "UPDATE dids SET did = ?, status = 'active', failure = NULL, order_holder = NULL,"
                " order_held_until = NULL, updated_at = ? WHERE user_id = ?",
                (did, _now(), user_id),
            )
        except IntegrityViolation as exc:  # another daemon gave it to another user meanwhile
            raise LedgerError(f"{did} already belongs to another user") from exc
        return _must_did(tx, user_id)

    @_write
    def fail_did(self, tx: Tx, user_id: UserId, reason: str) -> DidRow:
        row = _must_did(tx, user_id, lock=True)
        if row.status == "active":
            raise LedgerError(f"user {user_id!r} already has {row.did}; not marking it failed")
        if row.status == "failed":
            return row  # the first reason stands
        tx.execute(
            "UPDATE dids SET status = 'failed', failure = ?, order_holder = NULL, order_held_until = NULL,"
            " updated_at = ? WHERE user_id = ?",
            (reason, _now(), user_id),
        )
        return _must_did(tx, user_id)

    @_write
    def retry_did(self, tx: Tx, user_id: UserId) -> DidRow:
        """failed -> ordering, with the old order and reason cleared. Other statuses: unchanged."""
        tx.execute(
            "UPDATE dids SET status = 'ordering', order_id = NULL, failure = NULL, order_holder = NULL,"
            " order_held_until = NULL, updated_at = ? WHERE user_id = ? AND status = 'failed'",
            (_now(), user_id),
        )
        return _must_did(tx, user_id)

    @_write
    def provision_stub(self, tx: Tx, user_id: UserId) -> E164:
        """Stub mode: give the user the first free fictional number, once."""
        tx.lock("calld:stub-pool")  # two daemons must not hand out one free number twice
        row = _did_row(tx, user_id)
        if row is not None and row.did:
            return row.did
        taken = {r["did"] for r in all_rows(tx, "SELECT did FROM dids WHERE did IS NOT NULL")}
        free = next((d for d in _STUB_POOL if d not in taken), None)
        if free is None:
            raise RuntimeError("the stub number pool (+15555550100..0199) is used up")
        now = _now()
        tx.execute(
            "INSERT INTO dids (user_id, did, status, order_id, customer_reference, created_at, updated_at)"
            " VALUES (?, ?, 'active', 'stub-order', ?, ?, ?)"
            " ON CONFLICT (user_id) DO UPDATE SET did = excluded.did, status = 'active',"
            " order_id = excluded.order_id, failure = NULL, order_holder = NULL, order_held_until = NULL,"
            " updated_at = excluded.updated_at",
            (user_id, free, customer_reference(user_id), now, now),
        )
        return free

    # -- requests ------------------------------------------------------------------------------------

    @_write
    def claim_request(
        self,
        tx: Tx,
        request_id: str,
        *,
        user_id: UserId,
        kind: RequestKind,
        params: dict[str, Any],
        run_id: RunId,
        instance: str = "",
        booking_at: str | None = None,
    ) -> Claim:
        """Write the request before anything is dialled, or say what already happened to it.

        Fresh: the row is new and the caller must dial. InFlight: the same request is being
        placed or is on a call. Finished: its stored result. A different request under the same
        id raises RequestConflict and writes nothing.
        """
        user_id, run_id, text = _request_args(request_id, user_id, kind, params, run_id)
        tx.lock(_request_key(request_id))  # queue_request reads this id before it queues it
        if _insert_request(tx, request_id, user_id, kind, text, run_id, instance, booking_at):
            return Fresh(run_id)
        claim = _existing_claim(tx, request_id, user_id, kind, text, run_id)
        assert claim is not None  # the insert met this row
        return claim

    @_write
    def admit_dial[R](
        self,
        tx: Tx,
        request_id: str,
        *,
        user_id: UserId,
        kind: RequestKind,
        params: dict[str, Any],
        run_id: RunId,
        number: str,
        at: datetime,
        instance: str = "",
        check: Callable[[DialView], R | None],
        booking_at: str | None = None,
    ) -> Claim | R:
        """claim_request and the gate's verdict in one transaction: for a new request, `check` reads
        the opt-outs and every daemon's dial log through a DialView; None admits the dial (the request
        and its dial-log row are written, Fresh), anything else is a refusal: returned, nothing written.
        A known request id answers as claim_request does (InFlight, Finished, RequestConflict), unchecked."""
        user_id, run_id, text = _request_args(request_id, user_id, kind, params, run_id)
        # What the rules count (this number's and this user's dials) cannot change under the check.
        tx.lock(_request_key(request_id), f"calld:dial:number:{number}", f"calld:dial:user:{user_id}")
        claim = _existing_claim(tx, request_id, user_id, kind, text, run_id)
        if claim is not None:
            return claim
        refusal = check(DialView(tx))
        if refusal is not None:
            return refusal
        if not _insert_request(tx, request_id, user_id, kind, text, run_id, instance, booking_at):
            raise LedgerError(f"request {request_id!r} was written while its lock was held")  # a bug, never a race
        _log_dial(tx, request_id, number, user_id, at)
        return Fresh(run_id)

    @_write
    def mark_dialled(self, tx: Tx, request_id: str, call_control_id: CallControlId) -> RequestRow:
        """Telnyx accepted the dial: placing -> in_flight, with the call's id."""
        call_control_id = CallControlId(call_control_id)
        row = _must_request(tx, request_id, lock=True)
        if row.call_control_id == call_control_id:
            return row
        if row.status != "placing":
            raise LedgerError(
                f"request {request_id!r} is {row.status} with call {row.call_control_id!r};"
                f" not attaching call {call_control_id!r}"
            )
        tx.execute(
            "UPDATE requests SET status = 'in_flight', call_control_id = ?, updated_at = ? WHERE request_id = ?",
            (call_control_id, _now(), request_id),
        )
        return _must_request(tx, request_id)

    @_write
    def finish_request(self, tx: Tx, request_id: str, result: dict[str, Any]) -> RequestRow:
        """Store the result, once. A second finish keeps the first result and returns the row. The call's
        id comes with it where the row has none yet (mark_dialled could not write it while the call was on)."""
        text = canonical_json(result)
        row = _must_request(tx, request_id, lock=True)
        if row.status == "done":
            return row
        ccid = result.get("call_control_id")
        tx.execute(
            "UPDATE requests SET status = 'done', result = ?, call_control_id = COALESCE(call_control_id, ?),"
            " updated_at = ? WHERE request_id = ?",
            (text, ccid if isinstance(ccid, str) and ccid else None, _now(), request_id),
        )
        return _must_request(tx, request_id)

    @_write_once
    def forget_request(self, tx: Tx, request_id: str) -> bool:
        """Give a request id back when nothing was dialled for it (the row is still 'placing' with
        no call): a local failure before the dial does not use the id up. True if it was removed."""
        return bool(tx.execute(
            "DELETE FROM requests WHERE request_id = ? AND status = 'placing' AND call_control_id IS NULL",
            (request_id,),
        ).rowcount)

    @_read
    def requests_for_call(self, tx: Tx, ident: str) -> list[RequestRow]:
        """The requests whose run id or call control id is `ident` (more than one only if a
        carrier reused a call id)."""
        rows = all_rows(
            tx,
            f"SELECT {_REQUEST_COLUMNS} FROM requests WHERE run_id = ? OR call_control_id = ?"
            " ORDER BY created_at, request_id",
            (ident, ident),
        )
        return [_request(r) for r in rows]

    @_read
    def request(self, tx: Tx, request_id: str) -> RequestRow | None:
        r = one(tx, f"SELECT {_REQUEST_COLUMNS} FROM requests WHERE request_id = ?", (request_id,))
        return None if r is None else _request(r)

    @_read
    def requests(self, tx: Tx, limit: int = 50, *, status: RequestStatus | None = None) -> list[RequestRow]:
        """The newest requests first; `status` picks e.g. the unfinished ones after a restart."""
        if limit < 1:
            raise ValueError("limit must be at least 1")
        where, args = ("WHERE status = ?", (status,)) if status else ("", ())
        rows = all_rows(
            tx,
            f"SELECT {_REQUEST_COLUMNS} FROM requests {where} ORDER BY created_at DESC, request_id DESC LIMIT ?",
            (*args, limit),
        )
        return [_request(r) for r in rows]

    # -- daemons: leases and crash recovery ----------------------------------------------------------

    @_write
    def renew_lease(self, tx: Tx, instance: str, until: float, *, holder: str = "", now: float | None = None) -> DaemonRow:
        """This daemon is alive until `until` (epoch seconds); it renews well before then.

        An instance is held by one daemon (`holder`: its host and state dir, the same across its
        restarts). Another holder's lease is taken only once it has run out before `now`, so two
        daemons given one CALLD_INSTANCE cannot both hold it: the row returned names who does."""
        tx.execute(
            "INSERT INTO daemons (instance, lease_until, started_at, holder) VALUES (?, ?, ?, ?)"
            " ON CONFLICT (instance) DO UPDATE SET lease_until = excluded.lease_until, holder = excluded.holder"
            " WHERE daemons.holder = excluded.holder OR daemons.holder = '' OR daemons.lease_until <= ?",
            (instance, until, _now(), holder, 0.0 if now is None else now),
        )
        r = one(tx, f"SELECT {_DAEMON_COLUMNS} FROM daemons WHERE instance = ?", (instance,))
        assert r is not None
        return _daemon(r)

    @_write
    def shared_key(self, tx: Tx, name: str, candidate: str) -> str:
        """The ledger's key `name`, made `candidate` if it has none: the first daemon to ask sets it,
        once (a daemon asking at the same moment waits on the row and reads the first one's)."""
        tx.execute("INSERT INTO shared_keys (name, value, created_at) VALUES (?, ?, ?) ON CONFLICT (name) DO NOTHING",
                   (name, candidate, _now()))
        r = one(tx, "SELECT value FROM shared_keys WHERE name = ?", (name,))
        assert r is not None
        return str(r["value"])

    @_read
    def daemons(self, tx: Tx) -> list[DaemonRow]:
        return [_daemon(r) for r in all_rows(tx, f"SELECT {_DAEMON_COLUMNS} FROM daemons ORDER BY instance")]

    @_read
    def orphans(self, tx: Tx, instance: str, now: float) -> list[RequestRow]:
        """Unfinished requests (placing, in_flight) this daemon must settle: its own (it restarted),
        and those of a daemon whose lease ran out before `now` (or that never took one)."""
        rows = all_rows(
            tx,
            f"SELECT {_REQUEST_COLUMNS} FROM requests WHERE status IN ('placing', 'in_flight')"
            " AND (instance = ? OR NOT EXISTS ("
            "   SELECT 1 FROM daemons WHERE daemons.instance = requests.instance AND daemons.lease_until > ?))"
            " ORDER BY created_at, request_id",
            (instance, now),
        )
        return [_request(r) for r in rows]

    @_write_once
    def take_over(self, tx: Tx, request_id: str, *, from_instance: str, to_instance: str, now: float) -> bool:
        """Take an unfinished request to settle it; True for exactly one taker. A daemon takes its own
        (it restarted: its lease is renewed first), or another's whose lease ran out before `now`: the
        lease is read in the same statement, so an owner that came back in time keeps its calls."""
        return tx.execute(
            "UPDATE requests SET instance = ?, updated_at = ? WHERE request_id = ? AND instance = ?"
            " AND status IN ('placing', 'in_flight')"
            " AND (? = ? OR NOT EXISTS (SELECT 1 FROM daemons WHERE daemons.instance = ? AND daemons.lease_until > ?))",
            (to_instance, _now(), request_id, from_instance, from_instance, to_instance, from_instance, now),
        ).rowcount == 1

    # -- history (calld-ctl history, show) ----------------------------------------------------------

    @_read
    def history(self, tx: Tx, *, user: UserId | None = None, status: str | None = None, since: str | None = None,
                limit: int = 50, until: str | None = None, offset: int = 0) -> list[RequestRow]:
        """Requests newest first. `status` is the call's (answered, failed, ...) once it is done, else the
        request's own (placing, in_flight); `since` an ISO 8601 UTC time the request was made at or after,
        `until` one it was made before; `offset` rows skipped (the web view's pages)."""
        if limit < 1:
            raise ValueError("limit must be at least 1")
        if offset < 0:
            raise ValueError("offset must be at least 0")
        clauses, args = [], []
        if user is not None:
            clauses.append("user_id = ?")
            args.append(user)
        if status is not None:
            clauses.append(f"(CASE WHEN status = 'done' THEN {_RESULT_STATUS[tx.engine]} ELSE status END) = ?")
            args.append(status)
        if since is not None:
            clauses.append("created_at >= ?")
            args.append(since)
        if until is not None:
            clauses.append("created_at < ?")
            args.append(until)
        where = f"WHERE {' AND '.join(clauses)}" if clauses else ""
        rows = all_rows(
            tx,
            f"SELECT {_REQUEST_COLUMNS} FROM requests {where} ORDER BY created_at DESC, request_id DESC LIMIT ? OFFSET ?",
            (*args, limit, offset),
        )
        return [_request(r) for r in rows]

    @_read
    def request_for_call(self, tx: Tx, ident: str) -> RequestRow | None:
        """The request that placed a call, by its run id or call_control_id (the result outlives the artifacts)."""
        r = one(tx, f"SELECT {_REQUEST_COLUMNS} FROM requests WHERE run_id = ? OR call_control_id = ?"
                    " ORDER BY created_at, request_id LIMIT 1", (ident, ident))
        return None if r is None else _request(r)

    # -- publishing (calld.publish) -------------------------------------------------------------------

    @_write
    def enqueue_publication(self, tx: Tx, run_id: RunId, call_control_id: CallControlId | None, user_id: UserId,
                            run_dir: str, *, owner: str = "") -> PublicationRow:
        """A finished call's artifacts are to be published by `owner`, the daemon that wrote them; once
        per run (a repeat returns the row)."""
        now = _now()
        tx.execute(
            "INSERT INTO publications (run_id, call_control_id, user_id, run_dir, status, created_at, updated_at, owner)"
            " VALUES (?, ?, ?, ?, 'pending', ?, ?, ?) ON CONFLICT (run_id) DO NOTHING",
            (RunId(run_id), call_control_id, UserId(user_id), run_dir, now, now, owner),
        )
        return _must_publication(tx, run_id)

    @_read
    def publication(self, tx: Tx, ident: str) -> PublicationRow | None:
        """By run id or call_control_id."""
        r = one(
            tx,
            f"SELECT {_PUBLICATION_COLUMNS} FROM publications WHERE run_id = ? OR call_control_id = ?"
            " ORDER BY created_at DESC LIMIT 1",
            (ident, ident),
        )
        return None if r is None else _publication(r)

    @_read
    def unpublished(self, tx: Tx, *, owner: str | None = None) -> list[PublicationRow]:
        """Oldest first: what a (re)started daemon still owes the bucket. `owner`: only that daemon's
        runs (the artifacts are on its disk); None: every daemon's (for tools)."""
        where, args = ("AND owner = ?", (owner,)) if owner is not None else ("", ())
        rows = all_rows(
            tx,
            f"SELECT {_PUBLICATION_COLUMNS} FROM publications WHERE status = 'pending' {where}"
            " ORDER BY created_at, run_id",
            args,
        )
        return [_publication(r) for r in rows]

    @_write_once
    def publication_failed(self, tx: Tx, run_id: str, error: dict[str, Any]) -> PublicationRow:
        tx.execute(
            "UPDATE publications SET attempts = attempts + 1, last_error = ?, updated_at = ?"
            " WHERE run_id = ? AND status = 'pending'",
            (canonical_json(error), _now(), run_id),
        )
        return _must_publication(tx, run_id)

    @_write
    def publication_done(self, tx: Tx, run_id: str, *, bucket: str, key_prefix: str,
                         objects: list[dict[str, Any]]) -> PublicationRow:
        tx.execute(
            "UPDATE publications SET status = 'published', bucket = ?, key_prefix = ?, objects = ?,"
            " attempts = attempts + 1, last_error = NULL, updated_at = ? WHERE run_id = ?",
            (bucket, key_prefix, json.dumps(objects, separators=(",", ":")), _now(), run_id),
        )
        return _must_publication(tx, run_id)

    @_write
    def publication_local(self, tx: Tx, run_id: str, local: Literal["kept", "audio_deleted", "deleted"]) -> PublicationRow:
        tx.execute("UPDATE publications SET local = ?, updated_at = ? WHERE run_id = ?", (local, _now(), run_id))
        return _must_publication(tx, run_id)

    @_read
    def result_of_run(self, tx: Tx, run_id: str) -> dict[str, Any] | None:
        """The stored result of the request that ran as `run_id` (its run directory may be gone)."""
        r = one(tx, "SELECT result FROM requests WHERE run_id = ?", (run_id,))
        return json.loads(r["result"]) if r is not None and r["result"] is not None else None

    # -- policy: opt-outs, the dial log, the schedule (calld.policy) ---------------------------------

    @_read
    def opt_out(self, tx: Tx, number: str) -> OptOutRow | None:
        return _opt_out_row(tx, number)

    @_read
    def opt_outs(self, tx: Tx) -> list[OptOutRow]:
        return [_opt_out(r) for r in all_rows(tx, f"SELECT {_OPT_OUT_COLUMNS} FROM opt_outs ORDER BY said_at, number")]

    @_write
    def add_opt_out(self, tx: Tx, number: str, *, said_at: datetime, quote: str, user_id: str, run_id: str) -> OptOutRow:
        """Put `number` on the opt-out list; a number already on it keeps its first entry."""
        tx.execute(
            "INSERT INTO opt_outs (number, said_at, quote, user_id, run_id) VALUES (?, ?, ?, ?, ?)"
            " ON CONFLICT (number) DO NOTHING",
            (number, _utc(said_at), quote, user_id, run_id),
        )
        row = _opt_out_row(tx, number)
        assert row is not None
        return row

    @_write_once
    def remove_opt_out(self, tx: Tx, number: str) -> bool:
        return tx.execute("DELETE FROM opt_outs WHERE number = ?", (number,)).rowcount > 0

    @_write
    def log_dial(self, tx: Tx, request_id: str, *, number: str, user_id: str, at: datetime) -> None:
        """One row per call placed: what the rate limits count."""
        _log_dial(tx, request_id, number, user_id, at)

    @_read
    def dials_to(self, tx: Tx, number: str, *, since: datetime, until: datetime) -> int:
        return _dials_to(tx, number, since, until)

    @_read
    def calls_on_line_to(self, tx: Tx, number: str, *, since: datetime) -> int:
        """Calls placed to `number` after `since` whose request is not done yet."""
        return _calls_on_line_to(tx, number, since)

    @_read
    def dials_by(self, tx: Tx, user_id: str, *, since: datetime, until: datetime) -> int:
        return _dials_by(tx, user_id, since, until)

    @_write_once
    def queue_request(
        self, tx: Tx, request_id: str, *, user_id: UserId, kind: RequestKind, params: dict[str, Any],
        due_at: datetime, mode: Literal["when_open", "at"], booking_at: str | None = None,
    ) -> tuple[ScheduledRow | None, bool]:
        """Queue a request for later: (its row, True) when new; a repeat of the same request gets
        (the row it has, False), or (None, False) when it was already placed; another request under
        the same id raises RequestConflict and writes nothing."""
        text = canonical_json(params)
        tx.lock(_request_key(request_id))
        taken = one(tx, "SELECT user_id, kind, params FROM requests WHERE request_id = ?", (request_id,))
        if taken is not None:  # already placed: the caller answers it as a repeat
            if not _same(taken, user_id, kind, text):
                raise RequestConflict(request_id, _differs(taken, user_id, kind, text))
            return None, False
        now = _now()
        added = tx.execute(
            "INSERT INTO schedule (request_id, user_id, kind, params, due_at, mode, status, created_at, updated_at, booking_at)"
            " VALUES (?, ?, ?, ?, ?, ?, 'queued', ?, ?, ?) ON CONFLICT (request_id) DO NOTHING",
            (request_id, user_id, kind, text, _utc(due_at), mode, now, now, booking_at),
        ).rowcount
        row = _must_scheduled(tx, request_id)
        if not added:
            theirs = one(tx, "SELECT user_id, kind, params FROM schedule WHERE request_id = ?", (request_id,))
            assert theirs is not None
            if not _same(theirs, user_id, kind, text):
                raise RequestConflict(request_id, _differs(theirs, user_id, kind, text))
        return row, bool(added)

    @_read
    def scheduled(self, tx: Tx, request_id: str) -> ScheduledRow | None:
        r = one(tx, f"SELECT {_SCHEDULE_COLUMNS} FROM schedule WHERE request_id = ?", (request_id,))
        return None if r is None else _scheduled(r)

    @_read
    def schedule_rows(self, tx: Tx, *, status: str | None = "queued") -> list[ScheduledRow]:
        where, args = ("WHERE status = ?", (status,)) if status else ("", ())
        rows = all_rows(tx, f"SELECT {_SCHEDULE_COLUMNS} FROM schedule {where} ORDER BY due_at, request_id", args)
        return [_scheduled(r) for r in rows]

    @_write_once
    def set_schedule(self, tx: Tx, request_id: str, *, status: str, due_at: datetime | None = None,
                     reason: str | None = None, only_from: str = "queued") -> bool:
        """Move a queued row on (dialled, cancelled, refused) or to a new due time; False when it was not `only_from`."""
        fields, args = ["status = ?", "updated_at = ?"], [status, _now()]
        if due_at is not None:
            fields.append("due_at = ?")
            args.append(_utc(due_at))
        if reason is not None:
            fields.append("reason = ?")
            args.append(reason)
        return tx.execute(
            f"UPDATE schedule SET {', '.join(fields)} WHERE request_id = ? AND status = ?",
            (*args, request_id, only_from),
        ).rowcount > 0

    @_write_once
    def claim_due(self, tx: Tx, now: datetime, *, instance: str, limit: int = 10,
                  claim_s: float = 300.0) -> list[ScheduledRow]:
        """The queued rows due by `now`, each claimed for this daemon (status 'claimed' until
        claim_s from the wall clock): of two daemons polling at once, each row goes to one. A claim
        whose daemon never settled it (it died) is claimable again once its time has passed."""
        if limit < 1:
            raise ValueError("limit must be at least 1")
        wall = self._clock()
        rows = all_rows(
            tx,
            "SELECT request_id FROM schedule WHERE (status = 'queued' AND due_at <= ?)"
            " OR (status = 'claimed' AND claimed_until <= ?) ORDER BY due_at, request_id LIMIT ?"
            " FOR UPDATE SKIP LOCKED",
            (_utc(now), wall, limit),
        )
        claimed = []
        for r in rows:
            tx.execute(
                "UPDATE schedule SET status = 'claimed', claimed_by = ?, claimed_until = ?, updated_at = ?"
                " WHERE request_id = ?",
                (instance, wall + claim_s, _now(), r["request_id"]),
            )
            claimed.append(_must_scheduled(tx, r["request_id"]))
        return claimed

    @_write
    def release_due(self, tx: Tx, request_id: str, *, due_at: datetime | None = None) -> bool:
        """Put a claimed row back in the queue (at `due_at`, or when it was due); False if it is not claimed."""
        due = (", due_at = ?", (_utc(due_at),)) if due_at is not None else ("", ())
        return tx.execute(
            f"UPDATE schedule SET status = 'queued', claimed_by = NULL, claimed_until = NULL, updated_at = ?{due[0]}"
            " WHERE request_id = ? AND status = 'claimed'",
            (_now(), *due[1], request_id),
        ).rowcount > 0

    # -- texting (calld.messaging.store) --------------------------------------------------------------

    @_write
    def put_message_link(self, tx: Tx, handle: str, user_id: str, name: str) -> MessageLinkRow:
        tx.execute(
            "INSERT INTO message_links (handle, user_id, name, created_at) VALUES (?, ?, ?, ?)"
            " ON CONFLICT (handle) DO UPDATE SET user_id = excluded.user_id, name = excluded.name",
            (handle, user_id, name, _now()),
        )
        link = _message_link(tx, handle)
        assert link is not None
        return link

    @_write_once
    def delete_message_link(self, tx: Tx, handle: str) -> bool:
        return tx.execute("DELETE FROM message_links WHERE handle = ?", (handle,)).rowcount > 0

    @_read
    def message_link(self, tx: Tx, handle: str) -> MessageLinkRow | None:
        return _message_link(tx, handle)

    @_read
    def message_links(self, tx: Tx) -> list[MessageLinkRow]:
        rows = all_rows(tx, "SELECT handle, user_id, name, created_at FROM message_links ORDER BY user_id, handle")
        return [MessageLinkRow(r["handle"], r["user_id"], r["name"], r["created_at"]) for r in rows]

    @_write_once
    def claim_message_event(self, tx: Tx, event_id: str, *, message_id: str, handle: str, chat_id: str,
                            at: float) -> bool:
        """True the first time an event id is seen (the row is written); False for a redelivery.
        The event id is the table's key, so two daemons given one event cannot both see it first."""
        return tx.execute(
            "INSERT INTO message_events (event_id, message_id, handle, chat_id, received_at) VALUES (?, ?, ?, ?, ?)"
            " ON CONFLICT (event_id) DO NOTHING",
            (event_id, message_id, handle, chat_id, at),
        ).rowcount > 0

    @_write
    def set_message_outcome(self, tx: Tx, event_id: str, outcome: str, request_id: str | None = None,
                            intent: str | None = None) -> None:
        tx.execute(
            "UPDATE message_events SET outcome = ?, request_id = COALESCE(?, request_id),"
            " intent = COALESCE(?, intent) WHERE event_id = ?",
            (outcome, request_id, intent, event_id),
        )

    @_read
    def last_message_request(self, tx: Tx, handle: str, since: float) -> LastRequestRow | None:
        r = one(
            tx,
            "SELECT e.intent, e.request_id, e.received_at, q.result FROM message_events e"
            " LEFT JOIN requests q ON q.request_id = e.request_id"
            " WHERE e.handle = ? AND e.intent IS NOT NULL AND e.received_at >= ?"
            " ORDER BY e.received_at DESC, e.event_id DESC LIMIT 1",
            (handle, since),
        )
        if r is None:
            return None
        result = json.loads(r["result"]) if r["result"] is not None else None
        return LastRequestRow(r["intent"], r["request_id"], float(r["received_at"]), result)

    @_read
    def message_outcome(self, tx: Tx, event_id: str) -> str | None:
        r = one(tx, "SELECT outcome FROM message_events WHERE event_id = ?", (event_id,))
        return None if r is None else r["outcome"]

    @_read
    def count_messages(self, tx: Tx, handle: str, since: float, outcome: str | None = None) -> int:
        sql = "SELECT count(*) AS n FROM message_events WHERE handle = ? AND received_at >= ?"
        args: tuple[Any, ...] = (handle, since)
        if outcome is not None:
            sql += " AND outcome = ?"
            args += (outcome,)
        return count(tx, sql, args)

    @_write_once
    def claim_stranger_reply(self, tx: Tx, event_id: str, outcome: str, *, replied: tuple[str, ...], since: float,
                             limit: int, quiet: str) -> bool:
        """One reply to a sender linked to no user, within `limit` such replies since `since` across every
        handle (events whose outcome is one of `replied`): True and the event's outcome set to `outcome`
        when there is room, else False and `quiet`. One lock, so two daemons cannot both take the last."""
        tx.lock("calld:messaging:stranger-replies")
        marks = ", ".join("?" for _ in replied)
        used = count(tx, f"SELECT count(*) AS n FROM message_events WHERE received_at >= ? AND outcome IN ({marks})",
                     (since, *replied))
        room = used < limit
        tx.execute("UPDATE message_events SET outcome = ? WHERE event_id = ?", (outcome if room else quiet, event_id))
        return room

    @_write_once
    def add_message_opt_out(self, tx: Tx, handle: str) -> bool:
        return tx.execute("INSERT INTO message_optouts (handle, at) VALUES (?, ?) ON CONFLICT (handle) DO NOTHING",
                          (handle, _now())).rowcount > 0

    @_write_once
    def remove_message_opt_out(self, tx: Tx, handle: str) -> bool:
        return tx.execute("DELETE FROM message_optouts WHERE handle = ?", (handle,)).rowcount > 0

    @_read
    def message_opted_out(self, tx: Tx, handle: str) -> bool:
        return one(tx, "SELECT 1 AS here FROM message_optouts WHERE handle = ?", (handle,)) is not None

    @_write
    def put_message_pending(self, tx: Tx, handle: str, chat_id: str, message_id: str, intent: str,
                            expires_at: float) -> None:
        tx.execute(
            "INSERT INTO message_pending (handle, chat_id, message_id, intent, expires_at) VALUES (?, ?, ?, ?, ?)"
            " ON CONFLICT (handle) DO UPDATE SET chat_id = excluded.chat_id, message_id = excluded.message_id,"
            " intent = excluded.intent, expires_at = excluded.expires_at",
            (handle, chat_id, message_id, intent, expires_at),
        )

    @_write_once
    def take_message_pending(self, tx: Tx, handle: str) -> PendingRow | None:
        """The handle's pending row, removed (whether or not it has lapsed; the caller judges)."""
        r = one(tx, "SELECT handle, chat_id, message_id, intent, expires_at FROM message_pending WHERE handle = ?"
                    " FOR UPDATE", (handle,))
        if r is None:
            return None
        tx.execute("DELETE FROM message_pending WHERE handle = ?", (handle,))
        return PendingRow(r["handle"], r["chat_id"], r["message_id"], r["intent"], float(r["expires_at"]))


def columns(ledger: Ledger) -> dict[str, set[str]]:
    """Each table's column names, as the engine's catalogue has them (the engines' schemas compare equal)."""

    def read(tx: Tx) -> dict[str, set[str]]:
        if tx.engine == "sqlite":
            return {t: {r["name"] for r in all_rows(tx, f"SELECT name FROM pragma_table_info('{t}')")} for t in TABLES}
        found: dict[str, set[str]] = {}
        for r in all_rows(tx, "SELECT table_name, column_name FROM information_schema.columns"
                              " WHERE table_schema = current_schema()"):
            found.setdefault(r["table_name"], set()).add(r["column_name"])
        return {t: found.get(t, set()) for t in TABLES}

    return ledger._engine.run(read, write=False, idempotent=True)

