"""The calld daemon: one trio process serving Telnyx (TCP) and calld-ctl (a Unix socket).

Shape: a root nursery holds the two hypercorn servers, the watchdog, and a calls
nursery in which every call runs as its own task (its own CallHandle nursery inside).
A call's failure ends that call with a failed result and its artifacts; the daemon
and every other call carry on.

Shutdown (`shutdown()`, or SIGTERM via `watch_signals`): stop taking calls, let calls
in flight finish their clean hangup and the pictures of ended calls be drawn, both within
`shutdown_drain_s`, then cancel what remains (each CallHandle hangs up and writes its
artifacts while being cancelled; a picture not drawn is dropped, for `calld-ctl show
--timeline` to draw), then stop the servers. A second signal cuts the drain short.
"""

from __future__ import annotations

import logging
import os
import secrets
import signal
import shutil
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from datetime import datetime
from functools import partial
from pathlib import Path
from typing import Any

import attrs
import trio
from hypercorn.config import Config
from hypercorn.trio import serve

from calld.adapters.telnyx_http import TelnyxError, TelnyxHttp, open_client
from calld.adapters.webhook_auth import load_public_key
from calld.booking import book_scenario, prepare_book
from calld.calls import prepare, run_live_call, run_stub_call, stub_scenario_for
from calld.core.plan import BookJob
from calld.domain.fields import for_api
from calld.daemon.callbook import CallBook
from calld.daemon.collector import FullCollections
from calld.daemon.media_listener import serve_media
from calld.daemon.control import create_control_app
from calld.daemon.flight import Flight
from calld.daemon.errors import AtCapacity, DaemonError, DiskFull, Draining
from calld.daemon.groupsync import GroupSync
from calld.daemon.ingress import Ingress
from calld.daemon.held import load_held_opt_outs, save_held_opt_outs
from calld.daemon.lease import LEDGER_ERRORS, Lease
from calld.daemon.lookup import Lookup
from calld.daemon.progress import phases
from calld.daemon.public import create_public_app
from calld.domain.ids import UserId
from calld.domain.requests import AskRequest, BookRequest
from calld.ledger import Finished, Fresh, InFlight, LedgerError, UnknownRequest
from calld.ledger.awaitable import AsyncLedger
from calld.ops.health import disk_space, open_ledger
from calld.ops.private import private_dir
from calld.ops.redaction import daemon_pseudonyms
from calld.ops.recovery import finish_taken_over, recover_interrupted
from calld.ops.statedir import LOCK_NAME, PathBefore, StateLock, check_port_free, claim_socket_path, is_loopback, prepare_state_dir
from calld.numbers import ProvisionError, provision_did
from calld.publish.publisher import Publisher
from calld.policy.clock import Clock, wall_clock
from calld.policy.optout import OptOut
from calld.policy.gate import LONGEST_ON_THE_LINE, Decision, DialNow, Gate, Queue, Timing
from calld.policy.refusal import Refusal, Refused
from calld.policy.scheduler import Busy, Scheduler, queued_view
from calld.policy.words import check_request
from calld.observe.aftercall import after_call
from calld.observe.painter import Painter
from calld.observe.metrics import Metrics
from calld.runtime.behind import Behind
from calld.runtime.disk import DiskWork, inline
from calld.runtime.handle import CallHandle, CallPorts
from calld.settings import Settings
from calld.stub.scenario import SCENARIOS, unknown_scenario
from calld.stub.signing import StubSigner, webhook_verifier
from calld.stub.telnyx_numbers import StubNumbers
from calld.ui.access import Access

log = logging.getLogger("calld.daemon")


RECOVERY_BOUND_S = 60.0  # hanging up calls a crashed daemon left: bounded, so a dead Telnyx cannot wedge start
UNFINISHED_RETRY_S = 2.0  # results and opt-outs the ledger could not take: tried again this often
ELSEWHERE_POLL_S = 1.0
DISK_FULL_BYTES = 2 * 1024 * 1024  # a minute of a call's audio: with less free, a new call is refused (503)
HELD_OPT_OUTS = "opt-outs-held.json"  # in the state directory: opt-outs the ledger has not taken yet


def _hypercorn_config(bind: str) -> Config:
    cfg = Config()
    cfg.bind = [bind]
    cfg.graceful_timeout = 2.0
    cfg.accesslog = None
    cfg.errorlog = None
    cfg.include_server_header = False
    return cfg


