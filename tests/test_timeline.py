"""The call timeline picture, drawn from finished artifacts and checked by reading the SVG back:
every element carries a gid with its times, and its position on the page must agree with them."""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from calld.observe.artifacts import ArtifactsMissing, load_run
from calld.observe.timeline import build_timeline, write_timeline
from synthetic_artifacts import INBOUND_AT_MS, five_minute_call_with_hold
from stubcall import stub_call

SVG = "{http://www.w3.org/2000/svg}"


class Picture:
    """What a program can see in a timeline SVG: element ids, their x extents, and their text."""

    def __init__(self, path: Path) -> None:
        self.root = ET.parse(path).getroot()
        self.groups = {g.get("id"): g for g in self.root.iter(f"{SVG}g") if g.get("id")}

    def ids(self, prefix: str) -> list[str]:
        return [i for i in self.groups if i.startswith(prefix) and "/label" not in i and "/rule" not in i]

    def xs(self, gid: str) -> tuple[float, float]:
        path = next(self.groups[gid].iter(f"{SVG}path"))
        nums = [float(n) for n in re.findall(r"-?\d+(?:\.\d+)?", path.get("d", ""))]
        xs = nums[0::2]
        return min(xs), max(xs)

    def text(self, gid: str) -> str:
        return "".join("".join(t.itertext()) for t in self.groups[gid].iter(f"{SVG}text"))

    def scale(self) -> tuple[float, float]:
        """px = a + b * ms, from the telnyx row's spans (their ids carry start and end)."""
        pts = []
        for gid in self.ids("state/"):
            _, _track, _state, start, end = gid.split("/")
            x0, x1 = self.xs(gid)
            pts += [(int(start), x0), (int(end), x1)]
        (t0, p0), (t1, p1) = min(pts), max(pts)
        b = (p1 - p0) / (t1 - t0)
        return p0 - b * t0, b

    def at(self, ms: float) -> float:
        a, b = self.scale()
        return a + b * ms


def times(gid: str) -> list[int]:
    return [int(p) for p in gid.split("/") if p.isdigit()][-2:]


async def test_a_stub_call_is_drawn_with_its_tracks_speech_and_ending(tmp_path: Path, autojump_clock: object) -> None:
    run = await stub_call(tmp_path)
    out = write_timeline(run.dir)
    assert out == run.dir / "timeline.svg"
    pic = Picture(out)
    report = run.report

    # Every track's state changes are there, where the report's timings put them.
    for track, moves in report["timing_ms"].items():
        spans = pic.ids(f"state/{track}/")
        assert spans, f"no {track} row"
        last = moves[-1]
        assert any(g.split("/")[2] == last["state"] and times(g)[0] == last["t_ms"] for g in spans)
    answered = next(g for g in pic.ids("state/telnyx/answered/"))
    assert times(answered)[0] == 1000
    for gid in pic.ids("state/"):
        x0, x1 = pic.xs(gid)
        start, end = times(gid)
        assert x0 == pytest.approx(pic.at(start), abs=0.6) and x1 == pytest.approx(pic.at(end), abs=0.6), gid

    # Both voices, with their words, placed when the transcript says they spoke.
    business = pic.ids("speech/business/")
    agent = pic.ids("speech/agent/")
    assert len(business) == 2 and len(agent) == 2
    assert "Joe's Hardware" in pic.text("words/business/0")
    assert "9 AM to 5 PM" in pic.text("words/business/1")
    assert "on behalf of Nathan" in pic.text("words/agent/0")
    # transcript.json places each turn in audio/inbound.wav; the picture puts it on the call's clock.
    first_frame = next(r["t_ms"] for r in run.rows() if r.get("event", {}).get("kind") == "media.audio")
    first_turn = run.json("transcript.json")["turns"][0]
    assert first_turn["speaker"] == "business" and first_turn["start_ms"] is not None
    said = [first_turn["start_ms"] + first_frame, first_turn["end_ms"] + first_frame]
    assert times(business[0]) == said
    assert pic.xs(business[0]) == (pytest.approx(pic.at(said[0]), abs=0.6), pytest.approx(pic.at(said[1]), abs=0.6))
    # The business spoke first, before GPT-Live was ready (its words were held, then heard).
    assert said[0] < next(m["t_ms"] for m in report["timing_ms"]["live"] if m["state"] == "active")
    assert times(business[0])[0] < times(agent[0])[0] < times(business[1])[0] < times(agent[1])[0]

    # The ending: the tool calls, the one final mark and its echo, the trail, the hangup.
    (record,) = pic.ids("marker/tool/")[:1]
    assert "record_task_result: answered" in pic.text(record + "/label")
    (sent,) = pic.ids("marker/mark_sent/")
    (echo,) = pic.ids("marker/mark_echo/")
    (hangup,) = pic.ids("marker/hangup_sent/")
    assert int(echo.split("/")[-1]) == report["final_mark_echo_ms"]
    assert int(hangup.split("/")[-1]) == report["hangup"]["requested_at_ms"]
    assert int(sent.split("/")[-1]) < report["final_mark_echo_ms"]
    assert pic.xs(echo)[0] == pytest.approx(pic.at(report["final_mark_echo_ms"]), abs=0.6)
    (trail,) = pic.ids("band/trail/")
    assert times(trail) == [report["final_mark_echo_ms"], report["hangup"]["requested_at_ms"]]
    assert pic.ids("marker/call_hangup/")
    # Callee audio held until GPT-Live was ready: from the first inbound frame to session.started.
    (pickup,) = pic.ids("band/pickup/")
    live_ready = next(m["t_ms"] for m in report["timing_ms"]["live"] if m["state"] == "active")
    assert times(pickup) == [first_frame, live_ready]
    assert f"held {report['counts']['held_frames']} frames" in pic.text(pickup + "/label")
    assert "answered" in "".join(pic.root.itertext())
    assert "We're open Monday through Friday" in pic.text("subtitle")


