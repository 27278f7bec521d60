"""Every test runs isolated from the developer's `.env` and environment: a CALLD_* or key setting
in the shell (or a .env in the working directory) must not change what a test runs against."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from calld.settings import Settings
from tests.pg import ENGINES, pg_empty_url, pg_server, pg_url  # noqa: F401 - fixtures for every test module

_OURS = tuple(name.upper() for name in Settings.model_fields) + ("STATE_DIRECTORY", "RUNTIME_DIRECTORY")


@pytest.fixture(autouse=True)
def _isolated_settings(monkeypatch):
    for name in list(os.environ):
        if name.upper() in _OURS:
            monkeypatch.delenv(name)
    monkeypatch.setitem(Settings.model_config, "env_file", None)


@pytest.fixture(autouse=True, scope="session")
def _one_font_cache(tmp_path_factory):
    """The daemon's drawing process keeps matplotlib's font cache in its state dir; each test's
    daemon would build it again (seconds each). The tests share one, built once per session."""
    os.environ.setdefault("MPLCONFIGDIR", str(tmp_path_factory.mktemp("matplotlib")))


@pytest.fixture
def dials(monkeypatch):
    """Every dial that reached the (stub) Telnyx REST transport."""
    from calld.stub.world import StubWorld

    seen: list[dict] = []
    original = StubWorld._dial

    def counting(self, body):
        seen.append(body)
        return original(self, body)

    monkeypatch.setattr(StubWorld, "_dial", counting)
    return seen


@pytest.fixture(params=ENGINES)
def ledger_target(request, tmp_path) -> Path | str:
    """Where a ledger goes, once per engine: a SQLite file, and a fresh PostgreSQL database (marked postgres)."""
    if request.param == "sqlite":
        return tmp_path / "state" / "calld.sqlite3"
    return request.getfixturevalue("pg_url")
