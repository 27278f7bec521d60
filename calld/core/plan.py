"""What a call is meant to do, fixed before it starts: the dial, the GPT-Live session, the timings.

Pure values built from a validated request and settings. Secrets (the media
token, the stream auth token) are not here: the runtime adds them at the wire,
so nothing that is journaled can leak them.
"""

from __future__ import annotations

from attrs import frozen

from calld.domain.ids import E164, FirstName, RunId, UserId
from calld.domain.questions import QUESTIONS, QuestionType

HANGUP_MARK = "HANGUP_MARK"
RECORD_TASK_RESULT = "record_task_result"
END_CALL = "end_call"


@frozen
class Timings:
    """Every wait in a call, in seconds. Each is a setting (see calld.settings)."""

    pickup_hold_s: float = 5.0  # callee audio held before GPT-Live is ready; oldest dropped past it
    farewell_max_s: float = 8.0  # longest wait for the closing line to be spoken
    farewell_quiet_s: float = 1.0  # a gap this long in the agent's transcript ends the closing line
    close_timeout_s: float = 10.0  # session.close -> session.closed, at most
    drain_timeout_s: float = 10.0  # our hangup mark -> its echo, at most
    trail_s: float = 0.4  # silence left after the echo before the hangup
    hangup_confirm_s: float = 5.0  # our hangup -> Telnyx call.hangup, at most
    stall_s: float = 20.0  # no speech from either side this long: steer once, then hang up
    max_call_s: float = 300.0  # the whole call, from dial acceptance


@frozen
class DialPlan:
    to: E164
    from_: E164
    run_id: RunId
    command_id: str
    codec: str = "L16"
    sample_rate: int = 16000
    target_legs: str = "self"
    timeout_secs: int = 30
    time_limit_secs: int = 600


@frozen
class LivePlan:
    model: str
    instructions: str
    backend_model: str
    backend_instructions: str
    reasoning_effort: str
    voice: str
    sample_rate: int = 16000


@frozen
class CallPlan:
    run_id: RunId
    user_id: UserId
    first_name: FirstName
    question: QuestionType
    item: str | None
    ask_line: str
    opener: str
    dial: DialPlan
    live: LivePlan
    timings: Timings

    @property
    def to(self) -> E164:
        return self.dial.to


def disclosure_line(first_name: FirstName) -> str:
    return f"Hi, this is an automated assistant calling on behalf of {first_name}."


def build_plan(
    *,
    run_id: RunId,
    user_id: UserId,
    first_name: FirstName,
    to: E164,
    from_: E164,
    question: QuestionType,
    item: str | None,
    command_id: str,
    live_model: str,
    backend_model: str,
    reasoning_effort: str,
    voice: str,
    timings: Timings,
) -> CallPlan:
    ask = QUESTIONS[question].ask_line(item)
    disclosure = disclosure_line(first_name)
    # GPT-Live speaks a "say exactly" commentary literally; the disclosure comes first by construction.
    opener = f'Start speaking now. Say exactly this, and nothing before it: "{disclosure} {ask}" Then listen.'
    instructions = (
        f"You are an automated assistant phoning a business on behalf of {first_name}. "
        f"Your first words on the call always say that you are an automated assistant calling on behalf of "
        f"{first_name}. You have one question: {ask} Listen to the whole answer and do not interrupt. "
        "Never invent details you were not given; if asked for one, say you will check with "
        f"{first_name}. When the business has answered, or will not answer, let your backend record it. "
        "Once it is recorded, thank them in one short sentence and say goodbye."
    )
    backend = (
        f"Call {RECORD_TASK_RESULT} as soon as the business has answered the question "
        "(status answered, answer_text in their own words), refused or could not answer (status declined), "
        "or the call reached voicemail (status voicemail). Use status unclear only to note that the question "
        f"must be asked again. Record a final status once. After the closing line, call {END_CALL}."
    )
    return CallPlan(
        run_id=run_id,
        user_id=user_id,
        first_name=first_name,
        question=question,
        item=item,
        ask_line=ask,
        opener=opener,
        dial=DialPlan(to=to, from_=from_, run_id=run_id, command_id=command_id),
        live=LivePlan(
            model=live_model,
            instructions=instructions,
            backend_model=backend_model,
            backend_instructions=backend,
            reasoning_effort=reasoning_effort,
            voice=voice,
        ),
        timings=timings,
    )
