"""Real phone situations (issue 12), end to end through the stub world on trio's autojump clock.

Each test plays one situation a real line produces (busy, not in service, a silent pickup, a
hold, a phone menu, a recording, a screener, talk during the goodbye, a transport lost) and
asserts what the reducer decided from it: the status, the reason code and the artifacts.
"""

from __future__ import annotations

import pytest
import trio
from attrs import evolve

from calld.core.outcome import conclude, ending_for
from calld.core.state import ConvTalking, HangupDone, TelnyxAnswered, Turn
from calld.domain.questions import QuestionType
from calld.stub.scenario import WEEK, ModelRecord, hours_range, hours_field, stock_field
from tests.core_helpers import new_call
from tests.stubcall import stub_call, variant

# -- not reached ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("scenario", "status", "reason"),
    [
        ("busy", "no_answer", "busy"),
        ("rejected", "no_answer", "rejected"),
        ("ring_timeout", "no_answer", "ring_timeout"),
        ("not_in_service", "failed", "number_unreachable"),
        ("number_gone", "failed", "number_unreachable"),
    ],
)
async def test_a_call_nobody_answers_ends_with_the_carriers_reason(autojump_clock, tmp_path, scenario, status, reason):
    run = await stub_call(tmp_path, scenario)
    assert run.result.status == status
    assert run.report["reason"] == reason
    assert len(run.world.dial_requests) == 1  # nothing is redialled
    assert run.world.hangup_requests == []
    hangup = run.json("hangup.json")
    assert hangup["sent"] is False and hangup["why"] == "never_connected"
    assert "hangup.json" in run.report["refs"]


@pytest.mark.parametrize(
    ("cause", "sip", "ending"),
    [
        ("normal_unspecified", "404", ("failed", "number_unreachable")),
        ("normal_unspecified", "410", ("failed", "number_unreachable")),
        ("normal_unspecified", "484", ("failed", "number_unreachable")),
        ("normal_unspecified", "604", ("failed", "number_unreachable")),
        ("unspecified", "486", ("no_answer", "busy")),
        ("unspecified", "603", ("no_answer", "rejected")),
        ("user_busy", "unspecified", ("no_answer", "busy")),
        ("call_rejected", None, ("no_answer", "rejected")),
        ("timeout", None, ("no_answer", "ring_timeout")),
        ("unallocated_number", None, ("failed", "number_unreachable")),
    ],
)
def test_the_ending_table_reads_the_sip_code_before_the_cause(cause, sip, ending):
    assert ending_for(cause, sip) == ending


@pytest.mark.parametrize("sip", [None, "unspecified", "487"])
def test_the_echo_of_a_hangup_calld_sent_while_it_rang_is_never_read_as_the_carriers_ending(sip):
    from calld.core import events as ev
    from calld.core.plan import Timings
    from calld.core.reduce import reduce
    from tests.core_helpers import CCID

    call = new_call(Timings(max_call_s=20.0))
    for event in (ev.Begin(), ev.DialAccepted(CCID), ev.CallInitiated(CCID), ev.CallCapElapsed(),
                  ev.CallHungUp(CCID, "normal_clearing", "caller", sip)):
        call, _ = reduce(call, event)
    assert (conclude(call).status, conclude(call).reason) == ("failed", "time_limit")  # not no_answer/rejected


async def test_a_line_answered_in_silence_is_no_answer_silent_line(autojump_clock, tmp_path):
    run = await stub_call(tmp_path, "silent_line")
    assert run.result.status == "no_answer"
    assert run.report["reason"] == "silent_line"
    assert not [t for t in run.json("transcript.json")["turns"] if t["speaker"] == "business"]
    assert run.report["hangup"]["via"] == "stall"
    assert run.json("hangup.json")["sent"] is True


async def test_a_far_party_hangup_still_writes_hangup_json_saying_why(autojump_clock, tmp_path):
    run = await stub_call(tmp_path, "far_party_after_answer")
    hangup = run.json("hangup.json")
    assert hangup == {**hangup, "sent": False, "why": "far_party"}
    assert run.world.hangup_requests == []
    for ref in run.report["refs"].values():
        assert (run.dir.parent / ref).is_file(), ref


# -- transports lost -------------------------------------------------------------------------------


def _t(run, kind, *, effect=False):
    rows = run.effects(kind) if effect else run.events(kind)
    return rows[0]["t_ms"]


