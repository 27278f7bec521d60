"""The gate every request passes before anything is written or dialled.

`Gate.admit` runs the rules in order (destination, opt-out, booking time, then, for a
call placed now, the rate limits and the calling window) and says what to do: dial now,
queue until a time, or refuse. The rules are the pure checks beside this module; the
gate only gathers their inputs (the ledger's opt-outs and counts, the clock, the
settings). The scheduler asks the same gate again when a queued request comes due.
"""

from __future__ import annotations

import copy
from datetime import datetime, timedelta
from typing import Literal
from zoneinfo import ZoneInfo

from attrs import frozen

from calld.core.plan import CALL_TIME_LIMIT_S, RING_TIMEOUT_S
from calld.ledger import Ledger
from calld.policy.clock import Clock
from calld.policy.destination import Destination, check_destination, parse_destination
from calld.policy.limits import check_number_busy, check_number_rate, check_user_rate
from calld.policy.optout import OptOut, check_opt_out
from calld.policy.refusal import Refusal, Refused
from calld.policy.when import WhenError, resolve, small_hours
from calld.policy.window import CallWindow, Closed, check_window, zones_for
from calld.settings import Settings


@frozen
class DialNow:
    pass


@frozen
class Queue:
    due_at: datetime  # UTC
    mode: Literal["when_open", "at"]


Decision = DialNow | Queue

ON_THE_LINE_RETRY_S = 60.0  # a queued call that comes due while calld is on the line with that number waits this long
# No call is on the line longer than it rings plus Telnyx's time limit (the dial asks for both), and
# a few minutes for the hangup's webhook: a request still not done after that (its recovery cut
# short, say) has no call left, and must not keep the business unreachable.
LONGEST_ON_THE_LINE = timedelta(seconds=RING_TIMEOUT_S + CALL_TIME_LIMIT_S + 300)


@frozen
class Timing:
    """What the user asked about when: now (None), when the window opens, or at a time."""

    when_open: bool = False
    at: str | None = None


