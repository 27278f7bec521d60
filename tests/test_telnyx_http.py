"""TelnyxHttp against httpx.MockTransport: retries on trio's clock, command ids, errors that say what to fix."""

from __future__ import annotations

import json
from collections import deque
from collections.abc import AsyncIterator, Callable
from typing import Any

import httpx
import pytest
import trio

from calld.adapters.fixtures import load_fixture
from calld.adapters.telnyx_http import (
    AvailableNumber,
    CallInfo,
    DialSecrets,
    NumberOrder,
    OrderedNumber,
    PhoneNumber,
    RetryPolicy,
    TelnyxError,
    TelnyxHttp,
    open_client,
)
from calld.core.plan import DialPlan
from calld.domain.ids import E164, CallControlId, RunId
from calld.stub.telnyx_numbers import StubNumbers

CCID = CallControlId("v3:u5OAKGEPT3Dx8SZSSDRWEMdNH2OripQhO2Jm1-Xg8Q6Hj1hOXzJtzg")
PLAN = DialPlan(E164("+15555550123"), E164("+15555550100"), RunId("run_5f0c2a9e1b7d4c3a8e6f"), command_id="cmd-dial-1")
SECRETS = DialSecrets("wss://calld.example/telnyx/media/tok123", "auth-secret", "https://calld.example/telnyx/webhook")

Step = httpx.Response | Exception | Callable[[httpx.Request], httpx.Response]


def fixture(status: int, name: str, headers: dict[str, str] | None = None) -> httpx.Response:
    return httpx.Response(status, json=load_fixture("telnyx", name), headers=headers)


class Script:
    """Answers each request with the next step (the last one repeats) and keeps what it saw."""

    def __init__(self, *steps: Step) -> None:
        self.steps = deque(steps)
        self.seen: list[httpx.Request] = []
        self.times: list[float] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.seen.append(request)
        self.times.append(trio.current_time())
        step = self.steps.popleft() if len(self.steps) > 1 else self.steps[0]
        if isinstance(step, Exception):
            raise step
        if isinstance(step, httpx.Response):
            return step
        return step(request)

    @property
    def bodies(self) -> list[dict[str, Any]]:
        return [json.loads(r.content) if r.content else {} for r in self.seen]


@pytest.fixture
async def make() -> AsyncIterator[Callable[..., TelnyxHttp]]:
    clients: list[httpx.AsyncClient] = []

    def build(script: Script, **retry: Any) -> TelnyxHttp:
        client = open_client("KEY123", transport=httpx.MockTransport(script))
        clients.append(client)
        return TelnyxHttp(client, "conn-1", retry=RetryPolicy(**retry))

    yield build
    for c in clients:
        await c.aclose()


def timeout(kind: type[httpx.TransportError] = httpx.ReadTimeout) -> httpx.TransportError:
    return kind("simulated", request=httpx.Request("POST", "https://api.telnyx.com/v2/calls"))


# -- retries ---------------------------------------------------------------------------------------


async def test_a_429_then_200_redials_with_the_same_command_id_after_retry_after(make, autojump_clock) -> None:
    script = Script(fixture(429, "error_429_dials", {"Retry-After": "3"}), fixture(200, "dial_response"))
    t0 = trio.current_time()
    dialled = await make(script).dial(PLAN, SECRETS)
    assert dialled.call_control_id == CCID
    first, second = script.bodies
    assert first == second and first["command_id"] == "cmd-dial-1"
    assert script.times[1] - t0 == pytest.approx(3.0)  # Retry-After, not the 0.5 s backoff
    assert [r.headers["authorization"] for r in script.seen] == ["Bearer KEY123"] * 2
    assert dialled.request["stream_auth_token"] == "[redacted]" and "tok123" not in json.dumps(dialled.request)


async def test_a_read_timeout_on_dial_is_resent_with_the_same_command_id(make, autojump_clock) -> None:
    script = Script(timeout(), fixture(200, "dial_response"))
    assert (await make(script).dial(PLAN, SECRETS)).call_control_id == CCID
    assert len(script.bodies) == 2 and script.bodies[0] == script.bodies[1]


