"""Stub mode signs its webhooks like Telnyx does, so its public route can demand signatures too.

The daemon makes one Ed25519 key pair per process: the stub world signs with the private half,
and the public webhook route (and the stub's own delivery seam) verify with the public half.
An unsigned webhook from anyone who can reach the port ends nothing.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from calld.adapters.webhook_auth import WebhookAuthError, generate_keypair, sign_webhook, verify_webhook

Verifier = Callable[[bytes, dict[str, str]], None]


def webhook_verifier(public_key_b64: str) -> Verifier:
    """verify(raw, headers): raises ValueError saying what is wrong with the signature."""

    def verify(raw: bytes, headers: dict[str, str]) -> None:
        try:
            verify_webhook(raw, headers, public_key_b64, now=time.time())
        except WebhookAuthError as exc:
            raise ValueError(exc.reason) from None

    return verify


class StubSigner:
    def __init__(self) -> None:
        self._key, self.public_key = generate_keypair()

    def sign(self, raw: bytes) -> dict[str, str]:
        return sign_webhook(raw, self._key, int(time.time()))

    def verifier(self) -> Verifier:
        return webhook_verifier(self.public_key)
