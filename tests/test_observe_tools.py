"""doctor, prune, metrics from artifacts, --version, and demo/verify cleaning up after themselves."""

from __future__ import annotations

import json
import os
import socket
from datetime import UTC, datetime
from pathlib import Path

import httpx
import pytest
import trio
from prometheus_client.parser import text_string_to_metric_families

from calld.cli.ctl import main as ctl_main
from calld.cli.daemon import main as daemon_main
from calld.ledger import Ledger
from calld.observe.artifacts import load_run
from calld.observe.doctor import disk_problem, ledger_problem, run_doctor
from calld.observe.metrics import Metrics
from calld.observe.prune import prune_artifacts
from calld.settings import load_settings
from synthetic_artifacts import five_minute_call_with_hold

# -- doctor ----------------------------------------------------------------------------------------


def private_state(tmp_path: Path) -> Path:
    state = tmp_path / "state"
    state.mkdir(mode=0o700)
    Ledger(state / "calld.sqlite3").close()
    os.chmod(state / "calld.sqlite3", 0o600)
    return state


_env: pytest.MonkeyPatch


def doctor(tmp_path: Path, capsys: pytest.CaptureFixture[str], *extra: str, **env: str) -> tuple[int, list[str]]:
    for key, value in {"CALLD_STATE_DIR": str(tmp_path / "state"), "CALLD_SOCKET": str(tmp_path / "run" / "ctl.sock"),
                       "CALLD_MODE": "stub", **env}.items():
        _env.setenv(key, value)
    capsys.readouterr()
    code = ctl_main(["doctor", *extra])
    return code, capsys.readouterr().out.splitlines()


@pytest.fixture(autouse=True)
def clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    global _env
    _env = monkeypatch
    for key in ("CALLD_STATE_DIR", "CALLD_SOCKET", "CALLD_MODE", "CALLD_MAX_CALLS"):
        monkeypatch.delenv(key, raising=False)
    monkeypatch.chdir(Path(__file__).parent)  # no .env from the developer's checkout


def test_doctor_passes_a_private_writable_state_dir_and_a_sound_ledger(tmp_path, capsys, monkeypatch):
    private_state(tmp_path)
    code, lines = doctor(tmp_path, capsys)
    assert code == 0, lines
    assert [line.split(":")[0] for line in lines] == ["[ok] settings", "[ok] state dir", "[ok] ledger", "[ok] disk space", "[ok] socket"]
    assert "passes its integrity check" in lines[2] and "no daemon running" in lines[4]


def test_doctor_says_how_to_make_the_state_dir_private(tmp_path, capsys):
    state = private_state(tmp_path)
    os.chmod(state, 0o755)
    os.chmod(state / "calld.sqlite3", 0o644)
    code, lines = doctor(tmp_path, capsys)
    assert code == 1
    (line,) = [entry for entry in lines if entry.startswith("[FIX] state dir")]
    assert f"chmod 0700 {state}" in line and f"chmod 0600 {state / 'calld.sqlite3'}" in line


def test_doctor_does_not_call_a_redaction_key_others_can_read_private(tmp_path, capsys):
    from calld.ops.redaction import KEY_FILE

    state = private_state(tmp_path)
    (state / KEY_FILE).write_bytes(b"k" * 32)
    os.chmod(state / KEY_FILE, 0o644)
    code, lines = doctor(tmp_path, capsys)
    assert code == 1
    (line,) = [entry for entry in lines if entry.startswith("[FIX] state dir")]
    assert f"chmod 0600 {state / KEY_FILE}" in line and "the key that hides user ids" in line and "private" not in line


def test_doctor_finds_a_damaged_ledger(tmp_path, capsys):
    state = private_state(tmp_path)
    (state / "calld.sqlite3").write_bytes(b"SQLite format 3\x00" + b"\x07" * 5000)
    code, lines = doctor(tmp_path, capsys, "--json")
    found = {f["name"]: f for f in json.loads(lines[0])}
    assert code == 1 and found["ledger"]["ok"] is False and "restore it from a backup" in found["ledger"]["detail"]
    assert ledger_problem(tmp_path / "absent.sqlite3") is None


def test_doctor_reports_bad_settings_and_a_bad_socket_path(tmp_path, capsys):
    private_state(tmp_path)
    code, lines = doctor(tmp_path, capsys, CALLD_MAX_CALLS="0")
    assert code == 1 and lines[0].startswith("[FIX] settings:") and "CALLD_MAX_CALLS" in "\n".join(lines)
    (tmp_path / "run").mkdir()
    (tmp_path / "run" / "ctl.sock").write_text("not a socket")
    code, lines = doctor(tmp_path, capsys, CALLD_MAX_CALLS="5")
    assert code == 1 and any(line.startswith("[FIX] socket") and "is not a socket" in line for line in lines)
    (tmp_path / "run" / "ctl.sock").unlink()
    stale = socket.socket(socket.AF_UNIX)
    stale.bind(str(tmp_path / "run" / "ctl.sock"))
    stale.close()  # a socket file nobody listens on: a daemon that died
    code, lines = doctor(tmp_path, capsys)
    assert code == 1 and any("nobody answers" in line for line in lines)