async def test_5xx_retries_back_off_exponentially_and_are_bounded(make, autojump_clock) -> None:
    script = Script(fixture(503, "error_500"))
    t0 = trio.current_time()
    with pytest.raises(TelnyxError) as failed:
        await make(script, attempts=4, backoff_s=0.5).dial(PLAN, SECRETS)
    assert len(script.seen) == 4
    assert [t - t0 for t in script.times] == pytest.approx([0.0, 0.5, 1.5, 3.5])
    assert {b["command_id"] for b in script.bodies} == {"cmd-dial-1"}
    assert failed.value.status == 503
    assert "503" in str(failed.value) and "Unexpected error" in str(failed.value)


async def test_backoff_is_capped(make, autojump_clock) -> None:
    script = Script(fixture(500, "error_500"))
    t0 = trio.current_time()
    with pytest.raises(TelnyxError):
        await make(script, attempts=5, backoff_s=1.0, max_backoff_s=2.0).get_call(CCID)
    assert [t - t0 for t in script.times] == pytest.approx([0.0, 1.0, 3.0, 5.0, 7.0])


async def test_no_answer_at_all_becomes_a_telnyx_error_after_the_attempts(make, autojump_clock) -> None:
    script = Script(timeout(httpx.ConnectError))
    with pytest.raises(TelnyxError, match=r"did not answer when dialling .* after 3 attempt\(s\)") as failed:
        await make(script, attempts=3).dial(PLAN, SECRETS)
    assert isinstance(failed.value.__cause__, httpx.ConnectError) and len(script.seen) == 3


async def test_a_retry_after_longer_than_the_limit_is_not_waited_out(make, autojump_clock) -> None:
    script = Script(fixture(429, "error_429", {"Retry-After": "120"}), fixture(200, "dial_response"))
    with pytest.raises(TelnyxError, match="rate-limited"):
        await make(script, max_retry_after_s=30).dial(PLAN, SECRETS)
    assert len(script.seen) == 1 and trio.current_time() == 0


async def test_4xx_other_than_408_and_429_is_not_retried(make, autojump_clock) -> None:
    script = Script(fixture(422, "error_422"), fixture(200, "dial_response"))
    with pytest.raises(TelnyxError):
        await make(script).dial(PLAN, SECRETS)
    assert len(script.seen) == 1


async def test_408_is_retried(make, autojump_clock) -> None:
    script = Script(httpx.Response(408), fixture(200, "call_status"))
    assert (await make(script).get_call(CCID)).is_alive is False
    assert len(script.seen) == 2


# -- number orders are resent only when Telnyx cannot have acted ------------------------------------


@pytest.mark.parametrize(
    ("first", "resent"),
    [
        (timeout(httpx.ReadTimeout), False),  # Telnyx may have placed it
        (httpx.Response(503, json=load_fixture("telnyx", "error_500")), False),
        (httpx.Response(408), False),
        (timeout(httpx.ConnectError), True),  # never reached Telnyx
        (httpx.Response(429, json=load_fixture("telnyx", "error_429"), headers={"Retry-After": "1"}), True),
    ],
)
async def test_a_number_order_is_resent_only_when_it_cannot_have_been_placed(
    make, autojump_clock, first: Step, resent: bool
) -> None:
    script = Script(first, fixture(200, "number_order_pending"))
    telnyx = make(script)
    if resent:
        order = await telnyx.create_number_order(E164("+15555550110"), "conn-1", "calld:user:alice")
        assert order.status == "pending"
        assert len(script.seen) == 2 and script.bodies[0] == script.bodies[1]
    else:
        with pytest.raises(TelnyxError):
            await telnyx.create_number_order(E164("+15555550110"), "conn-1", "calld:user:alice")
        assert len(script.seen) == 1


async def test_an_unanswered_order_says_it_was_not_resent(make, autojump_clock) -> None:
    with pytest.raises(TelnyxError, match="not resent: Telnyx may have acted on it"):
        await make(Script(timeout())).create_number_order(E164("+15555550110"), "c", "calld:user:alice")


