"""The state of one call: a product of small tracks, each a closed union of frozen classes.

A track is a fact that advances on its own: the dial, Telnyx's view of the call,
the media stream, the GPT-Live session, the conversation and the hangup. Every
class has a `kind` ClassVar; the journal records a track's kind when it changes.
`Call` also carries plain data the tracks share (transcript, task, counters).
"""

from __future__ import annotations

from typing import ClassVar, Literal

from attrs import field, frozen

from calld.core.events import TaskRecorded
from calld.core.plan import CallPlan
from calld.domain.ids import CallControlId, StreamId
from calld.domain.status import FailedReason
from calld.domain.transcript import Turn
from calld.domain.transcript import Quote

# -- dial --------------------------------------------------------------------------------------


@frozen
class DialPending:
    kind: ClassVar[str] = "pending"


@frozen
class DialSent:
    kind: ClassVar[str] = "requested"


@frozen
class Dialed:
    kind: ClassVar[str] = "accepted"
    call_control_id: CallControlId


@frozen
class DialRejected:
    kind: ClassVar[str] = "rejected"
    reason: str


DialTrack = DialPending | DialSent | Dialed | DialRejected

# -- Telnyx call (from webhooks) ---------------------------------------------------------------


@frozen
class TelnyxIdle:
    kind: ClassVar[str] = "idle"


@frozen
class TelnyxInitiated:
    kind: ClassVar[str] = "initiated"


@frozen
class TelnyxAnswered:
    kind: ClassVar[str] = "answered"


@frozen
class TelnyxEnded:
    kind: ClassVar[str] = "ended"
    cause: str
    source: str
    sip_cause: str | None
    was_answered: bool


TelnyxTrack = TelnyxIdle | TelnyxInitiated | TelnyxAnswered | TelnyxEnded

# -- media stream ------------------------------------------------------------------------------


@frozen
class MediaIdle:
    kind: ClassVar[str] = "idle"


@frozen
class MediaOpen:
    kind: ClassVar[str] = "connected"


@frozen
class MediaStreaming:
    kind: ClassVar[str] = "streaming"
    stream_id: StreamId
    encoding: str
    sample_rate: int


@frozen
class MediaEnded:
    kind: ClassVar[str] = "stopped"
    reason: str


MediaTrack = MediaIdle | MediaOpen | MediaStreaming | MediaEnded

# -- GPT-Live session --------------------------------------------------------------------------


@frozen
class HeldAudio:
    """Callee audio kept while GPT-Live is not ready: oldest first, capped by bytes."""

    frames: tuple[tuple[int, bytes], ...] = ()
    size: int = 0
    dropped: int = 0


@frozen
class LiveIdle:
    kind: ClassVar[str] = "idle"
    held: HeldAudio = HeldAudio()


@frozen
class LiveStarting:
    kind: ClassVar[str] = "starting"
    held: HeldAudio = HeldAudio()


@frozen
class LiveActive:
    kind: ClassVar[str] = "active"
    session_id: str


@frozen
class LiveClosing:
    kind: ClassVar[str] = "closing"


@frozen
class LiveDone:
    kind: ClassVar[str] = "closed"
    reason: str


@frozen
class LiveFailed:
    kind: ClassVar[str] = "failed"
    message: str


LiveTrack = LiveIdle | LiveStarting | LiveActive | LiveClosing | LiveDone | LiveFailed

# -- conversation ------------------------------------------------------------------------------


@frozen
class ConvWaiting:
    """GPT-Live is not live yet; the agent has not been asked to speak."""

    kind: ClassVar[str] = "waiting"


@frozen
class ConvTalking:
    kind: ClassVar[str] = "talking"
    steered: bool = False
    # Whose words the silence that drew the steer came after: the other party owed the next word.
    quiet_after: Literal["agent", "business"] | None = None

    def __attrs_post_init__(self) -> None:
        if self.quiet_after is not None and not self.steered:
            raise ValueError("quiet_after is what the steer kept: a conversation not steered has none")


@frozen
class Verdict:
    """An accepted record: the business's quotes that support it, and the reason code they give."""

    quotes: tuple[Quote, ...]
    reason: str | None = None  # declined: refused, unknown, fully_booked, ...
    source: Literal["tool"] = "tool"


@frozen
class ConvConcluded:
    """A terminal record_task_result arrived and the evidence gate accepted it: the verdict is in."""

    kind: ClassVar[str] = "concluded"
    task: TaskRecorded
    verdict: Verdict = Verdict(())
    # The business said more than a courtesy during our goodbye: the farewell was called off and the
    # conversation goes on (hangup back to none) with the verdict kept. Counts the times it happened.
    reopened: int = 0
    # The business corrected itself after an accepted record, and a later record citing the correction
    # took its place (the last word wins).
    corrected: bool = False


@frozen
class RefusedRecord:
    """A record the evidence gate turned back: the model was told why and may record again."""

    call_id: str
    status: str
    why: str


ConvTrack = ConvWaiting | ConvTalking | ConvConcluded

# -- hangup ------------------------------------------------------------------------------------

Via = Literal[
    "tool", "opt_out", "drain_timeout", "failure", "stall", "far_party", "time_limit", "not_connected", "wrong_party",
    "voicemail", "information_line", "answer_heard",
]


@frozen
class HangupNone:
    kind: ClassVar[str] = "none"


@frozen
class HangupPending:
    """The call failed before Telnyx named it: hang up as soon as the dial is accepted."""

    kind: ClassVar[str] = "pending"
    via: Via


