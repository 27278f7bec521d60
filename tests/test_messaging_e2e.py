"""Asking by text, end to end in stub mode: the fake Linq posts signed webhooks to the daemon's real
route over loopback, the daemon places stub calls through the same service functions calld-ctl
uses, and its replies land in the fake Linq's record of the conversation (autojump clock)."""

from __future__ import annotations

import io
import re
import json
from contextlib import redirect_stdout

import pytest
import trio

from calld.cli.client import ControlClient, ControlError
from calld.cli.ctl import build_parser
from calld.daemon.service import Daemon, DaemonError
from calld.messaging import replies
from calld.runtime.handle import CallHandle
from calld.settings import load_settings
from calld.stub.linq import new_secret

ALICE = "+15555550177"
STRANGER = "+15555550188"


@pytest.fixture
async def daemon(tmp_path, nursery):
    settings = load_settings(
        calld_state_dir=tmp_path / "state", calld_socket=tmp_path / "ctl.sock", calld_bind="127.0.0.1:0", _env_file=None,
    )
    d: Daemon = await nursery.start(Daemon(settings).serve)
    async with ControlClient(settings.calld_socket) as c:
        await c.provision("alice")
        await c.messaging_link(ALICE, "alice", "Nathan")
    yield d
    if d.accepting:
        await d.shutdown(drain_s=0)


async def say(daemon: Daemon, handle: str, text: str, **kw) -> list[int]:
    statuses = await daemon.messaging.fake.text(handle, text, **kw)
    await daemon.messaging.wait_idle()
    return statuses


def requests(daemon: Daemon) -> list:
    return daemon._ledger.sync.requests(100)


def dials(daemon: Daemon) -> int:
    return len([r for r in requests(daemon) if r.call_control_id is not None])


async def test_a_linked_handle_asks_by_text_and_gets_the_answer_back(daemon, autojump_clock):
    assert await say(daemon, ALICE, "hours +1 555 555 0142") == [200]
    fake = daemon.messaging.fake
    assert fake.replies_to(ALICE) == [
        "Calling +1 555-555-0142 now to ask their opening hours. I'll text you what they say.",
        'They said: "We\'re open Monday through Friday, 9 AM to 5 PM."',
    ]
    # The same request calld-ctl ask would make: the linked user's number, the linked first name.
    (row,) = requests(daemon)
    assert row.kind == "ask" and row.user_id == "alice" and row.request_id.startswith("txt_")
    assert row.params["to"] == "+15555550142" and row.params["ask"] == "hours" and row.params["name"] == "Nathan"
    assert row.result["status"] == "answered"
    assert (fake.chat_for(ALICE), "start") in fake.typing  # typing while the call was on
    assert all(key.startswith("calld:txt_") for key in fake.sent)  # every reply carries an idempotency key


async def test_a_stock_question_and_a_booking_by_text(daemon, autojump_clock):
    await say(daemon, ALICE, "is the cast iron skillet in stock at 555-555-0142?")
    await say(daemon, ALICE, "book a table for 2 Friday 7pm at +1 555 555 0142, outdoor if possible")
    got = daemon.messaging.fake.replies_to(ALICE)
    assert got[0] == "Calling +1 555-555-0142 now to ask if they have cast iron skillet in stock. I'll text you what they say."
    assert got[1].startswith('They said: "') and "shelf" in got[1]
    assert got[2] == "Calling +1 555-555-0142 now to book a table for 2, Friday 7pm (outdoor if possible). I'll text you what they say."
    assert got[3].startswith("You're booked: a table for 2, ") and "Friday" in got[3] and 'They said: "' in got[3]
    kinds = sorted(r.kind for r in requests(daemon))
    assert kinds == ["ask", "book"]


async def test_an_unlinked_handle_gets_one_polite_line_and_no_call(daemon, autojump_clock):
    await say(daemon, STRANGER, "hours +1 555 555 0142")
    await say(daemon, STRANGER, "is the skillet in stock at +1 555 555 0142?")
    assert daemon.messaging.fake.replies_to(STRANGER) == [replies.UNLINKED]
    assert requests(daemon) == [] and daemon.lookup.calls() == []


