"""What the daemon does once a call's result is out: count it and draw its timeline.

Both come from one reading of the call's artifacts, made by the drawing process
(calld.observe.painter): the calls on the line keep the event loop and the GIL. Only when that
process could not read them (it died, was ended, or sent figures calld cannot read) are they
read here, in a worker thread.
Neither changes a result; a failure here is logged and counted, never raised into the call.
"""

from __future__ import annotations

import logging
from pathlib import Path

import trio

from calld.observe.artifacts import load_run
from calld.observe.figures import CallFigures, call_figures
from calld.observe.metrics import Metrics
from calld.observe.painter import Painter, PictureError
from calld.observe.timeline import TIMELINE_NAME

log = logging.getLogger("calld.observe")


async def after_call(run_dir: Path, metrics: Metrics | None, painter: Painter) -> None:
    figures: CallFigures | None
    try:
        figures, drawn = (await painter.draw_and_read(run_dir, run_dir / TIMELINE_NAME)).figures, True
    except PictureError as exc:
        log.warning("%s timeline not drawn: %s", run_dir.name, exc)
        figures, drawn = exc.figures, False
    if metrics is None:
        return
    if figures is None:
        try:
            figures = call_figures(await trio.to_thread.run_sync(load_run, run_dir))
        except Exception as exc:  # noqa: BLE001 - the artifacts are unreadable: say so, keep serving
            log.warning("%s after-call step failed: %s: %s", run_dir.name, type(exc).__name__, exc)
            return
    metrics.count(figures)
    if not drawn:
        metrics.timeline_failures.inc()
