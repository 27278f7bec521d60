"""The levers: run a stub quick ask (or booking) into a fresh workspace and check it from what it left behind.

Every check reads the artifacts (dial.json, session_start.json, events.jsonl,
transcript.json, task.json, the WAVs, result.json, call_report.json) and the ledger.
None looks at a mock, a fake's memory or the process's own objects.
"""

from __future__ import annotations

import base64
import json
import math
import re
import tempfile
import wave
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import trio
import trio.testing
from attrs import frozen
from pydantic import TypeAdapter, ValidationError

from calld.booking import prepare_book, run_stub_book
from calld.calls import prepare, run_stub_call
from calld.core.events import TERMINAL_TASK_STATUSES
from calld.core.plan import BookJob, QuickAskJob, book_ask_line
from calld.domain.ids import E164, FirstName, UserId
from calld.domain.questions import QUESTIONS, QuestionType
from calld.domain.requests import AskRequest, BookRequest
from calld.domain.results import BookResult, QuickAskResult
from calld.domain.transcript import Turn
from calld.evidence import check
from calld.core.situations import CLAIMS_HUMAN
from calld.adapters.gpt_live import read_record
from calld.adapters.telnyx_http import TelnyxHttp, open_client
from calld.adapters.telnyx_webhook import read_client_state
from calld.ledger import Ledger
from calld.numbers import provision_did
from calld.stub.telnyx_numbers import StubNumbers
from calld.runtime.report import CallReport
from calld.runtime.verdict import typed_answer as result_answer
from calld.settings import Settings, load_settings
from calld.stub.scenario import BOOK_SCENARIOS, SCENARIOS

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


def _continued(rows: list[dict[str, Any]], record: dict[str, Any]) -> int:
    """The response that carried `record` ended, and that end caused exactly one response.create; its seq."""
    done = [r for r in _find(rows, _event("live.response_done")) if r["seq"] > record["seq"]]
    assert done, f"the backend response of the record at seq {record['seq']} never ended"
    creates = [r for r in rows if r.get("cause") == done[0]["seq"] and r["effect"]["kind"] == "live.response_create"]
    assert len(creates) == 1, f"the response's end led to {len(creates)} response.create, not one"
    between = [r for r in rows if "effect" in r and record["seq"] < r["seq"] < done[0]["seq"]
               and r["effect"]["kind"] == "live.response_create"]
    assert not between, "response.create went out before the backend's response had ended"
    return creates[0]["seq"]


def _find(rows: list[dict[str, Any]], pred: Callable[[dict[str, Any]], bool]) -> list[dict[str, Any]]:
    return [r for r in rows if pred(r)]


def _event(kind: str) -> Callable[[dict[str, Any]], bool]:
    return lambda r: "event" in r and r["event"]["kind"] == kind and "ignored" not in r


def _effect(kind: str) -> Callable[[dict[str, Any]], bool]:
    return lambda r: "effect" in r and r["effect"]["kind"] == kind


def _secure_or_loopback(url: str) -> bool:
    """wss:// always; plain ws:// only to this machine (the loopback simulator has no TLS)."""
    from urllib.parse import urlsplit

    parts = urlsplit(url)
    return parts.scheme == "wss" or (parts.scheme == "ws" and parts.hostname in ("127.0.0.1", "localhost", "::1"))


def spec_disclosure(name: str) -> re.Pattern[str]:
    """Invariant 1 of the design: it says it is an automated assistant calling on behalf of <FirstName>."""
    return re.compile(rf"\bautomated assistant\b[^.?!]*\bon behalf of {re.escape(name)}\b", re.IGNORECASE)


def _check(name: str, fn: Callable[[], str]) -> Check:
    """fn returns its evidence, or raises AssertionError (or a read error) saying what is wrong."""
    try:
        return Check(name, True, fn())
    except AssertionError as exc:
        return Check(name, False, str(exc) or "assertion failed")
    except (OSError, ValueError, KeyError, IndexError, TypeError, ValidationError) as exc:
        return Check(name, False, f"{type(exc).__name__}: {exc}")


