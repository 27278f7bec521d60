"""Operations, one piece at a time: the state directory, its lock, private files, the ledger's health
(check, backup, refusal of a damaged one), WAV repair and the recovery of calls a crash left."""

from __future__ import annotations

import errno
import json
import os
import stat
import struct
import wave
from pathlib import Path

import httpx
import pytest

from calld.adapters.telnyx_http import TelnyxHttp
from calld.cli.ctl import EXIT_OK, EXIT_USAGE, EXIT_VERIFY_FAILED, main as ctl_main
from calld.domain import results
from calld.domain.ids import RunId, UserId
from calld.ledger import Ledger
from calld.ops.errors import OperationalError
from calld.ops.health import LedgerDamaged, backup_ledger, disk_space, ledger_problems, open_ledger
from calld.ops.private import open_private, private_dir, write_atomic
from calld.ops.recovery import find_run_dir, recover_interrupted, repair_wav
from calld.ops.statedir import StateLock, check_socket_dir, is_loopback, prepare_state_dir
from calld.runtime.rundir import WAV_BATCH_BYTES, RunDir


def mode(path: Path) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


@pytest.fixture
def loose_umask():
    old = os.umask(0o022)  # what a developer's shell usually has: 0755 dirs, 0644 files
    yield
    os.umask(old)


# -- failure codes -----------------------------------------------------------------------------------


# -- state directory, lock, private files ----------------------------------------------------------------


def test_state_dir_is_made_private_and_new_only_once(tmp_path, loose_umask):
    state = tmp_path / "state"
    assert prepare_state_dir(state) is True
    assert mode(state) == 0o700
    (state / "calld.sqlite3").write_bytes(b"")
    os.chmod(state, 0o755)
    assert prepare_state_dir(state) is False  # it has data now
    assert mode(state) == 0o700  # an existing directory is brought back to 0700


def test_an_unusable_state_dir_is_one_line_naming_the_path(tmp_path, monkeypatch):
    blocker = tmp_path / "a-file"
    blocker.write_text("x")
    with pytest.raises(OperationalError, match=r"a-file/state cannot be used .*CALLD_STATE_DIR"):
        prepare_state_dir(blocker / "state")
    # Read-only (tests may run as root, who ignores modes: the error is injected where it would arise).
    real_open = os.open

    def read_only(path, flags, *args):
        if ".write-probe" in str(path):
            raise OSError(errno.EROFS, "Read-only file system", str(path))
        return real_open(path, flags, *args)

    monkeypatch.setattr(os, "open", read_only)
    with pytest.raises(OperationalError, match=r"state cannot be used \(read-only\)"):
        prepare_state_dir(tmp_path / "state")


def test_the_lock_refuses_a_second_holder_naming_pid_and_socket(tmp_path):
    first = StateLock(tmp_path, tmp_path / "one.sock")
    first.acquire()
    second = StateLock(tmp_path, tmp_path / "two.sock")
    with pytest.raises(OperationalError, match=rf"pid {os.getpid()}, control socket {tmp_path}/one.sock"):
        second.acquire()
    first.release()
    second.acquire()  # free once its holder lets go (or dies: the kernel drops an flock)
    second.release()


def test_the_socket_directory_must_be_ours_and_not_writable_by_others(tmp_path):
    mine = tmp_path / "mine"
    mine.mkdir(mode=0o700)
    check_socket_dir(mine)
    open_dir = tmp_path / "open"
    open_dir.mkdir()
    os.chmod(open_dir, 0o777)
    with pytest.raises(OperationalError, match="writable by other users"):
        check_socket_dir(open_dir)
    os.chmod(open_dir, 0o1777)  # sticky, like /tmp: others cannot replace our socket
    check_socket_dir(open_dir)
    if os.getuid() == 0:
        theirs = tmp_path / "theirs"
        theirs.mkdir(mode=0o700)
        os.chown(theirs, 4242, 4242)
        with pytest.raises(OperationalError, match="belongs to uid 4242"):
            check_socket_dir(theirs)


