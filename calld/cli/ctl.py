"""calld-ctl: talk to the calld daemon over its control socket.

Exit codes (stable; scripts may rely on them):
  0  answered or booked         1  verify or ledger check: a check failed
  2  usage: bad input, refused request                           3  declined
  4  no_answer                   5  voicemail                    6  failed
  7  no daemon is listening (calls, tail, metrics: one of CALLD_SOCKET's did not, the rest shown;
     show: the daemon holding the call)                        8  the daemon went away mid-call: look the request up later
130  Ctrl-C: calld-ctl stopped; an ask or book it sent goes on in the daemon (the line on stderr
     names its request id and the command that fetches its result)
141  stdout was closed before all was written (`calld-ctl history | head -1`): nothing on stderr
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import select
import sys
import traceback
import uuid
from collections.abc import Awaitable, Callable, Sequence
from contextlib import aclosing
from pathlib import Path
from typing import Any

import attrs
import trio
from pydantic import ValidationError

from calld.cli import ledger_cmds
from calld.cli.client import ControlClient, ControlError, DaemonUnreachable, StreamBroken
from calld.cli.exits import (EXIT_DECLINED, EXIT_FAILED, EXIT_LOST, EXIT_NO_ANSWER, EXIT_OK, EXIT_PIPE_CLOSED, EXIT_UNAVAILABLE,
                             EXIT_UNREACHABLE, EXIT_USAGE, EXIT_VERIFY_FAILED, EXIT_VOICEMAIL, UsageError)
from calld.domain.fields import for_ctl
from calld.domain.questions import QuestionType
from calld.domain.status import EXIT_CODES
from calld.settings import SettingsError

STATUS_EXIT = EXIT_CODES  # the exit code follows the result's status (calld.domain.status)


def _err(message: str) -> None:
    print(f"calld-ctl: {message}", file=sys.stderr)


def _table(rows: list[dict[str, Any]], columns: list[str]) -> str:
    if not rows:
        return "(none)"
    cells = [[str(r.get(c, "") if r.get(c) is not None else "-") for c in columns] for r in rows]
    widths = [max(len(c), *(len(row[i]) for row in cells)) for i, c in enumerate(columns)]
    head = "  ".join(c.upper().ljust(w) for c, w in zip(columns, widths, strict=True))
    body = ["  ".join(v.ljust(w) for v, w in zip(row, widths, strict=True)) for row in cells]
    return "\n".join([head, *body])


def _region(args: argparse.Namespace) -> str:
    from calld.domain.ids import DEFAULT_REGION

    return getattr(args, "region", None) or DEFAULT_REGION  # CALLD_REGION, read by main()


def _body(model: Any, fields: dict[str, Any], scenario: str | None, region: str) -> dict[str, Any]:
    """Validate the flags locally (the daemon validates again) so a typo fails fast and clearly.
    A --to typed without + is read as dialled in `region`, as the daemon reads it."""
    try:
        req = model.model_validate({k: v for k, v in fields.items() if v is not None}, context={"region": region})
    except ValidationError as exc:
        raise UsageError(_explain(exc)) from None
    body = req.model_dump(mode="json", exclude_none=True)
    if scenario:
        body["scenario"] = scenario
    return body


def _scheduling(body: dict[str, Any], args: argparse.Namespace) -> dict[str, Any]:
    """--when-open / --at: the call is queued in the daemon's ledger instead of placed now."""
    when_open, at = getattr(args, "when_open", False), getattr(args, "at", None)
    if when_open and at is not None:
        raise UsageError("give --when-open or --at, not both")
    if at is not None and not at.strip():
        raise UsageError('--at is empty: say when, e.g. --at "tomorrow 9am"')
    if at is not None:
        from calld.domain.words import control_problem

        if (problem := control_problem(at)) is not None:
            raise UsageError(f"--at: {problem}")
    if when_open:
        body["when_open"] = True
    if at is not None:
        body["at"] = at.strip()
    return body


def ask_body(args: argparse.Namespace) -> dict[str, Any]:
    from calld.domain.requests import AskRequest

    fields = {"to": args.to, "ask": args.ask, "name": args.name, "item": args.item, "user": args.user,
              "request_id": args.request_id}
    return _scheduling(_body(AskRequest, fields, args.scenario, _region(args)), args)


def _explain(exc: ValidationError) -> str:
    from calld.domain.fields import FLAGS

    out = []
    for e in exc.errors():
        loc = [str(p) for p in e["loc"]]
        flag = FLAGS.get(loc[0], loc[0]) if loc else "input"
        msg = e["msg"].removeprefix("Value error, ")
        out.append(f"{flag}: {msg}" if loc and not msg.startswith(flag) else msg)  # the rule may name its flag itself
    return "; ".join(out)


def new_request_id() -> str:
    """Every request carries an id, so a broken stream can always be followed up by it."""
    return f"ctl-{uuid.uuid4().hex[:20]}"


