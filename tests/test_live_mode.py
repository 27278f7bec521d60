"""Live mode's edges that need no peer: the preflight, the ingress check, and the public routes'
refusals (signed webhooks, duplicates, unknown calls, media tokens), over real loopback sockets."""

from __future__ import annotations

import json
import time

import httpx
import pytest
import trio
from trio_websocket import ConnectionRejected, wrap_client_stream

from calld.adapters.webhook_auth import generate_keypair, sign_webhook
from calld.adapters.fixtures import load_fixture
from calld.daemon.service import Daemon, DaemonError
from calld.settings import SettingsError, load_settings, origin
from tests.daemons import free_port


def live_settings(tmp_path, port: int, public_key: str, **over):
    base = f"http://127.0.0.1:{port}"
    media_port = free_port()
    values = dict(
        calld_mode="live", calld_live_opt_in=True, calld_state_dir=tmp_path / "state", calld_socket=tmp_path / "ctl.sock",
        calld_bind=f"127.0.0.1:{port}", calld_media_bind=f"127.0.0.1:{media_port}",
        public_media_url=f"ws://127.0.0.1:{media_port}/telnyx/media",
        telnyx_api_key="KEY-telnyx-test", telnyx_connection_id="conn-1",
        telnyx_public_key=public_key, openai_api_key="KEY-openai-test", public_base_url=base,
        public_webhook_url=f"{base}/telnyx/webhook", telnyx_api_base="http://127.0.0.1:9",
    )
    values.update(over)
    return load_settings(**values)


def test_live_preflight_names_every_missing_setting(tmp_path):
    settings = load_settings(calld_mode="live", calld_state_dir=tmp_path, public_base_url="https://a.example",
                             public_webhook_url="https://b.example/telnyx/webhook", _env_file=None)
    problems = settings.live_problems()
    text = "\n".join(problems)
    for name in ("TELNYX_API_KEY", "TELNYX_CONNECTION_ID", "TELNYX_PUBLIC_KEY", "OPENAI_API_KEY", "CALLD_LIVE_OPT_IN"):
        assert name in text
    assert "share one origin" in text


def test_origins_fold_ws_into_http():
    assert origin("wss://Tunnel.example/telnyx/media") == origin("https://tunnel.example:443/x") == "https://tunnel.example"
    assert origin("http://127.0.0.1:8787/") != origin("http://127.0.0.1:8788/")


def test_bad_settings_say_what_to_fix(tmp_path):
    with pytest.raises(SettingsError) as bad:
        load_settings(calld_state_dir=tmp_path, calld_bind="nonsense", stall_s=-1, _env_file=None)
    assert "CALLD_BIND" in str(bad.value) and "STALL_S" in str(bad.value)


def test_gpt_live_bounds_are_settings_refused_with_what_to_give(tmp_path):
    settings = load_settings(calld_state_dir=tmp_path, _env_file=None)
    assert (settings.timings().live_ready_s, settings.timings().live_quiet_s) == (12.0, 5.0)
    for bad, says in ((dict(live_ready_s=0.5), "LIVE_READY_S: is 0.5 s: give 2 to 60 seconds"),
                      (dict(live_quiet_s=0), "LIVE_QUIET_S: is 0 s: give 1 to 60 seconds"),
                      (dict(live_quiet_s=9, stall_s=8), "LIVE_QUIET_S: is 9 s: make it shorter than STALL_S (8 s)")):
        with pytest.raises(SettingsError) as refused:
            load_settings(calld_state_dir=tmp_path, _env_file=None, **bad)
        assert says in str(refused.value), refused.value