async def test_doctor_and_ledger_check_look_at_the_running_daemons_state_dir_and_say_why(tmp_path, capsys, nursery, autojump_clock):
    from calld.daemon.service import Daemon
    from daemons import daemon_settings, real_time, stop

    settings = daemon_settings(tmp_path)  # its state dir: tmp_path/state
    daemon: Daemon = await nursery.start(Daemon(settings).serve)
    elsewhere = tmp_path / "elsewhere"  # what this shell's CALLD_STATE_DIR names; nobody uses it
    _env.setenv("CALLD_STATE_DIR", str(elsewhere))
    _env.setenv("CALLD_SOCKET", str(settings.calld_socket))
    _env.setenv("CALLD_MODE", "stub")

    async def ctl(*argv: str) -> tuple[int, list[str]]:
        capsys.readouterr()
        with real_time(autojump_clock):  # calld-ctl runs its own trio loop in a worker thread
            code = await trio.to_thread.run_sync(ctl_main, list(argv))
        return code, capsys.readouterr().out.splitlines()

    state, ledger = settings.calld_state_dir, settings.db_path
    code, lines = await ctl("doctor")
    (state_line,) = [line for line in lines if line.startswith("[ok] state dir")]
    assert code == 0, lines
    assert f"{state} is writable and private" in state_line, state_line
    assert f"the calld answering on {settings.calld_socket}" in state_line and f"CALLD_STATE_DIR here names {elsewhere}" in state_line
    assert any(line.startswith(f"[ok] ledger: {ledger} passes its integrity check") for line in lines), lines
    code, lines = await ctl("ledger", "check")
    assert code == 0 and lines[0].startswith(f"state dir {state} (the state dir of the calld answering on"), lines
    assert lines[-1] == f"ledger {ledger}: ok (SQLite integrity check passed)"
    assert not elsewhere.exists()

    # With no daemon running, CALLD_STATE_DIR is what there is to check, and they say so.
    await stop(daemon)
    code, lines = await ctl("doctor")
    (state_line,) = [line for line in lines if line.startswith("[ok] state dir")]
    assert f"{elsewhere} does not exist yet" in state_line and f"CALLD_STATE_DIR; no calld answers on {settings.calld_socket}" in state_line
    code, lines = await ctl("ledger", "check")
    assert lines[0] == f"state dir {elsewhere} (CALLD_STATE_DIR; no calld answers on {settings.calld_socket})", lines


async def test_doctor_checks_every_daemon_calld_socket_lists(tmp_path, capsys, nursery, autojump_clock):
    """CALLD_SOCKET=a,b is calld-ctl's list of daemons: doctor checks each, by the state dir it reports."""
    from calld.daemon.service import Daemon
    from daemons import daemon_settings, real_time

    one, two = daemon_settings(tmp_path / "one"), daemon_settings(tmp_path / "two")
    for s in (one, two):
        await nursery.start(Daemon(s).serve)
    _env.setenv("CALLD_SOCKET", f"{one.calld_socket},{two.calld_socket}")
    _env.setenv("CALLD_MODE", "stub")
    for argv in (["doctor"], ["doctor", "--json"]):
        capsys.readouterr()
        with real_time(autojump_clock):
            code = await trio.to_thread.run_sync(ctl_main, argv)
        out = capsys.readouterr().out
        assert code == 0, out
        if argv[-1] == "--json":
            found = json.loads(out)
            assert {f["socket"] for f in found} == {str(one.calld_socket), str(two.calld_socket)} and all(f["ok"] for f in found)
            continue
        lines = out.splitlines()
        assert lines[0] == f"daemon at {one.calld_socket}:" and f"daemon at {two.calld_socket}:" in lines
        states = [line for line in lines if line.startswith("  [ok] state dir")]
        assert len(states) == 2
        for line, s in zip(states, (one, two), strict=True):
            assert f"{s.calld_state_dir} is writable" in line and f"the calld answering on {s.calld_socket}" in line, line


