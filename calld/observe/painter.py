"""The call's picture is drawn in a child process, never in the daemon.

matplotlib holds the GIL for the whole of a drawing (0.3 s of CPU for a short call, and
~2 s to import). In a worker thread that is time the audio path waits for the GIL on
every frame; in its own process it is not. One long-lived child (`python -m
calld.observe.painter`) imports matplotlib once and draws one picture at a time, niced
below the calls and, where Linux lets it, in the idle scheduling class. The daemon starts it
on first use and restarts it if it dies. A picture that uses more than `bound_s` of the child's
own CPU ends the child (SIGPROF's default action), and so does one that takes longer than
`wall_bound_s` on the wall clock (SIGALRM's: a wedged C call in a library cannot outlast it, and
a test's virtual clock cannot cut it short); the parent then sees end of file and says so. The
wall bound is the longer one: an idle-class child waits for a free core, for as long as other
processes keep both busy, and that wait is not the picture's fault.

The child also reads what `/metrics` counts of the call (calld.observe.figures) when asked: it
reads the artifacts to draw them anyway, and in the daemon that reading is GIL time the calls
on the line would wait out.

Wire: one JSON line per request on the child's stdin, `{"run_dir": ..., "out": ..., "figures": bool}`;
one JSON line per reply on its stdout, `{"ok": out}` or `{"error": "what went wrong"}`, with
`"figures": {...}` beside either when they were asked for and the artifacts could be read.
"""

from __future__ import annotations

import json
import logging
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import cattrs
import trio
import trio.testing
from attrs import frozen

from calld.observe.figures import CallFigures
from calld.ops.cores import cores_besides, move_to

log = logging.getLogger("calld.observe")

DRAW_BOUND_S = 60.0  # CPU for one picture; a 5-minute call with a hold draws in well under 2 s
DRAW_WALL_BOUND_S = 120.0  # one picture on the wall clock, a wait for a free core included
NICENESS = 10  # the calls on the line come first


class PictureError(Exception):
    """The picture was not drawn; the message says why. `figures`: the call's, when they were
    asked for and the child could read the artifacts all the same."""

    def __init__(self, message: str, figures: CallFigures | None = None) -> None:
        super().__init__(message)
        self.figures = figures


@frozen
class Drawn:
    """A drawn picture, and the call's figures: None when the child sent none calld can read
    (the caller then reads the artifacts itself; the picture stands all the same)."""

    picture: Path
    figures: CallFigures | None


