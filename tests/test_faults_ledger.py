"""Two daemons, one PostgreSQL ledger, and the ledger failing under them (issue 55): an outage made by
the test (the server stopped, a row or table lock held, a write stalled), never waited for.

- an opt-out heard while the ledger is down is kept on the daemon's disk, refused there at once, and
  stored in the ledger as soon as it answers, where the other daemon reads it;
- after an outage longer than a lease, no daemon takes another's calls while that daemon is alive.

Each test runs its own throwaway cluster (tests/pg.py), since it stops the server. The clock jumps only
after 10 ms with every task idle (a ledger round trip runs in a worker thread), as in
tests/test_daemons_shared.py.
"""

from __future__ import annotations

import io
import json
import math
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

import pytest
import trio
import trio.testing

from calld.cli.client import ControlClient, ControlError
from calld.cli.ctl import run_ask
from calld.daemon.service import HELD_OPT_OUTS, Daemon
from calld.ledger import Ledger
from calld.policy.clock import trio_clock
from daemons import daemon_settings
from tests.pg import Cluster, _bin_dir, database_url

pytestmark = [pytest.mark.fault, pytest.mark.postgres]

NY = "+12125550142"  # fiction exchange 555-01xx: rings no one
NOON = datetime(2026, 6, 10, 16, 0, tzinfo=UTC)  # 12:00 in New York: the calling window is open
ASK = {"to": NY, "ask": "hours", "name": "Nathan", "user": "alice"}


@pytest.fixture
def patient_clock() -> trio.testing.MockClock:
    return trio.testing.MockClock(autojump_threshold=0.01)


@pytest.fixture
def cluster() -> Iterator[Cluster]:
    """A server of this test's own, which it may stop and start again."""
    bin_dir = _bin_dir()
    if bin_dir is None or not (bin_dir / "initdb").exists():
        pytest.skip("no PostgreSQL binaries for a cluster of this test's own")
    own = Cluster(bin_dir)
    try:
        own.start()
        yield own
    finally:
        own.stop()


@pytest.fixture
def ledger_url(cluster: Cluster) -> str:
    import psycopg

    with psycopg.connect(cluster.url, autocommit=True) as conn:
        conn.execute("CREATE DATABASE calld")
    url = database_url(cluster.url, "calld")
    Ledger(url).close()  # the schema
    return url


async def start(nursery: trio.Nursery, root: Any, url: str, instance: int, **over: Any) -> Daemon:
    settings = daemon_settings(root / f"d{instance}", calld_ledger_url=url, calld_instance=instance, **over)
    return await nursery.start(Daemon(settings, clock=trio_clock(NOON)).serve)


async def ask(client: ControlClient, body: dict) -> tuple[int, dict, str]:
    out, err = io.StringIO(), io.StringIO()
    code = await run_ask(client, body, out=out, err=err)
    return code, (json.loads(out.getvalue()) if out.getvalue() else {}), err.getvalue()


async def wall_sleep(seconds: float) -> None:
    """Wall time passing while the trio clock is held still (a sleep in a worker thread)."""
    await trio.to_thread.run_sync(time.sleep, seconds)


async def no_ledger_round_trip(*daemons: Daemon) -> None:
    """Wait until none of `daemons` has a ledger call running in a worker thread."""
    while any(d._ledger._limiter.borrowed_tokens for d in daemons):
        await wall_sleep(0.05)


def opt_out_rows(url: str) -> list[dict[str, Any]]:
    import psycopg
    from psycopg.rows import dict_row

    with psycopg.connect(url, row_factory=dict_row) as conn:
        return list(conn.execute("SELECT number, quote, run_id FROM opt_outs"))


