"""The daemon in-process: real hypercorn servers on a temporary socket and port, driven by calld-ctl's
client code, on the autojump clock."""

from __future__ import annotations

import io
import json
import os
import signal
from functools import partial
from pathlib import Path

import pytest
import trio

from calld.cli.client import ControlClient, ControlError, DaemonUnreachable
from calld.cli.ctl import EXIT_OK, EXIT_UNREACHABLE, EXIT_USAGE, main as ctl_main, run_ask
from calld.daemon.service import Daemon, claim_socket_path
from calld.ops.errors import OperationalError
from calld.runtime.handle import CallHandle
from calld.runtime.report import ARTIFACT_NAMES
from daemons import daemon_settings, provisioned, serving, stop

ASK = {"to": "+15555550142", "ask": "hours", "name": "Nathan", "user": "alice"}
# These tests place many calls to one number; the rate limits have their own tests (test_policy_daemon).
# pytest-trio takes the clock only from a test's own arguments, so every async test here names
# autojump_clock: the daemon's timers and the stub calls run on virtual time.
@pytest.fixture
async def daemon(tmp_path, nursery):
    async with serving(nursery, daemon_settings(tmp_path, shutdown_drain_s=30, calld_max_calls=50)) as d:
        yield d


@pytest.fixture
async def client(daemon):
    async with provisioned(daemon, "alice") as c:
        yield c


def artifacts_complete(daemon: Daemon, result: dict) -> Path:
    run_dir = daemon.settings.artifacts_dir / result["transcript_ref"].split("/")[0]
    # task.json exists when the model recorded an outcome; a failed call may have none.
    required = [n for n in ARTIFACT_NAMES if n != "task.json" or result["status"] != "failed"]
    missing = [n for n in required if not (run_dir / n).is_file()]
    refs = json.loads((run_dir / "call_report.json").read_text())["refs"]
    assert all((daemon.settings.artifacts_dir / r).is_file() for r in refs.values())
    assert not missing, f"{run_dir.name} lacks {missing}"
    return run_dir


def hangups(run_dir: Path) -> list[str]:
    rows = [json.loads(line) for line in (run_dir / "events.jsonl").read_text().splitlines()]
    return [r["effect"]["via"] for r in rows if r.get("effect", {}).get("kind") == "hangup"]


async def test_one_ask_end_to_end_with_progress(client, daemon, autojump_clock):
    out, err = io.StringIO(), io.StringIO()
    code = await run_ask(client, ASK, out=out, err=err)
    assert code == EXIT_OK
    result = json.loads(out.getvalue())
    assert result["status"] == "answered" and "9 AM to 5 PM" in result["answer_text"]
    phases = [line.split(maxsplit=1)[1] for line in err.getvalue().splitlines()]
    for expected in ("dialing", "answered", "session live", "asking", "answer heard", "farewell", "hanging up", "hung up"):
        assert expected in phases, f"no {expected!r} progress line in {phases}"
    assert phases.index("dialing") < phases.index("answered") < phases.index("answer heard") < phases.index("hung up")
    run_dir = artifacts_complete(daemon, result)
    assert hangups(run_dir) == ["tool"]
    report = await client.show(result["run_id"])
    assert report["status"] == "answered" and report["call_control_id"] == result["call_control_id"]
    assert daemon.lookup.calls() == []


@pytest.mark.parametrize(("scenario", "recorded"), [
    ("voicemail", "recording heard: listening to its end, saying nothing"),
    ("voicemail_hours", "recording heard: listening to its end, saying nothing"),
    ("decline", "they declined"),
])
async def test_progress_says_what_the_record_was(client, daemon, autojump_clock, scenario, recorded):
    err = io.StringIO()
    out = io.StringIO()
    await run_ask(client, ASK | {"scenario": scenario}, out=out, err=err)
    assert json.loads(out.getvalue())["status"] == {"decline": "declined", "voicemail_hours": "answered"}.get(scenario, scenario)
    phases = [line.split(maxsplit=1)[1] for line in err.getvalue().splitlines()]
    assert recorded in phases and "answer heard" not in phases and ("farewell" in phases) is (scenario == "decline"), \
        " | ".join(phases)