async def test_a_duplicated_webhook_dials_once_and_replies_once(daemon, autojump_clock):
    statuses = await say(daemon, ALICE, "hours +1 555 555 0142", times=3)
    assert statuses == [200, 200, 200]  # Linq is told every delivery arrived
    fake = daemon.messaging.fake
    assert len(requests(daemon)) == 1 and dials(daemon) == 1
    assert len(fake.replies_to(ALICE)) == 2
    assert fake.requests["send"] == 2  # calld did not even try to send the redeliveries' replies


async def test_the_same_message_under_a_new_event_id_never_dials_again(daemon, autojump_clock):
    from calld.messaging.wire import sign_webhook
    from calld.stub.linq import http_post

    fake = daemon.messaging.fake
    event_id, raw = fake.message(ALICE, "hours +1 555 555 0142")
    assert await http_post(fake.webhook_url, raw, sign_webhook(fake.secret, raw, event_id)) == 200
    await daemon.messaging.wait_idle()
    # Linq's event ids dedupe deliveries; one request id per *message* also holds if the message
    # comes back in another event (a reconciliation, a replayed subscription).
    again = raw.replace(event_id.encode(), b"evt-replayed")
    assert await http_post(fake.webhook_url, again, sign_webhook(fake.secret, again, "evt-replayed")) == 200
    await daemon.messaging.wait_idle()
    assert dials(daemon) == 1 and len(requests(daemon)) == 1
    assert len(fake.replies_to(ALICE)) == 2  # the repeat's answer has the same idempotency key: sent once


async def test_a_webhook_with_a_bad_signature_is_refused_and_changes_nothing(daemon, autojump_clock):
    statuses = await say(daemon, ALICE, "hours +1 555 555 0142", secret=new_secret())
    assert statuses == [401]
    assert daemon.messaging.fake.replies_to(ALICE) == []
    assert requests(daemon) == []
    assert daemon._ledger.sync._db.execute("SELECT COUNT(*) FROM message_events").fetchone()[0] == 0
    await say(daemon, ALICE, "hours +1 555 555 0142")  # and the daemon still serves
    assert len(daemon.messaging.fake.replies_to(ALICE)) == 2


async def test_a_model_parsed_request_is_confirmed_then_cancelled_without_a_call(daemon, autojump_clock):
    await say(daemon, ALICE, "does joe's still have those cast iron skillets? 555-555-0142")
    fake = daemon.messaging.fake
    assert fake.replies_to(ALICE) == [
        "Call +1 555-555-0142 and ask if they have cast iron skillets in stock? Reply YES to call, or NO to skip."
    ]
    assert requests(daemon) == []  # nothing is dialled before the YES
    await say(daemon, ALICE, "no")
    assert fake.replies_to(ALICE)[-1] == replies.CANCELLED
    await say(daemon, ALICE, "yes")  # too late: the request was dropped
    assert fake.replies_to(ALICE)[-1] == replies.NOTHING_PENDING
    assert requests(daemon) == []


async def test_a_model_parsed_request_confirmed_with_yes_is_placed_once(daemon, autojump_clock):
    await say(daemon, ALICE, "does joe's still have those cast iron skillets? 555-555-0142")
    await say(daemon, ALICE, "YES")
    got = daemon.messaging.fake.replies_to(ALICE)
    assert got[1].startswith("Calling +1 555-555-0142 now to ask if they have cast iron skillets in stock")
    assert got[2].startswith('They said: "')
    (row,) = requests(daemon)
    assert row.params["ask"] == "stock" and row.params["item"] == "cast iron skillets"
    await say(daemon, ALICE, "YES")  # a second yes finds nothing waiting
    assert dials(daemon) == 1


async def test_a_confirmation_lapses(daemon, autojump_clock, monkeypatch):
    clock = [1000.0]
    monkeypatch.setattr(daemon.messaging, "_clock", lambda: clock[0])
    await say(daemon, ALICE, "does joe's still have those cast iron skillets? 555-555-0142")
    clock[0] += daemon.settings.messaging_confirm_s + 1
    await say(daemon, ALICE, "yes")
    assert daemon.messaging.fake.replies_to(ALICE)[-1] == replies.NOTHING_PENDING and requests(daemon) == []


