"""The steady audio path in one process, without the simulator: what calld's own code costs a call-second.

    uv run python bench/steady.py [CALLS] [ROUNDS]          # default 50 calls, 400 rounds
    uv run python bench/steady.py --instructions [CALLS]    # under valgrind: instructions, within 2-3% run to run
    uv run python bench/steady.py --floor [CALLS] [ROUNDS]  # a bare bridge in the same harness, then calld
    uv run python bench/steady.py --instructions --floor [CALLS]  # the bare bridge's instructions alone
    uv run python bench/steady.py --words ...               # any of the above, with the calls' words too

CALLS CallHandles in steady conversation (GPT-Live active, nobody on hold), each with its real media
task, GPT-Live task and loop, over real WebSockets (calld.adapters.websocket) on socketpairs. A
round sends each call one 20 ms Telnyx media frame and waits until its GPT-Live append is out; every
fifth round also brings each call a 100 ms GPT-Live delta, which goes out to the line. Fifty rounds
are a call-second of the audio path (50 frames up, 10 deltas down), stretches told to the reducer as
in a real call. Not in it: transcripts, the webhooks, call set-up and wind-down, and the kernel's
cost of waking a peer process (bench/load.py has all of those). In it: the peers' own side (writing
each frame, waiting for and reading each append), the same for every commit.

The CPU figure moves with this shared machine's speed as bench/load.py's does. `--instructions` runs
the batch twice under valgrind (`apt-get install valgrind`), with 100 and 300 rounds, and prints the
difference per call-second: user-space instructions, start-up cancelled out, with trio's scheduler
and the hash seed fixed. Two runs of one commit agreed within 2% (13.33 and 13.57 million), where
the CPU figure moved by half within the hour: two commits compare on any day, for a difference
larger than that. `--floor` runs a bare bridge in the same harness (the same sockets, frames and
peers; per frame only wait, recv, unmask, parse, base64 both ways, frame, mask, send) and then
calld, back to back: what the harness, trio and the kernel cost on this machine, and what calld's
own code adds to it. Not a test.
"""

from __future__ import annotations

import base64
import json
import os
import random
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import orjson
import pybase64
import trio
from websockets.client import ClientProtocol
from websockets.protocol import OPEN
from websockets.server import ServerProtocol
from websockets.speedups import apply_mask
from websockets.uri import parse_uri

sys.path.insert(0, str(Path(__file__).parent))
from frames import CCID, FRAME, SETUP, plan  # noqa: E402  (bench/frames.py: the same call in the same state)

from calld.adapters import gpt_live  # noqa: E402
from calld.adapters.telnyx_http import TelnyxHttp  # noqa: E402
from calld.adapters.websocket import WebSocket  # noqa: E402
from calld.core.audio_path import audio_path  # noqa: E402
from calld.core.effects import OpenLive  # noqa: E402
from calld.core.plan import LivePlan  # noqa: E402
from calld.core.reduce import reduce_step  # noqa: E402
from calld.core.state import TRACKS, Call  # noqa: E402
from calld.domain.ids import RunId  # noqa: E402
from calld.runtime.handle import CallHandle, CallPorts  # noqa: E402
from calld.runtime.rundir import RunDir  # noqa: E402

ROUNDS_PER_CALL_SECOND = 50  # 20 ms frames
DELTA_EVERY = 5  # a 100 ms delta every fifth frame
# --words: a transcript delta every 17th round, three of the agent's to one of the business's: what
# bench/load.py's calls send in their steady window (2.3 and 0.7 a call-second), and what makes the
# loop step (the stretches before the word, the word, the stall failsafe re-armed).
WORD_EVERY = 17
AGENT_WORDS = "could you tell me what time the shop opens on a weekday please".split()
BUSINESS_WORDS = "yes we do take calls about that".split()
WORDS = False  # set by --words


def talking() -> tuple[Call, LivePlan]:
    call, live = Call(plan=plan()), None
    for event in SETUP:
        step = reduce_step(call, event)
        call = step.call
        live = next((e.plan for e in step.effects if isinstance(e, OpenLive)), live)
    assert live is not None
    return call, live


def frame_from(side: ClientProtocol | ServerProtocol, text: str) -> bytes:
    """`text` as one WebSocket frame from that side (a client masks it)."""
    side.send_text(text.encode())
    return b"".join(side.data_to_send())


def socket_pair() -> tuple[socket.socket, socket.socket]:
    a, b = socket.socketpair()
    for s in (a, b):
        s.setblocking(False)
        s.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 1 << 20)
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1 << 20)
    return a, b


def stream(s: socket.socket) -> trio.SocketStream:
    return trio.SocketStream(trio.socket.from_stdlib_socket(s))