# Copied on every audio frame: no slots, so calld.core.replace.evolve copies its __dict__ in C.
@frozen(slots=False)
class HangupFarewell:
    """The verdict is in; waiting for the closing line to be spoken (or farewell_max_s).

    Judged from GPT-Live's output audio, never from the clock: `heard` once a loud delta of the
    closing line arrived, then `quiet` counts the bytes of silent deltas since the last loud one
    (or the business's last words). `business_from` is where the business's words stood when the
    farewell began: what they say after it decides whether the goodbye is called off.
    """

    kind: ClassVar[str] = "farewell"
    via: Via
    heard: bool = False
    quiet: int = 0
    business_from: int = 0


@frozen
class HangupDraining:
    """`session.close` sent; forwarding the flushed audio until GPT-Live has closed."""

    kind: ClassVar[str] = "draining"
    via: Via


@frozen
class HangupMarked:
    """The one mark is behind the last audio; waiting for Telnyx to echo it (played)."""

    kind: ClassVar[str] = "marked"
    via: Via


@frozen
class HangupTrailing:
    kind: ClassVar[str] = "trailing"
    via: Via


@frozen
class HangupRequested:
    """Our hangup went to Telnyx; waiting for call.hangup to confirm it."""

    kind: ClassVar[str] = "requested"
    via: Via


@frozen
class HangupDone:
    kind: ClassVar[str] = "done"
    via: Via
    confirmed: bool


HangupTrack = (
    HangupNone
    | HangupPending
    | HangupFarewell
    | HangupDraining
    | HangupMarked
    | HangupTrailing
    | HangupRequested
    | HangupDone
)

# -- the call ----------------------------------------------------------------------------------

@frozen
class Failure:
    """Why the call failed: a reason code the user can act on, and a sentence for a person."""

    reason: FailedReason
    detail: str


HoldEnd = Literal["returned", "timeout", "call_ended"]


# Copied on every audio frame: no slots, so calld.core.replace.evolve copies its __dict__ in C.
@frozen(slots=False)
class Hold:
    """One wait on hold. `quiet` counts inbound frames since the business last spoke (words)."""

    cue: str
    ended: HoldEnd | None = None
    quiet: int = 0


@frozen
class MenuProgress:
    """Menu presses in a row, and where the business's words stood at the last press."""

    presses: int = 0
    heard_mark: int = 0


# Copied on every audio frame: no slots, so calld.core.replace.evolve copies its __dict__ in C.
@frozen(slots=False)
class Counters:
    audio_in: int = 0
    audio_in_bytes: int = 0  # 16 kHz PCM16: 32 bytes a millisecond of audio/inbound.wav
    audio_to_live: int = 0
    audio_from_live: int = 0
    audio_to_media: int = 0
    audio_after_verdict: int = 0
    held_frames: int = 0
    flushed_frames: int = 0
    dropped_frames: int = 0
    marks_sent: int = 0
    marks_echoed: int = 0
    tool_calls: int = 0
    dtmf_presses: int = 0
    farewells_reopened: int = 0
    hangups_sent: int = 0


# Copied on every audio frame: no slots, so calld.core.replace.evolve copies its __dict__ in C.
@frozen(slots=False)
class Call:
    plan: CallPlan
    dial: DialTrack = DialPending()
    telnyx: TelnyxTrack = TelnyxIdle()
    media: MediaTrack = MediaIdle()
    live: LiveTrack = LiveIdle()
    conversation: ConvTrack = ConvWaiting()
    hangup: HangupTrack = HangupNone()
    transcript: tuple[Turn, ...] = ()
    tool_call_ids: frozenset[str] = frozenset()
    tools: tuple[str, ...] = ()  # tool names in arrival order, for the report
    end_call_seen: bool = False
    unanswered: tuple[str, ...] = ()  # a booking: questions the business asked that the request does not answer
    machine: str | None = None
    live_origin_ms: int = 0  # where GPT-Live's session timeline starts in audio/inbound.wav
    refused_records: tuple[RefusedRecord, ...] = ()
    continue_due: bool = False  # a tool output wants response.create once the backend's response is done
    failure: Failure | None = None  # the first failure stands
    holds: tuple[Hold, ...] = ()  # every hold, in order; the last is ongoing when not ended
    # Where the business's current stretch of speech starts: (turn index, character offset). The
    # situation checks (calld.core.situations) read the business's words from here on.
    segment: tuple[int, int] = (0, 0)
    line_sound: int = 0  # consecutive loud inbound frames with no business words (music?)
    screened: bool = False
    recording: str | None = None  # the phrase that showed a recorded greeting (voicemail, an information line)
    menu: MenuProgress = MenuProgress()
    counters: Counters = field(factory=Counters)
    opt_out: str | None = None  # the business's words asking not to be called again (calld.policy.optout)
    # The agent's own words claiming to be a person or denying it is automated; the app made it
    # correct itself at once (HONESTY_CORRECTION_LINE), and the result says so.
    honesty_claim: str | None = None

    @property
    def finished(self) -> bool:
        return isinstance(self.hangup, HangupDone)

    @property
    def on_hold(self) -> bool:
        return bool(self.holds) and self.holds[-1].ended is None

    @property
    def task(self) -> TaskRecorded | None:
        return self.conversation.task if isinstance(self.conversation, ConvConcluded) else None

    @property
    def verdict(self) -> Verdict | None:
        return self.conversation.verdict if isinstance(self.conversation, ConvConcluded) else None

    @property
    def call_control_id(self) -> CallControlId | None:
        return self.dial.call_control_id if isinstance(self.dial, Dialed) else None


TRACKS: tuple[str, ...] = ("dial", "telnyx", "media", "live", "conversation", "hangup")
