"""Talk during the goodbye (issue 12, item 5), rule by rule on the sans-IO reducer.

The farewell ends when the closing line has finished streaming, judged from GPT-Live's output
audio (loud deltas, then FAREWELL_QUIET_S of silent ones), never from a gap in time; FAREWELL_MAX_S
bounds it. Business words during it that ask something or say more than a courtesy call it off
before session.close; a courtesy does not.
"""

from __future__ import annotations

import pytest

import json

from calld.core import events as ev
from calld.core.effects import AppendCommentary, Cancel, CloseLive, ContinueResponse, Hangup, Schedule, SendMark, SendToolOutput
from calld.core.outcome import conclude
from calld.core.plan import GOODBYE_REOPENED_LINE, HANGUP_MARK, WRONG_PARTY_LINE, Timings
from calld.core.reduce import reduce_step
from calld.core.state import ConvConcluded, HangupDone, HangupDraining, HangupFarewell, HangupNone
from tests.core_helpers import (
    ANSWER,
    FAREWELL,
    HUNG_UP,
    LIVE,
    QUIET_DELTAS,
    RESPONSE_DONE,
    SILENT,
    SPOKEN,
    TASK,
    HEARD,
    drive,
)

T = Timings()
QUESTION = ev.InputTranscript(" Wait, what name was that for?")


def _closed(run) -> bool:
    return CloseLive() in run.effects


def _quiet(run, deltas: int) -> None:
    run.feed(*[SILENT] * deltas)


# -- the end of the goodbye is heard in the output audio, not timed -----------------------------------


def test_the_goodbye_ends_after_its_speech_and_then_farewell_quiet_s_of_silent_deltas():
    run = drive((*FAREWELL, SPOKEN))
    _quiet(run, QUIET_DELTAS - 1)
    assert not _closed(run) and isinstance(run.call.hangup, HangupFarewell)
    run.feed(SILENT)
    assert _closed(run) and run.call.hangup == HangupDraining(via="tool")
    assert Cancel("farewell") in run.effects


def test_silence_before_the_closing_line_is_not_its_end():
    run = drive(FAREWELL)
    _quiet(run, QUIET_DELTAS * 5)  # GPT-Live streams silence before the model speaks
    assert not _closed(run) and run.call.hangup.heard is False


def test_a_stall_with_no_output_deltas_is_not_the_end_of_the_goodbye():
    run = drive((*FAREWELL, SPOKEN))
    _quiet(run, QUIET_DELTAS - 2)
    # The stream stalls: no deltas at all. Nothing but farewell_max_s is pending, so no gap in time
    # can end the goodbye; when the stream resumes mid-sentence, the quiet starts again.
    assert set(run.timers) == {"call_cap", "farewell"}
    run.feed(SPOKEN)
    _quiet(run, QUIET_DELTAS - 1)
    assert not _closed(run)
    run.feed(SILENT)
    assert _closed(run)


def test_speech_before_the_farewells_response_create_is_not_the_goodbye():
    # The record arrives while the agent is still talking: that line is not the closing line.
    run = drive((*HEARD, TASK))
    run.feed(SPOKEN, *[SILENT] * QUIET_DELTAS * 2)
    assert not _closed(run) and run.call.hangup.heard is False
    run.feed(RESPONSE_DONE, SPOKEN, *[SILENT] * QUIET_DELTAS)
    assert _closed(run)


def test_farewell_max_s_bounds_a_goodbye_that_never_goes_quiet():
    run = drive((*FAREWELL, SPOKEN, SPOKEN))
    assert run.timers["farewell"] == ev.FarewellElapsed()
    assert Schedule("farewell", T.farewell_max_s, ev.FarewellElapsed()) in run.effects
    run.feed(ev.FarewellElapsed())
    assert _closed(run) and run.call.hangup == HangupDraining(via="tool")


# -- talk during the goodbye -------------------------------------------------------------------------


def test_a_question_during_the_goodbye_calls_off_the_close_and_the_conversation_goes_on():
    run = drive((*FAREWELL, SPOKEN, SILENT))
    step = run.step(QUESTION)
    assert step.effects == (
        Cancel("farewell"),
        AppendCommentary(GOODBYE_REOPENED_LINE),
        Schedule("stall", T.stall_s, ev.StallElapsed()),
    )
    assert run.call.hangup == HangupNone()
    assert isinstance(run.call.conversation, ConvConcluded) and run.call.conversation.reopened == 1
    assert run.call.task == TASK  # the verdict stands
    assert run.call.counters.farewells_reopened == 1
    # The agent answers; its speech and the silence after it close nothing now.
    run.feed(ev.OutputTranscript("It's for Nathan."), SPOKEN, *[SILENT] * QUIET_DELTAS * 3)
    assert not _closed(run) and run.of(Hangup) == []