def wire(rounds: int) -> tuple[bytes, list[bytes], bytes]:
    """What the peers send, framed once: Telnyx's start frame and `rounds` media frames, and one
    GPT-Live delta (with --words, `transcript` frames the words)."""
    telnyx_side = ClientProtocol(parse_uri("ws://telnyx/"), state=OPEN)  # Telnyx is the media socket's client
    start = frame_from(telnyx_side, json.dumps({"event": "start", "stream_id": "s-1", "start": {
        "call_control_id": CCID, "media_format": {"encoding": "L16", "sample_rate": 16000, "channels": 1}}}))
    payload = base64.b64encode(FRAME).decode()
    media = [frame_from(telnyx_side, json.dumps({"event": "media", "stream_id": "s-1", "media": {
        "track": "inbound", "chunk": str(i), "timestamp": str(20 * i), "payload": payload}})) for i in range(rounds)]
    delta = frame_from(ServerProtocol(state=OPEN), json.dumps(
        {"type": "session.output_audio.delta", "delta": base64.b64encode(bytes(3200)).decode()}))
    return start, media, delta


def transcript(rounds: int) -> dict[int, bytes]:
    """--words: the round each word comes in, and its GPT-Live transcript delta, framed."""
    words: dict[int, bytes] = {}
    server = ServerProtocol(state=OPEN)
    for n, r in enumerate(range(WORD_EVERY - 1, rounds if WORDS else 0, WORD_EVERY)):
        business = n % 4 == 3
        said = BUSINESS_WORDS if business else AGENT_WORDS
        kind = "input" if business else "output"
        words[r] = frame_from(server, json.dumps({"type": f"session.{kind}_transcript.delta", "delta": " " + said[n % len(said)],
                                                  "start_ms": 20 * r, "end_ms": 20 * r + 240}))
    return words


async def rounds_cpu(peers: list[tuple[socket.socket, socket.socket]], media: list[bytes], delta: bytes) -> float:
    """CPU seconds for the peers' rounds: each call a media frame (and every fifth round a delta),
    then each call's GPT-Live append read back (the line's audio is left to gather)."""
    append_bytes = len(gpt_live.input_audio_append_text(FRAME)) + 8  # 16-bit length and mask key
    words = transcript(len(media))
    cpu0 = time.process_time()
    for r, frame in enumerate(media):
        word = words.get(r)
        for media_peer, live_peer in peers:
            media_peer.send(frame)
            if r % DELTA_EVERY == 0:
                live_peer.send(delta)
            if word is not None:
                live_peer.send(word)
        for media_peer, live_peer in peers:
            want = append_bytes
            while want > 0:
                await trio.lowlevel.wait_readable(live_peer)
                want -= _drain(live_peer)
    return time.process_time() - cpu0


def close_all(peers: list[tuple[socket.socket, socket.socket]]) -> None:
    for pair in peers:
        for s in pair:
            s.close()


async def run(calls: int, rounds: int) -> float:
    """CPU seconds for `rounds` rounds of `calls` calls."""
    call, live = talking()
    start, media, delta = wire(rounds)
    tmp = Path(tempfile.mkdtemp(prefix="calld-steady-"))
    peers: list[tuple[socket.socket, socket.socket]] = []
    async with trio.open_nursery() as nursery:
        for _ in range(calls):
            media_app, media_peer = socket_pair()
            live_app, live_peer = socket_pair()
            live_socket = WebSocket(stream(live_app), ClientProtocol(parse_uri("ws://live/"), state=OPEN), "gpt-live")

            @asynccontextmanager
            async def connect(socket_: WebSocket = live_socket) -> AsyncIterator[WebSocket]:
                yield socket_

            ports = CallPorts(telnyx=TelnyxHttp.__new__(TelnyxHttp), connect_live=connect,
                              public_media_url="ws://calld/telnyx/media", webhook_url=None)
            handle = CallHandle(plan(), ports, RunDir(tmp, RunId.new(), []))
            handle._t0 = trio.current_time()  # noqa: SLF001  (what run() would set; the call is mid-conversation)
            handle._nursery = nursery  # noqa: SLF001
            handle.call = call
            handle._path = audio_path(call)  # noqa: SLF001
            for track in TRACKS:
                handle._transitions[track] = []  # noqa: SLF001
            nursery.start_soon(handle._loop)  # noqa: SLF001
            nursery.start_soon(handle._media_task)  # noqa: SLF001
            nursery.start_soon(handle._live_task, live)  # noqa: SLF001
            # What attach_media hands over, without waiting for the call to let the socket go.
            await handle._media_tx.send(WebSocket(stream(media_app), ServerProtocol(state=OPEN), "telnyx-media"))  # noqa: SLF001
            media_peer.send(start)
            peers.append((media_peer, live_peer))
        await trio.sleep(0.2)  # every call's start frame and session start are through
        for _, live_peer in peers:
            while _drain(live_peer):
                pass
        cpu = await rounds_cpu(peers, media, delta)
        nursery.cancel_scope.cancel()
    close_all(peers)
    shutil.rmtree(tmp, ignore_errors=True)
    return cpu


def _unframe(data: bytes) -> bytes:
    """The payload of one whole text frame of under 64 KiB, unmasked: all --floor's bridge reads."""
    length, head = data[1] & 0x7F, 2
    if length == 126:
        length, head = int.from_bytes(data[2:4], "big"), 4
    if data[1] & 0x80:
        return apply_mask(data[head + 4:head + 4 + length], data[head:head + 4])
    return data[head:head + length]


