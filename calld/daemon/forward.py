"""A webhook for a call another daemon placed: sent on to that daemon, never acted on here.

Telnyx posts each call's webhooks to the per-call URL under /d/N/ (docs/scaling.md), so a webhook
reaches a daemon that does not own its call only by the application-level URL (Telnyx's fallback)
or a proxy rule that sends /d/N/ to the wrong daemon. The call's client_state names its daemon;
the webhook goes on, byte for byte with its signature headers, to that daemon's own URL on the
public origin. That is safe: the signature was checked here first and is checked again there; the
target URL is built from this daemon's settings and the instance number alone, never from the body;
and a webhook that was forwarded once is never forwarded again (FORWARDED_HEADER), so a proxy rule
that loops cannot make daemons bounce one webhook between them.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping

import httpx

from calld.adapters.webhook_auth import SIGNATURE_HEADER, TIMESTAMP_HEADER

log = logging.getLogger("calld.forward")

FORWARDED_HEADER = "calld-forwarded-by"  # the daemon that sent it on; its value is that daemon's number
FORWARD_BOUND_S = 1.5  # Telnyx wants its answer within about 2 s, and this daemon answers after the forward


async def forward_webhook(client: httpx.AsyncClient, url: str, raw: bytes, headers: Mapping[str, str],
                          sender: int | None) -> int | None:
    """POST `raw` to `url` with the signature headers; the owner's status, or None when unreachable."""
    kept = {k: v for k, v in headers.items() if k.lower() in (SIGNATURE_HEADER, TIMESTAMP_HEADER, "content-type")}
    kept[FORWARDED_HEADER] = str(sender or 0)
    try:
        resp = await client.post(url, content=raw, headers=kept, timeout=FORWARD_BOUND_S)
    except httpx.HTTPError as exc:
        log.error("forwarding a webhook to %s failed: %r", url, exc)
        return None
    return resp.status_code
