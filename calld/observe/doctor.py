"""`calld-ctl doctor`: is this configuration ready to run (and, in live mode, to dial)?

Each check returns a Finding: ok with what it saw, or what to fix. Checks are plain async
functions in lists: LOCAL_CHECKS always run, LIVE_CHECKS only when CALLD_MODE=live (and the texting
ingress when texting is on),
PUBLISH_CHECKS only when publishing is on. A new check is appended to its list. The pieces a daemon may reuse
(`ledger_problem`, `disk_problem`, `privacy_problems`) are small functions of a path.
"""

from __future__ import annotations

import os
import shutil
import sqlite3
import stat
import tempfile
from collections.abc import Awaitable, Callable, Mapping
from pathlib import Path
from typing import Any

import httpx
import trio
from attrs import frozen

from calld.settings import Settings

MIN_FREE_BYTES = 500 * 1024 * 1024  # a minute of call is about 2 MB of audio and journal; 500 MB is hours of calls
PROBE_TIMEOUT_S = 5.0


@frozen
class Finding:
    name: str
    ok: bool
    detail: str  # what was seen when ok, what to fix when not

    def line(self) -> str:
        return f"[{'ok' if self.ok else 'FIX'}] {self.name}: {self.detail}"

    def as_dict(self) -> dict[str, object]:
        return {"name": self.name, "ok": self.ok, "detail": self.detail}


@frozen
class Context:
    settings: Settings
    transport: httpx.AsyncBaseTransport | None = None  # tests put a MockTransport here
    state_why: str | None = None  # why this state dir (calld.cli.where): the running daemon's, or the settings'
    ledger_why: str | None = None  # why this ledger: the running daemon's, or the settings'
    ledger_unreachable: str | None = None  # the daemon's ledger hides a password calld-ctl lacks: what to set
    daemon: Mapping[str, Any] | None = None  # the running daemon's /v1/where: its routes as the proxy serves them


Check = Callable[[Context], Awaitable[Finding]]


# -- reusable pieces -------------------------------------------------------------------------------


def ledger_problem(db_path: Path) -> str | None:
    """None when the SQLite ledger passes `PRAGMA integrity_check` (or does not exist yet)."""
    from calld.ledger import MIGRATIONS

    if not db_path.exists():
        return None
    try:
        db = sqlite3.connect(f"file:{db_path}?mode=ro", uri=True, timeout=5.0)
        try:
            verdict = [r[0] for r in db.execute("PRAGMA integrity_check")]
            version = int(db.execute("PRAGMA user_version").fetchone()[0])
        finally:
            db.close()
    except sqlite3.DatabaseError as exc:
        return f"{db_path} cannot be read as SQLite ({exc}); restore it from a backup"
    if verdict != ["ok"]:
        return f"{db_path} fails its integrity check ({'; '.join(verdict[:3])}); restore it from a backup"
    if version > len(MIGRATIONS):
        return f"{db_path} has schema {version}, newer than this calld ({len(MIGRATIONS)}); upgrade calld"
    return None


def disk_problem(path: Path, min_free: int = MIN_FREE_BYTES) -> tuple[str | None, int]:
    """(what to fix or None, free bytes) for the filesystem holding `path`."""
    probe = path
    while not probe.exists() and probe != probe.parent:
        probe = probe.parent
    free = shutil.disk_usage(probe).free
    if free < min_free:
        return (f"only {free // 2**20} MB free under {probe} (calld wants {min_free // 2**20} MB); free space, "
                "or remove old calls' files: calld-ctl prune --older-than 30"), free
    return None, free


def privacy_problems(paths: list[Path]) -> list[str]:
    """What group or others can read of calld's private files (state dir, ledger, redaction key), with the fix."""
    from calld.ops.redaction import KEY_FILE

    problems = []
    for path in paths:
        try:
            mode = stat.S_IMODE(path.stat().st_mode)
        except FileNotFoundError:
            continue
        if mode & 0o077:
            want = 0o700 if path.is_dir() else 0o600
            what = "the key that hides user ids" if path.name == KEY_FILE else "call records"
            problems.append(f"{path} is {mode:04o} (group or others can read {what}); chmod {want:04o} {path}")
    return problems


# -- the checks ------------------------------------------------------------------------------------


async def check_state_dir(ctx: Context) -> Finding:
    found = await _check_state_dir(ctx)
    return found if ctx.state_why is None else Finding(found.name, found.ok, f"{found.detail} (checked: {ctx.state_why})")