async def test_an_opt_out_heard_while_the_ledger_is_down_is_refused_at_once_and_lands_when_it_answers(
        tmp_path, nursery, cluster, ledger_url, dials, patient_clock):
    import psycopg

    one = await start(nursery, tmp_path, ledger_url, 1)
    two = await start(nursery, tmp_path, ledger_url, 2)
    async with ControlClient(one.settings.calld_socket) as c1, ControlClient(two.settings.calld_socket) as c2:
        await c1.provision("alice")

        async def down_once_dialled() -> None:  # the business says "stop calling us" while the server is down
            while not dials:
                await trio.sleep(0.01)
            await trio.to_thread.run_sync(cluster.halt)

        nursery.start_soon(down_once_dialled)
        code, result, _ = await ask(c1, {**ASK, "request_id": "optout-1", "scenario": "opt_out"})
        assert result["status"] == "declined" and result["reason"] == "opt_out"
        held = json.loads((one.settings.calld_state_dir / HELD_OPT_OUTS).read_text())  # on disk first
        assert [h["number"] for h in held] == [NY] and "stop calling" in held[0]["quote"].lower()

        # The server comes back, but the opt-out's write is held up by a lock (the trio clock stands
        # still meanwhile, so no retry lands before the lock is taken).
        patient_clock.autojump_threshold = math.inf
        await no_ledger_round_trip(one, two)
        await trio.to_thread.run_sync(cluster.resume)
        blocker = await trio.to_thread.run_sync(lambda: psycopg.connect(ledger_url))
        await trio.to_thread.run_sync(blocker.execute, "LOCK TABLE opt_outs IN EXCLUSIVE MODE")
        patient_clock.autojump_threshold = 0.01
        try:
            # This daemon refuses the number already, before the ledger has it.
            with pytest.raises(ControlError) as refused:
                async for _ in c1.ask({**ASK, "request_id": "optout-2"}):
                    pass
            assert refused.value.status == 403 and "asked not to be called again" in refused.value.message
            assert opt_out_rows(ledger_url) == []
        finally:
            await trio.to_thread.run_sync(blocker.rollback)
            await trio.to_thread.run_sync(blocker.close)
        # Stored as soon as the ledger takes it, and then binding the other daemon too.
        for _ in range(600):
            if opt_out_rows(ledger_url):
                break
            await trio.sleep(0.5)
        [row] = opt_out_rows(ledger_url)
        assert row["number"] == NY and row["run_id"] == result["run_id"]
        with pytest.raises(ControlError) as refused_there:
            async for _ in c2.ask({**ASK, "request_id": "optout-3"}):
                pass
        assert refused_there.value.status == 403 and "asked not to be called again" in refused_there.value.message
        while (one.settings.calld_state_dir / HELD_OPT_OUTS).exists():  # nothing held once the ledger has it
            await trio.sleep(0.1)
        assert one.gate.held_opt_outs == {}
    assert len(dials) == 1  # the number was dialled once, by the call that heard the opt-out
    for d in (one, two):
        await d.shutdown(drain_s=0)


def ledger_rows(url: str, sql: str, args: tuple = ()) -> list[dict[str, Any]]:
    import psycopg
    from psycopg.rows import dict_row

    with psycopg.connect(url, row_factory=dict_row) as conn:
        return list(conn.execute(sql, args))


