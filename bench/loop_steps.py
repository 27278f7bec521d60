"""Where the daemon's event loop spends its time, task by task and second by second.

    BENCH_DAEMON_PREFIX=$PWD/bench/loop_steps.py uv run python bench/load.py 100   # a full path: the daemon runs elsewhere
    LOOP_STEPS_OUT=/tmp/steps.txt ...                # where the figures go (default /tmp/loop_steps.txt)

Runs `calld serve` (the arguments after `-m calld.cli.daemon`) with a trio Instrument that times
every task step, and at exit writes: the time each kind of task took in all; the same for each
second since the daemon started (set-up, steady state and wind-down read apart); and the call
loops' steps by what they stepped (the event kinds reduce_step saw in the step, or, for a step
that stepped none, the calld function it stopped in: an HTTP request, a disk trip). Steps are
wall time on the loop's thread, the instrument's own cost (two clock reads a step) included. A
measuring tool for bench/load.py, not part of calld.
"""

from __future__ import annotations

import atexit
import collections
import os
import runpy
import sys
import time
from typing import Any

import trio

OUT = os.environ.get("LOOP_STEPS_OUT", "/tmp/loop_steps.txt")


def _stopped_in(task: trio.lowlevel.Task) -> str:
    """The innermost calld function the task is suspended in."""
    coro: Any = task.coro
    where = "?"
    while coro is not None:
        frame = getattr(coro, "cr_frame", None) or getattr(coro, "gi_frame", None) or getattr(coro, "ag_frame", None)
        if frame is not None and "/calld/" in frame.f_code.co_filename:
            where = frame.f_code.co_qualname
        coro = getattr(coro, "cr_await", None) or getattr(coro, "gi_yieldfrom", None)
    return where


class LoopSteps(trio.abc.Instrument):
    def __init__(self) -> None:
        self.t0 = time.perf_counter()
        self.began = 0.0
        self.total: collections.Counter[str] = collections.Counter()
        self.steps: collections.Counter[str] = collections.Counter()
        self.by_second: collections.Counter[tuple[int, str]] = collections.Counter()
        self.by_kind: collections.Counter[str] = collections.Counter()
        self.kinds_now: list[str] = []  # what reduce_step saw during the step under way

    def before_task_step(self, task: trio.lowlevel.Task) -> None:
        self.began = time.perf_counter()

    def after_task_step(self, task: trio.lowlevel.Task) -> None:
        took = time.perf_counter() - self.began
        name = task.name.rsplit(".", 1)[-1]
        self.total[name] += took
        self.steps[name] += 1
        self.by_second[(int(self.began - self.t0), name)] += took
        if name == "call_task":  # a call's loop: by what it stepped
            kinds = self.kinds_now or [f"(no event) {_stopped_in(task)}"]
            for kind in kinds:
                self.by_kind[kind] += took / len(kinds)
        self.kinds_now.clear()

    def write(self) -> None:
        with open(OUT, "w") as f:
            print("task: ms in all, steps", file=f)
            for name, s in self.total.most_common(25):
                print(f"{s * 1000:10.1f} {self.steps[name]:9d} {name}", file=f)
            print("\ncall loops by what they stepped: ms", file=f)
            for kind, s in self.by_kind.most_common(40):
                print(f"{s * 1000:10.1f} {kind}", file=f)
            names = [n for n, _ in self.total.most_common(6)]
            print("\nby second since start: ms of each task\nsec " + " ".join(f"{n[:14]:>14}" for n in names), file=f)
            for sec in sorted({s for s, _ in self.by_second}):
                print(f"{sec:3d} " + " ".join(f"{self.by_second[(sec, n)] * 1000:14.0f}" for n in names), file=f)


def main() -> None:
    steps = LoopSteps()
    import calld.runtime.handle as handle

    reduce_step = handle.reduce_step

    def seen(call: Any, event: Any) -> Any:
        steps.kinds_now.append(event.kind)
        return reduce_step(call, event)

    handle.reduce_step = seen  # the call loop's one reducer entry: the kinds a step stepped
    real_run = trio.run

    def run(*args: Any, **kwargs: Any) -> Any:
        kwargs["instruments"] = [*kwargs.get("instruments", ()), steps]
        return real_run(*args, **kwargs)

    trio.run = run  # type: ignore[assignment]
    atexit.register(steps.write)
    argv = sys.argv[1:]
    if argv[:2] == ["-m", "calld.cli.daemon"]:
        argv = argv[2:]
    sys.argv = ["calld", *argv]
    runpy.run_module("calld.cli.daemon", run_name="__main__")


if __name__ == "__main__":
    main()