async def test_calld_ctl_checks_only_the_settings_it_uses(tmp_path, capsys, nursery, autojump_clock):
    """CALLD_MAX_CALLS is the daemon's: a bad value of it (in the environment or .env) is no reason for
    calld-ctl history to refuse; a bad value of what calld-ctl uses (CALLD_SOCKET) still is."""
    from calld.daemon.service import Daemon
    from calld.settings import Settings
    from daemons import daemon_settings, real_time, stop

    settings = daemon_settings(tmp_path)
    daemon: Daemon = await nursery.start(Daemon(settings).serve)

    async def ctl(*argv: str) -> tuple[int, str, str]:
        capsys.readouterr()
        with real_time(autojump_clock):  # calld-ctl runs its own trio loop in a worker thread
            code = await trio.to_thread.run_sync(ctl_main, list(argv))
        out, err = capsys.readouterr()
        return code, out, err

    _env.setenv("CALLD_SOCKET", str(settings.calld_socket))
    _env.setenv("CALLD_MAX_CALLS", "fifty")
    code, out, err = await ctl("history")
    assert (code, err) == (0, "") and out.strip() == "(none)", (out, err)
    _env.delenv("CALLD_MAX_CALLS")
    env_file = tmp_path / "dot.env"
    env_file.write_text("CALLD_MAX_CALLS=fifty\nCALLD_CALL_WINDOW=whenever\n")
    _env.setitem(Settings.model_config, "env_file", str(env_file))
    code, out, err = await ctl("history", "--json")
    assert (code, err, json.loads(out)) == (0, "", []), (out, err)
    _env.setenv("CALLD_SOCKET", " ")
    code, out, err = await ctl("history")
    assert code == 2 and "CALLD_SOCKET: is empty" in err and "CALLD_MAX_CALLS" not in err, err
    await stop(daemon)


def test_disk_space_below_the_floor_says_what_to_do(tmp_path):
    problem, free = disk_problem(tmp_path, min_free=2**62)
    assert problem is not None and "calld-ctl prune --older-than" in problem and free > 0
    assert disk_problem(tmp_path / "not" / "yet", min_free=1)[0] is None


LIVE = {
    "calld_mode": "live", "calld_live_opt_in": True, "telnyx_api_key": "KEY_test", "telnyx_connection_id": "app-1",
    "telnyx_public_key": "x", "openai_api_key": "sk-test", "public_base_url": "https://calld.example.test",
    "public_webhook_url": "https://calld.example.test/telnyx/webhook", "calld_bind": "127.0.0.1:8787",
}


def live_world(*, key_ok: bool = True, model: str = "gpt-live-1", ingress_token: str = "tok",
               media_routed: bool = True) -> httpx.MockTransport:
    """Recorded shapes of the three services doctor asks in live mode."""

    def handle(request: httpx.Request) -> httpx.Response:
        url = str(request.url)
        if url == "https://api.telnyx.com/v2/call_control_applications/app-1":
            if not key_ok:
                return httpx.Response(401, json={"errors": [{"code": "10009", "title": "Authentication failed"}]})
            return httpx.Response(200, json={"data": {"id": "app-1", "application_name": "calld", "record_type": "call_control_application"}})
        if url == "https://api.openai.com/v1/models":
            return httpx.Response(200, json={"object": "list", "data": [{"id": model, "object": "model"}]})
        if url == "https://calld.example.test/health":
            return httpx.Response(200, json={"ok": True, "serve_token": ingress_token})
        if url == "http://127.0.0.1:8787/health":
            return httpx.Response(200, json={"ok": True, "serve_token": "tok"})
        if url == "https://calld.example.test/telnyx/media/health" and media_routed:
            return httpx.Response(200, json={"ok": True, "serve_token": ingress_token})
        if url == "http://127.0.0.1:8788/telnyx/media/health":
            return httpx.Response(200, json={"ok": True, "serve_token": "tok"})
        return httpx.Response(404)

    return httpx.MockTransport(handle)


async def test_doctor_in_live_mode_checks_telnyx_gpt_live_and_the_ingress(tmp_path):
    private_state(tmp_path)
    settings = load_settings(calld_state_dir=tmp_path / "state", calld_socket=tmp_path / "ctl.sock", **LIVE)
    found = {f.name: f for f in await run_doctor(settings, transport=live_world())}
    assert all(f.ok for f in found.values()), [f.line() for f in found.values() if not f.ok]
    assert "connection 'calld' exists" in found["Telnyx"].detail
    assert "gpt-live-1 is available" in found["GPT-Live"].detail
    assert "reaches the calld on 127.0.0.1:8787" in found["public ingress"].detail
    assert "reaches the media listener on 127.0.0.1:8788" in found["media ingress"].detail

    found = {f.name: f for f in await run_doctor(settings, transport=live_world(key_ok=False, model="other",
                                                                                  ingress_token="someone-else"))}
    assert "refused TELNYX_API_KEY (HTTP 401)" in found["Telnyx"].detail and not found["Telnyx"].ok
    assert "'gpt-live-1' is not among this key's models" in found["GPT-Live"].detail
    assert "reaches another calld" in found["public ingress"].detail
    assert "reaches another calld" in found["media ingress"].detail
    assert all(f.ok for name, f in found.items() if name not in ("Telnyx", "GPT-Live", "public ingress", "media ingress"))

    # The proxy sends webhooks to calld but has no rule for the media path: said, with the rule to add.
    found = {f.name: f for f in await run_doctor(settings, transport=live_world(media_routed=False))}
    assert found["public ingress"].ok and not found["media ingress"].ok
    assert "route /telnyx/media/" in found["media ingress"].detail and "CALLD_MEDIA_BIND (127.0.0.1:8788)" in found["media ingress"].detail


