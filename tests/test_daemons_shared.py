"""Two daemons on one PostgreSQL ledger (issue 38): what one daemon writes binds the other.

Each daemon has its own state directory, socket and instance name, and both share a fresh database
on the tests' PostgreSQL server (tests/pg.py): opt-outs, rate limits, request ids, the schedule and
the leases of crashed daemons are the ledger's, so no daemon can dial past another's word.

The clock jumps only after 10 ms with every task idle: a ledger round trip runs in a worker thread,
and the plain autojump clock would take that wait for idleness and fire the calls' timeouts early.
"""

from __future__ import annotations

import io
import json
import socket
from functools import partial
from datetime import UTC, datetime

import httpx
import pytest
import trio
import trio.testing

from calld.cli.client import ControlClient, ControlError
from calld.cli.ctl import EXIT_OK, EXIT_UNAVAILABLE, main, run_ask
from calld.daemon.errors import DaemonError
from calld.daemon.service import Daemon
from calld.ledger import Ledger
from calld.policy.clock import trio_clock
from daemons import daemon_settings
from tests.pg import Cluster, _bin_dir

pytestmark = pytest.mark.postgres

NY = "+12125550142"  # fiction exchange 555-01xx: rings no one
CHI = "+13125550142"
NOON = datetime(2026, 6, 10, 16, 0, tzinfo=UTC)  # 12:00 in New York: the calling window is open
ASK = {"to": NY, "ask": "hours", "name": "Nathan", "user": "alice"}


@pytest.fixture
def patient_clock() -> trio.testing.MockClock:
    return trio.testing.MockClock(autojump_threshold=0.01)


async def start(nursery, root, url: str, instance: int, clock=None, **over) -> Daemon:
    settings = daemon_settings(root / f"d{instance}", calld_ledger_url=url, calld_instance=instance, **over)
    return await nursery.start(Daemon(settings, clock=clock or trio_clock(NOON)).serve)


async def ask(client: ControlClient, body: dict) -> tuple[int, dict, str]:
    out, err = io.StringIO(), io.StringIO()
    code = await run_ask(client, body, out=out, err=err)
    return code, (json.loads(out.getvalue()) if out.getvalue() else {}), err.getvalue()


async def refused(client: ControlClient, body: dict) -> ControlError:
    with pytest.raises(ControlError) as exc:
        async for _ in client.ask(body):
            pass
    return exc.value


async def test_an_opt_out_heard_by_one_daemon_binds_the_other(tmp_path, nursery, pg_url, dials, patient_clock):
    one = await start(nursery, tmp_path, pg_url, 1)
    two = await start(nursery, tmp_path, pg_url, 2)
    one._ledger.sync.add_opt_out(NY, said_at=NOON, quote="Stop calling us.", user_id="bob", run_id="run_x")
    async with ControlClient(two.settings.calld_socket) as client:
        await client.provision("alice")
        err = await refused(client, ASK)
    assert err.status == 403 and "asked not to be called again" in err.message
    assert dials == []
    for d in (one, two):
        await d.shutdown(drain_s=0)


async def test_a_rate_limit_counts_every_daemons_dials(tmp_path, nursery, pg_url, dials, patient_clock):
    one = await start(nursery, tmp_path, pg_url, 1, calld_calls_per_number_per_day=1)
    two = await start(nursery, tmp_path, pg_url, 2, calld_calls_per_number_per_day=1)
    async with ControlClient(one.settings.calld_socket) as c1, ControlClient(two.settings.calld_socket) as c2:
        await c1.provision("alice")
        assert (await ask(c1, ASK))[0] == EXIT_OK
        err = await refused(c2, ASK)  # the other daemon: its own dial log is empty, the shared one is not
        assert err.status == 403 and "CALLD_CALLS_PER_NUMBER_PER_DAY=1" in err.message
        assert (await ask(c2, {**ASK, "to": CHI}))[0] == EXIT_OK  # another number is fine
    assert [d["to"] for d in dials] == [NY, CHI]
    for d in (one, two):
        await d.shutdown(drain_s=0)


