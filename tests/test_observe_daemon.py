"""After the call, through the daemon: history, show, the timeline every call draws, tail's last line,
metrics on the control socket and prune. Real servers on a temporary socket, the autojump clock."""

from __future__ import annotations

import io
import json
from contextlib import aclosing
from pathlib import Path
from typing import Any

import pytest
import trio
from prometheus_client.parser import text_string_to_metric_families

from calld.cli.client import ControlClient, ControlError
from calld.cli.ctl import EXIT_OK, build_parser, run_ask, tail_line
from calld.daemon.service import Daemon
from daemons import daemon_settings, provisioned, real_time, serving

ASK = {"to": "+15555550142", "ask": "hours", "name": "Nathan", "user": "alice"}


@pytest.fixture
async def daemon(tmp_path, nursery):
    async with serving(nursery, daemon_settings(tmp_path, calld_max_calls=7)) as d:
        yield d


@pytest.fixture
async def client(daemon):
    async with provisioned(daemon, "alice", "bob") as c:
        yield c


async def observed(daemon: Daemon, n: int, clock: Any) -> None:
    """Until n calls were counted and drawn after their results (bounded in real time: a missing step fails)."""
    with real_time(clock), trio.fail_after(120):
        await daemon.after_calls(n)


async def ask(client: ControlClient, **over: Any) -> dict[str, Any]:
    out = io.StringIO()
    await run_ask(client, {**ASK, **over}, out=out, err=io.StringIO())
    return json.loads(out.getvalue())



async def ctl(daemon: Daemon, capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str]:
    """Run one calld-ctl command's own code inside this trio run; its exit code and stdout."""
    args = build_parser().parse_args(["--socket", str(daemon.settings.calld_socket), *argv])
    capsys.readouterr()
    code = await args.afunc(args)
    return code, capsys.readouterr().out


async def test_every_call_draws_its_timeline_after_its_result(client, daemon, autojump_clock):
    answered = await ask(client)
    declined = await ask(client, scenario="decline")
    await observed(daemon, 2, autojump_clock)
    for result in (answered, declined):
        run_dir = daemon.settings.artifacts_dir / result["transcript_ref"].split("/")[0]
        svg = (run_dir / "timeline.svg").read_text()
        assert 'id="marker/mark_echo/' in svg and 'id="speech/business/0/' in svg
        assert result["status"] in svg
        # The picture is not among the report's refs (the report was final before it was drawn).
        assert "timeline.svg" not in json.loads((run_dir / "call_report.json").read_text())["refs"]


async def test_history_lists_past_calls_newest_first_and_filters(client, daemon, capsys, autojump_clock):
    first = await ask(client)
    second = await ask(client, scenario="decline")
    third = await ask(client, user="bob", ask="stock", item="cast iron skillet")
    code, out = await ctl(daemon, capsys, "history", "--json")
    rows = json.loads(out)
    assert code == EXIT_OK
    assert [r["run_id"] for r in rows] == [third["run_id"], second["run_id"], first["run_id"]]
    newest = rows[0]
    assert newest["user"] == "bob" and newest["to"] == "+15555550142" and newest["ask"] == "stock cast iron skillet"
    assert newest["status"] == "answered" and newest["answer"] == third["answer_text"][:60]
    report = json.loads((daemon.settings.artifacts_dir / third["transcript_ref"].split("/")[0] / "call_report.json").read_text())
    assert newest["duration_ms"] == report["duration_ms"]

    _, out = await ctl(daemon, capsys, "history", "--user", "alice", "--json")
    assert [r["run_id"] for r in json.loads(out)] == [second["run_id"], first["run_id"]]
    _, out = await ctl(daemon, capsys, "history", "--status", "declined", "--json")
    assert [r["run_id"] for r in json.loads(out)] == [second["run_id"]]
    _, out = await ctl(daemon, capsys, "history", "--limit", "1", "--json")
    assert [r["run_id"] for r in json.loads(out)] == [third["run_id"]]
    _, out = await ctl(daemon, capsys, "history", "--since", "2999-01-01", "--json")
    assert json.loads(out) == []
    _, out = await ctl(daemon, capsys, "history", "--since", "1d", "--json")
    assert len(json.loads(out)) == 3

    code, text = await ctl(daemon, capsys, "history")
    lines = text.splitlines()
    assert lines[0].split() == ["WHEN", "USER", "TO", "ASK", "STATUS", "DURATION", "ANSWER", "ID"]
    assert "bob" in lines[1] and "answered" in lines[1] and third["call_control_id"] in lines[1]
    assert "declined" in lines[2] and f"{report['duration_ms'] / 1000:.1f} s" in lines[1]


