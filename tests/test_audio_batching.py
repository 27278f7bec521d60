"""Audio rows and WAV PCM are batched (calld.runtime.rundir): nothing is lost, nothing reordered."""

from __future__ import annotations

import json
import wave

from calld.domain.ids import RunId
from calld.runtime.handle import CallHandle
from calld.runtime.rundir import AUDIO_ROWS_BATCH, WAV_BATCH_BYTES, RunDir, pretty_json
from tests.stubcall import stub_call


def _lines(rd: RunDir) -> list[str]:
    return (rd.path / "events.jsonl").read_text().splitlines()


def _row(n: int, kind: str = "media.audio") -> str:
    return json.dumps({"seq": n, "event": {"kind": kind}})


def test_audio_rows_are_on_disk_in_order_before_the_next_row_that_is_not_audio(tmp_path):
    rd = RunDir(tmp_path, RunId.new(), [])
    for n in (1, 2, 3):
        rd.journal_audio(_row(n))
    rd.journal(_row(4, "live.input_transcript"))
    rd.journal_audio(_row(5))
    rd.journal(_row(6, "telnyx.call.hangup"))
    assert _lines(rd) == [_row(n, k) for n, k in ((1, "media.audio"), (2, "media.audio"), (3, "media.audio"),
                                                    (4, "live.input_transcript"), (5, "media.audio"),
                                                    (6, "telnyx.call.hangup"))]
    rd.close()


