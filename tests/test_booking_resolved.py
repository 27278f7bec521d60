"""A booking's --time as calld read it, in the restaurant's zone: the result, `show` and `history` name its
day ("Fri 12 Jun 7pm"); the ledger keeps it (requests.booking_at, schedule.booking_at), so a queued
"tomorrow" keeps the day it meant when it is dialled after midnight; rows from before it was kept still
read. The daemon's policy clock is fixed (autojump clock); New York fiction numbers ring no one."""

from __future__ import annotations

import io
import json
import sqlite3
from datetime import UTC, datetime

import pytest
import trio

from calld.cli.client import ControlClient, ControlError
from calld.cli.ctl import EXIT_OK, run_ask
from calld.daemon.service import Daemon
from calld.ledger import MIGRATIONS, POSTGRES_MIGRATIONS, Ledger
from calld.observe.history import history_row
from calld.observe.summary import show_text
from calld.policy.clock import trio_clock
from daemons import daemon_settings, stop

NY = "+12125550142"
BOOK = {"to": NY, "name": "Nathan", "party": 2, "user": "alice"}
NOON = datetime(2026, 6, 10, 16, 0, tzinfo=UTC)  # Wednesday 12:00 in New York
LATE = datetime(2026, 6, 10, 3, 0, tzinfo=UTC)  # Tuesday 23:00 in New York: the window closed until 08:00


async def started(nursery, tmp_path, at: datetime) -> Daemon:
    return await nursery.start(Daemon(daemon_settings(tmp_path), clock=trio_clock(at)).serve)


async def book(client: ControlClient, body: dict) -> dict:
    out = io.StringIO()
    code = await run_ask(client, body, out=out, err=io.StringIO(), book=True)
    assert code == EXIT_OK, out.getvalue()
    return json.loads(out.getvalue())


async def test_the_result_show_and_history_name_the_day_the_time_was_read_as(tmp_path, nursery, autojump_clock):
    daemon = await started(nursery, tmp_path, NOON)
    async with ControlClient(daemon.settings.calld_socket) as client:
        await client.provision("alice")
        result = await book(client, {**BOOK, "time": "Friday 7pm", "request_id": "fri-1"})
        assert result["status"] == "booked"
        assert (result["booking_for"], result["booking_at"]) == ("Fri 12 Jun 7pm", "2026-06-12T19:00:00-04:00")
        [row] = await client.history()
        assert row["ask"] == "book 2 at Fri 12 Jun 7pm"
        assert "  table at    Fri 12 Jun 7pm" in show_text(await client.detail("fri-1")).splitlines()
        # Said on the Wednesday itself after its time: asked about, nothing booked a week on.
        with pytest.raises(ControlError) as asked:
            async for _ in client.book({**BOOK, "time": "Wednesday 9am"}):
                pass
        assert "names today, Wed 10 Jun, and 9am has passed" in asked.value.message and "next Wednesday 9am" in asked.value.message
        assert len(await client.history()) == 1
    await stop(daemon)


async def test_the_evidence_check_knows_the_restaurants_today(tmp_path, nursery, autojump_clock, monkeypatch):
    """The daemon dials a booking with the day it is where the restaurant is (Wednesday 10 June in New York): the
    day the business's "tomorrow" is said of, which the evidence check reads."""
    from calld.core import judging
    from calld.evidence import check

    seen: list[object] = []
    real = check.check_record
    monkeypatch.setattr(check, "check_record", lambda arguments, job, *a, **k: seen.append(job) or real(arguments, job, *a, **k))
    judging.judged.cache_clear()
    daemon = await started(nursery, tmp_path, NOON)
    async with ControlClient(daemon.settings.calld_socket) as client:
        await client.provision("alice")
        assert (await book(client, {**BOOK, "time": "Friday 7pm", "request_id": "today-1"}))["status"] == "booked"
    assert seen and {(job.when, job.today) for job in seen} == {("2026-06-12T19:00:00-04:00", "2026-06-10")}
    await stop(daemon)


