"""The calld daemon: one trio process serving Telnyx (TCP) and calld-ctl (a Unix socket).

Shape: a root nursery holds the two hypercorn servers, the watchdog, and a calls
nursery in which every call runs as its own task (its own CallHandle nursery inside).
A call's failure ends that call with a failed result and its artifacts; the daemon
and every other call carry on.

Shutdown (`shutdown()`, or SIGTERM via `watch_signals`): stop taking calls, let calls
in flight finish their clean hangup until `shutdown_drain_s`, then cancel what
remains (each CallHandle hangs up and writes its artifacts while being cancelled),
then stop the servers. A second signal cuts the drain short.
"""

from __future__ import annotations

import errno
import json
import logging
import math
import os
import secrets
import signal
import socket
import stat
from collections.abc import AsyncIterator
from functools import partial
from pathlib import Path
from typing import Any

import trio
from hypercorn.config import Config
from hypercorn.trio import serve

from calld.calls import prepare, run_stub_call, stub_scenario_for
from calld.daemon.callbook import CallBook
from calld.daemon.control import create_control_app
from calld.daemon.progress import phases
from calld.daemon.public import create_public_app
from calld.domain.ids import UserId
from calld.domain.requests import AskRequest
from calld.ledger import Ledger
from calld.runtime.handle import CallHandle
from calld.settings import Settings
from calld.stub.scenario import SCENARIOS

log = logging.getLogger("calld.daemon")


class DaemonError(RuntimeError):
    pass


class Draining(RuntimeError):
    def __init__(self) -> None:
        super().__init__("calld is shutting down and takes no new calls; try again once it has restarted")


def _hypercorn_config(bind: str) -> Config:
    cfg = Config()
    cfg.bind = [bind]
    cfg.graceful_timeout = 2.0
    cfg.accesslog = None
    cfg.errorlog = None
    cfg.include_server_header = False
    return cfg


def claim_socket_path(path: Path) -> None:
    """Make `path` free for a new listener: replace a stale socket, never a live daemon's."""
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o750)
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return
    if not stat.S_ISSOCK(st.st_mode):
        raise DaemonError(f"{path} exists and is not a socket; remove it or choose another --socket")
    probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        probe.connect(str(path))
    except ConnectionRefusedError:
        os.unlink(path)  # left by a daemon that died
        return
    except OSError as exc:
        if exc.errno in (errno.ECONNREFUSED, errno.ENOENT):
            os.unlink(path)
            return
        raise
    finally:
        probe.close()
    raise DaemonError(f"another calld is already serving {path}; stop it first or use another --socket")


