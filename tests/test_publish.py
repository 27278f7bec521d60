"""Publishing and retention against a real S3 API (moto's server on loopback, see s3server.py).

Every call here runs the stub world on the autojump clock; the uploads run in worker threads
against the server over HTTP, exactly as they would against R2 or MinIO.
"""

from __future__ import annotations

import base64
import hashlib
import json
from pathlib import Path

import pytest
import trio

from calld.ledger import Ledger
from calld.ops.redaction import Pseudonyms
from calld.publish.keys import CallKeys, has_phone_number, safe_segment, selected
from calld.publish.publisher import ERROR_FILE, Publisher
from calld.publish.store import check_bucket
from calld.settings import SettingsError, load_settings
from tests.s3server import S3Server, free_port, receive_within, start_on
from tests.s3server import autojump_clock  # noqa: F401 - this module's clock (see s3server.py)
from tests.stubcall import stub_call

SMALL = ["result.json", "call_report.json", "call_report.redacted.json", "transcript.json", "task.json",
         "hangup.json", "dial.json", "session_start.json"]
AUDIO = ["audio/inbound.wav", "audio/outbound.wav"]


@pytest.fixture(scope="module")
def s3():
    server = S3Server()
    yield server
    server.stop()


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


async def published_call(tmp_path: Path, s3: S3Server, bucket: str, **settings: object):
    """One stub call, then one publish attempt of it; (run, publisher, ledger, row, local copies)."""
    run = await stub_call(tmp_path, "hours", **s3.settings(bucket, **settings))
    before = {p.relative_to(run.dir).as_posix(): p.read_bytes() for p in run.dir.rglob("*") if p.is_file()}
    ledger = Ledger(run.settings.db_path)
    publisher = Publisher(run.settings, ledger)
    await publisher.submit(run.result.run_id, run.result.call_control_id, "tester", run.dir)
    row = await publisher.attempt(run.result.run_id)
    return run, publisher, ledger, row, before


async def test_publish_uploads_the_durable_subset_with_types_and_checksums_then_drops_local_audio(tmp_path, s3, autojump_clock):
    bucket = s3.new_bucket()
    run, _pub, ledger, row, before = await published_call(tmp_path, s3, bucket, artifacts_retention="publish")
    assert row.status == "published" and row.bucket == bucket and row.local == "audio_deleted"
    date = json.loads(before["call_report.json"])["started_at"][:10]
    assert row.key_prefix == f"calld/{Pseudonyms.in_state_dir(run.settings.calld_state_dir).user('tester')}/{date}/{run.dir.name}/"
    names = {o["name"] for o in row.objects}
    assert names == set(SMALL + AUDIO + ["manifest.json"])  # events.jsonl stays local
    client = s3.client()
    listed = {o["Key"] for o in client.list_objects_v2(Bucket=bucket, Prefix=row.key_prefix)["Contents"]}
    assert listed == {row.key_prefix + n for n in names}
    for name in SMALL + AUDIO:
        head = client.head_object(Bucket=bucket, Key=row.key_prefix + name, ChecksumMode="ENABLED")
        want = hashlib.sha256(before[name]).digest()
        assert head["ChecksumSHA256"] == base64.b64encode(want).decode(), name
        assert head["ContentType"] == ("audio/wav" if name.endswith(".wav") else "application/json"), name
        body = client.get_object(Bucket=bucket, Key=row.key_prefix + name)["Body"].read()
        assert body == before[name]
    manifest = json.loads(client.get_object(Bucket=bucket, Key=row.key_prefix + "manifest.json")["Body"].read())
    assert {o["name"]: o["sha256"] for o in manifest["objects"]} == {n: hashlib.sha256(before[n]).hexdigest() for n in SMALL + AUDIO}
    # retention=publish: the audio is gone locally, the small files stay
    assert not (run.dir / "audio").exists()
    assert all((run.dir / n).read_bytes() == before[n] for n in SMALL)
    assert ledger.unpublished() == []
    ledger.close()


