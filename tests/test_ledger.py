"""The ledger on both engines (SQLite, and PostgreSQL marked `postgres`): migrations, DID rows, request claims,\neach race fought by real connections."""

from __future__ import annotations

import contextlib
import json
import os
import sqlite3
import threading
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest
from attrs import frozen

from calld.adapters.fixtures import load_fixture
from calld.adapters.telnyx_http import DialSecrets, TelnyxHttp
from calld.core.plan import DialPlan
from calld.domain.ids import E164, CallControlId, RunId, UserId
from calld.ledger.engine import PostgresEngine, one
from calld.ledger import (
    MIGRATIONS,
    POSTGRES_MIGRATIONS,
    Claim,
    DialView,
    DidRow,
    Finished,
    Fresh,
    InFlight,
    Ledger,
    LedgerError,
    LedgerUnavailable,
    Target,
    RequestConflict,
    UnknownUser,
    canonical_json,
    columns,
    redact,
)

ALICE = UserId("alice")
CCID = CallControlId("v3:ledger-test-call")
PARAMS = {"to": "+15555550123", "ask": "hours", "name": "Sam", "item": None}


@pytest.fixture
def db(tmp_path: Path) -> Path:
    return tmp_path / "state" / "calld.sqlite3"


@pytest.fixture
def sqlite_ledger(db: Path) -> Iterator[Ledger]:
    led = Ledger(db)
    yield led
    led.close()


@pytest.fixture
def target(ledger_target: Target) -> Target:
    """The ledger's place: a SQLite file, then a PostgreSQL database (tests/pg.py)."""
    return ledger_target


@pytest.fixture
def ledger(target: Target) -> Iterator[Ledger]:
    led = Ledger(target)
    yield led
    led.close()


