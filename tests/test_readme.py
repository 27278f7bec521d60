"""The README as a newcomer meets it.

The walkthrough section (between `<!-- walkthrough -->` and `<!-- /walkthrough -->`) is run as
written, one command at a time, through a shell: `uv run calld serve` in the background, every
other `$ ` line to its end, each against that stub daemon in a temporary state directory (the
daemon and calld-ctl find each other through CALLD_STATE_DIR and CALLD_SOCKET; the working
directory is the temporary one, so no `.env` is read and nothing is written under ~). Each command
must exit 0 (or the code its `# exit N` comment documents) and print every line the README shows
under it; in a shown line, `...` stands for anything, and times, dates and durations may differ.

Every other `uv run calld ...` / `uv run calld-ctl ...` command in the README must at least parse:
its subcommand and flags exist.

These run on the wall clock (a subprocess cannot share the autojump clock); the stub calls take
their real time, about a minute in all.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import signal
import socket
import subprocess
import time
from pathlib import Path

import pytest

from calld.cli import ctl, daemon
from calld.sim import cli as sim_cli

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text(encoding="utf-8")
START, END = "<!-- walkthrough -->", "<!-- /walkthrough -->"
FENCE = re.compile(r"^```[^\n]*\n(.*?)^```", re.S | re.M)


def walkthrough(text: str) -> list[tuple[str, list[str]]]:
    """The walkthrough's commands in order, each with the output lines the README shows under it."""
    assert text.count(START) == 1 and text.count(END) == 1, "the README marks its walkthrough once"
    section = text.split(START, 1)[1].split(END, 1)[0]
    steps: list[tuple[str, list[str]]] = []
    for block in FENCE.findall(section):
        for line in block.splitlines():
            if line.startswith("$ "):
                steps.append((line[2:].strip(), []))
            elif line.strip():
                assert steps, f"output before any command in the walkthrough: {line!r}"
                steps[-1][1].append(line)
    return steps


def documented_exit(command: str) -> int:
    """0, unless the command's comment says `# exit N`."""
    found = re.search(r"#.*\bexit (\d+)\b", command)
    return int(found.group(1)) if found else 0


# What may differ from run to run in a shown line: times into the call and durations (12.2s, 33.0 s,
# 9.6- 12.8), dates ("Thu 3 Dec" too) and clock times, and column padding.
VARYING = [(re.compile(r"\b(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun) \d{1,2} (?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)\b"), "DAY"),
           (re.compile(r"\d{4}-\d{2}-\d{2}"), "DATE"), (re.compile(r"\d{2}:\d{2}:\d{2}"), "TIME"),
           (re.compile(r"\d+\.\d+"), "N.N"), (re.compile(r"\s+"), " ")]


def normal(text: str) -> str:
    for pattern, placeholder in VARYING:
        text = pattern.sub(placeholder, text)
    return text.strip()


def shown(expected: str, printed: list[str]) -> bool:
    """A README line is printed when one printed line holds each of its `...`-separated parts, in order."""
    parts = [normal(p) for p in expected.split("...")]
    parts = [p for p in parts if p]
    if not parts:
        return True
    for line in map(normal, printed):
        at = 0
        for part in parts:
            at = line.find(part, at)
            if at < 0:
                break
            at += len(part)
        else:
            return True
    return False


def test_the_walkthrough_is_marked_and_walks_the_whole_path():
    steps = [command for command, _ in walkthrough(README)]
    assert steps[0].startswith("uv run calld serve")
    for sub in ("did provision", "ask", "book", "history", "show"):
        assert any(c.startswith(f"uv run calld-ctl {sub}") for c in steps), sub
    # One number takes at most two calls a day: the walkthrough's calls go to different numbers.
    numbers = [re.search(r"--to (\S+)", c).group(1) for c in steps if " --to " in c]
    assert len(numbers) == len(set(numbers)), numbers


def test_the_matcher_reads_the_readme_as_meant():
    assert shown('{"run_id": "run_...", ..., "status": "answered", ...}',
                 ['{"run_id": "run_865094be7d66b7387037", "x": 1, "status": "answered", "reason": null}'])
    assert not shown('{"status": "answered"}', ['{"status": "booked"}'])
    assert shown("2026-12-02 10:39:25  alice  booked    33.0 s", ["2026-12-03 08:01:02  alice  booked  31.4 s  "])
    assert not shown("alice  +15555550143", ["alice  +15555550142"])
    assert documented_exit("uv run calld-ctl ledger check   # exit 1 damaged") == 1
    assert documented_exit("uv run calld-ctl history") == 0


