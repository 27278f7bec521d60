"""The public app: Telnyx's webhooks and the /health probe (the media socket has a listener of
its own: calld.daemon.media_listener).

Routes translate and enqueue; they never run call logic inline (Telnyx wants an
answer within about 2 s).
"""

from __future__ import annotations

import logging
from collections.abc import Callable

import trio
from quart import Response, request
from quart_trio import QuartTrio

from calld.adapters.telnyx_webhook import WebhookError, parse_webhook
from calld.daemon.callbook import CallBook

log = logging.getLogger("calld.public")

MAX_WEBHOOK_BYTES = 256 * 1024
WEBHOOK_ENQUEUE_BOUND_S = 1.0


def create_public_app(book: CallBook, *, serve_token: str, verify: Callable[[bytes, dict[str, str]], None] | None) -> QuartTrio:
    """`verify` checks a webhook's signature and raises on a bad one (None: unsigned, stub only)."""
    app = QuartTrio("calld.public")
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
            log.info("webhook %s %s for no call of ours (%s)", webhook.event_type, webhook.event_id, webhook.call_control_id)
            return {"ok": True, "note": "unknown call"}, 200
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
