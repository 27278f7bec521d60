"""The edges of a call, end to end through the stub world, on trio's autojump clock.

Each test names the behaviour it guards; each fails if that behaviour is removed.
"""

from __future__ import annotations

import hashlib
import json
import logging
import wave

import pytest
import trio

from calld.verify import VerifyInput, run_checks
from calld.ledger import Ledger
from tests.stubcall import stub_call, stub_plan, variant

GREETING = "Hello, Joe's Hardware, how can I help you?"


async def test_pickup_audio_is_held_then_flushed_in_order(autojump_clock, tmp_path):
    run = await stub_call(tmp_path, "early_greeting")
    started = run.events("live.started")[0]["seq"]
    before = run.inbound_chunks_before(started)
    held = [r["effect"]["chunk"] for r in run.effects("live.audio") if r["effect"]["held"]]
    assert len(before) > 100  # the business spoke for seconds before GPT-Live was ready
    assert held == before
    assert not [r for r in run.effects("live.audio") if r["seq"] < started]
    first_business = next(t for t in run.json("transcript.json")["turns"] if t["speaker"] == "business")
    assert first_business["text"] == GREETING
    assert run.report["counts"]["dropped_frames"] == 0
    # Live audio goes out as it arrives once the held audio has gone.
    live = run.chunks_to_live()
    assert live and live[0] == held[-1] + 1
    assert live == list(range(live[0], live[-1] + 1))  # every frame after, once, in order
    # On the wire too: GPT-Live heard the business's audio as it came (the held frames, then the
    # rest, none overtaking), which is the order audio/inbound.wav keeps.
    with wave.open(str(run.dir / "audio" / "inbound.wav")) as w:
        recorded = w.readframes(w.getnframes())
    heard = run.world.live_heard_bytes
    assert heard >= (len(held) + len(live)) * 640
    assert run.world.live_heard.hexdigest() == hashlib.sha256(recorded[:heard]).hexdigest()


async def test_audio_arriving_while_held_audio_is_still_going_out_waits_behind_it(autojump_clock, tmp_path, monkeypatch):
    """A slow GPT-Live socket for what the reducer sends: 30 ms a frame, so new frames arrive while
    held (and then queued) frames are still going out. They wait behind them (the steady path
    opens only once a step's sends are done, and never past a frame still queued): frames go out
    to GPT-Live in the order they came, whichever way each one went."""
    from calld.runtime.handle import CallHandle

    perform, forward = CallHandle._perform, CallHandle._forward_inbound
    sent: list[int] = []  # chunk numbers, in the order they were handed to the GPT-Live socket

    async def slow(self, effect):
        if effect.kind == "live.audio":
            await trio.sleep(0.03)
            sent.append(effect.chunk)
        await perform(self, effect)

    async def forwarded(self, frame):
        sent.append(frame.chunk)
        await forward(self, frame)

    monkeypatch.setattr(CallHandle, "_perform", slow)
    monkeypatch.setattr(CallHandle, "_forward_inbound", forwarded)
    run = await stub_call(tmp_path, "early_greeting")
    held = [r for r in run.effects("live.audio") if r["effect"]["held"]]
    assert len(held) > 100 and len(sent) > len(held) + 100
    assert sent == list(range(sent[0], sent[0] + len(sent)))


async def test_pickup_hold_keeps_the_newest_five_seconds(autojump_clock, tmp_path):
    long_greeting = " ".join(["Thanks"] * 10 + ["for", "calling", "Joe's", "Hardware", "this", "is", "Sam", "speaking"])
    scenario = variant("early_greeting", greeting=long_greeting, live_ready_after_s=8.0)
    run = await stub_call(tmp_path, scenario)
    started = run.events("live.started")[0]["seq"]
    before = run.inbound_chunks_before(started)
    held = [r["effect"]["chunk"] for r in run.effects("live.audio") if r["effect"]["held"]]
    assert len(held) == 250  # 5 s of 20 ms frames
    assert held == before[-250:]  # the oldest went first
    assert run.report["counts"]["dropped_frames"] == len(before) - 250
    heard = next(t for t in run.json("transcript.json")["turns"] if t["speaker"] == "business")["text"]
    assert heard.endswith("this is Sam speaking") and not heard.startswith("Thanks Thanks Thanks Thanks")