async def test_after_an_outage_longer_than_a_lease_no_daemon_takes_a_live_daemons_calls(
        tmp_path, nursery, cluster, ledger_url, patient_clock):
    """Both daemons are cut off for longer than a lease (30 s on the trio clock, 20 s on the wall); daemon 2's
    lease row is then held by a lock, so daemon 1 reconnects first and finds daemon 2's lease run out.
    It must not take daemon 2's call: daemon 2 renews once the lock goes, and keeps its call."""
    import psycopg

    from calld.domain.ids import RunId

    one = await start(nursery, tmp_path, ledger_url, 1)
    two = await start(nursery, tmp_path, ledger_url, 2)
    lease_s = one.settings.calld_lease_s
    # Daemon 2's call on the line, as its own placing left it in the ledger.
    seed = Ledger(ledger_url)
    try:
        seed.claim_request("theirs-1", user_id="alice", kind="ask", params={"to": NY}, run_id=RunId("run_" + "7" * 20),
                           instance="2")
        seed.mark_dialled("theirs-1", "v3:theirs-1")
    finally:
        seed.close()
    await trio.sleep(lease_s)  # both have held their leases a while: daemon 1 may judge others now

    outage_began = time.monotonic()
    await trio.to_thread.run_sync(cluster.halt)
    await trio.sleep(lease_s * 1.5)  # every lease in the ledger has run out on the clock meanwhile
    patient_clock.autojump_threshold = math.inf  # the trio clock stands still from here to the lock
    await wall_sleep(max(0.0, 20 - (time.monotonic() - outage_began)))  # and the outage lasts 20 s on the wall
    await no_ledger_round_trip(one, two)
    await trio.to_thread.run_sync(cluster.resume)
    back = time.monotonic()
    blocker = await trio.to_thread.run_sync(lambda: psycopg.connect(ledger_url))
    await trio.to_thread.run_sync(blocker.execute, "SELECT * FROM daemons WHERE instance = '2' FOR UPDATE")
    # The trio clock at the wall's pace while daemon 1 reconnects: autojump would race it on while the pool's
    # threads wait (a second of the wall, dozens of the clock's), past the grace this test is about.
    patient_clock.rate = 1.0
    try:
        while not ledger_rows(ledger_url, "SELECT 1 FROM daemons WHERE instance = '1' AND lease_until > %s",
                              (one.clock().timestamp(),)):
            await trio.sleep(0.05)
        reconnected_s = time.monotonic() - back
        assert reconnected_s < 5, f"daemon 1 renewed its lease {reconnected_s:.1f} s after the server was back"
        patient_clock.autojump_threshold, patient_clock.rate = 0.01, 0.0
        await trio.sleep(lease_s / 2)  # daemon 1 serves on, daemon 2 cannot renew: its lease has run out
        [row] = ledger_rows(ledger_url, "SELECT status, instance, result FROM requests WHERE request_id = 'theirs-1'")
        assert row == {"status": "in_flight", "instance": "2", "result": None}
        [stale] = ledger_rows(ledger_url, "SELECT lease_until FROM daemons WHERE instance = '2'")
        assert stale["lease_until"] < one.clock().timestamp()  # run out, on the clock everyone shares
    finally:
        await trio.to_thread.run_sync(blocker.rollback)
        await trio.to_thread.run_sync(blocker.close)
    await trio.sleep(lease_s * 3)  # daemon 2 has renewed: its call stays its own
    [row] = ledger_rows(ledger_url, "SELECT status, instance, result FROM requests WHERE request_id = 'theirs-1'")
    assert row == {"status": "in_flight", "instance": "2", "result": None}
    leases = ledger_rows(ledger_url, "SELECT instance, lease_until FROM daemons ORDER BY instance")
    assert [r["instance"] for r in leases] == ["1", "2"]
    assert leases[1]["lease_until"] > stale["lease_until"]  # daemon 2 renewed once the lock went
    # A daemon that really is gone is still settled, once its lease has run out with the ledger up.
    two_dir = two.settings.calld_state_dir
    await two.shutdown(drain_s=0)
    assert two_dir.exists()
    for _ in range(200):
        [row] = ledger_rows(ledger_url, "SELECT status, instance FROM requests WHERE request_id = 'theirs-1'")
        if row["status"] == "done":
            break
        await trio.sleep(1)
    assert row == {"status": "done", "instance": "1"}
    await one.shutdown(drain_s=0)


STALL_CALL_ID = """
CREATE FUNCTION calld_test_stall() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN PERFORM pg_sleep(600); RETURN NEW; END $$;
CREATE TRIGGER stall_call_id BEFORE UPDATE ON requests FOR EACH ROW
  WHEN (OLD.call_control_id IS NULL AND NEW.call_control_id IS NOT NULL) EXECUTE FUNCTION calld_test_stall();
"""


