"""Follow-ups as real people text them: whole conversations, end to end in stub mode (the harness of
test_messaging_e2e: the fake Linq posts signed webhooks to the daemon's real route, stub calls, the
autojump clock). Lowercase, shorthand and typos; STOP in the middle; a follow-up after a call that
went nowhere; two people at once; a follow-up naming another number; redeliveries; the calling
window. Every reply is checked to be ASCII and to carry nothing internal."""

from __future__ import annotations

import re
from datetime import UTC, datetime

import pytest
import trio

from calld.cli.client import ControlClient
from calld.daemon.service import Daemon
from calld.messaging import replies
from calld.messaging.parse import Incomplete
from calld.policy.clock import trio_clock
from daemons import daemon_settings, stop

ALICE = "+15555550177"
BOB = "+15555550166"
SHOP = "+1 555-555-0142"  # as calld says the numbers back
OTHER = "+1 555-555-0143"

# Nothing internal in a reply: URLs, SETTING_NAMES, our ids and Linq's, reprs, flags.
LEAKS = re.compile(r"https?://|www\.|\b[A-Z]+_[A-Z_]+\b|\bHTTP\b|\b(?:run|req|txt)_[0-9A-Za-z]|\b(?:msg|evt|chat)-[0-9a-f]|"
                   r"v3:|Traceback|Error\(|\{|\}|calld-ctl|--[a-z]|\binternal\b")


@pytest.fixture
async def daemon(tmp_path, nursery):
    settings = daemon_settings(tmp_path, open_limits=False)  # the limits calld ships with
    d: Daemon = await nursery.start(Daemon(settings).serve)
    async with ControlClient(settings.calld_socket) as c:
        await c.provision("alice")
        await c.provision("bob")
        await c.messaging_link(ALICE, "alice", "Nathan")
        await c.messaging_link(BOB, "bob", "Bob")
    yield d
    await stop(d)


def clean(text: str) -> str:
    assert text.isascii(), text
    assert not LEAKS.search(text), text
    return text


async def text(daemon: Daemon, who: str, words: str, **kw) -> list[str]:
    """`who` texts `words`; the replies it brought, each checked ASCII and leak-free."""
    fake = daemon.messaging.fake
    before = len(fake.replies_to(who))
    await fake.text(who, words, **kw)
    await daemon.messaging.wait_idle()
    return [clean(t) for t in fake.replies_to(who)[before:]]


def rows(daemon: Daemon) -> list:
    return daemon._ledger.sync.requests(100)  # newest first


def dialled(daemon: Daemon) -> list[str]:
    """The numbers actually dialled, oldest first."""
    return [r.params["to"] for r in reversed(rows(daemon)) if r.call_control_id is not None]


# -- shorthand and typos -----------------------------------------------------------------------------------


async def test_what_abt_fri_in_shorthand_is_told_from_the_last_call(daemon, autojump_clock):
    await text(daemon, ALICE, "hours 555 555 0142")  # "We're open Monday through Friday, 9 AM to 5 PM."
    got = await text(daemon, ALICE, "what abt fri")
    assert got == [f"From my call to {SHOP}: on Friday they're open 9 AM to 5 PM."]
    assert dialled(daemon) == ["+15555550142"]


async def test_hbu_saturday_offers_a_call_for_the_day_it_did_not_give(daemon, autojump_clock):
    await text(daemon, ALICE, "hours 555 555 0142")
    got = await text(daemon, ALICE, "hbu saturday?")
    assert got == [f"When I called {SHOP}, they didn't tell me about Saturday. "
                   f"Reply YES and I'll call {SHOP} to ask their opening hours, or NO to skip."]
    got = await text(daemon, ALICE, "Sat n Sun?")
    assert len(got) == 1 and "Saturday and Sunday" in got[0] and "Reply YES" in got[0]
    assert len(dialled(daemon)) == 1


async def test_nvm_turns_down_the_offer_and_nothing_is_dialled(daemon, autojump_clock):
    await text(daemon, ALICE, "hours 555 555 0142")
    assert "Reply YES" in (await text(daemon, ALICE, "what about sunday?"))[0]
    assert await text(daemon, ALICE, "nvm") == [replies.CANCELLED]
    assert await text(daemon, ALICE, "yes") == [replies.NOTHING_PENDING]  # the offer is gone
    assert len(dialled(daemon)) == 1


