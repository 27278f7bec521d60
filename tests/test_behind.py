"""Finishing work behind live frames (calld.runtime.behind, issue 54), on the autojump clock: a call's
end is done in steps, each only when no other task has anything to do, and a daemon stopped with
such work queued still writes every result."""

from __future__ import annotations

import io
import json

import pytest
import trio

import calld.runtime.behind as behind_mod
from calld.calls import prepare, run_stub_call
from calld.cli.client import ControlClient
from calld.cli.ctl import run_ask
from calld.daemon.service import Daemon
from calld.domain.ids import E164, FirstName, UserId
from calld.domain.questions import QuestionType
from calld.domain.requests import AskRequest
from calld.ledger import Ledger
from calld.runtime.behind import Behind
from calld.runtime.handle import CallHandle
from calld.settings import load_settings
from daemons import daemon_settings, stop

LINES = 8  # calls on the line, each a frame every 20 ms, all at the same instants
FRAME_TRIPS = 3  # a frame's way through a call is several task steps (read, parse, send on)


async def test_a_finishing_job_steps_only_when_no_frame_is_waiting(autojump_clock):
    behind = Behind()
    pending = 0  # frames sent on a line and not yet through it
    seen: list[int] = []  # `pending` at each finishing step
    sent = handled = 0

    async def line(rx: trio.MemoryReceiveChannel[int]) -> None:
        nonlocal pending, handled
        async for _frame in rx:
            for _ in range(FRAME_TRIPS):
                await trio.lowlevel.checkpoint()
            pending -= 1
            handled += 1

    async def finish(n_steps: int) -> None:
        async with behind.job() as step:
            for _ in range(n_steps):
                await step()
                seen.append(pending)  # the step's own work would run here

    async with trio.open_nursery() as n:
        txs = []
        for _ in range(LINES):
            tx, rx = trio.open_memory_channel[int](100)
            txs.append(tx)
            n.start_soon(line, rx)
        for k in range(50):  # one second of audio on every line
            for tx in txs:
                pending += 1
                sent += 1
                tx.send_nowait(k)
            if k == 10:  # a call hangs up in the middle of it: its finish is queued with frames in flight
                n.start_soon(finish, 30)
            await trio.sleep(0.02)
        for tx in txs:
            await tx.aclose()
    assert len(seen) == 30 and handled == sent
    assert seen == [0] * 30, f"finishing steps ran while frames waited: {seen}"
    assert behind.steps_when_idle == 30
    assert trio.current_time() == pytest.approx(1.0)  # and it took no time of the calls'


async def test_a_loop_that_is_never_idle_still_finishes_the_job_within_the_bound(monkeypatch, autojump_clock):
    monkeypatch.setattr(behind_mod, "wait_all_tasks_blocked", trio.sleep_forever)  # never idle
    behind = Behind(bound_s=2.5)
    done: list[float] = []

    async def finish() -> None:
        async with behind.job() as step:
            for _ in range(5):
                await step()
        done.append(trio.current_time())

    async with trio.open_nursery() as n:
        n.start_soon(finish)
        n.start_soon(finish)  # queued behind the first: its bound runs from when it was queued
    assert done == [pytest.approx(2.5), pytest.approx(2.5)]
    assert behind.steps == 10 and behind.steps_when_idle == 0


def _plans(tmp_path, names):
    settings = load_settings(calld_state_dir=tmp_path)
    ledger = Ledger(settings.db_path)
    try:
        ledger.provision_stub(UserId("tester"))
        return settings, [prepare(AskRequest(to=E164("+15555550142"), ask=QuestionType.HOURS, name=FirstName(name),
                                             user=UserId("tester")), settings, ledger) for name in names]
    finally:
        ledger.close()


