"""What the web view reads from a running daemon: the ledger's history, the calls on the line, and
the finished calls' files. Reads only; the daemon hands itself over when it starts the listener."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

import trio

from calld.domain.ids import UserId
from calld.observe.artifacts import find_run
from calld.observe.history import BadQuery, history_row
from calld.observe.timeline import TIMELINE_NAME
from calld.ui.page import refused_claims


def read_claims(run_dir: Path, call_ids: set[str]) -> dict[str, dict[str, Any]]:
    """What the refused records said and when, from the call's events.jsonl (a damaged line is skipped)."""
    rows = []
    try:
        with (run_dir / "events.jsonl").open(encoding="utf-8") as f:
            for line in f:
                if '"call_id"' not in line:  # most rows are audio and words: no need to parse them
                    continue
                try:
                    rows.append(json.loads(line))
                except ValueError:
                    continue
    except OSError:
        return {}
    return refused_claims(rows, call_ids)


class DaemonPages:
    """calld.ui.app.UiSource over calld.daemon.service.Daemon (typed loosely: this package never
    imports the service, which imports it)."""

    def __init__(self, daemon: Any) -> None:
        self._daemon = daemon

    async def calls_page(self, *, user: str | None, status: str | None, since: str | None, until: str | None,
                         offset: int, limit: int) -> list[dict[str, Any]]:
        """A page of the calls list: `history`'s rows, a day's span and an offset."""
        try:
            who = UserId(user) if user is not None else None
        except ValueError as exc:
            raise BadQuery(f"user: {exc}") from None
        artifacts = self._daemon.settings.artifacts_dir
        rows = await self._daemon.ledger.history(user=who, status=status, since=since, until=until, limit=limit, offset=offset)
        return await trio.to_thread.run_sync(lambda: [history_row(r, artifacts) for r in rows])

    async def ident(self, asked: str) -> str:
        """The id a page names its call by: the run id while on the line, then its call_control_id,
        whose directory is found by name (a run id alone would read every call's report to find it)."""
        ledger = self._daemon.ledger
        row = await ledger.request(asked) or await ledger.request_for_call(asked)
        if row is None:
            return asked
        if self._daemon.callbook.find(str(row.run_id)) is not None or not row.call_control_id:
            return str(row.run_id)
        return str(row.call_control_id)

    def live(self, ident: str) -> dict[str, Any] | None:
        """A call on the line now, as `calld-ctl calls` lists it; None once it has ended (or was never here)."""
        if (h := self._daemon.callbook.find(ident)) is None:
            return None
        return next((c for c in self._daemon.lookup.calls() if c["run_id"] == h.plan.run_id), None)

    async def detail(self, ident: str) -> dict[str, Any] | None:
        """What `calld-ctl show` reads: result, report, transcript, files, publication."""
        found: dict[str, Any] | None = await self._daemon.lookup.detail(ident)
        refused = {str(r.get("call_id")) for r in ((found or {}).get("report") or {}).get("refused_records") or []}
        if found is not None and refused and found.get("dir"):
            found["refused_claims"] = await trio.to_thread.run_sync(read_claims, Path(found["dir"]), refused)
        return found

    async def elsewhere(self, ident: str) -> dict[str, Any] | None:
        """Who holds a call another daemon on the shared ledger owns (calld.daemon.lookup.Lookup.elsewhere)."""
        found: dict[str, Any] | None = await self._daemon.lookup.elsewhere(ident)
        return found

    def run_dir(self, ident: str) -> Path | None:
        """A finished call's artifact directory (None while it is on the line)."""
        if self._daemon.callbook.find(ident) is not None:
            return None
        found: Path | None = find_run(self._daemon.settings.artifacts_dir, ident)
        return found

    async def timeline(self, ident: str) -> bytes | None:
        """A finished call's picture: its timeline.svg, or (not drawn yet) drawn now into a temporary
        file, so the web view writes nothing into the call's directory."""
        run_dir = self.run_dir(ident)
        if run_dir is None:
            return None
        if (run_dir / TIMELINE_NAME).is_file():
            return await trio.to_thread.run_sync((run_dir / TIMELINE_NAME).read_bytes)
        with tempfile.TemporaryDirectory(prefix="calld-ui-") as tmp:
            out = await self._daemon.painter.draw(run_dir, Path(tmp) / TIMELINE_NAME)
            return bytes(out.read_bytes())
