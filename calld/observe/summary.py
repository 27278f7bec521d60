"""Words for people: `calld-ctl show` (a call's summary and transcript) and `history` (a table).

Pure functions of what the daemon returns (a call's detail, the history rows); no IO.
"""

from __future__ import annotations

import json
from typing import Any


# What the carrier's endings mean, in words (their codes are the status column's and the report's).
CARRIER_WORDS = {
    "ring_timeout": "nobody picked up",
    "busy": "the line was busy",
    "rejected": "the call did not go through",
}


def booked_line(result: dict[str, Any]) -> str | None:
    """A booked table in words: party, the time the business confirmed, and how far that is from the ask."""
    if result.get("status") != "booked" or not result.get("confirmed_time"):
        return None
    line = f"table for {result.get('confirmed_party', '?')} at {result['confirmed_time']}"
    minutes = result.get("minutes_from_requested")
    if isinstance(minutes, int) and minutes:
        line += f" ({abs(minutes)} minutes {'later' if minutes > 0 else 'earlier'} than asked)"
    if result.get("confirmed_constraints"):
        line += f"; {result['confirmed_constraints']}"
    return line


def why_words(result: dict[str, Any]) -> str | None:
    """Why a call ended without an answer, in words: the carrier's ending, or the call's own detail."""
    reason = str(result.get("reason") or "")
    if result.get("status") == "no_answer" and reason in CARRIER_WORDS:
        return CARRIER_WORDS[reason]
    if result.get("detail"):
        return str(result["detail"])
    return reason if " " in reason else None  # a sentence; a taxonomy code is already in the status column


def _s(ms: Any) -> str:
    return f"{ms / 1000:.1f} s" if isinstance(ms, int | float) else "-"


def _first(timing: dict[str, Any], track: str, state: str) -> int | None:
    return next((m["t_ms"] for m in timing.get(track) or [] if m["state"] == state), None)


def status_line(result: dict[str, Any]) -> str:
    status = str(result.get("status", "?"))
    reason = result.get("reason")
    if reason and reason != status:
        status += f" ({reason})"
    if (source := result.get("verdict_source")) and source != "none":
        status += f", verdict from the {source}"
    return status


def _evidence_lines(result: dict[str, Any], inbound_at: int | None) -> list[str]:
    lines = []
    for q in result.get("evidence") or []:
        if not isinstance(q, dict):
            continue
        where = []
        if isinstance(q.get("turn"), int):
            where.append(f"turn {q['turn']}")
        if isinstance(q.get("start_ms"), int | float) and isinstance(q.get("end_ms"), int | float):
            where.append(f"{_s(q['start_ms'])}-{_s(q['end_ms'])} in audio/inbound.wav")
            if inbound_at is not None:
                where.append(f"{_s(q['start_ms'] + inbound_at)}-{_s(q['end_ms'] + inbound_at)} into the call")
        lines.append(f"\u201c{q.get('quote', '')}\u201d" + (f" ({', '.join(where)})" if where else ""))
    return lines


_WEEK = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")


def _day_span(days: list[str]) -> str:
    """monday-friday for a run of consecutive days, else the days listed."""
    if not days:
        return "?"
    idx = [_WEEK.index(d) if d in _WEEK else -1 for d in days]
    if len(days) > 2 and -1 not in idx and idx == list(range(idx[0], idx[0] + len(idx))):
        return f"{days[0]}-{days[-1]}"
    return ", ".join(days)


def typed_answer(answer: Any) -> str:
    """The typed answer in a line: hours as day ranges (or no set hours), stock as availability, aisle as a place."""
    if not isinstance(answer, dict):
        return json.dumps(answer, ensure_ascii=False)
    kind = answer.get("kind")
    if kind == "no_set_hours":
        return "hours: no set hours (by appointment, or as it varies)"
    if kind == "hours" and not answer.get("ranges"):
        return "hours: none the app could read as days and times (the answer above is the business's)"
    if kind == "hours":
        parts = []
        for r in answer["ranges"]:
            days = r.get("days") or []
            span = _day_span(days)
            when = ("closed" if r.get("closed") else "open around the clock" if r.get("around_the_clock")
                    else f"{r.get('opens') or '?'}-{r.get('closes') or '?'}")
            parts.append(f"{span} {when}" + (f" ({r['date']})" if r.get("date") else ""))
        return "hours: " + "; ".join(parts)
    if kind == "stock" and answer.get("kinds"):
        return "stock: some kinds: " + "; ".join(
            f"{k['kind']} {k['availability'].replace('_', ' ')}" + (f", {k['quantity']}" if k.get("quantity") is not None else "")
            for k in answer["kinds"])
    if kind == "stock" and answer.get("availability"):
        quantity = f", {answer['quantity']}" if answer.get("quantity") is not None else ""
        return f"stock: {answer['availability'].replace('_', ' ')}{quantity}"
    if kind == "aisle" and answer.get("location"):
        return f"location: {answer['location']}"
    return json.dumps(answer, ensure_ascii=False)