async def run_ask(client: ControlClient, body: dict[str, Any], *, out: Any = None, err: Any = None, book: bool = False) -> int:
    """Stream one call's progress to `err` and its result, as one JSON line, to `out`; the exit code.

    If the stream breaks (the daemon died, or its drain ran out) the stored result is read back by
    request id and printed as if it had come on the stream; failing that, one line says how to
    look the request up later."""
    out = out or sys.stdout
    err = err or sys.stderr
    body = {**body, "request_id": body.get("request_id") or new_request_id()}
    result: dict[str, Any] | None = None
    queued: dict[str, Any] | None = None
    broken: str | None = None
    try:
        async with aclosing(client.book(body) if book else client.ask(body)) as stream:
            async for item in stream:
                if "progress" in item:
                    p = item["progress"]
                    for phase in p["phases"]:
                        print(f"{p['t_ms'] / 1000:6.1f}s  {phase}", file=err, flush=True)
                elif "result" in item:
                    result = item["result"]
                elif "queued" in item:
                    queued = item["queued"]  # the stream ends here: nothing is dialled yet
                elif "note" in item:  # the daemon's word on how it took the request (--when-open, window open)
                    print(f"calld-ctl: {for_ctl(item['note'])}", file=err, flush=True)
                elif "error" in item:
                    broken = item["error"]  # the daemon's last line; the stream ends after it
    except StreamBroken as exc:
        broken = exc.detail
    if queued is not None:
        return _report_queued(queued, out, err)
    if result is None:
        result = await _stored_result(client, body["request_id"], broken or "the stream ended without a result", err)
        if result is None:
            return EXIT_LOST
    print(json.dumps(result), file=out, flush=True)
    return STATUS_EXIT.get(result.get("status", "failed"), EXIT_FAILED)


def _report_queued(q: dict[str, Any], out: Any, err: Any) -> int:
    """A call scheduled for later: its queue entry on stdout, what happens next on stderr."""
    print(json.dumps(q), file=out, flush=True)
    if q["status"] == "cancelled":
        print(f"calld-ctl: request {q['request_id']} was cancelled; nothing will be dialled", file=err, flush=True)
        return EXIT_USAGE
    print(f"queued: {q['request_id']} will be dialled at {q['due_at']} (calld-ctl queue; calld-ctl cancel {q['request_id']})",
          file=err, flush=True)
    return EXIT_OK


async def _stored_result(client: ControlClient, request_id: str, why: str, err: Any) -> dict[str, Any] | None:
    """The request's result from the ledger, or None after one line saying what to do."""
    try:
        row = await client.request_status(request_id)
    except (DaemonUnreachable, StreamBroken):
        print(f"calld-ctl: the daemon went away during request {request_id} ({why}); once calld runs again, "
              f"look it up with: calld-ctl show {request_id}", file=err, flush=True)
        return None
    except ControlError:
        print(f"calld-ctl: {why}; the ledger has no request {request_id}: nothing was dialled for it", file=err, flush=True)
        return None
    if row.get("status") == "done" and row.get("result"):
        print(f"calld-ctl: {why}; the stored result of request {request_id} follows", file=err, flush=True)
        return row["result"]
    print(f"calld-ctl: {why}; request {request_id} is still {row.get('status')}: "
          f"look it up later with: calld-ctl show {request_id}", file=err, flush=True)
    return None


async def _with_client(args: argparse.Namespace, fn: Callable[[ControlClient], Awaitable[int]], *, places: bool = False) -> int:
    return await on_daemons(getattr(args, "sockets", None) or (args.socket,), fn, places=places)


async def on_daemons(sockets: Sequence[Path], fn: Callable[[ControlClient], Awaitable[int]], *, places: bool = False,
                     err: Any = None) -> int:
    """`fn` with the first daemon in `sockets` that takes it (CALLD_SOCKET may list several).

    A daemon that is down (no socket, or nothing listening) is passed over for the next. A request that
    places a call (`places`: ask, book) also moves on from a daemon that refuses it with 503 (at
    CALLD_MAX_CALLS, draining, its disk full, its ledger unreachable): such a refusal comes before anything is written or dialled, so the
    same request id (`fn` sends the same body each time) is new to the next daemon, and one that knows
    it (a shared ledger) attaches to its call or returns its result. Any other answer is the answer.
    With more than one socket, stderr says which daemon answered and why each before it was passed over."""
    err = err or sys.stderr
    for i, path in enumerate(sockets):
        last = i == len(sockets) - 1
        try:
            async with ControlClient(path) as client:
                code = await fn(client)
        except DaemonUnreachable:
            if last:
                raise
            print(f"calld-ctl: no daemon answers on {path}; trying {sockets[i + 1]}", file=err, flush=True)
            continue
        except ControlError as exc:
            if last or not places or exc.status != 503:
                raise
            print(f"calld-ctl: the daemon on {path} refused ({exc.message}); trying {sockets[i + 1]}", file=err, flush=True)
            continue
        if len(sockets) > 1:
            print(f"calld-ctl: answered by the daemon on {path}", file=err, flush=True)
        return code
    raise AssertionError("unreachable: the last socket returns or raises")


def _sending(args: argparse.Namespace, body: dict[str, Any]) -> dict[str, Any]:
    """The request id is chosen before the request goes out, so a Ctrl-C can name it (`_interrupted`).
    A --to typed otherwise than the E.164 form is echoed as the number that will be dialled."""
    body = {**body, "request_id": body.get("request_id") or new_request_id()}
    args.sent_request_id = body["request_id"]
    if args.to.strip() != body["to"]:
        how = "" if args.to.strip().startswith("+") else f", read as dialled in {_region(args)} (CALLD_REGION)"
        _err(f"--to {args.to.strip()} is {body['to']}{how}; that is the number calld dials")
    return body


async def _placing(args: argparse.Namespace, body: dict[str, Any], *, book: bool) -> int:
    """Place `body`; a refusal for the user that no --user chose says so, since that user is rarely the one meant."""
    try:
        return await _with_client(args, lambda c: run_ask(c, body, book=book), places=True)
    except ControlError as exc:
        if exc.status == 404 and args.user is None:  # ask and book's one 404: the user has no number
            raise ControlError(exc.status, f"no --user given, so calld calls as user 'default': {exc.message}; "
                                           "or give --user with a user `calld-ctl did list` shows") from None
        raise


async def _ask(args: argparse.Namespace) -> int:
    return await _placing(args, _sending(args, ask_body(args)), book=False)


