"""Placing one quick-ask call: from a validated request to a result, live or stub.

`prepare` turns a request into a CallPlan (the ledger supplies the user's number);
`run_stub_call` runs that plan against the stub world through the very CallHandle,
adapters and reducer a live call uses.
"""

from __future__ import annotations

import hmac
import uuid
from collections.abc import Callable
from typing import Any
from pathlib import Path

import httpx
import trio
from attrs import frozen

from calld.adapters.telnyx_http import TelnyxHttp
from calld.adapters.telnyx_webhook import WebhookError, parse_webhook
from calld.core.plan import CallPlan, build_plan
from calld.domain import results
from calld.domain.ids import RunId
from calld.domain.requests import AskRequest
from calld.ledger import Ledger
from calld.ops.redaction import Pseudonyms
from calld.runtime.behind import Behind
from calld.runtime.disk import DiskWork, inline
from calld.runtime.handle import CallHandle, CallPorts
from calld.runtime.rundir import RunDir
from calld.runtime.sockets import MemorySocket
from calld.settings import Settings
from calld.stub.scenario import SCENARIOS, Scenario
from calld.stub.signing import StubSigner
from calld.stub.world import StubWorld

STUB_MEDIA_URL = "wss://calld.stub.invalid/telnyx/media"
STUB_WEBHOOK_URL = "https://calld.stub.invalid/telnyx/webhook"


def plan_inputs(settings: Settings, run_id: RunId | None) -> dict[str, Any]:
    """What every job's plan takes from the settings, plus this call's fresh ids."""
    return {
        "run_id": run_id or RunId.new(),
        "command_id": str(uuid.uuid4()),
        "live_model": settings.openai_live_model,
        "backend_model": settings.openai_responses_model,
        "reasoning_effort": settings.openai_responses_effort,
        "voice": settings.openai_live_voice,
        "timings": settings.timings(),
        "amd_mode": settings.telnyx_amd_mode,
        "instance": settings.calld_instance,
    }


def prepare(request: AskRequest, settings: Settings, ledger: Ledger, run_id: RunId | None = None) -> CallPlan:
    """Raises UnknownUser (with the command that fixes it) before anything is written."""
    from_did = ledger.did_for(request.user)
    return build_plan(
        user_id=request.user,
        first_name=request.name,
        to=request.to,
        from_=from_did,
        question=request.ask,
        item=request.item,
        **plan_inputs(settings, run_id),
    )


@frozen
class StubRun:
    result: results.CallResult
    artifacts: Path
    world: StubWorld


def stub_scenario_for(request: AskRequest) -> str:
    """The scripted business that fits the question, unless a scenario was named."""
    return request.ask.value


async def run_stub_call(
    plan: CallPlan,
    settings: Settings,
    scenario: Scenario | str = "hours",
    *,
    on_handle: Callable[[CallHandle], None] | None = None,
    signer: StubSigner | None = None,
    disk: DiskWork = inline,
    pseudonyms: Pseudonyms | None = None,
    behind: Behind | None = None,
) -> StubRun:
    """Run one call against the stub world. `on_handle` sees the handle before it runs (the daemon
    registers it in its CallBook and listens to its progress there). The world signs its webhooks
    with `signer` and calld verifies them with its public key, as the public route does. The redacted
    report names the user under `pseudonyms` (the daemon's), else under the state dir's key."""
    if isinstance(scenario, str):
        scenario = SCENARIOS[scenario]
    signer = signer or StubSigner()
    verify = signer.verifier()
    rundir = RunDir(settings.artifacts_dir, plan.run_id, settings.secrets())
    handle: CallHandle | None = None

    async def post_webhook(raw: bytes) -> None:
        headers = signer.sign(raw)  # the world's side of the wire
        try:
            verify(raw, headers)  # calld's side
            webhook = parse_webhook(raw)
        except (ValueError, WebhookError):
            return  # a live route answers 401 or 400; the stub only ever sends signed, well-formed bodies
        assert handle is not None
        await handle.deliver_webhook(webhook)

    async def open_media(url: str, headers: dict[str, str], socket: MemorySocket) -> None:
        # What the live media route checks: the per-call token in the path and the auth header.
        assert handle is not None
        token = url.rsplit("/", 1)[-1]
        auth = headers.get("x-telnyx-streaming-auth-token", "")
        if not (hmac.compare_digest(token, handle.media_token) and hmac.compare_digest(auth, handle.stream_auth_token)
                and handle.claim_media()):
            await socket.aclose()
            return
        await handle.attach_media(socket)
        await socket.aclose()

    async with trio.open_nursery() as world_nursery:
        world = StubWorld(scenario, world_nursery, post_webhook=post_webhook, open_media=open_media)
        async with httpx.AsyncClient(transport=world.transport(), base_url="https://api.telnyx.com") as client:
            ports = CallPorts(
                telnyx=TelnyxHttp(client, connection_id="stub-connection"),
                connect_live=world.connect_live,
                public_media_url=STUB_MEDIA_URL,
                webhook_url=STUB_WEBHOOK_URL,
                l16_byte_order=settings.telnyx_l16_byte_order,
                disk=disk,
                behind=behind or Behind(),  # the daemon's queue of finishing work, shared by its calls
            )
            handle = CallHandle(plan, ports, rundir, pseudonyms=pseudonyms or Pseudonyms.in_state_dir(settings.calld_state_dir))
            if on_handle is not None:
                on_handle(handle)
            result = await handle.run()
        world_nursery.cancel_scope.cancel()
    return StubRun(result, rundir.path, world)


async def run_live_call(
    plan: CallPlan,
    settings: Settings,
    ports: CallPorts,
    *,
    on_handle: Callable[[CallHandle], None] | None = None,
    pseudonyms: Pseudonyms | None = None,
) -> results.CallResult:
    """Run one call on real transports: the daemon's routes feed it webhooks and the media socket."""
    rundir = RunDir(settings.artifacts_dir, plan.run_id, settings.secrets())
    handle = CallHandle(plan, ports, rundir, pseudonyms=pseudonyms or Pseudonyms.in_state_dir(settings.calld_state_dir))
    if on_handle is not None:
        on_handle(handle)
    return await handle.run()
