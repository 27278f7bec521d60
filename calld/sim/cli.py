"""calld-sim: run the simulated Telnyx and GPT-Live on loopback until SIGTERM or SIGINT.

    calld-sim --scenario hours                   # a named scenario (calld.stub.scenario)
    calld-sim --scenario-file my_business.json   # a scenario as data (see docs/scenarios.md)

Prints one JSON line with the addresses the daemon needs (TELNYX_API_BASE, OPENAI_LIVE_URL,
TELNYX_PUBLIC_KEY, and for texting LINQ_API_BASE, LINQ_WEBHOOK_SECRET, OPENAI_API_BASE); on exit
writes the audio metrics to --metrics-out if given. Someone texts the daemon with
    POST {TELNYX_API_BASE}/sim/linq/text
    {"from": "+15555550177", "text": "hours +15555550142", "url": "http://127.0.0.1:8787/linq/webhook"}
and GET {TELNYX_API_BASE}/sim/linq/conversation shows both sides of every conversation.
"""

from __future__ import annotations

import argparse
import json
import signal
import sys
from functools import partial
from pathlib import Path

import trio

from calld.daemon.collector import FullCollections
from calld.sim.server import Simulator
from calld.stub.scenario import SCENARIOS, load_scenario


async def _collect_when_idle(sim: Simulator, collections: FullCollections, *, every_s: float = 0.5) -> None:
    """The full walks this process takes itself: once each time every line has gone down.

    The simulator is the benchmark's instrument: a full walk stops its loop (69 ms at 100 calls),
    and every latency it measures across that pause is charged to the daemon. So it keeps the
    daemon's policy (calld.daemon.collector): no automatic full walks, one when nothing is
    listening.
    """
    idle_for, walked = 0, True
    while True:
        await trio.sleep(every_s)
        idle_for = idle_for + 1 if all(world.ended for world in sim.worlds.values()) else 0
        if idle_for == 0:
            walked = False
        elif idle_for >= 2 and not walked:  # every line down for a while: its last webhooks are out
            walked = collections.call_ended(0, trio.current_time())


def _take_over_collections(now: float) -> FullCollections:
    collections = FullCollections()
    collections.take_over(now)
    return collections


async def _main(args: argparse.Namespace) -> int:
    scenario = load_scenario(Path(args.scenario_file)) if args.scenario_file else SCENARIOS[args.scenario]
    sim = Simulator(scenario)
    collections = _take_over_collections(trio.current_time())
    with trio.open_signal_receiver(signal.SIGTERM, signal.SIGINT) as signals:
        async with trio.open_nursery() as n:
            n.start_soon(_collect_when_idle, sim, collections)
            addrs = await n.start(partial(sim.serve, host=args.host, telnyx_port=args.telnyx_port, live_port=args.live_port))
            print(json.dumps({"TELNYX_API_BASE": addrs.telnyx_api_base, "OPENAI_LIVE_URL": addrs.live_url,
                              "TELNYX_PUBLIC_KEY": addrs.public_key, "LINQ_API_BASE": addrs.linq_api_base,
                              "LINQ_WEBHOOK_SECRET": addrs.linq_webhook_secret, "OPENAI_API_BASE": addrs.openai_api_base}),
                  flush=True)
            async for _ in signals:
                break
            if args.metrics_out:
                Path(args.metrics_out).write_text(json.dumps(sim.metrics()))
            n.cancel_scope.cancel()
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="calld-sim", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--scenario", default="hours", choices=sorted(SCENARIOS), metavar="NAME",
                        help="the scripted business every call reaches (default: hours; calld/stub/scenario.py lists them)")
    parser.add_argument("--scenario-file", help="a scenario as JSON (overrides --scenario)")
    parser.add_argument("--host", default="127.0.0.1", help="the address both listeners bind (default: 127.0.0.1, this machine only)")
    parser.add_argument("--telnyx-port", type=int, default=0,
                        help="the port of the Telnyx REST API, its webhooks' signer and the Linq and OpenAI text stand-ins "
                             "(TELNYX_API_BASE; default 0: any free port, printed)")
    parser.add_argument("--live-port", type=int, default=0,
                        help="the port of the GPT-Live WebSocket (OPENAI_LIVE_URL; default 0: any free port, printed)")
    parser.add_argument("--metrics-out", help="write audio metrics (JSON) here on exit")
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return trio.run(_main, args)
    except (ValueError, OSError) as exc:
        print(f"calld-sim: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