async def test_doctor_against_calld_sim_does_not_call_its_426_something_to_fix(tmp_path, nursery):
    from functools import partial

    from calld.observe.doctor import Context, check_gpt_live
    from calld.sim.server import Simulator
    from calld.stub.scenario import SCENARIOS

    addrs = await nursery.start(partial(Simulator(SCENARIOS["hours"]).serve))  # its real listener, on loopback
    settings = load_settings(calld_state_dir=tmp_path / "state", calld_socket=tmp_path / "ctl.sock",
                             **{**LIVE, "openai_live_url": addrs.live_url})
    found = await check_gpt_live(Context(settings))
    assert found.ok and "HTTP 426" in found.detail and "calld-sim" in found.detail, found.line()


async def test_doctor_in_stub_mode_does_not_probe_live_services(tmp_path):
    private_state(tmp_path)
    settings = load_settings(calld_state_dir=tmp_path / "state", calld_socket=tmp_path / "ctl.sock")

    def refuse(request: httpx.Request) -> httpx.Response:
        raise AssertionError(f"doctor asked {request.url} in stub mode")

    names = [f.name for f in await run_doctor(settings, transport=httpx.MockTransport(refuse))]
    assert names == ["settings", "state dir", "ledger", "disk space", "socket"]


# -- prune -----------------------------------------------------------------------------------------


def _call_dir(root: Path, name: str, started: str) -> Path:
    d = root / name
    (d / "audio").mkdir(parents=True)
    (d / "result.json").write_text("{}")
    (d / "call_report.json").write_text(json.dumps({"started_at": started}))
    (d / "audio" / "inbound.wav").write_bytes(b"\0" * 1000)
    return d


def test_prune_removes_only_finished_calls_older_than_the_cutoff(tmp_path):
    now = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)
    old = _call_dir(tmp_path, "v3_old", "2026-11-01T09:00:00+00:00")
    new = _call_dir(tmp_path, "v3_new", "2026-11-29T09:00:00+00:00")
    busy = _call_dir(tmp_path, "v3_busy", "2026-10-01T09:00:00+00:00")
    pending = tmp_path / ".pending-run_x"
    pending.mkdir()
    stranger = tmp_path / "notes"
    stranger.mkdir()

    dry = prune_artifacts(tmp_path, 7, now=now, running=[busy], dry_run=True)
    assert dry.removed == (str(old),) and old.exists()
    done = prune_artifacts(tmp_path, 7, now=now, running=[busy])
    assert done.removed == (str(old),) and done.kept == 1 and done.freed_bytes >= 1000
    assert not old.exists() and new.exists() and busy.exists() and pending.exists() and stranger.exists()
    with pytest.raises(ValueError, match="0 or more"):
        prune_artifacts(tmp_path, -1)


@pytest.mark.parametrize("age", ["-3", "nan", "inf", "1e9"])
def test_ctl_prune_refuses_an_age_out_of_range_before_asking_the_daemon(tmp_path, capsys, age):
    assert ctl_main(["--socket", str(tmp_path / "none.sock"), "prune", "--older-than", age]) == 2
    assert "--older-than: a number of days, from 0 to 36500" in capsys.readouterr().err


# -- metrics from artifacts ------------------------------------------------------------------------


