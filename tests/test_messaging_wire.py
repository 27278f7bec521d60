"""Linq on the wire: reading webhooks, and the send client's retries, keys and refusals (autojump clock)."""

from __future__ import annotations

import json

import httpx
import pytest
import trio

from calld.adapters.fixtures import load_fixture
from calld.messaging.linq import LinqHttp, LinqSendError, OptedOut
from calld.messaging.wire import Ignored, InboundText, LinqWireError, error_code, parse_webhook
from calld.stub.linq import FakeLinq


def body(**changes) -> bytes:
    data = load_fixture("linq", "message_received")
    for path, value in changes.items():
        target = data
        keys = path.split("__")
        for key in keys[:-1]:
            target = target[key]
        target[keys[-1]] = value
    return json.dumps(data).encode()


def test_a_received_text_is_read_into_what_calld_needs():
    got = parse_webhook(body())
    assert got == InboundText(
        event_id="8d0b6c0e-4a4f-4f7e-9d37-6a1f1c2b0a11", message_id="msg-7a4c1d2e-0001", chat_id="chat-5c9d8e7f",
        handle="+15555550177", text="hours +1 555 555 0142", service="iMessage", late=False,
    )


def test_text_parts_are_joined_and_media_parts_skipped_and_emails_folded():
    parts = [{"type": "media", "url": "https://x.invalid/a.jpg"}, {"type": "text", "value": " hours "}, {"type": "text", "value": "+15555550142"}]
    got = parse_webhook(body(data__parts=parts, data__sender_handle__handle="Alice@Example.com"))
    assert isinstance(got, InboundText) and got.text == "hours\n+15555550142" and got.handle == "alice@example.com"


@pytest.mark.parametrize(
    ("changes", "why"),
    [
        ({"event_type": "message.delivered"}, "event type message.delivered"),
        ({"data__direction": "outbound"}, "our own message"),
        ({"data__sender_handle__is_me": True}, "our own message"),
        ({"data__chat__is_group": True}, "a group chat"),
    ],
)
def test_what_calld_does_not_handle_is_ignored_not_refused(changes, why):
    got = parse_webhook(body(**changes))
    assert isinstance(got, Ignored) and got.why == why


@pytest.mark.parametrize(
    ("raw", "says"),
    [
        (b"not json", "not a Linq webhook"),
        (json.dumps({"event_type": "message.received"}).encode(), "event_id"),
        (body(webhook_version="2025-01-01"), "?version=2026-02-03"),
        (body(data__chat={"is_group": False}), "chat.id"),
        (body(data__direction="sideways"), "direction"),
    ],
)
def test_a_body_calld_cannot_read_is_refused_with_what_is_wrong(raw, says):
    with pytest.raises(LinqWireError) as info:
        parse_webhook(raw)
    assert says in str(info.value)


def test_error_codes_are_read_from_linq_error_bodies():
    assert error_code(json.dumps(load_fixture("linq", "error_403_opted_out")).encode()) == 2024
    assert error_code(b'{"code": "2024"}') == "2024"
    assert error_code(b"<html>") is None


# -- sending ---------------------------------------------------------------------------------------------

HANDLE = "+15555550177"


async def open_fake() -> tuple[FakeLinq, httpx.AsyncClient, str]:
    fake = FakeLinq()
    client = httpx.AsyncClient(transport=fake.transport(), base_url="https://linq.invalid/api/partner")
    return fake, client, fake.chat_for(HANDLE)


async def test_a_failed_send_is_retried_with_the_same_key_and_delivered_once(autojump_clock):
    fake, client, chat = await open_fake()
    fake.fail_next(500, 503, 429)
    async with client:
        start = trio.current_time()
        await LinqHttp(client, attempts=4, backoff_s=1.0).send_text(chat, "hello", "key-1")
    assert fake.requests["send"] == 4 and fake.replies_to(HANDLE) == ["hello"]
    assert trio.current_time() - start == pytest.approx(1 + 2 + 4)  # backoff between attempts


async def test_a_429_waits_as_long_as_linq_asks(autojump_clock):
    calls: list[float] = []

    def handler(request: httpx.Request) -> httpx.Response:
        calls.append(trio.current_time())
        if len(calls) == 1:
            return httpx.Response(429, headers={"retry-after": "7"}, json={"error": {"code": 429}})
        return httpx.Response(200, json=load_fixture("linq", "message_send_response"))

    async with httpx.AsyncClient(transport=httpx.MockTransport(handler), base_url="https://l.invalid") as client:
        await LinqHttp(client, backoff_s=1.0).send_text("chat", "hi", "k")
    assert calls[1] - calls[0] == pytest.approx(7)


