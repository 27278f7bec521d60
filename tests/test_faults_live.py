"""The fault suite, continued (split from test_faults.py past 1,000 lines): faults while a call is live (a write
that fails, a secret in an artifact, a run directory that cannot be renamed: issue 51), a call whose webhooks or
media never reach calld (a dead proxy: issue 55), and a full disk before the dial. Each asserts one hangup per call,
a finished ledger row, and the daemon still serving afterwards.
"""

from __future__ import annotations

import errno
import json
from pathlib import Path

import pytest
import trio
import trio.testing

from calld.cli.client import ControlClient, ControlError
from calld.cli.ctl import EXIT_OK
from calld.daemon.service import Daemon
from calld.runtime import rundir as rundir_module
from calld.stub.world import StubWorld
from daemons import real_time, stop

from fault_setup import ASK, ask, client, daemon, hangups, ledger_row, settings_for  # noqa: F401 (fixtures)

pytestmark = pytest.mark.fault


# -- a write that fails while the call is live (issue 51) -------------------------------------------------------


async def _one_call(tmp_path, nursery, request_id: str, **over) -> tuple[Daemon, int, dict]:
    """A daemon with settings `over`, one stub call through it (bounded: a stranded call fails the
    test instead of hanging it), then the daemon stopped."""
    settings = settings_for(tmp_path, **over)
    d: Daemon = await nursery.start(Daemon(settings).serve)
    async with ControlClient(settings.calld_socket) as c:
        await c.provision("alice")
        with trio.fail_after(900):  # longer than any call may last (MAX_CALL_S)
            code, result, _ = await ask(c, {**ASK, "request_id": request_id})
    await stop(d)
    return d, code, result


def _finished_once(d: Daemon, hangups: dict[str, int], request_id: str, result: dict) -> None:
    """Hung up exactly once at the carrier, and the ledger row finished with the result the caller got."""
    assert result["call_control_id"] and hangups.get(result["call_control_id"]) == 1, (hangups, result)
    row = ledger_row(d, request_id)
    assert row.status == "done" and row.result == result


async def test_a_one_letter_secret_neither_stops_nor_strands_a_call(tmp_path, nursery, hangups, autojump_clock):
    """A configured secret as short as 'a' stands in every dial.json: the scan must not take it for a
    leak (it refused to write dial.json, the call lost its owner and was never hung up), nor redact it."""
    d, code, result = await _one_call(tmp_path, nursery, "short-secret", publish_secret_access_key="a")
    assert (code, result["status"]) == (EXIT_OK, "answered")
    _finished_once(d, hangups, "short-secret", result)
    run_dir = d.settings.artifacts_dir / result["transcript_ref"].split("/")[0]
    assert "[redacted]" not in json.loads((run_dir / "dial.json").read_text())["webhook_url"]


async def test_a_secret_in_an_artifact_is_redacted_there_and_the_call_goes_on(tmp_path, nursery, hangups, caplog, autojump_clock):
    """A whole configured secret found in dial.json is replaced there; the call is answered as ever.
    A secret only part of which stands in the file is no match: the scan looks for whole values."""
    host = "calld.stub.invalid"  # in the stub's stream and webhook URLs
    d, code, result = await _one_call(tmp_path, nursery, "long-secret", publish_secret_access_key=host,
                                      telnyx_api_key="stub-connection-but-longer")
    assert (code, result["status"]) == (EXIT_OK, "answered")
    _finished_once(d, hangups, "long-secret", result)
    run_dir = d.settings.artifacts_dir / result["transcript_ref"].split("/")[0]
    dial = json.loads((run_dir / "dial.json").read_text())
    assert dial["webhook_url"] == "https://[redacted]/telnyx/webhook"
    assert dial["connection_id"] == "stub-connection"  # a part of a secret is not the secret
    assert not any(host in p.read_text() for p in run_dir.rglob("*.json"))
    assert not (run_dir / "incomplete.json").exists()
    said = [r.getMessage() for r in caplog.records if "redacted" in r.getMessage()]
    assert said and all(host not in m for m in said) and any("dial.json" in m for m in said)


class _Broken(RuntimeError):
    pass


@pytest.mark.parametrize("name", ["dial.json", "session_start.json", "task.json", "hangup.json"])
@pytest.mark.parametrize("how", ["disk", "check"])
async def test_a_write_that_fails_while_the_call_is_live_still_hangs_it_up_once(tmp_path, nursery, hangups, monkeypatch,
                                                                                 name, how, autojump_clock):
    """Each JSON file written while the call is live, failing two ways: the disk (an I/O error) and
    anything else on the way to it (here the write itself raising, as a content check did). The call
    is failed with what could not be written, hung up once, its row finished, its files marked."""
    if how == "disk":
        real_atomic = rundir_module.write_atomic

        def atomic(path, data):
            if path.name == name:
                raise OSError(errno.EIO, "Input/output error", str(path))
            return real_atomic(path, data)

        monkeypatch.setattr(rundir_module, "write_atomic", atomic)
    else:
        real_write = rundir_module.RunDir.write_json

        def write_json(rd, file, data):
            if file == name:
                raise _Broken(f"{file} failed its check")
            return real_write(rd, file, data)

        monkeypatch.setattr(rundir_module.RunDir, "write_json", write_json)
    request_id = f"live-{how}-{name}"
    d, code, result = await _one_call(tmp_path, nursery, request_id)
    assert (result["status"], result["reason"]) == ("failed", "internal"), result
    assert ("Input/output error" if how == "disk" else f"{name} failed its check") in result["detail"]
    _finished_once(d, hangups, request_id, result)
    run_dir = next(p for p in d.settings.artifacts_dir.iterdir() if (p / "run.json").exists())
    assert result["detail"].removeprefix("could not write the call's artifacts: ") in json.loads((run_dir / "incomplete.json").read_text())["error"]
    assert not (run_dir / name).exists()
    report = json.loads((run_dir / "call_report.json").read_text())
    assert report["status"] == "failed" and name not in report["refs"]
    assert all((d.settings.artifacts_dir / r).is_file() for r in report["refs"].values()), report["refs"]


