"""The publisher: after a call, its durable artifacts go to the bucket; then retention runs.

Shape: `submit()` is called once a call's result has gone to the user. It writes one
'pending' row in the ledger (so a restart still knows what is unpublished) and wakes the
background task. That task (`run`) publishes up to PUBLISH_CONCURRENCY runs at once, each in
a worker thread, so the event loop never waits on the network or the disk and a hanging store
holds only its slots; a call's result is never changed or delayed by it.

One attempt: upload every durable file with its SHA-256 (the store checks it), then
manifest.json (names, keys, checksums, sizes) as the last object, so a manifest means the
call is complete in the bucket. Then the ledger records the keys, and only then does
retention delete anything locally.

Error handling: a failed attempt writes publish_error.json in the run directory (what
failed, when, retryable or not, what to fix, when the next try is), keeps every local file,
and is tried again with doubling backoff (a failure no retry can fix waits the longest
interval: an operator may fix the bucket or the keys meanwhile). A restart tries every
unpublished run again at once.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
from datetime import UTC, datetime
from functools import partial
from pathlib import Path
from collections.abc import Callable
from typing import Any

import trio

from calld.ledger import Ledger, LedgerUnavailable, PublicationRow
from calld.ledger.awaitable import awaitable
from calld.ops.redaction import Pseudonyms
from calld.publish.keys import MANIFEST, CallKeys, content_type, selected
from calld.publish.store import Bucket, StoredObject, StoreError
from calld.settings import Settings

log = logging.getLogger("calld.publish")

ERROR_FILE = "publish_error.json"


def _files_in(run_dir: Path) -> list[str]:
    return sorted(p.relative_to(run_dir).as_posix() for p in run_dir.rglob("*") if p.is_file())


def _call_date(run_dir: Path, fallback: str) -> str:
    """The call's UTC date, from call_report.json's started_at; the ledger row's date without one."""
    try:
        started = json.loads((run_dir / "call_report.json").read_text())["started_at"]
        return datetime.fromisoformat(started).astimezone(UTC).date().isoformat()
    except (OSError, ValueError, KeyError, TypeError):
        return fallback[:10]


def upload_run(bucket: Bucket, settings: Settings, row: PublicationRow, run_dir: Path,
               pseudonyms: Pseudonyms) -> tuple[CallKeys, list[StoredObject]]:
    """Upload one run's durable subset and its manifest. Blocking: run it in a worker thread.
    The keys carry the user's keyed stand-in (the redacted report's user_id), never the id itself."""
    if not run_dir.is_dir():
        raise StoreError("reading the run directory", "RunDirMissing", f"{run_dir} is gone", retryable=False,
                         fix="nothing to publish: the local files were removed before they were uploaded")
    keys = CallKeys.of(settings.publish_prefix, pseudonyms.user(row.user_id), _call_date(run_dir, row.created_at), run_dir.name)
    names = selected(_files_in(run_dir), redacted_only=settings.publish_redacted_only, audio=settings.publish_audio)
    stored = [bucket.put_file(keys.key(n), run_dir / n, content_type(n), n) for n in names]
    manifest = {
        "run_id": row.run_id,
        "call_control_id": row.call_control_id,
        "published_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "redacted_only": settings.publish_redacted_only,
        "audio": settings.publish_audio and any(o.name.startswith("audio/") for o in stored),
        "objects": [o.as_dict() for o in stored],
    }
    data = (json.dumps(manifest, indent=2) + "\n").encode()
    digest = bucket.put_bytes(keys.key(MANIFEST), data, "application/json")
    stored.append(StoredObject(MANIFEST, keys.key(MANIFEST), digest, len(data), "application/json"))
    return keys, stored


def apply_retention(retention: str, run_dir: Path) -> str:
    """Delete what retention says, once the objects are safe in the bucket; the local state left."""
    if retention == "publish-and-delete":
        shutil.rmtree(run_dir)
        return "deleted"
    if retention == "publish":
        shutil.rmtree(run_dir / "audio", ignore_errors=True)
        return "audio_deleted"
    return "kept"