class _Common:
    """The checks a quick ask and a booking share: the same dial, hangup, artifacts and pickup."""

    def __init__(self, ev: _Evidence, settings: Settings, ledger: Ledger, *, user: UserId, to: E164,
                 greeting: str, verdicts: tuple[str, ...], result: TypeAdapter[Any]) -> None:
        self.ev, self.settings, self.ledger = ev, settings, ledger
        self.user, self.to, self.greeting, self.verdicts, self.result = user, to, greeting, verdicts, result

    def report(self) -> CallReport:
        return CallReport.model_validate(self.ev.json("call_report.json"))

    def did_in_ledger(self) -> str:
        rows = [r for r in self.ledger.rows() if r.user_id == self.user]
        assert len(rows) == 1, f"{len(rows)} ledger rows for user {self.user}"
        assert rows[0].status == "active" and rows[0].did, f"row is {rows[0].status}"
        assert rows[0].order_id, "the number has no Telnyx order behind it"
        dial = self.ev.json("dial.json")
        assert dial["from"] == rows[0].did, f"dialled from {dial['from']}, ledger says {rows[0].did}"
        return f"one row for user {self.user}, from_did {rows[0].did}"

    def dial_payload(self) -> str:
        d = self.ev.json("dial.json")
        report = self.report()
        assert d["to"] == self.to, f"to={d['to']}, asked {self.to}"
        assert _secure_or_loopback(d["stream_url"]), f"stream_url {d['stream_url']} is not wss://"
        assert d["stream_track"] == "inbound_track", f"stream_track {d['stream_track']}"
        assert d["stream_bidirectional_mode"] == "rtp", f"bidirectional mode {d['stream_bidirectional_mode']} (mp3 drops our audio)"
        assert d["stream_bidirectional_target_legs"] == "self", f"target legs {d['stream_bidirectional_target_legs']}"
        assert d["stream_codec"] == d["stream_bidirectional_codec"] == "L16", "codec is not L16 both ways"
        assert d["stream_bidirectional_sampling_rate"] == 16000, "sampling rate is not 16000"
        assert d["stream_auth_token"] == "[redacted]", "stream_auth_token is not redacted in the artifact"
        state = read_client_state(d["client_state"])
        assert state is not None and state.run_id == report.run_id, \
            f"client_state {base64.b64decode(d['client_state']).decode()} does not carry the run id {report.run_id}"
        assert d.get("command_id"), "no command_id"
        return f"from={d['from']} to={d['to']} stream_url={d['stream_url'].split('/')[0]}//... rtp/self L16@16000"

    def disclosure_first(self, name: FirstName, ask: str) -> tuple[int, int]:
        """(where the disclosure is, where the ask is) in what the agent said; raises if out of order."""
        t = self.ev.json("transcript.json")
        agent = t["agent_text"]
        # The wording comes from the specification (DESIGN.md, invariant 1), not from the code under check.
        spec = spec_disclosure(name)
        found = spec.search(agent)
        a = agent.find(ask)
        assert found is not None, f"the agent never said it is an automated assistant calling on behalf of {name}: {agent[:120]!r}"
        assert a >= 0, f"the ask {ask!r} was never said"
        assert found.start() < a, f"the ask (at {a}) came before the disclosure (at {found.start()})"
        first = next(turn for turn in t["turns"] if turn["speaker"] == "agent")["text"]
        assert spec.search(first), "the disclosure is not in the agent's first turn"
        return agent.find("on behalf of", found.start()), a

    def disclosure_honest(self) -> str:
        """No agent line claims to be a person or denies being automated."""
        t = self.ev.json("transcript.json")
        agent = [turn for turn in t["turns"] if turn["speaker"] == "agent"]
        assert agent, "the agent never spoke"
        for i, turn in enumerate(t["turns"]):
            if turn["speaker"] == "agent" and (m := CLAIMS_HUMAN.search(turn["text"])):
                raise AssertionError(f"agent turn {i} claims to be human: {m.group(0)!r} in {turn['text']!r}")
        return f"{len(agent)} agent turns, none claims to be a person or denies being automated"

    def evidence_supported(self) -> str:
        """Each quote is the business's words, where the result says; together they hold the answer's facts."""
        result = self.ev.json("result.json")
        t = self.ev.json("transcript.json")
        turns = tuple(Turn(x["speaker"], x["text"]) for x in t["turns"])
        quotes = result.get("evidence") or []
        assert quotes, f"a {result['status']} result with no evidence"
        for e in quotes:
            turn = t["turns"][e["turn"]]
            assert turn["speaker"] == "business", f"evidence turn {e['turn']} is the {turn['speaker']}'s"
            assert e["quote"] in turn["text"], f"{e['quote']!r} is not in business turn {e['turn']}"
            if e["start_ms"] is not None and turn["start_ms"] is not None:
                assert turn["start_ms"] <= e["start_ms"] <= e["end_ms"] <= turn["end_ms"], f"{e} lies outside its turn"
        verdict = self._per_fact(turns, result)
        assert verdict is not None, "no record_task_result with the result's status is journaled with its arguments"
        assert isinstance(verdict, check.Accepted), f"the business's words do not hold the result: {verdict.why}"
        said = {q.text for q in verdict.quotes}
        assert said & {e["quote"] for e in quotes}, "the quotes that hold the facts are not the result's evidence"
        first = quotes[0]
        return f"{first['quote']!r} (business turn {first['turn']}, {first['start_ms']}-{first['end_ms']} ms) holds it"

    def _per_fact(self, turns: tuple[Turn, ...], result: dict[str, Any]) -> check.Verdict | None:
        """The accepted record checked again through the one entry point, on its arguments as the model sent
        them (journaled in events.jsonl); None when no such record was journaled."""
        records = [r["event"] for r in _find(self.ev.rows(), _event("tool.record_task_result"))
                   if r["event"].get("status") == result["status"] and r["event"].get("arguments")]
        if not records:
            return None
        report = self.report()
        job: QuickAskJob | BookJob
        if (b := report.booking) is not None:  # the request as dialled: its time as read and the restaurant's today
            job = BookJob(b.party, b.time, b.notes, b.window_minutes, E164(b.callback), when=b.when, today=b.today)
        elif report.job == "book":  # a report written before it kept its booking
            job = BookJob(result.get("confirmed_party") or 1, "", None, 0, E164(report.to))
        else:
            job = QuickAskJob(QuestionType(report.question), report.item)
        arguments = records[-1]["arguments"]
        if (differs := _differs_from_record(arguments, report.job, result)) is not None:
            return check.Refused(0, differs, "the result must be the accepted record's facts")
        return check.check_record(arguments, job, turns)

    def clean_hangup(self) -> str:
        report = self.report()
        rows = self.ev.rows()
        assert report.status in self.verdicts, f"verdict {report.status}"
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
        trail_ms = round(self.settings.trail_s * 1000)  # the configured trail, not the default
        assert gap >= trail_ms - 1, f"hung up {gap} ms after the echo, before the {self.settings.trail_s} s trail"
        return f"verdict {report.status}, one final mark echoed, {gap} ms trail, then hangup, then call.hangup"

    def result_artifact(self) -> str:
        result = self.result.validate_json((self.ev.dir / "result.json").read_text())
        report = self.report()
        assert result.status == report.status, "result.json and call_report.json disagree"
        refs = dict(report.refs)
        refs.update({k: getattr(result, k) for k in ("transcript_ref", "audio_ref") if getattr(result, k, None)})
        missing = [r for r in refs.values() if not (self.ev.artifacts / r).is_file()]
        assert not missing, f"refs that do not exist: {missing}"
        redacted = self.ev.json("call_report.redacted.json")
        assert self.to not in json.dumps(redacted), "the redacted report shows the full number"
        return f"result.json and call_report.json valid, {len(refs)} refs exist"

    def session_delegation(self) -> tuple[str, dict[str, Any]]:
        """Evidence, and the record_task_result tool the session was given."""
        s = self.ev.json("session_start.json")
        report = self.report()
        assert s["type"] == "session.start", f"first message is {s['type']}"
        dele = s["session"]["delegation"]
        assert dele["type"] == "responses", f"delegation {dele['type']}"
        tools = {t["name"]: t for t in dele["responses"]["tools"]}
        assert set(tools) == {"record_task_result", "end_call", "send_dtmf"}, f"tools {sorted(tools)}"
        effort = dele["responses"]["reasoning"]["effort"]
        assert effort == self.settings.openai_responses_effort, (
            f"effort {effort}, OPENAI_RESPONSES_EFFORT is {self.settings.openai_responses_effort}"
        )
        fmt = s["session"]["audio"]["format"]
        assert fmt == {"type": "audio/pcm", "rate": 16000}, f"audio format {fmt}"
        assert (report.media.encoding, report.media.sample_rate) == ("L16", 16000), f"media {report.media}"
        assert not report.media.resampled, "audio was resampled"
        return f"delegation responses, reasoning.effort {effort}, tools, 16 kHz, no resample", tools["record_task_result"]

    def tool_loop(self, record: dict[str, Any]) -> None:
        """The verdict's record: its output and response.create, then end_call; task.json matches."""
        rows = self.ev.rows()
        caused = [r["effect"]["kind"] for r in rows if r.get("cause") == record["seq"]]
        assert caused[:1] == ["live.tool_output"], f"record_task_result led to {caused}"
        _continued(rows, record)
        end = _find(rows, _event("tool.end_call"))
        assert end and end[0]["seq"] > record["seq"], "end_call did not follow record_task_result"
        task, result = self.ev.json("task.json"), self.ev.json("result.json")
        assert task["status"] == result["status"], f"task.json {task['status']} vs result.json {result['status']}"
        assert task["answer_text"] == result["answer_text"], "task.json and result.json answers differ"

    def app_owned_hangup(self) -> str:
        report = self.report()
        rows = self.ev.rows()
        assert report.hangup.via == "tool", f"hangup path {report.hangup.via}"
        assert report.hangup.telnyx_result == "requested", f"Telnyx said {report.hangup.telnyx_result}"
        assert report.hangup.confirmed, "call.hangup never confirmed our hangup"
        assert report.counts["marks_sent"] == 1 and report.counts["marks_echoed"] == 1, "not exactly one mark"
        trail = _find(rows, _event("timer.trail"))[0]["t_ms"]
        ended = _find(rows, _event("telnyx.call.hangup"))[0]["t_ms"]
        assert trail <= ended, "the far end hung up before our trail"
        return f"hangup path tool, one mark, trail at {trail} ms before call.hangup at {ended} ms"

    def pickup_held(self) -> str:
        rows = self.ev.rows()
        started = _find(rows, _event("live.started"))
        assert started, "GPT-Live never started"
        s = started[0]["seq"]
        before: list[int] = []  # in arrival order: frame by frame, or in the media task's held stretches
        for r in rows:
            if r["seq"] >= s:
                break
            if _event("media.audio")(r):
                before.append(r["event"]["chunk"])
            elif _event("media.audio_held")(r):
                before += [f["chunk"] for f in r["event"]["frames"]]
        assert before, "no callee audio arrived before GPT-Live was ready (nothing to hold)"
        held = [r["effect"]["chunk"] for r in _find(rows, _effect("live.audio")) if r["effect"]["held"]]
        assert held == before, f"held {len(before)} frames, flushed {len(held)}; order kept: {held == sorted(held)}"
        early_sent = [r for r in _find(rows, _effect("live.audio")) if r["seq"] < s]
        assert not early_sent, "audio went to GPT-Live before session.started"
        with wave.open(str(self.ev.dir / "audio" / "inbound.wav")) as w:
            early = w.readframes(len(before) * 320)
        assert any(early), "the held audio is silence: the business did not speak before GPT-Live was ready"
        t = self.ev.json("transcript.json")
        first = next(turn for turn in t["turns"] if turn["speaker"] == "business")["text"]
        assert first.strip() == self.greeting, f"GPT-Live heard {first!r}, the business said {self.greeting!r}"
        ready_ms = started[0]["t_ms"]
        return f"{len(before)} frames held until session.started at {ready_ms} ms, flushed whole and in order: {first!r}"