def readme_commands(text: str) -> list[list[str]]:
    """Every `uv run calld ...`, `calld-ctl ...` and `calld-sim ...` line in the README's fenced blocks, as argv."""
    out = []
    for block in FENCE.findall(text):
        for line in block.splitlines():
            line = line.removeprefix("$ ").strip()
            if re.match(r"uv run calld(-ctl|-sim)? ", line):
                # The command ends where the shell's would: at a pipe, && or ; (a config piped to tee).
                lexer = shlex.shlex(line, posix=True, punctuation_chars=True)
                lexer.whitespace_split = True
                words = list(lexer)
                ends = [i for i, w in enumerate(words) if w in ("|", "||", "&&", ";", "&", ">", "<")]
                out.append(words[2:ends[0] if ends else None])
    return out


def test_every_readme_command_names_real_subcommands_and_flags(capsys):
    parsers = {"calld": daemon.build_parser(), "calld-ctl": ctl.build_parser(), "calld-sim": sim_cli.build_parser()}
    commands = readme_commands(README)
    assert len(commands) > 20
    for argv in commands:
        try:
            parsers[argv[0]].parse_args(argv[1:])
        except SystemExit as exc:
            pytest.fail(f"the README's `{shlex.join(argv)}` does not parse: {capsys.readouterr().err.strip()} (exit {exc.code})")


def test_every_flag_and_argument_of_every_subcommand_says_in_its_help_what_it_is():
    import argparse

    def unexplained(parser: argparse.ArgumentParser, path: str) -> list[str]:
        found = []
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                for name, sub in action.choices.items():
                    found += unexplained(sub, f"{path} {name}")
            elif not isinstance(action, argparse._HelpAction | argparse._VersionAction) and not action.help:
                found.append(f"{path} {'/'.join(action.option_strings) or action.dest}")
        return found

    assert (unexplained(daemon.build_parser(), "calld") + unexplained(ctl.build_parser(), "calld-ctl")
            + unexplained(sim_cli.build_parser(), "calld-sim")) == []


def wait_for_socket(path: Path, proc: subprocess.Popen, bound_s: float) -> None:
    """Until the daemon accepts on its control socket, at most `bound_s` seconds."""
    deadline = time.monotonic() + bound_s
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            pytest.fail(f"`calld serve` exited {proc.returncode} before it listened")
        with socket.socket(socket.AF_UNIX) as probe:
            try:
                probe.connect(str(path))
                return
            except OSError:
                pass
        time.sleep(0.1)  # wall-clock ok: polling a subprocess, within the bound above
    pytest.fail(f"no calld answered on {path} within {bound_s} s")


def stop(proc: subprocess.Popen) -> None:
    """SIGTERM to uv, which passes it on to the daemon; SIGKILL to the process group they share if it hangs."""
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=10)


def test_the_walkthrough_runs_as_written(tmp_path):
    uv = os.environ.get("UV") or shutil.which("uv")
    if not uv:
        pytest.skip("uv is not on PATH: the README's commands start with `uv run`")
    env = {**os.environ,
           "PATH": f"{Path(uv).parent}{os.pathsep}{os.environ.get('PATH', '')}",
           "UV_PROJECT": str(ROOT), "UV_FROZEN": "1",
           "CALLD_STATE_DIR": str(tmp_path / "state"), "CALLD_SOCKET": str(tmp_path / "ctl.sock"),
           "CALLD_BIND": "127.0.0.1:0", "CALLD_MEDIA_BIND": "127.0.0.1:0"}
    env.pop("VIRTUAL_ENV", None)  # uv finds the project's environment through UV_PROJECT
    steps = walkthrough(README)
    serve, rest = steps[0], steps[1:]
    log = (tmp_path / "serve.log").open("w")
    proc = subprocess.Popen(shlex.split(serve[0], comments=True), cwd=tmp_path, env=env, stdout=log, stderr=subprocess.STDOUT,
                            start_new_session=True)
    try:
        wait_for_socket(tmp_path / "ctl.sock", proc, bound_s=120)
        for command, expected in rest:
            done = subprocess.run(command, shell=True, cwd=tmp_path, env=env, capture_output=True, text=True,
                                  timeout=180)
            printed = (done.stdout + done.stderr).splitlines()
            assert done.returncode == documented_exit(command), f"`{command}` exited {done.returncode}:\n{done.stderr}"
            missing = [line for line in expected if not shown(line, printed)]
            assert not missing, f"`{command}` did not print what the README shows: {missing}\nit printed:\n" + "\n".join(printed)
        assert list((tmp_path / "state" / "artifacts").glob("*/result.json")), "the calls left their artifacts in the temporary state dir"
    finally:
        stop(proc)
        log.close()
    assert proc.returncode == 0, (tmp_path / "serve.log").read_text()


def test_the_readme_stays_a_newcomer_s_page_under_300_lines():
    """Figures and reference go to docs/ (docs/operations.md, docs/performance.md); the README stays short."""
    assert len(README.splitlines()) < 300, f"README.md has {len(README.splitlines())} lines: move reference to docs/"
