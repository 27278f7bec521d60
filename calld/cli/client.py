"""The control client: what calld-ctl (and the tests) use to talk to the daemon.

Async over httpx's Unix-socket transport, so it runs in the daemon's own trio loop in
tests and under `trio.run` in the CLI. Errors say what to do next.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import aclosing
from pathlib import Path
from typing import Any
from urllib.parse import quote

import httpx

from calld.domain.fields import for_ctl


class DaemonUnreachable(ConnectionError):
    def __init__(self, path: Path) -> None:
        super().__init__(
            f"no calld is listening on {path}.\n"
            f"Start one with:  uv run calld serve --socket {path}\n"
            f"or run a complete stub call with its own private daemon:  uv run calld demo"
        )
        self.path = path


class StreamBroken(ConnectionError):
    """The daemon was reached, then the connection broke before the answer was whole
    (the daemon died, or stopped mid-stream)."""

    def __init__(self, detail: str) -> None:
        super().__init__(f"the connection to calld broke: {detail}")
        self.detail = detail


class ControlError(RuntimeError):
    """The daemon refused the request; `message` is its own words, each request field it names (`party`)
    said as calld-ctl's flag (--party); `field` the first such field, if any; `elsewhere` (a 421) the
    daemon on the shared ledger that holds the call asked about (calld.daemon.control._elsewhere)."""

    def __init__(self, status: int, message: str, field: str | None = None, elsewhere: dict[str, Any] | None = None) -> None:
        message = for_ctl(message)
        super().__init__(message)
        self.status = status
        self.message = message
        self.field = field
        self.elsewhere = elsewhere


class OwnerUnreachable(DaemonUnreachable):
    """The call asked about is another daemon's, and no socket in CALLD_SOCKET reached that daemon."""

    def __init__(self, message: str, path: Path) -> None:
        ConnectionError.__init__(self, message)
        self.path = path