async def test_agent_words_kept_off_a_recording_are_drawn_hollow_and_labelled(tmp_path: Path, autojump_clock: object) -> None:
    run = await stub_call(tmp_path, "voicemail")
    pic = Picture(write_timeline(run.dir))
    agent = pic.ids("speech/agent/")
    assert agent and all(g.endswith("/off_line") for g in agent)
    assert not any(g.endswith("/off_line") for g in pic.ids("speech/business/"))
    words = [pic.text(g) for g in pic.groups if g.startswith("words/agent/")]
    assert words and all(w.startswith("(not on the line)") for w in words)


def test_a_five_minute_call_with_a_hold_shows_the_hold_the_press_the_refusal_and_the_evidence(tmp_path: Path) -> None:
    d = five_minute_call_with_hold(tmp_path)
    pic = Picture(write_timeline(d))
    result = json.loads((d / "result.json").read_text())
    turns = json.loads((d / "transcript.json").read_text())["turns"]

    holds = pic.ids("band/hold/")
    assert [times(h) for h in holds] == [[28_500, 148_500], [166_000, 240_000]]
    assert "let me check" in pic.text(holds[0] + "/label")
    x0, x1 = pic.xs(holds[0])
    assert (x0, x1) == (pytest.approx(pic.at(28_500), abs=0.6), pytest.approx(pic.at(148_500), abs=0.6))

    (press,) = pic.ids("marker/dtmf/")
    assert pic.text(press + "/label").strip() == "DTMF 1"
    (refusal,) = pic.ids("marker/refused/")
    assert int(refusal.split("/")[-1]) == 30_000
    assert "has not said this yet" in pic.text(refusal + "/label")
    (amd,) = pic.ids("marker/amd/")
    assert "human" in pic.text(amd + "/label")
    # The accepted record is a tool marker, the refused one is not.
    assert [int(g.split("/")[-1]) for g in pic.ids("marker/tool/")] == [287_000]

    # Per-turn times (in inbound.wav) are moved onto the call's clock.
    bars = pic.ids("speech/business/")
    assert len(bars) == sum(t["speaker"] == "business" for t in turns)
    assert times(bars[0]) == [turns[0]["start_ms"] + INBOUND_AT_MS, turns[0]["end_ms"] + INBOUND_AT_MS]
    (evidence,) = pic.ids("band/evidence/")
    quote = result["evidence"][0]
    assert times(evidence) == [quote["start_ms"] + INBOUND_AT_MS, quote["end_ms"] + INBOUND_AT_MS]
    assert pic.xs(evidence)[0] == pytest.approx(pic.at(quote["start_ms"] + INBOUND_AT_MS), abs=0.6)
    assert quote["quote"] in pic.text("subtitle")
    assert "Yes, three in stock." in pic.text("subtitle")


def test_a_call_that_never_connected_is_drawn_from_what_it_left(tmp_path: Path) -> None:
    d = tmp_path / "run_x"
    d.mkdir()
    (d / "result.json").write_text(json.dumps({"run_id": "run_x", "call_control_id": None, "status": "failed",
                                               "answer_text": None, "reason": "dial refused: invalid number"}))
    (d / "call_report.json").write_text(json.dumps({
        "run_id": "run_x", "call_control_id": None, "duration_ms": 120, "started_at": "2026-11-29T10:00:00+00:00",
        "timing_ms": {"dial": [{"state": "pending", "t_ms": 0}, {"state": "rejected", "t_ms": 120}]},
        "hangup": {"requested_at_ms": None}, "final_mark_echo_ms": None}))
    pic = Picture(write_timeline(d))
    assert pic.ids("state/dial/rejected/")
    assert not pic.ids("speech/") and not pic.ids("band/")
    assert "dial refused" in pic.text("subtitle")


def test_a_directory_without_a_finished_call_is_refused_clearly(tmp_path: Path) -> None:
    with pytest.raises(ArtifactsMissing, match="no finished call"):
        load_run(tmp_path)


def test_drawing_changes_no_artifact(tmp_path: Path) -> None:
    d = five_minute_call_with_hold(tmp_path)
    before = {p.name: p.read_bytes() for p in d.iterdir() if p.is_file()}
    build_timeline(load_run(d))
    write_timeline(d, tmp_path / "picture.png")
    assert {p.name: p.read_bytes() for p in d.iterdir() if p.is_file()} == before
    assert (tmp_path / "picture.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


async def test_a_record_the_evidence_gate_refused_is_marked_with_why(tmp_path: Path, autojump_clock: object) -> None:
    run = await stub_call(tmp_path, "model_early")
    pic = Picture(write_timeline(run.dir))
    (refused,) = run.report["refused_records"]
    (marker,) = pic.ids("marker/refused/")
    event_t = next(r["t_ms"] for r in run.rows() if r.get("event", {}).get("call_id") == refused["call_id"])
    assert int(marker.split("/")[-1]) == event_t
    assert refused["why"] in pic.text(marker + "/label")
    assert [times(b) for b in pic.ids("band/evidence/")] == [
        [q["start_ms"] + next(r["t_ms"] for r in run.rows() if r.get("event", {}).get("kind") == "media.audio"),
         q["end_ms"] + next(r["t_ms"] for r in run.rows() if r.get("event", {}).get("kind") == "media.audio")]
        for q in run.json("result.json")["evidence"]
    ]
