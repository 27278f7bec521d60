"""The public app: Telnyx's webhooks and the /health probe (the media socket has a listener of
its own: calld.daemon.media_listener).

Routes translate and enqueue; they never run call logic inline (Telnyx wants an
answer within about 2 s).
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable

import trio
from quart import Response, request
from quart_trio import QuartTrio

from calld.adapters.telnyx_webhook import Webhook, WebhookError, parse_webhook
from calld.daemon.callbook import CallBook
from calld.daemon.forward import FORWARDED_HEADER

log = logging.getLogger("calld.public")

MAX_WEBHOOK_BYTES = 256 * 1024
WEBHOOK_ENQUEUE_BOUND_S = 1.0


# forward(owner, raw body, headers) -> the owner's HTTP status, or None when it was not reached
Forward = Callable[[int, bytes, dict[str, str]], Awaitable[int | None]]


def create_public_app(book: CallBook, *, serve_token: str, verify: Callable[[bytes, dict[str, str]], None] | None,
                      instance: int | None = None, forward: Forward | None = None) -> QuartTrio:
    """`verify` checks a webhook's signature and raises on a bad one (None: unsigned, stub only).
    `instance`: this daemon's CALLD_INSTANCE. `forward` sends a webhook for another daemon's call to
    that daemon (calld.daemon.forward); None: there is no public URL to send it through."""
    app = QuartTrio("calld.public")

    async def not_ours(webhook: Webhook, raw: bytes) -> tuple[dict[str, object], int]:
        """A webhook for no call in flight here. It is never acted on: it goes to the daemon its
        client_state names, or it is acknowledged and dropped with a log line.

        200 for what no daemon can act on (no client_state, another app's, or a call of this daemon's
        that has ended): Telnyx counts any other answer as a failed delivery and sends it again, then to
        the failover URL, where it is no more anyone's. 503 when the owner was not reached: Telnyx
        retries a 5xx (protocols/telnyx.md, webhooks), and the owner may answer next time."""
        owner = webhook.instance
        what = f"webhook {webhook.event_type} {webhook.event_id} (call {webhook.call_control_id})"
        if owner is None or owner == instance:
            log.info("%s for no call of ours: %s; acknowledged, not acted on", what,
                     "no calld client_state" if owner is None and webhook.run_id is None else "the call has ended")
            return {"ok": True, "note": "unknown call"}, 200
        if (sender := request.headers.get(FORWARDED_HEADER)) is not None:
            log.error("%s belongs to daemon %d and was forwarded here by daemon %s: the proxy's /d/%d/ rule does not "
                      "reach daemon %d; refused, not forwarded again", what, owner, sender, owner, owner)
            return {"error": f"misrouted: this is daemon {instance}, the call is daemon {owner}'s"}, 421
        if forward is None:
            log.error("%s belongs to daemon %d; refused: with no PUBLIC_WEBHOOK_URL there is no way to send it on", what, owner)
            return {"ok": True, "note": f"daemon {owner}'s call; not acted on here"}, 200
        status = await forward(owner, raw, dict(request.headers))
        if status is None or status >= 500:
            log.error("%s belongs to daemon %d, which did not take it (%s); Telnyx will send it again", what, owner,
                      "unreachable" if status is None else status)
            return {"error": f"daemon {owner} owns this call and did not answer"}, 503
        log.warning("%s belongs to daemon %d: forwarded (it answered %d)", what, owner, status)
        return {"ok": True, "note": f"forwarded to daemon {owner}"}, 200
    app.config["MAX_CONTENT_LENGTH"] = MAX_WEBHOOK_BYTES

    @app.get("/health")
    async def health() -> Response:
        return Response(f'{{"ok": true, "serve_token": "{serve_token}"}}', content_type="application/json")

    @app.post("/telnyx/webhook")
    async def telnyx_webhook() -> tuple[dict[str, object], int]:
        raw = await request.get_data(cache=False)
        if verify is not None:
            try:
                verify(raw, dict(request.headers))
            except ValueError as exc:
                log.warning("webhook refused: %s", exc)
                return {"error": f"signature: {exc}"}, 401
        try:
            webhook = parse_webhook(raw)
        except WebhookError as exc:
            log.warning("webhook refused: %s", exc)
            return {"error": str(exc)}, 400
        handle = book.for_webhook(webhook)
        if handle is None:
            return await not_ours(webhook, raw)
        with trio.move_on_after(WEBHOOK_ENQUEUE_BOUND_S) as scope:
            await handle.deliver_webhook(webhook)
        if scope.cancelled_caught:
            log.error("%s webhook %s dropped: the call is not keeping up", handle.plan.run_id, webhook.event_id)
            return {"error": "busy"}, 503  # Telnyx retries 5xx
        return {"ok": True}, 200

    # Whatever calld answers here is JSON a webhook sender (or a person with curl) can read, never
    # a framework's HTML page; a failure says nothing of calld's insides (the log has them).
    @app.errorhandler(404)
    async def not_found(_exc: Exception) -> tuple[dict[str, object], int]:
        return {"error": f"no such route: {request.method} {request.path} (webhooks: POST /telnyx/webhook; probe: GET /health)"}, 404

    @app.errorhandler(405)
    async def bad_method(_exc: Exception) -> tuple[dict[str, object], int]:
        return {"error": f"{request.method} is not allowed on {request.path}"}, 405

    @app.errorhandler(413)
    async def too_large(_exc: Exception) -> tuple[dict[str, object], int]:
        return {"error": f"body too large: a webhook is at most {MAX_WEBHOOK_BYTES} bytes"}, 413

    @app.errorhandler(500)
    async def internal(exc: Exception) -> tuple[dict[str, object], int]:
        cause = getattr(exc, "original_exception", None) or exc
        log.error("public request %s %s failed: %r", request.method, request.path, cause)
        return {"error": "calld failed on this request; it is in calld's log"}, 500

    return app
