"""The state directory: made private, checked writable, and held by one daemon at a time.

Two daemons on one ledger would each take the other's calls for stale ones after a restart, so
the second is refused at start, naming the holder (pid and control socket) from the lock file.
The lock is an flock on `calld.lock`: the kernel drops it when its holder dies, kill -9 included.
"""

from __future__ import annotations

import errno
import fcntl
import json
import os
import shutil
import socket
import stat
from pathlib import Path

from attrs import frozen

from calld.ops.errors import OperationalError
from calld.ops.net import loopback_host
from calld.ops.private import DIR_MODE, FILE_MODE

LOCK_NAME = "calld.lock"


@frozen
class PathBefore:
    """What a path was before calld touched it, so a start that fails can leave it that way."""

    path: Path
    names: frozenset[str] | None  # its entries; None: it did not exist
    mode: int | None

    @classmethod
    def look(cls, path: Path) -> PathBefore:
        try:
            return cls(path, frozenset(os.listdir(path)), stat.S_IMODE(os.stat(path).st_mode))
        except OSError:
            return cls(path, None, None)

    def restore(self, *, keep: frozenset[str] = frozenset()) -> None:
        """Remove what was made since (but `keep`) and put the mode back: the whole directory if it
        was not there. For a new state directory, or an existing one whose start this process
        refused while holding its lock (so everything new in it is this start's own)."""
        if self.names is None:
            shutil.rmtree(self.path, ignore_errors=True)
            return
        try:
            for name in set(os.listdir(self.path)) - self.names - keep:
                target = self.path / name
                if target.is_dir() and not target.is_symlink():
                    shutil.rmtree(target, ignore_errors=True)
                else:
                    target.unlink(missing_ok=True)
            if self.mode is not None:
                os.chmod(self.path, self.mode)
        except OSError:
            pass


    def restore_mode(self) -> None:
        """Only the mode back (a start refused before it held the directory: what is in it is not ours)."""
        if self.mode is not None:
            try:
                os.chmod(self.path, self.mode)
            except OSError:
                pass


def prepare_state_dir(state_dir: Path) -> bool:
    """Make the state directory exist, 0700 and writable. True when it is new: it did not exist,
    or held nothing but a lock file (only then may a missing ledger be created)."""
    try:
        new = not state_dir.exists() or all(p.name == LOCK_NAME for p in state_dir.iterdir())
        state_dir.mkdir(parents=True, exist_ok=True, mode=DIR_MODE)
        os.chmod(state_dir, DIR_MODE)
        probe = state_dir / f".write-probe-{os.getpid()}"
        os.close(os.open(probe, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, FILE_MODE))
        probe.unlink()
    except OSError as exc:
        why = "read-only" if exc.errno == errno.EROFS else (exc.strerror or str(exc)).lower()
        raise OperationalError(
            f"the state directory {state_dir} cannot be used ({why}); make it writable by this user "
            "or point CALLD_STATE_DIR (or --state-dir) elsewhere"
        ) from None
    return new


class StateLock:
    """The exclusive right to one state directory, for this process's lifetime."""

    def __init__(self, state_dir: Path, socket_path: Path | str) -> None:
        self.path = state_dir / LOCK_NAME
        self._socket = str(socket_path)
        self._fd: int | None = None

    def acquire(self) -> None:
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, FILE_MODE)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = _holder(fd)
            os.close(fd)
            raise OperationalError(
                f"another calld (pid {holder.get('pid', '?')}, control socket {holder.get('socket', '?')}) "
                f"already uses the state directory {self.path.parent}; stop it first, or give this one "
                "its own CALLD_STATE_DIR"
            ) from None
        os.ftruncate(fd, 0)
        os.pwrite(fd, json.dumps({"pid": os.getpid(), "socket": self._socket}).encode(), 0)
        self._fd = fd

    def release(self) -> None:
        # The file stays: unlinking a lock file lets a third process lock a fresh inode meanwhile.
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None


def _holder(fd: int) -> dict[str, object]:
    try:
        data = json.loads(os.pread(fd, 4096, 0) or b"{}")
        return data if isinstance(data, dict) else {}
    except (OSError, ValueError):
        return {}


def check_socket_dir(directory: Path) -> None:
    """The control socket's directory must be ours (or root's) and not writable by others:
    whoever controls it could put their own socket where calld-ctl looks."""
    st = directory.stat()
    if st.st_uid not in (os.getuid(), 0):
        raise OperationalError(
            f"the control socket's directory {directory} belongs to uid {st.st_uid}, not to this user "
            f"({os.getuid()}); use a directory of your own (CALLD_SOCKET or --socket)"
        )
    if st.st_mode & (stat.S_IWGRP | stat.S_IWOTH) and not st.st_mode & stat.S_ISVTX:
        raise OperationalError(
            f"the control socket's directory {directory} is writable by other users; "
            f"chmod go-w {directory}, or use another directory (CALLD_SOCKET or --socket)"
        )


def claim_socket_path(path: Path) -> Path | None:
    """Make `path` free for a new listener: replace a stale socket, never a live daemon's. Returns
    the outermost directory it had to make for it, if any."""
    made: Path | None = None
    if not path.parent.exists():
        made = path.parent
        while not made.parent.exists():
            made = made.parent
        try:
            path.parent.mkdir(parents=True, mode=DIR_MODE)
        except OSError as exc:
            raise OperationalError(f"cannot create the control socket's directory {path.parent}: {exc.strerror}") from None
    check_socket_dir(path.parent)
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return made
    if not stat.S_ISSOCK(st.st_mode):
        raise OperationalError(f"{path} exists and is not a socket; remove it or choose another --socket")
    probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        probe.connect(str(path))
    except OSError as exc:
        if exc.errno in (errno.ECONNREFUSED, errno.ENOENT):
            path.unlink(missing_ok=True)  # left by a daemon that died
            return made
        raise OperationalError(f"the control socket {path} cannot be checked: {exc.strerror}") from None
    finally:
        probe.close()
    raise OperationalError(f"the control socket {path} is in use: another calld is already serving it; stop it first or use another --socket")


def check_port_free(bind: str, setting: str = "CALLD_BIND", *, given: str | None = None, fix: str | None = None) -> None:
    """Fail with one line naming the port and what the operator typed (`given`, e.g. "--bind 127.0.0.1:8787";
    default "SETTING=bind") and what to change (`fix`, default the setting), before hypercorn tries (and
    raises a group)."""
    given = given or f"{setting}={bind}"
    fix = fix or setting
    host, _, port = bind.rpartition(":")
    host = host.strip("[]")
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    probe = socket.socket(family, socket.SOCK_STREAM)
    try:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as hypercorn binds
        probe.bind((host, int(port)))
    except OSError as exc:
        if exc.errno == errno.EADDRINUSE:
            raise OperationalError(f"port {port} on {host} is already in use ({given}); stop whatever holds it or choose another {fix}") from None
        raise OperationalError(f"cannot listen on {bind} ({given}): {exc.strerror}") from None
    finally:
        probe.close()


def is_loopback(bind: str) -> bool:
    """HOST:PORT on this machine only."""
    return loopback_host(bind.rpartition(":")[0].strip("[]"))
