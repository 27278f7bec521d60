"""The SQLite ledger: who owns which Telnyx number (and, later, which request dialled).

Every side effect is keyed on the thing being done, never on an attempt:
UNIQUE(user_id) and UNIQUE(did) make a second number for one user unbuildable.
Schema changes go through MIGRATIONS, numbered by PRAGMA user_version. Each
check-and-write runs inside BEGIN IMMEDIATE so two writers cannot both pass the check.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path

from attrs import frozen

from calld.domain.ids import E164, UserId

MIGRATIONS: tuple[str, ...] = (
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
)

# Stub numbers come from the range reserved for fiction: +1 555 550 0100 to 0199.
_STUB_POOL = tuple(E164(f"+1555555{n:04d}") for n in range(100, 200))


class UnknownUser(LookupError):
    def __init__(self, user_id: UserId) -> None:
        super().__init__(
            f"user {user_id!r} has no Telnyx number yet; run: calld-ctl did provision --user {user_id}"
        )


@frozen
class DidRow:
    user_id: UserId
    did: E164 | None
    status: str
    order_id: str | None


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


class Ledger:
    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        # isolation_level=None: we issue BEGIN IMMEDIATE ourselves, so the lock covers the check.
        self._db = sqlite3.connect(path, isolation_level=None, timeout=10.0)
        self._db.row_factory = sqlite3.Row
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA foreign_keys=ON")
        self._migrate()

    def close(self) -> None:
        self._db.close()

    def _migrate(self) -> None:
        with self._write():
            version = self._db.execute("PRAGMA user_version").fetchone()[0]
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

    def did_for(self, user_id: UserId) -> E164:
        row = self._db.execute("SELECT did FROM dids WHERE user_id = ? AND status = 'active'", (user_id,)).fetchone()
        if row is None:
            raise UnknownUser(user_id)
        return E164(row["did"])

    def rows(self) -> list[DidRow]:
        rows = self._db.execute("SELECT user_id, did, status, order_id FROM dids ORDER BY user_id").fetchall()
        return [
            DidRow(UserId(r["user_id"]), E164(r["did"]) if r["did"] else None, r["status"], r["order_id"])
            for r in rows
        ]

    def provision_stub(self, user_id: UserId) -> E164:
        """Stub mode: give the user the first free fictional number, once."""
        with self._write() as db:
            row = db.execute("SELECT did FROM dids WHERE user_id = ?", (user_id,)).fetchone()
            if row is not None and row["did"]:
                return E164(row["did"])
            taken = {r["did"] for r in db.execute("SELECT did FROM dids WHERE did IS NOT NULL")}
            free = next((d for d in _STUB_POOL if d not in taken), None)
            if free is None:
                raise RuntimeError("the stub number pool (+15555550100..0199) is used up")
            now = _now()
            db.execute(
                "INSERT INTO dids (user_id, did, status, order_id, customer_reference, created_at, updated_at)"
                " VALUES (?, ?, 'active', ?, ?, ?, ?)",
                (user_id, free, "stub-order", f"user:{user_id}", now, now),
            )
            return free


def _statements(sql: str) -> list[str]:
    # executescript would COMMIT our BEGIN IMMEDIATE; run each statement inside it instead.
    return [s.strip() for s in sql.split(";") if s.strip()]
