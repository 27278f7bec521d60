"""Domain events: everything that can happen to a call, from any transport or timer.

Adapters turn wire JSON into these; the runtime turns timer expiry and its own
failures into these. Each has a stable `kind` (the journal's tag). Audio is 16 kHz
mono PCM16LE by the time it is an event: codecs live in the media adapter.
"""

from __future__ import annotations

from typing import ClassVar, Literal

from attrs import field, frozen

from calld.core.answers import Aisle, Hours, NoSetHours, Stock
from calld.domain.ids import CallControlId, StreamId


def _audio_repr(pcm: bytes) -> str:
    return f"<{len(pcm)} bytes>"


# -- the call's own start ---------------------------------------------------------------------


@frozen
class Begin:
    """The request is accepted and the call may be placed."""

    kind: ClassVar[str] = "begin"


@frozen
class DialAccepted:
    kind: ClassVar[str] = "dial.accepted"
    call_control_id: CallControlId


@frozen
class DialFailed:
    kind: ClassVar[str] = "dial.failed"
    reason: str


# -- Telnyx Call Control webhooks -------------------------------------------------------------


@frozen
class CallInitiated:
    kind: ClassVar[str] = "telnyx.call.initiated"
    call_control_id: CallControlId


@frozen
class CallAnswered:
    kind: ClassVar[str] = "telnyx.call.answered"
    call_control_id: CallControlId


@frozen
class CallHungUp:
    kind: ClassVar[str] = "telnyx.call.hangup"
    call_control_id: CallControlId
    cause: str
    source: str
    sip_cause: str | None = None


@frozen
class MachineDetected:
    """Answering machine detection finished (advisory: a business IVR may read as a machine)."""

    kind: ClassVar[str] = "telnyx.machine.detected"
    result: str


@frozen
class MachineGreetingEnded:
    """A machine's greeting ended (`beep_detected`, `ended`, `no_beep_detected`, `not_sure`): the tone to record after."""

    kind: ClassVar[str] = "telnyx.machine.greeting_ended"
    result: str


@frozen
class StreamingFailed:
    kind: ClassVar[str] = "telnyx.streaming.failed"
    reason: str


# -- Telnyx media WebSocket -------------------------------------------------------------------


@frozen
class MediaConnected:
    kind: ClassVar[str] = "media.connected"


@frozen
class MediaStarted:
    kind: ClassVar[str] = "media.started"
    stream_id: StreamId
    call_control_id: CallControlId | None
    encoding: str
    sample_rate: int


@frozen
class MediaAudio:
    """One inbound frame from the business, decoded to 16 kHz PCM16LE. `chunk` is Telnyx's counter.
    `stream_id` is the frame's (the adapter names the started stream when the frame names none): a frame
    of any other stream is not this call's audio."""

    kind: ClassVar[str] = "media.audio"
    pcm: bytes = field(repr=_audio_repr)
    chunk: int
    stream_id: str | None = None  # None: the socket's own stream


@frozen
class InboundForwarded:
    """Inbound frames the media task sent on to GPT-Live itself, while the audio path let it
    (calld.core.audio_path), told to the reducer as one stretch: counted here, never sent again.
    `loud` holds each frame's loudness when the path asked for it (the hold-music watch), else ()."""

    kind: ClassVar[str] = "media.audio_forwarded"
    frames: int
    pcm_bytes: int
    first_chunk: int
    last_chunk: int
    loud: tuple[bool, ...] = ()


@frozen
class InboundHeld:
    """Inbound frames that came before GPT-Live was ready (calld.core.audio_path), written to the
    recording by the media task and told as one stretch, PCM and all: the reducer holds them, as
    it would each frame, to send them on in order once the session starts."""

    kind: ClassVar[str] = "media.audio_held"
    frames: tuple[MediaAudio, ...] = field(repr=lambda frames: f"<{len(frames)} frames>")

    def __attrs_post_init__(self) -> None:
        if not self.frames:
            raise ValueError("a held stretch has at least one frame")


@frozen
class InboundRecorded:
    """Inbound frames the media task wrote to the recording itself once GPT-Live was gone (its
    session closing or over, the call winding down, calld.core.audio_path), told as one stretch:
    the reducer would only have counted each, so here it counts them all."""

    kind: ClassVar[str] = "media.audio_recorded"
    frames: int
    pcm_bytes: int
    first_chunk: int
    last_chunk: int