@pytest.mark.parametrize(
    ("error", "reached", "tries"),
    [
        (httpx.LocalProtocolError, "maybe", 4),  # raised while the request was being written
        (httpx.CloseError, "maybe", 4),  # the answer came, closing the connection failed
        (httpx.DecodingError, "maybe", 4),  # an answer came that would not decode
        (httpx.TooManyRedirects, "maybe", 4),
        (httpx.ProxyError, "no", 4),
        (httpx.UnsupportedProtocol, "no", 4),
        (httpx.ConnectError, "no", 4),
        (httpx.ReadTimeout, "maybe", 4),
    ],
)
async def test_every_httpx_error_is_a_telnyx_error_that_says_whether_telnyx_may_have_acted(
    make, autojump_clock, error: type[httpx.HTTPError], reached: str, tries: int
) -> None:
    script = Script(error("simulated", request=httpx.Request("POST", "https://api.telnyx.com/v2/calls")))
    with pytest.raises(TelnyxError, match=f"did not answer when hanging up .*{error.__name__}") as failed:
        await make(script).hangup(CCID, "cmd-hangup")
    assert failed.value.reached == reached and len(script.seen) == tries
    assert {b["command_id"] for b in script.bodies} == {"cmd-hangup"}  # resent as it was: Telnyx drops repeats


async def test_an_order_broken_once_it_may_have_left_is_not_resent(make, autojump_clock) -> None:
    script = Script(httpx.LocalProtocolError("simulated"), fixture(200, "number_order_pending"))
    with pytest.raises(TelnyxError, match="not resent") as failed:
        await make(script).create_number_order(E164("+15555550110"), "c", "calld:user:alice")
    assert failed.value.reached == "maybe" and len(script.seen) == 1


async def test_an_error_after_an_answered_attempt_may_have_reached_telnyx(make, autojump_clock) -> None:
    script = Script(fixture(503, "error_500"), timeout(httpx.ConnectError))
    with pytest.raises(TelnyxError) as failed:
        await make(script, attempts=2).hangup(CCID, "cmd-hangup")
    assert failed.value.reached == "maybe"  # the 503'd attempt got there, whatever the last one did


# -- hangup and other commands ---------------------------------------------------------------------


async def test_hangup_of_an_ended_call_is_success(make) -> None:
    script = Script(fixture(422, "hangup_already_ended"))
    assert await make(script).hangup(CCID, "cmd-hangup") == "already_ended"
    assert script.seen[0].url.path == f"/v2/calls/{CCID}/actions/hangup"
    assert script.bodies == [{"command_id": "cmd-hangup"}]


async def test_hangup_requested(make) -> None:
    assert await make(Script(fixture(200, "hangup_ok"))).hangup(CCID, "cmd-hangup") == "requested"


async def test_hangup_retries_keep_the_command_id_and_end_already_ended(make, autojump_clock) -> None:
    script = Script(fixture(500, "error_500"), timeout(), fixture(422, "hangup_already_ended"))
    assert await make(script).hangup(CCID, "cmd-hangup") == "already_ended"
    assert script.bodies == [{"command_id": "cmd-hangup"}] * 3


async def test_other_hangup_422s_are_errors_naming_the_field(make) -> None:
    body = load_fixture("telnyx", "error_422")
    body["errors"][0].update(code="10015", detail="command_id is too long", source={"pointer": "/command_id"})
    with pytest.raises(TelnyxError, match=r"rejected hanging up .* field 'command_id': command_id is too long"):
        await make(Script(httpx.Response(422, json=body))).hangup(CCID, "x" * 300)


async def test_send_dtmf_posts_digits_with_the_command_id_on_every_attempt(make, autojump_clock) -> None:
    script = Script(fixture(502, "error_500"), fixture(200, "hangup_ok"))
    await make(script).send_dtmf(CCID, "1w2#", "cmd-dtmf")
    assert script.seen[0].url.path == f"/v2/calls/{CCID}/actions/send_dtmf"
    assert script.bodies == [{"digits": "1w2#", "command_id": "cmd-dtmf"}] * 2