async def test_a_media_socket_lost_mid_call_is_hung_up_within_2_5_s(autojump_clock, tmp_path):
    run = await stub_call(tmp_path, "media_drop")
    stopped = run.events("media.stopped")[0]
    assert stopped["event"]["reason"] != "stop"
    assert 1000 <= _t(run, "hangup", effect=True) - stopped["t_ms"] <= 2500
    assert run.report["hangup"]["via"] == "failure"
    assert run.result.status == "failed" and run.report["reason"] == "media_lost"
    assert len(run.world.hangup_requests) == 1


async def test_a_media_socket_lost_after_the_verdict_keeps_the_verdict(autojump_clock, tmp_path):
    run = await stub_call(tmp_path, "media_drop_after_verdict")
    assert run.events("tool.record_task_result")[0]["t_ms"] < run.events("media.stopped")[0]["t_ms"]
    assert _t(run, "hangup", effect=True) - _t(run, "media.stopped") <= 2500
    assert run.result.status == "answered"
    assert run.report["failure"] and "media stream was lost" in run.report["failure"]


async def test_a_media_stream_stopped_mid_goodbye_is_hung_up_at_once_keeping_the_verdict(autojump_clock, tmp_path,
                                                                                           monkeypatch):
    """Telnyx stops the stream (a stop frame) while the goodbye plays, and no call.hangup follows: the
    mark can never be echoed, so waiting for it (drain_timeout_s) would only hold the line open."""
    from calld.stub.world import FakeLive

    original = FakeLive._read

    async def read(self) -> None:
        async def stop_mid_goodbye() -> None:
            while self.closing_line is None:
                await trio.sleep(0.05)
            await trio.sleep(0.6)
            await self.world._stop_media()

        self.world._nursery.start_soon(stop_mid_goodbye)
        await original(self)

    monkeypatch.setattr(FakeLive, "_read", read)
    run = await stub_call(tmp_path, "hours")
    stopped = run.events("media.stopped")[0]
    assert stopped["event"]["reason"] == "stop"
    assert _t(run, "hangup", effect=True) - stopped["t_ms"] == 1_000  # media_lost_grace_s: the far party's call.hangup did not come
    assert run.report["hangup"]["via"] == "tool" and run.events("timer.drain_timeout") == []
    assert run.result.status == "answered" and run.report["failure"] is None  # the verdict stands
    assert len(run.world.hangup_requests) == 1


@pytest.mark.parametrize("scenario", ["media_before_start", "media_garbage"])
async def test_a_media_socket_with_no_valid_start_ends_the_call_promptly(autojump_clock, tmp_path, scenario):
    run = await stub_call(tmp_path, scenario)
    assert run.result.status == "failed" and run.report["reason"] == "media_lost"
    assert "before its start frame" in run.report["failure"]
    assert run.report["duration_ms"] < 5000  # not the 300 s call cap
    assert len(run.world.hangup_requests) == 1


async def test_gpt_live_refusing_the_session_hangs_up_as_model_unavailable(autojump_clock, tmp_path):
    run = await stub_call(tmp_path, "live_refused")
    assert run.result.status == "failed" and run.report["reason"] == "model_unavailable"
    assert _t(run, "hangup", effect=True) - _t(run, "live.error") <= 3000
    assert len(run.world.hangup_requests) == 1


async def test_gpt_live_lost_before_an_answer_is_model_lost(autojump_clock, tmp_path):
    run = await stub_call(tmp_path, "live_lost")
    assert run.result.status == "failed" and run.report["reason"] == "model_lost"
    assert _t(run, "hangup", effect=True) - _t(run, "live.closed") <= 3000


async def test_gpt_live_lost_after_the_business_answered_gives_the_answer_from_the_transcript(autojump_clock, tmp_path):
    run = await stub_call(tmp_path, "live_lost_after_answer")
    assert run.result.status == "answered"
    assert run.result.verdict_source == "transcript"
    assert "9 AM to 5 PM" in run.result.answer_text
    assert _t(run, "hangup", effect=True) - _t(run, "live.closed") <= 3000


