"""A texted request is checked against the policy before "Reply YES" is offered: a number the gate
would refuse (premium rate, here) is refused at once, never offered. Stub mode, loopback, autojump clock."""

from __future__ import annotations

import pytest

from calld.messaging import replies
from daemons import daemon_settings, say, stop, texting_daemon

ALICE = "+15555550177"


@pytest.fixture
async def daemon(tmp_path, nursery):
    d = await texting_daemon(nursery, daemon_settings(tmp_path), ALICE)
    yield d
    await stop(d)


async def test_a_premium_rate_number_from_a_text_is_refused_before_any_offer(daemon, dials, autojump_clock):
    """The text model pulls a 1-900 number out of a text: the policy gate refuses it at once; no
    "Reply YES" is offered, nothing is pending, and a YES afterwards finds nothing to place."""
    got = await say(daemon, ALICE, "does joe's still have propane? +1 900 555 0142")
    assert len(got) == 1 and "Reply YES" not in got[0]
    assert "premium-rate" in got[0] and got[0].startswith("I can't place that call")
    got = await say(daemon, ALICE, "YES")
    assert got[-1] == replies.NOTHING_PENDING
    assert dials == [] and daemon._ledger.sync.requests(10) == []


async def test_an_allowed_number_from_a_text_is_still_offered(daemon, autojump_clock):
    got = await say(daemon, ALICE, "does joe's still have propane? 555-555-0142")
    assert got == ["Call +1 555-555-0142 and ask if they have propane in stock? Reply YES to call, or NO to skip."]
