"""The floor under calld's webhooks: what one request costs a bare quart-trio app under hypercorn.

    uv run python bench/web_floor.py [REQUESTS]     # default 2000

A server process (pinned to core 0, as the daemon is in bench/load.py) runs a QuartTrio app with
one POST route that reads its body and answers a small JSON object, under hypercorn with calld's
own settings (no access or error log, no server header). This process (core 1) posts REQUESTS
bodies the size of a Telnyx webhook over one keep-alive connection, one at a time, and prints the
server's CPU per request, read from its own rusage before and after. Nothing of calld runs in the
server: the figure is what the design's web stack costs before calld's route does anything (its
Ed25519 check, its parse, the hand-over to the call). Not a test: it prints a figure.
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import time

import httpx

BODY = b'{"data": {"event_type": "call.answered", "payload": {"call_control_id": "' + b"x" * 500 + b'"}}}'
WARM_UP = 50


def serve(port_out: int) -> None:
    """The server: binds an ephemeral port, prints it, then prints its CPU (user + system) on each stdin line."""
    import trio
    from hypercorn.config import Config
    from hypercorn.trio import serve as hypercorn_serve
    from quart import request
    from quart_trio import QuartTrio

    app = QuartTrio("web_floor")

    @app.post("/hook")
    async def hook() -> tuple[dict[str, bool], int]:
        await request.get_data()
        return {"ok": True}, 200

    cfg = Config()
    cfg.bind = ["127.0.0.1:0"]
    cfg.accesslog = None
    cfg.errorlog = None
    cfg.include_server_header = False

    async def main() -> None:
        async with trio.open_nursery() as nursery:
            binds = await nursery.start(hypercorn_serve, app, cfg)
            os.write(port_out, (binds[0].rsplit(":", 1)[1] + "\n").encode())
            async for _line in trio.lowlevel.FdStream(os.dup(0)):
                usage = resource.getrusage(resource.RUSAGE_SELF)
                print(json.dumps(usage.ru_utime + usage.ru_stime), flush=True)
            nursery.cancel_scope.cancel()

    trio.run(main)


def main(argv: list[str]) -> None:
    requests = int(argv[0]) if argv else 2000
    pin = ["taskset", "-c", "0"] if (os.cpu_count() or 1) > 1 else []
    read_port, write_port = os.pipe()
    server = subprocess.Popen([*pin, sys.executable, __file__, "--serve", str(write_port)], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True, pass_fds=(write_port,))
    os.close(write_port)
    if (os.cpu_count() or 1) > 1:
        os.sched_setaffinity(0, {1})
    with os.fdopen(read_port) as ports:
        port = int(ports.readline())
    assert server.stdin is not None and server.stdout is not None

    def server_cpu() -> float:
        server.stdin.write("cpu\n")
        server.stdin.flush()
        return float(server.stdout.readline())

    url = f"http://127.0.0.1:{port}/hook"
    try:
        with httpx.Client() as client:
            for _ in range(WARM_UP):
                client.post(url, content=BODY).raise_for_status()
            before, started = server_cpu(), time.perf_counter()
            for _ in range(requests):
                client.post(url, content=BODY).raise_for_status()
            cpu, wall = server_cpu() - before, time.perf_counter() - started
    finally:
        server.stdin.close()
        server.wait(timeout=10)
    print(f"{requests} requests over one keep-alive connection: the server's CPU {cpu / requests * 1e6:.0f} us a request "
          f"({wall / requests * 1e6:.0f} us of wall time each, the client's included)")


if __name__ == "__main__":
    if sys.argv[1:2] == ["--serve"]:
        serve(int(sys.argv[2]))
    else:
        main(sys.argv[1:])
