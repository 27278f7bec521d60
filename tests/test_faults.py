"""The fault suite: each fault injected on purpose into a running daemon, and what must hold after it.

Disk full (an injected ENOSPC on one call's artifacts, and on the ledger), a second daemon, a broken
client stream, a failure before the dial, bad webhooks in stub mode, ambiguous ids; kill -9 and the
start-up errors run the real `calld serve` in a subprocess (tests/test_faults_process.py).
Each asserts: one hangup per call, a finished ledger row, artifacts complete or marked, and the
daemon still serving afterwards.
"""

from __future__ import annotations

import errno
import io
import json
import math
import os
import sqlite3
import stat
import wave
from pathlib import Path

import httpx
import pytest
import trio
import trio.testing

from calld.cli.client import ControlClient, ControlError, DaemonUnreachable, StreamBroken
from calld.cli.ctl import EXIT_LOST, EXIT_OK, run_ask
from calld.daemon.service import UNFINISHED_RETRY_S, Daemon, DaemonError
from calld.ledger import Ledger
from calld.ops.errors import OperationalError
from calld.runtime import rundir as rundir_module
from calld.stub.world import StubWorld
from daemons import real_time, stop

from fault_setup import ASK, ask, client, daemon, hangups, ledger_row, settings_for  # noqa: F401 (fixtures)

pytestmark = pytest.mark.fault


# -- disk full -----------------------------------------------------------------------------------------


class FullDisk:
    """The disk fills up under one call: after `after` journal lines every write into its directory
    fails with ENOSPC (events, audio, JSON), as on a real full filesystem."""

    def __init__(self, monkeypatch, after: int) -> None:
        self.after = after
        self.full: set[Path] = set()
        self.victim: Path | None = None
        original_init = rundir_module.RunDir.__init__
        original_atomic = rundir_module.write_atomic
        disk = self

        def init(rd, artifacts_dir, run_id, secrets):
            original_init(rd, artifacts_dir, run_id, secrets)
            if disk.victim is None:
                disk.victim = rd.path
                rd._journal = _FillingFile(rd._journal, disk, rd)  # noqa: SLF001

        def atomic(path, data):
            if any(p in disk.full for p in (path.parent, path.parent.parent)):
                raise OSError(errno.ENOSPC, "No space left on device", str(path))
            return original_atomic(path, data)

        monkeypatch.setattr(rundir_module.RunDir, "__init__", init)
        monkeypatch.setattr(rundir_module, "write_atomic", atomic)


class _FillingFile:
    def __init__(self, inner, disk: FullDisk, rd) -> None:
        self._inner, self._disk, self._rd, self._n = inner, disk, rd, 0

    def write(self, text: str) -> int:
        self._n += text.count("\n")  # lines, however many one write carries (audio rows are batched)
        if self._n > self._disk.after:
            self._disk.full.add(self._rd.path)
            raise OSError(errno.ENOSPC, "No space left on device")
        return self._inner.write(text)

    def flush(self) -> None:
        self._inner.flush()

    def close(self) -> None:
        self._inner.close()


async def test_a_full_disk_fails_the_call_it_hits_and_never_the_daemon(client, daemon, hangups, monkeypatch, caplog, autojump_clock):
    disk = FullDisk(monkeypatch, after=150)  # mid-conversation
    results: dict[str, tuple] = {}

    async def one(name: str, request_id: str) -> None:
        results[name] = await ask(client, {**ASK, "name": name, "request_id": request_id})

    async with trio.open_nursery() as n:
        n.start_soon(one, "Victim", "full-1")
        await trio.sleep(0.5)
        n.start_soon(one, "Bystander", "full-2")
    code, result, _ = results["Victim"]
    assert (result["status"], result["reason"]) == ("failed", "internal")
    assert "No space left on device" in result["detail"]
    assert any("No space left" in r.getMessage() for r in caplog.records if r.levelname == "ERROR")
    # Hung up once; the ledger row is finished with that result.
    assert hangups[result["call_control_id"]] == 1
    row = ledger_row(daemon, "full-1")
    assert row.status == "done" and row.result == result
    # Artifacts: what is there is whole (no half JSON, no temp files); nothing claims to be a full run.
    victim_dir = next(p for p in daemon.settings.artifacts_dir.iterdir() if (p / "run.json").exists()
                      and json.loads((p / "run.json").read_text())["run_id"] == result["run_id"])
    for f in victim_dir.rglob("*"):
        assert ".tmp-" not in f.name
        if f.suffix == ".json":
            json.loads(f.read_text())
    assert not (victim_dir / "call_report.json").exists()
    # The other call and the next one are untouched.
    assert results["Bystander"][1]["status"] == "answered"
    assert (await ask(client, ASK))[1]["status"] == "answered"