async def test_history_refuses_a_bad_query_with_what_to_fix(client, daemon, autojump_clock):
    with pytest.raises(ControlError, match="since: 'last tuesday' is not a date"):
        await client.history(since="last tuesday")
    with pytest.raises(ControlError, match="status: 'great' is not one of"):
        await client.history(status="great")
    with pytest.raises(ControlError, match="limit"):
        await client.history(limit="many")


async def test_show_prints_a_summary_the_transcript_the_report_and_the_picture(client, daemon, capsys, tmp_path,
                                                                              autojump_clock):
    result = await ask(client)
    await observed(daemon, 1, autojump_clock)
    run_dir = daemon.settings.artifacts_dir / result["transcript_ref"].split("/")[0]
    report = json.loads((run_dir / "call_report.json").read_text())

    code, text = await ctl(daemon, capsys, "show", result["call_control_id"])
    assert code == EXIT_OK
    assert "status      answered, verdict from the tool" in text
    assert f"answer      {result['answer_text']}" in text
    assert "hangup      via tool; confirmed" in text
    assert f"final mark echoed {report['final_mark_echo_ms'] / 1000:.1f} s" in text
    paths = [line.split()[-1] for line in text.splitlines() if line.strip().endswith((".json", ".wav", ".jsonl", ".svg"))]
    assert str(run_dir.resolve() / "timeline.svg") in paths and str(run_dir.resolve() / "result.json") in paths
    assert all(Path(p).is_absolute() and Path(p).exists() for p in paths)
    assert "transcript (seconds into the call)" not in text

    _, text = await ctl(daemon, capsys, "show", result["run_id"], "--transcript")
    turns = [line for line in text.splitlines() if "business:" in line or "agent:" in line]
    assert len(turns) == 4 and "Joe's Hardware" in turns[0] and "on behalf of Nathan" in turns[1]
    starts = [float(line.split("-")[0]) for line in turns]
    first_frame = next(json.loads(line)["t_ms"] for line in (run_dir / "events.jsonl").read_text().splitlines()
                       if '"kind": "media.audio"' in line and '"event"' in line)
    first_turn = json.loads((run_dir / "transcript.json").read_text())["turns"][0]
    assert starts == sorted(starts) and starts[0] == pytest.approx((first_turn["start_ms"] + first_frame) / 1000, abs=0.05)

    _, text = await ctl(daemon, capsys, "show", result["run_id"], "--json")
    assert json.loads(text) == report

    picture = tmp_path / "call.png"
    with real_time(autojump_clock):
        code, text = await ctl(daemon, capsys, "show", result["run_id"], "--timeline", str(picture))
        assert code == EXIT_OK and text.strip() == str(picture.resolve())
        assert picture.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        (run_dir / "timeline.svg").unlink()
        _, text = await ctl(daemon, capsys, "show", result["run_id"], "--timeline")
    assert text.strip() == str(run_dir.resolve() / "timeline.svg")
    from calld.cli.ctl import UsageError

    nowhere = tmp_path / "no-such-dir" / "call.png"
    with pytest.raises(UsageError, match="is not a directory; give a file in a directory that exists"):
        await ctl(daemon, capsys, "show", result["run_id"], "--timeline", str(nowhere))
    (tmp_path / "taken.png").mkdir()  # a directory where the file would go: the write itself fails
    with real_time(autojump_clock), pytest.raises(UsageError, match="cannot write .*give a file you can write"):
        await ctl(daemon, capsys, "show", result["run_id"], "--timeline", str(tmp_path / "taken.png"))