async def test_publish_and_delete_removes_the_run_directory_and_the_ledger_keeps_the_keys(tmp_path, s3, autojump_clock):
    bucket = s3.new_bucket()
    run, _pub, ledger, row, before = await published_call(tmp_path, s3, bucket, artifacts_retention="publish-and-delete")
    assert row.status == "published" and row.local == "deleted"
    assert not run.dir.exists()
    again = Ledger(run.settings.db_path).publication(run.result.call_control_id)  # by call id, from a fresh connection
    assert again is not None and {o["name"]: o["key"] for o in again.objects} == {o["name"]: o["key"] for o in row.objects}
    body = s3.client().get_object(Bucket=bucket, Key=row.key_prefix + "result.json")["Body"].read()
    assert body == before["result.json"]
    ledger.close()


async def test_redacted_only_publishes_the_redacted_report_alone(tmp_path, s3, autojump_clock):
    bucket = s3.new_bucket()
    _run, _pub, ledger, row, before = await published_call(
        tmp_path, s3, bucket, artifacts_retention="publish", publish_redacted_only=True)
    assert {o["name"] for o in row.objects} == {"call_report.redacted.json", "manifest.json"}
    listed = {o["Key"] for o in s3.client().list_objects_v2(Bucket=bucket)["Contents"]}
    assert listed == {row.key_prefix + "call_report.redacted.json", row.key_prefix + "manifest.json"}
    assert b"+15555550142" not in s3.client().get_object(Bucket=bucket, Key=row.key_prefix + "call_report.redacted.json")["Body"].read()
    assert b"+15555550142" in before["call_report.json"]  # the full report would have carried it
    ledger.close()


async def test_audio_can_be_excluded(tmp_path, s3, autojump_clock):
    bucket = s3.new_bucket()
    _run, _pub, ledger, row, _before = await published_call(tmp_path, s3, bucket, artifacts_retention="publish", publish_audio=False)
    names = {o["name"] for o in row.objects}
    assert names == set(SMALL + ["manifest.json"])
    ledger.close()


async def test_object_keys_carry_no_phone_number_even_when_the_user_id_is_one(tmp_path, s3, autojump_clock):
    bucket = s3.new_bucket()
    run = await stub_call(tmp_path, "hours", **s3.settings(bucket, artifacts_retention="publish"))
    ledger = Ledger(run.settings.db_path)
    publisher = Publisher(run.settings, ledger)
    await publisher.submit(run.result.run_id, run.result.call_control_id, "15555550142", run.dir)  # a user id that is a number
    row = await publisher.attempt(run.result.run_id)
    assert row.status == "published"
    keys = [o["Key"] for o in s3.client().list_objects_v2(Bucket=bucket)["Contents"]]
    date = row.key_prefix.split("/")[2]
    assert keys and all("5555550142" not in k for k in keys)
    assert not any(has_phone_number(seg) for k in keys for seg in k.split("/") if seg != date)
    # the keyed stand-in, as in the redacted report; stable: retries land on the same keys
    assert row.key_prefix.split("/")[1] == Pseudonyms.in_state_dir(run.settings.calld_state_dir).user("15555550142")
    ledger.close()


def test_key_segments_that_could_hold_a_phone_number_are_hashed():
    assert safe_segment("alice", "user") == "alice"
    for risky in ("4155550123", "+1 415 555 0123", "user-415-555-0123", "a/b", "..", ""):
        seg = safe_segment(risky, "user")
        assert seg.startswith("user-") and not has_phone_number(seg) and "/" not in seg
    keys = CallKeys.of("team/calls", "4155550123", "2026-11-30", "v3_abc")
    assert keys.prefix == f"team/calls/{safe_segment('4155550123', 'user')}/2026-11-30/v3_abc/"
    assert keys.key("audio/inbound.wav") == keys.prefix + "audio/inbound.wav"
    assert not any(c.isdigit() for c in safe_segment("4155550123", "user"))
    assert selected(["events.jsonl", "result.json", "audio/inbound.wav", "publish_error.json"], redacted_only=False, audio=True) == [
        "result.json", "audio/inbound.wav"]


def test_settings_refuse_publishing_without_a_bucket_and_prefixes_with_numbers():
    with pytest.raises(SettingsError, match="PUBLISH_BUCKET"):
        load_settings(artifacts_retention="publish")
    with pytest.raises(SettingsError, match="PUBLISH_PREFIX.*phone"):
        load_settings(publish_prefix="calls/14155550123")
    with pytest.raises(SettingsError, match="PUBLISH_BUCKET.*bucket name"):
        load_settings(publish_bucket="No_Such")
    s = load_settings(publish_prefix="/team/calls/", publish_secret_access_key="s3-secret-value")
    assert s.publish_prefix == "team/calls" and s.artifacts_retention == "keep"
    assert "s3-secret-value" in s.secrets()  # never written into an artifact