class ControlClient:
    def __init__(self, socket_path: Path, *, timeout: float = 10.0) -> None:
        self.path = socket_path
        transport = httpx.AsyncHTTPTransport(uds=str(socket_path), limits=httpx.Limits(max_connections=None))
        # read=None: an ask streams for as long as its call lasts.
        # No pool cap: one client may follow hundreds of calls at once (the load benchmark does).
        self._client = httpx.AsyncClient(
            transport=transport, base_url="http://calld", timeout=httpx.Timeout(timeout, read=None, pool=None),
            limits=httpx.Limits(max_connections=None, max_keepalive_connections=32),
        )

    async def __aenter__(self) -> ControlClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self._client.aclose()

    async def _request(self, method: str, path: str, body: dict[str, Any] | None = None) -> Any:
        try:
            resp = await self._client.request(method, path, json=body)
        except (httpx.ConnectError, FileNotFoundError, ConnectionRefusedError) as exc:
            raise DaemonUnreachable(self.path) from exc
        except httpx.TransportError as exc:
            raise StreamBroken(str(exc) or type(exc).__name__) from exc
        return _decode(resp)

    async def _stream(self, method: str, path: str, body: dict[str, Any] | None = None) -> AsyncIterator[dict[str, Any]]:
        try:
            async with self._client.stream(method, path, json=body) as resp:
                if resp.status_code >= 300:
                    await resp.aread()
                    _decode(resp)
                async with aclosing(resp.aiter_lines()) as lines:
                    async for line in lines:
                        if line.strip():
                            try:
                                item = json.loads(line)
                            except ValueError:
                                raise StreamBroken(f"a line cut short: {line[:60]!r}") from None
                            yield item
        except (httpx.ConnectError, FileNotFoundError, ConnectionRefusedError) as exc:
            raise DaemonUnreachable(self.path) from exc
        except httpx.TransportError as exc:
            raise StreamBroken(str(exc) or type(exc).__name__) from exc

    def ask(self, request: dict[str, Any]) -> AsyncIterator[dict[str, Any]]:
        """Progress items ({"progress": ...}) as the call goes, then {"result": ...} or {"error": ...}."""
        return self._stream("POST", "/v1/ask", request)

    def book(self, request: dict[str, Any]) -> AsyncIterator[dict[str, Any]]:
        """Like ask, for a table booking."""
        return self._stream("POST", "/v1/book", request)

    async def calls(self) -> list[dict[str, Any]]:
        return (await self._request("GET", "/v1/calls"))["calls"]

    async def show(self, ident: str) -> dict[str, Any]:
        return await self._request("GET", f"/v1/calls/{_segment(ident)}")

    async def published_objects(self, ident: str) -> list[dict[str, Any]]:
        """A published call's objects, each with a signed GET link (calld-ctl fetch)."""
        return (await self._request("GET", f"/v1/calls/{_segment(ident)}/objects"))["objects"]

    async def request_status(self, request_id: str) -> dict[str, Any]:
        """A request's status in the ledger and, once done, its result."""
        return await self._request("GET", f"/v1/requests/{_segment(request_id, 'the request id')}")

    def tail(self) -> AsyncIterator[dict[str, Any]]:
        return self._stream("GET", "/v1/tail")

    async def provision(self, user: str) -> dict[str, Any]:
        return await self._request("POST", "/v1/dids", {"user": user})

    async def dids(self) -> list[dict[str, Any]]:
        return (await self._request("GET", "/v1/dids"))["dids"]

    async def messaging_link(self, handle: str, user: str, name: str | None = None) -> dict[str, Any]:
        return await self._request("POST", "/v1/messaging/links", {"handle": handle, "user": user, **({"name": name} if name else {})})

    async def messaging_unlink(self, handle: str) -> dict[str, Any]:
        return await self._request("POST", "/v1/messaging/unlink", {"handle": handle})

    async def messaging_links(self) -> list[dict[str, Any]]:
        return (await self._request("GET", "/v1/messaging/links"))["links"]

    # -- policy: the queue and the opt-out list -------------------------------------------------------

    async def queue(self, include_done: bool = False) -> list[dict[str, Any]]:
        return (await self._request("GET", "/v1/queue" + ("?all=1" if include_done else "")))["queue"]

    async def cancel(self, request_id: str) -> dict[str, Any]:
        return (await self._request("DELETE", f"/v1/queue/{_segment(request_id, 'the request id')}"))["cancelled"]

    async def opt_outs(self) -> list[dict[str, Any]]:
        return (await self._request("GET", "/v1/optouts"))["optouts"]

    async def remove_opt_out(self, number: str) -> dict[str, Any]:
        return await self._request("DELETE", f"/v1/optouts/{_segment(number, 'the number')}")

    # -- after the call (issue 16) -------------------------------------------------------------------

    async def where(self) -> dict[str, Any]:
        """The running daemon's state dir, ledger and artifacts dir (absolute paths), and its pid."""
        return await self._request("GET", "/v1/where")

    async def ui_link(self) -> str:
        """A link to the daemon's web view carrying a fresh short-lived token."""
        return str((await self._request("POST", "/v1/ui/link"))["url"])

    async def history(self, **query: Any) -> list[dict[str, Any]]:
        params = {k: str(v) for k, v in query.items() if v is not None}
        try:
            resp = await self._client.get("/v1/history", params=params)
        except (httpx.ConnectError, FileNotFoundError, ConnectionRefusedError) as exc:
            raise DaemonUnreachable(self.path) from exc
        return _decode(resp)["calls"]

    async def detail(self, ident: str) -> dict[str, Any]:
        return await self._request("GET", f"/v1/calls/{_segment(ident)}/detail")

    async def timeline(self, ident: str, suffix: str) -> bytes:
        try:
            resp = await self._client.get(f"/v1/calls/{_segment(ident)}/timeline.{suffix}", timeout=60.0)
        except (httpx.ConnectError, FileNotFoundError, ConnectionRefusedError) as exc:
            raise DaemonUnreachable(self.path) from exc
        if resp.status_code >= 300:
            _decode(resp)
        return resp.content

    async def prune(self, older_than_days: float, *, dry_run: bool = False) -> dict[str, Any]:
        return await self._request("POST", "/v1/prune", {"older_than_days": older_than_days, "dry_run": dry_run})

    async def metrics(self) -> str:
        try:
            resp = await self._client.get("/metrics")
        except (httpx.ConnectError, FileNotFoundError, ConnectionRefusedError) as exc:
            raise DaemonUnreachable(self.path) from exc
        if resp.status_code >= 300:
            _decode(resp)
        return resp.text

    async def raw(self, method: str, path: str, content: bytes) -> tuple[int, Any]:
        """Send bytes as they are (tests of the API's refusals)."""
        try:
            resp = await self._client.request(method, path, content=content, headers={"content-type": "application/json"})
        except (httpx.ConnectError, FileNotFoundError, ConnectionRefusedError) as exc:
            raise DaemonUnreachable(self.path) from exc
        try:
            return resp.status_code, resp.json()
        except ValueError:
            return resp.status_code, resp.text


def _segment(value: str, what: str = "the call id") -> str:
    """One id as a route's path segment. An empty one names nothing (and no route); one with bytes
    that are not UTF-8 (a terminal's bad paste) names nothing that calld could have stored."""
    if not value.strip():
        give = {"the call id": "a run id or a call_control_id (calld-ctl history lists them)",
                "the request id": "the id calld-ctl ask printed (calld-ctl queue lists them)",
                "the number": "an E.164 number (calld-ctl optout list lists them)"}[what]
        raise ControlError(400, f"{what} is empty: give {give}")
    try:
        return quote(value, safe="")
    except UnicodeEncodeError:
        raise ControlError(400, f"{what} {value!r} has bytes that are not UTF-8 text; type it again") from None


def _decode(resp: httpx.Response) -> Any:
    try:
        data = resp.json()
    except ValueError:
        # Not calld's JSON: a route the daemon does not have (quart answers a malformed path with an
        # HTML redirect or page); the page itself says nothing a user can act on.
        data = {"error": f"HTTP {resp.status_code}: the daemon has no such route ({resp.request.url.path})"}
    if resp.status_code >= 300:
        if isinstance(data, dict):
            elsewhere = data.get("elsewhere") if resp.status_code == 421 else None
            raise ControlError(resp.status_code, str(data.get("error", data)), data.get("field"),
                               elsewhere if isinstance(elsewhere, dict) else None)
        raise ControlError(resp.status_code, str(data))
    return data
