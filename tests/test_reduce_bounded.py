"""State tests for the sans-IO reducer, continued (split from test_reduce.py past 1,000 lines): what a silence
asks of the agent once the business answered, a greeting's hours, a call the model ended, honesty, and each stage of
a call bounded (issue 55).

As in test_reduce.py: no trio, no IO, no clock; events through `tests.core_helpers.Run`, asserts on effects and tracks.
"""

from __future__ import annotations


import pytest

from calld.core import events as ev
from calld.core.effects import (
    AbortLive,
    AppendCommentary,
    Cancel,
    Hangup,
    OpenLive,
    Schedule,
    SendLiveAudio,
)
from calld.core.plan import ANSWER_HEARD_LINE, HANGUP_MARK, STEER_LINE, Timings  # the quick ask's steer
from calld.core.timers import LIVE_TIMERS

ENDED = tuple(Cancel(k) for k in (*LIVE_TIMERS, "hangup_confirm"))  # no timer outlives a call
from calld.core.state import (
    Call,
    ConvTalking,
    HangupDone,
    HangupFarewell,
    HangupMarked,
    HangupTrailing,
    TelnyxEnded,
)
from tests.core_helpers import (
    CCID,
    DIALED,
    DRAINING,
    ASKED,
    FAREWELL,
    HEARD,
    HUNG_UP,
    LIVE,
    MARKED,
    MEDIA,
    SESSION,
    STARTING,
    STREAM,
    Run,
    drive,
    make_book_plan,
    new_call,
    pcm,
)

T = Timings()
FRAME = 640  # 20 ms of 16 kHz PCM16


# -- after the answer: silences, the greeting, the end the model chose, honesty ------------------------


def _answer_heard_effects():
    return (AppendCommentary(ANSWER_HEARD_LINE), Schedule("farewell", T.farewell_max_s, ev.FarewellElapsed()))


def test_a_silence_after_the_business_answered_ends_with_a_goodbye_not_a_second_ask():
    run = drive(HEARD)
    step = run.step(ev.StallElapsed())
    assert step.effects == _answer_heard_effects()
    assert isinstance(run.call.hangup, HangupFarewell) and run.call.hangup.via == "answer_heard"


def test_hours_in_the_greeting_are_not_an_answer_to_the_ask():
    run = drive((*LIVE, ev.InputTranscript("Joe's Hardware, we're open nine to five."), ASKED))
    step = run.step(ev.StallElapsed())
    assert step.effects == (AppendCommentary(STEER_LINE), Schedule("stall", T.stall_s, ev.StallElapsed()))


def test_an_answer_repeated_after_the_ask_is_heard_though_the_greeting_said_it_first():
    run = drive((*LIVE, ev.InputTranscript("Joe's Hardware, we're open nine to five."), ASKED,
                 ev.InputTranscript("Like I said, nine to five.")))
    assert run.step(ev.StallElapsed()).effects == _answer_heard_effects()


def test_a_booking_silence_is_steered_whatever_the_business_said():
    run = drive((*LIVE, ASKED, ev.InputTranscript("We're open nine to five, and yes, Friday works.")),
                call=Call(plan=make_book_plan()))
    step = run.step(ev.StallElapsed())
    assert step.effects == (AppendCommentary(run.call.plan.steer_line), Schedule("stall", T.stall_s, ev.StallElapsed()))


def test_a_conversation_not_steered_keeps_no_silence():
    with pytest.raises(ValueError, match="not steered"):
        ConvTalking(quiet_after="agent")


def test_a_call_the_model_ended_with_no_accepted_record_ends_unconfirmed_never_internal():
    """The business answered in words the assessment cannot confirm (no time in them) and the model
    hung up without a record that holds: the user is told the answer could not be confirmed, with the
    business's words; failed/internal is calld's own faults only."""
    from calld.core.outcome import conclude

    said = "Honestly it depends on the season, the summer is longer."
    run = drive((*LIVE, ASKED, ev.InputTranscript(said)))
    run.feed(ev.EndCallRequested("fc_end"), ev.LiveClosed("session.closed"), ev.MarkEchoed(HANGUP_MARK), ev.TrailElapsed(), HUNG_UP)
    outcome = conclude(run.call)
    assert (outcome.status, outcome.reason) == ("declined", "unconfirmed")
    assert [q.text for q in outcome.evidence] == [said]
    assert "could not be confirmed" in (outcome.detail or "")


