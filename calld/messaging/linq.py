"""The Linq port: send a text into a chat, show and clear the typing indicator (httpx, under trio).

Every send carries an idempotency key chosen by the caller from what the text answers (the
inbound message and the reply's slot), never from the attempt: a retry after a timeout, a
5xx or a 429 reuses it, so Linq sends the text once. Typing indicators are best effort (Linq
itself promises no delivery); their failures are logged, never raised.

The official SDK (`linq-python`) runs under trio too, but calld keeps vendor SDKs out of the
runtime, as with Telnyx and OpenAI: its types are the contract in tests instead
(tests/test_messaging_contracts.py), and its own retry layer would stack on this one.
"""

from __future__ import annotations

import logging
import math

import httpx
import trio

from calld.messaging.wire import error_code, send_body

log = logging.getLogger("calld.messaging")

OPTED_OUT_CODE = 2024  # 403: the recipient texted STOP; Linq refuses sends to them on every line
RETRY_STATUSES = frozenset({408, 409, 425, 429, 500, 502, 503, 504})
MAX_RETRY_AFTER_S = 30.0


class LinqSendError(RuntimeError):
    """Linq refused or never took a text. `status` and `code` are for the log, never for a person."""

    def __init__(self, message: str, *, status: int | None = None, code: int | str | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.code = code


class OptedOut(LinqSendError):
    """The recipient opted out (STOP); nothing was delivered."""


def open_linq_client(api_key: str, base_url: str, *, transport: httpx.AsyncBaseTransport | None = None) -> httpx.AsyncClient:
    """An httpx client for Linq's Partner API (`base_url` ends before `/v3`)."""
    return httpx.AsyncClient(
        base_url=base_url.rstrip("/"),
        headers={"Authorization": f"Bearer {api_key}", "Accept": "application/json"},
        timeout=httpx.Timeout(10.0),
        transport=transport,
    )


class LinqHttp:
    def __init__(self, client: httpx.AsyncClient, *, attempts: int = 4, backoff_s: float = 1.0) -> None:
        self._client = client
        self._attempts = attempts
        self._backoff_s = backoff_s

    async def send_text(self, chat_id: str, text: str, key: str, *, override_optout: bool = False) -> str:
        """Send `text` into the chat once, whatever the retries; returns Linq's message id.

        Raises OptedOut (the recipient said STOP), or LinqSendError once the attempts are spent
        or Linq refused the text for good (4xx).
        """
        body = send_body(text, key, override_optout=override_optout)
        path = f"/v3/chats/{chat_id}/messages"
        for attempt in range(1, self._attempts + 1):
            delay = self._backoff_s * 2 ** (attempt - 1)
            try:
                resp = await self._client.post(path, json=body)
            except httpx.TransportError as exc:
                problem: LinqSendError = LinqSendError(f"Linq unreachable: {exc.__class__.__name__}")
            else:
                if resp.status_code in (200, 201, 202):
                    try:
                        return str(resp.json()["message"]["id"])
                    except (ValueError, KeyError, TypeError):
                        return ""  # sent; the answer's shape is Linq's business (docs/linq.md)
                code = error_code(resp.content)
                if resp.status_code == 403 and code in (OPTED_OUT_CODE, str(OPTED_OUT_CODE)):
                    raise OptedOut("the recipient opted out", status=403, code=code)
                problem = LinqSendError(f"Linq answered {resp.status_code} (code {code})", status=resp.status_code, code=code)
                if resp.status_code not in RETRY_STATUSES:
                    raise problem
                delay = max(delay, _retry_after(resp))
            if attempt == self._attempts:
                raise problem
            log.warning("linq send %s attempt %d failed (%s); retrying in %.1f s with the same key", key, attempt, problem, delay)
            await trio.sleep(delay)
        raise AssertionError("unreachable")

    async def start_typing(self, chat_id: str) -> None:
        await self._typing("POST", chat_id)

    async def stop_typing(self, chat_id: str) -> None:
        await self._typing("DELETE", chat_id)

    async def _typing(self, method: str, chat_id: str) -> None:
        try:
            resp = await self._client.request(method, f"/v3/chats/{chat_id}/typing", headers={"Accept": "*/*"})
        except httpx.TransportError as exc:
            log.info("linq typing %s for %s failed: %s", method, chat_id, exc.__class__.__name__)
            return
        if resp.status_code >= 300:
            log.info("linq typing %s for %s answered %d", method, chat_id, resp.status_code)


def _retry_after(resp: httpx.Response) -> float:
    try:
        value = float(resp.headers.get("retry-after", "0"))
    except ValueError:
        return 0.0
    return min(value, MAX_RETRY_AFTER_S) if math.isfinite(value) and value > 0 else 0.0
