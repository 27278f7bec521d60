"""Performing a call's one Hangup (the reducer emits it once): the same command until the line is down, bounded.

Every request carries the call's one command_id (calld.ops.recovery.hangup_command_id), so however
often it goes, Telnyx acts on it once. A try is bounded by `try_s` (HANGUP_CONFIRM_S): a request
Telnyx does not answer is a stall, and Telnyx's own advice for a command it did not answer is to send
the identical command again. After a try that failed (a 5xx after the client's own resends, a 422
other than "already ended", no answer, any transport error), the call's status (GET
/v2/calls/{id}, `is_alive`) says whether the line is down anyway; while it is not known to be, the
command goes again after a backoff (1 s, doubling up to 8 s) until `retry_s` (HANGUP_RETRY_S) has
passed since the first try. Then calld stops and says so: the line may still be up.

The series runs as a task in the call's nursery (calld.runtime.handle), never in the call's loop:
the hangup confirmation timer fires on time whatever Telnyx does. What it did is `record()`,
hangup.json's body, written whatever happens.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import Any, Literal

import trio

from calld.adapters.telnyx_http import CallInfo, TelnyxError
from calld.core.state import HangupDone, HangupTrack, TelnyxEnded
from calld.domain.ids import CallControlId
from calld.runtime.report import HangupInfo

log = logging.getLogger("calld.call")

BACKOFF_S = 1.0  # between tries: doubled each time, up to MAX_BACKOFF_S
MAX_BACKOFF_S = 8.0

# How the series ended. hung_up: Telnyx took the command (200); already_ended: Telnyx said the call
# was over (422, 90018); down: the call's status, or its call.hangup, says the line is down although
# no try was taken; may_be_up: retry_s passed with none of these; no_call: there was no call id.
Line = Literal["hung_up", "already_ended", "down", "may_be_up", "no_call"]
LINE_IS_DOWN: frozenset[str] = frozenset({"hung_up", "already_ended", "down"})

HangupCommand = Callable[[CallControlId, str], Awaitable[str]]
StatusQuery = Callable[[CallControlId], Awaitable[CallInfo]]


class HangupSeries:
    def __init__(self, hangup: HangupCommand, status: StatusQuery, call_control_id: CallControlId | None,
                 command_id: str, *, via: str, requested_at_ms: int, try_s: float, retry_s: float, who: str) -> None:
        self.via = via  # the Hangup effect's
        self.requested_at_ms = requested_at_ms
        self._hangup = hangup
        self._status = status
        self.call_control_id = call_control_id
        self.command_id = command_id
        self.try_s = try_s
        self.retry_s = retry_s
        self._who = who
        self.tries = 0
        self.telnyx: str | None = None  # Telnyx's last answer: requested, already_ended, or "error: ..."
        self.call_status: str | None = None  # the last status check: alive, ended, or "error: ..."
        self.line: Line | None = None  # None while it is still trying
        self.detail = ""
        self._started: float | None = None
        self._down: str | None = None  # the call's own events say the line is down (call.hangup came)
        self._waiting: trio.CancelScope | None = None  # the wait between tries, cut short by notice_down

    @property
    def settled(self) -> bool:
        return self.line is not None

    @property
    def may_be_up(self) -> bool:
        return self.line == "may_be_up"

    def notice_down(self, why: str) -> None:
        """The call's events say the line is down: no further try. A try under way is let finish
        (bounded by try_s), so what Telnyx said to it is kept."""
        if self._down is None:
            self._down = why
            if self._waiting is not None:
                self._waiting.cancel()

    async def run(self) -> None:
        """Try until settled or retry_s has passed since the first try. Run again (after a
        cancellation), it goes on within the same bound."""
        if self.settled:
            return
        if self.call_control_id is None:
            self._settle("no_call", "there was no call to hang up (the dial never returned a call id)")
            return
        ccid = self.call_control_id
        if self._started is None:
            self._started = trio.current_time()
        backoff = BACKOFF_S
        with trio.move_on_at(self._started + self.retry_s):
            while self._down is None:
                if await self._try(ccid) or self._down is not None:
                    break
                if await self._ended(ccid) or self._down is not None:
                    break
                log.warning("%s hangup not taken (%s); the call's status: %s; sending it again in %.0f s",
                            self._who, self.telnyx, self.call_status, backoff)
                await self._wait(trio.sleep(backoff))
                backoff = min(backoff * 2, MAX_BACKOFF_S)
        if self.settled:
            return
        if self._down is not None:
            self._settle("down", f"{self._down}; Telnyx had not taken calld's hangup ({self.telnyx})")
            return
        self._settle("may_be_up", f"Telnyx did not take calld's hangup in {self.tries} tries over {self.retry_s:g} s "
                                  f"(HANGUP_RETRY_S); the last: {self.telnyx}; the call's status: "
                                  f"{self.call_status or 'never read'}. The line may still be up: hang it up in "
                                  f"the Telnyx portal (call control id {ccid})")

    async def _try(self, ccid: CallControlId) -> bool:
        """One hangup request (the client resends it itself on a 5xx or a lost answer); True once taken."""
        self.tries += 1
        with trio.move_on_after(self.try_s) as bound:
            try:
                said = await self._hangup(ccid, self.command_id)
            except TelnyxError as exc:
                self.telnyx = f"error: {exc}"
                return False
            except Exception as exc:  # noqa: BLE001 - whatever breaks, the line must still go down
                self.telnyx = f"error: {type(exc).__name__}: {exc}"
                log.exception("%s hangup request failed", self._who)
                return False
        if bound.cancelled_caught:
            self.telnyx = f"error: no answer within {self.try_s:g} s (HANGUP_CONFIRM_S)"
            return False
        self.telnyx = said
        if said == "already_ended":
            self._settle("already_ended", "Telnyx says the call had already ended")
        else:
            self._settle("hung_up", "Telnyx took the hangup")
        return True

    async def _ended(self, ccid: CallControlId) -> bool:
        """After a failed try: is the line down anyway (the call's status)?"""
        info = await self._wait(self._status_of(ccid))
        if info is None:
            return False
        self.call_status = "alive" if info.is_alive else "ended"
        if info.is_alive:
            return False
        self._settle("down", f"Telnyx reports the call ended (is_alive false) after calld's hangup failed ({self.telnyx})")
        return True

    async def _status_of(self, ccid: CallControlId) -> CallInfo | None:
        with trio.move_on_after(self.try_s):
            try:
                return await self._status(ccid)
            except Exception as exc:  # noqa: BLE001 - a status that cannot be read says nothing either way
                self.call_status = f"error: {exc}"
                return None
        self.call_status = f"error: no answer within {self.try_s:g} s"
        return None

    async def _wait[T](self, work: Awaitable[T]) -> T | None:
        """`work`, cut short (None) when the call's events say the line is down meanwhile."""
        with trio.CancelScope() as self._waiting:
            return await work
        return None

    def _settle(self, line: Line, detail: str) -> None:
        self.line = line
        self.detail = detail

    def progress(self) -> dict[str, Any]:
        """Where it stands while its call is still held (calld-ctl calls and show): `line` is sending
        (the first try under way), retrying (a try failed, so Telnyx has not taken it: a try taken
        settles), or how it ended."""
        line = self.line or ("retrying" if self.telnyx is not None else "sending")
        return {"line": line, "tries": self.tries, "telnyx": self.telnyx, "call_status": self.call_status,
                "detail": self.detail or None}

    def record(self) -> dict[str, Any]:
        """hangup.json: what calld sent, and what became of it."""
        detail = self.detail or f"calld stopped trying before Telnyx answered (after {self.tries} tries)"
        return {"via": self.via, "sent": True, "call_control_id": self.call_control_id,
                "requested_at_ms": self.requested_at_ms, "command_id": self.command_id, "telnyx": self.telnyx,
                "tries": self.tries, "call_status": self.call_status, "line": self.line or "unknown", "detail": detail}


def hangup_info(series: HangupSeries | None, hangup: HangupTrack, ended: TelnyxEnded | None) -> HangupInfo:
    """The report's hangup: the one calld performed (a call torn down at shutdown never reaches
    HangupDone, yet its hangup was sent), else why none was needed (far_party, not_connected)."""
    done = hangup if isinstance(hangup, HangupDone) else None
    return HangupInfo(
        via=series.via if series else done.via if done else None,
        sent=series is not None,
        confirmed=done.confirmed if done else (False if series else None),
        requested_at_ms=series.requested_at_ms if series else None,
        telnyx_result=series.telnyx if series else None,
        tries=series.tries if series else 0,
        line=(series.line or "unknown") if series else None,
        line_detail=(series.detail or None) if series else None,
        cause=ended.cause if ended else None,
        source=ended.source if ended else None,
        sip_cause=ended.sip_cause if ended else None,
    )