def test_an_empty_path_or_a_url_that_is_no_url_is_a_settings_error(tmp_path, monkeypatch, capsys):
    with pytest.raises(SettingsError) as bad:
        load_settings(calld_state_dir="", calld_socket=" ", _env_file=None)
    assert "CALLD_STATE_DIR" in str(bad.value) and "CALLD_SOCKET" in str(bad.value) and "is empty" in str(bad.value)
    with pytest.raises(SettingsError) as bad:
        load_settings(calld_state_dir=tmp_path, telnyx_api_base="notaurl", public_base_url="ftp://x.example",
                      linq_api_base="https://", _env_file=None)
    for name in ("TELNYX_API_BASE", "PUBLIC_BASE_URL", "LINQ_API_BASE"):
        assert name in str(bad.value)
    assert "https://" in str(bad.value)
    # On the command line: refused before anything is made, so the directory it names (here the
    # current one) is left as it was, not made private and filled with a ledger.
    from calld.cli.daemon import main

    monkeypatch.chdir(tmp_path)
    before = tmp_path.stat().st_mode
    with pytest.raises(SystemExit) as code:
        main(["serve", "--state-dir", ""])
    assert code.value.code == 2 and "--state-dir: is empty" in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == [] and tmp_path.stat().st_mode == before


def test_a_socket_path_too_long_for_the_kernel_is_a_settings_error_named_as_it_was_given(tmp_path, capsys):
    long_socket = tmp_path / ("s" * 120) / "ctl.sock"
    with pytest.raises(SettingsError, match=r"CALLD_SOCKET: is \d+ bytes long; a Unix socket's path can be at most 107"):
        load_settings(calld_state_dir=tmp_path / "state", calld_socket=long_socket, _env_file=None)
    load_settings(calld_state_dir=tmp_path / "state", calld_socket="/run/calld/" + "s" * 96, _env_file=None)  # 107 fits
    from calld.cli.daemon import main

    assert main(["serve", "--state-dir", str(tmp_path / "state"), "--socket", str(long_socket), "--bind", "x"]) == 2
    err = capsys.readouterr().err
    assert "fix these on the command line" in err and "  --socket: is " in err and "  --bind: write it as HOST:PORT" in err
    assert "Value error" not in err
    assert list(tmp_path.iterdir()) == []  # nothing made: no state directory, no socket directory


def test_a_setting_that_is_no_number_or_switch_says_what_was_given(tmp_path, monkeypatch):
    for name, value in (("CALLD_MAX_CALLS", "abc"), ("SHUTDOWN_DRAIN_S", "half"), ("CALLD_LIVE_OPT_IN", "maybe"),
                        ("CALLD_CALLS_PER_NUMBER_PER_DAY", "0")):
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("TELNYX_API_KEY", "KEY-not-to-be-printed")
    monkeypatch.setenv("CALLD_MODE", "nonsense")
    with pytest.raises(SettingsError) as bad:
        load_settings(calld_state_dir=tmp_path, _env_file=None)
    lines = str(bad.value).splitlines()[1:]
    assert "  CALLD_MAX_CALLS: 'abc' is not a whole number" in lines
    assert "  SHUTDOWN_DRAIN_S: 'half' is not a number" in lines
    assert "  CALLD_LIVE_OPT_IN: 'maybe' is not true or false (1 or 0, true or false, yes or no, on or off)" in lines
    assert "  CALLD_CALLS_PER_NUMBER_PER_DAY: Input should be greater than or equal to 1, got 0" in lines
    assert "KEY-not-to-be-printed" not in str(bad.value)


def test_bad_media_settings_say_what_to_fix(tmp_path):
    with pytest.raises(SettingsError) as bad:
        load_settings(calld_state_dir=tmp_path, calld_media_bind="8788", public_media_url="https://x.example/m", _env_file=None)
    text = str(bad.value)
    assert "CALLD_MEDIA_BIND" in text and "HOST:PORT" in text
    assert "PUBLIC_MEDIA_URL" in text and "wss://" in text
    # Left empty: CALLD_BIND's host and the next port (0 stays 0), and PUBLIC_BASE_URL's origin.
    s = load_settings(calld_state_dir=tmp_path, calld_bind="127.0.0.1:9000", public_base_url="https://c.example", _env_file=None)
    assert s.media_bind == "127.0.0.1:9001" and s.media_url() == "wss://c.example/telnyx/media"
    assert s.media_health_url() == "https://c.example/telnyx/media/health"
    assert load_settings(calld_state_dir=tmp_path, calld_bind="127.0.0.1:0", _env_file=None).media_bind == "127.0.0.1:0"


