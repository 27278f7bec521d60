"""The floor under bench/load.py: a bare bridge in the daemon's place, against the same simulator.

    uv run python bench/bridge.py [N ...]            # default 100
    uv run python bench/bridge.py --beside [N ...]   # bridge, calld (bench/load.py), bridge: one window
    uv run python bench/bridge.py --beside --poisson [N ...]  # the same, the calls arriving at random over a minute
    uv run python bench/bridge.py --repeat K [N ...] # bridge, then K times calld and bridge: the median ratio
    uv run python bench/bridge.py --capacity [START STEP MOST]  # calld alone, N up by STEP until p99 > 20 ms

Same simulator, same pins (the bridge on core 0, the simulator and this driver on core 1), calls
placed 10 ms apart, and the same CPU accounting as bench/load.py: the process's CPU over the
steady window (5-11 s, every call talking) per call-second, and its main thread's user and
kernel split. Per call the bridge does only what any bridge must: dial over Telnyx REST, accept
the media WebSocket, open GPT-Live and start the session, say the opener, forward audio both ways
(parse, base64 out and in, frame, mask, send), answer the record tool call so the goodbye plays,
and when the model ends the call, close the session (which flushes the rest of its speech) and
hang up once a mark sent after the last of it has come back. It keeps no state beyond that: no reducer, journal, WAV,
transcript, evidence, artifacts or webhooks. It rides calld's own WebSocket layer
(calld.adapters.websocket, through calld.sim.ws) with orjson and pybase64, so the difference
between its figure and calld's is calld's own work, not its sockets.

Why it exists: this shared machine's speed moves by half from one hour to the next (see the fixed
workload both scripts print), so a figure in ms per call-second means something only beside the
floor measured in the same window. `--beside` runs the three batches back to back and ends with
issue 39's figures: calld's CPU per call-second over the bridge's (steady and over whole calls),
both sides' p99 each way, whether the latency target held (every call answered, nothing lost, p99
at most 20 ms each way, or twice the bridge's where the bridge's own is over 10 ms, no collection
over 10 ms), and at N=1 the forwarding p50 and one whole call's CPU on each side. `--repeat K`
alternates K calld batches with K + 1 bridge batches and judges the median of the K ratios (each
calld batch against the bridge batches either side of it), so one noisy minute does not decide.

`--beside` and `--repeat` end by measuring the web stack's own floor in the same run (what
bench/web_floor.py prints: a bare quart-trio app under hypercorn serving a stub call's five webhooks
and its control ask's stream, on the daemon's core) and print calld's whole-call figure over the
bridge's plus that floor, spread over calld's mean call length: the bridge takes no webhooks and
streams no progress, and the design's web stack is fixed. `--poisson` places each batch's calls at
random moments over a minute (bench/load.py's, seeded alike for calld and the bridge) instead of 10
ms apart; such batches have no steady window.

`--capacity` runs calld alone at N = START, START + STEP, ... (default 50, 25, up to 300) and
stops at the first N whose p99 passes 20 ms either way (or that loses a frame or a call): the N
before it is this machine's CALLD_MAX_CALLS. Not a test: it prints figures.
"""

from __future__ import annotations

import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx
import orjson
import pybase64
import trio

sys.path.insert(0, str(Path(__file__).parent))
import load  # noqa: E402  (bench/load.py: the same pins, counters, window and machine-speed check)
import web_floor  # noqa: E402  (bench/web_floor.py: the web stack's floor, measured in the same run)
from frames import plan  # noqa: E402
from steady import talking  # noqa: E402  (a call mid-conversation, and the LivePlan the reducer opened it with)

from calld.adapters import gpt_live  # noqa: E402
from calld.sim.ws import WsSocket, serve_ws, ws_connect  # noqa: E402
from calld.runtime.sockets import SocketClosed  # noqa: E402

SAY_GOODBYE = json.dumps({"status": "recorded", "next": "thank them in one short sentence and say goodbye"})


# -- the bridge process ------------------------------------------------------------------------------