async def test_a_call_that_fails_is_answered_in_friendly_words(daemon, autojump_clock):
    daemon.messaging.scenario = "live_lost"  # GPT-Live goes away after the greeting: nothing was answered
    await say(daemon, ALICE, "hours +1 555 555 0142")
    (row,) = requests(daemon)
    assert row.result["status"] == "failed" and row.result["reason"] == "model_lost"
    last = daemon.messaging.fake.replies_to(ALICE)[-1]
    assert last == "Sorry, the call didn't work out, so I don't have an answer. Please try again in a few minutes."
    assert row.result["detail"] not in last and row.run_id not in last


async def test_a_business_that_hangs_up_is_reported_by_its_reason(daemon, autojump_clock):
    daemon.messaging.scenario = "far_party_mid_ask"  # the business hangs up before the question
    await say(daemon, ALICE, "hours +1 555 555 0142")
    (row,) = requests(daemon)
    assert (row.result["status"], row.result["reason"]) == ("no_answer", "hung_up_early")
    assert daemon.messaging.fake.replies_to(ALICE)[-1] == (
        "Someone at +1 555-555-0142 picked up, then hung up before I could ask. You might try again later.")


async def test_a_decline_is_answered_with_the_business_words(daemon, autojump_clock):
    daemon.messaging.scenario = "decline"
    await say(daemon, ALICE, "hours +1 555 555 0142")
    (row,) = requests(daemon)
    assert row.result["status"] == "declined" and row.result["evidence"]
    assert daemon.messaging.fake.replies_to(ALICE)[-1] == (
        f"They wouldn't tell me. Their words: \"{row.result['evidence'][0]['quote']}\"")


async def test_a_crash_inside_the_call_never_reaches_the_person(daemon, autojump_clock, monkeypatch):
    original = CallHandle._perform

    async def perform(self, effect):
        if effect.kind == "live.commentary":  # the opener: the call crashes before any verdict
            raise RuntimeError("injected fault at http://internal.invalid/ with CALLD_SECRET_THING")
        return await original(self, effect)

    monkeypatch.setattr(CallHandle, "_perform", perform)
    await say(daemon, ALICE, "hours +1 555 555 0142")
    got = daemon.messaging.fake.replies_to(ALICE)
    assert len(got) == 2
    for text in got:
        for leak in ("injected", "http", "CALLD_", "run_", "RuntimeError", "Traceback"):
            assert leak not in text


async def test_stop_silences_replies_help_explains_start_resumes(daemon, autojump_clock):
    fake = daemon.messaging.fake
    await say(daemon, ALICE, "HELP")
    assert fake.replies_to(ALICE) == [replies.HELP]
    await say(daemon, ALICE, "STOP")
    assert fake.replies_to(ALICE)[-1] == replies.STOPPED
    assert await daemon.messaging.store.opted_out(ALICE)
    await say(daemon, ALICE, "STOP")  # confirmed once only
    assert fake.replies_to(ALICE) == [replies.HELP, replies.STOPPED]
    await say(daemon, ALICE, "START")
    assert fake.replies_to(ALICE)[-1] == replies.STARTED and not await daemon.messaging.store.opted_out(ALICE)


@pytest.mark.parametrize("stop", ["STOP", "stop"])  # Linq itself opts out only on the exact-case keyword
async def test_a_stop_sent_during_a_call_drops_the_result_text(daemon, autojump_clock, stop):
    fake = daemon.messaging.fake
    async with trio.open_nursery() as n:
        n.start_soon(fake.text, ALICE, "hours +1 555 555 0142")
        await trio.sleep(3)  # the call is on
        assert daemon.lookup.calls()
        await fake.text(ALICE, stop)
    await daemon.messaging.wait_idle()
    got = fake.replies_to(ALICE)
    assert got[0].startswith("Calling") and got[-1] == replies.STOPPED and len(got) == 2
    (row,) = requests(daemon)
    assert row.result["status"] == "answered"  # the call itself finished; only the text was held back