async def test_a_calls_end_is_done_in_steps_while_another_call_streams(tmp_path, monkeypatch, autojump_clock):
    settings, (first, second) = _plans(tmp_path, ["Ada", "Bea"])
    behind = Behind()
    handles: dict[str, CallHandle] = {}
    at_steps: list[tuple[str, int, bool]] = []  # the other call's media state, its queued events, idle or not
    original = CallHandle._finish_in_steps

    async def finish_in_steps(self, step, duration_ms):
        async def watched() -> None:
            idle_before = behind.steps_when_idle
            await step()
            other = handles["Bea"]
            at_steps.append((other.call.media.kind, other._events_rx.statistics().current_buffer_used,
                             behind.steps_when_idle > idle_before))

        await original(self, watched if self.plan.first_name == "Ada" else step, duration_ms)

    monkeypatch.setattr(CallHandle, "_finish_in_steps", finish_in_steps)
    results = {}

    async def call(plan, delay):
        await trio.sleep(delay)
        run = await run_stub_call(plan, settings, "hours", behind=behind,
                                  on_handle=lambda h: handles.__setitem__(str(h.plan.first_name), h))
        results[str(plan.first_name)] = run.result

    async with trio.open_nursery() as n:
        n.start_soon(call, first, 0)
        n.start_soon(call, second, 4)  # mid-conversation when the first hangs up
    assert results["Ada"].status == results["Bea"].status == "answered"
    assert len(at_steps) >= 8, "the end of a call is done in steps"
    assert all(media == "streaming" for media, _, _ in at_steps), at_steps  # the other call was on the line
    assert all(queued == 0 for _, queued, _ in at_steps), at_steps  # with nothing of its own waiting
    assert all(idle for _, _, idle in at_steps), at_steps  # each step after an idle loop, none past the bound


async def test_a_daemon_stopped_with_finishing_work_queued_writes_every_result(tmp_path, nursery, monkeypatch,
                                                                                 autojump_clock):
    # The loop is never idle (a core saturated by calls), and the bound is far away: the calls' ends stay queued.
    monkeypatch.setattr(behind_mod, "wait_all_tasks_blocked", trio.sleep_forever)
    daemon: Daemon = await nursery.start(Daemon(daemon_settings(tmp_path, shutdown_drain_s=30)).serve)
    daemon.behind.bound_s = 10_000
    results: list[dict] = []
    try:
        async with ControlClient(daemon.settings.calld_socket) as client:
            await client.provision("alice")

            async def one(name: str) -> None:
                out = io.StringIO()
                await run_ask(client, {"to": "+15555550142", "ask": "hours", "name": name, "user": "alice"},
                              out=out, err=io.StringIO())
                results.append(json.loads(out.getvalue()))

            async with trio.open_nursery() as n:
                for name in ("Ann", "Ben", "Cy"):
                    n.start_soon(one, name)
                while not (len(daemon.callbook) == 3 and all(h.call.finished for h in daemon.callbook.handles())):
                    await trio.sleep(0.5)
                queued_at = trio.current_time()
                assert all(h.result is None for h in daemon.callbook.handles())  # hung up, their ends queued
                await daemon.shutdown(drain_s=5)
            assert trio.current_time() - queued_at < 60, "the drain finished the queued work, not the bound"
    finally:
        await stop(daemon)
    assert sorted(r["status"] for r in results) == ["answered"] * 3
    for r in results:
        run_dir = daemon.settings.artifacts_dir / r["transcript_ref"].split("/")[0]
        assert json.loads((run_dir / "result.json").read_text())["status"] == "answered"
        assert (run_dir / "call_report.json").is_file()
    ledger = Ledger(daemon.settings.db_path)
    try:
        rows = [ledger.request_for_call(r["run_id"]) for r in results]
        assert all(row is not None and row.status == "done" for row in rows), rows
    finally:
        ledger.close()


def test_the_call_limit_the_figures_set_is_the_default_and_the_one_documented():
    from pathlib import Path

    from calld.settings import DEFAULT_MAX_CALLS

    assert load_settings(_env_file=None).calld_max_calls == DEFAULT_MAX_CALLS
    doc = (Path(__file__).parent.parent / "docs" / "performance.md").read_text()
    assert f"`CALLD_MAX_CALLS` calls ({DEFAULT_MAX_CALLS})" in doc  # the figure docs/performance.md gives for it
