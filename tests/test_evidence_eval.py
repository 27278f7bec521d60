"""bench/evidence_eval.py on a dialogue written here in the public corpus's shape (its words are made
up, none of the corpus's): the records it simulates, the hours labels its rules give, and its counts."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest


def _bench() -> ModuleType:
    path = Path(__file__).parent.parent / "bench" / "evidence_eval.py"
    spec = importlib.util.spec_from_file_location("evidence_eval", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["evidence_eval"] = module  # attrs resolves the module's annotations through it
    spec.loader.exec_module(module)
    return module


ev = _bench()


def _turn(speaker: str, words: str, *acts: tuple[str, str, list[str]]) -> dict[str, Any]:
    return {"speaker": speaker, "utterance": words,
            "frames": [{"service": "Restaurants_9", "actions": [{"act": a, "slot": s, "values": v} for a, s, v in acts]}]}


# A table asked for 3 at 6:30, confirmed, failed with 7:45 offered instead, then booked at 7:45.
DIALOGUE = {
    "dialogue_id": "made_up_1",
    "services": ["Restaurants_9"],
    "turns": [
        _turn("USER", "Hi, a table for three on Friday evening at half six, please.",
              ("INFORM", "party_size", ["3"]), ("INFORM", "date", ["Friday"]), ("INFORM", "time", ["half six"])),
        _turn("SYSTEM", "Just to check: three guests at Blue Heron on next Friday at 6:30 pm?",
              ("CONFIRM", "party_size", ["3"]), ("CONFIRM", "date", ["next Friday"]), ("CONFIRM", "time", ["6:30 pm"])),
        _turn("USER", "Yes, that's it.", ("AFFIRM", "", [])),
        _turn("SYSTEM", "I'm sorry, I couldn't get that table. Would 7:45 pm suit you instead?",
              ("NOTIFY_FAILURE", "", []), ("OFFER", "time", ["7:45 pm"])),
        _turn("USER", "Sure, go ahead.", ("AFFIRM", "", [])),
        _turn("SYSTEM", "Done, you're booked for three at 7:45 pm on Friday.", ("NOTIFY_SUCCESS", "", [])),
        _turn("USER", "Thanks, bye.", ("GOODBYE", "", [])),
    ],
}


def test_records_follow_the_acts():
    got = ev.booking_records(DIALOGUE)
    ((kind, true),) = got.true
    assert kind == "after a failure"
    assert (true.party, true.time) == (3, "next Friday at 7:45 pm")
    assert (true.requested_party, true.requested_time) == (3, "Friday at half six")
    # the turns that said the facts (party and date confirmed, the time offered), then the success
    assert [t for t in true.quotes] == [DIALOGUE["turns"][i]["utterance"] for i in (1, 3, 5)]
    assert len(true.turns) == 6 and true.turns[-1].speaker == "business" and true.turns[0].speaker == "agent"
    assert [(kind, r.party, r.time) for kind, r in got.wrong] == [
        ("time +1 h", 3, "next Friday at 8:45 pm"), ("party +1", 4, "next Friday at 7:45 pm"),
        ("another date", 3, "next Saturday at 7:45 pm")]
    (careless,) = got.failed_as_booked  # what failed, citing the confirmation, after the failure
    assert (careless.party, careless.time, careless.quotes) == (3, "next Friday at 6:30 pm", (DIALOGUE["turns"][1]["utterance"],))
    assert len(careless.turns) == 4
    (declined,) = got.declined
    assert (declined.alternative_offered, declined.quotes) == ("7:45 pm", (DIALOGUE["turns"][3]["utterance"],))
    (misread,) = got.booked_as_declined  # a booking recorded as declined, citing the success
    assert (misread.alternative_offered, misread.quotes, len(misread.turns)) == (None, (DIALOGUE["turns"][5]["utterance"],), 6)


@pytest.mark.parametrize(("clock", "later"), [("7 pm", "8 pm"), ("11:30 am", "12:30 pm"), ("12 pm", "1 pm"), ("7:30", None)])
def test_an_hour_later_is_written_as_the_corpus_writes_times(clock: str, later: str | None):
    assert ev._later(clock) == later


@pytest.mark.parametrize(("date", "other"), [("March 3rd", "March 4th"), ("March 11th", "March 12th"), ("today", "tomorrow"),
                                             ("next Sunday", "next Monday"), ("soon", None)])
def test_another_date(date: str, other: str | None):
    assert ev._another_day(date) == other


@pytest.mark.parametrize(
    ("sentence", "labels"),
    [
        ("we open from 8 a.m. to 4 p.m. monday to wednesday, and it is closed on thursday",
         {"monday": ("08:00", "16:00"), "tuesday": ("08:00", "16:00"), "wednesday": ("08:00", "16:00"), "thursday": None}),
        ("on saturday and sunday it runs from 11 to 3 p.m.", {"saturday": ("11:00", "15:00"), "sunday": ("11:00", "15:00")}),
        ("from 9 p.m. to 1 a.m. friday to sunday", dict.fromkeys(("friday", "saturday", "sunday"), ("21:00", "01:00"))),
        ("daily from 7:30 a.m. to 6 p.m. except tuesday when it is 10 a.m. to noon",
         {**dict.fromkeys(("monday", "wednesday", "thursday", "friday", "saturday", "sunday"), ("07:30", "18:00")),
          "tuesday": ("10:00", "12:00")}),
        ("open from june to august", None),
        ("call ahead", None),
    ],
)
def test_hours_labels(sentence: str, labels: dict[str, Any] | None):
    assert ev.hours_labels(sentence) == labels


def test_the_eval_counts_each_kind_of_record(tmp_path: Path, capsys: pytest.CaptureFixture[str]):
    (tmp_path / "train").mkdir()
    (tmp_path / "train" / "dialogues_001.json").write_text(json.dumps([DIALOGUE, {**DIALOGUE, "services": ["Hotels_1"]}]))
    backend = ev.check_backend()
    assert backend is not None
    tally = ev.evaluate(backend, ev.booking_records(DIALOGUE), None)
    assert tally.counts == {  # [accepted, records]
        "bookings: true booked records accepted": [1, 1], "  after a failure": [1, 1],
        "bookings: wrong records accepted": [0, 3], "  time +1 h": [0, 1], "  party +1": [0, 1], "  another date": [0, 1],
        "bookings: failures recorded as booked, accepted": [0, 1], "bookings: declines accepted": [1, 1],
        "bookings: successes recorded as declined, accepted": [0, 1],
    }
    assert tally.refusals == []
    kept = ev.Tally(shown=1)  # the first refusals of true records are kept, with what was checked
    for why in ("first", "second"):
        kept.add("a line", ev.Verdict(False, why), record="booked, 3 at 7:45 pm", quotes=("words",))
    kept.add("a line", ev.Verdict(True, "fine"), record="booked, 3 at 7:45 pm")
    assert kept.counts == {"a line": [1, 3]} and kept.refusals == [("booked, 3 at 7:45 pm", ("words",), "first")]
    (tmp_path / "attraction_db.json").write_text(json.dumps([
        {"openhours": "we open from 8 a.m. to 4 p.m. monday to wednesday, and it is closed on thursday"},
        {"openhours": "?"}, {"openhours": "open from june to august"}]))
    ev.main(["--sgd", str(tmp_path), "--multiwoz", str(tmp_path), "--backend", "check"])
    out = capsys.readouterr().out
    assert "1 restaurant dialogues, 1 bookings, 1 with a failure" in out
    assert "2 distinct hours sentences, 1 labelled" in out
    assert "bookings: declines accepted" in out and "1/1 (100.0%)" in out and "elapsed" in out


def test_without_the_old_judge_the_eval_says_where_it_is_and_goes_on_with_check(tmp_path: Path,
                                                                                 capsys: pytest.CaptureFixture[str]):
    (tmp_path / "train").mkdir()
    (tmp_path / "train" / "dialogues_001.json").write_text(json.dumps([DIALOGUE]))
    ev.main(["--sgd", str(tmp_path), "--backend", "judge"])
    out = capsys.readouterr().out
    assert ev.judge_backend() is None  # deleted after 2022086
    assert out.count("judge: not in this checkout;") == 1 and "git worktree add /tmp/before 2022086" in out
    assert "check" in out.splitlines()[2] and "bookings: declines accepted" in out
    assert ev.cite_backend() is None  # the citation check is deleted (issue 52)
    ev.main(["--sgd", str(tmp_path)])
    assert "check" in capsys.readouterr().out


def test_the_dev_and_test_splits_name_the_party_number_of_seats():
    renamed = json.loads(json.dumps(DIALOGUE).replace('"party_size"', '"number_of_seats"'))
    assert ev.booking_records(renamed) == ev.booking_records(DIALOGUE)


def test_the_accepted_failures_recorded_as_booked_are_listed_on_request(tmp_path: Path, capsys: pytest.CaptureFixture[str]):
    # a failure turn with no word of failure in it, after a yes to the request: the careless booked record is
    # accepted, and listed
    quiet = json.loads(json.dumps(DIALOGUE))
    quiet["turns"][1]["utterance"] = "Sure, three guests next Friday at 6:30 pm, that works."
    quiet["turns"][3]["utterance"] = "Is there something else I can do?"
    quiet["turns"][3]["frames"][0]["actions"] = [{"act": "NOTIFY_FAILURE", "slot": "", "values": []}]
    (tmp_path / "train").mkdir()
    (tmp_path / "train" / "dialogues_001.json").write_text(json.dumps([quiet]))
    ev.main(["--sgd", str(tmp_path), "--backend", "check"])
    assert "failures recorded as booked, accepted (" not in capsys.readouterr().out
    ev.main(["--sgd", str(tmp_path), "--backend", "check", "--show-failed-as-booked"])
    out = capsys.readouterr().out
    assert "check: failures recorded as booked, accepted (1)" in out
    assert "record: booked, 3 at next Friday at 6:30 pm" in out
    assert "business: Is there something else I can do?" in out and "business: Sure, three guests" in out


def test_the_check_backend_sends_the_per_fact_quotes_a_model_would():
    got = ev.booking_records(DIALOGUE)
    ((_, true),) = got.true
    args = ev.record_arguments(true)
    # each fact's clause in the turn that said it; the outcome's clause in the success turn
    assert args["party_quote"] == args["date_quote"] == "Just to check: three guests at Blue Heron on next Friday at 6:30 pm"
    assert args["time_quote"] == "Would 7:45 pm suit you instead"
    assert args["outcome_quote"] == "Done"
    check = ev.check_backend()
    assert check is not None and check.booked(true).accepted
    assert [check.booked(r).accepted for _, r in got.wrong] == [False, False, False]
    (careless,) = got.failed_as_booked
    assert not check.booked(careless).accepted
    (declined,) = got.declined
    assert ev.record_arguments(declined)["outcome_quote"] == "I couldn't get that table"
    assert check.declined(declined).accepted


@pytest.mark.parametrize("words, read, quote", [
    # the outcome's own clause, not what is said beside it after "and"
    ("Your table is booked and they don't take cards.", "booked", "Your table is booked"),
    # a failure said with n't or "nothing for", after a clause of other news
    ("They are on Elm Road. That slot wasn't available. Shall I try 8 pm?", "failed", "That slot wasn't available"),
    ("The price is fair. But they have nothing for that hour.", "failed", "But they have nothing for that hour"),
    ("Sorry, the place does not have 6 pm free, how about 7 pm?", "failed", "the place does not have 6 pm free"),
])
def test_the_simulated_model_quotes_the_clause_that_says_the_outcome(words: str, read: str, quote: str):
    assert ev._outcome_words(words, ev._BOOKED_READ if read == "booked" else ev._FAILED_READ) == quote


def test_hours_records_point_each_fact_at_its_words_and_the_check_takes_only_the_true_ones():
    cases = ev.hours_records(["Monday to Friday 9 a.m. to 5 p.m., closed on Sunday.", "It is open daily from 10am to 4pm."])
    check = ev.check_backend()
    assert check is not None and len(cases.true) == 1 + 1 + 1  # Monday to Friday, Sunday, daily: each one record
    assert {r.ranges[0].days for r in cases.true} == {tuple(ev.WEEKDAYS[:5]), ("sunday",), tuple(ev.WEEKDAYS)}
    assert any(label == "a day left out" for label, _ in cases.wrong)
    assert all(check.hours(r).accepted for r in cases.true), [check.hours(r).why for r in cases.true if not check.hours(r).accepted]
    assert not any(check.hours(r).accepted for _, r in cases.wrong)
    sunday = next(r for r in cases.true if r.ranges[0].days == ("sunday",))
    assert (sunday.days_quote, sunday.times_quote, sunday.ranges[0].closed) == ("sunday", "closed", True)


def test_the_committed_corpora_are_read_and_keep_the_tool_s_schema() -> None:
    """bench/corpora: every case is read, every record is one the tool's schema allows (a refusal is the check's)."""
    import importlib.util
    import pathlib

    from calld.adapters import gpt_live

    path = pathlib.Path(__file__).parent.parent / "bench" / "evidence_corpus.py"
    spec = importlib.util.spec_from_file_location("evidence_corpus", path)
    corpus = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    spec.loader.exec_module(corpus)  # type: ignore[union-attr]
    files = sorted((path.parent / "corpora").glob("*.jsonl.gz"))
    assert len(files) >= 6
    for f in files:
        for case in corpus.cases(f):
            gpt_live.read_record(case["record"], "book" if case["job"] == "book" else "quick_ask")
            assert case["truth"] in ("true", "wrong") and corpus.request(case) is not None
