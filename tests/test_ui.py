"""The web view (calld.ui, issue 53) over HTTP: its own listener, the token link and the session cookie,
read-only routes, the strict CSP, the calls list's filters and pages, the call page's parts, escaping,
and the audio's Range answers. A real daemon on the autojump clock, stub calls, httpx as the browser.
(tests/test_ui_browser.py drives headless Chromium.)"""

from __future__ import annotations

import io
import json
import shutil
import sqlite3
from pathlib import Path
from typing import Any

import httpx
import pytest
import trio

from calld.cli.client import ControlClient, ControlError
from calld.cli.ctl import EXIT_OK, build_parser, run_ask
from calld.daemon.service import Daemon
from calld.settings import SettingsError, load_settings
from calld.ui.access import Access
from daemons import daemon_settings, provisioned, serving, stop

ASK = {"to": "+15555550142", "ask": "hours", "name": "Nathan", "user": "alice"}
HOSTILE = '<script>document.title="pwned"</script><img src=x onerror="document.title=1"><b>bold</b> & "quotes"'


@pytest.fixture
async def daemon(tmp_path, nursery):
    async with serving(nursery, daemon_settings(tmp_path, calld_ui_bind="127.0.0.1:0")) as d:
        yield d


@pytest.fixture
async def client(daemon):
    async with provisioned(daemon, "alice", "bob") as c:
        yield c


@pytest.fixture
async def web(daemon):
    # No timeout of httpx's own: on the autojump clock it would leap past while a worker thread reads files.
    async with httpx.AsyncClient(base_url=daemon.ui_url, timeout=None) as h:
        yield h


async def ask(client: ControlClient, **over: Any) -> dict[str, Any]:
    out = io.StringIO()
    await run_ask(client, {**ASK, **over}, out=out, err=io.StringIO())
    return json.loads(out.getvalue())


async def login(web: httpx.AsyncClient, daemon: Daemon) -> httpx.Response:
    r = await web.get(daemon.ui_link())
    assert r.status_code == 303 and r.headers["location"] == "/"
    return r


def hostile_call(artifacts: Path, source: Path, name: str = "v3_hostile-call") -> Path:
    """A finished call's files with the business's and the agent's words replaced by markup."""
    d = artifacts / name
    shutil.copytree(source, d)
    t = json.loads((d / "transcript.json").read_text())
    for turn in t["turns"]:
        turn["text"] = f"{turn['text']} {HOSTILE}"
    (d / "transcript.json").write_text(json.dumps(t))
    for f in ("result.json", "call_report.json"):
        data = json.loads((d / f).read_text())
        data["call_control_id"] = name.replace("_", ":", 1)
        data["answer_text"] = HOSTILE
        for e in data.get("evidence") or []:
            e["quote"] = HOSTILE
        (d / f).write_text(json.dumps(data))
    return d


# -- 1. its own listener, the link and the session -----------------------------------------------------


async def test_the_web_view_is_off_unless_set(tmp_path, nursery):
    d: Daemon = await nursery.start(Daemon(daemon_settings(tmp_path)).serve)
    try:
        assert d.ui_url is None
        async with ControlClient(d.settings.calld_socket) as c:
            with pytest.raises(ControlError, match="CALLD_UI_BIND"):
                await c.ui_link()
    finally:
        await stop(d)


def test_ui_bind_setting_takes_a_port_for_loopback_and_refuses_garbage(tmp_path):
    assert load_settings(calld_state_dir=tmp_path, calld_ui_bind="8790", _env_file=None).calld_ui_bind == "127.0.0.1:8790"
    assert load_settings(calld_state_dir=tmp_path, _env_file=None).calld_ui_bind == ""
    with pytest.raises(SettingsError, match="HOST:PORT"):
        load_settings(calld_state_dir=tmp_path, calld_ui_bind="localhost", _env_file=None)


async def test_stub_mode_serves_the_web_view_only_on_loopback(tmp_path):
    from calld.daemon.errors import DaemonError

    async with trio.open_nursery() as n:
        with pytest.raises(DaemonError, match="CALLD_UI_BIND"):
            d = await n.start(Daemon(daemon_settings(tmp_path, calld_ui_bind="0.0.0.0:0")).serve)
            await d.shutdown(drain_s=0)  # reached only if the bind was taken