def test_a_long_stretch_of_audio_reaches_the_disk_without_waiting_for_another_row(tmp_path):
    """On hold for minutes, no other row comes: each batch is written when it is full."""
    rd = RunDir(tmp_path, RunId.new(), [])
    for n in range(AUDIO_ROWS_BATCH):
        rd.journal_audio(_row(n))
    assert _lines(rd) == [_row(n) for n in range(AUDIO_ROWS_BATCH)]
    for _ in range(WAV_BATCH_BYTES // 640 + 1):
        rd.audio("inbound.wav", b"\x01\x00" * 320)
    written = (rd.path / "audio" / "inbound.wav").stat().st_size - 44
    assert written >= WAV_BATCH_BYTES and written % 640 == 0
    rd.close()


def test_wav_pcm_waits_for_its_batch_not_for_the_journal(tmp_path):
    """A row that is not audio (a word, a webhook) writes the rows before it, not the PCM: the WAVs
    are written a batch at a time, one write for about two seconds of a direction."""
    rd = RunDir(tmp_path, RunId.new(), [])
    wav = rd.path / "audio" / "inbound.wav"
    rd.audio("inbound.wav", b"\x01\x00" * 320)
    rd.journal_audio(_row(1))
    rd.journal(_row(2, "live.input_transcript"))
    assert _lines(rd) == [_row(1), _row(2, "live.input_transcript")]
    assert not wav.exists() or wav.stat().st_size <= 44  # nothing of the PCM yet
    rd.audio("inbound.wav", b"\x02\x00" * (WAV_BATCH_BYTES // 2))
    assert wav.stat().st_size - 44 == 640 + WAV_BATCH_BYTES  # the batch, whole and in order, in one go
    rd.audio("inbound.wav", b"\x03\x00" * 320)  # the next batch starts empty: this waits for its own
    assert wav.stat().st_size - 44 == 640 + WAV_BATCH_BYTES
    rd.close()
    with wave.open(str(wav)) as w:
        assert w.readframes(w.getnframes()) == b"\x01\x00" * 320 + b"\x02\x00" * (WAV_BATCH_BYTES // 2) + b"\x03\x00" * 320


def test_close_writes_every_pending_row_and_sample(tmp_path):
    rd = RunDir(tmp_path, RunId.new(), [])
    rd.journal(_row(0, "begin"))
    for n in (1, 2):
        rd.journal_audio(_row(n))
        rd.audio("inbound.wav", bytes([n]) * 640)
        rd.audio("outbound.wav", bytes([n]) * 320)
    rd.close()
    assert _lines(rd) == [_row(0, "begin"), _row(1), _row(2)]
    for name, size in (("inbound.wav", 640), ("outbound.wav", 320)):
        with wave.open(str(rd.path / "audio" / name)) as w:
            assert w.readframes(w.getnframes()) == bytes([1]) * size + bytes([2]) * size


def test_a_failed_audio_write_stops_the_recording_and_nothing_else(tmp_path, monkeypatch):
    """ENOSPC on a WAV batch: audio_error, not write_error (the call goes on); later PCM is dropped, not
    held in memory; the journal goes on; at close the WAVs are valid over what was written before."""
    import errno

    from calld.runtime import rundir as rundir_module

    real_open, full = rundir_module.open_private, [False]

    class Filling:
        def __init__(self, inner) -> None:
            self._inner = inner

        def write(self, data):
            if full[0]:
                raise OSError(errno.ENOSPC, "No space left on device")
            return self._inner.write(data)

        def __getattr__(self, name):
            return getattr(self._inner, name)

    monkeypatch.setattr(rundir_module, "open_private",
                        lambda path, *a, **k: Filling(real_open(path, *a, **k)) if path.parent.name == "audio" else real_open(path, *a, **k))
    rd = RunDir(tmp_path, RunId.new(), [])
    rd.audio("inbound.wav", b"\x01\x00" * (WAV_BATCH_BYTES // 2))  # one batch, written
    assert rd.audio_gap() is None
    full[0] = True
    rd.audio("inbound.wav", b"\x02\x00" * (WAV_BATCH_BYTES // 2))  # the next one fails
    assert rd.audio_error is not None and rd.write_error is None
    for _ in range(10):
        rd.audio("inbound.wav", b"\x03\x00" * (WAV_BATCH_BYTES // 2))
        rd.audio("outbound.wav", b"\x03\x00" * 320)
    assert not any(rd._pcm.values())  # noqa: SLF001 - dropped, not gathered for a write that cannot come
    rd.journal(_row(1, "live.input_transcript"))
    full[0] = False  # room again (a header's rewrite needs none): the recording has stopped all the same
    rd.close()
    assert rd.write_error is None and _lines(rd) == [_row(1, "live.input_transcript")]
    with wave.open(str(rd.path / "audio" / "inbound.wav")) as w:
        assert w.readframes(w.getnframes()) == b"\x01\x00" * (WAV_BATCH_BYTES // 2)
    with wave.open(str(rd.path / "audio" / "outbound.wav")) as w:  # never begun: empty, and valid
        assert w.getnframes() == 0
    gap = rd.audio_gap()
    assert gap is not None and "writing audio/inbound.wav failed" in gap and "No space left" in gap
    assert f"audio/inbound.wav at most {WAV_BATCH_BYTES / 2 / 16000:.1f} s, audio/outbound.wav at most 0.0 s" in gap


async def test_a_call_that_crashes_mid_conversation_keeps_every_frame_it_counted(autojump_clock, tmp_path, monkeypatch):
    """The counts in the report add up to the rows in events.jsonl (frame by frame and forwarded
    stretches) and the samples in both WAVs."""
    original = CallHandle._forward_output
    played: list[int] = []

    async def forward(self, pcm):
        await original(self, pcm)
        played.append(len(pcm))
        if len(played) == 7:  # played, then a fault: mid-speech, with a stretch, audio rows and PCM pending
            raise RuntimeError("injected fault")

    monkeypatch.setattr(CallHandle, "_forward_output", forward)
    run = await stub_call(tmp_path, "hours")
    assert run.result.status == "failed"  # the GPT-Live task died with the fault: the model is lost
    counts = run.report["counts"]
    inbound = run.events("media.audio")
    inbound_forwarded = run.events("media.audio_forwarded")
    inbound_recorded = run.events("media.audio_recorded")
    output_forwarded = run.events("live.output_audio_forwarded")
    assert inbound_forwarded and output_forwarded  # the steady path carried audio both ways
    held = [f for r in run.events("media.audio_held") for f in r["event"]["frames"]]
    assert held  # the pickup audio came as held stretches
    frames_in = len(inbound) + len(held) + sum(r["event"]["frames"] for r in (*inbound_forwarded, *inbound_recorded))
    assert counts["audio_in"] == frames_in > 50
    assert counts["audio_to_live"] == len(run.effects("live.audio")) + sum(r["event"]["frames"] for r in inbound_forwarded)
    assert counts["audio_to_media"] == len(run.effects("media.audio")) + sum(r["event"]["deltas"] for r in output_forwarded)
    assert sum(r["event"]["deltas"] for r in output_forwarded) == len(played)
    with wave.open(str(run.dir / "audio" / "inbound.wav")) as w:
        in_bytes = (sum(r["event"]["pcm"] for r in inbound) + sum(f["pcm"] for f in held)
                    + sum(r["event"]["pcm_bytes"] for r in (*inbound_forwarded, *inbound_recorded)))
        assert w.getnframes() * 2 == counts["audio_in_bytes"] == in_bytes
    with wave.open(str(run.dir / "audio" / "outbound.wav")) as w:
        out_bytes = sum(r["effect"]["pcm"] for r in run.effects("media.audio")) + sum(r["event"]["pcm_bytes"] for r in output_forwarded)
        assert w.getnframes() * 2 == out_bytes >= sum(played)
    # What the reducer turned away (audio still arriving once the call is torn down) is counted too.
    assert run.report["ignored_events"] == len([r for r in run.rows() if "ignored" in r]) > 0
    # Every audio row keeps its place: seq runs without a gap from the first row to the last.
    assert [r["seq"] for r in run.rows()] == list(range(1, len(run.rows()) + 1))


async def test_once_gpt_live_is_gone_inbound_audio_is_recorded_in_stretches_and_every_frame_counted(autojump_clock, tmp_path):
    """The wind-down (GPT-Live closed, the mark, the trail, the hangup) is a second or two of inbound
    audio a call, all at about the same moment when calls end together: the media task records it
    itself and tells the reducer a stretch at a time, and the artifacts still add up."""
    run = await stub_call(tmp_path, "hours")
    assert run.result.status == "answered"
    rows = run.rows()
    closed = next(r["seq"] for r in rows if r.get("changed", {}).get("live", [None, None])[1] == "closing")
    hung_up = next(r["seq"] for r in rows if r.get("event", {}).get("kind") == "telnyx.call.hangup")
    recorded = run.events("media.audio_recorded")
    assert recorded and all(closed < r["seq"] < hung_up for r in recorded)
    by_frame = [r for r in run.events("media.audio") if closed < r["seq"] < hung_up]
    assert sum(r["event"]["frames"] for r in recorded) > 10 * max(1, len(by_frame))  # nearly all of it in stretches
    chunks = [c for r in recorded for c in range(r["event"]["first_chunk"], r["event"]["last_chunk"] + 1)]
    assert chunks == sorted(chunks) and len(chunks) == sum(r["event"]["frames"] for r in recorded)  # none lost, none twice
    counts = run.report["counts"]
    inbound = run.events("media.audio")
    held = [f for r in run.events("media.audio_held") for f in r["event"]["frames"]]
    stretches = (*run.events("media.audio_forwarded"), *recorded)
    assert counts["audio_in"] == len(inbound) + len(held) + sum(r["event"]["frames"] for r in stretches)
    with wave.open(str(run.dir / "audio" / "inbound.wav")) as w:
        assert w.getnframes() * 2 == counts["audio_in_bytes"] == (
            sum(r["event"]["pcm"] for r in inbound) + sum(f["pcm"] for f in held) + sum(r["event"]["pcm_bytes"] for r in stretches))
    assert not [r for r in run.effects("live.audio") if r["seq"] > closed]  # nothing went to a closing GPT-Live


async def test_the_pickup_audio_is_held_in_stretches_and_flushed_whole_and_in_order(autojump_clock, tmp_path):
    """Before GPT-Live is ready the business's first words are held (the reducer keeps them): the
    media task records them and tells them a stretch at a time, and session.started sends every one."""
    run = await stub_call(tmp_path, "hours")
    rows = run.rows()
    started = next(r["seq"] for r in rows if r.get("event", {}).get("kind") == "live.started")
    held_rows = run.events("media.audio_held")
    assert held_rows and all(r["seq"] < started for r in held_rows)
    held = [f["chunk"] for r in held_rows for f in r["event"]["frames"]]
    by_frame = [r["event"]["chunk"] for r in run.events("media.audio") if r["seq"] < started]
    assert len(held) > 10 * max(1, len(by_frame))  # nearly all of it in stretches
    first = next(r for r in rows if r.get("event", {}).get("kind") in ("media.audio", "media.audio_held"))
    assert first["event"]["kind"] == "media.audio"  # the first frame alone: its time starts the audio's clock
    arrived = run.inbound_chunks_before(started)
    flushed = [r["effect"]["chunk"] for r in run.effects("live.audio") if r["effect"]["held"]]
    assert flushed == arrived == sorted(arrived) and run.report["counts"]["held_frames"] == len(arrived)
    assert all(r["seq"] > started for r in run.effects("live.audio"))  # nothing went out before the session


def test_artifact_json_is_the_text_the_standard_library_would_write(tmp_path):
    import dataclasses
    import datetime as dt

    @dataclasses.dataclass
    class Odd:
        x: int

    report = {
        "status": "answered", "answer_text": "Nous ouvrons à 9 h — “mardi”", "evidence": [{"quote": "9 to 5", "start_ms": 1200}],
        "empty": {}, "none": [], "nested": {"a": [1, 2.5, None, True, False, (3, 4)], "b": {"c": -0.0}},
        "started_at": dt.datetime(2026, 11, 30, 21, 0, tzinfo=dt.UTC), "day": dt.date(2026, 11, 30),
        "odd": Odd(1), "keys": {7: "seven"}, "big": 2**70,
    }
    rd = RunDir(tmp_path, "run_json", secrets=[])
    rd.write_json("report.json", report)
    rd.close()
    assert (rd.path / "report.json").read_text(encoding="utf-8") == json.dumps(report, indent=2, ensure_ascii=False, default=str) + "\n"
    del report["big"]  # orjson's own path, not the fallback
    assert pretty_json(report) == json.dumps(report, indent=2, ensure_ascii=False, default=str)