async def test_one_request_id_sent_to_two_daemons_at_once_dials_once(tmp_path, nursery, pg_url, dials, patient_clock):
    one = await start(nursery, tmp_path, pg_url, 1)
    two = await start(nursery, tmp_path, pg_url, 2)
    body = {**ASK, "request_id": "both-1"}
    answers: dict[int, tuple[int, dict, str]] = {}
    async with ControlClient(one.settings.calld_socket) as c1, ControlClient(two.settings.calld_socket) as c2:
        await c1.provision("alice")

        async def send(n: int, client: ControlClient) -> None:
            answers[n] = await ask(client, body)

        async with trio.open_nursery() as both:
            both.start_soon(send, 1, c1)
            both.start_soon(send, 2, c2)
    assert len(dials) == 1
    (code1, result1, _), (code2, result2, _) = answers[1], answers[2]
    assert code1 == code2 == EXIT_OK and result1 == result2  # the one that did not dial waited for the result
    for d in (one, two):
        await d.shutdown(drain_s=0)


async def test_a_scheduled_call_is_placed_by_exactly_one_of_two_daemons(tmp_path, nursery, pg_url, dials, patient_clock):
    one = await start(nursery, tmp_path, pg_url, 1)
    two = await start(nursery, tmp_path, pg_url, 2)
    async with ControlClient(one.settings.calld_socket) as client:
        await client.provision("alice")
        code, queued, _ = await ask(client, {**ASK, "request_id": "later-1", "at": "2026-06-10T13:00-04:00"})
        assert code == EXIT_OK and queued["status"] == "queued"
    await trio.sleep(3600 + 120)  # both schedulers come due at once
    assert len(dials) == 1
    row = one._ledger.sync.scheduled("later-1")
    assert row is not None and row.status == "dialled"
    for d in (one, two):
        await d.shutdown(drain_s=0)


async def test_postgresql_restarted_mid_call_the_call_finishes_and_nothing_is_lost(tmp_path, nursery, pg_server, pg_url,
                                                                                  dials, patient_clock):
    if pg_server.cluster is None:
        pytest.skip("restarting the server needs the tests' own cluster (CALLD_TEST_PG_URL is someone else's)")
    one = await start(nursery, tmp_path, pg_url, 1)
    async with ControlClient(one.settings.calld_socket) as client:
        await client.provision("alice")
        restarted = trio.Event()

        async def restart_when_dialled() -> None:
            while not dials:
                await trio.sleep(0.05)
            await trio.to_thread.run_sync(pg_server.cluster.restart)
            restarted.set()

        nursery.start_soon(restart_when_dialled)
        code, result, _ = await ask(client, {**ASK, "request_id": "through-1"})
        await restarted.wait()
        assert code == EXIT_OK and result["status"] == "answered"
        again, repeat, _ = await ask(client, {**ASK, "request_id": "through-1"})  # answered from the ledger
    assert again == EXIT_OK and repeat == result and len(dials) == 1
    row = Ledger(pg_url)
    try:
        stored = row.request("through-1")
        assert stored is not None and stored.status == "done" and stored.result == result
    finally:
        row.close()
    await one.shutdown(drain_s=0)


async def test_postgresql_down_at_request_time_is_a_clear_refusal_and_no_dial(tmp_path, nursery, dials, patient_clock, capsys):
    bin_dir = _bin_dir()
    if bin_dir is None:
        pytest.skip("no PostgreSQL binaries for a cluster of this test's own")
    cluster = Cluster(bin_dir)
    try:
        await trio.to_thread.run_sync(cluster.start)
        url = cluster.url
        one = await start(nursery, tmp_path, url, 1)
        async with ControlClient(one.settings.calld_socket) as client:
            await client.provision("alice")
            await trio.to_thread.run_sync(cluster.stop)
            with pytest.raises(ControlError) as exc:
                async for _ in client.ask({**ASK, "request_id": "down-1"}):
                    pass
        assert exc.value.status == 503 and "nothing was dialled" in exc.value.message
        assert "ledger" in exc.value.message and "\n" not in exc.value.message
        # calld-ctl itself, as a user runs it: exit 9 (refused for now; 6 is a failed call), the reason on stderr
        argv = ["--socket", str(one.settings.calld_socket), "ask", "--to", NY, "--ask", "hours", "--name", "Nathan",
                "--user", "alice", "--request-id", "down-2"]
        assert await trio.to_thread.run_sync(partial(main, argv)) == EXIT_UNAVAILABLE
        assert "nothing was dialled" in capsys.readouterr().err
        assert dials == []
        await one.shutdown(drain_s=0)
    finally:
        await trio.to_thread.run_sync(cluster.stop)