async def test_calls_by_text_are_rate_limited_per_handle(daemon, autojump_clock):
    limit = daemon.settings.messaging_calls_per_hour
    for i in range(limit):
        await say(daemon, ALICE, f"hours +1 555 555 01{40 + i}")
    assert dials(daemon) == limit
    await say(daemon, ALICE, "hours +1 555 555 0199")
    assert daemon.messaging.fake.replies_to(ALICE)[-1] == replies.RATE_LIMITED
    assert dials(daemon) == limit


async def test_incomplete_and_unclear_texts_get_a_hint_and_no_call(daemon, autojump_clock):
    fake = daemon.messaging.fake
    await say(daemon, ALICE, "what are your hours")
    await say(daemon, ALICE, "book a table at 555 555 0142")
    await say(daemon, ALICE, "tell me a joke")
    got = fake.replies_to(ALICE)
    assert "Which number should I call?" in got[0]
    assert "How many people" in got[1]
    assert got[2] == replies.NOT_UNDERSTOOD
    assert requests(daemon) == []


async def test_a_linked_user_without_a_number_is_told_plainly(daemon, autojump_clock):
    async with ControlClient(daemon.settings.calld_socket) as c:
        row = await c.messaging_link("+15555550166", "bob", "Bob")
    assert row["note"] == "user bob has no number yet: run calld-ctl did provision --user bob"
    await say(daemon, "+15555550166", "hours +1 555 555 0142")
    assert daemon.messaging.fake.replies_to("+15555550166") == [replies.NOT_SET_UP]
    assert requests(daemon) == []


async def test_a_refusal_by_the_service_reaches_the_person_without_internals(daemon, autojump_clock, monkeypatch):
    async def refuse(request, scenario=None):
        raise DaemonError("refusing to dial: https://tunnel.invalid/health is unreachable; check PUBLIC_BASE_URL")
        yield {}

    monkeypatch.setattr(daemon.messaging, "_ask", refuse)
    await say(daemon, ALICE, "hours +1 555 555 0142")
    assert daemon.messaging.fake.replies_to(ALICE) == [replies.INVALID]


async def test_a_refusal_with_words_for_people_uses_them(daemon, autojump_clock, monkeypatch):
    class Closed(ValueError):
        user_text = "They're outside calling hours right now (it's 3:05 AM there). Try after 8 AM their time."

    async def refuse(request, scenario=None):
        raise Closed("outside CALLD_CALL_WINDOW")
        yield {}

    monkeypatch.setattr(daemon.messaging, "_ask", refuse)
    await say(daemon, ALICE, "hours +1 555 555 0142")
    assert daemon.messaging.fake.replies_to(ALICE) == [Closed.user_text]


async def test_a_reply_that_linq_refuses_at_first_is_sent_once_with_the_same_key(daemon, autojump_clock):
    fake = daemon.messaging.fake
    fake.fail_next(500, 503)
    await say(daemon, ALICE, "HELP")
    assert fake.replies_to(ALICE) == [replies.HELP]
    assert fake.requests["send"] == 3 and len(fake.sent) == 1


async def test_a_reply_whose_answer_was_lost_is_retried_and_still_reaches_the_person_once(daemon, autojump_clock):
    fake = daemon.messaging.fake
    fake.lose_next_answers(2)  # Linq sent it, but calld never heard so: it must retry with the same key
    await say(daemon, ALICE, "hours +1 555 555 0142")
    assert fake.requests["send"] == 4
    got = fake.replies_to(ALICE)
    assert len(got) == 2 and got[0].startswith("Calling") and got[1].startswith("They said")


async def test_a_flood_of_texts_gets_one_notice_then_silence(daemon, autojump_clock):
    limit = daemon.settings.messaging_texts_per_hour
    for _ in range(limit + 3):
        await say(daemon, ALICE, "tell me a joke")
    got = daemon.messaging.fake.replies_to(ALICE)
    assert got.count(replies.NOT_UNDERSTOOD) == limit and got.count(replies.TOO_MANY_TEXTS) == 1
    assert len(got) == limit + 1


