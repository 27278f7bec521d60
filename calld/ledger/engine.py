"""The engine seam: the one thing that differs between the SQLite ledger and the PostgreSQL one.

The ledger's methods (calld.ledger.ledger) are written once, in SQL both engines read: `?`
placeholders, `ON CONFLICT`, `FOR UPDATE` where a row is read to be changed. An engine runs one
method as one transaction (`run`), translating each statement for its server:

- SQLite: one connection, every write under BEGIN IMMEDIATE (the whole file is locked, so a
  check and its write cannot interleave; `FOR UPDATE` is dropped, the lock already covers it;
  advisory locks are no-ops for the same reason).
- PostgreSQL: a small psycopg_pool of connections, READ COMMITTED, with row locks
  (`FOR UPDATE`, `SKIP LOCKED`) and transaction-scoped advisory locks keeping each check and
  its write atomic across daemons. A dropped connection (server restarted, network cut) is
  retried with a short backoff, then reported as LedgerUnavailable naming the server.
"""

from __future__ import annotations

import functools
import os
import re
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Protocol

from calld.ledger.target import redact
from calld.ops.errors import OperationalError

if TYPE_CHECKING:
    from psycopg import Connection

Row = Mapping[str, Any]
Args = Sequence[Any]
EngineName = Literal["sqlite", "postgresql"]

# Retries of a dropped PostgreSQL connection: 5 tries, 2.5 s apart in all, each waiting at most
# ACQUIRE_TIMEOUT_S for the pool to have a connection (it reconnects meanwhile): about 7.5 s, enough
# for a server's fast restart (pg_ctl restart takes well under a second) and short enough that a
# request waiting on it gets its refusal while its caller still waits. (The pool's wait is the
# only one: the daemon never runs more ledger calls at once than the pool has connections.)
RETRY_DELAYS_S = (0.1, 0.3, 0.7, 1.4)
ACQUIRE_TIMEOUT_S = 1.0


class LedgerUnavailable(OperationalError):
    """The ledger's server could not be reached (or the connection dropped) after retries."""


class IntegrityViolation(Exception):
    """A UNIQUE or CHECK constraint refused a write; the transaction is rolled back when it leaves."""


class Cursor(Protocol):
    rowcount: int

    def fetchone(self) -> Any: ...
    def fetchall(self) -> list[Any]: ...
    def __iter__(self) -> Iterator[Any]: ...


class Tx(Protocol):
    """One transaction, in progress. Statements use `?` placeholders; rows are read by column name."""

    engine: EngineName

    def execute(self, sql: str, args: Args = ()) -> Cursor: ...
    def lock(self, *keys: str) -> None: ...


def one(tx: Tx, sql: str, args: Args = ()) -> Row | None:
    return tx.execute(sql, args).fetchone()


def all_rows(tx: Tx, sql: str, args: Args = ()) -> list[Row]:
    return list(tx.execute(sql, args).fetchall())


def count(tx: Tx, sql: str, args: Args = ()) -> int:
    """The value of a `SELECT count(*) AS n ...`."""
    row = one(tx, sql, args)
    assert row is not None
    return int(row["n"])


def statements(sql: str) -> list[str]:
    return [s.strip() for s in sql.split(";") if s.strip()]


class Engine(Protocol):
    name: EngineName

    def run[R](self, body: Callable[[Tx], R], *, write: bool, idempotent: bool) -> R: ...
    def schema_version(self) -> int: ...
    def migrate(self, migrations: Sequence[str]) -> None: ...
    def describe(self) -> str: ...
    def flush_to_disk(self) -> None: ...
    def close(self) -> None: ...


# -- SQLite ----------------------------------------------------------------------------------------

_ROW_LOCKS = re.compile(r"\s+FOR UPDATE(\s+SKIP LOCKED)?\s*$")


@functools.lru_cache(maxsize=512)
def _for_sqlite(sql: str) -> str:
    return _ROW_LOCKS.sub("", sql)


class _SqliteTx:
    engine: EngineName = "sqlite"

    def __init__(self, db: sqlite3.Connection) -> None:
        self._db = db

    def execute(self, sql: str, args: Args = ()) -> Cursor:
        try:
            return self._db.execute(_for_sqlite(sql), tuple(args))
        except sqlite3.IntegrityError as exc:
            raise IntegrityViolation(str(exc)) from exc

    def lock(self, *keys: str) -> None:
        """BEGIN IMMEDIATE already holds the one write lock there is."""


