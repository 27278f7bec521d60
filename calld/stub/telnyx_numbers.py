"""A stateful stub of Telnyx's numbers API, served from raw fixtures through httpx.MockTransport.

It keeps what Telnyx would keep: the numbers a search offered (only those can be ordered),
the orders (pending until they have been read `pending_gets` times, then success, or
failure when told to fail), and the numbers the account owns once an order succeeds.
It counts every request per endpoint, so a test can say "one order" at the wire.

Fault knobs, each for the next `times` requests to one endpoint: `rate_limit` (429 with
Retry-After), `server_error` (5xx), `interrupt` (the connection drops, before Telnyx acts
or after it acted and the answer was lost); and `fail_orders` for orders that end in failure.

It answers only /v2/available_phone_numbers, /v2/number_orders[...] and /v2/phone_numbers[...];
anything else is a clear 404, and `or_else(other)` hands those to another handler (e.g. the
stub world's /v2/calls).
"""

from __future__ import annotations

import json
import re
from collections import Counter, deque
from collections.abc import Awaitable, Callable
from typing import Any, Literal

import httpx
import trio
from attrs import define, frozen

from calld.adapters.fixtures import load_fixture

Endpoint = Literal["available_numbers", "create_order", "get_order", "list_orders", "list_phone_numbers"]
Handler = Callable[[httpx.Request], httpx.Response | Awaitable[httpx.Response]]

PREFIXES = ("/v2/available_phone_numbers", "/v2/number_orders", "/v2/phone_numbers")
# Fixture numbers come first; the rest of the fictional 555-01xx range backs them up.
_EXTRA_POOL = tuple(f"+1555555{n:04d}" for n in range(145, 200))


@frozen
class StubRequest:
    endpoint: Endpoint
    method: str
    path: str
    params: dict[str, str]
    body: Any  # parsed JSON, or None


@define
class _Fault:
    kind: Literal["status", "before", "after"]
    status: int = 0
    fixture: str = ""
    retry_after: float | None = None


def _error(status: int, fixture: str, **override: Any) -> httpx.Response:
    body = load_fixture("telnyx", fixture)
    body["errors"][0].update(override)
    return httpx.Response(status, json=body)