async def test_messaging_link_list_unlink_through_calld_ctl(daemon, autojump_clock):
    sock = str(daemon.settings.calld_socket)

    # calld-ctl's own parser and verbs, run in this trio loop (a thread would race the autojump clock).
    async def ctl(*argv: str) -> str:
        args = build_parser().parse_args(["--socket", sock, *argv])
        out = io.StringIO()
        with redirect_stdout(out):
            assert await args.afunc(args) == 0
        return out.getvalue()

    out = await ctl("messaging", "link", "--user", "alice", "--handle", "+1 (555) 555-0155")
    assert "linked +15555550155 to user alice (calls on behalf of Alice)" in out
    out = await ctl("messaging", "list", "--json")
    assert {r["handle"] for r in json.loads(out)} == {ALICE, "+15555550155"}
    assert "+15555550155  alice" in await ctl("messaging", "list")
    assert "unlinked +15555550155" in await ctl("messaging", "unlink", "--handle", "+15555550155")
    with pytest.raises(ControlError) as info:
        await ctl("messaging", "unlink", "--handle", "+15555550155")
    assert info.value.status == 404 and "is not linked" in info.value.message
    with pytest.raises(ControlError) as info:
        await ctl("messaging", "link", "--user", "alice", "--handle", "not-a-number")
    assert info.value.status == 400 and "E.164" in info.value.message
    await say(daemon, "+15555550155", "hours +1 555 555 0142")
    assert daemon.messaging.fake.replies_to("+15555550155") == [replies.UNLINKED]


async def test_link_refuses_bad_input_and_writes_nothing(daemon, autojump_clock):
    async with ControlClient(daemon.settings.calld_socket) as c:
        for handle, user, name in (("4155550100", "alice", None), ("+15555550155", "Alice!", None), ("+15555550155", "alice", "R2-D2")):
            with pytest.raises(ControlError) as info:
                await c.messaging_link(handle, user, name)
            assert info.value.status == 400
        assert [r["handle"] for r in await c.messaging_links()] == [ALICE]


async def test_late_reconciled_messages_are_history_not_requests(daemon, autojump_clock, monkeypatch):
    fake = daemon.messaging.fake
    original = fake.message

    def late(handle, text):
        event_id, raw = original(handle, text)
        body = json.loads(raw)
        body["data"]["reconciled_at"] = "2026-11-30T10:05:00Z"
        return event_id, json.dumps(body).encode()

    monkeypatch.setattr(fake, "message", late)
    await say(daemon, ALICE, "hours +1 555 555 0142")
    assert fake.replies_to(ALICE) == [] and requests(daemon) == []


async def test_a_signed_body_that_is_not_a_text_is_refused_or_ignored_and_writes_nothing(daemon, autojump_clock):
    from calld.messaging.wire import sign_webhook
    from calld.stub.linq import http_post

    fake = daemon.messaging.fake
    garbage = b'{"event_type": "message.received", "data": {}}'
    assert await http_post(fake.webhook_url, garbage, sign_webhook(fake.secret, garbage, "evt-x")) == 400
    event_id, raw = fake.message(ALICE, "hours +1 555 555 0142")
    other = raw.replace(b'"message.received"', b'"message.read"')
    assert await http_post(fake.webhook_url, other, sign_webhook(fake.secret, other, event_id)) == 200
    await daemon.messaging.wait_idle()
    assert daemon._ledger.sync._db.execute("SELECT COUNT(*) FROM message_events").fetchone()[0] == 0
    assert fake.replies_to(ALICE) == [] and requests(daemon) == []


async def test_a_call_placed_by_text_still_gets_its_answer_out_when_the_daemon_shuts_down(daemon, autojump_clock):
    fake = daemon.messaging.fake
    async with trio.open_nursery() as n:
        n.start_soon(fake.text, ALICE, "hours +1 555 555 0142")
        await trio.sleep(3)
        assert daemon.lookup.calls()
        await daemon.shutdown(drain_s=60)  # the call finishes inside the drain
    got = fake.replies_to(ALICE)
    assert len(got) == 2 and got[1].startswith("They said")