class Daemon:
    def __init__(self, settings: Settings, *, control_fd: int | None = None, clock: Clock | None = None,
                 own_collector: bool = False, disk: DiskWork = inline, warm_up_drawing: bool = False,
                 flags: Mapping[str, str] | None = None) -> None:
        self.settings = settings
        self._flags = dict(flags or {})  # the command-line option each setting came from (`--bind`), for start-up errors
        # `calld serve` starts its drawing process at once when matplotlib's font cache is still to
        # be built (Painter.warm_up); a daemon inside a test starts it at its first picture, as the
        # tests share one cache (and a process started meanwhile would move a virtual clock on).
        self._warm_up_drawing = warm_up_drawing
        # `calld serve` owns its process, and so the garbage collector's full walks (calld.daemon.collector);
        # a daemon inside a test shares pytest's process and leaves the collector as it is.
        self._own_collector = own_collector
        self.full_collections = FullCollections()
        # `calld serve` writes the ledger's fsync and each call's JSON files in a worker thread off
        # the loop's core; a daemon inside a test writes them inline (calld.runtime.disk says why).
        self._disk = disk
        # What follows each call's hangup (its files, result, ledger row, picture) waits its turn behind
        # the live calls' frames, one call at a time (calld.runtime.behind).
        self.behind = Behind()
        self.callbook = CallBook()
        self.lookup = Lookup(self)  # what calld-ctl and the web view read of calls
        self.serve_token = secrets.token_urlsafe(24)
        self.accepting = True
        self.public_url: str | None = None
        self.media_bound: str | None = None  # HOST:PORT the media listener took (CALLD_MEDIA_BIND, port 0 resolved)
        self.ui_url: str | None = None  # the web view's listener (CALLD_UI_BIND), when on
        self.ui_access = Access()  # its link tokens and sessions (in memory: a restart forgets them)
        self._control_fd = control_fd
        self._ledger: AsyncLedger  # opened by serve(), once the state directory is checked and locked
        self._ledger_sync: GroupSync  # its fsyncs, one for the calls that need one at about the same moment
        self._socket_inode: int | None = None
        self._unfinished: dict[str, dict[str, Any]] = {}
        self._unfinished_added = trio.Event()
        self._stub_signer = StubSigner()  # stub mode: the webhooks the stub world sends are signed too
        self._calls_nursery: trio.Nursery | None = None
        self._stop_servers = trio.Event()
        self._idle = trio.Event()
        self._idle.set()
        self._tails: set[trio.MemorySendChannel[dict[str, Any]]] = set()
        self._drain_cut = trio.Event()
        self._flights: dict[str, Flight] = {}
        self.ingress = Ingress(self)  # before a live dial: Telnyx's routes reach this daemon
        self._live_connect: Any = None
        self._telnyx: TelnyxHttp | None = None
        self.stub_numbers = StubNumbers(pending_gets=1)  # stub mode's Telnyx numbers API
        self.messaging: Any = None  # texting calld (calld.messaging.port.MessagingPort), when on
        self.publisher: Publisher  # after hangup, off the call's path; made by serve() with the checked ledger
        # Policy (calld.policy): the gate every request passes, and the queue of calls for later; both
        # are made by serve() once the ledger is checked.
        self.clock = clock or wall_clock
        self.gate: Gate
        self.scheduler: Scheduler
        self.metrics = Metrics(max_calls=settings.calld_max_calls, in_flight=lambda: len(self._flights))
        self._after_calls_done = 0
        self._after_calls_pending = 0
        self._after_call_step = trio.Event()

    # -- running -------------------------------------------------------------------------------

    async def serve(self, *, task_status: trio.TaskStatus[Daemon] = trio.TASK_STATUS_IGNORED) -> None:
        """Serve until `shutdown()` finishes. Signals `started(self)` once both listeners are bound.

        Every start-up problem (settings, state directory, lock, ledger, socket, port) raises an
        OperationalError whose one line says what to fix, before anything is served."""
        live = self.settings.calld_mode == "live"
        verify = self._live_preflight() if live else None
        for setting, bind in (("CALLD_BIND", self.settings.calld_bind), ("CALLD_MEDIA_BIND", self.settings.media_bind),
                              ("CALLD_UI_BIND", self.settings.calld_ui_bind)):
            if bind and not live and not is_loopback(bind):
                raise DaemonError(
                    f"stub mode serves only on loopback, not {bind} ({setting}): "
                    "its scripted calls are for this machine; use 127.0.0.1:PORT"
                )
        state_dir = self.settings.calld_state_dir
        before = PathBefore.look(state_dir)
        lock = StateLock(state_dir, self._control_fd and f"fd {self._control_fd}" or self.settings.calld_socket)
        try:
            new = prepare_state_dir(state_dir)
            lock.acquire()  # refused: another daemon holds the directory, and what is in it is its own
        except BaseException:
            if before.names is None:
                before.restore()  # made here a moment ago
            else:
                before.restore_mode()  # a refused start changes nothing: an existing 0755 stays 0755
            raise
        socket_path: Path | None = None
        socket_dir_made: Path | None = None
        ready = False
        try:
            self._ledger = AsyncLedger(open_ledger(self.settings.ledger_target, state_dir_is_new=new))
            self._ledger_sync = GroupSync(lambda: self._ledger.sync.flush_to_disk(), disk=self._disk)
            # The redaction key: CALLD_REDACTION_KEY, or the shared ledger's (one stand-in per user on every
            # daemon), or made at first start beside the SQLite ledger; never published.
            self.pseudonyms = daemon_pseudonyms(self.settings, self._ledger.sync)
            self.publisher = Publisher(self.settings, self._ledger, self.pseudonyms)
            self.gate = Gate(self.settings, self._ledger.sync, self.clock)
            self._load_held_opt_outs()
            self.scheduler = Scheduler(self._ledger, self.gate, self._dial_scheduled, accepting=lambda: self.accepting,
                                       instance=self.settings.instance_name)
            self.painter = Painter(cache_dir=state_dir / "cache")
            try:
                private_dir(self.settings.artifacts_dir)
            except OSError as exc:
                raise DaemonError(f"the artifacts directory {self.settings.artifacts_dir} cannot be used: {exc.strerror}") from None
            for setting, bind in (("CALLD_BIND", self.settings.calld_bind), ("CALLD_MEDIA_BIND", self.settings.media_bind),
                                  ("CALLD_UI_BIND", self.settings.calld_ui_bind)):
                if bind and not bind.endswith(":0"):
                    given, fix = (self.settings.bind_origin(setting, self._flags) if setting != "CALLD_UI_BIND"
                                  else (f"CALLD_UI_BIND={bind}", "CALLD_UI_BIND"))
                    check_port_free(bind, setting, given=given, fix=fix)
            if verify is None:
                verify = self._stub_signer.verifier()
            public = create_public_app(self.callbook, serve_token=self.serve_token, verify=verify,
                                       instance=self.settings.calld_instance, forward=self.ingress.forward if live else None)
            control = create_control_app(self)
            self.messaging = self._attach_messaging(public, control)
            ctl_cfg = _hypercorn_config("")
            if self._control_fd is not None:
                ctl_cfg.bind = [f"fd://{self._control_fd}"]
            else:
                socket_path = self.settings.calld_socket
                socket_dir_made = claim_socket_path(socket_path)
                ctl_cfg.bind = [f"unix:{socket_path}"]
                ctl_cfg.umask = 0o117  # 0660: the owner and the calld-ctl group
            self._log_disk_space()
            if live:
                http_cm = open_client(self.settings.telnyx_api_key.get_secret_value(), base_url=self.settings.telnyx_api_base)
            else:
                http_cm = open_client("stub-key", transport=self.stub_numbers.transport())
            self._lease = Lease(self._ledger, self.settings, self.clock)
            await self._lease.renew(starting=True)  # before anything binds: a refused start serves nothing
            async with http_cm as http, self.ingress.open_client() as probe, trio.open_nursery() as root:
                self._telnyx = TelnyxHttp(http, connection_id=self._connection_id)
                self.ingress.client = probe
                await self._finish_stale_requests()
                if self._ledger.sync.engine == "postgresql":  # another daemon may have settled calls of this one's
                    with trio.move_on_after(RECOVERY_BOUND_S):
                        await finish_taken_over(self._ledger, self.settings.artifacts_dir)
                binds = await root.start(partial(serve, public, _hypercorn_config(self.settings.calld_bind), shutdown_trigger=self._stop_servers.wait))
                self.public_url = binds[0]
                self.media_bound = await root.start(partial(serve_media, self.callbook, self.settings.media_bind, self._stop_servers,
                                                          self.serve_token, refused=self.metrics.media_refused))
                await root.start(partial(serve, control, ctl_cfg, shutdown_trigger=self._stop_servers.wait))
                if self.settings.calld_ui_bind:  # the web view: its own app on its own listener (calld.ui)
                    from calld.ui.app import create_ui_app
                    from calld.ui.source import DaemonPages

                    ui_binds = await root.start(partial(serve, create_ui_app(DaemonPages(self), self.ui_access),
                                                        _hypercorn_config(self.settings.calld_ui_bind),
                                                        shutdown_trigger=self._stop_servers.wait))
                    self.ui_url = ui_binds[0]
                    log.info("web view on %s (calld-ctl ui prints a link)", self.ui_url)
                if socket_path is not None:
                    os.chmod(socket_path, 0o660)
                    self._socket_inode = os.lstat(socket_path).st_ino
                if self.publisher.enabled:
                    await root.start(self.publisher.run, self._stop_servers)
                try:
                    async with trio.open_nursery() as calls:
                        self._calls_nursery = calls
                        if self.messaging is not None:  # texts are handled beside the calls, and drain with them
                            await calls.start(self.messaging.run)
                            if self.messaging.fake is not None:
                                self.messaging.fake.webhook_url = f"{self.public_url}/linq/webhook"
                        await calls.start(self.scheduler.run)
                        calls.start_soon(self._retry_unfinished)
                        if self._ledger.sync.engine == "postgresql":  # shared: other daemons may outlive this one
                            calls.start_soon(self._lease.keep, partial(self._finish_stale_requests, others_only=True))
                        if self._own_collector:
                            self.full_collections.take_over(trio.current_time())
                        self.metrics.watch_gc()  # from here: the pauses calls can feel
                        if self._warm_up_drawing:  # matplotlib's font cache: built at first start, beside the calls
                            calls.start_soon(self.painter.warm_up)
                        log.info("ready: public %s, media ws://%s, control %s, mode %s", self.public_url, self.media_bound,
                                 ctl_cfg.bind[0], self.settings.calld_mode)
                        ready = True
                        task_status.started(self)
                        await self._stop_servers.wait()
                        calls.cancel_scope.cancel()
                finally:
                    await self.painter.aclose()  # shielded inside: a cancelled daemon leaves no child behind
        finally:
            self.metrics.unwatch_gc()
            self.full_collections.give_back()
            if getattr(self, "_ledger", None) is not None:
                self._ledger.sync.close()
            if socket_path is not None:
                self._remove_socket(socket_path)
            if not ready:
                # A start that failed (a port in use, a bad key) leaves no trace where it found none:
                # a new state directory as it was, and no directory made for the socket.
                if socket_dir_made is not None:
                    shutil.rmtree(socket_dir_made, ignore_errors=True)
                # A new state directory as it was; an existing one keeps its mode and loses only what
                # this start made (its lock file stays: see StateLock.release).
                if new:
                    before.restore()
                else:
                    before.restore(keep=frozenset({LOCK_NAME}))
            lock.release()

    def _remove_socket(self, path: Path) -> None:
        """A clean stop leaves no socket behind (only ours: never one a successor has bound)."""
        try:
            if self._socket_inode is not None and os.lstat(path).st_ino == self._socket_inode:
                path.unlink()
        except OSError:
            pass

    def _disk_full(self) -> str | None:
        """What the artifacts' disk has, when it has less than a call needs (DISK_FULL_BYTES); else None."""
        try:
            space = disk_space(self.settings.artifacts_dir)
        except OSError:
            return None
        return space.describe() if space.free_bytes < DISK_FULL_BYTES else None

    def _log_disk_space(self) -> None:
        try:
            space = disk_space(self.settings.calld_state_dir)
        except OSError:
            return
        if space.low:
            log.warning("disk space is low: %s; calls that cannot write their artifacts fail", space.describe())

    async def _retry_unfinished(self) -> None:
        """Results the ledger could not take when their call ended (a full disk): stored once it can.

        Idle (nothing unfinished) it waits without a timer: a daemon with no work has no wakeups."""
        while True:
            if not self._unfinished and not self.gate.held_opt_outs:
                await self._unfinished_added.wait()
                self._unfinished_added = trio.Event()
            await trio.sleep(UNFINISHED_RETRY_S)
            for entry in list(self.gate.held_opt_outs.values()):
                if not await self._store_opt_out(entry):
                    break
            for request_id, result in list(self._unfinished.items()):
                try:
                    await self._ledger.finish_request(request_id, result)
                except LEDGER_ERRORS as exc:
                    log.error("request %s: the ledger still cannot store its result: %s", request_id, exc)
                    break
                except UnknownRequest:  # its row is gone (a ledger restored from before the call): nothing to finish
                    log.error("request %s: the ledger no longer has it; its result stays in its run directory only", request_id)
                del self._unfinished[request_id]
                log.warning("request %s: its result is stored now", request_id)

    async def shutdown(self, drain_s: float | None = None) -> None:
        """Stop taking calls; drain the calls, then the pictures of calls that ended, both within
        `drain_s`; cancel the rest (calls hang up, pictures are dropped); stop the servers."""
        self.accepting = False
        drain_s = self.settings.shutdown_drain_s if drain_s is None else drain_s
        deadline = trio.current_time() + drain_s
        if len(self.callbook):
            log.warning("shutting down: draining %d call(s) for up to %.0f s", len(self.callbook), drain_s)
        else:
            log.info("shutting down: no call in flight")  # a plain exit: nothing for an operator to watch
        with trio.move_on_at(deadline):
            await self._unless_cut(self._idle.wait)
        # The drain is over: no call is left to yield to but those about to be torn down, so what is
        # queued behind them (finishing calls, results, pictures' turns) goes at once (calld.runtime.behind).
        self.behind.hurry()
        # The pictures of calls that ended get what is left of the same bound: drawing (or the font
        # cache matplotlib builds before its first picture) must not hold a stop past it, where
        # systemd's SIGKILL waits. A picture not drawn by then is no loss: `calld-ctl show ID
        # --timeline` draws it from the artifacts. (Callers that want every picture, a demo or a
        # test, wait for `pictures_drawn()` before they shut down.)
        with trio.move_on_at(deadline):
            await self._unless_cut(self.pictures_drawn)
        if self._after_calls_pending:
            log.warning("drain over: %d call picture(s) not drawn; `calld-ctl show ID --timeline` draws one",
                        self._after_calls_pending)
        await self.painter.aclose(kill=True)  # what it is drawing is dropped; the calls still to end draw nothing
        if len(self.callbook):
            log.error("drain over: cancelling %d call(s); each hangs up and writes its artifacts", len(self.callbook))
            for handle in self.callbook.handles():
                handle.abandon_reason = "calld shut down before the call finished"
                handle.abandon_is_shutdown = True
            if self._calls_nursery is not None:
                self._calls_nursery.cancel_scope.cancel()
            with trio.move_on_after(15):
                await self._idle.wait()
        if self.messaging is not None:  # answers to calls placed by text still go out, within a bound
            with trio.move_on_after(15):
                await self.messaging.wait_idle()
        for tail in list(self._tails):
            tail.close()
        self._stop_servers.set()

    async def _unless_cut(self, wait: Callable[[], Awaitable[object]]) -> None:
        """`await wait()`, cut short by a second signal (cut_drain)."""
        async with trio.open_nursery() as n:
            async def cut() -> None:
                await self._drain_cut.wait()
                n.cancel_scope.cancel()
            n.start_soon(cut)
            await wait()
            n.cancel_scope.cancel()

    async def pictures_drawn(self) -> None:
        """Wait until the pictures of the calls that ended are drawn (or have failed)."""
        while self._after_calls_pending:
            await self._after_call_step.wait()

    def cut_drain(self) -> None:
        self._drain_cut.set()

    async def watch_signals(self, notify: Any = None) -> None:
        """SIGTERM or SIGINT: shut down; a second one cuts the drain short."""
        with trio.open_signal_receiver(signal.SIGTERM, signal.SIGINT) as signals:
            async for signum in signals:
                log.warning("got %s", signal.Signals(signum).name)
                if notify is not None:
                    notify("STOPPING=1", f"STATUS=draining {len(self.callbook)} call(s)")
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

    @property
    def _connection_id(self) -> str:
        return self.settings.telnyx_connection_id if self.settings.calld_mode == "live" else "stub-connection"

    def _live_preflight(self) -> Any:
        """Refuse to start live without every key, one origin and the opt-in; return the webhook verifier."""
        problems = self.settings.live_problems()
        if problems:
            raise DaemonError("live mode cannot start; set these in .env or the environment: " + "; ".join(problems))
        try:
            load_public_key(self.settings.telnyx_public_key)
        except ValueError as exc:
            raise DaemonError(f"TELNYX_PUBLIC_KEY is not a usable Ed25519 public key: {exc}") from None
        from calld.adapters.live_socket import live_connector

        try:
            self._live_connect = live_connector(self.settings)
        except ValueError as exc:
            raise DaemonError(f"GPT-Live settings: {exc}") from None
        return webhook_verifier(self.settings.telnyx_public_key)

    def _attach_messaging(self, public: Any, control: Any) -> Any:
        """Texting calld (calld.messaging): calld-ctl messaging on the control API; the Linq webhook
        route and the port when texting is on. A half-configured live Linq stops the start."""
        from calld.messaging.port import MessagingConfigError, build_messaging, install_control
        from calld.messaging.store import MessagingStore

        store = MessagingStore(self._ledger)
        install_control(control, lambda: store, reach=self.reach)
        try:
            port = build_messaging(self.settings, self._ledger, ask=self.ask, book=self.book, vet=self.vet, reach=self.reach)
        except MessagingConfigError as exc:
            raise DaemonError(f"texting cannot start: {exc}") from None
        if port is not None:
            port.install(public)
        return port

    def _ports(self) -> CallPorts:
        assert self._telnyx is not None and self._live_connect is not None
        return CallPorts(
            telnyx=self._telnyx,
            connect_live=self._live_connect,
            public_media_url=self.settings.media_url(),
            webhook_url=self.settings.webhook_url(),
            l16_byte_order=self.settings.telnyx_l16_byte_order,
            disk=self._disk,
            behind=self.behind,
        )

    async def _finish_stale_requests(self, *, others_only: bool = False) -> None:
        """Requests a daemon left unfinished: their calls died with it. This daemon's own, when it starts
        (its lease renewed first, so no other daemon takes them meanwhile), and any daemon's whose lease
        ran out. Hang each up at Telnyx (live), repair its artifacts, finish its result (calld.ops.recovery)."""
        telnyx = self._telnyx if self.settings.calld_mode == "live" else None
        hangup = telnyx.hangup if telnyx is not None else None
        with trio.move_on_after(RECOVERY_BOUND_S):
            await recover_interrupted(self._ledger, self.settings.artifacts_dir, hangup,  # type: ignore[arg-type]
                                      status=telnyx.get_call if telnyx is not None else None,  # type: ignore[arg-type]
                                      instance=self.settings.instance_name, now=self.clock().timestamp(),
                                      others_only=others_only,
                                      # starting on a shared ledger: others' leases are judged later (_may_judge_others)
                                      own_only=not others_only and self._ledger.sync.engine == "postgresql")

    async def provision(self, user: UserId) -> dict[str, Any]:
        """The user's number: the active one, a resumed order, or (only then) a new order."""
        assert self._telnyx is not None
        try:
            row = await provision_did(self._ledger, self._telnyx, user, connection_id=self._connection_id, poll_interval_s=0.2)
        except ProvisionError as exc:
            raise DaemonError(str(exc)) from None
        except TelnyxError as exc:
            raise DaemonError(f"Telnyx: {exc}") from None
        return {"user": row.user_id, "did": row.did, "status": row.status}

    async def dids(self) -> list[dict[str, Any]]:
        return [{"user": r.user_id, "did": r.did, "status": r.status} for r in await self._ledger.rows()]

    async def ask(self, request: AskRequest, scenario: str | None = None, timing: Timing | None = None) -> AsyncIterator[dict[str, Any]]:
        """Place a quick ask, or attach to the same request's call; yields progress dicts, then
        {"result": ...} (or {"queued": ...} for a call scheduled for later). Raises before anything
        is written when the request is bad or the policy refuses it (Refused)."""
        self._check_scenario(scenario)
        if scenario is not None and scenario not in SCENARIOS:
            raise ValueError(f"--scenario: {unknown_scenario(scenario, booking=False)}")
        if (refusal := check_request(request)) is not None:  # words spoken on the call: item-like, or refused
            raise Refused(refusal)
        plan = await self._ledger.run(lambda ledger: prepare(request, self.settings, ledger))  # UnknownUser: nothing written yet
        stub = SCENARIOS[scenario or stub_scenario_for(request)]
        async for item in self._admit_and_place("ask", request, plan, scenario, stub, timing or Timing()):
            yield item

    async def book(self, request: BookRequest, scenario: str | None = None, timing: Timing | None = None) -> AsyncIterator[dict[str, Any]]:
        """Book a table: the same path as an ask, with a booking plan."""
        self._check_scenario(scenario)
        try:
            stub = book_scenario(scenario)
        except ValueError as exc:  # the nearest scripted restaurants' names
            raise ValueError(f"--scenario: {exc}") from None
        if (refusal := check_request(request)) is not None:
            raise Refused(refusal)
        plan = await self._ledger.run(lambda ledger: prepare_book(request, self.settings, ledger))
        async for item in self._admit_and_place("book", request, plan, scenario, stub, timing or Timing()):
            yield item

    # -- policy: the gate, the queue, opt-outs (calld.policy) ------------------------------------------

    async def vet(self, request: AskRequest | BookRequest) -> Refusal | None:
        """The rules that hold whenever a call is placed (its words, the destination, opt-outs, a
        booking's time): a texted request is checked against them before "Reply YES" is offered."""
        kind = "book" if isinstance(request, BookRequest) else "ask"
        if (refusal := check_request(request)) is not None:
            return refusal
        now = self.clock()
        return await self._ledger.run(lambda ledger: self.gate.on(ledger, now).standing(kind, request.to, getattr(request, "time", None), now))

    async def reach(self, number: str) -> Refusal | None:
        """Why calld would not dial `number` (the gate's destination rules, calld's own numbers included);
        texting never sends to such a number."""
        return await self._ledger.run(lambda ledger: self.gate.on(ledger, self.clock()).destination(number))

    async def _admit_and_place(self, kind: str, request: Any, plan: Any, scenario: str | None, stub: Any,
                               timing: Timing) -> AsyncIterator[dict[str, Any]]:
        """Every request passes the gate first; a repeat of a known request id gets its own answer."""
        rid = request.request_id
        params = self._params(request, scenario)
        known = rid is not None and (await self._ledger.request(rid) is not None or await self._ledger.scheduled(rid) is not None)
        if known:
            row = await self._ledger.scheduled(rid)
            if row is not None:  # queued earlier: the same request gets its queue entry (or its result)
                again, _ = await self._ledger.queue_request(rid, user_id=request.user, kind=kind, params=params,  # type: ignore[arg-type]
                                                      due_at=row.due_at, mode=row.mode)  # type: ignore[arg-type]
                if again is not None:
                    yield {"queued": queued_view(again), "repeat": True}
                    return
            await self.ingress.check()
        else:
            booking_time = getattr(request, "time", None)
            decision = await self._admit(kind, request, booking_time, timing)
            if not isinstance(decision, Queue):
                # Live mode's probe of the public URL may wait: the limits are read again after it, with no
                # wait from there to the claim, or requests arriving together would all pass them.
                await self.ingress.check()
                decision = await self._admit(kind, request, booking_time, timing)
            booking_at = self.gate.table_time(request.to, booking_time, self.clock()).isoformat() if booking_time else None
            if isinstance(decision, Queue):
                rid = rid or f"req_{plan.run_id.removeprefix('run_')}"
                row, new = await self._ledger.queue_request(rid, user_id=request.user, kind=kind, params=params,  # type: ignore[arg-type]
                                                      due_at=decision.due_at, mode=decision.mode, booking_at=booking_at)
                assert row is not None
                log.info("queued request %s for %s until %s", rid, request.to, decision.due_at.isoformat())
                self.scheduler.wake()
                yield {"queued": queued_view(row), "repeat": not new}
                return
            # --when-open inside the window dials now: said, so nobody waits for a queue entry
            note = WHEN_OPEN_DIALS_NOW if timing.when_open else None
            async for item in self._place(kind, request, plan, scenario, stub, booking_at, note=note):
                yield item
            return
        async for item in self._place(kind, request, plan, scenario, stub):
            yield item

    async def _admit(self, kind: str, request: Any, booking_time: str | None, timing: Timing) -> Decision:
        """The gate's decision, its rules reading the ledger where the ledger is read (calld.ledger.awaitable)."""
        now = self.clock()
        return await self._ledger.run(lambda ledger: self.gate.on(ledger, now).admit(kind, request.to, request.user, booking_time, timing))

    @staticmethod
    def _params(request: Any, scenario: str | None) -> dict[str, Any]:
        return {**request.model_dump(mode="json", exclude={"request_id"}), "scenario": scenario}

    async def _dial_scheduled(self, row: Any) -> None:
        """The scheduler's dial: the same placing path as a request from calld-ctl, no one following it."""
        fields = {k: v for k, v in row.params.items() if k != "scenario"}
        scenario = row.params.get("scenario")
        if row.kind == "book":
            request: Any = BookRequest(**fields, request_id=row.request_id)
            stub = book_scenario(scenario)
            plan = await self._ledger.run(lambda ledger: prepare_book(request, self.settings, ledger))
        else:
            request = AskRequest(**fields, request_id=row.request_id)
            stub = SCENARIOS[scenario or stub_scenario_for(request)]
            plan = await self._ledger.run(lambda ledger: prepare(request, self.settings, ledger))
        if len(self._flights) >= self.settings.calld_max_calls:
            raise Busy()
        await self.ingress.check()
        booking_time = row.params.get("time") if row.kind == "book" else None
        now = self.clock()
        resolved = datetime.fromisoformat(row.booking_at) if row.booking_at else None  # as read when queued
        due = await self._ledger.run(lambda ledger: self.gate.on(ledger, now).when_due(row.kind, request.to, request.user, booking_time,
                                                                                       resolved))
        if not isinstance(due, DialNow):
            raise Busy()  # the probe waited, and another call took the number (or the window) meanwhile: later
        await self._ledger.set_schedule(row.request_id, status="dialled", only_from="claimed")
        stream = self._place(row.kind, request, plan, scenario, stub, row.booking_at)
        assert self._calls_nursery is not None

        async def follow() -> None:
            async for _item in stream:
                pass  # the result lands in the ledger; `calld-ctl show` and `queue --all` find it

        self._calls_nursery.start_soon(follow)

    async def queue(self, include_done: bool = False) -> list[dict[str, Any]]:
        return [queued_view(r) for r in await self._ledger.schedule_rows(status=None if include_done else "queued")]

    async def cancel(self, request_id: str) -> dict[str, Any]:
        """Drop a queued request; LookupError when there is none, ValueError when it is past waiting."""
        row = await self._ledger.scheduled(request_id)
        if row is None:
            raise LookupError(f"no queued request {request_id!r}; calld-ctl queue lists them")
        if not await self._ledger.set_schedule(request_id, status="cancelled"):
            raise ValueError(f"request {request_id!r} is {row.status}, no longer waiting; nothing to cancel")
        self.scheduler.wake()
        return queued_view(await self._ledger.scheduled(request_id))  # type: ignore[arg-type]

    async def opt_outs(self) -> list[dict[str, Any]]:
        return [{"number": r.number, "said_at": r.said_at.isoformat(), "quote": r.quote, "user": r.user_id,
                 "run_id": r.run_id} for r in await self._ledger.opt_outs()]

    async def remove_opt_out(self, number: str) -> bool:
        return bool(await self._ledger.remove_opt_out(number))

    async def _record_opt_out(self, handle: CallHandle) -> None:
        """After the call: a business that asked not to be called goes on the list (who heard it, when, the quote).

        Kept like a result: written on this daemon's disk first (and refused here from that moment), then
        stored in the ledger, where every daemon reads it; a ledger that cannot take it now gets it from
        `_retry_unfinished` as soon as it answers, and the file carries it across a restart meanwhile."""
        quote = handle.call.opt_out
        if quote is None:
            return
        plan = handle.plan
        entry = OptOut(plan.to, self.clock(), quote, plan.user_id, plan.run_id)
        self.gate.held_opt_outs[plan.to] = entry
        self._save_held_opt_outs()
        log.warning("%s %s asked not to be called again (%r): refused by this daemon from now",
                    handle.call.call_control_id or plan.run_id, plan.to, quote)
        if not await self._store_opt_out(entry):
            self._unfinished_added.set()

    async def _store_opt_out(self, entry: OptOut) -> bool:
        """One held opt-out into the ledger; True once it is there (and no longer held here)."""
        try:
            row = await self._ledger.add_opt_out(entry.number, said_at=entry.said_at, quote=entry.quote,
                                                 user_id=entry.user_id, run_id=entry.run_id)
        except LEDGER_ERRORS as exc:
            log.error("%s: the ledger cannot take the opt-out of %s now (%s); this daemon refuses the number "
                      "meanwhile and stores it as soon as the ledger answers", entry.run_id, entry.number, exc)
            return False
        if self.gate.held_opt_outs.get(entry.number) == entry:
            del self.gate.held_opt_outs[entry.number]
            self._save_held_opt_outs()
        log.warning("%s is on the ledger's opt-out list since %s (heard on %s)", entry.number, row.said_at.isoformat(),
                    entry.run_id)
        return True

    @property
    def _held_opt_outs_path(self) -> Path:
        return self.settings.calld_state_dir / HELD_OPT_OUTS

    def _save_held_opt_outs(self) -> None:
        save_held_opt_outs(self._held_opt_outs_path, self.gate.held_opt_outs)

    def _load_held_opt_outs(self) -> None:
        """At start: opt-outs heard before a restart that the ledger had not taken yet."""
        self.gate.held_opt_outs.update(load_held_opt_outs(self._held_opt_outs_path))
        if self.gate.held_opt_outs:
            log.warning("%d opt-out(s) heard before the restart are not in the ledger yet: refused here, stored when it answers",
                        len(self.gate.held_opt_outs))
            self._unfinished_added.set()

    def _check_scenario(self, scenario: str | None) -> None:
        if not self.accepting:
            raise Draining()
        if scenario is not None and self.settings.calld_mode == "live":
            raise ValueError("--scenario picks a scripted business: it exists only in stub mode")

    async def _place(self, kind: str, request: Any, plan: Any, scenario: str | None, stub: Any,
                     booking_at: str | None = None, *, note: str | None = None) -> AsyncIterator[dict[str, Any]]:
        """Claim the request and start its call. The caller has checked the ingress (awaiting nothing after its
        gate decision): from here to the claim and the dial log's row nothing waits. `booking_at`: a booking's
        time as the gate read it, kept in the ledger and named in the result."""
        request_id = request.request_id or f"req_{plan.run_id.removeprefix('run_')}"
        if booking_at is not None and isinstance(plan.job, BookJob):
            plan = attrs.evolve(plan, job=plan.job.dialled(booking_at, self.clock()))
        params = self._params(request, scenario)
        full = len(self._flights) >= self.settings.calld_max_calls
        space = self._disk_full()
        if (full or space is not None) and await self._ledger.request(request_id) is None:
            if full:
                # A new call past the limit would starve the calls on the line of CPU (audio lost on
                # all of them), so it is refused before anything is written. Repeats are still answered.
                raise AtCapacity(self.settings.calld_max_calls)
            # A call that cannot write its artifacts would fail after its dial: refused before anything is
            # written (503), so calld-ctl asks the next daemon, whose disk may have room.
            raise DiskFull(space)  # type: ignore[arg-type]
        # The dial is keyed on the request, never on an attempt: one request id, one call.
        now = self.clock()
        # The claim, the opt-out and rate-limit check, and the dial log's row in one ledger transaction:
        # daemons sharing the ledger cannot both pass a limit, or dial a number that has just opted out.
        claim = await self._ledger.admit_dial(
            request_id, user_id=request.user, kind=kind, params=params, run_id=plan.run_id, number=request.to, at=now,
            instance=self.settings.instance_name, check=lambda view: self.gate.on(view, now).dial_check(request.to, request.user, now),
            booking_at=booking_at)
        match claim:
            case Refusal() as refusal:
                raise Refused(refusal)
            case Finished(result=result):
                yield {"result": result, "repeat": True}
                return
            case InFlight(run_id=run_id):
                flight = self._flights.get(request_id)
                if flight is None:
                    # Placed by another daemon on the shared ledger (or by this one before a restart, and
                    # being recovered): its result lands in the ledger, and the repeat gets it from there.
                    async for item in self._result_from_elsewhere(request_id, run_id):
                        yield item
                    return
            case Fresh():
                flight = self._flights[request_id] = Flight(request_id, plan.run_id)
                with trio.CancelScope(shield=True):  # a client gone meanwhile must not leave the claim without its call
                    await self._ledger_sync()  # the claim outlives a power cut before anything is dialled
                self._start_call(flight, plan, stub)
                if note is not None:  # after the claim: a refusal before it is still a clean 403, not a broken stream
                    yield {"note": for_api(note)}
        async for item in flight.watch():
            yield {"progress": item}
        await flight.done.wait()
        yield flight.outcome

    async def _result_from_elsewhere(self, request_id: str, run_id: str) -> AsyncIterator[dict[str, Any]]:
        """A request on a call this daemon does not hold: wait for its result in the ledger. No call
        lasts longer than LONGEST_ON_THE_LINE, and a dead owner's calls are finished by lease recovery."""
        yield {"progress": {"t_ms": 0, "event": "attached", "run_id": run_id, "call_control_id": None,
                            "phases": [f"request {request_id} is on a call another calld placed: waiting for its result"]}}
        with trio.move_on_after(LONGEST_ON_THE_LINE.total_seconds()):
            while True:
                row = await self._ledger.request(request_id)
                if row is not None and row.status == "done" and row.result is not None:
                    yield {"result": row.result, "repeat": True}
                    return
                await trio.sleep(ELSEWHERE_POLL_S)
        raise DaemonError(f"request {request_id} ({run_id}) is still not finished on the daemon that placed it; "
                          f"ask again later (calld-ctl show {request_id})")

    def _start_call(self, flight: Flight, plan: Any, stub: Any) -> None:
        assert self._calls_nursery is not None
        self._log_disk_space()  # one statvfs: the log says space is low before a call fails on it

        ran: list[CallHandle] = []

        def on_handle(handle: CallHandle) -> None:
            self.full_collections.call_started(trio.current_time())  # only if a full walk is overdue
            ran.append(handle)
            self.callbook.add(handle)
            if self._idle.is_set():
                self._idle = trio.Event()
            handle.listeners.append(lambda p: self._progress(handle, p, flight))

        async def call_task() -> None:
            outcome: dict[str, Any] = {}
            torn_down = True  # until the call ends on its own: then its timeline is drawn before publishing
            undialled = False
            drawing = False
            try:
                if self.settings.calld_mode == "live":
                    result = await run_live_call(plan, self.settings, self._ports(), on_handle=on_handle, pseudonyms=self.pseudonyms)
                else:
                    run = await run_stub_call(plan, self.settings, stub, on_handle=on_handle, signer=self._stub_signer,
                                              disk=self._disk, pseudonyms=self.pseudonyms, behind=self.behind)
                    result = run.result
                outcome["result"] = result.model_dump(mode="json")
                torn_down = False
            except BaseException as exc:
                handle = self.callbook.find(plan.run_id)
                if handle is not None and handle.result is not None:
                    outcome["result"] = handle.result.model_dump(mode="json")  # artifacts are written
                elif handle is None or handle.call.dial.kind == "pending":
                    # Nothing was dialled: the request id is not used up, a retry may dial.
                    undialled = True
                    outcome["error"] = (f"calld could not start the call ({type(exc).__name__}: {exc}); nothing was "
                                        f"dialled and request id {flight.request_id} may be used again")
                else:
                    outcome["error"] = f"the call failed inside calld: {exc!r}"
                if not isinstance(exc, Exception):
                    raise
                torn_down = False
                log.error("%s call task failed: %s", plan.run_id, exc, exc_info=log.isEnabledFor(logging.DEBUG))
            finally:
                with trio.CancelScope(shield=True):
                    async with self.behind.job() as step:  # the ledger's row, behind the live frames too
                        await step()
                        stored = await self._store_result(flight.request_id, plan.run_id, outcome, undialled)
                    await self._ledger_sync()  # what the user is told is on disk first
                    handle = self.callbook.find(plan.run_id)
                    if handle is not None:
                        await self._record_opt_out(handle)
                        self.callbook.remove(handle)
                    del self._flights[flight.request_id]
                    flight.finish(outcome or {"error": "the call ended without a result"})
                    if torn_down:
                        await self._publish(handle)  # the result has gone out first; no picture when torn down
                    self._tail_result(plan.run_id, ran[0] if ran else None, stored)
                    drawing = bool(ran and ran[0].finished.is_set())
                    self._after_calls_pending += drawing  # counted before idle is set: a drain waits for it
                    # The full walk comes after the result is out, before the picture: no call feels it.
                    self.full_collections.call_ended(len(self.callbook), trio.current_time())
                    if not len(self.callbook):
                        self._idle.set()
            if drawing:
                try:
                    async with self.behind.job() as step:  # its turn, then the turn goes on: the child draws
                        await step()
                    await after_call(ran[0].rundir.path, self.metrics, self.painter)  # the result is already out
                    self._after_calls_done += 1
                finally:
                    self._after_calls_pending -= 1
                    self._after_call_step.set()
                    self._after_call_step = trio.Event()
            # After the picture, so timeline.svg is published with the rest and retention cannot race it.
            await self._publish(ran[0] if ran else None)

        self._calls_nursery.start_soon(call_task)

    async def _publish(self, handle: CallHandle | None) -> None:
        """Hand a finished call's artifacts to the publisher; a failure here never touches the call."""
        if handle is None or handle.result is None or not self.publisher.enabled:
            return
        try:
            await self.publisher.submit(handle.plan.run_id, handle.call.call_control_id, handle.plan.user_id, handle.rundir.path)
        except Exception:
            log.exception("%s could not be queued for publishing", handle.plan.run_id)

    async def _store_result(self, request_id: str, run_id: str, outcome: dict[str, Any], undialled: bool) -> dict[str, Any]:
        """The ledger row is finished (or, when nothing was dialled, given back); a ledger that
        cannot write now (a full disk) gets the result later, and the daemon goes on. Returns the result."""
        stored = outcome.get("result") or {"status": "failed", "run_id": run_id, "answer_text": None,
                                           "reason": "internal", "detail": outcome.get("error") or "no result"}
        try:
            if undialled and await self._ledger.forget_request(request_id):
                return stored
            try:
                await self._ledger.finish_request(request_id, stored)
            except LEDGER_ERRORS as exc:
                log.error("request %s: the ledger cannot store its result now (%s); retrying every %.0f s",
                          request_id, exc, UNFINISHED_RETRY_S)
                self._unfinished[request_id] = stored
                self._unfinished_added.set()
                self._log_disk_space()
        except LEDGER_ERRORS as exc:
            log.error("request %s: the ledger failed: %s", request_id, exc)
        return stored

    def _progress(self, handle: CallHandle, p: dict[str, Any], flight: Flight) -> None:
        task, via = handle.call.task, getattr(handle.call.hangup, "via", None)
        item = {"t_ms": p["t_ms"], "event": p["event"], "phases": phases(p, task.status if task else None, via),
                "run_id": handle.plan.run_id,
                "call_control_id": handle.call.call_control_id}
        if p["changed"].get("dial") == ["requested", "accepted"] and handle.call.call_control_id is not None:
            assert self._calls_nursery is not None
            self._calls_nursery.start_soon(self._mark_dialled, flight.request_id, handle.call.call_control_id)
        if item["phases"]:
            flight.tell(item)
        self._tell_tails(item)

    async def _mark_dialled(self, request_id: str, call_control_id: str) -> None:
        """The request's row gets its call's id (a listener cannot wait on the ledger, so a task does). Tried
        until the ledger takes it: the row keeps the id for recovery and for every other daemon (the call's
        run directory has it meanwhile, and its result carries it into the row if the call ends first)."""
        told = False
        while True:
            try:
                await self._ledger.mark_dialled(request_id, call_control_id)
                if told:
                    log.warning("request %s: the ledger has its call id %s now", request_id, call_control_id)
                return
            except (LedgerError, UnknownRequest) as exc:  # the call already ended and its result is stored
                log.info("request %s: %s", request_id, exc)
                return
            except LEDGER_ERRORS as exc:
                if not told:
                    log.error("request %s: the ledger cannot take its call id %s now (%s); trying every %.0f s",
                              request_id, call_control_id, exc, UNFINISHED_RETRY_S)
                    told = True
                await trio.sleep(UNFINISHED_RETRY_S)

    def _tell_tails(self, item: dict[str, Any]) -> None:
        for tail in list(self._tails):
            try:
                tail.send_nowait(item)
            except trio.WouldBlock:
                pass  # a slow tail misses lines; the journal on disk has them all
            except (trio.ClosedResourceError, trio.BrokenResourceError):
                self._tails.discard(tail)

    def _tail_result(self, run_id: str, handle: CallHandle | None, result: dict[str, Any]) -> None:
        """The last line a tail sees for a call: its result."""
        t_ms = handle.report_duration_ms() if handle is not None else 0
        self._tell_tails({"t_ms": t_ms, "event": "result", "phases": [], "run_id": run_id,
                          "call_control_id": result.get("call_control_id"), "result": result})

    # -- after the call (issue 16): history, show, timeline, prune -----------------------------------

    async def after_calls(self, n: int) -> None:
        """Wait until `n` calls have been counted and drawn (their results went out before)."""
        while self._after_calls_done < n:
            await self._after_call_step.wait()

    @property
    def region(self) -> str:
        """CALLD_REGION: where a number typed without + is dialled from (the control API reads `to` so)."""
        return self.settings.calld_region

    def where(self) -> dict[str, Any]:
        """Where this daemon keeps its state, and how it is reached: what `calld-ctl doctor` and `ledger
        check` look at (the ledger it uses, a PostgreSQL URL without its password; its routes as the
        proxy serves them, under /d/N/, and the ports behind them)."""
        from calld.ledger import redact

        s = self.settings
        url = s.calld_ledger_url.get_secret_value()
        return {"state_dir": str(s.calld_state_dir.absolute()),
                "ledger": redact(url) if url else str(s.db_path.absolute()), "ledger_engine": "postgresql" if url else "sqlite",
                "artifacts_dir": str(s.artifacts_dir.absolute()), "pid": os.getpid(), "mode": s.calld_mode,
                "instance": s.calld_instance,
                "bind": self.public_url.split("://", 1)[-1] if self.public_url else s.calld_bind,  # port 0 resolved
                "media_bind": self.media_bound or s.media_bind,
                "health_url": s.health_url() if s.public_base_url else "",
                "media_health_url": s.media_health_url() if s.public_base_url or s.public_media_url else "",
                # Linq posts every text here (no /d/N/: any daemon takes a text), when texting is on
                "texting_url": f"{s.public_base_url.rstrip('/')}/linq/webhook" if self.messaging is not None and s.public_base_url else ""}

    @property
    def ledger(self) -> AsyncLedger:
        """The ledger, for readers beside the daemon (the web view's pages)."""
        return self._ledger

    def ui_link(self) -> str:
        """A link to the web view with a fresh one-use token (calld-ctl ui)."""
        if self.ui_url is None:
            raise DaemonError("the web view is off: set CALLD_UI_BIND (e.g. 127.0.0.1:8790) and restart calld")
        return f"{self.ui_url}/?token={self.ui_access.issue()}"

    async def prune(self, older_than_days: float, *, dry_run: bool = False) -> dict[str, Any]:
        """Remove old calls' files in a worker thread (the calls on the line keep the event loop)."""
        from calld.observe.prune import prune_artifacts

        running = [h.rundir.path for h in self.callbook.handles()]
        # A call waiting to be published keeps its files until the publisher has them.
        running += [self.settings.artifacts_dir / row.run_dir for row in await self._ledger.unpublished(owner=self.settings.instance_name)]
        done = await trio.to_thread.run_sync(
            partial(prune_artifacts, self.settings.artifacts_dir, older_than_days, running=running, dry_run=dry_run))
        return done.as_dict()

    async def tail(self) -> AsyncIterator[dict[str, Any]]:
        tx, rx = trio.open_memory_channel[dict[str, Any]](1000)
        self._tails.add(tx)
        try:
            async for item in rx:
                yield item
        finally:
            self._tails.discard(tx)


WHEN_OPEN_DIALS_NOW = ("--when-open: the calling window is open at the number now, so calld dials now "
                       "(--when-open queues a call only while the window is closed)")


def socket_path_of(settings: Settings) -> Path:
    return settings.calld_socket