async def test_every_route_is_refused_without_a_session(client, daemon, web):
    done = await ask(client)
    ccid = done["call_control_id"]
    routes = ["/", "/?status=answered", f"/call/{done['run_id']}", f"/call/{ccid}", f"/call/{ccid}/live.json",
              f"/call/{ccid}/audio/inbound.wav", f"/call/{ccid}/raw/result.json", f"/call/{ccid}/timeline.svg",
              "/static/ui.js", "/static/ui.css", "/nothing-here"]
    for path in routes:
        r = await web.get(path)
        assert r.status_code == 403, path
        assert "calld-ctl ui" in r.text and done["run_id"] not in r.text
        r = await web.get(path, headers={"Cookie": "calld_ui=made-up"})
        assert r.status_code == 403, path
    await login(web, daemon)
    for path in routes[:-1]:
        assert (await web.get(path)).status_code == 200, path


async def test_the_link_trades_its_token_once_for_an_httponly_strict_cookie(daemon, web):
    link = daemon.ui_link()
    r = await web.get(link)
    cookie = r.headers["set-cookie"]
    assert "HttpOnly" in cookie and "SameSite=Strict" in cookie and "Path=/" in cookie
    assert (await web.get("/")).status_code == 200
    async with httpx.AsyncClient(base_url=daemon.ui_url, timeout=None) as other:
        again = await other.get(link)  # the same link, a second time: spent
        assert again.status_code == 403 and "expired or was already used" in again.text
        assert (await other.get("/")).status_code == 403
        wrong = await other.get("/?token=not-a-token")
        assert wrong.status_code == 403 and "set-cookie" not in wrong.headers


def test_a_link_expires_and_so_does_a_session():
    now = [100.0]
    access = Access(link_s=300, session_s=3600, clock=lambda: now[0])
    late = access.issue()
    now[0] += 301
    assert access.open_session(late) is None
    fresh = access.issue()
    session = access.open_session(fresh)
    assert session is not None and access.allows(session)
    assert access.open_session(fresh) is None  # once
    now[0] += 3599
    assert access.allows(session)
    now[0] += 2
    assert not access.allows(session) and not access.allows(None) and not access.allows("")


async def test_an_expired_link_is_refused_by_the_daemon(daemon, web):
    link = daemon.ui_link()
    daemon.ui_access.link_s = 0  # what a link five minutes old meets
    stale = daemon.ui_link()
    assert (await web.get(stale)).status_code == 403
    assert (await web.get(link)).status_code == 303  # issued before: still good


async def test_the_public_and_media_listeners_serve_no_page(client, daemon, web, autojump_clock):
    done = await ask(client)
    await login(web, daemon)
    session = web.cookies.get("calld_ui")
    media = f"http://{daemon.media_bound}"
    for base in (daemon.public_url, media):
        async with httpx.AsyncClient(base_url=base, cookies={"calld_ui": session}, timeout=None) as other:
            for path in ("/", f"/call/{done['run_id']}", f"/call/{done['call_control_id']}/audio/inbound.wav",
                         "/static/ui.js", f"/?token={daemon.ui_link()}"):
                try:
                    r = await other.get(path)
                except httpx.HTTPError:
                    continue  # the media listener speaks WebSocket only
                assert r.status_code in (400, 403, 404, 405, 426), (base, path, r.status_code)
                assert "calld" not in r.headers.get("content-type", "") and "<html" not in r.text.lower()


async def test_ctl_ui_prints_a_link_that_opens_the_list(client, daemon, web, capsys):
    args = build_parser().parse_args(["--socket", str(daemon.settings.calld_socket), "ui"])
    capsys.readouterr()
    assert await args.afunc(args) == EXIT_OK
    url = capsys.readouterr().out.strip()
    assert url.startswith(f"{daemon.ui_url}/?token=")
    assert (await web.get(url)).status_code == 303
    assert "<table" in (await web.get("/")).text


async def test_ctl_ui_open_hands_the_link_to_a_browser(daemon, capsys, monkeypatch):
    import webbrowser

    opened: list[str] = []
    monkeypatch.setattr(webbrowser, "open", lambda url: opened.append(url) or True)
    args = build_parser().parse_args(["--socket", str(daemon.settings.calld_socket), "ui", "--open"])
    capsys.readouterr()
    assert await args.afunc(args) == EXIT_OK
    assert opened == [capsys.readouterr().out.strip()] and opened[0].startswith(f"{daemon.ui_url}/?token=")


# -- 1. nothing writes --------------------------------------------------------------------------------


def _tree(root: Path) -> dict[str, tuple[int, int]]:
    return {str(p): (p.stat().st_size, p.stat().st_mtime_ns) for p in sorted(root.rglob("*")) if p.is_file()}


