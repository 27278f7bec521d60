"""Opt-outs heard that the ledger has not taken yet, kept in the state directory across a restart: the
ledger is the record that matters; this file only bridges an outage (calld.daemon.service)."""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping
from datetime import datetime
from pathlib import Path

from calld.ops.private import write_atomic
from calld.policy.optout import OptOut

log = logging.getLogger("calld.daemon")


def save_held_opt_outs(path: Path, held: Mapping[str, OptOut]) -> None:
    """The held opt-outs on disk, or the file gone when there are none. A failed write is logged, not raised."""
    rows = [{"number": e.number, "said_at": e.said_at.isoformat(), "quote": e.quote, "user_id": e.user_id,
             "run_id": e.run_id} for e in held.values()]
    try:
        if rows:
            write_atomic(path, (json.dumps(rows, indent=2) + "\n").encode())
        else:
            path.unlink(missing_ok=True)
    except OSError as exc:
        log.error("could not write %s: %s", path, exc)


def load_held_opt_outs(path: Path) -> dict[str, OptOut]:
    """The opt-outs a file kept, by number; none when it is absent or cannot be read (logged)."""
    try:
        rows = json.loads(path.read_text())
    except FileNotFoundError:
        return {}
    except (OSError, ValueError) as exc:
        log.error("%s cannot be read (%s); the opt-outs in it may not be in the ledger", path, exc)
        return {}
    return {e["number"]: OptOut(e["number"], datetime.fromisoformat(e["said_at"]), e["quote"], e["user_id"], e["run_id"])
            for e in rows}
