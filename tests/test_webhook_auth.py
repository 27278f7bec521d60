"""Ed25519 webhook signatures: what passes, and that every kind of failure says why."""

from __future__ import annotations

import base64
import json
import re

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from cryptography.hazmat.primitives.asymmetric.x25519 import X25519PrivateKey
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

from calld.adapters.fixtures import load_fixture
from calld.adapters.webhook_auth import (
    SIGNATURE_HEADER,
    TIMESTAMP_HEADER,
    WebhookAuthError,
    WebhookKeyError,
    generate_keypair,
    load_public_key,
    public_key_b64,
    sign_webhook,
    verify_webhook,
)

SIGNED_AT = 1_760_000_000
BODY = json.dumps(load_fixture("telnyx", "webhook_call_answered")).encode()


@pytest.fixture(scope="module")
def keys() -> tuple[Ed25519PrivateKey, str]:
    return generate_keypair()


def verify(
    keys: tuple[Ed25519PrivateKey, str], headers: dict[str, str], *, body: bytes = BODY, now: float = SIGNED_AT
) -> None:
    verify_webhook(body, headers, keys[1], now=now)


def rejected(keys: tuple[Ed25519PrivateKey, str], headers: dict[str, str], **kw: object) -> str:
    with pytest.raises(WebhookAuthError) as caught:
        verify(keys, headers, **kw)  # type: ignore[arg-type]
    assert str(caught.value) == f"webhook signature rejected: {caught.value.reason}"
    return caught.value.reason


def test_a_valid_signature_passes(keys: tuple[Ed25519PrivateKey, str]) -> None:
    headers = sign_webhook(BODY, keys[0], SIGNED_AT)
    assert headers == {SIGNATURE_HEADER: headers[SIGNATURE_HEADER], TIMESTAMP_HEADER: str(SIGNED_AT)}
    assert len(base64.b64decode(headers[SIGNATURE_HEADER])) == 64
    verify(keys, headers)
    verify(keys, headers, now=SIGNED_AT + 300)  # the window's edges are inside it
    verify(keys, headers, now=SIGNED_AT - 300)


def test_header_names_are_case_insensitive(keys: tuple[Ed25519PrivateKey, str]) -> None:
    headers = sign_webhook(BODY, keys[0], SIGNED_AT)
    verify(keys, {"Telnyx-Signature-Ed25519": headers[SIGNATURE_HEADER], "TELNYX-TIMESTAMP": str(SIGNED_AT)})


def test_the_empty_body_is_signed_too(keys: tuple[Ed25519PrivateKey, str]) -> None:
    verify(keys, sign_webhook(b"", keys[0], SIGNED_AT), body=b"")
    assert "bad signature" in rejected(keys, sign_webhook(b"", keys[0], SIGNED_AT), body=b" ")


def test_a_tampered_body_fails(keys: tuple[Ed25519PrivateKey, str]) -> None:
    headers = sign_webhook(BODY, keys[0], SIGNED_AT)
    tampered = BODY.replace(b"call.answered", b"call.hangup")
    assert tampered != BODY
    assert rejected(keys, headers, body=tampered).startswith("bad signature")
    # whitespace counts: the body must be the raw bytes, never re-serialized JSON
    assert rejected(keys, headers, body=json.dumps(json.loads(BODY), indent=1).encode()).startswith("bad signature")


def test_a_tampered_timestamp_fails(keys: tuple[Ed25519PrivateKey, str]) -> None:
    headers = sign_webhook(BODY, keys[0], SIGNED_AT) | {TIMESTAMP_HEADER: str(SIGNED_AT + 1)}
    assert rejected(keys, headers).startswith("bad signature")


def test_a_tampered_signature_fails(keys: tuple[Ed25519PrivateKey, str]) -> None:
    headers = sign_webhook(BODY, keys[0], SIGNED_AT)
    signature = bytearray(base64.b64decode(headers[SIGNATURE_HEADER]))
    signature[10] ^= 0x01
    headers[SIGNATURE_HEADER] = base64.b64encode(bytes(signature)).decode()
    assert rejected(keys, headers).startswith("bad signature")


def test_another_keys_signature_fails(keys: tuple[Ed25519PrivateKey, str]) -> None:
    other, _ = generate_keypair()
    assert rejected(keys, sign_webhook(BODY, other, SIGNED_AT)).startswith("bad signature")


@pytest.mark.parametrize(
    ("now", "message"),
    [
        (SIGNED_AT + 301, "timestamp is stale: signed 301 s ago, tolerance 300 s"),
        (SIGNED_AT + 86_400, "timestamp is stale: signed 86400 s ago, tolerance 300 s"),
        (SIGNED_AT - 301, "timestamp is 301 s in the future, tolerance 300 s"),
    ],
)
def test_stale_and_future_timestamps_fail_saying_by_how_much(
    keys: tuple[Ed25519PrivateKey, str], now: float, message: str
) -> None:
    assert rejected(keys, sign_webhook(BODY, keys[0], SIGNED_AT), now=now) == message