# The fiction range has no time zone: "today" and "tomorrow" are read in UTC there, as a booking's time is.
THURSDAY = datetime(2026, 12, 3, 15, 0, tzinfo=UTC).timestamp()
FRIDAY = datetime(2026, 12, 4, 15, 0, tzinfo=UTC).timestamp()
COVERED = f"From my call to {SHOP}: on Friday they're open 9 AM to 5 PM."
NOT_COVERED = (f"When I called {SHOP}, they didn't tell me about Saturday. "
               f"Reply YES and I'll call {SHOP} to ask their opening hours, or NO to skip.")
DAY_FORMS = ["what about {day}?", "and {day}?", "hbu {day}", "are they open {day}?", "what time do they close {day}?",
             "open {day}?", "what about {day} at 555-555-0142?"]


async def test_and_tmrw_is_read_as_tomorrow(daemon, autojump_clock, monkeypatch):
    monkeypatch.setattr(daemon.messaging, "_clock", lambda: THURSDAY)
    await text(daemon, ALICE, "hours 555 555 0142")
    assert await text(daemon, ALICE, "and tmrw?") == [COVERED]  # Friday, which the call covered
    assert len(dialled(daemon)) == 1


@pytest.mark.parametrize("today, day, want", [(THURSDAY, "friday", COVERED), (FRIDAY, "saturday", NOT_COVERED)],
                         ids=["a day the call covered", "a day it did not"])
async def test_every_day_follow_up_form_gets_the_same_kind_of_reply(daemon, autojump_clock, monkeypatch, today, day, want):
    """"what about Sunday?" and "and tomorrow?" are the same question: each form, naming the day or
    "tomorrow", is answered from the last call's hours where they cover the day, and offered a call
    (a YES, never a dial) where they do not."""
    monkeypatch.setattr(daemon.messaging, "_clock", lambda: today)
    await text(daemon, ALICE, "hours 555 555 0142")
    for form in DAY_FORMS:
        for named in (day, "tomorrow"):
            assert await text(daemon, ALICE, form.format(day=named)) == [want], form.format(day=named)
    assert len(dialled(daemon)) == 1
    if want == NOT_COVERED:
        got = await text(daemon, ALICE, "yes")  # the last offer stands: the YES asks their hours
        assert got[0] == f"Calling {SHOP} now to ask their opening hours. I'll text you what they say."
        assert len(dialled(daemon)) == 2


async def test_a_day_at_another_number_is_offered_not_dialled(daemon, autojump_clock):
    """The last call's hours say nothing about another business: offered, as any unknown day is."""
    await text(daemon, ALICE, "hours 555 555 0142")
    got = await text(daemon, ALICE, "what about sunday at 555-555-0143?")
    assert got == [f"I don't know their hours for Sunday. Reply YES and I'll call {OTHER} to ask their opening hours, or NO to skip."]
    assert dialled(daemon) == ["+15555550142"]
    got = await text(daemon, ALICE, "yes")
    assert got[0] == f"Calling {OTHER} now to ask their opening hours. I'll text you what they say."
    assert dialled(daemon) == ["+15555550142", "+15555550143"]


async def test_do_they_have_the_12_inch_one_asks_about_the_12_inch_skillet(daemon, autojump_clock):
    await text(daemon, ALICE, "is the cast iron skillet in stock at 555-555-0142?")
    got = await text(daemon, ALICE, "do they have the 12 inch one")
    assert got[0] == f"Calling {SHOP} now to ask if they have 12 inch cast iron skillet in stock. I'll text you what they say."
    assert rows(daemon)[0].params["item"] == "12 inch cast iron skillet"


