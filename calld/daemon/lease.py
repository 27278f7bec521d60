"""A daemon's lease on a shared ledger: it names its holder, is renewed every third of CALLD_LEASE_S, and
says when another daemon's lease may be judged run out (never on a clock that stopped for everyone)."""

from __future__ import annotations

import logging
import math
import socket
import sqlite3
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from typing import Any

import trio

from calld.daemon.errors import DaemonError
from calld.ledger import LedgerUnavailable
from calld.ledger.awaitable import AsyncLedger
from calld.settings import Settings

log = logging.getLogger("calld.daemon")

LEDGER_ERRORS = (sqlite3.Error, LedgerUnavailable)  # a ledger that cannot write now: the daemon goes on
LEASE_RETRY_S = 1.0  # a lease renewal that failed is tried again this soon
# A gap this long (as a share of the lease) between this daemon's own renewals means it was cut off: another
# daemon's lease can run out only in an outage of two thirds of a lease or more (it renews every third).
LEASE_GAP = 0.6


class Lease:
    """This daemon's own lease: when it was last renewed, and since when without a gap."""

    def __init__(self, ledger: AsyncLedger, settings: Settings, clock: Callable[[], Any]) -> None:
        self.ledger, self.settings, self.clock = ledger, settings, clock
        self.renewed_at = -math.inf
        self.held_since = math.inf

    async def renew(self, *, starting: bool = False) -> None:
        """Renew this daemon's lease; starting, refuse to serve an instance another live holder has."""
        now = self.clock().timestamp()
        try:
            row = await self.ledger.renew_lease(self.settings.instance_name, now + self.settings.calld_lease_s,
                                                 holder=self.holder, now=now)
        except LEDGER_ERRORS:
            self.held_since = math.inf  # cut off: whatever this daemon saw of others' leases is stale
            raise
        renewed, lease_s = trio.current_time(), self.settings.calld_lease_s
        if renewed - self.renewed_at > lease_s * LEASE_GAP:
            # A gap in this daemon's own renewals (an outage, a stall): the others' renewals stopped with
            # it, so their leases ran out on a clock nobody could renew against. Judged again only once
            # this lease has held a whole lease period since, in which every live daemon renews its own.
            self.held_since = renewed
            if self.renewed_at > -math.inf:
                log.warning("the ledger answers again after %.1f s; no other daemon's calls are judged for %.0f s, "
                            "while every live daemon renews its lease", renewed - self.renewed_at, lease_s)
        self.renewed_at = renewed
        if row.holder == self.holder:
            return
        held = (f"CALLD_INSTANCE={self.settings.calld_instance} is held by the daemon at {row.holder}, whose lease runs "
                f"until {datetime.fromtimestamp(row.lease_until, UTC):%H:%M:%S} UTC")
        if starting:  # the shared ledger's other daemon: this one would take its calls for its own
            raise DaemonError(f"{held}: give each daemon its own CALLD_INSTANCE (if that daemon is gone for good, "
                              "start this one once its lease has run out)")
        log.error("%s: this daemon's calls are no longer its own; stop it and give it its own CALLD_INSTANCE", held)

    @property
    def holder(self) -> str:
        """Who holds this daemon's instance: its host and state dir, the same across its restarts. Only a
        shared ledger needs one; a SQLite ledger has one daemon, its state dir locked."""
        if self.ledger.sync.engine != "postgresql":
            return ""
        return f"{socket.gethostname()}:{self.settings.calld_state_dir.resolve()}"

    @property
    def may_judge_others(self) -> bool:
        """Another daemon's lease may be judged (and its calls taken) only once this daemon's own lease
        has been renewed without a gap for a whole lease period: a live daemon renews within that time
        after any outage, so a lease still run out then is a daemon gone, not a clock that stopped."""
        return trio.current_time() - self.held_since >= self.settings.calld_lease_s

    async def keep(self, settle_others: Callable[[], Awaitable[None]]) -> None:
        """While serving: renew this daemon's lease, and settle the calls of any daemon whose lease ran out
        (killed, and not restarted), once, whichever live daemon takes them first. A renewal that failed is
        tried again within a second (LEASE_RETRY_S), so a daemon proves it is alive as soon as the ledger
        is back, well before any other may judge it."""
        every = self.settings.calld_lease_s / 3  # so a slow round trip or two never lets a live daemon's lease lapse
        wait = every
        while True:
            await trio.sleep(wait)
            try:
                await self.renew()
                wait = every
                if self.may_judge_others:
                    await settle_others()
            except LEDGER_ERRORS as exc:
                wait = min(every, LEASE_RETRY_S)
                log.error("the ledger cannot renew this daemon's lease now (%s); trying again in %.0f s", exc, wait)
