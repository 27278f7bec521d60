"""The lever, as a test: a stub quick-ask in a fresh workspace passes every check, and each new
check fails on a call that breaks its rule."""

from __future__ import annotations

import json

import attrs
import pytest

from calld import verify
from calld.stub import scenario as scenarios
from calld.verify import VerifyInput, verify_quick_ask

QUICK_CHECKS = [
    "did_in_ledger",
    "dial_payload",
    "disclosure_first",
    "disclosure_honest",
    "clean_hangup",
    "result_artifact",
    "evidence_supported",
    "session_delegation",
    "tool_loop",
    "app_owned_hangup",
    "pickup_held",
]


def failed(report) -> dict[str, str]:
    return {c.name: c.evidence for c in report.checks if not c.passed}


def test_verify_quick_ask_passes_every_check(tmp_path):
    report = verify_quick_ask(workspace=tmp_path)
    assert [c.name for c in report.checks] == QUICK_CHECKS
    assert not failed(report)
    assert report.lines()[-1] == "11/11 passed"


@pytest.mark.parametrize("claim", ["I'm a real person, by the way.", "No, I am not a robot."])
def test_disclosure_honest_fails_when_the_agent_claims_to_be_human(tmp_path, monkeypatch, claim):
    base = scenarios.SCENARIOS["hours"]
    liar = attrs.evolve(base, name="liar", closing_line=f"Thank you so much. {claim} Goodbye!")
    monkeypatch.setitem(scenarios.SCENARIOS, "liar", liar)
    report = verify_quick_ask(VerifyInput(scenario="liar"), workspace=tmp_path)
    assert set(failed(report)) == {"disclosure_honest"}
    assert "claims to be human" in failed(report)["disclosure_honest"]


def tamper_result(monkeypatch, change) -> None:
    """Let the stub call finish, then change its result.json before the checks read it."""
    original = verify.run_checks

    def tampered(inp, settings, ledger, run_dir):
        path = run_dir / "result.json"
        result = json.loads(path.read_text())
        change(result, json.loads((run_dir / "transcript.json").read_text())["turns"])
        path.write_text(json.dumps(result))
        return original(inp, settings, ledger, run_dir)

    monkeypatch.setattr(verify, "run_checks", tampered)


def test_evidence_supported_fails_when_the_quote_is_not_the_businesss(tmp_path, monkeypatch):
    def agent_words(result, turns):
        agent_turn = next(i for i, t in enumerate(turns) if t["speaker"] == "agent")
        result["evidence"] = [{"quote": "What are your opening hours?", "turn": agent_turn, "start_ms": None, "end_ms": None}]

    tamper_result(monkeypatch, agent_words)
    report = verify_quick_ask(workspace=tmp_path)
    assert "is the agent's" in failed(report)["evidence_supported"]


def test_evidence_supported_fails_when_the_answer_says_more_than_the_business(tmp_path, monkeypatch):
    def later(result, turns):
        result["answer"]["ranges"][0]["closes"] = "21:00"  # the typed answer is what the quotes must hold

    tamper_result(monkeypatch, later)
    report = verify_quick_ask(workspace=tmp_path)
    assert "do not hold the result" in failed(report)["evidence_supported"]


# -- verify RUN: any finished call's artifacts ----------------------------------------------------------------


async def test_verify_a_finished_call_checks_its_artifacts_and_finds_a_dishonest_agent(tmp_path, autojump_clock):
    import json

    from calld.verify import verify_finished
    from tests.stubcall import stub_call, variant

    run = await stub_call(tmp_path, "hours")
    report = verify_finished(run.dir)
    assert report.passed, report.lines()
    assert [c.name for c in report.checks] == ["result_artifact", "disclosure_first", "disclosure_honest", "one_hangup",
                                                "evidence_supported"]
    # A claim to be human with no correction on record fails, whatever placed the call.
    path = run.dir / "transcript.json"
    t = json.loads(path.read_text())
    agent = next(x for x in t["turns"] if x["speaker"] == "agent")
    agent["text"] += " And yes, I'm a real person."
    path.write_text(json.dumps(t))
    honest = next(c for c in verify_finished(run.dir).checks if c.name == "disclosure_honest")
    assert not honest.passed and "I'm a real person" in honest.evidence
    # A call corrected in the moment passes, and says so.
    corrected = await stub_call(tmp_path / "c", variant("goodbye_question", goodbye_talk="Wait, are you a real person?",
                                                        goodbye_reply="Yes, I'm a real person."))
    honest = next(c for c in verify_finished(corrected.dir).checks if c.name == "disclosure_honest")
    assert honest.passed and "corrected" in honest.evidence


async def test_verify_a_finished_call_whose_evidence_does_not_hold_fails(tmp_path, autojump_clock):
    import json

    from calld.verify import verify_finished
    from tests.stubcall import stub_call

    run = await stub_call(tmp_path, "hours")
    path = run.dir / "result.json"
    result = json.loads(path.read_text())
    result["answer"]["ranges"][0]["closes"] = "21:00"
    path.write_text(json.dumps(result))
    check = next(c for c in verify_finished(run.dir).checks if c.name == "evidence_supported")
    assert not check.passed and "'closes': '21:00'" in check.evidence and "not the accepted record's" in check.evidence


def test_verify_run_refuses_a_folder_with_no_call_clearly(tmp_path, capsys):
    from calld.cli.ctl import main

    code = main(["--socket", str(tmp_path / "none.sock"), "verify", str(tmp_path)])
    assert code != 0
    assert "Traceback" not in capsys.readouterr().err