async def test_a_run_directory_that_cannot_be_renamed_still_hangs_up_once(tmp_path, nursery, hangups, monkeypatch, autojump_clock):
    """The move of `.pending-<run>` to the call's name fails as the dial is accepted: the call is
    known by its id all the same, failed, hung up once; its files stay under the run's name."""
    real_rename = Path.rename

    def rename(self, target):
        if self.name.startswith(".pending-"):
            raise OSError(errno.EROFS, "Read-only file system", str(self))
        return real_rename(self, target)

    monkeypatch.setattr(Path, "rename", rename)
    d, code, result = await _one_call(tmp_path, nursery, "no-rename")
    assert (result["status"], result["reason"]) == ("failed", "internal") and "Read-only" in result["detail"]
    _finished_once(d, hangups, "no-rename", result)
    run_dir = next(p for p in d.settings.artifacts_dir.iterdir() if (p / "run.json").exists())
    assert run_dir.name.startswith(".pending-") and (run_dir / "incomplete.json").is_file()


# -- a call whose webhooks or media never reach calld (a dead proxy, issue 55) -----------------------------


async def _silent(self, *args, **kwargs) -> None:
    """A carrier that accepted the dial and then tells calld nothing (its webhooks go to a dead proxy)."""


@pytest.mark.parametrize(
    ("what_is_lost", "reason", "bound_s"),
    [("_telnyx_script", "no_call_events", 45.0), ("_media", "no_media", 5.0)],
    ids=["webhooks_and_media", "media_only"],
)
async def test_a_call_whose_webhooks_or_media_never_come_ends_on_its_stage_timer_with_one_hangup(
        what_is_lost, reason, bound_s, client, daemon, hangups, monkeypatch, autojump_clock):
    monkeypatch.setattr(StubWorld, what_is_lost, _silent)
    began = trio.current_time()
    code, result, _ = await ask(client, {**ASK, "request_id": f"lost-{reason}"})
    took = trio.current_time() - began
    assert result["status"] == "failed" and result["reason"] == reason, result
    assert code == 6
    assert bound_s <= took < bound_s + 10, took  # its stage's bound, not MAX_CALL_S (300 s)
    assert list(hangups.values()) == [1]  # hung up once
    report = next(p for p in daemon.settings.artifacts_dir.glob("*/call_report.json")
                  if json.loads(p.read_text())["run_id"] == result["run_id"])
    data = json.loads(report.read_text())
    assert data["hangup"]["via"] == "failure" and data["reason"] == reason
    assert ledger_row(daemon, f"lost-{reason}").result == result


async def test_a_daemon_whose_disk_is_full_refuses_before_writing_and_calld_ctl_asks_the_next(tmp_path, nursery, monkeypatch,
                                                                                            autojump_clock):
    """Daemon 1's disk is full: it refuses the ask (503) before anything is written or dialled, and calld-ctl,
    given both sockets, asks daemon 2, which places the call (issue 55)."""
    from functools import partial

    import calld.daemon.service as service
    from calld.cli import ctl
    from calld.ops.health import DiskSpace, disk_space

    full_dir = tmp_path / "full"
    monkeypatch.setattr(service, "disk_space", lambda path: DiskSpace(str(path), 300_000, 10_000_000_000)
                        if str(path).startswith(str(full_dir)) else disk_space(path))
    one: Daemon = await nursery.start(Daemon(settings_for(full_dir)).serve)
    two: Daemon = await nursery.start(Daemon(settings_for(tmp_path / "room")).serve)
    for d in (one, two):
        async with ControlClient(d.settings.calld_socket) as c:
            await c.provision("alice")
    with pytest.raises(ControlError) as refused:
        async with ControlClient(one.settings.calld_socket) as c:
            async for _ in c.ask({**ASK, "request_id": "full-disk-1"}):
                pass
    assert refused.value.status == 503 and "disk is full" in refused.value.message
    assert one._ledger.sync.request("full-disk-1") is None  # nothing written
    with real_time(autojump_clock):
        code = await trio.to_thread.run_sync(partial(ctl.main, [
            "--socket", f"{one.settings.calld_socket},{two.settings.calld_socket}", "ask", "--to", ASK["to"], "--ask", "hours",
            "--name", "Nathan", "--user", "alice", "--request-id", "full-disk-2"]))
    assert code == EXIT_OK
    assert one._ledger.sync.request("full-disk-2") is None
    row = two._ledger.sync.request("full-disk-2")
    assert row is not None and row.status == "done" and row.result["status"] == "answered"
    for d in (one, two):
        await stop(d)