def test_each_ending_has_its_own_progress_words():
    from calld.daemon.progress import phases

    def said(track, new, recorded=None, via=None):
        return phases({"changed": {track: ["x", new]}}, recorded, via)

    assert said("conversation", "concluded", "booked") == ["booking confirmed"]
    assert said("conversation", "concluded", "unclear") == ["outcome recorded"]
    assert said("hangup", "farewell", via="answer_heard") == ["answer heard; saying goodbye"]
    assert said("hangup", "farewell", via="tool") == ["farewell"]
    assert said("hangup", "marked", via="voicemail") == ["end of the call marked; waiting until the line has played everything sent"]
    assert said("hangup", "marked", via="tool") == ["goodbye sent; waiting until it has played"]


@pytest.mark.timeout(1800)  # fifty whole calls at once: about a minute alone, several on a loaded machine
async def test_fifty_concurrent_asks_all_answered(client, daemon, autojump_clock):
    results: list[dict] = []

    async def one(i: int) -> None:
        out = io.StringIO()
        code = await run_ask(client, {**ASK, "name": f"Caller{chr(65 + i % 26)}"}, out=out, err=io.StringIO())
        assert code == EXIT_OK
        results.append(json.loads(out.getvalue()))

    async with trio.open_nursery() as n:
        for i in range(50):
            n.start_soon(one, i)
        await trio.sleep(5)
        rows = await client.calls()
        assert len(rows) == 50  # all in flight at once
        # whom each is with, for whom, and for how long: what an operator looks for first
        assert {(r["to"], r["user"]) for r in rows} == {(ASK["to"], ASK["user"])}
        assert all(4.0 <= r["age_s"] <= 5.0 for r in rows), sorted(r["age_s"] for r in rows)
    assert len(results) == 50 and {r["status"] for r in results} == {"answered"}
    assert len({r["call_control_id"] for r in results}) == 50
    for r in results:
        assert hangups(artifacts_complete(daemon, r)) == ["tool"]


async def test_an_exception_in_one_call_leaves_the_others_answered(client, daemon, monkeypatch, autojump_clock):
    original = CallHandle._perform
    victim: list[str] = []

    async def perform(self, effect):
        if self.plan.first_name == "Victim" and effect.kind == "live.commentary":  # the opener: mid-call, before any verdict
            victim.append(self.plan.run_id)
            raise RuntimeError("injected fault")
        return await original(self, effect)

    monkeypatch.setattr(CallHandle, "_perform", perform)
    results: dict[str, dict] = {}

    async def one(name: str) -> None:
        out = io.StringIO()
        await run_ask(client, {**ASK, "name": name}, out=out, err=io.StringIO())
        results[name] = json.loads(out.getvalue())

    async with trio.open_nursery() as n:
        for name in ("Alpha", "Victim", "Gamma"):
            n.start_soon(one, name)
    assert victim
    assert results["Alpha"]["status"] == results["Gamma"]["status"] == "answered"
    failed = results["Victim"]
    assert failed["status"] == "failed" and failed["reason"] == "internal" and "injected fault" in failed["detail"]
    assert hangups(artifacts_complete(daemon, failed)) == ["failure"]
    # The daemon still serves.
    out = io.StringIO()
    assert await run_ask(client, ASK, out=out, err=io.StringIO()) == EXIT_OK