class FullAudioDisk:
    """Only the call's WAV files meet a full disk. `when="live"`: a write that would grow one past
    `room` bytes fails with ENOSPC (rewriting bytes already there, as a header does, still works, as
    on a real full filesystem). `when="close"`: every write is taken, and the failure shows only as
    the files are flushed and closed (delayed allocation)."""

    def __init__(self, monkeypatch, when: str, room: int = 100_000) -> None:
        self.when, self.room = when, room
        real_open = rundir_module.open_private

        def opener(path, *args, **kwargs):
            f = real_open(path, *args, **kwargs)
            return _AudioFile(f, self) if path.parent.name == "audio" else f

        monkeypatch.setattr(rundir_module, "open_private", opener)


class _AudioFile:
    def __init__(self, inner, disk: FullAudioDisk) -> None:
        self._inner, self._disk = inner, disk

    def write(self, data):
        if self._disk.when == "live" and self._inner.tell() + len(data) > self._disk.room:
            raise OSError(errno.ENOSPC, "No space left on device")
        return self._inner.write(data)

    def flush(self):
        self._inner.flush()

    def close(self):
        self._inner.close()  # the descriptor is closed either way, as a real close(2) does
        if self._disk.when == "close":
            raise OSError(errno.ENOSPC, "No space left on device")

    def __getattr__(self, name):
        return getattr(self._inner, name)


async def test_a_disk_that_fills_while_the_hangup_is_retried_still_ends_and_reports_the_call(
        client, daemon, monkeypatch, caplog, autojump_clock):
    """Telnyx does not take the victim's hangup, and its run directory meets a full disk from the first
    try on: hangup.json, the report, even result.json cannot be written. The call still ends after
    HANGUP_RETRY_S, its result (with line_may_be_up) reaches the caller and the ledger, the log names
    what failed and that the line may be up, `show` says so from the ledger, and the daemon places
    another call meanwhile."""
    from calld.adapters.fixtures import load_fixture
    from calld.observe.summary import show_text
    from calld.runtime.rundir import artifact_slug

    disk = FullDisk(monkeypatch, after=10**9)  # the victim's directory is full from its first hangup on
    victim: list[str] = []
    tries: list[str] = []
    refused = trio.Event()
    original = StubWorld._hangup

    def hangup(self, ccid):
        if not victim:
            victim.append(ccid)
            disk.after = -1  # the next journal line fails, and every JSON write into the directory
            disk.full.add(daemon.settings.artifacts_dir / artifact_slug(ccid))
        if ccid == victim[0]:
            tries.append(ccid)
            refused.set()
            return httpx.Response(500, json=load_fixture("telnyx", "error_500"))
        return original(self, ccid)

    monkeypatch.setattr(StubWorld, "_hangup", hangup)
    results: dict[str, tuple] = {}

    async def one(name: str, request_id: str) -> None:
        results[name] = await ask(client, {**ASK, "name": name, "request_id": request_id})

    with caplog.at_level("WARNING", logger="calld"):
        async with trio.open_nursery() as n:
            n.start_soon(one, "Victim", "full-hangup")
            await refused.wait()
            n.start_soon(one, "Bystander", "full-hangup-2")  # placed while the victim's hangup is retried
    code, result, _ = results["Victim"]
    ccid = victim[0]
    assert result["call_control_id"] == ccid and len(tries) > 4  # sent again: the full disk did not stop it
    assert "may still be up" in result["line_may_be_up"] and ccid in result["line_may_be_up"], result
    assert (result["status"], result["reason"]) == ("failed", "internal") and "No space left" in result["detail"]
    row = ledger_row(daemon, "full-hangup")
    assert row.status == "done" and row.result == result
    errors = [r.getMessage() for r in caplog.records if r.levelname == "ERROR"]
    assert any("No space left" in m for m in errors), errors
    assert any("the line may still be up" in m and ccid in m for m in errors), errors
    run_dir = daemon.settings.artifacts_dir / artifact_slug(ccid)
    assert not (run_dir / "hangup.json").exists() and not (run_dir / "result.json").exists()
    shown = show_text(await client.detail("full-hangup"))
    assert "THE LINE MAY STILL BE UP" in shown and ccid in shown, shown
    assert "failed (internal)" in shown and "pruned" not in shown, shown  # the ledger's result; the files left are there
    assert str(run_dir.resolve()) in shown and "events.jsonl" in shown, shown
    found = await client.show("full-hangup")  # show --json
    assert found["result"] == result and "could not be written" in found["note"], found
    assert results["Bystander"][1]["status"] == "answered"
    assert (await ask(client, ASK))[1]["status"] == "answered"


