"""Scripted businesses for stub calls: what the business says, when, and which faults occur.

A Scenario is data. The stub world plays it: Telnyx (REST, webhooks, media) on one
side and a fake GPT-Live on the other, each reacting to what the app sends.

A booking business is a small state machine (`BookingScript`): in each state it
waits for the agent's words, as it heard them played on the line, to match one of
its replies, says that reply and moves on. So it reacts to what the agent really
said: a callback number it never heard is asked for again; a counter-offer the
agent turned down is not booked.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Literal

from attrs import evolve, field, frozen

ModelVerdict = Literal["answered", "declined", "none"]
# How the fake backend treats the user's window: checks it itself (careful), books whatever is
# offered and reports the true minutes (careless), or books it and reports 0 minutes (careless_lying).
# The last two are what the app's own window check is for.
BrainStyle = Literal["careful", "careless", "careless_lying"]


@frozen
class Reply:
    """Say `say` once the agent's words since the business last spoke match `when`; go to `then`.
    With `hangup`, the business hangs up once it has said it.

    What the fake model makes of the line is script too, never a reading of its words: `offer` is another
    time the business offers, as the model writes it ("Friday 7:30pm"); `record` holds fields the model's
    record made on hearing this line carries (per-fact quotes such as party_quote, time_quote, date_quote,
    outcome_quote, their readback flags, reason, opt_out_quote), over the brain's own.
    """

    say: str
    when: str = "."
    then: str = "done"
    hangup: bool = False
    offer: str | None = None
    record: dict[str, Any] = field(factory=dict, hash=False)

    def matches(self, heard: str) -> bool:
        return re.search(self.when, heard, re.IGNORECASE | re.DOTALL) is not None


@frozen
class ModelRecord:
    """One record_task_result the fake backend makes, right or wrong: the model's records are data.

    The stub model is a script, not a second reader: everything it records is written here, in the
    scenario, and nothing in calld.stub reads the business's words with the app's checker. So a stub
    call can show the model and the checker disagreeing, as live calls do.

    It is sent once the line named by `after` has been heard whole ("greeting": the business's
    first line, "answer": its answer). "{heard}" in `answer_text`, a quote or `outcome_quote` stands for
    the words of that line. `fields` are the typed fields it records (hours, stock, aisle), with their
    per-fact quotes (/work/notes/schema52.md: hours.ranges[i].days_quote and times_quote, stock.quote,
    aisle.quote, ...), right or wrong; None: no typed fields (all three null). `reason` is a decline's
    code (None: not said); `opt_out_quote` the business's words asking not to be called again.
    `deliveries` > 1 sends the same call_id again (a duplicate delivery); `same_response` puts it
    in one backend response with the record before it.
    """

    status: str
    answer_text: str | None = "{heard}"
    after: Literal["greeting", "answer"] = "answer"
    delay_s: float = 0.3
    deliveries: int = 1
    same_response: bool = False
    quotes: tuple[str, ...] = ("{heard}",)
    fields: dict[str, Any] | None = field(default=None, hash=False)
    reason: str | None = "refused"  # a declined record's reason code
    outcome_quote: str | None = "{heard}"
    opt_out_quote: str | None = None


WEEK = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")


def hours_range(days: tuple[str, ...], opens: str | None, closes: str | None, *, days_quote: str | None = None,
           times_quote: str | None = None, closed: bool = False, around_the_clock: bool = False,
           date: str | None = None) -> dict[str, Any]:
    """One hours range as a record gives it, with the words the model points at for its days and its times."""
    return {"days": list(days), "opens": opens, "closes": closes, "closed": closed, "around_the_clock": around_the_clock,
            "date": date, "days_quote": days_quote, "times_quote": times_quote, "context_quote": None, "readback": False}


def _hours(days: tuple[str, ...], opens: str | None, closes: str | None, *, days_quote: str | None = None,
           times_quote: str | None = None) -> dict[str, Any]:
    """A record's typed hours field, for one range (a scripted model's fields, right or wrong)."""
    return hours_field(hours_range(days, opens, closes, days_quote=days_quote, times_quote=times_quote))


def hours_field(*ranges: dict[str, Any]) -> dict[str, Any]:
    return {"hours": {"ranges": list(ranges), "no_set_hours": False, "no_set_hours_quote": None}}


def stock_field(availability: str, quantity: int | None = None, quote: str | None = None,
                kinds: tuple[dict[str, Any], ...] = ()) -> dict[str, Any]:
    return {"stock": {"availability": availability, "quantity": quantity, "kinds": list(kinds), "quote": quote, "readback": False}}


def aisle_field(location: str, quote: str | None = None) -> dict[str, Any]:
    return {"aisle": {"location": location, "quote": quote, "readback": False}}


# The business every scenario is unless it says otherwise, and what the model records of its answer.
DEFAULT_ANSWER = "We're open Monday through Friday, 9 AM to 5 PM."
WEEKDAYS_9_TO_5 = _hours(WEEK[:5], "09:00", "17:00", days_quote="Monday through Friday", times_quote="9 AM to 5 PM")


@frozen
class BookingScript:
    states: tuple[tuple[str, tuple[Reply, ...]], ...]
    start: str = "ask"

    def replies(self, state: str) -> tuple[Reply, ...]:
        return next((replies for name, replies in self.states if name == state), ())


@frozen
class Scenario:
    name: str
    greeting: str = "Hello, Joe's Hardware, how can I help you?"
    answer: str = DEFAULT_ANSWER
    # What the fake backend records once it has heard the answer ("none": it never records).
    model_verdict: ModelVerdict = "answered"
    closing_line: str = "Thank you so much for your help. Goodbye!"
    ring_s: float = 1.0  # dial -> call.answered
    greet_after_s: float = 0.2  # media start -> the business starts talking
    live_ready_after_s: float = 1.2  # session.start -> session.started
    answer_delay_s: float = 0.6  # the business has heard the ask -> starts answering
    media_before_answer: bool = False  # the media start frame beats the call.answered webhook
    echo_marks: bool = True
    confirm_hangup: bool = True  # Telnyx sends call.hangup after our hangup
    # The business hangs up on us: while the agent asks, or right after giving its answer.
    far_party_hangup: Literal["never", "mid_ask", "after_ask", "after_answer"] = "never"
    silent_after_greeting: bool = False  # the business never answers the question
    end_call_after_closing: bool = True  # the backend calls end_call after the closing line
    duplicate_webhooks: bool = False
    reorder_webhooks: bool = False  # call.answered and streaming.started before call.initiated
    goodbye_stall_s: float = 0.0  # GPT-Live goes silent this long halfway through the closing line
    # Talk during the goodbye: the business says `goodbye_talk` over the agent's closing line (from its
    # second word). With `goodbye_reply`, the fake model stops talking when it hears them (GPT-Live does,
    # when talked over), says the reply ("{name}": the user's first name), records its result again and
    # says goodbye again; without, it talks on, as over a courtesy.
    goodbye_talk: str = ""
    goodbye_reply: str = ""
    # What the fake model records after its reply to the goodbye talk: None, the first record again.
    goodbye_record: ModelRecord | None = None
    booking: BookingScript | None = None  # a restaurant taking a booking, instead of answering one question
    brain: BrainStyle = "careful"  # how the fake backend treats the window (booking only)
    # The fake backend's records, when scripted; empty: it records `model_verdict` after the answer (see
    # `answer_records`): the default answer's record as scripted, any other answer with no typed fields.
    model_records: tuple[ModelRecord, ...] = ()
    # The carrier ends the call before anyone answers, with this Telnyx hangup_cause and SIP code
    # (user_busy/486, call_rejected/603, timeout/487, not_found/404, ...): after ring_s, no call.answered.
    not_answered: str | None = None
    not_answered_sip: str | None = None
    # A hold before the answer: the business says hold_line (a cue, or "" for none), then the line
    # carries silence (or hold music) for hold_s, then the business comes back with its answer.
    hold_line: str = ""
    hold_music: bool = False
    hold_s: float = 0.0
    # A phone menu answers first: `menu` is its prompt (said instead of the greeting), `menu_routes`
    # what each key sequence leads to: "@person" (a person picks up and says the greeting), "@menu"
    # (the prompt again), or a recorded line to play (role "answer", then the prompt again).
    # The fake backend presses `model_dtmf` with send_dtmf when it hears the prompt, or, with
    # model_dtmf_spoken, only says the number aloud (which presses nothing).
    menu: str = ""
    # Answering machine detection (premium): the result Telnyx reports after the pickup (advice only:
    # it can be wrong either way), and whether a beep follows the greeting.
    amd_result: str | None = None
    amd_beep: bool = False
    screener: bool = False  # the greeting screens the call: the question is taken once the agent says why it calls
    menu_routes: dict[str, str] = field(factory=dict)
    model_dtmf: str = ""
    model_dtmf_spoken: bool = False
    # Transports lost. The media socket: closed with no start frame ("before_start"), fed garbage
    # before its start ("garbage"), or closed without a stop frame media_drop_after_s after the start
    # ("mid_call"); no call.hangup follows. GPT-Live: refuses the session ("refuse") or drops the
    # socket once the business's greeting or answer has been heard.
    media_drop: Literal["never", "before_start", "garbage", "mid_call"] = "never"
    media_drop_after_s: float = 6.0
    live_drop: Literal["never", "refuse", "after_greeting", "after_answer"] = "never"
    # GPT-Live goes quiet with its socket open: it never sends session.started ("before_start"), or
    # sends nothing at all (no audio, no transcript) from the business's first word on ("mid_call").
    live_mute: Literal["never", "before_start", "mid_call"] = "never"
    # The carrier's line: what the media start frame announces (and inbound audio is sent in), and L16's
    # byte order on the wire. The agent's audio is played as the dial asked, whatever the start frame said.
    media_encoding: str = "L16"
    media_rate: int = 16000
    carrier_byte_order: Literal["le", "be"] = "le"

    def answer_records(self) -> tuple[ModelRecord, ...]:
        """What the fake backend records: the scripted records; else `model_verdict` once the answer is heard,
        with the typed fields scripted for the default answer, and none for any other (the stub reads
        nothing: a scenario that wants an answer typed scripts it in model_records)."""
        if self.model_records or self.model_verdict == "none":
            return self.model_records
        if self.model_verdict == "answered" and self.answer == DEFAULT_ANSWER:
            return (ModelRecord("answered", fields=WEEKDAYS_9_TO_5),)
        return (ModelRecord(self.model_verdict),)


_MENU = "Thank you for calling Joe's Hardware. For store hours, press 1. For the operator, press 0."

SCENARIOS: dict[str, Scenario] = {
    s.name: s
    for s in (
        Scenario("hours"),
        Scenario(
            "stock",
            greeting="Good afternoon, Copperline Kitchen Supply.",
            answer="Yes, we have three of those on the shelf right now.",
            model_records=(ModelRecord("answered", fields=stock_field("in_stock", 3, "we have three of those on the shelf")),),
        ),
        Scenario(
            "aisle",
            greeting="Hi there, Valley Home Center.",
            answer="That's in aisle 14, next to the grills.",
            model_records=(ModelRecord("answered", fields=aisle_field("aisle 14", "That's in aisle 14")),),
        ),
        Scenario(
            "decline",
            answer="Sorry, we can't give that out over the phone.",
            model_verdict="declined",
        ),
        Scenario("late_answer", answer_delay_s=9.0),
        Scenario("early_greeting", greet_after_s=0.1, live_ready_after_s=3.0),
        Scenario("media_first", media_before_answer=True),
        Scenario("no_echo", echo_marks=False),
        Scenario("no_confirm", confirm_hangup=False),
        Scenario("far_party_mid_ask", far_party_hangup="mid_ask", model_verdict="none"),
        Scenario("far_party_after_answer", far_party_hangup="after_answer"),
        Scenario("far_party_unrecorded", far_party_hangup="after_answer", model_verdict="none"),
        # Hears the whole request, says nothing, hangs up.
        Scenario("far_party_after_ask", far_party_hangup="after_ask", silent_after_greeting=True, model_verdict="none"),
        Scenario("dont_know", answer="Honestly, I don't know, I just started here.",
                 model_records=(ModelRecord("declined", None, reason="unknown", outcome_quote="I don't know"),)),
        Scenario("stall", silent_after_greeting=True, model_verdict="none"),
        Scenario("duplicates", duplicate_webhooks=True),
        Scenario("reordered", reorder_webhooks=True, duplicate_webhooks=True),
        # The business asks not to be called again; its (careless) model records it as an answer anyway.
        Scenario(
            "opt_out",
            answer="Please stop calling us, and take this number off your list.",
            model_verdict="answered",
        ),
        # It asks in words no list of the app's knows; the model reports the opt-out with its quote, and that binds.
        Scenario(
            "opt_out_in_words",
            answer="We'd rather you lost this number, to be honest. We don't do phone enquiries.",
            model_records=(ModelRecord("declined", None, reason=None, outcome_quote="We don't do phone enquiries",
                                       opt_out_quote="We'd rather you lost this number"),),
        ),
        # Not reached: the carrier's answer instead of a business (see calld.core.outcome.ending_for).
        Scenario("busy", not_answered="user_busy", not_answered_sip="486", ring_s=0.5),
        Scenario("rejected", not_answered="call_rejected", not_answered_sip="603", ring_s=3.0),
        Scenario("ring_timeout", not_answered="timeout", not_answered_sip="487", ring_s=30.0),
        Scenario("not_in_service", not_answered="unallocated_number", not_answered_sip="404", ring_s=0.3),
        Scenario("number_gone", not_answered="normal_unspecified", not_answered_sip="410", ring_s=0.3),
        Scenario("media_before_start", media_drop="before_start"),
        Scenario("media_garbage", media_drop="garbage"),
        Scenario("media_drop", media_drop="mid_call", media_drop_after_s=6.0, model_verdict="none"),
        Scenario("media_drop_after_verdict", media_drop="mid_call", media_drop_after_s=11.8,
                 closing_line="Thank you so much for all of your help today, that is everything I needed, goodbye!"),
        Scenario("live_refused", live_drop="refuse"),
        Scenario("live_lost", live_drop="after_greeting"),
        Scenario("live_lost_after_answer", live_drop="after_answer", model_verdict="none"),
        Scenario("live_never_ready", live_mute="before_start"),
        Scenario("live_gone_quiet", live_mute="mid_call", model_verdict="none"),
        # Holds: a clerk who goes to check, hold music, a hold that never ends, and a silence with no cue.
        Scenario("hold", hold_line="Sure, let me check on that for you.", hold_s=45.0),
        Scenario("hold_music", hold_line="Please hold.", hold_music=True, hold_s=45.0),
        Scenario("music_only", hold_music=True, hold_s=45.0),
        Scenario("hold_forever", hold_line="One moment please.", hold_s=200.0, model_verdict="none"),
        Scenario("silence_no_cue", hold_s=45.0),
        # The wrong party: a residence, after the agent's question.
        Scenario("wrong_party", greeting="Hello?", answer="Sorry, I think you have the wrong number, this is a private residence.",
                 model_verdict="none"),
        # A call screener asks who is calling and why before putting the call through.
        Scenario("screener", screener=True, greeting="Hi, the person you are calling uses a screening service. Please state your name "
                 "and the reason for your call."),
        # Phone menus: one that puts a person on after a 0, one that loops, one where the agent only says "zero".
        Scenario("menu", menu=_MENU, menu_routes={"0": "@person"}, model_dtmf="0"),
        Scenario("menu_loop", menu=_MENU, menu_routes={"0": "@menu"}, model_dtmf="0", model_verdict="none"),
        Scenario("menu_spoken", menu=_MENU, menu_routes={"0": "@person"}, model_dtmf_spoken=True, model_verdict="none"),
        # A recorded information line: the menu's announcement itself states the hours.
        Scenario("menu_hours", menu="Thanks for calling Main Street Hardware. Our hours are Monday to Friday, 9 AM to 5 PM. "
                 "For the operator, press 0.", menu_routes={"0": "@person"}, model_dtmf="0"),
        # Recordings: a greeting that states the hours, and one that does not. AMD is advice: it calls the
        # first a human and the receptionist of "amd_wrong" a machine.
        Scenario("voicemail_hours", greeting="Hi, you've reached Joe's Hardware. We're open Monday through Friday, "
                 "9 AM to 5 PM. Please leave a message after the tone.", silent_after_greeting=True,
                 model_verdict="none", amd_result="human_business", amd_beep=True),
        Scenario("voicemail", greeting="You've reached the voicemail of Joe's Hardware. Please leave a message "
                 "after the beep.", silent_after_greeting=True, model_verdict="none", amd_result="machine", amd_beep=True),
        Scenario("amd_wrong", amd_result="machine"),
        # Picked up, and nobody ever says a word.
        Scenario("silent_line", greeting="", silent_after_greeting=True, model_verdict="none"),
        # The business asks something over the agent's goodbye, or only says bye over it.
        Scenario("goodbye_question", goodbye_talk="Wait, what name was that for?", goodbye_reply="It's for {name}."),
        Scenario("goodbye_courtesy", goodbye_talk="Thanks, bye-bye!"),
        Scenario("goodbye_stall", goodbye_stall_s=0.5, closing_line="Thank you so much for your help today, that is everything I needed, goodbye!"),
        # -- a model that gets it wrong: the app, not the model, decides what the user is told --
        # It records an answer while the business has only said hello, citing the hello; then the real one.
        Scenario("model_early", model_records=(
            ModelRecord("answered", "They are open 9 AM to 5 PM.", after="greeting",
                        fields=_hours((), "09:00", "17:00", times_quote="9 AM to 5 PM")),
            ModelRecord("answered", fields=WEEKDAYS_9_TO_5))),
        # It hears "9 AM to 5 PM" and records "until 9 PM", citing what it heard; it never records again.
        Scenario("model_hallucinates", model_records=(
            ModelRecord("answered", "They are open until 9 PM.", fields=_hours((), None, "21:00", times_quote="9 AM to 5 PM")),)),
        # The business refuses and the model calls it an answer, with no hours; then it declines.
        Scenario("model_mislabels_refusal", answer="Sorry, we can't give that out over the phone.", model_records=(
            ModelRecord("answered", "They won't say.", fields={"hours": None}), ModelRecord("declined", None, delay_s=1.0))),
        # The business answers and the model records a refusal, citing the answer.
        Scenario("model_mislabels_answer", model_records=(ModelRecord("declined", None),)),
        # It cites words the business never said; then what it did say.
        Scenario("model_misquotes", model_records=(
            ModelRecord("answered", "Open every day until midnight.", quotes=("We're open every day until midnight.",),
                        fields=_hours(WEEK, None, "00:00", days_quote="every day", times_quote="until midnight")),
            ModelRecord("answered", delay_s=1.0, fields=WEEKDAYS_9_TO_5))),
        # It cites the agent's own question; then the business's answer.
        Scenario("model_quotes_itself", model_records=(
            ModelRecord("answered", "9 to 5 on weekdays.", quotes=("What are your opening hours?",),
                        outcome_quote="What are your opening hours?",
                        fields=_hours(WEEK[:5], "09:00", "17:00", days_quote="What are your opening hours?",
                                      times_quote="What are your opening hours?")),
            ModelRecord("answered", delay_s=1.0, fields=WEEKDAYS_9_TO_5))),
        # It cites the days but gives times its quote does not hold; then the whole answer.
        Scenario("model_fact_unquoted", model_records=(
            ModelRecord("answered", "Monday through Friday, 8 to 5.", quotes=("Monday through Friday",),
                        fields=_hours(WEEK[:5], "09:00", "17:00", days_quote="Monday through Friday", times_quote="9 to 5")),
            ModelRecord("answered", delay_s=1.0, fields=WEEKDAYS_9_TO_5))),
        # It gives Saturday the weekdays' hours; then each its own.
        Scenario("model_wrong_day", answer="We're open 9 to 5 on weekdays, and 10 to 2 on Saturdays.", model_records=(
            ModelRecord("answered", "Saturday 9 to 5.", fields=_hours(("saturday",), "09:00", "17:00", days_quote="Saturdays",
                                                                      times_quote="9 to 5")),
            ModelRecord("answered", delay_s=1.0, fields=hours_field(
                hours_range(WEEK[:5], "09:00", "17:00", days_quote="on weekdays", times_quote="9 to 5"),
                hours_range(("saturday",), "10:00", "14:00", days_quote="on Saturdays", times_quote="10 to 2"))))),
        # It cites an opening time the business denies in the same breath; then the right one.
        Scenario("model_denied", answer="We don't open at nine anymore, we open at ten now, until six.", model_records=(
            ModelRecord("answered", "Open at 9.", fields=_hours((), "09:00", None, times_quote="open at nine")),
            ModelRecord("answered", "Open 10 to 6.", delay_s=1.0, fields=_hours((), "10:00", "18:00",
                                                                                times_quote="we open at ten now, until six")))),
        # The business corrects itself over the goodbye; the model records again, citing the correction,
        # and that record takes the first one's place.
        Scenario("model_corrected", answer="We're open Monday through Friday, 9 AM to 9 PM.",
                 model_records=(ModelRecord("answered", fields=_hours(WEEK[:5], "09:00", "21:00", days_quote="Monday through Friday",
                                                                      times_quote="9 AM to 9 PM")),),
                 goodbye_talk="Oh wait, sorry, on weekdays we're actually open 9 to 7.",
                 goodbye_reply="Thank you, 9 to 7 it is.",
                 goodbye_record=ModelRecord("answered", "Weekdays 9 AM to 7 PM.",
                                            quotes=("on weekdays we're actually open 9 to 7",),
                                            fields=_hours(WEEK[:5], "09:00", "19:00", days_quote="on weekdays",
                                                          times_quote="open 9 to 7"))),
        # Two records in one backend response that disagree: the first that holds wins.
        Scenario("model_conflicts", model_records=(
            ModelRecord("answered", fields=WEEKDAYS_9_TO_5), ModelRecord("declined", None, same_response=True))),
        # The same function call delivered twice.
        Scenario("model_duplicates", model_records=(ModelRecord("answered", deliveries=2, fields=WEEKDAYS_9_TO_5),)),
        # The business answers and stays on the line; the model never records anything.
        Scenario("model_silent", model_verdict="none"),
        # A recorded greeting that gives only hours; the model takes it for an answer about stock.
        Scenario(
            "model_from_recording",
            greeting="You've reached Copperline Kitchen Supply. Our hours are 9 AM to 5 PM. Please leave a message after the tone.",
            silent_after_greeting=True,
            model_records=(ModelRecord("answered", "Yes, it is in stock.", after="greeting", fields=stock_field("in_stock")),
                           ModelRecord("voicemail", None, after="greeting", delay_s=2.0)),
        ),
    )
}


# -- restaurants taking a booking --------------------------------------------------------------------

_RESTAURANT = "Good evening, Trattoria Roma, how can I help you?"
_ASKS_TO_BOOK = r"book a table"
_NUMBER = r"\+\d{10,15}"

# The tail every booking shares: special requests, then the read-back, then the confirmation.
_REQUESTS = ("requests", (Reply("Lovely, that's all noted.", then="readback"),))
_READBACK = (
    "readback",
    (Reply("Yes, that's right. You're all booked, we'll see you then.", when=r"read that back|is that right", then="booked"),),
)
# An agent that takes a booking back is let off politely.
_BOOKED = ("booked", (Reply("Oh, no problem, I'll cancel it. Goodbye.", when=r"don't hold|cancel", then="done"),))
_COUNTER = (
    "offer",
    (
        Reply("No problem, maybe another time. Goodbye.", when=r"doesn't work|leave it|no,? thank", then="done"),
        Reply("Great. Any special requests?", when=r"\bworks\b|\byes\b|that's fine", then="requests"),
    ),
)


def _booking(name: str, first: Reply, *states: tuple[str, tuple[Reply, ...]], **kw: object) -> Scenario:
    script = BookingScript(states=(("ask", (first,)), *states, _REQUESTS, _READBACK, _BOOKED))
    return Scenario(name, greeting=_RESTAURANT, booking=script, **kw)  # type: ignore[arg-type]


BOOK_SCENARIOS: dict[str, Scenario] = {
    s.name: s
    for s in (
        # Books straight away; asks only for special requests.
        _booking(
            "book_straight",
            Reply("Of course, we have a table for you then. Any special requests?", when=_ASKS_TO_BOOK, then="requests"),
        ),
        # Wants the name and a callback number first, and asks again until it has heard both.
        _booking(
            "book_details",
            Reply(
                "Sure, I can do that. What name is the booking under, and what number can we reach you on?",
                when=_ASKS_TO_BOOK,
                then="details",
            ),
            (
                "details",
                (
                    Reply("Thank you. Any special requests?", when=rf"(?=.*\bunder\b)(?=.*{_NUMBER})", then="requests"),
                    Reply("Sorry, I didn't catch that. What name, and what number?", then="details"),
                ),
            ),
        ),
        # The time asked for is full; 30 minutes later is free.
        _booking(
            "book_counter_inside",
            Reply(
                "We're full at seven, but I could do 7:30pm on Friday. Would that work?",
                when=_ASKS_TO_BOOK,
                then="offer",
                offer="Friday 7:30pm",
            ),
            _COUNTER,
        ),
        # The time asked for is full; only two and a half hours later is free.
        _booking(
            "book_counter_outside",
            Reply(
                "I'm sorry, we're fully booked at seven. The earliest I could do is 9:30pm on Friday. Would that work?",
                when=_ASKS_TO_BOOK,
                then="offer",
                offer="Friday 9:30pm",
            ),
            _COUNTER,
        ),
        # The time asked for is full; only two hours EARLIER is free (outside any window under 120 minutes).
        _booking(
            "book_counter_earlier",
            Reply(
                "I'm sorry, we're fully booked at seven. The only table I have is at 5pm on Friday. Would that work?",
                when=_ASKS_TO_BOOK,
                then="offer",
                offer="Friday 5pm",
            ),
            _COUNTER,
        ),
        # No table at all, and nothing else offered.
        _booking(
            "book_full",
            Reply("I'm sorry, we're fully booked on Friday evening.", when=_ASKS_TO_BOOK, then="done"),
        ),
        # Needs a card number the request does not give, and will not hold a table without it.
        _booking(
            "book_needs_card",
            Reply("Sure. Which credit card can we hold the table with?", when=_ASKS_TO_BOOK, then="card"),
            ("card", (Reply("Sorry, we can't hold a table without a card. Goodbye.", when=r"check with", then="done"),)),
        ),
        # Asks something the request does not answer; books once the agent says it will check.
        _booking(
            "book_unanswered",
            Reply("Sure, we can do that. Any allergies we should know about?", when=_ASKS_TO_BOOK, then="allergies"),
            (
                "allergies",
                (Reply("No problem, just let us know. Any special requests?", when=r"check with", then="requests"),),
            ),
        ),
    )
}
# Careless backends book an out-of-window offer (one even says it is 0 minutes off): the app refuses it.
for _style in ("careless", "careless_lying"):
    for _base in ("book_counter_outside", "book_counter_earlier"):
        _s = evolve(BOOK_SCENARIOS[_base], name=f"{_base}_{_style}", brain=_style)
        BOOK_SCENARIOS[_s.name] = _s


def unknown_scenario(name: str, *, booking: bool) -> str:
    """What to say for a --scenario that names no scripted business of this kind: the nearest names (a
    typo), the other kind's if it is one of those, and where they are all listed."""
    import difflib

    mine, theirs = (BOOK_SCENARIOS, SCENARIOS) if booking else (SCENARIOS, BOOK_SCENARIOS)
    kind = "booking scenario" if booking else "stub scenario"
    other = f" ({name!r} is a {'quick ask' if booking else 'booking'}'s: use it with calld-ctl {'ask' if booking else 'book'})" \
        if name in theirs else ""
    near = difflib.get_close_matches(name, list(mine), n=3, cutoff=0.6)
    every = (f"choose one of {', '.join(sorted(mine))}" if len(mine) <= 15
             else f"calld/stub/scenario.py lists all {len(mine)}, e.g. hours, stock, decline")
    if near:
        return f"unknown {kind} {name!r}{other}; did you mean {' or '.join(repr(n) for n in near)}? ({every})"
    return f"unknown {kind} {name!r}{other}; {every}"