async def test_no_route_takes_a_write_and_browsing_changes_no_file(client, daemon, web):
    done = await ask(client)
    await daemon.after_calls(1)
    await login(web, daemon)
    state = daemon.settings.calld_state_dir
    ledger = daemon.settings.db_path
    before = _tree(state / "artifacts")
    rows = sqlite3.connect(ledger).execute("SELECT count(*), max(updated_at) FROM requests").fetchone()
    ccid = done["call_control_id"]
    paths = ["/", f"/call/{done['run_id']}", f"/call/{ccid}/audio/inbound.wav", f"/call/{ccid}/raw/result.json",
             f"/call/{ccid}/timeline.svg", f"/call/{ccid}/live.json", "/static/ui.js"]
    for path in paths:
        assert (await web.get(path)).status_code == 200
        for method in ("POST", "PUT", "DELETE", "PATCH"):
            r = await web.request(method, path, content=b"{}")
            assert r.status_code == 405, (method, path)
    assert _tree(state / "artifacts") == before
    assert sqlite3.connect(ledger).execute("SELECT count(*), max(updated_at) FROM requests").fetchone() == rows


async def test_every_response_carries_the_strict_policy(client, daemon, web):
    done = await ask(client)
    refused = await web.get("/")
    await login(web, daemon)
    for r in (refused, await web.get("/"), await web.get(f"/call/{done['run_id']}"), await web.get("/static/ui.js"),
              await web.get(f"/call/{done['call_control_id']}/raw/result.json")):
        csp = r.headers["content-security-policy"]
        assert "default-src 'none'" in csp and "script-src 'self'" in csp and "unsafe-inline" not in csp
        assert "frame-ancestors 'none'" in csp
        assert r.headers["x-content-type-options"] == "nosniff" and r.headers["referrer-policy"] == "no-referrer"
    page = (await web.get(f"/call/{done['run_id']}")).text
    assert '<script src="/static/ui.js"' in page
    assert "<script>" not in page and " on" + "click=" not in page and "style=" not in page


# -- 2. the calls list --------------------------------------------------------------------------------


def _rows(html: str) -> list[str]:
    body = html.split("<tbody>", 1)[1].split("</tbody>", 1)[0]
    return [r for r in body.split("<tr")[1:]]


async def test_the_list_shows_history_newest_first_with_filters(client, daemon, web, autojump_clock):
    first = await ask(client)
    second = await ask(client, scenario="decline")
    third = await ask(client, user="bob", ask="stock", item="cast iron skillet")
    await login(web, daemon)
    rows = _rows((await web.get("/")).text)
    assert [third["run_id"] in rows[0], second["run_id"] in rows[1], first["run_id"] in rows[2]] == [True] * 3
    assert "bob" in rows[0] and "stock cast iron skillet" in rows[0] and "+15555550142" in rows[0]
    assert "answered" in rows[2] and "Weekdays" not in rows[1]
    assert any(":" in cell for cell in rows[2].split('class="num">')[1:])  # the duration, m:ss
    only_bob = _rows((await web.get("/?user=bob")).text)
    assert len(only_bob) == 1 and third["run_id"] in only_bob[0]
    declined = _rows((await web.get("/?status=declined")).text)
    assert len(declined) == 1 and second["run_id"] in declined[0]
    today = third["run_id"] and (await web.get("/")).text.split('<td><a href="/call/', 1)[1].split(">", 1)[1][:10]
    assert len(_rows((await web.get(f"/?day={today}")).text)) == 3
    assert "No calls match" in (await web.get("/?day=2001-01-01")).text
    bad = await web.get("/?day=yesterday-ish")
    assert bad.status_code == 400 and "2026-12-05" in bad.text
    assert (await web.get("/?status=great")).status_code == 400
    assert (await web.get("/?user=" + "x" * 300)).status_code == 400
    assert (await web.get("/?page=0")).status_code == 400


async def test_the_list_pages_by_fifty(client, daemon, web, monkeypatch, autojump_clock):
    import calld.ui.app as ui_app

    monkeypatch.setattr(ui_app, "PER_PAGE", 2)
    runs = [(await ask(client))["run_id"] for _ in range(5)]
    await login(web, daemon)
    seen = []
    for page in (1, 2, 3):
        html = (await web.get(f"/?page={page}")).text
        seen += sorted((r for r in runs if r in html), key=html.index)
        assert ('rel="next"' in html) == (page < 3) and ('rel="prev"' in html) == (page > 1)
    assert seen == runs[::-1], (seen, runs)
    # A page's links keep the filters.
    filtered = (await web.get("/?status=answered&page=2")).text
    assert 'href="/?status=answered&amp;page=3"' in filtered and 'href="/?status=answered&amp;page=1"' in filtered