async def test_show_of_a_request_id_on_the_line_prints_its_tracks(client, daemon, capsys, autojump_clock):
    done: list = []

    async def place() -> None:
        done.append(await ask(client, request_id="live-1"))

    async with trio.open_nursery() as n:
        n.start_soon(place)
        while not len(daemon.callbook):
            await trio.sleep(0.01)
        code, text = await ctl(daemon, capsys, "show", "live-1")  # the id calld-ctl ask prints
        assert code == EXIT_OK and " is in flight: dial " in text
        code, text = await ctl(daemon, capsys, "show", "live-1", "--json")
        assert code == EXIT_OK and json.loads(text)["in_flight"] is True
    assert done[0]["status"] == "answered"


async def test_show_of_an_unknown_call_says_so(client, daemon, capsys, autojump_clock):
    # Every id show takes is named, and where the right one is found.
    every_id = "request id, run id or call_control_id 'run_nope'; calld-ctl history lists the calls with their ids"
    for look_up in (client.detail, client.show):
        with pytest.raises(ControlError) as missing:
            await look_up("run_nope")
        assert missing.value.message == f"no call with {every_id}"
    with pytest.raises(ControlError) as missing:
        await client.timeline("run_nope", "png")
    assert missing.value.message == f"no finished call with {every_id}"
    with pytest.raises(ControlError, match="no call with request id, run id or call_control_id 'lunch-1'; calld-ctl history"):
        await ctl(daemon, capsys, "show", "lunch-1")  # a request id as the user chose it: said back as typed
    with pytest.raises(ControlError, match=r"\.svg or \.png"):
        await client.timeline("run_nope", "gif")
    too_long = "x" * 5000  # no file can have such a name: still just no such call
    for call in (client.detail(too_long), client.show(too_long), client.timeline(too_long, "png")):
        with pytest.raises(ControlError, match="no ") as missing:
            await call
        assert missing.value.status == 404


async def test_an_empty_call_id_is_refused_with_what_to_give_and_writes_nothing(client, daemon, capsys, tmp_path,
                                                                                autojump_clock):
    for call in (client.detail(""), client.show(" "), client.published_objects(""), client.timeline("", "png")):
        with pytest.raises(ControlError, match="the call id is empty") as empty:
            await call
        assert empty.value.status == 400
    picture = tmp_path / "x.png"
    with pytest.raises(ControlError, match="the call id is empty"):
        await ctl(daemon, capsys, "show", "", "--timeline", str(picture))
    assert not picture.exists()
    # What is no route of calld's (quart redirects a path with an empty part) is an error, not a page.
    status, _ = await client.raw("GET", "/v1/calls//detail", b"")
    assert 300 <= status < 400
    with pytest.raises(ControlError, match="no such route"):
        await client._request("GET", "/v1/calls//detail")


async def test_a_request_id_is_looked_up_as_one_path_segment(client, daemon, autojump_clock):
    with pytest.raises(ControlError, match="the request id is empty") as empty:
        await client.request_status(" ")
    assert empty.value.status == 400
    with pytest.raises(ControlError, match=r"no request 'req\?x' in the ledger") as missing:
        await client.request_status("req?x")  # sent as req%3Fx: the route sees the whole id, not a query
    assert missing.value.status == 404