def test_metrics_count_reasons_lost_frames_and_refused_records(tmp_path):
    d = five_minute_call_with_hold(tmp_path)
    lines = (d / "events.jsonl").read_text().splitlines()
    # Drop three inbound frames: a gap of three in the chunk numbers.
    frames = [i for i, line in enumerate(lines) if '"event": {"pcm"' in line]
    chunked = []
    for n, i in enumerate(frames):
        row = json.loads(lines[i])
        row["event"]["chunk"] = n + 1
        lines[i] = json.dumps(row)
        chunked.append(i)
    del lines[chunked[10]:chunked[13]]
    (d / "events.jsonl").write_text("\n".join(lines) + "\n")

    metrics = Metrics(max_calls=3, in_flight=lambda: 2)
    metrics.observe(load_run(d))
    samples = {(s.name, tuple(sorted(s.labels.items()))): s.value
               for fam in text_string_to_metric_families(metrics.exposition().decode()) for s in fam.samples}
    assert samples[("calld_calls_total", (("reason", "answered"), ("status", "answered")))] == 1
    assert samples[("calld_media_frames_lost_total", ())] == 3
    assert samples[("calld_tool_record_refusals_total", ())] == 1
    assert samples[("calld_ring_duration_seconds_sum", ())] == pytest.approx(0.8)
    assert samples[("calld_live_session_seconds_sum", ())] == pytest.approx(294.0)
    assert samples[("calld_calls_in_flight", ())] == 2 and samples[("calld_max_calls", ())] == 3



def test_forwarded_held_and_recorded_stretches_count_their_frames_and_their_gaps(tmp_path):
    d = five_minute_call_with_hold(tmp_path)
    lines = [line for line in (d / "events.jsonl").read_text().splitlines() if '"event": {"pcm"' not in line]
    seq = 10_000

    def row(kind: str, **fields) -> str:
        nonlocal seq
        seq += 1
        return json.dumps({"seq": seq, "t_ms": 500 + seq, "event": {"kind": kind, **fields}})

    lines += [
        '{"seq": 9001, "t_ms": 100, "event": {"pcm": 640, "chunk": 1, "kind": "media.audio"}}',
        '{"seq": 9002, "t_ms": 120, "event": {"pcm": 640, "chunk": 2, "kind": "media.audio"}}',
        row("media.audio_forwarded", frames=25, pcm_bytes=16000, first_chunk=3, last_chunk=27, loud=[]),
        row("media.audio_forwarded", frames=23, pcm_bytes=14720, first_chunk=30, last_chunk=54, loud=[]),  # 2 before, 2 inside
        row("media.audio_held", frames=[{"pcm": 640, "chunk": 55}, {"pcm": 640, "chunk": 57}]),  # 56 missing
        row("media.audio_recorded", frames=10, pcm_bytes=6400, first_chunk=58, last_chunk=68),  # 1 inside
    ]
    (d / "events.jsonl").write_text("\n".join(lines) + "\n")
    run = load_run(d)
    assert run.inbound_frames_lost == 6
    assert run.inbound_audio_at_ms == 100
    assert not [r for r in run.rows if r.get("event", {}).get("kind") in ("media.audio_forwarded", "media.audio_recorded", "media.audio_held")]


def test_metrics_time_every_garbage_collection_while_watching_and_tell_apart_those_no_call_felt():
    import gc

    in_flight = [2]
    metrics = Metrics(max_calls=3, in_flight=lambda: in_flight[0])

    def collections(name: str = "calld_gc_pause_seconds_count") -> float:
        fams = text_string_to_metric_families(metrics.exposition().decode())
        return sum(s.value for fam in fams for s in fam.samples if s.name == name)

    gc.collect()
    assert collections() == 0  # not watching yet
    metrics.watch_gc()
    try:
        gc.collect()
        gc.collect(0)
        in_flight[0] = 0
        gc.collect()  # no call on the line: nobody's audio stopped
    finally:
        metrics.unwatch_gc()
    gc.collect()
    assert collections() == 2
    assert collections("calld_gc_unfelt_pause_seconds_count") == 1
    fams = {f.name: f for f in text_string_to_metric_families(metrics.exposition().decode())}
    worst = fams["calld_gc_pause_max_seconds"].samples[0].value
    assert 0 < worst < 5
    worst_cpu = fams["calld_gc_pause_cpu_max_seconds"].samples[0].value
    assert 0 < worst_cpu <= worst + 0.001  # a walk's CPU is never more than its pause (clock steps aside)
    gens = {s.labels.get("generation") for s in fams["calld_gc_pause_seconds"].samples if s.name.endswith("_count")}
    assert {"0", "2"} <= gens

def test_a_collection_the_machine_stalled_shows_a_long_pause_and_its_own_short_cpu(monkeypatch):
    # The pause is what calls felt; its CPU is what the collector's work cost. The two part when the
    # core was taken away meanwhile: bench/load.py prints both, so a stall is not read as the heap's.
    import calld.observe.metrics as metrics_module

    class Clocks:
        wall, cpu = 100.0, 5.0

        def perf_counter(self):
            return self.wall

        def thread_time(self):
            return self.cpu

        def process_time(self):
            return self.cpu

    clocks = Clocks()
    monkeypatch.setattr(metrics_module, "time", clocks)
    metrics = Metrics(max_calls=3, in_flight=lambda: 1)
    for pause_s, cpu_s in ((0.030, 0.004), (0.008, 0.007)):  # a stalled walk, then a busy one
        metrics._on_gc("start", {"generation": 1})
        clocks.wall += pause_s
        clocks.cpu += cpu_s
        metrics._on_gc("stop", {"generation": 1})
    fams = {f.name: f for f in text_string_to_metric_families(metrics.exposition().decode())}
    assert fams["calld_gc_pause_max_seconds"].samples[0].value == pytest.approx(0.030)
    assert fams["calld_gc_pause_cpu_max_seconds"].samples[0].value == pytest.approx(0.007)


