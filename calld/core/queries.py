"""Queries on a Call: what it has heard and where it stands, read without changing it.

The reducer (calld.core.reduce) makes every transition; these only answer questions it asks on
the way (is GPT-Live open, what did the business say over our goodbye, is this a recording, how many
menu presses in a row, where a fragment goes on the transcript) and format what the model is told.
Like the rest of the core: no trio, sockets, clock or files.
"""

from __future__ import annotations

import json

from calld.core import assessment, situations
from calld.core import events as ev
from calld.core.plan import QuickAskJob
from calld.core.state import (
    Call, ConvConcluded, HangupDraining, HangupFarewell, HangupNone, LiveActive, LiveClosing, LiveStarting,
    MediaStreaming, Via,
)
from calld.domain.questions import QuestionType
from calld.domain.transcript import Speaker, Turn, add_fragment, latest_turn, sentence_spans


# A recording on the line (no goodbye to it, no message left): a voicemail, or an information line.
RECORDED: tuple[Via, ...] = ("voicemail", "information_line")
OWN_GOODBYES: tuple[Via, ...] = ("tool", "answer_heard")  # the agent's goodbye after an answer, not an apology


def live_is_open(call: Call) -> bool:
    return isinstance(call.live, LiveStarting | LiveActive | LiveClosing)


def agent_audible(call: Call) -> bool:
    """Does GPT-Live's audio reach the line now? Never on a recording (no message is ever left)."""
    return (
        isinstance(call.media, MediaStreaming)
        and isinstance(call.hangup, HangupNone | HangupFarewell | HangupDraining)
        and call.recording is None
    )


def tool_output(**fields: object) -> str:
    return json.dumps(fields, separators=(",", ":"))


def opt_out_words(call: Call) -> str:
    """Where an opt-out is looked for: the business's turn, or all it said over our goodbye after an
    answer (the closing line, said at the same time, splits their sentence into turns)."""
    if isinstance(call.hangup, HangupFarewell) and call.hangup.via in OWN_GOODBYES:
        return goodbye_talk(call, call.hangup)
    return latest_turn_of(call, "business")[1]


def latest_turn_of(call: Call, speaker: Speaker) -> tuple[int, str]:
    """The index and words of `speaker`'s latest turn: the one their last fragment went to (the
    other side's words may follow it, said over theirs)."""
    k = latest_turn(call.transcript, speaker)
    assert k is not None  # called once a fragment of theirs is in
    return k, call.transcript[k].text


def talking_after_verdict(call: Call) -> bool:
    """The goodbye was called off: the verdict stands and the conversation goes on."""
    return isinstance(call.hangup, HangupNone) and isinstance(call.conversation, ConvConcluded)


def goodbye_talk(call: Call, farewell: HangupFarewell) -> str:
    """What the business said since the farewell began."""
    return business_text(call)[farewell.business_from :]


def may_call_off(call: Call, farewell: HangupFarewell) -> bool:
    """Only our own goodbye after a verdict; an apology (opt-out, wrong party) is never called off, nor a
    goodbye the business answered by asking not to be called again: they want the call over."""
    return farewell.via == "tool" and isinstance(call.conversation, ConvConcluded) and call.opt_out is None


def recording_phrase(call: Call, said: str) -> str | None:
    """The phrase that makes the business's words a recording. Once they answer the agent's ask, only
    a machine's own cue does: a person may say "not available to take your call" too."""
    phrase = situations.recording(said)
    if phrase is None or not answering_the_ask(call):
        return phrase
    return situations.recording(said, in_conversation=True)


def answering_the_ask(call: Call) -> bool:
    """The business's turn comes after the agent said the ask on the line, as the outcome counts it."""
    return assessment.ask_said(call.plan.ask_line, call.transcript)


def information_line(call: Call, said: str) -> str | None:
    """A recorded phone menu whose announcement states the hours asked for has answered the question
    (verdict_source greeting, calld.core.outcome): the same evidence rule as any answer (the business's
    own words, a whole sentence with a time or open days); only for hours, which a recording can state."""
    job = call.plan.job
    if not isinstance(job, QuickAskJob) or job.question is not QuestionType.HOURS:
        return None
    if (prompt := situations.menu_prompt(said)) is None:
        return None
    whole = said[: max(said.rfind(end) for end in ".!?") + 1]  # sentences heard to their end
    if not whole or assessment.find_answer((Turn("business", whole),), job.question) is None:
        return None
    return f"a recorded information line ({prompt})"


def business_text(call: Call) -> str:
    return "".join(t.text for t in call.transcript if t.speaker == "business")


def answer_heard(call: Call) -> bool:
    """A quick ask whose answer the business said after the ask, the model having recorded nothing
    (the conversation is still talking, so no record was accepted)."""
    job = call.plan.job
    return isinstance(job, QuickAskJob) and assessment.answered_after_ask(call.transcript, job.question)


def wrong_party_sentence(call: Call) -> str | None:
    """The business's own sentence that says this is the wrong party (as far as it has been heard),
    never the phrase that matched mid-sentence ("you have the wrong")."""
    text = business_text(call)  # all of it: words said over the agent's are split into turns
    spoken = (text[a:b] for a, b in sentence_spans(text))
    return next((s for s in spoken if situations.wrong_party(s) is not None), None)


# Was reduce._add_turn, which set it on the call: a query gives the transcript, the reducer sets it.
def transcript_with(call: Call, speaker: Speaker, event: ev.InputTranscript | ev.OutputTranscript) -> tuple[Turn, ...]:
    """The transcript with the fragment joined to the turn it goes on (domain.transcript.add_fragment),
    placed in audio/inbound.wav by the session's origin."""
    origin = call.live_origin_ms

    def at(ms: int | None) -> int | None:
        return None if ms is None else origin + ms

    on_line = speaker == "business" or agent_audible(call)
    return add_fragment(call.transcript, speaker, event.text, at(event.start_ms), at(event.end_ms), on_line)


def menu_presses(call: Call) -> int:
    """Menu presses in a row so far, for the loop guard: those with only menu prompts heard between them."""
    heard = business_text(call)[call.menu.heard_mark :]
    if heard.strip() and situations.menu_prompt(heard) is None:
        return 0  # since the last press a person, or the information, spoke: the menu was passed
    return call.menu.presses
