"""A refused start changes nothing in an existing state directory: its mode stays what the operator
set (0755 here) and nothing it did not hold is left in it; a busy port, another daemon holding the
directory, or a failure late in the start."""

from __future__ import annotations

import os
import socket
import stat
from pathlib import Path

import pytest
import trio

from calld.daemon.service import Daemon
from calld.ops.errors import OperationalError
from calld.ops.redaction import KEY_FILE
from daemons import daemon_settings, stop


def mode(path: Path) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


def listing(state: Path) -> dict[str, int]:
    return {p.name: mode(p) for p in state.iterdir()}


@pytest.fixture
async def used_state(tmp_path, nursery) -> Path:
    """A state directory a daemon has served from, then opened up to 0755 by its operator."""
    d: Daemon = await nursery.start(Daemon(daemon_settings(tmp_path)).serve)
    await stop(d)
    await trio.sleep(1)  # serve() has returned: the lock is free
    state = d.settings.calld_state_dir
    os.chmod(state, 0o755)
    return state


async def test_a_busy_port_changes_nothing_in_an_existing_state_dir(tmp_path, used_state, autojump_clock):
    (used_state / KEY_FILE).unlink()  # as a state dir from before the redaction key: a refused start makes none
    before = listing(used_state)
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        with pytest.raises(OperationalError, match=str(port)):
            await Daemon(daemon_settings(tmp_path, calld_bind=f"127.0.0.1:{port}")).serve()
    assert mode(used_state) == 0o755
    assert listing(used_state) == before


async def test_another_daemon_holding_the_dir_changes_nothing(tmp_path, used_state, nursery, autojump_clock):
    os.chmod(used_state, 0o700)
    first: Daemon = await nursery.start(Daemon(daemon_settings(tmp_path)).serve)
    os.chmod(used_state, 0o750)  # the operator loosens it while the first one runs
    with pytest.raises(OperationalError, match="another calld"):
        await Daemon(daemon_settings(tmp_path, calld_socket=tmp_path / "other.sock")).serve()
    assert mode(used_state) == 0o750
    await stop(first)


async def test_a_late_failure_changes_nothing_in_an_existing_state_dir(tmp_path, used_state, monkeypatch, autojump_clock):
    async def cannot_read(self):
        raise OperationalError("the stale requests cannot be read")

    before = listing(used_state)
    monkeypatch.setattr(Daemon, "_finish_stale_requests", cannot_read)
    with pytest.raises(BaseException) as failed:
        await Daemon(daemon_settings(tmp_path)).serve()
    assert "stale requests cannot be read" in repr(failed.value)
    assert mode(used_state) == 0o755 and listing(used_state) == before