async def test_disclosure_comes_first_and_before_the_ask(autojump_clock, tmp_path):
    run = await stub_call(tmp_path, "hours")
    agent = run.json("transcript.json")["agent_text"]
    disclosure = agent.find("automated assistant calling on behalf of Nathan")
    ask = agent.find("What are your opening hours?")
    assert 0 <= disclosure < ask
    commentary = [m for m in run.world.live_received if m["type"] == "session.commentary.append"]
    assert "automated assistant calling on behalf of Nathan" in commentary[0]["content"]


async def test_goodbye_plays_whole_before_one_hangup(autojump_clock, tmp_path):
    # A closing line still being spoken when the farewell wait runs out: session.close must
    # flush it, and every word must play on the line before the single hangup.
    closing = "Thank you so much for your help today, that is everything I needed, have a lovely evening, goodbye!"
    run = await stub_call(tmp_path, variant("hours", closing_line=closing), farewell_max_s=1.5)
    words = closing.split()
    assert run.world.heard_on_line[-len(words):] == words
    assert len(run.effects("hangup")) == 1 and run.effects("hangup")[0]["effect"]["via"] == "tool"
    assert len(run.world.hangup_requests) == 1
    marks = run.effects("media.mark")
    assert len(marks) == 1
    close = run.effects("live.close")[0]["seq"]
    closed = run.events("live.closed")[0]["seq"]
    flushed = [r for r in run.effects("media.audio") if close < r["seq"] < closed]
    assert flushed, "no audio forwarded between session.close and session.closed"
    assert marks[0]["seq"] > max(r["seq"] for r in run.effects("media.audio"))
    echo = run.events("media.mark")[0]
    hangup = run.effects("hangup")[0]
    assert hangup["t_ms"] - echo["t_ms"] == 400
    assert run.report["hangup"]["confirmed"] is True
    assert run.result.status == "answered"


async def test_the_log_follows_every_move_of_the_call_even_one_an_audio_frame_made(autojump_clock, tmp_path, caplog):
    # An operator tailing the journal reads the hangup's whole way, with the call id on each line;
    # the goodbye's end is found in an audio delta, so that delta's line is there, where the
    # frames that move nothing are not.
    import logging
    import re

    with caplog.at_level(logging.INFO, logger="calld.call"):
        run = await stub_call(tmp_path, "hours")
    ccid = run.result.call_control_id
    lines = [r.getMessage() for r in caplog.records if r.name == "calld.call" and r.getMessage().startswith(f"{ccid} t=")]
    moves = [m for line in lines for m in re.findall(r"hangup:(\S+)", line)]
    assert moves == ["none->farewell", "farewell->draining", "draining->marked", "marked->trailing",
                     "trailing->requested", "requested->done"]
    draining = next(line for line in lines if "farewell->draining" in line)
    assert " live.output_audio " in draining
    assert not [line for line in lines if re.search(r" (media\.audio|live\.output_audio)\S* $", line)]  # no move, no line


async def test_no_echo_hangs_up_via_drain_timeout_and_fails_verify(autojump_clock, tmp_path):
    run = await stub_call(tmp_path, "no_echo")
    mark = run.effects("media.mark")[0]
    hangup = run.effects("hangup")
    assert [h["effect"]["via"] for h in hangup] == ["drain_timeout"]
    assert hangup[0]["t_ms"] - mark["t_ms"] == 10_000
    assert run.report["hangup"]["via"] == "drain_timeout"
    ledger = Ledger(run.settings.db_path)
    try:
        report = run_checks(VerifyInput(user="tester"), run.settings, ledger, run.dir)
    finally:
        ledger.close()
    failed = {c.name for c in report.checks if not c.passed}
    assert "clean_hangup" in failed and not report.passed