async def test_a_call_on_the_line_is_marked_live_and_its_page_follows_it(client, daemon, web, autojump_clock):
    await login(web, daemon)
    async with trio.open_nursery() as n:
        out = io.StringIO()
        n.start_soon(lambda: run_ask(client, {**ASK, "scenario": "hold"}, out=out, err=io.StringIO()))
        while not daemon.callbook.handles():
            await trio.sleep(0.1)
        run_id = daemon.callbook.handles()[0].plan.run_id
        await trio.sleep(5)
        row = _rows((await web.get("/")).text)[0]
        assert run_id in row and "live" in row
        page = await web.get(f"/call/{run_id}")
        assert 'id="live-badge"' in page.text and 'data-live-url=' in page.text
        assert (await web.get(f"/call/{run_id}/live.json")).json()["live"] is True
    done = json.loads(out.getvalue())
    assert (await web.get(f"/call/{run_id}/live.json")).json() == {"live": False, "call": None}
    page = (await web.get(f"/call/{run_id}")).text
    assert 'id="live-badge"' not in page and 'id="verdict"' in page and done["status"] in page
    assert "badge live" not in _rows((await web.get("/")).text)[0]


# -- 3. the call page ---------------------------------------------------------------------------------


async def test_the_call_page_ties_each_quote_to_its_fact(client, daemon, web, autojump_clock):
    done = await ask(client, scenario="model_corrected")
    await login(web, daemon)
    html = (await web.get(f"/call/{done['run_id']}")).text
    # The hours as a table, each row naming the quotes that say it.
    hours = html.split('id="hours"', 1)[1].split("</table>", 1)[0]
    assert "Mon\u2013Fri" in hours and "9:00 AM \u2013 7:00 PM" in hours and 'data-quote="1"' in hours
    # Each quote of the accepted record: a seek button at its offset, marked in its own turn.
    for n, e in enumerate(done["evidence"], 1):
        assert f'data-seek="{e["start_ms"] / 1000:.2f}" data-quote="{n}"' in html
        assert f'<mark class="quote" data-quote="{n}" data-seek="{e["start_ms"] / 1000:.2f}"' in html
    assert "supports: Mon\u2013Fri 9:00 AM \u2013 7:00 PM" in html
    assert "Corrected:</strong> yes" in html and "never claimed to be a person" in html
    assert 'id="player"' in html and "/audio/inbound.wav" in html and "/timeline.svg" in html
    assert "mark echoed" in html and "normal_clearing" in html
    for name in ("result.json", "call_report.json", "events.jsonl"):
        assert f"/raw/{name}\">{name}</a>" in html


async def test_the_call_page_lists_refused_records_with_the_rule_each_broke(client, daemon, web):
    done = await ask(client, scenario="model_misquotes")
    await login(web, daemon)
    report = (await web.get(f"/call/{done['call_control_id']}/raw/call_report.json")).json()
    assert report["refused_records"], "this scenario's model records a quote nobody said first"
    html = (await web.get(f"/call/{done['run_id']}")).text
    section = html.split('id="refused"', 1)[1].split("</section>", 1)[0]
    from markupsafe import escape

    for r in report["refused_records"]:
        assert str(escape(r["why"])) in section


async def test_a_booking_shows_its_party_and_time(client, daemon, web, autojump_clock):
    out = io.StringIO()
    await run_ask(client, {"to": "+15555550143", "name": "Nathan", "party": 2, "time": "Friday 7pm", "user": "alice"}, book=True,
                   out=out, err=io.StringIO())
    done = json.loads(out.getvalue())
    await login(web, daemon)
    facts = (await web.get(f"/call/{done['run_id']}")).text.split('id="facts"', 1)[1].split("</dl>", 1)[0]
    assert "<dt>Party</dt>" in facts and ">2 " in facts and "<dt>Time</dt>" in facts and "Friday 7pm" in facts


async def test_what_the_business_and_the_user_said_is_escaped(client, daemon, web, autojump_clock):
    done = await ask(client)
    await login(web, daemon)
    art = daemon.settings.artifacts_dir
    hostile_call(art, art / done["transcript_ref"].split("/")[0])
    r = await web.get("/call/v3_hostile-call")
    assert r.status_code == 200
    assert "<script>document" not in r.text and "<img src=x" not in r.text and "<b>bold</b>" not in r.text
    assert "&lt;script&gt;document.title=" in r.text and "&lt;b&gt;bold&lt;/b&gt; &amp; " in r.text