def load_scenario(path: Path) -> Scenario:
    """A scenario from a JSON file: {"name": ..., any Scenario field: value}. What is wrong with a file is
    refused with every field to fix named: unknown keys (with the nearest known one), wrong types, a value
    that is none of a field's choices, a negative duration, a booking reply that could never be said."""
    import json

    from cattrs import Converter, transform_error
    from cattrs.errors import ClassValidationError

    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError) as exc:
        raise ValueError(f"{path}: cannot read a JSON scenario: {exc}") from None
    if not isinstance(data, dict):
        raise ValueError(f'{path}: a scenario is a JSON object of Scenario fields ({{"name": ..., "greeting": ...}}), '
                         f"not a {type(data).__name__}")
    converter = Converter(forbid_extra_keys=True)
    converter.register_structure_hook(bool, _strict_bool)
    converter.register_structure_hook(str, _strict_str)
    if lists := _not_lists(data, Scenario, ""):  # structured, a string would be a list of its characters
        raise ValueError(f"{path}: " + "; ".join(lists))
    try:
        scenario = converter.structure(data, Scenario)
    except ClassValidationError as exc:
        raise ValueError(f"{path}: " + "; ".join(_where(line) for line in transform_error(exc, format_exception=_problem))) from None
    if problems := _problems(scenario):
        raise ValueError(f"{path}: " + "; ".join(problems))
    return scenario


