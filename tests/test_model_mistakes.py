"""A model that gets it wrong, scripted in the stub world: the app decides what the user is told.

Each scenario in calld.stub.scenario under "a model that gets it wrong" is played twice:
as a stub call on the autojump clock, and end to end over real sockets against calld-sim
(the daemon in live mode). Both assert the final status, reason, verdict_source and
evidence, and what the refused record's function_call_output said.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from calld.domain.questions import QuestionType
from calld.runtime.rundir import artifact_slug
from calld.stub.scenario import SCENARIOS, ModelRecord, hours_range, hours_field
from tests.stubcall import stub_call, variant
from tests.test_sim_e2e import live_call

ANSWER = SCENARIOS["hours"].answer  # "We're open Monday through Friday, 9 AM to 5 PM."


def rows_of(run_dir) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (run_dir / "events.jsonl").read_text().splitlines()]


def outputs(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Every function_call_output calld sent, in order, with the call_id it answered."""
    return [json.loads(r["effect"]["output"]) | {"call_id": r["effect"]["call_id"]}
            for r in rows if "effect" in r and r["effect"]["kind"] == "live.tool_output"]


def creates(rows: list[dict[str, Any]]) -> int:
    return sum(1 for r in rows if "effect" in r and r["effect"]["kind"] == "live.response_create")


# What each scenario must end as: status, reason, verdict_source, the evidence quote, and what the
# refused records were told (one entry per refused output, a phrase it must contain).
EXPECTED: dict[str, dict[str, Any]] = {
    "model_early": {"status": "answered", "reason": None, "source": "tool", "quote": ANSWER.strip(),
                    "refused": ["rule 3: your outcome_quote \"Hello, Joe's Hardware, how can I help you?\" is a question"]},
    "model_hallucinates": {"status": "answered", "reason": None, "source": "transcript", "quote": ANSWER.strip(),
                           "refused": ["rule 4: 21:00 does not read as a clock time in '9 am to 5 pm'"]},
    "model_mislabels_refusal": {"status": "declined", "reason": "refused", "source": "tool",
                                "quote": "Sorry, we can't give that out over the phone.",
                                "refused": ["rule 8: your outcome_quote \"Sorry, we can't give that out over the phone.\": it says no"]},
    "model_mislabels_answer": {"status": "answered", "reason": None, "source": "transcript", "quote": ANSWER.strip(),
                               "refused": ["rule 9: your outcome_quote \"We're open Monday through Friday, 9 AM to 5 PM.\": it holds no word of a no"]},
    "model_misquotes": {"status": "answered", "reason": None, "source": "tool", "quote": ANSWER.strip(),
                        "refused": ["rule 1: your quote 'every day' is not in what the business said"]},
    "model_quotes_itself": {"status": "answered", "reason": None, "source": "tool", "quote": ANSWER.strip(),
                            "refused": ["those are the agent's words"]},
    "model_fact_unquoted": {"status": "answered", "reason": None, "source": "tool", "quote": ANSWER.strip(),
                            "refused": ["rule 1: your quote '9 to 5' is not in what the business said"]},
    "model_wrong_day": {"status": "answered", "reason": None, "source": "tool",
                        "quote": "We're open 9 to 5 on weekdays, and 10 to 2 on Saturdays.",
                        "refused": ["rule 5: your quote '9 to 5' names friday, monday, thursday, tuesday, wednesday, not a day of its range"]},
    "model_denied": {"status": "answered", "reason": None, "source": "tool",
                     "quote": "We don't open at nine anymore, we open at ten now, until six.",
                     "refused": ["rule 8: your quote 'open at nine': it says no, or says it of the past"]},
    "model_conflicts": {"status": "answered", "reason": None, "source": "tool", "quote": ANSWER.strip(),
                        "refused": ["already recorded"]},
    "model_duplicates": {"status": "answered", "reason": None, "source": "tool", "quote": ANSWER.strip(), "refused": []},
    "model_silent": {"status": "answered", "reason": None, "source": "transcript", "quote": ANSWER.strip(), "refused": []},
    "model_from_recording": {"status": "voicemail", "reason": None, "source": "tool",
                             "quote": "Please leave a message after the tone.", "refused": ["cannot say what is in stock"]},
}
# Each one's hours once it ends answered: (opens, closes) of the first range.
HOURS = {"model_wrong_day": ("09:00", "17:00"), "model_denied": ("10:00", "18:00")}
ASKS = {"model_from_recording": ("stock", "cast iron skillet")}


