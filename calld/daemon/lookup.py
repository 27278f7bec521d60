"""What calld-ctl and the web view look up in a daemon: a call by any of its ids (in flight, on disk, or
what the ledger kept), its detail, its picture, a request's status, the history, published objects.
Reads only: nothing here changes a call."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

import trio

from calld.daemon.errors import AmbiguousCall, DaemonError
from calld.ops.recovery import find_run_dir

if TYPE_CHECKING:
    from calld.daemon.service import Daemon


class Lookup:
    def __init__(self, daemon: Daemon) -> None:
        self.daemon = daemon

    async def history(self, **query: Any) -> list[dict[str, Any]]:
        from calld.observe.history import history_rows

        return await self.daemon.ledger.run(lambda ledger: history_rows(ledger, self.daemon.settings.artifacts_dir, **query))

    async def call_ident(self, ident: str) -> str:
        """A request id names its call's run (what calld-ctl prints to look a request up); other ids stay."""
        if (row := await self.daemon.ledger.request(ident)) is not None and row.run_id:
            return str(row.run_id)
        return ident

    async def detail(self, ident: str) -> dict[str, Any] | None:
        """What `show` prints; the files are read in a worker thread, the ledger here (its connection
        belongs to this thread)."""
        from calld.observe.history import call_detail, request_summary

        if self.daemon.callbook.find(ident) is not None:
            return None
        row = await self.daemon.ledger.request_for_call(ident)
        found = await trio.to_thread.run_sync(call_detail, self.daemon.settings.artifacts_dir, ident, row)
        if found is None:
            return None
        run_id = (found["report"] or {}).get("run_id") or (row.run_id if row is not None else None)
        if found["request"] is None and run_id and (row := await self.daemon.ledger.request_for_call(run_id)) is not None:
            found["request"] = request_summary(row)
        if run_id and (pub := await self.daemon.ledger.publication(str(run_id))) is not None:
            found["publication"] = self.daemon.publisher.describe(pub)
        return found

    async def timeline(self, ident: str, suffix: str) -> bytes | None:
        """The call's picture as SVG or PNG bytes, drawn from its artifacts by the drawing process.
        SVG is also (re)written as the call's timeline.svg."""
        from calld.observe.artifacts import find_run
        from calld.observe.timeline import TIMELINE_NAME

        if self.daemon.callbook.find(ident) is not None:
            return None
        run_dir = find_run(self.daemon.settings.artifacts_dir, ident)
        if run_dir is None:
            return None
        if suffix == "svg":
            out = await self.daemon.painter.draw(run_dir, run_dir / TIMELINE_NAME)
            return out.read_bytes()
        import tempfile

        with tempfile.TemporaryDirectory(prefix="calld-timeline-") as tmp:
            out = await self.daemon.painter.draw(run_dir, Path(tmp) / f"timeline.{suffix}")
            return out.read_bytes()

    async def show(self, ident: str) -> dict[str, Any] | None:
        """A call by run id, call control id, artifact directory or request id: in flight, its
        report, or (a call a crash cut short) what the ledger and recovery know. Raises
        AmbiguousCall, listing the candidates, when the id names more than one call."""
        if (row := await self.daemon.ledger.request(ident)) is not None:
            ident = row.run_id  # a request id: its call, which may be on the line now
        if (h := self.daemon.callbook.find(ident)) is not None:
            return {"in_flight": True, **next(c for c in self.calls() if c["run_id"] == h.plan.run_id)}
        found = []
        for report in sorted(self.daemon.settings.artifacts_dir.glob("*/call_report.json")):
            try:
                data = json.loads(report.read_text())
            except (OSError, ValueError):
                continue
            if ident in (data.get("run_id"), data.get("call_control_id"), report.parent.name):
                if (pub := await self.daemon.ledger.publication(str(data.get("run_id")))) is not None:
                    data["publication"] = self.daemon.publisher.describe(pub)
                found.append(data)
        if len(found) > 1:
            raise AmbiguousCall(ident, [f"{d['run_id']} ({d.get('started_at')})" for d in found])
        if found:
            return found[0]
        # Published and deleted locally: the ledger still has the result and the object keys.
        if (pub := await self.daemon.ledger.publication(ident)) is not None:
            return {"run_id": pub.run_id, "call_control_id": pub.call_control_id, "result": await self.daemon.ledger.result_of_run(pub.run_id),
                    "publication": self.daemon.publisher.describe(pub)}
        rows = await self.daemon.ledger.requests_for_call(ident)
        if len(rows) > 1:
            raise AmbiguousCall(ident, [f"{r.run_id} ({r.created_at})" for r in rows])
        if rows:
            r = rows[0]
            run_dir = find_run_dir(self.daemon.settings.artifacts_dir, r.run_id, r.call_control_id)
            if run_dir is None:
                return None  # pruned (or never written): `detail` answers from the ledger
            return {"request_id": r.request_id, "run_id": r.run_id, "call_control_id": r.call_control_id,
                    "request_status": r.status, "result": r.result, "status": (r.result or {}).get("status"),
                    "artifact_prefix": run_dir.name if run_dir else None,
                    "note": "no call report: the call was cut short (see recovery.json in its directory)"
                    if (run_dir / "recovery.json").is_file() else
                    "no call report: the call's last files could not be written (the daemon's log says which and why)"}
        return None

    async def elsewhere(self, ident: str) -> dict[str, Any] | None:
        """The call `ident` names (request id, run id or call_control_id) when another daemon on the
        shared ledger owns it and its files are not here: who holds it, for a 421 that sends calld-ctl
        there. None for this daemon's calls, unknown ids, and a row no daemon name owns (a ledger
        carried over from one daemon), whose missing files are then truly gone."""
        ledger = self.daemon.ledger
        row = await ledger.request(ident) or await ledger.request_for_call(ident)
        if row is None or not row.instance or row.instance == self.daemon.settings.instance_name:
            return None
        if self.daemon.callbook.find(str(row.run_id)) is not None:
            return None
        here = await trio.to_thread.run_sync(find_run_dir, self.daemon.settings.artifacts_dir, row.run_id, row.call_control_id)
        if here is not None:  # a shared artifacts directory: this daemon reads them as well as the owner
            return None
        holder = next((d.holder for d in await ledger.daemons() if d.instance == row.instance), "")
        return {"daemon": row.instance, "holder": holder, "request_id": row.request_id, "run_id": row.run_id,
                "call_control_id": row.call_control_id, "request_status": row.status,
                "status": (row.result or {}).get("status"), "line_may_be_up": (row.result or {}).get("line_may_be_up")}

    async def request_status(self, request_id: str) -> dict[str, Any] | None:
        """What calld-ctl reads when its stream broke: the request's status and, once done, its result."""
        row = await self.daemon.ledger.request(request_id)
        if row is None:
            return None
        return {"request_id": row.request_id, "run_id": row.run_id, "call_control_id": row.call_control_id,
                "status": row.status, "result": row.result}

    async def published_objects(self, ident: str) -> list[dict[str, Any]]:
        """A published call's objects, each with a short-lived signed link (calld-ctl fetch)."""
        pub = await self.daemon.ledger.publication(await self.call_ident(ident))  # a request id names its call's run
        if pub is None:
            raise LookupError(f"no call with request id, run id or call_control_id {ident!r} was queued for publishing "
                              f"(ARTIFACTS_RETENTION is {self.daemon.settings.artifacts_retention}); calld-ctl history lists the ids")
        if pub.status != "published":
            why = f"; last error: {pub.last_error.get('code')}: {pub.last_error.get('fix')}" if pub.last_error else ""
            raise LookupError(f"{pub.run_id} is not published yet (attempts: {pub.attempts}{why}); "
                              f"its files are in {self.daemon.settings.artifacts_dir / pub.run_dir}")
        from calld.publish.store import StoreError

        try:
            return await self.daemon.publisher.links(pub)
        except StoreError as exc:
            raise DaemonError(f"{exc} ({exc.fix})") from None

    def calls(self) -> list[dict[str, Any]]:
        """The calls on the line now, each with its tracks' states (calld-ctl calls)."""
        out = []
        for h in self.daemon.callbook.handles():
            c = h.call
            out.append({
                "run_id": h.plan.run_id,
                "call_control_id": c.call_control_id,
                "to": h.plan.to,
                "user": h.plan.user_id,
                "age_s": round(h.age_s, 1),
                "question": h.plan.job.label,
                "tracks": {t: getattr(c, t).kind for t in ("dial", "telnyx", "media", "live", "conversation", "hangup")},
                # The hangup performed, past the reducer's track: "done" there may be a hangup still refused.
                "hangup": h.hangup_series.progress() if h.hangup_series is not None else None,
            })
        return out