def _strict_bool(value: Any, _type: type) -> bool:
    """JSON's true or false only: bool("false") is True, so a quoted word would flip a switch."""
    if not isinstance(value, bool):
        raise ValueError(f"{value!r} is not true or false")
    return value


def _strict_str(value: Any, _type: type) -> str:
    if not isinstance(value, str):
        raise ValueError(f"expected a string (in quotes), not {value!r}")
    return value


def _not_lists(data: Any, type_: Any, at: str) -> list[str]:
    """Each place a list is due and something else is given ("model_records": "answered"), at any depth."""
    import types
    import typing

    import attrs

    if attrs.has(type_) and isinstance(data, dict):
        hints = typing.get_type_hints(type_)
        return [p for k, v in data.items() if k in hints for p in _not_lists(v, hints[k], f"{at}.{k}".lstrip("."))]
    args = [a for a in typing.get_args(type_) if a is not type(None) and a is not Ellipsis]
    if typing.get_origin(type_) is tuple:
        if not isinstance(data, list):
            return [f"{at}: expected a list (JSON [...]), not {json_type(data)}"]
        items = args if len(args) != 1 else args * len(data)
        return [p for i, (x, t) in enumerate(zip(data, items)) for p in _not_lists(x, t, f"{at}[{i}]")]
    if typing.get_origin(type_) is dict and not isinstance(data, dict):
        return [f"{at}: expected an object (JSON {{...}}), not {json_type(data)}"]
    optional = typing.get_origin(type_) in (typing.Union, types.UnionType) and len(args) == 1
    return _not_lists(data, args[0], at) if optional and data is not None else []  # an optional record or object


