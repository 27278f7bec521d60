"""The steady audio path (calld.core.audio_path): where it opens, and that audio told to the reducer
as forwarded stretches leaves the call exactly as the same audio frame by frame would."""

from __future__ import annotations

import itertools

import attrs
import pytest

from calld.core import events as ev
from calld.core.audio_path import AudioPath, audio_path
from calld.core.effects import SendLiveAudio, SendMediaAudio
from calld.core.line_audio import HOLD_MUSIC_FRAMES
from calld.core.plan import Timings
from calld.core.situations import loud
from calld.core.state import (
    Call, ConvTalking, HangupDone, HangupNone, Hold, LiveActive, LiveClosing, LiveDone, LiveFailed, LiveIdle,
    LiveStarting, MediaStreaming,
)
from tests.core_helpers import ANSWER, ANSWERED, DONE, DRAINING, FAREWELL, HEARD, LIVE, MARKED, REQUESTED, STARTING, TRAILING, drive, new_call

QUIET = bytes(640)
MUSIC = (b"\x00\x40" + b"\x00\xc0") * 160  # loud every sample: tones with no words


@pytest.mark.parametrize(
    ("script", "path"),
    [
        (ANSWERED, AudioPath()),  # no media yet: a frame now is the reducer's to turn away
        (STARTING, AudioPath()),  # the first frame is stepped alone: its time starts the audio's clock
        ((*STARTING, ev.MediaAudio(bytes(640), 1)), AudioPath(inbound="held")),  # then held, a stretch at a time
        (LIVE, AudioPath(inbound="forwarded", uplink_loudness=True, downlink=True)),
        (HEARD, AudioPath(inbound="forwarded", uplink_loudness=True, downlink=True)),
        (FAREWELL, AudioPath(inbound="forwarded", uplink_loudness=False, downlink=False)),  # the goodbye is judged delta by delta
        # GPT-Live closing or closed: nothing to forward to, so inbound frames are only recorded
        (DRAINING, AudioPath(inbound="recorded")),
        (MARKED, AudioPath(inbound="recorded")),
        (TRAILING, AudioPath(inbound="recorded")),
        (REQUESTED, AudioPath(inbound="recorded")),
        (DONE, AudioPath()),  # hung up: media is the reducer's to ignore, frame by frame
    ],
    ids=["answered", "starting", "pickup", "live", "talking", "farewell", "draining", "marked", "trailing", "requested", "done"],
)
def test_the_path_opens_only_where_the_reducer_decides_nothing_per_frame(script, path) -> None:
    assert audio_path(drive(script).call) == path


def frames(pattern: list[tuple[bytes, int]], first_chunk: int = 1) -> list[ev.MediaAudio]:
    out: list[ev.MediaAudio] = []
    for pcm, n in pattern:
        for _ in range(n):
            out.append(ev.MediaAudio(pcm, first_chunk + len(out)))
    return out


def stretches(audio: list[ev.MediaAudio], size: int, *, watching: bool = True) -> list[ev.InboundForwarded]:
    out = []
    for i in range(0, len(audio), size):
        part = audio[i:i + size]
        out.append(ev.InboundForwarded(frames=len(part), pcm_bytes=sum(len(f.pcm) for f in part),
                                       first_chunk=part[0].chunk, last_chunk=part[-1].chunk,
                                       loud=tuple(loud(f.pcm) for f in part) if watching else ()))
    return out


BACK = ev.InputTranscript("Thanks for holding, are you still there?")


@pytest.mark.parametrize("size", [1, 7, 25, 400])
def test_forwarded_stretches_leave_the_call_as_frame_by_frame_audio_would(size: int) -> None:
    # Quiet, then music long enough to be a hold, quiet on hold, the business back, more music.
    before = frames([(QUIET, 100), (MUSIC, HOLD_MUSIC_FRAMES + 30), (QUIET, 40)])
    after = frames([(MUSIC, 60), (QUIET, 5)], first_chunk=len(before) + 1)

    start = new_call()
    by_frame = drive(HEARD, call=start)
    by_frame.feed(*before, BACK, *after)
    forwarded = drive(HEARD, call=start)
    # The runtime tells a stretch before the next event, so a stretch never spans the transcript.
    forwarded.feed(*stretches(before, size), BACK)
    forwarded.feed(*stretches(after, size, watching=audio_path(forwarded.call).uplink_loudness))

    assert by_frame.call.holds and by_frame.call.holds[0].cue == "hold music"
    assert forwarded.call == by_frame.call  # counters, the hold and its quiet, the sound run: all of it
    assert forwarded.effects == [e for e in by_frame.effects if not isinstance(e, SendLiveAudio)]
    assert not forwarded.of(SendLiveAudio)  # forwarded audio is never sent again