@pytest.mark.parametrize("claim", ["Yes, I'm a real person.", "No no, I'm not a robot, I'm calling for Nathan."])
def test_an_agent_that_claims_to_be_a_person_is_made_to_correct_itself_once(claim):
    from calld.core.plan import HONESTY_CORRECTION_LINE

    run = drive((*LIVE, ASKED, ev.InputTranscript("Wait, are you a real person?")))
    effects = run.feed(ev.OutputTranscript(claim))
    assert AppendCommentary(HONESTY_CORRECTION_LINE) in effects
    assert run.call.honesty_claim is not None
    run.feed(ev.OutputTranscript(" Sorry, to be clear: I am an automated assistant, not a person."),
             ev.OutputTranscript(" I'm a real person, really."))
    assert run.of(AppendCommentary).count(AppendCommentary(HONESTY_CORRECTION_LINE)) == 1


def test_an_honest_agent_is_never_corrected():
    run = drive((*LIVE, ASKED, ev.InputTranscript("Are you a robot?")))
    run.feed(ev.OutputTranscript("I'm an automated assistant calling on behalf of Nathan."))
    assert run.call.honesty_claim is None and not any("not a person" in c.text for c in run.of(AppendCommentary))


# -- each stage of a call is bounded (issue 55) --------------------------------------------------------


def test_a_dial_accepted_and_then_nothing_ends_on_the_ring_timer_with_one_hangup():
    run = Run(new_call(Timings(ring_timeout_s=45.0)))
    run.feed(ev.Begin(), ev.DialAccepted(CCID))
    assert run.timers["ring"] == ev.RingElapsed()
    assert [e.delay_s for e in run.of(Schedule) if e.key == "ring"] == [45.0]
    effects = run.feed(ev.RingElapsed())
    assert [e for e in effects if isinstance(e, Hangup)] == [Hangup("failure")]
    assert run.call.failure.reason == "no_call_events" and "no webhook at all" in run.call.failure.detail
    assert "ring" not in run.timers and "call_cap" not in run.timers
    again = run.step(ev.RingElapsed(), strict=False)  # a second firing (a stale timer) does nothing
    assert not again.effects and again.ignored


def test_the_ring_timer_stops_at_the_answer_and_runs_on_through_a_media_start():
    run = Run(new_call())
    run.feed(ev.Begin(), ev.DialAccepted(CCID), ev.CallInitiated(CCID), *MEDIA)
    assert run.timers["ring"] == ev.RingElapsed()  # a stream may carry ringback: it is not the pickup
    run.feed(ev.CallAnswered(CCID))
    assert "ring" not in run.timers


def test_media_streaming_without_call_answered_ends_at_the_ring_timer_naming_the_missing_webhook():
    run = drive((*DIALED, ev.CallInitiated(CCID), *MEDIA, ev.MediaAudio(pcm(FRAME), 1)))
    effects = run.feed(ev.RingElapsed())
    assert [e for e in effects if isinstance(e, Hangup)] == [Hangup("failure")]
    assert run.call.failure.reason == "no_call_events" and "call.answered never came" in run.call.failure.detail
    assert run.of(OpenLive) == []


def test_a_hangup_with_sip_200_before_call_answered_was_answered_and_the_late_answer_changes_nothing():
    run = drive((*DIALED, ev.CallInitiated(CCID), *MEDIA, ev.CallHungUp(CCID, "normal_clearing", "callee", "200")))
    assert run.call.telnyx == TelnyxEnded("normal_clearing", "callee", "200", True)
    assert run.call.hangup == HangupDone(via="far_party", confirmed=True) and not run.of(Hangup)
    assert run.call.failure.reason == "no_call_events" and "before call.answered reached calld" in run.call.failure.detail
    assert run.step(ev.CallAnswered(CCID), strict=False).ignored
    unanswered = drive((*DIALED, ev.CallInitiated(CCID), ev.CallHungUp(CCID, "call_rejected", "callee", "603")))
    assert unanswered.call.telnyx.was_answered is False and unanswered.call.failure is None


