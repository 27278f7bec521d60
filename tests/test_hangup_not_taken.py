"""A call is always ended, and its files say how: calld's one hangup runs off the call's loop (the
confirmation timer fires on time whatever Telnyx does), goes again with the same command id until
Telnyx takes it or the call's status says the line is down, for HANGUP_RETRY_S at most, and then the
result, the report, hangup.json, the log and `calld-ctl show` say the line may still be up.
All on the autojump clock; the stub world plays Telnyx."""

from __future__ import annotations

import json
import logging

import httpx
import trio

from calld.adapters.fixtures import load_fixture
from calld.calls import run_stub_call
from calld.observe.summary import show_text
from calld.runtime.handle import CallHandle
from calld.stub.scenario import SCENARIOS
from calld.stub.world import StubWorld
from tests.stubcall import stub_call, stub_plan

HANGUP = "/actions/hangup"


def hangup_requests(monkeypatch, answer=None) -> list[str]:
    """Every hangup request's command id, in order; `answer(world, n)` may stand in for Telnyx's answer
    to the n-th (an awaitable's result, a Response, an exception raised), None: the world answers."""
    seen: list[str] = []
    original = StubWorld._rest

    async def rest(self, request: httpx.Request) -> httpx.Response:
        if request.url.path.endswith(HANGUP):
            seen.append(json.loads(request.content)["command_id"])
            said = answer(self, len(seen)) if answer is not None else None
            if isinstance(said, httpx.Response):
                return said
            if said is not None:
                return await said
        return await original(self, request)

    monkeypatch.setattr(StubWorld, "_rest", rest)
    return seen


def error_500() -> httpx.Response:
    return httpx.Response(500, json=load_fixture("telnyx", "error_500"))


async def test_a_hangup_request_that_never_answers_does_not_hold_the_call(autojump_clock, tmp_path, monkeypatch):
    """The stub's transport has no timeout: before, the call's loop waited on the request for ever."""
    seen = hangup_requests(monkeypatch, lambda world, n: trio.sleep_forever())
    t0 = trio.current_time()
    run = await stub_call(tmp_path, "hours")
    took_ms = (trio.current_time() - t0) * 1000
    sent = run.effects("hangup")[0]["t_ms"]
    assert run.events("timer.hangup_confirm")[0]["t_ms"] - sent == 5_000  # on time
    record = run.json("hangup.json")
    assert record["sent"] is True and record["line"] == "may_be_up" and record["telnyx"].startswith("error: no answer")
    assert record["tries"] == len(seen) >= 3 and set(seen) == {record["command_id"]}  # one command, sent again
    assert took_ms <= sent + 30_000 + 1_000  # HANGUP_RETRY_S, then the call is done
    assert run.report["duration_ms"] == sent + 5_000  # the call ended at its confirmation timer
    assert run.result.status == "answered" and "may still be up" in run.result.line_may_be_up


async def test_a_stalled_hangup_like_httpx_read_timeouts_is_bounded_by_the_setting(autojump_clock, tmp_path, monkeypatch):
    async def stall(world: StubWorld, n: int) -> httpx.Response:
        await trio.sleep(10.0)  # httpx's read timeout (open_client)
        raise httpx.ReadTimeout("timed out")

    seen = hangup_requests(monkeypatch, stall)
    t0 = trio.current_time()
    run = await stub_call(tmp_path, "hours", hangup_retry_s=12)
    sent = run.effects("hangup")[0]["t_ms"]
    assert run.events("timer.hangup_confirm")[0]["t_ms"] - sent == 5_000  # not 48 500 (4 attempts x 10 s + backoff)
    assert (trio.current_time() - t0) * 1000 <= sent + 12_000 + 1_000
    assert run.json("hangup.json")["line"] == "may_be_up" and len(seen) == 2  # tries at 0 s and 6 s, cut at 5 s each


async def test_a_hangup_answered_500_is_sent_again_with_the_same_command_id_until_taken(autojump_clock, tmp_path, monkeypatch):
    # The first try's four attempts (the client's own resends) all get 500; the next try goes through.
    seen = hangup_requests(monkeypatch, lambda world, n: error_500() if n <= 4 else None)
    run = await stub_call(tmp_path, "hours")
    record = run.json("hangup.json")
    assert (record["line"], record["telnyx"], record["tries"], record["call_status"]) == ("hung_up", "requested", 2, "alive")
    assert len(seen) == 5 and set(seen) == {record["command_id"]}
    assert run.world.ended and run.report["hangup"]["confirmed"] is True  # the line went down; call.hangup came
    assert run.result.status == "answered" and run.result.line_may_be_up is None
    assert len(run.effects("hangup")) == 1  # one hangup effect: the tries are its one command