def book_body(args: argparse.Namespace) -> dict[str, Any]:
    from calld.domain.requests import BookRequest

    fields = {"to": args.to, "name": args.name, "party": args.party, "time": args.time, "notes": args.notes,
              "window": args.window, "user": args.user, "request_id": args.request_id}
    return _scheduling(_body(BookRequest, fields, args.scenario, _region(args)), args)


async def _book(args: argparse.Namespace) -> int:
    return await _placing(args, _sending(args, book_body(args)), book=True)


async def _did_provision(args: argparse.Namespace) -> int:
    from calld.domain.ids import UserId

    try:
        UserId(args.user)
    except ValueError as exc:
        raise UsageError(f"--user: {exc}") from None

    async def go(c: ControlClient) -> int:
        row = await c.provision(args.user)
        print(json.dumps(row) if args.json else row["did"])
        return EXIT_OK

    return await _with_client(args, go)


async def _did_list(args: argparse.Namespace) -> int:
    async def go(c: ControlClient) -> int:
        rows = await c.dids()
        print(json.dumps(rows) if args.json else _table(rows, ["user", "did", "status"]))
        return EXIT_OK

    return await _with_client(args, go)


def _sockets(args: argparse.Namespace) -> Sequence[Path]:
    return getattr(args, "sockets", None) or (args.socket,)


async def _with_owner(args: argparse.Namespace, fn: Callable[[ControlClient], Awaitable[int]]) -> int:
    """`fn` about one call, with the daemon that holds it (calld.cli.daemons.on_owner)."""
    from calld.cli.daemons import on_owner

    return await on_owner(_sockets(args), fn)


async def _calls(args: argparse.Namespace) -> int:
    """Every daemon's calls on the line, each with the daemon that holds it and its socket."""
    from calld.cli.daemons import on_every_daemon
    from calld.observe.summary import hangup_column

    sockets = _sockets(args)
    rows: list[dict[str, Any]] = []

    async def go(c: ControlClient, daemon: str) -> None:
        rows.extend({**r, "daemon": daemon, "socket": str(c.path)} for r in await c.calls())

    missed = await on_every_daemon(sockets, go)
    order = [str(p) for p in sockets]
    rows.sort(key=lambda r: order.index(r["socket"]))  # CALLD_SOCKET's order (they answer in any)
    if args.json:
        print(json.dumps(rows))
    else:
        flat = [{"daemon": r["daemon"], "run_id": r["run_id"], "to": r["to"], "user": r["user"], "age": f"{r['age_s']:.0f}s",
                 "call_control_id": r["call_control_id"], "question": r["question"], **r["tracks"],
                 "hangup": hangup_column(r["tracks"]["hangup"], r.get("hangup"))} for r in rows]
        print(_table(flat, ["daemon"] * (len(sockets) > 1) + ["run_id", "to", "user", "age", "call_control_id", "question",
                                                              "dial", "telnyx", "media", "live", "conversation", "hangup"]))
    return EXIT_UNREACHABLE if missed else EXIT_OK


async def _show(args: argparse.Namespace) -> int:
    from calld.observe.summary import hangup_progress_words, show_text

    async def go(c: ControlClient) -> int:
        if args.json:
            try:
                print(json.dumps(await c.show(args.ident), indent=2))
            except ControlError as exc:
                if exc.status != 404:
                    raise
                print(json.dumps(await c.detail(args.ident), indent=2))  # pruned: what the ledger kept
            return EXIT_OK
        if args.timeline is not None:
            return await _write_timeline(c, args.ident, args.timeline)
        try:
            detail = await c.detail(args.ident)
        except ControlError as exc:
            if exc.status != 409:
                raise
            report = await c.show(args.ident)  # in flight: its tracks so far
            order = ("dial", "telnyx", "media", "live", "conversation", "hangup")
            tracks = ", ".join(f"{k} {report['tracks'][k]}" for k in order if k in report["tracks"])
            print(f"call {report.get('call_control_id') or report['run_id']} is in flight: {tracks}")
            if words := hangup_progress_words(report.get("hangup")):
                print(f"  hangup: {words}")
            return EXIT_OK
        print(show_text(detail, transcript=args.transcript))
        return EXIT_OK

    return await _with_owner(args, go)


def _verify_finished(args: argparse.Namespace) -> int:
    """verify RUN: the checks that apply to a finished call's artifacts (a folder, or a call the daemon knows)."""
    from calld.verify import verify_finished

    target = Path(args.job)
    if not (target / "call_report.json").is_file():
        async def find(c: ControlClient) -> int:
            detail = await c.detail(args.job)
            if detail.get("pruned"):
                raise UsageError(f"verify: the artifacts of {args.job} were pruned; nothing is left to check")
            nonlocal target
            target = Path(detail["dir"])
            return EXIT_OK

        if (code := trio.run(_with_owner, args, find)) != EXIT_OK:
            return code
    report = verify_finished(target)
    for line in report.lines():
        print(line)
    print(f"artifacts: {target}", file=sys.stderr)
    return EXIT_OK if report.passed else EXIT_VERIFY_FAILED


async def _write_timeline(c: ControlClient, ident: str, target: str) -> int:
    """No FILE: the call's own timeline.svg (drawn now if missing). FILE: the picture written there (.png or .svg)."""
    if not target:
        await c.timeline(ident, "svg")  # (re)draws the call's timeline.svg
        detail = await c.detail(ident)
        print(detail["files"].get("timeline.svg") or "the call's artifacts were pruned; no timeline")
        return EXIT_OK
    out = Path(target)
    suffix = out.suffix.lower().lstrip(".")
    if suffix not in ("png", "svg"):
        raise UsageError(f"--timeline: {target!r} must end in .png or .svg")
    if not out.parent.is_dir():
        raise UsageError(f"--timeline: {str(out.parent)!r} is not a directory; give a file in a directory that exists")
    picture = await c.timeline(ident, suffix)
    try:
        out.write_bytes(picture)
    except OSError as exc:
        raise UsageError(f"--timeline: cannot write {target!r} ({exc.strerror or exc}); give a file you can write") from None
    print(out.resolve())
    return EXIT_OK