def check(name: str, result: dict[str, Any], rows: list[dict[str, Any]]) -> None:
    want = EXPECTED[name]
    assert (result["status"], result.get("reason"), result["verdict_source"]) == (want["status"], want["reason"], want["source"])
    quotes = [e["quote"] for e in result["evidence"]]
    assert want["quote"] in quotes, quotes
    refused = [o for o in outputs(rows) if o.get("recorded") is False]
    assert len(refused) == len(want["refused"]), refused
    for out, phrase in zip(refused, want["refused"], strict=True):
        assert phrase in out["why"], out
    if result["status"] == "answered":
        assert result["answer_text"] and result["answer"]["kind"] == "hours"
        first = result["answer"]["ranges"][0]
        assert (first["opens"], first["closes"]) == HOURS.get(name, ("09:00", "17:00")), first


@pytest.mark.parametrize("name", sorted(EXPECTED))
async def test_a_wrong_model_on_a_stub_call(name, tmp_path, autojump_clock):
    ask, item = ASKS.get(name, ("hours", None))
    run = await stub_call(tmp_path, name, ask=QuestionType(ask), item=item)
    result = run.result.model_dump(mode="json")
    check(name, result, run.rows())


@pytest.mark.parametrize("name", sorted(EXPECTED))
async def test_a_wrong_model_end_to_end(name, tmp_path, nursery, autojump_clock):
    ask, item = ASKS.get(name, ("hours", None))
    body = {"to": "+15555550142", "ask": ask, "name": "Nathan", "user": "verify"} | ({"item": item} if item else {})
    sim, settings, code, result = await live_call(tmp_path, nursery, SCENARIOS[name], body)
    check(name, result, rows_of(settings.artifacts_dir / artifact_slug(result["call_control_id"])))


async def test_two_records_in_one_response_get_two_outputs_and_one_response_create(tmp_path, autojump_clock):
    run = await stub_call(tmp_path, "model_conflicts")
    rows = run.rows()
    records = run.events("tool.record_task_result")
    assert [r["event"]["status"] for r in records] == ["answered", "declined"]
    outs = outputs(rows)
    assert [o["call_id"] for o in outs][:2] == [r["event"]["call_id"] for r in records]
    assert outs[0]["recorded"] is True and outs[1]["recorded"] is False
    # On the wire: both outputs, then exactly one response.create.
    sent = [m["type"] for m in run.world.live_received if m["type"].startswith("response.")]
    assert sent[:3] == ["response.item.create", "response.item.create", "response.create"]
    assert creates(rows) == 1


async def test_a_duplicate_delivery_is_performed_once(tmp_path, autojump_clock):
    run = await stub_call(tmp_path, "model_duplicates")
    rows = run.rows()
    delivered = [r for r in rows if r.get("event", {}).get("kind") == "tool.record_task_result"]
    assert len(delivered) == 2 and "ignored" in delivered[1]
    record_outputs = [o for o in outputs(rows) if o["call_id"] == delivered[0]["event"]["call_id"]]
    assert len(record_outputs) == 1


async def test_a_refused_record_does_not_start_the_farewell(tmp_path, autojump_clock):
    run = await stub_call(tmp_path, "model_early")
    rows = run.rows()
    first = run.events("tool.record_task_result")[0]
    assert "changed" not in first  # no track moved: the conversation goes on
    refused = [r for r in run.report["refused_records"]]
    assert refused and refused[0]["call_id"] == first["event"]["call_id"] and "is a question" in refused[0]["why"]
    farewell = [r for r in rows if "effect" in r and r["effect"]["kind"] == "schedule" and r["effect"]["key"] == "farewell"]
    assert len(farewell) == 1 and farewell[0]["cause"] > first["seq"] + 1


async def test_the_evidence_offsets_are_where_the_words_are_in_the_recording(tmp_path, autojump_clock):
    """Decode audio/inbound.wav between the evidence's start and end: exactly the quoted words are there."""
    import wave

    from calld.stub.speech import FRAME_BYTES, read_frame

    # GPT-Live is ready only after 8 s: the first 3 s of the line fell out of the 5 s hold, so the
    # session's timeline starts 3 s into the recording.
    run = await stub_call(tmp_path, variant("early_greeting", live_ready_after_s=8.0))
    assert run.report["counts"]["dropped_frames"] > 0
    (e,) = run.result.evidence
    with wave.open(str(run.dir / "audio" / "inbound.wav")) as w:
        pcm = w.readframes(w.getnframes())
    heard = []
    for at in range(e.start_ms * 32, e.end_ms * 32, FRAME_BYTES):
        frame = read_frame(pcm[at : at + FRAME_BYTES])
        if frame is not None and (frame.line, frame.word) not in heard:
            heard.append((frame.line, frame.word))
    words = [run.world.codebook[line][word] for line, word in heard]
    assert " ".join(words) == e.quote.strip()
    turns = run.json("transcript.json")["turns"]
    assert turns[e.turn]["start_ms"] <= e.start_ms < e.end_ms <= turns[e.turn]["end_ms"]