@pytest.mark.parametrize("when", ["live", "close"])
async def test_a_full_disk_for_the_audio_alone_keeps_the_answer_and_the_call_ends_as_ever(
        when, client, daemon, hangups, monkeypatch, caplog, autojump_clock):
    """Issue 55: an audio write failing with ENOSPC failed the call at its end, answer and all. Now the
    recording stops there; the call goes on to its own end on its own time (answered, goodbye, one
    hangup), the answer is in result.json, and the result, the report and one log line say why the
    audio is short."""
    began = trio.current_time()
    _, clean, _ = await ask(client, {**ASK, "request_id": f"audio-clean-{when}"})
    clean_took = trio.current_time() - began
    FullAudioDisk(monkeypatch, when)
    began = trio.current_time()
    code, result, _ = await ask(client, {**ASK, "request_id": f"audio-full-{when}"})
    took = trio.current_time() - began
    assert (code, result["status"], result["answer_text"]) == (EXIT_OK, "answered", clean["answer_text"]), result
    assert "No space left on device" in result["audio_incomplete"] and "audio/" in result["audio_incomplete"]
    assert clean["audio_incomplete"] is None
    ccid = result["call_control_id"]
    assert hangups[ccid] == 1
    assert ledger_row(daemon, f"audio-full-{when}").result == result
    run_dir = daemon.settings.artifacts_dir / result["audio_ref"].split("/")[0]
    assert json.loads((run_dir / "result.json").read_text()) == result
    report = json.loads((run_dir / "call_report.json").read_text())
    clean_report = json.loads((daemon.settings.artifacts_dir / clean["audio_ref"].split("/")[0] / "call_report.json").read_text())
    assert report["audio_incomplete"] == result["audio_incomplete"]
    assert report["hangup"]["via"] == clean_report["hangup"]["via"] == "tool"  # the recorded answer's goodbye
    assert report["final_mark_echo_ms"] is not None  # the goodbye played out before the hangup
    assert not (run_dir / "incomplete.json").exists()  # the journal and the JSON files are whole
    # Not held: it ends when its conversation does, as the same call with room for its audio did.
    assert abs(took - clean_took) < 1.0 and report["duration_ms"] < 30_000, (took, clean_took)
    # The live frames kept flowing both ways after the recording stopped, as they did with room for it.
    assert (report["counts"]["audio_in"], report["counts"]["audio_to_media"]) == (
        clean_report["counts"]["audio_in"], clean_report["counts"]["audio_to_media"])
    assert abs(report["counts"]["audio_to_live"] - clean_report["counts"]["audio_to_live"]) <= 2
    said = [r.getMessage() for r in caplog.records if r.levelname == "ERROR" and "audio" in r.getMessage()]
    assert len(said) == 1 and ccid in said[0] and "No space left" in said[0], said
    with wave.open(str(run_dir / "audio" / "inbound.wav")) as w:  # a valid WAV of what was written
        held_s = w.getnframes() / w.getframerate()
    heard_s = report["counts"]["audio_in_bytes"] / 32_000
    if when == "live":  # stopped at the first write past the room left, while the audio kept coming
        assert 0 < held_s <= 100_000 / 32_000 < heard_s / 3, (held_s, heard_s)
        assert f"audio/inbound.wav at most {held_s:.1f} s" in result["audio_incomplete"]
    else:
        assert held_s == heard_s


async def test_a_ledger_that_cannot_write_a_result_gets_it_later(client, daemon, monkeypatch, autojump_clock):
    original = Ledger.finish_request
    attempts: list[float] = []

    def full(self, request_id, result):
        if request_id == "ledger-full":
            attempts.append(trio.current_time())
            if len(attempts) == 1:
                raise sqlite3.OperationalError("database or disk is full")
        return original(self, request_id, result)

    monkeypatch.setattr(Ledger, "finish_request", full)
    code, result, _ = await ask(client, {**ASK, "request_id": "ledger-full"})
    assert code == EXIT_OK and result["status"] == "answered"  # the caller still gets the result
    assert (await ask(client, ASK))[0] == EXIT_OK  # the daemon serves on
    await trio.sleep(UNFINISHED_RETRY_S + 1)
    row = ledger_row(daemon, "ledger-full")
    assert row.status == "done" and row.result == result
    # Stored by the retry, a retry interval after the write that failed (not lost, not spun on).
    assert len(attempts) == 2 and attempts[1] - attempts[0] >= UNFINISHED_RETRY_S


# -- one daemon per state directory, a clean stop, private files ------------------------------------------------


async def test_a_second_daemon_on_the_same_state_dir_is_refused(daemon, tmp_path, autojump_clock):
    second = Daemon(settings_for(tmp_path, calld_socket=tmp_path / "other.sock"))
    with pytest.raises(OperationalError, match=rf"another calld \(pid {os.getpid()}, control socket {tmp_path}/ctl.sock\)"):
        await second.serve()
    assert not (tmp_path / "other.sock").exists()
    async with ControlClient(daemon.settings.calld_socket) as c:  # the first one is unharmed
        assert await c.dids() == []


