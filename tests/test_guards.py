"""Behaviours whose old tests passed with the behaviour removed, each guarded here by a test that fails
without it: the redacted report, configured timers, a far-party hangup during the drain, SIGTERM's
drain and its cut, and the media socket's token and auth header with a call in flight."""

from __future__ import annotations

import io
import json
import os
import signal

import pytest
import trio
from trio_websocket import ConnectionRejected, wrap_client_stream

from calld.cli.client import ControlClient
from calld.cli.ctl import run_ask
from calld.daemon.service import Daemon
from calld.runtime.rundir import artifact_slug
from calld.settings import load_settings
from calld.stub.world import StubWorld
from tests.stubcall import stub_call, variant

ASK = {"to": "+15555550142", "ask": "hours", "name": "Nathan", "user": "alice"}


# -- the redacted report --------------------------------------------------------------------------------


async def test_the_redacted_report_gives_away_no_name_number_or_call_id(autojump_clock, tmp_path):
    run = await stub_call(tmp_path)
    report = run.report
    text = (run.dir / "call_report.redacted.json").read_text()
    redacted = json.loads(text)
    ccid = report["call_control_id"]
    for secret in (ccid, artifact_slug(ccid), report["first_name"], report["to"], report["from_did"]):
        assert secret not in text, f"{secret!r} is in the redacted report"
    assert set(redacted["first_name"]) == {"chars", "hmac"} and redacted["first_name"]["chars"] == len(report["first_name"])
    assert redacted["call_control_id"].startswith("sha256:") and redacted["artifact_prefix"] == redacted["call_control_id"]
    assert all(ref.startswith(redacted["artifact_prefix"] + "/") for ref in redacted["refs"].values())
    assert set(redacted["refs"]) == set(report["refs"])
    to = report["to"]  # +15555550142: the country code and the last two digits, one star per digit between
    assert redacted["to"] == to[:2] + "*" * (len(to) - 4) + to[-2:] and len(redacted["to"]) == len(to)
    assert redacted["answer_text"] == report["answer_text"]  # the answer is what is shared


# -- timers as configured ----------------------------------------------------------------------------------


async def test_the_configured_stall_s_is_the_one_applied(autojump_clock, tmp_path):
    run = await stub_call(tmp_path, "stall", stall_s=7)
    stalls = run.events("timer.stall")
    assert len(stalls) == 2 and 7_000 <= stalls[1]["t_ms"] - stalls[0]["t_ms"] < 10_000  # the default is 20 s
    assert [h["effect"]["via"] for h in run.effects("hangup")] == ["stall"]


async def test_the_configured_max_call_s_is_the_one_applied(autojump_clock, tmp_path):
    run = await stub_call(tmp_path, "late_answer", max_call_s=6)
    accepted = next(r for r in run.rows() if r.get("changed", {}).get("dial") == ["requested", "accepted"])
    cap = run.events("timer.call_cap")
    assert len(cap) == 1 and cap[0]["t_ms"] - accepted["t_ms"] == 6_000
    assert [h["effect"]["via"] for h in run.effects("hangup")] == ["time_limit"]


# -- a far-party hangup while waiting for the final mark's echo --------------------------------------------


async def test_a_far_party_hangup_during_the_drain_ends_the_call_at_once(autojump_clock, tmp_path, monkeypatch):
    original = StubWorld._echo

    async def hang_up_instead(self, peer, stream_id, name):
        # The final mark is reached on the line, and the business hangs up instead of it echoing.
        self._nursery.start_soon(self._far_party_hangup, 0.5)
        await original(self, peer, stream_id, name)

    monkeypatch.setattr(StubWorld, "_echo", hang_up_instead)
    run = await stub_call(tmp_path, variant("hours", echo_marks=False))
    assert run.report["hangup"]["via"] == "far_party"
    assert run.effects("hangup") == [] and run.world.hangup_requests == []  # no hangup sent to a dead call
    mark = run.effects("media.mark")[-1]
    assert run.report["duration_ms"] - mark["t_ms"] < 2_000  # not 10 s later via drain_timeout
    assert run.result.status == "answered"


# -- SIGTERM: a drain lets calls finish; a second SIGTERM cuts it short ---------------------------------------------