async def test_the_recording_answers_range_requests(client, daemon, web):
    done = await ask(client)
    await login(web, daemon)
    wav = (daemon.settings.artifacts_dir / done["audio_ref"]).read_bytes()
    path = f"/call/{done['call_control_id']}/audio/inbound.wav"
    whole = await web.get(path)
    assert whole.status_code == 200 and whole.content == wav and whole.headers["accept-ranges"] == "bytes"
    part = await web.get(path, headers={"Range": "bytes=1000-1999"})
    assert part.status_code == 206 and part.content == wav[1000:2000]
    assert part.headers["content-range"] == f"bytes 1000-1999/{len(wav)}"
    tail = await web.get(path, headers={"Range": f"bytes={len(wav) - 10}-"})
    assert tail.status_code == 206 and tail.content == wav[-10:]
    assert (await web.get(path, headers={"Range": f"bytes={len(wav) + 10}-"})).status_code == 416
    assert (await web.get(f"/call/{done['call_control_id']}/audio/../result.json")).status_code == 404
    assert (await web.get(f"/call/{done['call_control_id']}/raw/run.json")).status_code == 404


# -- the ledger's pages -------------------------------------------------------------------------------


def test_ledger_history_takes_a_day_and_an_offset(tmp_path):
    from calld.domain.ids import RunId, UserId
    from calld.ledger import Ledger

    ledger = Ledger(tmp_path / "l.db")
    try:
        ledger.provision_stub(UserId("alice"))
        for i in range(5):
            ledger.claim_request(f"r{i}", user_id=UserId("alice"), kind="ask", params={"i": i}, run_id=RunId(f"run_{i:020d}"))
        with sqlite3.connect(tmp_path / "l.db") as db:
            for i in range(5):
                db.execute("UPDATE requests SET created_at = ? WHERE request_id = ?", (f"2026-12-0{i + 1}T10:00:00.000000+00:00", f"r{i}"))
        ids = [r.request_id for r in ledger.history(limit=2, offset=1)]
        assert ids == ["r3", "r2"]
        day = [r.request_id for r in ledger.history(since="2026-12-02T00:00:00.000000+00:00", until="2026-12-03T00:00:00.000000+00:00")]
        assert day == ["r1"]
    finally:
        ledger.close()


# -- the page's data, pure ------------------------------------------------------------------------------


def _detail(result: dict[str, Any], turns: list[tuple[str, str]]) -> dict[str, Any]:
    return {"result": result, "report": {"hangup": None}, "files": {},
            "transcript": {"turns": [{"speaker": s, "text": t, "start_ms": i * 1000, "end_ms": i * 1000 + 900}
                                     for i, (s, t) in enumerate(turns)]}}


def test_facts_are_tied_to_the_quotes_that_say_them():
    from calld.ui.page import call_page

    turns = [("business", "Hello, hardware."), ("agent", "Which aisle are the screws in?"),
             ("business", "Screws are in aisle 14. Nails are in 15.")]
    p = call_page("x", _detail({"status": "answered", "answer": {"kind": "aisle", "location": "aisle 14"},
                                "evidence": [{"quote": "Hello, hardware.", "turn": 0, "start_ms": 0},
                                             {"quote": "Screws are in aisle 14.", "turn": 2, "start_ms": 2100}]}, turns))
    assert [(f.label, f.value, f.quotes) for f in p.facts] == [("Where", "aisle 14", (2,))]
    assert p.quotes[0].facts == () and p.quotes[1].facts == (0,)
    marked = [piece for piece in p.turns[2].pieces if piece.quote]
    assert [m.text for m in marked] == ["Screws are in aisle 14."] and p.turns[2].pieces[-1].text == " Nails are in 15."
    stock = call_page("x", _detail({"status": "answered", "answer": {"kind": "stock", "availability": "in_stock", "quantity": 3},
                                    "evidence": [{"quote": "Let me look.", "turn": 0}, {"quote": "We have 3 left.", "turn": 0}]},
                                   [("business", "Let me look. We have 3 left.")]))
    assert ("Quantity", "3", (2,)) in [(f.label, f.value, f.quotes) for f in stock.facts]


def test_the_honesty_line_says_what_the_call_shows():
    from calld.ui.page import call_page

    spoke = [("business", "Hi."), ("agent", "Hi, this is an automated assistant calling on behalf of Nathan.")]
    assert "never claimed to be a person" in call_page("x", _detail({"status": "failed"}, spoke)).honesty
    assert "correct itself" in call_page("x", _detail({"status": "failed", "honesty": "corrected"}, spoke)).honesty
    assert call_page("x", _detail({"status": "no_answer"}, [])).honesty == "The agent never spoke on this call."