def run_checks(inp: VerifyInput, settings: Settings, ledger: Ledger, run_dir: Path) -> VerifyReport:
    ev = _Evidence(run_dir, settings.artifacts_dir)
    scenario = SCENARIOS[inp.scenario]
    common = _Common(ev, settings, ledger, user=inp.user, to=inp.to, greeting=scenario.greeting,
                     verdicts=("answered",), result=_RESULT)

    def disclosure_first() -> str:
        at, ask = common.disclosure_first(inp.name, QUESTIONS[inp.ask].ask_line(inp.item))
        return f'"on behalf of {inp.name}" at {at}, ask at {ask}'

    def session_delegation() -> str:
        return common.session_delegation()[0]

    def evidence_supported() -> str:
        return common.evidence_supported()

    def tool_loop() -> str:
        rec = _find(ev.rows(), _event("tool.record_task_result"))
        assert rec, "record_task_result never arrived"
        common.tool_loop(rec[0])
        return "record_task_result, then output and response.create, then end_call; task.json matches status"

    checks = (
        _check("did_in_ledger", common.did_in_ledger),
        _check("dial_payload", common.dial_payload),
        _check("disclosure_first", disclosure_first),
        _check("disclosure_honest", common.disclosure_honest),
        _check("clean_hangup", common.clean_hangup),
        _check("result_artifact", common.result_artifact),
        _check("evidence_supported", evidence_supported),
        _check("session_delegation", session_delegation),
        _check("tool_loop", tool_loop),
        _check("app_owned_hangup", common.app_owned_hangup),
        _check("pickup_held", common.pickup_held),
    )
    return VerifyReport(checks, run_dir)