@pytest.fixture
async def daemon(tmp_path, nursery):
    settings = load_settings(calld_state_dir=tmp_path / "state", calld_socket=tmp_path / "ctl.sock",
                             calld_bind="127.0.0.1:0", shutdown_drain_s=30, _env_file=None,
                             calld_calls_per_number_per_day=1000, calld_calls_per_user_per_hour=1000, calld_calls_per_number_at_once=1000)
    d: Daemon = await nursery.start(Daemon(settings).serve)
    yield d
    if d.accepting:
        await d.shutdown(drain_s=0)


async def calls_then_sigterm(daemon: Daemon, *, second_after_s: float | None) -> tuple[list[dict], float]:
    results: list[dict] = []
    async with ControlClient(daemon.settings.calld_socket) as client:
        await client.provision("alice")

        async def one(i: int) -> None:
            out = io.StringIO()
            await run_ask(client, {**ASK, "name": f"Late{chr(65 + i)}"}, out=out, err=io.StringIO())
            results.append(json.loads(out.getvalue()))

        async with trio.open_nursery() as n:
            for i in range(3):
                n.start_soon(one, i)
            await trio.sleep(4)  # mid-conversation: each needs about 12 s more to finish cleanly
            stopped = trio.Event()

            async def watch() -> None:
                await daemon.watch_signals()
                stopped.set()

            n.start_soon(watch)
            await trio.sleep(0.1)
            t0 = trio.current_time()
            os.kill(os.getpid(), signal.SIGTERM)
            if second_after_s is not None:
                await trio.sleep(second_after_s)
                os.kill(os.getpid(), signal.SIGTERM)
            await stopped.wait()
            took = trio.current_time() - t0
    return results, took


async def test_sigterm_lets_calls_in_flight_finish_within_the_drain(daemon, autojump_clock):
    results, took = await calls_then_sigterm(daemon, second_after_s=None)
    assert [r["status"] for r in results] == ["answered"] * 3  # finished cleanly, not cut
    assert 5 < took < daemon.settings.shutdown_drain_s


async def test_a_second_sigterm_cuts_the_drain_short(daemon, autojump_clock):
    results, took = await calls_then_sigterm(daemon, second_after_s=1.0)
    assert [r["status"] for r in results] == ["failed"] * 3
    assert all("shut down" in r["detail"] for r in results)
    assert [r["reason"] for r in results] == ["shutdown"] * 3  # a reason of its own, not calld's failure (internal)
    assert took < 3  # not the calls' natural end (about 12 s later)


# -- the media socket with a call in flight -------------------------------------------------------------------


async def media_handshake(host: str, port: int, token: str, headers: dict[str, str]) -> list[int]:
    """The HTTP statuses a media WebSocket handshake was refused with ([] if it was accepted)."""
    stream = await trio.open_tcp_stream(host, port)  # ours to close: trio-websocket leaks it on a rejection
    statuses: list[int] = []
    try:
        async with trio.open_nursery() as n:
            ws = await wrap_client_stream(n, stream, host, f"/telnyx/media/{token}",
                                          extra_headers=[(k.encode(), v.encode()) for k, v in headers.items()])
            await ws.aclose()
    except* ConnectionRejected as group:
        statuses = [e.status_code for e in group.exceptions if isinstance(e, ConnectionRejected)]
        statuses += [x.status_code for e in group.exceptions if isinstance(e, BaseExceptionGroup) for x in e.exceptions]
    finally:
        await trio.aclose_forcefully(stream)
    return statuses


async def test_a_rogue_media_socket_cannot_take_over_a_call_in_flight(daemon, autojump_clock):
    results: list[dict] = []
    async with ControlClient(daemon.settings.calld_socket) as client:
        await client.provision("alice")

        async def the_call() -> None:
            out = io.StringIO()
            await run_ask(client, ASK, out=out, err=io.StringIO())
            results.append(json.loads(out.getvalue()))

        async with trio.open_nursery() as n:
            n.start_soon(the_call)
            await trio.sleep(3)
            (handle,) = daemon.callbook.handles()
            host, port = daemon.media_bound.rsplit(":", 1)
            attempts = {
                "wrong token": ("not-the-token", {"x-telnyx-streaming-auth-token": handle.stream_auth_token}),
                "no auth header": (handle.media_token, {}),
                "wrong auth header": (handle.media_token, {"x-telnyx-streaming-auth-token": "guess"}),
            }
            for what, (token, headers) in attempts.items():
                assert await media_handshake(host, int(port), token, headers) == [403], what
    assert results[0]["status"] == "answered"