class Painter:
    def __init__(self, *, cache_dir: Path | None = None, bound_s: float = DRAW_BOUND_S,
                 wall_bound_s: float = DRAW_WALL_BOUND_S) -> None:
        self._cache_dir = cache_dir
        self._bound_s = bound_s
        self._wall_bound_s = wall_bound_s
        self._proc: trio.Process | None = None
        self._buffer = b""
        self._lock = trio.Lock()  # one request on the pipe at a time
        self._closed = False

    async def draw(self, run_dir: Path, out: Path) -> Path:
        """Draw the call in `run_dir` to `out` (.svg or .png). Raises PictureError."""
        reply = await self._ask(run_dir, out, figures=False)
        return Path(reply["ok"])

    async def draw_and_read(self, run_dir: Path, out: Path) -> Drawn:
        """Draw the call, and read its figures for `/metrics` in the same pass over its artifacts."""
        reply = await self._ask(run_dir, out, figures=True)
        return Drawn(Path(reply["ok"]), _figures(reply, run_dir))

    async def _ask(self, run_dir: Path, out: Path, *, figures: bool) -> dict[str, Any]:
        async with self._lock:
            request = json.dumps({"run_dir": str(run_dir), "out": str(out), "figures": figures}).encode() + b"\n"
            reply: dict[str, Any] | None = None
            try:
                proc = await self._started()
                assert proc.stdin is not None
                await proc.stdin.send_all(request)
                reply = json.loads(await self._reply_line(proc))
            except (OSError, trio.BrokenResourceError, trio.ClosedResourceError, EOFError, ValueError) as exc:
                raise PictureError(f"the drawing process failed: {exc}") from exc
            finally:
                if reply is None:  # failed or cancelled mid-request: the pipe is out of step
                    await self._stop(kill=True)
            if not isinstance(reply, dict) or not ("ok" in reply or "error" in reply):
                raise PictureError(f"the drawing process replied {reply!r}")
            if "error" in reply:
                raise PictureError(str(reply["error"]), _figures(reply, run_dir))
            return reply

    async def aclose(self, *, kill: bool = False) -> None:
        """No more pictures. `kill`: at once, a picture (or the start-up) under way dropped; else the
        child is let finish what it is drawing, for a few seconds."""
        self._closed = True
        await self._stop(kill=kill)

    def font_cache_missing(self) -> bool:
        """matplotlib has no font cache where the child will look: its first start builds one (seconds
        to minutes, by how many fonts the machine has)."""
        where = os.environ.get("MPLCONFIGDIR") or self._cache_dir
        return where is not None and not any(Path(where).glob("fontlist-v*.json"))

    async def warm_up(self) -> bool:
        """Start the child now if matplotlib's font cache is still to be built (the child imports
        matplotlib, which builds it, before it reads a request): at the daemon's first start, in
        the idle class beside it, not before the first picture, which a shutdown may not wait for.
        True when a child was started."""
        if not self.font_cache_missing():
            return False
        async with self._lock:
            try:
                await self._started()
            except OSError as exc:
                log.warning("the drawing process could not start: %s", exc)
                return False
        log.info("matplotlib's font cache is being built by the drawing process")
        return True

    async def _started(self) -> trio.Process:
        if self._closed:
            raise OSError("calld is shutting down; pictures are drawn again after it restarts")
        if self._proc is not None and self._proc.returncode is None:
            return self._proc
        env = dict(os.environ)
        if self._cache_dir is not None and "MPLCONFIGDIR" not in env:
            env["MPLCONFIGDIR"] = str(self._cache_dir)  # matplotlib's font cache, private to calld
        self._buffer = b""
        self._proc = await trio.lowlevel.open_process(
            [sys.executable, "-m", "calld.observe.painter", str(self._bound_s), str(self._wall_bound_s)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env)
        return self._proc

    async def _reply_line(self, proc: trio.Process) -> bytes:
        assert proc.stdout is not None
        while b"\n" not in self._buffer:
            chunk = await proc.stdout.receive_some(65536)
            if not chunk:
                code = await proc.wait()
                if code == -signal.SIGPROF:
                    raise EOFError(f"a picture used more than {self._bound_s:g} s of CPU; the drawing process was ended")
                if code == -signal.SIGALRM:
                    raise EOFError(f"a picture took longer than {self._wall_bound_s:g} s; the drawing process was ended")
                raise EOFError(f"the drawing process exited with code {code}")
            self._buffer += chunk
        line, _, self._buffer = self._buffer.partition(b"\n")
        return line

    async def _stop(self, *, kill: bool) -> None:
        proc, self._proc = self._proc, None
        if proc is None:
            return
        with trio.CancelScope(shield=True):
            if not kill and proc.stdin is not None:
                with trio.move_on_after(5):
                    await proc.stdin.aclose()  # end of input: the child exits on its own
                    await proc.wait()
            if proc.returncode is None:
                proc.kill()
                await proc.wait()
            for pipe in (proc.stdin, proc.stdout):
                if pipe is not None:
                    await pipe.aclose()


def unhurried_clock() -> None:
    """Before a `--fast` demo waits for its pictures: the virtual clock jumps only after 10 ms idle.

    The pictures are drawn by this module's child process, on the wall clock. A clock that jumps
    at once has nothing to jump to then and polls without pause, taking a core from the child,
    which runs only on an idle one: on a busy machine it would wait out its wall-clock bound."""
    clock = trio.lowlevel.current_clock()
    if isinstance(clock, trio.testing.MockClock):
        clock.autojump_threshold = max(clock.autojump_threshold, 0.01)


def serve(bound_s: float, wall_bound_s: float) -> None:
    """The child's loop: draw what is asked, say how it went, until stdin ends."""
    os.umask(0o077)  # the picture holds the call's words: private like every artifact
    try:
        os.nice(NICENESS)
    except OSError:
        pass
    try:
        # Below niceness too: the child shares the daemon's core (it inherits the affinity), and a
        # niced process still takes slices from a busy loop, 5-30 ms at a time, that every call's
        # audio waits out. An idle-class process runs only when the core has nothing else to do.
        os.sched_setscheduler(0, os.SCHED_IDLE, os.sched_param(0))
    except (AttributeError, OSError):  # not Linux, or not allowed: niceness is what remains
        pass
    _leave_the_daemons_cores()
    replies = os.fdopen(os.dup(1), "w", buffering=1)
    os.dup2(2, 1)  # a stray print from a library goes to stderr, never into a reply
    from calld.observe.artifacts import load_run
    from calld.observe.figures import call_figures
    from calld.observe.timeline import build_timeline, draw  # imports matplotlib once, here

    for line in sys.stdin:
        reply: dict[str, Any] = {}
        try:
            request = json.loads(line)
            # Both default actions end this process.
            signal.setitimer(signal.ITIMER_PROF, bound_s)
            signal.setitimer(signal.ITIMER_REAL, wall_bound_s)
            run = load_run(Path(request["run_dir"]))
            if request.get("figures"):
                reply["figures"] = cattrs.unstructure(call_figures(run))
            reply["ok"] = str(draw(build_timeline(run), Path(request["out"])))
        except Exception as exc:  # noqa: BLE001 - every failure is a reply; the child stays up
            reply["error"] = f"{type(exc).__name__}: {exc}"
        finally:
            signal.setitimer(signal.ITIMER_PROF, 0)
            signal.setitimer(signal.ITIMER_REAL, 0)
        replies.write(json.dumps(reply) + "\n")


def _leave_the_daemons_cores() -> None:
    """Draw on any core but the daemon's own, when it is pinned to some (CPUAffinity) and others exist.

    Even in the idle class, a child on the daemon's core took it for a scheduler tick at a time
    (about 4 ms on this VM, where the wake-up that should end it comes late): in the last seconds
    of bench/load.py 100, 42-48 steps of the event loop stalled 3 ms or more while pictures were
    drawn, 4-9 with no pictures. On another core it runs when that core is idle."""
    if others := cores_besides(os.getppid()):  # the daemon's main thread: the event loop's cores
        move_to(others)


def _figures(reply: dict[str, Any], run_dir: Path) -> CallFigures | None:
    """The figures in a reply, or None when it has none calld can read (said in the log): a
    reply from another version of the child must not cost the call its count, or its picture."""
    raw = reply.get("figures")
    if raw is None:
        if "ok" in reply and "error" not in reply:
            log.warning("%s the drawing process sent no figures", run_dir.name)
        return None
    try:
        return cattrs.structure(raw, CallFigures)
    except (cattrs.BaseValidationError, TypeError, ValueError) as exc:
        log.warning("%s the drawing process sent figures calld cannot read: %s", run_dir.name, exc)
        return None


if __name__ == "__main__":
    serve(float(sys.argv[1]) if len(sys.argv) > 1 else DRAW_BOUND_S,
          float(sys.argv[2]) if len(sys.argv) > 2 else DRAW_WALL_BOUND_S)
