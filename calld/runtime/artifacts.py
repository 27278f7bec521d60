"""A finished call's last files: what they say, and the disk work that writes them.

CallHandle._finish decides when (behind live frames, calld.runtime.behind) and where (the ports'
disk); this module holds what the files hold. The records (transcript.json, task.json, the
hangup.json of a call calld never hung up, the report's booking) are read from the call alone;
the functions marked disk work touch the run directory and run where the ports say.
"""

from __future__ import annotations

import logging
from typing import Any

from attrs import asdict

from calld.core.outcome import Outcome, conclude
from calld.core.plan import BookJob, CallPlan
from calld.core.state import Call, DialRejected, HangupDone, HangupRequested, TelnyxEnded
from calld.domain import results
from calld.runtime.report import BookingInfo, CallReport, HangupInfo, HoldInfo, MediaInfo, Transition
from calld.runtime.rundir import RunDir
from calld.runtime.verdict import build_result, evidence

log = logging.getLogger("calld.call")

# Every file the result may refer to before result.json, in the order refs_present lists them.
_LAST_FILES = ("dial.json", "session_start.json", "hangup.json", "events.jsonl", "transcript.json", "task.json",
               "audio/inbound.wav", "audio/outbound.wav")


def transcript_file(call: Call) -> dict[str, Any]:
    """transcript.json: every turn, and what was said on the line by each side."""
    return {
        "turns": [{"speaker": t.speaker, "text": t.text, "start_ms": t.start_ms, "end_ms": t.end_ms, "on_line": t.on_line}
                  for t in call.transcript],
        "agent_text": "".join(t.text for t in call.transcript if t.speaker == "agent" and t.on_line),
        "business_text": "".join(t.text for t in call.transcript if t.speaker == "business"),
    }


def task_record(plan: CallPlan, call: Call, rundir: RunDir, concluded: Outcome | None = None) -> dict[str, Any]:
    """task.json: the verdict the call accepted, and the result it would end as if calld died now.
    `concluded`: `conclude(call)`, when the caller has it already."""
    task = call.task
    assert task is not None
    record: dict[str, Any] = {"tool": "record_task_result", "call_id": task.call_id, "status": task.status,
                              "answer_text": task.answer_text, "notes": task.notes,
                              "end_call_seen": call.end_call_seen,
                              "evidence": [e.model_dump() for e in evidence(call.verdict.quotes)] if call.verdict else []}
    if task.booking is not None:
        record["booking"] = asdict(task.booking)
        record["booking"]["unanswered_questions"] = list(call.unanswered)
    # What the call would end as if calld died now: a restart finishes it so (calld.ops.recovery).
    planned = {"transcript.json": rundir.ref("transcript.json"), "audio/inbound.wav": rundir.ref("audio/inbound.wav")}
    try:
        record["result_if_interrupted"] = build_result(plan, call, concluded if concluded is not None else conclude(call), planned).model_dump(mode="json")
    except Exception:  # noqa: BLE001 - a preview must never fail the call it describes
        log.exception("%s could not preview the result of the accepted verdict", plan.run_id)
    return record


def no_hangup_record(call: Call) -> dict[str, Any]:
    """hangup.json for a call calld never hung up: why it did not need to."""
    ended = call.telnyx if isinstance(call.telnyx, TelnyxEnded) else None
    if isinstance(call.hangup, HangupRequested) or (isinstance(call.hangup, HangupDone) and call.counters.hangups_sent):
        # The reducer asked for a hangup, but what came of it was never written (the runtime writes
        # that whatever happens, so this is a record lost on the way): say so, never "not needed".
        via = call.hangup.via
        return {"via": via, "call_control_id": call.call_control_id, "sent": True, "why": "record_missing",
                "detail": f"calld asked for a hangup (via {via}), but what Telnyx said to it was not recorded"}
    if isinstance(call.dial, DialRejected) or call.call_control_id is None:
        why = "not_dialled"
        said = "the dial was never accepted, so there was no call to hang up"
    elif ended is not None and ended.was_answered:
        why = "far_party"
        said = f"the far party ended the call first ({ended.cause}, source {ended.source})"
    else:
        why = "never_connected"
        said = f"the call was never answered ({ended.cause if ended else 'no hangup event'})"
    return {"via": None, "call_control_id": call.call_control_id, "sent": False, "why": why, "detail": said}


