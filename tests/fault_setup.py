"""What the fault suites share: a daemon on the autojump clock with room to drain, a provisioned client, the
stub carrier's hangups counted per call, and an ask as `calld-ctl ask` makes it."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from calld.cli.client import ControlClient
from calld.cli.ctl import run_ask
from calld.daemon.service import Daemon
from calld.ledger import Ledger
from calld.stub.world import StubWorld
from daemons import daemon_settings, provisioned, serving

ASK = {"to": "+15555550142", "ask": "hours", "name": "Nathan", "user": "alice"}


def settings_for(tmp_path: Path, **over):
    return daemon_settings(tmp_path, **({"shutdown_drain_s": 30, "calld_max_calls": 50} | over))


@pytest.fixture
async def daemon(tmp_path, nursery):
    async with serving(nursery, settings_for(tmp_path)) as d:
        yield d


@pytest.fixture
async def client(daemon):
    async with provisioned(daemon, "alice") as c:
        yield c


@pytest.fixture
def hangups(monkeypatch) -> dict[str, int]:
    """Hangups as the (stub) carrier received them, per call."""
    seen: dict[str, int] = {}
    original = StubWorld._hangup

    def counting(self, ccid):
        seen[ccid] = seen.get(ccid, 0) + 1
        return original(self, ccid)

    monkeypatch.setattr(StubWorld, "_hangup", counting)
    return seen


async def ask(client: ControlClient, body: dict) -> tuple[int, dict | None, str]:
    out, err = io.StringIO(), io.StringIO()
    code = await run_ask(client, body, out=out, err=err)
    return code, (json.loads(out.getvalue()) if out.getvalue() else None), err.getvalue()


def ledger_row(daemon: Daemon, request_id: str):
    led = Ledger(daemon.settings.db_path)
    try:
        return led.request(request_id)
    finally:
        led.close()