def test_days_in_words():
    from calld.ui.page import days_words

    assert days_words(["monday", "tuesday", "wednesday", "thursday", "friday"]) == "Mon\u2013Fri"
    assert days_words(["saturday", "monday"]) == "Mon, Sat"
    assert days_words([]) == "Days not said"
    assert days_words(list(("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"))) == "Every day"


def test_the_call_page_says_when_the_recording_stopped_short():
    from calld.ui.page import call_page

    gap = "audio/inbound.wav: No space left on device after 3.2 s"
    result = {"status": "answered", "answer_text": "9 to 5", "audio_incomplete": gap}
    assert ("Audio incomplete", gap) in call_page("run-x", {"result": result, "report": {}}).meta
    assert not [m for m in call_page("run-x", {"result": result | {"audio_incomplete": None}, "report": {}}).meta
                if m[0] == "Audio incomplete"]


# -- the pages over a fake source: what a person reads and follows, without a daemon ------------------------


class _Pages:
    """calld.ui.app.UiSource over fixed data: one finished call's detail and the list's rows."""

    def __init__(self, detail: dict[str, Any] | None = None, rows: list[dict[str, Any]] | None = None) -> None:
        self.detail_, self.rows = detail, rows or []

    async def calls_page(self, **_: Any) -> list[dict[str, Any]]:
        return [dict(r) for r in self.rows]

    async def ident(self, asked: str) -> str:
        return asked

    def live(self, ident: str) -> None:
        return None

    async def detail(self, ident: str) -> dict[str, Any] | None:
        return self.detail_

    async def elsewhere(self, ident: str) -> None:
        return None  # one daemon: no call is another's

    def run_dir(self, ident: str) -> None:
        return None

    async def timeline(self, ident: str) -> None:
        return None


async def _get(source: _Pages, path: str) -> Any:
    from calld.ui.app import create_ui_app

    access = Access()
    client = create_ui_app(source, access).test_client()
    assert (await client.get(f"/?token={access.issue()}")).status_code == 303
    return await client.get(path)


async def _page(detail: dict[str, Any], path: str = "/call/v3:x") -> str:
    r = await _get(_Pages(detail), path)
    assert r.status_code == 200
    return str(await r.get_data(as_text=True))


# A quote said 7.96 s into audio/inbound.wav, which began 1.04 s into the call.
_ON_CALL = {"inbound_audio_at_ms": 1040, "turn_times_ms": [[1220, 3560], [3840, 8340], [9000, 12040]],
            "files": {"audio/inbound.wav": "x", "result.json": "x"}}
_HOURS = {"status": "answered", "answer_text": "We're open Monday through Friday, 9 AM to 5 PM.", "verdict_source": "tool",
          "evidence": [{"quote": "We're open Monday through Friday, 9 AM to 5 PM.", "turn": 2, "start_ms": 7960, "end_ms": 11000}],
          "answer": {"kind": "hours", "ranges": [{"days": ["monday", "tuesday", "wednesday", "thursday", "friday"],
                                                  "opens": "09:00", "closes": "17:00"}]}}
_TURNS = [("business", "Hello, Joe's Hardware."), ("agent", "Hi, this is an automated assistant. What are your hours?"),
          ("business", "We're open Monday through Friday, 9 AM to 5 PM.")]


def _hours_call(**over: Any) -> dict[str, Any]:
    d = _detail({**_HOURS, **over}, _TURNS)
    for t, start in zip(d["transcript"]["turns"], (180, 2800, 7960), strict=True):
        t["start_ms"], t["end_ms"] = start, start + 2000
    return d | _ON_CALL


def test_quotes_and_turns_say_their_moment_on_the_calls_clock_and_seek_on_the_recordings():
    from calld.ui.page import call_page

    p = call_page("x", _hours_call())
    # The timeline picture and `show` count from the call's start; the player counts from the recording's.
    assert p.quotes[0].said_at == "9.0 s into the call" and p.quotes[0].at_s == "7.96"
    assert [t.at for t in p.turns] == ["1.2 s", "3.8 s", "9.0 s"] and p.turns[2].start_ms == 7960
    bare = call_page("x", _hours_call() | {"inbound_audio_at_ms": None, "turn_times_ms": None})
    assert bare.quotes[0].said_at == "8.0 s into the recording" and bare.turns[2].at == "8.0 s in the recording"