def tail_line(item: dict[str, Any]) -> str:
    """One line per step, every line of a call under its run id; the last one says how it ended."""
    from calld.observe.history import short_answer
    from calld.observe.summary import status_line

    head = f"{item['run_id']} {item['t_ms'] / 1000:6.1f}s"
    if (result := item.get("result")) is not None:
        answer = short_answer(result, 100)
        return f"{head} finished: {status_line(result)}" + (f": {answer}" if answer else "")
    what = ", ".join(item["phases"]) or item["event"]
    if item.get("call_control_id") and item.get("event") == "dial.accepted":
        what += f" (call_control_id {item['call_control_id']})"
    return f"{head} {what}"


async def _tail(args: argparse.Namespace) -> int:
    """Every daemon's steps as they happen; with several daemons each line says whose call it is."""
    from calld.cli.daemons import on_every_daemon

    several = len(_sockets(args)) > 1

    async def go(c: ControlClient, daemon: str) -> None:
        async for item in c.tail():
            if several:
                item = {**item, "daemon": daemon}
            print(json.dumps(item) if args.json else f"daemon {daemon}: " * several + tail_line(item), flush=True)

    missed = await on_every_daemon(_sockets(args), go)
    return EXIT_UNREACHABLE if missed else EXIT_OK


# -- publishing (calld.publish): fetch a published call, check the bucket -------------------------


async def run_fetch(client: ControlClient, ident: str, dest: Path, *, out: Any = None, http: Any = None) -> int:
    """Bring a published call's artifacts into `dest`, each checked against its recorded SHA-256.
    `http`: the httpx.AsyncClient for the downloads (default: a new one with a 30 s timeout)."""
    from calld.publish.fetch import FetchError, TargetRefused, download

    out = out or sys.stdout
    objects = await client.published_objects(ident)
    try:
        paths = await download(objects, dest, client=http)
    except TargetRefused as exc:
        _err(str(exc))
        return EXIT_USAGE
    except FetchError as exc:
        _err(str(exc))
        return EXIT_FAILED
    for path in paths:
        print(path, file=out)
    return EXIT_OK


async def _fetch(args: argparse.Namespace) -> int:
    return await _with_client(args, lambda c: run_fetch(c, args.ident, args.dir))


def _publish_check(args: argparse.Namespace) -> int:
    from calld.publish.store import check_bucket
    from calld.settings import SettingsError, load_settings

    try:
        settings = load_settings()
    except SettingsError as exc:
        raise UsageError(str(exc)) from None
    report = check_bucket(settings)
    for line in report.lines():
        print(line)
    return EXIT_OK if report.ok else EXIT_VERIFY_FAILED
# -- after the call (issue 16): history, metrics, prune, doctor ---------------------------------------


async def _history(args: argparse.Namespace) -> int:
    from calld.observe.history import BadQuery, check_status, parse_since
    from calld.observe.summary import HISTORY_COLUMNS, history_table_rows

    try:  # checked here too, so a typo fails before the socket is opened
        since = parse_since(args.since) if args.since else None
        status = check_status(args.status) if args.status else None
    except BadQuery as exc:
        raise UsageError(f"--{exc}") from None
    if args.limit < 1:
        raise UsageError("--limit: must be at least 1")

    async def go(c: ControlClient) -> int:
        rows = await c.history(user=args.user, status=status, since=since, limit=args.limit)
        print(json.dumps(rows) if args.json else _table(history_table_rows(rows), HISTORY_COLUMNS))
        return EXIT_OK

    return await _with_client(args, go)


async def _ui(args: argparse.Namespace) -> int:
    async def go(c: ControlClient) -> int:
        url = await c.ui_link()
        print(url)
        if args.open:
            import webbrowser

            if not webbrowser.open(url):
                print("no browser could be started here; open the link above (it is good for 5 minutes, once)", file=sys.stderr)
        return EXIT_OK

    return await _with_client(args, go)


async def _metrics(args: argparse.Namespace) -> int:
    """One daemon's Prometheus text as it is; several daemons' merged, each sample labelled daemon="N"."""
    from calld.cli.daemons import merge_metrics, on_every_daemon

    sockets = _sockets(args)
    texts: dict[Path, tuple[str, str]] = {}

    async def go(c: ControlClient, daemon: str) -> None:
        texts[c.path] = (daemon, await c.metrics())

    missed = await on_every_daemon(sockets, go)
    answered = [texts[p] for p in sockets if p in texts]  # CALLD_SOCKET's order (they answer in any)
    print(answered[0][1] if len(sockets) == 1 else merge_metrics(answered), end="")
    return EXIT_UNREACHABLE if missed else EXIT_OK


async def _prune(args: argparse.Namespace) -> int:
    if not 0 <= args.older_than <= 36500:  # nan and inf too: the daemon takes a finite number of days
        raise UsageError("--older-than: a number of days, from 0 to 36500")

    async def go(c: ControlClient) -> int:
        done = await c.prune(args.older_than, dry_run=args.dry_run)
        if args.json:
            print(json.dumps(done))
            return EXIT_OK
        verb = "would remove" if done["dry_run"] else "removed"
        for path in done["removed"]:
            print(f"{verb} {path}")
        print(f"{verb} {len(done['removed'])} call(s), {done['freed_bytes'] / 2**20:.1f} MB; kept {done['kept']} "
              "newer; the ledger keeps every result")
        return EXIT_OK

    return await _with_client(args, go)


