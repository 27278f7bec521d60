"""The real `calld serve` in a subprocess: start-up problems are one line and exit 2, and kill -9 in
the middle of a call is recovered by the next start (hung up, WAV repaired, result failed with reason
daemon_restart, `show` finds it, a repeat of the request id returns it).

These run on the wall clock (a subprocess cannot share the autojump clock); each waits for an event
with a bound, never for a fixed time.
"""

from __future__ import annotations

import io
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import wave
from pathlib import Path

import pytest
import trio

from calld.cli.client import ControlClient
from calld.cli.ctl import EXIT_LOST, EXIT_OK, build_parser, run_ask
from calld.daemon.service import Daemon
from calld.ledger import Ledger
from calld.settings import Settings, load_settings
from tests.daemons import free_port

ASK = {"to": "+15555550142", "ask": "hours", "name": "Nathan", "user": "alice"}
pytestmark = pytest.mark.fault


def clean_env(**extra: str) -> dict[str, str]:
    """No developer .env or CALLD_/TELNYX_/OPENAI_ settings leak into the daemon under test."""
    keep = {k: v for k, v in os.environ.items() if k in ("PATH", "HOME", "LANG", "PYTHONPATH", "VIRTUAL_ENV")}
    return {**keep, **extra}


def serve_cmd(tmp_path: Path, *args: str, verbose: bool = False) -> list[str]:
    return [sys.executable, "-m", "calld.cli.daemon", *(["-v"] if verbose else []), "serve",
            "--state-dir", str(tmp_path / "state"), "--socket", str(tmp_path / "ctl.sock"), *args]


def start_up(tmp_path: Path, *args: str, env: dict[str, str] | None = None, verbose: bool = False) -> subprocess.CompletedProcess[str]:
    return subprocess.run(serve_cmd(tmp_path, *args, verbose=verbose), cwd=tmp_path, env=env or clean_env(),
                          capture_output=True, text=True, timeout=60)


def one_line(done: subprocess.CompletedProcess[str]) -> str:
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr and "ExceptionGroup" not in done.stderr, done.stderr
    lines = [line for line in done.stderr.splitlines() if line.startswith("calld: ")]
    assert len(lines) == 1, done.stderr
    return lines[0]


def test_port_in_use_is_one_line_naming_the_port_and_the_setting(tmp_path):
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        port = holder.getsockname()[1]
        line = one_line(start_up(tmp_path, "--bind", f"127.0.0.1:{port}"))
        # what the operator typed, and what to change: the flag, not a setting they never set
        assert f"port {port}" in line and f"(--bind 127.0.0.1:{port})" in line and "choose another --bind" in line, line
        assert "CALLD_BIND" not in line, line
        line = one_line(start_up(tmp_path, env=clean_env(CALLD_BIND=f"127.0.0.1:{port}")))
        assert f"(CALLD_BIND=127.0.0.1:{port})" in line and "choose another CALLD_BIND" in line, line
        shutil.rmtree(tmp_path / "state", ignore_errors=True)
        assert not (tmp_path / "state").exists()  # the start failed: it made no state directory after all
        # One that was there and empty is left as it was found, its mode too; one with a ledger keeps it.
        (tmp_path / "state").mkdir(mode=0o755)
        os.chmod(tmp_path / "state", 0o755)
        one_line(start_up(tmp_path, "--bind", f"127.0.0.1:{port}"))
        assert list((tmp_path / "state").iterdir()) == [] and (tmp_path / "state").stat().st_mode & 0o777 == 0o755
        Ledger(tmp_path / "state" / "calld.sqlite3").close()
        one_line(start_up(tmp_path, "--bind", f"127.0.0.1:{port}"))
        assert (tmp_path / "state" / "calld.sqlite3").stat().st_size > 0


def test_media_port_in_use_is_one_line_naming_its_setting(tmp_path):
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        port = holder.getsockname()[1]
        line = one_line(start_up(tmp_path, "--bind", "127.0.0.1:0", env=clean_env(CALLD_MEDIA_BIND=f"127.0.0.1:{port}")))
    assert f"port {port}" in line and f"(CALLD_MEDIA_BIND=127.0.0.1:{port})" in line
    with socket.socket() as holder:  # no CALLD_MEDIA_BIND: the port after --bind's, and both ways to move it
        port = next(p for p in iter(free_port, None) if port_free(p - 1))
        holder.bind(("127.0.0.1", port))
        holder.listen()
        line = one_line(start_up(tmp_path, "--bind", f"127.0.0.1:{port - 1}"))
    assert f"port {port}" in line and f"the port after --bind 127.0.0.1:{port - 1}" in line, line
    assert "choose another --bind, or set CALLD_MEDIA_BIND" in line, line


