"""`calld demo --text "..."`: a private stub daemon, a linked handle, and a text conversation with it.

Each --text is sent by the fake Linq as a signed webhook to the daemon's real route once the
previous one has been answered in full; the conversation is printed as both sides see it.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

import trio

from calld.settings import load_settings

DEMO_HANDLE = "+15555550177"  # the person texting (fictional range)


async def run_text_demo(args: argparse.Namespace, workdir: Path | None = None) -> int:
    from calld.cli.client import ControlClient
    from calld.daemon.service import Daemon
    from calld.stub.linq import Line

    workdir = workdir or Path(tempfile.mkdtemp(prefix="calld-demo-"))  # the caller removes it unless --keep
    settings = load_settings(
        calld_state_dir=workdir / "state", calld_socket=workdir / "ctl.sock", calld_bind="127.0.0.1:0", calld_mode="stub"
    )
    daemon = Daemon(settings)
    out = sys.stdout

    def show(line: Line) -> None:
        who = "  you" if line.who == "them" else "calld"
        print(f"{who}: {line.text}", file=out, flush=True)

    async with trio.open_nursery() as n:
        await n.start(daemon.serve)
        print(f"calld demo: a private daemon on {settings.calld_socket}", file=sys.stderr)
        async with ControlClient(settings.calld_socket) as client:
            row = await client.provision("demo")
            link = await client.messaging_link(DEMO_HANDLE, "demo", "Nathan")
        print(f"user demo calls from {row['did']}; {link['handle']} texts for it", file=sys.stderr)
        fake = daemon.messaging.fake
        fake.listeners.append(show)
        for text in args.text:
            await fake.text(DEMO_HANDLE, text)
            await daemon.messaging.wait_idle()
        replied = bool(fake.replies_to(DEMO_HANDLE))
        from calld.observe.painter import unhurried_clock

        unhurried_clock()
        await daemon.pictures_drawn()  # a tour shows its picture: the shutdown's bound would drop one not drawn
        await daemon.shutdown(drain_s=5)
    if getattr(args, "keep", True):
        print(f"artifacts: {settings.artifacts_dir}", file=sys.stderr)
    return 0 if replied else 1