def _doctor(args: argparse.Namespace) -> int:
    from calld.observe.doctor import Finding
    from calld.settings import SettingsError, load_client_settings, load_settings

    flags = {"calld_socket": "--socket"} if args.socket_given else None
    try:  # several daemons' sockets (CALLD_SOCKET=a,b or calld@N.socket's): each daemon is checked in turn
        sockets: tuple[Any, ...] = load_client_settings(**({"calld_socket": args.socket} if args.socket_given else {}),
                                                        flags=flags).calld_socket
    except SettingsError:
        sockets = (None,)  # the daemon's settings below say what is wrong, in full
    checked: list[tuple[Any, list[Any]]] = []
    for sock in sockets:
        given = {"calld_socket": sock} if sock is not None and (args.socket_given or len(sockets) > 1) else {}
        try:
            settings = load_settings(**given, flags=flags)
        except SettingsError as exc:
            checked.append((sock, [Finding("settings", False, str(exc))]))
        else:
            checked.append((sock, trio.run(_doctor_where, settings)))
    several = len(checked) > 1
    if args.json:
        print(json.dumps([{**({"socket": str(sock)} if several else {}), **f.as_dict()} for sock, found in checked for f in found]))
    else:
        for sock, found in checked:
            if several:
                print(f"daemon at {sock}:")
            for f in found:
                print(("  " if several else "") + f.line())
    return EXIT_OK if all(f.ok for _, found in checked for f in found) else EXIT_VERIFY_FAILED


async def _doctor_where(settings: Any) -> list[Any]:
    """The doctor looks at the running daemon's state dir (asked over its socket), else the settings'."""
    from pydantic import SecretStr

    from calld.cli.where import ask_daemon, choose, choose_ledger
    from calld.ledger import is_postgres
    from calld.observe.doctor import run_doctor

    daemon = await ask_daemon(settings.calld_socket)
    where = choose(settings, settings.calld_socket, None, daemon)
    ledger = choose_ledger(settings, settings.calld_socket, None, daemon)
    checked = where.applied(settings)
    if daemon is not None:  # the daemon's ledger, whatever this shell's CALLD_LEDGER_URL says
        url = str(ledger.target) if is_postgres(ledger.target) else ""
        checked = checked.model_copy(update={"calld_ledger_url": SecretStr(url)})
    return await run_doctor(checked, state_why=where.why, daemon=daemon,
                            ledger_why=ledger.why if daemon is not None else None,
                            ledger_unreachable=ledger.missing_password() if ledger.target is None else None)


def _interrupted(args: argparse.Namespace, argv: list[str]) -> None:
    """Ctrl-C on ask or book stops calld-ctl, not the call: say so, with the request id and the command
    that fetches its result later (the same request again, by its id: it waits for the call, then prints
    the stored result)."""
    import shlex

    rid = args.sent_request_id
    again = shlex.join(["calld-ctl", *argv, *([] if args.request_id else ["--request-id", rid])])

    async def status() -> str | None:
        with trio.move_on_after(2.0):
            async with ControlClient(args.socket, timeout=2.0) as client:
                return (await client.request_status(rid)).get("status")
        return "unknown"

    try:
        found = trio.run(status)
    except ControlError:
        found = None  # calld has no such request
    except (DaemonUnreachable, StreamBroken, KeyboardInterrupt):
        found = "unknown"
    if found is None and (getattr(args, "at", None) or getattr(args, "when_open", False)):
        _err(f"interrupted; calld-ctl queue shows whether request {rid} was queued (calld-ctl cancel {rid} drops it)")
    elif found is None:
        _err(f"interrupted before request {rid} reached calld; nothing was dialled for it")
    elif found == "done":
        _err(f"interrupted; request {rid} has finished in the daemon. Its result: {again}")
    elif found == "unknown":
        _err(f"interrupted; if request {rid} reached calld, its call goes on in the daemon. "
             f"Fetch its result later with: {again}")
    else:
        _err(f"interrupted; the call goes on in the daemon as request {rid}. "
             f"Fetch its result later (this waits until the call ends) with: {again}  "
             f"(calld-ctl show {rid} shows it meanwhile)")


def version() -> str:
    from importlib.metadata import PackageNotFoundError
    from importlib.metadata import version as package_version

    try:
        return package_version("calld")
    except PackageNotFoundError:
        return "unknown"


# -- policy: the queue of calls for later, and the opt-out list ---------------------------------------


async def _queue(args: argparse.Namespace) -> int:
    async def go(c: ControlClient) -> int:
        rows = await c.queue(include_done=args.all)
        print(json.dumps(rows) if args.json else _table(rows, ["request_id", "kind", "user", "to", "due_at", "mode", "status"]))
        return EXIT_OK

    return await _with_client(args, go)


async def _cancel(args: argparse.Namespace) -> int:
    async def go(c: ControlClient) -> int:
        row = await c.cancel(args.request_id)
        print(f"cancelled {row['request_id']} (was due {row['due_at']}); nothing will be dialled")
        return EXIT_OK

    return await _with_client(args, go)


async def _optout_list(args: argparse.Namespace) -> int:
    async def go(c: ControlClient) -> int:
        rows = await c.opt_outs()
        print(json.dumps(rows) if args.json else _table(rows, ["number", "said_at", "user", "run_id", "quote"]))
        return EXIT_OK

    return await _with_client(args, go)


async def _optout_remove(args: argparse.Namespace) -> int:
    from calld.domain.ids import typed_number

    try:
        number = typed_number(args.number, _region(args))
    except ValueError as exc:
        raise UsageError(str(exc)) from None

    async def go(c: ControlClient) -> int:
        await c.remove_opt_out(number)
        print(f"{number} is off the opt-out list; calld may call it again")
        return EXIT_OK

    return await _with_client(args, go)