async def test_a_media_stream_whose_call_answered_never_comes_ends_at_ring_timeout_naming_the_webhook(autojump_clock, tmp_path,
                                                                                                    monkeypatch):
    from calld.stub.world import StubWorld

    async def answered_lost(self):  # media streams and the business greets; call.answered never reaches calld
        await self._webhook("call.initiated")
        await trio.sleep(self.scenario.ring_s)
        self._nursery.start_soon(self._media)
        await self._webhook("streaming.started")

    monkeypatch.setattr(StubWorld, "_telnyx_script", answered_lost)
    run = await stub_call(tmp_path, "hours")
    assert (run.result.status, run.report["reason"]) == ("failed", "no_call_events")  # not no_answer/rejected, SIP 200
    assert "call.answered never came" in run.report["failure"]
    assert run.effects("live.open") == []  # a stream is not the pickup: no disclosure spoken into a ringback
    assert _t(run, "timer.ring") - _t(run, "dial.accepted") == run.settings.ring_timeout_s * 1000  # on through the stream
    assert _t(run, "hangup", effect=True) - _t(run, "timer.ring") <= 100  # not at MAX_CALL_S
    assert len(run.world.hangup_requests) == 1


async def test_a_hangup_that_overtakes_a_late_call_answered_is_read_as_answered_not_never_answered(autojump_clock,
                                                                                                   tmp_path, monkeypatch):
    from calld.stub.world import StubWorld

    async def answered_late(self):  # the business greets for 5 s, hangs up; call.answered comes after call.hangup
        await self._webhook("call.initiated")
        await trio.sleep(self.scenario.ring_s)
        self._nursery.start_soon(self._media)
        await trio.sleep(5)
        self._ended = True
        await self._stop_media()
        await self._webhook("call.hangup", hangup_cause="normal_clearing", hangup_source="callee", sip_hangup_cause="200")
        await self._webhook("call.answered")
        await self._webhook("streaming.started")

    monkeypatch.setattr(StubWorld, "_telnyx_script", answered_late)
    run = await stub_call(tmp_path, "hours")
    assert (run.result.status, run.report["reason"]) == ("failed", "no_call_events")  # not no_answer/rejected
    assert "before call.answered reached calld" in run.report["failure"]
    assert run.json("hangup.json")["why"] == "far_party"  # not "never answered"
    assert run.world.hangup_requests == []


async def test_gpt_live_that_never_starts_its_session_ends_the_call_at_live_ready_s(autojump_clock, tmp_path):
    run = await stub_call(tmp_path, "live_never_ready")  # session.start answered by nothing, the socket open
    assert (run.result.status, run.report["reason"]) == ("failed", "model_unavailable")
    assert "LIVE_READY_S=12" in run.report["failure"]
    ready = run.events("timer.live_ready")[0]["t_ms"]
    assert ready - run.effects("live.open")[0]["t_ms"] == 12_000
    assert _t(run, "hangup", effect=True) - ready <= 100  # not MAX_CALL_S later
    assert len(run.world.hangup_requests) == 1 and run.effects("live.abort")


async def test_a_business_that_hangs_up_before_gpt_live_is_ready_is_calld_s_failure(autojump_clock, tmp_path, monkeypatch):
    from calld.stub.world import StubWorld

    stream = StubWorld._stream_media

    async def greet_then_give_up(self, peer):  # the business greets, hears nothing, hangs up 8 s in
        self._nursery.start_soon(self._far_party_hangup, 8.0)
        await stream(self, peer)

    monkeypatch.setattr(StubWorld, "_stream_media", greet_then_give_up)
    run = await stub_call(tmp_path, "live_never_ready")
    assert (run.result.status, run.report["reason"]) == ("failed", "model_unavailable")  # not no_answer/silent_line
    assert "the agent never spoke" in run.report["failure"]
    assert run.report["hangup"]["via"] == "far_party" and run.world.hangup_requests == []


async def test_gpt_live_gone_quiet_mid_call_is_the_model_lost_not_a_silent_line(autojump_clock, tmp_path):
    run = await stub_call(tmp_path, "live_gone_quiet")  # nothing at all from the business's first word on
    assert (run.result.status, run.report["reason"]) == ("failed", "model_lost")
    assert "LIVE_QUIET_S=5" in run.report["failure"]
    silent = run.events("live.silent")[0]["t_ms"]
    assert _t(run, "hangup", effect=True) - silent <= 100
    assert silent < run.settings.stall_s * 1000  # before the stall failsafe could read it as the line's silence
    assert len(run.world.hangup_requests) == 1