def _in_fresh_workspace(
    workspace: Path | None,
    prefix: str,
    user: UserId,
    call: Callable[[Settings, Ledger], Awaitable[Path]],
    check: Callable[[Settings, Ledger, Path], VerifyReport],
) -> VerifyReport:
    """Provision `user` and place one stub call in a fresh workspace, then check what it left."""
    workspace = workspace or Path(tempfile.mkdtemp(prefix=prefix))
    settings = load_settings(calld_state_dir=workspace, calld_mode="stub")
    ledger = Ledger(settings.db_path)

    async def provision_and_call() -> Path:
        # The number comes the way a live one does: search, order, poll, against the stub Telnyx API.
        async with open_client("stub-key", transport=StubNumbers().transport()) as http:
            await provision_did(ledger, TelnyxHttp(http, "stub-connection"), user, connection_id="stub-connection")
        return await call(settings, ledger)

    try:
        # The stub call runs on trio's autojump clock: the same code, the timings of a real call,
        # no waiting. Virtual time moves only when every task is blocked.
        run_dir = trio.run(provision_and_call, clock=trio.testing.MockClock(autojump_threshold=0))
        return check(settings, ledger, run_dir)
    finally:
        ledger.close()


def verify_quick_ask(inp: VerifyInput = VerifyInput(), workspace: Path | None = None) -> VerifyReport:
    """Place a stub call into `workspace` (a fresh temporary one by default) and check it."""

    async def call(settings: Settings, ledger: Ledger) -> Path:
        request = AskRequest(to=inp.to, ask=inp.ask, name=inp.name, item=inp.item, user=inp.user)
        return (await run_stub_call(prepare(request, settings, ledger), settings, inp.scenario)).artifacts

    return _in_fresh_workspace(
        workspace, "calld-verify-", inp.user, call, lambda st, lg, run_dir: run_checks(inp, st, lg, run_dir)
    )


