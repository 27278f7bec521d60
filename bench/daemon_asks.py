"""Wall time of stub asks through a real `calld serve` process (real clock, real sockets).

    uv run python bench/daemon_asks.py [N ...]      # default: 1 50

Starts a private daemon in a temporary directory, provisions a user, runs N asks at once
through calld-ctl's client, prints each batch's wall time and the daemon's CPU use, stops it.
A stub call is about 16 s of conversation, so that is the floor for any batch.
"""

from __future__ import annotations

import io
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import trio

from calld.cli.client import ControlClient
from calld.cli.ctl import run_ask


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


async def batch(sock: Path, n: int) -> tuple[float, list[str]]:
    statuses: list[str] = []
    async with ControlClient(sock) as client:
        async def one(i: int) -> None:
            out = io.StringIO()
            await run_ask(client, {"to": "+15555550142", "ask": "hours", "name": "Nathan", "user": "bench"}, out=out, err=io.StringIO())
            statuses.append(json.loads(out.getvalue())["status"])
        t0 = time.monotonic()
        async with trio.open_nursery() as nursery:
            for i in range(n):
                nursery.start_soon(one, i)
        return time.monotonic() - t0, statuses


async def main(sizes: list[int]) -> None:
    work = Path(tempfile.mkdtemp(prefix="calld-bench-"))
    sock = work / "ctl.sock"
    env = {**os.environ, "CALLD_STATE_DIR": str(work / "state"), "CALLD_SOCKET": str(sock), "CALLD_BIND": "127.0.0.1:0"}
    prefix = os.environ.get("BENCH_DAEMON_PREFIX", "").split()  # e.g. "-m cProfile -o /tmp/daemon.prof"
    proc = subprocess.Popen([sys.executable, *prefix, "-m", "calld.cli.daemon", "serve"], env=env, stderr=subprocess.DEVNULL)
    try:
        for _ in range(200):
            if sock.exists():
                break
            await trio.sleep(0.05)
        async with ControlClient(sock) as client:
            await client.provision("bench")
        for n in sizes:
            cpu0 = cpu_seconds(proc.pid)
            wall, statuses = await batch(sock, n)
            cpu = cpu_seconds(proc.pid) - cpu0
            answered = statuses.count("answered")
            print(f"{n:4d} concurrent stub asks: wall {wall:6.1f} s, {answered}/{n} answered, daemon CPU {cpu:6.1f} s "
                  f"({cpu / n / 16.2 * 1000:.1f} ms per call-second, stub world included)")
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=60)


if __name__ == "__main__":
    trio.run(main, [int(a) for a in sys.argv[1:]] or [1, 50])