async def test_a_goodbye_that_stalls_is_bounded_by_farewell_max_s_not_read_as_the_model_lost(autojump_clock, tmp_path):
    run = await stub_call(tmp_path, variant("goodbye_stall", goodbye_stall_s=6.0))  # past LIVE_QUIET_S, mid-goodbye
    assert run.result.status == "answered" and not run.report["failure"]
    assert len(run.world.hangup_requests) == 1


# -- holds -------------------------------------------------------------------------------------------


async def test_a_clerk_who_goes_to_check_is_waited_for_past_the_stall_failsafe(autojump_clock, tmp_path):
    run = await stub_call(tmp_path, "hold")  # 45 s of silence after "let me check"; STALL_S is 20
    assert run.result.status == "answered" and "9 AM to 5 PM" in run.result.answer_text
    (hold,) = run.report["holds"]
    assert hold["cue"] == "let me check" and hold["ended"] == "returned"
    assert 44_000 <= hold["end_ms"] - hold["start_ms"] <= 47_000
    steers = [r for r in run.effects("live.commentary") if "quiet for a while" in r["effect"]["text"]]
    assert steers == []  # no "are you still there?" while they check
    assert run.report["hangup"]["via"] == "tool"


@pytest.mark.parametrize(("scenario", "cue"), [("hold_music", "please hold"), ("music_only", "hold music")])
async def test_hold_music_is_a_hold(autojump_clock, tmp_path, scenario, cue):
    run = await stub_call(tmp_path, scenario)
    assert run.result.status == "answered"
    assert [h["cue"] for h in run.report["holds"]] == [cue]
    assert run.report["holds"][0]["ended"] == "returned"


async def test_a_transfer_is_waited_for_like_a_hold(autojump_clock, tmp_path):
    run = await stub_call(tmp_path, variant("stock", hold_line="That'd be the kitchen department, let me transfer you.",
                                            hold_s=45.0, answer="Kitchen department, Mike speaking. Yes, we have the "
                                            "cast iron skillets in stock.", model_records=(ModelRecord("answered", fields=stock_field(
                                                "in_stock", quote="Yes, we have the cast iron skillets in stock")),)),
                          ask=QuestionType.STOCK, item="cast iron skillet")
    assert run.result.status == "answered" and run.result.verdict_source == "tool"
    (hold,) = run.report["holds"]
    assert hold["cue"] == "transfer you" and hold["ended"] == "returned"
    assert not [r for r in run.effects("live.commentary") if "quiet for a while" in r["effect"]["text"]]
    assert run.report["hangup"]["via"] == "tool"


async def test_a_hold_past_hold_max_s_ends_failed_hold_timeout(autojump_clock, tmp_path):
    run = await stub_call(tmp_path, "hold_forever", hold_max_s=60)
    assert run.result.status == "failed" and run.report["reason"] == "hold_timeout"
    (hold,) = run.report["holds"]
    assert hold["ended"] == "timeout" and hold["cue"] == "one moment"
    hangup = run.effects("hangup")[0]
    assert hangup["effect"]["via"] == "stall"
    assert 59_000 <= hangup["t_ms"] - hold["start_ms"] <= 61_000


async def test_without_a_hold_cue_the_stall_failsafe_stands(autojump_clock, tmp_path):
    run = await stub_call(tmp_path, "silence_no_cue")  # the same 45 s of silence, with no cue
    assert run.report["holds"] == []
    assert run.report["hangup"]["via"] == "stall"
    assert (run.result.status, run.result.reason) == ("no_answer", "went_silent")


