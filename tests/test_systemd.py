"""calld.daemon.systemd against fake systemd ends: real datagram sockets, real fds, real files.

The unit files are checked twice: by our own reading of the settings the daemon depends on, and
by `systemd-analyze verify` when it is installed.
"""

from __future__ import annotations

import logging
import os
import re
import shutil
import socket
import subprocess
import sys
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO

import pytest
import trio
import trio.testing

from calld.daemon.systemd import (
    Notifier,
    configure_logging,
    listen_fds,
    load_credentials,
    stderr_is_journal,
    watchdog_task,
)

UNITS = Path(__file__).resolve().parent.parent / "systemd"


# --- sd_notify -------------------------------------------------------------------------------------


@contextmanager
def fake_notify_socket(address: str) -> Iterator[trio.socket.SocketType]:
    """systemd's end: a datagram socket bound where NOTIFY_SOCKET points."""
    raw = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    raw.bind(address)
    with trio.socket.from_stdlib_socket(raw) as sock:
        yield sock


@pytest.mark.parametrize("form", ["path", "abstract"])
async def test_notify_sends_one_datagram_with_newline_separated_fields(tmp_path: Path, form: str) -> None:
    if form == "path":
        env_value = bind_to = str(tmp_path / "notify")
    else:
        name = f"calld-test-{uuid.uuid4().hex}"
        env_value, bind_to = "@" + name, "\0" + name
    with fake_notify_socket(bind_to) as systemd, Notifier({"NOTIFY_SOCKET": env_value}) as notifier:
        assert notifier.enabled
        notifier.notify("READY=1", "STATUS=x")
        with trio.fail_after(5):
            assert await systemd.recv(4096) == b"READY=1\nSTATUS=x"
        notifier.notify("STOPPING=1")
        with trio.fail_after(5):
            assert await systemd.recv(4096) == b"STOPPING=1"


def test_notify_without_notify_socket_is_a_no_op() -> None:
    notifier = Notifier({})
    assert not notifier.enabled
    notifier.notify("READY=1")
    assert notifier._sock is None
    notifier.close()


