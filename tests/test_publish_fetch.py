"""calld-ctl fetch writes only into a fresh folder it owns: private modes whatever the umask, and
never through a symlink (a planted `result.json` or `audio/` pointing elsewhere). The store is an
httpx MockTransport: no network."""

from __future__ import annotations

import hashlib
import io
import os
import stat
from pathlib import Path
from typing import Any

import httpx
import pytest

from calld.cli.ctl import EXIT_FAILED, EXIT_OK, EXIT_USAGE, run_fetch

FILES = {
    "result.json": b'{"status": "answered"}',
    "dial.json": b'{"to": "+15555550142"}',
    "transcript.json": b'{"turns": []}',
    "audio/inbound.wav": b"RIFF-in",
    "audio/outbound.wav": b"RIFF-out",
}


def objects() -> list[dict[str, Any]]:
    return [{"name": n, "key": f"calld/u/r/{n}", "url": f"http://store.invalid/{n}", "sha256": hashlib.sha256(b).hexdigest()}
            for n, b in FILES.items()]


class Daemon:
    def __init__(self, only: list[str] | None = None) -> None:
        self.only = only

    async def published_objects(self, ident: str) -> list[dict[str, Any]]:
        return [o for o in objects() if self.only is None or o["name"] in self.only]


def store(before_answer=None) -> httpx.AsyncClient:
    def handler(request: httpx.Request) -> httpx.Response:
        if before_answer is not None:
            before_answer(request.url.path.lstrip("/"))
        return httpx.Response(200, content=FILES[request.url.path.lstrip("/")])
    return httpx.AsyncClient(transport=httpx.MockTransport(handler))


@pytest.fixture
def umask_022():
    old = os.umask(0o022)
    yield
    os.umask(old)


@pytest.fixture
def fetch(capsys):
    async def go(dest: Path, http: httpx.AsyncClient, daemon: Daemon | None = None) -> tuple[int, str]:
        async with http:
            code = await run_fetch(daemon or Daemon(), "r-1", dest, out=io.StringIO(), http=http)
        return code, capsys.readouterr().err
    return go


def mode(p: Path) -> int:
    return stat.S_IMODE(p.lstat().st_mode)


async def test_fetch_creates_a_private_folder_whatever_the_umask(tmp_path, umask_022, fetch):
    dest = tmp_path / "back"
    code, _ = await fetch(dest, store())
    assert code == EXIT_OK
    assert mode(dest) == 0o700 and mode(dest / "audio") == 0o700
    for name, body in FILES.items():
        assert (dest / name).read_bytes() == body
        assert mode(dest / name) == 0o600, name


async def test_an_empty_existing_folder_is_used_and_made_private(tmp_path, umask_022, fetch):
    dest = tmp_path / "back"
    dest.mkdir(mode=0o755)
    assert (await fetch(dest, store()))[0] == EXIT_OK
    assert mode(dest) == 0o700 and mode(dest / "result.json") == 0o600


async def test_a_symlinked_result_json_is_refused_and_its_target_untouched(tmp_path, fetch):
    victim = tmp_path / "victim.txt"
    victim.write_text("keep me")
    dest = tmp_path / "back"
    dest.mkdir()
    (dest / "result.json").symlink_to(victim)
    code, err = await fetch(dest, store())
    assert code == EXIT_USAGE and "already holds files" in err
    assert victim.read_text() == "keep me"
    assert sorted(p.name for p in dest.iterdir()) == ["result.json"]


async def test_a_symlinked_audio_folder_receives_nothing(tmp_path, fetch):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    dest = tmp_path / "back"
    dest.mkdir()
    (dest / "audio").symlink_to(elsewhere, target_is_directory=True)
    code, err = await fetch(dest, store())
    assert code == EXIT_USAGE and "already holds files" in err
    assert list(elsewhere.iterdir()) == []


async def test_a_symlink_as_the_target_folder_is_refused(tmp_path, fetch):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    dest = tmp_path / "back"
    dest.symlink_to(elsewhere, target_is_directory=True)
    code, err = await fetch(dest, store())
    assert code == EXIT_USAGE and "symlink" in err
    assert list(elsewhere.iterdir()) == []


async def test_symlinks_planted_while_fetching_are_never_followed(tmp_path, fetch):
    """A folder that was empty when fetch began, then a symlink appears in it (a race):
    the file and the folder it points at stay untouched, and fetch fails saying why."""
    victim = tmp_path / "victim.txt"
    victim.write_text("keep me")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    dest = tmp_path / "back"

    def plant(name: str) -> None:
        if name == "result.json":
            (dest / "dial.json").symlink_to(victim)
        if name == "transcript.json":
            (dest / "audio").symlink_to(elsewhere, target_is_directory=True)

    code, err = await fetch(dest, store(plant))
    assert code == EXIT_FAILED and "dial.json" in err and "nothing was replaced" in err
    assert victim.read_text() == "keep me"

    # a folder planted where fetch is about to make audio/: nothing lands where it points
    dest2 = tmp_path / "back2"

    def plant_audio(name: str) -> None:
        if name == "transcript.json":
            (dest2 / "audio").symlink_to(elsewhere, target_is_directory=True)

    code, err = await fetch(dest2, store(plant_audio), Daemon(only=["transcript.json", "audio/inbound.wav"]))
    assert code == EXIT_FAILED and "inbound.wav" in err and "never follows a symlink" in err
    assert list(elsewhere.iterdir()) == []
