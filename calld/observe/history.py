"""Past calls for people: the ledger's requests joined with what each call left on disk.

`history_rows` is what `calld-ctl history` lists; `call_detail` is what `calld-ctl show` reads
(result, report, transcript and the absolute artifact paths), falling back to the ledger's
stored result when the artifacts were pruned. A call a crash cut short and the next start
finished (recovery.json in its directory) is shown as recovered, with what was saved.
"""

from __future__ import annotations

import json
import re
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any

from calld.ledger import Ledger, RequestRow
from calld.domain.times import when_label
from calld.observe.artifacts import find_run
from calld.observe.summary import booked_line, why_words
from calld.observe.timeline import TIMELINE_NAME
from calld.runtime.rundir import artifact_slug

STATUSES = ("answered", "booked", "declined", "no_answer", "voicemail", "failed", "refused", "placing", "in_flight")
HISTORY_MAX = 1000


class BadQuery(ValueError):
    pass


def parse_since(text: str, now: datetime | None = None) -> str:
    """An ISO 8601 UTC time from 'YYYY-MM-DD', an ISO date-time, 'today', 'yesterday' or 'Nd' / 'Nh'."""
    now = now or datetime.now(UTC)
    t = text.strip().lower()
    if t == "today":
        moment = datetime.combine(now.date(), datetime.min.time(), UTC)
    elif t == "yesterday":
        moment = datetime.combine(now.date() - timedelta(days=1), datetime.min.time(), UTC)
    elif m := re.fullmatch(r"(\d{1,5})([dh])", t):
        n = int(m.group(1))
        moment = now - (timedelta(days=n) if m.group(2) == "d" else timedelta(hours=n))
    else:
        try:
            if re.fullmatch(r"\d{4}-\d{2}-\d{2}", t):
                moment = datetime.combine(date.fromisoformat(t), datetime.min.time(), UTC)
            else:
                moment = datetime.fromisoformat(text.strip())
                moment = moment if moment.tzinfo else moment.replace(tzinfo=UTC)
        except ValueError:
            raise BadQuery(f"since: {text!r} is not a date; write 2026-11-30, 2026-11-30T09:00, today, yesterday, 7d or 12h") from None
    return moment.astimezone(UTC).isoformat(timespec="microseconds")


def check_status(status: str) -> str:
    if status not in STATUSES:
        raise BadQuery(f"status: {status!r} is not one of {', '.join(STATUSES)}")
    return status


def booking_label(booking_at: str | None) -> str | None:
    """A booking's time as calld read it ("Fri 11 Dec 7pm"), from the ledger's ISO 8601; None without one."""
    if not booking_at:
        return None
    try:
        return when_label(datetime.fromisoformat(booking_at))
    except ValueError:
        return None


def _what(row: RequestRow) -> str:
    p = row.params
    if row.kind == "book":  # the day calld read --time as; a row from before it was kept: the words as typed
        return f"book {p.get('party', '?')} at {booking_label(row.booking_at) or p.get('time', '?')}"
    return " ".join(str(x) for x in (p.get("ask"), p.get("item")) if x)


def _report(artifacts_dir: Path, ccid: str | None, run_id: str) -> dict[str, Any] | None:
    for name in (ccid, run_id):
        if not name:
            continue
        path = artifacts_dir / artifact_slug(name) / "call_report.json"
        try:
            return json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
    return None


def short_answer(result: dict[str, Any], limit: int = 60) -> str:
    if booked := booked_line(result):
        text = booked
    else:
        text = result.get("answer_text") or result.get("confirmation_text") or ""
    if not text and result.get("status") in ("declined", "failed", "no_answer"):
        text = why_words(result) or ""
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[: limit - 1] + "\u2026"


def _recovered(artifacts_dir: Path, ccid: str | None, run_id: str) -> bool:
    from calld.observe.artifacts import RECOVERY_NAME, is_finished_run

    for name in (ccid, run_id):
        if name and (artifacts_dir / artifact_slug(name) / RECOVERY_NAME).is_file():
            return is_finished_run(artifacts_dir / artifact_slug(name))
    return False


