"""calld-ctl: the command line. `verify ask` runs the lever; the daemon verbs come with calld."""

from __future__ import annotations

import argparse
import logging
import sys

EXIT_OK = 0
EXIT_VERIFY_FAILED = 1
EXIT_USAGE = 2


def _verify(args: argparse.Namespace) -> int:
    from calld.verify import verify_quick_ask

    report = verify_quick_ask()
    for line in report.lines():
        print(line)
    print(f"artifacts: {report.run_dir}", file=sys.stderr)
    return EXIT_OK if report.passed else EXIT_VERIFY_FAILED


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="calld-ctl", description="Talk to calld.")
    parser.add_argument("-v", "--verbose", action="store_true", help="log every call event on stderr")
    sub = parser.add_subparsers(dest="command", required=True)
    verify = sub.add_parser("verify", help="run a stub call into a fresh workspace and check its artifacts")
    verify.add_argument("job", choices=["ask"], help="which job to verify")
    verify.set_defaults(func=_verify)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    logging.basicConfig(
        level=logging.INFO if args.verbose else logging.WARNING,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
        stream=sys.stderr,
    )
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())