def test_private_helpers_ignore_the_umask_and_write_whole_files(tmp_path, loose_umask):
    d = private_dir(tmp_path / "d")
    with open_private(d / "f", "w") as f:
        f.write("x")
    write_atomic(d / "g.json", b"{}")
    assert (mode(d), mode(d / "f"), mode(d / "g.json")) == (0o700, 0o600, 0o600)

    class Boom(Exception):
        pass

    real_replace = os.replace

    def fail_replace(a, b):
        raise Boom()

    os.replace = fail_replace  # type: ignore[assignment]
    try:
        with pytest.raises(Boom):
            write_atomic(d / "g.json", b'{"new": 1}')
    finally:
        os.replace = real_replace  # type: ignore[assignment]
    assert (d / "g.json").read_bytes() == b"{}"  # the old file stands whole; no temp file is left
    assert sorted(p.name for p in d.iterdir()) == ["f", "g.json"]


async def test_a_start_that_fails_late_leaves_no_socket_directory_or_state_it_made(tmp_path, monkeypatch):
    from calld.daemon.service import Daemon
    from tests.daemons import daemon_settings

    async def cannot_read(self):
        raise OperationalError("the stale requests cannot be read")

    monkeypatch.setattr(Daemon, "_finish_stale_requests", cannot_read)  # after the socket's directory is made
    daemon = Daemon(daemon_settings(tmp_path, calld_socket=tmp_path / "run" / "calld" / "ctl.sock"))
    with pytest.raises(BaseException) as failed:
        await daemon.serve()
    assert "stale requests cannot be read" in repr(failed.value)
    assert not (tmp_path / "run").exists() and not (tmp_path / "state").exists()


async def test_a_daemon_that_made_its_state_directory_keeps_it_after_a_good_run(tmp_path):
    """The start-up clean-up is for a start that failed: a daemon that served leaves its ledger."""
    from calld.daemon.service import Daemon
    from tests.daemons import daemon_settings

    import trio

    settings = daemon_settings(tmp_path, calld_socket=tmp_path / "run" / "ctl.sock")
    async with trio.open_nursery() as own:
        daemon = await own.start(Daemon(settings).serve)
        await daemon.shutdown(drain_s=0)
    # serve() has returned: whatever it cleans up on the way out is done
    assert (tmp_path / "state" / "calld.sqlite3").stat().st_size > 0 and (tmp_path / "state" / "artifacts").is_dir()
    assert (tmp_path / "run").is_dir()  # its socket is gone, the directory made for it stays


def test_stub_mode_binds_only_to_loopback():
    assert is_loopback("127.0.0.1:8787") and is_loopback("[::1]:1") and is_loopback("localhost:1")
    assert not is_loopback("0.0.0.0:8787") and not is_loopback("192.168.1.5:80")


# -- the ledger's health -------------------------------------------------------------------------------


def a_ledger(path: Path) -> None:
    led = Ledger(path)
    led.provision_stub(UserId("alice"))
    for i in range(300):  # enough rows for several pages
        led.claim_request(f"req-{i}", user_id="alice", kind="ask", params={"n": i, "pad": "x" * 200}, run_id=RunId.new())
    led._db.execute("PRAGMA wal_checkpoint(TRUNCATE)")  # noqa: SLF001 - everything in the main file
    led.close()


def test_a_missing_ledger_is_created_only_in_a_new_state_dir(tmp_path, loose_umask):
    led = open_ledger(tmp_path / "new.sqlite3", state_dir_is_new=True)
    led.close()
    assert mode(tmp_path / "new.sqlite3") == 0o600
    with pytest.raises(LedgerDamaged, match="is missing, but its state directory already holds calld's data"):
        open_ledger(tmp_path / "gone.sqlite3", state_dir_is_new=False)
    assert not (tmp_path / "gone.sqlite3").exists()