def hangup_column(track: str, progress: dict[str, Any] | None) -> str:
    """calld-ctl calls' HANGUP: the reducer's track, unless Telnyx has not taken the hangup calld sent."""
    if progress and progress.get("line") in ("retrying", "may_be_up"):
        return f"{progress['line']} ({progress.get('tries')} tries)"
    return track


def hangup_progress_words(progress: dict[str, Any] | None) -> str | None:
    """A call still held whose hangup Telnyx has not taken, in words; None when there is nothing to say."""
    if not progress:
        return None
    if progress.get("line") == "may_be_up":
        return f"THE LINE MAY STILL BE UP: {progress.get('detail')}"
    if progress.get("line") == "retrying":
        return (f"not taken by Telnyx yet ({progress.get('tries')} tries, the last: {progress.get('telnyx')}; the call's "
                f"status: {progress.get('call_status') or 'not read'}); calld sends it again until HANGUP_RETRY_S, "
                "then says whether the line may still be up")
    return None


def line_may_be_up_words(owner: dict[str, Any]) -> str:
    """What a call another daemon finished with its line possibly up adds to where it is ('' if nothing)."""
    return f"; THE LINE MAY STILL BE UP: {owner['line_may_be_up']}" if owner.get("line_may_be_up") else ""


def show_text(detail: dict[str, Any], *, transcript: bool = False) -> str:
    result = detail.get("result") or {}
    report = detail.get("report") or {}
    request = detail.get("request") or {}
    params = request.get("params") or {}
    out: list[str] = []

    def row(label: str, value: Any) -> None:
        if value not in (None, "", [], {}):
            out.append(f"  {label:<11} {value}")

    ident = result.get("call_control_id") or report.get("call_control_id") or "(never connected)"
    out.append(f"call {ident}  (run {result.get('run_id') or report.get('run_id')})")
    asked = report.get("question") or params.get("ask") or ("book a table" if (report.get("job") or request.get("kind")) in ("book",) else "")
    if report.get("item") or params.get("item"):
        asked += f" ({report.get('item') or params.get('item')})"
    if report.get("booking"):
        b = report["booking"]
        asked = f"book a table for {b.get('party')} at {b.get('time')}" + (f", {b['notes']}" if b.get("notes") else "")
    to = report.get("to") or params.get("to")
    who = report.get("first_name") or params.get("name")
    row("asked", f"{asked} to {to}" + (f" from {report['from_did']}" if report.get("from_did") else "")
        + (f" for {who}" if who else "") + f" (user {report.get('user_id') or request.get('user')})")
    row("table at", result.get("booking_for") or request.get("booking_for"))  # the day calld read --time as
    row("when", (report.get("started_at") or request.get("created_at") or "?")
        + (f", {_s(report.get('duration_ms'))}" if report else ""))
    row("status", status_line(result))
    row("answer", result.get("answer_text"))
    row("booked", booked_line(result))
    row("they said", result.get("confirmation_text"))
    if result.get("status") in ("declined", "failed", "no_answer") or (result.get("reason") and " " in str(result.get("reason"))):
        row("why", why_words(result) or report.get("failure"))
    row("alternative", result.get("alternative_offered"))
    if result.get("opt_out") and result.get("reason") != "opt_out":  # an answer, and then "don't call again"
        row("opt-out", f"they asked not to be called again: \u201c{result['opt_out']}\u201d")
    if result.get("hangup_cause") and result.get("reason") in CARRIER_WORDS:
        row("carrier", result["hangup_cause"] + (f" (SIP {result['sip_cause']})" if result.get("sip_cause") else ""))
    for i, line in enumerate(_evidence_lines(result, detail.get("inbound_audio_at_ms"))):
        row("evidence" if i == 0 else "", line)
    if result.get("answer") is not None:
        row("typed", typed_answer(result["answer"]))
    questions = result.get("unanswered_questions")
    if questions:
        row("unanswered", "; ".join(questions))

    timing = report.get("timing_ms") or {}
    if timing:
        marks = [
            ("answered", _first(timing, "telnyx", "answered")),
            ("GPT-Live ready", _first(timing, "live", "active")),
            ("verdict", _first(timing, "conversation", "concluded")),
            ("final mark echoed", report.get("final_mark_echo_ms")),
            ("hangup sent", (report.get("hangup") or {}).get("requested_at_ms")),
            ("ended", _first(timing, "telnyx", "ended")),
        ]
        row("timings", ", ".join(f"{name} {_s(t)}" for name, t in marks if t is not None))
    hangup = report.get("hangup") or {}
    if hangup:
        via, sent = hangup.get("via"), hangup.get("sent")
        if sent is False or not via:  # a report from before `sent` names a via only for a hangup sent
            parts = ["calld sent none" + (f" ({via})" if via else "")]
        else:
            parts = [f"via {via}" + (f" ({hangup['tries']} tries)" if (hangup.get("tries") or 0) > 1 else "")]
        if hangup.get("line") == "may_be_up":
            parts.append(f"THE LINE MAY STILL BE UP: {hangup.get('line_detail') or 'Telnyx never took the hangup'}")
        if hangup.get("confirmed") is not None:
            parts.append("confirmed" if hangup["confirmed"] else "not confirmed")
        if hangup.get("telnyx_result"):
            parts.append(f"Telnyx: {hangup['telnyx_result']}")
        if hangup.get("cause"):
            sip = f", SIP {hangup['sip_cause']}" if hangup.get("sip_cause") else ""
            parts.append(f"ended {hangup['cause']} ({hangup.get('source')}{sip})")
        row("hangup", "; ".join(parts))
    if result.get("line_may_be_up") and hangup.get("line") != "may_be_up":
        # No report says it (a full disk kept it from being written; a recovery writes none): the result does.
        row("line", f"THE LINE MAY STILL BE UP: {result['line_may_be_up']}")
    counts = report.get("counts") or {}
    if counts:
        row("pickup", f"{counts.get('held_frames', 0)} frames held before GPT-Live was ready, "
                      f"{counts.get('dropped_frames', 0)} dropped")
    if report.get("tools"):
        row("tools", ", ".join(report["tools"]))
    for i, hold in enumerate(report.get("holds") or []):
        row("hold" if i == 0 else "", f"{_s(hold.get('start_ms'))}-{_s(hold.get('end_ms'))} ({hold.get('cue', '')}; "
                                      f"{hold.get('ended') or hold.get('how') or ''})")

    pub = detail.get("publication") or {}
    if pub:
        where = pub.get("prefix") or pub.get("status")
        row("published", f"{where} ({pub.get('status')}; local copy: {pub.get('local')})"
            + (f"; last error: {pub['last_error']}" if pub.get("last_error") else ""))
    if (recovered := detail.get("recovered")) is not None:
        row("recovered", recovered_line(recovered, detail.get("transcript") or {}, rebuilt=report.get("recovered") is True))
    if detail.get("pruned") and pub.get("local") == "deleted":
        row("artifacts", "deleted here after publishing (calld-ctl fetch ID DIR brings them back)")
    elif detail.get("pruned"):
        row("artifacts", "pruned (the ledger keeps the result above)")
    else:
        row("artifacts", detail.get("dir"))
        for name, path in sorted((detail.get("files") or {}).items()):
            out.append(f"  {'':<11}   {name:<26} {path}")
    if transcript:
        out.append("")
        out.extend(transcript_lines(detail))
    return "\n".join(out)


