"""Per-frame CPU of calld's own audio path, in microseconds (no sockets, no simulator).

    uv run python bench/frames.py

Measures, for a call in steady conversation (GPT-Live active, nobody on hold): the loudness
check of one 20 ms frame, one `reduce_step` of an inbound frame and of an output delta, and
one whole `CallHandle` step of each (reduce, journal, WAV, log, the effect performed into
sockets that swallow the text); the same for one word of the business's transcript and of the
agent's (GPT-Live sends a fragment a word, a few a second each way in a conversation), each
joining a turn of TURN_WORDS words already heard. Not a test: it prints figures; compare two branches by
running it on each, back to back.
"""

from __future__ import annotations

import sys
import tempfile
import time
import timeit
from pathlib import Path
from typing import Any

import trio

from calld.adapters.codecs import codec_for
from calld.adapters.telnyx_http import TelnyxHttp
from calld.adapters.telnyx_media import OutboundMedia
from calld.core import events as ev
from calld.core import situations
from calld.core.plan import Timings, build_plan
from calld.core.reduce import reduce_step
from calld.core.state import Call
from calld.domain.ids import E164, CallControlId, FirstName, RunId, StreamId, UserId
from calld.domain.questions import QuestionType
from calld.runtime.handle import CallHandle, CallPorts
from calld.runtime.rundir import RunDir

CCID = CallControlId("v3:bench")
FRAME = bytes(range(256)) * 2 + bytes(128)  # 640 bytes: 20 ms of 16 kHz PCM16, loud
QUIET = bytes(640)
DELTA = bytes(3200)  # 100 ms of silence, as GPT-Live paces it
TURN_WORDS = 40  # the turn a word joins: a business stating its hours takes about this many
BUSINESS_WORD = ev.InputTranscript(" Saturday", 4000, 4300)
AGENT_WORD = ev.OutputTranscript(" thanks", 4000, 4200)


def plan() -> Any:
    return build_plan(
        run_id=RunId.new(), user_id=UserId("bench"), first_name=FirstName("Nathan"),
        to=E164("+15555550142"), from_=E164("+15555550100"), question=QuestionType.HOURS, item=None,
        command_id="cmd-1", live_model="gpt-live-1", backend_model="gpt-5.5", reasoning_effort="low",
        voice="marin", timings=Timings(),
    )


SETUP: tuple[ev.Event, ...] = (
    ev.Begin(), ev.DialAccepted(CCID), ev.CallInitiated(CCID), ev.CallAnswered(CCID),
    ev.MediaConnected(), ev.MediaStarted(StreamId("s-1"), CCID, "L16", 16000), ev.LiveStarted("sess_1"),
    ev.OutputTranscript("What are your opening hours?"),
)


def talking() -> Call:
    call = Call(plan=plan())
    for e in SETUP:
        step = reduce_step(call, e)
        assert step.ignored is None, step.ignored
        call = step.call
    return call


class Sink:
    """A socket that takes every text and keeps nothing."""

    async def send(self, text: str) -> None:
        pass


SENTENCE = " We are open from nine to five, Monday to Friday.".split(" ")[1:]  # ten words


def mid_turn(call: Call, word: ev.InputTranscript | ev.OutputTranscript) -> Call:
    """The call with TURN_WORDS words of the word's speaker already in the turn it joins, in
    sentences of ten, each word a fragment as GPT-Live sends them."""
    for i in range(TURN_WORDS):
        call = reduce_step(call, type(word)(" " + SENTENCE[i % len(SENTENCE)], 1000, 1100)).call
    return call


def per_call_us(fn: Any, n: int) -> float:
    return min(timeit.repeat(fn, number=n, repeat=5)) / n * 1e6


def main() -> None:
    n = 20000
    call = talking()
    media_in, delta, quiet_in = ev.MediaAudio(FRAME, 1), ev.OutputAudio(DELTA), ev.MediaAudio(QUIET, 1)
    rows = {
        "situations.loud(640 B loud)": per_call_us(lambda: situations.loud(FRAME), n),
        "situations.loud(640 B silent)": per_call_us(lambda: situations.loud(QUIET), n),
        "reduce_step(media.audio, loud)": per_call_us(lambda: reduce_step(call, media_in), n),
        "reduce_step(media.audio, silent)": per_call_us(lambda: reduce_step(call, quiet_in), n),
        "reduce_step(live.output_audio)": per_call_us(lambda: reduce_step(call, delta), n),
    }
    business, agent = mid_turn(call, BUSINESS_WORD), mid_turn(call, AGENT_WORD)
    rows["reduce_step(live.input_transcript, a word)"] = per_call_us(lambda: reduce_step(business, BUSINESS_WORD), n)
    rows["reduce_step(live.output_transcript, a word)"] = per_call_us(lambda: reduce_step(agent, AGENT_WORD), n)
    with tempfile.TemporaryDirectory() as tmp:
        rows.update(trio.run(handle_steps, Path(tmp), n))
    for name, us in rows.items():
        print(f"{us:8.2f} us  {name}")


async def handle_steps(tmp: Path, n: int) -> dict[str, float]:
    ports = CallPorts(telnyx=TelnyxHttp.__new__(TelnyxHttp), connect_live=None,  # type: ignore[arg-type]
                      public_media_url="wss://bench/telnyx/media", webhook_url=None)
    out: dict[str, float] = {}
    async with trio.open_nursery() as nursery:  # the timers a step arms (the stall failsafe) live here
        await _handle_steps(tmp, n, ports, nursery, out)
        nursery.cancel_scope.cancel()
    return out


async def _handle_steps(tmp: Path, n: int, ports: CallPorts, nursery: trio.Nursery, out: dict[str, float]) -> None:
    for name, event, state in (
        ("CallHandle step(media.audio)", ev.MediaAudio(FRAME, 1), talking()),
        ("CallHandle step(live.output_audio)", ev.OutputAudio(DELTA), talking()),
        ("CallHandle step(live.input_transcript, a word)", BUSINESS_WORD, mid_turn(talking(), BUSINESS_WORD)),
        ("CallHandle step(live.output_transcript, a word)", AGENT_WORD, mid_turn(talking(), AGENT_WORD)),
    ):
        handle = CallHandle(plan(), ports, RunDir(tmp, RunId.new(), []))
        handle._t0 = trio.current_time()
        handle._nursery = nursery
        base = handle.call = state
        handle._live_socket = handle._media_socket = Sink()  # type: ignore[assignment]
        handle._media_out = OutboundMedia(codec=codec_for("L16", 16000, "le"), stream_id=StreamId("s-1"))
        for track in ("dial", "telnyx", "media", "live", "conversation", "hangup"):
            handle._transitions[track] = []
        best = float("inf")
        for _ in range(5):
            start = time.perf_counter()
            for _ in range(n // 4):
                handle.call = base  # every frame meets the same state (no hold music after 4 s of sound)
                await handle._step(event)
            best = min(best, (time.perf_counter() - start) / (n // 4) * 1e6)
        handle.rundir.close()
        out[name] = best


if __name__ == "__main__":
    sys.exit(main())
