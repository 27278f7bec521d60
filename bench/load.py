"""Load benchmark: N concurrent paced calls through one daemon in live mode against calld-sim.

    uv run python bench/load.py [N ...]            # default: 100
    uv run python bench/load.py --poisson [N ...]  # the N calls arrive at random over a minute instead

For each N: a fresh simulator (fake Telnyx + fake GPT-Live, real-time 20 ms frames both ways)
pinned to core 1 with this load generator, and a fresh daemon pinned to core 0. Prints calls
completed/failed, frames in and out and lost, forwarding latency by audio position (Telnyx
frame received -> GPT-Live append sent; GPT-Live delta -> Telnyx frame sent) at p50/p99/max,
daemon CPU per call-second and per call-minute, peak RSS and RSS per call, and what the
simulator itself used. Not a test: it prints figures.

BENCH_DAEMONS=2 starts two daemons, each pinned to its own core, and splits the calls between them
(docs/scaling.md); the simulator then runs unpinned, and ahead of the daemons (nice -10, where this
user may raise a priority): it stands for the carrier and OpenAI, which in a deployment do not share
the daemons' cores, and a latency it measures while the daemons hold its core is not theirs. BENCH_LEDGER=postgresql puts the daemons on one
PostgreSQL ledger (a throwaway cluster, as the tests start it: tests/pg.py), and BENCH_PROXY=1 puts
Debian's nginx in front (calld-ctl proxy-config's rules, as tests/test_proxy.py runs it): every call's
webhooks and media then go through /d/N/ on the proxy, as in a deployment of several daemons. BENCH_DAEMON_PREFIX runs the daemon under a profiler (e.g. "-m cProfile -o /tmp/daemon.prof" or
"-X importtime"); BENCH_STEADY_PROFILE starts a profiler on it for the steady window alone
(`profile_steady`; bench/bridge.py does the same for the bridge). The daemon logs at INFO, as in service (one line per call event); its log is
kept in the batch's temporary directory (/tmp/calld-load-N-*/daemon.log).

The daemon runs with CALLD_MAX_CALLS=1000 unless the environment sets it, so that the benchmark
finds where one core gives out; with the daemon's own default (50), calls past it are counted as
refused (nothing placed).

By default a batch's calls are placed 10 ms apart, so they start, talk and end together: every call's
end falls in the same second and a half. `--poisson` places them as calls come to a real deployment,
at random moments over POISSON_S (60 s): a Poisson process of N calls in that minute (each call's
moment uniform over it), seeded by BENCH_SEED (default 54) so that calld and the bridge
(bench/bridge.py --poisson) get the same moments. Its batches print no steady-state figure (the
calls are never all talking at once); everything else is as for a batch. Both print the p99 and the
worst latency of each second beside the whole run's.

Each batch also prints how fast the daemon's core ran a fixed workload (stdlib JSON and base64 over
a media frame, the shape of the audio path's work, unchanged whatever calld becomes) just before and
just after it. On a shared machine that speed moves by half from one hour to the next; figures
from two windows compare only beside it.
"""

from __future__ import annotations

import io
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import trio

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # the repository: tests.pg, tests.test_proxy
from calld.cli.client import ControlClient, ControlError  # noqa: E402
from calld.cli.ctl import run_ask  # noqa: E402

DAEMON_CORE, SIM_CORE = 0, 1


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


STEADY_FROM_S, STEADY_TO_S = 5.0, 11.0  # every call is talking then: the window of the steady-state figure
CALL_GAP_S = 0.01  # a batch's calls arrive 10 ms apart, not in one instant
POISSON_S = 60.0  # --poisson: the calls arrive at random over this long


def arrival_gaps(n: int, poisson: bool) -> list[float]:
    """The wait before each call: CALL_GAP_S in a batch; with `poisson`, the gaps of a Poisson process
    that brings n calls within POISSON_S (given that count, its moments are n uniform draws over the
    window, sorted), seeded by BENCH_SEED: the same moments for calld and the bridge."""
    if not poisson:
        return [CALL_GAP_S] * n
    import random

    rng = random.Random(int(os.environ.get("BENCH_SEED", "54")) * 1000 + n)
    moments = sorted(rng.uniform(0, POISSON_S) for _ in range(n))
    return [b - a for a, b in zip([0.0, *moments], moments, strict=False)]