async def test_each_fact_names_the_moment_its_quote_was_said():
    html = await _page(_hours_call())
    hours = html.split('id="hours"', 1)[1].split("</table>", 1)[0]
    assert "9:00 AM \u2013 5:00 PM" in hours and "[1]</a> <span class=\"at\">at 9.0 s into the call</span>" in hours
    transcript = html.split('id="transcript"', 1)[1]
    assert 'inbound.wav#t=7.96" data-seek="7.96">9.0 s</a>' in transcript and ">8.0 s<" not in transcript


async def test_a_quotes_moment_plays_the_recording_there_with_no_script():
    html = await _page(_hours_call())
    quotes = html.split('id="quotes"', 1)[1].split("</ol>", 1)[0]
    # A media fragment: the browser opens the recording at the quote's offset and plays it, no script needed.
    assert '<a class="said-at" href="/call/v3%3Ax/audio/inbound.wav#t=7.96" data-seek="7.96"' in quotes
    assert ">9.0 s into the call</a>" in quotes
    # The button plays in the page's player, so it shows only where ui.js runs (and unhides it).
    assert all(" hidden>" in b.split("</button>")[0] for b in html.split('<button type="button" class="seek"')[1:])
    assert 'class="seek"' in quotes and "b.hidden = false" in (Path(__file__).parents[1] / "calld/ui/static/ui.js").read_text()
    # The quote's number in the transcript leads to the quote, and its moment, in the verdict.
    assert '<sup><a href="#q1">[1]</a></sup>' in html
    # Without a recording there is nothing to play: the moment is text.
    silent = await _page(_hours_call() | {"files": {"result.json": "x"}})
    assert "inbound.wav#t=" not in silent and '<span class="said-at">9.0 s into the call</span>' in silent


async def test_an_opt_out_is_said_in_the_verdict_with_its_words_and_moment():
    d = _hours_call(status="declined", reason="refused", answer=None, answer_text=None, opt_out="please stop calling us")
    d["transcript"]["turns"][2]["text"] = "Please stop calling us. We don't give out hours."
    html = await _page(d)
    verdict = html.split('id="verdict"', 1)[1].split("</section>", 1)[0]
    said = verdict.split('id="optout"', 1)[1].split("</p>", 1)[0]
    assert "asked not to be called again" in said and "please stop calling us" in said
    assert "said at 9.0 s into the call" in said and "will not call this number again" in said
    assert 'id="optout"' not in await _page(_hours_call())


async def test_a_long_answer_is_cut_in_the_headline_and_whole_below():
    words = "We have had a lot of changes around here lately, so bear with me. " * 20 + "We open at 8 AM."
    d = _hours_call(answer_text=words, answer=None, evidence=[{"quote": words, "turn": 2, "start_ms": 7960}])
    html = await _page(d)
    h1 = html.split("<h1>", 1)[1].split("</h1>", 1)[0]
    assert len(h1) < 400 and h1.endswith("\u2026") and "We open at 8 AM." not in h1
    supports = html.split('class="for">', 1)[1].split("</span>", 1)[0]
    assert len(supports) < 150 and supports.endswith("\u2026")
    assert html.count("We open at 8 AM.") >= 2  # the fact and the quote say it whole


async def test_the_list_shows_why_beside_the_status():
    row = {"when": "2026-12-05T10:21:48.000000+00:00", "run_id": "run_1", "user": "carol", "to": "+15555550141",
           "ask": "book 4 at Sun 6 Dec 7pm", "status": "declined", "reason": "fully_booked", "answer": "We're full."}
    r = await _get(_Pages(rows=[row, row | {"run_id": "run_2", "status": "answered", "reason": None}]), "/")
    rows = _rows(await r.get_data(as_text=True))
    assert '<span class="reason">fully booked</span>' in rows[0] and 'class="reason"' not in rows[1]


async def test_static_files_are_asked_again_so_an_upgrade_never_meets_an_old_script():
    for name in ("ui.js", "ui.css"):
        r = await _get(_Pages(), f"/static/{name}")
        assert r.status_code == 200 and r.headers["Cache-Control"] == "no-cache" and r.headers.get("ETag")


def test_on_a_phone_the_list_rows_are_cards_and_no_table_is_wider_than_the_screen():
    css = (Path(__file__).parents[1] / "calld/ui/static/ui.css").read_text()
    phone = css.split("@media (max-width: 640px)", 1)[1]
    assert "table.calls thead { display: none; }" in phone and "table.calls tr { display: block;" in phone
    assert "table.hours, table.tracks { min-width: 0;" in phone


def test_how_the_call_ended_is_said_in_words_for_every_way_calld_hangs_up():
    from typing import get_args

    from calld.core.state import Via
    from calld.ui.page import call_page

    for via in get_args(Via):
        words = call_page("x", {"result": {"status": "no_answer"}, "report": {"hangup": {"via": via, "cause": "normal_clearing"}}}).hangup_words
        assert words.startswith("Hung up ") and "via " not in words and "_" not in words.split(";")[0], (via, words)