def test_a_silence_after_the_whole_request_is_the_businesss_and_one_the_agent_owed_is_calls():
    """Who owed the next word when the line first went quiet (kept by the reducer at the steer): the
    business, once it had heard the whole request (no answer from it); the agent, when the business
    spoke last (calld's own failure, whatever the agent's steer said after)."""
    call = new_call()
    stalled = evolve(call, telnyx=TelnyxAnswered(), hangup=HangupDone(via="stall", confirmed=True))
    greeting = Turn("business", "Main Street Hardware, how can I help you?")
    asked, steer = Turn("agent", call.plan.ask_line), Turn("agent", "Hello? Are you still there?")

    def ending(quiet_after: str, *turns: Turn) -> tuple[str, str | None, str | None]:
        outcome = conclude(evolve(stalled, transcript=turns, conversation=ConvTalking(steered=True, quiet_after=quiet_after)))
        return outcome.status, outcome.reason, outcome.detail

    assert ending("agent", greeting, asked, steer)[:2] == ("no_answer", "went_silent")
    # What the business stated after the request, never recorded, is its answer unconfirmed, whoever owed the word.
    stated = Turn("business", "Yes, we have them in stock.")
    assert ending("business", greeting, asked, stated, steer)[:2] == ("declined", "unconfirmed")
    assert ending("agent", greeting, asked, stated, steer)[:2] == ("declined", "unconfirmed")
    # The detail says in words what went wrong, quoting the words the agent left unanswered.
    assert ending("business", greeting, asked, Turn("business", "Which store, Main or Elm?"), steer) == (
        "failed", "internal", 'the agent did not reply to the business\'s last words ("Which store, Main or Elm?"), '
        "and the line went quiet: calld's failure, not the business's")
    assert ending("agent", greeting, Turn("agent", "Hi, this is an automated")) == (  # the request never got out
        "failed", "internal", "the agent never got the whole request out before the line went quiet, so the call ended "
        "without an answer")
    unheard = Turn("agent", call.plan.ask_line, on_line=False)  # said by GPT-Live, kept off the line: nobody heard it
    assert ending("agent", greeting, unheard, steer)[:2] == ("failed", "internal")
    closing = evolve(stalled, hangup=HangupDone(via="drain_timeout", confirmed=True), transcript=(greeting, asked))
    assert conclude(closing).detail == "the call ended without an answer (the session would not close)"
    long = Turn("business", "We have many. " * 40 + "Which store?")
    detail = ending("business", greeting, asked, long, steer)[2]
    from calld.core.outcome import _last_words

    cut = _last_words("word " * 80 + "end.", 200)
    assert cut.startswith("...") and len(cut) == 200 and cut.endswith("end.")  # one sentence too long: its end
    assert detail is not None and '("We have many. ' in detail and detail.count("We have many.") <= 15  # whole sentences, 200 characters


# -- wrong party, screening ----------------------------------------------------------------------------


async def test_the_wrong_party_gets_a_polite_apology_and_a_prompt_hangup(autojump_clock, tmp_path):
    run = await stub_call(tmp_path, "wrong_party")
    assert run.result.status == "failed" and run.report["reason"] == "wrong_number"
    said = " ".join(run.world.heard_on_line)
    assert "I'm sorry, I must have the wrong number. Thank you, goodbye." in said
    assert run.report["hangup"]["via"] == "wrong_party"
    heard = next(r for r in run.events("live.input_transcript") if "number" in r["event"]["text"])
    assert run.effects("hangup")[0]["t_ms"] - heard["t_ms"] < 12_000  # the goodbye, then off: no stall waits
    # The user is shown what the business said, its whole sentence, not the phrase heard mid-sentence.
    said_by_them = "Sorry, I think you have the wrong number, this is a private residence."
    assert run.report["detail"] == f'the business said "{said_by_them}": not the business that was asked for'
    assert run.result.detail == run.report["detail"]


async def test_the_wrong_party_wins_over_words_that_sounded_like_an_answer(autojump_clock, tmp_path):
    run = await stub_call(tmp_path, variant("wrong_party", answer="Uh, we open at 9? Wait, no, sorry, this is a private "
                                            "residence, you have the wrong number."))
    assert (run.result.status, run.result.reason) == ("failed", "wrong_number")
    assert run.report["hangup"]["via"] == "wrong_party"


async def test_a_call_screener_hears_the_disclosure_and_the_purpose_then_the_call_goes_on(autojump_clock, tmp_path):
    run = await stub_call(tmp_path, "screener")
    screened = [r["effect"]["text"] for r in run.effects("live.commentary") if "screened" in r["effect"]["text"]]
    assert len(screened) == 1
    assert "automated assistant calling on behalf of Nathan" in screened[0]
    assert "What are your opening hours?" in screened[0]
    said = " ".join(run.world.heard_on_line)
    assert "This is an automated assistant calling on behalf of Nathan. I am calling to ask:" in said
    assert run.result.status == "answered"


# -- phone menus -----------------------------------------------------------------------------------