async def test_sends_run_out_of_attempts_and_say_so(autojump_clock):
    fake, client, chat = await open_fake()
    fake.fail_next(500, 500, 500)
    async with client:
        with pytest.raises(LinqSendError) as info:
            await LinqHttp(client, attempts=3).send_text(chat, "hello", "k")
    assert info.value.status == 500 and fake.replies_to(HANDLE) == []


async def test_a_refusal_is_not_retried_and_an_opt_out_is_told_apart(autojump_clock):
    fake, client, chat = await open_fake()
    fake.opted_out.add(HANDLE)
    async with client:
        linq = LinqHttp(client)
        with pytest.raises(OptedOut):
            await linq.send_text(chat, "hello", "k1")
        assert fake.requests["send"] == 1
        await linq.send_text(chat, "bye", "k2", override_optout=True)  # one confirmation may still go
        with pytest.raises(LinqSendError) as info:
            await linq.send_text("chat-unknown", "hello", "k3")
    assert info.value.status == 404 and fake.requests["send"] == 3
    assert fake.replies_to(HANDLE) == ["bye"]


async def test_a_connection_that_drops_is_retried(autojump_clock):
    attempts: list[int] = []

    def handler(request: httpx.Request) -> httpx.Response:
        attempts.append(1)
        if len(attempts) < 3:
            raise httpx.ConnectError("reset", request=request)
        assert json.loads(request.content)["message"]["idempotency_key"] == "same"
        return httpx.Response(200, json=load_fixture("linq", "message_send_response"))

    async with httpx.AsyncClient(transport=httpx.MockTransport(handler), base_url="https://l.invalid") as client:
        assert await LinqHttp(client).send_text("chat", "hi", "same") == "msg-7a4c1d2e-0003"
    assert len(attempts) == 3


async def test_typing_is_best_effort(autojump_clock):
    def handler(request: httpx.Request) -> httpx.Response:
        if request.method == "DELETE":
            raise httpx.ConnectError("down", request=request)
        return httpx.Response(500)

    async with httpx.AsyncClient(transport=httpx.MockTransport(handler), base_url="https://l.invalid") as client:
        await LinqHttp(client).start_typing("chat")
        await LinqHttp(client).stop_typing("chat")  # neither raises


def test_linq_keys_can_come_from_systemd_credentials(tmp_path):
    from calld.daemon.systemd import load_credentials

    (tmp_path / "linq_api_key").write_text("KEY-linq\n")
    (tmp_path / "linq_webhook_secret").write_text("whsec_QUJDREVGR0hJSktMTU5PUA==\n")
    assert load_credentials({"CREDENTIALS_DIRECTORY": str(tmp_path)}) == {
        "LINQ_API_KEY": "KEY-linq", "LINQ_WEBHOOK_SECRET": "whsec_QUJDREVGR0hJSktMTU5PUA=="}


def test_the_linq_secrets_never_reach_an_artifact():
    from calld.settings import load_settings

    settings = load_settings(linq_api_key="KEY-linq", linq_webhook_secret="whsec_QUJD", _env_file=None)
    assert {"KEY-linq", "whsec_QUJD"} <= set(settings.secrets())


async def test_the_store_finds_a_handle_s_last_request_and_its_result_within_the_window(ledger_target):
    from calld.ledger import Ledger
    from calld.messaging.parse import AskIntent
    from calld.messaging.store import MessagingStore

    ledger = Ledger(ledger_target)
    store = MessagingStore(ledger)
    hours, stock = AskIntent("+15555550142", "hours"), AskIntent("+15555550143", "stock", "rope")
    for n, (handle, at) in enumerate((("+15555550177", 100.0), ("+15555550177", 200.0), ("+15555550188", 300.0), ("+15555550177", 400.0))):
        await store.claim_event(f"evt-{n}", message_id=f"msg-{n}", handle=handle, chat_id="chat", at=at)
    await store.set_outcome("evt-0", "call", "txt_msg-0", intent=hours)
    await store.set_outcome("evt-1", "call", "txt_msg-1", intent=stock)
    await store.set_outcome("evt-2", "call", "txt_msg-2", intent=hours)  # another sender's
    await store.set_outcome("evt-3", "not_understood")  # a text that asked for nothing is no request
    assert await store.last_request("+15555550177", 0.0) == await store.last_request("+15555550177", 150.0)
    last = await store.last_request("+15555550177", 0.0)
    assert last is not None and (last.intent, last.request_id, last.at, last.result) == (stock, "txt_msg-1", 200.0, None)
    assert await store.last_request("+15555550177", 201.0) is None  # too long ago
    ledger.claim_request("txt_msg-1", user_id="alice", kind="ask", params={"to": stock.to}, run_id="run_" + "1" * 20)
    ledger.finish_request("txt_msg-1", {"status": "answered", "answer_text": "Yes."})
    last = await store.last_request("+15555550177", 0.0)
    assert last is not None and last.result == {"status": "answered", "answer_text": "Yes."}
    ledger.close()
