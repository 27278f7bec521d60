"""The bucket: boto3 against any S3-compatible store (AWS S3, Cloudflare R2, MinIO).

Why boto3 in a worker thread: it is the maintained S3 client every one of those stores
documents, it signs requests and verifies checksums itself, and its clients are safe to
share between threads. The async ports of it (aiobotocore) run on asyncio's aiohttp, which
trio cannot drive. Everything here is synchronous and blocking: the trio side calls it
through `trio.to_thread.run_sync`, never on the event loop.

Error handling: every failure comes out as StoreError, saying what was being done, whether
trying again later can help (retryable) and what an operator should fix.
"""

from __future__ import annotations

import base64
import hashlib
import secrets
from pathlib import Path
from typing import Any

import boto3
import botocore.exceptions
from attrs import frozen
from botocore.config import Config

from calld.settings import Settings

# Short timeouts: a publish is retried by the background task, a stuck socket must not hold it
# (an endpoint that accepts and never answers costs one attempt at most 2 x 15 s, and holds one of
# the publisher's PUBLISH_CONCURRENCY slots, not the queue behind it).
_CONFIG = Config(
    connect_timeout=3,
    read_timeout=15,
    retries={"total_max_attempts": 2, "mode": "standard"},  # the first try and one retry
    signature_version="s3v4",  # R2 accepts only SigV4, presigned links included
    # Checksums only where we ask for them (SHA-256 on every upload): some S3-compatible stores
    # refuse the CRC32 trailers newer botocore sends by default.
    request_checksum_calculation="when_required",
    response_checksum_validation="when_required",
)

# `publish check` is interactive: one try each, and a store silent for 5 s is reported as unreachable.
CHECK_CONFIG = _CONFIG.merge(Config(read_timeout=5, retries={"total_max_attempts": 1, "mode": "standard"}))

_NOT_RETRYABLE = {
    "NoSuchBucket": "the bucket does not exist: create it, or fix PUBLISH_BUCKET",
    "InvalidBucketName": "fix PUBLISH_BUCKET",
    "InvalidAccessKeyId": "the store does not know this key: fix PUBLISH_ACCESS_KEY_ID",
    "SignatureDoesNotMatch": "the secret does not match the key: fix PUBLISH_SECRET_ACCESS_KEY",
    "AccessDenied": "the key may not do this: grant it PutObject, GetObject and DeleteObject on the bucket",
    "AllAccessDisabled": "the bucket is disabled at the store",
    "AuthorizationHeaderMalformed": "fix PUBLISH_REGION (R2 takes 'auto')",
    "PermanentRedirect": "the bucket is in another region: fix PUBLISH_REGION or PUBLISH_ENDPOINT_URL",
}


class StoreError(RuntimeError):
    def __init__(self, doing: str, code: str, message: str, *, retryable: bool, fix: str) -> None:
        super().__init__(f"{doing}: {code}: {message}")
        self.doing = doing
        self.code = code
        self.message = message
        self.retryable = retryable
        self.fix = fix

    def as_dict(self) -> dict[str, Any]:
        return {"doing": self.doing, "code": self.code, "message": self.message, "retryable": self.retryable, "fix": self.fix}


def classify(doing: str, exc: BaseException) -> StoreError:
    """One StoreError for whatever boto3 raised (or a local read failed with)."""
    if isinstance(exc, botocore.exceptions.ClientError):
        err = exc.response.get("Error", {})
        code = str(err.get("Code") or exc.response.get("ResponseMetadata", {}).get("HTTPStatusCode", "error"))
        message = str(err.get("Message") or exc)
        status = int(exc.response.get("ResponseMetadata", {}).get("HTTPStatusCode") or 0)
        if code in _NOT_RETRYABLE:
            return StoreError(doing, code, message, retryable=False, fix=_NOT_RETRYABLE[code])
        if status >= 500 or status in (408, 429) or code in ("SlowDown", "RequestTimeout", "BadDigest", "XAmzContentSHA256Mismatch"):
            return StoreError(doing, code, message, retryable=True, fix="the store had trouble; calld tries again")
        return StoreError(doing, code, message, retryable=False, fix="see the store's message")
    if isinstance(exc, botocore.exceptions.NoCredentialsError):
        return StoreError(doing, "NoCredentials", str(exc), retryable=False,
                          fix="set PUBLISH_ACCESS_KEY_ID and PUBLISH_SECRET_ACCESS_KEY")
    if isinstance(exc, (botocore.exceptions.EndpointConnectionError, botocore.exceptions.ConnectionError,
                        botocore.exceptions.ReadTimeoutError, botocore.exceptions.ConnectTimeoutError)):
        return StoreError(doing, "Unreachable", str(exc), retryable=True,
                          fix="the store cannot be reached: check PUBLISH_ENDPOINT_URL and the network; calld tries again")
    if isinstance(exc, OSError):
        return StoreError(doing, "LocalFile", str(exc), retryable=False, fix="the local file could not be read or written")
    return StoreError(doing, type(exc).__name__, str(exc), retryable=True, fix="unexpected; calld tries again")


def sha256_of(path: Path) -> tuple[str, int]:
    """(hex digest, size) of a file, read in chunks."""
    digest, size = hashlib.sha256(), 0
    with path.open("rb") as f:
        while chunk := f.read(1 << 20):
            digest.update(chunk)
            size += len(chunk)
    return digest.hexdigest(), size


