"""Texting floods: one limit per handle covers every reply (HELP and START included), a handle linked
to no user has a tighter one, and the one "too many texts" notice goes out once the limit is
passed, whatever kind of text passed it. Stub mode: the fake Linq posts signed webhooks to the
daemon's route on loopback (autojump clock)."""

from __future__ import annotations

import pytest

from calld.messaging import replies
from daemons import daemon_settings, say, stop, texting_daemon

ALICE = "+15555550177"
STRANGER = "+15555550188"
LIMIT, UNLINKED_LIMIT = 6, 2


@pytest.fixture
async def daemon(tmp_path, nursery):
    d = await texting_daemon(nursery, daemon_settings(tmp_path, messaging_texts_per_hour=LIMIT, messaging_unlinked_texts_per_hour=UNLINKED_LIMIT), ALICE)
    yield d
    await stop(d)


async def test_help_counts_toward_a_linked_handles_limit(daemon, autojump_clock):
    got = await say(daemon, ALICE, *["HELP"] * (LIMIT + 10))
    assert got == [replies.HELP] * LIMIT + [replies.TOO_MANY_TEXTS]


async def test_start_counts_toward_a_linked_handles_limit(daemon, autojump_clock):
    got = await say(daemon, ALICE, *["START"] * (LIMIT + 10))
    assert got == [replies.HELP] * LIMIT + [replies.TOO_MANY_TEXTS]


async def test_the_notice_is_sent_once_when_help_passed_the_limit(daemon, autojump_clock):
    got = await say(daemon, ALICE, *["HELP"] * LIMIT, "tell me a joke", "tell me a joke", "HELP", "hours +1 555 555 0142")
    assert got == [replies.HELP] * LIMIT + [replies.TOO_MANY_TEXTS]
    assert daemon._ledger.sync.requests(10) == []  # no call past the limit either


async def test_a_stranger_gets_at_most_the_tighter_limit_then_one_notice(daemon, autojump_clock):
    got = await say(daemon, STRANGER, *["HELP", "START", "hours +1 555 555 0142", "HELP", "START"] * 5)
    assert got == [replies.HELP, replies.HELP, replies.TOO_MANY_TEXTS]
    assert daemon._ledger.sync.requests(10) == [] and daemon.calls() == []

