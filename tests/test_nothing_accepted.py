"""A call whose records were all refused, or that ended before any record, ends on what the business said:
declined (unconfirmed, hung_up) or no_answer, for bookings too. failed/internal is calld's own fault, never
the verdict on a business's words. Stub world, autojump clock."""

from __future__ import annotations


from calld.stub.scenario import BOOK_SCENARIOS, BookingScript, Reply, Scenario
from tests.stubcall import stub_book

_RESTAURANT = BOOK_SCENARIOS["book_full"].greeting


def _restaurant(name: str, *states: tuple[str, tuple[Reply, ...]], **kw: object) -> Scenario:
    return Scenario(name, greeting=_RESTAURANT, booking=BookingScript(states=states), **kw)  # type: ignore[arg-type]


async def test_we_re_full_and_the_phone_put_down_before_any_record_is_a_decline(autojump_clock, tmp_path):
    """It ended no_answer/hung_up_early ("hung up before the question was asked"): the business had heard the
    request and answered it."""
    scenario = _restaurant("full_then_gone", ("ask", (Reply("Sorry, we're full that night.", when="book a table", hangup=True),)))
    run = await stub_book(tmp_path, scenario)
    r = run.result
    assert [rec["event"]["status"] for rec in run.events("tool.record_task_result")] == []  # nothing recorded
    assert (r.status, r.reason) == ("declined", "hung_up")
    assert "Sorry, we're full that night." in [e.quote for e in r.evidence]


def test_a_paraphrased_request_answered_with_we_re_full_and_a_hang_up_is_a_decline():
    """The live model words the request its own way ("a table for two this Friday, around seven?"): the app's
    token count of its own ask line missed it, and the call ended no_answer/hung_up_early though the business had
    answered. Any business words after the agent spoke, then the far party's hangup, are a decline."""
    from calld.core import events as ev
    from calld.core.outcome import conclude
    from calld.core.state import Call
    from tests.core_helpers import CCID, LIVE, Run, make_book_plan

    run = Run(Call(plan=make_book_plan()))
    run.feed(*LIVE, ev.InputTranscript("Trattoria Roma."),
             ev.OutputTranscript("Hi, I'm an automated assistant calling for Nathan. Could we get a table for two this Friday, "
                                 "around seven?"),
             ev.InputTranscript("Oh no, we're completely full Friday, sorry."), ev.CallHungUp(CCID, "normal_clearing", "callee"))
    outcome = conclude(run.call)
    assert (outcome.status, outcome.reason) == ("declined", "hung_up")
    assert [q.text for q in outcome.evidence] == ["Oh no, we're completely full Friday, sorry."]


def test_a_business_that_hangs_up_without_a_word_after_the_agent_spoke_is_no_answer():
    from calld.core import events as ev
    from calld.core.outcome import conclude
    from calld.core.state import Call
    from tests.core_helpers import CCID, LIVE, Run, make_book_plan

    run = Run(Call(plan=make_book_plan()))
    run.feed(*LIVE, ev.InputTranscript("Trattoria Roma."), ev.OutputTranscript("Hi, I'm an automated assistant calling for"),
             ev.CallHungUp(CCID, "normal_clearing", "callee"))
    outcome = conclude(run.call)
    assert (outcome.status, outcome.reason) == ("no_answer", "hung_up_early")


def _ended_by_the_model(run) -> None:
    from calld.core import events as ev
    from tests.core_helpers import CCID

    run.feed(ev.ResponseDone("completed"), ev.EndCallRequested("fc_end"), ev.LiveClosed("session.closed"),
             ev.MarkEchoed("HANGUP_MARK"), ev.TrailElapsed(), ev.CallHungUp(CCID, "normal_clearing", "caller"))


def test_a_booking_whose_record_is_refused_ends_declined_unconfirmed_in_the_business_s_last_words():
    """The record was refused, the model said goodbye and hung up: the call ended failed/internal ("the call ended
    without a booking or a refusal"), though the business had answered. It is the business's answer, unconfirmed."""
    from calld.core import events as ev
    from calld.core.outcome import conclude
    from calld.core.state import Call, HangupDone
    from calld.runtime.verdict import build_result
    from tests.core_helpers import LIVE, Run, make_book_plan

    run = Run(Call(plan=make_book_plan()))
    run.feed(*LIVE, ev.InputTranscript("Trattoria Roma."),
             ev.OutputTranscript("Hi, I'm an automated assistant calling for Nathan. Could we get a table for two this Friday, "
                                 "around seven?"),
             ev.InputTranscript("Mm, hang on. Sure, no problem."),
             ev.TaskRecorded("fc_1", "booked", None, booking=ev.BookingDetails(confirmation_text="Sure, no problem.", party=2,
                                                                              time="Friday 7pm", constraints="outdoor"),
                             quotes=("I booked you for eleven.",)))
    assert [r.call_id for r in run.call.refused_records] == ["fc_1"]
    _ended_by_the_model(run)
    assert isinstance(run.call.hangup, HangupDone)
    outcome = conclude(run.call)
    assert (outcome.status, outcome.reason) == ("declined", "unconfirmed")
    assert outcome.evidence[-1].text == "Sure, no problem."
    refs = {"transcript.json": "x/transcript.json", "audio/inbound.wav": "x/audio/inbound.wav"}
    assert build_result(run.call.plan, run.call, outcome, refs).status == "declined"


def test_a_quick_ask_whose_record_is_refused_and_the_line_goes_quiet_is_not_calld_s_failure():
    """A refused record, then nobody speaks until the stall failsafe: the business's answer, unconfirmed."""
    from calld.core import events as ev
    from calld.core.outcome import conclude
    from tests.core_helpers import LIVE, drive

    run = drive(LIVE)
    run.feed(ev.OutputTranscript("Hi, I'm an automated assistant calling for Nathan. When do you shut tonight?"),
             ev.InputTranscript("Oh, the usual, you know."),
             ev.TaskRecorded("fc_1", "answered", "Nine.", quotes=("We close at nine.",)), ev.ResponseDone("completed"),
             ev.StallElapsed(), ev.StallElapsed())
    outcome = conclude(run.call)
    assert outcome.status != "failed", outcome
    assert (outcome.status, outcome.reason) == ("declined", "unconfirmed")


def test_a_malformed_record_is_kept_with_the_refused_and_the_call_ends_on_the_business_s_words():
    """A record the adapter cannot take (arguments the schema's description rules out) is told its rule like any
    refused record, kept with them, and a call that ends with nothing accepted is the business's answer unconfirmed."""
    from calld.core import events as ev
    from calld.core.outcome import conclude
    from tests.core_helpers import LIVE, drive

    run = drive(LIVE)
    run.feed(ev.OutputTranscript("Hi, I'm an automated assistant calling for Nathan. When do you shut tonight?"),
             ev.InputTranscript("Oh, the usual, you know."),
             ev.ToolCallRejected("fc_1", "record_task_result", "invalid arguments: status 'answered' needs a non-empty answer_text"))
    assert [(r.call_id, r.status) for r in run.call.refused_records] == [("fc_1", "invalid")]
    _ended_by_the_model(run)
    outcome = conclude(run.call)
    assert (outcome.status, outcome.reason) == ("declined", "unconfirmed")