def _add_policy_commands(sub: Any, ask: argparse.ArgumentParser, book: argparse.ArgumentParser) -> None:
    for p in (ask, book):
        p.add_argument("--when-open", action="store_true", help="outside the calling window, queue the call until it opens")
        p.add_argument("--at", help='queue the call for this time, in the target\'s local time (e.g. "tomorrow 9am")')
    queue = sub.add_parser("queue", help="calls queued for later (--when-open, --at)")
    queue.add_argument("--all", action="store_true", help="also those dialled, cancelled or refused")
    queue.add_argument("--json", action="store_true", help="the queue as JSON instead of a table")
    queue.set_defaults(afunc=_queue)
    cancel = sub.add_parser("cancel", help="drop a queued call before it is dialled")
    cancel.add_argument("request_id", help="the queued request's id (calld-ctl queue lists them)")
    cancel.set_defaults(afunc=_cancel)
    optout = sub.add_parser("optout", help="numbers that asked not to be called again").add_subparsers(dest="optout_command", required=True)
    olist = optout.add_parser("list", help="every number on the opt-out list, with when and what was said")
    olist.add_argument("--json", action="store_true", help="the list as JSON instead of a table")
    olist.set_defaults(afunc=_optout_list)
    oremove = optout.add_parser("remove", help="take a number off the opt-out list (the operator's decision)")
    oremove.add_argument("number", help="the number as it is listed, or as dialled in CALLD_REGION")
    oremove.set_defaults(afunc=_optout_remove)


def _verify(args: argparse.Namespace) -> int:
    import shutil
    import tempfile

    from calld.observe.timeline import check_picture, write_timeline
    from calld.verify import Check, verify_book, verify_quick_ask

    if args.job not in ("ask", "book"):
        return _verify_finished(args)

    workspace = Path(tempfile.mkdtemp(prefix=f"calld-verify-{args.job}-"))
    try:
        report = verify_book(workspace=workspace) if args.job == "book" else verify_quick_ask(workspace=workspace)
        # The picture is drawn after the call from its artifacts, and read back to check it shows them.
        problems = check_picture(write_timeline(report.run_dir), report.run_dir)
        drawn = Check("timeline_drawn", not problems,
                      "; ".join(problems) or "timeline.svg shows every track, both voices and the ending")
        report = attrs.evolve(report, checks=(*report.checks, drawn))
        for line in report.lines():
            print(line)
        print(f"artifacts: {report.run_dir}" if args.keep else f"removed {workspace} (--keep keeps it)", file=sys.stderr)
        return EXIT_OK if report.passed else EXIT_VERIFY_FAILED
    finally:
        if not args.keep:
            shutil.rmtree(workspace, ignore_errors=True)


