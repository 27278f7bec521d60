"""The PostgreSQL ledger's operations: `calld-ctl ledger check`, `backup` and `migrate`.

check reads only (the schema's version and tables); backup is pg_dump's (a consistent snapshot
while daemons write), run when it is installed; migrate copies a SQLite ledger into an EMPTY
PostgreSQL one in one transaction and compares the row counts table by table. Every message names
the server with its password redacted.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from attrs import frozen

from calld.ledger import POSTGRES_MIGRATIONS, TABLES, Ledger, LedgerUnavailable, columns, redact
from calld.ledger.engine import Tx, count
from calld.ops.errors import OperationalError
from calld.ops.health import ledger_problems


def _connect(url: str):  # noqa: ANN202 - a psycopg connection
    import psycopg
    from psycopg.rows import dict_row

    try:
        return psycopg.connect(url, connect_timeout=5, row_factory=dict_row, autocommit=True)
    except psycopg.OperationalError as exc:
        why = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise LedgerUnavailable(
            f"the ledger's PostgreSQL server {redact(url)} cannot be reached ({why.replace(url, redact(url))}); "
            "check that it is running and accepts connections, and the URL's host, port, database, user and password"
        ) from None


def _row_counts(conn, present: set[str]) -> dict[str, int]:  # noqa: ANN001
    return {t: int(conn.execute(f"SELECT count(*) AS n FROM {t}").fetchone()["n"]) for t in TABLES if t in present}  # noqa: S608


def _present(conn) -> set[str]:  # noqa: ANN001
    rows = conn.execute("SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema()")
    return {r["table_name"] for r in rows}


def postgres_problems(url: str) -> list[str]:
    """Empty when the PostgreSQL ledger answers and has this calld's schema; else each problem,
    worded to follow "the ledger is" / "the ledger has". Reads only."""
    try:
        conn = _connect(url)
    except LedgerUnavailable as exc:
        return [f"cannot be reached: {exc}"]
    with conn:
        present = _present(conn)
        if "schema_version" not in present:
            return ["has no calld schema yet (a daemon started on it, or calld-ctl ledger migrate, creates it)"]
        version = int(conn.execute("SELECT max(version) AS v FROM schema_version").fetchone()["v"] or 0)
        if version > len(POSTGRES_MIGRATIONS):
            return [f"has schema {version}, newer than this calld ({len(POSTGRES_MIGRATIONS)}); upgrade calld"]
        wanted = TABLES if version == len(POSTGRES_MIGRATIONS) else ("dids", "requests")
        return [f"has lost its {t} table" for t in wanted if t not in present]


def backup_postgres(url: str, dest: Path) -> int:
    """pg_dump's custom-format dump of the ledger to `dest` (0600); its size. Without pg_dump on PATH,
    an OperationalError naming the command to run where it is installed."""
    if dest.exists():
        raise OperationalError(f"{dest} already exists; choose a new file for the backup")
    parts = urlsplit(url)
    # The password goes by PGPASSWORD, never on a command line that `ps` shows.
    query = urlencode([(k, v) for k, v in parse_qsl(parts.query) if k.lower() != "password"])
    netloc = parts.netloc.rpartition("@")
    user = netloc[0].partition(":")[0]
    bare = urlunsplit((parts.scheme, f"{user}@{netloc[2]}" if netloc[1] else netloc[2], parts.path, query, ""))
    password = parts.password or dict(parse_qsl(parts.query)).get("password")
    pg_dump = shutil.which("pg_dump")
    if pg_dump is None:
        raise OperationalError(
            f"pg_dump is not installed here; on a host with the PostgreSQL client (apt-get install postgresql-client) run:"
            f" pg_dump --format=custom --file={dest} '{redact(url)}' (the password from PGPASSWORD or ~/.pgpass)"
        )
    tmp = dest.with_name(f".{dest.name}.partial")
    try:
        os.close(os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600))
    except OSError as exc:
        raise OperationalError(f"cannot write the backup at {dest} ({exc.strerror or exc}); "
                               "choose a file in a directory you can write") from None
    env = {**os.environ, **({"PGPASSWORD": password} if password else {})}
    try:
        done = subprocess.run([pg_dump, "--format=custom", f"--file={tmp}", bare], env=env, capture_output=True,
                              text=True, timeout=3600, check=False)
        if done.returncode:
            why = (done.stderr.strip() or f"exit {done.returncode}").replace(url, redact(url))
            raise OperationalError(f"pg_dump of the ledger at {redact(url)} failed: {why}")
        os.replace(tmp, dest)
    finally:
        tmp.unlink(missing_ok=True)
    return dest.stat().st_size


@frozen
class Copied:
    table: str
    source: int
    copied: int


def migrate_ledger(source: Path, dest_url: str) -> list[Copied]:
    """Copy the SQLite ledger at `source` into the EMPTY PostgreSQL ledger at `dest_url`, in one
    transaction, and compare the counts. A non-empty destination is refused before anything is written.
    The source is brought to this calld's schema first, as a daemon starting on it would."""
    problems = ledger_problems(source)
    if problems:
        raise OperationalError(f"not migrating the ledger {source}: it {problems[0]}")
    conn = _connect(dest_url)
    with conn:
        present = _present(conn)
        filled = {t: n for t, n in _row_counts(conn, present).items() if n}
    if filled:
        raise OperationalError(_not_empty(dest_url, filled))
    lite = Ledger(source)
    try:
        pg = Ledger(dest_url)
        try:
            if columns(lite) != columns(pg):
                raise OperationalError(f"the ledger {source} and the one at {redact(dest_url)} have different columns; "
                                       "run the same calld version on both")
            names = columns(lite)
            rows = {t: _read_all(lite, t, sorted(names[t])) for t in TABLES}

            def copy(tx: Tx) -> None:
                for table in TABLES:  # again inside the transaction: a daemon may have started on it meanwhile
                    if count(tx, f"SELECT count(*) AS n FROM {table}"):  # noqa: S608
                        raise OperationalError(_not_empty(dest_url, {table: count(tx, f"SELECT count(*) AS n FROM {table}")}))  # noqa: S608
                for table in TABLES:
                    cols = sorted(names[table])
                    sql = f"INSERT INTO {table} ({', '.join(cols)}) VALUES ({', '.join('?' * len(cols))})"  # noqa: S608
                    for row in rows[table]:
                        tx.execute(sql, row)

            pg._engine.run(copy, write=True, idempotent=False)  # noqa: SLF001 - one transaction over every table
            before, after = lite.table_counts(), pg.table_counts()
        finally:
            pg.close()
    finally:
        lite.close()
    copied = [Copied(t, before[t], after[t]) for t in TABLES]
    wrong = [c for c in copied if c.source != c.copied]
    if wrong:
        raise OperationalError("the copy's row counts differ: " + ", ".join(f"{c.table} {c.source} -> {c.copied}" for c in wrong))
    return copied


def _read_all(ledger: Ledger, table: str, cols: list[str]) -> list[tuple[object, ...]]:
    def read(tx: Tx) -> list[tuple[object, ...]]:
        return [tuple(r[c] for c in cols) for r in tx.execute(f"SELECT {', '.join(cols)} FROM {table}")]  # noqa: S608

    return ledger._engine.run(read, write=False, idempotent=True)  # noqa: SLF001


def _not_empty(url: str, filled: dict[str, int]) -> str:
    held = ", ".join(f"{t}: {n}" for t, n in filled.items())
    return (f"the ledger at {redact(url)} is not empty ({held} rows); nothing was copied. Migrate only into an empty "
            "database: create one (e.g. createdb calld) and give its URL to --to")

