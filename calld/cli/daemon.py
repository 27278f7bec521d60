"""calld: the daemon (`calld serve`) and a one-command tour (`calld demo`)."""

from __future__ import annotations

import argparse
import errno
import logging
import os
import sys
import tempfile
import traceback
from pathlib import Path

import trio
import trio.testing

from calld.settings import SettingsError, load_settings

log = logging.getLogger("calld")


async def _serve(args: argparse.Namespace) -> int:
    from calld.daemon.service import Daemon
    from calld.daemon.systemd import Notifier, listen_fds, load_credentials, watchdog_task
    from calld.runtime.disk import off_the_loop

    fds = listen_fds()  # early: it clears LISTEN_* so no child inherits them
    # systemd credentials win over the environment and never enter os.environ.
    credentials = {k.lower(): v for k, v in load_credentials().items()}
    overrides = _overrides(args)
    # A line of .env python-dotenv cannot parse stops the start: its setting would silently not be set.
    flags = {k: _FLAGS[k] for k in overrides}
    settings = load_settings(**credentials, **overrides, flags=flags, strict_env_file=True)
    control = fds.get("control")
    daemon = Daemon(settings, control_fd=control.detach() if control is not None else None, own_collector=True,
                    disk=off_the_loop, warm_up_drawing=True, flags=flags)
    with Notifier() as notifier:
        async with trio.open_nursery() as n:
            await n.start(daemon.serve)
            notifier.notify("READY=1", f"STATUS=serving on {daemon.public_url}")
            n.start_soon(watchdog_task, notifier)
            await daemon.watch_signals(notify=notifier.notify)
            n.cancel_scope.cancel()
        notifier.notify("STATUS=stopped")
    log.info("stopped cleanly")
    return 0


_FLAGS = {"calld_socket": "--socket", "calld_state_dir": "--state-dir", "calld_bind": "--bind"}


def _overrides(args: argparse.Namespace) -> dict[str, object]:
    out: dict[str, object] = {}
    if args.socket is not None:
        out["calld_socket"] = args.socket
    if args.state_dir is not None:
        out["calld_state_dir"] = args.state_dir
    if args.bind is not None:
        out["calld_bind"] = args.bind
    return out


async def _demo(args: argparse.Namespace) -> int:
    """A private daemon in a temporary directory, one stub call through its control socket, then stop."""
    workdir = Path(tempfile.mkdtemp(prefix="calld-demo-"))
    try:
        if args.text:
            from calld.messaging.demo import run_text_demo

            return await run_text_demo(args, workdir)
        return await _demo_in(workdir, args)
    finally:
        if not args.keep:
            import shutil

            shutil.rmtree(workdir, ignore_errors=True)
            print(f"removed {workdir} (--keep keeps it)", file=sys.stderr)


async def _demo_in(workdir: Path, args: argparse.Namespace) -> int:
    from calld.cli.client import ControlClient
    from calld.cli.ctl import run_ask
    from calld.daemon.service import Daemon
    from calld.observe.painter import unhurried_clock
    from calld.stub.scenario import BOOK_SCENARIOS, SCENARIOS, load_scenario

    scenario = None
    if args.scenario_file is not None:  # your own business, played by this demo's stub world
        try:
            scenario = load_scenario(args.scenario_file)
        except ValueError as exc:
            print(f"calld demo: {exc}", file=sys.stderr)
            return 2
        (BOOK_SCENARIOS if scenario.booking is not None else SCENARIOS)[scenario.name] = scenario

    settings = load_settings(
        calld_state_dir=workdir / "state", calld_socket=workdir / "ctl.sock", calld_bind="127.0.0.1:0", calld_mode="stub",
        artifacts_retention="keep",  # a demo in a temporary directory publishes nothing
    )
    daemon = Daemon(settings)
    async with trio.open_nursery() as n:
        await n.start(daemon.serve)
        print(f"calld demo: a private daemon on {settings.calld_socket}", file=sys.stderr)
        async with ControlClient(settings.calld_socket) as client:
            row = await client.provision("demo")
            print(f"user demo calls from {row['did']}", file=sys.stderr)
            body = {"to": "+15555550142", "ask": args.ask, "name": "Nathan", "user": "demo"}
            if args.ask != "hours":
                body["item"] = args.item
            if scenario is not None and scenario.booking is not None:  # a restaurant: the demo books a table
                body = {"to": body["to"], "name": "Nathan", "user": "demo", "party": args.party, "time": args.time}
            code = await run_ask(client, body | ({"scenario": scenario.name} if scenario else {}),
                                 book=scenario is not None and scenario.booking is not None)
        unhurried_clock()
        await daemon.pictures_drawn()  # a tour shows its picture: the shutdown's bound would drop one not drawn
        await daemon.shutdown(drain_s=5)
    if args.keep:
        print(f"artifacts: {settings.artifacts_dir}", file=sys.stderr)
    return code


