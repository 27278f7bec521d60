"""call_report.json: the timed account of one call, and its redacted twin.

A pydantic model because it is an artifact other tools read (verify, `calld-ctl show`).
"""

from __future__ import annotations

import hashlib
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from calld.domain.status import Status, VerdictSource
from calld.ops.redaction import Pseudonyms, name_words, scrub

ARTIFACT_NAMES = (
    "dial.json",
    "session_start.json",
    "events.jsonl",
    "transcript.json",
    "task.json",
    "audio/inbound.wav",
    "audio/outbound.wav",
    "hangup.json",
    "result.json",
    "call_report.json",
    "call_report.redacted.json",
)


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Transition(_Model):
    state: str
    t_ms: int


class HangupInfo(_Model):
    via: str | None  # the hangup calld sent; when it sent none, why none was needed (far_party, not_connected)
    sent: bool = False  # calld sent a hangup (one command id, however many tries: calld.runtime.hangup)
    confirmed: bool | None
    requested_at_ms: int | None
    telnyx_result: str | None  # requested | already_ended | error text (the last try's)
    tries: int = 0
    # How the hangup ended (calld.runtime.hangup.Line): hung_up, already_ended, down, may_be_up, no_call;
    # unknown when calld was stopped while trying; None when none was sent.
    line: str | None = None
    line_detail: str | None = None
    cause: str | None
    source: str | None
    sip_cause: str | None


class HoldInfo(_Model):
    """One wait on hold: when it began and ended (ms from the call's start), what put us on hold, how it ended."""

    cue: str
    start_ms: int
    end_ms: int | None
    ended: str  # returned (a person came back) | timeout | call_ended


class MediaInfo(_Model):
    encoding: str | None
    sample_rate: int | None
    byte_order: str
    resampled: bool


class BookingInfo(_Model):
    """What a booking call asked for, and what the business asked that the request did not answer."""

    party: int
    time: str
    notes: str | None
    window_minutes: int
    callback: str  # the user's own number, given when the business asks how to reach them
    unanswered_questions: list[str]
    # As the daemon dialled it (BookJob.when, .today): verify checks the record against the same request.
    when: str | None = None
    today: str | None = None


class CallReport(_Model):
    run_id: str
    call_control_id: str | None
    artifact_prefix: str
    user_id: str
    to: str
    from_did: str
    first_name: str
    job: Literal["quick_ask", "book"] = "quick_ask"
    question: str | None  # the quick ask's question; None for a booking
    item: str | None
    booking: BookingInfo | None = None
    status: Status
    reason: str | None  # the status's reason code (calld.domain.status)
    detail: str | None
    answer_text: str | None
    evidence: list[dict[str, Any]]  # the business's words behind the result (result.json's evidence)
    refused_records: list[dict[str, str]]  # records the evidence gate turned back, and why
    verdict_source: VerdictSource
    transcript_verdict: str | None
    failure: str | None
    audio_incomplete: str | None = None  # result.json's: the recording stopped at a failed write
    reason: str | None = None  # the reason code for no_answer and failed (README: status and reasons)
    holds: list[HoldInfo] = []
    started_at: str
    duration_ms: int
    timing_ms: dict[str, list[Transition]]
    final_mark_echo_ms: int | None
    hangup: HangupInfo
    media: MediaInfo
    counts: dict[str, int]
    tools: list[str]
    ignored_events: int
    refs: dict[str, str]


def _mask_number(n: str) -> str:
    return n[:2] + "*" * max(len(n) - 4, 0) + n[-2:] if len(n) > 4 else "*" * len(n)


# Ids, times and refs: structure, not free text (the ids are replaced above, the refs follow them).
_NOT_FREE_TEXT = frozenset({"run_id", "call_control_id", "artifact_prefix", "refs", "started_at", "timing_ms", "to", "from_did"})


def _scrubbed(value: Any, names: list[str], done: dict[str, str]) -> Any:
    """`value` with every string scrubbed; `done`: the strings scrubbed so far (a report says its answer twice)."""
    if isinstance(value, str):
        if (scrubbed := done.get(value)) is None:
            scrubbed = done[value] = scrub(value, names)
        return scrubbed
    if isinstance(value, list):
        return [_scrubbed(v, names, done) for v in value]
    if isinstance(value, dict):
        return {k: _scrubbed(v, names, done) for k, v in value.items()}
    return value


# Free text the user wrote: dropped from the shareable copy (its length and a keyed hash stay), since
# no scrubbing can find every name or number in it. The booking's own fields are listed in redact.
_USER_WRITTEN = ("first_name", "item")
_USER_WRITTEN_BOOKING = ("notes", "time")


def redact(report: CallReport, pseudonyms: Pseudonyms, dumped: dict[str, Any] | None = None) -> dict[str, Any]:
    """Shareable: numbers masked, the call id replaced, the user id a keyed stand-in, every free-text
    field the user wrote (the first name, the item, booking notes and time) dropped for its length and
    a keyed hash, and every other free-text field (the answer, the evidence, details) with its phone
    numbers and the call's known names taken out. `dumped`: the report's `model_dump(mode="json")`
    when the caller has it (it is not changed)."""
    data = dict(dumped) if dumped is not None else report.model_dump(mode="json")
    data["to"] = _mask_number(report.to)
    data["from_did"] = _mask_number(report.from_did)
    data["user_id"] = pseudonyms.user(report.user_id)
    if report.booking is not None:
        data["booking"] = {**data["booking"], "callback": _mask_number(report.booking.callback)}
    if report.call_control_id:
        hashed = "sha256:" + hashlib.sha256(report.call_control_id.encode()).hexdigest()[:16]
        data["call_control_id"] = hashed
        # The artifact directory is named after the call id: its name would give the id away.
        prefix = report.artifact_prefix
        data["artifact_prefix"] = hashed
        data["refs"] = {name: hashed + ref[len(prefix):] if ref.startswith(prefix) else ref for name, ref in report.refs.items()}
    names = name_words(report.first_name, report.user_id)
    done: dict[str, str] = {}
    data = {k: v if k in _NOT_FREE_TEXT or k in ("user_id", *_USER_WRITTEN) else _scrubbed(v, names, done) for k, v in data.items()}
    # After the scrub, from the report itself: the hash is of the words as written, and never scrubbed.
    for key in _USER_WRITTEN:
        if isinstance(value := getattr(report, key), str):
            data[key] = pseudonyms.text(value)
    if report.booking is not None:
        data["booking"] = {**data["booking"], **{key: pseudonyms.text(value) for key in _USER_WRITTEN_BOOKING
                                                 if isinstance(value := getattr(report.booking, key), str)}}
    data["redacted"] = True
    return data
