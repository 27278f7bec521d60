"""Texting's tables through the ledger, on both engines (PostgreSQL marked `postgres`): links, the
inbound dedupe on event_id, opt-outs, pending confirmations. The store never touches a connection."""

from __future__ import annotations

import threading
from collections.abc import Iterator

import pytest

from calld.ledger import Ledger, Target
from calld.messaging.parse import AskIntent
from calld.messaging.store import Link, MessagingStore, Pending

HANDLE = "+15555550177"


@pytest.fixture
def ledger(ledger_target: Target) -> Iterator[Ledger]:
    led = Ledger(ledger_target)
    yield led
    led.close()


@pytest.fixture
def store(ledger: Ledger) -> MessagingStore:
    return MessagingStore(ledger)


async def test_links_are_written_relinked_listed_and_removed(store: MessagingStore) -> None:
    first = await store.link(HANDLE, "alice", "Sam")
    assert (first.handle, first.user_id, first.name) == (HANDLE, "alice", "Sam")
    await store.link(HANDLE, "bob", "Kim")  # re-link: the same handle, now bob's
    await store.link("Sam@Example.com", "alice", "Sam")
    assert [(k.handle, k.user_id) for k in await store.links()] == [("sam@example.com", "alice"), (HANDLE, "bob")]
    assert isinstance(await store.link_for(HANDLE), Link)
    assert await store.unlink(HANDLE) and not await store.unlink(HANDLE)
    assert await store.link_for(HANDLE) is None
    with pytest.raises(ValueError, match="E.164"):
        await store.link("not a number", "alice", "Sam")


async def test_an_event_is_claimed_once_and_counted(store: MessagingStore) -> None:
    assert await store.claim_event("evt-1", message_id="m1", handle=HANDLE, chat_id="c", at=100.0)
    assert not await store.claim_event("evt-1", message_id="m1", handle=HANDLE, chat_id="c", at=101.0)  # redelivered
    await store.claim_event("evt-2", message_id="m2", handle=HANDLE, chat_id="c", at=200.0)
    await store.set_outcome("evt-2", "call", "txt_m2")
    assert await store.outcome("evt-1") == "received" and await store.outcome("evt-2") == "call"
    assert await store.outcome("evt-9") is None
    assert await store.count_since(HANDLE, 0.0) == 2
    assert await store.count_since(HANDLE, 150.0) == 1
    assert await store.count_since(HANDLE, 0.0, "call") == 1


def test_one_event_delivered_to_two_daemons_at_once_is_handled_once(ledger_target: Target) -> None:
    Ledger(ledger_target).close()
    barrier = threading.Barrier(4)
    fresh: list[bool] = []

    def deliver() -> None:
        led = Ledger(ledger_target)
        try:
            barrier.wait()
            fresh.append(led.claim_message_event("evt-x", message_id="m", handle=HANDLE, chat_id="c", at=1.0))
        finally:
            led.close()

    threads = [threading.Thread(target=deliver) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(fresh) == [False, False, False, True]


async def test_opt_outs_and_pending_confirmations(store: MessagingStore) -> None:
    assert await store.opt_out(HANDLE) and not await store.opt_out(HANDLE)
    assert await store.opted_out(HANDLE)
    assert await store.opt_in(HANDLE) and not await store.opt_in(HANDLE)
    assert not await store.opted_out(HANDLE)
    ask = AskIntent("+15555550142", "hours")
    await store.put_pending(HANDLE, "c1", "m1", ask, expires_at=500.0)
    await store.put_pending(HANDLE, "c2", "m2", ask, expires_at=600.0)  # one per handle: the newest
    assert await store.take_pending(HANDLE, now=550.0) == Pending(HANDLE, "c2", "m2", ask)
    assert await store.take_pending(HANDLE, now=550.0) is None  # taken
    await store.put_pending(HANDLE, "c3", "m3", ask, expires_at=600.0)
    assert await store.take_pending(HANDLE, now=601.0) is None  # lapsed (and removed)
    assert await store.take_pending(HANDLE, now=0.0) is None


def test_replies_to_strangers_are_bounded_across_handles_and_daemons(ledger_target: Target) -> None:
    """MESSAGING_UNLINKED_REPLIES_PER_HOUR is one ledger transaction: eight strangers' texts handled at
    once by as many daemons get exactly the limit's replies; the rest are recorded as quiet."""
    from calld.messaging.store import STRANGER_REPLIED, UNLINKED_QUIET

    Ledger(ledger_target).close()
    setup = Ledger(ledger_target)
    for n in range(8):
        setup.claim_message_event(f"evt-{n}", message_id=f"m{n}", handle=f"+1555555{n + 100:04d}", chat_id="c", at=100.0)
    setup.claim_message_event("evt-old", message_id="m-old", handle="+15555550190", chat_id="c", at=1.0)
    setup.set_message_outcome("evt-old", "unlinked_help")  # before the hour: not counted
    barrier = threading.Barrier(8)
    room: list[bool] = []

    def reply(n: int) -> None:
        led = Ledger(ledger_target)
        try:
            barrier.wait()
            room.append(led.claim_stranger_reply(f"evt-{n}", "unlinked_help", replied=STRANGER_REPLIED, since=50.0,
                                                 limit=3, quiet=UNLINKED_QUIET))
        finally:
            led.close()

    threads = [threading.Thread(target=reply, args=(n,)) for n in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(room) == [False] * 5 + [True] * 3
    outcomes = sorted(setup.message_outcome(f"evt-{n}") for n in range(8))
    assert outcomes == ["unlinked_help"] * 3 + [UNLINKED_QUIET] * 5
    setup.close()