class Bridge:
    def __init__(self, telnyx_api_base: str, live_url: str) -> None:
        self.http = httpx.AsyncClient(base_url=telnyx_api_base, timeout=30)
        self.live_url = live_url
        self.media_url = ""  # the listener's, once it is up
        self.dialled: dict[str, float] = {}  # call_control_id -> when its dial was sent
        self.session = gpt_live.session_start(talking()[1], "evt_1")
        self.opener = plan().opener

    async def dial(self, i: int) -> None:
        body = {"connection_id": "bench-bridge", "from": "+15555550100", "to": "+15555550142",
                "stream_url": f"{self.media_url}/c{i}", "stream_auth_token": f"c{i}", "stream_track": "inbound_track",
                "stream_codec": "L16", "stream_bidirectional_mode": "rtp", "stream_bidirectional_codec": "L16",
                "stream_bidirectional_sampling_rate": 16000}
        dialled = time.monotonic()
        resp = await self.http.post("/v2/calls", json=body)
        resp.raise_for_status()
        # A call's seconds run from its dial, as calld's do (its report's duration runs from the
        # ask, ring included): CPU per call-second means the same on both sides.
        self.dialled[resp.json()["data"]["call_control_id"]] = dialled

    async def media(self, line: WsSocket) -> None:
        """One call, from its dial (or, if the start frame names no call it dialled, the media socket's
        opening) to the media socket closing."""
        started = time.monotonic()
        ccid, status = "", "failed"
        try:
            while not ccid:
                frame = orjson.loads(await line.receive())
                if frame.get("event") == "start":
                    ccid = frame["start"]["call_control_id"]
                    started = self.dialled.pop(ccid, started)
            live = await ws_connect(self.live_url, {"authorization": "Bearer KEY-bench"}, "gpt-live")
            played = trio.Event()
            try:
                await live.send(json.dumps(self.session))
                async with trio.open_nursery() as n:
                    n.start_soon(self._uplink, line, live, played)
                    status = await self._downlink(live, line)
                    # The goodbye is on its way: hang up once it has played (the mark's echo), as calld does.
                    await line.send(orjson.dumps({"event": "mark", "mark": {"name": "goodbye"}}).decode())
                    await played.wait()
                    (await self.http.post(f"/v2/calls/{ccid}/actions/hangup", json={})).raise_for_status()
                    n.cancel_scope.cancel()
            finally:
                with trio.CancelScope(shield=True):
                    await live.aclose()
        except SocketClosed:
            pass
        print(json.dumps({"status": status, "duration_s": time.monotonic() - started}), flush=True)

    async def _uplink(self, line: WsSocket, live: WsSocket, played: trio.Event) -> None:
        open_ = True
        while True:
            frame = orjson.loads(await line.receive())
            if frame.get("event") == "media" and open_:
                try:
                    await live.send(gpt_live.input_audio_append_text(pybase64.b64decode(frame["media"]["payload"])))
                except SocketClosed:
                    open_ = False  # the session is over; the line still brings the goodbye's mark
            elif frame.get("event") == "mark":
                played.set()
            elif frame.get("event") == "stop":
                return

    async def _downlink(self, live: WsSocket, line: WsSocket) -> str:
        """Until the session has closed, after the model ended the call (the close flushes the rest of
        its speech): "answered" if it recorded an answer first."""
        recorded = ended = False
        while True:
            msg = orjson.loads(await live.receive())
            kind = msg.get("type")
            if kind == "session.output_audio.delta":
                pcm = pybase64.b64decode(msg["delta"])
                await line.send(orjson.dumps({"event": "media", "media": {"payload": pybase64.b64encode(pcm).decode()}}).decode())
            elif kind == "session.closed":
                return "answered" if recorded and ended else "failed"
            elif kind == "session.started":
                await live.send(json.dumps(gpt_live.commentary_append(self.opener)))
            elif kind == "response.event" and msg["event"].get("item", {}).get("type") == "function_call":
                item = msg["event"]["item"]
                if item["name"] == "end_call":
                    ended = True
                    await live.send(json.dumps(gpt_live.session_close()))
                    continue
                recorded = recorded or item["name"] == "record_task_result"
                await live.send(json.dumps(gpt_live.function_call_output(item["call_id"], SAY_GOODBYE)))
                await live.send(json.dumps(gpt_live.response_create()))


