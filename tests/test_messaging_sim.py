"""Texting the daemon in live mode through the simulator, over real loopback sockets: the simulator's
fake Linq posts signed webhooks and records sends, its scripted Responses API reads the unclear text,
and the call runs on the simulated Telnyx and GPT-Live (one trio run, autojump clock)."""

from __future__ import annotations

import httpx
import pytest

from calld.cli.client import ControlClient
from calld.daemon.service import Daemon, DaemonError
from calld.settings import load_settings
from calld.sim.server import Simulator
from calld.stub.scenario import SCENARIOS
from tests.daemons import free_port, reachable_at

ALICE = "+15555550177"


def live_settings(tmp_path, addrs, port, **over):
    values = dict(
        calld_mode="live", calld_live_opt_in=True, calld_state_dir=tmp_path / "state", calld_socket=tmp_path / "ctl.sock",
        telnyx_api_key="KEY-sim", telnyx_connection_id="sim-connection",
        telnyx_public_key=addrs.public_key, telnyx_api_base=addrs.telnyx_api_base, openai_api_key="KEY-sim",
        openai_live_url=addrs.live_url, **reachable_at(port),
        linq_api_key="KEY-linq", linq_api_base=addrs.linq_api_base, linq_webhook_secret=addrs.linq_webhook_secret,
        openai_api_base=addrs.openai_api_base, _env_file=None,
    )
    return load_settings(**{**values, **over})


async def _texting_daemon(tmp_path, nursery, scenario: str):
    """The simulator playing `scenario`, and a live daemon on it with Alice linked for texting."""
    sim = Simulator(SCENARIOS[scenario])
    addrs = await nursery.start(sim.serve)
    port = free_port()
    settings = live_settings(tmp_path, addrs, port)
    daemon: Daemon = await nursery.start(Daemon(settings).serve)
    async with ControlClient(settings.calld_socket) as client:
        await client.provision("alice")
        await client.messaging_link(ALICE, "alice", "Nathan")
    return sim, addrs, daemon, f"http://127.0.0.1:{port}/linq/webhook"


async def test_a_text_through_the_simulator_is_confirmed_called_and_answered(tmp_path, nursery, autojump_clock):
    sim, addrs, daemon, url = await _texting_daemon(tmp_path, nursery, "stock")
    async with httpx.AsyncClient() as http:
        for text in ("does joe's still have those cast iron skillets? 555-555-0142", "yes"):
            resp = await http.post(f"{addrs.telnyx_api_base}/sim/linq/text", json={"from": ALICE, "text": text, "url": url})
            assert resp.json() == {"statuses": [200]}
            await daemon.messaging.wait_idle()
        conversation = (await http.get(f"{addrs.telnyx_api_base}/sim/linq/conversation")).json()
    said = [(line["who"], line["text"]) for line in conversation]
    assert said[1] == ("calld", "Call +1 555-555-0142 and ask if they have cast iron skillets in stock? Reply YES to call, or NO to skip.")
    assert said[3][1].startswith("Calling +1 555-555-0142 now")
    assert said[4][0] == "calld" and said[4][1].startswith('They said: "Yes, we have')
    assert sim.text_model.requests and sim.text_model.requests[0]["model"] == daemon.settings.openai_responses_model
    assert sim.linq.requests["typing_start"] >= 1
    await daemon.shutdown(drain_s=0)


@pytest.mark.parametrize("half", [{"linq_webhook_secret": ""}, {"linq_api_key": ""}, {"linq_webhook_secret": "whsec_!!"}])
async def test_live_texting_half_configured_refuses_to_start(tmp_path, nursery, autojump_clock, half):
    sim = Simulator(SCENARIOS["hours"])
    addrs = await nursery.start(sim.serve)
    settings = live_settings(tmp_path, addrs, free_port(), **half)
    with pytest.raises(DaemonError, match="texting cannot start"):
        await nursery.start(Daemon(settings).serve)


async def test_live_without_linq_has_no_webhook_route(tmp_path, nursery, autojump_clock):
    sim = Simulator(SCENARIOS["hours"])
    addrs = await nursery.start(sim.serve)
    port = free_port()
    settings = live_settings(tmp_path, addrs, port, linq_webhook_secret="", linq_api_key="")
    daemon: Daemon = await nursery.start(Daemon(settings).serve)
    assert daemon.messaging is None
    async with httpx.AsyncClient() as http:
        assert (await http.post(f"http://127.0.0.1:{port}/linq/webhook", content=b"{}")).status_code == 404
    await daemon.shutdown(drain_s=0)


async def test_follow_ups_through_the_simulator_are_about_the_last_call(tmp_path, nursery, autojump_clock):
    sim, addrs, daemon, url = await _texting_daemon(tmp_path, nursery, "hours")
    async with httpx.AsyncClient() as http:
        for text in ("hours +1 555 555 0142", "what about Friday?", "call them again"):
            resp = await http.post(f"{addrs.telnyx_api_base}/sim/linq/text", json={"from": ALICE, "text": text, "url": url})
            assert resp.json() == {"statuses": [200]}
            await daemon.messaging.wait_idle()
        conversation = (await http.get(f"{addrs.telnyx_api_base}/sim/linq/conversation")).json()
    said = [(line["who"], line["text"]) for line in conversation]
    assert said[4] == ("calld", "From my call to +1 555-555-0142: on Friday they're open 9 AM to 5 PM.")
    assert said[6] == ("calld", "Calling +1 555-555-0142 now to ask their opening hours. I'll text you what they say.")
    assert said[7][0] == "calld" and said[7][1].startswith('They said: "')
    rows = daemon._ledger.sync.requests(10)
    assert len(rows) == 2 and rows[0].params == rows[1].params and rows[0].request_id != rows[1].request_id
    assert not sim.text_model.requests  # a follow-up is read by the parser, never sent to the text model
    await daemon.shutdown(drain_s=0)