class StubNumbers:
    def __init__(self, *, pending_gets: int = 1, latency_s: float = 0.0, api_key: str | None = None) -> None:
        self.pending_gets = pending_gets  # reads that still say pending before an order resolves
        self.latency_s = latency_s  # each request takes this long (trio time), so tasks interleave
        self.api_key = api_key  # when set, requests must carry it as a bearer token
        self.counts: Counter[str] = Counter()
        self.seen: list[StubRequest] = []
        self.orders: dict[str, dict[str, Any]] = {}  # id -> wire object, as Telnyx holds it
        self.owned: dict[str, dict[str, Any]] = {}  # number -> phone number record
        self._reads: Counter[str] = Counter()
        self._failing: set[str] = set()
        self._fail_new_orders = False
        self._offered: set[str] = set()
        self._faults: dict[str, deque[_Fault]] = {}
        template = load_fixture("telnyx", "available_numbers")["data"]
        have = {n["phone_number"] for n in template}
        extra = [dict(template[0], phone_number=p) for p in _EXTRA_POOL if p not in have]
        self._pool: list[dict[str, Any]] = template + extra

    # -- knobs ---------------------------------------------------------------------------------------

    def fail_orders(self, on: bool = True) -> None:
        """Orders placed from now on end in failure (or, with on=False, succeed again)."""
        self._fail_new_orders = on

    def rate_limit(self, endpoint: Endpoint, times: int = 1, *, retry_after: float = 1.0, dials: bool = False) -> None:
        fixture = "error_429_dials" if dials else "error_429"
        self._add(endpoint, times, _Fault("status", 429, fixture, retry_after))

    def server_error(self, endpoint: Endpoint, times: int = 1, *, status: int = 503) -> None:
        self._add(endpoint, times, _Fault("status", status, "error_500"))

    def refuse(self, endpoint: Endpoint, status: int, fixture: str, times: int = 1) -> None:
        """Answer with a Telnyx error fixture (e.g. 403, error_403) without acting."""
        self._add(endpoint, times, _Fault("status", status, fixture))

    def interrupt(self, endpoint: Endpoint, times: int = 1, *, after: bool = True) -> None:
        """The connection drops: after Telnyx acted (the answer is lost) or before it saw anything."""
        self._add(endpoint, times, _Fault("after" if after else "before"))

    def _add(self, endpoint: Endpoint, times: int, fault: _Fault) -> None:
        self._faults.setdefault(endpoint, deque()).extend([fault] * times)

    def orders_for(self, customer_reference: str) -> list[dict[str, Any]]:
        return [o for o in self.orders.values() if o["customer_reference"] == customer_reference]

    # -- transport -----------------------------------------------------------------------------------

    def transport(self) -> httpx.MockTransport:
        return httpx.MockTransport(self)

    @staticmethod
    def handles(request: httpx.Request) -> bool:
        path = request.url.path
        return any(path == p or path.startswith(p + "/") for p in PREFIXES)

    def or_else(self, other: Handler) -> Callable[[httpx.Request], Awaitable[httpx.Response]]:
        """A handler that serves numbers here and everything else through `other`."""

        async def handler(request: httpx.Request) -> httpx.Response:
            if self.handles(request):
                return await self(request)
            resp = other(request)
            return resp if isinstance(resp, httpx.Response) else await resp

        return handler

    async def __call__(self, request: httpx.Request) -> httpx.Response:
        if self.latency_s > 0:
            await trio.sleep(self.latency_s)
        else:
            await trio.lowlevel.checkpoint()
        method, path = request.method, request.url.path
        route = self._route(method, path)
        if route is None:
            return _error(
                404,
                "error_404",
                detail=(
                    f"the stub numbers API serves only {', '.join(PREFIXES)}; there is no route for {method} {path}"
                ),
            )
        endpoint, order_id = route
        body = json.loads(request.content) if request.content else None
        self.counts[endpoint] += 1
        self.seen.append(StubRequest(endpoint, method, path, dict(request.url.params), body))
        if self.api_key is not None and request.headers.get("authorization") != f"Bearer {self.api_key}":
            return _error(401, "error_401")
        fault = self._faults.get(endpoint)
        if fault:
            f = fault.popleft()
            if f.kind == "before":
                raise httpx.ConnectError("stub: connection refused before Telnyx saw the request", request=request)
            if f.kind == "status":
                headers = {"Retry-After": f"{f.retry_after:g}"} if f.retry_after is not None else {}
                resp = _error(f.status, f.fixture)
                return httpx.Response(f.status, headers=headers, content=resp.content)
            self._serve(endpoint, order_id, request, body)  # Telnyx acted ...
            raise httpx.ReadTimeout("stub: the answer was lost on the way back", request=request)  # ... unseen
        return self._serve(endpoint, order_id, request, body)

    @staticmethod
    def _route(method: str, path: str) -> tuple[Endpoint, str | None] | None:
        if method == "GET" and path == "/v2/available_phone_numbers":
            return "available_numbers", None
        if method == "POST" and path == "/v2/number_orders":
            return "create_order", None
        if method == "GET" and path == "/v2/number_orders":
            return "list_orders", None
        if method == "GET" and (m := re.fullmatch(r"/v2/number_orders/([^/]+)", path)):
            return "get_order", m.group(1)
        if method == "GET" and path == "/v2/phone_numbers":
            return "list_phone_numbers", None
        return None

    def _serve(self, endpoint: Endpoint, order_id: str | None, request: httpx.Request, body: Any) -> httpx.Response:
        params = request.url.params
        if endpoint == "available_numbers":
            return self._search(params)
        if endpoint == "create_order":
            return self._create(body)
        if endpoint == "get_order":
            assert order_id is not None
            return self._read(order_id)
        if endpoint == "list_orders":
            ref = params.get("filter[customer_reference]")
            found = [o for o in self.orders.values() if ref is None or o["customer_reference"] == ref]
            listing = load_fixture("telnyx", "number_orders_list")
            listing["data"] = found
            listing["meta"]["total_results"] = len(found)
            return httpx.Response(200, json=listing)
        return self._owned_list(params)

    def _search(self, params: httpx.QueryParams) -> httpx.Response:
        if params.get("filter[country_code]") != "US":
            return _error(
                422,
                "error_422",
                code="10015",
                title="Bad Request",
                detail="the stub has US numbers only",
                source={"pointer": "/filter/country_code"},
            )
        wanted = {f for f in (params.get("filter[features]") or "").split(",") if f}
        taken = set(self.owned) | {n["phone_number"] for o in self.orders.values() for n in o["phone_numbers"]}
        limit = int(params.get("filter[limit]") or 10)
        found = [
            n for n in self._pool if n["phone_number"] not in taken and wanted <= {f["name"] for f in n["features"]}
        ][:limit]
        self._offered |= {n["phone_number"] for n in found}
        listing = load_fixture("telnyx", "available_numbers")
        listing["data"] = found
        listing["meta"]["total_results"] = len(found)
        return httpx.Response(200, json=listing)

    def _create(self, body: Any) -> httpx.Response:
        numbers = (body or {}).get("phone_numbers") or []
        if not numbers:
            return _error(
                422,
                "error_422",
                code="10004",
                title="Missing required parameter",
                detail="phone_numbers must name at least one number",
                source={"pointer": "/phone_numbers"},
            )
        taken = set(self.owned) | {n["phone_number"] for o in self.orders.values() for n in o["phone_numbers"]}
        for i, entry in enumerate(numbers):
            number = entry.get("phone_number")
            if number not in self._offered or number in taken:
                return _error(
                    422,
                    "error_422",
                    code="10015",
                    title="Bad Request",
                    detail=f"{number} is not available: only numbers from a recent search can be ordered",
                    source={"pointer": f"/phone_numbers/{i}/phone_number"},
                )
        order = load_fixture("telnyx", "number_order_pending")["data"]
        n = len(self.orders) + 1
        order["id"] = f"5ab0c0de-0000-4000-8000-{n:012d}"
        template = order["phone_numbers"][0]
        order["phone_numbers"] = [
            dict(template, id=f"0dd0c0de-0000-4000-8000-{n:08d}{i:04d}", phone_number=e["phone_number"])
            for i, e in enumerate(numbers)
        ]
        order["phone_numbers_count"] = len(numbers)
        order["connection_id"] = body.get("connection_id")
        order["customer_reference"] = body.get("customer_reference")
        self.orders[order["id"]] = order
        if self._fail_new_orders:
            self._failing.add(order["id"])
        return httpx.Response(200, json={"data": order})

    def _read(self, order_id: str) -> httpx.Response:
        order = self.orders.get(order_id)
        if order is None:
            return _error(404, "error_404", detail=f"there is no number order {order_id}")
        self._reads[order_id] += 1
        if order["status"] == "pending" and self._reads[order_id] > self.pending_gets:
            self._resolve(order)
        return httpx.Response(200, json={"data": order})

    def _resolve(self, order: dict[str, Any]) -> None:
        outcome = "number_order_failure" if order["id"] in self._failing else "number_order_success"
        final = load_fixture("telnyx", outcome)["data"]
        order["status"] = final["status"]
        order["requirements_met"] = final["requirements_met"]
        order["updated_at"] = final["updated_at"]
        template = final["phone_numbers"][0]
        for n in order["phone_numbers"]:
            n.update(
                status=template["status"],
                requirements_status=template["requirements_status"],
                requirements_met=template["requirements_met"],
            )
        if order["status"] != "success":
            return
        record = load_fixture("telnyx", "phone_numbers")["data"][0]
        for n in order["phone_numbers"]:
            self.owned[n["phone_number"]] = dict(
                record,
                id=f"{len(self.owned) + 1:019d}",
                phone_number=n["phone_number"],
                connection_id=order["connection_id"],
                customer_reference=order["customer_reference"],
            )

    def _owned_list(self, params: httpx.QueryParams) -> httpx.Response:
        found = list(self.owned.values())
        for key in ("customer_reference", "phone_number", "status", "connection_id"):
            if (want := params.get(f"filter[{key}]")) is not None:
                found = [n for n in found if n.get(key) == want]
        listing = load_fixture("telnyx", "phone_numbers")
        listing["data"] = found
        listing["meta"]["total_results"] = len(found)
        return httpx.Response(200, json=listing)
