"""A closed stdout is no failed call (issue 51): `calld-ctl history | head -1` ends quietly with
EXIT_PIPE_CLOSED (141, 128 + SIGPIPE), nothing on stderr.

calld-ctl runs as a real process writing into a real pipe whose reader leaves early: closed before
anything is written (the output waits in stdout's buffer and fails as Python flushes it), and closed
after the first line while a larger output is still being written (the write itself fails).
PYTHONUNBUFFERED is left out, as at a user's shell, so the buffer is the one they have.
"""

from __future__ import annotations

import fcntl
import os
import subprocess
import sys
from pathlib import Path

import trio

from calld.cli.client import ControlClient
from calld.cli.ctl import EXIT_OK, EXIT_PIPE_CLOSED
from calld.daemon.service import Daemon
from daemons import daemon_settings, stop

PIPE_PAGE = 4096  # the smallest pipe Linux makes: an output past it blocks until it is read


def ctl(*argv: str) -> list[str]:
    return [sys.executable, "-m", "calld.cli.ctl", *argv]


def clean_env() -> dict[str, str]:
    """No developer .env, CALLD_ settings or PYTHONUNBUFFERED reach the calld-ctl under test."""
    return {k: v for k, v in os.environ.items() if k in ("PATH", "HOME", "LANG", "PYTHONPATH", "VIRTUAL_ENV")}


async def run_into_closed_pipe(argv: list[str], cwd: Path, *, read_first_line: bool) -> tuple[int, bytes, bytes]:
    """calld-ctl with stdout into a pipe: read up to its first newline, then closed (like `head -1`),
    or closed before it starts. Returns the exit code, what was read, and stderr."""
    r, w = os.pipe()
    fcntl.fcntl(w, fcntl.F_SETPIPE_SZ, PIPE_PAGE)
    if not read_first_line:
        os.close(r)
    try:
        proc = await trio.lowlevel.open_process(ctl(*argv), cwd=cwd, env=clean_env(), stdout=w, stderr=subprocess.PIPE)
    finally:
        os.close(w)
    got = b""
    with trio.fail_after(60):
        if read_first_line:
            reader = trio.lowlevel.FdStream(r)
            while b"\n" not in got and (chunk := await reader.receive_some(PIPE_PAGE)):
                got += chunk
            await reader.aclose()  # the reader leaves: calld-ctl is still writing
        err = b""
        while chunk := await proc.stderr.receive_some():
            err += chunk
        code = await proc.wait()
    return code, got, err


async def test_a_reader_that_leaves_early_ends_calld_ctl_quietly(tmp_path):
    # 55 KB of nginx config, more than the pipe holds: the write fails once the reader has gone.
    code, first, err = await run_into_closed_pipe(["proxy-config", "--daemons", "64"], tmp_path, read_first_line=True)
    assert first and (code, err) == (EXIT_PIPE_CLOSED, b"")
    # A few lines, held in stdout's buffer until calld-ctl ends: it is the flush then that fails.
    code, _, err = await run_into_closed_pipe(["proxy-config", "--daemons", "2"], tmp_path, read_first_line=False)
    assert (code, err) == (EXIT_PIPE_CLOSED, b"")


async def test_history_into_a_closed_pipe_is_no_failed_call(tmp_path, nursery):
    settings = daemon_settings(tmp_path)
    daemon: Daemon = await nursery.start(Daemon(settings).serve)
    async with ControlClient(settings.calld_socket) as client:
        await client.provision("alice")
        async for _ in client.ask({"to": "+15555550142", "ask": "hours", "name": "Nathan", "user": "alice"}):
            pass
    history = ["--socket", str(settings.calld_socket), "history"]
    code, _, err = await run_into_closed_pipe(history, tmp_path, read_first_line=False)
    assert (code, err) == (EXIT_PIPE_CLOSED, b""), err.decode()
    # An open pipe is read to the end as ever: the call is there, and the exit code is 0.
    done = await trio.run_process(ctl(*history), cwd=tmp_path, env=clean_env(), capture_stdout=True, capture_stderr=True,
                                  check=False)
    assert done.returncode == EXIT_OK and b"answered" in done.stdout, done.stderr.decode()
    await stop(daemon)
