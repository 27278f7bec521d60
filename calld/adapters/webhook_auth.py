"""Telnyx webhook signatures: Ed25519 over `telnyx-timestamp|raw body` (telnyx.md §2.5).

`verify_webhook` checks one request against the account's public key (TELNYX_PUBLIC_KEY)
and raises WebhookAuthError saying why it failed; the caller answers 401 and enqueues
nothing. The clock is the caller's (`now`), so tests and the daemon decide what time it is.
`sign_webhook` and `generate_keypair` are the other side, for tests and simulators.
"""

from __future__ import annotations

import base64
import binascii
import functools
from collections.abc import Mapping

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat, load_der_public_key

SIGNATURE_HEADER = "telnyx-signature-ed25519"
TIMESTAMP_HEADER = "telnyx-timestamp"
TOLERANCE_S = 300.0  # the official SDK's window; Telnyx documents none (§2.5.6)
_SIGNATURE_BYTES = 64
_RAW_KEY_BYTES = 32
_SPKI_KEY_BYTES = 44  # DER SubjectPublicKeyInfo around a 32-byte Ed25519 key


class WebhookAuthError(Exception):
    """A webhook that must not be trusted; `reason` says why (safe to log, never echoes secrets)."""

    def __init__(self, reason: str) -> None:
        super().__init__(f"webhook signature rejected: {reason}")
        self.reason = reason


class WebhookKeyError(ValueError):
    """The configured public key is unusable: a setup problem, not a bad request."""


@functools.lru_cache(maxsize=8)
def load_public_key(public_key_b64: str) -> Ed25519PublicKey:
    """TELNYX_PUBLIC_KEY as a key: base64 of the raw 32-byte key or of its 44-byte SPKI DER form.

    Call it once at startup so a bad key fails loudly there, not as a 401 for every webhook.
    """
    try:
        raw = base64.b64decode(public_key_b64.strip(), validate=True)
    except (binascii.Error, ValueError):
        raise WebhookKeyError("the Telnyx public key is not base64") from None
    if len(raw) == _RAW_KEY_BYTES:
        return Ed25519PublicKey.from_public_bytes(raw)
    if len(raw) == _SPKI_KEY_BYTES:
        try:
            key = load_der_public_key(raw)
        except ValueError:
            raise WebhookKeyError("the Telnyx public key is 44 bytes but not SPKI DER") from None
        if not isinstance(key, Ed25519PublicKey):
            raise WebhookKeyError(f"the Telnyx public key is a {type(key).__name__}, not an Ed25519 key")
        return key
    raise WebhookKeyError(
        f"the Telnyx public key decodes to {len(raw)} bytes; expected {_RAW_KEY_BYTES} (raw Ed25519) "
        f"or {_SPKI_KEY_BYTES} (SPKI DER)"
    )


def _header(headers: Mapping[str, str], name: str) -> str | None:
    """The header's value, matching its name case-insensitively; two different values are refused."""
    values = {value for key, value in headers.items() if key.lower() == name}
    if len(values) > 1:
        raise WebhookAuthError(f"header {name} given more than once with different values")
    return values.pop() if values else None


def verify_webhook(
    raw_body: bytes,
    headers: Mapping[str, str],
    public_key_b64: str,
    *,
    now: float,
    tolerance_s: float = TOLERANCE_S,
) -> None:
    """Return if Telnyx signed exactly `raw_body` at a time within `tolerance_s` of `now`.

    Raises WebhookAuthError (missing header, bad base64, wrong signature length, stale or
    future timestamp, bad signature) or WebhookKeyError (the configured key is unusable).
    """
    key = load_public_key(public_key_b64)
    signature_b64 = _header(headers, SIGNATURE_HEADER)
    timestamp = _header(headers, TIMESTAMP_HEADER)
    if not signature_b64 or not timestamp:
        missing = [
            name for name, value in ((SIGNATURE_HEADER, signature_b64), (TIMESTAMP_HEADER, timestamp)) if not value
        ]
        raise WebhookAuthError(f"missing header {' and '.join(missing)}")
    if not (timestamp.isascii() and timestamp.isdigit() and len(timestamp) <= 12):  # 12 digits: past the year 30000
        raise WebhookAuthError(f"{TIMESTAMP_HEADER} is not Unix seconds: {timestamp[:32]!r}")
    try:
        signature = base64.b64decode(signature_b64, validate=True)
    except (binascii.Error, ValueError):
        raise WebhookAuthError(f"{SIGNATURE_HEADER} is not base64") from None
    if len(signature) != _SIGNATURE_BYTES:
        raise WebhookAuthError(
            f"{SIGNATURE_HEADER} is {len(signature)} bytes; an Ed25519 signature is {_SIGNATURE_BYTES}"
        )
    skew = now - int(timestamp)
    if skew > tolerance_s:
        raise WebhookAuthError(f"timestamp is stale: signed {skew:.0f} s ago, tolerance {tolerance_s:.0f} s")
    if -skew > tolerance_s:
        raise WebhookAuthError(f"timestamp is {-skew:.0f} s in the future, tolerance {tolerance_s:.0f} s")
    try:
        key.verify(signature, timestamp.encode("ascii") + b"|" + raw_body)
    except InvalidSignature:
        raise WebhookAuthError("bad signature: not made by this key over this timestamp and body") from None


# -- the signing side, for tests and simulators -----------------------------------------------------


def generate_keypair() -> tuple[Ed25519PrivateKey, str]:
    """A fresh private key and its public key as Telnyx shows it (base64 of the raw 32 bytes)."""
    private_key = Ed25519PrivateKey.generate()
    return private_key, public_key_b64(private_key)


def public_key_b64(private_key: Ed25519PrivateKey, *, spki: bool = False) -> str:
    """The matching public key, base64 of the raw 32 bytes or (spki=True) of its SPKI DER form."""
    public = private_key.public_key()
    raw = (
        public.public_bytes(Encoding.DER, PublicFormat.SubjectPublicKeyInfo)
        if spki
        else public.public_bytes(Encoding.Raw, PublicFormat.Raw)
    )
    return base64.b64encode(raw).decode("ascii")


def sign_webhook(raw_body: bytes, private_key: Ed25519PrivateKey, timestamp: int | str) -> dict[str, str]:
    """The headers Telnyx would send with `raw_body` signed at `timestamp` (Unix seconds)."""
    stamp = str(int(timestamp)) if isinstance(timestamp, int) else timestamp
    signature = private_key.sign(stamp.encode("ascii") + b"|" + raw_body)
    return {SIGNATURE_HEADER: base64.b64encode(signature).decode("ascii"), TIMESTAMP_HEADER: stamp}