async def test_missing_call_hangup_finishes_unconfirmed(autojump_clock, tmp_path):
    run = await stub_call(tmp_path, "no_confirm")
    hangup = run.effects("hangup")[0]
    assert run.report["hangup"]["confirmed"] is False
    timeout = run.events("timer.hangup_confirm")[0]
    assert timeout["t_ms"] - hangup["t_ms"] == 5_000
    assert run.result.status == "answered"  # the verdict was in before; only the confirmation is missing


async def test_a_call_torn_down_while_its_hangup_awaits_confirmation_sends_no_second_hangup(autojump_clock, tmp_path, monkeypatch):
    """Exactly one hangup: the call is torn down (daemon shutdown, a second crash: CallHandle._abandon)
    after its hangup went to Telnyx and before call.hangup confirmed it. The teardown hangs up only a
    call no hangup was sent for; this one had its one."""
    from calld.calls import run_stub_call
    from calld.runtime.handle import CallHandle
    from calld.stub.scenario import SCENARIOS
    from calld.stub.world import StubWorld

    sent: list[str] = []
    hung_up = trio.Event()
    original = StubWorld._hangup

    def counting(self, ccid):
        sent.append(ccid)
        hung_up.set()
        return original(self, ccid)

    monkeypatch.setattr(StubWorld, "_hangup", counting)
    settings, plan = stub_plan(tmp_path)
    handles: list[CallHandle] = []
    with trio.fail_after(120):
        async with trio.open_nursery() as nursery:
            async def call() -> None:  # the scripted business never confirms the hangup (no call.hangup)
                await run_stub_call(plan, settings, SCENARIOS["no_confirm"], on_handle=handles.append)

            nursery.start_soon(call)
            await hung_up.wait()
            await trio.sleep(1.0)  # Telnyx has answered the hangup; its confirmation is 4 s from due
            (handle,) = handles
            assert handle.call.hangup.kind == "requested" and not handle.call.finished
            nursery.cancel_scope.cancel()  # torn down here
    assert handle.finished.is_set() and handle.result is not None
    assert sent == [handle.call.call_control_id]  # one hangup reached Telnyx, not two
    rows = [json.loads(line) for line in (handle.rundir.path / "events.jsonl").read_text().splitlines()]
    assert [r["effect"]["via"] for r in rows if r.get("effect", {}).get("kind") == "hangup"] == ["tool"]
    crashed = [r for r in rows if r.get("event", {}).get("kind") == "call.crashed"]
    assert len(crashed) == 1 and "requested" in crashed[0]["ignored"]  # the teardown changed nothing


async def test_far_party_hangup_keeps_a_recorded_verdict(autojump_clock, tmp_path):
    run = await stub_call(tmp_path, "far_party_after_answer")
    assert run.result.status == "answered" and run.result.verdict_source == "tool"
    assert run.report["hangup"]["via"] == "far_party"
    assert run.effects("hangup") == [] and run.world.hangup_requests == []


async def test_far_party_hangup_without_a_record_falls_back_to_the_transcript(autojump_clock, tmp_path):
    run = await stub_call(tmp_path, "far_party_unrecorded")
    assert run.result.status == "answered"
    assert run.result.verdict_source == "transcript"
    assert "9 AM to 5 PM" in run.result.answer_text
    assert run.report["hangup"]["via"] == "far_party"


async def test_far_party_hangup_mid_ask_is_not_an_answer(autojump_clock, tmp_path):
    run = await stub_call(tmp_path, "far_party_mid_ask")
    # The request was cut off, so this is not a refusal of it either.
    assert (run.result.status, run.result.reason) == ("no_answer", "hung_up_early")
    assert run.report["hangup"]["via"] == "far_party" and run.effects("hangup") == []


