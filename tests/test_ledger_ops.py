"""calld-ctl ledger check, backup and migrate on a PostgreSQL ledger (a real server, tests/pg.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from calld.cli.ctl import EXIT_OK, EXIT_USAGE, EXIT_VERIFY_FAILED
from calld.cli.ctl import main as ctl_main
from calld.domain.ids import RunId, UserId
from calld.ledger import TABLES, Ledger

pytestmark = pytest.mark.postgres
ALICE = UserId("alice")


def a_sqlite_ledger(path: Path) -> None:
    led = Ledger(path)
    led.provision_stub(ALICE)
    for i in range(3):
        led.claim_request(f"req-{i}", user_id=ALICE, kind="ask", params={"to": "+15555550142"}, run_id=RunId.new(),
                          instance="d1")
    led.finish_request("req-0", {"status": "answered"})
    led.put_message_link("+15555550177", "alice", "Sam")
    led.renew_lease("d1", 1234.5)
    led.close()


def test_check_reads_the_postgres_ledger_named_without_its_password(pg_url, monkeypatch, capsys) -> None:
    monkeypatch.setenv("CALLD_LEDGER_URL", pg_url)
    assert ctl_main(["ledger", "check"]) == EXIT_OK
    assert "ok (PostgreSQL schema check passed)" in capsys.readouterr().out


def test_check_of_an_unreachable_server_fails_and_redacts(tmp_path, monkeypatch, capsys) -> None:
    monkeypatch.setenv("CALLD_LEDGER_URL", f"postgresql://calld:hunter2@/calld?host={tmp_path}")
    assert ctl_main(["ledger", "check"]) == EXIT_VERIFY_FAILED
    out = capsys.readouterr()
    assert "cannot be reached" in out.out and "calld:***@" in out.out
    assert "hunter2" not in out.out + out.err


def test_backup_runs_pg_dump_or_names_it(pg_url, tmp_path, monkeypatch, capsys) -> None:
    monkeypatch.setenv("CALLD_LEDGER_URL", pg_url)
    dump = tmp_path / "ledger.dump"
    assert ctl_main(["ledger", "backup", str(dump)]) == EXIT_OK
    assert dump.read_bytes().startswith(b"PGDMP") and (dump.stat().st_mode & 0o777) == 0o600
    assert ctl_main(["ledger", "backup", str(dump)]) == EXIT_USAGE  # never overwrites
    assert "already exists" in capsys.readouterr().err
    monkeypatch.setenv("PATH", str(tmp_path))  # no pg_dump here
    assert ctl_main(["ledger", "backup", str(tmp_path / "other.dump")]) == EXIT_USAGE
    err = capsys.readouterr().err
    assert "pg_dump is not installed" in err and "pg_dump --format=custom" in err
    assert not (tmp_path / "other.dump").exists()


def test_migrate_copies_into_an_empty_ledger_and_refuses_a_filled_one(pg_empty_url, tmp_path, capsys) -> None:
    source = tmp_path / "calld.sqlite3"
    a_sqlite_ledger(source)
    assert ctl_main(["ledger", "migrate", "--from", str(source), "--to", pg_empty_url]) == EXIT_OK
    out = capsys.readouterr().out
    assert "every count matches" in out
    assert all(t in out for t in TABLES)
    assert "requests                3 -> 3" in out
    pg = Ledger(pg_empty_url)
    try:
        assert pg.table_counts() == {**dict.fromkeys(TABLES, 0), "dids": 1, "requests": 3, "message_links": 1, "daemons": 1}
        assert pg.request("req-0").result == {"status": "answered"}  # type: ignore[union-attr]
        assert pg.request("req-1").instance == "d1"  # type: ignore[union-attr]
        assert pg.daemons()[0].lease_until == 1234.5
        before = pg.table_counts()
    finally:
        pg.close()
    # a second copy would duplicate nothing and overwrite nothing: refused, nothing written
    assert ctl_main(["ledger", "migrate", "--from", str(source), "--to", pg_empty_url]) == EXIT_USAGE
    err = capsys.readouterr().err
    assert "is not empty (dids: 1, requests: 3" in err and "nothing was copied" in err
    pg = Ledger(pg_empty_url)
    try:
        assert pg.table_counts() == before
    finally:
        pg.close()


def test_migrate_refuses_a_url_that_is_not_postgres(tmp_path, capsys) -> None:
    source = tmp_path / "calld.sqlite3"
    a_sqlite_ledger(source)
    assert ctl_main(["ledger", "migrate", "--from", str(source), "--to", "mysql://u:hunter2@h/d"]) == EXIT_USAGE
    err = capsys.readouterr().err
    assert "--to:" in err and "not a PostgreSQL URL" in err and "hunter2" not in err


async def test_doctor_checks_the_postgres_ledger(pg_url, tmp_path) -> None:
    from calld.observe.doctor import Context, check_ledger
    from calld.settings import load_settings

    good = await check_ledger(Context(load_settings(_env_file=None, calld_state_dir=tmp_path, calld_ledger_url=pg_url)))
    assert good.ok and "answers with calld's schema (PostgreSQL)" in good.detail
    gone = f"postgresql://calld:hunter2@/calld?host={tmp_path}"
    bad = await check_ledger(Context(load_settings(_env_file=None, calld_state_dir=tmp_path, calld_ledger_url=gone)))
    assert not bad.ok and "cannot be reached" in bad.detail and "hunter2" not in bad.detail


def test_the_daemons_ledger_opener_takes_a_postgres_url(pg_url, tmp_path) -> None:
    from calld.ledger import LedgerUnavailable
    from calld.ops.health import open_ledger

    led = open_ledger(pg_url, state_dir_is_new=False)
    try:
        assert led.engine == "postgresql" and led.schema_version == len(led.migrations)
    finally:
        led.close()
    with pytest.raises(LedgerUnavailable, match=r"calld:\*\*\*@"):
        open_ledger(f"postgresql://calld:hunter2@/calld?host={tmp_path}", state_dir_is_new=False)


def test_migrate_names_a_url_with_no_host_as_given_slashes_and_all(pg_empty_url, tmp_path, capsys) -> None:
    """postgresql:///DB?host=SOCKET (the local server's socket, as the README's loop writes it) is printed as
    written, never as postgresql:/DB (which libpq would not read), and its password is masked."""
    from urllib.parse import parse_qsl, urlencode, urlsplit

    parts = urlsplit(pg_empty_url)
    user = parts.netloc.rpartition("@")[0]
    query = urlencode([*parse_qsl(parts.query), ("user", user), ("password", "pw-Zq8v3LkT")])
    url = f"postgresql://{parts.path}?{query}"
    assert url.startswith("postgresql:///calld_test_")
    source = tmp_path / "calld.sqlite3"
    a_sqlite_ledger(source)
    assert ctl_main(["ledger", "migrate", "--from", str(source), "--to", url]) == EXIT_OK
    out = capsys.readouterr().out
    assert f"into postgresql://{parts.path}?host=" in out and "password=***" in out and "pw-Zq8v3LkT" not in out, out


def test_migrate_brings_the_redaction_key_so_users_keep_their_stand_ins(pg_empty_url, tmp_path, capsys) -> None:
    """The one daemon's redaction.key goes into the shared ledger with its rows: daemons on new state dirs
    there name each user as the old daemon did (its published object keys do not change)."""
    import secrets

    from calld.ops.redaction import KEY_FILE, Pseudonyms, daemon_pseudonyms
    from calld.settings import load_settings

    source = tmp_path / "calld.sqlite3"
    a_sqlite_ledger(source)
    key = secrets.token_bytes(32)
    (tmp_path / KEY_FILE).write_bytes(key)
    assert ctl_main(["ledger", "migrate", "--from", str(source), "--to", pg_empty_url]) == EXIT_OK
    assert f"the redaction key {tmp_path / KEY_FILE} came along" in capsys.readouterr().out
    pg = Ledger(pg_empty_url)
    try:
        fresh = load_settings(_env_file=None, calld_state_dir=tmp_path / "new", calld_ledger_url=pg_empty_url)
        assert daemon_pseudonyms(fresh, pg).user("alice") == Pseudonyms(key).user("alice")
        assert not (tmp_path / "new" / KEY_FILE).exists()
    finally:
        pg.close()
