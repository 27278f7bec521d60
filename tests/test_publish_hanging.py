"""An S3 endpoint that accepts and never answers (a socket on loopback): `publish check` fails it in
seconds, not minutes, and the publisher keeps PUBLISH_CONCURRENCY uploads going at once, so one
hanging store never queues the backlog behind a single attempt."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import trio

from calld.ledger import Ledger
from calld.publish.publisher import Publisher
from calld.publish.store import check_bucket
from calld.settings import load_settings
from tests.s3server import HangingStore

KEYS = {"publish_access_key_id": "AKIAHANGS", "publish_secret_access_key": "hanging-store-secret-0123456789"}


def settings_for(tmp_path: Path, store: HangingStore, **more):
    return load_settings(calld_state_dir=tmp_path / "state", calld_socket=tmp_path / "ctl.sock", _env_file=None,
                         artifacts_retention="publish", publish_bucket="calld-hangs", publish_endpoint_url=store.url,
                         **KEYS, **more)


def test_publish_check_against_a_store_that_never_answers_fails_within_seconds(tmp_path):
    store = HangingStore()
    try:
        done: list = []
        worker = threading.Thread(target=lambda: done.append(check_bucket(settings_for(tmp_path, store))), daemon=True)
        t0 = time.monotonic()
        worker.start()
        worker.join(30)  # wall-clock bound: it used to take 90 s and more (30 s read timeout, three tries)
        took = time.monotonic() - t0
        assert done, f"publish check still waiting after {took:.0f} s"
        (report,) = done
        assert not report.ok and [s.step for s in report.steps] == ["write"]
        assert "Unreachable" in report.steps[0].detail
        assert store.connections == 1  # one try of 5 s: the check is interactive (the rest is building the client)
    finally:
        store.close()


async def test_a_hanging_store_holds_at_most_publish_concurrency_uploads_and_never_the_queue(tmp_path):
    """Six finished calls wait to be published; the store hangs. Four uploads are in flight at once
    (PUBLISH_CONCURRENCY), never more, and not one at a time. Real time on loopback, bounded."""
    store = HangingStore()
    settings = settings_for(tmp_path, store, publish_concurrency=4)
    settings.artifacts_dir.mkdir(parents=True)
    ledger = Ledger(settings.db_path)
    try:
        publisher = Publisher(settings, ledger)
        for i in range(6):
            run_dir = settings.artifacts_dir / f"v3_run{i}"
            run_dir.mkdir()
            (run_dir / "result.json").write_text("{}")
            await publisher.submit(f"run_{i:020d}", None, "alice", run_dir)
        stop = trio.Event()
        with trio.fail_after(20):
            async with trio.open_nursery() as n:
                await n.start(publisher.run, stop)
                while store.connections < 4:
                    await trio.sleep(0.05)
                await trio.sleep(1.0)  # a fifth would have connected by now if the slots were not bounded
                assert store.connections == 4
                stop.set()
    finally:
        store.close()
        ledger.close()