async def test_sigterm_with_calls_in_flight_hangs_each_up_once(client, daemon, autojump_clock):
    results: list[dict] = []

    async def one(i: int) -> None:
        out = io.StringIO()
        await run_ask(client, {**ASK, "name": f"Late{chr(65 + i)}"}, out=out, err=io.StringIO())
        results.append(json.loads(out.getvalue()))

    async with trio.open_nursery() as n:
        for i in range(6):
            n.start_soon(one, i)
        await trio.sleep(4)  # every call is past pickup, mid-conversation
        assert len(daemon.lookup.calls()) == 6
        watcher_done = trio.Event()

        async def watch() -> None:
            await daemon.watch_signals()
            watcher_done.set()

        n.start_soon(watch)
        await trio.sleep(0.1)
        os.kill(os.getpid(), signal.SIGTERM)
        await trio.sleep(0.1)
        assert not daemon.accepting
        with pytest.raises(ControlError) as refused:
            async for _ in client.ask(ASK):
                pass
        assert refused.value.status == 503
        await trio.sleep(1)
        os.kill(os.getpid(), signal.SIGTERM)  # a second signal cuts the drain short
        await watcher_done.wait()
    assert len(results) == 6
    for r in results:
        assert r["status"] in ("failed", "answered")
        assert len(hangups(artifacts_complete(daemon, r))) == 1


async def test_a_malformed_request_is_refused_and_the_next_served(client, daemon, autojump_clock):
    status, body = await client.raw("POST", "/v1/ask", b"{not json")
    assert status == 400 and "not JSON" in body["error"]
    status, body = await client.raw("POST", "/v1/ask", b"[1, 2]")
    assert status == 400 and "JSON object" in body["error"]
    status, body = await client.raw("POST", "/v1/ask", b"[" * 5000 + b"]" * 5000)
    assert status == 400 and "not JSON" in body["error"]
    status, body = await client.raw("POST", "/v1/ask", json.dumps({**ASK, "to": "555-0142"}).encode())
    assert status == 400 and "E.164" in body["error"]
    status, body = await client.raw("POST", "/v1/ask", json.dumps({**ASK, "ask": "stock"}).encode())
    assert status == 400 and body["error"] == "`ask` stock needs `item` (say what to ask about)"  # JSON fields, not flags
    status, body = await client.raw("POST", "/v1/ask", json.dumps({**ASK, "ask": "weather"}).encode())
    assert status == 400 and "ask" in body["error"]
    status, body = await client.raw("POST", "/v1/ask", json.dumps({**ASK, "notes": "x" * 20000}).encode())
    assert status == 413
    status, body = await client.raw("POST", "/v1/nope", b"{}")
    assert status == 404 and "no such control route" in body["error"]
    assert not list(daemon.settings.artifacts_dir.glob("*")), "a refused request wrote artifacts"
    out = io.StringIO()
    assert await run_ask(client, ASK, out=out, err=io.StringIO()) == EXIT_OK


async def test_unknown_user_says_how_to_fix_it_and_writes_nothing(client, daemon, autojump_clock):
    with pytest.raises(ControlError) as refused:
        async for _ in client.ask({**ASK, "user": "bob"}):
            pass
    assert refused.value.status == 404
    assert "calld-ctl did provision --user bob" in refused.value.message
    assert not daemon.settings.artifacts_dir.exists() or not list(daemon.settings.artifacts_dir.iterdir())


async def test_ask_or_book_with_no_user_given_says_which_user_it_was_and_how_to_name_yours(client, daemon, capsys,
                                                                                           autojump_clock):
    from calld.cli.ctl import build_parser

    sock = str(daemon.settings.calld_socket)
    for verb, flags in (("ask", ["--ask", "hours"]), ("book", ["--party", "2", "--time", "tomorrow 7pm"])):
        args = build_parser().parse_args(["--socket", sock, verb, "--to", "+15555550142", "--name", "Nathan", *flags])
        with pytest.raises(ControlError) as refused:
            await args.afunc(args)
        assert refused.value.message == ("no --user given, so calld calls as user 'default': user 'default' has no Telnyx "
                                         "number yet; run: calld-ctl did provision --user default; or give --user with a "
                                         "user `calld-ctl did list` shows")
        args = build_parser().parse_args(["--socket", sock, verb, "--to", "+15555550142", "--name", "Nathan", *flags,
                                          "--user", "bob"])
        with pytest.raises(ControlError) as refused:  # a --user given is the one meant: no word about the default
            await args.afunc(args)
        assert "--user" not in refused.value.message.replace("--user bob", "")
    assert not daemon.settings.artifacts_dir.exists() or not list(daemon.settings.artifacts_dir.iterdir())