def _frame(payload: bytes, *, masked: bool) -> bytes:
    n = len(payload)
    head = bytes((0x81, (0x80 if masked else 0) | 126)) + n.to_bytes(2, "big")
    if not masked:
        return head + payload
    key = os.urandom(4)
    return head + key + apply_mask(payload, key)


async def _bare_uplink(media: socket.socket, live: socket.socket) -> None:
    while True:
        await trio.lowlevel.wait_readable(media)
        pcm = pybase64.b64decode(orjson.loads(_unframe(media.recv(1 << 16)))["media"]["payload"])
        live.send(_frame(gpt_live.input_audio_append_text(pcm).encode(), masked=True))


async def _bare_downlink(live: socket.socket, media: socket.socket) -> None:
    while True:
        await trio.lowlevel.wait_readable(live)
        event = orjson.loads(_unframe(live.recv(1 << 16)))
        if event["type"] != "session.output_audio.delta":
            continue  # a bridge keeps no transcript
        pcm = pybase64.b64decode(event["delta"])
        out = {"event": "media", "stream_id": "s-1", "media": {"payload": pybase64.b64encode(pcm).decode()}}
        media.send(_frame(orjson.dumps(out), masked=False))


async def floor(calls: int, rounds: int) -> float:
    """CPU seconds for `rounds` rounds of `calls` bare bridges: run()'s peers and frames, no calld."""
    _, media, delta = wire(rounds)
    peers: list[tuple[socket.socket, socket.socket]] = []
    async with trio.open_nursery() as nursery:
        for _ in range(calls):
            media_app, media_peer = socket_pair()
            live_app, live_peer = socket_pair()
            nursery.start_soon(_bare_uplink, media_app, live_app)
            nursery.start_soon(_bare_downlink, live_app, media_app)
            peers.append((media_peer, live_peer))
        await trio.sleep(0.2)
        cpu = await rounds_cpu(peers, media, delta)
        nursery.cancel_scope.cancel()
    close_all(peers)
    return cpu


def _drain(s: socket.socket) -> int:
    try:
        return len(s.recv(1 << 20))
    except BlockingIOError:
        return 0


def instructions(calls: int, *, bare: bool = False) -> None:
    counts = []
    for rounds in (100, 300):
        out = subprocess.run(["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", sys.executable, __file__,
                              *(["--words"] if WORDS else []), *(["--bare"] if bare else []), str(calls), str(rounds)], capture_output=True, text=True, check=True,
                             env={**os.environ, "PYTHONHASHSEED": "0", "BENCH_STEADY_SEED": "0"})
        counts.append(int(next(line for line in out.stderr.splitlines() if "Collected" in line).split()[-1]))
    per_round = (counts[1] - counts[0]) / (200 * calls)
    print(f"{'bare bridge, ' if bare else ''}{calls} calls: {per_round * ROUNDS_PER_CALL_SECOND / 1e6:.2f} million instructions per call-second "
          f"({per_round / 1000:.1f} thousand a round: a frame up, and a fifth of a delta down"
          f"{', a word every ' + str(WORD_EVERY) + ' rounds' if WORDS else ''}), user space only")


def main(argv: list[str]) -> None:
    global WORDS
    if "--words" in argv:
        WORDS = True
        argv = [a for a in argv if a != "--words"]
    if argv[:1] == ["--instructions"]:
        bare = argv[1:2] == ["--floor"]
        instructions(int(argv[1 + bare]) if len(argv) > 1 + bare else 20, bare=bare)
        return
    if argv[:1] == ["--floor"]:
        calls = int(argv[1]) if len(argv) > 1 else 100
        rounds = int(argv[2]) if len(argv) > 2 else 400
        for name, batch in (("bare bridge", floor), ("calld", run)):
            cpu = trio.run(batch, calls, rounds)
            print(f"{name:>11}, {calls} calls: {cpu / (calls * rounds) * 1e6:.1f} us a round, "
                  f"{cpu / (calls * rounds / ROUNDS_PER_CALL_SECOND) * 1000:.2f} ms CPU per call-second")
        return
    if (seed := os.environ.get("BENCH_STEADY_SEED")) is not None:
        # Counting instructions: trio's scheduler shuffles the tasks it wakes together (a private
        # RNG), and the run ids are random; seeded, two runs of one commit do the same work.
        trio._core._run._r.seed(int(seed))  # noqa: SLF001
        random.seed(int(seed))
    bare = argv[:1] == ["--bare"]  # one batch of --floor's bridge, for --instructions --floor
    argv = argv[bare:]
    calls = int(argv[0]) if argv else 50
    rounds = int(argv[1]) if len(argv) > 1 else 400
    cpu = trio.run(floor if bare else run, calls, rounds)
    print(f"{calls} calls, {rounds} rounds: {cpu / (calls * rounds / ROUNDS_PER_CALL_SECOND) * 1000:.2f} ms CPU per "
          f"call-second of steady audio ({cpu / (calls * rounds) * 1e6:.1f} us a round)")


if __name__ == "__main__":
    main(sys.argv[1:])