async def _check_state_dir(ctx: Context) -> Finding:
    state = ctx.settings.calld_state_dir
    if not state.exists():
        parent = state.parent
        while not parent.exists() and parent != parent.parent:
            parent = parent.parent
        if os.access(parent, os.W_OK):
            return Finding("state dir", True, f"{state} does not exist yet; calld creates it (under {parent}, writable)")
        return Finding("state dir", False, f"{state} does not exist and {parent} is not writable; set CALLD_STATE_DIR")
    try:
        with tempfile.NamedTemporaryFile(dir=state, prefix=".doctor-"):
            pass
    except OSError as exc:
        return Finding("state dir", False, f"{state} is not writable ({exc.strerror}); set CALLD_STATE_DIR or fix its owner")
    from calld.ops.redaction import KEY_FILE

    problems = privacy_problems([state, ctx.settings.artifacts_dir, ctx.settings.db_path, state / KEY_FILE])
    if problems:
        return Finding("state dir", False, "; ".join(problems))
    return Finding("state dir", True, f"{state} is writable and private")


async def check_ledger(ctx: Context) -> Finding:
    if ctx.ledger_unreachable is not None:
        return Finding("ledger", False, ctx.ledger_unreachable)
    found = await _check_ledger(ctx)
    return found if ctx.ledger_why is None else Finding(found.name, found.ok, f"{found.detail} (checked: {ctx.ledger_why})")


async def _check_ledger(ctx: Context) -> Finding:
    if url := ctx.settings.calld_ledger_url.get_secret_value():
        from calld.ledger import redact
        from calld.ops.postgres import postgres_problems

        problems = await trio.to_thread.run_sync(postgres_problems, url)  # a connect may take its 5 s timeout
        if problems:
            return Finding("ledger", False, f"{redact(url)} {problems[0]}")
        return Finding("ledger", True, f"{redact(url)} answers with calld's schema (PostgreSQL)")
    db = ctx.settings.db_path
    problem = ledger_problem(db)
    if problem:
        return Finding("ledger", False, problem)
    return Finding("ledger", True, f"{db} passes its integrity check" if db.exists() else f"{db} not created yet (calld creates it)")


async def check_disk(ctx: Context) -> Finding:
    problem, free = disk_problem(ctx.settings.calld_state_dir)
    return Finding("disk space", problem is None, problem or f"{free // 2**20} MB free")


async def check_socket(ctx: Context) -> Finding:
    from calld.cli.client import ControlClient, DaemonUnreachable

    path = ctx.settings.calld_socket
    if path.exists() and not stat.S_ISSOCK(path.lstat().st_mode):
        return Finding("socket", False, f"{path} exists and is not a socket; remove it or set CALLD_SOCKET")
    if path.exists():
        try:
            with trio.fail_after(PROBE_TIMEOUT_S):
                async with ControlClient(path) as client:
                    await client.calls()
            return Finding("socket", True, f"a calld answers on {path}")
        except (DaemonUnreachable, trio.TooSlowError):
            return Finding("socket", False, f"{path} is a socket nobody answers on (a daemon died?); start calld: calld serve")
    parent = path.parent
    while not parent.exists() and parent != parent.parent:
        parent = parent.parent
    if not os.access(parent, os.W_OK):
        return Finding("socket", False, f"cannot create {path} ({parent} is not writable); set CALLD_SOCKET")
    return Finding("socket", True, f"{path} is free (no daemon running; `calld serve` can bind it)")


async def check_telnyx(ctx: Context) -> Finding:
    s = ctx.settings
    key = s.telnyx_api_key.get_secret_value()
    if not key or not s.telnyx_connection_id:
        return Finding("Telnyx", False, "set TELNYX_API_KEY and TELNYX_CONNECTION_ID")
    url = f"{s.telnyx_api_base.rstrip('/')}/v2/call_control_applications/{s.telnyx_connection_id}"
    try:
        async with httpx.AsyncClient(transport=ctx.transport, timeout=PROBE_TIMEOUT_S) as http:
            resp = await http.get(url, headers={"Authorization": f"Bearer {key}"})
    except httpx.HTTPError as exc:
        return Finding("Telnyx", False, f"{s.telnyx_api_base} unreachable ({type(exc).__name__}); check the network or TELNYX_API_BASE")
    if resp.status_code in (401, 403):
        return Finding("Telnyx", False, f"Telnyx refused TELNYX_API_KEY (HTTP {resp.status_code}); set a valid v2 API key")
    if resp.status_code == 404:
        return Finding("Telnyx", False, f"no Call Control Application {s.telnyx_connection_id!r}; set TELNYX_CONNECTION_ID to its id")
    if resp.status_code != 200:
        return Finding("Telnyx", False, f"Telnyx answered HTTP {resp.status_code} for the connection; try again, or check status.telnyx.com")
    name = ((resp.json() or {}).get("data") or {}).get("application_name") or s.telnyx_connection_id
    return Finding("Telnyx", True, f"the key works and connection {name!r} exists")