async def test_the_ready_line_names_every_address_the_daemon_took(tmp_path, nursery, caplog, autojump_clock):
    # --bind takes two ports (the media listener the next one): a newcomer choosing free ports sees both.
    caplog.set_level("INFO", logger="calld.daemon")
    d: Daemon = await nursery.start(Daemon(daemon_settings(tmp_path)).serve)
    ready = [r.getMessage() for r in caplog.records if r.getMessage().startswith("ready:")]
    assert ready == [f"ready: public {d.public_url}, media ws://{d.media_bound}, control unix:{d.settings.calld_socket}, "
                     f"mode stub"]
    await stop(d)


async def test_did_provision_is_idempotent(client, autojump_clock):
    again = await client.provision("alice")
    rows = await client.dids()
    assert [r["user"] for r in rows] == ["alice"] and rows[0]["did"] == again["did"]


def test_stale_socket_is_replaced_and_a_live_one_is_not(tmp_path):
    import socket as so

    path = tmp_path / "ctl.sock"
    stale = so.socket(so.AF_UNIX, so.SOCK_STREAM)
    stale.bind(str(path))
    stale.close()  # the file stays; nobody listens
    claim_socket_path(path)
    assert not path.exists()
    live = so.socket(so.AF_UNIX, so.SOCK_STREAM)
    live.bind(str(path))
    live.listen(1)
    try:
        with pytest.raises(OperationalError, match="already serving"):
            claim_socket_path(path)
        assert path.exists()
    finally:
        live.close()


async def test_no_daemon_is_unreachable_with_the_command_to_start_one(tmp_path, autojump_clock):
    async with ControlClient(tmp_path / "nobody.sock") as c:
        with pytest.raises(DaemonUnreachable, match="calld serve --socket"):
            await c.calls()


def test_ctl_exit_codes(tmp_path, capsys):
    sock = str(tmp_path / "nobody.sock")
    assert ctl_main(["--socket", sock, "calls"]) == EXIT_UNREACHABLE
    assert "no calld is listening" in capsys.readouterr().err
    assert ctl_main(["--socket", sock, "ask", "--to", "12345", "--ask", "hours", "--name", "Nathan"]) == EXIT_USAGE
    assert "--to" in capsys.readouterr().err
    assert ctl_main(["--socket", sock, "ask", "--to", "+15555550142", "--ask", "aisle", "--name", "Nathan"]) == EXIT_USAGE
    assert "needs --item" in capsys.readouterr().err
    for argv, said in ((["--party", "0", "--time", "Friday 7pm"], "calld-ctl: --party must be a whole number"),
                       (["--party", "2", "--time", ""], "calld-ctl: --time is empty")):
        assert ctl_main(["--socket", sock, "book", "--to", "+15555550142", "--name", "N", *argv]) == EXIT_USAGE
        assert capsys.readouterr().err.startswith(said)  # the flag once, not "--party: --party must ..."
    with pytest.raises(SystemExit) as usage:
        ctl_main(["--socket", sock, "ask", "--to", "+15555550142", "--ask", "weather", "--name", "N"])
    assert usage.value.code == EXIT_USAGE


