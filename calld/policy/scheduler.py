"""Calls scheduled for later: a task in the daemon's nursery that dials queued requests when due.

The queue is the ledger's `schedule` table, so it outlives the daemon: a restarted daemon
finds its queue there and dials what has come due. A due row is claimed in the ledger before it
is looked at (FOR UPDATE SKIP LOCKED on PostgreSQL), so of several daemons sharing the ledger
exactly one places it; a claim a dead daemon left runs out and is claimed again. When a request comes due the gate is
asked again (an opt-out or a rate limit may have arrived since): it dials, waits for the
window to open again, or is refused with a stored result. Its timing runs on trio's clock
(the autojump clock in tests) through the injected policy clock.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from datetime import timedelta
from typing import Any

import trio

from calld.domain import results
from calld.domain.ids import RunId
from calld.ledger import Ledger, LedgerUnavailable, ScheduledRow
from calld.ledger.awaitable import AsyncLedger, awaitable
from calld.policy.gate import DialNow, Gate, Queue
from calld.policy.refusal import Refusal

log = logging.getLogger("calld.scheduler")

MAX_NAP_S = 60.0  # look again at least this often: the wall clock may jump (suspend, NTP)
MIN_NAP_S = 0.5
BUSY_RETRY_S = 30.0  # the daemon was on its call limit when this came due
CLAIM_BATCH = 10  # due rows claimed at once; the rest wait a short nap


class Busy(Exception):
    """The daemon cannot dial right now (at its call limit); the request stays queued."""


Dial = Callable[[ScheduledRow], Awaitable[None]]


def queued_view(row: ScheduledRow) -> dict[str, Any]:
    """A queued request as calld-ctl shows it."""
    return {
        "request_id": row.request_id, "kind": row.kind, "user": row.user_id, "to": row.params.get("to"),
        "due_at": row.due_at.isoformat(), "mode": row.mode, "status": row.status, "reason": row.reason,
    }


def refused_result(refusal: Refusal) -> dict[str, Any]:
    """What a request refused before any dial stores as its result (a repeat gets it back)."""
    return results.Refused(reason=refusal.rule, detail=refusal.message).model_dump(mode="json")


class Scheduler:
    def __init__(self, ledger: Ledger | AsyncLedger, gate: Gate, dial: Dial, *, accepting: Callable[[], bool],
                 instance: str = "") -> None:
        self.ledger = awaitable(ledger)
        self.instance = instance  # the daemon its claims name (CALLD_INSTANCE)
        self.gate = gate
        self._dial = dial
        self._accepting = accepting
        self._wake = trio.Event()

    def wake(self) -> None:
        """The queue changed: look again now."""
        self._wake.set()

    async def run(self, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        task_status.started()
        while True:
            self._wake = trio.Event()
            try:
                if self._accepting():
                    # Claimed, not just read: of several daemons on one ledger, each due row goes to one.
                    for row in await self.ledger.claim_due(self.gate.clock(), instance=self.instance, limit=CLAIM_BATCH):
                        await self._due(row)
                await self._nap()
            except LedgerUnavailable as exc:  # the queue is in the ledger: look again once it answers
                log.error("the scheduler cannot read the ledger now (%s); looking again in %.0f s", exc, MAX_NAP_S)
                await trio.sleep(MAX_NAP_S)

    async def _nap(self) -> None:
        rows = await self.ledger.schedule_rows(status="queued")
        if not rows:
            await self._wake.wait()  # nothing queued: no timer at all, a new row wakes us
            return
        wait = MAX_NAP_S
        if self._accepting():
            # A row still due after its turn (it could not be moved on) is looked at again shortly, not in a spin.
            wait = min(MAX_NAP_S, max(MIN_NAP_S, (rows[0].due_at - self.gate.clock()).total_seconds()))
        with trio.move_on_after(wait):
            await self._wake.wait()

    async def _due(self, row: ScheduledRow) -> None:
        booking_time = row.params.get("time") if row.kind == "book" else None
        now = self.gate.clock()
        decision = await self.ledger.run(lambda ledger: self.gate.on(ledger, now).when_due(row.kind, row.params["to"], row.user_id, booking_time))
        match decision:
            case Refusal() as refusal:
                log.warning("queued request %s refused when due: %s", row.request_id, refusal.message)
                await self.refuse(row, refusal)
            case Queue(due_at=due_at):
                log.info("queued request %s: the window has closed again; waiting until %s", row.request_id, due_at)
                await self.ledger.release_due(row.request_id, due_at=due_at)
            case DialNow():
                try:
                    await self._dial(row)
                except Busy:
                    later = self.gate.clock() + timedelta(seconds=BUSY_RETRY_S)
                    await self.ledger.release_due(row.request_id, due_at=later)
                except Exception as exc:  # one bad row must not stop the queue
                    log.exception("queued request %s could not be dialled", row.request_id)
                    await self.refuse(row, Refusal("schedule", f"calld could not place it when due: {exc}"))

    async def refuse(self, row: ScheduledRow, refusal: Refusal) -> None:
        """Nothing is dialled; the request finishes as refused, with the reason, for a repeat to find."""
        if not await self.ledger.set_schedule(row.request_id, status="refused", reason=refusal.message, only_from="claimed"):
            return
        await self.ledger.claim_request(row.request_id, user_id=row.user_id, kind=row.kind,  # type: ignore[arg-type]
                                  params=row.params, run_id=RunId.new())
        await self.ledger.finish_request(row.request_id, refused_result(refusal))