def test_notify_failure_is_logged_not_raised(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    notifier = Notifier({"NOTIFY_SOCKET": str(tmp_path / "nobody-listens")})
    with notifier, caplog.at_level(logging.WARNING, logger="calld.daemon.systemd"):
        notifier.notify("READY=1")
    assert any("sd_notify READY=1 failed" in r.getMessage() for r in caplog.records)


def test_notify_uses_the_default_environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("NOTIFY_SOCKET", str(tmp_path / "n"))
    monkeypatch.setenv("WATCHDOG_USEC", "4000000")
    monkeypatch.delenv("WATCHDOG_PID", raising=False)
    with Notifier() as notifier:
        assert notifier.enabled
        assert notifier.watchdog_interval_s == 2.0


# --- watchdog --------------------------------------------------------------------------------------


@pytest.mark.parametrize("names_our_pid", [False, True])
async def test_watchdog_pings_at_half_of_watchdog_usec(
    tmp_path: Path, autojump_clock: trio.testing.MockClock, names_our_pid: bool
) -> None:
    path = str(tmp_path / "notify")
    env = {"NOTIFY_SOCKET": path, "WATCHDOG_USEC": "2000000"}
    if names_our_pid:
        env["WATCHDOG_PID"] = str(os.getpid())
    pings: list[float] = []
    with fake_notify_socket(path) as systemd, Notifier(env) as notifier:
        assert notifier.watchdog_interval_s == 1.0

        async def receive() -> None:
            while True:
                assert await systemd.recv(4096) == b"WATCHDOG=1"
                pings.append(trio.current_time())

        start = trio.current_time()
        with trio.move_on_after(10.5):
            async with trio.open_nursery() as nursery:
                nursery.start_soon(receive)
                await nursery.start(watchdog_task, notifier)
    # One ping at once, then one per virtual second: 0, 1, ..., 10.
    assert [round(t - start, 6) for t in pings] == [float(i) for i in range(11)]


async def test_watchdog_for_another_pid_is_disabled(tmp_path: Path, autojump_clock: trio.testing.MockClock) -> None:
    path = str(tmp_path / "notify")
    env = {"NOTIFY_SOCKET": path, "WATCHDOG_USEC": "2000000", "WATCHDOG_PID": str(os.getpid() + 1)}
    with fake_notify_socket(path) as systemd, Notifier(env) as notifier:
        assert notifier.watchdog_interval_s is None
        start = trio.current_time()
        await watchdog_task(notifier)
        assert trio.current_time() == start
        with trio.move_on_after(60):
            await systemd.recv(4096)
            pytest.fail("a disabled watchdog sent a ping")


@pytest.mark.parametrize("usec", [None, "", "0", "-5", "soon"])
def test_watchdog_needs_a_positive_watchdog_usec(usec: str | None) -> None:
    env = {"NOTIFY_SOCKET": "@x"} | ({} if usec is None else {"WATCHDOG_USEC": usec})
    assert Notifier(env).watchdog_interval_s is None


# --- socket activation -----------------------------------------------------------------------------


@contextmanager
def sockets_at_fd3(*socks: socket.socket) -> Iterator[None]:
    """Place `socks` at fds 3, 4, ... as systemd would, restoring whatever pytest had there."""
    saved: list[tuple[int, int | None, bool]] = []
    try:
        for i, sock in enumerate(socks):
            fd = 3 + i
            try:
                saved.append((fd, os.dup(fd), os.get_inheritable(fd)))
            except OSError:
                saved.append((fd, None, False))
            os.dup2(sock.fileno(), fd)
        yield
    finally:
        for fd, copy, inheritable in saved:
            if copy is None:
                try:
                    os.close(fd)
                except OSError:
                    pass
            else:
                os.dup2(copy, fd, inheritable=inheritable)
                os.close(copy)


def test_listen_fds_ignores_variables_meant_for_another_process() -> None:
    env = {"LISTEN_PID": str(os.getpid() + 1), "LISTEN_FDS": "1", "LISTEN_FDNAMES": "control"}
    a, b = socket.socketpair()
    with a, b, sockets_at_fd3(a):
        kept = dict(env)
        got = listen_fds(kept, unset=False)
        names = list(got)
        for sock in got.values():
            sock.detach()  # only reached if the pid check is broken; fd 3 is restored by sockets_at_fd3
        assert names == []
        assert kept == env
        assert listen_fds(kept) == {}
        assert kept == {}
    assert listen_fds({}) == {}


@pytest.mark.parametrize(
    ("names", "expected"), [("control", ["control"]), (None, ["fd3"]), ("control:", ["control", "fd4"])]
)
def test_listen_fds_maps_names_to_passed_sockets(names: str | None, expected: list[str]) -> None:
    pairs = [socket.socketpair() for _ in expected]
    env = {"LISTEN_PID": str(os.getpid()), "LISTEN_FDS": str(len(expected))}
    if names is not None:
        env["LISTEN_FDNAMES"] = names
    try:
        with sockets_at_fd3(*(ours for ours, _ in pairs)):
            got = listen_fds(env)
            try:
                assert env == {}
                assert list(got) == expected
                for i, name in enumerate(expected):
                    sock = got[name]
                    assert sock.fileno() == 3 + i
                    assert (sock.family, sock.type) == (socket.AF_UNIX, socket.SOCK_STREAM)
                    assert not os.get_inheritable(sock.fileno())
                    # It really is the socket we passed: its peer hears it.
                    sock.sendall(name.encode())
                    assert pairs[i][1].recv(64) == name.encode()
            finally:
                for sock in got.values():
                    sock.detach()  # the fd is restored by sockets_at_fd3, not closed here
    finally:
        for a, b in pairs:
            a.close()
            b.close()


# --- journald logging ------------------------------------------------------------------------------


@pytest.fixture
def stderr_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[IO[str]]:
    """A real file standing in for stderr. Swap it in inside the test body: pytest's capture
    puts its own sys.stderr back between the setup and call phases."""
    root = logging.getLogger()
    handlers, level = root.handlers[:], root.level
    with open(tmp_path / "stderr", "w+", encoding="utf-8") as f:
        yield f
        for h in root.handlers[:]:
            if h not in handlers:
                root.removeHandler(h)
        root.setLevel(level)


def journal_env(f: IO[str]) -> dict[str, str]:
    st = os.fstat(f.fileno())
    return {"JOURNAL_STREAM": f"{st.st_dev}:{st.st_ino}"}


def test_stderr_is_journal_compares_device_and_inode(
    stderr_file: IO[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sys, "stderr", stderr_file)
    assert stderr_is_journal(journal_env(stderr_file))
    other = tmp_path / "other"
    other.touch()
    st = other.stat()
    assert not stderr_is_journal({"JOURNAL_STREAM": f"{st.st_dev}:{st.st_ino}"})
    assert not stderr_is_journal({})
    assert not stderr_is_journal({"JOURNAL_STREAM": "garbage"})


def test_stderr_is_journal_reads_os_environ(stderr_file: IO[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "stderr", stderr_file)
    monkeypatch.setenv("JOURNAL_STREAM", journal_env(stderr_file)["JOURNAL_STREAM"])
    assert stderr_is_journal()


def emit_sample_records() -> None:
    log = logging.getLogger("calld.test")
    log.info("ready on %s", "127.0.0.1:8787")
    log.debug("not shown at INFO")
    try:
        raise RuntimeError("boom")
    except RuntimeError:
        log.exception("call failed\nsecond line")


def test_journal_lines_carry_the_syslog_priority(stderr_file: IO[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "stderr", stderr_file)
    configure_logging(environ=journal_env(stderr_file))
    configure_logging(environ=journal_env(stderr_file))  # again: must not duplicate lines
    emit_sample_records()
    logging.getLogger("calld.test").warning("careful")
    lines = Path(stderr_file.name).read_text().splitlines()
    assert lines[0] == "<6>calld.test: ready on 127.0.0.1:8787"
    assert lines[1] == "<3>calld.test: call failed"
    assert lines[2] == "<3>second line"
    assert lines[3] == "<3>Traceback (most recent call last):"
    assert lines[-2] == "<3>RuntimeError: boom"
    assert lines[-1] == "<4>calld.test: careful"
    assert all(re.match(r"<3>", line) for line in lines[1:-1])
    assert sum("ready on" in line for line in lines) == 1


def test_plain_lines_have_a_timestamp_and_level(stderr_file: IO[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "stderr", stderr_file)
    configure_logging(environ={})
    emit_sample_records()
    lines = Path(stderr_file.name).read_text().splitlines()
    assert re.fullmatch(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3} INFO calld\.test: ready on 127\.0\.0\.1:8787", lines[0])
    assert re.fullmatch(r"\S+ \S+ ERROR calld\.test: call failed", lines[1])
    assert lines[-1] == "RuntimeError: boom"
    assert not any(line.startswith("<") for line in lines)


def test_configure_logging_level_and_replacement(stderr_file: IO[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "stderr", stderr_file)
    root = logging.getLogger()
    before = len(root.handlers)
    configure_logging(logging.DEBUG, environ={})
    configure_logging(logging.DEBUG, environ={})
    assert len(root.handlers) == before + 1
    logging.getLogger("calld.test").debug("visible")
    assert "DEBUG calld.test: visible" in Path(stderr_file.name).read_text()


def test_libraries_connection_lines_stay_out_of_the_journal(stderr_file: IO[str], monkeypatch: pytest.MonkeyPatch) -> None:
    # websockets says "connection open" for every media socket and httpx a line per request, with
    # no call id: an operator tailing the journal reads calld's own line for each instead.
    monkeypatch.setattr(sys, "stderr", stderr_file)
    configure_logging(environ={})
    logging.getLogger("websockets.server").info("connection open")
    logging.getLogger("httpx").info("HTTP Request: POST https://api.telnyx.com/v2/calls")
    logging.getLogger("websockets.client").warning("a library's warning still shows")
    logging.getLogger("calld.media").info("run_1 media socket closed after 15.0 s")
    text = Path(stderr_file.name).read_text()
    assert "connection open" not in text and "HTTP Request" not in text
    assert "a library's warning still shows" in text and "media socket closed" in text
    configure_logging(logging.DEBUG, environ={})  # -v: the libraries' lines too
    logging.getLogger("websockets.server").debug("< GET /telnyx/media/token HTTP/1.1")
    assert "< GET /telnyx/media/token" in Path(stderr_file.name).read_text()
    configure_logging(environ={})


# --- credentials -----------------------------------------------------------------------------------


def test_load_credentials_reads_stripped_files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "telnyx_api_key").write_text("  KEY_telnyx \n")
    assert load_credentials({"CREDENTIALS_DIRECTORY": str(tmp_path)}) == {"TELNYX_API_KEY": "KEY_telnyx"}
    (tmp_path / "openai_api_key").write_text("sk-test\n")
    monkeypatch.setenv("CREDENTIALS_DIRECTORY", str(tmp_path))
    assert load_credentials() == {"TELNYX_API_KEY": "KEY_telnyx", "OPENAI_API_KEY": "sk-test"}
    (tmp_path / "openai_api_key").write_text("\n")
    assert load_credentials() == {"TELNYX_API_KEY": "KEY_telnyx"}
    assert load_credentials({}) == {}


# --- unit files ------------------------------------------------------------------------------------


def read_unit(path: Path) -> dict[str, dict[str, list[str]]]:
    """Sections -> key -> every value (keys such as LoadCredential= repeat)."""
    sections: dict[str, dict[str, list[str]]] = {}
    current: dict[str, list[str]] | None = None
    for line in path.read_text().splitlines():
        if not line.strip() or line.lstrip().startswith(("#", ";")):
            continue
        # systemd has no trailing comments: a '#' after a value becomes part of the value.
        assert "#" not in line, f"{path.name}: inline comment in {line!r}"
        if line.startswith("["):
            current = sections.setdefault(line.strip("[]"), {})
            continue
        assert current is not None, f"{path.name}: {line!r} before any section"
        key, _, value = line.partition("=")
        current.setdefault(key.strip(), []).append(value.strip())
    return sections


def test_service_unit_settings_the_daemon_relies_on() -> None:
    unit = read_unit(UNITS / "calld.service")
    service = {k: v[-1] for k, v in unit["Service"].items()}
    assert service["Type"] == "notify"
    assert service["NotifyAccess"] == "main"
    assert service["ExecStart"].split()[:2] == ["/opt/calld/.venv/bin/calld", "serve"]
    assert service["WatchdogSec"] == "30"
    assert (service["KillSignal"], service["KillMode"]) == ("SIGTERM", "mixed")
    # 30 s drain plus hypercorn's 3 s graceful timeout, with room to spare.
    assert int(service["TimeoutStopSec"]) >= 60
    assert service["DynamicUser"] == "yes"
    assert service["StateDirectory"] == "calld"
    assert service["RuntimeDirectory"] == "calld"
    assert service["UMask"] == "0077"
    assert service["Environment"] == "CALLD_STATE_DIR=%S/calld"
    assert service["EnvironmentFile"] == "-/etc/calld/calld.env"
    ids = sorted(v.split(":")[0] for v in unit["Service"]["LoadCredential"])
    assert ids == ["openai_api_key", "telnyx_api_key"]
    assert "calld.socket" in unit["Unit"]["Requires"][0].split()
    assert "calld.socket" in unit["Unit"]["After"][0].split()


def test_socket_unit_lives_outside_the_runtime_directory_and_uses_the_sysusers_group() -> None:
    sock = {k: v[-1] for k, v in read_unit(UNITS / "calld.socket")["Socket"].items()}
    # RuntimeDirectory=calld is removed (with anything in it) whenever calld.service stops.
    assert not sock["ListenStream"].startswith("/run/calld/")
    assert sock["ListenStream"] == "/run/calld-ctl.sock"
    assert sock["FileDescriptorName"] == "control"
    assert sock["SocketMode"] == "0660"
    assert sock["RemoveOnStop"] == "yes"
    groups = [
        line.split()[1]
        for line in (UNITS / "calld.sysusers.conf").read_text().splitlines()
        if line.strip() and not line.startswith("#")
    ]
    assert groups == [sock["SocketGroup"]]


def test_systemd_analyze_verify_is_clean(tmp_path: Path) -> None:
    analyze = shutil.which("systemd-analyze")
    if analyze is None:
        pytest.skip("systemd-analyze is not installed (apt-get install systemd); unit files not verified")
    # The real ExecStart binary only exists on an installed host; verify would flag just that.
    service = (UNITS / "calld.service").read_text()
    service, n = re.subn(r"(?m)^ExecStart=\S+", "ExecStart=/bin/true", service)
    assert n == 1
    (tmp_path / "calld.service").write_text(service)
    shutil.copy(UNITS / "calld.socket", tmp_path / "calld.socket")
    proc = subprocess.run(
        [analyze, "verify", "--man=no", str(tmp_path / "calld.socket"), str(tmp_path / "calld.service")],
        check=False,
        capture_output=True,
        text=True,
        timeout=60,
        cwd=tmp_path,
    )
    # verify exits 0 even when it ignores an unparsable line, so its output must be empty too.
    assert (proc.returncode, proc.stdout + proc.stderr) == (0, "")


def test_the_template_unit_gives_each_daemon_its_instance_core_state_socket_and_ports() -> None:
    unit = read_unit(UNITS / "calld@.service")
    service = unit["Service"]
    env = dict(v.split("=", 1) for v in service["Environment"])
    assert env == {"CALLD_INSTANCE": "%i", "CALLD_STATE_DIR": "%S/calld-%i", "CALLD_SOCKET": "/run/calld-%i-ctl.sock"}
    assert service["CPUAffinity"] == ["%i"]
    assert service["StateDirectory"] == ["calld-%i"] and service["RuntimeDirectory"] == ["calld-%i"]
    assert service["EnvironmentFile"] == ["-/etc/calld/calld.env", "-/etc/calld/calld@%i.env"]  # the daemon's own last
    # Its control socket is its own calld@N.socket's (group calld-ctl), not the single daemon's.
    assert unit["Unit"]["Requires"] == ["calld@%i.socket"] and "calld@%i.socket" in unit["Unit"]["After"][0].split()
    sock = {k: v[-1] for k, v in read_unit(UNITS / "calld@.socket")["Socket"].items()}
    single_sock = {k: v[-1] for k, v in read_unit(UNITS / "calld.socket")["Socket"].items()}
    assert sock["ListenStream"] == env["CALLD_SOCKET"] and not sock["ListenStream"].startswith("/run/calld-%i/")
    assert {k: v for k, v in sock.items() if k != "ListenStream"} == {k: v for k, v in single_sock.items() if k != "ListenStream"}
    # Everything else (notify, watchdog, the drain's timeouts, the sandbox) is the single unit's.
    single = read_unit(UNITS / "calld.service")["Service"]
    per_instance = {"Environment", "CPUAffinity", "StateDirectory", "RuntimeDirectory", "EnvironmentFile", "SyslogIdentifier"}
    assert {k: v for k, v in service.items() if k not in per_instance} == {k: v for k, v in single.items() if k not in per_instance}
    # Daemon N's ports, derived from CALLD_INSTANCE alone, are the ones the proxy config names.
    from calld.ops.proxy import default_backends
    from calld.settings import load_settings

    for n, (http, media) in default_backends(3).items():
        s = load_settings(calld_instance=n, _env_file=None)
        assert (s.calld_bind, s.media_bind) == (http, media)


def test_systemd_analyze_verifies_a_template_instance(tmp_path: Path) -> None:
    analyze = shutil.which("systemd-analyze")
    if analyze is None:
        pytest.skip("systemd-analyze is not installed (apt-get install systemd); unit files not verified")
    service, n = re.subn(r"(?m)^ExecStart=\S+", "ExecStart=/bin/true", (UNITS / "calld@.service").read_text())
    assert n == 1
    (tmp_path / "calld@.service").write_text(service)
    shutil.copy(UNITS / "calld@.socket", tmp_path / "calld@.socket")
    proc = subprocess.run([analyze, "verify", "--man=no", str(tmp_path / "calld@2.socket"), str(tmp_path / "calld@2.service")], check=False,
                          capture_output=True, text=True, timeout=60, cwd=tmp_path)
    assert (proc.returncode, proc.stdout + proc.stderr) == (0, "")


def test_calld_ctl_finds_every_daemons_systemd_socket_in_the_order_of_n(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import socket as socketlib

    import calld.settings as settings_mod
    from calld.settings import load_client_settings

    monkeypatch.setattr(settings_mod, "SYSTEMD_RUN", tmp_path)
    monkeypatch.delenv("CALLD_SOCKET", raising=False)
    listening = []
    for n in (10, 2, 1):  # calld@N.socket's paths; sorted by N, not by name
        s = socketlib.socket(socketlib.AF_UNIX)
        s.bind(str(tmp_path / f"calld-{n}-ctl.sock"))
        listening.append(s)
    (tmp_path / "calld-x-ctl.sock").touch()  # not a daemon's
    try:
        assert load_client_settings(_env_file=None).calld_socket == tuple(tmp_path / f"calld-{n}-ctl.sock" for n in (1, 2, 10))
        (tmp_path / "calld-ctl.sock").touch()  # the single daemon's socket wins when it is there
        assert load_client_settings(_env_file=None).calld_socket == (tmp_path / "calld-ctl.sock",)
    finally:
        for s in listening:
            s.close()