def _times(stat: Path) -> tuple[float, float]:
    """(user, kernel) CPU seconds from a /proc stat file."""
    fields = stat.read_text().rsplit(")", 1)[1].split()
    tick = os.sysconf("SC_CLK_TCK")
    return int(fields[11]) / tick, int(fields[12]) / tick


def cpu_seconds(pid: int) -> float:
    return sum(_times(Path(f"/proc/{pid}/stat")))


def cpu_split(pid: int) -> tuple[float, float, float]:
    """(the event loop thread's user CPU, its kernel CPU, every other thread's CPU), in seconds.

    The loop is the process's main thread; the others (the disk port's workers and the ledger's
    fsync) move to the other cores by design (calld/ops/cores.py), so the loop's
    own figure is what "a share of its core" means. Kernel time is mostly the TCP sends: on
    loopback each also runs the simulator's receive side and wakes it."""
    user, kernel = _times(Path(f"/proc/{pid}/task/{pid}/stat"))
    return user, kernel, cpu_seconds(pid) - user - kernel


def children_cpu_seconds(pid: int) -> float:
    """CPU of the daemon's live children (the drawing process): not the daemon's, but reported beside it."""
    total = 0.0
    for children in Path(f"/proc/{pid}/task").glob("*/children"):
        for child in children.read_text().split():
            try:
                total += cpu_seconds(int(child))
            except OSError:
                pass
    return total


def tree_cpu_seconds(pid: int | None) -> float:
    """CPU of a process and its live descendants (nginx's workers, PostgreSQL's backends)."""
    if pid is None:
        return 0.0
    try:
        total = cpu_seconds(pid)
        for children in Path(f"/proc/{pid}/task").glob("*/children"):
            total += sum(tree_cpu_seconds(int(child)) for child in children.read_text().split())
    except OSError:  # gone meanwhile
        return 0.0
    return total


def gc_pauses(exposition: str) -> tuple[float, int, dict[str, tuple[int, int]], float, float]:
    """(the longest collection in seconds, how many there were, by generation how many and how
    many took over 10 ms, all of them together in seconds, and the most CPU one took) from the
    daemon's /metrics."""
    from prometheus_client.parser import text_string_to_metric_families

    worst, count, together, worst_cpu = 0.0, 0, 0.0, 0.0
    total: dict[str, int] = {}
    under_10ms: dict[str, int] = {}
    for fam in text_string_to_metric_families(exposition):
        for sample in fam.samples:
            if sample.name == "calld_gc_pause_max_seconds":
                worst = sample.value
            elif sample.name == "calld_gc_pause_cpu_max_seconds":
                worst_cpu = sample.value
            elif sample.name == "calld_gc_pause_seconds_sum":
                together += sample.value
            elif sample.name == "calld_gc_pause_seconds_count":
                count += int(sample.value)
                total[sample.labels["generation"]] = int(sample.value)
            elif sample.name == "calld_gc_pause_seconds_bucket" and sample.labels["le"] == "0.01":
                under_10ms[sample.labels["generation"]] = int(sample.value)
    return worst, count, {g: (n, n - under_10ms.get(g, 0)) for g, n in sorted(total.items())}, together, worst_cpu


def rss_kib(pid: int, key: str) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(key + ":"):
            return int(line.split()[1])
    return 0


REFERENCE_WORKLOAD = """
import base64, json, statistics, time
text = json.dumps({"event": "media", "media": {"chunk": "1", "payload": base64.b64encode(bytes(640)).decode()}})
runs = []
for _ in range(5):
    t = time.process_time()
    for _ in range(10000):
        pcm = base64.b64decode(json.loads(text)["media"]["payload"])
        json.dumps({"type": "input_audio_buffer.append", "audio": base64.b64encode(pcm).decode()})
    runs.append(time.process_time() - t)
print(statistics.median(runs) * 1000)
"""


