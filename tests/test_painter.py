"""The daemon's pictures are drawn by a child process: it draws, survives bad requests, is
replaced when it dies or overruns its wall-clock bound, and leaves nothing behind on close."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import trio
import trio.testing

from calld.observe import aftercall
from calld.observe.aftercall import after_call
from calld.observe.artifacts import load_run
from calld.observe.figures import call_figures
from calld.observe.metrics import Metrics
from calld.observe.painter import Painter, PictureError
from synthetic_artifacts import five_minute_call_with_hold


async def test_the_child_draws_a_private_picture_whatever_the_umask(tmp_path: Path) -> None:
    run_dir = five_minute_call_with_hold(tmp_path)
    painter = Painter()
    old = os.umask(0o022)
    try:
        out = await painter.draw(run_dir, run_dir / "timeline.svg")
        png = await painter.draw(run_dir, tmp_path / "picture.png")
    finally:
        os.umask(old)
        child = painter._proc  # noqa: SLF001
        await painter.aclose()
    assert child is not None and child.pid != os.getpid()
    assert out.read_bytes().startswith(b"<?xml") and b"speech/business/" in out.read_bytes()
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert oct(out.stat().st_mode & 0o777) == oct(0o600)
    assert child.returncode is not None, "the drawing process outlived aclose()"


@pytest.mark.skipif(not hasattr(os, "SCHED_IDLE"), reason="Linux's scheduling classes")
async def test_the_child_draws_only_when_the_core_has_nothing_else_to_do(tmp_path: Path) -> None:
    run_dir = five_minute_call_with_hold(tmp_path)
    painter = Painter()
    try:
        await painter.draw(run_dir, run_dir / "timeline.svg")  # the reply: the child is past its set-up
        child = painter._proc  # noqa: SLF001
        assert child is not None
        assert os.sched_getscheduler(child.pid) == os.SCHED_IDLE
        assert os.getpriority(os.PRIO_PROCESS, child.pid) >= os.getpriority(os.PRIO_PROCESS, 0)
    finally:
        await painter.aclose()


async def test_a_bad_request_is_a_clear_error_and_the_child_stays_up(tmp_path: Path) -> None:
    painter = Painter()
    try:
        with pytest.raises(PictureError, match="ArtifactsMissing|report"):
            await painter.draw(tmp_path / "no-such-call", tmp_path / "x.svg")
        first = painter._proc  # noqa: SLF001
        run_dir = five_minute_call_with_hold(tmp_path)
        await painter.draw(run_dir, run_dir / "timeline.svg")
        assert painter._proc is first  # noqa: SLF001
    finally:
        await painter.aclose()


async def test_a_dead_child_is_replaced_on_the_next_picture(tmp_path: Path) -> None:
    run_dir = five_minute_call_with_hold(tmp_path)
    painter = Painter()
    try:
        await painter.draw(run_dir, run_dir / "timeline.svg")
        first = painter._proc  # noqa: SLF001
        assert first is not None
        first.kill()
        await first.wait()
        (run_dir / "timeline.svg").unlink()
        await painter.draw(run_dir, run_dir / "timeline.svg")
        assert painter._proc is not first and (run_dir / "timeline.svg").exists()  # noqa: SLF001
    finally:
        await painter.aclose()


async def test_a_picture_over_its_cpu_bound_ends_the_child_and_says_so(tmp_path: Path) -> None:
    run_dir = five_minute_call_with_hold(tmp_path)
    painter = Painter(bound_s=0.001)  # far less CPU than any drawing
    try:
        with pytest.raises(PictureError, match="more than 0.001 s of CPU"):
            await painter.draw(run_dir, run_dir / "timeline.svg")
        assert painter._proc is None  # noqa: SLF001 - the next picture starts a fresh child
    finally:
        await painter.aclose()


async def test_a_picture_over_its_wall_clock_bound_ends_the_child_and_says_so(tmp_path: Path) -> None:
    run_dir = five_minute_call_with_hold(tmp_path)
    painter = Painter(wall_bound_s=0.001)  # far shorter than any drawing, however much CPU it may use
    try:
        with pytest.raises(PictureError, match="longer than 0.001 s"):
            await painter.draw(run_dir, run_dir / "timeline.svg")
        assert painter._proc is None  # noqa: SLF001
    finally:
        await painter.aclose()


async def test_a_failed_picture_leaves_no_bound_armed_in_the_child(tmp_path: Path) -> None:
    # The bounds are the child's own OS timers (no virtual clock reaches another process): a short
    # real wait, five bounds long, is what shows whether one is still armed.
    painter = Painter(bound_s=0.05, wall_bound_s=0.05)
    try:
        with pytest.raises(PictureError, match="ArtifactsMissing|report"):
            await painter.draw(tmp_path / "no-such-call", tmp_path / "x.svg")
        child = painter._proc  # noqa: SLF001
        assert child is not None
        with trio.move_on_after(0.25):
            await child.wait()
        assert child.returncode is None, f"the idle child was ended ({child.returncode})"
    finally:
        await painter.aclose()


async def test_a_closed_painter_draws_nothing_more(tmp_path: Path) -> None:
    painter = Painter()
    await painter.aclose()
    with pytest.raises(PictureError, match="shutting down"):
        await painter.draw(tmp_path, tmp_path / "x.svg")
    assert painter._proc is None  # noqa: SLF001


async def test_a_request_cancelled_midway_does_not_leave_the_pipe_out_of_step(tmp_path: Path) -> None:
    run_dir = five_minute_call_with_hold(tmp_path)
    painter = Painter()
    try:
        await painter.draw(run_dir, tmp_path / "warm.svg")  # the child is up: the next request goes out at once
        async with trio.open_nursery() as nursery:
            nursery.start_soon(painter.draw, run_dir, tmp_path / "first.svg")
            await trio.testing.wait_all_tasks_blocked()  # the request is out; its reply is awaited
            nursery.cancel_scope.cancel()
        out = await painter.draw(run_dir, tmp_path / "second.svg")
        assert out == tmp_path / "second.svg"  # the reply is this request's, not the cancelled one's
    finally:
        await painter.aclose()


async def test_the_child_reads_the_calls_figures_as_the_daemon_would(tmp_path: Path) -> None:
    run_dir = five_minute_call_with_hold(tmp_path)
    painter = Painter()
    try:
        drawn = await painter.draw_and_read(run_dir, run_dir / "timeline.svg")
        # A picture that cannot be written: the figures are read all the same, and come with the error.
        (tmp_path / "a-file").write_text("")
        with pytest.raises(PictureError) as failed:
            await painter.draw_and_read(run_dir, tmp_path / "a-file" / "timeline.svg")
        with pytest.raises(PictureError) as unreadable:
            await painter.draw_and_read(tmp_path / "no-such-call", tmp_path / "x.svg")
    finally:
        await painter.aclose()
    assert drawn.picture == run_dir / "timeline.svg" and drawn.picture.exists()
    expected = call_figures(load_run(run_dir))
    assert drawn.figures == expected
    assert (expected.seconds, expected.tool_refusals, expected.hangup_path) == (297.0, 1, "tool")
    assert failed.value.figures == expected
    assert unreadable.value.figures is None


@pytest.fixture
def read_here(monkeypatch) -> list[Path]:
    """The run directories the daemon reads itself after a call (not the drawing process)."""
    read: list[Path] = []

    def load_run_in_the_daemon(path: Path):
        read.append(path)
        return load_run(path)

    monkeypatch.setattr(aftercall, "load_run", load_run_in_the_daemon)
    return read


async def test_after_a_call_the_daemon_counts_it_without_reading_its_artifacts_itself(tmp_path: Path, read_here) -> None:
    run_dir = five_minute_call_with_hold(tmp_path)
    metrics = Metrics(max_calls=1, in_flight=lambda: 0)
    painter = Painter()
    try:
        await after_call(run_dir, metrics, painter)
        assert read_here == []  # the drawing process read them, once, for the picture and the figures
        assert (run_dir / "timeline.svg").exists()
        # The drawing process is gone for good: the daemon reads the artifacts itself, in a thread.
        await painter.aclose()
        await after_call(run_dir, metrics, painter)
        assert read_here == [run_dir]
    finally:
        await painter.aclose()
    counted = {s.name: s.value for fam in metrics.registry.collect() for s in fam.samples}
    assert counted["calld_call_seconds_total"] == 2 * 297.0
    assert counted["calld_tool_record_refusals_total"] == 2
    assert counted["calld_timeline_failures_total"] == 1


@pytest.mark.parametrize("garbled", [{"seconds": "a while"}, None], ids=["unreadable", "missing"])
async def test_figures_the_daemon_cannot_read_are_read_again_and_the_picture_stands(
        tmp_path: Path, monkeypatch, caplog, read_here, garbled) -> None:
    run_dir = five_minute_call_with_hold(tmp_path)
    metrics = Metrics(max_calls=1, in_flight=lambda: 0)
    painter = Painter()
    real_ask = painter._ask  # noqa: SLF001 - the real child draws; only its figures are spoiled

    async def ask_and_garble(run_dir: Path, out: Path, *, figures: bool):
        reply = await real_ask(run_dir, out, figures=figures)
        reply.pop("figures")
        if garbled is not None:
            reply["figures"] = garbled  # another version of the child, or a bug in it
        return reply

    monkeypatch.setattr(painter, "_ask", ask_and_garble)
    try:
        await after_call(run_dir, metrics, painter)
    finally:
        await painter.aclose()
    assert (run_dir / "timeline.svg").exists()
    assert read_here == [run_dir]  # counted from the daemon's own reading
    counted = {s.name: s.value for fam in metrics.registry.collect() for s in fam.samples}
    assert counted["calld_call_seconds_total"] == 297.0
    assert counted["calld_timeline_failures_total"] == 0  # the picture was drawn
    said = [r.getMessage() for r in caplog.records if r.name == "calld.observe"]
    assert any(run_dir.name in m and "figures" in m for m in said), said


@pytest.mark.skipif(not hasattr(os, "sched_setaffinity") or (os.cpu_count() or 1) < 2, reason="needs two cores")
async def test_the_child_draws_off_the_daemons_core_when_the_daemon_is_pinned(tmp_path: Path) -> None:
    run_dir = five_minute_call_with_hold(tmp_path)
    saved = os.sched_getaffinity(0)
    os.sched_setaffinity(0, {0})  # pinned like a calld@N.service with CPUAffinity=0
    painter = Painter()
    try:
        await painter.draw(run_dir, run_dir / "timeline.svg")
        child = painter._proc  # noqa: SLF001
        assert child is not None
        assert os.sched_getaffinity(child.pid) == set(range(os.cpu_count() or 1)) - {0}
    finally:
        os.sched_setaffinity(0, saved)
        await painter.aclose()
