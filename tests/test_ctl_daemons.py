"""calld-ctl with several daemons (CALLD_SOCKET=a,b): a request goes to the first, and moves on from a
daemon that is down or at capacity, with the same request id, saying so on stderr."""

from __future__ import annotations

import io
import json

import pytest
import trio

from calld.cli.client import ControlError, DaemonUnreachable
from calld.cli.ctl import main, on_daemons, run_ask
from calld.daemon.service import Daemon
from tests.daemons import daemon_settings, stop

ASK = {"to": "+15555550142", "ask": "hours", "name": "Nathan", "user": "alice", "request_id": "req-spread-1"}


async def two_daemons(tmp_path, nursery, **first):
    # Each its own state directory (own ledger) until the shared ledger lands; then only these settings change.
    d1: Daemon = await nursery.start(Daemon(daemon_settings(tmp_path / "d1", calld_instance=1, **first)).serve)
    d2: Daemon = await nursery.start(Daemon(daemon_settings(tmp_path / "d2", calld_instance=2)).serve)
    from calld.cli.client import ControlClient

    for d in (d1, d2):
        async with ControlClient(d.settings.calld_socket) as c:
            await c.provision("alice")
    return d1, d2


async def ask_on(sockets, err, body=ASK):
    out = io.StringIO()
    progress = io.StringIO()
    code = await on_daemons(sockets, lambda c: run_ask(c, body, out=out, err=progress), places=True, err=err)
    assert out.getvalue(), (code, err.getvalue(), progress.getvalue())
    return code, json.loads(out.getvalue())


async def test_a_daemon_that_is_down_is_passed_over_for_the_next(tmp_path, nursery, autojump_clock):
    d1, d2 = await two_daemons(tmp_path, nursery)
    await stop(d1)
    while d1.settings.calld_socket.exists():  # stopped: its socket is gone once serve() has returned
        await trio.sleep(0.01)
    err = io.StringIO()
    code, result = await ask_on([d1.settings.calld_socket, d2.settings.calld_socket], err)
    assert code == 0 and result["status"] == "answered"
    assert d2._ledger.sync.request("req-spread-1") is not None
    text = err.getvalue()
    assert f"no daemon answers on {d1.settings.calld_socket}; trying {d2.settings.calld_socket}" in text
    assert f"answered by the daemon on {d2.settings.calld_socket}" in text
    await stop(d2)


async def test_a_daemon_at_capacity_passes_the_same_request_id_to_the_next(tmp_path, nursery, autojump_clock):
    d1, d2 = await two_daemons(tmp_path, nursery, calld_max_calls=1)
    sockets = [d1.settings.calld_socket, d2.settings.calld_socket]
    first: list = []

    async def busy() -> None:
        first.append(await ask_on(sockets[:1], io.StringIO(), {**ASK, "request_id": "req-busy"}))

    nursery.start_soon(busy)
    while not len(d1.callbook):  # daemon 1 is on its one call
        await trio.sleep(0.01)
    err = io.StringIO()
    code, result = await ask_on(sockets, err)
    assert code == 0 and result["status"] == "answered"
    assert d1._ledger.sync.request("req-spread-1") is None  # refused before anything was written
    assert d2._ledger.sync.request("req-spread-1") is not None  # the same id, placed by daemon 2
    assert f"the daemon on {sockets[0]} refused (calld is already on 1 calls, its limit (CALLD_MAX_CALLS)" in err.getvalue()
    assert f"answered by the daemon on {sockets[1]}" in err.getvalue()
    while not first:
        await trio.sleep(0.1)
    await stop(d1)
    await stop(d2)


async def test_a_refusal_that_is_not_about_capacity_is_the_answer(tmp_path, nursery, autojump_clock):
    d1, d2 = await two_daemons(tmp_path, nursery)
    err = io.StringIO()
    with pytest.raises(ControlError):  # an unknown user: the next daemon would say the same
        await ask_on([d1.settings.calld_socket, d2.settings.calld_socket], err, {**ASK, "user": "nobody"})
    assert "trying" not in err.getvalue()
    await stop(d1)
    await stop(d2)


async def test_every_daemon_down_says_so_for_the_last(tmp_path):
    with pytest.raises(DaemonUnreachable) as down:
        await on_daemons([tmp_path / "a.sock", tmp_path / "b.sock"], lambda c: c.calls(), err=io.StringIO())
    assert str(tmp_path / "b.sock") in str(down.value)


def test_a_socket_list_with_a_hole_or_a_repeat_is_refused(tmp_path, capsys):
    for given, says in ((f"{tmp_path}/a.sock,,{tmp_path}/b.sock", "is empty"), (f"{tmp_path}/a.sock,{tmp_path}/a.sock", "twice")):
        assert main(["--socket", given, "calls"]) == 2
        assert says in capsys.readouterr().err


async def test_calls_and_show_find_the_call_of_the_second_daemon_each_on_its_own_ledger(tmp_path, nursery, autojump_clock,
                                                                                        capsys):
    import argparse

    from calld.cli.ctl import _calls, _show

    d1, d2 = await two_daemons(tmp_path, nursery)
    sockets = [d1.settings.calld_socket, d2.settings.calld_socket]
    done: list = []

    async def on_two() -> None:
        done.append(await ask_on(sockets[1:], io.StringIO()))

    nursery.start_soon(on_two)
    while not len(d2.callbook):
        await trio.sleep(0.01)
    capsys.readouterr()
    assert await _calls(argparse.Namespace(sockets=sockets, socket=sockets[0], json=True)) == 0
    rows = json.loads(capsys.readouterr().out)
    assert [(r["daemon"], r["socket"]) for r in rows] == [("2", str(sockets[1]))]
    show = argparse.Namespace(sockets=sockets, socket=sockets[0], ident=ASK["request_id"], json=False, timeline=None,
                              transcript=False)
    assert await _show(show) == 0  # daemon 1's ledger has no such request: the next daemon is asked
    assert " is in flight: dial " in capsys.readouterr().out
    while not done:
        await trio.sleep(0.1)
    assert await _show(show) == 0
    assert str(d2.settings.artifacts_dir.resolve()) in capsys.readouterr().out
    with pytest.raises(ControlError) as missing:  # asked of daemon 1 alone: it knows no such call
        await _show(argparse.Namespace(**{**vars(show), "sockets": sockets[:1]}))
    assert missing.value.status == 404
    await stop(d1)
    await stop(d2)
