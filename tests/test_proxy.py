"""Two daemons behind a real nginx (Debian's package), dialled by calld-sim through it.

nginx runs as this test's own process (`daemon off;`, its config, pid, logs and temp files in the
test's directory) on a loopback port; the config is calld-ctl proxy-config's, for the daemons' ports.
The daemons are real `calld serve` processes in live mode (CALLD_INSTANCE=1 and 2) against one
simulator, which plays Telnyx (posting each call's webhooks to the webhook_url its dial named and
opening its media socket at the stream_url) and GPT-Live.

Skipped when nginx is not installed, unless CALLD_TEST_PROXY_REQUIRED=1 (CI sets it): then it fails.
These run on the wall clock, as the other process-level tests do; each wait has a bound.
"""

from __future__ import annotations

import io
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from functools import partial
from pathlib import Path

import pytest
import trio

from calld.cli.client import ControlClient
from calld.cli.ctl import run_ask
from calld.ops.proxy import nginx_config
from tests.daemons import free_port

NGINX = shutil.which("nginx") or next((p for p in ("/usr/sbin/nginx",) if os.access(p, os.X_OK)), None)
if NGINX is None and os.environ.get("CALLD_TEST_PROXY_REQUIRED") == "1":
    raise RuntimeError("CALLD_TEST_PROXY_REQUIRED=1 but nginx is not installed: apt-get install nginx")
pytestmark = [pytest.mark.proxy,
              pytest.mark.skipif(NGINX is None, reason="nginx is not installed (apt-get install nginx); CI requires it")]

ASK = {"to": "+15555550142", "ask": "hours", "name": "Nathan", "user": "alice"}
ACCESS_FORMAT = '$request_uri $upstream_addr $status'
BOUND_S = 60.0


def clean_env(**extra: str) -> dict[str, str]:
    keep = {k: v for k, v in os.environ.items() if k in ("PATH", "HOME", "LANG", "PYTHONPATH", "VIRTUAL_ENV", "MPLCONFIGDIR")}
    return {**keep, **extra}


def wait_for(what: str, ready, proc: subprocess.Popen | None = None, log: Path | None = None) -> None:
    deadline = time.monotonic() + BOUND_S
    while not ready():
        if proc is not None and proc.poll() is not None:
            raise AssertionError(f"{what} exited ({proc.returncode}): {log.read_text()[-2000:] if log else ''}")
        if time.monotonic() > deadline:
            raise AssertionError(f"{what} not ready after {BOUND_S} s: {log.read_text()[-2000:] if log else ''}")
        time.sleep(0.05)  # wall-clock ok: a process coming up, polled from outside trio


def listening(port: int) -> bool:
    with socket.socket() as s:
        return s.connect_ex(("127.0.0.1", port)) == 0