def test_words_past_a_courtesy_are_judged_when_the_goodbye_would_end_and_call_it_off():
    run = drive((*FAREWELL, SPOKEN))
    run.feed(ev.InputTranscript(" Oh, one more thing,"), ev.InputTranscript(" we close early on Fridays."))
    assert isinstance(run.call.hangup, HangupFarewell)  # no question: their sentence may yet end in "goodbye"
    _quiet(run, QUIET_DELTAS)
    assert run.call.hangup == HangupNone() and not _closed(run)
    assert AppendCommentary(GOODBYE_REOPENED_LINE) in run.effects
    assert run.call.counters.farewells_reopened == 1


def test_a_closing_that_ends_in_goodbye_is_a_courtesy():
    run = drive((*FAREWELL, SPOKEN))
    run.feed(ev.InputTranscript(" Oh, no problem, I'll cancel it."), ev.InputTranscript(" Goodbye."))
    _quiet(run, QUIET_DELTAS)
    assert _closed(run) and run.call.counters.farewells_reopened == 0


def test_the_next_terminal_record_starts_the_goodbye_again_and_the_call_hangs_up_once():
    run = drive((*FAREWELL, SPOKEN, QUESTION, ev.OutputTranscript("It's for Nathan."), SPOKEN))
    again = ev.TaskRecorded("fc_again", "answered", TASK.answer_text)
    step = run.step(again)
    out = json.loads(next(e for e in step.effects if isinstance(e, SendToolOutput)).output)
    assert out["recorded"] is False and "say goodbye" in out["next"]
    assert isinstance(run.call.hangup, HangupFarewell) and run.call.hangup.via == "tool"
    assert Schedule("farewell", T.farewell_max_s, ev.FarewellElapsed()) in step.effects
    assert run.call.task == TASK  # the first accepted record still wins
    run.feed(RESPONSE_DONE, SPOKEN, *[SILENT] * QUIET_DELTAS)
    run.feed(ev.LiveClosed("session.closed"), ev.MarkEchoed(HANGUP_MARK), ev.TrailElapsed(), HUNG_UP)
    assert run.call.hangup == HangupDone(via="tool", confirmed=True)
    assert run.of(Hangup) == [Hangup("tool")]
    assert run.of(SendMark) == [SendMark(HANGUP_MARK)]
    assert run.of(CloseLive) == [CloseLive()]
    outcome = conclude(run.call)
    assert (outcome.status, outcome.verdict_source) == ("answered", "tool")


def test_end_call_after_the_answer_ends_the_call_at_once():
    run = drive((*FAREWELL, SPOKEN, QUESTION, ev.OutputTranscript("It's for Nathan. Goodbye!")))
    run.feed(ev.EndCallRequested("fc_end"))
    assert run.call.hangup == HangupDraining(via="tool") and _closed(run)


def test_a_progress_note_after_the_goodbye_was_called_off_keeps_the_conversation_going():
    run = drive((*FAREWELL, SPOKEN, QUESTION))
    step = run.step(ev.TaskRecorded("fc_note", "unclear", None))
    (out,) = step.effects
    assert json.loads(out.output)["recorded"] is False
    assert run.call.hangup == HangupNone() and run.call.continue_due


def test_the_stall_failsafe_ends_a_conversation_that_went_quiet_after_the_goodbye_was_called_off():
    run = drive((*FAREWELL, SPOKEN, QUESTION))
    run.feed(ev.StallElapsed())
    assert run.of(Hangup) == [Hangup("stall")]
    run.feed(HUNG_UP)
    assert conclude(run.call).status == "answered"  # the accepted verdict stands


def test_a_courtesy_during_the_goodbye_does_not_call_it_off():
    run = drive((*FAREWELL, SPOKEN))
    run.feed(ev.InputTranscript(" Thanks,"), ev.InputTranscript(" bye-bye!"))
    assert isinstance(run.call.hangup, HangupFarewell)
    _quiet(run, QUIET_DELTAS)
    assert _closed(run) and run.call.counters.farewells_reopened == 0


@pytest.mark.parametrize("courtesy", [" See ya Saturday!", " Great, see you Friday then.", " Thanks, see you on Friday night, bye."])
def test_a_courtesy_that_names_the_day_does_not_call_off_the_goodbye(courtesy):
    run = drive((*FAREWELL, SPOKEN))
    run.feed(ev.InputTranscript(courtesy))
    _quiet(run, QUIET_DELTAS)
    assert _closed(run) and run.call.counters.farewells_reopened == 0