# -- failures ----------------------------------------------------------------------------------------


async def assert_failed_and_kept(tmp_path: Path, s3: S3Server, bucket: str, code: str, retryable: bool, **settings: object):
    run = await stub_call(tmp_path, "hours", **s3.settings(bucket, artifacts_retention="publish-and-delete", **settings))
    result_before = (run.dir / "result.json").read_bytes()
    files_before = sorted(p.relative_to(run.dir).as_posix() for p in run.dir.rglob("*") if p.is_file())
    ledger = Ledger(run.settings.db_path)
    publisher = Publisher(run.settings, ledger)
    await publisher.submit(run.result.run_id, run.result.call_control_id, "tester", run.dir)
    row = await publisher.attempt(run.result.run_id)
    assert row.status == "pending" and row.attempts == 1 and row.objects == []
    error = json.loads((run.dir / ERROR_FILE).read_text())
    assert error["code"] == code and error["retryable"] is retryable and error["attempt"] == 1
    assert error["failed_at"] and error["fix"] and error["local_files"] == "kept"
    assert error["next_attempt_in_s"] == (30.0 if retryable else 3600.0)
    # nothing deleted, the result untouched, the ledger says what is owed
    assert sorted(p.relative_to(run.dir).as_posix() for p in run.dir.rglob("*") if p.is_file()) == sorted([*files_before, ERROR_FILE])
    assert (run.dir / "result.json").read_bytes() == result_before
    assert [r.run_id for r in ledger.unpublished()] == [run.result.run_id]
    assert ledger.publication(run.result.run_id).last_error["code"] == code
    ledger.close()
    return run


async def test_server_down_is_retryable_and_keeps_everything(tmp_path, s3, autojump_clock):
    await assert_failed_and_kept(tmp_path, s3, "calld-down", "Unreachable", True,
                                 publish_endpoint_url=f"http://127.0.0.1:{free_port()}")


async def test_bad_credentials_are_refused_and_not_retryable(tmp_path, s3, autojump_clock):
    bucket = s3.new_bucket()
    await assert_failed_and_kept(tmp_path, s3, bucket, "InvalidAccessKeyId", False, publish_access_key_id="AKIANOTAKEY")


async def test_a_wrong_secret_is_refused(tmp_path, s3, autojump_clock):
    bucket = s3.new_bucket()
    await assert_failed_and_kept(tmp_path, s3, bucket, "SignatureDoesNotMatch", False, publish_secret_access_key="not-the-secret")


async def test_a_missing_bucket_is_refused(tmp_path, s3, autojump_clock):
    await assert_failed_and_kept(tmp_path, s3, "calld-no-such-bucket", "NoSuchBucket", False)


async def test_the_background_task_retries_with_backoff_until_the_store_is_back(tmp_path, s3, autojump_clock):
    port = free_port()
    run = await stub_call(tmp_path, "hours", **s3.settings("calld-retry", artifacts_retention="publish",
                                                           publish_endpoint_url=f"http://127.0.0.1:{port}"))
    ledger = Ledger(run.settings.db_path)
    publisher = Publisher(run.settings, ledger)
    tx, attempts = trio.open_memory_channel(10)
    publisher.listeners.append(lambda row: tx.send_nowait((trio.current_time(), row)))
    stop = trio.Event()
    # No deadline of the test's own here: on the autojump clock it would fire while an upload runs
    # in its worker thread. Virtual time moves only by the publisher's backoff.
    async with trio.open_nursery() as n:
        await n.start(publisher.run, stop)
        t0 = trio.current_time()
        await publisher.submit(run.result.run_id, run.result.call_control_id, "tester", run.dir)
        t1, first = await receive_within(attempts, 60)
        assert first.status == "pending" and t1 - t0 < 1  # at once
        t2, second = await receive_within(attempts, 60)
        assert second.attempts == 2 and 30 <= t2 - t1 < 31  # the first backoff
        error = json.loads((run.dir / ERROR_FILE).read_text())
        assert error["attempt"] == 2 and error["next_attempt_in_s"] == 60.0  # doubling
        server = start_on(port, "calld-retry")  # the store comes back
        try:
            t3, third = await receive_within(attempts, 60)
            assert third.status == "published" and third.attempts == 3 and 60 <= t3 - t2 < 61
            assert not (run.dir / ERROR_FILE).exists()  # the failure is over; the ledger kept the count
        finally:
            stop.set()
            server.stop()
    ledger.close()