def test_calld_ctl_says_an_empty_call_id_is_empty_and_exits_2(tmp_path, capsys):
    from calld.cli.ctl import main

    for argv in (["show", ""], ["show", " ", "--json"], ["fetch", "", str(tmp_path / "out")]):
        assert main(["--socket", str(tmp_path / "no.sock"), *argv]) == 2
        assert "the call id is empty" in capsys.readouterr().err
    assert not (tmp_path / "out").exists()
    for argv, what in ((["show", "run_\udcff"], "the call id"), (["cancel", "req-\udcff"], "the request id"),
                       (["optout", "remove", "+1555\udcff"], "is not an E.164 phone number"),
                       (["cancel", ""], "the request id is empty")):
        assert main(["--socket", str(tmp_path / "no.sock"), *argv]) == 2  # refused before the daemon is asked
        err = capsys.readouterr().err
        assert what in err and "Error" not in err, err


async def test_tail_follows_each_call_under_one_id_and_ends_with_its_result(client, daemon, autojump_clock):
    items: list[dict[str, Any]] = []

    async def follow(done: trio.Event) -> None:
        async with ControlClient(daemon.settings.calld_socket) as watcher:
            async for item in watcher.tail():  # a tail ends when its reader stops it (Ctrl-C)
                items.append(item)
                if "result" in item:
                    done.set()

    async with trio.open_nursery() as n:
        done = trio.Event()
        n.start_soon(follow, done)
        await trio.sleep(1)
        result = await ask(client)
        with trio.fail_after(60):
            await done.wait()
        n.cancel_scope.cancel()
    lines = [tail_line(i) for i in items]
    assert {line.split()[0] for line in lines} == {result["run_id"]}
    assert lines[0].endswith("dialing")
    assert lines[-1].endswith(f"finished: answered, verdict from the tool: {result['answer_text']}")
    assert items[-1]["result"] == result


def test_tail_line_says_status_reason_and_answer() -> None:
    item = {"run_id": "run_1", "t_ms": 16000, "event": "result", "phases": [], "call_control_id": "v3:x",
            "result": {"status": "declined", "reason": "refused", "verdict_source": "transcript", "answer_text": None}}
    assert tail_line(item) == "run_1   16.0s finished: declined (refused), verdict from the transcript"
    step = {"run_id": "run_1", "t_ms": 0, "event": "dial.accepted", "phases": ["dial accepted"], "call_control_id": "v3:x"}
    assert tail_line(step) == "run_1    0.0s dial accepted (call_control_id v3:x)"


