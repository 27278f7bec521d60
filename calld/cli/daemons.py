"""calld-ctl across several daemons (CALLD_SOCKET=a,b): the commands that must see every daemon.

`calls`, `tail` and `metrics` ask every socket at once and merge, naming the daemon of each call, line
or sample, and saying on stderr which socket did not answer (then the exit is 7: what is shown is
partial). `show` and its kin go to the daemon that holds the call: a daemon that does not answers 421
naming its owner (calld.daemon.control._elsewhere), and the next socket is asked; when none of them is
the owner, the answer says the call is on that daemon and not reachable, never that it does not exist.
"""

from __future__ import annotations

import sys
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any

import trio

from calld.cli.client import ControlClient, ControlError, DaemonUnreachable, OwnerUnreachable, StreamBroken
from calld.observe.summary import line_may_be_up_words


async def daemon_name(client: ControlClient) -> str:
    """The daemon's CALLD_INSTANCE, or (a daemon with none, alone on its ledger) its socket's path."""
    instance = (await client.where()).get("instance")
    return str(instance) if instance is not None else str(client.path)


async def on_every_daemon(sockets: Sequence[Path], fn: Callable[[ControlClient, str], Awaitable[None]], *,
                          err: Any = None) -> list[Path]:
    """`fn(client, daemon name)` with every daemon in `sockets` at once. Returns the sockets where no
    daemon answered, or whose answer broke off; stderr names each. With one socket, or when none
    answers, the error is raised as it is (one daemon's tools behave as they always did)."""
    err = err or sys.stderr
    if len(sockets) == 1:
        async with ControlClient(sockets[0]) as client:
            await fn(client, await daemon_name(client))
        return []
    missed: list[Path] = []
    unreachable: list[DaemonUnreachable] = []

    async def one(path: Path) -> None:
        try:
            async with ControlClient(path) as client:
                await fn(client, await daemon_name(client))
        except DaemonUnreachable as exc:
            unreachable.append(exc)
            missed.append(path)
            print(f"calld-ctl: no daemon answers on {path}; what it holds is not shown", file=err, flush=True)
        except StreamBroken as exc:
            missed.append(path)
            print(f"calld-ctl: the daemon on {path} went away ({exc.detail}); what it holds is not shown", file=err, flush=True)

    async with trio.open_nursery() as nursery:
        for path in sockets:
            nursery.start_soon(one, path)
    if len(unreachable) == len(sockets):
        raise unreachable[-1]
    return missed


async def on_owner(sockets: Sequence[Path], fn: Callable[[ControlClient], Awaitable[int]], *, err: Any = None) -> int:
    """`fn` with the daemon that holds the call `fn` asks about: the first in `sockets` whose answer is
    not "another daemon's" (421) nor, with several sockets, "no such call" (404: daemons each on their
    own ledger know only their own calls). With none left, the owner named by a 421 is said to be out
    of reach (OwnerUnreachable), else the 404 stands, else no daemon answered."""
    err = err or sys.stderr
    down: list[Path] = []
    owner: dict[str, Any] | None = None
    missing: ControlError | None = None
    for path in sockets:
        try:
            async with ControlClient(path) as client:
                code = await fn(client)
        except DaemonUnreachable:
            down.append(path)
            continue
        except ControlError as exc:
            if exc.status == 421 and exc.elsewhere is not None:
                owner = owner or exc.elsewhere
                continue
            if exc.status == 404 and len(sockets) > 1:
                missing = missing or exc
                continue
            raise
        if len(sockets) > 1:
            print(f"calld-ctl: answered by the daemon on {path}", file=err, flush=True)
        return code
    if owner is not None:
        raise OwnerUnreachable(not_reachable(owner, down, sockets), down[-1] if down else sockets[-1])
    if missing is not None:
        if down:
            raise ControlError(missing.status, f"{missing.message} (no daemon answers on {', '.join(map(str, down))}, "
                                               "which may hold it)")
        raise missing
    raise DaemonUnreachable(down[-1])


def not_reachable(owner: dict[str, Any], down: Sequence[Path], sockets: Sequence[Path]) -> str:
    """What calld-ctl says of a call whose daemon it could not reach, and where it looked."""
    ids = owner["run_id"] + (f" (request {owner['request_id']})" if owner.get("request_id") else "")
    daemon = f"daemon {owner['daemon']}"
    if owner.get("holder"):
        daemon += f" ({owner['holder']})"
    if owner["request_status"] in ("placing", "in_flight"):
        said = f"call {ids} is in flight on {daemon}"
    else:
        said = f"call {ids} finished ({owner.get('status') or owner['request_status']}) on {daemon}, which keeps its files"
        said += line_may_be_up_words(owner)
    if down:
        return f"{said}, not reachable: no daemon answers on {', '.join(map(str, down))}"
    return (f"{said}, not reachable: no socket in CALLD_SOCKET ({','.join(map(str, sockets))}) "
            f"is daemon {owner['daemon']}'s; add its socket")


def merge_metrics(texts: Sequence[tuple[str, str]]) -> str:
    """Several daemons' Prometheus texts as one: every sample labelled with its daemon (`daemon="2"`),
    each family once (the text format allows no repeat). Not summed: a gauge such as calls in flight
    summed is right, a histogram's buckets too, but a per-daemon figure is what finds the busy daemon,
    and Prometheus sums with `sum without (daemon)`."""
    from prometheus_client.exposition import generate_latest
    from prometheus_client.metrics_core import Metric
    from prometheus_client.parser import text_string_to_metric_families
    from prometheus_client.registry import CollectorRegistry

    families: dict[str, Metric] = {}
    for daemon, text in texts:
        for family in text_string_to_metric_families(text):
            merged = families.setdefault(family.name, Metric(family.name, family.documentation, family.type, family.unit))
            merged.samples += [s._replace(labels={**s.labels, "daemon": daemon}) for s in family.samples]

    class _Merged:
        def collect(self) -> list[Metric]:
            return list(families.values())

    registry = CollectorRegistry(auto_describe=False)
    registry.register(_Merged())  # type: ignore[arg-type]
    return generate_latest(registry).decode()