def race[T](target: Target, n: int, work: Callable[[Ledger, int], T]) -> list[T]:
    """Run `work` in n threads at once, each on its own connection to the same ledger."""
    Ledger(target).close()  # the schema exists before the race starts
    barrier = threading.Barrier(n)
    results: list[Any] = [None] * n
    errors: list[BaseException] = []

    def run(i: int) -> None:
        led = Ledger(target)
        try:
            barrier.wait()
            results[i] = work(led, i)
        except Exception as exc:  # noqa: BLE001 - re-raised below, in the test's thread
            errors.append(exc)
        finally:
            led.close()

    threads = [threading.Thread(target=run, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        raise errors[0]
    return results


def table_counts(target: Target) -> dict[str, int]:
    led = Ledger(target)
    try:
        counts = led.table_counts()
    finally:
        led.close()
    return {t: counts[t] for t in ("dids", "requests")}


def stored(led: Ledger, sql: str) -> Any:
    """The first column of the first row `sql` reads, as the engine stored it."""
    row = led._engine.run(lambda tx: one(tx, sql), write=False, idempotent=True)
    return None if row is None else next(iter(row.values()) if isinstance(row, dict) else iter(row))


# -- migrations ------------------------------------------------------------------------------------


def test_a_new_ledger_is_at_the_latest_schema_in_wal_mode(sqlite_ledger: Ledger, db: Path) -> None:
    assert sqlite_ledger.schema_version == len(MIGRATIONS) >= 3
    con = sqlite3.connect(db)
    try:
        assert con.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        tables = {r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    finally:
        con.close()
    assert {"dids", "requests"} <= tables


def test_commits_skip_the_fsync_and_flush_to_disk_syncs_the_log(sqlite_ledger: Ledger, db: Path, monkeypatch) -> None:
    ledger = sqlite_ledger
    """synchronous=NORMAL keeps a commit off the disk's fsync; flush_to_disk is the fsync, of the WAL."""
    assert ledger._db.execute("PRAGMA synchronous").fetchone()[0] == 1  # NORMAL
    synced: list[str] = []
    real_fsync = os.fsync
    monkeypatch.setattr(os, "fsync", lambda fd: (synced.append(os.readlink(f"/proc/self/fd/{fd}")), real_fsync(fd)))
    ledger.reserve_did(UserId("alice"))
    assert synced == []  # the commit itself did not sync
    ledger.flush_to_disk()
    assert synced == [f"{db}-wal"]


def test_reopening_is_idempotent_and_keeps_rows(target: Target) -> None:
    first = Ledger(target)
    first.provision_stub(ALICE)
    first.claim_request("r1", user_id=ALICE, kind="ask", params=PARAMS, run_id=RunId.new())
    first.close()
    for _ in range(2):
        again = Ledger(target)
        assert again.schema_version == len(again.migrations)
        assert [r.user_id for r in again.rows()] == [ALICE]
        assert again.request("r1") is not None
        again.close()


def test_a_version_1_database_is_upgraded_in_place(db: Path) -> None:
    db.parent.mkdir(parents=True)
    con = sqlite3.connect(db)
    con.executescript(MIGRATIONS[0])
    con.execute(
        "INSERT INTO dids (user_id, did, status, order_id, customer_reference, created_at, updated_at)"
        " VALUES ('alice', '+15555550150', 'active', 'o-1', 'user:alice', 't', 't')"
    )
    con.execute("PRAGMA user_version = 1")
    con.commit()
    con.close()

    led = Ledger(db)
    try:
        assert led.schema_version == len(MIGRATIONS)
        assert led.did_for(ALICE) == E164("+15555550150")
        assert led.rows() == [DidRow(ALICE, E164("+15555550150"), "active", "o-1", "user:alice", None)]
        # the new tables and columns work on the upgraded file
        assert isinstance(led.claim_request("r", user_id=ALICE, kind="ask", params={}, run_id=RunId.new()), Fresh)
    finally:
        led.close()


def test_a_database_from_a_newer_calld_is_refused(db: Path) -> None:
    Ledger(db).close()
    con = sqlite3.connect(db)
    con.execute(f"PRAGMA user_version = {len(MIGRATIONS) + 1}")
    con.close()
    with pytest.raises(LedgerError, match="newer than this calld knows"):
        Ledger(db)


# -- numbers ---------------------------------------------------------------------------------------


def test_unknown_user_names_the_command_that_fixes_it(ledger: Ledger) -> None:
    with pytest.raises(UnknownUser, match=r"calld-ctl did provision --user bob"):
        ledger.did_for(UserId("bob"))
    ledger.reserve_did(UserId("bob"))  # an order in progress is not a number yet
    with pytest.raises(UnknownUser, match=r"not finished.*calld-ctl did provision --user bob"):
        ledger.did_for(UserId("bob"))


def test_reserve_did_writes_one_ordering_row_and_then_returns_it(ledger: Ledger) -> None:
    row = ledger.reserve_did(ALICE)
    assert row == DidRow(ALICE, None, "ordering", None, "calld:user:alice", None)
    ledger.record_order(ALICE, "order-1")
    again = ledger.reserve_did(ALICE)
    assert again.order_id == "order-1" and again.status == "ordering"
    assert len(ledger.rows()) == 1


def test_reserve_did_refuses_an_invalid_user_id(ledger: Ledger, target: Target) -> None:
    with pytest.raises(ValueError, match="is not a user id"):
        ledger.reserve_did("Bad User!")  # type: ignore[arg-type]
    assert table_counts(target)["dids"] == 0


def test_concurrent_reservations_share_one_row(target: Target) -> None:
    rows = race(target, 8, lambda led, _i: led.reserve_did(ALICE))
    assert len(set(rows)) == 1 and rows[0].status == "ordering"
    assert table_counts(target)["dids"] == 1


def test_only_one_holder_may_place_the_order_until_its_lease_runs_out(target: Target) -> None:
    now = [1000.0]
    led = Ledger(target, clock=lambda: now[0])
    try:
        led.reserve_did(ALICE)
        assert led.claim_order(ALICE, "a", lease_s=60)
        assert not led.claim_order(ALICE, "b", lease_s=60)
        assert led.claim_order(ALICE, "a", lease_s=60)  # the holder may renew
        now[0] += 61
        assert led.claim_order(ALICE, "b", lease_s=60)  # a crashed holder does not wedge the user
        led.release_order(ALICE, "a")  # not a's to release any more
        assert not led.claim_order(ALICE, "a", lease_s=60)
        led.release_order(ALICE, "b")
        assert led.claim_order(ALICE, "a", lease_s=60)
        led.record_order(ALICE, "order-1")
        assert not led.claim_order(ALICE, "c", lease_s=60)  # an order exists: follow it, never order again
    finally:
        led.close()


def test_concurrent_claims_have_exactly_one_winner(target: Target) -> None:
    def work(led: Ledger, i: int) -> bool:
        led.reserve_did(ALICE)
        return led.claim_order(ALICE, f"holder-{i}", lease_s=60)

    assert sorted(race(target, 8, work)) == [False] * 7 + [True]


def test_did_lifecycle_order_activate_fail_retry(ledger: Ledger) -> None:
    bob = UserId("bob")
    ledger.reserve_did(bob)
    ledger.record_order(bob, "o-1")
    failed = ledger.fail_did(bob, "Telnyx number order o-1 ended 'failure'")
    assert (failed.status, failed.order_id, failed.failure) == (
        "failed",
        "o-1",
        "Telnyx number order o-1 ended 'failure'",
    )
    with pytest.raises(UnknownUser, match="last order failed: Telnyx number order o-1"):
        ledger.did_for(bob)
    retried = ledger.retry_did(bob)
    assert (retried.status, retried.order_id, retried.failure) == ("ordering", None, None)
    ledger.record_order(bob, "o-2")
    active = ledger.activate_did(bob, E164("+15555550160"))
    assert (active.status, active.did, active.order_id) == ("active", "+15555550160", "o-2")
    assert ledger.did_for(bob) == "+15555550160"
    assert ledger.activate_did(bob, E164("+15555550160")) == active  # idempotent
    assert ledger.retry_did(bob) == active  # only a failed row is retried
    with pytest.raises(LedgerError, match="already has"):
        ledger.fail_did(bob, "late")
    with pytest.raises(LedgerError, match="already has"):
        ledger.activate_did(bob, E164("+15555550161"))


def test_a_second_order_id_is_refused(ledger: Ledger) -> None:
    ledger.reserve_did(ALICE)
    ledger.record_order(ALICE, "o-1")
    assert ledger.record_order(ALICE, "o-1").order_id == "o-1"
    with pytest.raises(LedgerError, match="o-2"):
        ledger.record_order(ALICE, "o-2")


def test_one_number_cannot_belong_to_two_users(ledger: Ledger) -> None:
    ledger.reserve_did(ALICE)
    ledger.activate_did(ALICE, E164("+15555550170"))
    ledger.reserve_did(UserId("bob"))
    with pytest.raises(LedgerError, match="already belongs to user 'alice'"):
        ledger.activate_did(UserId("bob"), E164("+15555550170"))
    assert ledger.did_row(UserId("bob")) == DidRow(UserId("bob"), None, "ordering", None, "calld:user:bob", None)


def test_provision_stub_is_once_per_user_and_fills_an_ordering_row(ledger: Ledger) -> None:
    first = ledger.provision_stub(ALICE)
    assert ledger.provision_stub(ALICE) == first
    ledger.reserve_did(UserId("bob"))
    bob = ledger.provision_stub(UserId("bob"))
    assert bob != first and ledger.did_for(UserId("bob")) == bob
    assert [r.status for r in ledger.rows()] == ["active", "active"]


# -- requests --------------------------------------------------------------------------------------


def claim(led: Ledger, request_id: str = "req-1", params: dict[str, Any] | None = None, **kw: Any) -> Claim:
    args: dict[str, Any] = {"user_id": ALICE, "kind": "ask", "params": PARAMS if params is None else params}
    args.update(kw)
    return led.claim_request(request_id, run_id=RunId.new(), **args)


def test_a_request_is_claimed_once_then_attached_then_answered_from_the_ledger(ledger: Ledger) -> None:
    fresh = claim(ledger)
    assert isinstance(fresh, Fresh)
    assert claim(ledger) == InFlight(fresh.run_id, None)
    row = ledger.mark_dialled("req-1", CCID)
    assert (row.status, row.call_control_id) == ("in_flight", CCID)
    assert claim(ledger) == InFlight(fresh.run_id, CCID)
    result = {"status": "answered", "answer_text": "9 to 5", "run_id": str(fresh.run_id)}
    ledger.finish_request("req-1", result)
    assert claim(ledger) == Finished(result, fresh.run_id)
    # a late second finish does not overwrite what the user was told
    assert ledger.finish_request("req-1", {"status": "failed"}).result == result
    stored = ledger.request("req-1")
    assert stored is not None and (stored.status, stored.params, stored.kind) == ("done", PARAMS, "ask")


def test_params_are_compared_in_canonical_form(ledger: Ledger, target: Target) -> None:
    fresh = claim(ledger, params={"b": 1, "a": [1, 2]})
    assert claim(ledger, params={"a": [1, 2], "b": 1}) == InFlight(fresh.run_id, None)
    assert stored(ledger, "SELECT params FROM requests") == '{"a":[1,2],"b":1}'
    assert canonical_json({"b": 1, "a": "é"}) == '{"a":"é","b":1}'


@pytest.mark.parametrize(
    ("change", "differs"),
    [
        ({"params": {**PARAMS, "to": "+15555550199"}}, "parameters"),
        ({"kind": "book"}, "kind"),
        ({"user_id": UserId("bob")}, "user"),
    ],
)
def test_a_request_id_reused_for_another_request_is_refused_and_writes_nothing(
    ledger: Ledger, target: Target, change: dict[str, Any], differs: str
) -> None:
    claim(ledger)
    before = ledger.request("req-1")
    with pytest.raises(RequestConflict) as refused:
        claim(ledger, **change)
    message = str(refused.value)
    assert "'req-1' was already used for a different request" in message
    assert "pick a new --request-id" in message and differs in message
    assert ledger.request("req-1") == before
    assert table_counts(target) == {"dids": 0, "requests": 1}


def test_concurrent_claims_of_one_request_id_give_exactly_one_fresh(target: Target) -> None:
    claims = race(target, 8, lambda led, _i: claim(led, "req-race"))
    fresh = [c for c in claims if isinstance(c, Fresh)]
    assert len(fresh) == 1
    assert all(c == InFlight(fresh[0].run_id, None) for c in claims if not isinstance(c, Fresh))
    assert table_counts(target)["requests"] == 1


def test_bad_claims_are_refused_before_writing(ledger: Ledger, target: Target) -> None:
    with pytest.raises(ValueError, match="kind"):
        claim(ledger, kind="sing")
    with pytest.raises(ValueError, match="empty"):
        claim(ledger, "")
    with pytest.raises(TypeError):
        claim(ledger, params={"when": object()})
    assert table_counts(target)["requests"] == 0


def test_mark_dialled_will_not_swap_the_call(ledger: Ledger) -> None:
    claim(ledger)
    ledger.mark_dialled("req-1", CCID)
    assert ledger.mark_dialled("req-1", CCID).call_control_id == CCID
    with pytest.raises(LedgerError, match="not attaching"):
        ledger.mark_dialled("req-1", CallControlId("v3:another"))


def test_requests_lists_newest_first_and_filters_by_status(ledger: Ledger) -> None:
    for i in range(3):
        claim(ledger, f"req-{i}")
    ledger.finish_request("req-1", {"status": "no_answer"})
    assert [r.request_id for r in ledger.requests()] == ["req-2", "req-1", "req-0"]
    assert [r.request_id for r in ledger.requests(limit=1)] == ["req-2"]
    assert [r.request_id for r in ledger.requests(status="placing")] == ["req-2", "req-0"]
    assert [r.request_id for r in ledger.requests(status="done")] == ["req-1"]


# -- a repeated request dials once, counted at the transport ----------------------------------------


async def test_a_repeated_request_id_dials_once(ledger: Ledger) -> None:
    dials: list[dict[str, Any]] = []

    def handler(request: httpx.Request) -> httpx.Response:
        assert request.url.path == "/v2/calls"
        dials.append(json.loads(request.content))
        return httpx.Response(200, json=load_fixture("telnyx", "dial_response"))

    async def ask(request_id: str) -> Claim:
        got = ledger.claim_request(request_id, user_id=ALICE, kind="ask", params=PARAMS, run_id=RunId.new())
        if isinstance(got, Fresh):
            plan = DialPlan(E164(PARAMS["to"]), E164("+15555550100"), got.run_id, command_id=f"dial-{got.run_id}")
            dialled = await telnyx.dial(plan, DialSecrets("wss://h/m/tok", "secret", None))
            ledger.mark_dialled(request_id, dialled.call_control_id)
            ledger.finish_request(request_id, {"status": "answered", "answer_text": "9 to 5"})
        return got

    async with httpx.AsyncClient(transport=httpx.MockTransport(handler), base_url="https://api.telnyx.com") as c:
        telnyx = TelnyxHttp(c, "conn")
        first, second = await ask("same"), await ask("same")
    assert isinstance(first, Fresh)
    assert second == Finished({"status": "answered", "answer_text": "9 to 5"}, first.run_id)
    assert len(dials) == 1


# -- the schema: both engines end with the same tables and columns ----------------------------------


@pytest.mark.postgres
def test_both_engines_end_with_the_same_tables_and_columns(db: Path, pg_url: str) -> None:
    lite, pg = Ledger(db), Ledger(pg_url)
    try:
        assert columns(lite) == columns(pg)
        assert columns(pg)["requests"] >= {"instance"} and columns(pg)["publications"] >= {"owner"}
        assert columns(pg)["daemons"] == {"instance", "lease_until", "started_at", "holder"}
        assert (lite.schema_version, pg.schema_version) == (len(MIGRATIONS), len(POSTGRES_MIGRATIONS))
    finally:
        lite.close()
        pg.close()


def test_a_version_7_sqlite_ledger_gains_claims_and_keeps_its_schedule(db: Path) -> None:
    db.parent.mkdir(parents=True)
    con = sqlite3.connect(db)
    for sql in MIGRATIONS[:7]:
        con.executescript(sql)
    con.execute("INSERT INTO schedule VALUES ('q-1', 'alice', 'ask', '{}', '2026-01-01T09:00:00+00:00', 'at',"
                " 'queued', NULL, 't', 't')")
    con.execute("PRAGMA user_version = 7")
    con.commit()
    con.close()
    led = Ledger(db)
    try:
        assert led.schema_version == len(MIGRATIONS)
        assert [r.request_id for r in led.schedule_rows()] == ["q-1"]
        claimed = led.claim_due(datetime(2026, 1, 1, 10, tzinfo=UTC), instance="d1")
        assert [(r.request_id, r.status, r.claimed_by) for r in claimed] == [("q-1", "claimed", "d1")]
    finally:
        led.close()


# -- admit_dial: the claim and the gate's check in one transaction ----------------------------------

NUMBER = "+15555550123"
NOW = datetime(2026, 3, 2, 15, 0, tzinfo=UTC)


@frozen
class Refused:
    why: str


def limit_to(n: int) -> Callable[[DialView], Refused | None]:
    """At most n dials to NUMBER in a day, none to an opted-out number: the gate's rules, in miniature."""

    def check(view: DialView) -> Refused | None:
        if view.opt_out(NUMBER) is not None:
            return Refused("opted out")
        if view.dials_to(NUMBER, since=NOW - timedelta(days=1), until=NOW) >= n:
            return Refused("limit")
        return None

    return check


def admit(led: Ledger, request_id: str, check: Callable[[DialView], Any], **kw: Any) -> Any:
    args: dict[str, Any] = {"user_id": ALICE, "kind": "ask", "params": PARAMS, "run_id": RunId.new(), "number": NUMBER,
                            "at": NOW, "check": check}
    args.update(kw)
    return led.admit_dial(request_id, **args)


def test_admit_dial_writes_the_request_and_its_dial_or_nothing(ledger: Ledger, target: Target) -> None:
    first = admit(ledger, "r-1", limit_to(1), instance="d1")
    assert isinstance(first, Fresh)
    row = ledger.request("r-1")
    assert row is not None and (row.status, row.instance) == ("placing", "d1")
    assert ledger.dials_to(NUMBER, since=NOW - timedelta(days=1), until=NOW) == 1
    # a repeat of the same request is answered as claim_request answers it, without a check
    assert admit(ledger, "r-1", lambda _v: pytest.fail("checked a repeat")) == InFlight(first.run_id, None)
    # a new request over the limit: refused, and nothing written
    assert admit(ledger, "r-2", limit_to(1)) == Refused("limit")
    assert ledger.request("r-2") is None
    assert table_counts(target)["requests"] == 1
    assert ledger.dials_to(NUMBER, since=NOW - timedelta(days=1), until=NOW) == 1
    with pytest.raises(RequestConflict):
        admit(ledger, "r-1", limit_to(5), kind="book")


def test_admit_dial_reads_the_opt_out_in_its_transaction(ledger: Ledger) -> None:
    ledger.add_opt_out(NUMBER, said_at=NOW, quote="stop calling", user_id="alice", run_id="run-x")
    seen: list[Any] = []

    def check(view: DialView) -> Refused | None:
        seen.append((view.opt_out(NUMBER), view.rows(), view.dials_by(ALICE, since=NOW - timedelta(hours=1), until=NOW),
                     view.calls_on_line_to(NUMBER, since=NOW - timedelta(hours=1))))
        return limit_to(5)(view)

    assert admit(ledger, "r-1", check) == Refused("opted out")
    assert seen[0][0].quote == "stop calling" and seen[0][2:] == (0, 0)
    assert ledger.request("r-1") is None


@pytest.mark.postgres
def test_two_daemons_admitting_one_number_with_a_limit_of_one_dial_once(pg_url: str) -> None:
    # Each check waits (up to a second) for the other to have read the count too: without the locks
    # both read 0 and both dial; with them the second cannot read until the first has committed.
    both_read = threading.Barrier(2, timeout=1.0)

    def check(view: DialView) -> Refused | None:
        verdict = limit_to(1)(view)
        with contextlib.suppress(threading.BrokenBarrierError):
            both_read.wait()
        return verdict

    results = race(pg_url, 2, lambda led, i: admit(led, f"r-{i}", check, instance=f"d{i}"))
    assert sorted(type(r).__name__ for r in results) == ["Fresh", "Refused"]
    assert table_counts(pg_url)["requests"] == 1


def test_many_admitting_at_once_never_pass_the_limit(target: Target) -> None:
    results = race(target, 6, lambda led, i: admit(led, f"r-{i}", limit_to(2)))
    assert sum(isinstance(r, Fresh) for r in results) == 2
    assert table_counts(target)["requests"] == 2


# -- daemons: instances, leases, orphans, take-over --------------------------------------------------


def test_orphans_are_a_daemons_own_and_those_whose_lease_ran_out(ledger: Ledger) -> None:
    for rid, owner in (("a", "d1"), ("b", "d2"), ("c", "d3"), ("done", "d2")):
        claim(ledger, rid, instance=owner)
    ledger.finish_request("done", {"status": "answered"})
    ledger.renew_lease("d1", 1000.0)
    ledger.renew_lease("d2", 1000.0)
    ledger.renew_lease("d2", 2000.0)  # renewing moves the lease on
    assert [(d.instance, d.lease_until) for d in ledger.daemons()] == [("d1", 1000.0), ("d2", 2000.0)]
    # d1 restarting finds its own; d3 never took a lease, so its call is anyone's
    assert [r.request_id for r in ledger.orphans("d1", now=500.0)] == ["a", "c"]
    # past d1's lease, d2 finds d1's call too, never its own finished one
    assert [r.request_id for r in ledger.orphans("d2", now=1500.0)] == ["a", "b", "c"]
    assert ledger.request("b").instance == "d2"  # type: ignore[union-attr]


def test_take_over_is_true_for_exactly_one_taker(target: Target) -> None:
    led = Ledger(target)
    try:
        claim(led, "a", instance="d1")
    finally:
        led.close()
    taken = race(target, 4, lambda led, i: led.take_over("a", from_instance="d1", to_instance=f"t{i}", now=0.0))
    assert sorted(taken) == [False, False, False, True]
    led = Ledger(target)
    try:
        row = led.request("a")
        assert row is not None and row.instance == f"t{taken.index(True)}"
        led.finish_request("a", {"status": "failed"})
        assert not led.take_over("a", from_instance=row.instance, to_instance="late", now=0.0)  # finished: nothing to take
    finally:
        led.close()


def test_a_daemon_whose_lease_still_runs_keeps_its_calls(ledger: Ledger) -> None:
    claim(ledger, "a", instance="d1")
    ledger.renew_lease("d1", 1000.0)
    assert not ledger.take_over("a", from_instance="d1", to_instance="d2", now=999.0)  # d1 is alive: not d2's to settle
    assert ledger.take_over("a", from_instance="d1", to_instance="d1", now=999.0)  # d1 restarted: its own
    assert ledger.take_over("a", from_instance="d1", to_instance="d2", now=1001.0)  # its lease ran out: d2's
    assert not ledger.take_over("a", from_instance="d1", to_instance="d1", now=1001.0)  # d1 came back too late


def test_an_instance_is_held_by_one_daemon_until_its_lease_runs_out(ledger: Ledger) -> None:
    a, b = "host-a:/var/lib/calld-2", "host-b:/var/lib/calld-2"
    assert ledger.renew_lease("2", 1000.0, holder=a, now=970.0).holder == a
    assert ledger.renew_lease("2", 1030.0, holder=a, now=1000.0).lease_until == 1030.0  # its own, renewed (a restart too)
    refused = ledger.renew_lease("2", 1040.0, holder=b, now=1010.0)  # a second daemon given CALLD_INSTANCE=2
    assert (refused.holder, refused.lease_until) == (a, 1030.0)  # changes nothing: a still holds it
    taken = ledger.renew_lease("2", 1061.0, holder=b, now=1031.0)  # a's lease ran out: a replacement may hold it
    assert (taken.holder, taken.lease_until) == (b, 1061.0)
    assert ledger.renew_lease("2", 1070.0, holder=a, now=1040.0).holder == b  # a, back too late, holds nothing
    # A lease written before holders (ledger version 8, holder '') is anyone's to renew.
    ledger.renew_lease("3", 1000.0)
    assert ledger.renew_lease("3", 1010.0, holder=a, now=900.0).holder == a


# -- the schedule: due rows claimed once ---------------------------------------------------------------


def queue(led: Ledger, rid: str, due: datetime) -> None:
    led.queue_request(rid, user_id=ALICE, kind="ask", params=PARAMS, due_at=due, mode="at")


def test_due_rows_are_claimed_once_released_and_reclaimed_after_their_claim_runs_out(target: Target) -> None:
    wall = [1000.0]
    led = Ledger(target, clock=lambda: wall[0])
    try:
        queue(led, "q-1", NOW - timedelta(minutes=1))
        queue(led, "q-2", NOW + timedelta(hours=1))
        first = led.claim_due(NOW, instance="d1", claim_s=60)
        assert [(r.request_id, r.claimed_by, r.claimed_until) for r in first] == [("q-1", "d1", 1060.0)]
        assert led.claim_due(NOW, instance="d2") == []  # claimed, and q-2 is not due
        assert led.release_due("q-1", due_at=NOW + timedelta(minutes=5))
        assert not led.release_due("q-1")  # only a claimed row goes back
        assert led.scheduled("q-1").status == "queued"  # type: ignore[union-attr]
        assert [r.request_id for r in led.claim_due(NOW + timedelta(minutes=5), instance="d2")] == ["q-1"]
        wall[0] += 400  # d2 died holding it: the claim runs out
        assert [r.claimed_by for r in led.claim_due(NOW + timedelta(minutes=5), instance="d1")] == ["d1"]
        assert led.set_schedule("q-1", status="dialled", only_from="claimed")
        assert led.claim_due(NOW + timedelta(days=1), instance="d1")[0].request_id == "q-2"
    finally:
        led.close()


def test_two_daemons_polling_at_once_each_get_other_rows(target: Target) -> None:
    led = Ledger(target)
    try:
        for i in range(6):
            queue(led, f"q-{i}", NOW - timedelta(minutes=i))
    finally:
        led.close()
    got = race(target, 2, lambda led, i: [r.request_id for r in led.claim_due(NOW, instance=f"d{i}", limit=6)])
    assert sorted(got[0] + got[1]) == [f"q-{i}" for i in range(6)]


# -- publications belong to the daemon that wrote the artifacts -------------------------------------


def test_unpublished_lists_only_the_owners_runs(ledger: Ledger) -> None:
    for i, owner in enumerate(("d1", "d2", "d1")):
        ledger.enqueue_publication(RunId.new(), None, ALICE, f"run-{i}", owner=owner)
    assert [p.run_dir for p in ledger.unpublished(owner="d1")] == ["run-0", "run-2"]
    assert [p.run_dir for p in ledger.unpublished(owner="d2")] == ["run-1"]
    assert [p.run_dir for p in ledger.unpublished()] == ["run-0", "run-1", "run-2"]
    assert ledger.unpublished(owner="d3") == []


# -- PostgreSQL: a server that goes away -------------------------------------------------------------


def test_a_bad_ledger_url_is_refused_with_the_password_redacted(monkeypatch) -> None:
    from calld.settings import SettingsError, load_settings

    monkeypatch.setenv("CALLD_LEDGER_URL", "mysql://calld:hunter2@db/calld")
    with pytest.raises(SettingsError) as refused:
        load_settings(_env_file=None)
    assert "CALLD_LEDGER_URL" in str(refused.value) and "not a PostgreSQL URL" in str(refused.value)
    assert "hunter2" not in str(refused.value) and "calld:***@db" in str(refused.value)
    monkeypatch.setenv("CALLD_LEDGER_URL", "postgresql://calld:hunter2@db:5432/calld")
    settings = load_settings(_env_file=None)
    assert settings.ledger_target == "postgresql://calld:hunter2@db:5432/calld"
    assert "hunter2" in settings.secrets() and "hunter2" not in repr(settings)
    assert redact("postgresql://u:p@h/d?password=q&host=/s") == "postgresql://u:***@h/d?password=***&host=/s"


@pytest.mark.postgres
def test_an_unreachable_server_is_named_without_its_password(tmp_path: Path) -> None:
    url = f"postgresql://calld:hunter2@/calld?host={tmp_path}&connect_timeout=1"
    with pytest.raises(LedgerUnavailable) as refused:
        PostgresEngine(url, connect_timeout_s=1)
    message = str(refused.value)
    assert "hunter2" not in message and "calld:***@" in message
    assert "Check that the server is running" in message


@pytest.mark.postgres
def test_a_restarted_server_costs_a_retry_not_the_write(pg_server: Any, pg_url: str) -> None:
    if pg_server.cluster is None:
        pytest.skip("the server is CALLD_TEST_PG_URL's, which this test does not restart")
    led = Ledger(pg_url)
    try:
        claim(led, "before")
        pg_server.cluster.restart()  # every pooled connection is now dead
        assert isinstance(claim(led, "after"), Fresh)
        assert led.request("before") is not None and led.request("after") is not None
    finally:
        led.close()


def test_history_filters_by_the_calls_status_and_user_on_both_engines(ledger: Ledger) -> None:
    for rid, user in (("h-0", ALICE), ("h-1", ALICE), ("h-2", UserId("bob"))):
        claim(ledger, rid, user_id=user)
    ledger.finish_request("h-0", {"status": "answered"})
    ledger.finish_request("h-2", {"status": "answered"})
    assert [r.request_id for r in ledger.history(status="answered")] == ["h-2", "h-0"]
    assert [r.request_id for r in ledger.history(status="placing")] == ["h-1"]
    assert [r.request_id for r in ledger.history(user=ALICE, status="answered")] == ["h-0"]
    assert [r.request_id for r in ledger.history(limit=1)] == ["h-2"]