def test_forwarded_deltas_count_as_played_deltas() -> None:
    deltas = [ev.OutputAudio(bytes([0x10]) * 3200) for _ in range(12)] + [ev.OutputAudio(bytes(1600))] * 3
    start = new_call()
    by_delta = drive(HEARD, call=start)
    by_delta.feed(*deltas)
    forwarded = drive(HEARD, call=start)
    forwarded.feed(ev.OutputForwarded(deltas=10, pcm_bytes=32000), ev.OutputForwarded(deltas=5, pcm_bytes=6400 + 4800))
    assert forwarded.call == by_delta.call
    assert len(by_delta.of(SendMediaAudio)) == 15
    assert not [e for _, step in forwarded.steps[-2:] for e in step.effects]  # played already: nothing to send


def test_a_stretch_counts_what_was_forwarded_whatever_came_since() -> None:
    run = drive(HEARD)
    run.feed(*FAREWELL[len(HEARD):])  # the verdict: no hold watch now, the uplink still open
    assert not audio_path(run.call).uplink_loudness
    counts = run.call.counters
    run.feed(*stretches(frames([(MUSIC, 300)]), 25, watching=False))
    assert run.call.counters.audio_in == counts.audio_in + 300 == run.call.counters.audio_to_live - counts.audio_to_live + counts.audio_in
    assert not run.call.holds  # music after the verdict is no hold


@pytest.mark.parametrize("script", [DRAINING, MARKED, TRAILING, REQUESTED], ids=["draining", "marked", "trailing", "requested"])
def test_recorded_stretches_leave_the_call_as_frame_by_frame_audio_would(script) -> None:
    audio = frames([(MUSIC, 30), (QUIET, 23)], first_chunk=900)
    start = new_call()
    by_frame = drive(script, call=start)
    by_frame.feed(*audio)
    recorded = drive(script, call=start)
    recorded.feed(*(ev.InboundRecorded(frames=len(part), pcm_bytes=sum(len(f.pcm) for f in part),
                                       first_chunk=part[0].chunk, last_chunk=part[-1].chunk)
                    for part in (audio[:25], audio[25:50], audio[50:])))
    assert recorded.call.counters.audio_in - drive(script, call=start).call.counters.audio_in == 53
    assert recorded.call == by_frame.call
    assert by_frame.effects == recorded.effects
    assert not [e for _, step in recorded.steps[-3:] for e in step.effects]  # nothing is sent anywhere


