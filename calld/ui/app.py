"""The web view's quart-trio app: the calls list, a page per call, its audio and raw files. Read-only.

Served by the daemon on CALLD_UI_BIND, a listener of its own (never the public webhook or media
one). Every route, static files included, needs a session: `calld-ctl ui` prints a link whose
token (calld.ui.access) is traded here, once, for an HttpOnly SameSite=Strict cookie. Only GET
and HEAD are routed; nothing here writes a file or a ledger row (a call's picture is read as the
call left it). Every response carries a strict Content-Security-Policy: scripts and styles from
this origin only, no inline script (the page's script is /static/ui.js), no frames, no plugins;
templates are autoescaped, so what the business or the user said is shown as text.
"""

from __future__ import annotations

import time
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any, Protocol

from quart import Response, redirect, render_template, request, send_file
from quart_trio import QuartTrio

from calld.observe.history import BadQuery, check_status
from calld.observe.summary import booked_line, hangup_column, hangup_progress_words, line_may_be_up_words
from calld.ui.access import COOKIE, Access
from calld.ui.page import ARTIFACT_LINKS, call_page

PER_PAGE = 50
LIVE_POLL_MS = 1000  # a live call's page asks this often whether the call has ended
CSP = ("default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; media-src 'self'; "
       "connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'")
RAW_TYPES = {".json": "application/json", ".jsonl": "text/plain", ".svg": "image/svg+xml"}  # quart adds text/*'s charset
NO_SESSION = "No session: run `calld-ctl ui` and open the link it prints (the link is good for a few minutes, once)."
LINK_SPENT = "This link has expired or was already used: run `calld-ctl ui` for a new one."


class UiSource(Protocol):
    """What the pages read (calld.ui.source.DaemonPages reads a running daemon)."""

    async def calls_page(self, *, user: str | None, status: str | None, since: str | None, until: str | None,
                         offset: int, limit: int) -> list[dict[str, Any]]: ...
    async def ident(self, asked: str) -> str: ...
    def live(self, ident: str) -> dict[str, Any] | None: ...
    async def detail(self, ident: str) -> dict[str, Any] | None: ...
    async def elsewhere(self, ident: str) -> dict[str, Any] | None: ...
    def run_dir(self, ident: str) -> Path | None: ...
    async def timeline(self, ident: str) -> bytes | None: ...


def _day_bounds(text: str) -> tuple[str, str]:
    try:
        day = date.fromisoformat(text)
    except ValueError:
        raise BadQuery(f"day: {text!r} is not a date; write it as 2026-12-05") from None
    start = datetime.combine(day, datetime.min.time(), UTC)
    return start.isoformat(timespec="microseconds"), (start + timedelta(days=1)).isoformat(timespec="microseconds")


def _page_number(text: str | None) -> int:
    if text is None or text == "":
        return 1
    if not text.isdigit() or not 1 <= int(text) <= 100_000:
        raise BadQuery(f"page: {text!r} is not a page number (1, 2, ...)")
    return int(text)


def _duration(ms: Any) -> str:
    if not isinstance(ms, int | float):
        return ""
    s = int(round(ms / 1000))
    return f"{s // 60}:{s % 60:02d}"