async def test_a_clean_stop_removes_the_socket_and_frees_the_state_dir(tmp_path, nursery, autojump_clock):
    settings = settings_for(tmp_path)
    d: Daemon = await nursery.start(Daemon(settings).serve)
    assert stat.S_ISSOCK(os.lstat(settings.calld_socket).st_mode)
    await d.shutdown(drain_s=0)
    await trio.sleep(1)
    assert not settings.calld_socket.exists()
    again: Daemon = await nursery.start(Daemon(settings).serve)  # the lock was released
    await again.shutdown(drain_s=0)


async def test_every_state_file_is_private_whatever_the_umask(tmp_path, nursery, autojump_clock):
    old = os.umask(0o022)
    try:
        d: Daemon = await nursery.start(Daemon(settings_for(tmp_path)).serve)
        async with ControlClient(d.settings.calld_socket) as c:
            await c.provision("alice")
            assert (await ask(c, ASK))[0] == EXIT_OK
        await d.shutdown(drain_s=0)
    finally:
        os.umask(old)
    state = d.settings.calld_state_dir
    loose = [f"{p.relative_to(tmp_path)} {oct(stat.S_IMODE(p.stat().st_mode))}" for p in [state, *state.rglob("*")]
             if stat.S_IMODE(p.stat().st_mode) != (0o700 if p.is_dir() else 0o600)]
    assert not loose, loose
    assert len(list(state.rglob("*.wav"))) == 2


# -- the client's stream -------------------------------------------------------------------------------


class BreakingClient(ControlClient):
    """The stream breaks just before its result line (the daemon stopped mid-answer)."""

    def __init__(self, path: Path, *, daemon_gone: bool = False) -> None:
        super().__init__(path)
        self.daemon_gone = daemon_gone

    async def _stream(self, method, path, body=None):
        lost = False
        async for item in super()._stream(method, path, body):  # read to the end: no half-closed generators
            if "result" in item:
                lost = True
                continue
            yield item
        if lost:
            raise StreamBroken("peer closed connection without sending complete message body")

    async def request_status(self, request_id):
        if self.daemon_gone:
            raise DaemonUnreachable(self.path)
        return await super().request_status(request_id)


async def test_a_broken_stream_prints_the_stored_result_with_its_exit_code(client, daemon, autojump_clock):
    async with BreakingClient(daemon.settings.calld_socket) as broken:
        code, result, err = await ask(broken, ASK)  # no request id given: calld-ctl makes one
    assert code == EXIT_OK and result["status"] == "answered"
    request_id = err.split("request ")[-1].split()[0]
    assert request_id.startswith("ctl-") and ledger_row(daemon, request_id).result == result
    assert "Traceback" not in err


async def test_a_broken_stream_with_the_daemon_gone_is_one_line_saying_how_to_look_it_up(client, daemon, autojump_clock):
    async with BreakingClient(daemon.settings.calld_socket, daemon_gone=True) as broken:
        code, result, err = await ask(broken, {**ASK, "request_id": "gone-1"})
    assert code == EXIT_LOST and result is None
    lines = [line for line in err.splitlines() if line.startswith("calld-ctl:")]
    assert len(lines) == 1 and "went away" in lines[0] and "calld-ctl show gone-1" in lines[0]


async def test_show_finds_a_call_by_request_id(client, daemon, autojump_clock):
    code, result, _ = await ask(client, {**ASK, "request_id": "find-me"})
    assert (await client.show("find-me"))["call_control_id"] == result["call_control_id"]


# -- errors reaching a client are JSON ----------------------------------------------------------------------


async def test_a_ledger_error_reaches_the_client_as_one_json_error(client, daemon, monkeypatch, autojump_clock):
    def malformed(*_a, **_k):
        raise sqlite3.DatabaseError("database disk image is malformed")

    monkeypatch.setattr(daemon._ledger, "request", malformed)  # noqa: SLF001
    status, body = await client.raw("GET", "/v1/requests/x", b"")
    assert status == 500 and isinstance(body, dict)
    assert "ledger failed" in body["error"] and "malformed" in body["error"] and "ledger check" in body["error"]
    status, body = await client.raw("GET", "/v1/calls/x", b"")
    assert status == 500 and isinstance(body, dict)
    monkeypatch.undo()
    assert await client.dids()  # still serving


# -- a failure before the dial -----------------------------------------------------------------------------


async def test_a_local_failure_before_the_dial_does_not_use_up_the_request_id(client, daemon, monkeypatch, hangups, autojump_clock):
    import calld.calls

    original = calld.calls.RunDir
    failed = []

    def read_only(*args, **kwargs):
        if not failed:
            failed.append(1)
            raise OSError(errno.EROFS, "Read-only file system")
        return original(*args, **kwargs)

    monkeypatch.setattr(calld.calls, "RunDir", read_only)
    code, result, err = await ask(client, {**ASK, "request_id": "retry-me"})
    assert code != EXIT_OK and "nothing was dialled" in err and "Read-only" in err
    assert ledger_row(daemon, "retry-me") is None and hangups == {}
    code, result, _ = await ask(client, {**ASK, "request_id": "retry-me"})
    assert code == EXIT_OK and result["status"] == "answered"


