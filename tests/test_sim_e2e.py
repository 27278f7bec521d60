"""The daemon in live mode against the simulator, over real loopback sockets (one trio run,
autojump clock): signed webhooks, the media WebSocket, the GPT-Live WebSocket, Telnyx REST."""

from __future__ import annotations

import io
import json

import attrs
import pytest

from calld.cli.client import ControlClient
from calld.cli.ctl import EXIT_OK, run_ask
from calld.daemon.service import Daemon
from calld.domain.questions import QuestionType
from calld.ledger import Ledger
from calld.runtime.rundir import artifact_slug
from calld.settings import load_settings
from calld.sim.server import Simulator
from calld.stub.scenario import SCENARIOS
from calld.verify import VerifyInput, run_checks
from tests.daemons import reachable_at

ASK = {"to": "+15555550142", "ask": "hours", "name": "Nathan", "user": "verify"}


async def live_call(tmp_path, nursery, scenario, body=ASK, **settings_over):
    sim = Simulator(scenario)
    addrs = await nursery.start(sim.serve)
    settings = load_settings(**{
        **dict(calld_mode="live", calld_live_opt_in=True, calld_state_dir=tmp_path / "state", calld_socket=tmp_path / "ctl.sock",
               telnyx_api_key="KEY-sim", telnyx_connection_id="sim-connection",
               telnyx_public_key=addrs.public_key, telnyx_api_base=addrs.telnyx_api_base, openai_api_key="KEY-sim",
               openai_live_url=addrs.live_url, _env_file=None,
               calld_calls_per_number_per_day=1000, calld_calls_per_user_per_hour=1000, calld_calls_per_number_at_once=1000),
        **reachable_at(), **settings_over,
    })
    daemon: Daemon = await nursery.start(Daemon(settings).serve)
    async with ControlClient(settings.calld_socket) as client:
        await client.provision("verify")
        out = io.StringIO()
        code = await run_ask(client, body, out=out, err=io.StringIO())
    result = json.loads(out.getvalue())
    await daemon.shutdown(drain_s=0)
    return sim, settings, code, result


def checks(settings, result, scenario="hours", ask="hours", item=None):
    run_dir = settings.artifacts_dir / result["transcript_ref"].split("/")[0]
    ledger = Ledger(settings.db_path)
    try:
        return run_checks(VerifyInput(scenario=scenario, ask=QuestionType(ask), item=item), settings, ledger, run_dir)
    finally:
        ledger.close()


@pytest.mark.parametrize("name", ["hours", "stock", "aisle"])
async def test_quick_asks_pass_verify_over_real_sockets(tmp_path, nursery, autojump_clock, name):
    body = {**ASK, "ask": name, **({"item": "cast iron skillet"} if name != "hours" else {})}
    sim, settings, code, result = await live_call(tmp_path, nursery, SCENARIOS[name], body)
    assert code == EXIT_OK and result["status"] == "answered"
    report = checks(settings, result, name, name, body.get("item"))
    failed = [c.line() for c in report.checks if not c.passed]
    assert not failed, failed
    assert all(s == 200 for s in sim._poster.statuses), sim._poster.statuses  # every webhook was signed and accepted


@pytest.mark.parametrize("ready_after", [0.2, 1.5, 3.0])
async def test_a_greeting_before_the_session_is_ready_loses_no_word(tmp_path, nursery, autojump_clock, ready_after):
    scenario = attrs.evolve(SCENARIOS["hours"], greet_after_s=0.0, live_ready_after_s=ready_after)
    sim, settings, code, result = await live_call(tmp_path, nursery, scenario)
    report = checks(settings, result)
    pickup = next(c for c in report.checks if c.name == "pickup_held")
    assert pickup.passed, pickup.line()


async def test_no_echo_over_real_sockets_gives_drain_timeout(tmp_path, nursery, autojump_clock):
    sim, settings, code, result = await live_call(tmp_path, nursery, SCENARIOS["no_echo"])
    report = json.loads((settings.artifacts_dir / result["transcript_ref"].split("/")[0] / "call_report.json").read_text())
    assert report["hangup"]["via"] == "drain_timeout"


async def test_the_business_hanging_up_mid_ask(tmp_path, nursery, autojump_clock):
    sim, settings, code, result = await live_call(tmp_path, nursery, SCENARIOS["far_party_mid_ask"])
    report = json.loads((settings.artifacts_dir / artifact_slug(result["call_control_id"]) / "call_report.json").read_text())
    assert report["hangup"]["via"] == "far_party"
    assert (result["status"], result["reason"]) == ("no_answer", "hung_up_early")  # cut off before the question


async def test_duplicated_webhooks_change_nothing(tmp_path, nursery, autojump_clock):
    sim, settings, code, result = await live_call(tmp_path, nursery, SCENARIOS["duplicates"])
    assert result["status"] == "answered"
    run_dir = settings.artifacts_dir / result["transcript_ref"].split("/")[0]
    rows = [json.loads(line) for line in (run_dir / "events.jsonl").read_text().splitlines()]
    answered = [r for r in rows if r.get("event", {}).get("kind") == "telnyx.call.answered"]
    assert len(answered) == 1


async def test_a_stall_in_the_middle_of_the_goodbye_still_plays_it_whole(tmp_path, nursery, autojump_clock):
    sim, settings, code, result = await live_call(tmp_path, nursery, SCENARIOS["goodbye_stall"])
    world = next(iter(sim.worlds.values()))
    words = SCENARIOS["goodbye_stall"].closing_line.split()
    assert world.heard_on_line[-len(words):] == words  # every word played on the line
    report = checks(settings, result, "goodbye_stall")
    assert report.passed, [c.line() for c in report.checks if not c.passed]


async def test_reordered_and_duplicated_webhooks_change_nothing(tmp_path, nursery, autojump_clock):
    sim, settings, code, result = await live_call(tmp_path, nursery, SCENARIOS["reordered"])
    assert result["status"] == "answered"
    run_dir = settings.artifacts_dir / result["transcript_ref"].split("/")[0]
    rows = [json.loads(line) for line in (run_dir / "events.jsonl").read_text().splitlines()]
    kinds = [r["event"]["kind"] for r in rows if "event" in r and r["event"]["kind"].startswith("telnyx.call.")]
    assert kinds.index("telnyx.call.answered") < kinds.index("telnyx.call.initiated")  # as delivered
    ignored = [r for r in rows if r.get("ignored") and r["event"]["kind"] == "telnyx.call.initiated"]
    assert len(ignored) == 1  # a late call.initiated changes nothing and is journaled
    assert sum(k == "telnyx.call.answered" for k in kinds) == 1  # the duplicate never reached the reducer
    report = checks(settings, result, "reordered")
    assert report.passed, [c.line() for c in report.checks if not c.passed]


@pytest.mark.parametrize("order", ["be", "auto"])
async def test_big_endian_l16_over_real_sockets(tmp_path, nursery, autojump_clock, order):

    scenario = attrs.evolve(SCENARIOS["hours"], carrier_byte_order="be")
    sim, settings, code, result = await live_call(tmp_path, nursery, scenario, telnyx_l16_byte_order=order)
    assert code == EXIT_OK and result["status"] == "answered"
    report = json.loads((settings.artifacts_dir / result["transcript_ref"].split("/")[0] / "call_report.json").read_text())
    assert report["media"]["byte_order"].startswith("be")
