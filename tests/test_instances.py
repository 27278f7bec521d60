"""A daemon per core (CALLD_INSTANCE): the per-call URLs under /d/N/, the instance in client_state,
and the ingress check through the daemon's own prefix. The proxy itself: tests/test_proxy.py."""

from __future__ import annotations

import io
import json

import pytest

from calld.adapters.telnyx_webhook import encode_client_state, parse_webhook, read_client_state
from calld.adapters.fixtures import load_fixture
from calld.cli.client import ControlClient
from calld.cli.ctl import run_ask
from calld.daemon.service import Daemon, DaemonError
from calld.domain.ids import RunId
from calld.settings import SettingsError, load_settings
from tests.daemons import daemon_settings, stop
from tests.daemons import free_port
from tests.test_live_mode import keys, live_settings  # noqa: F401 (keys: a fixture)

RUN = RunId("run_5f0c2a9e1b7d4c3a8e6f")


@pytest.mark.parametrize("value", ["0", "-1", "two", "1.5", "65", " 07x"])
def test_a_bad_instance_is_refused_saying_what_to_give(tmp_path, value):
    with pytest.raises(SettingsError) as bad:
        load_settings(calld_state_dir=tmp_path, calld_instance=value, _env_file=None)
    assert "CALLD_INSTANCE" in str(bad.value) and "1 to 64 (the N in /d/N/)" in str(bad.value)


def test_an_unset_or_empty_instance_is_the_single_daemon(tmp_path):
    for given in ({}, {"calld_instance": ""}):
        s = load_settings(calld_state_dir=tmp_path, public_base_url="https://calld.example.net",
                          public_webhook_url="https://calld.example.net/telnyx/webhook", _env_file=None, **given)
        assert s.calld_instance is None and s.instance_prefix == ""
        assert s.webhook_url() == "https://calld.example.net/telnyx/webhook"
        assert s.media_url() == "wss://calld.example.net/telnyx/media"
        assert s.health_url() == "https://calld.example.net/health"


def test_daemon_n_hands_out_urls_under_d_n_on_the_public_origin(tmp_path):
    s = load_settings(calld_state_dir=tmp_path, calld_instance="2", public_base_url="https://calld.example.net/",
                      public_webhook_url="https://calld.example.net/telnyx/webhook", _env_file=None)
    assert s.calld_instance == 2
    assert s.webhook_url() == "https://calld.example.net/d/2/telnyx/webhook"
    assert s.media_url() == "wss://calld.example.net/d/2/telnyx/media"
    assert s.health_url() == "https://calld.example.net/d/2/health"
    assert s.media_health_url() == "https://calld.example.net/d/2/telnyx/media/health"
    # A media URL of its own (another host, say) gets the prefix too.
    s = s.model_copy(update={"public_media_url": "wss://media.example.net:8443/telnyx/media"})
    assert s.media_url() == "wss://media.example.net:8443/d/2/telnyx/media"


def test_client_state_carries_the_instance_and_a_lone_daemons_stays_the_bare_run_id():
    assert read_client_state(encode_client_state(RUN, 3)) is not None
    state = read_client_state(encode_client_state(RUN, 3))
    assert state is not None and (state.run_id, state.instance) == (RUN, 3)
    lone = read_client_state(encode_client_state(RUN))
    assert lone is not None and (lone.run_id, lone.instance) == (RUN, None)
    assert encode_client_state(RUN) == load_fixture("telnyx", "webhook_call_initiated")["data"]["payload"]["client_state"]
    import base64

    for bad in (f"{RUN}@", f"{RUN}@x", f"{RUN}@02", f"{RUN}@-1", "other-app@2"):
        assert read_client_state(base64.b64encode(bad.encode()).decode()) is None, bad


def test_a_webhook_names_the_daemon_that_placed_its_call():
    body = load_fixture("telnyx", "webhook_call_answered")
    body["data"]["payload"]["client_state"] = encode_client_state(RUN, 2)
    hook = parse_webhook(json.dumps(body).encode())
    assert (hook.run_id, hook.instance) == (RUN, 2)