async def test_a_refused_record_shows_what_it_said_and_when_beside_its_rule(tmp_path):
    from calld.ui.source import read_claims

    why = "rule 8: your quote 'open at nine': it says no, or says it of the past"
    quote = "We don't open at nine anymore, we open at ten now, until six."
    (tmp_path / "events.jsonl").write_text("\n".join([
        json.dumps({"seq": 1, "t_ms": 9000, "event": {"kind": "live.input_transcript", "text": "We don't"}}),
        "{not json, \"call_id\"",
        json.dumps({"seq": 229, "t_ms": 13135, "event": {"call_id": "call_record_1", "status": "answered",
                                                          "answer_text": "Open at 9.", "quotes": [quote]}}),
        json.dumps({"seq": 230, "t_ms": 13135, "cause": 229, "effect": {"call_id": "call_record_1", "kind": "live.tool_output"}}),
        json.dumps({"seq": 300, "t_ms": 14200, "event": {"call_id": "call_record_2", "status": "answered", "answer_text": "Open 10 to 6."}}),
    ]) + "\n")
    claims = read_claims(tmp_path, {"call_record_1"})
    assert claims == {"call_record_1": {"t_ms": 13135, "answer_text": "Open at 9.", "quotes": [quote]}}
    assert read_claims(tmp_path / "gone", {"call_record_1"}) == {}
    d = _hours_call() | {"report": {"refused_records": [{"call_id": "call_record_1", "status": "answered", "why": why}]},
                         "refused_claims": claims}
    section = (await _page(d)).split('id="refused"', 1)[1].split("</section>", 1)[0]
    assert "at 13.1 s into the call" in section and "the record said &ldquo;Open at 9.&rdquo;" in section
    assert "citing &ldquo;We don&#39;t open at nine anymore" in section and "rule 8: your quote &#39;open at nine&#39;" in section


async def test_the_verdict_says_the_day_a_booking_asked_for_and_that_records_were_refused():
    booked = _hours_call(status="booked", answer=None, confirmed_party=2, confirmed_time="tomorrow 7pm", booking_for="Sun 6 Dec 7pm")
    verdict = (await _page(booked)).split('id="verdict"', 1)[1].split("</section>", 1)[0]
    assert "<strong>Asked for:</strong> Sun 6 Dec 7pm" in verdict and "tomorrow 7pm" in verdict
    refused = _hours_call() | {"report": {"refused_records": [{"call_id": "a", "status": "answered", "why": "rule 8"}] * 2}}
    verdict = (await _page(refused)).split('id="verdict"', 1)[1].split("</section>", 1)[0]
    assert '<a href="#refused">2 records</a>' in verdict and 'id="asked-for"' not in verdict
    assert 'id="refused-count"' not in await _page(_hours_call())


async def test_a_calls_raw_files_are_sent_with_one_plain_content_type(tmp_path):
    (tmp_path / "events.jsonl").write_text('{"seq": 1}\n')
    (tmp_path / "result.json").write_text('{"status": "answered"}')

    class Dir(_Pages):
        def run_dir(self, ident: str) -> Path:  # type: ignore[override]
            return tmp_path

    events = await _get(Dir(), "/call/v3:x/raw/events.jsonl")
    assert events.status_code == 200 and events.headers["Content-Type"] == "text/plain; charset=utf-8"
    assert (await _get(Dir(), "/call/v3:x/raw/result.json")).headers["Content-Type"] == "application/json"


async def test_a_live_page_says_a_hangup_telnyx_has_not_taken() -> None:
    class _Held(_Pages):
        def live(self, ident: str) -> dict[str, Any]:  # type: ignore[override]
            return {"run_id": "run_1", "user": "alex", "to": "+15555550123", "question": "hours", "age_s": 41,
                    "call_control_id": "v3:x", "tracks": {"telnyx": "answered", "hangup": "done"},
                    "hangup": {"line": "retrying", "tries": 3, "telnyx": "HTTP 500", "call_status": "alive", "detail": None}}

    page = str(await (await _get(_Held(), "/call/v3:x")).get_data(as_text=True))
    assert 'data-track="hangup">retrying (3 tries)<' in page and "not taken by Telnyx yet (3 tries" in page
    data = (await _get(_Held(), "/call/v3:x/live.json")).json
    assert (await data)["call"]["tracks"]["hangup"] == "retrying (3 tries)"