async def test_a_text_while_the_daemon_drains_is_told_to_try_again(daemon, autojump_clock):
    daemon.accepting = False
    await say(daemon, ALICE, "hours +1 555 555 0142")
    assert daemon.messaging.fake.replies_to(ALICE) == [replies.RESTARTING] and requests(daemon) == []


LEAKS = re.compile(r"https?://|[A-Z]+_[A-Z_]+|\bHTTP\b|run_[0-9a-f]|v3:|Traceback|Error\(|\{|\binternal\b")


# One scripted business per status and reason they reach (every scenario was checked once; these cover
# each distinct outcome without running all of them on every test run).
_ASKS = {"hours": "hours", "stock": "is the cast iron skillet in stock at", "aisle": "which aisle is the WD-40 at",
         "decline": "hours", "dont_know": "hours", "far_party_after_ask": "hours", "far_party_mid_ask": "hours",
         "model_from_recording": "hours", "stall": "hours", "model_mislabels_refusal": "hours"}
_BOOKS = ("book_straight", "book_counter_outside", "book_full", "book_needs_card")


def _matrix() -> list[tuple[str, str]]:
    asks = [(name, f"{words} +1 555 555 0142") for name, words in _ASKS.items()]
    return asks + [(name, "book a table for 2 Friday 7pm at +1 555 555 0142, outdoor if possible") for name in _BOOKS]


@pytest.mark.parametrize(("scenario", "text"), _matrix())
async def test_every_scripted_outcome_is_told_in_plain_words(daemon, autojump_clock, scenario, text):
    daemon.messaging.scenario = scenario
    await say(daemon, ALICE, text)
    (row,) = requests(daemon)
    got = daemon.messaging.fake.replies_to(ALICE)
    assert len(got) == 2 and got[0].startswith("Calling +1 555-555-0142 now"), got
    reply, result = got[1], row.result
    assert not LEAKS.search(reply), (scenario, reply)
    assert row.run_id not in reply
    if result["status"] in ("failed", "no_answer"):
        assert (result.get("detail") or "\0") not in reply  # calld's own account of a failure stays in the ledger
    if result["status"] in ("answered", "declined") and result.get("evidence"):
        assert result["evidence"][0]["quote"] in reply, (scenario, reply)  # the business's own words


# -- texts while a call for the same person is on ---------------------------------------------------------


async def test_two_questions_in_one_text_are_answered_one_at_a_time_and_nothing_is_dialled(daemon, autojump_clock):
    await say(daemon, ALICE, "hours 555-555-0142 and is the skillet in stock")
    assert daemon.messaging.fake.replies_to(ALICE) == [
        "I can ask one thing per call. Send each question in its own text, e.g. \"hours +1 415 555 0142\"."]
    assert requests(daemon) == []


async def test_the_same_question_texted_again_during_its_call_does_not_dial_twice(daemon, autojump_clock):
    fake = daemon.messaging.fake
    async with trio.open_nursery() as n:
        n.start_soon(fake.text, ALICE, "hours +1 555 555 0142")
        await trio.sleep(3)
        assert daemon.lookup.calls()
        await fake.text(ALICE, "what time do they close? 555-555-0142")
    await daemon.messaging.wait_idle()
    got = fake.replies_to(ALICE)
    assert dials(daemon) == 1, got
    assert got[1] == "I'm already calling +1 555-555-0142 to ask their opening hours. I'll text you what they say."
    assert got[2] == 'They said: "We\'re open Monday through Friday, 9 AM to 5 PM."' and len(got) == 3
    await say(daemon, ALICE, "hours +1 555 555 0142")  # once it is over, asking again is a new call
    assert dials(daemon) == 2


async def test_results_of_calls_on_at_once_say_which_business_answered(daemon, autojump_clock):
    fake = daemon.messaging.fake
    async with trio.open_nursery() as n:
        n.start_soon(fake.text, ALICE, "hours +1 555 555 0142")
        await trio.sleep(3)
        n.start_soon(fake.text, ALICE, "is the cast iron skillet in stock at 555-555-0143")
    await daemon.messaging.wait_idle()
    got = fake.replies_to(ALICE)
    assert len(got) == 4 and dials(daemon) == 2
    results = got[2:]
    hours = next(t for t in results if "Monday through Friday" in t)
    stock = next(t for t in results if "shelf" in t)
    assert hours.startswith("+1 555-555-0142, opening hours: They said: \"")
    assert stock.startswith("+1 555-555-0143, cast iron skillet in stock: They said: \"")
    await say(daemon, ALICE, "hours +1 555 555 0144")  # a call on its own is told as before
    assert fake.replies_to(ALICE)[-1].startswith('They said: "')


