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
    assert daemon._ledger.sync.requests(10) == [] and daemon.lookup.calls() == []



# -- strangers together, and numbers calld would not dial -------------------------------------------------------


async def test_forty_strangers_texting_help_share_one_hours_replies_then_silence(tmp_path, nursery, autojump_clock, monkeypatch):
    """MESSAGING_UNLINKED_REPLIES_PER_HOUR (10 by default) bounds the replies to all unlinked handles
    together: forty strangers with one HELP each get ten; a linked handle is not held back by them;
    an hour later there is room again."""
    settings = daemon_settings(tmp_path)
    assert settings.messaging_unlinked_replies_per_hour == 10
    d = await texting_daemon(nursery, settings, ALICE)
    clock = [1_000_000.0]
    monkeypatch.setattr(d.messaging, "_clock", lambda: clock[0])
    fake = d.messaging.fake
    strangers = [f"+1555555{n:04d}" for n in range(100, 140)]  # forty fiction numbers, none linked
    for handle in strangers:
        await say(d, handle, "HELP")
    assert [len(fake.replies_to(h)) for h in strangers] == [1] * 10 + [0] * 30
    assert await say(d, strangers[-1], "START", "hours +1 555 555 0142") == []  # the hour's replies are spent
    assert await say(d, ALICE, "HELP") == [replies.HELP]  # linked handles have limits of their own
    clock[0] += 3600 + 1
    assert await say(d, strangers[-1], "HELP") == [replies.HELP]
    assert d._ledger.sync.requests(10) == []
    await stop(d)


async def test_no_stranger_is_answered_when_the_limit_is_zero(tmp_path, nursery, autojump_clock):
    d = await texting_daemon(nursery, daemon_settings(tmp_path, messaging_unlinked_replies_per_hour=0), ALICE)
    assert await say(d, STRANGER, "HELP", "START", "hours +1 555 555 0142") == []
    assert await say(d, ALICE, "HELP") == [replies.HELP]
    await stop(d)


@pytest.mark.parametrize("handle", ["+19005550123", "+442079460958", "+12125551212"])  # premium rate, outside +1, 555-1212
async def test_a_number_calld_would_not_dial_is_never_texted(tmp_path, nursery, autojump_clock, handle):
    """Whatever it texts, linked to a user or not: no reply, no STOP confirmation, no call; and the
    operator cannot link it (the refusal says why)."""
    from calld.cli.client import ControlClient, ControlError

    d = await texting_daemon(nursery, daemon_settings(tmp_path), ALICE)
    assert await say(d, handle, "HELP", "START", "hours +1 555 555 0142", "yes", "STOP", "HELP") == []
    async with ControlClient(d.settings.calld_socket) as c:
        with pytest.raises(ControlError) as refused:
            await c.messaging_link(handle, "alice", "Nathan")
    assert "never texts a number it would not dial" in str(refused.value) and handle in str(refused.value)
    assert "--handle" in str(refused.value)
    d._ledger.sync.put_message_link(handle, "alice", "Nathan")  # linked behind the API's back: still never texted
    assert await say(d, handle, "hours +1 555 555 0142", "HELP") == []
    assert d._ledger.sync.requests(10) == [] and d.lookup.calls() == []
    await stop(d)