def test_a_record_during_the_goodbye_is_answered_and_followed_by_one_response_create():
    """A second record while the goodbye plays: its output says a result is in, and once the response
    ends exactly one response.create follows, so the model is never left without its turn."""
    run = drive((*FAREWELL,))
    step = run.step(ev.TaskRecorded("fc_late", "answered", TASK.answer_text, quotes=TASK.quotes, answer=TASK.answer,
                                    arguments=TASK.arguments))
    (out,) = [e for e in step.effects if isinstance(e, SendToolOutput)]
    assert json.loads(out.output)["recorded"] is False and run.call.continue_due
    done = run.step(RESPONSE_DONE)
    assert done.effects.count(ContinueResponse()) == 1
    assert run.call.task == TASK


def test_while_the_business_talks_the_goodbye_is_not_over():
    # The agent has gone quiet (talked over, perhaps); the business's words hold the close until they are judged.
    run = drive((*FAREWELL, SPOKEN))
    _quiet(run, QUIET_DELTAS - 2)
    run.feed(ev.InputTranscript(" Okay"))
    _quiet(run, QUIET_DELTAS - 1)
    assert not _closed(run)
    run.feed(SILENT)
    assert _closed(run)


def test_words_said_before_the_farewell_began_are_not_talk_during_it():
    # The business's answer itself is long and has no courtesy in it: only words after it count.
    assert len(ANSWER.text.split()) >= 3
    run = drive((*FAREWELL, SPOKEN))
    run.feed(ev.InputTranscript(" Bye now."))
    assert isinstance(run.call.hangup, HangupFarewell)


def test_an_apology_farewell_is_not_called_off():
    # Opt-out and wrong party: the business wants us gone; more words from them do not reopen the call.
    run = drive((*LIVE, ev.OutputTranscript("What are your opening hours?"),
                 ev.InputTranscript("Wrong number, this is a private residence.")))
    assert run.call.hangup.via == "wrong_party"
    run.feed(SPOKEN, ev.InputTranscript(" Who were you trying to reach?"))
    assert isinstance(run.call.hangup, HangupFarewell)


def test_the_wrong_party_said_over_the_goodbye_turns_it_into_the_apology():
    run = drive((*FAREWELL, SPOKEN))
    step = run.step(ev.InputTranscript(" No, this is Joe's Plumbing, you have the wrong number."))
    assert run.call.hangup.via == "wrong_party" and run.call.failure.reason == "wrong_number"
    assert AppendCommentary(WRONG_PARTY_LINE) in step.effects
    assert conclude(run.call).reason == "wrong_number"  # the verdict was the wrong business's


def test_the_wrong_party_said_after_the_goodbye_was_called_off_ends_the_call_with_the_apology():
    run = drive((*FAREWELL, SPOKEN, SILENT, QUESTION, ev.OutputTranscript("It's for Nathan.")))
    assert run.call.hangup == HangupNone()
    run.feed(ev.InputTranscript(" Nathan? Sorry, you have the wrong number."))
    assert run.call.hangup.via == "wrong_party" and conclude(run.call).reason == "wrong_number"


def test_an_opt_out_over_the_goodbye_does_not_call_it_off_and_the_answer_keeps_it():
    run = drive((*FAREWELL, SPOKEN))
    # The closing line goes on meanwhile, so their sentence comes in turns split by the agent's words.
    run.feed(ev.InputTranscript(" Sure. And please don't"), ev.OutputTranscript(" Goodbye!"),
             ev.InputTranscript(" call this number again."))
    _quiet(run, QUIET_DELTAS)
    assert _closed(run) and run.call.counters.farewells_reopened == 0
    outcome = conclude(run.call)
    assert outcome.status == "answered" and outcome.opt_out == "And please don't call this number again."


def test_a_correction_over_the_goodbye_is_what_the_user_is_told():
    run = drive((*FAREWELL, SPOKEN, SILENT, ev.InputTranscript(" Oh wait, on Saturdays we close at 1 PM now.")))
    assert isinstance(run.call.conversation, ConvConcluded)  # the first record was accepted and stays
    outcome = conclude(run.call)
    assert outcome.status == "answered" and outcome.verdict_source == "transcript"  # not the stale record
    assert [q.text for q in outcome.evidence] == ["We're open nine to five, Monday to Saturday.",
                                                   "Oh wait, on Saturdays we close at 1 PM now."]
    plain = conclude(drive((*FAREWELL, SPOKEN, *[SILENT] * QUIET_DELTAS)).call)
    assert plain.verdict_source == "tool"  # no later word: the record stands


def test_talk_after_session_close_changes_nothing():
    run = drive((*FAREWELL, SPOKEN, *[SILENT] * QUIET_DELTAS))
    assert run.call.hangup == HangupDraining(via="tool")
    step = reduce_step(run.call, QUESTION)
    assert step.call.hangup == HangupDraining(via="tool") and step.effects == ()