# -- versions and cleaning up ----------------------------------------------------------------------


def test_both_commands_say_their_version(capsys):
    for main, name in ((ctl_main, "calld-ctl"), (daemon_main, "calld")):
        with pytest.raises(SystemExit) as exit_:
            main(["--version"])
        assert exit_.value.code == 0
        out = capsys.readouterr().out.strip()
        assert out.startswith(f"{name} ") and out.split()[1][0].isdigit()


def _removed_or_kept(err: str) -> Path:
    line = next(line for line in err.splitlines() if line.startswith(("removed ", "artifacts: ")))
    return Path(line.split()[1])


def test_verify_cleans_its_workspace_unless_kept(capsys):
    assert ctl_main(["verify", "ask"]) == 0
    out, err = capsys.readouterr()
    assert "[PASS] timeline_drawn" in out
    assert not _removed_or_kept(err).exists()
    assert ctl_main(["verify", "ask", "--keep"]) == 0
    kept = _removed_or_kept(capsys.readouterr().err)
    assert (kept / "timeline.svg").is_file()


def test_demo_cleans_its_temporary_directory_unless_kept(capsys):
    assert daemon_main(["demo", "--fast"]) == 0
    err = capsys.readouterr().err
    assert not _removed_or_kept(err).exists()
    assert "WARNING" not in err and "ERROR" not in err, err  # a demo that went well says nothing alarming
    assert daemon_main(["demo", "--fast", "--keep"]) == 0
    artifacts = _removed_or_kept(capsys.readouterr().err)
    assert [p.name for p in artifacts.glob("*/timeline.svg")] == ["timeline.svg"]


# -- show from artifacts other work adds (reason, evidence, typed answer, per-turn times, holds) -----


def test_show_prints_evidence_typed_answer_holds_and_per_turn_times(tmp_path):
    from calld.observe.history import call_detail
    from calld.observe.summary import show_text

    artifacts = tmp_path / "artifacts"
    d = five_minute_call_with_hold(artifacts)
    detail = call_detail(artifacts, "v3:synthetic-hold", None)
    assert detail is not None and detail["dir"] == str(d.resolve())
    text = show_text(detail, transcript=True)
    lines = text.splitlines()
    assert "  status      answered, verdict from the tool" in lines
    assert ("  evidence    \u201cYes, we have three of them in stock.\u201d (turn 10, 279.0 s-285.0 s in audio/inbound.wav, "
            "280.0 s-286.0 s into the call)") in lines
    assert "  typed       stock: in stock, 3" in lines
    assert "  hold        28.5 s-148.5 s (let me check; person returned)" in lines
    turns = [line for line in lines if "business:" in line or "agent:" in line]
    assert turns[0] == "     1.2-   4.0  business: Thanks for calling Joe's Hardware. For the store, press 1."
    assert turns[-1].startswith("   288.0- 293.0     agent: Thank you so much")


def test_turn_times_from_the_journal_follow_an_agent_turn_split_where_it_left_the_line(tmp_path):
    from calld.observe.artifacts import WORD_MS, RunArtifacts, turn_times

    def delta(t, kind, text):
        return {"t_ms": t, "event": {"kind": f"live.{kind}_transcript", "text": text}}

    turns = [{"speaker": "business", "text": "Hi."}, {"speaker": "agent", "text": "Hello there."},
             {"speaker": "agent", "text": "What are your hours?", "on_line": False}]
    rows = (delta(100, "input", "Hi."), delta(200, "output", "Hello "), delta(300, "output", "there."),
            delta(400, "output", "What are your hours?"))
    run = RunArtifacts(tmp_path, {}, {}, {"turns": turns}, rows, None)
    assert turn_times(run) == [(100, 100 + WORD_MS), (200, 300 + WORD_MS), (400, 400 + WORD_MS)]
    spelled_otherwise = RunArtifacts(tmp_path, {}, {}, {"turns": turns[:2]}, rows, None)
    assert turn_times(spelled_otherwise) is None  # a delta no turn accounts for: the times are not these


