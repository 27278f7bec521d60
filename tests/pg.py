"""A real PostgreSQL server for the ledger tests (no mocks): CALLD_TEST_PG_URL when it is set, else a
throwaway cluster this test session starts with initdb and pg_ctl and stops at its end, failed or not.

The cluster listens on a unix socket in its own temporary directory only (no TCP port to collide
on). initdb refuses to run as root, so as root it runs as the `postgres` user. Each test gets a
database of its own, copied from a template that already holds the ledger's schema (fast).
Without a server the PostgreSQL tests skip, saying why; with CALLD_TEST_PG_REQUIRED=1 (CI) they fail.

    uv run pytest tests/test_ledger.py -m postgres     # the ledger suite on PostgreSQL only
"""

from __future__ import annotations

import contextlib
import os
import pwd
import shutil
import subprocess
import tempfile
import uuid
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote, urlsplit, urlunsplit

import pytest

TEMPLATE = "calld_ledger_template"


def _bin_dir() -> Path | None:
    found = shutil.which("pg_ctl")
    if found:
        return Path(os.path.realpath(found)).parent
    versions = sorted(Path("/usr/lib/postgresql").glob("*/bin/pg_ctl"), key=lambda p: int(p.parent.parent.name))
    return versions[-1].parent if versions else None


def _as_owner(owner: str | None) -> list[str]:
    return ["runuser", "-u", owner, "--"] if owner else []


class Cluster:
    """initdb + pg_ctl in a temporary directory; `url` reaches its `postgres` database over the socket."""

    def __init__(self, bin_dir: Path) -> None:
        self.bin = bin_dir
        self.owner: str | None = None
        if os.geteuid() == 0:
            try:
                pwd.getpwnam("postgres")
            except KeyError:
                raise RuntimeError("running as root and there is no postgres user for initdb to run as") from None
            self.owner = "postgres"
        self.root = Path(tempfile.mkdtemp(prefix="calld-pg-"))
        self.data, self.sock = self.root / "data", self.root / "sock"
        self.sock.mkdir()
        if self.owner:
            for p in (self.root, self.sock):
                shutil.chown(p, self.owner)
        self.user = self.owner or pwd.getpwuid(os.geteuid()).pw_name
        self.url = f"postgresql://{quote(self.user)}@/postgres?host={quote(str(self.sock), safe='')}"

    @property
    def _options(self) -> str:
        return f"-c listen_addresses='' -k {self.sock} -c fsync=off -c synchronous_commit=off -c full_page_writes=off"

    def _run(self, *args: str) -> None:
        done = subprocess.run([*_as_owner(self.owner), *args], capture_output=True, text=True, timeout=120, check=False)
        if done.returncode:
            raise RuntimeError(f"{' '.join(args[:2])} failed: {done.stderr.strip() or done.stdout.strip()}")

    def start(self) -> None:
        self._run(str(self.bin / "initdb"), "-D", str(self.data), "--auth=trust", "-U", self.user, "-E", "UTF8",
                  "--no-locale", "--no-sync")
        # No TCP; fsync off: a test cluster is thrown away, so durability would only cost time.
        self._run(str(self.bin / "pg_ctl"), "-D", str(self.data), "-o", self._options, "-l", str(self.root / "log"),
                  "-w", "-t", "60", "start")

    def restart(self) -> None:
        # -l again: without it the server would inherit (and hold open) the pipe _run reads to its end.
        self._run(str(self.bin / "pg_ctl"), "-D", str(self.data), "-l", str(self.root / "log"), "-m", "fast", "-w",
                  "restart")

    def halt(self) -> None:
        """The server stops (an outage made by the test); its data stays for `resume`. A fast stop: an
        immediate one would lose the last commits (this cluster commits asynchronously)."""
        self._run(str(self.bin / "pg_ctl"), "-D", str(self.data), "-m", "fast", "-w", "stop")

    def resume(self) -> None:
        self._run(str(self.bin / "pg_ctl"), "-D", str(self.data), "-o", self._options, "-l", str(self.root / "log"), "-w", "-t", "60", "start")

    def stop(self) -> None:
        with contextlib.suppress(Exception):
            self._run(str(self.bin / "pg_ctl"), "-D", str(self.data), "-m", "immediate", "-w", "stop")
        shutil.rmtree(self.root, ignore_errors=True)


