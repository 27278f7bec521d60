"""The simulator's webhook poster: signed posts over kept-alive HTTP/1.1 connections (h11), a
failed post counted as status 0, and a connection that broke never used again."""

from __future__ import annotations

from functools import partial

import h11
import trio

from calld.adapters.webhook_auth import generate_keypair, verify_webhook
from calld.sim.net import WebhookPoster

NOW = 1_700_000_000


class Endpoint:
    """A loopback HTTP/1.1 server that checks each webhook's signature, answers 200 on /hook and
    hangs up without an answer on /drop."""

    def __init__(self, public_key: str) -> None:
        self.public_key = public_key
        self.connections = 0
        self.bodies: list[bytes] = []

    async def serve(self, stream: trio.SocketStream) -> None:
        self.connections += 1
        http = h11.Connection(h11.SERVER)
        async with stream:
            while True:
                request, body = None, b""
                while True:
                    event = http.next_event()
                    if event is h11.NEED_DATA:
                        data = await stream.receive_some(65536)
                        if not data:
                            return
                        http.receive_data(data)
                    elif isinstance(event, h11.Request):
                        request = event
                    elif isinstance(event, h11.Data):
                        body += event.data
                    elif isinstance(event, h11.EndOfMessage):
                        break
                assert request is not None
                if request.target == b"/drop":
                    return
                headers = {k.decode(): v.decode() for k, v in request.headers}
                verify_webhook(body, headers, self.public_key, now=NOW)  # raises on a bad signature
                self.bodies.append(body)
                await stream.send_all(http.send(h11.Response(status_code=200, headers=[("content-length", "2")]))
                                      + http.send(h11.Data(data=b"{}")) + http.send(h11.EndOfMessage()))
                http.start_next_cycle()


async def test_webhooks_are_signed_and_share_one_kept_alive_connection(nursery):
    key, public = generate_keypair()
    endpoint = Endpoint(public)
    listeners = await nursery.start(partial(trio.serve_tcp, endpoint.serve, 0, host="127.0.0.1"))
    port = listeners[0].socket.getsockname()[1]
    poster = WebhookPoster(key, lambda: NOW)
    try:
        for i in range(3):
            await poster.post(f"http://127.0.0.1:{port}/hook", b'{"n": %d}' % i)
        assert poster.statuses == [200, 200, 200]
        assert endpoint.bodies == [b'{"n": 0}', b'{"n": 1}', b'{"n": 2}']
        assert endpoint.connections == 1
        # The daemon hangs up without an answer: status 0, and that connection is not used again.
        await poster.post(f"http://127.0.0.1:{port}/drop", b"{}")
        await poster.post(f"http://127.0.0.1:{port}/hook", b'{"n": 3}')
        assert poster.statuses[3:] == [0, 200]
        assert endpoint.connections == 2
    finally:
        await poster.aclose()


async def test_a_webhook_url_the_simulator_cannot_post_to_is_refused_by_name(caplog) -> None:
    key, _ = generate_keypair()
    poster = WebhookPoster(key, lambda: NOW)
    await poster.post("https://example.invalid/hook", b"{}")
    assert poster.statuses == [0]
    assert "plain http" in caplog.text and "PUBLIC_WEBHOOK_URL" in caplog.text


async def test_a_webhook_cancelled_mid_exchange_lets_its_connection_go_at_once(nursery, autojump_clock):
    """The simulator is stopped (or its call cancelled) while the daemon has not answered, as when a
    daemon is killed mid-call: the connection is closed then, not left for the collector to find."""
    key, _ = generate_keypair()
    closed = trio.Event()

    async def never_answers(stream: trio.SocketStream) -> None:
        while await stream.receive_some(65536):  # the request, then nothing until the poster lets go
            pass
        closed.set()

    listeners = await nursery.start(partial(trio.serve_tcp, never_answers, 0, host="127.0.0.1"))
    port = listeners[0].socket.getsockname()[1]
    poster = WebhookPoster(key, lambda: NOW, timeout_s=60)
    with trio.move_on_after(1):
        await poster.post(f"http://127.0.0.1:{port}/hook", b"{}")
    with trio.fail_after(5):
        await closed.wait()
    assert poster.statuses == []  # cancelled: no answer to count
    await poster.aclose()