def stop(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


class Nginx:
    """nginx as this test's own unprivileged process: everything it writes is under `home`."""

    def __init__(self, home: Path, port: int) -> None:
        self.home, self.port = home, port
        home.mkdir(parents=True, exist_ok=True)
        self.access = home / "access.log"
        self.proc: subprocess.Popen | None = None

    def start(self, backends: dict[int, tuple[str, str]]) -> None:
        (self.home / "calld.conf").write_text(nginx_config(backends, listen=f"127.0.0.1:{self.port}"))
        h = self.home
        temps = "".join(f"    {kind}_temp_path {h / kind};\n" for kind in ("client_body", "proxy", "fastcgi", "uwsgi", "scgi"))
        (h / "nginx.conf").write_text(
            f"daemon off;\nworker_processes 1;\npid {h / 'nginx.pid'};\nerror_log {h / 'error.log'} info;\n"
            "events { worker_connections 1024; }\n"
            f"http {{\n    log_format calld '{ACCESS_FORMAT}';\n    access_log {self.access} calld;\n{temps}"
            f"    include {h / 'calld.conf'};\n}}\n")
        with (h / "stderr.log").open("w") as err:
            self.proc = subprocess.Popen([NGINX, "-p", f"{h}/", "-c", str(h / "nginx.conf"), "-e", str(h / "error.log")],
                                         stdout=subprocess.DEVNULL, stderr=err)
        wait_for("nginx", lambda: listening(self.port), self.proc, h / "stderr.log")

    def stop(self) -> None:
        if self.proc is not None:
            stop(self.proc)  # SIGTERM: nginx's fast shutdown

    def routed(self) -> list[tuple[str, str, str]]:
        """(path, upstream HOST:PORT, status) of every request nginx passed on (upstreams tried in turn:
        "HOST:PORT, HOST:PORT")."""
        found = []
        for line in self.access.read_text().splitlines():
            path, rest = line.split(" ", 1)
            upstream, status = rest.rsplit(" ", 1)
            found.append((path, upstream, status))
        return found


def ledger_env(tmp_path: Path, n: int, ledger_url: str) -> dict[str, str]:
    """Daemon n's own state directory (artifacts, lock, socket's neighbours), and the ledger both share."""
    return {"CALLD_STATE_DIR": str(tmp_path / f"d{n}" / "state"), "CALLD_LEDGER_URL": ledger_url}


@pytest.fixture
def sim(tmp_path) -> Iterator[dict[str, str]]:
    proc = subprocess.Popen([sys.executable, "-m", "calld.sim.cli"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                            text=True, env=clean_env())
    try:
        yield json.loads(proc.stdout.readline())  # type: ignore[union-attr]
    finally:
        stop(proc)
        proc.stdout.close()  # type: ignore[union-attr]


@pytest.fixture
def signer(request):
    """The key the daemons trust for webhooks: the simulator's, or (a test marked signed_here, which
    posts webhooks itself) one made here, with its private half."""
    from calld.adapters.webhook_auth import generate_keypair

    return generate_keypair() if request.node.get_closest_marker("signed_here") else None


@pytest.fixture
def texting(request, sim) -> dict[str, str]:
    """Texting settings for the daemons (a test marked texting): Linq and the text model are the simulator's."""
    if not request.node.get_closest_marker("texting"):
        return {}
    return {"LINQ_API_KEY": "KEY-linq-proxy", "LINQ_API_BASE": sim["LINQ_API_BASE"],
            "LINQ_WEBHOOK_SECRET": sim["LINQ_WEBHOOK_SECRET"], "OPENAI_API_BASE": sim["OPENAI_API_BASE"]}


LEDGER_PASSWORD = "pw-Zq8v3LkT"  # the test cluster trusts every local connection: a password is taken, and must stay hidden


@pytest.fixture
def ledger_url(request, pg_url) -> str:
    """The daemons' CALLD_LEDGER_URL: the test database, with a password in it for a test marked ledger_password."""
    if not request.node.get_closest_marker("ledger_password"):
        return pg_url
    scheme, rest = pg_url.split("://", 1)
    user, _, after = rest.partition("@")
    return f"{scheme}://{user}:{LEDGER_PASSWORD}@{after}"


@pytest.fixture
def deployment(request, tmp_path, sim, signer, ledger_url, texting) -> Iterator[dict]:
    """nginx's port and two live daemons on one PostgreSQL ledger (nginx not started: each test starts it
    with its own config). A test marked daemon_env(NAME=value) gives both daemons those settings too."""
    extra = marker.kwargs if (marker := request.node.get_closest_marker("daemon_env")) else {}
    proxy_port = free_port()
    base = f"http://127.0.0.1:{proxy_port}"
    daemons = {}
    for n in (1, 2):
        home = tmp_path / f"d{n}"
        home.mkdir()
        port, media_port = free_port(), free_port()
        env = clean_env(CALLD_MODE="live", CALLD_LIVE_OPT_IN="1", CALLD_INSTANCE=str(n), CALLD_SOCKET=str(home / "ctl.sock"),
                        CALLD_BIND=f"127.0.0.1:{port}", CALLD_MEDIA_BIND=f"127.0.0.1:{media_port}",
                        TELNYX_API_KEY="KEY-proxy", TELNYX_CONNECTION_ID="proxy-connection", OPENAI_API_KEY="KEY-proxy",
                        TELNYX_API_BASE=sim["TELNYX_API_BASE"], TELNYX_PUBLIC_KEY=signer[1] if signer else sim["TELNYX_PUBLIC_KEY"],
                        OPENAI_LIVE_URL=sim["OPENAI_LIVE_URL"],
                        PUBLIC_BASE_URL=base, PUBLIC_WEBHOOK_URL=f"{base}/telnyx/webhook",  # each daemon adds /d/N/
                        CALLD_CALLS_PER_NUMBER_PER_DAY="1000", CALLD_CALLS_PER_USER_PER_HOUR="1000",
                        CALLD_CALLS_PER_NUMBER_AT_ONCE="1000", **ledger_env(tmp_path, n, ledger_url), **texting, **extra)
        log = home / "daemon.log"
        with log.open("w") as log_out:
            proc = subprocess.Popen([sys.executable, "-m", "calld.cli.daemon", "-v", "serve"], env=env, cwd=home,
                                    stdout=subprocess.DEVNULL, stderr=log_out)
        daemons[n] = {"proc": proc, "log": log, "socket": home / "ctl.sock", "http": f"127.0.0.1:{port}",
                      "media": f"127.0.0.1:{media_port}", "state": Path(env["CALLD_STATE_DIR"])}
    nginx = Nginx(tmp_path / "nginx", proxy_port)
    try:
        for n, d in daemons.items():
            wait_for(f"daemon {n}", d["socket"].exists, d["proc"], d["log"])
        yield {"daemons": daemons, "nginx": nginx, "signer": signer, "sim": sim, "ledger_url": ledger_url, "base": base,
               "env": env}
    finally:
        nginx.stop()
        for d in daemons.values():
            stop(d["proc"])


async def ask_through(daemon: dict, i: int) -> tuple[int, dict | None, str]:
    async with ControlClient(daemon["socket"], timeout=BOUND_S) as c:
        out, err = io.StringIO(), io.StringIO()
        code = await run_ask(c, {**ASK, "request_id": f"req-proxy-{i}"}, out=out, err=err)
    return code, (json.loads(out.getvalue()) if out.getvalue().strip() else None), err.getvalue()


async def provision(daemons: dict) -> None:
    for d in daemons.values():
        async with ControlClient(d["socket"], timeout=BOUND_S) as c:
            await c.provision("alice")


@pytest.mark.timeout(300)
async def test_every_call_through_nginx_is_answered_and_stays_with_the_daemon_that_placed_it(deployment):
    daemons, nginx = deployment["daemons"], deployment["nginx"]
    nginx.start({n: (d["http"], d["media"]) for n, d in daemons.items()})
    await provision(daemons)
    calls = 4
    results: dict[int, tuple[int, dict | None, str]] = {}

    async def one(i: int) -> None:
        results[i] = await ask_through(daemons[1 + i % 2], i)

    with trio.fail_after(240):
        async with trio.open_nursery() as n:
            for i in range(calls):
                n.start_soon(one, i)
    for i, (code, result, err) in results.items():
        assert code == 0 and result is not None and result["status"] == "answered", (i, err)

    # Each daemon dialled its own calls with URLs under its own /d/N/ ...
    for n, d in daemons.items():
        dials = [json.loads(p.read_text()) for p in (d["state"] / "artifacts").glob("*/dial.json")]
        assert len(dials) == calls // 2
        for dial in dials:
            assert dial["webhook_url"] == f"http://127.0.0.1:{nginx.port}/d/{n}/telnyx/webhook"
            assert dial["stream_url"].startswith(f"ws://127.0.0.1:{nginx.port}/d/{n}/telnyx/media/")
    # ... and nginx passed each /d/N/ request to daemon N's ports, and no webhook went anywhere else.
    routed = nginx.routed()
    for n, d in daemons.items():
        hooks = [r for r in routed if r[0] == f"/d/{n}/telnyx/webhook"]
        media = [r for r in routed if r[0].startswith(f"/d/{n}/telnyx/media/") and not r[0].endswith("/health")]
        assert hooks and {r[1] for r in hooks} == {d["http"]} and {r[2] for r in hooks} == {"200"}
        assert len(media) == calls // 2 and {r[1] for r in media} == {d["media"]} and {r[2] for r in media} == {"101"}
    assert not [r for r in routed if r[0] == "/telnyx/webhook"]
    for d in daemons.values():
        assert "belongs to daemon" not in d["log"].read_text()  # no webhook for the other daemon's call reached it


@pytest.mark.timeout(300)
async def test_a_proxy_rule_that_sends_daemon_2s_media_to_daemon_1_is_refused_before_a_dial(deployment):
    daemons, nginx = deployment["daemons"], deployment["nginx"]
    swapped = {1: (daemons[1]["http"], daemons[1]["media"]), 2: (daemons[2]["http"], daemons[1]["media"])}
    nginx.start(swapped)
    await provision(daemons)
    from calld.cli.client import ControlError

    with trio.fail_after(120), pytest.raises(ControlError) as refused:
        await ask_through(daemons[2], 0)
    assert (f"refusing to dial: http://127.0.0.1:{nginx.port}/d/2/telnyx/media/health answered, but not from this daemon; "
            "check the proxy rule that sends /d/2/telnyx/media/ to CALLD_MEDIA_BIND") in refused.value.message
    assert not list((daemons[2]["state"] / "artifacts").glob("*/dial.json"))  # nothing was dialled
    # Daemon 1's rules are right: its calls go on.
    with trio.fail_after(120):
        code, result, err = await ask_through(daemons[1], 1)
    assert code == 0 and result is not None and result["status"] == "answered", err


@pytest.mark.signed_here
@pytest.mark.timeout(300)
async def test_a_webhook_at_the_application_url_for_daemon_2s_call_is_forwarded_to_daemon_2(deployment):
    """Telnyx's fallback URL reaches daemon 1 (the proxy's plain /telnyx/webhook); the call's client_state
    names daemon 2, so daemon 1 sends it on through /d/2/, and daemon 2 checks its signature itself."""
    import base64

    import httpx

    from calld.adapters.fixtures import load_fixture
    from calld.adapters.webhook_auth import sign_webhook

    daemons, nginx = deployment["daemons"], deployment["nginx"]
    nginx.start({n: (d["http"], d["media"]) for n, d in daemons.items()})
    body = load_fixture("telnyx", "webhook_call_hangup")
    body["data"]["id"] = "evt-proxy-forward"
    body["data"]["payload"]["client_state"] = base64.b64encode(b"run_0123456789abcdef0123@2").decode()
    raw = json.dumps(body).encode()
    headers = sign_webhook(raw, deployment["signer"][0], int(time.time()))
    async with httpx.AsyncClient() as c:
        resp = await c.post(f"http://127.0.0.1:{nginx.port}/telnyx/webhook", content=raw, headers=headers)
    assert resp.status_code == 200 and resp.json()["note"] == "forwarded to daemon 2"
    assert "belongs to daemon 2: forwarded (it answered 200)" in daemons[1]["log"].read_text()
    assert "evt-proxy-forward" in daemons[2]["log"].read_text()  # daemon 2 took it (and, its call ended, dropped it)
    # nginx logs a request once its response has gone out: the outer one's line may come a moment after
    # the client has its answer.
    want = {("/telnyx/webhook", daemons[1]["http"], "200"), ("/d/2/telnyx/webhook", daemons[2]["http"], "200")}
    with trio.move_on_after(BOUND_S):
        while not want <= set(nginx.routed()):
            await trio.sleep(0.05)
    assert want <= set(nginx.routed()), nginx.routed()


@pytest.mark.texting
@pytest.mark.timeout(300)
async def test_a_text_through_nginx_reaches_a_daemon_and_the_next_one_when_the_first_is_down(deployment):
    """Linq posts every text to {PUBLIC_BASE_URL}/linq/webhook?version=...: the proxy hands it to the first
    daemon that is up (query kept, so the signature and the version reach calld), and calld answers it."""
    import httpx

    daemons, nginx, sim = deployment["daemons"], deployment["nginx"], deployment["sim"]
    nginx.start({n: (d["http"], d["media"]) for n, d in daemons.items()})
    hook = f"http://127.0.0.1:{nginx.port}/linq/webhook?version=2026-02-03"

    async def text(sender: str) -> list[int]:
        async with httpx.AsyncClient(timeout=BOUND_S) as c:
            resp = await c.post(f"{sim['TELNYX_API_BASE']}/sim/linq/text", json={"from": sender, "text": "help", "url": hook})
            return resp.json()["statuses"]

    async def answered(sender: str) -> bool:
        async with httpx.AsyncClient(timeout=BOUND_S) as c:
            lines = (await c.get(f"{sim['TELNYX_API_BASE']}/sim/linq/conversation")).json()
        return any(line["who"] == "calld" and line["handle"] == sender for line in lines)

    async def until_answered(sender: str) -> None:
        with trio.move_on_after(BOUND_S):
            while not await answered(sender):
                await trio.sleep(0.05)
        assert await answered(sender), f"no reply to {sender}"

    # doctor (the shell with the shared settings, texting's included) finds each daemon's texting route through nginx.
    shared = {k: v for k, v in deployment["env"].items()
              if k.startswith(("TELNYX_", "OPENAI_", "PUBLIC_", "LINQ_")) or k in ("CALLD_MODE", "CALLD_LIVE_OPT_IN")}
    sockets = ",".join(str(d["socket"]) for d in daemons.values())
    _, out, _ = await trio.to_thread.run_sync(partial(calld_ctl, "doctor", CALLD_SOCKET=sockets, **shared))
    assert out.count(f"[ok] texting ingress: http://127.0.0.1:{nginx.port}/linq/webhook reaches a calld") == 2, out

    assert await text("+15555550177") == [200]
    await until_answered("+15555550177")
    assert "text " in daemons[1]["log"].read_text() and "text " not in daemons[2]["log"].read_text()
    stop(daemons[1]["proc"])  # the first daemon is down: the next one takes the texts
    assert await text("+15555550178") == [200]
    await until_answered("+15555550178")
    assert "text " in daemons[2]["log"].read_text()
    with trio.move_on_after(BOUND_S):
        while len([r for r in nginx.routed() if r[0].startswith("/linq/webhook?")]) < 2:
            await trio.sleep(0.05)
    texts = [r for r in nginx.routed() if r[0].startswith("/linq/webhook?")]  # Linq's; doctor's probes have no query
    assert [r[0] for r in texts] == ["/linq/webhook?version=2026-02-03"] * 2
    assert texts[0][1] == daemons[1]["http"] and texts[1][1].split(", ")[-1] == daemons[2]["http"], texts
    assert [r[2] for r in texts] == ["200", "200"]


def calld_ctl(*argv: str, **env: str) -> tuple[int, str, str]:
    done = subprocess.run([sys.executable, "-m", "calld.cli.ctl", *argv], env=clean_env(**env), capture_output=True,
                          text=True, timeout=BOUND_S, check=False)
    return done.returncode, done.stdout, done.stderr


@pytest.mark.ledger_password
@pytest.mark.timeout(300)
def test_doctor_and_ledger_check_see_each_daemon_as_the_proxy_serves_it_and_the_ledger_it_uses(deployment, tmp_path):
    """The README's loop: CALLD_INSTANCE, the ports, the state dir and CALLD_LEDGER_URL are set on each `serve`
    only; calld-ctl's shell has the shared settings (.env: keys, PUBLIC_BASE_URL). doctor and ledger check ask
    each daemon where its ledger is and how the proxy reaches it, and check that."""
    from calld.ledger import redact

    daemons, nginx = deployment["daemons"], deployment["nginx"]
    nginx.start({n: (d["http"], d["media"]) for n, d in daemons.items()})
    shared = {k: v for k, v in deployment["env"].items()
              if k.startswith(("TELNYX_", "OPENAI_", "PUBLIC_")) or k in ("CALLD_MODE", "CALLD_LIVE_OPT_IN")}
    shell = {**shared, "CALLD_STATE_DIR": str(tmp_path / "nobody")}  # as a shell whose CALLD_STATE_DIR names no daemon's
    sockets = ",".join(str(d["socket"]) for d in daemons.values())
    url, shown = deployment["ledger_url"], redact(deployment["ledger_url"])
    assert LEDGER_PASSWORD in url and LEDGER_PASSWORD not in shown and ":***@" in shown

    code, out, err = calld_ctl("doctor", CALLD_SOCKET=sockets, **shell)
    assert LEDGER_PASSWORD not in out + err
    sections = out.split("daemon at ")[1:]
    assert len(sections) == 2, out
    for (n, d), section in zip(daemons.items(), sections, strict=True):
        lines = {line.strip().split(":", 1)[0]: line.strip() for line in section.splitlines()[1:]}
        assert lines["[ok] public ingress"].startswith(
            f"[ok] public ingress: http://127.0.0.1:{nginx.port}/d/{n}/health reaches the calld on {d['http']}"), out
        assert lines["[ok] media ingress"].startswith(
            f"[ok] media ingress: http://127.0.0.1:{nginx.port}/d/{n}/telnyx/media/health reaches the media listener on {d['media']}"), out
        # The daemon's PostgreSQL ledger needs its password, which this shell does not have: doctor says what to set.
        assert lines["[FIX] ledger"].startswith(f"[FIX] ledger: the ledger {shown} (the ledger of the calld answering on {d['socket']}"), out
        assert "set CALLD_LEDGER_URL here to the daemon's, password included" in lines["[FIX] ledger"]
    code, out, err = calld_ctl("ledger", "check", CALLD_SOCKET=sockets, **shell)
    assert code == 2 and "needs its password" in err and LEDGER_PASSWORD not in out + err, (out, err)

    # With the password (CALLD_LEDGER_URL in calld-ctl's shell too), both check the daemons' ledger itself.
    code, out, err = calld_ctl("doctor", CALLD_SOCKET=sockets, CALLD_LEDGER_URL=url, **shell)
    assert LEDGER_PASSWORD not in out + err
    for d in daemons.values():
        assert (f"[ok] ledger: {shown} answers with calld's schema (PostgreSQL) (checked: the ledger of the calld answering on "
                f"{d['socket']}") in out, out
    assert "not created yet" not in out and "ingress" not in "".join(line for line in out.splitlines() if "[FIX]" in line), out
    code, out, err = calld_ctl("ledger", "check", CALLD_SOCKET=sockets, CALLD_LEDGER_URL=url, **shell)
    assert code == 0, (out, err)
    assert out.splitlines() == [f"ledger {shown} (the ledger of the calld answering on {daemons[1]['socket']} "
                                f"(pid {daemons[1]['proc'].pid}))", f"ledger {shown}: ok (PostgreSQL schema check passed)"]
    assert LEDGER_PASSWORD not in out + err


@pytest.mark.daemon_env(RING_TIMEOUT_S="8")
@pytest.mark.timeout(300)
async def test_a_call_dialled_into_a_dead_proxy_ends_at_its_ring_timeout_with_one_hangup(deployment, pg_url):
    """The proxy dies after the ingress check passed (it stands for a minute): the next ask is dialled, and
    neither its webhooks nor its media can reach the daemon. The call ends at RING_TIMEOUT_S, failed
    no_call_events, hung up once at the carrier, not silent until MAX_CALL_S."""
    from calld.ledger import Ledger

    daemons, nginx = deployment["daemons"], deployment["nginx"]
    nginx.start({n: (d["http"], d["media"]) for n, d in daemons.items()})
    await provision(daemons)
    with trio.fail_after(120):
        code, result, err = await ask_through(daemons[1], 0)
    assert code == 0 and result is not None and result["status"] == "answered", err
    nginx.stop()
    began = time.monotonic()
    with trio.fail_after(120):
        code, result, err = await ask_through(daemons[1], 1)
    took = time.monotonic() - began
    assert result is not None and (result["status"], result["reason"]) == ("failed", "no_call_events"), err
    assert 8 <= took < 40, took
    run_dir = next(p.parent for p in (daemons[1]["state"] / "artifacts").glob("*/result.json")
                   if json.loads(p.read_text())["run_id"] == result["run_id"])
    hangup = json.loads((run_dir / "hangup.json").read_text())
    assert hangup["via"] == "failure" and hangup["sent"] is True and not str(hangup["telnyx"]).startswith("error")
    hangups = [json.loads(line) for line in (run_dir / "events.jsonl").read_text().splitlines()
               if '"hangup"' in line and json.loads(line).get("effect", {}).get("kind") == "hangup"]
    assert len(hangups) == 1  # one hangup sent
    ledger = Ledger(pg_url)
    try:
        row = ledger.request("req-proxy-1")
        assert row is not None and row.status == "done" and row.result["reason"] == "no_call_events"
    finally:
        ledger.close()