def database_url(base: str, name: str) -> str:
    parts = urlsplit(base)
    return urlunsplit((parts.scheme, parts.netloc, f"/{name}", parts.query, parts.fragment))


def admin(base: str, sql: str) -> None:
    import psycopg

    with psycopg.connect(base, autocommit=True) as conn:
        conn.execute(sql)


class Server:
    """Where the tests' databases are made: CALLD_TEST_PG_URL's server, or our cluster."""

    def __init__(self, base_url: str, cluster: Cluster | None) -> None:
        self.base_url = base_url
        self.cluster = cluster
        self._template_ready = False

    def fresh_database(self) -> str:
        """A new database with the ledger's schema; its URL."""
        from calld.ledger import Ledger

        if not self._template_ready:
            admin(self.base_url, f"DROP DATABASE IF EXISTS {TEMPLATE} WITH (FORCE)")
            admin(self.base_url, f"CREATE DATABASE {TEMPLATE}")
            Ledger(database_url(self.base_url, TEMPLATE)).close()
            self._template_ready = True
        name = f"calld_test_{uuid.uuid4().hex[:12]}"
        admin(self.base_url, f"CREATE DATABASE {name} TEMPLATE {TEMPLATE}")
        return database_url(self.base_url, name)

    def empty_database(self) -> str:
        name = f"calld_test_{uuid.uuid4().hex[:12]}"
        admin(self.base_url, f"CREATE DATABASE {name}")
        return database_url(self.base_url, name)

    def drop(self, url: str) -> None:
        with contextlib.suppress(Exception):
            admin(self.base_url, f"DROP DATABASE IF EXISTS {urlsplit(url).path.strip('/')} WITH (FORCE)")


def no_server(reason: str) -> None:
    if os.environ.get("CALLD_TEST_PG_REQUIRED") == "1":
        pytest.fail(f"CALLD_TEST_PG_REQUIRED=1 but no PostgreSQL server: {reason}")
    pytest.skip(f"no PostgreSQL server ({reason}); set CALLD_TEST_PG_URL, or install PostgreSQL (initdb, pg_ctl)")


@pytest.fixture(scope="session")
def pg_server() -> Iterator[Server]:
    given = os.environ.get("CALLD_TEST_PG_URL", "").strip()
    if given:
        yield Server(given, None)
        return
    bin_dir = _bin_dir()
    if bin_dir is None or not (bin_dir / "initdb").exists():
        no_server("initdb and pg_ctl are not installed")
    assert bin_dir is not None
    cluster = Cluster(bin_dir)
    try:
        cluster.start()
    except (RuntimeError, OSError, subprocess.TimeoutExpired) as exc:
        cluster.stop()
        no_server(f"a throwaway cluster did not start: {exc}")
    try:
        yield Server(cluster.url, cluster)
    finally:
        cluster.stop()


@pytest.fixture
def pg_url(pg_server: Server) -> Iterator[str]:
    """A fresh database on the test server holding the ledger's schema."""
    url = pg_server.fresh_database()
    yield url
    pg_server.drop(url)


@pytest.fixture
def pg_empty_url(pg_server: Server) -> Iterator[str]:
    """A fresh, empty database (no schema)."""
    url = pg_server.empty_database()
    yield url
    pg_server.drop(url)


ENGINES = [pytest.param("sqlite", id="sqlite"), pytest.param("postgresql", id="postgresql", marks=pytest.mark.postgres)]