class Daemon:
    def __init__(self, settings: Settings, *, control_fd: int | None = None) -> None:
        self.settings = settings
        self.book = CallBook()
        self.serve_token = secrets.token_urlsafe(24)
        self.accepting = True
        self.public_url: str | None = None
        self._control_fd = control_fd
        self._ledger = Ledger(settings.db_path)
        self._calls_nursery: trio.Nursery | None = None
        self._stop_servers = trio.Event()
        self._idle = trio.Event()
        self._idle.set()
        self._tails: set[trio.MemorySendChannel[dict[str, Any]]] = set()
        self._drain_cut = trio.Event()

    # -- running -------------------------------------------------------------------------------

    async def serve(self, *, task_status: trio.TaskStatus[Daemon] = trio.TASK_STATUS_IGNORED) -> None:
        """Serve until `shutdown()` finishes. Signals `started(self)` once both listeners are bound."""
        if self.settings.calld_mode == "live":
            raise DaemonError("live mode is not available yet in this build: run with CALLD_MODE=stub")
        public = create_public_app(self.book, serve_token=self.serve_token, verify=None)
        control = create_control_app(self)
        ctl_cfg = _hypercorn_config("")
        if self._control_fd is not None:
            ctl_cfg.bind = [f"fd://{self._control_fd}"]
        else:
            path = self.settings.calld_socket
            claim_socket_path(path)
            ctl_cfg.bind = [f"unix:{path}"]
            ctl_cfg.umask = 0o117  # 0660: the owner and the calld-ctl group
        try:
            async with trio.open_nursery() as root:
                binds = await root.start(partial(serve, public, _hypercorn_config(self.settings.calld_bind), shutdown_trigger=self._stop_servers.wait))
                self.public_url = binds[0]
                await root.start(partial(serve, control, ctl_cfg, shutdown_trigger=self._stop_servers.wait))
                if self._control_fd is None:
                    os.chmod(self.settings.calld_socket, 0o660)
                async with trio.open_nursery() as calls:
                    self._calls_nursery = calls
                    log.info("ready: public %s, control %s, mode %s", self.public_url, ctl_cfg.bind[0], self.settings.calld_mode)
                    task_status.started(self)
                    await self._stop_servers.wait()
                    calls.cancel_scope.cancel()
        finally:
            self._ledger.close()

    async def shutdown(self, drain_s: float | None = None) -> None:
        """Stop taking calls, drain, cancel the rest (they hang up), stop the servers."""
        self.accepting = False
        drain_s = self.settings.shutdown_drain_s if drain_s is None else drain_s
        log.warning("shutting down: draining %d call(s) for up to %.0f s", len(self.book), drain_s)
        with trio.move_on_after(drain_s):
            async with trio.open_nursery() as n:
                async def cut() -> None:
                    await self._drain_cut.wait()
                    n.cancel_scope.cancel()
                n.start_soon(cut)
                await self._idle.wait()
                n.cancel_scope.cancel()
        if len(self.book):
            log.error("drain over: cancelling %d call(s); each hangs up and writes its artifacts", len(self.book))
            for handle in self.book.handles():
                handle.abandon_reason = "calld shut down before the call finished"
            if self._calls_nursery is not None:
                self._calls_nursery.cancel_scope.cancel()
            with trio.move_on_after(15):
                await self._idle.wait()
        for tail in list(self._tails):
            tail.close()
        self._stop_servers.set()

    def cut_drain(self) -> None:
        self._drain_cut.set()

    async def watch_signals(self, notify: Any = None) -> None:
        """SIGTERM or SIGINT: shut down; a second one cuts the drain short."""
        with trio.open_signal_receiver(signal.SIGTERM, signal.SIGINT) as signals:
            async for signum in signals:
                log.warning("got %s", signal.Signals(signum).name)
                if notify is not None:
                    notify("STOPPING=1", f"STATUS=draining {len(self.book)} call(s)")
                async with trio.open_nursery() as n:
                    async def second() -> None:
                        async for again in signals:
                            log.error("second %s: abandoning the drain", signal.Signals(again).name)
                            self.cut_drain()
                    n.start_soon(second)
                    await self.shutdown()
                    n.cancel_scope.cancel()
                return

    # -- what the control API offers ---------------------------------------------------------------

    def provision(self, user: UserId) -> dict[str, Any]:
        if self.settings.calld_mode == "stub":
            did = self._ledger.provision_stub(user)
            return {"user": user, "did": did, "status": "active"}
        raise DaemonError("live provisioning needs the Telnyx client (not wired in this build)")

    def dids(self) -> list[dict[str, Any]]:
        return [{"user": r.user_id, "did": r.did, "status": r.status} for r in self._ledger.rows()]

    async def ask(self, request: AskRequest, scenario: str | None = None) -> AsyncIterator[dict[str, Any]]:
        """Place a call; yields progress dicts, then {"result": ...}. Raises before any write on bad input."""
        if not self.accepting:
            raise Draining()
        if scenario is not None and scenario not in SCENARIOS:
            raise ValueError(f"unknown stub scenario {scenario!r}; choose one of {', '.join(sorted(SCENARIOS))}")
        plan = prepare(request, self.settings, self._ledger)  # UnknownUser: nothing written yet
        assert self._calls_nursery is not None
        tx, rx = trio.open_memory_channel[dict[str, Any]](math.inf)
        done = trio.Event()
        outcome: dict[str, Any] = {}

        def on_handle(handle: CallHandle) -> None:
            self.book.add(handle)
            self._idle = trio.Event() if self._idle.is_set() else self._idle
            handle.listeners.append(lambda p: self._progress(handle, p, tx))

        async def call_task() -> None:
            try:
                run = await run_stub_call(plan, self.settings, scenario or stub_scenario_for(request), on_handle=on_handle)
                outcome["result"] = run.result.model_dump(mode="json")
            except Exception as exc:  # the handle already wrote its artifacts; the daemon goes on
                log.exception("%s call task failed", plan.run_id)
                outcome["error"] = f"the call failed inside calld: {exc}"
            finally:
                handle = self.book.find(plan.run_id)
                if handle is not None:
                    self.book.remove(handle)
                    if handle.result is not None and "result" not in outcome:
                        outcome["result"] = handle.result.model_dump(mode="json")
                if not len(self.book):
                    self._idle.set()
                done.set()
                tx.close()

        self._calls_nursery.start_soon(call_task)
        async for item in rx:
            yield {"progress": item}
        await done.wait()
        yield outcome if outcome else {"error": "the call ended without a result"}

    def _progress(self, handle: CallHandle, p: dict[str, Any], tx: trio.MemorySendChannel[dict[str, Any]]) -> None:
        item = {"t_ms": p["t_ms"], "event": p["event"], "phases": phases(p), "run_id": handle.plan.run_id,
                "call_control_id": handle.call.call_control_id}
        if item["phases"]:
            try:
                tx.send_nowait(item)
            except (trio.ClosedResourceError, trio.BrokenResourceError):
                pass
        for tail in list(self._tails):
            try:
                tail.send_nowait(item)
            except trio.WouldBlock:
                pass  # a slow tail misses lines; the journal on disk has them all
            except (trio.ClosedResourceError, trio.BrokenResourceError):
                self._tails.discard(tail)

    def calls(self) -> list[dict[str, Any]]:
        out = []
        for h in self.book.handles():
            c = h.call
            out.append({
                "run_id": h.plan.run_id,
                "call_control_id": c.call_control_id,
                "question": h.plan.question.value,
                "tracks": {t: getattr(c, t).kind for t in ("dial", "telnyx", "media", "live", "conversation", "hangup")},
            })
        return out

    def show(self, ident: str) -> dict[str, Any] | None:
        if (h := self.book.find(ident)) is not None:
            return {"in_flight": True, **next(c for c in self.calls() if c["run_id"] == h.plan.run_id)}
        for report in sorted(self.settings.artifacts_dir.glob("*/call_report.json")):
            try:
                data = json.loads(report.read_text())
            except (OSError, ValueError):
                continue
            if ident in (data.get("run_id"), data.get("call_control_id"), report.parent.name):
                return data
        return None

    async def tail(self) -> AsyncIterator[dict[str, Any]]:
        tx, rx = trio.open_memory_channel[dict[str, Any]](1000)
        self._tails.add(tx)
        try:
            async for item in rx:
                yield item
        finally:
            self._tails.discard(tx)


def socket_path_of(settings: Settings) -> Path:
    return settings.calld_socket
