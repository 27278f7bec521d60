"""The control API for calld-ctl: HTTP on a Unix socket, JSON in, JSON or NDJSON out.

Every body is validated with pydantic before anything happens; a refusal says what
to fix, writes nothing and places no call.
"""

from __future__ import annotations

import json
import logging
import sqlite3
from collections.abc import AsyncIterator
from typing import Any, Protocol, Self

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator
from quart import Response, request
from quart_trio import QuartTrio

from calld.daemon.callbook import CallBook
from calld.daemon.errors import AmbiguousCall, AtCapacity, DaemonError, DiskFull, Draining
from calld.domain.fields import FLAGS, field_named, for_api
from calld.domain.ids import UserId, typed_number
from calld.domain.requests import AskRequest, BookRequest
from calld.domain.words import control_problem
from calld.ledger import LedgerUnavailable, RequestConflict, UnknownUser
from calld.observe.metrics import Metrics
from calld.observe.painter import PictureError
from calld.observe.summary import line_may_be_up_words
from calld.policy.gate import Timing
from calld.policy.refusal import Refused


class ControlledDaemon(Protocol):
    """What the control API asks of the daemon. calld.daemon.service.Daemon is one; this module
    never imports the service, which builds the app from it."""

    metrics: Metrics
    callbook: CallBook
    region: str  # CALLD_REGION: a number typed without + is read as dialled here

    def ask(self, request: AskRequest, scenario: str | None = None, timing: Timing | None = None) -> AsyncIterator[dict[str, Any]]: ...
    def book(self, request: BookRequest, scenario: str | None = None, timing: Timing | None = None) -> AsyncIterator[dict[str, Any]]: ...
    def calls(self) -> list[dict[str, Any]]: ...
    async def show(self, ident: str) -> dict[str, Any] | None: ...
    async def request_status(self, request_id: str) -> dict[str, Any] | None: ...
    async def published_objects(self, ident: str) -> list[dict[str, Any]]: ...
    def tail(self) -> AsyncIterator[dict[str, Any]]: ...
    async def provision(self, user: UserId) -> dict[str, Any]: ...
    async def dids(self) -> list[dict[str, Any]]: ...
    async def queue(self, include_done: bool = False) -> list[dict[str, Any]]: ...
    async def cancel(self, request_id: str) -> dict[str, Any]: ...
    async def opt_outs(self) -> list[dict[str, Any]]: ...
    async def remove_opt_out(self, number: str) -> bool: ...
    async def history(self, **query: Any) -> list[dict[str, Any]]: ...
    def where(self) -> dict[str, Any]: ...
    def ui_link(self) -> str: ...
    async def detail(self, ident: str) -> dict[str, Any] | None: ...
    async def call_ident(self, ident: str) -> str: ...
    async def timeline(self, ident: str, suffix: str) -> bytes | None: ...
    async def prune(self, older_than_days: float, *, dry_run: bool = False) -> dict[str, Any]: ...

log = logging.getLogger("calld.control")

MAX_CONTROL_BYTES = 16 * 1024


class _Scheduling(BaseModel):
    """When to place the call: now (the default), when the calling window opens, or at a time."""

    when_open: bool = False
    at: str | None = Field(None, min_length=1, max_length=80)

    @field_validator("at", mode="before")
    @classmethod
    def _plain_at(cls, value: object) -> object:
        if isinstance(value, str) and (problem := control_problem(value)) is not None:
            raise ValueError(f"--at: {problem}")
        return value

    @model_validator(mode="after")
    def _one_way(self) -> Self:
        if self.when_open and self.at is not None:
            raise ValueError("give --when-open or --at, not both")
        return self

    def timing(self) -> Timing:
        return Timing(when_open=self.when_open, at=self.at)


_NOT_REQUEST = {"scenario", "when_open", "at"}


class _AskBody(AskRequest, _Scheduling):
    scenario: str | None = None  # stub mode: which scripted business answers


class _BookBody(BookRequest, _Scheduling):
    scenario: str | None = None  # stub mode: which scripted restaurant answers


class _ProvisionBody(BaseModel):
    model_config = ConfigDict(extra="forbid")
    user: UserId