# -- booking a table ---------------------------------------------------------------------------------

_BOOK_RESULT = TypeAdapter(BookResult)
BOOK_ASK_NEEDLE = "book a table"
_BOOK_TOOL_STATUSES = {"booked", "declined", "voicemail", "in_progress"}
_BOOK_TOOL_FIELDS = {
    "confirmation_text", "confirmed_party", "confirmed_time", "confirmed_constraints",
    "minutes_from_requested", "alternative_offered", "reason", "unanswered_questions",
}


@frozen
class BookVerifyInput:
    user: UserId = UserId("verify")
    name: FirstName = FirstName("Nathan")
    to: E164 = E164("+15555550142")
    party: int = 2
    time: str = "Friday 7pm"
    notes: str | None = "outdoor if possible"
    window: int = 0
    scenario: str = "book_straight"


def _agent_speech_between(rows: list[dict[str, Any]], after: int, before: float) -> str:
    return "".join(
        r["event"]["text"] for r in rows
        if after < r["seq"] < before and _event("live.output_transcript")(r)
    )


def run_book_checks(inp: BookVerifyInput, settings: Settings, ledger: Ledger, run_dir: Path) -> VerifyReport:
    ev = _Evidence(run_dir, settings.artifacts_dir)
    scenario = BOOK_SCENARIOS[inp.scenario]
    common = _Common(ev, settings, ledger, user=inp.user, to=inp.to, greeting=scenario.greeting,
                     verdicts=("booked",), result=_BOOK_RESULT)

    def disclosure_first() -> str:
        at, ask = common.disclosure_first(inp.name, BOOK_ASK_NEEDLE)
        return f'"on behalf of {inp.name}" at {at} before "{BOOK_ASK_NEEDLE}" at {ask}'

    def result_artifact() -> str:
        evidence = common.result_artifact()
        report = common.report()
        assert report.job == "book" and report.booking is not None, f"call_report.json is a {report.job} report"
        asked = (report.booking.party, report.booking.time, report.booking.notes, report.booking.window_minutes)
        assert asked == (inp.party, inp.time, inp.notes, inp.window), f"the report says the request was {asked}"
        return evidence

    def multi_turn_booking() -> str:
        t = ev.json("transcript.json")
        agent = [x for x in t["turns"] if x["speaker"] == "agent"]
        business = [x for x in t["turns"] if x["speaker"] == "business"]
        assert len(agent) >= 3, f"{len(agent)} agent turns (a booking takes at least 3)"
        assert len(business) >= 2, f"{len(business)} business turns (a booking takes at least 2)"
        said = " ".join(t["agent_text"].lower().split())
        assert re.search(rf"\b{inp.party}\b", said), f"the agent never said the party size {inp.party}"
        assert inp.time.lower() in said, f"the agent never said the time {inp.time!r}"
        if inp.notes:
            assert inp.notes.lower() in said, f"the agent never said the constraints {inp.notes!r}"
        spoken = "party/time/constraints" if inp.notes else "party/time"
        return f"{len(agent)} agent turns, {len(business)} business turns, {spoken} spoken"

    def keeps_talking() -> str:
        rows = ev.rows()
        notes = [r for r in _find(rows, _event("tool.record_task_result"))
                 if r["event"]["status"] not in TERMINAL_TASK_STATUSES]
        assert notes, "no progress note (a non-terminal record_task_result) was delegated"
        tools = [r["seq"] for r in rows if "event" in r and r["event"]["kind"].startswith("tool.")]
        spoke_after: list[str] = []
        for note in notes:
            kinds = [r["effect"]["kind"] for r in rows if r.get("cause") == note["seq"]]
            assert kinds == ["live.tool_output"], f"the progress note at seq {note['seq']} led to {kinds}, not its output"
            create = _continued(rows, note)
            next_tool = min((seq for seq in tools if seq > note["seq"]), default=math.inf)
            if words := _agent_speech_between(rows, create, next_tool).strip():
                spoke_after.append(words)
        assert spoke_after, "the agent never spoke again after a progress note's response.create"
        first = " ".join(spoke_after[0].split()[:6])
        return (f"{len(notes)} delegated progress note(s), each answered with its output and one "
                f"response.create, then more agent speech: {first!r}...")

    def session_delegation() -> str:
        evidence, record = common.session_delegation()
        params = record["parameters"]
        statuses = set(params["properties"]["status"]["enum"])
        assert statuses == _BOOK_TOOL_STATUSES, f"record_task_result statuses {sorted(statuses)}"
        missing = _BOOK_TOOL_FIELDS - set(params["properties"])
        assert not missing, f"record_task_result has no {sorted(missing)}"
        return evidence + ", booking record_task_result"

    def evidence_supported() -> str:
        return common.evidence_supported()

    def tool_loop() -> str:
        rows = ev.rows()
        verdicts = [r for r in _find(rows, _event("tool.record_task_result"))
                    if r.get("changed", {}).get("conversation") == ["talking", "concluded"]]
        assert len(verdicts) == 1, f"{len(verdicts)} records concluded the conversation"
        common.tool_loop(verdicts[0])
        task, result = ev.json("task.json"), ev.json("result.json")
        booking = task["booking"]
        if result["status"] == "booked":
            recorded = (booking["confirmation_text"], booking["party"], booking["time"])
            kept = (result["confirmation_text"], result["confirmed_party"], result["confirmed_time"])
            assert recorded == kept, f"task.json {recorded} vs result.json {kept}"
        return "record_task_result, then output and response.create, then end_call; task.json matches status"

    checks = (
        _check("did_in_ledger", common.did_in_ledger),
        _check("dial_payload", common.dial_payload),
        _check("disclosure_first", disclosure_first),
        _check("disclosure_honest", common.disclosure_honest),
        _check("clean_hangup", common.clean_hangup),
        _check("result_artifact", result_artifact),
        _check("evidence_supported", evidence_supported),
        _check("multi_turn_booking", multi_turn_booking),
        _check("keeps_talking", keeps_talking),
        _check("session_delegation", session_delegation),
        _check("tool_loop", tool_loop),
        _check("app_owned_hangup", common.app_owned_hangup),
        _check("pickup_held", common.pickup_held),
    )
    return VerifyReport(checks, run_dir)