def test_typed_answers_read_as_a_line():
    from calld.observe.summary import typed_answer

    hours = {"kind": "hours", "ranges": [{"days": ["monday", "tuesday", "wednesday", "thursday", "friday"], "opens": "09:00",
                                          "closes": "17:00", "closed": False, "date": None},
                                         {"days": ["tuesday", "saturday"], "opens": "10:00", "closes": "14:00"},
                                         {"days": ["sunday"], "closed": True, "date": "2026-12-06"}]}
    assert typed_answer(hours) == ("hours: monday-friday 09:00-17:00; tuesday, saturday 10:00-14:00; "
                                   "sunday closed (2026-12-06)")
    assert typed_answer({"kind": "hours", "ranges": [{"days": ["saturday", "sunday"], "around_the_clock": True}]}) == (
        "hours: saturday, sunday open around the clock")
    assert typed_answer({"kind": "aisle", "location": "aisle 14"}) == "location: aisle 14"
    assert typed_answer({"kind": "text"}) == '{"kind": "text"}'


def test_show_says_where_a_call_was_published_and_that_its_files_went():
    from calld.observe.summary import show_text

    detail = {"dir": None, "pruned": True, "result": {"status": "answered", "run_id": "run_1", "answer_text": "9 to 5"},
              "report": None, "transcript": None, "files": {}, "request": None,
              "publication": {"status": "published", "local": "deleted", "attempts": 1,
                              "prefix": "s3://calls/calld/alice/2026-11-30/v3_x/"}}
    lines = show_text(detail).splitlines()
    assert "  published   s3://calls/calld/alice/2026-11-30/v3_x/ (published; local copy: deleted)" in lines
    assert "  artifacts   deleted here after publishing (calld-ctl fetch ID DIR brings them back)" in lines


async def test_doctor_checks_the_bucket_when_publishing_is_on(tmp_path):
    from tests.s3server import S3Server

    private_state(tmp_path)
    server = S3Server()
    try:
        bucket = server.new_bucket()
        base = {"calld_state_dir": tmp_path / "state", "calld_socket": tmp_path / "ctl.sock"}
        good = load_settings(**base, **server.settings(bucket, artifacts_retention="publish"))
        found = {f.name: f for f in await run_doctor(good)}
        assert found["bucket"].ok and bucket in found["bucket"].detail
        missing = load_settings(**base, **server.settings("calld-no-such-bucket", artifacts_retention="publish"))
        found = {f.name: f for f in await run_doctor(missing)}
        assert not found["bucket"].ok and found["bucket"].detail.startswith("write:")
        kept = load_settings(**base, **server.settings(bucket, artifacts_retention="keep"))
        assert "bucket" not in {f.name for f in await run_doctor(kept)}
    finally:
        server.stop()


def test_a_fast_demo_waits_for_its_picture_without_polling(monkeypatch, capsys):
    """`--fast` runs on a clock that jumps at once; waiting for the drawing process it must sleep
    instead, or it takes the core that process (idle class) needs."""
    from calld.daemon.service import Daemon

    seen: list[float] = []
    shutdown = Daemon.shutdown

    async def watched(self, drain_s=None):
        seen.append(trio.lowlevel.current_clock().autojump_threshold)
        await shutdown(self, drain_s)

    monkeypatch.setattr(Daemon, "shutdown", watched)
    assert daemon_main(["demo", "--fast"]) == 0
    assert daemon_main(["demo", "--fast", "--text", "what are your hours?"]) in (0, 1)
    assert seen == [0.01, 0.01]


def test_show_and_history_say_the_table_the_business_confirmed_not_only_the_one_asked_for():
    from calld.observe.history import short_answer
    from calld.observe.summary import show_text

    result = {"status": "booked", "run_id": "run_1", "confirmation_text": "You're all booked, we'll see you then.",
              "confirmed_party": 2, "confirmed_time": "Friday 7:30pm", "minutes_from_requested": 30,
              "confirmed_constraints": "a table inside"}
    lines = show_text({"result": result, "report": {"booking": {"party": 2, "time": "Friday 7pm"}}}).splitlines()
    assert "  booked      table for 2 at Friday 7:30pm (30 minutes later than asked); a table inside" in lines
    assert "  they said   You're all booked, we'll see you then." in lines
    assert short_answer(result, limit=200).startswith("table for 2 at Friday 7:30pm (30 minutes later than asked)")
    assert "earlier than asked" in short_answer({**result, "minutes_from_requested": -15})
    assert "than asked" not in short_answer({**result, "minutes_from_requested": 0})


