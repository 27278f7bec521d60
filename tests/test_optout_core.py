"""The reducer's opt-out rule: the business's own words end the call as declined, opt_out."""

from __future__ import annotations

from calld.core import events as ev
from calld.core.effects import AppendCommentary, Cancel, Schedule, SendToolOutput
from calld.core.outcome import conclude
from calld.core.plan import OPT_OUT_LINE
from calld.core.state import Call, HangupFarewell, HangupNone
from tests.core_helpers import ASKED, DONE, FAREWELL, HEARD, LIVE, Run, drive, make_book_plan

QUOTE = "Please stop calling us."


def test_business_asking_not_to_be_called_starts_the_farewell():
    run = drive(LIVE)
    effects = run.feed(ev.InputTranscript("Please stop"), ev.InputTranscript(" calling us."))
    assert run.call.opt_out == QUOTE
    assert isinstance(run.call.hangup, HangupFarewell) and run.call.hangup.via == "opt_out"
    assert AppendCommentary(OPT_OUT_LINE) in effects and Cancel("stall") in effects
    assert any(isinstance(e, Schedule) and e.key == "farewell" for e in effects)
    assert effects.count(AppendCommentary(OPT_OUT_LINE)) == 1  # once, however long the sentence runs


def test_a_record_after_the_opt_out_is_refused_and_the_outcome_is_declined_opt_out():
    run = drive(LIVE)
    run.feed(ev.InputTranscript(QUOTE))
    effects = run.feed(ev.TaskRecorded("fc_1", "answered", "We are open nine to five."))
    [out] = [e for e in effects if isinstance(e, SendToolOutput)]
    assert '"recorded":false' in out.output
    outcome = conclude(run.call)
    assert (outcome.status, outcome.reason, outcome.verdict_source) == ("declined", "opt_out", "transcript")


def test_ordinary_business_speech_changes_nothing():
    run = drive(LIVE)
    run.feed(ev.InputTranscript("We're open nine to five."))
    assert run.call.opt_out is None and run.call.hangup == HangupNone()


def test_after_a_verdict_the_quote_is_kept_and_the_verdict_stands():
    run = drive(FAREWELL)
    effects = run.feed(ev.InputTranscript("And don't call this number again."))
    assert run.call.opt_out == "And don't call this number again."
    assert AppendCommentary(OPT_OUT_LINE) not in effects
    assert conclude(run.call).status == "answered"


def test_a_booking_that_hears_an_opt_out_ends_declined_opt_out():
    run = Run(Call(plan=make_book_plan()))
    run.feed(*LIVE, ev.InputTranscript("Take us off your list."))
    outcome = conclude(run.call)
    assert (outcome.status, outcome.reason) == ("declined", "opt_out")
    assert outcome.booking is not None and outcome.booking.reason == "Take us off your list."


def test_agent_speech_never_counts_as_an_opt_out():
    run = drive(LIVE)
    run.feed(ev.OutputTranscript("Should I stop calling you?"))
    assert run.call.opt_out is None and run.call.hangup == HangupNone()
    assert DONE  # the helper scripts import cleanly


def test_an_opt_out_said_at_great_length_is_cut_to_fit_and_the_answer_stands():
    from calld.runtime.verdict import build_result

    run = drive(FAREWELL)
    run.feed(ev.InputTranscript("And don't call this number again " + "and again " * 300))
    refs = {"transcript.json": "x/transcript.json", "audio/inbound.wav": "x/audio/inbound.wav"}
    result = build_result(run.call.plan, run.call, conclude(run.call), refs)
    assert result.status == "answered"  # not failed/internal for the length of an aside
    assert result.opt_out.startswith("And don't call this number again") and len(result.opt_out) <= 2000


# -- the model's path: record_task_result's opt_out_quote ----------------------------------------------

UNLISTED = "We'd rather you lost this number, to be honest."  # no phrase of the app's word list


def test_the_word_list_does_not_know_this_opt_out():
    from calld.policy.optout import detect_opt_out

    assert detect_opt_out(UNLISTED) is None  # so only the model's quote can bind it below


def test_the_model_s_opt_out_quote_binds_even_when_its_record_is_refused():
    """A record that does not hold (its answer cites nothing) still carries the opt-out: the number is put on
    the list and the agent apologises and says goodbye, as for the app's own word list."""
    run = drive(LIVE)
    run.feed(ASKED, ev.InputTranscript(UNLISTED))
    effects = run.feed(ev.TaskRecorded("fc_1", "answered", "Open 9 to 5.", quotes=("We open at nine.",), opt_out=UNLISTED))
    [out] = [e for e in effects if isinstance(e, SendToolOutput)]
    assert '"recorded":false' in out.output  # the record itself is refused...
    assert run.call.opt_out == UNLISTED  # ...and the opt-out binds
    assert isinstance(run.call.hangup, HangupFarewell) and run.call.hangup.via == "opt_out"
    assert AppendCommentary(OPT_OUT_LINE) in effects
    outcome = conclude(run.call)
    assert (outcome.status, outcome.reason, outcome.opt_out) == ("declined", "opt_out", UNLISTED)


def test_the_model_s_opt_out_quote_binds_from_a_malformed_record_too():
    run = drive(LIVE)
    run.feed(ASKED, ev.InputTranscript(UNLISTED))
    run.feed(ev.ToolCallRejected("fc_1", "record_task_result", "invalid arguments: status", opt_out=UNLISTED.upper()))
    assert run.call.opt_out == UNLISTED.upper()


def test_an_accepted_record_with_an_opt_out_keeps_its_answer_and_the_opt_out():
    run = drive(HEARD)
    run.feed(ev.InputTranscript(" " + UNLISTED))
    run.feed(evolve_task(opt_out="lost this number"))
    assert run.call.opt_out == "lost this number"
    assert isinstance(run.call.hangup, HangupFarewell) and run.call.hangup.via == "tool"
    outcome = conclude(run.call)
    assert (outcome.status, outcome.opt_out) == ("answered", "lost this number")


def test_an_opt_out_quote_the_business_never_said_binds_nothing():
    run = drive(LIVE)
    run.feed(ASKED, ev.InputTranscript("We're open nine to five."))
    run.feed(ev.OutputTranscript("Should we lose this number?"))
    run.feed(ev.TaskRecorded("fc_1", "declined", None, quotes=("We're open nine to five.",), opt_out="lose this number"))
    assert run.call.opt_out is None


def evolve_task(**changes):
    from attrs import evolve

    from tests.core_helpers import TASK

    return evolve(TASK, **changes)
