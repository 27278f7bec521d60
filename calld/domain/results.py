"""Results of a call: closed unions on `status`, built so a contradiction cannot be.

`answered` requires answer_text; every other status pins it to None. A completed
call (the business picked up and a verdict came from the conversation) carries
transcript_ref and audio_ref; a call that never connected carries neither.
pydantic models: they are what result.json and the control API speak.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, StringConstraints

from calld.domain.ids import CallControlId, RunId

NonEmpty = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=2000)]

VerdictSource = Literal["tool", "transcript", "none"]


class _Result(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")
    run_id: RunId
    call_control_id: CallControlId | None


class _Completed(_Result):
    call_control_id: CallControlId
    transcript_ref: NonEmpty
    audio_ref: NonEmpty
    verdict_source: VerdictSource


class Answered(_Completed):
    status: Literal["answered"] = "answered"
    answer_text: NonEmpty


class Declined(_Completed):
    status: Literal["declined"] = "declined"
    answer_text: None = None
    reason: str | None = None


class Voicemail(_Completed):
    status: Literal["voicemail"] = "voicemail"
    answer_text: None = None


class NoAnswer(_Result):
    status: Literal["no_answer"] = "no_answer"
    answer_text: None = None
    hangup_cause: str | None = None


class Failed(_Result):
    status: Literal["failed"] = "failed"
    answer_text: None = None
    reason: NonEmpty
    transcript_ref: str | None = None
    audio_ref: str | None = None


QuickAskResult = Annotated[
    Answered | Declined | Voicemail | NoAnswer | Failed, Field(discriminator="status")
]