def test_answered_without_media_ends_on_the_media_timer_with_one_hangup():
    run = Run(new_call(Timings(media_start_s=5.0)))
    run.feed(ev.Begin(), ev.DialAccepted(CCID), ev.CallAnswered(CCID), ev.MediaConnected())
    assert run.timers.get("media_wait") == ev.MediaWaitElapsed() and "ring" not in run.timers
    effects = run.feed(ev.MediaWaitElapsed())
    assert [e for e in effects if isinstance(e, Hangup)] == [Hangup("failure")]
    assert run.call.failure.reason == "no_media" and "no start frame" in run.call.failure.detail


def test_media_that_starts_in_time_cancels_the_media_timer():
    run = Run(new_call())
    run.feed(ev.Begin(), ev.DialAccepted(CCID), ev.CallAnswered(CCID), *MEDIA)
    assert "media_wait" not in run.timers and "ring" not in run.timers


# -- GPT-Live bounded at both ends: readiness, and a session gone quiet ----------------------------------


def test_opening_gpt_live_arms_its_readiness_bound_and_session_started_cancels_it():
    run = drive(STARTING)
    assert Schedule("live_ready", Timings().live_ready_s, ev.LiveReadyElapsed()) in run.effects
    assert Cancel("live_ready") in run.feed(ev.LiveStarted(SESSION))
    assert "live_ready" not in run.timers


def test_no_session_started_within_live_ready_s_fails_the_call_model_unavailable_with_one_hangup():
    run = drive(STARTING)
    effects = run.feed(ev.LiveReadyElapsed())
    assert run.call.failure is not None and run.call.failure.reason == "model_unavailable"
    assert AbortLive() in effects and [e for e in effects if isinstance(e, Hangup)] == [Hangup("failure")]
    assert run.step(ev.LiveStarted(SESSION), strict=False).ignored  # too late: the session was dropped


def test_a_far_party_hangup_while_gpt_live_starts_is_the_model_s_failure():
    run = drive((*STARTING, HUNG_UP))
    assert run.call.failure is not None and run.call.failure.reason == "model_unavailable"
    assert "the agent never spoke" in run.call.failure.detail
    assert run.call.hangup == HangupDone(via="far_party", confirmed=True)


def test_gpt_live_silent_mid_call_is_model_lost_and_ignored_in_the_goodbye():
    run = drive(HEARD)
    effects = run.feed(ev.LiveSilent(5.0))
    assert run.call.failure is not None and run.call.failure.reason == "model_lost"
    assert AbortLive() in effects and [e for e in effects if isinstance(e, Hangup)] == [Hangup("failure")]
    for script in (STARTING, FAREWELL, DRAINING):
        step = drive(script).step(ev.LiveSilent(5.0), strict=False)
        assert step.ignored and not step.effects, script[-1]


def test_frames_and_mark_echoes_of_another_stream_are_ignored():
    run = drive(HEARD)
    step = run.step(ev.MediaAudio(pcm(FRAME), 9, "another-stream"), strict=False)
    assert step.ignored == f"media.audio of stream another-stream, not the started stream {STREAM}" and not step.effects
    assert run.feed(ev.MediaAudio(pcm(FRAME), 10, STREAM)) == [SendLiveAudio(pcm(FRAME), 10)]
    marked = drive(MARKED)
    step = marked.step(ev.MarkEchoed(HANGUP_MARK, "another-stream"), strict=False)
    assert step.ignored and isinstance(marked.call.hangup, HangupMarked)  # nothing played is proven
    assert isinstance(marked.step(ev.MarkEchoed(HANGUP_MARK, STREAM)).call.hangup, HangupTrailing)
