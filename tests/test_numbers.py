"""provision_did against the stateful numbers stub: one order per user, whatever is interrupted."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import httpx
import pytest
import trio

from calld.adapters.telnyx_http import TelnyxError, TelnyxHttp, open_client
from calld.domain.ids import E164, UserId
from calld.ledger import DidRow, Ledger, UnknownUser
from calld.numbers import OrderFailed, OrderPending, provision_did
from calld.stub.telnyx_numbers import StubNumbers

ALICE = UserId("alice")
REF = "calld:user:alice"
CONN = "cc-app-1"


@pytest.fixture
def db(tmp_path: Path) -> Path:
    return tmp_path / "calld.sqlite3"


@pytest.fixture
def ledger(db: Path) -> Iterator[Ledger]:
    led = Ledger(db)
    yield led
    led.close()


@pytest.fixture
def stub() -> StubNumbers:
    return StubNumbers(pending_gets=2)


@pytest.fixture
async def telnyx(stub: StubNumbers) -> AsyncIterator[TelnyxHttp]:
    async with open_client("KEY", transport=stub.transport()) as client:
        yield TelnyxHttp(client, CONN)


async def provision(ledger: Ledger, telnyx: TelnyxHttp, user: UserId = ALICE, **kw: float) -> DidRow:
    kw.setdefault("poll_interval_s", 1.0)
    return await provision_did(ledger, telnyx, user, connection_id=CONN, **kw)


def only_order(stub: StubNumbers) -> dict:
    [order] = stub.orders.values()
    return order


async def test_provision_searches_orders_on_the_connection_and_activates(
    ledger: Ledger, telnyx: TelnyxHttp, stub: StubNumbers, autojump_clock
) -> None:
    row = await provision(ledger, telnyx)
    order = only_order(stub)
    assert row == DidRow(ALICE, E164("+15555550110"), "active", order["id"], REF, None)
    assert ledger.did_for(ALICE) == "+15555550110"
    [search] = [r for r in stub.seen if r.endpoint == "available_numbers"]
    assert search.params["filter[country_code]"] == "US"
    assert search.params["filter[phone_number_type]"] == "local"
    assert search.params["filter[features]"] == "voice"
    [create] = [r for r in stub.seen if r.endpoint == "create_order"]
    assert create.body == {
        "phone_numbers": [{"phone_number": "+15555550110"}],
        "connection_id": CONN,
        "customer_reference": REF,
    }
    # it looked for an earlier order before buying, and polled the order until it succeeded
    assert [r.endpoint for r in stub.seen] == [
        "list_orders",
        "list_phone_numbers",
        "available_numbers",
        "create_order",
        "get_order",
        "get_order",
        "get_order",
    ]
    assert trio.current_time() == pytest.approx(2.0)
    assert stub.owned["+15555550110"]["connection_id"] == CONN


async def test_an_active_row_is_returned_without_asking_telnyx(
    ledger: Ledger, telnyx: TelnyxHttp, stub: StubNumbers, autojump_clock
) -> None:
    first = await provision(ledger, telnyx)
    stub.counts.clear()
    assert await provision(ledger, telnyx) == first
    assert not stub.counts


async def test_two_concurrent_provisions_make_one_order_and_one_row(
    db: Path, telnyx: TelnyxHttp, stub: StubNumbers, autojump_clock
) -> None:
    stub.latency_s = 0.05  # every request takes a while, so the two tasks interleave at each step
    ledgers = [Ledger(db), Ledger(db)]  # two connections to one file
    rows: list[DidRow] = []
    try:
        async with trio.open_nursery() as nursery:
            for led in ledgers:
                nursery.start_soon(lambda led=led: _append(rows, provision(led, telnyx, poll_interval_s=0.2)))
        assert len(stub.orders) == 1 and stub.counts["create_order"] == 1
        assert stub.counts["available_numbers"] == 1
        assert rows[0] == rows[1] and rows[0].status == "active"
        assert ledgers[0].rows() == [rows[0]]
    finally:
        for led in ledgers:
            led.close()


async def _append(rows: list[DidRow], work) -> None:  # type: ignore[no-untyped-def]
    rows.append(await work)


async def test_a_provision_interrupted_after_ordering_resumes_that_order(
    db: Path, telnyx: TelnyxHttp, stub: StubNumbers, autojump_clock
) -> None:
    stub.pending_gets = 1000
    first = Ledger(db)
    with trio.move_on_after(3) as cut:  # the daemon dies while the order is pending
        await provision(first, telnyx, poll_timeout_s=600)
    assert cut.cancelled_caught
    first.close()
    order = only_order(stub)
    stub.pending_gets = 0
    stub.counts.clear()

    again = Ledger(db)  # a restart
    try:
        assert again.did_row(ALICE) == DidRow(ALICE, None, "ordering", order["id"], REF, None)
        row = await provision(again, telnyx)
        assert row.status == "active" and row.order_id == order["id"]
        assert row.did == order["phone_numbers"][0]["phone_number"]
    finally:
        again.close()
    assert len(stub.orders) == 1
    assert stub.counts == {"get_order": 1}  # straight to its order: no lookup, no search, no second order


async def test_a_provision_interrupted_before_saving_the_order_id_finds_it_by_reference(
    ledger: Ledger, telnyx: TelnyxHttp, stub: StubNumbers, autojump_clock
) -> None:
    stub.interrupt("create_order", after=True)  # Telnyx placed it; the answer never arrived
    with pytest.raises(TelnyxError, match="not resent"):
        await provision(ledger, telnyx)
    order = only_order(stub)
    assert ledger.did_row(ALICE) == DidRow(ALICE, None, "ordering", None, REF, None)

    row = await provision(ledger, telnyx)
    assert row.order_id == order["id"] and row.status == "active"
    assert len(stub.orders) == 1 and stub.counts["create_order"] == 1
    lookup = [r for r in stub.seen if r.endpoint == "list_orders"][-1]
    assert lookup.params["filter[customer_reference]"] == REF


async def test_an_order_that_never_reached_telnyx_is_sent_again(
    ledger: Ledger, telnyx: TelnyxHttp, stub: StubNumbers, autojump_clock
) -> None:
    stub.interrupt("create_order", after=False)
    row = await provision(ledger, telnyx)
    assert row.status == "active"
    assert stub.counts["create_order"] == 2 and len(stub.orders) == 1


async def test_a_5xx_on_the_order_leaves_the_row_free_for_the_next_run(
    ledger: Ledger, telnyx: TelnyxHttp, stub: StubNumbers, autojump_clock
) -> None:
    stub.server_error("create_order")
    with pytest.raises(TelnyxError, match="503"):
        await provision(ledger, telnyx)
    assert stub.counts["create_order"] == 1  # not resent: a 5xx may hide a placed order
    # the claim was given back: the next run orders now instead of waiting out the lease
    row = await provision(ledger, telnyx, poll_timeout_s=10)
    assert row.status == "active" and len(stub.orders) == 1


async def test_a_failed_order_marks_the_row_failed_with_the_reason_and_a_retry_works(
    ledger: Ledger, telnyx: TelnyxHttp, stub: StubNumbers, autojump_clock
) -> None:
    stub.fail_orders()
    with pytest.raises(OrderFailed, match=r"run `calld-ctl did provision --user alice` again") as failed:
        await provision(ledger, telnyx)
    first = only_order(stub)
    row = ledger.did_row(ALICE)
    assert row is not None and failed.value.row == row
    assert (row.status, row.order_id, row.did) == ("failed", first["id"], None)
    assert row.failure == (
        f"Telnyx number order {first['id']} ended 'failure'"
        " (+15555550110: status failure, requirements requirement-info-exception)"
    )
    with pytest.raises(UnknownUser, match="last order failed"):
        ledger.did_for(ALICE)

    stub.fail_orders(False)
    again = await provision(ledger, telnyx)
    assert len(stub.orders) == 2
    second = next(o for o in stub.orders.values() if o["id"] != first["id"])
    assert (again.status, again.order_id, again.failure) == ("active", second["id"], None)
    assert again.did == second["phone_numbers"][0]["phone_number"] != "+15555550110"


async def test_a_definite_refusal_fails_the_row_with_telnyxs_words(
    ledger: Ledger, telnyx: TelnyxHttp, stub: StubNumbers, autojump_clock
) -> None:
    stub.refuse("create_order", 403, "error_403")
    with pytest.raises(OrderFailed, match="forbade ordering"):
        await provision(ledger, telnyx)
    row = ledger.did_row(ALICE)
    assert row is not None and row.status == "failed" and "Authorization failed" in (row.failure or "")
    assert not stub.orders


async def test_a_pending_order_past_the_wait_says_run_again_and_orders_nothing_more(
    ledger: Ledger, telnyx: TelnyxHttp, stub: StubNumbers, autojump_clock
) -> None:
    stub.pending_gets = 1000
    with pytest.raises(OrderPending, match="still pending after 5 s; nothing more was ordered") as pending:
        await provision(ledger, telnyx, poll_timeout_s=5)
    assert trio.current_time() == pytest.approx(5.0)
    order = only_order(stub)
    assert pending.value.row.order_id == order["id"]
    with pytest.raises(OrderPending):
        await provision(ledger, telnyx, poll_timeout_s=5)
    assert len(stub.orders) == 1 and stub.counts["create_order"] == 1


async def test_a_rate_limited_search_is_retried_after_retry_after(
    ledger: Ledger, telnyx: TelnyxHttp, stub: StubNumbers, autojump_clock
) -> None:
    stub.rate_limit("available_numbers", retry_after=4)
    row = await provision(ledger, telnyx)
    assert row.status == "active" and stub.counts["available_numbers"] == 2
    assert trio.current_time() >= 4


async def test_a_number_the_account_already_owns_for_the_user_is_adopted(
    ledger: Ledger, telnyx: TelnyxHttp, stub: StubNumbers, autojump_clock
) -> None:
    stub.owned["+15555550177"] = {
        "id": "1",
        "phone_number": "+15555550177",
        "status": "active",
        "connection_id": CONN,
        "customer_reference": REF,
    }
    row = await provision(ledger, telnyx)
    assert (row.status, row.did) == ("active", "+15555550177")
    assert not stub.orders and "available_numbers" not in stub.counts


async def test_each_user_gets_their_own_number(
    ledger: Ledger, telnyx: TelnyxHttp, stub: StubNumbers, autojump_clock
) -> None:
    a = await provision(ledger, telnyx, ALICE)
    b = await provision(ledger, telnyx, UserId("bob"))
    assert a.did != b.did and len(stub.orders) == 2
    assert {o["customer_reference"] for o in stub.orders.values()} == {REF, "calld:user:bob"}


async def test_bad_input_is_refused_before_anything_happens(
    ledger: Ledger, telnyx: TelnyxHttp, stub: StubNumbers
) -> None:
    with pytest.raises(ValueError, match="is not a user id"):
        await provision(ledger, telnyx, "Not A User")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="TELNYX_CONNECTION_ID"):
        await provision_did(ledger, telnyx, ALICE, connection_id="")
    assert ledger.rows() == [] and not stub.counts


async def test_no_numbers_on_offer_fails_the_row(ledger: Ledger, stub: StubNumbers, autojump_clock) -> None:
    stub._pool.clear()
    async with open_client("KEY", transport=httpx.MockTransport(stub)) as client:
        with pytest.raises(OrderFailed, match="offered no US local numbers with voice"):
            await provision(ledger, TelnyxHttp(client, CONN))


async def test_a_claim_left_by_a_crashed_provision_is_waited_for_then_taken_over(
    db: Path, telnyx: TelnyxHttp, stub: StubNumbers, autojump_clock
) -> None:
    wall = [5000.0]
    led = Ledger(db, clock=lambda: wall[0])
    try:
        led.reserve_did(ALICE)
        assert led.claim_order(ALICE, "crashed-daemon", lease_s=300)  # then it died, holding the claim
        with pytest.raises(OrderPending, match="another provision is still placing the order for user 'alice'"):
            await provision(led, telnyx, poll_timeout_s=5)
        assert not stub.counts  # it waited; it did not order behind the holder's back
        wall[0] += 301  # the lease ran out
        row = await provision(led, telnyx)
        assert row.status == "active" and len(stub.orders) == 1
        assert stub.counts["list_orders"] == 1  # the takeover looked for the dead holder's order first
    finally:
        led.close()