@pytest.mark.parametrize("size", [1, 7, 25])
def test_held_stretches_leave_the_call_as_frame_by_frame_audio_would(size: int) -> None:
    """More than the pickup cap arrives before GPT-Live is ready: the oldest go, the rest are sent
    whole and in order when the session starts, whichever way they were told."""
    cap_frames = int(Timings().pickup_hold_s * 50)
    audio = frames([(MUSIC, cap_frames // 2), (QUIET, cap_frames)], first_chunk=1)
    start = new_call()
    by_frame = drive(STARTING, call=start)
    by_frame.feed(*audio, ev.LiveStarted("sess_1"))
    held = drive(STARTING, call=start)
    held.feed(audio[0], *(ev.InboundHeld(tuple(audio[i:i + size])) for i in range(1, len(audio), size)), ev.LiveStarted("sess_1"))
    assert by_frame.call.counters.dropped_frames == cap_frames // 2 > 0
    assert held.call == by_frame.call
    assert held.effects == by_frame.effects
    sent = [e.chunk for e in held.of(SendLiveAudio)]
    assert sent == [f.chunk for f in audio[cap_frames // 2:]]  # the newest, whole and in order


def test_a_held_stretch_outside_the_pickup_is_turned_away() -> None:
    for script in (ANSWERED, LIVE, DONE):
        run = drive(script)
        before = run.call
        step = run.step(ev.InboundHeld(tuple(frames([(MUSIC, 3)]))), strict=False)
        assert step.call == before and step.ignored and not step.effects


def test_inbound_audio_goes_one_way_at_a_time() -> None:
    # One field names the way, so "forwarded and recorded" cannot be said; a way it does not know is refused.
    for way in ("forwarded+recorded", "uplink", ""):
        with pytest.raises(ValueError, match="inbound"):
            AudioPath(inbound=way)  # type: ignore[arg-type]
    assert {audio_path(drive(script).call).inbound for script in (STARTING, LIVE, DRAINING)} == {"stepped", "forwarded", "recorded"}


def test_the_narrowed_path_allows_only_what_both_allow() -> None:
    talking = audio_path(drive(HEARD).call)
    done = audio_path(drive(DONE).call)
    assert talking.narrowed(done) == AudioPath(inbound="stepped", uplink_loudness=True, downlink=False)
    assert done.narrowed(talking).inbound == "stepped"
    closing = audio_path(drive(MARKED).call)
    assert closing.narrowed(done) == AudioPath() and closing.narrowed(closing) == closing
    assert talking.narrowed(closing) == AudioPath(uplink_loudness=True)
    assert ANSWER in HEARD


# -- the runtime's side: one writer on the media socket ----------------------------------------------


async def test_forwarded_audio_and_the_reducers_sends_never_split_each_other_on_the_media_socket(autojump_clock, tmp_path):
    import trio
    import trio.testing

    from calld.domain.ids import RunId
    from calld.runtime.handle import CallHandle, CallPorts
    from calld.runtime.rundir import RunDir
    from tests.core_helpers import make_plan

    class SlowSocket:  # a media socket whose every send takes 10 ms
        def __init__(self) -> None:
            self.sent: list[str] = []

        async def send(self, text: str) -> None:
            await trio.sleep(0.01)
            self.sent.append(text)

    ports = CallPorts(telnyx=None, connect_live=None, public_media_url="wss://calld.test/media", webhook_url=None)  # type: ignore[arg-type]
    handle = CallHandle(make_plan(), ports, RunDir(tmp_path, RunId.new(), []))
    socket = handle._media_socket = SlowSocket()  # type: ignore[assignment]  # noqa: SLF001
    encoded: list[str] = []

    def encoder(name: str, n: int):
        def encode() -> list[str]:
            encoded.append(name)  # encoding happens in turn too: the encoder's order is the line's
            return [f"{name}-{i}" for i in range(n)]
        return encode

    try:
        async with trio.open_nursery() as nursery:
            nursery.start_soon(handle._send_media, encoder("delta", 5))  # noqa: SLF001
            await trio.sleep(0.015)  # the delta is mid-send
            nursery.start_soon(handle._send_media, encoder("mark", 2))  # noqa: SLF001
            await trio.testing.wait_all_tasks_blocked()  # the mark waits first (trio runs a batch in any order)
            nursery.start_soon(handle._send_media, encoder("more", 2))  # noqa: SLF001
    finally:
        handle.rundir.close()
    assert socket.sent == [*(f"delta-{i}" for i in range(5)), "mark-0", "mark-1", "more-0", "more-1"]
    assert encoded == ["delta", "mark", "more"]


@pytest.mark.parametrize("kind", ["inbound", "output"])
async def test_while_audio_of_a_kind_waits_for_the_reducer_the_path_forwards_none_of_it(kind: str, tmp_path) -> None:
    from calld.domain.ids import RunId
    from calld.runtime.handle import CallHandle, CallPorts
    from calld.runtime.rundir import RunDir
    from tests.core_helpers import make_plan

    ports = CallPorts(telnyx=None, connect_live=None, public_media_url="wss://calld.test/media", webhook_url=None)  # type: ignore[arg-type]
    handle = CallHandle(make_plan(), ports, RunDir(tmp_path, RunId.new(), []))
    handle._path = AudioPath(inbound="forwarded", downlink=True)  # noqa: SLF001
    audio = ev.MediaAudio(QUIET, 1) if kind == "inbound" else ev.OutputAudio(QUIET)
    try:
        assert await handle._took_steady(audio)  # nothing waiting: forwarded  # noqa: SLF001
        handle._inbound_queued = handle._output_queued = 1  # one of each waits in the channel  # noqa: SLF001
        assert not await handle._took_steady(audio)  # so this one queues behind it  # noqa: SLF001
        assert (handle._inbound_queued, handle._output_queued) == ((2, 1) if kind == "inbound" else (1, 2))  # noqa: SLF001
        told = handle._take_stretches()  # noqa: SLF001
        assert [type(e) for e in told] == [ev.InboundForwarded if kind == "inbound" else ev.OutputForwarded]
    finally:
        handle.rundir.close()


@pytest.mark.parametrize("kind", ["inbound", "output"])
async def test_the_transport_tasks_quick_reads_forward_nothing_of_a_kind_that_waits_for_the_reducer(kind: str, tmp_path) -> None:
    """The media task and the GPT-Live task read plain audio without an event (InboundMedia.audio,
    LiveInbound.audio). While audio of that kind waits in the channel, what comes next waits behind
    it, as an event; with none waiting it is forwarded, into the stretch."""
    import base64
    import json
    from contextlib import asynccontextmanager

    import trio

    from calld.domain.ids import RunId
    from calld.runtime.handle import CallHandle, CallPorts
    from calld.runtime.rundir import RunDir
    from calld.runtime.sockets import memory_socket_pair
    from tests.core_helpers import make_plan

    app, peer = memory_socket_pair(kind)

    @asynccontextmanager
    async def connect():
        yield app

    ports = CallPorts(telnyx=None, connect_live=connect, public_media_url="wss://calld.test/media", webhook_url=None)  # type: ignore[arg-type]
    handle = CallHandle(make_plan(), ports, RunDir(tmp_path, RunId.new(), []))
    handle._path = AudioPath(inbound="forwarded", downlink=True)  # noqa: SLF001
    payload = base64.b64encode(QUIET).decode()
    if kind == "inbound":
        audio = [json.dumps({"event": "media", "media": {"track": "inbound", "chunk": str(n), "payload": payload}}) for n in (1, 2)]
        first = json.dumps({"event": "start", "stream_id": "s-1", "start": {
            "call_control_id": "cc-1", "media_format": {"encoding": "L16", "sample_rate": 16000, "channels": 1}}})
    else:
        audio = [json.dumps({"type": "session.output_audio.delta", "delta": payload})] * 2
        first = json.dumps({"type": "session.started", "session": {"id": "sess-1"}})
    stretch = handle._inbound_stretch if kind == "inbound" else handle._output_stretch  # noqa: SLF001
    try:
        async with trio.open_nursery() as nursery:
            handle._nursery = nursery  # noqa: SLF001
            if kind == "inbound":
                nursery.start_soon(handle._media_task)  # noqa: SLF001
                await handle._media_tx.send(app)  # noqa: SLF001
            else:
                nursery.start_soon(handle._live_task, handle.plan.live)  # noqa: SLF001
            await peer.send(first)
            await trio.testing.wait_all_tasks_blocked()
            await peer.send(audio[0])  # nothing of its kind waits: forwarded
            await trio.testing.wait_all_tasks_blocked()
            assert len(stretch) == 1
            if kind == "inbound":
                handle._inbound_queued = 1  # noqa: SLF001
            else:
                handle._output_queued = 1  # noqa: SLF001
            await peer.send(audio[1])  # one waits: this one queues behind it
            await trio.testing.wait_all_tasks_blocked()
            assert len(stretch) == 1
            queued = []
            while True:
                try:
                    queued.append(handle._events_rx.receive_nowait())  # noqa: SLF001
                except trio.WouldBlock:
                    break
            assert [type(e) for e in queued][-1] is (ev.MediaAudio if kind == "inbound" else ev.OutputAudio)
            nursery.cancel_scope.cancel()
    finally:
        handle.rundir.close()


def _path_in_words(call: Call) -> AudioPath:
    """The ways as the module's notes give them, one at a time over every track."""
    streaming = isinstance(call.media, MediaStreaming)
    uplink = streaming and isinstance(call.live, LiveActive) and not isinstance(call.hangup, HangupDone)
    downlink = (streaming and isinstance(call.live, LiveActive | LiveClosing) and isinstance(call.hangup, HangupNone)
                and call.recording is None)
    watching = uplink and isinstance(call.hangup, HangupNone) and isinstance(call.conversation, ConvTalking) and not call.on_hold
    recorded = streaming and isinstance(call.live, LiveClosing | LiveDone | LiveFailed) and not isinstance(call.hangup, HangupDone)
    held = (streaming and isinstance(call.live, LiveIdle | LiveStarting) and not isinstance(call.hangup, HangupDone)
            and call.counters.audio_in > 0)
    way = "forwarded" if uplink else "recorded" if recorded else "held" if held else "stepped"
    return AudioPath(inbound=way, uplink_loudness=watching, downlink=downlink)


def test_the_path_is_the_ways_in_words_on_every_combination_of_the_tracks_it_reads() -> None:
    # audio_path asks each track once, live first (it runs after every step); here every way is
    # written out as it reads, and the two agree on each state the tracks it reads can be in.
    scripts = (ANSWERED, STARTING, LIVE, HEARD, FAREWELL, DRAINING, MARKED, TRAILING, REQUESTED, DONE)
    calls = [drive(s).call for s in scripts]
    medias = {repr(c.media): c.media for c in calls}.values()
    hangups = {repr(c.hangup): c.hangup for c in calls}.values()
    conversations = {repr(c.conversation): c.conversation for c in calls}.values()
    lives = (LiveIdle(), LiveStarting(), LiveActive("sess_1"), LiveClosing(), LiveDone("closed"), LiveFailed("refused"))
    holds = ((), (Hold("hold music"),), (Hold("hold music", ended="returned"),))
    base = calls[3]
    seen = set()
    for media, live, hangup, conversation, recording, hold, heard in itertools.product(
            medias, lives, hangups, conversations, (None, "voicemail"), holds, (0, 1)):
        call = attrs.evolve(base, media=media, live=live, hangup=hangup, conversation=conversation, recording=recording,
                            holds=hold, counters=attrs.evolve(base.counters, audio_in=heard))
        assert audio_path(call) == _path_in_words(call), call
        seen.add(audio_path(call))
    assert len(seen) >= 8  # the product reaches forwarded (watching or not, downlink or not), recorded, held, stepped