async def test_a_second_media_socket_with_the_right_token_is_refused_logged_and_counted(daemon, caplog, autojump_clock):
    results: list[dict] = []
    async with ControlClient(daemon.settings.calld_socket) as client:
        await client.provision("alice")

        async def the_call() -> None:
            out = io.StringIO()
            await run_ask(client, ASK, out=out, err=io.StringIO())
            results.append(json.loads(out.getvalue()))

        async with trio.open_nursery() as n:
            n.start_soon(the_call)
            await trio.sleep(3)  # on the line: the call has its media stream
            (handle,) = daemon.callbook.handles()
            host, port = daemon.media_bound.rsplit(":", 1)
            right = {"x-telnyx-streaming-auth-token": handle.stream_auth_token}
            assert await media_handshake(host, int(port), handle.media_token, right) == [409]
        metrics = await client.metrics()
    assert results[0]["status"] == "answered"  # the call kept its own stream
    assert f"{handle.plan.run_id} media socket refused: a second connection" in caplog.text
    assert 'calld_media_sockets_refused_total{reason="second_connection"} 1.0' in metrics


# -- the disclosure, and verify's own yardsticks -------------------------------------------------------------


async def test_the_instructions_say_the_first_words_disclose_whatever_the_opener(autojump_clock, tmp_path):
    from tests.stubcall import stub_book

    # The model must disclose first even if it never speaks the opener as given: the session's
    # instructions say so on their own, for a quick ask and for a booking.
    for run in (await stub_call(tmp_path / "ask"), await stub_book(tmp_path / "book")):
        instructions = run.json("session_start.json")["session"]["instructions"]
        assert "first words" in instructions
        assert "say that you are an automated assistant calling on behalf of" in instructions
        assert '"Nathan"' in instructions  # the name itself comes as data (the user's words, quoted JSON)


async def test_verify_takes_the_disclosure_wording_from_the_specification(autojump_clock, tmp_path, monkeypatch):
    import calld.core.plan as plan
    from calld.ledger import Ledger
    from calld.verify import VerifyInput, run_checks

    monkeypatch.setattr(plan, "disclosure_line", lambda name: f"Hi, this is {name}'s helper.")  # the code drifts
    run = await stub_call(tmp_path)
    assert "automated assistant" not in run.json("transcript.json")["agent_text"]
    ledger = Ledger(run.settings.db_path)
    try:
        report = run_checks(VerifyInput(user="tester"), run.settings, ledger, run.dir)
    finally:
        ledger.close()
    failed = {c.name: c.evidence for c in report.checks if not c.passed}
    assert "disclosure_first" in failed and "automated assistant" in failed["disclosure_first"]


async def test_verify_checks_the_configured_trail(autojump_clock, tmp_path):
    from calld.ledger import Ledger
    from calld.verify import VerifyInput, run_checks

    run = await stub_call(tmp_path)  # hung up after the default 0.4 s trail
    ledger = Ledger(run.settings.db_path)
    try:
        as_run = run_checks(VerifyInput(user="tester"), run.settings, ledger, run.dir)
        stricter = run_checks(VerifyInput(user="tester"), run.settings.model_copy(update={"trail_s": 1.0}), ledger, run.dir)
    finally:
        ledger.close()
    assert as_run.passed
    failed = {c.name: c.evidence for c in stricter.checks if not c.passed}
    assert "1.0 s trail" in failed.get("clean_hangup", "")


def test_tests_ignore_the_developers_env(tmp_path, monkeypatch):
    (tmp_path / ".env").write_text("STALL_S=99\nCALLD_MAX_CALLS=1\n")
    monkeypatch.chdir(tmp_path)
    settings = load_settings()
    assert settings.stall_s == 20.0 and settings.calld_max_calls == 50