async def test_send_dtmf_refuses_bad_digits_before_sending(make) -> None:
    script = Script(fixture(200, "hangup_ok"))
    for bad in ("", "12x", "1" * 65):
        with pytest.raises(ValueError, match="DTMF digits"):
            await make(script).send_dtmf(CCID, bad, "cmd")
    assert script.seen == []


async def test_get_call_reads_the_call_status(make) -> None:
    script = Script(fixture(200, "call_status"))
    info = await make(script).get_call(CCID)
    assert info == CallInfo(
        CCID,
        False,
        "2026-08-01T10:05:00.000000Z",
        "2026-08-01T10:06:12.000000Z",
        72,
        "cnVuXzVmMGMyYTllMWI3ZDRjM2E4ZTZm",
    )
    assert script.seen[0].method == "GET" and script.seen[0].url.path == f"/v2/calls/{CCID}"


async def test_an_unreadable_body_is_a_telnyx_error(make) -> None:
    with pytest.raises(TelnyxError, match=r"body calld cannot read \(data.call_control_id"):
        await make(Script(httpx.Response(200, json={"data": {"is_alive": False}}))).dial(PLAN, SECRETS)


# -- errors say what to fix ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("status", "name", "expected"),
    [
        (401, "error_401", ["refused the API key (401)", "check TELNYX_API_KEY"]),
        (403, "error_403", ["forbade dialling", "(403)", "Authorization failed", "not allowed"]),
        (422, "error_422", ["rejected dialling", "(422)", "field 'to'", "must be in +E.164 format"]),
        (429, "error_429", ["rate-limited dialling", "code 10011", "rate limit"]),
        (429, "error_429_dials", ["rate-limited dialling", "code 90103", "dials-per-second"]),
        (404, "error_404", ["refused dialling", "(404)", "10005 Resource not found"]),
        (500, "error_500", ["failed dialling", "(500, a Telnyx-side error)", "10007 Unexpected error"]),
    ],
)
async def test_errors_say_what_to_fix(make, autojump_clock, status: int, name: str, expected: list[str]) -> None:
    with pytest.raises(TelnyxError) as failed:
        await make(Script(fixture(status, name)), attempts=2).dial(PLAN, SECRETS)
    message = str(failed.value)
    for part in expected:
        assert part in message, message
    assert failed.value.status == status and failed.value.codes == (load_fixture("telnyx", name)["errors"][0]["code"],)
    assert PLAN.to not in message  # a number in a log line is masked


async def test_a_nested_field_pointer_is_named_readably(make) -> None:
    body = load_fixture("telnyx", "error_422")
    body["errors"][0].update(detail="not available", source={"pointer": "/phone_numbers/0/phone_number"})
    with pytest.raises(TelnyxError, match=r"field 'phone_numbers\[0\].phone_number': not available"):
        await make(Script(httpx.Response(422, json=body))).create_number_order(E164("+15555550110"), "c", "r")


async def test_an_error_without_a_json_body_still_says_something(make) -> None:
    with pytest.raises(TelnyxError, match=r"refused reading call .* \(400\): bad gateway text"):
        await make(Script(httpx.Response(400, text="bad gateway text"))).get_call(CCID)


# -- numbers endpoints and their fixtures ----------------------------------------------------------


async def test_available_numbers_searches_us_local_voice(make) -> None:
    script = Script(fixture(200, "available_numbers"))
    found = await make(script).available_numbers(limit=3)
    params = dict(script.seen[0].url.params)
    assert script.seen[0].url.path == "/v2/available_phone_numbers"
    assert params == {
        "filter[country_code]": "US",
        "filter[phone_number_type]": "local",
        "filter[features]": "voice",
        "filter[limit]": "3",
    }
    assert found[0] == AvailableNumber(E164("+15555550110"), ("voice", "sms", "emergency"), "1.00", "1.00", "USD")
    assert [n.phone_number for n in found] == ["+15555550110", "+15555550111", "+15555550112"]


async def test_create_number_order_assigns_the_connection_and_reference(make) -> None:
    script = Script(fixture(200, "number_order_pending"))
    order = await make(script).create_number_order(E164("+15555550110"), "conn-9", "calld:user:alice")
    assert script.bodies == [
        {
            "phone_numbers": [{"phone_number": "+15555550110"}],
            "connection_id": "conn-9",
            "customer_reference": "calld:user:alice",
        }
    ]
    assert order.pending and not order.succeeded and order.number() == "+15555550110"