def history_row(row: RequestRow, artifacts_dir: Path) -> dict[str, Any]:
    result = row.result or {}
    report = _report(artifacts_dir, row.call_control_id, row.run_id)
    recovered = _recovered(artifacts_dir, row.call_control_id, row.run_id)
    reason = result.get("reason")
    return {
        "when": row.created_at,
        "request_id": row.request_id,
        "run_id": row.run_id,
        "call_control_id": row.call_control_id,
        "user": row.user_id,
        "to": row.params.get("to"),
        "kind": row.kind,
        "ask": _what(row),
        "status": result.get("status", row.status) if row.status == "done" else row.status,
        "reason": reason,
        "duration_ms": report.get("duration_ms") if report else None,
        "answer": short_answer(result),
        "artifacts": report is not None or recovered,
        "recovered": recovered,  # a crash cut the call short; the next start finished it (recovery.json)
        "line_may_be_up": result.get("line_may_be_up"),  # Telnyx never took the hangup: the operator's to end
    }


def history_rows(ledger: Ledger, artifacts_dir: Path, *, user: str | None = None, status: str | None = None,
                 since: str | None = None, limit: int = 20) -> list[dict[str, Any]]:
    from calld.domain.ids import UserId

    if not 1 <= limit <= HISTORY_MAX:
        raise BadQuery(f"limit: {limit} must be between 1 and {HISTORY_MAX}")
    try:
        who = UserId(user) if user is not None else None
    except ValueError as exc:
        raise BadQuery(f"user: {exc}") from None
    rows = ledger.history(user=who, status=check_status(status) if status else None,
                          since=parse_since(since) if since else None, limit=limit)
    return [history_row(r, artifacts_dir) for r in rows]


def _json_file(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def call_detail(artifacts_dir: Path, ident: str, row: RequestRow | None) -> dict[str, Any] | None:
    """Everything `show` prints: from the artifacts when they exist, else the ledger's stored result
    (`row`, the request that placed the call, looked up by the caller). Reads files only."""
    from calld.observe.artifacts import ArtifactsMissing, load_run, turn_times

    run_dir = find_run(artifacts_dir, ident)
    if run_dir is None:
        if row is None or row.result is None:
            return None
        from calld.ops.recovery import find_run_dir
        from calld.runtime.report import ARTIFACT_NAMES

        # A directory with no result.json nor report (a full disk as the call ended) is not pruned: what is there stays.
        left = find_run_dir(artifacts_dir, row.run_id, row.call_control_id)
        return {"dir": str(left.resolve()) if left else None, "pruned": left is None, "result": row.result, "report": None,
                "transcript": _json_file(left / "transcript.json") if left else None,
                "files": {name: str(left / name) for name in (*ARTIFACT_NAMES, "incomplete.json")
                          if (left / name).is_file()} if left else {},
                "request": request_summary(row)}
    report = _json_file(run_dir / "call_report.json") or {}
    recovered = None
    try:
        run = load_run(run_dir)
        times, inbound_at, recovered = turn_times(run), run.inbound_audio_at_ms, run.recovered
        report = report or run.report  # a recovered call's: rebuilt from its journal
    except ArtifactsMissing:
        times, inbound_at = None, None
    files = {name: str(run_dir.parent / ref) for name, ref in (report.get("refs") or {}).items()
             if (run_dir.parent / ref).exists()}
    if recovered is not None:  # no report lists them: what the call and its recovery left
        from calld.observe.artifacts import RECOVERY_NAME
        from calld.runtime.report import ARTIFACT_NAMES

        files |= {name: str(run_dir / name) for name in (*ARTIFACT_NAMES, RECOVERY_NAME) if (run_dir / name).is_file()}
    if (run_dir / TIMELINE_NAME).exists():
        files[TIMELINE_NAME] = str(run_dir / TIMELINE_NAME)
    return {
        "dir": str(run_dir.resolve()),
        "pruned": False,
        "recovered": recovered,  # recovery.json: cut short by a crash, finished by the next start
        "result": _json_file(run_dir / "result.json"),
        "report": report,
        "transcript": _json_file(run_dir / "transcript.json"),
        "turn_times_ms": times,  # each turn's (start, end) on the call's clock
        "inbound_audio_at_ms": inbound_at,  # where audio/inbound.wav starts on the call's clock
        "files": files,
        "request": request_summary(row) if row is not None else None,
    }


def request_summary(row: RequestRow) -> dict[str, Any]:
    return {"request_id": row.request_id, "kind": row.kind, "params": row.params, "created_at": row.created_at,
            "user": row.user_id, "booking_at": row.booking_at, "booking_for": booking_label(row.booking_at)}
