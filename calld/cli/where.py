"""Which state directory calld-ctl's own checks (doctor, ledger check, ledger backup) look at, and why.

A running daemon's state is the one that matters: calld-ctl asks the daemon on its control socket
where it keeps it. An explicit --state-dir is checked as given (and the daemon's own named beside it
when it differs). With no daemon answering: CALLD_STATE_DIR (.env or the environment), else the
default. The reason goes with the directory, so the output says which one was checked and why.

The ledger follows the same rule: the one the running daemon uses (it names a PostgreSQL ledger by its
URL without the password; calld-ctl connects with its own CALLD_LEDGER_URL when that is the same
ledger, else with the daemon's URL when it has no password to hide), else --state-dir's SQLite file,
else CALLD_LEDGER_URL or the state dir's SQLite file.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import trio
from attrs import frozen

from calld.cli.client import ControlClient, ControlError, DaemonUnreachable, StreamBroken
from calld.ledger.target import redact
from calld.settings import ClientSettings, Settings

ASK_TIMEOUT_S = 3.0  # a daemon that answers nothing in this long is not one to take a directory from


@frozen
class StateDir:
    path: Path
    why: str

    def applied[S: (Settings, ClientSettings)](self, settings: S) -> S:
        """`settings` with this state dir (the ledger and artifacts dir follow it)."""
        return settings if settings.calld_state_dir == self.path else settings.model_copy(update={"calld_state_dir": self.path})


@frozen
class LedgerChoice:
    """The ledger to check: `target` (a SQLite path or a PostgreSQL URL to connect with; None when the
    daemon's URL hides a password calld-ctl does not have), `shown` (without a password), and why."""

    target: Path | str | None
    shown: str
    why: str

    def missing_password(self) -> str:
        return (f"the ledger {self.shown} ({self.why}) needs its password, which calld-ctl does not have: "
                "set CALLD_LEDGER_URL here to the daemon's, password included")


async def ask_daemon(socket: Path) -> dict[str, Any] | None:
    """The running daemon's state dir, ledger and pid (absolute paths), or None when none answers."""
    if not socket.exists():
        return None
    with trio.move_on_after(ASK_TIMEOUT_S):
        try:
            async with ControlClient(socket, timeout=ASK_TIMEOUT_S) as client:
                where = await client.where()
        except (DaemonUnreachable, StreamBroken, ControlError):
            return None
        if isinstance(where, dict) and isinstance(where.get("state_dir"), str):
            return where
    return None


def choose(settings: Settings | ClientSettings, socket: Path, flag: Path | None, daemon: dict[str, Any] | None) -> StateDir:
    """The directory to check and why: --state-dir, else the daemon's, else the settings'."""
    running = None if daemon is None else Path(daemon["state_dir"])
    seen = f"the calld answering on {socket} (pid {daemon.get('pid', '?')})" if daemon is not None else None
    if flag is not None:
        if running is None:
            return StateDir(flag, f"--state-dir; no calld answers on {socket}")
        if running == flag.absolute():
            return StateDir(flag, f"--state-dir, which {seen} uses")
        return StateDir(flag, f"--state-dir; note that {seen} uses {running}, not this one")
    configured = settings.calld_state_dir
    from_env = "calld_state_dir" in settings.model_fields_set
    if running is not None:
        why = f"the state dir of {seen}"
        if from_env and configured.absolute() != running:
            why += f"; CALLD_STATE_DIR here names {configured}, which that daemon does not use"
        return StateDir(running, why)
    if from_env:
        return StateDir(configured, f"CALLD_STATE_DIR; no calld answers on {socket}")
    return StateDir(configured, f"the default (CALLD_STATE_DIR is not set); no calld answers on {socket}")


def choose_ledger(settings: Settings | ClientSettings, socket: Path, flag: Path | None, daemon: dict[str, Any] | None) -> LedgerChoice:
    """The ledger to check and why: --state-dir's SQLite file, else the running daemon's, else the settings'."""
    own = settings.calld_ledger_url.get_secret_value()
    if flag is not None:
        where = choose(settings, socket, flag, daemon)
        path = where.applied(settings).db_path
        return LedgerChoice(path, str(path), f"in {where.why}")
    if daemon is None:
        if own:
            return LedgerChoice(own, redact(own), f"CALLD_LEDGER_URL; no calld answers on {socket}")
        where = choose(settings, socket, None, None)
        path = where.applied(settings).db_path
        return LedgerChoice(path, str(path), f"in {where.why}")
    seen = f"the calld answering on {socket} (pid {daemon.get('pid', '?')})"
    shown = str(daemon.get("ledger") or "")
    if daemon.get("ledger_engine") == "postgresql":
        why = f"the ledger of {seen}"
        if own and redact(own) == shown:
            return LedgerChoice(own, shown, why)
        if own:
            why += f"; CALLD_LEDGER_URL here names {redact(own)}, which that daemon does not use"
        return LedgerChoice(None if "***" in shown else shown, shown, why)
    path = Path(shown) if shown else choose(settings, socket, None, daemon).applied(settings).db_path
    why = f"the ledger of {seen}"
    if own:
        why += f"; CALLD_LEDGER_URL here names {redact(own)}, which that daemon does not use"
    return LedgerChoice(path, str(path), why)