class Gate:
    def __init__(self, settings: Settings, ledger: Ledger, clock: Clock) -> None:
        self.settings = settings
        self.ledger = ledger
        self.clock = clock
        self.window = CallWindow.parse(settings.calld_call_window)
        # Opt-outs this daemon heard but the ledger has not taken yet (it was unreachable): refused
        # here until they land, when every daemon reads them from the ledger. Shared by every `on()`.
        self.held_opt_outs: dict[str, OptOut] = {}

    def on(self, ledger: Ledger, now: datetime) -> Gate:
        """The same rules reading through another handle on the ledger (a worker thread's where the
        ledger is remote, or one transaction's view where a dial is admitted: calld.ledger.awaitable), at
        `now`, read on the event loop: a worker thread has no trio clock to read."""
        bound = copy.copy(self)
        bound.ledger = ledger
        bound.clock = lambda: now
        return bound

    # -- the rules, each with its inputs -----------------------------------------------------------

    def destination(self, to: str) -> Refusal | None:
        own = {row.did for row in self.ledger.rows() if row.did}
        return check_destination(to, own_numbers=own, allow_non_nanp=self.settings.calld_allow_non_nanp)

    def opt_out(self, to: str) -> Refusal | None:
        row = self.ledger.opt_out(to)
        entry = None if row is None else OptOut(row.number, row.said_at, row.quote, row.user_id, row.run_id)
        return check_opt_out(to, entry or self.held_opt_outs.get(to))

    def table_time(self, to: str, text: str, now: datetime) -> datetime:
        """The booking's --time as calld reads it: an aware time in the restaurant's (first) zone, UTC for a
        number with none. WhenError when it does not parse; the booking_time rule has checked it does."""
        zones = zones_for(to)
        return min(resolve(text, zones, now)).astimezone(ZoneInfo(zones[0]) if zones else ZoneInfo("UTC"))

    def booking_time(self, to: str, text: str, now: datetime, resolved: datetime | None = None) -> Refusal | None:
        """A booking's --time: it parses, in the restaurant's zone, lies ahead and within the horizon, and is
        not in the small hours unless written so as to insist. `resolved`: the time it was read as when the
        request was queued (checked again when due: "tomorrow" must not move a day meanwhile)."""
        try:
            instants = (resolved,) if resolved is not None else resolve(text, zones_for(to), now)
        except WhenError as exc:
            return Refusal("booking_time", f"--time: {exc}", people=f"I couldn't tell when you'd like the table: {exc}.")
        horizon = self.settings.calld_booking_horizon_days
        if min(instants) <= now:
            return Refusal("booking_time", f"--time {text!r} is {min(instants):%Y-%m-%d %H:%M} UTC, in the past; a booking must be ahead",
                           people=f"That time ({text}) is in the past there; I can only book a time still ahead.")
        if max(instants) > now + timedelta(days=horizon):
            return Refusal(
                "booking_time",
                f"--time {text!r} is more than {horizon} days ahead (CALLD_BOOKING_HORIZON_DAYS); book nearer the day",
                people=f"That time ({text}) is more than {horizon} days ahead; please ask again nearer the day.",
            )
        if resolved is None and (question := small_hours(text, self.table_time(to, text, now).replace(tzinfo=None))):
            return Refusal("booking_time", f"--time: {question}", people=f"Just checking before I call: {question}")
        return None

    def rates(self, to: str, user: str, now: datetime) -> Refusal | None:
        s = self.settings
        day = self.ledger.dials_to(to, since=now - timedelta(days=1), until=now)
        hour = self.ledger.dials_by(user, since=now - timedelta(hours=1), until=now)
        return (self.on_the_line(to)
                or check_number_rate(to, day, s.calld_calls_per_number_per_day)
                or check_user_rate(user, hour, s.calld_calls_per_user_per_hour))

    def on_the_line(self, to: str) -> Refusal | None:
        """Refused while calld is on as many calls with `to` as it may be at once."""
        since = self.clock() - LONGEST_ON_THE_LINE
        return check_number_busy(to, self.ledger.calls_on_line_to(to, since=since), self.settings.calld_calls_per_number_at_once)

    def closed(self, to: str, at: datetime) -> Closed | None:
        zones = zones_for(to)
        if not zones:
            # Only the fiction range has no zone by design (it rings no one); any other number without
            # one (satellite, international freephone) has a local time calld cannot know: never open.
            dest = parse_destination(to)
            return None if isinstance(dest, Destination) and dest.fiction else Closed((), None)
        found = check_window(zones, at, self.window)
        return found if isinstance(found, Closed) else None

    def dial_check(self, to: str, user: str, now: datetime) -> Refusal | None:
        """The rules that other daemons' writes can change, read again in the transaction that writes
        the dial (Ledger.admit_dial): the opt-out list and the rate limits."""
        return self.opt_out(to) or self.rates(to, user, now)

    # -- the order they run in -----------------------------------------------------------------------

    def standing(self, kind: str, to: str, booking_time: str | None, now: datetime,
                 resolved: datetime | None = None) -> Refusal | None:
        """The rules that hold whenever the call is placed."""
        refusal = self.destination(to) or self.opt_out(to)
        if refusal is None and kind == "book" and booking_time is not None:
            refusal = self.booking_time(to, booking_time, now, resolved)
        return refusal

    def admit(self, kind: str, to: str, user: str, booking_time: str | None, timing: Timing) -> Decision:
        """Dial now, or queue; raises Refused (one line, the rule named) when neither may happen."""
        decision = self._admit(kind, to, user, booking_time, timing)
        if isinstance(decision, Queue) and kind == "book" and booking_time is not None:
            self._before_the_table(to, booking_time, decision, timing)
        return decision

    def _before_the_table(self, to: str, booking_time: str, queued: Queue, timing: Timing) -> None:
        """A booking's call must come before the table's own time: queued for then or later, it could only
        book the past (and would be refused when due). The time parsed: `standing` has checked it."""
        zones = zones_for(to)
        table = min(resolve(booking_time, zones, self.clock()))
        if queued.due_at < table:
            return

        def local(instant: datetime) -> str:
            return f"{instant.astimezone(ZoneInfo(zones[0])):%a %Y-%m-%d %H:%M} {zones[0]}" if zones else f"{instant:%Y-%m-%d %H:%M} UTC"

        if timing.at is not None:
            when, fix = f"--at {timing.at!r} ({local(queued.due_at)})", "choose an --at before it, or a later --time"
        else:
            when, fix = f"the calling window opens at {local(queued.due_at)}, which", "choose a later --time, or phone them yourself"
        raise Refused(Refusal(
            "schedule",
            f"{when} is not before the table's time, --time {booking_time!r} ({local(table)}); "
            f"a booking must be phoned before it: {fix}",
        ))

    def _admit(self, kind: str, to: str, user: str, booking_time: str | None, timing: Timing) -> Decision:
        now = self.clock()
        if (refusal := self.standing(kind, to, booking_time, now)) is not None:
            raise Refused(refusal)
        if timing.at is not None:
            return self._at(to, timing.at, now)
        closed = self.closed(to, now)
        if closed is None:
            if (refusal := self.rates(to, user, now)) is not None:
                raise Refused(refusal)
            return DialNow()
        if closed.opens_at is None:
            raise Refused(Refusal("calling_window", f"{to}: {closed.describe(self.window)}", closed.for_people(self.window)))
        if timing.when_open:
            return Queue(closed.opens_at, "when_open")
        raise Refused(Refusal(
            "calling_window",
            f"{to}: {closed.describe(self.window)}; nothing was placed (add --when-open to queue it until then)",
            closed.for_people(self.window),
        ))

    def _at(self, to: str, text: str, now: datetime) -> Queue:
        zones = zones_for(to)
        try:
            instants = resolve(text, zones, now)
        except WhenError as exc:
            raise Refused(Refusal("schedule", f"--at: {exc}")) from None
        if len(set(instants)) > 1:
            raise Refused(Refusal("schedule", f"--at: {to} spans zones ({', '.join(zones)}); give the time with an offset, e.g. 2026-12-04T09:30-05:00"))
        due = instants[0]
        horizon = self.settings.calld_booking_horizon_days
        if due <= now:
            raise Refused(Refusal("schedule", f"--at {text!r} is {due:%Y-%m-%d %H:%M} UTC, in the past"))
        if due > now + timedelta(days=horizon):
            raise Refused(Refusal("schedule", f"--at {text!r} is more than {horizon} days ahead (CALLD_BOOKING_HORIZON_DAYS)"))
        if (closed := self.closed(to, due)) is not None:
            raise Refused(Refusal("calling_window", f"--at {text!r} is outside the calling window: at that time, {closed.describe(self.window)}"))
        return Queue(due, "at")

    def when_due(self, kind: str, to: str, user: str, booking_time: str | None,
                 resolved: datetime | None = None) -> Decision | Refusal:
        """A queued request has come due: dial, wait for the window again, or refuse it. `resolved`: the
        booking's time as read when it was queued (None for rows queued before it was kept)."""
        now = self.clock()
        if (refusal := self.standing(kind, to, booking_time, now, resolved)) is not None:
            return refusal
        closed = self.closed(to, now)
        if closed is not None:
            if closed.opens_at is None:
                return Refusal("calling_window", f"{to}: {closed.describe(self.window)}")
            return Queue(closed.opens_at, "when_open")
        if self.on_the_line(to) is not None:
            return Queue(now + timedelta(seconds=ON_THE_LINE_RETRY_S), "when_open")  # someone else's call to them: after it
        return self.rates(to, user, now) or DialNow()
