"""What the daemon does once a call's result is out: count it and draw its timeline.

The journal is read in a worker thread and the picture drawn by the drawing process
(calld.observe.painter): the calls on the line keep the event loop and the GIL. Neither
changes a result; a failure here is logged and counted, never raised into the call.
"""

from __future__ import annotations

import logging
from pathlib import Path

import trio

from calld.observe.artifacts import load_run
from calld.observe.metrics import Metrics
from calld.observe.painter import Painter, PictureError
from calld.observe.timeline import TIMELINE_NAME

log = logging.getLogger("calld.observe")


async def after_call(run_dir: Path, metrics: Metrics | None, painter: Painter) -> None:
    try:
        run = await trio.to_thread.run_sync(load_run, run_dir)
    except Exception as exc:  # noqa: BLE001 - the artifacts are unreadable: say so, keep serving
        log.warning("%s after-call step failed: %s: %s", run_dir.name, type(exc).__name__, exc)
        return
    drawn = True
    try:
        await painter.draw(run_dir, run_dir / TIMELINE_NAME)
    except PictureError as exc:
        log.warning("%s timeline not drawn: %s", run_dir.name, exc)
        drawn = False
    if metrics is not None:
        metrics.observe(run)
        if not drawn:
            metrics.timeline_failures.inc()
