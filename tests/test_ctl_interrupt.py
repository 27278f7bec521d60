"""Ctrl-C on `calld-ctl ask` stops calld-ctl, not the call: it says the call goes on in the daemon,
names the request id and prints the command that fetches the result later; the exit code is 130.

calld-ctl runs as a real process (SIGINT is what a terminal's Ctrl-C sends) against a stub daemon in
this test's trio run, on the wall clock; every wait is bounded.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import signal
import subprocess
import sys
from pathlib import Path

import trio

from calld.cli.client import ControlClient
from calld.daemon.service import Daemon
from daemons import daemon_settings, stop


def ctl_cmd(*argv: str) -> list[str]:
    return [sys.executable, "-m", "calld.cli.ctl", *argv]


def clean_env() -> dict[str, str]:
    """No developer .env or CALLD_ settings reach the calld-ctl under test."""
    return {k: v for k, v in os.environ.items() if k in ("PATH", "HOME", "LANG", "PYTHONPATH", "VIRTUAL_ENV")}


async def test_ctrl_c_on_ask_says_the_call_goes_on_and_how_to_fetch_its_result(tmp_path: Path, nursery):
    settings = daemon_settings(tmp_path)
    daemon: Daemon = await nursery.start(Daemon(settings).serve)
    async with ControlClient(settings.calld_socket) as client:
        await client.provision("alice")
    argv = ["--socket", str(settings.calld_socket), "ask", "--to", "+15555550142", "--ask", "hours", "--name", "Nathan",
            "--user", "alice"]
    # A shell that starts pytest in the background (`pytest &`) leaves SIGINT ignored, and a child
    # inherits an ignored signal: the Ctrl-C below would never reach calld-ctl. A handled one is
    # reset to the default in the child, as at a terminal.
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        proc = await trio.lowlevel.open_process(ctl_cmd(*argv), cwd=tmp_path, env=clean_env(), stdout=subprocess.PIPE,
                                                stderr=subprocess.PIPE)
    finally:
        signal.signal(signal.SIGINT, previous)
    err = b""
    try:
        with trio.fail_after(60):
            while b"s  " not in err:  # the first progress line: the call is on its way in the daemon
                chunk = await proc.stderr.receive_some()
                assert chunk, err
                err += chunk
            proc.send_signal(signal.SIGINT)
            while chunk := await proc.stderr.receive_some():
                err += chunk
            code = await proc.wait()
            out = await proc.stdout.receive_some()
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()
    said = err.decode()
    assert code == 130, said
    assert "Traceback" not in said and out == b"", said
    (line,) = [x for x in said.splitlines() if x.startswith("calld-ctl: interrupted")]
    rid = re.search(r"as request (ctl-[0-9a-f]{20})\b", line)
    assert rid is not None and "the call goes on in the daemon" in line, line
    command = line.split("Fetch its result later (this waits until the call ends) with: ", 1)[1].split("  (")[0]
    words = shlex.split(command)
    assert words[0] == "calld-ctl" and words[1:] == [*argv, "--request-id", rid.group(1)], command
    assert f"calld-ctl show {rid.group(1)}" in line

    # The command as printed: it waits for the call the Ctrl-C left running, then prints its result.
    with trio.fail_after(120):
        done = await trio.run_process(ctl_cmd(*words[1:]), cwd=tmp_path, env=clean_env(), capture_stdout=True,
                                      capture_stderr=True, check=False)
    assert done.returncode == 0, done.stderr.decode()
    result = json.loads(done.stdout)
    assert result["status"] == "answered" and "9 AM to 5 PM" in result["answer_text"]
    assert len(daemon._ledger.sync.requests(10)) == 1  # one request, one call: the fetch placed none
    await stop(daemon)