async def test_verify_checks_a_booking_against_the_request_as_it_was_dialled(tmp_path, nursery, autojump_clock, monkeypatch):
    """The business confirms "tomorrow at 7" and the model types the date: the live check reads "tomorrow" as
    Thursday 11 June (the daemon's today), and so does `calld-ctl verify` later, from the report's booking."""
    import attrs

    from calld.stub import scenario as scenarios
    from calld.stub.scenario import BookingScript
    from calld.verify import verify_finished

    base = scenarios.BOOK_SCENARIOS["book_straight"]
    said = "Yes, that's right, tomorrow at 7. You're all booked."
    record = {"confirmed_time": "2026-06-11 19:00", "date_quote": "tomorrow at 7", "date_readback": False}
    states = tuple((name, tuple(attrs.evolve(r, say=said, record=record) for r in replies) if name == "readback" else replies)
                   for name, replies in base.booking.states)
    monkeypatch.setitem(scenarios.BOOK_SCENARIOS, "book_straight", attrs.evolve(base, booking=BookingScript(states)))
    daemon = await started(nursery, tmp_path, NOON)
    async with ControlClient(daemon.settings.calld_socket) as client:
        await client.provision("alice")
        result = await book(client, {**BOOK, "time": "tomorrow 7pm", "request_id": "tomorrow-1"})
        assert (result["status"], result["booking_for"]) == ("booked", "Thu 11 Jun 7pm")
        assert said in result["confirmation_text"]
        [run_dir] = {p.parent for p in tmp_path.rglob("call_report.json")}
    await stop(daemon)
    report = json.loads((run_dir / "call_report.json").read_text())
    assert (report["booking"]["when"], report["booking"]["today"]) == ("2026-06-11T19:00:00-04:00", "2026-06-10")
    checks = {c.name: c for c in verify_finished(run_dir).checks}
    assert checks["evidence_supported"].passed, checks["evidence_supported"].evidence


async def test_a_queued_tomorrow_keeps_the_day_it_meant_when_dialled_after_midnight(tmp_path, nursery, autojump_clock):
    daemon = await started(nursery, tmp_path, LATE)
    async with ControlClient(daemon.settings.calld_socket) as client:
        await client.provision("alice")
        items = [i async for i in client.book({**BOOK, "time": "tomorrow 7pm", "when_open": True, "request_id": "tmrw-1"})]
        assert items[-1]["queued"]["due_at"] == "2026-06-10T12:00:00+00:00"  # Wednesday 08:00 in New York
        with trio.fail_after(24 * 3600):
            while (status := await client.request_status("tmrw-1") if await _placed(client) else {}).get("status") != "done":
                await trio.sleep(60)
        # Read again at 08:00 Wednesday, "tomorrow" would be Thursday: the call books the Wednesday meant.
        assert status["result"]["booking_for"] == "Wed 10 Jun 7pm", status["result"]
    ledger = Ledger(daemon.settings.db_path)
    try:
        assert ledger.request("tmrw-1").booking_at == "2026-06-10T19:00:00-04:00"
        assert ledger.scheduled("tmrw-1").booking_at == "2026-06-10T19:00:00-04:00"
    finally:
        ledger.close()
    await stop(daemon)


async def _placed(client: ControlClient) -> bool:
    return any(r["request_id"] == "tmrw-1" and r["status"] == "dialled" for r in await client.queue(include_done=True))


PARAMS = {"to": NY, "name": "Nathan", "party": 2, "time": "Friday 7pm"}
# A booking as the calld before ledger version 10 (SQLite) / 4 (PostgreSQL) wrote it: no booking_at column.
OLD_ROW = ("INSERT INTO requests (request_id, run_id, user_id, kind, params, status, created_at, updated_at, instance)"
           " VALUES ('before', 'run_aaaaaaaaaaaaaaaaaaaa', 'alice', 'book', ?, 'placing', '2026-06-10T16:00:00+00:00',"
           " '2026-06-10T16:00:00+00:00', '')")


def _v9_sqlite(path) -> object:
    path.parent.mkdir(parents=True)
    con = sqlite3.connect(path)
    for sql in MIGRATIONS[:9]:
        con.executescript(sql)
    con.execute(OLD_ROW, (json.dumps(PARAMS),))
    con.execute("PRAGMA user_version = 9")
    con.commit()
    con.close()
    return path


def _v3_postgres(url: str) -> str:
    from calld.ledger.engine import PostgresEngine

    engine = PostgresEngine(url)
    try:
        engine.migrate(POSTGRES_MIGRATIONS[:3])
        engine.run(lambda tx: tx.execute(OLD_ROW, (json.dumps(PARAMS),)), write=True, idempotent=True)
    finally:
        engine.close()
    return url


@pytest.mark.parametrize("engine", ["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)])
def test_rows_from_before_booking_at_still_read_and_new_ones_keep_it(engine, tmp_path, request):
    target = _v9_sqlite(tmp_path / "state" / "calld.sqlite3") if engine == "sqlite" else _v3_postgres(request.getfixturevalue("pg_empty_url"))
    old = Ledger(target)  # migrated as it opens
    try:
        assert old.schema_version == (len(MIGRATIONS) if engine == "sqlite" else len(POSTGRES_MIGRATIONS))
        old.claim_request("after", user_id="alice", kind="book", params=PARAMS, run_id="run_" + "b" * 20,
                          booking_at="2026-06-12T19:00:00-04:00")
        rows = {r.request_id: history_row(r, tmp_path / "artifacts") for r in old.history()}
        assert (old.request("before").booking_at, rows["before"]["ask"]) == (None, "book 2 at Friday 7pm")
        assert rows["after"]["ask"] == "book 2 at Fri 12 Jun 7pm"
    finally:
        old.close()