async def test_a_phone_menu_is_passed_with_a_real_key_press(autojump_clock, tmp_path):
    run = await stub_call(tmp_path, "menu")
    assert [d for d, _ in run.world.dtmf_received] == ["0"]
    (press,) = run.effects("dtmf")
    assert press["effect"]["digits"] == "0"
    assert run.world.dtmf_received[0][1] == press["effect"]["command_id"]  # Telnyx's command_id, journaled
    (sent,) = run.events("dtmf.sent")
    assert sent["event"]["error"] is None
    outputs = [m for m in run.world.live_received if m["type"] == "response.item.create"]
    assert any(m["item"]["call_id"].startswith("call_dtmf") and '"sent":true' in m["item"]["output"] for m in outputs)
    assert run.result.status == "answered"
    assert run.report["counts"]["dtmf_presses"] == 1


async def test_a_spoken_number_presses_nothing(autojump_clock, tmp_path):
    run = await stub_call(tmp_path, "menu_spoken")
    assert "Pressing zero." in " ".join(run.world.heard_on_line)
    assert run.world.dtmf_received == [] and run.effects("dtmf") == []
    assert run.result.status != "answered"
    # Stuck at the menu, not calld's own failure: the README's menu row ends failed/ivr_unnavigable.
    assert run.report["status"] == "failed" and run.report["reason"] == "ivr_unnavigable"
    assert "press 0" in run.report["detail"].lower()


async def test_a_menu_that_loops_ends_failed_ivr_unnavigable(autojump_clock, tmp_path):
    run = await stub_call(tmp_path, "menu_loop", dtmf_max_presses=3)
    assert len(run.world.dtmf_received) == 3  # the fourth press is refused by the guard
    assert run.result.status == "failed" and run.report["reason"] == "ivr_unnavigable"
    assert run.report["hangup"]["via"] == "failure"


# -- recordings and answering machines ---------------------------------------------------------------


@pytest.mark.parametrize("beep", [True, False])
async def test_a_greeting_that_states_the_hours_answers_from_the_greeting(autojump_clock, tmp_path, beep):
    run = await stub_call(tmp_path, variant("voicemail_hours", amd_beep=beep))
    assert run.result.status == "answered" and run.result.verdict_source == "greeting"
    assert "9 AM to 5 PM" in run.result.answer_text
    assert run.report["hangup"]["via"] == "voicemail"
    assert run.report["counts"]["audio_to_media"] < 100  # the agent fell silent: no message left
    if not beep:  # the words alone showed a recording: off the line within FAREWELL_MAX_S of them
        heard = next(r for r in run.events("live.input_transcript") if "message" in r["event"]["text"])
        assert run.effects("hangup")[0]["t_ms"] - heard["t_ms"] <= run.settings.farewell_max_s * 1000 + 1500


async def test_a_recording_is_voicemail_and_no_message_is_left(autojump_clock, tmp_path):
    run = await stub_call(tmp_path, "voicemail")
    assert run.result.status == "voicemail"
    said = " ".join(run.world.heard_on_line)
    assert "What are your opening hours?" not in said  # the agent stopped before asking the machine
    beep = run.events("telnyx.machine.greeting_ended")[0]
    assert run.effects("hangup")[0]["t_ms"] - beep["t_ms"] < 3000  # off the line at the beep
    assert run.report["hangup"]["via"] == "voicemail"


async def test_agent_words_kept_off_a_recording_are_marked_as_never_on_the_line(autojump_clock, tmp_path):
    from calld.observe.summary import transcript_lines

    run = await stub_call(tmp_path, "voicemail")
    turns = run.json("transcript.json")["turns"]
    agent = [t for t in turns if t["speaker"] == "agent"]
    assert agent and all(t["on_line"] is False for t in agent)  # GPT-Live spoke; the line carried none of it
    assert all(t["on_line"] for t in turns if t["speaker"] == "business")
    assert run.json("transcript.json")["agent_text"] == ""
    assert run.world.heard_on_line == []
    shown = "\n".join(transcript_lines({"transcript": run.json("transcript.json")}))
    assert "agent: (not on the line" in shown


async def test_a_receptionist_saying_someone_is_not_available_is_no_voicemail(autojump_clock, tmp_path):
    run = await stub_call(tmp_path, variant("hours", model_verdict="none", answer="Sorry, Joe is not available to take "
                                            "your call. I'm new here, let me check for you, please hold."))
    assert run.result.status != "voicemail" and run.report["hangup"]["via"] != "voicemail"
    assert [h["cue"] for h in run.report["holds"]] == ["let me check"]  # a person, gone to check


