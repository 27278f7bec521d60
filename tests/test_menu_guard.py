"""The menu-press loop guard, on the sans-IO reducer (calld.core.queries.menu_presses): presses count in
a row only while nothing but menu prompts is heard between them; a person (or the information) speaking
since the last press means the menu was passed, and the count starts again."""

from __future__ import annotations

from calld.core import events as ev
from calld.core.effects import SendDtmf
from calld.core.plan import Timings
from tests.core_helpers import LIVE, drive

MENU = ev.InputTranscript("For opening hours, press 1. For the front desk, press 0.")
PERSON = ev.InputTranscript("Hi, this is Dana at the front desk, how can I help you?")
TWO_PRESSES = Timings(dtmf_max_presses=2)


def test_presses_with_only_menus_between_them_reach_the_limit():
    run = drive((*LIVE, MENU, ev.DtmfRequested("d1", "1"), MENU, ev.DtmfRequested("d2", "0"), MENU), timings=TWO_PRESSES)
    run.feed(ev.DtmfRequested("d3", "0"))
    assert run.call.failure is not None and run.call.failure.reason == "ivr_unnavigable"
    assert len(run.of(SendDtmf)) == 2


def test_a_person_speaking_since_the_last_press_starts_the_count_again():
    run = drive((*LIVE, MENU, ev.DtmfRequested("d1", "1"), MENU, ev.DtmfRequested("d2", "0"), PERSON), timings=TWO_PRESSES)
    run.feed(ev.DtmfRequested("d3", "0"))
    assert run.call.failure is None
    assert len(run.of(SendDtmf)) == 3
    assert run.call.menu.presses == 1