class SqliteEngine:
    name: EngineName = "sqlite"

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        # isolation_level=None: we issue BEGIN IMMEDIATE ourselves, so the lock covers the check.
        # One connection shared by whichever thread runs a method; the lock serialises them.
        self.db = sqlite3.connect(path, isolation_level=None, timeout=10.0, check_same_thread=False)
        self.db.row_factory = sqlite3.Row
        self._lock = threading.RLock()
        try:
            self.db.execute("PRAGMA journal_mode=WAL")
            # A commit writes the WAL without an fsync (4 ms p50, 12 ms p99 on a VM's disk, on the
            # event loop every call's audio shares). Durability comes from flush_to_disk, which the
            # daemon runs in a worker thread at the two moments that need it: before a dial (one
            # request, one call, even across a power cut) and before a result is told.
            self.db.execute("PRAGMA synchronous=NORMAL")
            self.db.execute("PRAGMA foreign_keys=ON")
        except BaseException:
            self.db.close()
            raise

    @contextmanager
    def _transaction(self, write: bool) -> Iterator[Tx]:
        with self._lock:
            # A read is a deferred transaction: one snapshot for all its statements.
            self.db.execute("BEGIN IMMEDIATE" if write else "BEGIN")
            try:
                yield _SqliteTx(self.db)
            except BaseException:
                self.db.execute("ROLLBACK")
                raise
            else:
                self.db.execute("COMMIT")

    def run[R](self, body: Callable[[Tx], R], *, write: bool, idempotent: bool) -> R:
        with self._transaction(write) as tx:
            return body(tx)

    def schema_version(self) -> int:
        return int(self.db.execute("PRAGMA user_version").fetchone()[0])

    def migrate(self, migrations: Sequence[str]) -> None:
        from calld.ledger.rows import LedgerError

        with self._transaction(True) as tx:
            version = self.schema_version()
            if version > len(migrations):
                raise LedgerError(
                    f"{self.path} has schema version {version}, newer than this calld knows "
                    f"({len(migrations)}); run the calld that wrote it, or upgrade"
                )
            for number, sql in enumerate(migrations[version:], start=version + 1):
                # executescript would COMMIT our BEGIN IMMEDIATE; run each statement inside it instead.
                for statement in statements(sql):
                    tx.execute(statement)
                self.db.execute(f"PRAGMA user_version = {number}")

    def describe(self) -> str:
        return str(self.path)

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
        self.db.close()


# -- PostgreSQL ------------------------------------------------------------------------------------


@functools.lru_cache(maxsize=512)
def _for_postgres(sql: str) -> str:
    # psycopg's placeholder is %s, so a literal % is written %%.
    return sql.replace("%", "%%").replace("?", "%s")


class _PostgresTx:
    engine: EngineName = "postgresql"

    def __init__(self, conn: Connection[Any]) -> None:
        self._conn = conn

    def execute(self, sql: str, args: Args = ()) -> Cursor:
        import psycopg

        try:
            return self._conn.execute(_for_postgres(sql), tuple(args))
        except psycopg.IntegrityError as exc:
            raise IntegrityViolation(str(exc).strip()) from exc

    def lock(self, *keys: str) -> None:
        """Transaction-scoped advisory locks, taken in one order so two takers cannot deadlock."""
        for key in sorted(set(keys)):
            self._conn.execute("SELECT pg_advisory_xact_lock(hashtext(%s))", (key,))


SCHEMA_LOCK = "calld:ledger:migrate"


RECONNECT_EVERY_S = 0.5  # how often a pool whose server is gone tries again: back within a second of it


@functools.cache
def _pool_class() -> Any:
    """psycopg_pool's ConnectionPool, reconnecting at a steady pace. Its own backoff doubles from 1 s
    (1, 2, 4, 8, 16, ...), so after an outage of twenty seconds the pool could wait sixteen more before
    it tried again, and every ask in the gap would be refused. A connection attempt to a server that is
    down costs a refused socket (or the connect timeout, in the pool's own thread), nothing on the loop."""
    from psycopg_pool import ConnectionPool
    from psycopg_pool.base import AttemptWithBackoff

    class SteadyAttempt(AttemptWithBackoff):
        def update_delay(self, now: float) -> None:
            super().update_delay(now)
            self.delay = min(self.delay, RECONNECT_EVERY_S)

    class Pool(ConnectionPool):  # type: ignore[type-arg]
        def _add_connection(self, attempt: Any, growing: bool = False) -> None:  # psycopg_pool 3.2-3.3's hook
            super()._add_connection(attempt or SteadyAttempt(timeout=self.reconnect_timeout), growing)

    return Pool


