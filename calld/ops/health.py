"""The ledger's health and the disk's: checked at start, by `calld-ctl ledger`, and by doctor.

A ledger that is missing from a state directory that has been used, empty, truncated or corrupt
is never silently replaced by a fresh one: that would forget every user's number and let an old
request id dial again. The daemon refuses to start instead, saying how to restore.
"""

from __future__ import annotations

import os
import shutil
import sqlite3
from pathlib import Path

from attrs import frozen

from calld.ledger import Ledger
from calld.ops.errors import OperationalError
from calld.ops.private import FILE_MODE

SQLITE_HEADER = b"SQLite format 3\x00"
LOW_SPACE_BYTES = 200 * 1024 * 1024  # a call writes about 2 MB of audio a minute; leave room for many


class LedgerDamaged(OperationalError):
    def __init__(self, path: Path, what: str) -> None:
        super().__init__(
            f"the ledger {path} {what}; calld will not start on it. Restore a backup "
            f"(calld-ctl ledger backup FILE makes one) to {path}, or move the state directory aside to start afresh"
        )
        self.path = path


def _sidecars(path: Path) -> list[Path]:
    return [path, path.with_name(path.name + "-wal"), path.with_name(path.name + "-shm")]


def open_ledger(path: Path | str, *, state_dir_is_new: bool) -> Ledger:
    """The ledger, checked. A missing SQLite file is created (0600) only in a new state directory.
    A postgresql:// URL (Settings.ledger_target) opens the shared ledger on its server, migrating it;
    a server that cannot be reached raises LedgerUnavailable, which names it without its password."""
    if isinstance(path, str):
        return Ledger(path)
    if not path.exists():
        if not state_dir_is_new:
            raise LedgerDamaged(path, "is missing, but its state directory already holds calld's data")
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, FILE_MODE))
    else:
        problems = _problems(path, quick=True)  # before the ledger migrates (writes) anything
        if problems:
            raise LedgerDamaged(path, problems[0])
    try:
        ledger = Ledger(path)
    except sqlite3.DatabaseError as exc:
        raise LedgerDamaged(path, f"cannot be read ({exc})") from None
    for p in _sidecars(path):
        if p.exists():
            os.chmod(p, FILE_MODE)
    return ledger


def _file_problem(path: Path) -> str | None:
    size = path.stat().st_size
    if size == 0:
        return "is empty (0 bytes)"
    with path.open("rb") as f:
        head = f.read(100)
    if len(head) < 100 or not head.startswith(SQLITE_HEADER):
        return "is not a SQLite database (truncated or overwritten)"
    page_size = int.from_bytes(head[16:18], "big")
    page_size = 65536 if page_size == 1 else page_size
    pages = int.from_bytes(head[28:32], "big")
    wal = path.with_name(path.name + "-wal")
    # The header's page count is exact for a checkpointed file; a WAL may hold newer pages.
    if page_size and pages and size < pages * page_size and not (wal.exists() and wal.stat().st_size):
        return f"is truncated ({size} bytes; its header says {pages * page_size})"
    return None


def _check(db: sqlite3.Connection, *, quick: bool) -> list[str]:
    rows = db.execute("PRAGMA quick_check" if quick else "PRAGMA integrity_check").fetchall()
    found = [str(r[0]) for r in rows]
    return [] if found == ["ok"] else found


def ledger_problems(path: Path) -> list[str]:
    """A full integrity check of the ledger file (reads only; safe while the daemon runs).
    Empty when the ledger is sound; otherwise each problem, worded to follow "the ledger is"."""
    if not path.exists():
        return ["is missing"]
    return _problems(path, quick=False)


def _problems(path: Path, *, quick: bool) -> list[str]:
    problem = _file_problem(path)
    if problem is not None:
        return [problem]
    try:
        db = sqlite3.connect(path, timeout=10.0)
    except sqlite3.Error as exc:
        return [f"cannot be opened ({exc})"]
    try:
        found = [f"is corrupt ({p})" for p in _check(db, quick=quick)]
        version = db.execute("PRAGMA user_version").fetchone()[0]
        tables = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        if version:  # a ledger that has been migrated must still have its tables
            found += [f"has lost its {t} table" for t in ("dids", "requests") if t not in tables]
        return found
    except sqlite3.DatabaseError as exc:
        return [f"is corrupt ({exc})"]
    finally:
        db.close()


def backup_ledger(path: Path, dest: Path) -> int:
    """A consistent copy via SQLite's online backup (the daemon may keep writing meanwhile);
    the copy is 0600 and checked. Returns its size in bytes."""
    problems = ledger_problems(path)
    if problems:
        raise OperationalError(f"not backing up the ledger {path}: it {problems[0]}")
    if dest.exists():
        raise OperationalError(f"{dest} already exists; choose a new file for the backup")
    tmp = dest.with_name(f".{dest.name}.partial")
    try:
        os.close(os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, FILE_MODE))
    except OSError as exc:
        raise OperationalError(f"cannot write the backup at {dest} ({exc.strerror or exc}); "
                               "choose a file in a directory you can write") from None
    try:
        src = sqlite3.connect(path, timeout=10.0)
        out = sqlite3.connect(tmp)
        try:
            src.backup(out)
            out.execute("PRAGMA journal_mode=DELETE")  # one self-contained file
        finally:
            out.close()
            src.close()
        os.replace(tmp, dest)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return dest.stat().st_size


@frozen
class DiskSpace:
    path: str
    free_bytes: int
    total_bytes: int

    @property
    def low(self) -> bool:
        return self.free_bytes < LOW_SPACE_BYTES

    def describe(self) -> str:
        return f"{self.free_bytes / 1e6:.0f} MB free of {self.total_bytes / 1e6:.0f} MB on {self.path}"


def disk_space(path: Path) -> DiskSpace:
    usage = shutil.disk_usage(path)
    return DiskSpace(str(path), usage.free, usage.total)
