"""Finished-call artifacts written by hand, in the shapes calld writes (and the shapes other work adds:
result reason/evidence, per-turn times, holds, DTMF effects, AMD events, refused records), for the
readers that only look at finished artifacts (timeline, show, history, metrics)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

INBOUND_AT_MS = 1000  # the first inbound frame: where audio/inbound.wav starts on the call's clock


def _t(state: str, t_ms: int) -> dict[str, Any]:
    return {"state": state, "t_ms": t_ms}


def five_minute_call_with_hold(root: Path, name: str = "v3_synthetic-hold") -> Path:
    """A 300 s stock ask: AMD says human, a menu press, a record refused before the answer, a 120 s
    hold, then the answer with its evidence, the goodbye, the mark, the trail and the hangup."""
    d = root / name
    (d / "audio").mkdir(parents=True)
    end = 297_000
    turns = [
        ("business", 1_200, 4_000, "Thanks for calling Joe's Hardware. For the store, press 1."),
        ("agent", 6_000, 12_000, "Hi, this is an automated assistant calling on behalf of Nathan."),
        ("business", 14_000, 17_000, "Joe's Hardware, this is Sam."),
        ("agent", 18_000, 24_000, "Is the cast iron skillet in stock?"),
        ("business", 26_000, 28_500, "Let me check, one moment please."),
        ("business", 148_500, 153_000, "Sorry for the wait. Which size did you want, ten or twelve inch?"),
        ("agent", 154_000, 158_000, "Nathan did not say; either size is fine."),
        ("business", 160_000, 166_000, "Okay, I'm looking at the shelf now, hang on."),
        ("business", 240_000, 246_000, "Right, the twelve inch is gone but the ten inch is here."),
        ("agent", 247_000, 251_000, "Thank you. Is the ten inch in stock today?"),
        ("business", 280_000, 286_000, "Yes, we have three of them in stock."),
        ("agent", 288_000, 293_000, "Thank you so much, goodbye!"),
    ]
    transcript = {
        "turns": [{"speaker": s, "text": x, "start_ms": a - INBOUND_AT_MS, "end_ms": b - INBOUND_AT_MS} for s, a, b, x in turns],
        "agent_text": " ".join(x for s, _a, _b, x in turns if s == "agent"),
        "business_text": " ".join(x for s, _a, _b, x in turns if s == "business"),
    }
    rows: list[dict[str, Any]] = []
    seq = 0

    def event(t: int, body: dict[str, Any], **extra: Any) -> int:
        nonlocal seq
        seq += 1
        rows.append({"seq": seq, "t_ms": t, "event": body, **extra})
        return seq

    def effect(t: int, cause: int, body: dict[str, Any]) -> None:
        nonlocal seq
        seq += 1
        rows.append({"seq": seq, "t_ms": t, "cause": cause, "effect": body})

    event(0, {"kind": "begin"}, changed={"dial": ["pending", "requested"]})
    event(1_000, {"kind": "telnyx.call.answered", "call_control_id": "v3:synthetic-hold"})
    for t in range(INBOUND_AT_MS, end, 20):
        rows.append({"seq": 0, "t_ms": t, "event": {"pcm": 640, "chunk": 1, "kind": "media.audio"}})
    event(2_500, {"kind": "telnyx.machine.detected", "result": "human"})
    cause = event(5_000, {"kind": "tool.send_dtmf", "call_id": "c1", "digits": "1"})
    effect(5_000, cause, {"kind": "telnyx.send_dtmf", "digits": "1"})
    cause = event(30_000, {"kind": "tool.record_task_result", "call_id": "c2", "status": "answered",
                           "answer_text": "In stock", "notes": None, "booking": None})
    effect(30_000, cause, {"kind": "live.tool_output", "call_id": "c2",
                           "output": json.dumps({"recorded": False, "why": "the business has not said this yet; keep listening"})})
    cause = event(287_000, {"kind": "tool.record_task_result", "call_id": "c3", "status": "answered",
                            "answer_text": "Yes, three in stock.", "notes": None, "booking": None},
                  changed={"conversation": ["talking", "concluded"], "hangup": ["none", "farewell"]})
    effect(287_000, cause, {"kind": "live.tool_output", "call_id": "c3", "output": json.dumps({"recorded": True})})
    cause = event(295_000, {"kind": "live.closed", "reason": "close_requested"})
    effect(295_000, cause, {"kind": "media.mark", "name": "HANGUP_MARK"})
    cause = event(296_200, {"kind": "media.mark", "name": "HANGUP_MARK"}, changed={"hangup": ["marked", "trailing"]})
    cause = event(296_600, {"kind": "timer.trail"})
    effect(296_600, cause, {"kind": "hangup", "via": "tool"})
    event(end, {"kind": "telnyx.call.hangup", "call_control_id": "v3:synthetic-hold", "cause": "normal_clearing",
                "source": "caller", "sip_cause": "200"})
    timing = {
        "dial": [_t("pending", 0), _t("requested", 0), _t("accepted", 200)],
        "telnyx": [_t("idle", 0), _t("initiated", 200), _t("answered", 1_000), _t("ended", end)],
        "media": [_t("idle", 0), _t("streaming", 1_000), _t("stopped", end)],
        "live": [_t("idle", 0), _t("starting", 1_000), _t("active", 2_000), _t("closing", 294_000), _t("closed", 295_000)],
        "conversation": [_t("waiting", 0), _t("talking", 2_000), _t("concluded", 287_000)],
        "hangup": [_t("none", 0), _t("farewell", 287_000), _t("draining", 294_000), _t("marked", 295_000),
                   _t("trailing", 296_200), _t("requested", 296_600), _t("done", end)],
    }
    result = {
        "run_id": "run_synthetichold0000001", "call_control_id": "v3:synthetic-hold", "status": "answered",
        "reason": "answered", "answer_text": "Yes, three in stock.", "verdict_source": "tool",
        "transcript_ref": f"{name}/transcript.json", "audio_ref": f"{name}/audio/inbound.wav",
        "answer": {"kind": "stock", "availability": "in_stock", "quantity": 3},
        "evidence": [{"quote": "Yes, we have three of them in stock.", "turn": 10,
                      "start_ms": 280_000 - INBOUND_AT_MS, "end_ms": 286_000 - INBOUND_AT_MS}],
    }
    report = {
        "run_id": result["run_id"], "call_control_id": "v3:synthetic-hold", "artifact_prefix": name, "user_id": "alice",
        "to": "+15555550142", "from_did": "+15555550110", "first_name": "Nathan", "job": "quick_ask", "question": "stock",
        "item": "cast iron skillet", "booking": None, "status": "answered", "answer_text": result["answer_text"],
        "verdict_source": "tool", "transcript_verdict": "answered", "failure": None,
        "started_at": "2026-11-29T15:00:00+00:00", "duration_ms": end, "timing_ms": timing, "final_mark_echo_ms": 296_200,
        "hangup": {"via": "tool", "confirmed": True, "requested_at_ms": 296_600, "telnyx_result": "requested",
                   "cause": "normal_clearing", "source": "caller", "sip_cause": "200"},
        "media": {"encoding": "L16", "sample_rate": 16000, "byte_order": "le", "resampled": False},
        "counts": {"held_frames": 40, "dropped_frames": 0, "audio_in": 14950},
        "tools": ["send_dtmf", "record_task_result", "record_task_result"], "ignored_events": 0,
        "holds": [{"start_ms": 28_500, "end_ms": 148_500, "cue": "let me check", "ended": "person returned"},
                  {"start_ms": 166_000, "end_ms": 240_000, "cue": "hang on", "ended": "person returned"}],
        "refs": {},
    }
    (d / "transcript.json").write_text(json.dumps(transcript))
    (d / "result.json").write_text(json.dumps(result))
    (d / "call_report.json").write_text(json.dumps(report))
    (d / "events.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    return d