async def test_can_u_call_them_again_pls_is_a_retry(daemon, autojump_clock):
    daemon.messaging.scenario = "busy"
    got = await text(daemon, ALICE, "hours 555 555 0142")
    assert got[-1] == f"The line at {SHOP} was busy. Please try again in a little while."
    daemon.messaging.scenario = "hours"
    got = await text(daemon, ALICE, "can u call them again pls")
    assert got[0] == f"Calling {SHOP} now to ask their opening hours. I'll text you what they say."
    assert got[1].startswith('They said: "')
    assert dialled(daemon) == ["+15555550142", "+15555550142"]


async def test_thanks_after_an_answer_is_not_met_with_didnt_catch_that(daemon, autojump_clock):
    await text(daemon, ALICE, "hours 555 555 0142")
    for thanks in ("ok thx", "thanks!", "cool thank you"):
        got = await text(daemon, ALICE, thanks)
        assert got != [replies.NOT_UNDERSTOOD] and len(got) <= 1, (thanks, got)
    assert len(dialled(daemon)) == 1


async def test_smart_quotes_from_a_phone_never_reach_a_reply(daemon, autojump_clock):
    await text(daemon, ALICE, "is the cast iron skillet in stock at 555-555-0142?")
    got = await text(daemon, ALICE, "do they have the 12\u201d one?")  # iPhone smart punctuation
    assert got[0] == f"Calling {SHOP} now to ask if they have 12\" cast iron skillet in stock. I'll text you what they say."
    got = await text(daemon, ALICE, "do they have jalape\u00f1o salsa at 555-555-0143?")  # said back in ASCII
    assert got[0] == f"Calling {OTHER} now to ask if they have jalapeno salsa in stock. I'll text you what they say."
    assert rows(daemon)[0].params["item"] == "jalape\u00f1o salsa"  # the call itself asks as they wrote it


# -- after a call that went nowhere ---------------------------------------------------------------------------


async def test_ok_call_again_after_no_answer_places_a_new_call(daemon, autojump_clock):
    daemon.messaging.scenario = "ring_timeout"
    got = await text(daemon, ALICE, "hours 555 555 0142")
    assert got[-1] == f"Nobody picked up at {SHOP}. Please try again later."
    daemon.messaging.scenario = "hours"
    got = await text(daemon, ALICE, "ok call again")
    assert got[0] == f"Calling {SHOP} now to ask their opening hours. I'll text you what they say."
    assert got[1] == 'They said: "We\'re open Monday through Friday, 9 AM to 5 PM."'
    first, second = rows(daemon)[1], rows(daemon)[0]
    assert first.request_id != second.request_id and len(dialled(daemon)) == 2


async def test_after_voicemail_call_them_again_as_the_reply_suggests_and_sunday_is_offered(daemon, autojump_clock):
    daemon.messaging.scenario = "voicemail"
    got = await text(daemon, ALICE, "hours 555 555 0142")
    assert 'Text "call them again"' in got[-1]
    got = await text(daemon, ALICE, "call them again")
    assert got[0].startswith(f"Calling {SHOP} now") and "voicemail" in got[-1]
    got = await text(daemon, ALICE, "what about sunday")  # nothing was heard: offered, not made up
    assert got == [f"I don't know their hours for Sunday. Reply YES and I'll call {SHOP} to ask their opening hours, or NO to skip."]
    assert len(dialled(daemon)) == 2


async def test_try_again_after_a_failed_call_asks_the_same_thing(daemon, autojump_clock):
    daemon.messaging.scenario = "live_lost"
    got = await text(daemon, ALICE, "which aisle is the wd-40 at 555 555 0142")
    assert got[-1].startswith("Sorry, the call didn't work out")
    daemon.messaging.scenario = "aisle"
    got = await text(daemon, ALICE, "try again")
    assert got[0] == f"Calling {SHOP} now to ask which aisle wd-40 is in. I'll text you what they say."
    assert "aisle 14" in got[1]
    assert [r.params["item"] for r in rows(daemon)] == ["wd-40", "wd-40"]