async def test_unpublished_runs_are_published_after_a_restart(tmp_path, s3, autojump_clock):
    bucket = s3.new_bucket()
    run = await assert_failed_and_kept(tmp_path, s3, bucket, "Unreachable", True,
                                       publish_endpoint_url=f"http://127.0.0.1:{free_port()}")
    # A new daemon: same state directory and ledger file, the store reachable now.
    settings = load_settings(calld_state_dir=tmp_path, **s3.settings(bucket, artifacts_retention="publish-and-delete"))
    ledger = Ledger(settings.db_path)
    publisher = Publisher(settings, ledger)  # nothing submitted to this one: only the ledger knows
    tx, attempts = trio.open_memory_channel(10)
    publisher.listeners.append(tx.send_nowait)
    stop = trio.Event()
    async with trio.open_nursery() as n:
        await n.start(publisher.run, stop)
        row = await receive_within(attempts, 60)
        stop.set()
    assert row.attempts == 2 and row.local == "deleted" and not run.dir.exists()
    assert {o["Key"] for o in s3.client().list_objects_v2(Bucket=bucket)["Contents"]} == {o["key"] for o in row.objects}
    ledger.close()


# -- the bucket check --------------------------------------------------------------------------------


def test_the_bucket_check_writes_reads_and_deletes_a_probe(tmp_path, s3):
    bucket = s3.new_bucket()
    report = check_bucket(load_settings(calld_state_dir=tmp_path, **s3.settings(bucket)))
    assert report.ok, report.lines()
    assert [s.step for s in report.steps] == ["write", "read", "delete"]
    assert "KeyCount" in (listing := s3.client().list_objects_v2(Bucket=bucket)) and listing["KeyCount"] == 0  # probe gone


@pytest.mark.parametrize(("override", "step", "code"), [
    ({"publish_bucket": "calld-absent"}, "write", "NoSuchBucket"),
    ({"publish_access_key_id": "AKIANOTAKEY"}, "write", "InvalidAccessKeyId"),
    ({"publish_endpoint_url": "closed"}, "write", "Unreachable"),
])
def test_the_bucket_check_says_which_step_failed_and_why(tmp_path, s3, override, step, code):
    if override.get("publish_endpoint_url") == "closed":
        override = {"publish_endpoint_url": f"http://127.0.0.1:{free_port()}"}
    report = check_bucket(load_settings(calld_state_dir=tmp_path, **{**s3.settings(s3.new_bucket()), **override}))
    assert not report.ok
    assert report.steps[-1].step == step and code in report.steps[-1].detail
    assert report.lines()[-1].startswith("[FAIL]")


def test_the_bucket_check_without_a_bucket_says_what_to_set(tmp_path):
    report = check_bucket(load_settings(calld_state_dir=tmp_path))
    assert not report.ok and "PUBLISH_BUCKET" in report.lines()[0]


async def test_a_run_directory_removed_before_upload_is_reported_not_retried_soon(tmp_path, s3):
    bucket = s3.new_bucket()
    settings = load_settings(calld_state_dir=tmp_path, **s3.settings(bucket, artifacts_retention="publish"))
    ledger = Ledger(settings.db_path)
    publisher = Publisher(settings, ledger)
    await publisher.submit("run_00000000000000000001", None, "tester", settings.artifacts_dir / "gone")
    await publisher.submit("run_00000000000000000001", None, "tester", settings.artifacts_dir / "gone")  # once per run
    row = await publisher.attempt("run_00000000000000000001")
    assert row.status == "pending" and row.attempts == 1
    assert row.last_error["code"] == "RunDirMissing" and row.last_error["retryable"] is False
    assert row.last_error["next_attempt_in_s"] == settings.publish_retry_max_s
    assert len(ledger.unpublished()) == 1 and not (settings.artifacts_dir / "gone").exists()
    ledger.close()