# -- follow-ups: texts that name no number are about the last request ----------------------------------------


async def test_hours_on_another_day_are_answered_from_the_last_call_or_offered_as_a_call(daemon, autojump_clock):
    fake = daemon.messaging.fake
    await say(daemon, ALICE, "hours +1 555 555 0142")  # "We're open Monday through Friday, 9 AM to 5 PM."
    await say(daemon, ALICE, "what about Friday?")
    assert fake.replies_to(ALICE)[-1] == "From my call to +1 555-555-0142: on Friday they're open 9 AM to 5 PM."
    assert dials(daemon) == 1  # answered from the last result: no new call
    await say(daemon, ALICE, "and Sunday?")
    assert fake.replies_to(ALICE)[-1] == (
        "When I called +1 555-555-0142, they didn't tell me about Sunday. "
        "Reply YES and I'll call +1 555-555-0142 to ask their opening hours, or NO to skip.")
    assert dials(daemon) == 1
    await say(daemon, ALICE, "yes")  # the offer, taken: a call like any other
    got = fake.replies_to(ALICE)
    assert got[-2] == "Calling +1 555-555-0142 now to ask their opening hours. I'll text you what they say."
    assert got[-1].startswith('They said: "')
    assert dials(daemon) == 2 and [r.params["ask"] for r in requests(daemon)] == ["hours", "hours"]


async def test_their_hours_asked_again_are_told_from_the_last_call_with_no_new_call(daemon, autojump_clock, monkeypatch):
    from datetime import UTC, datetime

    monkeypatch.setattr(daemon.messaging, "_clock", lambda: datetime(2026, 12, 3, 15, 0, tzinfo=UTC).timestamp())  # a Thursday
    fake = daemon.messaging.fake
    await say(daemon, ALICE, "hours +1 555 555 0142")  # "We're open Monday through Friday, 9 AM to 5 PM."
    await say(daemon, ALICE, "what time do they close?")  # no day named: what they said
    reply = fake.replies_to(ALICE)[-1]
    assert reply.startswith('When I called +1 555-555-0142 about their hours: They said: "') and "Monday through Friday" in reply
    assert reply.endswith('Text "call them again" to ask afresh.')
    await say(daemon, ALICE, "and tomorrow?")  # a day: told like any day follow-up (UTC where no zone is known)
    assert fake.replies_to(ALICE)[-1] == "From my call to +1 555-555-0142: on Friday they're open 9 AM to 5 PM."
    assert dials(daemon) == 1


async def test_a_stock_question_with_no_number_asks_the_last_business(daemon, autojump_clock):
    fake = daemon.messaging.fake
    await say(daemon, ALICE, "hours +1 555 555 0142")
    await say(daemon, ALICE, "and do they have propane?")
    got = fake.replies_to(ALICE)
    assert got[2] == "Calling +1 555-555-0142 now to ask if they have propane in stock. I'll text you what they say."
    assert got[3].startswith('They said: "')
    newest = requests(daemon)[0]
    assert (newest.params["to"], newest.params["ask"], newest.params["item"]) == ("+15555550142", "stock", "propane")
    assert newest.params["name"] == "Nathan" and newest.user_id == "alice"


async def test_which_aisle_after_a_stock_answer_asks_for_the_same_item_at_the_same_business(daemon, autojump_clock):
    fake = daemon.messaging.fake
    await say(daemon, ALICE, "is the cast iron skillet in stock at 555-555-0142?")
    await say(daemon, ALICE, "which aisle is it in?")
    got = fake.replies_to(ALICE)
    assert got[2] == "Calling +1 555-555-0142 now to ask which aisle cast iron skillet is in. I'll text you what they say."
    assert got[3].startswith('They said: "')
    newest = requests(daemon)[0]
    assert (newest.params["to"], newest.params["ask"], newest.params["item"]) == ("+15555550142", "aisle", "cast iron skillet")