async def test_a_daemon_with_an_instance_dials_with_it_in_client_state(tmp_path, nursery, autojump_clock, dials):
    d: Daemon = await nursery.start(Daemon(daemon_settings(tmp_path, calld_instance=2)).serve)
    try:
        async with ControlClient(d.settings.calld_socket) as c:
            await c.provision("alice")
            out = io.StringIO()
            await run_ask(c, {"to": "+15555550142", "ask": "hours", "name": "Nathan", "user": "alice"}, out=out, err=io.StringIO())
        assert json.loads(out.getvalue())["status"] == "answered"
        state = read_client_state(dials[0]["client_state"])
        assert state is not None and state.instance == 2
    finally:
        await stop(d)


async def test_the_ingress_check_goes_through_the_daemons_own_prefix(tmp_path, nursery, keys):  # noqa: F811
    """Daemon 2 probes /d/2/health: its own port, reached without the proxy, does not serve that
    path, so the check refuses (with the rule to fix) instead of passing on a route that is not daemon 2's."""
    settings = live_settings(tmp_path, free_port(), keys[1], calld_instance=2)
    d: Daemon = await nursery.start(Daemon(settings).serve)
    try:
        with pytest.raises(DaemonError, match=r"refusing to dial: http://127.0.0.1:\d+/d/2/health answered, but not from this "
                                              r"daemon; check PUBLIC_BASE_URL and the proxy rule for /d/2/"):
            await d.ingress.check()
    finally:
        await d.shutdown(drain_s=0)


# -- a webhook for a call this daemon does not own --------------------------------------------------


def _hook(client_state: str | None, event_id: str = "evt-1") -> bytes:
    body = load_fixture("telnyx", "webhook_call_answered")
    body["data"]["id"] = event_id
    body["data"]["payload"]["client_state"] = client_state
    return json.dumps(body).encode()


def _app(instance: int | None, forward=None):
    from calld.daemon.callbook import CallBook
    from calld.daemon.public import create_public_app

    return create_public_app(CallBook(), serve_token="t", verify=None, instance=instance, forward=forward)


async def _post(app, raw: bytes, **headers: str):
    client = app.test_client()
    resp = await client.post("/telnyx/webhook", data=raw, headers={"telnyx-signature-ed25519": "sig", "telnyx-timestamp": "1", **headers})
    return resp.status_code, await resp.get_json()


async def test_a_webhook_for_another_daemons_call_is_forwarded_to_it_byte_for_byte(caplog):
    sent = []

    async def forward(owner, raw, headers):
        sent.append((owner, raw, headers))
        return 200

    raw = _hook(encode_client_state(RUN, 2))
    status, body = await _post(_app(1, forward), raw)
    assert (status, body["note"]) == (200, "forwarded to daemon 2")
    [(owner, forwarded, headers)] = sent
    assert owner == 2 and forwarded == raw
    assert {k.lower(): v for k, v in headers.items()}["telnyx-signature-ed25519"] == "sig"  # checked again by the owner
    assert "belongs to daemon 2: forwarded" in caplog.text


async def test_an_owner_that_does_not_answer_gets_the_webhook_again_by_telnyxs_retry(caplog):
    async def forward(owner, raw, headers):
        return None

    status, _ = await _post(_app(1, forward), _hook(encode_client_state(RUN, 2)))
    assert status == 503 and "belongs to daemon 2, which did not take it (unreachable)" in caplog.text


async def test_a_forwarded_webhook_that_is_still_not_ours_is_refused_never_forwarded_again(caplog):
    sent = []

    async def forward(owner, raw, headers):
        sent.append(owner)
        return 200

    status, body = await _post(_app(1, forward), _hook(encode_client_state(RUN, 2)), **{"calld-forwarded-by": "3"})
    assert status == 421 and "daemon 2's" in body["error"] and sent == []
    assert "forwarded here by daemon 3: the proxy's /d/2/ rule does not reach daemon 2" in caplog.text


@pytest.mark.parametrize("state", [None, "!!!", encode_client_state(RUN, 1), encode_client_state(RUN)])
async def test_a_webhook_with_no_client_state_a_foreign_one_or_an_ended_call_is_logged_and_dropped(caplog, state):
    """Acknowledged (200): a 4xx would send it to Telnyx's failover URL, where no daemon owns it either."""
    import logging

    caplog.set_level(logging.INFO, "calld.public")
    sent = []

    async def forward(owner, raw, headers):
        sent.append(owner)
        return 200

    status, body = await _post(_app(1, forward), _hook(state))
    assert (status, body["note"]) == (200, "unknown call") and sent == []
    assert "acknowledged, not acted on" in caplog.text


