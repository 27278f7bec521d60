"""A real S3-compatible server on loopback for the publishing tests: moto's server mode.

It runs in a child process (in a thread it would share the GIL with a test whose autojump
clock spins while it waits, and every request would crawl). It speaks the S3 REST API over
HTTP on a free loopback port; calld talks to it
through boto3 exactly as it would to R2 or MinIO. Credentials are enforced: an IAM user
with an access key is made first, then moto's request authentication is switched on
through its own HTTP control route, so a wrong key or secret is refused like a real store.
"""

from __future__ import annotations

import json
import secrets
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import boto3
import pytest
import trio

from tests.daemons import free_port

REGION = "us-east-1"


class MotoProcess:
    """`python -m moto.server` on 127.0.0.1:`port`, up when the constructor returns."""

    def __init__(self, port: int) -> None:
        self.port = port
        self._proc = subprocess.Popen([sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(port)],
                                      stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 60
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                return
            except OSError:
                if self._proc.poll() is not None or time.monotonic() > deadline:
                    self.stop()
                    raise RuntimeError(f"moto's server did not come up on port {port}") from None
                time.sleep(0.05)  # wall-clock ok: polls a child process until its port accepts, bounded by `deadline`

    def stop(self) -> None:
        self._proc.terminate()
        try:
            self._proc.wait(10)
        except subprocess.TimeoutExpired:
            self._proc.kill()
            self._proc.wait()


class S3Server:
    def __init__(self) -> None:
        self._server = MotoProcess(free_port())
        self.port = self._server.port
        self.url = f"http://127.0.0.1:{self.port}"
        iam = boto3.session.Session().client("iam", endpoint_url=self.url, region_name=REGION,
                                             aws_access_key_id="setup", aws_secret_access_key="setup")
        user = f"calld-{secrets.token_hex(4)}"
        iam.create_user(UserName=user)
        iam.put_user_policy(UserName=user, PolicyName="s3", PolicyDocument=json.dumps(
            {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": "s3:*", "Resource": "*"}]}))
        key = iam.create_access_key(UserName=user)["AccessKey"]
        self.key_id, self.secret = key["AccessKeyId"], key["SecretAccessKey"]
        self._auth(b"0")  # from here on every request must be signed by a known key

    def _auth(self, after: bytes) -> None:
        req = urllib.request.Request(f"{self.url}/moto-api/reset-auth", data=after, method="POST",
                                     headers={"Content-Type": "text/plain"})
        urllib.request.urlopen(req, timeout=10).read()

    @contextmanager
    def presigned_links_allowed(self) -> Iterator[None]:
        """moto's credential check reads only the Authorization header, not a presigned link's
        query-string signature (real S3, R2 and MinIO read both): it is off inside this block."""
        self._auth(b"inf")
        try:
            yield
        finally:
            self._auth(b"0")

    def client(self) -> Any:
        return boto3.session.Session().client("s3", endpoint_url=self.url, region_name=REGION,
                                              aws_access_key_id=self.key_id, aws_secret_access_key=self.secret)

    def new_bucket(self) -> str:
        name = f"calld-{secrets.token_hex(6)}"
        self.client().create_bucket(Bucket=name)
        return name

    def settings(self, bucket: str, **more: Any) -> dict[str, Any]:
        return {"publish_bucket": bucket, "publish_endpoint_url": self.url, "publish_region": REGION,
                "publish_access_key_id": self.key_id, "publish_secret_access_key": self.secret, **more}

    def stop(self) -> None:
        self._auth(b"inf")
        self._server.stop()


def start_on(port: int, bucket: str) -> MotoProcess:
    """Another moto server on a given port, holding an empty `bucket` (a store that was down comes
    up). It is a process of its own: it checks no credentials."""
    server = MotoProcess(port)
    boto3.session.Session().client("s3", endpoint_url=f"http://127.0.0.1:{port}", region_name=REGION,
                                   aws_access_key_id="any", aws_secret_access_key="any").create_bucket(Bucket=bucket)
    return server


class HangingStore:
    """A TCP listener that accepts and never answers until released, then closes every
    connection: an S3 endpoint that hangs, for proving the event loop never waits on it."""

    def __init__(self) -> None:
        self._sock = socket.socket()
        self._sock.bind(("127.0.0.1", 0))
        self._sock.listen(16)
        self._sock.settimeout(0.1)
        self.url = f"http://127.0.0.1:{self._sock.getsockname()[1]}"
        self.released = threading.Event()
        self.accepted = threading.Event()
        self.connections = 0  # accepted so far
        self._held: list[socket.socket] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self._sock.accept()
            except TimeoutError:
                if self.released.is_set():
                    self._drop()
                continue
            self.connections += 1
            self.accepted.set()
            self._held.append(conn)
            if self.released.is_set():
                self._drop()
        self._drop()

    def _drop(self) -> None:
        while self._held:
            self._held.pop().close()

    def close(self) -> None:
        self.released.set()
        self._stop.set()
        self._thread.join(5)
        self._sock.close()


async def receive_within(channel: trio.MemoryReceiveChannel[Any], real_s: float) -> Any:
    """The next item, or AssertionError after `real_s` seconds of wall time. A trio deadline would
    not do: on the autojump clock it fires as soon as every task waits, uploads in threads included."""

    async def watchdog() -> None:
        await trio.to_thread.run_sync(time.sleep, real_s, abandon_on_cancel=True)
        raise AssertionError(f"nothing arrived within {real_s} s of wall time")

    async with trio.open_nursery() as n:
        n.start_soon(watchdog)
        item = await channel.receive()
        n.cancel_scope.cancel()
    return item


@pytest.fixture
def autojump_clock():
    """pytest-trio's autojump clock, jumping after 2 ms of real idleness instead of at once.
    Virtual time still skips every wait; but the uploads run in worker threads (boto3), and
    with a threshold of 0 the run loop polls in a busy spin beside them and holds up the GIL
    they need: these tests ran 5 to 10 times slower. (Elsewhere the threshold stays 0: a stub
    call's hundreds of timer jumps would each cost 2 ms.)"""
    import trio.testing

    return trio.testing.MockClock(autojump_threshold=0.002)