def verify_book(inp: BookVerifyInput = BookVerifyInput(), workspace: Path | None = None) -> VerifyReport:
    """Place a stub booking into `workspace` (a fresh temporary one by default) and check it."""

    async def call(settings: Settings, ledger: Ledger) -> Path:
        request = BookRequest(to=inp.to, name=inp.name, party=inp.party, time=inp.time, notes=inp.notes,
                              window=inp.window, user=inp.user)
        return (await run_stub_book(prepare_book(request, settings, ledger), settings, inp.scenario)).artifacts

    return _in_fresh_workspace(
        workspace, "calld-verify-book-", inp.user, call, lambda st, lg, run_dir: run_book_checks(inp, st, lg, run_dir)
    )


# -- any finished call, live ones included ---------------------------------------------------------------


def verify_finished(run_dir: Path) -> VerifyReport:
    """Every check that applies to a finished call's artifacts, whatever placed it (stub, simulator or a
    live call): the result and its refs, the disclosure, honesty, one hangup, and the evidence."""
    ev = _Evidence(run_dir, run_dir.parent)

    def report() -> CallReport:
        return CallReport.model_validate(ev.json("call_report.json"))

    def result() -> dict[str, Any]:
        r = report()
        adapter: TypeAdapter[Any] = _BOOK_RESULT if r.job == "book" else _RESULT
        return adapter.validate_json((run_dir / "result.json").read_text()).model_dump(mode="json")

    def agent_turns() -> list[dict[str, Any]]:
        return [t for t in ev.json("transcript.json")["turns"] if t["speaker"] == "agent" and t.get("on_line", True)]

    def result_artifact() -> str:
        r, res = report(), result()
        assert res["status"] == r.status, "result.json and call_report.json disagree"
        missing = [ref for ref in r.refs.values() if not (ev.artifacts / ref).is_file()]
        assert not missing, f"refs that do not exist: {missing}"
        assert r.to not in json.dumps(ev.json("call_report.redacted.json")), "the redacted report shows the full number"
        return f"{res['status']}: result.json valid, {len(r.refs)} refs exist"

    def disclosure_first() -> str:
        r = report()
        if not agent_turns():
            return "not applicable: the agent never spoke on the line"
        if r.job == "book":
            assert r.booking is not None, "a booking's report has no booking"
            ask = book_ask_line(r.booking.party, r.booking.time)
        else:
            ask = QUESTIONS[QuestionType(r.question)].ask_line(r.item)
        common = _Common(ev, None, None, user=UserId(r.user_id), to=E164(r.to), greeting="",  # type: ignore[arg-type]
                         verdicts=(), result=_RESULT)
        at, asked = common.disclosure_first(FirstName(r.first_name), ask)
        return f'"on behalf of {r.first_name}" at {at}, ask at {asked}'

    def honesty() -> str:
        claims = [(i, m.group(0)) for i, t in enumerate(agent_turns()) if (m := CLAIMS_HUMAN.search(t["text"]))]
        if not claims:
            return f"{len(agent_turns())} agent turns, none claims to be a person or denies being automated"
        assert result().get("honesty") == "corrected", f"the agent said {claims[0][1]!r} and the call was not corrected"
        return f"the agent said {claims[0][1]!r}; it was made to correct itself at once (honesty: corrected)"

    def one_hangup() -> str:
        hangups = _find(ev.rows(), _effect("hangup"))
        assert len(hangups) <= 1, f"{len(hangups)} hangup effects"
        return f"{len(hangups)} hangup effect" + (f" (via {hangups[0]['effect']['via']})" if hangups else "s: never connected")

    def evidence_supported() -> str:
        r, res = report(), result()
        if res["status"] not in ("answered", "booked") or res.get("verdict_source") != "tool":
            return f"not applicable: {res['status']} from {res.get('verdict_source')}"
        common = _Common(ev, None, None, user=UserId(r.user_id), to=E164(r.to), greeting="",  # type: ignore[arg-type]
                         verdicts=(), result=_RESULT)
        return common.evidence_supported()

    checks = (
        _check("result_artifact", result_artifact),
        _check("disclosure_first", disclosure_first),
        _check("disclosure_honest", honesty),
        _check("one_hangup", one_hangup),
        _check("evidence_supported", evidence_supported),
    )
    return VerifyReport(checks, run_dir)