def recovered_line(recovery: dict[str, Any], transcript: dict[str, Any], *, rebuilt: bool) -> str:
    """What the start after a crash did for a call it cut short (recovery.json), and what was saved."""
    saved = []
    if repaired := recovery.get("wav_repaired"):
        saved.append(f"audio kept ({', '.join(repaired)}: headers repaired)")
    if transcript.get("recovered_from"):
        saved.append(f"transcript rebuilt from {transcript['recovered_from']}")
    elif transcript:
        saved.append("transcript kept")
    return ("calld stopped while this call was on the line; the next start finished it"
            + (f" (hangup: {recovery['hangup']})" if recovery.get("hangup") else "")
            + ("; " + ", ".join(saved) if saved else "; nothing was saved")
            + ("; no call report (the call never wrote one): its timings are the journal's" if rebuilt else ""))


def transcript_lines(detail: dict[str, Any]) -> list[str]:
    turns = (detail.get("transcript") or {}).get("turns") or []
    if not turns:
        return ["transcript: (none: nobody spoke, or the artifacts were pruned)"]
    times = detail.get("turn_times_ms")
    lines = ["transcript (seconds into the call):"]
    width = max(len(t.get("speaker", "")) for t in turns)
    for i, turn in enumerate(turns):
        when = f"{times[i][0] / 1000:6.1f}-{times[i][1] / 1000:6.1f}" if times else f"{'':>13}"
        words = " ".join(str(turn.get("text", "")).split())
        if turn.get("on_line") is False:
            words = f"(not on the line: calld kept it off a recording or an ending call) {words}"
        lines.append(f"  {when}  {turn.get('speaker', '?'):>{width}}: {words}")
    return lines


HISTORY_COLUMNS = ["when", "user", "to", "ask", "status", "duration", "answer", "id"]


def history_table_rows(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    out = []
    for r in rows:
        status = r["status"] + (f"/{r['reason']}" if r.get("reason") and " " not in str(r["reason"]) and r["reason"] != r["status"] else "")
        out.append({
            "when": str(r["when"])[:19].replace("T", " "),
            "user": r["user"],
            "to": r["to"],
            "ask": r["ask"],
            "status": status + (" (recovered)" if r.get("recovered") else "") + (" LINE MAY BE UP" if r.get("line_may_be_up") else ""),
            "duration": _s(r["duration_ms"]) if r.get("duration_ms") is not None else None,
            "answer": r["answer"] or None,
            "id": r.get("call_control_id") or r["run_id"],
        })
    return out