def test_a_call_without_an_answer_says_why_in_words_not_in_carrier_codes():
    from calld.observe.history import short_answer
    from calld.observe.summary import show_text

    busy = {"status": "no_answer", "reason": "busy", "detail": "Telnyx: user_busy, SIP 486", "hangup_cause": "user_busy",
            "sip_cause": "486", "run_id": "run_1"}
    assert short_answer(busy) == "the line was busy"
    lines = show_text({"result": busy}).splitlines()
    assert "  why         the line was busy" in lines and "  carrier     user_busy (SIP 486)" in lines
    early = {"status": "no_answer", "reason": "hung_up_early", "hangup_cause": "normal_clearing", "run_id": "run_1",
             "detail": "the business picked up, then hung up before the question was asked"}
    assert short_answer(early, limit=200) == early["detail"]
    lines = show_text({"result": early}).splitlines()
    assert f"  why         {early['detail']}" in lines
    assert not any("normal_clearing" in line for line in lines)  # an answered call's ending is no carrier's verdict
    opt_out = {"status": "declined", "reason": "opt_out", "detail": "Please stop calling us.", "run_id": "run_1"}
    assert "  why         Please stop calling us." in show_text({"result": opt_out}).splitlines()


def test_hours_the_app_could_not_read_are_said_so_not_shown_as_json():
    from calld.observe.summary import typed_answer

    line = typed_answer({"kind": "hours", "ranges": []})
    assert "{" not in line and "none the app could read" in line


def test_show_tells_an_answer_the_business_gave_before_asking_not_to_be_called_again():
    from calld.observe.summary import show_text

    result = {"status": "answered", "run_id": "run_1", "answer_text": "9 to 5",
              "opt_out": "And please don't call this number again."}
    lines = show_text({"result": result, "report": None}).splitlines()
    assert any(line.split()[:1] == ["opt-out"] and "don't call this number again" in line for line in lines), lines
    declined = {"status": "declined", "reason": "opt_out", "run_id": "run_1", "opt_out": "Take us off your list."}
    assert not any(line.startswith("  opt-out") for line in show_text({"result": declined, "report": None}).splitlines())


def test_ledger_choice_follows_the_daemon_and_never_needs_a_password_it_was_not_given(tmp_path):
    """The daemon names its PostgreSQL ledger with the password masked: calld-ctl uses its own CALLD_LEDGER_URL
    when that is the same ledger, the daemon's URL as shown when it has no password (the README's
    postgresql:///calld), and says what to set otherwise; a daemon on SQLite is checked there whatever the shell says."""
    from calld.cli.where import choose_ledger
    from calld.settings import load_client_settings

    sock = tmp_path / "ctl.sock"
    bare = load_client_settings(_env_file=None, calld_state_dir=tmp_path / "here")
    mine = load_client_settings(_env_file=None, calld_state_dir=tmp_path / "here", calld_ledger_url="postgresql://calld:pw@db/calld")
    on_pg = {"state_dir": str(tmp_path / "d1"), "pid": 7, "ledger_engine": "postgresql"}
    assert choose_ledger(bare, sock, None, {**on_pg, "ledger": "postgresql:///calld"}).target == "postgresql:///calld"
    masked = {**on_pg, "ledger": "postgresql://calld:***@db/calld"}
    assert choose_ledger(mine, sock, None, masked).target == "postgresql://calld:pw@db/calld"
    missing = choose_ledger(bare, sock, None, masked)
    assert missing.target is None and "set CALLD_LEDGER_URL here to the daemon's" in missing.missing_password()
    on_sqlite = {"state_dir": str(tmp_path / "d1"), "pid": 7, "ledger_engine": "sqlite", "ledger": str(tmp_path / "d1" / "calld.sqlite3")}
    chosen = choose_ledger(mine, sock, None, on_sqlite)
    assert chosen.target == tmp_path / "d1" / "calld.sqlite3" and "which that daemon does not use" in chosen.why
    assert choose_ledger(mine, sock, None, None).target == "postgresql://calld:pw@db/calld"  # no daemon: the shell's


def test_history_says_a_line_that_may_still_be_up():
    from calld.domain.ids import RunId, UserId
    from calld.ledger.rows import RequestRow
    from calld.observe.history import history_row
    from calld.observe.summary import history_table_rows

    def row(result: dict) -> dict:
        ledger_row = RequestRow("req_1", RunId("run_0123456789abcdef0123"), UserId("alex"), "ask", {"to": "+15555550123"}, "done", None,
                                {"status": "answered", "run_id": "run_1"} | result, "2026-12-05T10:00:00", "2026-12-05T10:01:00")
        return history_row(ledger_row, Path("/nonexistent"))

    up = row({"line_may_be_up": "Telnyx did not take the hangup of v3:call-1 (status: alive)"})
    assert up["line_may_be_up"] and history_table_rows([up])[0]["status"] == "answered LINE MAY BE UP"
    assert history_table_rows([row({})])[0]["status"] == "answered"