@frozen
class MarkEchoed:
    """A mark's echo: the audio sent before it has played, on the stream it names (see MediaAudio.stream_id)."""

    kind: ClassVar[str] = "media.mark"
    name: str
    stream_id: str | None = None  # None: the socket's own stream


@frozen
class DtmfReceived:
    kind: ClassVar[str] = "media.dtmf"
    digit: str


@frozen
class MediaError:
    kind: ClassVar[str] = "media.error"
    code: int
    title: str


@frozen
class MediaStopped:
    """The stream ended: a `stop` frame, or the socket went away (`reason` says which)."""

    kind: ClassVar[str] = "media.stopped"
    reason: str


# -- GPT-Live ---------------------------------------------------------------------------------


@frozen
class LiveStarted:
    kind: ClassVar[str] = "live.started"
    session_id: str


@frozen
class LiveError:
    """An `error` event. `fatal` when it replaced `session.started` (the session never began)."""

    kind: ClassVar[str] = "live.error"
    code: str
    message: str
    fatal: bool


@frozen
class InputTranscript:
    """What the business said, as GPT-Live heard it (a fragment, with its own spacing).

    start_ms/end_ms place it on the session timeline (None when GPT-Live gave no times).
    """

    kind: ClassVar[str] = "live.input_transcript"
    text: str
    start_ms: int | None = None
    end_ms: int | None = None


@frozen
class OutputTranscript:
    """What the agent said (a fragment), placed on the session timeline like the business's words."""

    kind: ClassVar[str] = "live.output_transcript"
    text: str
    start_ms: int | None = None
    end_ms: int | None = None


@frozen
class ResponseDone:
    """The backend finished a response (completed, failed or incomplete): all its function calls are in."""

    kind: ClassVar[str] = "live.response_done"
    status: str


@frozen
class OutputAudio:
    kind: ClassVar[str] = "live.output_audio"
    pcm: bytes = field(repr=_audio_repr)


@frozen
class OutputForwarded:
    """GPT-Live audio deltas the GPT-Live task played to the line itself, while the audio path
    let it, told to the reducer as one stretch."""

    kind: ClassVar[str] = "live.output_audio_forwarded"
    deltas: int
    pcm_bytes: int


TaskStatus = Literal["answered", "declined", "voicemail", "unclear"]  # a quick ask's record_task_result
BookStatus = Literal["booked", "declined", "voicemail", "in_progress"]  # a booking's record_task_result
TERMINAL_TASK_STATUSES: frozenset[str] = frozenset({"answered", "declined", "voicemail", "booked"})
"""A record with one of these ends the conversation; `unclear` and `in_progress` only note progress."""


@frozen
class BookingDetails:
    """A booking's record_task_result arguments, validated by the adapter (see gpt_live.py)."""

    confirmation_text: str | None = None
    party: int | None = None
    time: str | None = None
    constraints: str | None = None
    minutes_from_requested: int | None = None
    alternative_offered: str | None = None
    reason: str | None = None
    unanswered_questions: tuple[str, ...] = ()
    reason_code: str | None = None  # declined: fully_booked | no_slot_in_window | details_missing | refused


@frozen
class TaskRecorded:
    """The backend called record_task_result with valid arguments.

    A quick ask's record carries answer_text, notes and its typed `answer` (hours, stock or aisle);
    a booking's carries `booking`. `arguments` is the JSON as the model sent it, per-fact quotes and all:
    calld.evidence.check_record checks that. `reason` is a declined quick ask's code.
    `opt_out` is the business's words asking not to be called again, as the model quoted them: it binds
    whether or not the record itself holds (calld.policy.optout checks the business said them).
    """

    kind: ClassVar[str] = "tool.record_task_result"
    call_id: str
    status: TaskStatus | BookStatus
    answer_text: str | None
    notes: str | None = None
    booking: BookingDetails | None = None
    quotes: tuple[str, ...] = ()
    answer: Hours | NoSetHours | Stock | Aisle | None = None
    reason: str | None = None
    arguments: str = field(default="", eq=False)  # the tool call's arguments, the JSON as the model sent it (calld.evidence.check reads it)
    opt_out: str | None = None


@frozen
class EndCallRequested:
    kind: ClassVar[str] = "tool.end_call"
    call_id: str
    reason: str | None = None


DTMF_KEYS = frozenset("0123456789*#ABCD")


@frozen
class DtmfRequested:
    """The backend called send_dtmf with valid keys (0-9 * # A-D): press them on the line."""

    kind: ClassVar[str] = "tool.send_dtmf"
    call_id: str
    digits: str