# -- ids -----------------------------------------------------------------------------------------------


async def test_call_ids_do_not_repeat_across_restarts(client, daemon, monkeypatch, autojump_clock):
    import itertools

    import calld.stub.world as world

    first = (await ask(client, ASK))[1]["call_control_id"]
    monkeypatch.setattr(world, "_CALL_NUMBERS", itertools.count(1))  # what a restart does to the counter
    second = (await ask(client, ASK))[1]["call_control_id"]
    assert first != second


async def test_show_refuses_an_ambiguous_id_and_lists_the_candidates(client, daemon, autojump_clock):
    result = (await ask(client, ASK))[1]
    run_dir = daemon.settings.artifacts_dir / result["transcript_ref"].split("/")[0]
    twin = run_dir.with_name(run_dir.name + ".2")
    twin.mkdir()
    report = json.loads((run_dir / "call_report.json").read_text())
    (twin / "call_report.json").write_text(json.dumps({**report, "run_id": "run_older"}))
    with pytest.raises(ControlError) as refused:
        await client.show(result["call_control_id"])
    assert refused.value.status == 409 and "run_older" in refused.value.message and result["run_id"] in refused.value.message


# -- stub mode is private ----------------------------------------------------------------------------------


async def test_stub_mode_refuses_a_public_bind(tmp_path, autojump_clock):
    with pytest.raises(DaemonError, match="only on loopback"):
        await Daemon(settings_for(tmp_path, calld_bind="0.0.0.0:0")).serve()
    assert not (tmp_path / "state").exists()  # refused before anything was written
    with pytest.raises(DaemonError, match=r"only on loopback, not 0.0.0.0:0 \(CALLD_MEDIA_BIND\)"):
        await Daemon(settings_for(tmp_path, calld_media_bind="0.0.0.0:0")).serve()
    assert not (tmp_path / "state").exists()


async def test_stub_mode_webhooks_must_be_signed(client, daemon, autojump_clock):
    from calld.adapters.webhook_auth import generate_keypair, sign_webhook

    raw = json.dumps({"data": {"id": "evt-1", "event_type": "call.hangup", "payload": {"call_control_id": "v3:x"}}}).encode()
    async with httpx.AsyncClient() as http:
        unsigned = await http.post(f"{daemon.public_url}/telnyx/webhook", content=raw)
        stranger = await http.post(f"{daemon.public_url}/telnyx/webhook", content=raw,
                                   headers=sign_webhook(raw, generate_keypair()[0], int(__import__("time").time())))
    assert unsigned.status_code == 401 and stranger.status_code == 401
    assert (await ask(client, ASK))[0] == EXIT_OK  # the stub world's own (signed) webhooks still arrive


async def _declared_too_large(public_url: str) -> bytes:
    """A webhook whose Content-Length is over the limit, its body never sent: the answer must come
    from the declared length alone (a client still uploading 300 KB races the server's close)."""
    host, _, port = public_url.removeprefix("http://").partition(":")
    stream = await trio.open_tcp_stream(host, int(port))
    async with stream:
        await stream.send_all(b"POST /telnyx/webhook HTTP/1.1\r\nHost: calld\r\nContent-Type: application/json\r\n"
                              b"Content-Length: 300000\r\nConnection: close\r\n\r\n")
        answer = b""
        with trio.fail_after(30):
            while chunk := await stream.receive_some(65536):
                answer += chunk
                if b"\r\n\r\n" in answer and b"}" in answer.partition(b"\r\n\r\n")[2]:
                    break
    return answer


async def test_the_public_port_answers_json_whatever_it_is_sent(client, daemon, autojump_clock):
    """Wrong routes, methods and sizes, and a signed event of a kind calld does not know (its payload
    null), each get a JSON answer; none is an HTML page, and the daemon goes on serving."""
    odd = json.dumps({"data": {"id": "evt-9", "event_type": "number_order.complete", "payload": None}}).encode()
    with real_time(autojump_clock):  # hypercorn refuses the large body while httpx still sends it: a real exchange
        async with httpx.AsyncClient(timeout=30) as http:
            answers = [
                await http.post(f"{daemon.public_url}/telnyx/webhooks", content=b"{}"),
                await http.get(f"{daemon.public_url}/telnyx/webhook"),
                await http.post(f"{daemon.public_url}/telnyx/webhook", content=odd, headers=daemon._stub_signer.sign(odd)),
            ]
            too_large = await _declared_too_large(daemon.public_url)
    assert [a.status_code for a in answers] == [404, 405, 200]
    assert all(a.headers["content-type"].startswith("application/json") for a in answers)
    assert "POST /telnyx/webhook" in answers[0].json()["error"]
    assert answers[2].json() == {"ok": True, "note": "unknown call"}
    head, _, body = too_large.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 413") and b"application/json" in head and b"at most" in body
    assert (await ask(client, ASK))[0] == EXIT_OK


