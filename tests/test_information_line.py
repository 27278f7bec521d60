"""A recorded information line that states the hours answers an hours ask (issue 12, item 2).

A phone menu's announcement is a recording; when it states the hours (a whole sentence with a
time or open days, the evidence rule for any hours answer), the call is answered from it with
verdict_source `greeting`, the way a voicemail greeting that states them is, and ends without a
key press or a goodbye to the machine.
"""

from __future__ import annotations

import attrs

from calld.core import events as ev
from calld.core.effects import Cancel, Hangup, Schedule
from calld.core.outcome import conclude
from calld.core.plan import HANGUP_MARK, QuickAskJob, Timings
from calld.core.state import Call, HangupFarewell, HangupNone
from calld.domain.questions import QuestionType
from tests.core_helpers import CCID, LIVE, drive, make_plan

T = Timings()
HOURS_MENU = "Thanks for calling Main Street Hardware. Our hours are Monday to Friday, 9 AM to 5 PM. For the operator, press 0."


def _said(run, text: str) -> None:
    """The business's words, word by word, as GPT-Live's input transcript brings them."""
    first, *rest = text.split()
    run.feed(ev.InputTranscript(first), *[ev.InputTranscript(" " + word) for word in rest])


def _finish(run) -> None:
    run.feed(ev.FarewellElapsed(), ev.LiveClosed("session.closed"), ev.MarkEchoed(HANGUP_MARK), ev.TrailElapsed(),
             ev.CallHungUp(CCID, "normal_clearing", "caller"))


def test_a_menu_that_states_the_hours_answers_from_the_greeting():
    run = drive(LIVE)
    _said(run, HOURS_MENU)
    assert isinstance(run.call.hangup, HangupFarewell) and run.call.hangup.via == "information_line"
    assert run.call.recording == "a recorded information line (press 0)"
    assert Schedule("farewell", T.farewell_max_s, ev.FarewellElapsed()) in run.effects and Cancel("stall") in run.effects
    # The agent is silent on a recording: no goodbye to the machine.
    assert run.feed(ev.OutputAudio(bytes([0x10]) * 3200)) == []
    _finish(run)
    assert run.of(Hangup) == [Hangup("information_line")]
    outcome = conclude(run.call)
    assert (outcome.status, outcome.verdict_source) == ("answered", "greeting")
    assert outcome.answer_text == "Our hours are Monday to Friday, 9 AM to 5 PM."
    assert [q.text for q in outcome.evidence] == [outcome.answer_text]


def test_it_waits_for_the_hours_sentence_to_end():
    run = drive(LIVE)
    _said(run, "Press 1 for sales. Our hours are Monday")
    assert run.call.hangup == HangupNone()
    _said(run, " to Friday, 9 AM to 5 PM.")
    assert isinstance(run.call.hangup, HangupFarewell) and run.call.hangup.via == "information_line"


def test_a_menu_that_does_not_state_the_hours_is_a_menu_to_pass():
    run = drive(LIVE)
    _said(run, "Thank you for calling Joe's Hardware. For store hours, press 1. For the operator, press 0.")
    assert run.call.hangup == HangupNone() and run.call.recording is None


def test_a_person_stating_the_hours_is_not_a_recording():
    run = drive(LIVE)
    _said(run, "Hi, Joe's Hardware. Our hours are Monday to Friday, 9 AM to 5 PM.")
    assert run.call.hangup == HangupNone() and run.call.recording is None


def test_only_an_hours_ask_is_answered_by_a_menu():
    # A recording cannot know which item we ask about: a place it names is no answer about ours.
    plan = attrs.evolve(make_plan(), job=QuickAskJob(QuestionType.AISLE, "cast iron skillet"))
    run = drive(LIVE, call=Call(plan=plan))
    _said(run, "Thanks for calling. Our garden center is in aisle 12. For the operator, press 0.")
    assert run.call.hangup == HangupNone() and run.call.recording is None