async def test_silence_steers_once_then_hangs_up_via_stall(autojump_clock, tmp_path):
    run = await stub_call(tmp_path, "stall")
    commentary = [m for m in run.world.live_received if m["type"] == "session.commentary.append"]
    assert len(commentary) == 2  # the opener, then one steer
    stalls = run.events("timer.stall")
    assert len(stalls) == 2 and stalls[1]["t_ms"] - stalls[0]["t_ms"] >= 20_000
    hangup = run.effects("hangup")
    assert [h["effect"]["via"] for h in hangup] == ["stall"]
    # The business heard the whole request and went quiet: no answer from it, not calld's failure.
    assert (run.result.status, run.result.reason) == ("no_answer", "went_silent")


@pytest.mark.parametrize(
    ("scenario", "ask", "item", "status", "needle"),
    [
        ("hours", "hours", None, "answered", "9 AM to 5 PM"),
        ("stock", "stock", "cast iron skillet", "answered", "three of those"),
        ("aisle", "aisle", "charcoal", "answered", "aisle 14"),
        ("decline", "hours", None, "declined", None),
        ("late_answer", "hours", None, "answered", "9 AM"),
        ("media_first", "hours", None, "answered", "9 AM"),
        ("duplicates", "hours", None, "answered", "9 AM"),
    ],
)
async def test_scripted_businesses(autojump_clock, tmp_path, scenario, ask, item, status, needle):
    run = await stub_call(tmp_path, scenario, ask=ask, item=item)
    assert run.result.status == status
    if needle:
        assert needle in run.result.answer_text
    else:
        assert run.result.answer_text is None
    assert len(run.effects("hangup")) == 1


async def test_duplicate_webhooks_change_nothing(autojump_clock, tmp_path):
    run = await stub_call(tmp_path, "duplicates")
    assert len(run.events("telnyx.call.answered")) == 1
    assert len(run.events("telnyx.call.hangup")) == 1
    assert run.report["hangup"]["via"] == "tool"


async def test_the_accepted_verdict_is_on_disk_before_anything_it_causes(autojump_clock, tmp_path, monkeypatch):
    # Recovery (calld.ops.recovery) finishes a call from task.json: a crash between the verdict's
    # effects (its tool output, the goodbye, the hangup) and that write would lose the answer.
    from calld.runtime.handle import CallHandle

    on_disk_when_performed: list[bool] = []
    perform_all = CallHandle._perform_all

    async def perform_all_after_the_verdict(self, effects, seq, t_ms):
        if self.call.task is not None and effects:
            on_disk_when_performed.append((self.rundir.path / "task.json").exists())
        return await perform_all(self, effects, seq, t_ms)

    monkeypatch.setattr(CallHandle, "_perform_all", perform_all_after_the_verdict)
    run = await stub_call(tmp_path, "hours")
    assert run.result.status == "answered"
    assert on_disk_when_performed and all(on_disk_when_performed)


async def test_the_reports_duration_is_the_calls_and_not_the_writing_of_its_last_files(autojump_clock, tmp_path):
    # Under calld serve the last files go to a worker thread, which may wait its turn for the disk.
    # That wait is not part of the call: duration_ms stops where the call did.
    async def slow_at_the_end(fn):
        if getattr(fn, "func", fn).__name__ in ("write_before_result", "write_result"):
            await trio.sleep(60)
        return fn()

    run = await stub_call(tmp_path, "hours", disk=slow_at_the_end)
    assert run.result.status == "answered"
    last_row_ms = max(r["t_ms"] for r in run.rows())
    assert last_row_ms <= run.report["duration_ms"] < last_row_ms + 1_000


async def test_a_verdict_accepted_in_a_step_with_no_effects_is_still_written_at_once(autojump_clock, tmp_path, monkeypatch):
    # Today's reducer always answers an accepted verdict with its tool output; the handle must not
    # lean on that: a step that accepts a verdict writes task.json whatever effects it carries.
    import attrs

    from calld.runtime import handle as handle_module

    real_step = handle_module.reduce_step
    accepted_by: list[object] = []
    on_disk_at_the_next_event: list[bool] = []
    handles: list[object] = []
    real_init = handle_module.CallHandle.__init__

    def init(self, *a, **k):
        real_init(self, *a, **k)
        handles.append(self)

    def step_with_no_effects_on_accepting(call, event):
        if accepted_by and not on_disk_at_the_next_event:
            on_disk_at_the_next_event.append((handles[0].rundir.path / "task.json").exists())
        step = real_step(call, event)
        if call.task is None and step.call.task is not None:
            accepted_by.append(event)
            return attrs.evolve(step, effects=())
        return step

    monkeypatch.setattr(handle_module.CallHandle, "__init__", init)
    monkeypatch.setattr(handle_module, "reduce_step", step_with_no_effects_on_accepting)
    await stub_call(tmp_path, "hours")
    assert len(accepted_by) == 1
    assert on_disk_at_the_next_event == [True]