async def test_low_disk_space_is_in_the_log_when_a_call_starts(client, daemon, monkeypatch, caplog, autojump_clock):
    import calld.daemon.service as service
    from calld.ops.health import DiskSpace

    monkeypatch.setattr(service, "disk_space", lambda path: DiskSpace(str(path), 5_000_000, 10_000_000_000))
    assert (await ask(client, ASK))[0] == EXIT_OK
    assert any("disk space is low: 5 MB free" in r.getMessage() for r in caplog.records if r.levelname == "WARNING")


def test_calld_ctl_never_prints_a_traceback(tmp_path, capsys, monkeypatch):
    import socket as socketlib
    import threading

    from calld.cli import ctl

    # Something that accepts on the control socket and hangs up at once (a daemon dying as it answers).
    path = tmp_path / "ctl.sock"
    server = socketlib.socket(socketlib.AF_UNIX)
    server.bind(str(path))
    server.listen()
    server.settimeout(10)

    def hang_up() -> None:
        conn, _ = server.accept()
        conn.recv(65536)
        conn.close()

    t = threading.Thread(target=hang_up, daemon=True)
    t.start()
    try:
        code = ctl.main(["--socket", str(path), "calls"])
    finally:
        t.join(timeout=5)
        server.close()
    err = capsys.readouterr().err
    assert code == ctl.EXIT_LOST and "Traceback" not in err and len(err.strip().splitlines()) == 1

    async def boom(args):
        raise RuntimeError("something calld-ctl did not expect")

    monkeypatch.setattr(ctl, "_calls", boom)
    parser = ctl.build_parser  # the subcommand's function is bound when the parser is built
    monkeypatch.setattr(ctl, "build_parser", lambda: _with(parser(), "calls", boom))
    assert ctl.main(["--socket", str(path), "calls"]) == ctl.EXIT_FAILED
    err = capsys.readouterr().err
    assert "Traceback" not in err and "RuntimeError: something calld-ctl did not expect" in err and "-v" in err
    assert ctl.main(["--socket", str(path), "-v", "calls"]) == ctl.EXIT_FAILED
    assert "Traceback" in capsys.readouterr().err


def _with(parser, command, afunc):
    for action in parser._subparsers._group_actions:  # noqa: SLF001
        action.choices[command].set_defaults(afunc=afunc)
    return parser


async def test_a_write_error_that_passes_leaves_the_artifacts_marked_incomplete(client, daemon, hangups, monkeypatch, autojump_clock):
    disk = FullDisk(monkeypatch, after=150)
    disk.full = _NeverFull()  # an I/O error on the journal only: later JSON writes succeed
    code, result, _ = await ask(client, {**ASK, "request_id": "eio-1"})
    assert (result["status"], result["reason"]) == ("failed", "internal")
    assert hangups[result["call_control_id"]] == 1
    run_dir = disk.victim.parent / result["transcript_ref"].split("/")[0]
    marker = json.loads((run_dir / "incomplete.json").read_text())
    assert "No space left" in marker["error"]
    report = json.loads((run_dir / "call_report.json").read_text())
    assert report["status"] == "failed" and all((daemon.settings.artifacts_dir / r).is_file() for r in report["refs"].values())


async def test_a_file_that_failed_at_the_calls_end_is_not_referenced_and_the_call_is_failed(
        client, daemon, monkeypatch, autojump_clock):
    # The call itself went well; only its transcript could not be written as it ended. The result
    # and the report must not point at a file that is not there, and must not say "answered".
    real_atomic = rundir_module.write_atomic

    def atomic(path, data):
        if path.name == "transcript.json":
            raise OSError(errno.EIO, "Input/output error", str(path))
        return real_atomic(path, data)

    monkeypatch.setattr(rundir_module, "write_atomic", atomic)
    code, result, _ = await ask(client, {**ASK, "request_id": "late-eio"})
    assert (result["status"], result["reason"]) == ("failed", "internal")
    assert "Input/output error" in result["detail"]
    assert result["transcript_ref"] is None
    run_dir = daemon.settings.artifacts_dir / result["audio_ref"].split("/")[0]
    assert not (run_dir / "transcript.json").exists()
    assert "Input/output error" in json.loads((run_dir / "incomplete.json").read_text())["error"]
    report = json.loads((run_dir / "call_report.json").read_text())
    assert report["status"] == "failed"
    assert "transcript.json" not in report["refs"] and "audio/inbound.wav" in report["refs"]
    assert all((daemon.settings.artifacts_dir / r).is_file() for r in report["refs"].values()), report["refs"]
    # The next call writes whole: answered, and nothing marks its artifacts incomplete.
    monkeypatch.setattr(rundir_module, "write_atomic", real_atomic)
    code, result, _ = await ask(client, {**ASK, "request_id": "after-eio"})
    assert code == EXIT_OK and result["status"] == "answered"
    run_dir = daemon.settings.artifacts_dir / result["transcript_ref"].split("/")[0]
    assert (run_dir / "call_report.json").is_file() and not (run_dir / "incomplete.json").exists()


