"""What the daemon tests share: settings for a daemon in a test's tmp_path, and the bodies of the `daemon` and
`client` fixtures (`serving`, `provisioned`).

Each test module keeps its own `daemon` fixture (they differ in limits and drains) but builds
it from these, so a new setting every test daemon needs is added once."""

from __future__ import annotations

import math
import random
import socket
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path
from typing import Any

from calld.cli.client import ControlClient
from calld.daemon.service import Daemon
from calld.observe.painter import unhurried_clock
from calld.settings import Settings, load_settings

# Many calls to one test number from one user: the per-number and per-user limits would refuse them.
OPEN_LIMITS = {"calld_calls_per_number_per_day": 1000, "calld_calls_per_user_per_hour": 1000, "calld_calls_per_number_at_once": 1000}


def daemon_settings(tmp_path: Path, *, open_limits: bool = True, **over: Any) -> Settings:
    """A stub daemon on loopback with its state, socket and artifacts under `tmp_path`."""
    values: dict[str, Any] = dict(calld_state_dir=tmp_path / "state", calld_socket=tmp_path / "ctl.sock",
                                  calld_bind="127.0.0.1:0", _env_file=None)
    if open_limits:
        values |= OPEN_LIMITS
    return load_settings(**(values | over))


def _ephemeral_low() -> int:
    try:
        return int(Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return 32768


_handed_out: set[int] = set()


def free_port() -> int:
    """A loopback port free now and outside the kernel's ephemeral range. A port the kernel picked
    for bind(0) is an ephemeral one, and an outbound connection made before the daemon binds it (the
    simulator's webhook, a probe) may take it as its own local port: CI once failed on exactly that,
    EADDRINUSE. Below the range no connect() ever lands, and no port is handed out twice in a run."""
    low = _ephemeral_low()
    rng = random.Random()
    for _ in range(200):
        port = rng.randrange(max(1024, low - 12000), low)
        if port in _handed_out:
            continue
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                continue
        _handed_out.add(port)
        return port
    raise RuntimeError(f"no free loopback port below the ephemeral range ({low})")


def reachable_at(port: int | None = None, media_port: int | None = None) -> dict[str, str]:
    """A live daemon's public side as the simulator reaches it, with no proxy in between: webhooks
    on CALLD_BIND, the media socket straight at CALLD_MEDIA_BIND (PUBLIC_MEDIA_URL says so)."""
    port, media_port = port or free_port(), media_port or free_port()
    base = f"http://127.0.0.1:{port}"
    return {"calld_bind": f"127.0.0.1:{port}", "calld_media_bind": f"127.0.0.1:{media_port}", "public_base_url": base,
            "public_webhook_url": f"{base}/telnyx/webhook", "public_media_url": f"ws://127.0.0.1:{media_port}/telnyx/media"}


async def stop(daemon: Daemon) -> None:
    """A fixture's teardown: wait for the pictures, then shut down without a drain, unless the test
    already shut the daemon down.

    The pictures are drawn by the drawing process on the wall clock, in the idle class (a shutdown
    without a drain would drop them): a virtual clock that jumped at once would poll a core flat out
    meanwhile, and with the other core busy the drawing would never get one (fifty pictures, each
    to its 120 s bound)."""
    if daemon.accepting:
        unhurried_clock()
        await daemon.pictures_drawn()
        await daemon.shutdown(drain_s=0)


@asynccontextmanager
async def serving(nursery: Any, settings: Settings) -> AsyncIterator[Daemon]:
    """A daemon started in `nursery`, stopped when the block ends: a module's `daemon` fixture body."""
    daemon: Daemon = await nursery.start(Daemon(settings).serve)
    yield daemon
    await stop(daemon)


@asynccontextmanager
async def provisioned(daemon: Daemon, *users: str) -> AsyncIterator[ControlClient]:
    """A control client of `daemon` with a number provisioned for each of `users`: a module's `client` fixture body."""
    async with ControlClient(daemon.settings.calld_socket) as client:
        for user in users:
            await client.provision(user)
        yield client


@contextmanager
def real_time(clock: Any) -> Iterator[None]:
    """The clock runs at wall-clock pace while a worker thread or a real peer works: autojump would
    leap past any timeout meanwhile, however long it really takes on a loaded machine."""
    clock.autojump_threshold, clock.rate = math.inf, 1.0
    try:
        yield
    finally:
        clock.autojump_threshold, clock.rate = 0, 0.0


async def texting_daemon(nursery: Any, settings: Settings, handle: str, user: str = "alice", name: str = "Nathan") -> Daemon:
    """A daemon serving `settings`, with `user` provisioned and the texting `handle` linked to them."""
    from calld.cli.client import ControlClient

    d: Daemon = await nursery.start(Daemon(settings).serve)
    async with ControlClient(settings.calld_socket) as c:
        await c.provision(user)
        await c.messaging_link(handle, user, name)
    return d


async def say(daemon: Daemon, handle: str, *texts: str) -> list[str]:
    """Text the daemon from `handle`, one text at a time: every reply that handle has had."""
    for text in texts:
        await daemon.messaging.fake.text(handle, text)
        await daemon.messaging.wait_idle()
    return daemon.messaging.fake.replies_to(handle)