def build_parser() -> argparse.ArgumentParser:
    from calld.settings import default_socket_paths

    parser = _CtlParser(
        prog="calld-ctl",
        description="Talk to calld.",
        epilog=__doc__.split("\n\n", 1)[1] if __doc__ else None,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--socket", default=None, help="the daemon's control socket, or several separated by commas (tried in turn; "
                        f"default: $CALLD_SOCKET or {','.join(map(str, default_socket_paths()))})")
    parser.add_argument("-v", "--verbose", action="store_true", help="log details on stderr")
    parser.add_argument("--version", action="version", version=f"calld-ctl {version()}")
    sub = parser.add_subparsers(dest="command", required=True)

    ask = sub.add_parser("ask", help="phone a business with one question; progress on stderr, result JSON on stdout")
    ask.add_argument("--to", required=True, help="the business's number: E.164 (+14155550123) or as dialled in CALLD_REGION (415-555-0123)")
    ask.add_argument("--ask", required=True, choices=[q.value for q in QuestionType], help="what to ask")
    ask.add_argument("--item", help="what to ask about (stock and aisle)")
    ask.add_argument("--name", required=True, help="the first name the agent calls on behalf of")
    ask.add_argument("--user", help="whose Telnyx number to call from (default: the user named 'default')")
    ask.add_argument("--request-id", help="an id that makes the request idempotent")
    ask.add_argument("--scenario", help="stub mode: which scripted business answers (e.g. decline, late_answer)")
    ask.set_defaults(afunc=_ask)

    book = sub.add_parser("book", help="phone a restaurant to book a table; progress on stderr, result JSON on stdout")
    book.add_argument("--to", required=True, help="the restaurant's number: E.164, or as dialled in CALLD_REGION")
    book.add_argument("--name", required=True, help="whose name the table is under (the agent calls on their behalf)")
    book.add_argument("--party", required=True, help="how many people (a whole number, 1 to 20)")
    book.add_argument("--time", required=True, help='when, as you would say it (e.g. "Friday 7pm")')
    book.add_argument("--notes", help='constraints to pass on (e.g. "outdoor if possible")')
    book.add_argument("--window", help="minutes either side of --time you would also accept (default 0)")
    book.add_argument("--user", help="whose Telnyx number to call from (default: the user named 'default')")
    book.add_argument("--request-id", help="an id that makes the request idempotent")
    book.add_argument("--scenario", help="stub mode: which scripted restaurant answers")
    book.set_defaults(afunc=_book)

    did = sub.add_parser("did", help="the users' Telnyx numbers").add_subparsers(dest="did_command", required=True)
    prov = did.add_parser("provision", help="give a user a number (once; repeats return the same one)")
    prov.add_argument("--user", required=True, help="the user to give a number (lowercase letters, digits, . _ -)")
    prov.add_argument("--json", action="store_true", help="the user's row as JSON instead of the bare number")
    prov.set_defaults(afunc=_did_provision)
    lst = did.add_parser("list", help="every user's number and its status")
    lst.add_argument("--json", action="store_true", help="the numbers as JSON instead of a table")
    lst.set_defaults(afunc=_did_list)

    calls = sub.add_parser("calls", help="calls in flight, with each track's state")
    calls.add_argument("--json", action="store_true", help="the calls as JSON instead of a table")
    calls.set_defaults(afunc=_calls)
    show = sub.add_parser("show", help="a finished call: summary, --transcript, --json report, --timeline picture")
    show.add_argument("ident", help="run id, call_control_id or request id")
    show.add_argument("--json", action="store_true", help="the full call_report.json")
    show.add_argument("--transcript", action="store_true", help="add the transcript with each turn's times")
    show.add_argument("--timeline", nargs="?", const="", metavar="FILE.png",
                      help="draw the call's timeline: to FILE (.png or .svg), else print where its timeline.svg is")
    show.set_defaults(afunc=_show)
    tail = sub.add_parser("tail", help="follow every call's events live; each call's last line is its result")
    tail.add_argument("--json", action="store_true", help="each event as one JSON line")
    tail.set_defaults(afunc=_tail)
    _observe_parsers(sub)

    from calld.messaging.cli import add_messaging_commands

    add_messaging_commands(sub, _with_client, _table)
    _add_policy_commands(sub, ask, book)

    fetch = sub.add_parser("fetch", help="download a published call's artifacts into DIR, a new or empty folder "
                           "(by request id, run id or call_control_id)")
    fetch.add_argument("ident", help="request id, run id or call_control_id of a published call")
    fetch.add_argument("dir", type=Path, help="where the files go: a new or empty folder")
    fetch.set_defaults(afunc=_fetch)
    publish = sub.add_parser("publish", help="the artifact bucket").add_subparsers(dest="publish_command", required=True)
    check = publish.add_parser("check", help="write, read and delete a probe object in PUBLISH_BUCKET (settings from .env)")
    check.set_defaults(func=_publish_check)

    ledger = sub.add_parser("ledger", help="the ledger (SQLite file or CALLD_LEDGER_URL's PostgreSQL): check, online backup, "
                            "migrate to PostgreSQL (works with calld running or not)")
    ledger_sub = ledger.add_subparsers(dest="ledger_command", required=True)
    check = ledger_sub.add_parser("check", help="SQLite: run its integrity check; PostgreSQL: check the server answers with calld's schema")
    check.add_argument("--state-dir", type=Path, help="calld's state directory (default: the running daemon's, else $CALLD_STATE_DIR)")
    check.set_defaults(func=ledger_cmds.check)
    backup = ledger_sub.add_parser("backup", help="copy the ledger to FILE (SQLite online backup, or pg_dump; safe while calld runs)")
    backup.add_argument("file", type=Path, help="where the copy goes (must not exist yet)")
    backup.add_argument("--state-dir", type=Path, help="calld's state directory (default: the running daemon's, else $CALLD_STATE_DIR)")
    backup.set_defaults(func=ledger_cmds.backup)
    migrate = ledger_sub.add_parser("migrate", help="copy a SQLite ledger into an empty PostgreSQL one and compare the row counts")
    migrate.add_argument("--to", required=True, metavar="URL", help="postgresql://USER:PASSWORD@HOST:PORT/DATABASE (an empty database)")
    migrate.add_argument("--from", dest="source", type=Path, metavar="PATH",
                         help="the SQLite ledger file (default: the running daemon's, else $CALLD_STATE_DIR's)")
    migrate.add_argument("--state-dir", type=Path, help="calld's state directory (default: the running daemon's, else $CALLD_STATE_DIR)")
    migrate.set_defaults(func=ledger_cmds.migrate)

    proxy = sub.add_parser("proxy-config", help="print an nginx config for K daemons on this host (deploy/nginx/calld.conf is K=2)")
    proxy.add_argument("--daemons", type=int, required=True, metavar="K", help="daemons 1..K (CALLD_INSTANCE), at their default ports")
    proxy.add_argument("--listen", default="127.0.0.1:8080", help="where nginx listens (default 127.0.0.1:8080; TLS: see the config)")
    proxy.set_defaults(func=_proxy_config)

    verify = sub.add_parser("verify", help="run a stub call into a fresh workspace and check its artifacts, or check a finished call's")
    verify.add_argument("job", metavar="ask|book|RUN",
                        help="ask or book: run that job's stub call and check it; else a finished call (its run id or "
                             "call id, or its artifacts folder): every check that applies to it, live calls included")
    verify.add_argument("--keep", action="store_true", help="keep the workspace (its path goes to stderr)")
    verify.set_defaults(func=_verify)
    return parser


def _common_flags() -> argparse.ArgumentParser:
    """--socket and -v, which may also follow the subcommand (`calld-ctl ask ... --socket S`), as `calld serve
    --socket S` takes them: every subcommand parser, at any depth, has this parser as a parent. SUPPRESS keeps
    a value given before the subcommand when none is given after it."""
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--socket", default=argparse.SUPPRESS, help="the daemon's control socket(s), comma-separated (default: $CALLD_SOCKET)")
    common.add_argument("-v", "--verbose", action="store_true", default=argparse.SUPPRESS, help="log details on stderr")
    return common


class _CtlParser(argparse.ArgumentParser):
    """An ArgumentParser whose subcommands (and theirs: argparse makes them of this class) take the common flags."""

    def add_subparsers(self, **kwargs: Any) -> Any:
        action = super().add_subparsers(**kwargs)
        add_parser = action.add_parser

        def add_with_common_flags(name: str, **kw: Any) -> argparse.ArgumentParser:
            return add_parser(name, parents=[*kw.pop("parents", ()), _common_flags()], **kw)

        action.add_parser = add_with_common_flags
        return action


