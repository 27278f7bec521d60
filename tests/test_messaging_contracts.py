"""Contract tests for texting: what calld sends to and accepts from Linq, and what it sends to and reads
from the OpenAI Responses API, against the official SDKs' own types (`linq-python` and `openai`, both
development dependencies only). Strict: no key the SDK does not declare, at any depth."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import httpx
import linq
import linq.types as linq_types
import openai.types.responses as openai_responses
import pydantic
import pytest
from linq.types.chats import MessageSendParams, MessageSendResponse
from openai.types.responses.response_create_params import ResponseCreateParamsNonStreaming

from calld.adapters.fixtures import load_fixture
from calld.messaging.linq import LinqHttp
from calld.messaging.model import request_body
from calld.messaging.wire import InboundText, LinqSignatureError, WebhookVerifier, parse_webhook, send_body, sign_webhook
from calld.stub.linq import FakeLinq, new_secret
from calld.stub.text_model import ScriptedResponses
from tests.test_contracts import strict_model, strict_param

SDK_MODELS = {"message_received": linq_types.MessageReceivedWebhookEvent, "message_sent_event": linq_types.MessageSentWebhookEvent}


@pytest.mark.parametrize("name", sorted(SDK_MODELS))
def test_webhook_fixture_is_the_sdk_webhook_event(name):
    event = strict_model(SDK_MODELS[name], load_fixture("linq", name))
    assert event.webhook_version == "2026-02-03"


def test_what_the_fake_linq_posts_is_a_sdk_message_received_event():
    _, raw = FakeLinq().message("+15555550177", "hours +15555550142")
    event = strict_model(linq_types.MessageReceivedWebhookEvent, raw)
    parsed = parse_webhook(raw)
    assert isinstance(parsed, InboundText)
    # calld reads the fields the SDK names: the same ids, chat, sender and text.
    assert (parsed.event_id, parsed.message_id, parsed.chat_id) == (event.event_id, event.data.id, event.data.chat.id)
    assert parsed.handle == event.data.sender_handle.handle and parsed.text == event.data.parts[0].value


def test_the_sdk_union_names_the_event_types_calld_tells_apart():
    names = set(linq_types.WebhookEventType.__args__)  # type: ignore[attr-defined]
    assert {"message.received", "message.sent"} <= names


@pytest.mark.parametrize("override", [False, True])
def test_the_send_body_is_the_sdk_send_params(override):
    body = send_body("They said: \"open 9 to 5\"", "calld:txt_msg-1:result", override_optout=override)
    checked = strict_param(MessageSendParams, body)
    assert checked["message"]["idempotency_key"] == "calld:txt_msg-1:result"
    assert checked.get("override_optout", False) is override


def test_the_send_body_check_catches_a_typo():
    body = send_body("hi", "k")
    body["message"]["idempotencyKey"] = body["message"].pop("idempotency_key")
    with pytest.raises(pydantic.ValidationError, match="idempotencyKey"):
        strict_param(MessageSendParams, body)


def test_calld_sends_what_the_sdk_sends_for_the_same_message():
    seen: list[bytes] = []

    def record(request: httpx.Request) -> httpx.Response:
        seen.append(request.content)
        return httpx.Response(200, json=load_fixture("linq", "message_send_response"))

    sdk = linq.LinqAPIV3(api_key="k", base_url="https://linq.invalid/api/partner", max_retries=0,
                         http_client=httpx.Client(transport=httpx.MockTransport(record)))
    sdk.chats.messages.send("chat-1", message={"parts": [{"type": "text", "value": "hi"}], "idempotency_key": "k1"})
    assert json.loads(seen[0]) == send_body("hi", "k1")


def test_the_send_response_and_the_fake_linq_answers_are_sdk_send_responses():
    strict_model(MessageSendResponse, load_fixture("linq", "message_send_response"), tolerated=frozenset())
    fake = FakeLinq()
    chat = fake.chat_for("+15555550177")
    resp = fake.handle(httpx.Request("POST", f"https://x/api/partner/v3/chats/{chat}/messages", json=send_body("hi", "k")))
    assert resp.status_code == 200
    strict_model(MessageSendResponse, resp.content)


async def test_the_sdk_client_runs_against_the_fake_linq_as_against_linq():
    fake = FakeLinq()
    chat = fake.chat_for("+15555550177")
    sdk = linq.AsyncLinqAPIV3(api_key="k", base_url="https://linq.invalid/api/partner", max_retries=0,
                              http_client=httpx.AsyncClient(transport=fake.transport()))
    sent = await sdk.chats.messages.send(chat, message={"parts": [{"type": "text", "value": "hello"}], "idempotency_key": "a"})
    await sdk.chats.typing.start(chat)
    await sdk.chats.typing.stop(chat)
    assert sent.chat_id == chat and fake.replies_to("+15555550177") == ["hello"]
    assert fake.typing == [(chat, "start"), (chat, "stop")]
    async with httpx.AsyncClient(transport=fake.transport(), base_url="https://linq.invalid/api/partner") as client:
        await LinqHttp(client).send_text(chat, "hello", "a")  # the same key: Linq sends it once
    assert fake.replies_to("+15555550177") == ["hello"]
    await sdk.close()


def _signed(secret: str, *, when: datetime | None = None) -> tuple[bytes, dict[str, str]]:
    event_id, raw = FakeLinq(secret).message("+15555550177", "hours +15555550142")
    return raw, sign_webhook(secret, raw, event_id, when)


@pytest.mark.parametrize(
    "case",
    ["good", "other_secret", "tampered", "old", "future", "missing", "garbled"],
)
def test_calld_and_the_sdk_agree_on_every_signature(case):
    secret = new_secret()
    raw, headers = _signed(secret)
    if case == "other_secret":
        raw, headers = _signed(new_secret())
    elif case == "tampered":
        raw = raw.replace(b"hours", b"HOURS")
    elif case == "old":
        raw, headers = _signed(secret, when=datetime.now(UTC) - timedelta(minutes=6))
    elif case == "future":
        raw, headers = _signed(secret, when=datetime.now(UTC) + timedelta(minutes=6))
    elif case == "missing":
        headers.pop("webhook-signature")
    elif case == "garbled":
        headers["webhook-signature"] = "v1 no comma"
    sdk = linq.LinqAPIV3(api_key="k", webhook_secret=secret)
    try:
        sdk.webhooks.unwrap(raw.decode(), headers=headers)
        sdk_ok = True
    except Exception:  # noqa: BLE001 - the SDK raises whatever standardwebhooks raises
        sdk_ok = False
    try:
        WebhookVerifier(secret).verify(raw, headers)
        ours = True
    except LinqSignatureError:
        ours = False
    assert ours is sdk_ok is (case == "good")


# -- the OpenAI Responses API, for texts the parser does not know -----------------------------------------


def test_the_model_request_is_a_sdk_response_create_params():
    body = request_body("does joe's still have skillets? 4155550142", model="gpt-5.5", effort="low")
    strict_param(ResponseCreateParamsNonStreaming, body)


def test_the_model_answer_fixture_and_the_scripted_fake_are_sdk_responses():
    strict_model(openai_responses.Response, load_fixture("openai", "responses_intent"))
    fake = ScriptedResponses()
    body = request_body("does joe's still have skillets? 4155550142", model="gpt-5.5", effort="low")
    resp = fake.handle(httpx.Request("POST", "https://api.openai.com/v1/responses", json=body))
    parsed = strict_model(openai_responses.Response, resp.content)
    assert json.loads(parsed.output_text)["kind"] == "ask"  # the SDK reads the same text calld reads
