"""The daemon publishes after hangup: the result goes to the user first, the event loop never
waits on the store, `show` points at the objects and `fetch` brings them back. Against moto's
S3 server on loopback (s3server.py), on the autojump clock."""

from __future__ import annotations

import hashlib
import io
import json
import time
from pathlib import Path
from typing import Any

import httpx
import pytest
import trio

from calld.cli.client import ControlClient, ControlError
from calld.cli.ctl import EXIT_FAILED, EXIT_OK, EXIT_VERIFY_FAILED, main as ctl_main, run_ask, run_fetch
from calld.daemon.service import Daemon
from calld.publish.publisher import ERROR_FILE
from calld.settings import load_settings
from tests.s3server import HangingStore, S3Server, free_port
from tests.s3server import autojump_clock  # noqa: F401 - this module's clock (see s3server.py)

ASK = {"to": "+15555550142", "ask": "hours", "name": "Nathan", "user": "alice"}


@pytest.fixture(scope="module")
def s3():
    server = S3Server()
    yield server
    server.stop()


async def start_daemon(nursery: trio.Nursery, tmp_path: Path, **settings: Any) -> Daemon:
    s = load_settings(calld_state_dir=tmp_path / "state", calld_socket=tmp_path / "ctl.sock", calld_bind="127.0.0.1:0", **settings)
    return await nursery.start(Daemon(s).serve)


async def ask(client: ControlClient, **more: str) -> dict[str, Any]:
    out = io.StringIO()
    assert await run_ask(client, {**ASK, **more}, out=out, err=io.StringIO()) == EXIT_OK
    return json.loads(out.getvalue())


async def until_publication(client: ControlClient, run_id: str, done: Any) -> dict[str, Any]:
    # Polls with a real pause (in a thread) and no deadline: on the autojump clock a deadline
    # would fire while an upload runs in its worker thread. At least 60 s of real time.
    for _ in range(1200):
        shown = await client.show(run_id)
        if (pub := shown.get("publication")) is not None and done(pub):
            return shown
        await trio.to_thread.run_sync(time.sleep, 0.05)
    raise AssertionError(f"the publication of {run_id} never got there: {shown.get('publication')}")


async def test_keep_publishes_nothing(tmp_path, s3, nursery, autojump_clock):
    bucket = s3.new_bucket()
    daemon = await start_daemon(nursery, tmp_path, **s3.settings(bucket, artifacts_retention="keep"))
    async with ControlClient(daemon.settings.calld_socket) as client:
        await client.provision("alice")
        result = await ask(client)
        await trio.sleep(5)
        shown = await client.show(result["run_id"])
        assert "publication" not in shown and shown["status"] == "answered"
        with pytest.raises(ControlError, match="was queued for publishing.*keep"):
            await client.published_objects(result["run_id"])
    assert s3.client().list_objects_v2(Bucket=bucket)["KeyCount"] == 0
    assert (daemon.settings.artifacts_dir / result["transcript_ref"].split("/")[0] / "audio" / "inbound.wav").is_file()
    await daemon.shutdown(drain_s=0)


async def test_publish_and_delete_then_show_and_fetch(tmp_path, s3, nursery, autojump_clock):
    bucket = s3.new_bucket()
    daemon = await start_daemon(nursery, tmp_path, **s3.settings(bucket, artifacts_retention="publish-and-delete"))
    # Downloads without a timeout: on the autojump clock a timeout fires while the server answers.
    async with ControlClient(daemon.settings.calld_socket) as client, httpx.AsyncClient(timeout=None) as http:
        await client.provision("alice")
        result = await ask(client)
        assert result["status"] == "answered"
        shown = await until_publication(client, result["run_id"], lambda p: p["status"] == "published" and p["local"] == "deleted")
        run_dir = daemon.settings.artifacts_dir / result["transcript_ref"].split("/")[0]
        assert not run_dir.exists()
        # show: the ledger's result, and where every object is
        assert shown["result"] == result
        pub = shown["publication"]
        user_key = daemon.pseudonyms.user("alice")  # the keyed stand-in, never the id as given
        assert pub["prefix"].startswith(f"s3://{bucket}/calld/{user_key}/") and pub["prefix"].endswith(f"/{run_dir.name}/")
        assert {"result.json", "call_report.json", "audio/inbound.wav", "manifest.json"} <= set(pub["objects"])
        assert "timeline.svg" in pub["objects"]  # drawn before the call is handed to the publisher
        assert (await client.show(result["call_control_id"]))["publication"] == pub  # by call id too
        # fetch takes the request id calld-ctl printed as well as the run id
        rid = next(r["request_id"] for r in await client.history() if r["run_id"] == result["run_id"])
        assert len(await client.published_objects(rid)) == len(await client.published_objects(result["run_id"])) > 0
        with pytest.raises(ControlError, match="no call with request id, run id or call_control_id 'nope'"):
            await client.published_objects("nope")
        # fetch: every object back, checked against its recorded SHA-256
        dest = tmp_path / "back"
        out = io.StringIO()
        with s3.presigned_links_allowed():
            assert await run_fetch(client, result["run_id"], dest, out=out, http=http) == EXIT_OK
        assert json.loads((dest / "result.json").read_text()) == result
        assert (dest / "audio" / "inbound.wav").read_bytes()[:4] == b"RIFF"
        manifest = json.loads((dest / "manifest.json").read_text())
        for obj in manifest["objects"]:
            assert hashlib.sha256((dest / obj["name"]).read_bytes()).hexdigest() == obj["sha256"]
        assert len(out.getvalue().splitlines()) == len(pub["objects"])
        # an object changed in the bucket is refused, not saved
        s3.client().put_object(Bucket=bucket, Key=pub["objects"]["transcript.json"], Body=b"{}")
        again = tmp_path / "again"
        with s3.presigned_links_allowed():
            assert await run_fetch(client, result["run_id"], again, out=io.StringIO(), http=http) == EXIT_FAILED
        assert not (again / "transcript.json").exists()
    await daemon.shutdown(drain_s=0)