async def test_a_follow_up_after_a_refused_request_is_refused_the_same_way(daemon, autojump_clock):
    from calld.policy.clock import wall_clock

    daemon._ledger.sync.add_opt_out("+15555550143", said_at=wall_clock(), quote="Please stop calling us.", user_id="alice",
                               run_id="run_" + "0" * 20)
    first = await text(daemon, ALICE, "hours 555-555-0143")
    assert len(first) == 1 and "asked not to be called" in first[0]
    assert await text(daemon, ALICE, "try again") == first
    offer = await text(daemon, ALICE, "what about sunday?")
    assert offer[0].startswith(f"I don't know their hours for Sunday. Reply YES and I'll call {OTHER}")
    assert await text(daemon, ALICE, "yes") == first  # the YES meets the same rule
    assert dialled(daemon) == []


# -- STOP in the middle ------------------------------------------------------------------------------------


async def test_stop_in_the_middle_of_an_offer_drops_it(daemon, autojump_clock):
    await text(daemon, ALICE, "hours 555 555 0142")
    assert "Reply YES" in (await text(daemon, ALICE, "what about sunday?"))[0]
    assert await text(daemon, ALICE, "STOP") == [replies.STOPPED]
    got = await text(daemon, ALICE, "yes")
    assert got == [replies.NOTHING_PENDING]  # the STOP took the offer with it
    assert len(dialled(daemon)) == 1


async def test_stop_while_a_follow_up_call_is_on_holds_back_its_result(daemon, autojump_clock):
    fake = daemon.messaging.fake
    await text(daemon, ALICE, "hours 555 555 0142")
    async with trio.open_nursery() as n:
        n.start_soon(fake.text, ALICE, "and do they have propane?")
        await trio.sleep(3)
        assert daemon.lookup.calls()
        await fake.text(ALICE, "STOP")
    await daemon.messaging.wait_idle()
    got = [clean(t) for t in fake.replies_to(ALICE)]
    assert got[2] == f"Calling {SHOP} now to ask if they have propane in stock. I'll text you what they say."
    assert got[3:] == [replies.STOPPED]
    assert rows(daemon)[0].params["item"] == "propane" and rows(daemon)[0].result["status"] == "answered"


# -- people, numbers and calls on at once ----------------------------------------------------------------------


async def test_two_people_follow_up_on_their_own_businesses_with_no_crossover(daemon, autojump_clock):
    await text(daemon, ALICE, "hours 555 555 0142")
    await text(daemon, BOB, "is the cast iron skillet in stock at 555-555-0143?")
    alice = await text(daemon, ALICE, "do they have propane?")
    bob = await text(daemon, BOB, "what about sunday?")
    assert alice[0] == f"Calling {SHOP} now to ask if they have propane in stock. I'll text you what they say."
    assert bob == [f"I don't know their hours for Sunday. Reply YES and I'll call {OTHER} to ask their opening hours, or NO to skip."]
    bob += await text(daemon, BOB, "yes")
    alice += await text(daemon, ALICE, "call them again")
    assert not any("0143" in t for t in alice) and not any("0142" in t for t in bob)
    by_user = {(r.user_id, r.params["to"]) for r in rows(daemon)}
    assert by_user == {("alice", "+15555550142"), ("bob", "+15555550143")}
    assert [r.params["name"] for r in rows(daemon) if r.user_id == "bob"] == ["Bob", "Bob"]


async def test_a_follow_up_while_the_first_call_is_on(daemon, autojump_clock):
    fake = daemon.messaging.fake
    async with trio.open_nursery() as n:
        n.start_soon(fake.text, ALICE, "hours 555 555 0142")
        await trio.sleep(3)
        assert daemon.lookup.calls()
        await fake.text(ALICE, "what about sunday?")
        await fake.text(ALICE, "call them again")
    await daemon.messaging.wait_idle()
    got = [clean(t) for t in fake.replies_to(ALICE)]
    already = f"I'm already calling {SHOP} to ask their opening hours. I'll text you what they say."
    assert got[1:3] == [already, already]
    assert got[3].startswith('They said: "') and len(got) == 4
    assert len(dialled(daemon)) == 1