_UNREADABLE = ("{{{", "[1, 2, 3]", '{"type": "session.output_audio.delta", "delta": "!!!notbase64"}',
               '{"type": "session.input_transcript.delta"}')


async def test_an_unreadable_gpt_live_event_is_dropped_and_the_call_goes_on(autojump_clock, tmp_path, monkeypatch, caplog):
    """Before each of the agent's lines (mid-call, where the steady downlink plays deltas without a
    reducer step), events calld cannot read: each is dropped with a warning, and the call goes on."""
    from calld.stub.world import FakeLive

    heard = FakeLive._heard

    async def noisy(self, line, index, word):
        if index == 0:  # before each line's first word: events calld cannot read
            for text in _UNREADABLE:
                await self.peer.send(text)
        await heard(self, line, index, word)

    monkeypatch.setattr(FakeLive, "_heard", noisy)
    with caplog.at_level("WARNING", logger="calld.call"):
        run = await stub_call(tmp_path, "hours")
    assert run.result.status == "answered" and "9 AM to 5 PM" in run.result.answer_text
    dropped = [r.getMessage() for r in caplog.records if "GPT-Live event dropped" in r.getMessage()]
    lines = len(dropped) // len(_UNREADABLE)
    assert lines >= 2 and len(dropped) == lines * len(_UNREADABLE)
    assert sum("delta is not base64" in m for m in dropped) == lines


async def test_a_session_that_sends_little_but_unreadable_events_is_the_model_s_failure(autojump_clock, tmp_path,
                                                                                      monkeypatch):
    from calld.runtime.handle import LIVE_MALFORMED_MAX
    from calld.stub.world import FakeLive

    heard = FakeLive._heard

    async def broken(self, line, index, word):
        for _ in range(LIVE_MALFORMED_MAX + 1):
            await self.peer.send("{{{")
        await heard(self, line, index, word)

    monkeypatch.setattr(FakeLive, "_heard", broken)
    run = await stub_call(tmp_path, "hours")
    # Not calld's own failure (internal): the model's side broke its protocol.
    assert (run.result.status, run.result.reason) == ("failed", "model_lost")
    assert "unreadable events" in run.result.detail


_UNREADABLE_MEDIA = ('{"event": "media", "media": {"track": "inbound", "chunk": "5", "payload": "!!!notbase64"}}',
                     '{"event": "media", "media": {"track": "inbound", "chunk": [], "payload": "AAAA"}}', "{{{")


async def test_an_unreadable_media_frame_mid_call_is_dropped_and_the_call_goes_on(autojump_clock, tmp_path, monkeypatch, caplog):
    """Telnyx frames calld cannot read, while the steady uplink forwards every frame without a
    reducer step: each is dropped with a warning, and the frames around them still reach GPT-Live."""
    from calld.stub.world import StubWorld

    stream = StubWorld._stream_media

    class Noisy:
        def __init__(self, peer):
            self.peer, self.sent = peer, 0

        def __getattr__(self, name):
            return getattr(self.peer, name)

        async def send(self, text):
            self.sent += 1
            if self.sent % 100 == 0:  # every two seconds of the line, from the first
                for bad in _UNREADABLE_MEDIA:
                    await self.peer.send(bad)
            await self.peer.send(text)

    async def noisy(self, peer):
        await stream(self, Noisy(peer))

    monkeypatch.setattr(StubWorld, "_stream_media", noisy)
    with caplog.at_level("WARNING", logger="calld.call"):
        run = await stub_call(tmp_path, "hours")
    assert run.result.status == "answered" and "9 AM to 5 PM" in run.result.answer_text
    dropped = [r.getMessage() for r in caplog.records if "bad media frame dropped" in r.getMessage()]
    assert len(dropped) >= 2 * len(_UNREADABLE_MEDIA) and any("not base64" in m for m in dropped)
    sent = run.chunks_to_live()
    assert sent == list(range(sent[0], sent[-1] + 1))  # every good frame went on, in order, none twice


