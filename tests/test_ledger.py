"""The ledger on both engines (SQLite, and PostgreSQL marked `postgres`): migrations, DID rows, request claims,\neach race fought by real connections."""

from __future__ import annotations

import json
import os
import sqlite3
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from calld.adapters.fixtures import load_fixture
from calld.adapters.telnyx_http import DialSecrets, TelnyxHttp
from calld.core.plan import DialPlan
from calld.domain.ids import E164, CallControlId, RunId, UserId
from calld.ledger.engine import one
from calld.ledger import (
    MIGRATIONS,
    Claim,
    DidRow,
    Finished,
    Fresh,
    InFlight,
    Ledger,
    LedgerError,
    Target,
    RequestConflict,
    UnknownUser,
    canonical_json,
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
