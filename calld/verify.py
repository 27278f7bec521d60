"""The lever: run a stub quick-ask into a fresh workspace and check it from what it left behind.

Every check reads the artifacts (dial.json, session_start.json, events.jsonl,
transcript.json, task.json, the WAVs, result.json, call_report.json) and the ledger.
None looks at a mock, a fake's memory or the process's own objects.
"""

from __future__ import annotations

import base64
import json
import tempfile
import wave
from collections.abc import Callable
from pathlib import Path
from typing import Any

import trio
import trio.testing
from attrs import frozen
from pydantic import TypeAdapter, ValidationError

from calld.calls import prepare, run_stub_call
from calld.core.plan import disclosure_line
from calld.domain.ids import E164, FirstName, UserId
from calld.domain.questions import QUESTIONS, QuestionType
from calld.domain.requests import AskRequest
from calld.domain.results import QuickAskResult
from calld.adapters.telnyx_http import TelnyxHttp, open_client
from calld.ledger import Ledger
from calld.numbers import provision_did
from calld.stub.telnyx_numbers import StubNumbers
from calld.runtime.report import CallReport
from calld.settings import Settings, load_settings
from calld.stub.scenario import SCENARIOS

_RESULT = TypeAdapter(QuickAskResult)


@frozen
class VerifyInput:
    user: UserId = UserId("verify")
    name: FirstName = FirstName("Nathan")
    to: E164 = E164("+15555550142")
    ask: QuestionType = QuestionType.HOURS
    item: str | None = None
    scenario: str = "hours"


@frozen
class Check:
    name: str
    passed: bool
    evidence: str

    def line(self) -> str:
        return f"[{'PASS' if self.passed else 'FAIL'}] {self.name} {self.evidence}"


@frozen
class VerifyReport:
    checks: tuple[Check, ...]
    run_dir: Path

    @property
    def passed(self) -> bool:
        return all(c.passed for c in self.checks)

    def lines(self) -> list[str]:
        n = sum(c.passed for c in self.checks)
        return [c.line() for c in self.checks] + [f"{n}/{len(self.checks)} passed"]


class _Evidence:
    """The run's files, read once. A missing or broken file is a failed check, not a crash."""

    def __init__(self, run_dir: Path, artifacts: Path) -> None:
        self.dir = run_dir
        self.artifacts = artifacts

    def json(self, name: str) -> Any:
        return json.loads((self.dir / name).read_text())

    def rows(self) -> list[dict[str, Any]]:
        return [json.loads(line) for line in (self.dir / "events.jsonl").read_text().splitlines()]


def _find(rows: list[dict[str, Any]], pred: Callable[[dict[str, Any]], bool]) -> list[dict[str, Any]]:
    return [r for r in rows if pred(r)]


def _event(kind: str) -> Callable[[dict[str, Any]], bool]:
    return lambda r: "event" in r and r["event"]["kind"] == kind and "ignored" not in r


def _effect(kind: str) -> Callable[[dict[str, Any]], bool]:
    return lambda r: "effect" in r and r["effect"]["kind"] == kind


def _check(name: str, fn: Callable[[], str]) -> Check:
    """fn returns its evidence, or raises AssertionError (or a read error) saying what is wrong."""
    try:
        return Check(name, True, fn())
    except AssertionError as exc:
        return Check(name, False, str(exc) or "assertion failed")
    except (OSError, ValueError, KeyError, IndexError, TypeError, ValidationError) as exc:
        return Check(name, False, f"{type(exc).__name__}: {exc}")