def test_plain_ws_media_is_refused_off_this_machine(tmp_path):
    def problems(url: str) -> str:
        return "\n".join(load_settings(calld_mode="live", calld_state_dir=tmp_path, public_media_url=url, _env_file=None).live_problems())

    assert "PUBLIC_MEDIA_URL must be wss://" in problems("ws://calld.example.net/telnyx/media")
    assert "PUBLIC_MEDIA_URL" not in problems("ws://127.0.0.1:8788/telnyx/media")
    assert "PUBLIC_MEDIA_URL" not in problems("wss://calld.example.net/telnyx/media")


async def test_live_daemon_refuses_to_start_without_its_keys(tmp_path):
    settings = load_settings(calld_mode="live", calld_state_dir=tmp_path / "s", calld_socket=tmp_path / "c.sock", _env_file=None)
    with pytest.raises(DaemonError, match="TELNYX_API_KEY is not set"):
        await Daemon(settings).serve()
    assert not (tmp_path / "c.sock").exists()


@pytest.fixture
def keys():
    return generate_keypair()


@pytest.fixture
async def live_daemon(tmp_path, nursery, keys):
    port = free_port()
    d: Daemon = await nursery.start(Daemon(live_settings(tmp_path, port, keys[1])).serve)
    yield d
    await d.shutdown(drain_s=0)


def webhook_body(event_id: str = "evt-1", ccid: str = "v3:nobody") -> bytes:
    body = load_fixture("telnyx", "webhook_call_answered")
    body["data"]["id"] = event_id
    body["data"]["payload"]["call_control_id"] = ccid
    return json.dumps(body).encode()


async def test_health_answers_with_the_serve_token(live_daemon):
    async with httpx.AsyncClient() as c:
        resp = await c.get(f"{live_daemon.settings.public_base_url}/health")
    assert resp.json() == {"ok": True, "serve_token": live_daemon.serve_token}


async def test_the_ingress_check_passes_for_this_daemon_only(live_daemon):
    await live_daemon.ingress.check()
    other = free_port()
    live_daemon.settings = live_settings(live_daemon.settings.calld_state_dir.parent, other, live_daemon.settings.telnyx_public_key)
    live_daemon.ingress.ok_until = -1
    with pytest.raises(DaemonError, match="unreachable"):
        await live_daemon.ingress.check()


async def test_the_ingress_check_also_needs_the_media_path_to_reach_this_daemon(live_daemon):
    """Webhooks reach calld but the media URL does not reach its media listener (a proxy with no
    /telnyx/media/ rule): no dial, and the refusal says which rule to add."""
    s = live_daemon.settings
    live_daemon.settings = s.model_copy(update={"public_media_url": f"{s.media_url().replace(s.media_bind, s.calld_bind)}"})
    live_daemon.ingress.ok_until = -1
    with pytest.raises(DaemonError, match="proxy rule that sends /telnyx/media/ to CALLD_MEDIA_BIND"):
        await live_daemon.ingress.check()
    live_daemon.settings = s
    await live_daemon.ingress.check()  # the media listener answers with this daemon's token


async def test_the_ingress_check_builds_no_client_on_the_loop_while_calls_run(live_daemon, monkeypatch):
    """A new httpx client builds a TLS context: 40-250 ms of the loop's CPU, which every call's
    audio would feel each time the check comes due. The probe's client is made once, at start."""
    made: list[object] = []
    real_init = httpx.AsyncClient.__init__

    def counted(self, *args, **kwargs):
        made.append(self)
        real_init(self, *args, **kwargs)

    monkeypatch.setattr(httpx.AsyncClient, "__init__", counted)
    for _ in range(2):
        live_daemon.ingress.ok_until = -1
        await live_daemon.ingress.check()
    assert made == []