@frozen
class StoredObject:
    name: str  # the artifact's name in the run directory, e.g. audio/inbound.wav
    key: str
    sha256: str  # hex
    size: int
    content_type: str

    def as_dict(self) -> dict[str, Any]:
        return {"name": self.name, "key": self.key, "sha256": self.sha256, "size": self.size, "content_type": self.content_type}


class Bucket:
    """One bucket on one store. Blocking; safe to use from several worker threads."""

    def __init__(self, settings: Settings, bucket: str | None = None, *, config: Config = _CONFIG) -> None:
        self.name = bucket or settings.publish_bucket
        if not self.name:
            raise StoreError("configuring", "NoBucket", "PUBLISH_BUCKET is not set", retryable=False,
                             fix="set PUBLISH_BUCKET (and the endpoint and keys) in .env")
        self.endpoint = settings.publish_endpoint_url or None
        secret = settings.publish_secret_access_key.get_secret_value()
        creds = ({"aws_access_key_id": settings.publish_access_key_id, "aws_secret_access_key": secret}
                 if settings.publish_access_key_id else {})
        # A session per Bucket: boto3's default session is shared module state and not thread-safe.
        self._s3 = boto3.session.Session().client(
            "s3", endpoint_url=self.endpoint, region_name=settings.publish_region, config=config, **creds
        )

    def where(self, key: str = "") -> str:
        return f"s3://{self.name}/{key}"

    def put_file(self, key: str, path: Path, content_type: str, name: str) -> StoredObject:
        """Upload one file with its SHA-256: the store checks it on receipt and keeps it."""
        doing = f"uploading {name} to {self.where(key)}"
        try:
            hex_digest, size = sha256_of(path)
            with path.open("rb") as body:
                self._s3.put_object(
                    Bucket=self.name, Key=key, Body=body, ContentType=content_type, ChecksumAlgorithm="SHA256",
                    ChecksumSHA256=base64.b64encode(bytes.fromhex(hex_digest)).decode(),
                )
        except Exception as exc:
            raise classify(doing, exc) from exc
        return StoredObject(name, key, hex_digest, size, content_type)

    def put_bytes(self, key: str, data: bytes, content_type: str) -> str:
        doing = f"uploading {self.where(key)}"
        digest = hashlib.sha256(data).digest()
        try:
            self._s3.put_object(Bucket=self.name, Key=key, Body=data, ContentType=content_type, ChecksumAlgorithm="SHA256",
                                ChecksumSHA256=base64.b64encode(digest).decode())
        except Exception as exc:
            raise classify(doing, exc) from exc
        return digest.hex()

    def get_bytes(self, key: str) -> bytes:
        try:
            return self._s3.get_object(Bucket=self.name, Key=key)["Body"].read()
        except Exception as exc:
            raise classify(f"reading {self.where(key)}", exc) from exc

    def delete(self, key: str) -> None:
        try:
            self._s3.delete_object(Bucket=self.name, Key=key)
        except Exception as exc:
            raise classify(f"deleting {self.where(key)}", exc) from exc

    def presign_get(self, key: str, expires_s: int = 900) -> str:
        """A URL anyone holding it may GET for `expires_s`: calld-ctl fetches with it, no keys needed."""
        try:
            return self._s3.generate_presigned_url("get_object", Params={"Bucket": self.name, "Key": key}, ExpiresIn=expires_s)
        except Exception as exc:
            raise classify(f"signing a link to {self.where(key)}", exc) from exc


@frozen
class CheckStep:
    step: str  # write | read | delete
    ok: bool
    detail: str


@frozen
class BucketCheck:
    where: str
    steps: tuple[CheckStep, ...]

    @property
    def ok(self) -> bool:
        return bool(self.steps) and all(s.ok for s in self.steps)

    def lines(self) -> list[str]:
        return [f"[{'PASS' if s.ok else 'FAIL'}] {s.step} {s.detail}" for s in self.steps]


def check_bucket(settings: Settings) -> BucketCheck:
    """Write a probe object, read it back, delete it: what publishing needs, proven. Blocking, and
    bounded: a store that never answers fails the step in about 5 s (CHECK_CONFIG)."""
    try:
        bucket = Bucket(settings, config=CHECK_CONFIG)
    except StoreError as exc:
        return BucketCheck("(no bucket)", (CheckStep("configure", False, f"{exc.message}; {exc.fix}"),))
    prefix = settings.publish_prefix + "/" if settings.publish_prefix else ""
    key = f"{prefix}.calld-probe/{secrets.token_hex(8)}"
    payload = secrets.token_bytes(32)
    steps: list[CheckStep] = []
    try:
        bucket.put_bytes(key, payload, "application/octet-stream")
        steps.append(CheckStep("write", True, bucket.where(key)))
        back = bucket.get_bytes(key)
        if back != payload:
            steps.append(CheckStep("read", False, f"{bucket.where(key)} came back different ({len(back)} bytes)"))
        else:
            steps.append(CheckStep("read", True, f"{bucket.where(key)} ({len(back)} bytes, identical)"))
        bucket.delete(key)
        steps.append(CheckStep("delete", True, bucket.where(key)))
    except StoreError as exc:
        step = exc.doing.split(" ", 1)[0]
        step = {"uploading": "write", "reading": "read", "deleting": "delete"}.get(step, step)
        steps.append(CheckStep(step, False, f"{exc.code}: {exc.message} ({exc.fix})"))
    return BucketCheck(bucket.where(), tuple(steps))