class _PruneBody(BaseModel):
    model_config = ConfigDict(extra="forbid")
    older_than_days: float = Field(ge=0, le=36500, allow_inf_nan=False)
    dry_run: bool = False


def _explain(exc: ValidationError) -> str:
    """One part per problem, led by what to fix: a request's field as its flag (which _error names as the
    field), so a rule that names its flag itself ("--party must be ...") is not led by it twice."""
    parts = []
    for e in exc.errors():
        where = ".".join(str(p) for p in e["loc"])
        flag = FLAGS.get(where, where)
        msg = e["msg"].removeprefix("Value error, ")
        if e["type"] == "extra_forbidden":
            msg = "is not a field of this request"
        led = msg.startswith(flag) or not e["loc"]  # a rule of the whole request says what it is about
        parts.append(msg if led else f"{flag}: {msg}")
    return "; ".join(parts)


def _error(message: str, http_status: int, **more: Any) -> Response:
    """An error body: the message naming each request field as the JSON field (`party`), and the first
    one it names as "field" (calld-ctl's client turns them back into its flags: calld.domain.fields)."""
    text = for_api(message)
    body = {"error": text, **({"field": field} if (field := field_named(text)) else {}), **more}
    return Response(json.dumps(body), status=http_status, content_type="application/json")


def _no_call(ident: str, finished: str = "") -> Response:
    """404 for an id that names no call: every kind of id `show` takes, and where to find the right one."""
    return _error(f"no {finished}call with request id, run id or call_control_id {ident!r}; "
                  "calld-ctl history lists the calls with their ids", 404)


def _elsewhere(asked: str, other: dict[str, Any], mine: str) -> Response:
    """421 for a call another daemon on the shared ledger holds: in flight there, or finished with its
    files in that daemon's state dir. calld-ctl asks the next daemon of CALLD_SOCKET; `elsewhere` names
    the owner, so it can say which one it could not reach. Never a 404 nor "pruned": neither is true."""
    state = ("in flight" if other["request_status"] in ("placing", "in_flight")
             else f"finished ({other['status'] or other['request_status']}), its files kept by that daemon,")
    holder = f" ({other['holder']})" if other["holder"] else ""
    call = other["run_id"] if asked == other["run_id"] else f"{other['run_id']} ({asked})"
    return _error(f"call {call} is {state} on daemon {other['daemon']}{holder}, not on this daemon"
                  f"{f' ({mine})' if mine else ''}: ask daemon {other['daemon']}'s control socket"
                  f"{line_may_be_up_words(other)}", 421, elsewhere=other)


async def _json_body(model: type[BaseModel], context: dict[str, Any] | None = None) -> BaseModel | Response:
    raw = await request.get_data(cache=False)
    if len(raw) > MAX_CONTROL_BYTES:
        return _error(f"request too large ({len(raw)} bytes; the limit is {MAX_CONTROL_BYTES})", 413)
    try:
        data = json.loads(raw)
    except (ValueError, RecursionError):  # RecursionError: arrays nested thousands deep
        return _error("the body is not JSON", 400)
    if not isinstance(data, dict):
        return _error("the body must be a JSON object", 400)
    try:
        return model.model_validate(data, context=context)
    except ValidationError as exc:
        return _error(_explain(exc), 400)


def _ndjson(items: AsyncIterator[dict[str, Any]]) -> Response:
    async def lines() -> AsyncIterator[bytes]:
        async for item in items:
            yield (json.dumps(item, separators=(",", ":")) + "\n").encode()

    return Response(lines(), status=200, content_type="application/x-ndjson")