def reference_ms(core: int) -> float:
    """The fixed workload's CPU time (median of five) on `core`: how fast this machine is right now."""
    out = subprocess.run([*pinned(core), sys.executable, "-c", REFERENCE_WORKLOAD], capture_output=True, text=True, check=True)
    return float(out.stdout)


def profile_steady(pids: list[int]) -> subprocess.Popen | None:
    """BENCH_STEADY_PROFILE: a command started, from the simulator's core, when the steady window
    opens, with {pid} (the first daemon's, or the bridge's) and {seconds} (the window) filled in,
    e.g. "perf record -F 1999 -g -p {pid} -o /tmp/steady.data -- sleep {seconds}". Only for finding
    where the window's CPU goes: the profiler shares the simulator's core."""
    command = os.environ.get("BENCH_STEADY_PROFILE")
    if not command:
        return None
    try:
        words = [w.format(pid=pids[0], seconds=round(STEADY_TO_S - STEADY_FROM_S)) for w in command.split()]
    except (KeyError, IndexError, ValueError) as exc:
        raise SystemExit(f"BENCH_STEADY_PROFILE: only {{pid}} and {{seconds}} are filled in ({exc!r}); "
                         "write any other brace as {{ or }}") from None
    return subprocess.Popen([*pinned(SIM_CORE), *words], stdout=subprocess.DEVNULL)


def pinned(core: int) -> list[str]:
    return ["taskset", "-c", str(core)] if os.cpu_count() and os.cpu_count() > 1 else []


def sim_ahead(daemons: int) -> list[str]:
    """With the daemons on every core, the simulator runs at nice -10 when this user may set it."""
    if daemons == 1 or not hasattr(os, "nice"):
        return []
    probe = subprocess.run(["nice", "-n", "-10", "true"], capture_output=True, text=True, check=False)
    if probe.returncode != 0 or probe.stderr:
        print("        (the simulator runs at the daemons' priority: this user may not raise one)", flush=True)
        return []
    return ["nice", "-n", "-10"]


