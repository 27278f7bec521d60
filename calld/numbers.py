"""Give a user one Telnyx number, once: `provision_did`.

The user's ledger row is the lock and the memory. It is written before anything is
bought; the Telnyx order id is saved the moment Telnyx names it; each step after a crash
starts from what the row says:

- active: done, return it;
- ordering, with an order id: follow that order (never order again);
- ordering, without one: the last run may have ordered and died before saving the id,
  so look the order up by its customer_reference before ordering anything;
- failed: clear it (retry_did) and start over.

Only the holder of the row's order claim (a lease, see Ledger.claim_order) may search and
order; a concurrent provision for the same user waits for the order id to appear and
follows the same order. Ledger calls are synchronous and short.
"""

from __future__ import annotations

import logging
import secrets

import trio

from calld.adapters.telnyx_http import NumberOrder, TelnyxError, TelnyxHttp
from calld.domain.ids import UserId
from calld.ledger import DidRow, Ledger
from calld.ledger.awaitable import AsyncLedger, awaitable

log = logging.getLogger("calld.numbers")

ORDER_LEASE_S = 300.0  # longer than any search + order can take; a crashed holder's claim expires
_FINISHED_BADLY = frozenset({"failure", "cancelled", "deleted"})
_SEARCH_LIMIT = 5


class ProvisionError(RuntimeError):
    def __init__(self, message: str, row: DidRow) -> None:
        super().__init__(message)
        self.row = row


class OrderFailed(ProvisionError):
    """The order ended without a number; the row is 'failed' with the reason. Run again to retry."""

    def __init__(self, row: DidRow) -> None:
        super().__init__(
            f"the Telnyx number for user {row.user_id!r} could not be bought: {row.failure or 'no reason given'};"
            f" run `calld-ctl did provision --user {row.user_id}` again to try another number",
            row,
        )


class OrderPending(ProvisionError):
    """Still no number when the wait ran out; the row keeps what is known, a rerun resumes it."""

    def __init__(self, row: DidRow, waited_s: float) -> None:
        if row.order_id:
            what = f"Telnyx order {row.order_id} for user {row.user_id!r} is still pending"
        else:  # another provision holds the order claim (or held it and died: its lease runs out)
            what = f"another provision is still placing the order for user {row.user_id!r}"
        super().__init__(
            f"{what} after {waited_s:g} s; nothing more was ordered."
            f" Run `calld-ctl did provision --user {row.user_id}` again later to pick it up",
            row,
        )


async def provision_did(
    ledger: Ledger | AsyncLedger,
    telnyx: TelnyxHttp,
    user_id: UserId,
    *,
    connection_id: str,
    poll_interval_s: float = 1.0,
    poll_timeout_s: float = 60.0,
    lease_s: float = ORDER_LEASE_S,
) -> DidRow:
    """The user's active number row, ordering one only when no order exists. See the module doc."""
    user_id = UserId(user_id)
    if not connection_id:
        raise ValueError("no Call Control connection to put the number on: set TELNYX_CONNECTION_ID")
    deadline = trio.current_time() + poll_timeout_s
    ledger = awaitable(ledger)
    row = await ledger.reserve_did(user_id)
    if row.status == "failed":
        log.info("numbers: user %s: last order failed (%s); ordering again", user_id, row.failure)
        await ledger.retry_did(user_id)
    holder = secrets.token_hex(8)
    while True:
        row = await ledger.reserve_did(user_id)
        if row.status == "active":
            return row
        if row.status == "failed":
            raise OrderFailed(row)
        if row.order_id is not None:
            return await _follow(ledger, telnyx, row, row.order_id, deadline, poll_interval_s, poll_timeout_s)
        if await ledger.claim_order(user_id, holder, lease_s=lease_s):
            await _order_once(ledger, telnyx, row, holder, connection_id)
            continue  # the row now has an order id, a number, or a failure
        remaining = deadline - trio.current_time()
        if remaining <= 0:
            raise OrderPending(row, poll_timeout_s)
        await trio.sleep(min(poll_interval_s, remaining))  # someone else is ordering: wait for its id


async def _order_once(ledger: AsyncLedger, telnyx: TelnyxHttp, row: DidRow, holder: str, connection_id: str) -> None:
    """Holding the claim: find this user's order, or place one, and save its id at once."""
    user_id, ref = row.user_id, row.customer_reference
    try:
        order = await _existing_order(telnyx, ref)
        if order is not None:
            log.info("numbers: user %s: found Telnyx order %s by %s", user_id, order.id, ref)
            await ledger.record_order(user_id, order.id)
            return
        owned = await telnyx.list_phone_numbers(customer_reference=ref, status="active")
        if owned:
            log.info("numbers: user %s: the account already owns %s for %s", user_id, owned[0].phone_number, ref)
            await ledger.activate_did(user_id, owned[0].phone_number)
            return
        offers = await telnyx.available_numbers("US", ("voice",), limit=_SEARCH_LIMIT)
        if not offers:
            await ledger.fail_did(user_id, "Telnyx offered no US local numbers with voice")
            return
        refused: TelnyxError | None = None
        for offer in offers:
            try:
                order = await telnyx.create_number_order(offer.phone_number, connection_id, ref)
            except TelnyxError as exc:
                if exc.status == 422:  # that number went, or is not orderable: nothing was bought
                    refused = exc
                    continue
                if exc.status is not None and 400 <= exc.status < 500 and exc.status not in (408, 429):
                    await ledger.fail_did(user_id, str(exc))  # a definite refusal: nothing was bought
                    return
                raise  # no answer, or a 5xx: an order may exist; the next run looks it up by ref
            log.info("numbers: user %s: ordered %s (order %s)", user_id, offer.phone_number, order.id)
            await ledger.record_order(user_id, order.id)
            return
        assert refused is not None
        await ledger.fail_did(user_id, str(refused))
    except BaseException:
        await ledger.release_order(user_id, holder)  # a no-op once the order id is saved
        raise


async def _existing_order(telnyx: TelnyxHttp, ref: str) -> NumberOrder | None:
    """An order already placed for this reference that can still give a number (success, then pending)."""
    orders = [o for o in await telnyx.list_number_orders(ref) if o.customer_reference in (None, ref)]
    for wanted in ("success", "pending"):
        matching = sorted((o for o in orders if o.status == wanted), key=lambda o: o.created_at or "")
        if matching:
            return matching[0]
    alive = [o for o in orders if o.status not in _FINISHED_BADLY]
    return alive[0] if alive else None


async def _follow(
    ledger: AsyncLedger,
    telnyx: TelnyxHttp,
    row: DidRow,
    order_id: str,
    deadline: float,
    poll_interval_s: float,
    poll_timeout_s: float,
) -> DidRow:
    user_id = row.user_id
    while True:
        order = await telnyx.get_number_order(order_id)
        if order.succeeded:
            number = order.number()
            if number is None:
                raise OrderFailed(await ledger.fail_did(user_id, f"Telnyx order {order.id} succeeded but names no number"))
            log.info("numbers: user %s: order %s done, number %s", user_id, order.id, number)
            return await ledger.activate_did(user_id, number)
        if order.status in _FINISHED_BADLY:
            raise OrderFailed(await ledger.fail_did(user_id, order.failure_reason()))
        # pending, or a status Telnyx may add later: keep waiting, never order again
        remaining = deadline - trio.current_time()
        if remaining <= 0:
            current = await ledger.did_row(user_id) or row
            raise OrderPending(current, poll_timeout_s)
        await trio.sleep(min(poll_interval_s, remaining))