def create_ui_app(source: UiSource, access: Access) -> QuartTrio:
    here = Path(__file__).parent
    app = QuartTrio(__name__, template_folder=str(here / "templates"), static_folder=str(here / "static"),
                    static_url_path="/static")
    app.config["MAX_CONTENT_LENGTH"] = 1024  # nothing here takes a body
    app.jinja_env.autoescape = True  # every template, whatever its name: the words are the business's

    def refuse(message: str, status: int = 403) -> Response:
        return Response(message + "\n", status=status, content_type="text/plain; charset=utf-8")

    @app.before_request
    async def guard() -> Response | None:
        if request.method not in ("GET", "HEAD"):
            return refuse("The web view is read-only: only GET and HEAD are served.", 405)
        token = request.args.get("token")
        if token is not None and request.path == "/":
            session = access.open_session(token)
            if session is None:
                return refuse(LINK_SPENT)
            # The token leaves the address bar at once; the cookie carries the session from here.
            resp = redirect("/", 303)
            resp.set_cookie(COOKIE, session, max_age=int(access.session_s), httponly=True, samesite="Strict", path="/")
            return resp
        if not access.allows(request.cookies.get(COOKIE)):
            return refuse(NO_SESSION)
        return None

    @app.after_request
    async def headers(resp: Response) -> Response:
        resp.headers["Content-Security-Policy"] = CSP
        resp.headers["X-Content-Type-Options"] = "nosniff"
        resp.headers["Referrer-Policy"] = "no-referrer"  # the link's token never leaves in a Referer
        resp.headers["X-Frame-Options"] = "DENY"
        if request.path.startswith("/static/"):
            # Asked again each time (a 304 when unchanged): a page and its script change together when
            # calld is upgraded, and a day-old cached ui.js would not drive a new page.
            resp.headers["Cache-Control"] = "no-cache"
        resp.headers.setdefault("Cache-Control", "no-store")
        return resp

    @app.get("/")
    async def calls() -> Response | str:
        args = request.args
        status = args.get("status") or None
        user = args.get("user") or None
        day = args.get("day") or None
        try:
            page = _page_number(args.get("page"))
            if status:
                check_status(status)
            since, until = _day_bounds(day) if day else (None, None)
            began = time.perf_counter()
            rows = await source.calls_page(user=user, status=status, since=since, until=until,
                                           offset=(page - 1) * PER_PAGE, limit=PER_PAGE + 1)
        except BadQuery as exc:
            return refuse(f"Cannot list calls: {exc}", 400)
        more = len(rows) > PER_PAGE
        rows = rows[:PER_PAGE]
        for r in rows:
            r["live"] = r["status"] in ("placing", "in_flight") and source.live(str(r["run_id"])) is not None
            r["duration"] = _duration(r.get("duration_ms"))
            r["when_short"] = str(r["when"])[:19].replace("T", " ")
        query = {k: val for k, val in (("status", status), ("user", user), ("day", day)) if val}
        html = await render_template("list.html", rows=rows, page=page, more=more, query=query,
                                     statuses=("answered", "booked", "declined", "no_answer", "voicemail", "failed",
                                               "refused", "placing", "in_flight"),
                                     status=status or "", user=user or "", day=day or "")
        resp = Response(html, content_type="text/html; charset=utf-8")
        resp.headers["Server-Timing"] = f"list;dur={(time.perf_counter() - began) * 1000:.1f}"
        return resp

    def _live_view(call: dict[str, Any]) -> dict[str, Any]:
        """The hangup track as calld-ctl calls shows it: the reducer's "done" may be a hangup Telnyx has not taken."""
        progress, tracks = call.get("hangup"), call.get("tracks") or {}
        return call | {"tracks": tracks | {"hangup": hangup_column(str(tracks.get("hangup")), progress)},
                       "hangup_words": hangup_progress_words(progress)}

    @app.get("/call/<asked>")
    async def call(asked: str) -> Response | str:
        ident = await source.ident(asked)
        live = source.live(ident)
        if live is not None:
            return await render_template("live.html", call=_live_view(live), ident=ident, poll_ms=LIVE_POLL_MS)
        found = await source.detail(ident)
        if (found is None or found.get("pruned")) and (other := await source.elsewhere(ident)) is not None:
            # another daemon's call on the shared ledger: its files are there, not pruned
            state = "on the line" if other["request_status"] in ("placing", "in_flight") else "finished"
            return refuse(f"Call {asked!r} is {state} on daemon {other['daemon']}, which keeps its files: "
                          f"open it in that daemon's web view (calld-ctl ui with daemon {other['daemon']}'s socket)"
                          f"{line_may_be_up_words(other)}.", 421)
        if found is None:
            return refuse(f"No call {asked!r}: open one from the list.", 404)
        return await render_template("call.html", p=call_page(ident, found), booked_line=booked_line)

    @app.get("/call/<asked>/live.json")
    async def live(asked: str) -> dict[str, Any]:
        ident = await source.ident(asked)
        found = source.live(ident)
        return {"live": found is not None, "call": _live_view(found) if found is not None else None}

    @app.get("/call/<asked>/audio/<which>.wav")
    async def audio(asked: str, which: str) -> Response:
        if which not in ("inbound", "outbound"):
            return refuse("The recordings are inbound.wav (the business) and outbound.wav (the agent).", 404)
        run_dir = source.run_dir(await source.ident(asked))
        path = run_dir / "audio" / f"{which}.wav" if run_dir else None
        if path is None or not path.is_file():
            return refuse(f"No recording for {asked!r}.", 404)
        # conditional: answers Range with 206 and Content-Range, so the player can seek.
        resp = await send_file(path, mimetype="audio/wav", conditional=True)
        resp.headers["Accept-Ranges"] = "bytes"
        return resp

    @app.get("/call/<asked>/timeline.svg")
    async def timeline(asked: str) -> Response:
        try:
            picture = await source.timeline(await source.ident(asked))
        except Exception as exc:  # the drawing process failed: the page stands without its picture
            return refuse(f"The timeline could not be drawn: {exc}", 500)
        if picture is None:
            return refuse(f"No timeline for {asked!r}.", 404)
        return Response(picture, content_type="image/svg+xml")

    @app.get("/call/<asked>/raw/<path:name>")
    async def raw(asked: str, name: str) -> Response:
        if name not in (*ARTIFACT_LINKS, "timeline.svg"):
            return refuse(f"{name!r} is not one of the call's files shown here.", 404)
        run_dir = source.run_dir(await source.ident(asked))
        path = run_dir / name if run_dir else None
        if path is None or not path.is_file():
            return refuse(f"No {name} for {asked!r}.", 404)
        return await send_file(path, mimetype=RAW_TYPES[Path(name).suffix])

    return app