def booking_info(plan: CallPlan, call: Call) -> BookingInfo | None:
    job = plan.job
    if not isinstance(job, BookJob):
        return None
    return BookingInfo(party=job.party, time=job.time, notes=job.notes, window_minutes=job.window_minutes,
                       callback=job.callback, unanswered_questions=list(call.unanswered), when=job.when, today=job.today)


# -- disk work: run by the ports' `disk` (under calld serve, a worker thread) -------------------------


def write_before_result(rundir: RunDir, plan: CallPlan, call: Call, transcript: dict[str, Any],
                        task: dict[str, Any] | None, no_hangup: dict[str, Any]) -> dict[str, str]:
    """The files the result refers to, closed; their refs, and where a write failed, only those
    really there, with incomplete.json saying what is missing."""
    rd = rundir
    if call.call_control_id is None and rd.prefix.startswith(".pending-"):
        rd.adopt(plan.run_id)
    refs: dict[str, str] = {}
    if not (rd.path / "hangup.json").exists():
        rd.write_json("hangup.json", no_hangup)
    for name in ("dial.json", "session_start.json", "hangup.json"):
        if (rd.path / name).exists():
            refs[name] = rd.ref(name)
    refs["events.jsonl"] = rd.ref("events.jsonl")
    refs["transcript.json"] = rd.write_json("transcript.json", transcript)
    if task is not None:
        refs["task.json"] = rd.write_json("task.json", task)
    rd.close()
    refs["audio/inbound.wav"] = rd.ref("audio/inbound.wav")
    refs["audio/outbound.wav"] = rd.ref("audio/outbound.wav")
    return _marked(rd, refs)


def refs_present(rundir: RunDir) -> dict[str, str]:
    """After the trip that writes the last files failed itself: the files that are there, closed."""
    rundir.close()
    return _marked(rundir, {name: rundir.ref(name) for name in _LAST_FILES})


def write_result(rundir: RunDir, files: dict[str, Any]) -> None:
    """result.json, then the reports that name it."""
    for name, data in files.items():
        rundir.write_json(name, data)


def _marked(rundir: RunDir, refs: dict[str, str]) -> dict[str, str]:
    """After a write error, only what is really there is referenced, and the gap is marked."""
    if rundir.write_error is None:
        return refs
    refs = {name: ref for name, ref in refs.items() if (rundir.path / name).is_file()}
    rundir.write_json("incomplete.json", {
        "error": str(rundir.write_error),
        "note": "a write failed during this call: events.jsonl and the audio stop at that point; "
                "the call was failed and hung up",
    })
    return refs


def call_report(plan: CallPlan, call: Call, result: results.CallResult, outcome: Outcome, refs: dict[str, str], *,
                prefix: str, audio_gap: Any, holds: list[dict[str, Any]], started_at: str, duration_ms: int,
                timing_ms: dict[str, list[Transition]], final_echo_ms: int | None, hangup: HangupInfo, media: MediaInfo,
                ignored: int) -> CallReport:
    """call_report.json: what the call was, how it went and ended, its timings, and the refs to every file."""
    return CallReport(
        run_id=plan.run_id, call_control_id=call.call_control_id, artifact_prefix=prefix, user_id=plan.user_id,
        to=plan.dial.to, from_did=plan.dial.from_, first_name=plan.first_name, job=plan.job.kind,
        question=plan.question.value if plan.question is not None else None, item=plan.item,
        booking=booking_info(plan, call), status=result.status, reason=result.reason,
        detail=getattr(result, "detail", None), answer_text=result.answer_text,
        evidence=[e.model_dump() for e in getattr(result, "evidence", ())],
        refused_records=[{"call_id": r.call_id, "status": r.status, "why": r.why} for r in call.refused_records],
        verdict_source=outcome.verdict_source, transcript_verdict=outcome.transcript_verdict,
        failure=call.failure.detail if call.failure else None, audio_incomplete=audio_gap,
        holds=[HoldInfo(**h) for h in holds], started_at=started_at, duration_ms=duration_ms, timing_ms=timing_ms,
        final_mark_echo_ms=final_echo_ms, hangup=hangup, media=media, counts=asdict(call.counters),
        tools=list(call.tools), ignored_events=ignored, refs=refs,
    )
