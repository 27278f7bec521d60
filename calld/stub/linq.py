"""A fake Linq for stub mode and the simulator: signed webhooks in, sends recorded.

Inbound: `text(handle, words)` builds a `message.received` (webhook version 2026-02-03) from the
`fixtures/linq/message_received` shape, signs it with the line's Standard Webhooks secret, and
POSTs it to the daemon's webhook route, as Linq does. Knobs: deliver it twice, or sign it with
the wrong secret.

Outbound: an httpx handler for the Partner API calld uses (POST /v3/chats/{id}/messages,
POST|DELETE /v3/chats/{id}/typing). Like Linq, it sends a text once per idempotency key (a
repeat gets the first message back), refuses sends to a handle that texted STOP with 403 and
code 2024 unless `override_optout`, and can fail the next sends with a 5xx. It keeps the
conversation as both sides saw it, and counts every request it was sent.
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
import secrets
from collections import Counter
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from typing import Any, Literal

import httpx
from attrs import frozen

from calld.adapters.fixtures import load_fixture
from calld.messaging.wire import sign_webhook

Poster = Callable[[str, bytes, dict[str, str]], Awaitable[int]]
# Linq's opt-out keywords: the whole message, exact case, except OPT OUT in any casing (docs/linq.md).
_STOP_WORDS = {"STOP", "UNSUBSCRIBE", "OPTOUT", "CANCEL", "END", "QUIT"}
_OPT_OUT = re.compile(r"opt[\s-]?out", re.IGNORECASE)


@frozen
class Line:
    who: Literal["them", "calld"]
    handle: str
    text: str


def new_secret() -> str:
    return "whsec_" + base64.b64encode(secrets.token_bytes(24)).decode()


async def http_post(url: str, raw: bytes, headers: dict[str, str]) -> int:
    async with httpx.AsyncClient(timeout=10.0) as client:
        resp = await client.post(url, content=raw, headers={"content-type": "application/json", **headers})
        return resp.status_code


class FakeLinq:
    def __init__(self, secret: str | None = None, *, owner: str = "+15555550190", post: Poster = http_post) -> None:
        self.secret = secret or new_secret()
        self.owner = owner  # our line's number
        self.webhook_url: str | None = None
        self._post = post
        self.conversation: list[Line] = []
        self.sent: dict[str, dict[str, Any]] = {}  # idempotency key -> the message sent
        self.requests: Counter[str] = Counter()  # "send", "typing_start", "typing_stop"
        self.typing: list[tuple[str, str]] = []  # (chat id, "start" | "stop")
        self.opted_out: set[str] = set()
        self.statuses: list[int] = []  # what the daemon answered each webhook
        self.listeners: list[Callable[[Line], None]] = []
        self._fail_next: list[int] = []
        self._lose_answers = 0
        self._chats: dict[str, str] = {}  # chat id -> handle
        self._seq = 0

    # -- inbound ----------------------------------------------------------------------------------

    def chat_for(self, handle: str) -> str:
        chat = "chat-" + hashlib.sha256(handle.encode()).hexdigest()[:12]
        self._chats[chat] = handle
        return chat

    def message(self, handle: str, text: str) -> tuple[str, bytes]:
        """A message.received body as Linq sends it: (event id, raw JSON)."""
        self._seq += 1
        body = load_fixture("linq", "message_received")
        now = datetime.now(UTC).isoformat().replace("+00:00", "Z")
        body["event_id"] = f"evt-{secrets.token_hex(8)}"
        body["created_at"] = now
        data = body["data"]
        data["id"] = f"msg-{secrets.token_hex(8)}"
        data["sent_at"] = now
        data["sender_handle"]["handle"] = handle
        data["chat"]["id"] = self.chat_for(handle)
        data["chat"]["owner_handle"]["handle"] = self.owner
        data["parts"] = [{"type": "text", "value": text}]
        return body["event_id"], json.dumps(body).encode()

    async def text(self, handle: str, text: str, *, times: int = 1, secret: str | None = None, url: str | None = None) -> list[int]:
        """`handle` texts our line: the webhook is delivered `times` times (a redelivery keeps its id)."""
        target = url or self.webhook_url
        if target is None:
            raise RuntimeError("the fake Linq has no webhook URL to deliver to")
        self.conversation.append(line := Line("them", handle, text))
        self._tell(line)
        if text.strip() in _STOP_WORDS or _OPT_OUT.fullmatch(text.strip()):
            self.opted_out.add(handle)  # Linq marks the chat opted out itself
        else:
            self.opted_out.discard(handle)  # any other message opts them back in
        event_id, raw = self.message(handle, text)
        statuses = []
        for _ in range(times):
            headers = sign_webhook(secret or self.secret, raw, event_id)
            statuses.append(await self._post(target, raw, headers))
        self.statuses += statuses
        return statuses

    # -- outbound ---------------------------------------------------------------------------------

    def fail_next(self, *statuses: int) -> None:
        """The next sends answer these statuses (e.g. 500), in order, before acting."""
        self._fail_next += statuses

    def lose_next_answers(self, times: int = 1) -> None:
        """The next sends are acted on, but the answer is lost (a 504 from a proxy): calld must retry."""
        self._lose_answers += times

    def transport(self) -> httpx.MockTransport:
        return httpx.MockTransport(self.handle)

    def handle(self, request: httpx.Request) -> httpx.Response:
        path = request.url.path
        if m := re.fullmatch(r".*/v3/chats/([^/]+)/typing", path):
            self.requests["typing_start" if request.method == "POST" else "typing_stop"] += 1
            self.typing.append((m.group(1), "start" if request.method == "POST" else "stop"))
            return httpx.Response(204)
        if (m := re.fullmatch(r".*/v3/chats/([^/]+)/messages", path)) and request.method == "POST":
            self.requests["send"] += 1
            resp = self._send(m.group(1), json.loads(request.content))
            if self._lose_answers and resp.status_code == 200:
                self._lose_answers -= 1
                return httpx.Response(504, json={"error": {"status": 504, "code": 5040, "message": "gateway timeout"}})
            return resp
        return httpx.Response(404, json={"error": {"status": 404, "code": 4040, "message": "not found"}})

    def _send(self, chat_id: str, body: dict[str, Any]) -> httpx.Response:
        if self._fail_next:
            status = self._fail_next.pop(0)
            return httpx.Response(status, json={"error": {"status": status, "code": 5000, "message": "fault"}})
        handle = self._chats.get(chat_id)
        if handle is None:
            return httpx.Response(404, json={"error": {"status": 404, "code": 4041, "message": "chat not found"}})
        message = body["message"]
        key = message.get("idempotency_key")
        if key in self.sent:
            return httpx.Response(200, json=self.sent[key])
        if handle in self.opted_out and not body.get("override_optout"):
            return httpx.Response(403, json=load_fixture("linq", "error_403_opted_out"))
        text = "".join(p["value"] for p in message["parts"] if p["type"] == "text")
        answer = load_fixture("linq", "message_send_response")
        answer["chat_id"] = chat_id
        answer["message"]["id"] = f"msg-{secrets.token_hex(8)}"
        answer["message"]["parts"] = [{"type": "text", "value": text, "reactions": None}]
        if key is not None:
            self.sent[key] = answer
        self.conversation.append(line := Line("calld", handle, text))
        self._tell(line)
        return httpx.Response(200, json=answer)

    def _tell(self, line: Line) -> None:
        for listener in self.listeners:
            listener(line)

    def replies_to(self, handle: str) -> list[str]:
        return [line.text for line in self.conversation if line.who == "calld" and line.handle == handle]