async def test_a_hangup_telnyx_never_takes_says_the_line_may_be_up_everywhere(autojump_clock, tmp_path, monkeypatch, caplog):
    seen = hangup_requests(monkeypatch, lambda world, n: error_500())
    with caplog.at_level(logging.WARNING, logger="calld"):
        run = await stub_call(tmp_path, "hours")
    record = run.json("hangup.json")
    assert record["line"] == "may_be_up" and record["call_status"] == "alive" and "500" in record["telnyx"]
    assert len(seen) > 4 * (record["tries"] - 1) and record["tries"] >= 3  # each try is the client's 4 attempts
    hangup = run.report["hangup"]
    assert (hangup["line"], hangup["sent"], hangup["tries"]) == ("may_be_up", True, record["tries"])
    assert run.result.status == "answered"  # the verdict stands; the line is the operator's to check
    assert "the line may still be up" in run.result.line_may_be_up.lower() and run.result.call_control_id in run.result.line_may_be_up
    errors = [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR]
    assert any("the line may still be up" in m and run.result.call_control_id in m for m in errors)
    shown = show_text({"result": run.json("result.json"), "report": run.report})
    assert "THE LINE MAY STILL BE UP" in shown


async def test_a_failed_hangup_on_a_call_whose_status_says_ended_stops_there(autojump_clock, tmp_path, monkeypatch):
    def gone(world: StubWorld, n: int) -> httpx.Response:
        world._ended = True  # the line went down meanwhile; Telnyx refuses the command with another code
        body = load_fixture("telnyx", "hangup_already_ended")
        body["errors"][0].update(code="90015", title="Invalid Call Control ID")
        return httpx.Response(422, json=body)

    seen = hangup_requests(monkeypatch, gone)
    run = await stub_call(tmp_path, "hours")
    record = run.json("hangup.json")
    assert (record["line"], record["call_status"], record["tries"], len(seen)) == ("down", "ended", 1, 1)
    assert "(422)" in record["telnyx"] and run.result.line_may_be_up is None


async def test_a_hangup_that_raises_an_unlisted_httpx_error_is_recorded_as_sent(autojump_clock, tmp_path, monkeypatch):
    def broken(world: StubWorld, n: int) -> httpx.Response:
        raise httpx.LocalProtocolError("boom")

    hangup_requests(monkeypatch, broken)
    run = await stub_call(tmp_path, "hours", hangup_retry_s=10)
    record = run.json("hangup.json")
    assert record["sent"] is True and record["via"] == "tool", record
    assert "LocalProtocolError" in record["telnyx"] and "never answered" not in record["detail"]
    assert run.report["hangup"]["telnyx_result"] == record["telnyx"]


async def test_a_hangup_broken_once_goes_through_on_the_clients_resend(autojump_clock, tmp_path, monkeypatch):
    def once(world: StubWorld, n: int) -> None:
        if n == 1:
            raise httpx.CloseError("closing the connection failed")

    seen = hangup_requests(monkeypatch, once)
    run = await stub_call(tmp_path, "hours")
    record = run.json("hangup.json")
    assert (record["telnyx"], record["line"], record["tries"], len(seen)) == ("requested", "hung_up", 1, 2)


async def test_a_hangup_whose_record_was_lost_is_never_called_never_answered(autojump_clock, tmp_path, monkeypatch):
    original = CallHandle._write_json

    async def losing(self, name, data):
        if name == "hangup.json":
            return self.rundir.ref(name)  # lost on the way: the file is never written
        return await original(self, name, data)

    monkeypatch.setattr(CallHandle, "_write_json", losing)
    run = await stub_call(tmp_path, "hours")
    record = run.json("hangup.json")  # written at the end from what the call knows
    assert (record["sent"], record["why"], record["via"]) == (True, "record_missing", "tool"), record
    assert "never answered" not in record["detail"]


async def test_a_call_cut_at_shutdown_reports_the_hangup_it_sent(autojump_clock, tmp_path):
    settings, plan = stub_plan(tmp_path)
    handles: list[CallHandle] = []
    with trio.fail_after(120):
        async with trio.open_nursery() as nursery:
            nursery.start_soon(lambda: run_stub_call(plan, settings, SCENARIOS["hours"], on_handle=handles.append))
            while not handles or handles[0].call.live.kind != "active":
                await trio.sleep(0.1)
            (handle,) = handles
            handle.abandon_is_shutdown = True  # what the daemon's drain does at its end
            nursery.cancel_scope.cancel()
    run_dir = handle.rundir.path
    report = json.loads((run_dir / "call_report.json").read_text())
    record = json.loads((run_dir / "hangup.json").read_text())
    assert handle.result is not None and handle.result.reason == "shutdown"
    assert (record["via"], record["sent"], record["telnyx"]) == ("failure", True, "requested")
    hangup = report["hangup"]
    assert (hangup["via"], hangup["sent"], hangup["confirmed"], hangup["telnyx_result"]) == ("failure", True, False, "requested")
    shown = show_text({"result": json.loads((run_dir / "result.json").read_text()), "report": report})
    assert "via failure" in shown and "calld sent none" not in shown
