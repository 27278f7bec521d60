"""Run one stub call inside a pytest-trio test, on whatever clock the test uses."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import attrs
import trio

from calld.calls import StubRun, prepare, run_stub_call
from calld.core.plan import CallPlan
from calld.domain.ids import E164, FirstName, UserId
from calld.domain.questions import QuestionType
from calld.domain.requests import AskRequest
from calld.ledger import Ledger
from calld.runtime.disk import DiskWork, inline
from calld.settings import Settings, load_settings
from calld.stub.scenario import SCENARIOS, Scenario


class Run:
    def __init__(self, stub: StubRun, settings: Settings) -> None:
        self.stub = stub
        self.result = stub.result
        self.dir = stub.artifacts
        self.world = stub.world
        self.settings = settings

    def json(self, name: str) -> Any:
        return json.loads((self.dir / name).read_text())

    @property
    def report(self) -> dict[str, Any]:
        return self.json("call_report.json")

    def rows(self) -> list[dict[str, Any]]:
        return [json.loads(line) for line in (self.dir / "events.jsonl").read_text().splitlines()]

    def events(self, kind: str) -> list[dict[str, Any]]:
        return [r for r in self.rows() if "event" in r and r["event"]["kind"] == kind and "ignored" not in r]

    def effects(self, kind: str) -> list[dict[str, Any]]:
        return [r for r in self.rows() if "effect" in r and r["effect"]["kind"] == kind]

    def inbound_chunks_before(self, seq: int) -> list[int]:
        """Telnyx chunk numbers of the inbound frames journaled before row `seq`, in order: those
        stepped one by one and those in the media task's held stretches (the pickup audio)."""
        out: list[int] = []
        for r in self.rows():
            if r["seq"] >= seq:
                break
            event = r.get("event", {})
            if event.get("kind") == "media.audio" and "ignored" not in r:
                out.append(event["chunk"])
            elif event.get("kind") == "media.audio_held" and "ignored" not in r:
                out.extend(f["chunk"] for f in event["frames"])
        return out

    def chunks_to_live(self) -> list[int]:
        """Telnyx chunk numbers of the inbound frames sent on to GPT-Live after any held audio, in
        journal order: those the reducer sent (live.audio effects) and the forwarded stretches."""
        out: list[int] = []
        for r in self.rows():
            if "effect" in r and r["effect"]["kind"] == "live.audio" and not r["effect"]["held"]:
                out.append(r["effect"]["chunk"])
            elif "event" in r and r["event"]["kind"] == "media.audio_forwarded":
                out.extend(range(r["event"]["first_chunk"], r["event"]["last_chunk"] + 1))
        return out


def stub_plan(tmp_path: Path, *, ask: QuestionType = QuestionType.HOURS, item: str | None = None, to: str = "+15555550142",
              **settings_overrides: Any) -> tuple[Settings, CallPlan]:
    """The settings and the plan of one stub call from user "tester" (its number provisioned), for a test that runs it."""
    settings = load_settings(calld_state_dir=tmp_path, **settings_overrides)
    ledger = Ledger(settings.db_path)
    try:
        ledger.provision_stub(UserId("tester"))
        request = AskRequest(to=E164(to), ask=ask, item=item, name=FirstName("Nathan"), user=UserId("tester"))
        return settings, prepare(request, settings, ledger)
    finally:
        ledger.close()


async def stub_call(
    tmp_path: Path,
    scenario: str | Scenario = "hours",
    *,
    ask: QuestionType = QuestionType.HOURS,
    item: str | None = None,
    to: str = "+15555550142",
    disk: DiskWork = inline,
    **settings_overrides: Any,
) -> Run:
    settings, plan = stub_plan(tmp_path, ask=ask, item=item, to=to, **settings_overrides)
    if isinstance(scenario, str):
        scenario = SCENARIOS[scenario]
    # A call that never ends is a failure, not a hung test (virtual seconds on the autojump clock).
    with trio.fail_after(900):
        return Run(await run_stub_call(plan, settings, scenario, disk=disk), settings)


def variant(name: str, **changes: Any) -> Scenario:
    return attrs.evolve(SCENARIOS[name], **changes)


async def stub_book(
    tmp_path: Path,
    scenario: str | Scenario = "book_straight",
    *,
    party: int = 2,
    time: str = "Friday 7pm",
    notes: str | None = "outdoor if possible",
    window: int = 0,
    **settings_overrides: Any,
) -> Run:
    """One booking call against a scripted restaurant (calld.stub.scenario.BOOK_SCENARIOS)."""
    from calld.booking import prepare_book, run_stub_book
    from calld.domain.requests import BookRequest

    settings = load_settings(calld_state_dir=tmp_path, **settings_overrides)
    ledger = Ledger(settings.db_path)
    try:
        ledger.provision_stub(UserId("tester"))
        request = BookRequest(
            to=E164("+15555550142"), name=FirstName("Nathan"), party=party, time=time, notes=notes,
            window=window, user=UserId("tester"),
        )
        plan = prepare_book(request, settings, ledger)
    finally:
        ledger.close()
    with trio.fail_after(900):
        return Run(await run_stub_book(plan, settings, scenario), settings)
