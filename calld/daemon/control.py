"""The control API for calld-ctl: HTTP on a Unix socket, JSON in, JSON or NDJSON out.

Every body is validated with pydantic before anything happens; a refusal says what
to fix, writes nothing and places no call.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, ValidationError
from quart import Response, request
from quart_trio import QuartTrio

from calld.domain.ids import UserId
from calld.domain.requests import AskRequest, BookRequest
from calld.ledger import RequestConflict, UnknownUser

if TYPE_CHECKING:
    from calld.daemon.service import Daemon

MAX_CONTROL_BYTES = 16 * 1024


class _AskBody(AskRequest):
    scenario: str | None = None  # stub mode: which scripted business answers


class _BookBody(BookRequest):
    scenario: str | None = None  # stub mode: which scripted restaurant answers


class _ProvisionBody(BaseModel):
    model_config = ConfigDict(extra="forbid")
    user: UserId


def _explain(exc: ValidationError) -> str:
    parts = []
    for e in exc.errors():
        where = ".".join(str(p) for p in e["loc"]) or "body"
        msg = e["msg"].removeprefix("Value error, ")
        parts.append(f"{where}: {msg}")
    return "; ".join(parts)


def _error(message: str, status: int) -> Response:
    return Response(json.dumps({"error": message}), status=status, content_type="application/json")


async def _json_body(model: type[BaseModel]) -> BaseModel | Response:
    raw = await request.get_data(cache=False)
    if len(raw) > MAX_CONTROL_BYTES:
        return _error(f"request too large ({len(raw)} bytes; the limit is {MAX_CONTROL_BYTES})", 413)
    try:
        data = json.loads(raw)
    except ValueError:
        return _error("the body is not JSON", 400)
    if not isinstance(data, dict):
        return _error("the body must be a JSON object", 400)
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        return _error(_explain(exc), 400)


def _ndjson(items: AsyncIterator[dict[str, Any]]) -> Response:
    async def lines() -> AsyncIterator[bytes]:
        async for item in items:
            yield (json.dumps(item, separators=(",", ":")) + "\n").encode()

    return Response(lines(), status=200, content_type="application/x-ndjson")


def create_control_app(daemon: Daemon) -> QuartTrio:
    from calld.daemon.service import AtCapacity, DaemonError, Draining

    app = QuartTrio("calld.control")
    app.config["MAX_CONTENT_LENGTH"] = MAX_CONTROL_BYTES
    app.config["RESPONSE_TIMEOUT"] = None  # an ask streams for as long as its call lasts
    app.config["BODY_TIMEOUT"] = 10

    async def place(model: type[BaseModel], start: Any) -> Response:
        body = await _json_body(model)
        if isinstance(body, Response):
            return body
        scenario = getattr(body, "scenario", None)
        stream = start(body, scenario)
        try:
            first = await anext(stream)  # validation and the ledger lookup happen before the first item
        except UnknownUser as exc:
            return _error(str(exc), 404)
        except RequestConflict as exc:
            return _error(str(exc), 409)
        except (Draining, AtCapacity) as exc:
            return _error(str(exc), 503)
        except (ValueError, DaemonError) as exc:
            return _error(str(exc), 400)

        async def rest() -> AsyncIterator[dict[str, Any]]:
            yield first
            async for item in stream:
                yield item

        return _ndjson(rest())

    @app.post("/v1/ask")
    async def ask() -> Response:
        return await place(_AskBody, lambda b, sc: daemon.ask(AskRequest(**b.model_dump(exclude={"scenario"})), scenario=sc))

    @app.post("/v1/book")
    async def book() -> Response:
        return await place(_BookBody, lambda b, sc: daemon.book(BookRequest(**b.model_dump(exclude={"scenario"})), scenario=sc))

    @app.get("/v1/calls")
    async def calls() -> dict[str, Any]:
        return {"calls": daemon.calls()}

    @app.get("/v1/calls/<ident>")
    async def show(ident: str) -> Response | dict[str, Any]:
        found = daemon.show(ident)
        if found is None:
            return _error(f"no call with run id or call_control_id {ident!r}", 404)
        return found

    @app.get("/v1/calls/<ident>/objects")
    async def published_objects(ident: str) -> Response | dict[str, Any]:
        try:
            return {"objects": await daemon.published_objects(ident)}
        except LookupError as exc:
            return _error(str(exc), 404)
        except DaemonError as exc:
            return _error(str(exc), 502)

    @app.get("/v1/tail")
    async def tail() -> Response:
        return _ndjson(daemon.tail())

    @app.post("/v1/dids")
    async def provision() -> Response | dict[str, Any]:
        body = await _json_body(_ProvisionBody)
        if isinstance(body, Response):
            return body
        assert isinstance(body, _ProvisionBody)
        try:
            return await daemon.provision(body.user)
        except DaemonError as exc:
            return _error(str(exc), 502)

    @app.get("/v1/dids")
    async def dids() -> dict[str, Any]:
        return {"dids": daemon.dids()}

    @app.errorhandler(404)
    async def not_found(_exc: Exception) -> Response:
        return _error(f"no such control route: {request.method} {request.path}", 404)

    @app.errorhandler(413)
    async def too_large(_exc: Exception) -> Response:
        return _error(f"request too large (the limit is {MAX_CONTROL_BYTES} bytes)", 413)

    @app.errorhandler(405)
    async def bad_method(_exc: Exception) -> Response:
        return _error(f"{request.method} is not allowed on {request.path}", 405)

    return app
