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

Each check-and-write runs inside the ledger's BEGIN IMMEDIATE.
"""

from __future__ import annotations

import json
import re
from typing import Any

from attrs import frozen

from calld.domain.ids import E164, FirstName, UserId
from calld.ledger import Ledger, _now
from calld.messaging.parse import AskIntent, BookIntent
from calld.messaging.wire import normalize_handle

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
    def __init__(self, ledger: Ledger) -> None:
        self._ledger = ledger
        self._db = ledger._db

    # -- links ------------------------------------------------------------------------------------

    def link(self, handle: str, user_id: str, name: str) -> Link:
        """Link (or re-link) a handle to a user; ValueError names what to fix."""
        handle = valid_handle(handle)
        user, first = UserId(user_id), FirstName(name)
        with self._ledger._write() as db:
            db.execute(
                "INSERT INTO message_links (handle, user_id, name, created_at) VALUES (?, ?, ?, ?)"
                " ON CONFLICT (handle) DO UPDATE SET user_id = excluded.user_id, name = excluded.name",
                (handle, user, first, _now()),
            )
        found = self.link_for(handle)
        assert found is not None
        return found

    def has_number(self, user_id: str) -> bool:
        row = self._ledger.did_row(UserId(user_id))
        return row is not None and row.status == "active"

    def unlink(self, handle: str) -> bool:
        with self._ledger._write() as db:
            return db.execute("DELETE FROM message_links WHERE handle = ?", (valid_handle(handle),)).rowcount > 0

    def link_for(self, handle: str) -> Link | None:
        r = self._db.execute("SELECT handle, user_id, name, created_at FROM message_links WHERE handle = ?", (normalize_handle(handle),)).fetchone()
        return None if r is None else Link(r["handle"], UserId(r["user_id"]), FirstName(r["name"]), r["created_at"])

    def links(self) -> list[Link]:
        rows = self._db.execute("SELECT handle, user_id, name, created_at FROM message_links ORDER BY user_id, handle")
        return [Link(r["handle"], UserId(r["user_id"]), FirstName(r["name"]), r["created_at"]) for r in rows]

    # -- events -----------------------------------------------------------------------------------

    def claim_event(self, event_id: str, *, message_id: str, handle: str, chat_id: str, at: float) -> bool:
        """True the first time an event id is seen (the row is written); False for a redelivery."""
        with self._ledger._write() as db:
            return db.execute(
                "INSERT INTO message_events (event_id, message_id, handle, chat_id, received_at) VALUES (?, ?, ?, ?, ?)"
                " ON CONFLICT (event_id) DO NOTHING",
                (event_id, message_id, handle, chat_id, at),
            ).rowcount > 0

    def set_outcome(self, event_id: str, outcome: str, request_id: str | None = None,
                    intent: AskIntent | BookIntent | None = None) -> None:
        """What came of a text; `intent` is the request it went to place (the sender's last request from now on)."""
        with self._ledger._write() as db:
            db.execute("UPDATE message_events SET outcome = ?, request_id = COALESCE(?, request_id),"
                       " intent = COALESCE(?, intent) WHERE event_id = ?",
                       (outcome, request_id, intent_json(intent) if intent is not None else None, event_id))

    def last_request(self, handle: str, since: float) -> LastRequest | None:
        """The handle's newest request texted at or after `since`, with its call's result (None while the
        call is on, or when the request was refused before a call)."""
        r = self._db.execute(
            "SELECT e.intent, e.request_id, e.received_at, q.result FROM message_events e"
            " LEFT JOIN requests q ON q.request_id = e.request_id"
            " WHERE e.handle = ? AND e.intent IS NOT NULL AND e.received_at >= ?"
            " ORDER BY e.received_at DESC, e.rowid DESC LIMIT 1",
            (handle, since),
        ).fetchone()
        if r is None:
            return None
        result = json.loads(r["result"]) if r["result"] is not None else None
        return LastRequest(intent_from_json(r["intent"]), r["request_id"], float(r["received_at"]), result)

    def outcome(self, event_id: str) -> str | None:
        r = self._db.execute("SELECT outcome FROM message_events WHERE event_id = ?", (event_id,)).fetchone()
        return None if r is None else r["outcome"]

    def count_since(self, handle: str, since: float, outcome: str | None = None) -> int:
        sql = "SELECT COUNT(*) FROM message_events WHERE handle = ? AND received_at >= ?"
        args: tuple[Any, ...] = (handle, since)
        if outcome is not None:
            sql += " AND outcome = ?"
            args += (outcome,)
        return int(self._db.execute(sql, args).fetchone()[0])

    # -- opt-outs ---------------------------------------------------------------------------------

    def opt_out(self, handle: str) -> bool:
        """Record an opt-out; True if it is new."""
        with self._ledger._write() as db:
            return db.execute("INSERT INTO message_optouts (handle, at) VALUES (?, ?) ON CONFLICT (handle) DO NOTHING",
                              (handle, _now())).rowcount > 0

    def opt_in(self, handle: str) -> bool:
        """Clear an opt-out; True if there was one."""
        with self._ledger._write() as db:
            return db.execute("DELETE FROM message_optouts WHERE handle = ?", (handle,)).rowcount > 0

    def opted_out(self, handle: str) -> bool:
        return self._db.execute("SELECT 1 FROM message_optouts WHERE handle = ?", (handle,)).fetchone() is not None

    # -- pending confirmations ----------------------------------------------------------------------

    def put_pending(self, handle: str, chat_id: str, message_id: str, intent: AskIntent | BookIntent, expires_at: float) -> None:
        with self._ledger._write() as db:
            db.execute(
                "INSERT INTO message_pending (handle, chat_id, message_id, intent, expires_at) VALUES (?, ?, ?, ?, ?)"
                " ON CONFLICT (handle) DO UPDATE SET chat_id = excluded.chat_id, message_id = excluded.message_id,"
                " intent = excluded.intent, expires_at = excluded.expires_at",
                (handle, chat_id, message_id, intent_json(intent), expires_at),
            )

    def take_pending(self, handle: str, now: float) -> Pending | None:
        """The handle's pending request, removed; None if there is none or it has lapsed."""
        with self._ledger._write() as db:
            r = db.execute("SELECT handle, chat_id, message_id, intent, expires_at FROM message_pending WHERE handle = ?", (handle,)).fetchone()
            if r is None:
                return None
            db.execute("DELETE FROM message_pending WHERE handle = ?", (handle,))
        if r["expires_at"] < now:
            return None
        return Pending(r["handle"], r["chat_id"], r["message_id"], intent_from_json(r["intent"]))