async def test_an_echo_of_our_mark_from_another_stream_is_ignored_and_the_goodbye_plays_whole(autojump_clock, tmp_path,
                                                                                              monkeypatch, caplog):
    from calld.adapters.fixtures import load_fixture
    from calld.stub.world import StubWorld

    read_outbound = StubWorld._read_outbound

    async def echo_on_another_stream(self, peer, stream_id):  # our mark's name, echoed at once on another stream
        class Tap:
            async def receive(tap):
                text = await peer.receive()
                if (msg := json.loads(text)).get("event") == "mark":
                    echo = load_fixture("telnyx", "media_mark")
                    echo["stream_id"], echo["mark"]["name"] = "another-stream", msg["mark"]["name"]
                    await peer.send(json.dumps(echo))
                return text
        await read_outbound(self, Tap(), stream_id)

    monkeypatch.setattr(StubWorld, "_read_outbound", echo_on_another_stream)
    closing = "Thank you so much for your help today, that is everything I needed, have a lovely evening, goodbye!"
    with caplog.at_level(logging.INFO, logger="calld"):
        run = await stub_call(tmp_path, variant("hours", closing_line=closing), farewell_max_s=1.5)
    assert run.world.heard_on_line[-len(closing.split()):] == closing.split()  # the closing line played whole
    ignored = [r for r in run.rows() if r.get("event", {}).get("kind") == "media.mark" and "ignored" in r]
    assert ignored and "another-stream, not the started stream" in ignored[0]["ignored"]
    assert run.report["hangup"]["via"] == "tool"  # the echo of the started stream, not a drain timeout
    assert len([r for r in caplog.records if "another-stream" in r.getMessage()]) == 1


async def test_media_frames_of_another_stream_are_ignored_never_sent_to_gpt_live_nor_recorded(autojump_clock, tmp_path,
                                                                                              monkeypatch, caplog):
    from calld.stub.world import StubWorld

    line_clock = StubWorld._line_clock
    foreign = 300  # 6 s of them from the start: the pickup audio held for GPT-Live, then the conversation

    async def with_another_stream(self, peer, stream_id):
        class Tap:
            sent = 0

            async def send(tap, text):
                await peer.send(text)
                msg = json.loads(text)
                if msg.get("event") == "media" and tap.sent < foreign:
                    tap.sent += 1
                    msg["stream_id"] = "another-stream"
                    await peer.send(json.dumps(msg))

            def __getattr__(tap, name):
                return getattr(peer, name)
        await line_clock(self, Tap(), stream_id)

    monkeypatch.setattr(StubWorld, "_line_clock", with_another_stream)
    with caplog.at_level(logging.INFO, logger="calld"):
        run = await stub_call(tmp_path, "hours")
    assert len([r for r in caplog.records if "another-stream" in r.getMessage()]) == 1  # 300 journaled, one logged
    assert run.result.status == "answered"
    ignored = [r for r in run.rows() if r.get("event", {}).get("kind") == "media.audio" and "ignored" in r]
    assert len(ignored) == foreign and all("another-stream, not the started stream" in r["ignored"] for r in ignored)
    counts = run.report["counts"]
    with wave.open(str(run.dir / "audio" / "inbound.wav")) as wav:
        assert wav.getnframes() * 2 == counts["audio_in_bytes"]  # the started stream's frames only
    assert run.world.live_heard_bytes == counts["audio_to_live"] * 640  # and only those went to GPT-Live