async def test_a_write_that_fails_as_the_runs_files_are_closed_marks_them_incomplete(
        client, daemon, monkeypatch, autojump_clock):
    # The disk fills up just as the call's last journal rows and audio are flushed and closed:
    # the journal's failure, too, must fail the call and be marked, not pass for a whole run (the
    # audio's alone would not: test_a_full_disk_for_the_audio_alone_keeps_the_answer...).
    closing = [False]

    class FailsOnceClosing:
        def __init__(self, inner) -> None:
            self._inner = inner

        def write(self, data):
            if closing[0]:
                raise OSError(errno.ENOSPC, "No space left on device")
            return self._inner.write(data)

        def flush(self):
            if closing[0]:
                raise OSError(errno.ENOSPC, "No space left on device")
            return self._inner.flush()

        def close(self):
            self._inner.close()
            if closing[0]:  # the last of the buffer, flushed by the close, found no room
                raise OSError(errno.ENOSPC, "No space left on device")

        def __getattr__(self, name):
            return getattr(self._inner, name)

    real_open, real_close = rundir_module.open_private, rundir_module.RunDir.close
    monkeypatch.setattr(rundir_module, "open_private", lambda *a, **k: FailsOnceClosing(real_open(*a, **k)))

    def close(rd) -> None:
        closing[0] = True
        try:
            real_close(rd)
        finally:
            closing[0] = False

    monkeypatch.setattr(rundir_module.RunDir, "close", close)
    code, result, _ = await ask(client, {**ASK, "request_id": "eio-at-close"})
    assert (result["status"], result["reason"]) == ("failed", "internal")
    run_dir = daemon.settings.artifacts_dir / result["transcript_ref"].split("/")[0]
    assert "No space left" in json.loads((run_dir / "incomplete.json").read_text())["error"]
    report = json.loads((run_dir / "call_report.json").read_text())
    assert report["status"] == "failed"
    assert all((daemon.settings.artifacts_dir / r).is_file() for r in report["refs"].values()), report["refs"]


class _NeverFull(set):
    def add(self, _item) -> None:
        pass


async def test_an_idle_daemon_sets_no_timers(client, daemon, hangups, autojump_clock):
    """Nothing queued and nothing unfinished: no task wakes on a timer. (A timer that fires while a
    call waits on another process would also spin a test's autojump clock.)"""
    assert (await ask(client, ASK))[0] == EXIT_OK
    await daemon.after_calls(1)
    await trio.sleep(3600)  # let connection keep-alives and the call's own bounds run out
    await trio.testing.wait_all_tasks_blocked()  # a task woken with us is back asleep, with its next timer
    assert trio.lowlevel.current_statistics().seconds_to_next_deadline == math.inf


# -- a hostile fetch target -----------------------------------------------------------------------------------


class _RunDirStore:
    """A finished call's files as the daemon would sign them for `fetch`, served on an httpx
    MockTransport from its run directory (publishing itself is tested against moto in test_publish_daemon)."""

    def __init__(self, run_dir: Path) -> None:
        self.files = {p.relative_to(run_dir).as_posix(): p.read_bytes() for p in sorted(run_dir.rglob("*")) if p.is_file()}

    async def published_objects(self, ident: str) -> list[dict]:
        import hashlib

        return [{"name": n, "key": n, "url": f"http://store.invalid/{n}", "sha256": hashlib.sha256(b).hexdigest()}
                for n, b in self.files.items()]

    def http(self) -> httpx.AsyncClient:
        return httpx.AsyncClient(transport=httpx.MockTransport(lambda r: httpx.Response(200, content=self.files[r.url.path[1:]])))


async def test_fetch_never_writes_through_a_planted_symlink_and_keeps_the_files_private(client, daemon, tmp_path, autojump_clock):
    from calld.cli.ctl import EXIT_USAGE, run_fetch

    code, result, _ = await ask(client, ASK)
    assert code == EXIT_OK
    store = _RunDirStore(daemon.settings.artifacts_dir / result["transcript_ref"].split("/")[0])
    assert {"result.json", "audio/inbound.wav", "audio/outbound.wav"} <= set(store.files)
    victim, elsewhere = tmp_path / "victim.json", tmp_path / "elsewhere"
    victim.write_text("keep me")
    elsewhere.mkdir()
    planted = tmp_path / "planted"
    planted.mkdir()
    (planted / "result.json").symlink_to(victim)
    (planted / "audio").symlink_to(elsewhere, target_is_directory=True)
    linked = tmp_path / "linked"
    linked.symlink_to(elsewhere, target_is_directory=True)
    for dest in (planted, linked):
        async with store.http() as http:
            assert await run_fetch(store, result["run_id"], dest, out=io.StringIO(), http=http) == EXIT_USAGE
    assert victim.read_text() == "keep me" and list(elsewhere.iterdir()) == []
    old = os.umask(0o022)
    try:
        async with store.http() as http:
            assert await run_fetch(store, result["run_id"], tmp_path / "fresh", out=io.StringIO(), http=http) == EXIT_OK
    finally:
        os.umask(old)
    fresh = tmp_path / "fresh"
    assert {p.relative_to(fresh).as_posix(): p.read_bytes() for p in fresh.rglob("*") if p.is_file()} == store.files
    loose = [p for p in [fresh, *fresh.rglob("*")] if stat.S_IMODE(p.stat().st_mode) != (0o700 if p.is_dir() else 0o600)]
    assert not loose, loose


