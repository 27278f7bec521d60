"""calld-ctl ledger check | backup | migrate: which ledger (the running daemon's, --state-dir's, or
CALLD_LEDGER_URL's), said first, then the command on it."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

import trio

from calld.cli.exits import EXIT_OK, EXIT_VERIFY_FAILED, UsageError


def ledger_path(args: argparse.Namespace) -> Path:
    """The SQLite ledger of the running daemon (asked over its socket), else of --state-dir or the
    settings; which state dir and why is printed first."""
    settings, socket, daemon = _context(args)
    return _state_dir_ledger(args, settings, socket, daemon)


def _context(args: argparse.Namespace) -> tuple[Any, Path, dict[str, Any] | None]:
    from calld.cli.where import ask_daemon
    from calld.settings import load_client_settings

    settings = load_client_settings(**({"calld_state_dir": args.state_dir} if args.state_dir is not None else {}))
    socket = args.socket or settings.calld_socket
    return settings, socket, trio.run(ask_daemon, socket)


def _state_dir_ledger(args: argparse.Namespace, settings: Any, socket: Path, daemon: dict[str, Any] | None) -> Path:
    from calld.cli.where import choose

    where = choose(settings, socket, args.state_dir, daemon)
    print(f"state dir {where.path} ({where.why})")
    return where.applied(settings).db_path


def _choice(args: argparse.Namespace) -> Path | str:
    """The ledger to check or back up: --state-dir's SQLite file, else the one the running daemon uses
    (asked over its socket; a PostgreSQL one reached with this CALLD_LEDGER_URL when it names the same
    ledger), else CALLD_LEDGER_URL or the state dir's file. Which one and why is printed first."""
    from calld.cli.where import choose_ledger
    from calld.ledger import is_postgres

    settings, socket, daemon = _context(args)
    choice = choose_ledger(settings, socket, args.state_dir, daemon)
    if not is_postgres(choice.target) and choice.target is not None:
        return _state_dir_ledger(args, settings, socket, daemon)  # a SQLite file: its state dir's line, and why
    print(f"ledger {choice.shown} ({choice.why})")
    if choice.target is None:
        raise UsageError(choice.missing_password())
    return choice.target


def check(args: argparse.Namespace) -> int:
    from calld.ledger import is_postgres, redact

    target = _choice(args)
    if is_postgres(target):
        from calld.ops.postgres import postgres_problems

        url = str(target)
        where, problems, kind = redact(url), postgres_problems(url), "PostgreSQL schema check passed"
    else:
        from calld.ops.health import ledger_problems

        path = Path(target)
        where, problems, kind = str(path), ledger_problems(path), "SQLite integrity check passed"
    if not problems:
        print(f"ledger {where}: ok ({kind})")
        return EXIT_OK
    for problem in problems:
        print(f"ledger {where}: {problem}")
    print("restore a backup over it (while calld is stopped), or move the state directory aside"
          if not is_postgres(target) else "fix the server or CALLD_LEDGER_URL, or restore a backup (pg_restore)", file=sys.stderr)
    return EXIT_VERIFY_FAILED


def backup(args: argparse.Namespace) -> int:
    from calld.ledger import is_postgres, redact

    target = _choice(args)
    if is_postgres(target):
        from calld.ops.postgres import backup_postgres

        url = str(target)
        size = backup_postgres(url, args.file)
        print(f"ledger {redact(url)} backed up to {args.file} ({size} bytes, pg_dump custom format; pg_restore reads it)")
        return EXIT_OK
    from calld.ops.health import backup_ledger

    path = Path(target)
    size = backup_ledger(path, args.file)
    print(f"ledger {path} backed up to {args.file} ({size} bytes, checked)")
    return EXIT_OK


def migrate(args: argparse.Namespace) -> int:
    from calld.ledger import postgres_url_problem, redact
    from calld.ops.postgres import migrate_ledger

    if (problem := postgres_url_problem(args.to)) is not None:
        raise UsageError(f"--to: {problem}")
    source = args.source if args.source is not None else ledger_path(args)
    copied = migrate_ledger(source, args.to)
    print(f"copied the ledger {source} into {redact(args.to)}; rows per table (SQLite -> PostgreSQL):")
    for c in copied:
        print(f"  {c.table:<16} {c.source:>8} -> {c.copied}")
    from calld.ledger import Ledger
    from calld.ops.redaction import KEY_FILE, existing_key, share_key

    if (key := existing_key(source.parent)) is not None:  # users keep their stand-ins on every daemon
        target = Ledger(args.to)
        try:
            kept = share_key(target, key) == key
        finally:
            target.close()
        print(f"the redaction key {source.parent / KEY_FILE} " + ("came along: every daemon on the ledger uses it" if kept else
              "did not come along: the ledger has a key of its own (a daemon started on it); users' stand-ins change"))
    print("every count matches; set CALLD_LEDGER_URL to it and restart calld")
    return EXIT_OK
