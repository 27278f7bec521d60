"""Housekeeping: remove finished calls' artifact directories older than a number of days.

The ledger keeps every result (`calld-ctl history` and `show` still answer from it); only the
files go. A directory is old by its call's start (call_report.json), else by its mtime. Calls
still running (and their `.pending-*` directories) are never touched.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Collection
from datetime import UTC, datetime, timedelta
from pathlib import Path

from attrs import frozen


@frozen
class Pruned:
    removed: tuple[str, ...]
    freed_bytes: int
    kept: int
    dry_run: bool

    def as_dict(self) -> dict[str, object]:
        return {"removed": list(self.removed), "freed_bytes": self.freed_bytes, "kept": self.kept, "dry_run": self.dry_run}


def _started(run_dir: Path) -> datetime:
    try:
        started = json.loads((run_dir / "call_report.json").read_text(encoding="utf-8"))["started_at"]
        moment = datetime.fromisoformat(started)
        return moment if moment.tzinfo else moment.replace(tzinfo=UTC)
    except (OSError, ValueError, KeyError, TypeError):
        return datetime.fromtimestamp(run_dir.stat().st_mtime, UTC)


def _size(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


def prune_artifacts(artifacts_dir: Path, older_than_days: float, *, now: datetime | None = None,
                    running: Collection[Path] = (), dry_run: bool = False) -> Pruned:
    if not older_than_days >= 0:
        raise ValueError("--older-than must be a number of days, 0 or more")
    cutoff = (now or datetime.now(UTC)) - timedelta(days=older_than_days)
    busy = {p.resolve() for p in running}
    removed, freed, kept = [], 0, 0
    if not artifacts_dir.is_dir():
        return Pruned((), 0, 0, dry_run)
    for run_dir in sorted(artifacts_dir.iterdir()):
        if not run_dir.is_dir() or run_dir.name.startswith(".pending-") or run_dir.resolve() in busy:
            continue
        if not (run_dir / "result.json").exists():
            continue  # not a finished call's directory: not ours to judge
        if _started(run_dir) >= cutoff:
            kept += 1
            continue
        freed += _size(run_dir)
        removed.append(str(run_dir))
        if not dry_run:
            shutil.rmtree(run_dir)
    return Pruned(tuple(removed), freed, kept, dry_run)