async def test_a_daemon_killed_mid_call_has_its_call_hung_up_once_by_another_after_its_lease(tmp_path, nursery, pg_url):
    """kill -9 on a live daemon mid-call; it does not come back in time: the other daemon on the ledger
    hangs the carrier's call up once its lease has run out, and the killed one, started again later,
    finds nothing left to do. Wall clock: a subprocess cannot share a mock clock."""
    import subprocess

    from calld.settings import load_settings
    from calld.sim.server import Simulator
    from calld.stub.scenario import SCENARIOS
    from tests.daemons import free_port
    from tests.test_faults_process import clean_env, kill_9_mid_call, serve_cmd, wait_for

    sim = Simulator(SCENARIOS["hours"])
    addrs = await nursery.start(sim.serve)

    def live(port: int, media_port: int) -> dict[str, str]:
        base = f"http://127.0.0.1:{port}"
        return {
            "CALLD_MODE": "live", "CALLD_LIVE_OPT_IN": "1", "TELNYX_API_KEY": "KEY-sim", "TELNYX_CONNECTION_ID": "sim-connection",
            "TELNYX_PUBLIC_KEY": addrs.public_key, "TELNYX_API_BASE": addrs.telnyx_api_base, "OPENAI_API_KEY": "KEY-sim",
            "OPENAI_LIVE_URL": addrs.live_url, "PUBLIC_BASE_URL": base, "PUBLIC_WEBHOOK_URL": f"{base}/telnyx/webhook",
            "CALLD_MEDIA_BIND": f"127.0.0.1:{media_port}", "PUBLIC_MEDIA_URL": f"ws://127.0.0.1:{media_port}/telnyx/media",
            "CALLD_LEDGER_URL": pg_url, "CALLD_LEASE_S": "3",
        }

    first_dir, second_dir = tmp_path / "one", tmp_path / "two"
    first_dir.mkdir()
    port = free_port()
    first_env = live(port, free_port())
    proc = subprocess.Popen(serve_cmd(first_dir, "--bind", f"127.0.0.1:{port}"), cwd=first_dir, env=clean_env(**first_env),
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    await kill_9_mid_call(proc, first_dir / "ctl.sock", {**ASK, "to": "+15555550142", "request_id": "killed-shared"}, nursery)
    (ccid, world), = sim.worlds.items()
    assert world.hangup_requests == []  # the carrier's call outlived its daemon

    second_port = free_port()
    second = load_settings(**{k.lower(): v for k, v in live(second_port, free_port()).items()}, calld_instance=2,
                           calld_state_dir=second_dir / "state", calld_socket=second_dir / "ctl.sock",
                           calld_bind=f"127.0.0.1:{second_port}", _env_file=None)
    other: Daemon = await nursery.start(Daemon(second).serve)
    try:
        await wait_for(lambda: world.hangup_requests == [ccid], "the other daemon to hang the call up after the lease", 60)
        led = Ledger(pg_url)
        try:
            # The hangup goes out first, then the result is stored.
            await wait_for(lambda: led.request("killed-shared").status == "done", "the settled call's result", 30)
            row = led.request("killed-shared")
            assert row is not None and row.status == "done" and row.result["reason"] == "daemon_restart"
            assert row.instance == "2"  # taken over, so its own daemon will not settle it again
        finally:
            led.close()
    finally:
        await other.shutdown(drain_s=0)

    again = load_settings(**{k.lower(): v for k, v in first_env.items()}, calld_state_dir=first_dir / "state",
                          calld_socket=first_dir / "ctl.sock", calld_bind=f"127.0.0.1:{port}", _env_file=None)
    back: Daemon = await nursery.start(Daemon(again).serve)
    await back.shutdown(drain_s=0)
    assert world.hangup_requests == [ccid]  # once, never again
    # Its run directory, which only it can reach, is finished now: the ledger's result, who settled it,
    # the WAV headers repaired (issue 55).
    [run_dir] = [p.parent for p in (first_dir / "state" / "artifacts").glob("*/run.json")]
    assert json.loads((run_dir / "result.json").read_text())["reason"] == "daemon_restart"
    recovery = json.loads((run_dir / "recovery.json").read_text())
    assert recovery["settled_by"] == "2" and recovery["call_control_id"] == ccid


async def test_a_second_daemon_given_the_same_instance_is_refused_until_the_first_ones_lease_runs_out(
        tmp_path, pg_url, patient_clock):
    clock = trio_clock(NOON)  # one wall clock for every daemon: leases are compared across them

    async def served(root) -> Daemon:  # started, then shut down; returns once it has stopped
        async with trio.open_nursery() as inner:
            daemon = await start(inner, root, pg_url, 2, clock)
            async with ControlClient(daemon.settings.calld_socket) as client:  # it serves
                assert (await client.provision("alice"))["user"] == "alice"
            await daemon.shutdown(drain_s=0)
        return daemon

    async with trio.open_nursery() as nursery:
        first = await start(nursery, tmp_path / "a", pg_url, 2, clock)
        with pytest.raises(DaemonError) as refused_start:  # another host's calld@2, say: it would take the first one's calls
            await start(nursery, tmp_path / "b", pg_url, 2, clock)
        message = str(refused_start.value)
        assert f"CALLD_INSTANCE=2 is held by the daemon at {socket.gethostname()}:{(tmp_path / 'a' / 'd2' / 'state').resolve()}" in message
        assert "give each daemon its own CALLD_INSTANCE" in message
        async with ControlClient(first.settings.calld_socket) as client:  # the first serves on, untouched
            assert (await client.provision("alice"))["user"] == "alice"
        await first.shutdown(drain_s=0)
    again = await served(tmp_path / "a")  # the same daemon (host and state dir), restarted: its own instance
    await trio.sleep(again.settings.calld_lease_s + 1)  # then gone for good: its lease runs out
    await served(tmp_path / "b")  # a replacement may take the instance now


async def test_daemons_on_one_ledger_give_one_user_one_stand_in(tmp_path, nursery, pg_url, dials, patient_clock, caplog):
    """The redaction key is the shared ledger's: daemon 1 brings the key it had (readable by others, so it is
    made 0600), daemon 2 reads it, and a call on each names alice by one stand-in in its redacted report."""
    import os
    import secrets
    import stat
    from pathlib import Path

    from calld.ops.redaction import KEY_FILE, Pseudonyms

    before = secrets.token_bytes(32)
    state1 = tmp_path / "d1" / "state"
    state1.mkdir(parents=True, mode=0o700)
    (state1 / KEY_FILE).write_bytes(before)
    os.chmod(state1 / KEY_FILE, 0o644)
    one = await start(nursery, tmp_path, pg_url, 1)
    two = await start(nursery, tmp_path, pg_url, 2)
    stand_in = Pseudonyms(before).user("alice")
    assert one.pseudonyms.user("alice") == two.pseudonyms.user("alice") == stand_in
    assert stat.S_IMODE((state1 / KEY_FILE).stat().st_mode) == 0o600 and "made 0600" in caplog.text
    assert not (two.settings.calld_state_dir / KEY_FILE).exists()  # kept in the ledger, not beside it
    reported = []
    async with ControlClient(one.settings.calld_socket) as c1, ControlClient(two.settings.calld_socket) as c2:
        await c1.provision("alice")
        for d, client in ((one, c1), (two, c2)):
            code, result, err = await ask(client, ASK)
            assert code == EXIT_OK, err
            run_dir = d.settings.artifacts_dir / result["transcript_ref"].split("/")[0]
            reported.append(json.loads((run_dir / "call_report.redacted.json").read_text())["user_id"])
    assert reported == [stand_in, stand_in] and len(dials) == 2
    # A daemon given CALLD_REDACTION_KEY uses it (every daemon given the same, they agree as well).
    given = secrets.token_bytes(32)
    three = await start(nursery, tmp_path, pg_url, 3, calld_redaction_key=given.hex())
    assert three.pseudonyms.user("alice") == Pseudonyms(given).user("alice") != stand_in
    assert not Path(three.settings.calld_state_dir / KEY_FILE).exists()
    for d in (one, two, three):
        await d.shutdown(drain_s=0)


def test_the_shared_key_is_made_once_when_daemons_ask_at_the_same_moment(pg_url) -> None:
    """Eight daemons starting at once on a new ledger, each with a key of its own to offer: one key wins,
    every daemon reads it, and the ledger holds one."""
    import secrets
    import threading

    ledgers = [Ledger(pg_url) for _ in range(8)]
    offered = [secrets.token_hex(32) for _ in ledgers]
    got: list[str] = [""] * len(ledgers)
    barrier = threading.Barrier(len(ledgers))

    def take(i: int) -> None:
        barrier.wait()
        got[i] = ledgers[i].shared_key("redaction", offered[i])

    threads = [threading.Thread(target=take, args=(i,)) for i in range(len(ledgers))]
    try:
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=60)
        assert len(set(got)) == 1 and got[0] in offered
        assert ledgers[0].table_counts()["shared_keys"] == 1
        assert ledgers[0].shared_key("redaction", secrets.token_hex(32)) == got[0]  # made once, kept
    finally:
        for led in ledgers:
            led.close()