def run_checks(inp: VerifyInput, settings: Settings, ledger: Ledger, run_dir: Path) -> VerifyReport:
    ev = _Evidence(run_dir, settings.artifacts_dir)
    scenario = SCENARIOS[inp.scenario]

    def did_in_ledger() -> str:
        rows = [r for r in ledger.rows() if r.user_id == inp.user]
        assert len(rows) == 1, f"{len(rows)} ledger rows for user {inp.user}"
        assert rows[0].status == "active" and rows[0].did, f"row is {rows[0].status}"
        assert rows[0].order_id, "the number has no Telnyx order behind it"
        dial = ev.json("dial.json")
        assert dial["from"] == rows[0].did, f"dialled from {dial['from']}, ledger says {rows[0].did}"
        return f"one row for user {inp.user}, from_did {rows[0].did}"

    def dial_payload() -> str:
        d = ev.json("dial.json")
        report = CallReport.model_validate(ev.json("call_report.json"))
        assert d["to"] == inp.to, f"to={d['to']}, asked {inp.to}"
        assert d["stream_url"].startswith("wss://"), f"stream_url {d['stream_url']} is not wss://"
        assert d["stream_track"] == "inbound_track", f"stream_track {d['stream_track']}"
        assert d["stream_bidirectional_mode"] == "rtp", f"bidirectional mode {d['stream_bidirectional_mode']} (mp3 drops our audio)"
        assert d["stream_bidirectional_target_legs"] == "self", f"target legs {d['stream_bidirectional_target_legs']}"
        assert d["stream_codec"] == d["stream_bidirectional_codec"] == "L16", "codec is not L16 both ways"
        assert d["stream_bidirectional_sampling_rate"] == 16000, "sampling rate is not 16000"
        assert d["stream_auth_token"] == "[redacted]", "stream_auth_token is not redacted in the artifact"
        state = base64.b64decode(d["client_state"]).decode()
        assert state == report.run_id, f"client_state {state} is not the run id {report.run_id}"
        assert d.get("command_id"), "no command_id"
        return f"from={d['from']} to={d['to']} stream_url={d['stream_url'].split('/')[0]}//... rtp/self L16@16000"

    def disclosure_first() -> str:
        t = ev.json("transcript.json")
        agent = t["agent_text"]
        disclosure = disclosure_line(inp.name).removeprefix("Hi, this is an ").rstrip(".")
        ask = QUESTIONS[inp.ask].ask_line(inp.item)
        d, a = agent.find(disclosure), agent.find(ask)
        assert d >= 0, f"no {disclosure!r} in what the agent said: {agent[:120]!r}"
        assert a >= 0, f"the ask {ask!r} was never said"
        assert d < a, f"the ask (at {a}) came before the disclosure (at {d})"
        first = next(turn for turn in t["turns"] if turn["speaker"] == "agent")["text"]
        assert disclosure in first, "the disclosure is not in the agent's first turn"
        return f'"on behalf of {inp.name}" at {agent.find("on behalf of")}, ask at {a}'

    def clean_hangup() -> str:
        report = CallReport.model_validate(ev.json("call_report.json"))
        rows = ev.rows()
        assert report.status == "answered", f"verdict {report.status}"
        hangups = _find(rows, _effect("hangup"))
        assert len(hangups) == 1, f"{len(hangups)} hangup effects"
        assert hangups[0]["effect"]["via"] == "tool", f"hangup via {hangups[0]['effect']['via']}"
        marks = _find(rows, _effect("media.mark"))
        assert len(marks) == 1, f"{len(marks)} marks sent"
        echoes = _find(rows, _event("media.mark"))
        assert len(echoes) == 1, "the final mark was never echoed"
        trail = _find(rows, _event("timer.trail"))
        assert trail, "no trail after the echo"
        confirmed = _find(rows, _event("telnyx.call.hangup"))
        assert confirmed, "no call.hangup from Telnyx"
        order = [marks[0]["seq"], echoes[0]["seq"], trail[0]["seq"], hangups[0]["seq"], confirmed[0]["seq"]]
        assert order == sorted(order), f"out of order: mark, echo, trail, hangup, call.hangup at seq {order}"
        gap = hangups[0]["t_ms"] - echoes[0]["t_ms"]
        assert gap >= 400 - 1, f"hung up {gap} ms after the echo, before the 0.4 s trail"
        return f"verdict answered, one final mark echoed, {gap} ms trail, then hangup, then call.hangup"

    def result_artifact() -> str:
        result = _RESULT.validate_json((ev.dir / "result.json").read_text())
        report = CallReport.model_validate(ev.json("call_report.json"))
        assert result.status == report.status, "result.json and call_report.json disagree"
        refs = dict(report.refs)
        refs.update({k: getattr(result, k) for k in ("transcript_ref", "audio_ref") if getattr(result, k, None)})
        missing = [r for r in refs.values() if not (ev.artifacts / r).is_file()]
        assert not missing, f"refs that do not exist: {missing}"
        redacted = ev.json("call_report.redacted.json")
        assert inp.to not in json.dumps(redacted), "the redacted report shows the full number"
        return f"result.json and call_report.json valid, {len(refs)} refs exist"

    def session_delegation() -> str:
        s = ev.json("session_start.json")
        report = CallReport.model_validate(ev.json("call_report.json"))
        assert s["type"] == "session.start", f"first message is {s['type']}"
        dele = s["session"]["delegation"]
        assert dele["type"] == "responses", f"delegation {dele['type']}"
        tools = {t["name"] for t in dele["responses"]["tools"]}
        assert tools == {"record_task_result", "end_call"}, f"tools {sorted(tools)}"
        effort = dele["responses"]["reasoning"]["effort"]
        assert effort == settings.openai_responses_effort, f"effort {effort}, OPENAI_RESPONSES_EFFORT is {settings.openai_responses_effort}"
        fmt = s["session"]["audio"]["format"]
        assert fmt == {"type": "audio/pcm", "rate": 16000}, f"audio format {fmt}"
        assert (report.media.encoding, report.media.sample_rate) == ("L16", 16000), f"media {report.media}"
        assert not report.media.resampled, "audio was resampled"
        return f"delegation responses, reasoning.effort {effort}, tools, 16 kHz, no resample"

    def tool_loop() -> str:
        rows = ev.rows()
        rec = _find(rows, _event("tool.record_task_result"))
        assert rec, "record_task_result never arrived"
        caused = [r["effect"]["kind"] for r in rows if r.get("cause") == rec[0]["seq"]]
        assert caused[:2] == ["live.tool_output", "live.response_create"], f"record_task_result led to {caused}"
        end = _find(rows, _event("tool.end_call"))
        assert end and end[0]["seq"] > rec[0]["seq"], "end_call did not follow record_task_result"
        task, result = ev.json("task.json"), ev.json("result.json")
        assert task["status"] == result["status"], f"task.json {task['status']} vs result.json {result['status']}"
        assert task["answer_text"] == result["answer_text"], "task.json and result.json answers differ"
        return "record_task_result, then output and response.create, then end_call; task.json matches status"

    def app_owned_hangup() -> str:
        report = CallReport.model_validate(ev.json("call_report.json"))
        rows = ev.rows()
        assert report.hangup.via == "tool", f"hangup path {report.hangup.via}"
        assert report.hangup.telnyx_result == "requested", f"Telnyx said {report.hangup.telnyx_result}"
        assert report.hangup.confirmed, "call.hangup never confirmed our hangup"
        assert report.counts["marks_sent"] == 1 and report.counts["marks_echoed"] == 1, "not exactly one mark"
        trail = _find(rows, _event("timer.trail"))[0]["t_ms"]
        ended = _find(rows, _event("telnyx.call.hangup"))[0]["t_ms"]
        assert trail <= ended, "the far end hung up before our trail"
        return f"hangup path tool, one mark, trail at {trail} ms before call.hangup at {ended} ms"

    def pickup_held() -> str:
        rows = ev.rows()
        started = _find(rows, _event("live.started"))
        assert started, "GPT-Live never started"
        s = started[0]["seq"]
        before = [r["event"]["chunk"] for r in _find(rows, _event("media.audio")) if r["seq"] < s]
        assert before, "no callee audio arrived before GPT-Live was ready (nothing to hold)"
        held = [r["effect"]["chunk"] for r in _find(rows, _effect("live.audio")) if r["effect"]["held"]]
        assert held == before, f"held {len(before)} frames, flushed {len(held)}; order kept: {held == sorted(held)}"
        early_sent = [r for r in _find(rows, _effect("live.audio")) if r["seq"] < s]
        assert not early_sent, "audio went to GPT-Live before session.started"
        with wave.open(str(ev.dir / "audio" / "inbound.wav")) as w:
            early = w.readframes(len(before) * 320)
        assert any(early), "the held audio is silence: the business did not speak before GPT-Live was ready"
        t = ev.json("transcript.json")
        first = next(turn for turn in t["turns"] if turn["speaker"] == "business")["text"]
        assert first.strip() == scenario.greeting, f"GPT-Live heard {first!r}, the business said {scenario.greeting!r}"
        ready_ms = started[0]["t_ms"]
        return f"{len(before)} frames held until session.started at {ready_ms} ms, flushed whole and in order: {first!r}"

    checks = (
        _check("did_in_ledger", did_in_ledger),
        _check("dial_payload", dial_payload),
        _check("disclosure_first", disclosure_first),
        _check("clean_hangup", clean_hangup),
        _check("result_artifact", result_artifact),
        _check("session_delegation", session_delegation),
        _check("tool_loop", tool_loop),
        _check("app_owned_hangup", app_owned_hangup),
        _check("pickup_held", pickup_held),
    )
    return VerifyReport(checks, run_dir)