def json_type(value: Any) -> str:
    return {dict: "an object", str: "a string", int: "a number", float: "a number", bool: "true or false"}.get(
        type(value), type(value).__name__)


def _where(line: str) -> str:
    """cattrs's "what @ $.a.b" as "a.b: what" (a problem of the whole object has no field before it)."""
    what, _, at = line.rpartition(" @ ")
    field_path = at.removeprefix("$").removeprefix(".")
    return f"{field_path}: {what}" if field_path else what


def _problem(exc: BaseException, cls: type | None) -> str:
    """One problem in words a person fixing the file can act on."""
    import difflib
    import typing

    import attrs
    from cattrs.errors import ForbiddenExtraKeysError

    if isinstance(exc, ForbiddenExtraKeysError):
        known = list(attrs.fields_dict(exc.cl)) if attrs.has(exc.cl) else []
        out = []
        for key in sorted(exc.extra_fields):
            near = difflib.get_close_matches(key, known, n=1)
            out.append(f"unknown key {key!r}" + (f" (did you mean {near[0]!r}?)" if near else ""))
        return ", ".join(out)
    if typing.get_origin(cls) is Literal:
        choices = ", ".join(str(c) for c in typing.get_args(cls))
        given = str(exc).split(" not in literal")[0]
        return f"{given!r} is not one of: {choices}"
    if isinstance(exc, KeyError):
        return "required, and missing"
    if isinstance(exc, ValueError) and str(exc).startswith("expected "):
        return str(exc)
    if isinstance(exc, (ValueError, TypeError)) and cls is not None:
        names = {float: "a number", int: "a whole number", str: "a string", bool: "true or false"}
        return f"expected {names.get(cls, getattr(cls, '__name__', repr(cls)))}"
    return str(exc)