async def test_without_a_public_url_a_webhook_for_another_daemons_call_is_refused_naming_it(caplog):
    status, body = await _post(_app(1, None), _hook(encode_client_state(RUN, 2)))
    assert status == 200 and "not acted on here" in body["note"]
    assert "belongs to daemon 2; refused" in caplog.text


async def test_forward_webhook_sends_the_body_and_signature_to_the_owners_url_and_marks_the_hop():
    import httpx

    from calld.daemon.forward import forward_webhook

    seen = []

    def handler(req: httpx.Request) -> httpx.Response:
        seen.append(req)
        return httpx.Response(200, json={"ok": True})

    async with httpx.AsyncClient(transport=httpx.MockTransport(handler)) as client:
        status = await forward_webhook(client, "https://calld.example.net/d/2/telnyx/webhook", b'{"x":1}',
                                       {"Telnyx-Signature-Ed25519": "sig", "Telnyx-Timestamp": "12", "Cookie": "no"}, 1)
    assert status == 200
    [req] = seen
    assert str(req.url) == "https://calld.example.net/d/2/telnyx/webhook" and req.content == b'{"x":1}'
    assert req.headers["telnyx-signature-ed25519"] == "sig" and req.headers["telnyx-timestamp"] == "12"
    assert req.headers["calld-forwarded-by"] == "1" and "cookie" not in req.headers


def test_daemon_n_names_daemon_ms_webhook_url_on_the_shared_origin(tmp_path):
    s = load_settings(calld_state_dir=tmp_path, calld_instance=1, public_base_url="https://calld.example.net",
                      public_webhook_url="https://calld.example.net/telnyx/webhook", _env_file=None)
    assert s.webhook_url(2) == "https://calld.example.net/d/2/telnyx/webhook"


# -- the proxy's config (nginx itself: tests/test_proxy.py) -----------------------------------------


def test_the_shipped_nginx_config_is_proxy_configs_for_two_daemons_at_their_default_ports(capsys):
    from pathlib import Path

    from calld.cli.ctl import main

    assert main(["proxy-config", "--daemons", "2"]) == 0
    shipped = (Path(__file__).resolve().parent.parent / "deploy" / "nginx" / "calld.conf").read_text()
    assert capsys.readouterr().out == shipped
    for n, port in ((1, 8787), (2, 8797)):
        assert f"location = /d/{n}/telnyx/webhook {{\n        proxy_pass http://127.0.0.1:{port}/telnyx/webhook;" in shipped
        assert f"location /d/{n}/telnyx/media/ {{\n        proxy_pass http://127.0.0.1:{port + 1}/telnyx/media/;" in shipped
    assert "proxy_set_header Upgrade $http_upgrade;" in shipped and "# listen 443 ssl;" in shipped


def test_daemon_n_takes_its_own_default_ports_unless_told(tmp_path):
    assert load_settings(calld_state_dir=tmp_path, calld_instance=2, _env_file=None).calld_bind == "127.0.0.1:8797"
    assert load_settings(calld_state_dir=tmp_path, calld_instance=2, _env_file=None).media_bind == "127.0.0.1:8798"
    assert load_settings(calld_state_dir=tmp_path, calld_instance=2, calld_bind="127.0.0.1:9000", _env_file=None).calld_bind == "127.0.0.1:9000"
    assert load_settings(calld_state_dir=tmp_path, _env_file=None).calld_bind == "127.0.0.1:8787"


@pytest.mark.parametrize(("args", "says"), [(["--daemons", "0"], "--daemons 0: give how many daemons"),
                                            (["--daemons", "2", "--listen", "8080"], "--listen 8080: write it as HOST:PORT")])
def test_proxy_config_refuses_bad_arguments_saying_what_to_fix(capsys, args, says):
    from calld.cli.ctl import main

    assert main(["proxy-config", *args]) == 2
    captured = capsys.readouterr()
    assert says in captured.err and captured.out == ""