async def test_a_burst_of_dials_shares_one_ingress_check(live_daemon, monkeypatch):
    """Fifty calls placed at once pay for one probe of each URL, not fifty (the probes cost the
    daemon CPU its calls' audio needs); a probe that fails is tried again by the next call."""
    probes: list[str] = []
    real = httpx.AsyncClient.get

    async def counted(self, url, *args, **kwargs):
        probes.append(str(url))
        await trio.sleep(0.05)  # wall-clock ok: the probe takes a while, so the other calls arrive meanwhile (real HTTP: no autojump)
        return await real(self, url, *args, **kwargs)

    monkeypatch.setattr(httpx.AsyncClient, "get", counted)
    live_daemon.ingress.ok_until = -1
    async with trio.open_nursery() as nursery:
        for _ in range(50):
            nursery.start_soon(live_daemon.ingress.check)
    assert len(probes) == 2  # /health and the media listener's health, once each


async def test_unsigned_stale_or_tampered_webhooks_get_401(live_daemon, keys):
    url = live_daemon.settings.public_webhook_url
    raw = webhook_body()
    good = sign_webhook(raw, keys[0], int(time.time()))
    stale = sign_webhook(raw, keys[0], int(time.time()) - 301)
    async with httpx.AsyncClient() as c:
        assert (await c.post(url, content=raw)).status_code == 401
        assert (await c.post(url, content=raw, headers=stale)).status_code == 401
        assert (await c.post(url, content=raw + b" ", headers=good)).status_code == 401
        resp = await c.post(url, content=raw, headers=good)
    assert resp.status_code == 200 and resp.json()["note"] == "unknown call"


async def test_a_malformed_signed_webhook_gets_400(live_daemon, keys):
    raw = b'{"data": {"event_type": "call.answered"}}'
    async with httpx.AsyncClient() as c:
        resp = await c.post(live_daemon.settings.public_webhook_url, content=raw, headers=sign_webhook(raw, keys[0], int(time.time())))
    assert resp.status_code == 400 and "data.id" in resp.json()["error"]


async def test_media_socket_with_an_unknown_token_is_refused(live_daemon):
    port = int(live_daemon.media_bound.rsplit(":", 1)[1])
    stream = await trio.open_tcp_stream("127.0.0.1", port)  # ours to close: trio-websocket leaks it on a rejection
    statuses: list[int] = []
    try:
        async with trio.open_nursery() as n:
            await wrap_client_stream(n, stream, "127.0.0.1", "/telnyx/media/not-a-token",
                                     extra_headers=[(b"x-telnyx-streaming-auth-token", b"x")])
    except* ConnectionRejected as group:
        statuses = [e.status_code for e in group.exceptions if isinstance(e, ConnectionRejected)]
        statuses += [x.status_code for e in group.exceptions if isinstance(e, BaseExceptionGroup) for x in e.exceptions]
    finally:
        await trio.aclose_forcefully(stream)
    assert statuses == [403]


def test_a_port_out_of_range_is_named_as_such(tmp_path, monkeypatch):
    monkeypatch.setenv("CALLD_BIND", "127.0.0.1:99999")
    with pytest.raises(SettingsError) as bad:
        load_settings(calld_state_dir=tmp_path, _env_file=None)
    assert "port 99999 is out of range: a port is 0 to 65535" in str(bad.value)
    monkeypatch.setenv("CALLD_BIND", "localhost8787")
    with pytest.raises(SettingsError) as bad:
        load_settings(calld_state_dir=tmp_path, _env_file=None)
    assert "write it as HOST:PORT" in str(bad.value)