async def test_an_offer_to_take_a_message_is_no_voicemail(autojump_clock, tmp_path):
    run = await stub_call(tmp_path, variant("stock", model_verdict="none", answer="The kitchen manager is out today. "
                                            "Do you want to leave a message for her, or should I go look on the shelf?"),
                          ask=QuestionType.STOCK, item="cast iron skillet")
    assert run.result.status != "voicemail" and run.report["hangup"]["via"] != "voicemail"
    assert run.report["counts"]["audio_to_media"] > 100  # the agent was not silenced as on a recording


async def test_answering_machine_detection_is_only_advice(autojump_clock, tmp_path):
    run = await stub_call(tmp_path, "amd_wrong")  # a person answers; premium AMD says "machine"
    assert run.events("telnyx.machine.detected")[0]["event"]["result"] == "machine"
    assert run.result.status == "answered"
    assert run.world.dial_requests[0]["answering_machine_detection"] == "premium"


# -- talk during the goodbye -----------------------------------------------------------------------------


async def test_a_question_during_the_goodbye_calls_off_the_hangup_and_is_answered(autojump_clock, tmp_path):
    run = await stub_call(tmp_path, "goodbye_question")
    business = " ".join(t["text"] for t in run.json("transcript.json")["turns"] if t["speaker"] == "business")
    assert "what name was that for?" in business
    said = " ".join(run.world.heard_on_line)
    assert "It's for Nathan." in said  # the agent answered on the line
    assert run.report["counts"]["farewells_reopened"] == 1
    reopened = next(r for r in run.effects("live.commentary") if "said more during your goodbye" in r["effect"]["text"])
    first, second = run.events("tool.record_task_result")
    close = run.effects("live.close")
    assert len(close) == 1 and first["t_ms"] < reopened["t_ms"] < second["t_ms"] < close[0]["t_ms"]
    # The later record is the next goodbye: it is said whole, then the call hangs up exactly once.
    closing = run.world.scenario.closing_line.split()
    assert run.world.heard_on_line[-len(closing):] == closing
    assert len(run.effects("hangup")) == 1 and len(run.world.hangup_requests) == 1
    assert run.report["hangup"]["via"] == "tool"
    assert run.result.status == "answered" and run.result.verdict_source == "tool"


async def test_a_courtesy_over_the_goodbye_does_not_delay_the_hangup(autojump_clock, tmp_path):
    plain = await stub_call(tmp_path / "plain", "hours")
    run = await stub_call(tmp_path / "bye", "goodbye_courtesy")
    business = " ".join(t["text"] for t in run.json("transcript.json")["turns"] if t["speaker"] == "business")
    assert "bye-bye" in business  # heard during the goodbye ...
    assert run.report["counts"]["farewells_reopened"] == 0  # ... and it called nothing off
    assert run.effects("hangup")[0]["t_ms"] == plain.effects("hangup")[0]["t_ms"]
    assert len(run.world.hangup_requests) == 1 and run.result.status == "answered"


async def test_an_opt_out_over_the_goodbye_ends_the_call_and_the_answer_says_so(autojump_clock, tmp_path):
    plain = await stub_call(tmp_path / "plain", "hours")
    run = await stub_call(tmp_path / "opt", variant("hours", goodbye_talk="Sure. And please don't call this number again."))
    assert run.report["counts"]["farewells_reopened"] == 0  # the goodbye goes on: they want the call over
    assert run.report["hangup"]["via"] == "tool"
    assert run.effects("hangup")[0]["t_ms"] - plain.effects("hangup")[0]["t_ms"] < 5000  # no wait for the stall
    assert run.result.status == "answered" and run.result.verdict_source == "tool"  # the answer stands ...
    assert run.result.opt_out == "And please don't call this number again."  # ... and the user learns of the opt-out
    assert plain.result.opt_out is None


async def test_the_wrong_party_said_over_the_goodbye_fails_the_call_with_an_apology(autojump_clock, tmp_path):
    run = await stub_call(tmp_path, variant("hours", greeting="Joe's, how can I help?", goodbye_reply="Oh, I'm so sorry.",
                                            goodbye_talk="Wait, Joe's Hardware? No, this is Joe's Plumbing, you have the "
                                            "wrong number."))
    assert (run.result.status, run.result.reason) == ("failed", "wrong_number")  # not the plumber's hours
    assert "you have the wrong number" in run.result.detail
    assert "I must have the wrong number" in " ".join(run.world.heard_on_line)
    assert run.report["hangup"]["via"] == "wrong_party" and len(run.world.hangup_requests) == 1