async def test_a_follow_up_naming_another_number_asks_there_and_never_at_the_old_one(daemon, autojump_clock):
    await text(daemon, ALICE, "hours 555 555 0142")
    got = await text(daemon, ALICE, "what about 555-555-0143?")
    assert got[0] == f"Calling {OTHER} now to ask their opening hours. I'll text you what they say."
    got = await text(daemon, ALICE, "do they have propane at 555-555-0144")  # a question with its own number: as asked
    assert got[0] == "Calling +1 555-555-0144 now to ask if they have propane in stock. I'll text you what they say."
    assert dialled(daemon) == ["+15555550142", "+15555550143", "+15555550144"]


async def test_call_them_again_naming_the_number_repeats_the_last_question_there(daemon, autojump_clock):
    await text(daemon, ALICE, "is the cast iron skillet in stock at 555-555-0142?")
    got = await text(daemon, ALICE, "call them again 555-555-0142")
    assert got[0] == f"Calling {SHOP} now to ask if they have cast iron skillet in stock. I'll text you what they say."
    assert dialled(daemon) == ["+15555550142", "+15555550142"]


async def test_what_about_sunday_after_a_stock_call_offers_an_hours_call(daemon, autojump_clock):
    await text(daemon, ALICE, "is the cast iron skillet in stock at 555-555-0142?")
    got = await text(daemon, ALICE, "what about sunday")
    assert got == [f"I don't know their hours for Sunday. Reply YES and I'll call {SHOP} to ask their opening hours, or NO to skip."]
    assert len(dialled(daemon)) == 1  # not the stock question again, not a call before the YES
    got = await text(daemon, ALICE, "y")
    assert got[0] == f"Calling {SHOP} now to ask their opening hours. I'll text you what they say."
    assert [r.params["ask"] for r in rows(daemon)] == ["hours", "stock"]


# -- time: the follow-up window, the calling window ---------------------------------------------------------------


async def test_a_follow_up_after_the_window_has_passed_asks_for_the_number(daemon, autojump_clock, monkeypatch):
    clock = [1000.0]
    monkeypatch.setattr(daemon.messaging, "_clock", lambda: clock[0])
    await text(daemon, ALICE, "is the cast iron skillet in stock at 555-555-0142?")
    clock[0] += daemon.settings.messaging_followup_s + 60
    assert await text(daemon, ALICE, "what about sunday") == [replies.incomplete(Incomplete("number", "ask"))]
    got = await text(daemon, ALICE, "do they have the 12 inch one")
    assert got[0].startswith("Which number should I call?")
    assert len(dialled(daemon)) == 1


async def test_a_redelivered_follow_up_never_dials_twice(daemon, autojump_clock):
    await text(daemon, ALICE, "hours 555 555 0142")
    got = await text(daemon, ALICE, "call them again", times=3)
    assert len(got) == 2 and got[0].startswith(f"Calling {SHOP}")
    offer = await text(daemon, ALICE, "what about sunday?", times=2)
    assert len(offer) == 1
    got = await text(daemon, ALICE, "yes", times=3)  # a third call: the per-number daily limit speaks, once
    assert len(got) == 1 and "already been called" in got[0]
    assert len(dialled(daemon)) == 2


NIGHT_FALLS = datetime(2026, 6, 11, 0, 50, tzinfo=UTC)  # Wednesday 20:50 in New York: ten minutes of window left


@pytest.fixture
async def evening(tmp_path, nursery):
    settings = daemon_settings(tmp_path)
    d: Daemon = await nursery.start(Daemon(settings, clock=trio_clock(NIGHT_FALLS)).serve)
    async with ControlClient(settings.calld_socket) as c:
        await c.provision("alice")
        await c.messaging_link(ALICE, "alice", "Nathan")
    yield d
    await stop(d)


async def test_a_follow_up_outside_the_calling_window_is_refused_with_when_it_opens(evening, autojump_clock):
    got = await text(evening, ALICE, "hours 212 555 0142")
    assert got[0] == "Calling +1 212-555-0142 now to ask their opening hours. I'll text you what they say."
    await trio.sleep(20 * 60)  # 21:10 there now
    for follow in ("call them again", "do they have propane?"):
        got = await text(evening, ALICE, follow)
        assert len(got) == 1 and "08:00" in got[0] and "Calling" not in got[0], (follow, got)
    assert dialled(evening) == ["+12125550142"]