def _proxy_config(args: argparse.Namespace) -> int:
    from calld.ops.proxy import default_backends, nginx_config
    from calld.settings import MAX_INSTANCE

    if not 1 <= args.daemons <= MAX_INSTANCE:
        raise UsageError(f"--daemons {args.daemons}: give how many daemons run on this host, 1 to {MAX_INSTANCE}")
    host, sep, port = args.listen.rpartition(":")
    if not sep or not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise UsageError(f"--listen {args.listen}: write it as HOST:PORT, e.g. 127.0.0.1:8080")
    sys.stdout.write(nginx_config(default_backends(args.daemons), listen=args.listen))
    return EXIT_OK


def _observe_parsers(sub: Any) -> None:
    history = sub.add_parser("history", help="past calls from the ledger, newest first")
    history.add_argument("--user", help="only this user's calls")
    history.add_argument("--status", help="answered, booked, declined, no_answer, voicemail, failed, in_flight, ...")
    history.add_argument("--since", help="made at or after: 2026-11-30, 2026-11-30T09:00, today, yesterday, 7d, 12h")
    history.add_argument("--limit", type=int, default=20, help="at most this many (default 20)")
    history.add_argument("--json", action="store_true", help="the calls as JSON instead of a table")
    history.set_defaults(afunc=_history)
    ui = sub.add_parser("ui", help="a link to the web view of calls (CALLD_UI_BIND), good for 5 minutes, once")
    ui.add_argument("--open", action="store_true", help="also open it in a browser on this machine")
    ui.set_defaults(afunc=_ui)
    metrics = sub.add_parser("metrics", help="the daemon's Prometheus metrics (GET /metrics on the control socket)")
    metrics.set_defaults(afunc=_metrics)
    prune = sub.add_parser("prune", help="remove finished calls' artifacts older than DAYS (the ledger keeps results)")
    prune.add_argument("--older-than", type=float, required=True, metavar="DAYS", help="finished calls that started more than DAYS ago (e.g. 30, or 0.5)")
    prune.add_argument("--dry-run", action="store_true", help="list what would go, remove nothing")
    prune.add_argument("--json", action="store_true", help="what is (or would be) removed, as JSON")
    prune.set_defaults(afunc=_prune)
    doctor = sub.add_parser("doctor", help="check settings, state dir, ledger, disk, socket (and live: Telnyx, GPT-Live, ingress)")
    doctor.add_argument("--json", action="store_true", help="the checks as JSON instead of lines")
    doctor.set_defaults(func=_doctor)


def main(argv: list[str] | None = None) -> int:
    try:
        code = _main(argv)
        sys.stdout.flush()  # the end of the output is written here, where a closed pipe is caught
        return code
    except BaseException as exc:
        if not _stdout_closed(exc):
            raise
        return _quiet_on_closed_stdout()


def _stdout_closed(exc: BaseException) -> bool:
    """`exc` is a broken pipe (alone, or all of a group) and stdout's reader is gone: the EPIPE was
    stdout's, not a socket's (a daemon that went away stays the error it is)."""
    if isinstance(exc, BaseExceptionGroup):
        matched, rest = exc.split(BrokenPipeError)
        if matched is None or rest is not None:
            return False
    elif not isinstance(exc, BrokenPipeError):
        return False
    try:
        poll = select.poll()
        poll.register(sys.stdout.fileno(), select.POLLOUT)
        return any(events & (select.POLLERR | select.POLLHUP) for _, events in poll.poll(0))
    except (OSError, ValueError, AttributeError):  # no file descriptor (a test's StringIO): not a pipe's end
        return False


def _quiet_on_closed_stdout() -> int:
    # What is still buffered goes nowhere: Python flushes stdout at exit, which would fail again and
    # print "Exception ignored ... BrokenPipeError" (the recipe in the docs of Python's signal module).
    try:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    except (OSError, ValueError):
        pass
    return EXIT_PIPE_CLOSED


def _main(argv: list[str] | None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    args = build_parser().parse_args(argv)
    logging.basicConfig(
        level=logging.INFO if args.verbose else logging.WARNING,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
        stream=sys.stderr,
    )
    args.socket_given = args.socket is not None
    try:
        if args.command != "doctor":  # doctor reports bad settings itself
            from calld.settings import load_client_settings

            # Only what calld-ctl uses is validated: the socket, the state dir, the region numbers are read in.
            client = load_client_settings(**({"calld_socket": args.socket} if args.socket is not None else {}),
                                          flags={"calld_socket": "--socket"} if args.socket is not None else None)
            args.sockets, args.region = client.calld_socket, client.calld_region
            args.socket = args.sockets[0]
        if hasattr(args, "func"):
            return args.func(args)
        return trio.run(args.afunc, args)
    except (UsageError, SettingsError) as exc:
        _err(str(exc))
        return EXIT_USAGE
    except DaemonUnreachable as exc:
        _err(str(exc))
        return EXIT_UNREACHABLE
    except ControlError as exc:
        _err(exc.message)
        if exc.status == 503:  # not a failed call: none was placed
            return EXIT_UNAVAILABLE
        return EXIT_USAGE if exc.status < 500 else EXIT_FAILED
    except StreamBroken as exc:
        _err(f"{exc}; the daemon may have stopped. Check it, then retry")
        return EXIT_LOST
    except KeyboardInterrupt:
        if getattr(args, "sent_request_id", None):  # ask or book: the call goes on without calld-ctl
            _interrupted(args, argv)
        return 130
    except Exception as exc:  # noqa: BLE001 - never a traceback for the user; -v shows it
        from calld.ops.errors import OperationalError

        if _stdout_closed(exc):
            raise  # main ends it quietly
        if isinstance(exc, OperationalError):
            _err(str(exc))
            return EXIT_USAGE
        if args.verbose:
            traceback.print_exception(exc, file=sys.stderr)
        _err(f"{type(exc).__name__}: {exc}" + ("" if args.verbose else " (run with -v for details)"))
        return EXIT_FAILED


if __name__ == "__main__":
    sys.exit(main())