async def test_number_order_outcomes_parse(make) -> None:
    script = Script(fixture(200, "number_order_success"), fixture(200, "number_order_failure"))
    telnyx = make(script)
    done = await telnyx.get_number_order("9f2c7d1e-4a6b-4c3d-8e5f-0a1b2c3d4e5f")
    assert script.seen[0].url.path == "/v2/number_orders/9f2c7d1e-4a6b-4c3d-8e5f-0a1b2c3d4e5f"
    assert done.succeeded and done.number() == "+15555550110" and done.customer_reference == "calld:user:alice"
    failed = await telnyx.get_number_order("9f2c7d1e-4a6b-4c3d-8e5f-0a1b2c3d4e5f")
    assert failed == NumberOrder(
        id="9f2c7d1e-4a6b-4c3d-8e5f-0a1b2c3d4e5f",
        status="failure",
        phone_numbers=(OrderedNumber(E164("+15555550110"), "failure", "requirement-info-exception"),),
        customer_reference="calld:user:alice",
        connection_id="1684641123236054244",
        created_at="2026-08-01T10:00:00.000000Z",
    )
    assert failed.failure_reason() == (
        "Telnyx number order 9f2c7d1e-4a6b-4c3d-8e5f-0a1b2c3d4e5f ended 'failure'"
        " (+15555550110: status failure, requirements requirement-info-exception)"
    )


async def test_list_number_orders_filters_by_customer_reference(make) -> None:
    listing = load_fixture("telnyx", "number_orders_list")
    listing["data"] = [load_fixture("telnyx", "number_order_pending")["data"]]
    script = Script(httpx.Response(200, json=listing))
    [order] = await make(script).list_number_orders("calld:user:alice")
    assert script.seen[0].url.params["filter[customer_reference]"] == "calld:user:alice"
    assert order.id == "9f2c7d1e-4a6b-4c3d-8e5f-0a1b2c3d4e5f"


async def test_list_phone_numbers_sends_only_the_filters_given(make) -> None:
    script = Script(fixture(200, "phone_numbers"))
    [owned] = await make(script).list_phone_numbers(customer_reference="calld:user:alice", status="active")
    assert dict(script.seen[0].url.params) == {
        "page[size]": "25",
        "filter[customer_reference]": "calld:user:alice",
        "filter[status]": "active",
    }
    assert owned == PhoneNumber(
        "1293384261075731499", E164("+15555550110"), "active", "1684641123236054244", "calld:user:alice"
    )


# -- the numbers stub routes only numbers ----------------------------------------------------------


async def test_the_numbers_stub_answers_other_paths_with_a_clear_404() -> None:
    stub = StubNumbers()
    async with open_client("k", transport=stub.transport()) as client:
        resp = await client.post("/v2/calls", json={})
    assert resp.status_code == 404
    detail = resp.json()["errors"][0]["detail"]
    assert "serves only /v2/available_phone_numbers, /v2/number_orders, /v2/phone_numbers" in detail
    assert "POST /v2/calls" in detail
    assert not stub.counts


async def test_the_numbers_stub_combines_with_a_calls_handler(autojump_clock) -> None:
    stub = StubNumbers()
    calls = Script(fixture(200, "dial_response"))
    async with open_client("k", transport=httpx.MockTransport(stub.or_else(calls))) as client:
        telnyx = TelnyxHttp(client, "conn-1")
        await telnyx.available_numbers()
        assert (await telnyx.dial(PLAN, SECRETS)).call_control_id == CCID
    assert stub.counts == {"available_numbers": 1} and len(calls.seen) == 1


async def test_the_numbers_stub_checks_the_api_key(autojump_clock) -> None:
    stub = StubNumbers(api_key="right")
    async with open_client("wrong", transport=stub.transport()) as client:
        with pytest.raises(TelnyxError, match="check TELNYX_API_KEY"):
            await TelnyxHttp(client, "c").available_numbers()