def _negative(obj: Any, at: str) -> list[str]:
    """Every duration (a field ending in _s) below zero, at any depth ("model_records[0].delay_s")."""
    import attrs

    if isinstance(obj, tuple):
        return [p for i, x in enumerate(obj) for p in _negative(x, f"{at}[{i}]")]
    if not attrs.has(type(obj)):
        return []
    out = []
    for f in attrs.fields(type(obj)):
        value, name = getattr(obj, f.name), f"{at}.{f.name}".lstrip(".")
        if f.name.endswith("_s") and isinstance(value, (int, float)) and value < 0:
            out.append(f"{name}: {value} is negative (seconds are 0 or more)")
        out += _negative(value, name)
    return out


# What a booking's script says instead: these a restaurant scenario does not play.
_NOT_IN_BOOKINGS = ("far_party_hangup", "menu", "menu_routes", "model_dtmf", "model_dtmf_spoken", "hold_line", "hold_music", "hold_s")


def _problems(s: Scenario) -> list[str]:
    """What structuring cannot see: negative durations, a line the stub carrier cannot speak, fields a booking
    does not play, a record override no record has, and a booking reply that could never be said."""
    import attrs

    from calld.adapters.gpt_live import BOOK_RECORD_FIELDS
    from calld.stub.carrier import LineFormat

    out = _negative(s, "")
    out += [f"menu_routes[{key!r}]: {to!r} is neither @person nor @menu (a line to play starts with no @)"
            for key, to in s.menu_routes.items() if to.startswith("@") and to not in ("@person", "@menu")]
    try:
        LineFormat(s.media_encoding, s.media_rate)
    except ValueError:
        out.append(f"media_encoding/media_rate: {s.media_encoding}/{s.media_rate} is not L16, PCMU or PCMA at 8000 or 16000")
    if s.booking is not None:
        defaults = {f.name: f.default for f in attrs.fields(Scenario)}
        out += [f"{name}: a booking scenario does not play it (its script's replies say what happens; a reply can hang up)"
                for name in _NOT_IN_BOOKINGS if getattr(s, name) != defaults[name] and not (
                    isinstance(defaults[name], attrs.Factory) and not getattr(s, name))]
        known = BOOK_RECORD_FIELDS
        out += [f"booking reply {r.say[:30]!r}: record key {k!r} is no field of a booking record" for _, replies in s.booking.states
                for r in replies for k in r.record if k not in known]
    if s.booking is not None:
        names = [name for name, _ in s.booking.states]
        if s.booking.start not in names:
            out.append(f"booking.start: {s.booking.start!r} is not one of its states ({', '.join(names)})")
        for i, (name, replies) in enumerate(s.booking.states):
            for j, reply in enumerate(replies):
                where = f"booking.states[{i}] ({name!r}) reply {j}"
                try:
                    re.compile(reply.when)
                except re.error as exc:
                    out.append(f"{where}: when {reply.when!r} is not a regular expression ({exc})")
                if reply.then != "done" and reply.then not in names:
                    out.append(f"{where}: then {reply.then!r} is no state ({', '.join(names)}, or done)")
    return out