def _samples(text: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    return {(s.name, tuple(sorted(s.labels.items()))): s.value
            for family in text_string_to_metric_families(text) for s in family.samples}


async def test_metrics_on_the_control_socket(client, daemon, capsys, autojump_clock):
    result = await ask(client)
    for body in ({**ASK, "user": "nobody"}, {**ASK, "to": "+19002345678"}):  # no number; a premium-rate destination
        with pytest.raises(ControlError):
            async with aclosing(client.ask(body)) as refused:
                await anext(refused)
    await observed(daemon, 1, autojump_clock)
    run_dir = daemon.settings.artifacts_dir / result["transcript_ref"].split("/")[0]
    report = json.loads((run_dir / "call_report.json").read_text())
    code, text = await ctl(daemon, capsys, "metrics")
    assert code == EXIT_OK
    m = _samples(text)
    assert m[("calld_calls_total", (("reason", ""), ("status", "answered")))] == 1
    assert m[("calld_call_duration_seconds_count", ())] == 1
    assert m[("calld_call_duration_seconds_sum", ())] == pytest.approx(report["duration_ms"] / 1000)
    assert m[("calld_ring_duration_seconds_sum", ())] == pytest.approx(1.0)  # the stub answers after 1 s
    assert m[("calld_hangups_total", (("path", "tool"),))] == 1
    assert m[("calld_pickup_audio_frames_total", (("fate", "held"),))] == report["counts"]["held_frames"] > 0
    assert m[("calld_media_frames_lost_total", ())] == 0
    assert m[("calld_live_session_seconds_count", ())] == 1
    assert m[("calld_calls_in_flight", ())] == 0 and m[("calld_max_calls", ())] == 7
    assert m[("calld_refusals_total", (("rule", "unknown_user"),))] == 1
    policy = {labels: v for (name, labels), v in m.items() if name == "calld_refusals_total" and labels != (("rule", "unknown_user"),)}
    assert list(policy.values()) == [1]  # the gate's rule, by its code
    assert m[("calld_cpu_seconds_per_call_second", ())] > 0
    assert all(name.startswith("calld_") for name, _ in m)


async def test_prune_removes_old_artifacts_and_the_ledger_keeps_the_result(client, daemon, capsys, autojump_clock):
    result = await ask(client)
    await observed(daemon, 1, autojump_clock)
    run_dir = daemon.settings.artifacts_dir / result["transcript_ref"].split("/")[0]
    code, text = await ctl(daemon, capsys, "prune", "--older-than", "1")
    assert code == EXIT_OK and run_dir.exists() and "removed 0 call(s)" in text and "kept 1" in text
    _, text = await ctl(daemon, capsys, "prune", "--older-than", "0", "--dry-run")
    assert run_dir.exists() and f"would remove {run_dir}" in text
    _, text = await ctl(daemon, capsys, "prune", "--older-than", "0", "--json")
    assert json.loads(text)["removed"] == [str(run_dir)] and not run_dir.exists()

    (row,) = await client.history()
    assert row["status"] == "answered" and row["answer"] == result["answer_text"][:60] and row["artifacts"] is False
    _, text = await ctl(daemon, capsys, "show", result["call_control_id"])
    assert "answered" in text and result["answer_text"] in text and "pruned" in text
    _, text = await ctl(daemon, capsys, "show", result["call_control_id"], "--json")
    assert json.loads(text)["result"] == result and json.loads(text)["pruned"] is True
    with pytest.raises(ControlError, match="older_than_days"):
        await client.prune(-1)


async def test_show_of_a_call_in_flight_prints_its_tracks(client, daemon, capsys, autojump_clock):
    async with trio.open_nursery() as n:
        n.start_soon(ask, client)
        while not daemon.lookup.calls():
            await trio.sleep(0.01)
        run_id = daemon.lookup.calls()[0]["run_id"]
        code, text = await ctl(daemon, capsys, "show", run_id)
        assert code == EXIT_OK and " is in flight: dial " in text and text.strip().endswith("hangup none")
        with pytest.raises(ControlError, match="still in flight"):
            await client.detail(run_id)


async def test_show_finds_a_call_by_its_request_id_as_calld_ctl_tells_the_operator(client, daemon, capsys, autojump_clock):
    result = await ask(client, request_id="look-me-up")
    code, out = await ctl(daemon, capsys, "show", "look-me-up")
    assert code == EXIT_OK
    assert out.startswith(f"call {result['call_control_id']}  (run {result['run_id']})")
    assert "status      answered" in out


async def test_the_log_line_for_a_finished_call_gives_its_reason(client, daemon, caplog, autojump_clock):
    import logging

    caplog.set_level(logging.INFO, logger="calld")
    busy = await ask(client, scenario="busy")
    answered = await ask(client, to="+15555550143")
    lines = [r.getMessage() for r in caplog.records]
    assert f"{busy['call_control_id']} finished: no_answer/busy via not_connected" in lines
    assert f"{answered['call_control_id']} finished: answered via tool" in lines


async def test_the_opt_out_log_line_starts_with_the_call_id(client, daemon, caplog, autojump_clock):
    import logging

    caplog.set_level(logging.INFO, logger="calld")
    out = await ask(client, to="+15555550144", scenario="opt_out")
    warned = [r.getMessage() for r in caplog.records if "asked not to be called again" in r.getMessage()]
    assert len(warned) == 1 and warned[0].startswith(f"{out['call_control_id']} +15555550144 asked not to be called again")
