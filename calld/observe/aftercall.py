"""What the daemon does once a call's result is out: count it and draw its timeline.

Both read the finished artifacts in a worker thread (reading the journal and drawing take
CPU that the calls on the line need on the event loop); neither changes a result. A
failure here is logged and counted, never raised into the call.
"""

from __future__ import annotations

import logging
from pathlib import Path

import trio

from calld.observe.artifacts import RunArtifacts, load_run
from calld.observe.metrics import Metrics
from calld.observe.timeline import TIMELINE_NAME, build_timeline, draw

log = logging.getLogger("calld.observe")


def _read_and_draw(run_dir: Path) -> tuple[RunArtifacts, bool]:
    run = load_run(run_dir)
    try:
        draw(build_timeline(run), run_dir / TIMELINE_NAME)
    except Exception as exc:  # noqa: BLE001 - a picture must never cost the call or the daemon
        log.warning("%s timeline not drawn: %s: %s", run_dir.name, type(exc).__name__, exc)
        return run, False
    return run, True


async def after_call(run_dir: Path, metrics: Metrics | None) -> None:
    try:
        run, drawn = await trio.to_thread.run_sync(_read_and_draw, run_dir)
    except Exception as exc:  # noqa: BLE001 - the artifacts are unreadable: say so, keep serving
        log.warning("%s after-call step failed: %s: %s", run_dir.name, type(exc).__name__, exc)
        return
    if metrics is not None:
        metrics.observe(run)
        if not drawn:
            metrics.timeline_failures.inc()
