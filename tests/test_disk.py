"""Where disk work runs (calld.runtime.disk): under calld serve in a worker thread off the event
loop's core; and the daemon sends each call's last files and the ledger's fsync there."""

from __future__ import annotations

import io
import json
import os
import threading

import pytest
import trio

from calld.cli.client import ControlClient
from calld.cli.ctl import EXIT_OK, run_ask
from calld.daemon.service import Daemon
from calld.runtime import rundir as rundir_module
from calld.runtime.disk import inline, off_the_loop
from calld.runtime.rundir import RUN_MARKER, artifact_slug
from daemons import daemon_settings, stop

ASK = {"to": "+15555550142", "ask": "hours", "name": "Nathan", "user": "alice"}


class WatchedDisk:
    """A disk port that works inline (as a daemon inside a test does, on the autojump clock) and
    notes every trip, and every file of a run written, in or out of a trip."""

    def __init__(self) -> None:
        self.inside = False
        self.trips: list[str] = []  # the work's names, in order
        self.written: list[tuple[str, bool]] = []  # (file name, written through the port)

    async def __call__(self, fn):
        self.trips.append(getattr(fn, "func", fn).__name__)
        self.inside = True
        try:
            return fn()
        finally:
            self.inside = False

    def outside(self) -> list[str]:
        return [name for name, through_port in self.written if not through_port]


@pytest.fixture
def disk(monkeypatch) -> WatchedDisk:
    watched = WatchedDisk()
    real_write = rundir_module.write_atomic

    def write_atomic(path, data):
        watched.written.append((path.name, watched.inside))
        return real_write(path, data)

    monkeypatch.setattr(rundir_module, "write_atomic", write_atomic)
    return watched


@pytest.mark.skipif(not hasattr(os, "sched_setaffinity") or (os.cpu_count() or 1) < 2, reason="needs two cores")
async def test_off_the_loop_works_in_a_thread_on_a_core_the_loop_is_not_pinned_to():
    before = os.sched_getaffinity(0)
    await off_the_loop(lambda: None)  # a worker thread made before the pinning, kept by trio for later
    os.sched_setaffinity(0, {0})  # the loop pinned, as systemd's CPUAffinity pins calld serve
    try:
        seen = await off_the_loop(lambda: (threading.current_thread(), os.sched_getaffinity(0)))
        assert os.sched_getaffinity(0) == {0}  # the loop's own thread stays where it was
    finally:
        os.sched_setaffinity(0, before)
    thread, cores = seen
    assert thread is not threading.main_thread()
    assert 0 not in cores and cores


async def test_inline_works_at_once_on_the_loop():
    assert await inline(lambda: threading.current_thread()) is threading.main_thread()


async def test_inline_never_gives_the_loop_away():
    # "At once": no checkpoint before or after the work, so nothing else on the loop (a call's
    # other tasks, another call) runs in between, as handle.py relies on after adopting its run id.
    # In a cancelled scope any checkpoint would raise Cancelled; inline must finish and return.
    done: list[str] = []
    with trio.CancelScope() as scope:
        scope.cancel()
        returned = await inline(lambda: done.append("written") or "ref")
        done.append(returned)
    assert done == ["written", "ref"]


async def test_the_daemon_writes_a_calls_last_files_and_the_ledger_sync_through_its_disk_port(
        tmp_path, nursery, disk, autojump_clock):
    d: Daemon = await nursery.start(Daemon(daemon_settings(tmp_path), disk=disk).serve)
    try:
        async with ControlClient(d.settings.calld_socket) as client:
            await client.provision("alice")
            out = io.StringIO()
            assert await run_ask(client, ASK, out=out, err=io.StringIO()) == EXIT_OK
    finally:
        await stop(d)
    assert json.loads(out.getvalue())["status"] == "answered"
    names = [name for name, _ in disk.written]
    for name in ("dial.json", "session_start.json", "hangup.json", "transcript.json", "result.json",
                 "call_report.json", "call_report.redacted.json"):
        assert name in names
    assert names.count("task.json") == 2  # the moment the verdict is accepted, and with the call's end
    # Every file of the run but its marker (made with the directory, before anything can go wrong).
    assert disk.outside() == [RUN_MARKER], disk.written
    assert "write_before_result" in disk.trips and "write_result" in disk.trips
    assert "<lambda>" in disk.trips  # the ledger's group fsync


async def test_a_refused_dial_is_recorded_through_the_disk_port_in_a_directory_named_after_the_run(
        tmp_path, monkeypatch, disk, autojump_clock):
    import httpx

    from calld.stub.world import StubWorld
    from tests.stubcall import stub_call

    def refused(self, body):
        return httpx.Response(422, json={"errors": [{"code": "10015", "title": "Invalid parameter",
                                                     "detail": "the stub refuses this dial"}]})

    monkeypatch.setattr(StubWorld, "_dial", refused)
    run = await stub_call(tmp_path, "hours", disk=disk)
    assert run.result.status == "failed"
    assert "the stub refuses this dial" in run.json("dial.json")["error"]
    # Never dialled, so named after the run (not left as a hidden .pending- directory), and the
    # result's refs point there.
    assert run.dir.name == artifact_slug(run.result.run_id)
    assert run.result.transcript_ref == f"{run.dir.name}/transcript.json"
    assert ("dial.json", True) in disk.written
    assert disk.outside() == [RUN_MARKER], disk.written


async def test_a_live_daemon_writes_its_calls_files_through_its_disk_port(tmp_path, nursery, disk, autojump_clock):
    # Live mode builds its CallPorts apart from the stub path: the port must reach them too.
    from calld.settings import load_settings
    from calld.sim.server import Simulator
    from calld.stub.scenario import SCENARIOS
    from tests.daemons import reachable_at

    sim = Simulator(SCENARIOS["hours"])
    addrs = await nursery.start(sim.serve)
    settings = load_settings(
        calld_mode="live", calld_live_opt_in=True, calld_state_dir=tmp_path / "state", calld_socket=tmp_path / "ctl.sock",
        telnyx_api_key="KEY-sim", telnyx_connection_id="sim-connection", telnyx_public_key=addrs.public_key,
        telnyx_api_base=addrs.telnyx_api_base, openai_api_key="KEY-sim", openai_live_url=addrs.live_url,
        _env_file=None, **reachable_at())
    d: Daemon = await nursery.start(Daemon(settings, disk=disk).serve)
    try:
        async with ControlClient(settings.calld_socket) as client:
            await client.provision("alice")
            out = io.StringIO()
            assert await run_ask(client, ASK, out=out, err=io.StringIO()) == EXIT_OK
    finally:
        await d.shutdown(drain_s=0)
    assert json.loads(out.getvalue())["status"] == "answered"
    names = [name for name, _ in disk.written]
    assert "result.json" in names and "call_report.json" in names and "dial.json" in names
    assert disk.outside() == [RUN_MARKER], disk.written


@pytest.mark.skipif(not hasattr(os, "sched_setaffinity"), reason="needs sched_setaffinity")
async def test_off_the_loop_still_works_when_the_free_core_it_is_told_of_is_not_online(monkeypatch):
    # os.cpu_count() counts cores that may be offline: moving there fails, and the work runs anyway.
    from calld.runtime import disk as disk_module

    monkeypatch.setattr(disk_module, "loop_free_cores", lambda: {4095})
    assert await off_the_loop(lambda: "written") == "written"
