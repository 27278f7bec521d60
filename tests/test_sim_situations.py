"""Real phone situations (issue 12) played by calld-sim: the daemon in live mode over real
loopback sockets (signed webhooks, the media WebSocket, GPT-Live, Telnyx REST), autojump clock."""

from __future__ import annotations

import json

import pytest

from calld.cli.ctl import EXIT_FAILED, EXIT_NO_ANSWER
from calld.stub.scenario import SCENARIOS
from tests.test_sim_e2e import live_call


def artifacts(settings):
    (run_dir,) = [p for p in settings.artifacts_dir.iterdir() if p.is_dir() and not p.name.startswith(".")]
    return run_dir


def report_of(settings):
    return json.loads((artifacts(settings) / "call_report.json").read_text())


@pytest.mark.parametrize(
    ("scenario", "code", "status", "reason"),
    [
        ("busy", EXIT_NO_ANSWER, "no_answer", "busy"),
        ("not_in_service", EXIT_FAILED, "failed", "number_unreachable"),
        ("silent_line", EXIT_NO_ANSWER, "no_answer", "silent_line"),
    ],
)
async def test_not_reached_over_real_sockets(tmp_path, nursery, autojump_clock, scenario, code, status, reason):
    sim, settings, exit_code, result = await live_call(tmp_path, nursery, SCENARIOS[scenario])
    assert (exit_code, result["status"]) == (code, status)
    report = report_of(settings)
    assert report["reason"] == reason
    assert (artifacts(settings) / "hangup.json").is_file()
    world = next(iter(sim.worlds.values()))
    assert len(world.dial_requests) == 1


def rows_of(settings):
    return [json.loads(line) for line in (artifacts(settings) / "events.jsonl").read_text().splitlines()]


def first_t(rows, kind):
    return next(r["t_ms"] for r in rows if (r.get("event") or r.get("effect"))["kind"] == kind and "ignored" not in r)


@pytest.mark.parametrize(
    ("scenario", "status", "reason", "lost", "within_ms"),
    [
        ("media_drop", "failed", "media_lost", "media.stopped", 2500),
        ("media_before_start", "failed", "media_lost", "media.stopped", 2500),
        ("live_refused", "failed", "model_unavailable", "live.error", 3000),
        ("live_lost", "failed", "model_lost", "live.closed", 3000),
        ("live_lost_after_answer", "answered", None, "live.closed", 3000),
    ],
)
async def test_transports_lost_over_real_sockets(tmp_path, nursery, autojump_clock, scenario, status, reason, lost, within_ms):
    sim, settings, exit_code, result = await live_call(tmp_path, nursery, SCENARIOS[scenario])
    assert result["status"] == status
    report = report_of(settings)
    assert report["reason"] == reason
    rows = rows_of(settings)
    assert first_t(rows, "hangup") - first_t(rows, lost) <= within_ms
    world = next(iter(sim.worlds.values()))
    assert len(world.hangup_requests) == 1


async def test_a_hold_over_real_sockets_is_waited_out(tmp_path, nursery, autojump_clock):
    sim, settings, exit_code, result = await live_call(tmp_path, nursery, SCENARIOS["hold_music"])
    assert result["status"] == "answered"
    (hold,) = report_of(settings)["holds"]
    assert hold["cue"] == "please hold" and hold["ended"] == "returned"
    assert hold["end_ms"] - hold["start_ms"] > 20_000  # longer than STALL_S


async def test_the_wrong_party_over_real_sockets(tmp_path, nursery, autojump_clock):
    sim, settings, exit_code, result = await live_call(tmp_path, nursery, SCENARIOS["wrong_party"])
    assert (exit_code, result["status"]) == (EXIT_FAILED, "failed")
    report = report_of(settings)
    assert report["reason"] == "wrong_number" and report["hangup"]["via"] == "wrong_party"
    world = next(iter(sim.worlds.values()))
    assert "I must have the wrong number" in " ".join(world.heard_on_line)


async def test_a_screener_over_real_sockets(tmp_path, nursery, autojump_clock):
    sim, settings, exit_code, result = await live_call(tmp_path, nursery, SCENARIOS["screener"])
    assert result["status"] == "answered"
    world = next(iter(sim.worlds.values()))
    assert "I am calling to ask: What are your opening hours?" in " ".join(world.heard_on_line)


async def test_a_phone_menu_over_real_sockets(tmp_path, nursery, autojump_clock):
    sim, settings, exit_code, result = await live_call(tmp_path, nursery, SCENARIOS["menu"])
    assert result["status"] == "answered"
    world = next(iter(sim.worlds.values()))
    assert [d for d, _ in world.dtmf_received] == ["0"]  # Telnyx's send_dtmf, over the simulator's REST


async def test_a_looping_menu_over_real_sockets(tmp_path, nursery, autojump_clock):
    sim, settings, exit_code, result = await live_call(tmp_path, nursery, SCENARIOS["menu_loop"])
    assert result["status"] == "failed" and report_of(settings)["reason"] == "ivr_unnavigable"
    world = next(iter(sim.worlds.values()))
    assert len(world.dtmf_received) == settings.dtmf_max_presses


@pytest.mark.parametrize(
    ("scenario", "status", "source"),
    [("voicemail_hours", "answered", "greeting"), ("voicemail", "voicemail", "greeting"), ("amd_wrong", "answered", "tool")],
)
async def test_recordings_and_amd_over_real_sockets(tmp_path, nursery, autojump_clock, scenario, status, source):
    sim, settings, exit_code, result = await live_call(tmp_path, nursery, SCENARIOS[scenario])
    assert (result["status"], result["verdict_source"]) == (status, source)
    world = next(iter(sim.worlds.values()))
    assert world.dial_requests[0]["answering_machine_detection"] == "premium"
    if scenario != "amd_wrong":
        assert report_of(settings)["hangup"]["via"] == "voicemail"


async def test_talk_during_the_goodbye_over_real_sockets(tmp_path, nursery, autojump_clock):
    sim, settings, exit_code, result = await live_call(tmp_path, nursery, SCENARIOS["goodbye_question"])
    assert result["status"] == "answered"
    report = report_of(settings)
    assert report["counts"]["farewells_reopened"] == 1 and report["hangup"]["via"] == "tool"
    world = next(iter(sim.worlds.values()))
    assert "It's for Nathan." in " ".join(world.heard_on_line)
    assert len(world.hangup_requests) == 1
    rows = rows_of(settings)
    assert sum(1 for r in rows if "effect" in r and r["effect"]["kind"] == "hangup") == 1


async def test_a_courtesy_over_the_goodbye_over_real_sockets(tmp_path, nursery, autojump_clock):
    sim, settings, exit_code, result = await live_call(tmp_path, nursery, SCENARIOS["goodbye_courtesy"])
    assert result["status"] == "answered"
    assert report_of(settings)["counts"]["farewells_reopened"] == 0
    world = next(iter(sim.worlds.values()))
    assert len(world.hangup_requests) == 1


async def test_an_information_line_over_real_sockets(tmp_path, nursery, autojump_clock):
    sim, settings, exit_code, result = await live_call(tmp_path, nursery, SCENARIOS["menu_hours"])
    assert (result["status"], result["verdict_source"]) == ("answered", "greeting")
    assert report_of(settings)["hangup"]["via"] == "information_line"
    world = next(iter(sim.worlds.values()))
    assert world.dtmf_received == [] and len(world.hangup_requests) == 1