@frozen
class DtmfSent:
    """The runtime performed a SendDtmf: Telnyx took the keys (error None) or refused them."""

    kind: ClassVar[str] = "dtmf.sent"
    call_id: str
    digits: str
    error: str | None = None


@frozen
class ToolCallRejected:
    """A function call we cannot act on (unknown tool, bad arguments); the model is told why."""

    kind: ClassVar[str] = "tool.rejected"
    call_id: str
    name: str
    error: str
    opt_out: str | None = None  # a refused record's opt_out_quote, still read: an opt-out is never lost


@frozen
class LiveClosed:
    """The GPT-Live session is over: `session.closed` came, or the socket ended. Exactly once."""

    kind: ClassVar[str] = "live.closed"
    reason: str


@frozen
class LiveSilent:
    """The GPT-Live socket is open and has sent nothing at all (no audio, silence included, no event) for
    `quiet_s` since the session started: measured by the live transport, where the frames arrive (the
    steady downlink forwards deltas without a step each). Told again each further `quiet_s` of nothing."""

    kind: ClassVar[str] = "live.silent"
    quiet_s: float


# -- timers (scheduled by the reducer, fired by the runtime) ----------------------------------


@frozen
class StallElapsed:
    kind: ClassVar[str] = "timer.stall"


@frozen
class FarewellElapsed:
    kind: ClassVar[str] = "timer.farewell_max"


@frozen
class LiveCloseTimedOut:
    kind: ClassVar[str] = "timer.close_timeout"


@frozen
class DrainTimedOut:
    kind: ClassVar[str] = "timer.drain_timeout"


@frozen
class TrailElapsed:
    kind: ClassVar[str] = "timer.trail"


@frozen
class HangupConfirmTimedOut:
    kind: ClassVar[str] = "timer.hangup_confirm"


@frozen
class MediaLostElapsed:
    """The media socket went away without a stop frame, and no call.hangup followed in time."""

    kind: ClassVar[str] = "timer.media_lost"


@frozen
class CallCapElapsed:
    kind: ClassVar[str] = "timer.call_cap"


@frozen
class RingElapsed:
    """The dial was accepted RING_TIMEOUT_S ago and neither call.answered nor the call's end came (media or not)."""

    kind: ClassVar[str] = "timer.ring"


@frozen
class LiveReadyElapsed:
    """GPT-Live was asked to start LIVE_READY_S ago and session.started has not come."""

    kind: ClassVar[str] = "timer.live_ready"


@frozen
class MediaWaitElapsed:
    """The call was answered MEDIA_START_S ago and its media stream has not started."""

    kind: ClassVar[str] = "timer.media_wait"


# -- the runtime's own failures ---------------------------------------------------------------


@frozen
class CallCrashed:
    """A transport task or an effect raised; the call must end, cleanly, as failed."""

    kind: ClassVar[str] = "call.crashed"
    error: str


@frozen
class CallCut:
    """The daemon is stopping and the call's drain is over (SHUTDOWN_DRAIN_S ran out, or a second SIGTERM
    cut it): the call ends now, as failed with a reason of its own (shutdown), not as calld's own fault."""

    kind: ClassVar[str] = "call.cut"
    detail: str


TimerEvent = (
    StallElapsed
    | FarewellElapsed
    | LiveCloseTimedOut
    | DrainTimedOut
    | TrailElapsed
    | HangupConfirmTimedOut
    | MediaLostElapsed
    | CallCapElapsed
    | RingElapsed
    | MediaWaitElapsed
    | LiveReadyElapsed
)

Event = (
    Begin
    | DialAccepted
    | DialFailed
    | CallInitiated
    | CallAnswered
    | CallHungUp
    | MachineDetected
    | MachineGreetingEnded
    | StreamingFailed
    | MediaConnected
    | MediaStarted
    | MediaAudio
    | InboundForwarded
    | InboundHeld
    | InboundRecorded
    | MarkEchoed
    | DtmfReceived
    | MediaError
    | MediaStopped
    | LiveStarted
    | LiveError
    | InputTranscript
    | OutputTranscript
    | OutputAudio
    | OutputForwarded
    | ResponseDone
    | TaskRecorded
    | EndCallRequested
    | DtmfRequested
    | DtmfSent
    | ToolCallRejected
    | LiveClosed
    | LiveSilent
    | TimerEvent
    | CallCrashed
    | CallCut
)
