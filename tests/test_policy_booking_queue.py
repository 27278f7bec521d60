"""A booking queued for later must be phoned before the table's own time: a call placed at or after it
could only book the past. Refused when asked (one line, nothing written or queued), not queued to be
refused when due. The daemon's policy clock is fixed at night in New York (autojump clock)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from calld.cli.client import ControlClient, ControlError
from calld.daemon.service import Daemon
from calld.policy.clock import trio_clock
from daemons import daemon_settings, stop

NY = "+12125550142"  # a New York number in the fiction exchange 555-01xx: it rings no one
# Wednesday 2026-06-10, 07:00 UTC: 03:00 in New York, the calling window (08:00-21:00) closed.
NIGHT = datetime(2026, 6, 10, 7, 0, tzinfo=UTC)
BOOK = {"to": NY, "name": "Nathan", "party": 2, "user": "alice"}


@pytest.fixture
async def client(tmp_path, nursery):
    daemon: Daemon = await nursery.start(Daemon(daemon_settings(tmp_path), clock=trio_clock(NIGHT)).serve)
    async with ControlClient(daemon.settings.calld_socket) as c:
        await c.provision("alice")
        yield c
    await stop(daemon)


async def refused(client: ControlClient, body: dict) -> str:
    with pytest.raises(ControlError) as exc:
        async for _ in client.book(body):
            pass
    assert exc.value.status == 403 and "\n" not in exc.value.message
    return exc.value.message


async def test_a_booking_queued_for_after_its_own_time_is_refused_when_asked(client, dials, autojump_clock):
    message = await refused(client, {**BOOK, "time": "Thursday 7pm", "at": "Friday 10am"})
    assert "Friday 10am" in message and "Thursday 7pm" in message and "before" in message
    message = await refused(client, {**BOOK, "time": "Thursday 7pm", "at": "Thursday 7pm"})
    assert "before" in message
    assert await client.queue(include_done=True) == [] and dials == []


async def test_a_booking_whose_window_opens_after_its_time_is_not_queued_until_then(client, dials, autojump_clock):
    message = await refused(client, {**BOOK, "time": "Wednesday 7:30am", "when_open": True})
    assert "08:00" in message and "Wednesday 7:30am" in message
    assert await client.queue(include_done=True) == [] and dials == []


async def test_a_booking_queued_before_its_time_is_queued(client, dials, autojump_clock):
    items = [item async for item in client.book({**BOOK, "time": "Thursday 7pm", "at": "Thursday 10am"})]
    assert items[-1]["queued"]["status"] == "queued" and items[-1]["queued"]["due_at"] == "2026-06-11T14:00:00+00:00"
    items = [item async for item in client.book({**BOOK, "time": "Wednesday 8pm", "when_open": True})]
    assert items[-1]["queued"]["status"] == "queued" and items[-1]["queued"]["due_at"] == "2026-06-10T12:00:00+00:00"