# -- the operator's tools across daemons: calls, show, tail and metrics see every daemon -----------------


async def ctl(capsys, *argv: str) -> tuple[int, str, str]:
    """calld-ctl as a user runs it (its own trio loop, in a thread): exit code, stdout, stderr."""
    capsys.readouterr()
    code = await trio.to_thread.run_sync(partial(main, list(argv)))
    out, err = capsys.readouterr()
    return code, out, err


async def test_calls_show_and_tail_find_a_call_live_on_the_second_daemon(tmp_path, nursery, pg_url, dials, patient_clock,
                                                                         capsys):
    one = await start(nursery, tmp_path, pg_url, 1, calld_ui_bind="127.0.0.1:0")
    two = await start(nursery, tmp_path, pg_url, 2)
    s1, s2 = str(one.settings.calld_socket), str(two.settings.calld_socket)
    both, gone = f"{s1},{s2}", str(tmp_path / "gone.sock")
    async with ControlClient(two.settings.calld_socket) as c2:
        await c2.provision("alice")
        done: list = []

        async def place() -> None:
            done.append(await ask(c2, {**ASK, "request_id": "on-two"}))

        nursery.start_soon(place)
        while not len(two.callbook):
            await trio.sleep(0.05)
        await trio.sleep(3)  # on the line, in daemon 2
        run_id, ccid = two.lookup.calls()[0]["run_id"], two.lookup.calls()[0]["call_control_id"]

        code, out, err = await ctl(capsys, "--socket", both, "calls", "--json")
        rows = json.loads(out)
        assert code == EXIT_OK and [(r["run_id"], r["daemon"], r["socket"]) for r in rows] == [(run_id, "2", s2)]
        code, out, err = await ctl(capsys, "--socket", f"{s1},{gone},{s2}", "calls")
        assert code == 7 and run_id in out and out.splitlines()[0].split()[0] == "DAEMON"
        assert f"no daemon answers on {gone}; what it holds is not shown" in err

        code, out, err = await ctl(capsys, "--socket", both, "show", "on-two")
        assert code == EXIT_OK and out.startswith(f"call {ccid} is in flight: dial "), (out, err)
        assert f"answered by the daemon on {s2}" in err
        code, out, err = await ctl(capsys, "--socket", both, "show", "on-two", "--json")
        assert code == EXIT_OK and json.loads(out)["in_flight"] is True
        with pytest.raises(ControlError) as other:  # daemon 1 names the daemon that holds it
            async with ControlClient(one.settings.calld_socket) as c1:
                await c1.detail("on-two")
        assert other.value.status == 421 and other.value.elsewhere["daemon"] == "2"
        code, out, err = await ctl(capsys, "--socket", f"{s1},{gone}", "show", "on-two")
        assert code == 7 and out == ""
        assert f"call {run_id} (request on-two) is in flight on daemon 2" in err and f"not reachable: no daemon answers on {gone}\n" in err
        code, out, err = await ctl(capsys, "--socket", s1, "show", "on-two")
        assert code == 7 and "in flight on daemon 2" in err and "is daemon 2's; add its socket" in err
        assert "no call" not in err and "pruned" not in err

        while not done:
            await trio.sleep(0.5)
    assert done[0][0] == EXIT_OK
    code, out, err = await ctl(capsys, "--socket", both, "show", "on-two", "--json")
    detail = json.loads(out)
    assert code == EXIT_OK and detail["run_id"] == run_id and "pruned" not in detail
    code, out, err = await ctl(capsys, "--socket", both, "show", "on-two")
    assert code == EXIT_OK and "pruned" not in out and str(two.settings.artifacts_dir.resolve()) in out
    code, out, err = await ctl(capsys, "--socket", s1, "show", "on-two")
    assert code == 7 and f"call {run_id} (request on-two) finished (answered) on daemon 2" in err and "pruned" not in err
    code, out, err = await ctl(capsys, "--socket", s1, "show", "on-two", "--timeline", str(tmp_path / "t.png"))
    assert code == 7 and f"call {run_id} (request on-two) finished (answered) on daemon 2" in err
    async with httpx.AsyncClient(base_url=one.ui_url, timeout=None) as web:  # daemon 1's web view: not "pruned"
        assert (await web.get(one.ui_link())).status_code == 303
        page = await web.get("/call/on-two")
    assert page.status_code == 421 and "finished on daemon 2, which keeps its files" in page.text

    import shutil  # now the files are truly gone: the daemon that wrote them says so

    async with ControlClient(two.settings.calld_socket) as c2:
        shutil.rmtree((await c2.detail("on-two"))["dir"])
        assert (await c2.detail("on-two"))["pruned"] is True
    code, out, err = await ctl(capsys, "--socket", both, "show", "on-two")
    assert code == EXIT_OK and "pruned" in out
    code, out, err = await ctl(capsys, "--socket", both, "show", "no-such-request")
    assert code == 2 and "no call with request id, run id or call_control_id 'no-such-request'" in err
    for d in (one, two):
        await d.shutdown(drain_s=0)