async def check_gpt_live(ctx: Context) -> Finding:
    s = ctx.settings
    key = s.openai_api_key.get_secret_value()
    if not key:
        return Finding("GPT-Live", False, "set OPENAI_API_KEY")
    scheme, rest = s.openai_live_url.split("://", 1) if "://" in s.openai_live_url else ("wss", s.openai_live_url)
    origin = f"{'https' if scheme in ('wss', 'https') else 'http'}://{rest.split('/', 1)[0]}"
    try:
        async with httpx.AsyncClient(transport=ctx.transport, timeout=PROBE_TIMEOUT_S) as http:
            resp = await http.get(f"{origin}/v1/models", headers={"Authorization": f"Bearer {key}"})
    except httpx.HTTPError as exc:
        return Finding("GPT-Live", False, f"{origin} unreachable ({type(exc).__name__}); check the network or OPENAI_LIVE_URL")
    if resp.status_code in (401, 403):
        return Finding("GPT-Live", False, f"{origin} refused OPENAI_API_KEY (HTTP {resp.status_code}); set a valid key")
    if resp.status_code == 426:
        # Upgrade Required: a WebSocket-only listener (calld-sim's GPT-Live stand-in), not OpenAI's API. It lists
        # no models, and there is nothing to fix: the call itself opens the WebSocket.
        return Finding("GPT-Live", True, f"{origin} takes only WebSocket sessions (HTTP 426 for /v1/models): a stand-in "
                                         f"such as calld-sim, not OpenAI's API, so {s.openai_live_model} is not checked there")
    if resp.status_code != 200:
        return Finding("GPT-Live", False, f"{origin}/v1/models answered HTTP {resp.status_code}; try again later")
    models = {m.get("id") for m in (resp.json() or {}).get("data") or [] if isinstance(m, dict)}
    if s.openai_live_model not in models:
        return Finding("GPT-Live", False, f"{s.openai_live_model!r} is not among this key's models; "
                                          "set OPENAI_LIVE_MODEL or ask for access")
    return Finding("GPT-Live", True, f"{origin} reachable; {s.openai_live_model} is available to this key")


def _route(ctx: Context, url_key: str, bind_key: str, url: Callable[[], str], bind: str) -> tuple[str, str]:
    """(public URL, local HOST:PORT) of one route: as the running daemon serves it (behind the proxy,
    under its /d/N/, on its own ports), else as these settings would."""
    daemon = ctx.daemon or {}
    if daemon.get(url_key) and daemon.get(bind_key):
        return str(daemon[url_key]), str(daemon[bind_key])
    return url(), bind


async def check_ingress(ctx: Context) -> Finding:
    s = ctx.settings
    if not s.public_base_url and not (ctx.daemon or {}).get("health_url"):
        return Finding("public ingress", False, "set PUBLIC_BASE_URL to the https URL that reaches this daemon")
    url, bind = _route(ctx, "health_url", "bind", s.health_url, s.calld_bind)
    return await _same_daemon(ctx, "public ingress", url, bind, "/health",
                              not_calld=f"{url} does not reach calld: check PUBLIC_BASE_URL and the proxy", ours="the calld")


async def check_media_ingress(ctx: Context) -> Finding:
    """The media socket's way in: the proxy's /telnyx/media/ rule (or PUBLIC_MEDIA_URL) must reach
    this daemon's media listener, which answers /telnyx/media/health with the same token."""
    s = ctx.settings
    if not s.public_base_url and not s.public_media_url and not (ctx.daemon or {}).get("media_health_url"):
        return Finding("media ingress", False, "set PUBLIC_BASE_URL (or PUBLIC_MEDIA_URL) to where Telnyx reaches the media socket")
    url, bind = _route(ctx, "media_health_url", "media_bind", s.media_health_url, s.media_bind)
    prefix = url.split("://", 1)[-1].partition("/")[2].removesuffix("health")
    return await _same_daemon(ctx, "media ingress", url, bind, "/telnyx/media/health",
                              not_calld=f"route /{prefix} (with the WebSocket upgrade) to CALLD_MEDIA_BIND ({bind})",
                              ours="the media listener")


