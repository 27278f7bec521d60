"""The policy's clock: wall time in the daemon, injectable everywhere (tests never read the wall)."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta

import trio

Clock = Callable[[], datetime]


def wall_clock() -> datetime:
    return datetime.now(UTC)


def trio_clock(start: datetime) -> Clock:
    """A clock that starts at `start` and moves with trio's clock (the autojump clock in tests)."""
    origin = trio.current_time()
    return lambda: start + timedelta(seconds=trio.current_time() - origin)