def create_control_app(daemon: ControlledDaemon) -> QuartTrio:
    app = QuartTrio("calld.control")
    app.config["MAX_CONTENT_LENGTH"] = MAX_CONTROL_BYTES
    app.config["RESPONSE_TIMEOUT"] = None  # an ask streams for as long as its call lasts
    app.config["BODY_TIMEOUT"] = 10

    def refused(rule: str, response: Response) -> Response:
        daemon.metrics.refused(rule)
        return response

    async def place(model: type[BaseModel], start: Any) -> Response:
        body = await _json_body(model, {"region": daemon.region})  # "to" as people type it, read as calld-ctl reads it
        if isinstance(body, Response):
            return refused("invalid_request", body)
        scenario = getattr(body, "scenario", None)
        stream = start(body, scenario)
        try:
            first = await anext(stream)  # validation and the ledger lookup happen before the first item
        except Refused as exc:  # the policy said no: nothing written, nothing dialled
            refusal = exc.refusal
            return refused(refusal.rule, _error(refusal.message, 403, status="refused", reason=refusal.rule,
                                                detail=for_api(refusal.message)))
        except UnknownUser as exc:
            return refused("unknown_user", _error(str(exc), 404))
        except RequestConflict as exc:
            return refused("request_conflict", _error(str(exc), 409))
        except Draining as exc:
            return refused("draining", _error(str(exc), 503))
        except AtCapacity as exc:
            return refused("max_calls", _error(str(exc), 503))
        except DiskFull as exc:  # 503: calld-ctl asks the next daemon, whose disk may have room
            return refused("disk_full", _error(str(exc), 503))
        except LedgerUnavailable as exc:  # nothing can be claimed, so nothing is dialled; calld-ctl exits 9
            return refused("ledger_unavailable", _error(f"{exc}; nothing was dialled, ask again once the ledger is back", 503))
        except (ValueError, DaemonError) as exc:
            return refused("invalid_request", _error(str(exc), 400))

        async def rest() -> AsyncIterator[dict[str, Any]]:
            yield first
            async for item in stream:
                yield item

        return _ndjson(rest())

    @app.post("/v1/ask")
    async def ask() -> Response:
        return await place(_AskBody, lambda b, sc: daemon.ask(AskRequest(**b.model_dump(exclude=_NOT_REQUEST)), scenario=sc,
                                                              timing=b.timing()))

    @app.post("/v1/book")
    async def book() -> Response:
        return await place(_BookBody, lambda b, sc: daemon.book(BookRequest(**b.model_dump(exclude=_NOT_REQUEST)), scenario=sc,
                                                                timing=b.timing()))

    async def elsewhere_or(asked: str, ident: str, missing: Response | dict[str, Any]) -> Response | dict[str, Any]:
        """A call not found here: another daemon's (421, naming it) or `missing`."""
        if (other := await daemon.lookup.elsewhere(ident)) is not None:
            return _elsewhere(asked, other, daemon.settings.instance_name)
        return missing

    @app.get("/v1/calls")
    async def calls() -> dict[str, Any]:
        return {"calls": daemon.lookup.calls()}

    @app.get("/v1/calls/<ident>")
    async def show(ident: str) -> Response | dict[str, Any]:
        try:
            found = await daemon.lookup.show(ident)
        except AmbiguousCall as exc:
            return _error(str(exc), 409)
        if found is None:
            return await elsewhere_or(ident, ident, _no_call(ident))
        return found

    @app.get("/v1/requests/<request_id>")
    async def request_status(request_id: str) -> Response | dict[str, Any]:
        found = await daemon.lookup.request_status(request_id)
        if found is None:
            return _error(f"no request {request_id!r} in the ledger", 404)
        return found

    @app.get("/v1/calls/<ident>/objects")
    async def published_objects(ident: str) -> Response | dict[str, Any]:
        try:
            return {"objects": await daemon.lookup.published_objects(ident)}
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
        return {"dids": await daemon.dids()}

    # -- policy: the queue of calls for later, and the opt-out list ------------------------------------

    @app.get("/v1/queue")
    async def queue() -> dict[str, Any]:
        return {"queue": await daemon.queue(include_done=request.args.get("all") == "1")}

    @app.delete("/v1/queue/<request_id>")
    async def cancel(request_id: str) -> Response | dict[str, Any]:
        try:
            return {"cancelled": await daemon.cancel(request_id)}
        except LookupError as exc:
            return _error(str(exc), 404)
        except ValueError as exc:
            return _error(str(exc), 409)

    @app.get("/v1/optouts")
    async def optouts() -> dict[str, Any]:
        return {"optouts": await daemon.opt_outs()}

    @app.delete("/v1/optouts/<number>")
    async def remove_optout(number: str) -> Response | dict[str, Any]:
        try:
            number = typed_number(number, daemon.region)  # the list holds E.164: "(212) 555-0142" is +12125550142
        except ValueError as exc:
            return _error(str(exc), 400)
        if not await daemon.remove_opt_out(number):
            return _error(f"{number} is not on the opt-out list; calld-ctl optout list shows it", 404)
        return {"removed": number}

    # -- observing (issue 16): Prometheus text, the ledger's history ---------------------------------

    @app.get("/metrics")
    async def metrics() -> Response:
        from calld.observe.metrics import CONTENT_TYPE

        return Response(daemon.metrics.exposition(), status=200, content_type=CONTENT_TYPE)

    @app.post("/v1/ui/link")
    async def ui_link() -> Response | dict[str, Any]:
        try:
            return {"url": daemon.ui_link()}
        except DaemonError as exc:
            return _error(str(exc), 409)

    @app.get("/v1/where")
    async def where() -> dict[str, Any]:
        return daemon.where()

    @app.get("/v1/history")
    async def history() -> Response | dict[str, Any]:
        from calld.observe.history import BadQuery

        args = request.args
        try:
            limit = int(args.get("limit", "20"))
        except ValueError:
            return _error(f"limit: {args.get('limit')!r} is not a whole number", 400)
        try:
            rows = await daemon.lookup.history(user=args.get("user"), status=args.get("status"), since=args.get("since"), limit=limit)
        except BadQuery as exc:
            return _error(str(exc), 400)
        return {"calls": rows}

    @app.get("/v1/calls/<asked>/detail")
    async def detail(asked: str) -> Response | dict[str, Any]:
        ident = await daemon.lookup.call_ident(asked)
        if daemon.callbook.find(ident) is not None:
            return _error(f"call {ident} is still in flight; its artifacts are written when it ends (calld-ctl calls)", 409)
        found = await daemon.lookup.detail(ident)
        if found is None or found.get("pruned"):  # no files here: pruned, or kept by the daemon that owns the call
            return await elsewhere_or(asked, ident, found if found is not None else _no_call(asked))
        return found

    @app.get("/v1/calls/<asked>/timeline.<suffix>")
    async def timeline(asked: str, suffix: str) -> Response:
        kinds = {"svg": "image/svg+xml", "png": "image/png"}
        if suffix not in kinds:
            return _error(f"a timeline is drawn as .svg or .png, not .{suffix}", 400)
        ident = await daemon.lookup.call_ident(asked)
        if daemon.callbook.find(ident) is not None:
            return _error(f"call {ident} is still in flight; its timeline is drawn when it ends", 409)
        try:
            picture = await daemon.lookup.timeline(ident, suffix)
        except PictureError as exc:
            return _error(f"the timeline of {ident} could not be drawn: {exc}", 500)
        if picture is None:
            return await elsewhere_or(asked, ident, _no_call(asked, finished="finished "))
        return Response(picture, status=200, content_type=kinds[suffix])

    @app.post("/v1/prune")
    async def prune() -> Response | dict[str, Any]:
        body = await _json_body(_PruneBody)
        if isinstance(body, Response):
            return body
        assert isinstance(body, _PruneBody)
        return await daemon.prune(body.older_than_days, dry_run=body.dry_run)

    @app.errorhandler(404)
    async def not_found(_exc: Exception) -> Response:
        return _error(f"no such control route: {request.method} {request.path}", 404)

    @app.errorhandler(413)
    async def too_large(_exc: Exception) -> Response:
        return _error(f"request too large (the limit is {MAX_CONTROL_BYTES} bytes)", 413)

    @app.errorhandler(sqlite3.Error)
    async def ledger_failed(exc: sqlite3.Error) -> Response:
        log.error("ledger error on %s %s: %s", request.method, request.path, exc)
        return _error(f"the ledger failed ({exc}); nothing more was done. Check it with: calld-ctl ledger check", 500)

    @app.errorhandler(500)
    async def internal(exc: Exception) -> Response:
        cause = getattr(exc, "original_exception", None) or exc
        log.error("control request %s %s failed: %r", request.method, request.path, cause)
        return _error(f"calld failed on this request: {type(cause).__name__}: {cause}", 500)

    @app.errorhandler(405)
    async def bad_method(_exc: Exception) -> Response:
        return _error(f"{request.method} is not allowed on {request.path}", 405)

    return app