async def test_a_correction_over_the_goodbye_replaces_the_accepted_answer(autojump_clock, tmp_path, monkeypatch):
    from calld.stub import world

    def talked_over(self, heard_whole):  # the model stops, acknowledges, and records the corrected hours
        if self.closing_line is not None:
            self.after_line.pop(self.closing_line, None)
            self.speaking.clear()
        if heard_whole:
            args = {"status": "answered", "notes": None,
                    "answer_text": "Monday through Thursday 9 AM to 5 PM, and on Fridays they close at 4 PM."}
            self.say("Thanks, so on Fridays you close at 4 PM.",
                     then=lambda: self._function_call_later(0.3, "record_task_result", args))

    monkeypatch.setattr(world.FakeLive, "_talked_over", talked_over)
    run = await stub_call(tmp_path, variant("hours", goodbye_talk="Oh wait, sorry, on Fridays we actually close at 4 PM now.",
                                            goodbye_reply="-"))
    assert run.result.status == "answered" and run.result.verdict_source == "transcript"  # not the stale record
    assert "on Fridays we actually close at 4 PM now." in run.result.answer_text
    assert any(e.quote == "Oh wait, sorry, on Fridays we actually close at 4 PM now." for e in run.result.evidence)
    assert run.result.answer.kind == "text"  # the stale record's typed hours are not what the user is told


async def test_a_stall_in_the_goodbye_longer_than_farewell_quiet_s_does_not_cut_it(autojump_clock, tmp_path):
    # GPT-Live sends nothing for 3 s halfway through the closing line: that is not the end of it.
    run = await stub_call(tmp_path, variant("goodbye_stall", goodbye_stall_s=3.0))
    closing = run.world.scenario.closing_line.split()
    assert run.world.heard_on_line[-len(closing):] == closing
    spoken = run.events("live.output_transcript")
    assert spoken[-1]["event"]["text"].strip() == closing[-1]
    assert run.effects("live.close")[0]["seq"] > spoken[-1]["seq"]  # closed only after the last word streamed


async def test_farewell_max_s_bounds_a_goodbye_whose_stream_stalls(autojump_clock, tmp_path):
    run = await stub_call(tmp_path, variant("goodbye_stall", goodbye_stall_s=60.0))
    recorded = run.events("tool.record_task_result")[0]["t_ms"]
    close = run.effects("live.close")[0]["t_ms"]
    assert close - recorded == run.settings.farewell_max_s * 1000
    assert len(run.world.hangup_requests) == 1 and run.result.status == "answered"


# -- a recorded information line ---------------------------------------------------------------------------


async def test_a_person_who_mentions_the_menu_is_not_a_phone_menu(autojump_clock, tmp_path):
    run = await stub_call(tmp_path, variant("hours", greeting="Hi, Luigi's, how can I help?",
                                            answer="We're open 11 AM to 10 PM every day, and our full menu is on our website.",
                                            model_records=(ModelRecord("answered", fields=hours_field(hours_range(
                                                WEEK, "11:00", "22:00", days_quote="every day", times_quote="11 AM to 10 PM"))),)))
    assert run.report["hangup"]["via"] == "tool" and run.result.verdict_source == "tool"
    assert "Goodbye" in " ".join(run.world.heard_on_line)  # a person is told goodbye, not hung up on


async def test_a_menu_that_states_the_hours_answers_from_the_greeting(autojump_clock, tmp_path):
    run = await stub_call(tmp_path, "menu_hours")
    assert run.result.status == "answered" and run.result.verdict_source == "greeting"
    assert run.result.answer_text == "Our hours are Monday to Friday, 9 AM to 5 PM."
    assert run.world.dtmf_received == []  # answered by the recording: no key pressed, no person needed
    assert run.report["hangup"]["via"] == "information_line"
    assert run.report["counts"]["audio_to_media"] < 100  # no goodbye said to a machine
    heard = next(r for r in run.events("live.input_transcript") if "0." in r["event"]["text"])
    assert run.effects("hangup")[0]["t_ms"] - heard["t_ms"] <= run.settings.farewell_max_s * 1000 + 1500
    assert len(run.world.hangup_requests) == 1