async def _same_daemon(ctx: Context, name: str, url: str, bind: str, path: str, *, not_calld: str, ours: str) -> Finding:
    """Does the public `url` answer with the serve token of whatever listens on `bind` here?"""
    try:
        async with httpx.AsyncClient(transport=ctx.transport, timeout=PROBE_TIMEOUT_S) as http:
            public = await http.get(url)
            try:
                local = await http.get(f"http://{bind}{path}")
            except httpx.HTTPError:
                local = None
    except httpx.HTTPError as exc:
        return Finding(name, False, f"{url} unreachable ({type(exc).__name__}); start the tunnel or proxy")
    token = _token(public)
    if token is None:
        return Finding(name, False, f"{url} answered HTTP {public.status_code} without a calld token; {not_calld}")
    if local is None:
        return Finding(name, False, f"{url} answers, but no calld listens on {bind} to compare; start calld")
    if _token(local) != token:
        return Finding(name, False, f"{url} reaches another calld than the one on {bind}")
    return Finding(name, True, f"{url} reaches {ours} on {bind}")


async def check_texting_ingress(ctx: Context) -> Finding:
    """Texting is on: Linq's webhook URL must reach a calld. An unsigned POST is what calld refuses with
    401 and a signature error (nothing is taken); a proxy with no rule for it answers otherwise."""
    url = (ctx.daemon or {}).get("texting_url") or f"{ctx.settings.public_base_url.rstrip('/')}/linq/webhook"
    try:
        async with httpx.AsyncClient(transport=ctx.transport, timeout=PROBE_TIMEOUT_S) as http:
            resp = await http.post(url, content=b"{}", headers={"content-type": "application/json"})
    except httpx.HTTPError as exc:
        return Finding("texting ingress", False, f"{url} unreachable ({type(exc).__name__}); start the tunnel or proxy")
    try:
        said = resp.json().get("error", "") if resp.status_code == 401 else ""
    except (ValueError, AttributeError):
        said = ""
    if not str(said).startswith("signature"):
        return Finding("texting ingress", False, f"{url} answered HTTP {resp.status_code}, not calld's texting webhook; route "
                                                 "/linq/webhook to the daemons (calld-ctl proxy-config prints the rule)")
    return Finding("texting ingress", True, f"{url} reaches a calld (it refuses an unsigned text, as it should)")


def _texting(ctx: Context) -> bool:
    if ctx.daemon is not None and "texting_url" in ctx.daemon:
        return bool(ctx.daemon["texting_url"])
    s = ctx.settings
    return bool(s.public_base_url and s.linq_api_key.get_secret_value() and s.linq_webhook_secret.get_secret_value())


def _token(resp: httpx.Response) -> str | None:
    try:
        return resp.json().get("serve_token") if resp.status_code == 200 else None
    except (ValueError, AttributeError):
        return None


async def check_bucket(ctx: Context) -> Finding:
    """Publishing is on: a probe object written, read back and deleted (calld.publish's own check)."""
    from calld.publish.store import check_bucket as probe

    report = await trio.to_thread.run_sync(probe, ctx.settings)  # boto3 blocks
    if report.ok:
        return Finding("bucket", True, f"{report.where}: write, read back and delete work")
    return Finding("bucket", False, "; ".join(f"{s.step}: {s.detail}" for s in report.steps if not s.ok))


LOCAL_CHECKS: list[Check] = [check_state_dir, check_ledger, check_disk, check_socket]
LIVE_CHECKS: list[Check] = [check_telnyx, check_gpt_live, check_ingress, check_media_ingress]
PUBLISH_CHECKS: list[Check] = [check_bucket]  # when ARTIFACTS_RETENTION is not keep


async def run_doctor(settings: Settings, *, transport: httpx.AsyncBaseTransport | None = None,
                     state_why: str | None = None, ledger_why: str | None = None, ledger_unreachable: str | None = None,
                     daemon: Mapping[str, Any] | None = None) -> list[Finding]:
    ctx = Context(settings, transport, state_why, ledger_why, ledger_unreachable, daemon)
    findings = [Finding("settings", True, f"valid; mode {settings.calld_mode}, state in {settings.calld_state_dir}")]
    if settings.calld_mode == "live" and (problems := settings.live_problems()):
        findings.append(Finding("live settings", False, "; ".join(problems)))
    checks = LOCAL_CHECKS + (LIVE_CHECKS if settings.calld_mode == "live" else [])
    if settings.calld_mode == "live" and _texting(ctx):
        checks = checks + [check_texting_ingress]
    if settings.artifacts_retention != "keep":
        checks = checks + PUBLISH_CHECKS
    for check in checks:
        try:
            findings.append(await check(ctx))
        except Exception as exc:  # noqa: BLE001 - one broken check must not hide the others
            findings.append(Finding(check.__name__.removeprefix("check_"), False, f"the check itself failed: {exc!r}"))
    return findings
