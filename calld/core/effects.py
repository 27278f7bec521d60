"""Effects: what the reducer asks the runtime to do. Plain data, performed in order.

The runtime maps each to one port call (TelnyxHttp, TelnyxMedia, GptLive), a timer,
or nothing else. Timers are data too: `Schedule` names a key, so a later `Schedule`
or `Cancel` with that key replaces or stops it.
"""

from __future__ import annotations

from typing import ClassVar

from attrs import field, frozen

from calld.core.events import TimerEvent, _audio_repr
from calld.core.plan import DialPlan, LivePlan


@frozen
class PlaceDial:
    kind: ClassVar[str] = "dial"
    plan: DialPlan


@frozen
class OpenLive:
    """Connect to GPT-Live and send `session.start` built from the plan."""

    kind: ClassVar[str] = "live.open"
    plan: LivePlan


@frozen
class SendLiveAudio:
    kind: ClassVar[str] = "live.audio"
    pcm: bytes = field(repr=_audio_repr)
    chunk: int
    held: bool = False


@frozen
class AppendCommentary:
    """Context the live model should say (paraphrased); how the agent speaks first."""

    kind: ClassVar[str] = "live.commentary"
    text: str


@frozen
class SendToolOutput:
    kind: ClassVar[str] = "live.tool_output"
    call_id: str
    output: str


@frozen
class ContinueResponse:
    """`response.create`: let the backend go on after the tool outputs just sent."""

    kind: ClassVar[str] = "live.response_create"


@frozen
class CloseLive:
    """`session.close`: the server flushes what it still has to say, then `session.closed`."""

    kind: ClassVar[str] = "live.close"


@frozen
class AbortLive:
    """Drop the GPT-Live socket without waiting any longer."""

    kind: ClassVar[str] = "live.abort"


@frozen
class SendMediaAudio:
    kind: ClassVar[str] = "media.audio"
    pcm: bytes = field(repr=_audio_repr)


@frozen
class SendMark:
    kind: ClassVar[str] = "media.mark"
    name: str


@frozen
class SendDtmf:
    """Press keys on the line: Telnyx's out-of-band `actions/send_dtmf`, keyed by command_id."""

    kind: ClassVar[str] = "dtmf"
    call_id: str
    digits: str
    command_id: str


@frozen
class Hangup:
    kind: ClassVar[str] = "hangup"
    via: str


@frozen
class Schedule:
    kind: ClassVar[str] = "schedule"
    key: str
    delay_s: float
    event: TimerEvent


@frozen
class Cancel:
    kind: ClassVar[str] = "cancel"
    key: str


Effect = (
    PlaceDial
    | OpenLive
    | SendLiveAudio
    | AppendCommentary
    | SendToolOutput
    | ContinueResponse
    | CloseLive
    | AbortLive
    | SendMediaAudio
    | SendMark
    | SendDtmf
    | Hangup
    | Schedule
    | Cancel
)