def test_socket_and_verbose_may_follow_the_command_as_calld_serve_takes_them(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("CALLD_SOCKET", str(tmp_path / "from-env.sock"))
    sock = str(tmp_path / "given.sock")
    for argv in (["calls", "--socket", sock], ["did", "list", "-v", "--socket", sock], ["did", "--socket", sock, "list"],
                 ["ask", "--to", "+15555550142", "--ask", "hours", "--name", "Nathan", "--user", "alice", "--socket", sock]):
        assert ctl_main(argv) == EXIT_UNREACHABLE, argv
        assert f"no calld is listening on {sock}." in capsys.readouterr().err  # the socket given, not CALLD_SOCKET
    assert ctl_main(["--socket", sock, "calls"]) == EXIT_UNREACHABLE  # before the command, as before
    assert f"no calld is listening on {sock}." in capsys.readouterr().err
    assert ctl_main(["calls"]) == EXIT_UNREACHABLE  # given nowhere: CALLD_SOCKET
    assert "from-env.sock" in capsys.readouterr().err


def test_the_common_flags_after_a_command_come_from_a_parent_parser_not_argparse_internals(tmp_path, capsys):
    import inspect

    from calld.cli import ctl

    source = inspect.getsource(ctl)
    assert "._actions" not in source and "_SubParsersAction" not in source  # private to argparse: may change
    sock = str(tmp_path / "given.sock")
    for argv in (["messaging", "list", "--socket", sock], ["optout", "list", "-v", "--socket", sock]):
        assert ctl_main(argv) == EXIT_UNREACHABLE, argv  # the commands other modules add take them too
        assert f"no calld is listening on {sock}." in capsys.readouterr().err


def test_a_user_id_typed_with_capitals_suggests_the_lowercase_one_and_takes_neither(tmp_path, capsys):
    sock = str(tmp_path / "nobody.sock")  # refused before any daemon is asked
    for argv in (["did", "provision", "--user", "Alice"], ["ask", "--to", "+15555550142", "--ask", "hours", "--name", "N",
                                                          "--user", "Alice"]):
        assert ctl_main(["--socket", sock, *argv]) == EXIT_USAGE
        assert capsys.readouterr().err.rstrip().endswith("is not a user id (lowercase letters, digits, '.', '_' or '-', "
                                                          "starting with a letter or digit, at most 64); did you mean 'alice'?")
    assert ctl_main(["--socket", sock, "did", "provision", "--user", "Bad User!"]) == EXIT_USAGE
    assert "did you mean" not in capsys.readouterr().err  # no valid id is near: no guess


async def test_a_repeated_request_id_dials_once(client, daemon, dials, autojump_clock):
    body = {**ASK, "request_id": "order-42"}
    out = io.StringIO()
    assert await run_ask(client, body, out=out, err=io.StringIO()) == EXIT_OK
    first = json.loads(out.getvalue())
    again = [item async for item in client.ask(body)]
    assert again == [{"result": first, "repeat": True}]
    assert len(dials) == 1


async def test_the_claim_is_on_disk_before_the_dial_and_the_result_before_it_is_told(client, daemon, dials, autojump_clock,
                                                                                    monkeypatch):
    order: list[str] = []
    flush = daemon._ledger.sync.flush_to_disk
    monkeypatch.setattr(daemon._ledger.sync, "flush_to_disk", lambda: (order.append(f"flush after {len(dials)} dials"), flush()))
    out = io.StringIO()
    assert await run_ask(client, {**ASK, "request_id": "durable-1"}, out=out, err=io.StringIO()) == EXIT_OK
    assert order == ["flush after 0 dials", "flush after 1 dials"]


async def test_under_calld_serve_the_ledgers_fsync_runs_off_the_event_loop(tmp_path, nursery, monkeypatch):
    import threading

    from calld.runtime.disk import off_the_loop

    where: list[str] = []
    d: Daemon = await nursery.start(Daemon(daemon_settings(tmp_path / "serve"), disk=off_the_loop).serve)
    monkeypatch.setattr(d._ledger.sync, "flush_to_disk", lambda: where.append(threading.current_thread().name))
    await d._ledger_sync()
    await d.shutdown(drain_s=0)
    assert where and where[0] != threading.main_thread().name


@pytest.mark.timeout(1800)  # calld serve in a process, calls on the wall clock: the slowest test (about 90 s alone)
async def test_under_calld_serve_no_full_collection_runs_during_a_call_and_one_runs_when_the_last_ends(
        tmp_path, autojump_clock):
    import gc

    saved = gc.get_threshold()
    walks: list[tuple[int, int]] = []  # (generation, calls in flight)
    d = Daemon(daemon_settings(tmp_path / "serve"), own_collector=True)

    def note(phase: str, info: dict[str, int]) -> None:
        if phase == "stop":
            walks.append((info["generation"], len(d.callbook)))

    try:
        async with trio.open_nursery() as serving:
            await serving.start(d.serve)
            gc.callbacks.append(note)
            assert gc.get_threshold()[2] > 10**6  # CPython starts no full walk of its own
            async with ControlClient(d.settings.calld_socket) as c:
                await c.provision("alice")
                assert await run_ask(c, ASK, out=io.StringIO(), err=io.StringIO()) == EXIT_OK
            assert [w for w in walks if w[0] == 2] == [(2, 0)]  # one full walk, once no call was in flight
            assert d.full_collections.taken == 1
            await d.shutdown(drain_s=0)
        assert gc.get_threshold() == saved  # given back as it was, once the daemon is gone
    finally:
        if note in gc.callbacks:
            gc.callbacks.remove(note)
        gc.set_threshold(*saved)
        gc.unfreeze()


async def test_concurrent_repeats_attach_to_the_one_call(client, daemon, dials, autojump_clock):
    body = {**ASK, "request_id": "order-43"}
    outs = [io.StringIO() for _ in range(3)]
    async with trio.open_nursery() as n:
        for out in outs:
            n.start_soon(partial(run_ask, client, body, out=out, err=io.StringIO()))
    results = [json.loads(o.getvalue()) for o in outs]
    assert results[0] == results[1] == results[2] and results[0]["status"] == "answered"
    assert len(dials) == 1


async def test_a_request_id_reused_for_another_request_is_refused(client, daemon, dials, autojump_clock):
    out = io.StringIO()
    await run_ask(client, {**ASK, "request_id": "order-44"}, out=out, err=io.StringIO())
    with pytest.raises(ControlError) as refused:
        async for _ in client.ask({**ASK, "request_id": "order-44", "ask": "aisle", "item": "charcoal"}):
            pass
    assert refused.value.status == 409 and "--request-id" in refused.value.message
    assert len(dials) == 1


async def test_two_concurrent_provisions_order_one_number(client, daemon, autojump_clock):
    async with trio.open_nursery() as n:
        rows: list[dict] = []

        async def provision() -> None:
            rows.append(await client.provision("carol"))

        n.start_soon(provision)
        n.start_soon(provision)
    assert rows[0]["did"] == rows[1]["did"] and rows[0]["status"] == "active"
    orders = [r for r in daemon.stub_numbers.seen if r.method == "POST" and r.path == "/v2/number_orders"]
    refs = sorted(r.body["customer_reference"] for r in orders)
    assert refs == ["calld:user:alice", "calld:user:carol"]  # one order each, at the transport


async def test_requests_left_in_flight_by_a_dead_daemon_are_finished_failed(tmp_path, nursery, autojump_clock):
    from calld.domain.ids import RunId
    from calld.ledger import Ledger

    settings = daemon_settings(tmp_path, open_limits=False)
    ledger = Ledger(settings.db_path)
    ledger.claim_request("order-9", user_id="alice", kind="ask", params={"x": 1}, run_id=RunId.new())
    ledger.close()
    d: Daemon = await nursery.start(Daemon(settings).serve)
    try:
        ledger = Ledger(settings.db_path)
        row = ledger.request("order-9")
        ledger.close()
        assert row.status == "done" and row.result["status"] == "failed"
        assert "stopped" in row.result["detail"]
    finally:
        await d.shutdown(drain_s=0)


async def test_a_booking_through_the_daemon(client, daemon, autojump_clock):
    out, err = io.StringIO(), io.StringIO()
    body = {"to": "+15555550142", "name": "Nathan", "party": 2, "time": "Friday 7pm", "notes": "outdoor if possible", "user": "alice"}
    code = await run_ask(client, body, out=out, err=err, book=True)
    result = json.loads(out.getvalue())
    assert code == EXIT_OK and result["status"] == "booked"
    assert result["confirmation_text"]
    assert hangups(artifacts_complete(daemon, result)) == ["tool"]


def test_ctl_book_refuses_bad_input(tmp_path, capsys):
    sock = str(tmp_path / "nobody.sock")
    base = ["--socket", sock, "book", "--to", "+15555550142", "--name", "Nathan", "--time", "Friday 7pm"]
    for party in ("0", "-1", "2.5", "500"):
        assert ctl_main([*base, "--party", party]) == EXIT_USAGE
        assert "--party" in capsys.readouterr().err
    assert ctl_main([*base[:-2], "--time", " ", "--party", "2"]) == EXIT_USAGE
    assert "--time" in capsys.readouterr().err
    assert ctl_main([*base, "--party", "2", "--window", "-5"]) == EXIT_USAGE
    assert "--window" in capsys.readouterr().err


async def test_past_the_call_limit_a_new_request_is_refused_and_nothing_written(client, daemon, dials, autojump_clock):
    daemon.settings = daemon.settings.model_copy(update={"calld_max_calls": 2})
    outs = {rid: io.StringIO() for rid in ("cap-1", "cap-2")}
    async with trio.open_nursery() as n:
        for rid, out in outs.items():
            n.start_soon(partial(run_ask, client, {**ASK, "request_id": rid}, out=out, err=io.StringIO()))
        await trio.sleep(5)
        assert len(await client.calls()) == 2
        with pytest.raises(ControlError) as refused:
            async for _ in client.ask({**ASK, "request_id": "cap-3"}):
                pass
        assert refused.value.status == 503 and "CALLD_MAX_CALLS" in refused.value.message
        assert daemon._ledger.sync.request("cap-3") is None  # noqa: SLF001 - nothing written
        repeat = io.StringIO()  # a repeat of a call on the line still attaches to it
        n.start_soon(partial(run_ask, client, {**ASK, "request_id": "cap-1"}, out=repeat, err=io.StringIO()))
    assert len(dials) == 2
    assert json.loads(repeat.getvalue()) == json.loads(outs["cap-1"].getvalue())
    out = io.StringIO()  # once they have finished, there is room again
    assert await run_ask(client, {**ASK, "request_id": "cap-3"}, out=out, err=io.StringIO()) == EXIT_OK
    assert len(dials) == 3


async def test_a_request_dropped_while_its_claim_is_synced_still_places_its_one_call(client, daemon, dials, autojump_clock):
    """The claim's fsync is shared with other calls for a moment (calld.daemon.groupsync); a client
    that goes away meanwhile must not leave the claim without its call (a repeat would wait forever)."""
    from calld.domain.requests import AskRequest

    request = AskRequest(**{**ASK, "request_id": "dropped-1"})
    with trio.move_on_after(0.01):  # inside the 50 ms window
        async for _ in daemon.ask(request):
            break
    out = io.StringIO()
    with trio.fail_after(600):  # virtual: a claim left without its call would make the repeat wait forever
        assert await run_ask(client, {**ASK, "request_id": "dropped-1"}, out=out, err=io.StringIO()) == EXIT_OK
    assert json.loads(out.getvalue())["status"] == "answered"
    assert len(dials) == 1