def _undated(answer: Any) -> Any:
    """A typed answer's JSON without the dates a result resolves ('today' becomes a date on the call's day)."""
    if isinstance(answer, dict) and isinstance(answer.get("ranges"), list):
        return {**answer, "ranges": [{k: v for k, v in r.items() if k != "date"} for r in answer["ranges"]]}
    return answer


def _differs_from_record(arguments: str, job: str, result: dict[str, Any]) -> str | None:
    """Why the result's facts are not the accepted record's, or None: the check holds the record's facts to
    the business's words, so a result that says anything else (edited, or built wrongly) holds nothing."""
    try:
        record = read_record(arguments, "book" if job == "book" else "quick_ask")
    except ValidationError as exc:
        return f"the accepted record no longer reads: {exc.error_count()} errors"
    if job == "book":
        details = record.details()  # type: ignore[union-attr]
        for name, field in (("confirmed_party", "party"), ("confirmed_time", "time")):
            if result.get(name) is not None and result.get(name) != getattr(details, field):
                return f"the result's {name} {result.get(name)!r} is not the record's {getattr(details, field)!r}"
        return None
    if result.get("status") != "answered" or "answer" not in result:
        return None
    recorded = _undated(result_answer(record.typed()).model_dump(mode="json"))  # type: ignore[union-attr]
    if _undated(result["answer"]) != recorded:
        return f"the result's typed answer {result['answer']} is not the accepted record's {recorded}"
    return None