def _given_path(text: str) -> Path:
    # Path("") is the current directory: calld would make it private and fill it with its state.
    if not text.strip():
        raise argparse.ArgumentTypeError("is empty: give a path (or leave the option out for the default)")
    return Path(text)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="calld", description="The calld daemon.")
    parser.add_argument("-v", "--verbose", action="store_true", help="log every call event")
    from calld.cli.ctl import version

    parser.add_argument("--version", action="version", version=f"calld {version()}")
    sub = parser.add_subparsers(dest="command", required=True)
    serve = sub.add_parser("serve", help="run the daemon (systemd runs this)")
    serve.add_argument("--socket", type=_given_path, help="control socket path (default: $CALLD_SOCKET)")
    serve.add_argument("--state-dir", type=_given_path, help="ledger and artifacts (default: $CALLD_STATE_DIR)")
    serve.add_argument("--bind", help="public HOST:PORT for Telnyx (default: $CALLD_BIND or 127.0.0.1:8787); the media "
                       "listener takes the next port, unless CALLD_MEDIA_BIND names one")
    serve.set_defaults(afunc=_serve)
    demo = sub.add_parser("demo", help="one complete stub call through a private daemon, then stop")
    demo.add_argument("--ask", choices=["hours", "stock", "aisle"], default="hours", help="what the demo asks (default: hours)")
    demo.add_argument("--fast", action="store_true", help="run on a virtual clock: the same call, no waiting")
    demo.add_argument("--scenario-file", type=_given_path, metavar="FILE",
                      help="play your own business from a JSON scenario (docs/scenarios.md); a restaurant's books a table")
    demo.add_argument("--item", default="cast iron skillet", help="the item a stock or aisle demo asks about")
    demo.add_argument("--party", type=int, default=2, help="a restaurant scenario's party (default: 2)")
    demo.add_argument("--time", default="Friday 7pm", help="a restaurant scenario's time (default: Friday 7pm)")
    demo.add_argument("--text", action="append", metavar="TEXT",
                      help='ask by text message instead (e.g. "hours +15555550142"); repeat for a conversation (e.g. --text YES)')
    demo.add_argument("--keep", action="store_true", help="keep the temporary directory (artifacts, timeline.svg)")
    demo.set_defaults(afunc=_demo)
    return parser


EXIT_STARTUP = 2  # every start-up problem the operator fixes: settings, state dir, lock, ledger, port, socket


def _leaves(exc: BaseException) -> list[BaseException]:
    """The exceptions inside trio's (nested) exception groups."""
    if isinstance(exc, BaseExceptionGroup):
        return [leaf for inner in exc.exceptions for leaf in _leaves(inner)]
    return [exc]


def explain(exc: BaseException) -> str | None:
    """One line for a problem the operator can fix, or None for a bug."""
    from calld.ops.errors import OperationalError

    leaves = _leaves(exc)
    for leaf in leaves:
        if isinstance(leaf, OperationalError | SettingsError):
            return str(leaf)
    for leaf in leaves:
        if isinstance(leaf, OSError) and leaf.errno == errno.EADDRINUSE:
            return f"an address calld listens on is already in use ({leaf.strerror}); check CALLD_BIND and --socket"
        if isinstance(leaf, OSError) and leaf.errno in (errno.EROFS, errno.EACCES, errno.EPERM, errno.ENOSPC):
            where = f" ({leaf.filename})" if leaf.filename else ""
            return f"{leaf.strerror}{where}; check the state directory (CALLD_STATE_DIR) and the socket path"
    return None


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    from calld.daemon.systemd import configure_logging

    # Belt and braces: whatever a library creates is private too (calld sets its own modes as well).
    os.umask(0o077)
    configure_logging(logging.DEBUG if args.verbose else logging.INFO)
    if args.command == "demo" and not args.verbose:
        logging.getLogger("calld.call").setLevel(logging.WARNING)
        logging.getLogger("calld.messaging").setLevel(logging.WARNING)
    try:
        if getattr(args, "fast", False):
            return trio.run(args.afunc, args, clock=trio.testing.MockClock(autojump_threshold=0))
        return trio.run(args.afunc, args)
    except KeyboardInterrupt:
        return 130
    except BaseException as exc:  # noqa: BLE001 - one readable line for the operator; -v adds the traceback
        if isinstance(exc, SystemExit | KeyboardInterrupt) or any(isinstance(x, KeyboardInterrupt) for x in _leaves(exc)):
            return 130 if not isinstance(exc, SystemExit) else int(exc.code or 0)
        line = explain(exc)
        if args.verbose:
            traceback.print_exception(exc, file=sys.stderr)
        if line is not None:
            print(f"calld: {line}", file=sys.stderr)
            return EXIT_STARTUP
        first = _leaves(exc)[0]
        print(f"calld: stopped by an internal error: {type(first).__name__}: {first}"
              + ("" if args.verbose else " (run with -v for the traceback)"), file=sys.stderr)
        return 1




if __name__ == "__main__":
    sys.exit(main())