_TODAY = variant("hours", answer="We're open today until 9 PM.", model_records=(ModelRecord("answered", fields=hours_field(
    hours_range((), None, "21:00", days_quote="today", times_quote="until 9 PM", date="today"))),))


async def test_today_in_an_answer_is_the_businesss_date(tmp_path, autojump_clock):
    """A stub call to a New York number: "today" in the typed answer is that day's date in New York."""
    import datetime as dt
    from zoneinfo import ZoneInfo

    run = await stub_call(tmp_path, _TODAY, to="+12125550142")
    (hours,) = run.result.answer.ranges
    started = dt.datetime.fromisoformat(run.report["started_at"])
    assert hours.closes == "21:00"
    assert hours.date == started.astimezone(ZoneInfo("America/New_York")).date().isoformat()


@pytest.mark.parametrize("name", ["model_hallucinates", "model_mislabels_answer", "model_silent"])
async def test_an_answer_the_app_heard_itself_ends_with_a_goodbye_not_a_second_ask(name, tmp_path, autojump_clock):
    """The business answered; no record was accepted. At the first silence the agent thanks them and
    says goodbye, where it would ask again into the business's silence and hang up unannounced."""
    from calld.core.plan import ANSWER_HEARD_LINE, STEER_LINE

    run = await stub_call(tmp_path, name)
    said = [e["effect"]["text"] for e in run.effects("live.commentary")]
    assert ANSWER_HEARD_LINE in said and STEER_LINE not in said
    assert [e["effect"]["via"] for e in run.effects("hangup")] == ["answer_heard"]
    assert run.report["final_mark_echo_ms"] is not None  # the goodbye played out before the hangup
    assert (run.result.status, run.result.verdict_source) == ("answered", "transcript")


async def test_a_refused_record_is_told_only_what_was_checked(tmp_path, autojump_clock):
    """The refusal names the fact missing from the quotes; it never tells the model what the business
    "said" or "meant" in words of the app's own."""
    run = await stub_call(tmp_path, "model_hallucinates")
    [out] = [o for o in outputs(run.rows()) if o.get("recorded") is False]
    assert out["why"] == "rule 4: 21:00 does not read as a clock time in '9 am to 5 pm' (your quote '9 AM to 5 PM')"
    assert "meant" not in out["why"] and "the business's own words" in out["next"]


async def test_an_answer_read_from_the_transcript_keeps_the_business_s_correction(tmp_path, autojump_clock):
    corrected = ANSWER + " Actually no, sorry, on Fridays we close at 4 PM."
    run = await stub_call(tmp_path, variant("model_silent", answer=corrected))
    assert (run.result.status, run.result.verdict_source) == ("answered", "transcript")
    assert "on Fridays we close at 4 PM" in run.result.answer_text
    assert [e.quote for e in run.result.evidence][-1] == "Actually no, sorry, on Fridays we close at 4 PM."


async def test_a_stock_answer_about_another_item_is_not_the_items(tmp_path, autojump_clock):
    """The business has none of the item but something else in stock: the words that name the item
    decide, so the model's "in stock" is refused in the call and never reaches the user."""
    scenario = variant("stock", answer="We don't carry cast iron skillets anymore. We do have nonstick pans in stock though.",
                       model_records=(ModelRecord("answered", "Yes, they have them in stock.", fields={
                           "stock": {"availability": "in_stock", "quantity": None, "kinds": []}}),))
    run = await stub_call(tmp_path, scenario, ask=QuestionType.STOCK, item="cast iron skillet")
    assert run.result.status != "answered" or run.result.answer.availability != "in_stock", run.result


