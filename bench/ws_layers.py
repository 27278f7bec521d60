"""What one audio message costs in each WebSocket layer calld could use: wsproto (under hypercorn and
trio-websocket), websockets' sans-I/O protocol, and calld.adapters.websocket (whole data frames
framed and parsed by calld with websockets' C mask, everything else by websockets' protocol).

    uv run python bench/ws_layers.py [messages]      # default 20000

For a Telnyx media frame (20 ms of L16 16 kHz, base64 in JSON) and a GPT-Live append (20 ms of
PCM16 24 kHz): microseconds per message to frame it as a client (masked) and as a server, and to
parse it as a server (unmasking) and as a client. Protocol work only, no sockets. Not a test.
"""

from __future__ import annotations

import base64
import json
import os
import sys
import time
from collections.abc import Callable

import trio
from websockets.protocol import OPEN, Protocol, Side
from wsproto.connection import Connection, ConnectionType
from wsproto.events import TextMessage


def message(kind: str, pcm_bytes: int) -> str:
    audio = base64.b64encode(os.urandom(pcm_bytes)).decode()
    if kind == "telnyx":
        return json.dumps({"event": "media", "stream_id": "s-1", "media": {"track": "inbound", "chunk": "7", "timestamp": "140", "payload": audio}})
    return json.dumps({"type": "session.input_audio.append", "audio": audio})


def per_message_us(n: int, work: Callable[[], object]) -> float:
    t0 = time.perf_counter()
    for _ in range(n):
        work()
    return (time.perf_counter() - t0) / n * 1e6


def websockets_costs(text: str, n: int) -> dict[str, float]:
    client, server = Protocol(Side.CLIENT, state=OPEN), Protocol(Side.SERVER, state=OPEN, max_size=None)
    data = text.encode()

    def frame(p: Protocol) -> bytes:
        p.send_text(data)
        return b"".join(p.data_to_send())

    masked, plain = frame(client), frame(server)

    def parse(p: Protocol, wire: bytes) -> str:
        p.receive_data(wire)
        return p.events_received()[0].data.decode()

    return {"client frames": per_message_us(n, lambda: frame(client)), "server frames": per_message_us(n, lambda: frame(server)),
            "server parses": per_message_us(n, lambda: parse(server, masked)), "client parses": per_message_us(n, lambda: parse(client, plain))}


def calld_costs(text: str, n: int) -> dict[str, float]:
    from calld.adapters.websocket import WebSocket

    class NoStream(trio.abc.Stream):  # framing and parsing only: nothing is written or read
        async def send_all(self, data: object) -> None: ...
        async def wait_send_all_might_not_block(self) -> None: ...
        async def receive_some(self, max_bytes: int | None = None) -> bytes: return b""
        async def aclose(self) -> None: ...

    client = WebSocket(NoStream(), Protocol(Side.CLIENT, state=OPEN), "client")
    server = WebSocket(NoStream(), Protocol(Side.SERVER, state=OPEN, max_size=None), "server")

    def frame(ws: WebSocket) -> bytes:
        framed = ws._framed(text)  # noqa: SLF001
        assert framed is not None
        return framed

    masked, plain = frame(client), frame(server)

    def parse(ws: WebSocket, wire: bytes) -> str:
        ws._take(wire)  # noqa: SLF001
        return ws._messages.popleft()  # noqa: SLF001

    return {"client frames": per_message_us(n, lambda: frame(client)), "server frames": per_message_us(n, lambda: frame(server)),
            "server parses": per_message_us(n, lambda: parse(server, masked)), "client parses": per_message_us(n, lambda: parse(client, plain))}


def wsproto_costs(text: str, n: int) -> dict[str, float]:
    client, server = Connection(ConnectionType.CLIENT), Connection(ConnectionType.SERVER)
    masked, plain = client.send(TextMessage(data=text)), server.send(TextMessage(data=text))

    def parse(c: Connection, wire: bytes) -> object:
        c.receive_data(wire)
        return list(c.events())

    return {"client frames": per_message_us(n, lambda: client.send(TextMessage(data=text))),
            "server frames": per_message_us(n, lambda: server.send(TextMessage(data=text))),
            "server parses": per_message_us(n, lambda: parse(server, masked)), "client parses": per_message_us(n, lambda: parse(client, plain))}


def main(n: int) -> None:
    for kind, pcm in (("telnyx", 640), ("gpt-live", 960)):
        text = message(kind, pcm)
        print(f"{kind} message, {len(text)} bytes:")
        for name, costs in (("wsproto 1.x", wsproto_costs(text, n)), ("websockets (sans-I/O)", websockets_costs(text, n)),
                            ("calld (whole frames)", calld_costs(text, n))):
            print(f"  {name:22s} " + "  ".join(f"{k} {v:5.1f} us" for k, v in costs.items()))


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 20000)