async def test_tail_and_metrics_across_daemons_name_each_line_and_sample_s_daemon(tmp_path, nursery, pg_url, dials,
                                                                                  patient_clock, capsys):
    import argparse

    from prometheus_client.parser import text_string_to_metric_families

    from calld.cli.ctl import _tail

    one = await start(nursery, tmp_path, pg_url, 1)
    two = await start(nursery, tmp_path, pg_url, 2)
    sockets = [one.settings.calld_socket, two.settings.calld_socket]
    capsys.readouterr()
    async with trio.open_nursery() as following:  # calld-ctl tail, both daemons followed at once
        following.start_soon(_tail, argparse.Namespace(sockets=sockets, socket=sockets[0], json=False))
        async with ControlClient(two.settings.calld_socket) as c2:
            await c2.provision("alice")
            code, result, _ = await ask(c2, {**ASK, "request_id": "counted"})
            assert code == EXIT_OK
        await trio.sleep(1)
        following.cancel_scope.cancel()
    tailed = capsys.readouterr().out.splitlines()
    assert f"daemon 2: {result['run_id']}" in tailed[0]
    assert any(line.startswith(f"daemon 2: {result['run_id']}") and "finished: answered" in line for line in tailed)
    code, out, _ = await ctl(capsys, "--socket", f"{one.settings.calld_socket},{two.settings.calld_socket}", "metrics")
    assert code == EXIT_OK
    families = {f.name: f for f in text_string_to_metric_families(out)}  # one text, each family once
    daemons = {s.labels.get("daemon") for f in families.values() for s in f.samples}
    assert daemons == {"1", "2"}
    code, alone, _ = await ctl(capsys, "--socket", str(two.settings.calld_socket), "metrics")
    assert code == EXIT_OK and 'daemon="' not in alone  # one daemon's text as it always was
    for d in (one, two):
        await d.shutdown(drain_s=0)