def port_free(port: int) -> bool:
    with socket.socket() as probe:
        try:
            probe.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def test_missing_live_settings_are_listed_on_one_line(tmp_path):
    line = one_line(start_up(tmp_path, env=clean_env(CALLD_MODE="live")))
    for name in ("TELNYX_API_KEY", "OPENAI_API_KEY", "PUBLIC_BASE_URL", "CALLD_LIVE_OPT_IN"):
        assert name in line


def test_an_unusable_state_dir_names_the_path(tmp_path):
    (tmp_path / "state").write_text("a file where the directory should be")
    line = one_line(start_up(tmp_path, "--bind", "127.0.0.1:0"))
    assert str(tmp_path / "state") in line and "CALLD_STATE_DIR" in line


def test_a_line_of_env_python_dotenv_cannot_parse_stops_the_start_naming_the_file_and_line(tmp_path):
    # An unterminated quote: python-dotenv would skip the line with a warning, and calld would run in
    # stub mode on the defaults, without the key the operator meant to set.
    (tmp_path / ".env").write_text('CALLD_MODE=stub\nOPENAI_API_KEY = "sk-secret-value\nCALLD_MAX_CALLS=5\n')
    done = start_up(tmp_path, "--bind", "127.0.0.1:0")
    line = one_line(done)
    assert f"{tmp_path / '.env'}, line 2" in line and "OPENAI_API_KEY" in line, line
    assert "sk-secret-value" not in done.stderr  # the value may be a key: never printed
    assert not (tmp_path / "state").exists() and not (tmp_path / "ctl.sock").exists()  # nothing made


def test_a_socket_in_use_is_one_line(tmp_path):
    with socket.socket(socket.AF_UNIX) as holder:
        holder.bind(str(tmp_path / "ctl.sock"))
        holder.listen()
        line = one_line(start_up(tmp_path, "--bind", "127.0.0.1:0"))
    assert "ctl.sock is in use" in line
    assert not (tmp_path / "state").exists()


def test_a_corrupt_ledger_is_one_line_and_the_traceback_only_with_v(tmp_path):
    (tmp_path / "state").mkdir()
    (tmp_path / "state" / "calld.sqlite3").write_bytes(b"")
    line = one_line(start_up(tmp_path, "--bind", "127.0.0.1:0"))
    assert "calld.sqlite3 is empty" in line and "backup" in line
    verbose = start_up(tmp_path, "--bind", "127.0.0.1:0", verbose=True)
    assert verbose.returncode == 2 and "Traceback" in verbose.stderr


async def wait_for(predicate, what: str, bound_s: float = 30.0) -> None:
    with trio.fail_after(bound_s):
        while not predicate():
            await trio.sleep(0.05)


async def kill_9_mid_call(proc: subprocess.Popen, sock: Path, body: dict, nursery: trio.Nursery, bound_s: float = 60.0) -> None:
    """Ask `body` of the live daemon `proc` (its control socket `sock`), and SIGKILL it once the call is
    under way; returns when calld-ctl has given up. The daemon is dead afterwards, whatever happened."""
    err = io.StringIO()
    try:
        await wait_for(sock.exists, "the control socket", bound_s)
        done = trio.Event()
        async with ControlClient(sock) as client:
            await client.provision("alice")

            async def the_call() -> None:
                await run_ask(client, body, out=io.StringIO(), err=err)
                done.set()

            nursery.start_soon(the_call)
            await wait_for(lambda: "asking" in err.getvalue(), "the call to be under way", bound_s)
            proc.send_signal(signal.SIGKILL)
            proc.wait(timeout=10)
            await wait_for(done.is_set, "calld-ctl to give up")
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


