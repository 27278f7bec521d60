"""The daemon's pictures are drawn by a child process: it draws, survives bad requests, is
replaced when it dies or overruns its wall-clock bound, and leaves nothing behind on close."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import trio
import trio.testing

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


async def test_a_picture_over_its_wall_clock_bound_ends_the_child_and_says_so(tmp_path: Path) -> None:
    run_dir = five_minute_call_with_hold(tmp_path)
    painter = Painter(bound_s=0.001)  # far shorter than any drawing
    try:
        with pytest.raises(PictureError, match="longer than"):
            await painter.draw(run_dir, run_dir / "timeline.svg")
        assert painter._proc is None  # noqa: SLF001 - the next picture starts a fresh child
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
