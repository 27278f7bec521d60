"""Talking to systemd without libsystemd: readiness, watchdog, socket activation, journald, credentials.

calld runs as a `Type=notify` service with `WatchdogSec=`, gets its control socket from
`calld.socket` and its API keys from `LoadCredential=`. Each of those is a small, documented
protocol (sd_notify(3), sd_watchdog_enabled(3), sd_listen_fds(3), systemd.exec(5)), so this module
speaks them with the standard library instead of pulling in a C binding. Every function also works
outside systemd: with none of the variables set they do nothing and return empty results, so a
developer's `calld serve` in a terminal runs the same code.
"""

from __future__ import annotations

import logging
import os
import socket
import sys
from collections.abc import Mapping, MutableMapping
from pathlib import Path
from types import TracebackType
from typing import Self

import trio

__all__ = [
    "Notifier",
    "configure_logging",
    "listen_fds",
    "load_credentials",
    "stderr_is_journal",
    "watchdog_task",
]

log = logging.getLogger(__name__)

# sd_listen_fds(3): passed descriptors start right after stdin, stdout and stderr.
LISTEN_FDS_START = 3

# Credential ids in calld.service's LoadCredential= lines, and the settings they feed.
CREDENTIALS = {"telnyx_api_key": "TELNYX_API_KEY", "openai_api_key": "OPENAI_API_KEY",
               # texting (optional; the unit lists them only when texting is on: systemd/README.md)
               "linq_api_key": "LINQ_API_KEY", "linq_webhook_secret": "LINQ_WEBHOOK_SECRET"}


def _environ(environ: Mapping[str, str] | None) -> Mapping[str, str]:
    return os.environ if environ is None else environ


class Notifier:
    """Sends sd_notify messages to the socket named by NOTIFY_SOCKET.

    Without NOTIFY_SOCKET (not started by systemd, or `NotifyAccess=` denies us) every
    `notify()` is a no-op. A failed send is logged and swallowed: losing a STATUS line must
    never take the daemon down, and a lost WATCHDOG ping is exactly what systemd is there to catch.
    """

    def __init__(self, environ: Mapping[str, str] | None = None) -> None:
        env = _environ(environ)
        self._address = self._parse_address(env.get("NOTIFY_SOCKET", ""))
        self._sock: socket.socket | None = None
        self.watchdog_interval_s: float | None = self._parse_watchdog(env)

    @staticmethod
    def _parse_address(raw: str) -> str | None:
        if raw.startswith("/"):
            return raw
        if raw.startswith("@"):
            # Abstract namespace: the name starts with a NUL byte instead of '@'.
            return "\0" + raw[1:]
        if raw:
            # systemd >= 253 may hand VMs a vsock: address; calld runs on hosts, not in VMs.
            log.warning("NOTIFY_SOCKET=%r is not a Unix socket address; not notifying systemd", raw)
        return None

    @staticmethod
    def _parse_watchdog(env: Mapping[str, str]) -> float | None:
        try:
            usec = int(env.get("WATCHDOG_USEC", ""))
            pid = int(env["WATCHDOG_PID"]) if env.get("WATCHDOG_PID") else None
        except ValueError:
            return None
        # WATCHDOG_PID names the process systemd expects pings from; a child that inherited
        # the environment must not ping on the parent's behalf.
        if usec <= 0 or (pid is not None and pid != os.getpid()):
            return None
        # Half the timeout, as sd_watchdog_enabled(3) recommends: one late ping is not fatal.
        return usec / 2 / 1_000_000

    @property
    def enabled(self) -> bool:
        return self._address is not None

    def notify(self, *fields: str) -> None:
        """Send `fields` ("READY=1", "STATUS=...") as one datagram, newline-separated."""
        if self._address is None or not fields:
            return
        try:
            if self._sock is None:
                # Non-blocking: this is called from the trio loop, and a full receive queue
                # should cost one warning, not a stalled loop.
                self._sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM | socket.SOCK_CLOEXEC)
                self._sock.setblocking(False)
            self._sock.sendto("\n".join(fields).encode(), self._address)
        except (OSError, ValueError) as exc:
            log.warning("sd_notify %s failed: %s", fields[0], exc)

    def close(self) -> None:
        if self._sock is not None:
            self._sock.close()
            self._sock = None

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()