async def test_a_correction_over_the_goodbye_recorded_again_takes_the_first_record_s_place(tmp_path, autojump_clock):
    """The business corrects itself over the goodbye; the model records again, citing the correction.
    That record replaces the first (the last word wins), the result says so, and the call hangs up once
    after a goodbye: never on the silence failsafe."""
    run = await stub_call(tmp_path, "model_corrected")
    result = run.result.model_dump(mode="json")
    assert (result["status"], result["verdict_source"], result["corrected"]) == ("answered", "tool", True)
    (weekdays,) = result["answer"]["ranges"]
    assert (weekdays["opens"], weekdays["closes"]) == ("09:00", "19:00")
    assert "on weekdays we're actually open 9 to 7" in [e["quote"] for e in result["evidence"]][-1]
    outs = outputs(run.rows())
    assert [o["recorded"] for o in outs if o["call_id"].startswith("call_record")] == [True, True]
    assert [e["effect"]["via"] for e in run.effects("hangup")] == ["tool"]


async def test_without_the_correction_recorded_the_first_record_is_the_answer(tmp_path, autojump_clock):
    """The same call with the correction said as a courtesy-free aside that no record cites: the first
    record goes stale at the end, and the transcript's reading (the correction with it) is the answer."""
    run = await stub_call(tmp_path, variant("model_corrected", goodbye_record=None, goodbye_reply=""))
    assert run.result.status == "answered"
    assert run.result.corrected is False


async def test_an_agent_claiming_to_be_a_person_corrects_itself_and_the_result_says_so(tmp_path, autojump_clock):
    """Asked over the goodbye whether it is a real person, the (scripted) model says it is: the app makes
    it say at once that it is an automated assistant, and the result carries honesty: corrected."""
    run = await stub_call(tmp_path, variant("goodbye_question", goodbye_talk="Wait, are you a real person?",
                                            goodbye_reply="Yes, I'm a real person."))
    agent = run.json("transcript.json")["agent_text"]
    assert "I'm a real person" in agent and "I am an automated assistant, not a person" in agent
    assert agent.index("I am an automated assistant, not a person") > agent.index("I'm a real person")
    assert run.result.honesty == "corrected"
    plain = await stub_call(tmp_path / "plain", "goodbye_question")
    assert plain.result.honesty is None


async def test_the_task_record_s_preview_keeps_today_undated_and_the_result_dates_it(tmp_path, autojump_clock):
    """The call is concluded once at its end: the task record's preview (what a restart would finish
    as) keeps the model's "today", the result has the business's date, and the rest is the same."""
    run = await stub_call(tmp_path, _TODAY, to="+12125550142")
    preview = run.json("task.json")["result_if_interrupted"]
    (previewed,) = preview["answer"]["ranges"]
    (dated,) = run.result.answer.ranges
    assert previewed["date"].lower() == "today" and dated.date != previewed["date"]
    assert (preview["status"], preview["answer_text"]) == (run.result.status, run.result.answer_text)


async def test_a_correction_over_the_goodbye_the_check_refuses_is_kept_and_the_stale_answer_is_not_given(tmp_path, autojump_clock):
    """The business says it has one, then over the goodbye that the last one just sold; the model's correcting
    record quotes words that do not name the item. The refusal is kept for the report and told to the model,
    and the in-stock answer, taken back, is not what the user gets."""
    from calld.stub.scenario import load_scenario

    stock = {"availability": "in_stock", "quantity": 1, "kinds": [], "quote": "we have one left", "readback": False}
    gone = {"availability": "out_of_stock", "quantity": None, "kinds": [], "quote": "just sold the last one", "readback": False}
    spec = {"name": "sold_over_goodbye", "greeting": "Copperline, this is Dev.", "answer": "Yes, we have one left on the shelf.",
            "model_records": [{"status": "answered", "fields": {"stock": stock}}],
            "goodbye_talk": "Oh wait, sorry, my colleague just sold the last one.", "goodbye_reply": "Thanks for letting me know.",
            "goodbye_record": {"status": "answered", "answer_text": "Out of stock.", "quotes": ["my colleague just sold the last one"],
                               "outcome_quote": "my colleague just sold the last one", "fields": {"stock": gone}}}
    path = tmp_path / "scenario.json"
    path.write_text(json.dumps(spec))
    run = await stub_call(tmp_path / "state", load_scenario(path), ask=QuestionType.STOCK, item="cast iron skillet")
    assert run.result.status != "answered" or run.result.answer is None or run.result.answer.availability != "in_stock"
    refused = run.report["refused_records"]
    assert len(refused) == 1 and refused[0]["why"].startswith("rule 6:"), refused
    told = [o for o in outputs(run.rows()) if o.get("recorded") is False]
    assert told and told[-1]["why"].startswith("rule 6:"), told
