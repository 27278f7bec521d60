"""A request by text that the policy refuses: the person is told which rule and what to do, in plain
words (no flags, no setting names), and nothing is written or dialled. Stub daemon, the fake Linq
posting signed webhooks to the real route, the policy clock fixed at night in New York (autojump)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from calld.cli.client import ControlClient
from calld.daemon.service import Daemon
from calld.messaging import replies
from calld.policy.clock import trio_clock
from daemons import daemon_settings, stop

ALICE = "+15555550177"
# Wednesday 2026-06-10, 07:00 UTC: 03:00 in New York, outside the calling window.
NIGHT = datetime(2026, 6, 10, 7, 0, tzinfo=UTC)
LEAKS = ("--", "CALLD_", "calld-ctl", "UTC")


@pytest.fixture
async def daemon(tmp_path, nursery):
    settings = daemon_settings(tmp_path, open_limits=False, calld_calls_per_number_per_day=1)
    d: Daemon = await nursery.start(Daemon(settings, clock=trio_clock(NIGHT)).serve)
    async with ControlClient(settings.calld_socket) as c:
        await c.provision("alice")
        await c.messaging_link(ALICE, "alice", "Nathan")
    yield d
    await stop(d)


async def reply_to(daemon: Daemon, text: str) -> str:
    before = len(daemon.messaging.fake.replies_to(ALICE))
    await daemon.messaging.fake.text(ALICE, text)
    await daemon.messaging.wait_idle()
    got = daemon.messaging.fake.replies_to(ALICE)[before:]
    assert len(got) == 1, got
    assert got[0] != replies.INVALID and not any(leak in got[0] for leak in LEAKS), got[0]
    return got[0]


def dialled(daemon: Daemon) -> int:
    return len([r for r in daemon._ledger.sync.requests(100) if r.call_control_id is not None])


async def test_outside_the_calling_window_the_texter_is_told_their_local_time_and_when_it_opens(daemon, dials, autojump_clock):
    said = await reply_to(daemon, "hours +1 212 555 0142")
    assert "03:00" in said and "08:00" in said and "Wed" in said, said
    assert dials == [] and daemon._ledger.sync.requests(10) == []


async def test_a_booking_time_that_is_past_or_unclear_says_what_to_change(daemon, dials, autojump_clock):
    past = await reply_to(daemon, "book a table for 2 today 2am at +1 555 555 0142")
    assert "in the past" in past, past
    unclear = await reply_to(daemon, "book a table for 2 at 19:00 at +1 555 555 0142")
    assert "day" in unclear and "Friday 7pm" in unclear, unclear
    assert dials == [] and daemon._ledger.sync.requests(10) == []


async def test_a_number_called_enough_today_and_an_opted_out_number_are_named_as_such(daemon, dials, autojump_clock):
    daemon._ledger.sync.add_opt_out("+15555550143", said_at=NIGHT, quote="Please stop calling us.", user_id="alice", run_id="run_" + "0" * 20)
    opted = await reply_to(daemon, "hours +1 555 555 0143")
    assert "asked not to be called" in opted, opted
    await daemon.messaging.fake.text(ALICE, "hours +1 555 555 0142")  # the one call this number gets today
    await daemon.messaging.wait_idle()
    assert dialled(daemon) == 1
    again = await reply_to(daemon, "hours +1 555 555 0142")
    assert "already been called" in again and "tomorrow" in again, again
    assert dialled(daemon) == 1


async def test_a_number_outside_north_america_is_named_as_such(daemon, dials, autojump_clock):
    said = await reply_to(daemon, "hours +44 20 7946 0958")
    assert "+1" in said and "+442079460958" in said, said
    assert dials == [] and daemon._ledger.sync.requests(10) == []



async def test_a_follow_up_goes_through_the_same_gates_as_the_request_it_follows(daemon, dials, autojump_clock):
    first = await reply_to(daemon, "hours +1 212 555 0142")  # 03:00 in New York: refused, and remembered
    assert "03:00" in first
    for text in ("call them again", "do they have propane?"):
        said = await reply_to(daemon, text)
        assert "03:00" in said and "08:00" in said, (text, said)
    daemon._ledger.sync.add_opt_out("+15555550143", said_at=NIGHT, quote="Please stop calling us.", user_id="alice", run_id="run_" + "0" * 20)
    await reply_to(daemon, "hours +1 555 555 0143")
    assert "asked not to be called" in await reply_to(daemon, "try again")
    # Nothing known about Sunday there: offered as a call, and the YES is counted like any call by text.
    offer = await reply_to(daemon, "what about Sunday?")
    assert offer.startswith("I don't know their hours for Sunday. Reply YES and I'll call +1 555-555-0143"), offer
    assert await reply_to(daemon, "yes") == replies.RATE_LIMITED  # the sixth call asked for by text this hour
    assert dials == [] and daemon._ledger.sync.requests(10) == []