async def watchdog_task(notifier: Notifier, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
    """Ping WATCHDOG=1 every `notifier.watchdog_interval_s` for as long as the trio loop runs.

    The ping is a trio task on purpose: if the loop wedges (a blocking call, a busy task that
    never checkpoints), the pings stop and systemd restarts the service. Returns at once when no
    watchdog is configured. Run it in the daemon's root nursery; cancelling it is the way to stop.
    """
    interval = notifier.watchdog_interval_s
    task_status.started()
    if interval is None:
        return
    while True:
        notifier.notify("WATCHDOG=1")
        await trio.sleep(interval)


def listen_fds(environ: MutableMapping[str, str] | None = None, *, unset: bool = True) -> dict[str, socket.socket]:
    """Sockets passed by socket activation, keyed by their FileDescriptorName=.

    Follows sd_listen_fds(3): nothing unless LISTEN_PID is this process; LISTEN_FDS descriptors
    from fd 3 on; names from LISTEN_FDNAMES (colon-separated), defaulting to "fd3", "fd4", ...
    With `unset` (the default) the three variables are removed, whatever the outcome, so that
    anything we spawn does not believe the descriptors are meant for it.
    """
    env: MutableMapping[str, str] = os.environ if environ is None else environ
    pid, count, names = env.get("LISTEN_PID", ""), env.get("LISTEN_FDS", ""), env.get("LISTEN_FDNAMES", "")
    if unset:
        for key in ("LISTEN_PID", "LISTEN_FDS", "LISTEN_FDNAMES"):
            env.pop(key, None)
    try:
        if int(pid) != os.getpid():
            return {}
        n = int(count)
    except ValueError:
        return {}
    name_list = names.split(":") if names else []
    result: dict[str, socket.socket] = {}
    for i in range(max(n, 0)):
        fd = LISTEN_FDS_START + i
        name = name_list[i] if i < len(name_list) and name_list[i] else f"fd{fd}"
        if name in result:
            # Two sockets under one name would silently lose one; keep both reachable.
            name = f"fd{fd}"
        try:
            sock = socket.socket(fileno=fd)
        except OSError as exc:
            # A ListenFIFO= or similar: not ours to use, and not worth refusing to start over.
            log.warning("passed fd %d (%s) is not a usable socket: %s", fd, name, exc)
            continue
        # systemd passes them inheritable; sd_listen_fds sets FD_CLOEXEC, and so do we.
        os.set_inheritable(fd, False)
        result[name] = sock
    return result


def load_credentials(environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """API keys from $CREDENTIALS_DIRECTORY (LoadCredential=), as {"TELNYX_API_KEY": ..., ...}.

    Keys live there rather than in the environment because /proc/<pid>/environ and child
    processes see the environment. Missing or empty files are left out, so settings fall back
    to their other sources (stub mode needs no keys).
    """
    directory = _environ(environ).get("CREDENTIALS_DIRECTORY")
    if not directory:
        return {}
    found: dict[str, str] = {}
    for cred_id, setting in CREDENTIALS.items():
        try:
            value = (Path(directory) / cred_id).read_text().strip()
        except FileNotFoundError:
            continue
        if value:
            found[setting] = value
    return found


def stderr_is_journal(environ: Mapping[str, str] | None = None) -> bool:
    """True when stderr is the journald stream systemd connected (JOURNAL_STREAM=<dev>:<ino>).

    Comparing the device and inode, rather than trusting the variable's presence, keeps a
    `calld serve 2>file` started from a unit's shell from being mistaken for the journal.
    """
    try:
        dev, ino = (int(part) for part in _environ(environ)["JOURNAL_STREAM"].split(":"))
        st = os.fstat(sys.stderr.fileno())
    except (KeyError, ValueError, OSError, AttributeError):
        return False
    return (st.st_dev, st.st_ino) == (dev, ino)


def _syslog_priority(levelno: int) -> int:
    # Thresholds rather than a lookup so custom levels land on the nearest one below.
    if levelno >= logging.CRITICAL:
        return 2
    if levelno >= logging.ERROR:
        return 3
    if levelno >= logging.WARNING:
        return 4
    if levelno >= logging.INFO:
        return 6
    return 7


class _JournalFormatter(logging.Formatter):
    """Prefixes every line with `<priority>`: journald makes one entry per line and reads the prefix."""

    def format(self, record: logging.LogRecord) -> str:
        prefix = f"<{_syslog_priority(record.levelno)}>"
        return "\n".join(prefix + line for line in (super().format(record).splitlines() or [""]))


class _CalldStderrHandler(logging.StreamHandler):  # type: ignore[type-arg]
    """Marks the handler configure_logging installed, so a second call replaces it."""


QUIET_LIBRARIES = ("httpx", "websockets")  # warnings and errors only, unless the level is DEBUG (-v)


def configure_logging(level: int = logging.INFO, *, environ: Mapping[str, str] | None = None) -> None:
    """Send log records to stderr, in journald's format when stderr is the journal.

    Journal: `<6>calld.call: message`, no timestamp (journald stamps each entry itself).
    Elsewhere: `2025-01-01 12:00:00,000 INFO calld.call: message`. Safe to call again, e.g. after
    settings change the level: the previous handler is replaced, not duplicated.
    """
    root = logging.getLogger()
    for old in [h for h in root.handlers if isinstance(h, _CalldStderrHandler)]:
        root.removeHandler(old)
    handler = _CalldStderrHandler(sys.stderr)
    if stderr_is_journal(environ):
        handler.setFormatter(_JournalFormatter("%(name)s: %(message)s"))
    else:
        handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    root.addHandler(handler)
    root.setLevel(level)
    # The libraries' own lines per connection and request carry no call id; calld logs each
    # that matters with one (the media socket's open and close, every Telnyx command's failure).
    # Debugging (-v), everything shows.
    for library in QUIET_LIBRARIES:
        logging.getLogger(library).setLevel(logging.WARNING if level > logging.DEBUG else logging.NOTSET)