def write_error_file(run_dir: Path, record: dict[str, Any]) -> None:
    """publish_error.json, replaced whole (write and rename), so a reader never sees half of it."""
    if not run_dir.is_dir():
        return
    tmp = run_dir / f".{ERROR_FILE}.tmp"
    tmp.write_text(json.dumps(record, indent=2) + "\n", encoding="utf-8")
    os.replace(tmp, run_dir / ERROR_FILE)


def clear_error_file(run_dir: Path) -> None:
    (run_dir / ERROR_FILE).unlink(missing_ok=True)


class Publisher:
    """Publishes finished calls in the background; see the module docstring."""

    def __init__(self, settings: Settings, ledger: Ledger, pseudonyms: Pseudonyms | None = None) -> None:
        self.settings = settings
        self.enabled = settings.artifacts_retention != "keep"
        self._ledger = awaitable(ledger)
        self.pseudonyms = pseudonyms or Pseudonyms.in_state_dir(settings.calld_state_dir)
        self._bucket: Bucket | None = None
        self._due: dict[str, float] = {}  # run id -> trio time of its next attempt
        self._running: set[str] = set()  # run ids with an attempt started or waiting for a slot
        self._wake = trio.Event()
        self.listeners: list[Callable[[PublicationRow], None]] = []  # told after every attempt

    # -- the call side ---------------------------------------------------------------------------

    async def submit(self, run_id: str, call_control_id: str | None, user_id: str, run_dir: Path) -> None:
        """Queue a finished call (after its result went out). One short ledger write; no waiting."""
        if not self.enabled:
            return
        await self._ledger.enqueue_publication(run_id, call_control_id, user_id, run_dir.name,  # type: ignore[arg-type]
                                               owner=self.settings.instance_name)
        self._due[run_id] = -float("inf")
        self._wake.set()

    # -- the background task ---------------------------------------------------------------------

    async def run(self, stop: trio.Event, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        """Publish until `stop` is set. An upload in flight then is abandoned and stays pending."""
        # What this daemon left before a restart: due now. Another daemon's runs are on its disk, not ours.
        for row in await self._ledger.unpublished(owner=self.settings.instance_name):
            self._due.setdefault(row.run_id, -float("inf"))
        if self._due:
            log.info("%d run(s) left unpublished: publishing them now", len(self._due))
        async with trio.open_nursery() as n:
            n.start_soon(self._loop)
            task_status.started()
            await stop.wait()
            n.cancel_scope.cancel()

    async def _loop(self) -> None:
        """Start every due run, PUBLISH_CONCURRENCY at a time: a store that hangs holds its slots,
        never the whole queue."""
        limiter = trio.CapacityLimiter(self.settings.publish_concurrency)
        async with trio.open_nursery() as n:
            while True:
                now = trio.current_time()
                waiting = {r: t for r, t in self._due.items() if r not in self._running}
                due = sorted((t, r) for r, t in waiting.items() if t <= now)
                if not due:
                    self._wake = trio.Event()
                    with trio.move_on_at(min(waiting.values(), default=float("inf"))):
                        await self._wake.wait()
                    continue
                for _t, run_id in due:
                    self._running.add(run_id)
                    n.start_soon(self._attempt_in_slot, limiter, run_id)

    async def _attempt_in_slot(self, limiter: trio.CapacityLimiter, run_id: str) -> None:
        try:
            async with limiter:
                await self.attempt(run_id)
        except LedgerUnavailable as exc:  # the row stays pending; try the run again later
            log.error("%s cannot be published now: %s", run_id, exc)
            self._due[run_id] = trio.current_time() + self.settings.publish_retry_max_s
        finally:
            self._running.discard(run_id)
            self._wake.set()  # its next try (or none) changes what the loop waits for

    async def attempt(self, run_id: str) -> PublicationRow | None:
        """Try one run once; on failure schedule the next try. The ledger row after it."""
        row = await self._attempt(run_id)
        if row is not None:
            for tell in self.listeners:
                tell(row)
        return row

    async def _attempt(self, run_id: str) -> PublicationRow | None:
        row = await self._ledger.publication(run_id)
        if row is None or row.status == "published":
            self._due.pop(run_id, None)
            return row
        run_dir = self.settings.artifacts_dir / row.run_dir
        try:
            bucket = await self._open_bucket()
            keys, stored = await trio.to_thread.run_sync(
                partial(upload_run, bucket, self.settings, row, run_dir, self.pseudonyms), abandon_on_cancel=True
            )
        except StoreError as exc:
            return await self._failed(row, run_dir, exc)
        self._due.pop(run_id, None)
        row = await self._ledger.publication_done(
            run_id, bucket=bucket.name, key_prefix=keys.prefix, objects=[o.as_dict() for o in stored]
        )
        log.info("%s published %d object(s) to %s", run_id, len(stored), bucket.where(keys.prefix))
        try:
            local = await trio.to_thread.run_sync(partial(self._after_publish, run_dir))
        except OSError as exc:
            log.error("%s published, but retention %s failed locally: %s", run_id, self.settings.artifacts_retention, exc)
            return row
        return await self._ledger.publication_local(run_id, local)  # type: ignore[arg-type]

    def _after_publish(self, run_dir: Path) -> str:
        clear_error_file(run_dir)
        return apply_retention(self.settings.artifacts_retention, run_dir)

    async def _open_bucket(self) -> Bucket:
        if self._bucket is None:
            # Building a boto3 client reads its service model from disk: a worker thread too.
            self._bucket = await trio.to_thread.run_sync(Bucket, self.settings)
        return self._bucket

    def backoff_s(self, attempts: int, retryable: bool) -> float:
        """Doubling from PUBLISH_RETRY_INITIAL_S up to PUBLISH_RETRY_MAX_S; no retry helps: the maximum."""
        cap = self.settings.publish_retry_max_s
        if not retryable:
            return cap
        return min(self.settings.publish_retry_initial_s * 2 ** max(attempts - 1, 0), cap)

    async def _failed(self, row: PublicationRow, run_dir: Path, exc: StoreError) -> PublicationRow:
        attempt = row.attempts + 1
        delay = self.backoff_s(attempt, exc.retryable)
        record = {
            "run_id": row.run_id,
            "failed_at": datetime.now(UTC).isoformat(timespec="seconds"),
            "attempt": attempt,
            **exc.as_dict(),
            "next_attempt_in_s": delay,
            "local_files": "kept",
        }
        try:
            await trio.to_thread.run_sync(write_error_file, run_dir, record)
        except OSError as write_exc:
            log.error("%s could not write %s: %s", row.run_id, ERROR_FILE, write_exc)
        row = await self._ledger.publication_failed(row.run_id, record)
        self._due[row.run_id] = trio.current_time() + delay
        log.warning("%s publish attempt %d failed (%s, %s); next try in %.0f s",
                    row.run_id, attempt, exc, "retryable" if exc.retryable else f"not retryable: {exc.fix}", delay)
        return row

    # -- what calld-ctl show and fetch read --------------------------------------------------------

    def describe(self, row: PublicationRow) -> dict[str, Any]:
        """The publication as `calld-ctl show` prints it: where each object is, or why it is not yet."""
        out: dict[str, Any] = {"status": row.status, "local": row.local, "attempts": row.attempts}
        if row.status == "published" and row.bucket:
            out["bucket"] = row.bucket
            out["prefix"] = f"s3://{row.bucket}/{row.key_prefix}"
            out["objects"] = {o["name"]: o["key"] for o in row.objects}
        if row.last_error:
            out["last_error"] = row.last_error
        return out

    async def links(self, row: PublicationRow, expires_s: int = 900) -> list[dict[str, Any]]:
        """Every published object of a run with a presigned GET link, for calld-ctl fetch."""
        assert row.bucket is not None
        bucket = await trio.to_thread.run_sync(partial(Bucket, self.settings, row.bucket))

        def sign() -> list[dict[str, Any]]:
            return [{**o, "url": bucket.presign_get(o["key"], expires_s)} for o in row.objects]

        return await trio.to_thread.run_sync(sign)