def verify_quick_ask(inp: VerifyInput = VerifyInput(), workspace: Path | None = None) -> VerifyReport:
    """Place a stub call into `workspace` (a fresh temporary one by default) and check it."""
    workspace = workspace or Path(tempfile.mkdtemp(prefix="calld-verify-"))
    settings = load_settings(calld_state_dir=workspace, calld_mode="stub")
    ledger = Ledger(settings.db_path)

    async def provision_and_call() -> Path:
        # The number comes the way a live one does: search, order, poll, against the stub Telnyx API.
        async with open_client("stub-key", transport=StubNumbers().transport()) as http:
            await provision_did(ledger, TelnyxHttp(http, "stub-connection"), inp.user, connection_id="stub-connection")
        request = AskRequest(to=inp.to, ask=inp.ask, name=inp.name, item=inp.item, user=inp.user)
        plan = prepare(request, settings, ledger)
        return (await run_stub_call(plan, settings, inp.scenario)).artifacts

    try:
        # The stub call runs on trio's autojump clock: the same code, the timings of a real call,
        # no waiting. Virtual time moves only when every task is blocked.
        run_dir = trio.run(provision_and_call, clock=trio.testing.MockClock(autojump_threshold=0))
        return run_checks(inp, settings, ledger, run_dir)
    finally:
        ledger.close()


