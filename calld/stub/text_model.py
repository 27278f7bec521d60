"""A scripted stand-in for the OpenAI Responses API, for stub mode and the simulator.

It answers POST /v1/responses the way the live API does (the `fixtures/openai/responses_intent`
shape, the intent as structured-output JSON text), so calld's own request and response code runs.
What it extracts comes from a short script of phrasings the deterministic parser does not know;
anything else is kind "none", as a careful model would answer.
"""

from __future__ import annotations

import json
import re
from typing import Any

import httpx

from calld.adapters.fixtures import load_fixture
from calld.messaging.parse import find_numbers

# (pattern, kind, question): the item, where the question takes one, is the pattern's `item` group.
SCRIPT: tuple[tuple[re.Pattern[str], str, str | None], ...] = (
    (re.compile(r"\b(?:still\s+)?(?:has|have|got|carry|carries|sell|sells)\s+(?:those\s+|these\s+|the\s+|any\s+|some\s+)?"
                r"(?P<item>[a-z][a-z0-9' -]*?)\s*(?:\?|,|\.|$|\bat\b|\bleft\b|\bin\b)", re.IGNORECASE), "ask", "stock"),
    (re.compile(r"\b(?:shut|lock up|knock off|until when)\b", re.IGNORECASE), "ask", "hours"),
)


def scripted_intent(text: str) -> dict[str, Any]:
    none = {"kind": "none", "to": None, "ask": None, "item": None, "party": None, "time": None, "notes": None}
    numbers = find_numbers(text)
    if len(numbers) != 1:
        return none
    for pattern, kind, question in SCRIPT:
        if m := pattern.search(text):
            item = m.groupdict().get("item")
            return {**none, "kind": kind, "to": numbers[0][1], "ask": question, "item": item.strip() if item else None}
    return none


class ScriptedResponses:
    """The fake API: an httpx handler (MockTransport in stub mode, the simulator's REST app live)."""

    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []

    def transport(self) -> httpx.MockTransport:
        return httpx.MockTransport(self.handle)

    def handle(self, request: httpx.Request) -> httpx.Response:
        if request.method != "POST" or not request.url.path.endswith("/responses"):
            return httpx.Response(404, json={"error": {"message": "no such route", "type": "invalid_request_error"}})
        body = json.loads(request.content)
        self.requests.append(body)
        text = body["input"][0]["content"][0]["text"]
        answer = load_fixture("openai", "responses_intent")
        answer["model"] = body.get("model", answer["model"])
        answer["output"][-1]["content"][0]["text"] = json.dumps(scripted_intent(text))
        return httpx.Response(200, json=answer)
