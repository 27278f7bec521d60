"""Booking a table: from a validated BookRequest to a CallPlan, and a stub run of it.

The second job rides the first one's machinery: the plan goes to the same
CallHandle, reducer, transports, artifacts and hangup path as a quick ask
(`calld.calls.run_stub_call` / `run_live_call`). What differs lives in the plan
(`BookJob`: the words, the live and backend instructions, the tool schema the
session gets) and in the result (`calld.domain.results.BookResult`).
"""

from __future__ import annotations

from collections.abc import Callable

from calld.calls import StubRun, plan_inputs, run_stub_call
from calld.core.plan import BookJob, CallPlan, build_book_plan
from calld.domain.ids import RunId
from calld.domain.requests import BookRequest
from calld.ledger import Ledger
from calld.runtime.handle import CallHandle
from calld.settings import Settings
from calld.stub.scenario import BOOK_SCENARIOS, Scenario, unknown_scenario

DEFAULT_BOOK_SCENARIO = "book_straight"


def prepare_book(request: BookRequest, settings: Settings, ledger: Ledger, run_id: RunId | None = None) -> CallPlan:
    """Raises UnknownUser (with the command that fixes it) before anything is written.

    The user's own number is both the caller id and the callback number the agent gives.
    """
    from_did = ledger.did_for(request.user)
    return build_book_plan(
        user_id=request.user,
        first_name=request.name,
        to=request.to,
        from_=from_did,
        party=request.party,
        time=request.time,
        notes=request.notes,
        window_minutes=request.window,
        **plan_inputs(settings, run_id),
    )


def book_scenario(name: str | None) -> Scenario:
    """A scripted restaurant by name (the default when None); ValueError lists the choices."""
    name = name or DEFAULT_BOOK_SCENARIO
    try:
        return BOOK_SCENARIOS[name]
    except KeyError:
        raise ValueError(unknown_scenario(name, booking=True)) from None


async def run_stub_book(
    plan: CallPlan,
    settings: Settings,
    scenario: Scenario | str | None = None,
    *,
    on_handle: Callable[[CallHandle], None] | None = None,
) -> StubRun:
    """One booking call against a scripted restaurant, through `run_stub_call` (the same call path)."""
    if not isinstance(plan.job, BookJob):
        raise ValueError(f"run_stub_book needs a booking plan, not a {plan.job.kind} plan")
    if not isinstance(scenario, Scenario):
        scenario = book_scenario(scenario)
    if scenario.booking is None:
        raise ValueError(f"scenario {scenario.name!r} is not a restaurant taking bookings")
    return await run_stub_call(plan, settings, scenario, on_handle=on_handle)