async def run_batch(n: int, daemons: int = 1, *, poisson: bool = False) -> dict:
    work = Path(tempfile.mkdtemp(prefix=f"calld-load-{n}-"))
    reference_before = reference_ms(DAEMON_CORE)
    metrics_file = work / "sim-metrics.json"
    # One daemon: it has core 0, the simulator core 1. Two: a core each, the simulator between them.
    sim_pin = pinned(SIM_CORE) if daemons == 1 else []
    if sim_pin and hasattr(os, "sched_setaffinity"):
        # This load generator too (it reads every call's progress lines and result): left free,
        # it took the daemon's core a scheduler tick (4 ms) at a time when a batch ended.
        os.sched_setaffinity(0, {SIM_CORE})
    sim = subprocess.Popen([*sim_pin, *sim_ahead(daemons), sys.executable, "-m", "calld.sim.cli", "--metrics-out", str(metrics_file)],
                           stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    addrs = json.loads(sim.stdout.readline())  # type: ignore[union-attr]
    prefix = os.environ.get("BENCH_DAEMON_PREFIX", "").split()  # e.g. "-m cProfile -o /tmp/daemon.prof"
    cluster, nginx, ledger_url = None, None, None
    if os.environ.get("BENCH_LEDGER") == "postgresql":
        from tests.pg import Cluster, _bin_dir, admin, database_url

        bin_dir = _bin_dir()
        if bin_dir is None:
            raise SystemExit("BENCH_LEDGER=postgresql: no initdb/pg_ctl (apt-get install postgresql)")
        cluster = Cluster(bin_dir)
        cluster.start()
        admin(cluster.url, "CREATE DATABASE calld_bench")
        ledger_url = database_url(cluster.url, "calld_bench")
    proxy_base = None
    if os.environ.get("BENCH_PROXY") == "1":
        from tests.test_proxy import Nginx

        nginx = Nginx(work / "nginx", free_port())
        proxy_base = f"http://127.0.0.1:{nginx.port}"
    backends: dict[int, tuple[str, str]] = {}
    procs: list[subprocess.Popen] = []
    socks: list[Path] = []
    for d in range(daemons):
        home = work / f"d{d}" if daemons > 1 else work
        home.mkdir(exist_ok=True)
        port, media_port = free_port(), free_port()
        base = f"http://127.0.0.1:{port}"
        env = {**os.environ, "CALLD_MODE": "live", "CALLD_LIVE_OPT_IN": "1", "CALLD_STATE_DIR": str(home / "state"),
               "CALLD_SOCKET": str(home / "ctl.sock"), "CALLD_BIND": f"127.0.0.1:{port}", "TELNYX_API_KEY": "KEY-bench",
               "TELNYX_CONNECTION_ID": "bench-connection", "OPENAI_API_KEY": "KEY-bench", "LINQ_API_KEY": "KEY-bench",
               "PUBLIC_BASE_URL": base,
               "PUBLIC_WEBHOOK_URL": f"{base}/telnyx/webhook",
               # no proxy here: the simulator opens media straight at the media listener
               "CALLD_MEDIA_BIND": f"127.0.0.1:{media_port}", "PUBLIC_MEDIA_URL": f"ws://127.0.0.1:{media_port}/telnyx/media",
               # past the daemon's default limit on purpose: the benchmark looks for where it breaks
               "CALLD_MAX_CALLS": os.environ.get("CALLD_MAX_CALLS", "1000"),
               # N calls to one scripted number: the per-number and per-user limits would refuse all but the first.
               "CALLD_CALLS_PER_NUMBER_PER_DAY": "1000", "CALLD_CALLS_PER_USER_PER_HOUR": "10000", "CALLD_CALLS_PER_NUMBER_AT_ONCE": "1000", **addrs}
        if ledger_url is not None:
            env["CALLD_LEDGER_URL"] = ledger_url
        if proxy_base is not None:  # daemon d+1 behind the proxy: its calls' URLs under /d/N/ there
            env.pop("PUBLIC_MEDIA_URL")
            env |= {"CALLD_INSTANCE": str(d + 1), "PUBLIC_BASE_URL": proxy_base, "PUBLIC_WEBHOOK_URL": f"{proxy_base}/telnyx/webhook"}
            backends[d + 1] = (f"127.0.0.1:{port}", f"127.0.0.1:{media_port}")
        daemon_log = (home / "daemon.log").open("w")
        procs.append(subprocess.Popen([*pinned((DAEMON_CORE + d) % (os.cpu_count() or 1)), sys.executable, *prefix,
                                       "-m", "calld.cli.daemon", "serve"], env=env, stderr=daemon_log, cwd=home))
        socks.append(home / "ctl.sock")
    if nginx is not None:
        nginx.start(backends)
    try:
        for _ in range(2400):  # 120 s: on this shared machine, under load, a pinned daemon's start-up can take a minute
            if all(s.exists() for s in socks) or any(p.poll() is not None for p in procs):
                break
            await trio.sleep(0.05)
        if not all(s.exists() for s in socks):
            raise SystemExit(f"a daemon did not start: {(work / 'daemon.log').read_text().strip()[-500:] if daemons == 1 else work}")
        clients = [ControlClient(s) for s in socks]
        for c in clients:
            await c.__aenter__()
        try:
            for c in clients:
                await c.provision("bench")
            # What else shares the cores: the proxy and the ledger's server, each with its children.
            proxy_pid = nginx.proc.pid if nginx is not None and nginx.proc is not None else None
            pg_pid = int((cluster.data / "postmaster.pid").read_text().split()[0]) if cluster is not None else None
            others0 = (tree_cpu_seconds(proxy_pid), tree_cpu_seconds(pg_pid))
            cpu0 = [cpu_seconds(p.pid) for p in procs]
            split0 = [cpu_split(p.pid) for p in procs]
            sim_cpu0, rss0 = cpu_seconds(sim.pid), sum(rss_kib(p.pid, "VmRSS") for p in procs)
            results: list[dict] = []

            async def one(i: int) -> None:
                out = io.StringIO()
                body = {"to": "+15555550142", "ask": "hours", "name": "Nathan", "user": "bench"}
                try:
                    await run_ask(clients[i % daemons], body, out=out, err=io.StringIO())
                except ControlError as exc:
                    if exc.status != 503:
                        raise
                    results.append({"status": "refused"})  # past CALLD_MAX_CALLS: nothing was placed
                    return
                try:
                    results.append(json.loads(out.getvalue()))
                except ValueError:
                    results.append({"status": "error"})

            steady: list[float] = []
            steady_split: list[tuple[float, float, float]] = []

            async def sample_steady() -> None:
                # The audio path alone: CPU while every call is mid-conversation (set-up and
                # wind-down fall outside this window), per call-second of that window.
                if poisson:
                    return  # the calls are never all talking at once: there is no steady window
                await trio.sleep(STEADY_FROM_S)
                profile_steady([p.pid for p in procs])
                a = sum(cpu_seconds(p.pid) for p in procs)
                a_split = [cpu_split(p.pid) for p in procs]
                await trio.sleep(STEADY_TO_S - STEADY_FROM_S)
                call_seconds = n * (STEADY_TO_S - STEADY_FROM_S)
                steady.append((sum(cpu_seconds(p.pid) for p in procs) - a) / call_seconds)
                b_split = [cpu_split(p.pid) for p in procs]
                steady_split.append(tuple(sum(b[i] - a[i] for a, b in zip(a_split, b_split, strict=True)) / call_seconds
                                          for i in range(3)))  # type: ignore[arg-type]

            t0 = time.monotonic()
            async with trio.open_nursery() as nursery:
                nursery.start_soon(sample_steady)
                for i, gap in enumerate(arrival_gaps(n, poisson)):
                    nursery.start_soon(one, i)
                    await trio.sleep(gap)
            wall = time.monotonic() - t0
            cpus = [cpu_seconds(p.pid) - c0 for p, c0 in zip(procs, cpu0, strict=True)]
            loop_cpus = [sum(cpu_split(p.pid)[:2]) - sum(s0[:2]) for p, s0 in zip(procs, split0, strict=True)]
            drawing_cpu = sum(children_cpu_seconds(p.pid) for p in procs)  # started after cpu0: all of it is this batch's
            gcs = [gc_pauses(await c.metrics()) for c in clients]
            gc_worst_s, gc_count, gc_total_s = max(g[0] for g in gcs), sum(g[1] for g in gcs), sum(g[3] for g in gcs)
            gc_worst_cpu_s = max(g[4] for g in gcs)
            gc_by_gen: dict[str, list[int]] = {}
            for g in gcs:
                for gen, (collections, slow) in g[2].items():
                    acc = gc_by_gen.setdefault(gen, [0, 0])
                    acc[0] += collections
                    acc[1] += slow
            sim_cpu = cpu_seconds(sim.pid) - sim_cpu0
            proxy_cpu, pg_cpu = (tree_cpu_seconds(proxy_pid) - others0[0], tree_cpu_seconds(pg_pid) - others0[1])
            peak = sum(rss_kib(p.pid, "VmHWM") for p in procs)
        finally:
            for c in clients:
                await c.__aexit__(None, None, None)
    finally:
        for p in procs:
            p.send_signal(signal.SIGTERM)
        sim.send_signal(signal.SIGTERM)
        for p in procs:
            p.wait(timeout=120)
        sim.wait(timeout=60)
        if nginx is not None:
            nginx.stop()
        if cluster is not None:
            cluster.stop()
    durations = []
    for r in results:
        ref = r.get("transcript_ref")
        if ref:
            found = list(work.glob(f"**/state/artifacts/{ref.split('/')[0]}/call_report.json"))
            if found:
                durations.append(json.loads(found[0].read_text())["duration_ms"] / 1000)
    reference_after = reference_ms(DAEMON_CORE)
    call_seconds = sum(durations) or float("nan")
    cpu = sum(cpus)
    m = json.loads(metrics_file.read_text()) if metrics_file.exists() else {}
    refused = sum(r.get("status") == "refused" for r in results)
    return {
        "n": n, "poisson": poisson, "daemons": daemons, "wall_s": wall, "completed": sum(r.get("status") == "answered" for r in results),
        "failed": sum(r.get("status") not in ("answered", "refused") for r in results),
        "refused": refused, "daemon_cpu_s": cpu, "daemon_cpus_s": cpus, "sim_cpu_s": sim_cpu, "drawing_cpu_s": drawing_cpu,
        "proxy_cpu_s": proxy_cpu, "pg_cpu_s": pg_cpu,
        "gc_worst_ms": gc_worst_s * 1000, "gc_count": gc_count, "gc_total_ms": gc_total_s * 1000, "gc_by_gen": gc_by_gen,
        "gc_worst_cpu_ms": gc_worst_cpu_s * 1000,
        "call_seconds": call_seconds, "ms_per_call_second": cpu / call_seconds * 1000, "steady_ms_per_call_second": steady[0] * 1000 if steady else float("nan"), "cpu_s_per_call_minute": cpu / call_seconds * 60,
        "core_share": [c / wall for c in cpus], "loop_core_share": [c / wall for c in loop_cpus],
        "steady_split_ms": tuple(x * 1000 for x in steady_split[0]) if steady_split else (float("nan"),) * 3,
        "peak_rss_mib": peak / 1024,
        "rss_per_call_kib": (peak - rss0) / max(1, n - refused), "metrics": m,
        "reference_ms": (reference_before, reference_after),
    }


def by_second(m: dict) -> None:
    """Each second's p99 and worst latency, both ways (seconds since the first call's first frame)."""
    for way in ("uplink", "downlink"):
        p99s = m.get(f"{way}_p99_by_second_ms") or {}
        print(f"        {way} p99 per second (s: ms): " + " ".join(f"{s}:{v:.0f}" for s, v in p99s.items()))
        worst = m.get(f"{way}_worst_by_second_ms") or {}
        print(f"        {way} worst per second (s: ms): " + " ".join(f"{s}:{v:.0f}" for s, v in worst.items()))


def show(r: dict) -> None:
    m = r["metrics"]
    up, down = m.get("uplink_ms", {}), m.get("downlink_ms", {})
    how = ", ".join(w for w, on in (("PostgreSQL ledger", os.environ.get("BENCH_LEDGER") == "postgresql"),
                                    ("through nginx", os.environ.get("BENCH_PROXY") == "1")) if on)
    print(f"N={r['n']:4d}  completed {r['completed']}/{r['n']} failed {r['failed']} refused {r['refused']} "
          f"(CALLD_MAX_CALLS)  wall {r['wall_s']:.1f} s" + (f"  across {r['daemons']} daemons" if r["daemons"] > 1 else "")
          + (f"  arriving at random over {POISSON_S:.0f} s" if r.get("poisson") else "  as a batch")
          + (f"  ({how})" if how else ""))
    print(f"        frames in {m.get('frames_in')} -> to GPT-Live {m.get('frames_to_live')}; from GPT-Live "
          f"{m.get('frames_from_live')} -> out {m.get('frames_out')}; lost up {m.get('frames_lost_uplink')} down {m.get('frames_lost_downlink')}")
    print(f"        uplink latency p50 {up.get('50', float('nan')):.1f} p99 {up.get('99', float('nan')):.1f} max {up.get('100', float('nan')):.1f} ms; "
          f"downlink p50 {down.get('50', float('nan')):.1f} p99 {down.get('99', float('nan')):.1f} max {down.get('100', float('nan')):.1f} ms")
    print(f"        daemon CPU {r['daemon_cpu_s']:.1f} s over {r['call_seconds']:.0f} call-seconds (each call's from its ask) = "
          f"{r['ms_per_call_second']:.1f} ms per call-second "
          f"({r['cpu_s_per_call_minute']:.2f} s per call-minute); peak RSS {r['peak_rss_mib']:.0f} MiB, "
          f"{r['rss_per_call_kib']:.0f} KiB per call; drawing process CPU {r['drawing_cpu_s']:.1f} s; simulator CPU {r['sim_cpu_s']:.1f} s over {r['wall_s']:.1f} s "
          f"({r['sim_cpu_s'] / r['wall_s'] * 100:.0f}% of its core)")
    if r["daemons"] > 1:  # the calls are split evenly (call i to daemon i mod K): each has 1/K of the call-seconds
        share = r["daemon_cpu_s"] / r["ms_per_call_second"] * 1000 / r["daemons"] if r["ms_per_call_second"] else float("nan")
        print("        each daemon: " + ", ".join(f"{c / share * 1000:.1f} ms per call-second" for c in r["daemon_cpus_s"]))
    if r["proxy_cpu_s"] or r["pg_cpu_s"]:
        everything = r["daemon_cpu_s"] + r["sim_cpu_s"] + r["drawing_cpu_s"] + r["proxy_cpu_s"] + r["pg_cpu_s"]
        print(f"        beside them: nginx CPU {r['proxy_cpu_s']:.1f} s, PostgreSQL CPU {r['pg_cpu_s']:.1f} s; everything together "
              f"{everything / r['wall_s'] * 100:.0f}% of one core over the wall time, of the {os.cpu_count()} this machine has")
    print(f"        steady state ({STEADY_FROM_S:.0f}-{STEADY_TO_S:.0f} s, every call talking): "
          f"{r['steady_ms_per_call_second']:.1f} ms CPU per call-second")
    user, kernel, others = r["steady_split_ms"]
    others = max(0.0, others)  # the thread and process counters tick apart: a few ms either way
    print(f"        of which the event loop's thread {user + kernel:.1f} (user {user:.1f}, kernel {kernel:.1f}) and "
          f"its other threads {others:.1f} ms per call-second")
    print(f"        daemon busy {' + '.join(f'{share * 100:.0f}%' for share in r['core_share'])} of its core over the wall time"
          + (f" (CPU {' / '.join(f'{c:.1f}' for c in r['daemon_cpus_s'])} s)" if r["daemons"] > 1 else "")
          + f"; its event loop's thread alone {' + '.join(f'{share * 100:.0f}%' for share in r['loop_core_share'])}")
    by_gen = ", ".join(f"gen{g} {n} ({slow} over 10 ms)" for g, (n, slow) in r["gc_by_gen"].items())
    print(f"        garbage collections {r['gc_count']}, the longest {r['gc_worst_ms']:.1f} ms, {r['gc_total_ms']:.0f} ms in all "
          f"({r['gc_total_ms'] / 1000 / r['daemon_cpu_s'] * 100:.1f}% of the daemon's CPU); {by_gen}")
    # A pause is wall time; the collector's own work is the loop thread's CPU in it. A long pause
    # whose CPU was short is the machine taking the core away, not the heap's size.
    print(f"        the most CPU one collection took: {r['gc_worst_cpu_ms']:.1f} ms (the longest pause above is wall time)")
    by_second(m)
    late = m.get("sim_late_worst_by_second_ms") or {}
    print("        simulator's own timer, latest per second (s: ms; its loop was busy, and a latency it measured "
          "then includes this): " + " ".join(f"{s}:{v:.0f}" for s, v in late.items()))
    before, after = r["reference_ms"]
    print(f"        this machine's speed: the fixed workload took {before:.0f} ms on the daemon's core before the batch "
          f"and {after:.0f} ms after (the less, the faster; compare batches only at about the same speed)")
    sys.stdout.flush()


async def main(argv: list[str]) -> None:
    poisson = "--poisson" in argv
    sizes = [a for a in argv if a != "--poisson"]
    if not all(a.isdigit() and int(a) > 0 for a in sizes):
        raise SystemExit("usage: bench/load.py [--poisson] [N ...]  (N: a number of calls, e.g. 100)")
    daemons = int(os.environ.get("BENCH_DAEMONS", "1"))
    for n in [int(a) for a in sizes] or [100]:
        show(await run_batch(n, daemons, poisson=poisson))


if __name__ == "__main__":
    trio.run(main, sys.argv[1:])