@pytest.mark.parametrize("damage, says", [
    ("empty", "is empty"),
    ("truncated", "is truncated"),
    ("header", "not a SQLite database"),
    ("page", "is corrupt"),
])
def test_a_damaged_ledger_refuses_to_open_and_is_left_as_it_was(tmp_path, damage, says):
    path = tmp_path / "calld.sqlite3"
    a_ledger(path)
    data = path.read_bytes()
    match damage:
        case "empty":
            path.write_bytes(b"")
        case "truncated":
            path.write_bytes(data[: len(data) // 2])
        case "header":
            path.write_bytes(b"garbage!" * 20 + data[160:])
        case "page":
            page = int.from_bytes(data[16:18], "big")
            # Scribble over the b-tree page headers of every page past the schema page.
            raw = bytearray(data)
            for start in range(page, len(raw), page):
                raw[start:start + 12] = b"\xff" * 12
            path.write_bytes(bytes(raw))
    before = path.read_bytes()
    with pytest.raises(LedgerDamaged, match=says) as refused:
        open_ledger(path, state_dir_is_new=False)
    assert "\n" not in str(refused.value) and "Restore a backup" in str(refused.value)
    assert path.read_bytes() == before  # never replaced, never migrated
    assert ledger_problems(path)  # the check says so too


def test_ledger_check_and_backup_from_calld_ctl(tmp_path, capsys, loose_umask):
    state = tmp_path / "state"
    state.mkdir()
    a_ledger(state / "calld.sqlite3")
    assert ctl_main(["ledger", "check", "--state-dir", str(state)]) == EXIT_OK
    assert "ok" in capsys.readouterr().out
    copy = tmp_path / "backup.sqlite3"
    assert ctl_main(["ledger", "backup", str(copy), "--state-dir", str(state)]) == EXIT_OK
    assert mode(copy) == 0o600 and ledger_problems(copy) == []
    led = Ledger(copy)
    assert led.request("req-299") is not None and led.did_for(UserId("alice"))
    led.close()
    assert ctl_main(["ledger", "backup", str(copy), "--state-dir", str(state)]) == EXIT_USAGE  # never overwrites
    assert "already exists" in capsys.readouterr().err
    nowhere = tmp_path / "no-such-dir" / "backup.sqlite3"
    assert ctl_main(["ledger", "backup", str(nowhere), "--state-dir", str(state)]) == EXIT_USAGE
    assert f"cannot write the backup at {nowhere} (No such file or directory)" in capsys.readouterr().err
    assert not nowhere.parent.exists()
    (state / "calld.sqlite3").write_bytes(b"")
    assert ctl_main(["ledger", "check", "--state-dir", str(state)]) == EXIT_VERIFY_FAILED
    assert "is empty" in capsys.readouterr().out
    with pytest.raises(OperationalError, match="not backing up"):
        backup_ledger(state / "calld.sqlite3", tmp_path / "b2")


def test_disk_space_is_reported(tmp_path):
    space = disk_space(tmp_path)
    assert space.total_bytes > 0 and 0 <= space.free_bytes <= space.total_bytes
    assert "MB free" in space.describe()


# -- artifacts after a crash ---------------------------------------------------------------------------


def killed_wav(path: Path, pcm: bytes) -> None:
    """What a killed process leaves: the header written at the first frames, never finished."""
    with open(path, "wb") as f:
        w = wave.open(f, "wb")
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(16000)
        w.writeframesraw(pcm[:640])
        f.flush()
        f.write(pcm[640:])  # later frames reached the file; the header was never patched
        f.flush()
        w._file = None  # noqa: SLF001 - the process died: close() never ran


def test_repair_wav_sets_the_sizes_to_the_audio_written(tmp_path):
    pcm = bytes(range(256)) * 700  # 179,200 bytes = 5.6 s at 16 kHz
    path = tmp_path / "inbound.wav"
    killed_wav(path, pcm)
    with wave.open(str(path)) as r:
        assert r.getnframes() * 2 < len(pcm)  # the broken header undercounts
    assert repair_wav(path) is True
    with wave.open(str(path)) as r:
        assert r.getnframes() == len(pcm) // 2 and r.readframes(r.getnframes()) == pcm
    riff = struct.unpack("<I", path.read_bytes()[4:8])[0]
    assert riff == path.stat().st_size - 8
    assert repair_wav(path) is False  # a sound file is left alone


def hangup_transport(calls: list[tuple[str, str]], ended: set[str]) -> httpx.MockTransport:
    def handler(request: httpx.Request) -> httpx.Response:
        ccid = request.url.path.split("/")[3]
        calls.append((ccid, json.loads(request.content)["command_id"]))
        if ccid in ended:
            return httpx.Response(422, json={"errors": [{"code": "90018", "title": "Call has already ended"}]})
        return httpx.Response(200, json={"data": {"result": "ok"}})

    return httpx.MockTransport(handler)


async def test_recovery_hangs_each_call_up_once_and_finishes_its_row(tmp_path):
    artifacts = tmp_path / "artifacts"
    led = Ledger(tmp_path / "calld.sqlite3")
    runs = {name: RunId.new() for name in ("talking", "ended", "placing", "answered")}
    for name, run_id in runs.items():
        led.claim_request(name, user_id="alice", kind="ask", params={"n": name}, run_id=run_id)
        rd = RunDir(artifacts, run_id, [])
        if name != "placing":
            led.mark_dialled(name, f"v3:{name}")
            rd.adopt(f"v3:{name}")
        rd.journal(json.dumps({"seq": 1, "event": {"kind": "live.input_transcript", "text": "We open at 9."}}))
        # The header is written with the first batch of frames; the second batch is written after it.
        rd.audio("inbound.wav", b"\x01\x02" * (WAV_BATCH_BYTES // 2))
        rd.audio("inbound.wav", b"\x01\x02" * (WAV_BATCH_BYTES // 2))
        if name == "answered":  # the verdict was accepted before the crash: task.json says what it makes
            accepted = results.Answered(
                run_id=run_id, call_control_id="v3:answered", transcript_ref="v3_answered/transcript.json",
                audio_ref="v3_answered/audio/inbound.wav", verdict_source="tool", answer_text="We open at 9.",
                evidence=(results.Evidence(quote="We open at 9.", turn=0),), answer=results.TextAnswer(),
            ).model_dump(mode="json")
            rd.write_json("task.json", {"status": "answered", "result_if_interrupted": accepted})
        # Killed here: close() never runs, so the WAV header is never patched.
        for w in rd._wavs.values():  # noqa: SLF001
            w._file = None  # noqa: SLF001
        for f in rd._wav_files.values():  # noqa: SLF001
            f.close()
        rd._journal.close()  # noqa: SLF001
    calls: list[tuple[str, str]] = []
    async with httpx.AsyncClient(transport=hangup_transport(calls, {"v3:ended"}), base_url="https://api.telnyx.com") as http:
        telnyx = TelnyxHttp(http, connection_id="c")
        done = await recover_interrupted(led, artifacts, telnyx.hangup)
        again = await recover_interrupted(led, artifacts, telnyx.hangup)  # a second restart
    assert again == []
    by = {d["request_id"]: d for d in done}
    # One hangup per dialled call, with the call's own hangup command id; "already ended" is success.
    assert sorted(calls) == sorted((f"v3:{n}", f"hangup-{runs[n]}") for n in ("talking", "ended", "answered"))
    assert by["ended"]["hangup"] == "already_ended" and by["talking"]["hangup"] == "requested"
    assert "never returned" in by["placing"]["hangup"]
    for name, run_id in runs.items():
        row = led.request(name)
        assert row.status == "done"
        run_dir = find_run_dir(artifacts, run_id, row.call_control_id)
        assert by[name]["wav_repaired"] == ["inbound.wav"]
        with wave.open(str(run_dir / "audio" / "inbound.wav")) as r:
            assert r.getnframes() == WAV_BATCH_BYTES  # two batches of WAV_BATCH_BYTES / 2 frames
        assert json.loads((run_dir / "result.json").read_text()) == row.result
        assert json.loads((run_dir / "transcript.json").read_text())["business_text"] == "We open at 9."
    assert led.request("answered").result == accepted  # the verdict accepted before the crash
    for name in ("talking", "ended", "placing"):
        assert led.request(name).result["reason"] == "daemon_restart"
    led.close()


async def test_a_call_killed_while_its_hangup_was_refused_is_recovered_as_possibly_still_up(tmp_path, caplog, autojump_clock):
    """kill -9 while Telnyx was refusing the call's hangup (calld.runtime.hangup was sending it again):
    the restart sends it once more with the same command id; refused again, and the call's status not
    saying it ended, the recovered result (the accepted verdict's, or daemon_restart) says the line
    may still be up, as do recovery.json, the log and show; a call whose status says it ended does not."""
    from calld.adapters.fixtures import load_fixture
    from calld.observe.history import call_detail
    from calld.observe.summary import show_text

    artifacts = tmp_path / "artifacts"
    led = Ledger(tmp_path / "calld.sqlite3")
    runs = {name: RunId.new() for name in ("answered", "talking", "gone")}
    for name, run_id in runs.items():
        led.claim_request(name, user_id="alice", kind="ask", params={"n": name}, run_id=run_id)
        led.mark_dialled(name, f"v3:{name}")
        rd = RunDir(artifacts, run_id, [])
        rd.adopt(f"v3:{name}")
        rd.journal(json.dumps({"seq": 1, "t_ms": 900, "event": {"kind": "live.input_transcript", "text": "We open at 9."}}))
        rd.audio("inbound.wav", b"\x01\x02" * (WAV_BATCH_BYTES // 2))
        if name == "answered":
            accepted = results.Answered(
                run_id=run_id, call_control_id="v3:answered", transcript_ref="v3_answered/transcript.json",
                audio_ref="v3_answered/audio/inbound.wav", verdict_source="tool", answer_text="We open at 9.",
                evidence=(results.Evidence(quote="We open at 9.", turn=0),), answer=results.TextAnswer(),
            ).model_dump(mode="json")
            rd.write_json("task.json", {"status": "answered", "result_if_interrupted": accepted})
        for w in rd._wavs.values():  # noqa: SLF001 - killed: close() never runs
            w._file = None  # noqa: SLF001
        for f in rd._wav_files.values():  # noqa: SLF001
            f.close()
        rd._journal.close()  # noqa: SLF001
    hangups: list[tuple[str, str]] = []

    def carrier(request: httpx.Request) -> httpx.Response:
        ccid = request.url.path.split("/")[3]
        if request.method == "POST":
            hangups.append((ccid, json.loads(request.content)["command_id"]))
            return httpx.Response(500, json=load_fixture("telnyx", "error_500"))
        status = load_fixture("telnyx", "call_status")
        status["data"].update(call_control_id=ccid, is_alive=ccid != "v3:gone")
        return httpx.Response(200, json=status)

    with caplog.at_level("WARNING", logger="calld"):
        async with httpx.AsyncClient(transport=httpx.MockTransport(carrier), base_url="https://api.telnyx.com") as http:
            telnyx = TelnyxHttp(http, connection_id="c")
            done = await recover_interrupted(led, artifacts, telnyx.hangup, status=telnyx.get_call)
    by = {d["request_id"]: d for d in done}
    assert {ccid for ccid, _ in hangups} == {f"v3:{n}" for n in runs}
    assert all(command == f"hangup-{runs[ccid[3:]]}" for ccid, command in hangups)  # the call's own command id
    for name in ("answered", "talking"):
        result = led.request(name).result
        up = result["line_may_be_up"]
        assert "the line may still be up" in up.lower() and f"v3:{name}" in up and "500" in up, result
        assert by[name]["line_may_be_up"] == up and by[name]["call_status"] == "alive"
        run_dir = find_run_dir(artifacts, runs[name], f"v3:{name}")
        assert json.loads((run_dir / "result.json").read_text()) == result
        assert json.loads((run_dir / "recovery.json").read_text())["line_may_be_up"] == up
        shown = show_text(call_detail(artifacts, runs[name], led.request(name)))
        assert "THE LINE MAY STILL BE UP" in shown, shown
    assert led.request("answered").result == {**accepted, "line_may_be_up": led.request("answered").result["line_may_be_up"]}
    assert led.request("talking").result["reason"] == "daemon_restart"
    gone = led.request("gone").result  # refused too, but its status says it ended: the line is down
    assert gone["line_may_be_up"] is None and by["gone"]["call_status"] == "ended", (gone, by["gone"])
    errors = [r.getMessage() for r in caplog.records if r.levelname == "ERROR"]
    assert sum("the line may still be up" in m for m in errors) == 2, errors
    led.close()