# -- planted names and numbers ------------------------------------------------------------------------------


async def test_a_planted_name_and_number_reach_neither_the_redacted_report_nor_an_object_key(daemon, tmp_path, autojump_clock):
    """A user id that is a phone number, and the first name again in the notes: the redacted report
    and every object key the publisher would write show none of them, only the keyed stand-in."""
    from calld.cli.ctl import EXIT_OK as BOOKED
    from calld.ops.redaction import KEY_FILE
    from calld.publish.publisher import upload_run
    from calld.publish.store import StoredObject

    user = "2125550143"
    async with ControlClient(daemon.settings.calld_socket) as c:
        await c.provision(user)
        out = io.StringIO()
        body = {"to": "+15555550142", "name": "Nathan", "party": 2, "time": "Friday 7pm", "notes": "booth by the window for Nathan and family", "user": user}
        assert await run_ask(c, body, out=out, err=io.StringIO(), book=True) == BOOKED
    result = json.loads(out.getvalue())
    run_dir = daemon.settings.artifacts_dir / result["transcript_ref"].split("/")[0]
    report = json.loads((run_dir / "call_report.json").read_text())
    assert report["user_id"] == user and "Nathan" in report["booking"]["notes"]  # planted
    redacted = (run_dir / "call_report.redacted.json").read_text()
    stand_in = daemon.pseudonyms.user(user)
    assert json.loads(redacted)["user_id"] == stand_in
    notes = report["booking"]["notes"]
    assert json.loads(redacted)["booking"]["notes"] == daemon.pseudonyms.text(notes) and "booth" not in redacted

    keys: list[str] = []

    class Bucket:
        def put_file(self, key, path, content_type, name):
            keys.append(key)
            return StoredObject(name, key, "0" * 64, 0, content_type)

        def put_bytes(self, key, data, content_type):
            keys.append(key)
            return "0" * 64

    class Row:
        run_id, call_control_id, user_id, created_at = result["run_id"], result["call_control_id"], user, "2026-12-01"

    upload_run(Bucket(), daemon.settings, Row, run_dir, daemon.pseudonyms)
    assert keys and all(k.split("/")[1] == stand_in for k in keys)
    for text in [redacted, *keys]:
        assert not [s for s in ("2125550143", "212-555-0143", "nathan") if s in text.lower()], text
    key = (daemon.settings.calld_state_dir / KEY_FILE).read_bytes()
    assert not any(key in p.read_bytes() for p in daemon.settings.artifacts_dir.rglob("*") if p.is_file())


# -- a texting flood ----------------------------------------------------------------------------------------


async def test_a_texting_flood_gets_one_notice_and_the_daemon_keeps_serving(tmp_path, nursery, autojump_clock):
    """A stranger's and a linked handle's floods, keywords included: each handle hears at most its
    limit and one notice, nothing is dialled, and the daemon still answers a call afterwards."""
    from calld.messaging import replies

    settings = settings_for(tmp_path, messaging_texts_per_hour=4, messaging_unlinked_texts_per_hour=1)
    d: Daemon = await nursery.start(Daemon(settings).serve)
    linked, stranger = "+15555550177", "+15555550188"
    async with ControlClient(settings.calld_socket) as c:
        await c.provision("alice")
        await c.messaging_link(linked, "alice", "Nathan")
        for handle in (linked, stranger):
            for text in ["HELP", "START", "tell me a joke", "HELP", "START"] * 5:
                await d.messaging.fake.text(handle, text)
        await d.messaging.wait_idle()
        fake = d.messaging.fake
        assert fake.replies_to(stranger) == [replies.HELP, replies.TOO_MANY_TEXTS]
        got = fake.replies_to(linked)
        assert len(got) == 5 and got[-1] == replies.TOO_MANY_TEXTS and got.count(replies.TOO_MANY_TEXTS) == 1
        assert d._ledger.sync.requests(10) == []
        assert (await ask(c, ASK))[0] == EXIT_OK
    await stop(d)
