"""A stop is bounded by SHUTDOWN_DRAIN_S, whatever the drawing process is doing (issue 51).

The daemon waited for its drawing process after the drain: a picture, or the font cache matplotlib
builds before its first, held a SIGINT for minutes (systemd's SIGKILL comes first). Pictures get
what is left of the drain; one not drawn is dropped and `calld-ctl show --timeline` draws it later.
The font cache is built when the daemon first starts, by the drawing process beside the calls.
"""

from __future__ import annotations

import io
import json

import pytest
import trio

from calld.cli.client import ControlClient
from calld.cli.ctl import EXIT_OK, run_ask
from calld.daemon.service import Daemon
from calld.observe.painter import Painter
from daemons import daemon_settings, real_time, stop

pytestmark = pytest.mark.fault
ASK = {"to": "+15555550142", "ask": "hours", "name": "Nathan", "user": "alice"}
DRAIN_S = 20.0


async def test_a_drawing_that_never_finishes_does_not_hold_the_stop(tmp_path, nursery, monkeypatch, autojump_clock):
    """The call ends, its picture never does: the stop still ends within SHUTDOWN_DRAIN_S (on the
    autojump clock, which leaps to each deadline while the drawing process keeps everyone waiting)."""
    drawing: list[object] = []

    async def never_done(self: Painter, run_dir, out):
        """A picture (or the font cache before it) that never ends."""
        drawing.append(run_dir)
        await trio.sleep_forever()

    monkeypatch.setattr(Painter, "draw_and_read", never_done)
    settings = daemon_settings(tmp_path, shutdown_drain_s=DRAIN_S)
    with trio.fail_after(DRAIN_S + 600):  # without the bound the stop never ends: fail, not hang
        async with trio.open_nursery() as own:  # ends when the daemon has stopped
            d: Daemon = await own.start(Daemon(settings).serve)
            async with ControlClient(settings.calld_socket) as client:
                await client.provision("alice")
                out = io.StringIO()
                assert await run_ask(client, ASK, out=out, err=io.StringIO()) == EXIT_OK
            result = json.loads(out.getvalue())
            await trio.sleep(1)
            assert drawing and d._after_calls_pending == 1  # its picture is being drawn, and never will be
            began = trio.current_time()
            await d.shutdown()  # SHUTDOWN_DRAIN_S, as SIGTERM's
    assert trio.current_time() - began <= DRAIN_S + 1
    assert d.painter._closed and d.painter._proc is None  # no drawing process outlives the daemon
    run_dir = settings.artifacts_dir / result["transcript_ref"].split("/")[0]
    assert not (run_dir / "timeline.svg").exists()

    # The dropped picture is drawn again on request, by the next daemon's real drawing process.
    monkeypatch.undo()
    again: Daemon = await nursery.start(Daemon(settings).serve)
    with real_time(autojump_clock):
        svg = await again.lookup.timeline(result["run_id"], "svg")
    assert svg is not None and svg.startswith(b"<?xml") and (run_dir / "timeline.svg").read_bytes() == svg
    await stop(again)


async def test_the_font_cache_is_built_from_the_first_start_not_the_first_picture(tmp_path, nursery, monkeypatch):
    """`calld serve`'s daemon (warm_up_drawing) starts its drawing process at once when matplotlib
    has no font cache (the process imports matplotlib, which builds it, before it takes a request);
    a start that finds one starts no process before its first picture. On the wall clock: a real
    process is started. (How long the cache takes is the machine's: the process runs in the idle
    class, and the stop does not wait for it, as the test above shows for any drawing.)"""
    cache = tmp_path / "mpl"
    cache.mkdir()
    monkeypatch.setenv("MPLCONFIGDIR", str(cache))
    d: Daemon = await nursery.start(Daemon(daemon_settings(tmp_path / "first"), warm_up_drawing=True).serve)
    with trio.fail_after(30):
        while d.painter._proc is None:
            await trio.sleep(0.05)
    assert d.painter._proc.returncode is None  # no call yet: the drawing process is up, building the cache
    await stop(d)
    (cache / "fontlist-v3.11.0.json").write_text("{}")  # as matplotlib leaves it
    d = await nursery.start(Daemon(daemon_settings(tmp_path / "second"), warm_up_drawing=True).serve)
    await trio.sleep(0.5)
    assert d.painter._proc is None
    await stop(d)


async def test_a_call_torn_down_as_its_dial_is_written_is_still_hung_up(tmp_path, autojump_clock):
    """The shutdown's cancel lands while dial.json is on its way to the disk (a trip to a worker
    thread under `calld serve`): the dial has answered, the loop never heard. The call exists at the
    carrier, so it is hung up once as it is torn down, and its result is failed."""
    from functools import partial

    from calld.calls import prepare, run_stub_call
    from calld.domain.ids import E164, FirstName, UserId
    from calld.domain.questions import QuestionType
    from calld.domain.requests import AskRequest
    from calld.ledger import Ledger
    from calld.settings import load_settings

    settings = load_settings(calld_state_dir=tmp_path)
    ledger = Ledger(settings.db_path)
    ledger.provision_stub(UserId("tester"))
    plan = prepare(AskRequest(to=E164("+15555550142"), ask=QuestionType.HOURS, name=FirstName("Nathan"),
                              user=UserId("tester")), settings, ledger)
    ledger.close()
    handles = []

    async def torn_down_while_writing(fn):
        if isinstance(fn, partial) and fn.args[:1] == ("dial.json",):
            handles[0]._nursery.cancel_scope.cancel()  # the shutdown's cancel, as the file is written
            await trio.sleep(0)  # the trip's checkpoint: where the cancel is felt
        return fn()

    with trio.fail_after(900):
        run = await run_stub_call(plan, settings, "hours", on_handle=handles.append, disk=torn_down_while_writing)
    ccid = handles[0].call.call_control_id
    assert ccid is not None and run.world.hangup_requests == [ccid]
    assert run.result.status == "failed" and run.result.call_control_id == ccid
