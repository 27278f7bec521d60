"""The stub world's stand-in model is a script: its records and the times it hears offered are written in the
scenarios (calld.stub.scenario), never read from the business's words. The booking brain's own cues (a host's
no, a question the request does not answer) are tested here; whole calls are in tests/test_hidden_scenarios.py."""

from __future__ import annotations

from typing import Any

import pytest

from calld.stub.brain import BookBrain
from calld.stub.scenario import Reply


class _Silent:
    def say(self, text: str, then: Any = None) -> None: ...

    def record(self, arguments: dict[str, Any], purpose: str, delay: float = 0.3) -> None: ...

    async def end_call(self) -> None: ...


@pytest.mark.parametrize("offer, offered", [("Friday 6:30pm", "Friday 6:30pm"), ("Friday 7pm", None), (None, None)])
def test_an_offered_time_is_the_scenario_s_not_read_from_the_words(offer, offered):
    """The words say nothing to the brain about times: the reply's `offer` does (the agreed time is no offer)."""
    brain = BookBrain(_Silent(), {"name": "Nathan", "party": 2, "time": "Friday 7pm", "window_minutes": 60,
                                  "callback_number": "+15555550110"}, "careful", "Goodbye!")
    line = "Seven is full, but I can do six thirty on Friday. Would that work?"
    assert brain._offer_in(Reply(line, offer=offer)) == offered
    assert brain._offer_in(None) is None


class _Saying(_Silent):
    def __init__(self) -> None:
        self.then: list[Any] = []

    def say(self, text: str, then: Any = None) -> None:
        self.then.append(then)


async def test_no_booking_without_a_detail_it_could_not_give_is_a_missing_detail_not_a_refusal():
    records: list[dict[str, Any]] = []
    voice = _Saying()
    voice.record = lambda arguments, purpose, delay=0.3: records.append(arguments)  # type: ignore[method-assign]
    brain = BookBrain(voice, {"name": "Nathan", "party": 2, "time": "Friday 7pm", "window_minutes": 0,
                              "callback_number": "+15555550110"}, "careful", "Goodbye!")
    brain.heard_business("We take a card for a deposit. Which card will you use?")
    brain.heard_business("Then I'm sorry, we can't book it without a deposit.")
    await voice.then[-1]()
    assert (records[-1]["status"], records[-1]["reason_code"]) == ("declined", "details_missing")


def _booking_brain(records: list[dict[str, Any]], voice: _Saying, window: int = 0) -> BookBrain:
    voice.record = lambda arguments, purpose, delay=0.3: records.append(arguments)  # type: ignore[method-assign]
    return BookBrain(voice, {"name": "Nathan", "party": 2, "time": "Friday 7pm", "window_minutes": window,
                             "callback_number": "+15555550110"}, "careful", "Goodbye!")


@pytest.mark.parametrize("line", [
    "Ah, we only take reservations for parties of six or more. For two it's just walk in, first come first served.",
    "Oh, Friday we're closed for a private function, sorry love.",
    "Sorry love, we're takeaway only, no tables here. You want the restaurant on the high street.",
])
async def test_no_table_to_be_had_in_a_host_s_words_is_a_refusal(line):
    """Each was heard as the details exchanged: the brain read back a table nobody offered, and the call
    ended no_answer/went_silent. "no tables here" of a takeaway is a refusal, not fully booked."""
    records: list[dict[str, Any]] = []
    voice = _Saying()
    brain = _booking_brain(records, voice)
    brain.heard_business(line)
    assert voice.then and voice.then[-1] is not None
    await voice.then[-1]()
    assert (records[-1]["status"], records[-1]["reason_code"]) == ("declined", "refused")


async def test_a_card_number_is_no_callback_number():
    """'Can you give me a card number?' was answered with the callback number; it is a question the request
    does not answer, and 'we can't hold it without a card' after it is a missing detail."""
    records: list[dict[str, Any]] = []
    voice = _Saying()
    brain = _booking_brain(records, voice)
    brain.heard_business("We can do Friday at seven, but we need a credit card to hold the table. Can you give me a card number?")
    assert brain.unanswered == ["Can you give me a card number?"]
    brain.heard_business("Sorry, we can't hold the table without a card.")
    await voice.then[-1]()
    assert (records[-1]["status"], records[-1]["reason_code"]) == ("declined", "details_missing")


def test_a_booked_record_cites_the_business_s_own_words_that_it_booked():
    """'Lovely, that's you booked in' before the read-back, then 'Yes, that's it, see you Friday.': the record
    cited only the second, which the check does not take as a booking made."""
    records: list[dict[str, Any]] = []
    brain = _booking_brain(records, _Saying())
    brain.heard_business("Let me just check the book. Yeah, Friday at seven for two is fine. Can I take a name?")
    brain.heard_business("Lovely, that's you booked in, Nathan.")
    brain.stage = "readback"
    brain.heard_business("Yes, that's it, see you Friday.")
    assert records[-1]["status"] == "booked"
    assert records[-1]["quotes"] == ["Lovely, that's you booked in, Nathan.", "Yes, that's it, see you Friday."]


async def test_a_refused_decline_ends_the_call_instead_of_going_quiet():
    """When the app refuses the decline as well, the brain said nothing more and the call ended
    failed/internal ('the agent did not reply'); it says goodbye and hangs up."""
    records: list[dict[str, Any]] = []
    voice = _Saying()
    brain = _booking_brain(records, voice)
    brain.purpose["call_record_1"] = "declined"
    brain.continued("call_record_1", {"recorded": False, "why": "the time offered, '8:30 PM', is not in your quotes"})
    assert brain.stage == "done"
    assert voice.then[-1] == voice.end_call


def test_a_booked_record_carries_the_fact_quotes_its_script_gives():
    """By default a yes to the read-back books with each fact a read-back and the yes as the outcome's words; a
    reply that states the facts itself scripts the words for each (schema52's party_quote, time_quote, ...)."""
    records: list[dict[str, Any]] = []
    brain = _booking_brain(records, _Saying())
    brain.stage = "readback"
    brain.heard_business("Yes, that's right. See you then.", Reply("Yes, that's right. See you then."))
    assert {k: records[-1][k] for k in ("outcome_quote", "party_readback", "time_readback", "date_readback", "party_quote")} == {
        "outcome_quote": "Yes, that's right.", "party_readback": True, "time_readback": True, "date_readback": True,
        "party_quote": None}
    said = "Yep, two at seven Friday, you're all set."
    facts = {"party_quote": "two", "time_quote": "at seven", "date_quote": "Friday", "outcome_quote": "you're all set",
             "party_readback": False, "time_readback": False, "date_readback": False}
    brain.stage = "readback"
    brain.heard_business(said, Reply(said, record=facts))
    assert {k: records[-1][k] for k in facts} == facts
    assert (records[-1]["status"], records[-1]["confirmed_party"], records[-1]["confirmed_time"]) == ("booked", 2, "Friday 7pm")
