"""Every test has a time limit (pytest-timeout, configured in pyproject.toml): a regression that makes a
test hang, at full CPU or waiting forever, fails that test with its stack instead of stalling CI until
someone kills it (as a second daemon on a locked state dir once did, with the lock removed)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent

HANGING = '''
import trio


async def test_a_busy_loop_inside_trio():
    while True:  # never yields: no trio timeout can end it
        pass


def test_a_wait_that_never_ends():
    import threading

    threading.Event().wait()


def test_a_quick_one():
    assert True
'''


def test_the_default_limit_is_set_well_above_the_slowest_test(request):
    assert float(request.config.getini("timeout")) >= 600


def test_a_hanging_test_fails_at_its_limit_and_the_run_goes_on(tmp_path):
    (tmp_path / "test_hanging.py").write_text(HANGING)
    # The project's own settings (trio mode, warnings as errors), with the limit cut to 2 s.
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-c", str(REPO / "pyproject.toml"), "--rootdir", str(tmp_path),
         "-p", "no:cacheprovider", "-o", "timeout=2", str(tmp_path / "test_hanging.py")],
        cwd=tmp_path, capture_output=True, text=True, timeout=120,
    )
    out = done.stdout + done.stderr
    assert done.returncode == 1, out
    assert "2 failed, 1 passed" in out, out
    for name in ("test_a_busy_loop_inside_trio", "test_a_wait_that_never_ends"):
        assert f"FAILED test_hanging.py::{name} - " in out and "Timeout (>2.0s) from pytest-timeout" in out, out


@pytest.mark.timeout(1)
def test_a_marker_sets_a_tests_own_limit(request):
    assert request.node.get_closest_marker("timeout").args == (1,)