async def test_a_crash_while_the_ledger_stalls_on_the_calls_id_still_hangs_the_call_up_on_restart(tmp_path, nursery, pg_url):
    """The carrier accepts the dial; the ledger's write of the call's id stalls (a trigger sleeps in it); the
    daemon is killed (SIGKILL) meanwhile. Started again, it finds the call's id in the run directory, hangs
    the carrier's call up once, and stores the id with the result. Wall clock: a subprocess."""
    import signal
    import subprocess

    import psycopg

    from calld.settings import load_settings
    from calld.sim.server import Simulator
    from calld.stub.scenario import SCENARIOS
    from tests.daemons import free_port
    from tests.test_faults_process import clean_env, serve_cmd, wait_for

    sim = Simulator(SCENARIOS["hours"])
    addrs = await nursery.start(sim.serve)
    port, media_port = free_port(), free_port()
    base = f"http://127.0.0.1:{port}"
    env = {
        "CALLD_MODE": "live", "CALLD_LIVE_OPT_IN": "1", "TELNYX_API_KEY": "KEY-sim", "TELNYX_CONNECTION_ID": "sim-connection",
        "TELNYX_PUBLIC_KEY": addrs.public_key, "TELNYX_API_BASE": addrs.telnyx_api_base, "OPENAI_API_KEY": "KEY-sim",
        "OPENAI_LIVE_URL": addrs.live_url, "PUBLIC_BASE_URL": base, "PUBLIC_WEBHOOK_URL": f"{base}/telnyx/webhook",
        "CALLD_MEDIA_BIND": f"127.0.0.1:{media_port}", "PUBLIC_MEDIA_URL": f"ws://127.0.0.1:{media_port}/telnyx/media",
        "CALLD_LEDGER_URL": pg_url,
    }
    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute(STALL_CALL_ID)
    proc = subprocess.Popen(serve_cmd(tmp_path, "--bind", f"127.0.0.1:{port}"), cwd=tmp_path, env=clean_env(**env),
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        await wait_for((tmp_path / "ctl.sock").exists, "the control socket", 60)
        async with ControlClient(tmp_path / "ctl.sock") as client:
            await client.provision("alice")

            gave_up = trio.Event()

            async def the_call() -> None:
                await run_ask(client, {**ASK, "to": "+15555550142", "request_id": "stalled-1"}, out=io.StringIO(),
                              err=io.StringIO())
                gave_up.set()

            nursery.start_soon(the_call)

            def stalled() -> bool:
                return bool(ledger_rows(pg_url, "SELECT 1 FROM pg_stat_activity WHERE wait_event = 'PgSleep'"))

            await wait_for(stalled, "the ledger's write of the call's id to stall", 60)
            proc.send_signal(signal.SIGKILL)
            proc.wait(timeout=10)
            await wait_for(gave_up.is_set, "calld-ctl to give up")
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    (ccid, world), = sim.worlds.items()
    assert world.hangup_requests == []  # the carrier's call outlived its daemon
    with psycopg.connect(pg_url, autocommit=True) as conn:  # the stalled write ends with its client
        conn.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE wait_event = 'PgSleep'")
        conn.execute("DROP TRIGGER stall_call_id ON requests")
    [row] = ledger_rows(pg_url, "SELECT status, call_control_id FROM requests WHERE request_id = 'stalled-1'")
    assert row == {"status": "placing", "call_control_id": None}  # the ledger never took the call's id

    again = load_settings(**{k.lower(): v for k, v in env.items()}, calld_state_dir=tmp_path / "state",
                          calld_socket=tmp_path / "ctl.sock", calld_bind=f"127.0.0.1:{port}", _env_file=None)
    back: Daemon = await nursery.start(Daemon(again).serve)
    try:
        await wait_for(lambda: world.hangup_requests == [ccid], "the restarted daemon to hang the call up", 60)
    finally:
        await back.shutdown(drain_s=0)
    [row] = ledger_rows(pg_url, "SELECT status, call_control_id, result FROM requests WHERE request_id = 'stalled-1'")
    result = json.loads(row["result"])
    assert row["status"] == "done" and row["call_control_id"] == ccid
    assert result["reason"] == "daemon_restart" and result["call_control_id"] == ccid
    assert "it was hung up on restart" in result["detail"]
    [recovery] = (tmp_path / "state").glob("**/recovery.json")
    report = json.loads(recovery.read_text())
    assert report["call_control_id"] == ccid and "the ledger never took it" in report["call_control_id_from"]
    assert world.hangup_requests == [ccid]  # once
