"""The web view's calls list with many calls in the ledger: how long a page takes to render.

    uv run python bench/ui_list.py [N]        # default 10000 calls

Fills a fresh state directory with N finished requests (three users, six statuses, spread over
the last 30 days, each with a small call_report.json in its own artifact directory, as `history`
reads them), starts a stub daemon on it with the web view on, signs in with a link as
`calld-ctl ui` would, and asks for each page 30 times: the first page, a status filter, a user
filter, a day filter, and page 100. Prints, per page, the median and the 95th percentile of the
whole request as the client sees it, and of the server's own render (its Server-Timing header:
the ledger query, the files read and the template). docs/web-view.md keeps the figures.
"""

from __future__ import annotations

import json
import sqlite3
import statistics
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import httpx
import trio

from calld.daemon.service import Daemon
from calld.domain.ids import UserId
from calld.ledger import Ledger
from calld.runtime.rundir import artifact_slug
from calld.settings import load_settings

STATUSES = ("answered", "answered", "answered", "declined", "no_answer", "voicemail", "failed", "booked")
USERS = ("alice", "bob", "carol")
REPEAT = 30


def fill(state: Path, n: int) -> None:
    settings = load_settings(calld_state_dir=state, _env_file=None)
    ledger = Ledger(settings.db_path)
    for u in USERS:
        ledger.provision_stub(UserId(u))
    ledger.close()
    art = settings.artifacts_dir
    art.mkdir(parents=True, exist_ok=True)
    now = datetime.now(UTC)
    rows = []
    for i in range(n):
        status = STATUSES[i % len(STATUSES)]
        run_id, ccid = f"run_{i:020d}", f"v3:bench-{i:06d}"
        at = (now - timedelta(seconds=30 * 86400 * i / n)).isoformat(timespec="microseconds")
        result = {"run_id": run_id, "call_control_id": ccid, "status": status,
                  "answer_text": "We're open nine to five, Monday through Friday." if status == "answered" else None,
                  "reason": None if status in ("answered", "booked") else "unknown"}
        params = {"to": f"+1555555{i % 100:04d}", "ask": "hours", "name": "Nathan", "user": USERS[i % 3]}
        rows.append((f"req-{i}", USERS[i % 3], "ask", json.dumps(params), run_id, ccid, "done", json.dumps(result), at, at))
        d = art / artifact_slug(ccid)
        d.mkdir()
        (d / "call_report.json").write_text(json.dumps({"run_id": run_id, "call_control_id": ccid, "duration_ms": 20_000 + i % 30_000}))
    with sqlite3.connect(settings.db_path) as db:
        db.executemany("INSERT INTO requests (request_id, user_id, kind, params, run_id, call_control_id, status, result, created_at,"
                       " updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", rows)


async def measure(state: Path) -> None:
    settings = load_settings(calld_state_dir=state, calld_socket=state / "ctl.sock", calld_bind="127.0.0.1:0",
                             calld_media_bind="127.0.0.1:0", calld_ui_bind="127.0.0.1:0", _env_file=None)
    day = (datetime.now(UTC) - timedelta(days=3)).date().isoformat()
    pages = {"first page": "/", "status=declined": "/?status=declined", "user=bob": "/?user=bob", f"day={day}": f"/?day={day}",
             "page 100": "/?page=100"}
    async with trio.open_nursery() as n:
        d: Daemon = await n.start(Daemon(settings).serve)
        async with httpx.AsyncClient(base_url=d.ui_url, timeout=60) as web:
            assert (await web.get(d.ui_link())).status_code == 303
            print(f"{'page':<20} {'rows':>5} {'client p50':>11} {'p95':>7} {'render p50':>11} {'p95':>7}   (ms)")
            for name, path in pages.items():
                client, server = [], []
                rows = 0
                for _ in range(REPEAT):
                    t0 = time.perf_counter()
                    r = await web.get(path)
                    client.append((time.perf_counter() - t0) * 1000)
                    assert r.status_code == 200, r.text
                    server.append(float(r.headers["server-timing"].split("dur=")[1]))
                    rows = r.text.count("<tr class=")
                q = lambda xs: (statistics.median(xs), sorted(xs)[int(len(xs) * 0.95) - 1])  # noqa: E731
                (c50, c95), (s50, s95) = q(client), q(server)
                print(f"{name:<20} {rows:>5} {c50:>11.1f} {c95:>7.1f} {s50:>11.1f} {s95:>7.1f}")
        await d.shutdown(drain_s=0)


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 10_000
    with tempfile.TemporaryDirectory(prefix="calld-ui-bench-") as tmp:
        state = Path(tmp) / "state"
        t0 = time.perf_counter()
        fill(state, n)
        print(f"{n} calls in the ledger and on disk ({time.perf_counter() - t0:.1f} s to write)")
        trio.run(measure, state)


if __name__ == "__main__":
    main()
