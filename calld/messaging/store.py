"""What texting calld keeps in the ledger (migration 4 in calld.ledger): who may ask, what arrived,
who said STOP, and which model-parsed request waits for a YES.

- message_links: a sender handle (E.164 or an Apple ID email) -> a calld user and the first name
  calls are placed on behalf of. Only the operator writes it (calld-ctl messaging link|unlink).
- message_events: one row per Linq event id, written before anything is done about it, so a
  redelivered webhook is recognised and does nothing, across restarts too. Its outcome and
  time also count a handle's texts and calls for the rate limits.
- message_optouts: handles that texted STOP (until START, or any later message, as Linq does).
- message_pending: at most one request per handle waiting for YES, with when it lapses.
- message_events.intent (migration 7): the request a text asked for, written when it goes to be
  placed; with the request's row (calld.ledger's requests, by request id) it is the sender's last
  request and its result, which a follow-up that names no number is about.

Each method is one ledger transaction; the event id is message_events' key, so a redelivery is
recognised by whichever daemon it reaches.
"""

from __future__ import annotations

import json
import re
from typing import Any

from attrs import frozen

from calld.domain.ids import E164, FirstName, UserId
from calld.ledger import Ledger, MessageLinkRow
from calld.ledger.awaitable import AsyncLedger, awaitable
from calld.messaging.parse import AskIntent, BookIntent
from calld.messaging.wire import normalize_handle

# Outcomes of texts from handles linked to no user: those that got a reply (they count toward
# MESSAGING_UNLINKED_REPLIES_PER_HOUR), and the one that got none.
STRANGER_REPLIED = ("unlinked", "unlinked_help", "unlinked_start", "unlinked_flood")
UNLINKED_QUIET = "unlinked_quiet"

_EMAIL = re.compile(r"[^@\s]+@[^@\s]+\.[^@\s]+")


def valid_handle(handle: str) -> str:
    """A sender handle as Linq names it: an E.164 number or an email address; ValueError otherwise."""
    text = normalize_handle(handle)
    if "@" in text:
        if not _EMAIL.fullmatch(text) or len(text) > 254:
            raise ValueError(f"{handle!r} is not a phone number in E.164 form or an email address")
        return text
    try:
        return str(E164(text))
    except ValueError:
        raise ValueError(f"{handle!r} is not a phone number in E.164 form (e.g. +14155550100) or an email address") from None


@frozen
class Link:
    handle: str
    user_id: UserId
    name: FirstName
    created_at: str


@frozen
class LastRequest:
    """The sender's most recent request (what it asked, and when) and its call's result, if it has one yet."""

    intent: AskIntent | BookIntent
    request_id: str | None
    at: float
    result: dict[str, Any] | None


@frozen
class Pending:
    handle: str
    chat_id: str
    message_id: str  # the text that asked: the request id comes from it
    intent: AskIntent | BookIntent


def intent_json(intent: AskIntent | BookIntent) -> str:
    if isinstance(intent, AskIntent):
        return json.dumps({"kind": "ask", "to": intent.to, "ask": intent.ask, "item": intent.item})
    return json.dumps({"kind": "book", "to": intent.to, "party": intent.party, "time": intent.time, "notes": intent.notes})


def intent_from_json(text: str) -> AskIntent | BookIntent:
    data: dict[str, Any] = json.loads(text)
    if data.pop("kind") == "ask":
        return AskIntent(**data)
    return BookIntent(**data)


class MessagingStore:
    """Texting's view of the ledger: each method is one ledger transaction (calld.ledger's texting
    methods), on SQLite or PostgreSQL alike, awaited as the daemon awaits the ledger (calld.ledger.awaitable)."""

    def __init__(self, ledger: Ledger | AsyncLedger) -> None:
        self._ledger = awaitable(ledger)

    # -- links ------------------------------------------------------------------------------------

    async def link(self, handle: str, user_id: str, name: str) -> Link:
        """Link (or re-link) a handle to a user; ValueError names what to fix."""
        handle = valid_handle(handle)
        user, first = UserId(user_id), FirstName(name)
        return _link(await self._ledger.put_message_link(handle, user, first))

    async def has_number(self, user_id: str) -> bool:
        row = await self._ledger.did_row(UserId(user_id))
        return row is not None and row.status == "active"

    async def unlink(self, handle: str) -> bool:
        return await self._ledger.delete_message_link(valid_handle(handle))

    async def link_for(self, handle: str) -> Link | None:
        row = await self._ledger.message_link(normalize_handle(handle))
        return None if row is None else _link(row)

    async def links(self) -> list[Link]:
        return [_link(r) for r in await self._ledger.message_links()]

    # -- events -----------------------------------------------------------------------------------

    async def claim_event(self, event_id: str, *, message_id: str, handle: str, chat_id: str, at: float) -> bool:
        """True the first time an event id is seen (the row is written); False for a redelivery."""
        return await self._ledger.claim_message_event(event_id, message_id=message_id, handle=handle, chat_id=chat_id, at=at)

    async def set_outcome(self, event_id: str, outcome: str, request_id: str | None = None,
                    intent: AskIntent | BookIntent | None = None) -> None:
        """What came of a text; `intent` is the request it went to place (the sender's last request from now on)."""
        await self._ledger.set_message_outcome(event_id, outcome, request_id, intent_json(intent) if intent is not None else None)

    async def last_request(self, handle: str, since: float) -> LastRequest | None:
        """The handle's newest request texted at or after `since`, with its call's result (None while the
        call is on, or when the request was refused before a call)."""
        r = await self._ledger.last_message_request(handle, since)
        return None if r is None else LastRequest(intent_from_json(r.intent), r.request_id, r.received_at, r.result)

    async def outcome(self, event_id: str) -> str | None:
        return await self._ledger.message_outcome(event_id)

    async def count_since(self, handle: str, since: float, outcome: str | None = None) -> int:
        return await self._ledger.count_messages(handle, since, outcome)

    async def claim_stranger_reply(self, event_id: str, outcome: str, *, since: float, limit: int) -> bool:
        """Room for one more reply to a handle linked to no user (`limit` since `since`, across all of
        them): True with the event's outcome set to `outcome`, else False with it set to UNLINKED_QUIET."""
        return await self._ledger.claim_stranger_reply(event_id, outcome, replied=STRANGER_REPLIED, since=since,
                                                       limit=limit, quiet=UNLINKED_QUIET)

    # -- opt-outs ---------------------------------------------------------------------------------

    async def opt_out(self, handle: str) -> bool:
        """Record an opt-out; True if it is new."""
        return await self._ledger.add_message_opt_out(handle)

    async def opt_in(self, handle: str) -> bool:
        """Clear an opt-out; True if there was one."""
        return await self._ledger.remove_message_opt_out(handle)

    async def opted_out(self, handle: str) -> bool:
        return await self._ledger.message_opted_out(handle)

    # -- pending confirmations ----------------------------------------------------------------------

    async def put_pending(self, handle: str, chat_id: str, message_id: str, intent: AskIntent | BookIntent, expires_at: float) -> None:
        await self._ledger.put_message_pending(handle, chat_id, message_id, intent_json(intent), expires_at)

    async def take_pending(self, handle: str, now: float) -> Pending | None:
        """The handle's pending request, removed; None if there is none or it has lapsed."""
        r = await self._ledger.take_message_pending(handle)
        if r is None or r.expires_at < now:
            return None
        return Pending(r.handle, r.chat_id, r.message_id, intent_from_json(r.intent))


def _link(r: MessageLinkRow) -> Link:
    return Link(r.handle, UserId(r.user_id), FirstName(r.name), r.created_at)