class PostgresEngine:
    name: EngineName = "postgresql"
    path = None

    def __init__(self, url: str, *, pool_size: int = 4, connect_timeout_s: float = 5.0,
                 acquire_timeout_s: float = ACQUIRE_TIMEOUT_S, retry_delays_s: Sequence[float] = RETRY_DELAYS_S) -> None:
        import psycopg
        from psycopg.rows import dict_row
        from psycopg_pool import ConnectionPool

        self.url = url
        self._retry_delays = tuple(retry_delays_s)
        self._pool: ConnectionPool[Connection[Any]] = _pool_class()(
            url, min_size=1, max_size=pool_size, open=False, timeout=acquire_timeout_s, name="calld-ledger",
            kwargs={"row_factory": dict_row, "connect_timeout": max(1, round(connect_timeout_s)),
                    "application_name": "calld"},
        )
        try:
            self._pool.open(wait=True, timeout=connect_timeout_s)
        except psycopg.OperationalError as exc:
            self._pool.close()
            raise self._unavailable(exc) from None

    def _unavailable(self, exc: BaseException, *, unsure: bool = False) -> LedgerUnavailable:
        why = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        why = why.replace(self.url, redact(self.url))
        outcome = (" The last write may or may not have been committed; its request can be repeated with the same id."
                   if unsure else " Nothing was written.")
        return LedgerUnavailable(
            f"the ledger's PostgreSQL server {redact(self.url)} cannot be reached ({why}).{outcome} "
            "Check that the server is running and accepts connections from this host, and CALLD_LEDGER_URL's "
            "host, port, database, user and password"
        )

    def run[R](self, body: Callable[[Tx], R], *, write: bool, idempotent: bool) -> R:
        import psycopg

        delays = iter(self._retry_delays)
        while True:
            committing = False
            try:
                with self._pool.connection() as conn:
                    result = body(_PostgresTx(conn))
                    committing = True
                    conn.commit()
                    return result
            except psycopg.OperationalError as exc:
                # Before COMMIT nothing was written (the server rolls back a dropped transaction),
                # so any method may run again; a COMMIT whose answer was lost may have happened, so
                # only a method whose repeat gives the same answer may.
                delay = next(delays, None)
                if delay is None or (committing and not idempotent):
                    raise self._unavailable(exc, unsure=committing) from None
                time.sleep(delay)

    def schema_version(self) -> int:
        def read(tx: Tx) -> int:
            if one(tx, "SELECT to_regclass('schema_version') IS NOT NULL AS here")["here"] is False:  # type: ignore[index]
                return 0
            row = one(tx, "SELECT max(version) AS v FROM schema_version")
            return int(row["v"] or 0) if row else 0

        return self.run(read, write=False, idempotent=True)

    def migrate(self, migrations: Sequence[str]) -> None:
        from calld.ledger.rows import LedgerError

        def step(tx: Tx) -> None:
            tx.lock(SCHEMA_LOCK)  # two daemons starting at once: one migrates, the other then finds it done
            tx.execute("CREATE TABLE IF NOT EXISTS schema_version (version integer PRIMARY KEY, applied_at text NOT NULL)")
            row = one(tx, "SELECT max(version) AS v FROM schema_version")
            version = int(row["v"] or 0) if row else 0
            if version > len(migrations):
                raise LedgerError(
                    f"the ledger at {redact(self.url)} has schema version {version}, newer than this calld knows "
                    f"({len(migrations)}); run the calld that wrote it, or upgrade"
                )
            for number, sql in enumerate(migrations[version:], start=version + 1):
                for statement in statements(sql):
                    tx.execute(statement)
                tx.execute("INSERT INTO schema_version (version, applied_at) VALUES (?, now()::text)", (number,))

        self.run(step, write=True, idempotent=True)

    def describe(self) -> str:
        return redact(self.url)

    def flush_to_disk(self) -> None:
        """A PostgreSQL commit is durable when it returns (synchronous_commit); nothing to sync here."""

    def close(self) -> None:
        self._pool.close()