async def serve(telnyx_api_base: str, live_url: str) -> None:
    """Print the media port; then, for each line "N" (or "N poisson") on stdin, place N calls as
    bench/load.py places them; exit at end of input."""
    async with trio.open_nursery() as nursery:
        bridge = Bridge(telnyx_api_base, live_url)
        port = await nursery.start(serve_ws, bridge.media, "127.0.0.1", 0)
        bridge.media_url = f"ws://127.0.0.1:{port}/media"
        print(json.dumps({"media_port": port}), flush=True)
        stdin = trio.lowlevel.FdStream(os.dup(0))
        async for chunk in stdin:
            for line in chunk.decode().splitlines():
                count, *how = line.split()
                for i, gap in enumerate(load.arrival_gaps(int(count), how == ["poisson"])):
                    nursery.start_soon(bridge.dial, i)
                    await trio.sleep(gap)
        nursery.cancel_scope.cancel()


# -- the driver: the same batch as bench/load.py, the bridge in the daemon's place -------------------


async def run_batch(n: int, *, poisson: bool = False) -> dict:
    work = Path(tempfile.mkdtemp(prefix=f"calld-bridge-{n}-"))
    reference_before = load.reference_ms(load.DAEMON_CORE)
    metrics_file = work / "sim-metrics.json"
    if hasattr(os, "sched_setaffinity") and load.pinned(load.SIM_CORE):
        os.sched_setaffinity(0, {load.SIM_CORE})
    sim = subprocess.Popen([*load.pinned(load.SIM_CORE), sys.executable, "-m", "calld.sim.cli", "--metrics-out", str(metrics_file)],
                           stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    addrs = json.loads(sim.stdout.readline())  # type: ignore[union-attr]
    proc = subprocess.Popen([*load.pinned(load.DAEMON_CORE), sys.executable, __file__, "--serve",
                             addrs["TELNYX_API_BASE"], addrs["OPENAI_LIVE_URL"]],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, cwd=work)
    try:
        assert proc.stdout is not None and proc.stdin is not None
        json.loads(proc.stdout.readline())  # listening
        cpu0, split0, sim_cpu0 = load.cpu_seconds(proc.pid), load.cpu_split(proc.pid), load.cpu_seconds(sim.pid)
        t0 = time.monotonic()
        proc.stdin.write(f"{n} poisson\n" if poisson else f"{n}\n")
        proc.stdin.flush()
        steady: list[float] = []
        split: list[float] = []

        async def sample_steady() -> None:
            if poisson:
                return  # no steady window: the calls are never all talking at once
            await trio.sleep(load.STEADY_FROM_S)
            load.profile_steady([proc.pid])
            a, a_split = load.cpu_seconds(proc.pid), load.cpu_split(proc.pid)
            await trio.sleep(load.STEADY_TO_S - load.STEADY_FROM_S)
            call_seconds = n * (load.STEADY_TO_S - load.STEADY_FROM_S)
            steady.append((load.cpu_seconds(proc.pid) - a) / call_seconds)
            b_split = load.cpu_split(proc.pid)
            split.extend((b_split[i] - a_split[i]) / call_seconds for i in range(2))

        results: list[dict] = []

        async def read_results() -> None:
            while len(results) < n:
                line = await trio.to_thread.run_sync(proc.stdout.readline)
                if not line:
                    return
                results.append(json.loads(line))

        async with trio.open_nursery() as nursery:
            nursery.start_soon(sample_steady)
            with trio.move_on_after(120 + (load.POISSON_S if poisson else 0)):
                await read_results()
        wall = time.monotonic() - t0
        cpu = load.cpu_seconds(proc.pid) - cpu0
        loop_cpu = sum(load.cpu_split(proc.pid)[:2]) - sum(split0[:2])
        sim_cpu = load.cpu_seconds(sim.pid) - sim_cpu0
    finally:
        proc.kill()
        proc.wait(timeout=30)
        sim.send_signal(signal.SIGTERM)
        sim.wait(timeout=60)
    call_seconds = sum(r["duration_s"] for r in results) or float("nan")
    return {
        "n": n, "poisson": poisson, "wall_s": wall, "completed": sum(r["status"] == "answered" for r in results), "failed": n - sum(r["status"] == "answered" for r in results),
        "cpu_s": cpu, "call_seconds": call_seconds, "ms_per_call_second": cpu / call_seconds * 1000, "steady_ms_per_call_second": steady[0] * 1000 if steady else float("nan"),
        "steady_split_ms": tuple(x * 1000 for x in split) if split else (float("nan"),) * 2,
        "core_share": cpu / wall, "loop_core_share": loop_cpu / wall, "sim_cpu_s": sim_cpu,
        "metrics": json.loads(metrics_file.read_text()) if metrics_file.exists() else {},
        "reference_ms": (reference_before, load.reference_ms(load.DAEMON_CORE)),
    }


def show(r: dict) -> None:
    m = r["metrics"]
    up, down = m.get("uplink_ms", {}), m.get("downlink_ms", {})
    user, kernel = r["steady_split_ms"]
    before, after = r["reference_ms"]
    print(f"bridge N={r['n']:4d}  completed {r['completed']}/{r['n']} failed {r['failed']}  wall {r['wall_s']:.1f} s"
          + (f"  arriving at random over {load.POISSON_S:.0f} s" if r.get("poisson") else "  as a batch"))
    print(f"        frames in {m.get('frames_in')} -> to GPT-Live {m.get('frames_to_live')}; from GPT-Live "
          f"{m.get('frames_from_live')} -> out {m.get('frames_out')}; lost up {m.get('frames_lost_uplink')} down {m.get('frames_lost_downlink')}")
    print(f"        uplink latency p50 {up.get('50', float('nan')):.1f} p99 {up.get('99', float('nan')):.1f} max {up.get('100', float('nan')):.1f} ms; "
          f"downlink p50 {down.get('50', float('nan')):.1f} p99 {down.get('99', float('nan')):.1f} max {down.get('100', float('nan')):.1f} ms")
    print(f"        bridge CPU {r['cpu_s']:.1f} s over {r['call_seconds']:.0f} call-seconds (each call's from its dial) = "
          f"{r['ms_per_call_second']:.1f} ms per call-second; simulator CPU {r['sim_cpu_s']:.1f} s "
          f"({r['sim_cpu_s'] / r['wall_s'] * 100:.0f}% of its core)")
    print(f"        steady state ({load.STEADY_FROM_S:.0f}-{load.STEADY_TO_S:.0f} s, every call talking): "
          f"{r['steady_ms_per_call_second']:.1f} ms CPU per call-second (main thread user {user:.1f}, kernel {kernel:.1f})")
    print(f"        bridge busy {r['core_share'] * 100:.0f}% of its core over the wall time; its main thread alone {r['loop_core_share'] * 100:.0f}%")
    load.by_second(m)
    print(f"        this machine's speed: the fixed workload took {before:.0f} ms before the batch and {after:.0f} ms after")
    sys.stdout.flush()


def p99(r: dict) -> tuple[float, float]:
    """(uplink, downlink) p99 by audio position, in ms."""
    m = r["metrics"]
    return m.get("uplink_ms", {}).get("99", float("nan")), m.get("downlink_ms", {}).get("99", float("nan"))


def lost(r: dict) -> int:
    m = r["metrics"]
    return (m.get("frames_lost_uplink") or 0) + (m.get("frames_lost_downlink") or 0)


def pair(bridges: list[dict], calld: dict) -> dict:
    """One calld batch against the bridge batches either side of it (the same window)."""
    floor = statistics.fmean(b["steady_ms_per_call_second"] for b in bridges)
    whole = statistics.fmean(b["ms_per_call_second"] for b in bridges)
    ups, downs = zip(*(p99(b) for b in bridges), strict=True)
    return {"steady": (calld["steady_ms_per_call_second"], floor), "whole": (calld["ms_per_call_second"], whole),
            "calld_p99": p99(calld), "bridge_p99": (statistics.fmean(ups), statistics.fmean(downs)),
            "calld_cpu_s": calld["daemon_cpu_s"], "calld_call_s": calld["call_seconds"] / max(1, calld["completed"] + calld["failed"]), "bridge_cpu_s": statistics.fmean(b["cpu_s"] for b in bridges),
            "calld_p50": tuple(calld["metrics"].get(f"{w}_ms", {}).get("50", float("nan")) for w in ("uplink", "downlink")),
            "ok": calld["completed"] == calld["n"] and lost(calld) == 0,
            "slow_gcs": sum(slow for _, slow in calld["gc_by_gen"].values()),
            "speed": (bridges[0]["reference_ms"][0], bridges[-1]["reference_ms"][1])}


def targets(n: int, pairs: list[dict], floor: dict[str, float], poisson: bool = False) -> list[str]:
    """Issue 39's and 54's targets, judged on the median of the pairs (each a calld batch between two
    bridge batches); `floor`: the web stack's, measured in the same run (bench/web_floor.py)."""
    steady = statistics.median(c / b for c, b in (p["steady"] for p in pairs))
    whole = statistics.median(c / b for c, b in (p["whole"] for p in pairs))
    # The floor a call-second: a stub call's webhooks and ask, over calld's mean call (from the ask).
    floor_ms = statistics.median(floor["call_s"] * 1000 / p["calld_call_s"] for p in pairs)
    with_floor = statistics.median(c / (b + floor_ms) for c, b in (p["whole"] for p in pairs))
    how = f" (arriving at random over {load.POISSON_S:.0f} s)" if poisson else ""
    up, down = (statistics.median(p["calld_p99"][i] for p in pairs) for i in range(2))
    b_up, b_down = (statistics.median(p["bridge_p99"][i] for p in pairs) for i in range(2))
    lines = [
        f"N={n}{how}: calld against its bare bridge in the same window, median of {len(pairs)}: "
        f"CPU per call-second " + ("(no steady window: the calls arrive at random) " if poisson else f"x{steady:.2f} steady, ")
        + f"x{whole:.2f} over whole calls (target: at most x1.30)",
        f"N={n}: the web stack's floor in this run: {floor['request_s'] * 1e6:.0f} us a webhook, {floor['ask_s'] * 1e6:.0f} us an ask, "
        f"{floor['call_s'] * 1e3:.1f} ms a call, {floor_ms:.2f} ms a call-second; whole calls over bridge + floor: x{with_floor:.2f} "
        "(target: at most x1.30)",
        f"N={n}: p99 by audio position, up / down: calld {up:.1f} / {down:.1f} ms, bridge {b_up:.1f} / {b_down:.1f} ms",
    ]
    # Target 1: 20 ms each way, or twice the bridge's own p99 where the machine holds even the bridge above 10 ms.
    bound_up, bound_down = (20.0 if b <= 10 else max(20.0, 2 * b) for b in (b_up, b_down))
    slow = sum(p["slow_gcs"] for p in pairs)
    checks = {"every call answered and no frame lost": all(p["ok"] for p in pairs),
              f"p99 at most {bound_up:.0f} ms up": up <= bound_up, f"p99 at most {bound_down:.0f} ms down": down <= bound_down,
              f"no collection over 10 ms ({slow} were)": not slow}
    missed = [what for what, ok in checks.items() if not ok]
    lines.append(f"N={n}: latency target " + ("held: " + "; ".join(checks) if not missed else "missed: not " + "; not ".join(missed)))
    if n == 1:
        p50 = statistics.median(max(p["calld_p50"]) for p in pairs)
        lines.append(f"N=1: forwarding p50 {p50:.1f} ms the worse way (target: at most 1 ms); one whole call took "
                     f"{statistics.median(p['calld_cpu_s'] for p in pairs) * 1000:.0f} ms of the daemon's CPU, "
                     f"{statistics.median(p['bridge_cpu_s'] for p in pairs) * 1000:.0f} ms of the bridge's")
    before = min(p["speed"][0] for p in pairs), max(p["speed"][1] for p in pairs)
    lines.append(f"N={n}: this machine's speed: the fixed workload took {before[0]:.0f}-{before[1]:.0f} ms over the run")
    return lines


async def compare(n: int, repeat: int, poisson: bool = False) -> list[dict]:
    """bridge, calld, bridge, ... calld, bridge: `repeat` calld batches, each between two bridge batches."""
    bridges = [await run_batch(n, poisson=poisson)]
    show(bridges[0])
    pairs = []
    for _ in range(repeat):
        calld = await load.run_batch(n, poisson=poisson)
        load.show(calld)
        bridges.append(await run_batch(n, poisson=poisson))
        show(bridges[-1])
        pairs.append(pair(bridges[-2:], calld))
        steady, whole = pairs[-1]["steady"], pairs[-1]["whole"]
        print(f"N={n}: steady CPU per call-second, calld {steady[0]:.1f} ms against the bridge's {steady[1]:.1f} ms "
              f"(x{steady[0] / steady[1]:.2f}); whole calls {whole[0]:.1f} against {whole[1]:.1f} ms (x{whole[0] / whole[1]:.2f})")
        sys.stdout.flush()
    return pairs


async def capacity(start: int, step: int, most: int) -> None:
    """calld alone at N = start, start + step, ... until its p99 passes 20 ms either way (or a call
    fails, or a frame is lost): the last N that held is what CALLD_MAX_CALLS may be on this machine."""
    os.environ.pop("CALLD_MAX_CALLS", None)  # the batch must place every call to find the limit
    held: tuple[int, float, float] | None = None
    n = start
    while n <= most:
        r = await load.run_batch(n)
        up, down = p99(r)
        ok = r["completed"] == n and lost(r) == 0 and max(up, down) <= 20.0
        before, after = r["reference_ms"]
        print(f"N={n:4d}: {r['completed']}/{n} answered, {lost(r)} frames lost, p99 {up:.1f} / {down:.1f} ms, "
              f"{r['core_share'][0] * 100:.0f}% of the core (fixed workload {before:.0f}-{after:.0f} ms): {'held' if ok else 'past it'}")
        sys.stdout.flush()
        if not ok:
            break
        held = (n, up, down)
        n += step
    if held is None:
        print(f"capacity: even N={start} passed p99 20 ms here; set CALLD_MAX_CALLS below {start} and run again from lower")
    elif n > most:
        print(f"capacity: every N up to {held[0]} held p99 20 ms (the sweep's end): CALLD_MAX_CALLS={held[0]} or a larger --capacity sweep")
    else:
        print(f"capacity: p99 reaches 20 ms on this machine between N={held[0]} and N={n}: "
              f"CALLD_MAX_CALLS={held[0]} (p99 {held[1]:.1f} / {held[2]:.1f} ms there)")


USAGE = """usage: bench/bridge.py [N ...] | --beside [N ...] | --repeat K [N ...] | --capacity [START STEP MOST]"""


async def main(argv: list[str]) -> None:
    if argv[:1] == ["--capacity"]:
        start, step, most = (int(a) for a in argv[1:4]) if len(argv) >= 4 else (50, 25, 300)
        await capacity(start, step, most)
        return
    repeat = 0
    poisson = "--poisson" in argv
    argv = [a for a in argv if a != "--poisson"]
    if argv[:1] == ["--beside"]:
        repeat, argv = 1, argv[1:]
    elif argv[:1] == ["--repeat"]:
        if len(argv) < 2 or not argv[1].isdigit() or int(argv[1]) < 1:
            raise SystemExit(f"--repeat takes how many calld batches to alternate with the bridge's (1 or more)\n{USAGE}")
        repeat, argv = int(argv[1]), argv[2:]
    if not all(a.isdigit() and int(a) > 0 for a in argv):
        raise SystemExit(f"N is a number of calls at once, e.g. 100\n{USAGE}")
    sizes = [int(a) for a in argv] or [100]
    if not repeat:
        for n in sizes:
            show(await run_batch(n, poisson=poisson))
        return
    runs = [(n, await compare(n, repeat, poisson)) for n in sizes]
    floor = web_floor.measure()  # the web stack's floor, in the same window as the batches
    summary = [line for n, pairs in runs for line in targets(n, pairs, floor, poisson)]
    print("\n".join(summary))  # last, so the figures the README asks for are the run's last lines


if __name__ == "__main__":
    if sys.argv[1:2] == ["--serve"]:
        trio.run(serve, sys.argv[2], sys.argv[3])
    else:
        trio.run(main, sys.argv[1:])