async def test_store_down_the_result_is_unchanged_and_the_files_stay(tmp_path, s3, nursery, autojump_clock):
    daemon = await start_daemon(nursery, tmp_path, **s3.settings(
        "calld-unreachable", artifacts_retention="publish-and-delete", publish_endpoint_url=f"http://127.0.0.1:{free_port()}"))
    async with ControlClient(daemon.settings.calld_socket) as client:
        await client.provision("alice")
        result = await ask(client)
        assert result["status"] == "answered" and "9 AM to 5 PM" in result["answer_text"]
        shown = await until_publication(client, result["run_id"], lambda p: p["attempts"] >= 1)
        pub = shown["publication"]
        assert pub["status"] == "pending" and pub["last_error"]["code"] == "Unreachable" and pub["last_error"]["retryable"]
        run_dir = daemon.settings.artifacts_dir / result["transcript_ref"].split("/")[0]
        assert json.loads((run_dir / "result.json").read_text()) == result
        assert json.loads((run_dir / ERROR_FILE).read_text())["code"] == "Unreachable"
        assert (run_dir / "audio" / "inbound.wav").is_file()
        with pytest.raises(ControlError, match="not published yet.*Unreachable"):
            await client.published_objects(result["run_id"])
    await daemon.shutdown(drain_s=0)


async def test_a_hanging_store_never_holds_a_result_or_the_event_loop(tmp_path, nursery, autojump_clock):
    store = HangingStore()
    try:
        daemon = await start_daemon(nursery, tmp_path, artifacts_retention="publish", publish_bucket="calld-hangs",
                                    publish_endpoint_url=store.url, publish_access_key_id="AKIAHANGS", publish_secret_access_key="hanging-store-secret-0123456789")
        async with ControlClient(daemon.settings.calld_socket) as client:
            await client.provision("alice")
            first = await ask(client)
            # until the upload is stuck in its worker thread (waited for in real time, in a thread)
            assert await trio.to_thread.run_sync(store.accepted.wait, 30)
            second = await ask(client, name="Grace")  # a whole call, while the upload hangs
            assert first["status"] == second["status"] == "answered"
            assert (await client.show(first["run_id"]))["publication"]["attempts"] == 0
            store.released.set()
            shown = await until_publication(client, first["run_id"], lambda p: p["attempts"] >= 1)
            assert shown["publication"]["last_error"]["retryable"] is True
        await daemon.shutdown(drain_s=0)
    finally:
        store.close()


def test_calld_ctl_publish_check(tmp_path, s3, monkeypatch, capsys):
    bucket = s3.new_bucket()
    for name, value in s3.settings(bucket).items():
        monkeypatch.setenv(name.upper(), str(value))
    monkeypatch.setenv("CALLD_STATE_DIR", str(tmp_path))
    assert ctl_main(["--socket", str(tmp_path / "none.sock"), "publish", "check"]) == EXIT_OK
    lines = capsys.readouterr().out.splitlines()
    assert [line.split()[:2] for line in lines] == [["[PASS]", "write"], ["[PASS]", "read"], ["[PASS]", "delete"]]
    monkeypatch.setenv("PUBLISH_BUCKET", "calld-not-there")
    assert ctl_main(["--socket", str(tmp_path / "none.sock"), "publish", "check"]) == EXIT_VERIFY_FAILED
    assert "NoSuchBucket" in capsys.readouterr().out