async def test_call_them_again_repeats_the_last_request_through_the_same_limits(daemon, autojump_clock):
    fake = daemon.messaging.fake
    await say(daemon, ALICE, "hours +1 555 555 0142")
    await say(daemon, ALICE, "call them again")
    got = fake.replies_to(ALICE)
    assert got[2] == "Calling +1 555-555-0142 now to ask their opening hours. I'll text you what they say."
    assert dials(daemon) == 2
    first, second = requests(daemon)[1], requests(daemon)[0]
    assert first.request_id != second.request_id  # a new request, not the old one's stored result
    assert {k: v for k, v in first.params.items()} == second.params
    # The number has had its calls for today (CALLD_CALLS_PER_NUMBER_PER_DAY): a third try is refused as any ask is.
    await say(daemon, ALICE, "try again")
    assert "already been called" in fake.replies_to(ALICE)[-1] and dials(daemon) == 2


async def test_a_follow_up_with_no_recent_request_says_what_to_send_and_calls_no_one(daemon, autojump_clock, monkeypatch):
    fake = daemon.messaging.fake
    clock = [1000.0]
    monkeypatch.setattr(daemon.messaging, "_clock", lambda: clock[0])
    await say(daemon, ALICE, "what about Sunday?")
    await say(daemon, ALICE, "call them again")
    await say(daemon, ALICE, "do they have propane?")
    assert fake.replies_to(ALICE) == [
        'Which number should I call? Send it with your request, e.g. "hours +1 415 555 0142".',
        'I don\'t have a recent request of yours to go on. Send the number with your question, e.g. "hours +1 415 555 0142".',
        'Which number should I call? Send it with your question, e.g. "is the propane in stock at +1 415 555 0142".',
    ]
    assert requests(daemon) == []
    await say(daemon, ALICE, "hours +1 555 555 0142")
    clock[0] += daemon.settings.messaging_followup_s + 1  # a day later: too old to be what they mean
    await say(daemon, ALICE, "call them again")
    assert fake.replies_to(ALICE)[-1].startswith("I don't have a recent request of yours") and dials(daemon) == 1


async def test_a_follow_up_that_names_no_item_gets_a_hint_and_no_call(daemon, autojump_clock):
    await say(daemon, ALICE, "hours +1 555 555 0142")
    await say(daemon, ALICE, "which aisle?")
    assert daemon.messaging.fake.replies_to(ALICE)[-1] == 'Which item do you mean? e.g. "which aisle is the WD-40 in?".'
    assert dials(daemon) == 1


async def test_a_table_booked_with_no_number_is_said_back_first_and_never_booked_twice(daemon, autojump_clock):
    fake = daemon.messaging.fake
    await say(daemon, ALICE, "hours +1 555 555 0142")
    await say(daemon, ALICE, "book a table for 2 Friday 7pm")
    assert fake.replies_to(ALICE)[-1] == (
        "Call +1 555-555-0142 and book a table for 2, Friday 7pm? Reply YES to call, or NO to skip.")
    assert dials(daemon) == 1  # the number was never in the text: nothing is booked before the YES
    await say(daemon, ALICE, "yes")
    assert fake.replies_to(ALICE)[-1].startswith("You're booked: a table for 2, ")
    assert [r.kind for r in requests(daemon)] == ["book", "ask"]
    await say(daemon, ALICE, "call them again")
    assert fake.replies_to(ALICE)[-1].startswith("You're already booked at +1 555-555-0142: a table for 2, ")
    assert dials(daemon) == 2


async def test_a_follow_up_from_an_unlinked_handle_gets_nothing_more(daemon, autojump_clock):
    await say(daemon, STRANGER, "hours +1 555 555 0142")
    await say(daemon, STRANGER, "call them again")
    assert daemon.messaging.fake.replies_to(STRANGER) == [replies.UNLINKED] and requests(daemon) == []