async def test_calls_and_show_across_daemons_say_a_hangup_is_refused_and_the_line_may_be_up(
        tmp_path, nursery, pg_url, dials, patient_clock, capsys, monkeypatch):
    """Telnyx takes none of daemon 2's hangups. While calld sends it again, `calls` and `show` never
    say the hangup is done (the reducer's track is, at hangup_confirm_s); once the call has ended with
    the line possibly up, show says so wherever it is asked: through daemon 2, and from daemon 1
    alone (calld-ctl, the control API's 421, the web view), which cannot reach its files."""
    from calld.adapters.fixtures import load_fixture
    from calld.stub.world import StubWorld

    def refuse(self, ccid):
        self.hangup_requests.append(ccid)
        return httpx.Response(500, json=load_fixture("telnyx", "error_500"))

    monkeypatch.setattr(StubWorld, "_hangup", refuse)
    one = await start(nursery, tmp_path, pg_url, 1, calld_ui_bind="127.0.0.1:0")
    two = await start(nursery, tmp_path, pg_url, 2)
    s1, s2 = str(one.settings.calld_socket), str(two.settings.calld_socket)
    both = f"{s1},{s2}"
    async with ControlClient(two.settings.calld_socket) as c2:
        await c2.provision("alice")
        done: list = []

        async def place() -> None:
            done.append(await ask(c2, {**ASK, "request_id": "refused"}))

        nursery.start_soon(place)
        while not len(two.callbook) or not two.callbook.handles()[0].call.finished:
            await trio.sleep(0.05)
        await trio.sleep(8)  # past hangup_confirm_s: the reducer's hangup track is done, calld still sends it
        (handle,) = two.callbook.handles()
        assert handle.call.hangup.kind == "done" and not handle.hangup_series.settled
        code, out, err = await ctl(capsys, "--socket", both, "calls", "--json")
        (row,) = json.loads(out)
        assert code == EXIT_OK and row["daemon"] == "2"
        assert row["hangup"]["line"] == "retrying" and row["hangup"]["tries"] >= 2 and "500" in row["hangup"]["telnyx"], row
        code, out, err = await ctl(capsys, "--socket", both, "calls")
        (line,) = [line for line in out.splitlines() if row["run_id"] in line]
        assert line.split()[-3:] == ["retrying", f"({row['hangup']['tries']}", "tries)"], out
        code, out, err = await ctl(capsys, "--socket", both, "show", "refused")
        assert code == EXIT_OK and "is in flight" in out and "hangup: not taken by Telnyx yet" in out, out
        assert "HANGUP_RETRY_S" in out
        while not done:
            await trio.sleep(0.5)
    result = done[0][1]
    up = result["line_may_be_up"]
    assert "the line may still be up" in up.lower()
    code, out, err = await ctl(capsys, "--socket", both, "show", "refused")
    assert code == EXIT_OK and "THE LINE MAY STILL BE UP" in out, out
    code, out, err = await ctl(capsys, "--socket", s1, "show", "refused")  # daemon 2 out of reach
    assert code == 7 and "finished (answered) on daemon 2" in err and f"THE LINE MAY STILL BE UP: {up}" in err, err
    with pytest.raises(ControlError) as other:
        async with ControlClient(one.settings.calld_socket) as c1:
            await c1.detail("refused")
    assert other.value.status == 421 and "THE LINE MAY STILL BE UP" in other.value.message
    async with httpx.AsyncClient(base_url=one.ui_url, timeout=None) as web:
        assert (await web.get(one.ui_link())).status_code == 303
        page = await web.get("/call/refused")
    assert page.status_code == 421 and "THE LINE MAY STILL BE UP" in page.text
    for d in (one, two):
        await d.shutdown(drain_s=0)