def test_the_tolerance_is_a_parameter(keys: tuple[Ed25519PrivateKey, str]) -> None:
    headers = sign_webhook(BODY, keys[0], SIGNED_AT)
    verify_webhook(BODY, headers, keys[1], now=SIGNED_AT + 500, tolerance_s=600)
    with pytest.raises(WebhookAuthError, match="tolerance 10 s"):
        verify_webhook(BODY, headers, keys[1], now=SIGNED_AT + 11, tolerance_s=10)


@pytest.mark.parametrize(
    ("drop", "message"),
    [
        ({SIGNATURE_HEADER}, f"missing header {SIGNATURE_HEADER}"),
        ({TIMESTAMP_HEADER}, f"missing header {TIMESTAMP_HEADER}"),
        ({SIGNATURE_HEADER, TIMESTAMP_HEADER}, f"missing header {SIGNATURE_HEADER} and {TIMESTAMP_HEADER}"),
    ],
)
def test_missing_headers_fail(keys: tuple[Ed25519PrivateKey, str], drop: set[str], message: str) -> None:
    headers = {k: v for k, v in sign_webhook(BODY, keys[0], SIGNED_AT).items() if k not in drop}
    assert rejected(keys, headers) == message
    assert rejected(keys, headers | {name: "" for name in drop}) == message  # empty is missing too


@pytest.mark.parametrize(
    ("signature", "message"),
    [
        ("not base64!", f"{SIGNATURE_HEADER} is not base64"),
        (base64.b64encode(bytes(63)).decode(), f"{SIGNATURE_HEADER} is 63 bytes; an Ed25519 signature is 64"),
        (base64.b64encode(bytes(65)).decode(), f"{SIGNATURE_HEADER} is 65 bytes; an Ed25519 signature is 64"),
    ],
)
def test_malformed_signatures_fail(keys: tuple[Ed25519PrivateKey, str], signature: str, message: str) -> None:
    headers = sign_webhook(BODY, keys[0], SIGNED_AT) | {SIGNATURE_HEADER: signature}
    assert rejected(keys, headers) == message


@pytest.mark.parametrize("timestamp", ["", " 1760000000", "1760000000.5", "-5", "soon", "１２３"])
def test_malformed_timestamps_fail(keys: tuple[Ed25519PrivateKey, str], timestamp: str) -> None:
    headers = sign_webhook(BODY, keys[0], SIGNED_AT) | {TIMESTAMP_HEADER: timestamp}
    reason = rejected(keys, headers)
    assert reason.startswith("missing header" if not timestamp else f"{TIMESTAMP_HEADER} is not Unix seconds")


def test_conflicting_duplicate_headers_fail(keys: tuple[Ed25519PrivateKey, str]) -> None:
    headers = sign_webhook(BODY, keys[0], SIGNED_AT)
    doubled = headers | {"Telnyx-Timestamp": str(SIGNED_AT - 1)}
    assert rejected(keys, doubled) == f"header {TIMESTAMP_HEADER} given more than once with different values"
    verify(keys, headers | {"Telnyx-Timestamp": str(SIGNED_AT)})  # the same value twice is harmless


def test_the_spki_form_of_the_key_works(keys: tuple[Ed25519PrivateKey, str]) -> None:
    spki = public_key_b64(keys[0], spki=True)
    assert len(base64.b64decode(spki)) == 44 and base64.b64decode(spki)[-32:] == base64.b64decode(keys[1])
    headers = sign_webhook(BODY, keys[0], SIGNED_AT)
    verify_webhook(BODY, headers, spki, now=SIGNED_AT)
    with pytest.raises(WebhookAuthError, match="bad signature"):
        verify_webhook(BODY + b" ", headers, spki, now=SIGNED_AT)


def test_a_string_timestamp_is_signed_as_given(keys: tuple[Ed25519PrivateKey, str]) -> None:
    headers = sign_webhook(BODY, keys[0], str(SIGNED_AT))
    assert headers[TIMESTAMP_HEADER] == str(SIGNED_AT)
    verify(keys, headers)


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


@pytest.mark.parametrize(
    ("key", "message"),
    [
        ("%%%", "not base64"),
        (_b64(bytes(31)), "decodes to 31 bytes; expected 32 (raw Ed25519) or 44 (SPKI DER)"),
        (_b64(bytes(44)), "44 bytes but not SPKI DER"),
        (
            _b64(
                X25519PrivateKey.generate().public_key().public_bytes(Encoding.DER, PublicFormat.SubjectPublicKeyInfo)
            ),
            "X25519PublicKey, not an Ed25519 key",
        ),
    ],
)
def test_an_unusable_key_is_a_setup_error_not_a_rejection(
    keys: tuple[Ed25519PrivateKey, str], key: str, message: str
) -> None:
    with pytest.raises(WebhookKeyError, match=re.escape(message)):
        load_public_key(key)
    with pytest.raises(WebhookKeyError):
        verify_webhook(BODY, sign_webhook(BODY, keys[0], SIGNED_AT), key, now=SIGNED_AT)
