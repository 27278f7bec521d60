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

from calld.sim.server import Simulator
from calld.stub.scenario import SCENARIOS, load_scenario


async def _main(args: argparse.Namespace) -> int:
    scenario = load_scenario(Path(args.scenario_file)) if args.scenario_file else SCENARIOS[args.scenario]
    sim = Simulator(scenario)
    with trio.open_signal_receiver(signal.SIGTERM, signal.SIGINT) as signals:
        async with trio.open_nursery() as n:
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


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="calld-sim", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--scenario", default="hours", choices=sorted(SCENARIOS))
    parser.add_argument("--scenario-file", help="a scenario as JSON (overrides --scenario)")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--telnyx-port", type=int, default=0)
    parser.add_argument("--live-port", type=int, default=0)
    parser.add_argument("--metrics-out", help="write audio metrics (JSON) here on exit")
    args = parser.parse_args(argv)
    try:
        return trio.run(_main, args)
    except (ValueError, OSError) as exc:
        print(f"calld-sim: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