async def kill_9_after_the_verdict(tmp_path: Path, nursery: trio.Nursery) -> None:
    """A stub call to the request id killed-1, and calld serve killed (SIGKILL) once its verdict was
    accepted, before the goodbye: what is left is the state dir under tmp_path, as a crash leaves it."""
    env = clean_env()
    proc = subprocess.Popen(serve_cmd(tmp_path, "--bind", "127.0.0.1:0"), cwd=tmp_path, env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        sock = tmp_path / "ctl.sock"
        await wait_for(sock.exists, "the control socket")
        err = io.StringIO()
        done = trio.Event()
        codes: list[int] = []
        async with ControlClient(sock) as client:
            await client.provision("alice")

            async def the_call() -> None:
                codes.append(await run_ask(client, {**ASK, "request_id": "killed-1"}, out=io.StringIO(), err=err))
                done.set()

            nursery.start_soon(the_call)
            await wait_for(lambda: "answer heard" in err.getvalue(), "the verdict")
            proc.send_signal(signal.SIGKILL)
            proc.wait(timeout=10)
            await wait_for(done.is_set, "calld-ctl to give up")
        # The client: one line, no traceback, how to look the request up.
        assert codes == [EXIT_LOST]
        assert "Traceback" not in err.getvalue() and "calld-ctl show killed-1" in err.getvalue()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def restart_settings(tmp_path: Path) -> Settings:
    return load_settings(calld_state_dir=tmp_path / "state", calld_socket=tmp_path / "ctl.sock",
                         calld_bind="127.0.0.1:0", _env_file=None)


async def test_kill_9_after_the_verdict_is_recovered_by_the_next_start(tmp_path, nursery):
    """Killed after the business answered and the verdict was accepted, before the goodbye: the next
    start finishes the call on that verdict (the daemon_restart path: the live-mode test below)."""
    await kill_9_after_the_verdict(tmp_path, nursery)
    settings = restart_settings(tmp_path)
    led = Ledger(settings.db_path)
    assert led.request("killed-1").status == "in_flight"  # the call id was stored as soon as it was known
    led.close()
    assert (tmp_path / "ctl.sock").exists()  # a kill -9 leaves its socket; the next start replaces it
    daemon: Daemon = await nursery.start(Daemon(settings).serve)
    try:
        async with ControlClient(settings.calld_socket) as client:
            found = await client.show("killed-1")
            assert found["status"] == "answered" and "9 AM to 5 PM" in found["result"]["answer_text"]
            again = [item async for item in client.ask({**ASK, "request_id": "killed-1"})]
            assert again == [{"result": found["result"], "repeat": True}]
            assert await client.dids()  # serving plain requests
        run_dir = settings.artifacts_dir / found["artifact_prefix"]
        for name in ("inbound.wav", "outbound.wav"):
            path = run_dir / "audio" / name
            with wave.open(str(path)) as w:
                assert w.getnframes() * 2 == path.stat().st_size - 44 > 1000  # the header counts all that was written
        recovery = json.loads((run_dir / "recovery.json").read_text())
        assert recovery["wav_repaired"] == ["inbound.wav", "outbound.wav"]
        assert json.loads((run_dir / "result.json").read_text()) == found["result"]
    finally:
        await daemon.shutdown(drain_s=0)


async def test_a_recovered_call_is_shown_as_recovered_with_what_was_saved(tmp_path, nursery, capsys):
    """After kill -9 and a restart, show, --transcript, --timeline and history present the call as
    recovered (its folder holds recovery.json, the repaired WAVs, the rebuilt transcript), not as pruned."""
    await kill_9_after_the_verdict(tmp_path, nursery)
    settings = restart_settings(tmp_path)
    daemon: Daemon = await nursery.start(Daemon(settings).serve)

    async def ctl(*argv: str) -> str:
        args = build_parser().parse_args(["--socket", str(settings.calld_socket), *argv])
        capsys.readouterr()
        assert await args.afunc(args) == EXIT_OK
        return capsys.readouterr().out

    try:
        shown = await ctl("show", "killed-1", "--transcript")
        assert "pruned" not in shown and "no finished call" not in shown, shown
        (recovered,) = [line for line in shown.splitlines() if line.strip().startswith("recovered")]
        assert "calld stopped while this call was on the line" in recovered and "headers repaired" in recovered, recovered
        assert "transcript rebuilt from events.jsonl" in recovered, recovered
        assert "9 AM to 5 PM" in shown  # the answer, from the verdict accepted before the kill
        for name in ("recovery.json", "audio/inbound.wav", "audio/outbound.wav", "transcript.json", "events.jsonl"):
            assert any(line.split()[:1] == [name] for line in shown.splitlines()), (name, shown)
        transcript = shown[shown.index("transcript (seconds into the call):"):]
        assert "agent:" in transcript and "business:" in transcript and "automated assistant" in transcript, transcript
        picture = tmp_path / "killed.png"
        assert (await ctl("show", "killed-1", "--timeline", str(picture))).strip() == str(picture.resolve())
        assert picture.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        history = await ctl("history")
        (line,) = [row for row in history.splitlines() if "hours" in row]
        assert "answered (recovered)" in line, history
        (row,) = json.loads(await ctl("history", "--json"))
        assert row["recovered"] is True and row["artifacts"] is True
    finally:
        await daemon.shutdown(drain_s=0)


async def test_kill_9_in_live_mode_hangs_the_call_up_at_the_carrier_once(tmp_path, nursery):
    """A live daemon (against the loopback simulator: real REST, webhooks and WebSockets) is killed mid-call;
    the next start hangs the call up at Telnyx exactly once and finishes it as daemon_restart."""
    from calld.sim.server import Simulator
    from calld.stub.scenario import SCENARIOS

    sim = Simulator(SCENARIOS["hours"])
    addrs = await nursery.start(sim.serve)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    media_port = free_port()
    base = f"http://127.0.0.1:{port}"
    live = {
        "CALLD_MODE": "live", "CALLD_LIVE_OPT_IN": "1", "TELNYX_API_KEY": "KEY-sim", "TELNYX_CONNECTION_ID": "sim-connection",
        "TELNYX_PUBLIC_KEY": addrs.public_key, "TELNYX_API_BASE": addrs.telnyx_api_base, "OPENAI_API_KEY": "KEY-sim",
        "OPENAI_LIVE_URL": addrs.live_url, "PUBLIC_BASE_URL": base, "PUBLIC_WEBHOOK_URL": f"{base}/telnyx/webhook",
        "CALLD_MEDIA_BIND": f"127.0.0.1:{media_port}", "PUBLIC_MEDIA_URL": f"ws://127.0.0.1:{media_port}/telnyx/media",
    }
    proc = subprocess.Popen(serve_cmd(tmp_path, "--bind", f"127.0.0.1:{port}"), cwd=tmp_path, env=clean_env(**live),
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    await kill_9_mid_call(proc, tmp_path / "ctl.sock", {**ASK, "request_id": "live-killed"}, nursery)
    (ccid, world), = sim.worlds.items()
    assert world.hangup_requests == []  # nobody hung up: the carrier's call outlived the daemon

    settings = load_settings(**{k.lower(): v for k, v in live.items()}, calld_state_dir=tmp_path / "state",
                             calld_socket=tmp_path / "ctl.sock", calld_bind=f"127.0.0.1:{port}", _env_file=None)
    daemon: Daemon = await nursery.start(Daemon(settings).serve)
    try:
        assert world.hangup_requests == [ccid]  # once, with the call's own hangup command id
        led = Ledger(settings.db_path)
        row = led.request("live-killed")
        led.close()
        assert row.status == "done" and row.result["reason"] == "daemon_restart"
        async with ControlClient(settings.calld_socket) as client:
            found = await client.show("live-killed")
        recovery = json.loads((settings.artifacts_dir / found["artifact_prefix"] / "recovery.json").read_text())
        assert recovery["hangup"] in ("requested", "already_ended")
    finally:
        await daemon.shutdown(drain_s=0)
    assert world.hangup_requests == [ccid]  # and never again


async def test_calld_serve_freezes_its_start_up_heap_out_of_the_collector(tmp_path):
    proc = subprocess.Popen(serve_cmd(tmp_path, "--bind", "127.0.0.1:0"), cwd=tmp_path, env=clean_env(),
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        sock = tmp_path / "ctl.sock"
        await wait_for(sock.exists, "the control socket")
        async with ControlClient(sock) as client:
            text = await client.metrics()
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=30)
    frozen = next(float(line.split()[1]) for line in text.splitlines() if line.startswith("calld_gc_frozen_objects "))
    assert frozen > 10_000  # modules, apps and settings: tens of thousands of objects


def _threads_off(pid: int, core: int) -> list[str]:
    """The daemon's threads whose affinity leaves out `core`."""
    off: list[str] = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            cores = os.sched_getaffinity(int(task.name))
        except OSError:  # the thread ended meanwhile
            continue
        if core not in cores:
            off.append(task.name)
    return off


@pytest.mark.skipif(not hasattr(os, "sched_setaffinity") or (os.cpu_count() or 1) < 2
                    or not Path("/proc/self/task").is_dir(), reason="needs Linux and two cores")
async def test_calld_serve_pinned_to_a_core_does_its_disk_work_on_another(tmp_path):
    # systemd's CPUAffinity pins calld serve; its disk work (the claim's fsync, then the call's
    # files) runs in a worker thread that leaves the loop's core.
    proc = subprocess.Popen(serve_cmd(tmp_path, "--bind", "127.0.0.1:0"), cwd=tmp_path, env=clean_env(),
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            preexec_fn=lambda: os.sched_setaffinity(0, {0}))
    try:
        sock = tmp_path / "ctl.sock"
        await wait_for(sock.exists, "the control socket")
        assert _threads_off(proc.pid, 0) == []  # nothing has left the loop's core yet
        async with ControlClient(sock) as client:
            await client.provision("alice")

            async def the_call() -> None:
                await run_ask(client, {**ASK, "request_id": "pinned-1"}, out=io.StringIO(), err=io.StringIO())

            async with trio.open_nursery() as n:
                n.start_soon(the_call)
                await wait_for(lambda: _threads_off(proc.pid, 0) != [], "a thread off the loop's core")
                n.cancel_scope.cancel()  # the call itself is not what this test is about
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=30)


async def test_kill_9_while_the_hangup_is_refused_is_recovered_as_a_line_that_may_be_up(tmp_path, nursery, monkeypatch):
    """A live daemon (against the loopback simulator) is killed while Telnyx refuses its hangup and calld is
    sending it again; Telnyx refuses the restart's too and says the call is alive: the recovered result,
    recovery.json and show say the line may still be up, never that the call was hung up."""
    import httpx

    from calld.adapters.fixtures import load_fixture
    from calld.observe.summary import show_text
    from calld.sim.server import Simulator
    from calld.stub.scenario import SCENARIOS
    from calld.stub.world import StubWorld

    def refuse(self, ccid):  # the simulator runs in this process: its Telnyx takes no hangup
        self.hangup_requests.append(ccid)
        return httpx.Response(500, json=load_fixture("telnyx", "error_500"))

    monkeypatch.setattr(StubWorld, "_hangup", refuse)
    sim = Simulator(SCENARIOS["hours"])
    addrs = await nursery.start(sim.serve)
    port, media_port = free_port(), free_port()
    base = f"http://127.0.0.1:{port}"
    live = {
        "CALLD_MODE": "live", "CALLD_LIVE_OPT_IN": "1", "TELNYX_API_KEY": "KEY-sim", "TELNYX_CONNECTION_ID": "sim-connection",
        "TELNYX_PUBLIC_KEY": addrs.public_key, "TELNYX_API_BASE": addrs.telnyx_api_base, "OPENAI_API_KEY": "KEY-sim",
        "OPENAI_LIVE_URL": addrs.live_url, "PUBLIC_BASE_URL": base, "PUBLIC_WEBHOOK_URL": f"{base}/telnyx/webhook",
        "CALLD_MEDIA_BIND": f"127.0.0.1:{media_port}", "PUBLIC_MEDIA_URL": f"ws://127.0.0.1:{media_port}/telnyx/media",
    }
    proc = subprocess.Popen(serve_cmd(tmp_path, "--bind", f"127.0.0.1:{port}"), cwd=tmp_path, env=clean_env(**live),
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    sock = tmp_path / "ctl.sock"
    try:
        await wait_for(sock.exists, "the control socket", 60)
        async with ControlClient(sock) as client:
            await client.provision("alice")
            done = trio.Event()

            async def the_call() -> None:
                await run_ask(client, {**ASK, "request_id": "killed-hanging-up"}, out=io.StringIO(), err=io.StringIO())
                done.set()

            nursery.start_soon(the_call)
            await wait_for(lambda: any(w.hangup_requests for w in sim.worlds.values()), "calld's first hangup", 120)
            proc.send_signal(signal.SIGKILL)  # while the hangup is being sent again (HANGUP_RETRY_S is 30 s)
            proc.wait(timeout=10)
            await wait_for(done.is_set, "calld-ctl to give up")
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    (ccid, world), = sim.worlds.items()
    before = len(world.hangup_requests)

    settings = load_settings(**{k.lower(): v for k, v in live.items()}, calld_state_dir=tmp_path / "state",
                             calld_socket=sock, calld_bind=f"127.0.0.1:{port}", _env_file=None)
    daemon: Daemon = await nursery.start(Daemon(settings).serve)
    try:
        assert len(world.hangup_requests) > before and set(world.hangup_requests) == {ccid}  # sent once more, refused
        async with ControlClient(settings.calld_socket) as client:
            found = await client.show("killed-hanging-up")
            detail = await client.detail("killed-hanging-up")
        result = found["result"]
        assert "the line may still be up" in result["line_may_be_up"].lower() and ccid in result["line_may_be_up"], result
        recovery = json.loads((settings.artifacts_dir / found["artifact_prefix"] / "recovery.json").read_text())
        assert recovery["hangup"].startswith("error:") and recovery["call_status"] == "alive"
        assert recovery["line_may_be_up"] == result["line_may_be_up"]
        assert "THE LINE MAY STILL BE UP" in show_text(detail)
    finally:
        await daemon.shutdown(drain_s=0)
