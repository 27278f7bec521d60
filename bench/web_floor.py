"""The floor under calld's webhooks and control stream: what a bare quart-trio app under hypercorn costs.

    uv run python bench/web_floor.py [REQUESTS]     # default 2000 (and a tenth as many asks)

A server process (pinned to core 0, as the daemon is in bench/load.py) runs a QuartTrio app under
hypercorn with calld's own settings (no access or error log, no server header), on a TCP port and
on a Unix socket, as the daemon serves its public app and its control API. It has two routes:

- POST /hook reads its body and answers a small JSON object. This process (core 1) posts REQUESTS
  bodies the size of a Telnyx webhook over one keep-alive connection, one at a time.
- POST /v1/ask answers with ASK_LINES NDJSON lines, each after a short sleep: the shape of
  `calld-ctl ask`'s progress stream (a stub call's dozen phases and its result). This process
  sends a tenth as many asks over the Unix socket, one at a time, reading each stream to its end.

It prints the server's CPU per request and per ask, read from its own rusage before and after.
Nothing of calld runs in the server: the figures are what the design's web stack costs before
calld's route does anything (its Ed25519 check, its parse, the hand-over to the call), and what
a stub call's five webhooks and one ask add up to. Not a test: it prints figures.
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator
from pathlib import Path

import httpx

BODY = b'{"data": {"event_type": "call.answered", "payload": {"call_control_id": "' + b"x" * 500 + b'"}}}'
WARM_UP = 50
ASK_LINES = 13  # a stub call's progress phases and its result line
WEBHOOKS_A_CALL = 5  # what the simulator posts for one stub call
LINE = b'{"t_ms":12034,"phase":"goodbye sent; waiting until it has played"}\n'


def serve(port_out: int, socket_path: str) -> None:
    """The server: binds an ephemeral port, prints it, then prints its CPU (user + system) on each stdin line."""
    import trio
    from hypercorn.config import Config
    from hypercorn.trio import serve as hypercorn_serve
    from quart import Response, request
    from quart_trio import QuartTrio

    app = QuartTrio("web_floor")
    app.config["RESPONSE_TIMEOUT"] = None  # as the control API's: an ask streams for as long as its call

    @app.post("/hook")
    async def hook() -> tuple[dict[str, bool], int]:
        await request.get_data()
        return {"ok": True}, 200

    @app.post("/v1/ask")
    async def ask() -> Response:
        await request.get_data()

        async def lines() -> AsyncIterator[bytes]:
            for _ in range(ASK_LINES):
                await trio.sleep(0.0005)  # each phase comes when the call moves, not all at once
                yield LINE

        return Response(lines(), status=200, content_type="application/x-ndjson")

    def config(bind: str) -> Config:
        cfg = Config()
        cfg.bind = [bind]
        cfg.accesslog = None
        cfg.errorlog = None
        cfg.include_server_header = False
        return cfg

    async def main() -> None:
        async with trio.open_nursery() as nursery:
            binds = await nursery.start(hypercorn_serve, app, config("127.0.0.1:0"))
            await nursery.start(hypercorn_serve, app, config(f"unix:{socket_path}"))
            os.write(port_out, (binds[0].rsplit(":", 1)[1] + "\n").encode())
            async for _line in trio.lowlevel.FdStream(os.dup(0)):
                usage = resource.getrusage(resource.RUSAGE_SELF)
                print(json.dumps(usage.ru_utime + usage.ru_stime), flush=True)
            nursery.cancel_scope.cancel()

    trio.run(main)


def measure(requests: int = 2000) -> dict[str, float]:
    """The server's CPU in seconds a request, an ask, and a stub call's webhooks and ask together;
    printed as main prints them. bench/bridge.py --beside calls this in its own run."""
    pin = ["taskset", "-c", "0"] if (os.cpu_count() or 1) > 1 else []
    read_port, write_port = os.pipe()
    socket_path = Path(tempfile.mkdtemp(prefix="calld-web-floor-")) / "ctl.sock"
    server = subprocess.Popen([*pin, sys.executable, __file__, "--serve", str(write_port), str(socket_path)], stdin=subprocess.PIPE,
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
        asks = max(1, requests // 10)
        with httpx.Client(transport=httpx.HTTPTransport(uds=str(socket_path)), base_url="http://calld") as control:

            def one_ask() -> None:
                with control.stream("POST", "/v1/ask", content=b'{"to":"+15555550142","ask":"hours"}') as resp:
                    resp.raise_for_status()
                    assert sum(1 for _ in resp.iter_lines()) == ASK_LINES

            for _ in range(WARM_UP // 5):
                one_ask()
            ask_before = server_cpu()
            for _ in range(asks):
                one_ask()
            ask_cpu = server_cpu() - ask_before
    finally:
        server.stdin.close()
        server.kill()  # the server waits on its listeners; the figures are in
        server.wait(timeout=10)
    per_request, per_ask = cpu / requests, ask_cpu / asks
    call = WEBHOOKS_A_CALL * per_request + per_ask
    print(f"{requests} requests over one keep-alive connection: the server's CPU {per_request * 1e6:.0f} us a request "
          f"({wall / requests * 1e6:.0f} us of wall time each, the client's included)")
    print(f"{asks} asks over the Unix socket, each streaming {ASK_LINES} lines: the server's CPU {per_ask * 1e6:.0f} us an ask")
    print(f"a stub call's {WEBHOOKS_A_CALL} webhooks and one ask: {call * 1e3:.1f} ms of "
          "the server's CPU before calld's own code runs")
    sys.stdout.flush()
    return {"request_s": per_request, "ask_s": per_ask, "call_s": call}


def main(argv: list[str]) -> None:
    measure(int(argv[0]) if argv else 2000)


if __name__ == "__main__":
    if sys.argv[1:2] == ["--serve"]:
        serve(int(sys.argv[2]), sys.argv[3])
    else:
        main(sys.argv[1:])
