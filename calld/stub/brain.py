"""The fake GPT-Live's booking brain: a small script standing in for the live model and its backend.

It knows only what the app gave the session in session.start (the booking request
block of the instructions, see `calld.core.plan.parse_booking_request`) and what it
heard on the line: whole business lines, decoded from the audio that arrived. From
those it speaks (the answers, the read-back, the closing line) and calls
record_task_result (in_progress once the details are exchanged or when the business
asks something the request does not answer, then booked or declined) and end_call.

It supplies words and tool calls, never a verdict: whether a booking stands is the
app's to decide, and a careless brain (see `BrainStyle`) books an out-of-window
offer precisely so that tests see the app refuse it.

It is a script, not a second reader: another time offered, and the fields its records carry
beyond its own (per-fact quotes, a reason), come from the scenario's reply
(`calld.stub.scenario.Reply.offer` and `.record`); it never reads the business's words with the
app's checker (nothing here imports the checker's package), so a stub call can show the model and the
checker disagreeing. Its own cues (a host's no, a yes to the read-back, a question) stay here,
as a backend's prompt would.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any, Protocol

from calld.domain.times import minutes_between
from calld.stub.scenario import BrainStyle, Reply

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable

_SENTENCES = re.compile(r"[^.?!]+[.?!]?")
_ASKS = {
    "name": re.compile(r"\bname\b", re.I),
    # a number to reach them on; a card's number is no callback ("can you give me a card number?")
    "callback": re.compile(r"\b(?<!card )(?<!credit card )(number|phone|reach you|call you back|contact)\b", re.I),
    "party": re.compile(r"\bhow many\b|\bparty of\b", re.I),
    "time": re.compile(r"\bwhat time\b|\bwhen\b|\bwhich day\b", re.I),
    "requests": re.compile(r"\bspecial requests?\b|\bany requests\b|\banything (?:else|special)\b|\bpreferences?\b", re.I),
}
# No table: full in any words ("Friday night we're completely full", "booked solid"), or no bookings taken at all.
_FULL = re.compile(r"fully booked|no tables?|booked (?:up|solid)|no availability|nothing (?:available|open|left)|"
                   r"\bfull\b(?! name| address)", re.I)
# No table to be had at all, in a host's words: no bookings taken (or none for a party this size: "we only take
# reservations for six or more, for two it's just walk in"), closed that night ("closed for a private function"),
# no tables at all ("we're takeaway only").
_REFUSES = re.compile(r"(?:don't|do not|doesn't|not) (?:take|taking|accept|do) (?:reservations|bookings)|walk-?ins? only|"
                      r"no reservations|\b(?:can't|cannot|unable to) (?:book|take|do|seat|fit)\b|"
                      r"first come,? first serv(?:ed|e)|\bjust walk[- ]?in\b|only take (?:reservations|bookings) for (?:parties|groups|tables)|"
                      r"\bclosed (?:for|that night|tonight|on)\b|private (?:function|event|party|hire)|\bbuy-?out\b|"
                      r"(?:takeaway|takeout|take-out|delivery) only|no tables here", re.I)
_NEEDS = re.compile(r"\bwithout\b", re.I)  # "we can't hold it without a card": it ends on a missing detail
# A yes to the read-back, in the ways hosts say it; a no or a correction first is none ("no, that's not right").
_CONFIRMS = re.compile(r"that's (?:right|correct)|that is (?:right|correct)|\bcorrect\b|you're (?:all )?(?:booked|set)|all set|"
                       r"confirmed|see you|\b(?:yes|yep|yeah|perfect|great|sounds good)\b|got (?:you|it) down", re.I)
# The business's own words that the table is made, said before the read-back ("Lovely, that's you booked in."):
# a model points at them with the yes to the read-back.
_BOOKED_SAID = re.compile(r"\b(?:booked in|you're (?:all )?(?:booked|set)|youre (?:all )?(?:booked|set)|all set|you're in|got you down)\b", re.I)
_NOT_CONFIRMED = re.compile(r"^\W*(?:no|nope|not|actually|wait)\b|\bnot (?:right|correct)\b|\bwrong\b", re.I)
_ABOUT_THE_OFFER = re.compile(r"would that work|does that work|is that ok", re.I)


class Voice(Protocol):
    """What the brain can do in the fake session (FakeLive implements it)."""

    def say(self, text: str, then: Callable[[], Awaitable[None]] | None = None) -> None: ...

    def record(self, arguments: dict[str, Any], purpose: str, delay: float = 0.3) -> None: ...

    async def end_call(self) -> None: ...


def _first_sentence(line: str) -> str:
    """A quote is words within one sentence: unless the script gives the outcome's words, the line's first
    sentence is (the yes to the read-back, the "sorry, we're full"), cut by its punctuation alone."""
    return next((s.strip() for s in _SENTENCES.findall(line) if s.strip()), line.strip())


def _record(status: str, **fields: Any) -> dict[str, Any]:
    """Every argument the strict schema requires, null unless given."""
    args: dict[str, Any] = {
        "status": status,
        "confirmation_text": None,
        "confirmed_party": None,
        "confirmed_time": None,
        "confirmed_constraints": None,
        "minutes_from_requested": None,
        "alternative_offered": None,
        "reason": None,
        "reason_code": None,
        "quotes": [],
        "unanswered_questions": [],
        # the words for each fact (/work/notes/schema52.md), null unless the script gives them
        "outcome_quote": None,
        "opt_out_quote": None,
        "party_quote": None,
        "time_quote": None,
        "date_quote": None,
        "party_readback": False,
        "time_readback": False,
        "date_readback": False,
    }
    args.update(fields)
    return args


class BookBrain:
    def __init__(self, voice: Voice, request: dict[str, Any], style: BrainStyle, closing_line: str) -> None:
        self.voice = voice
        self.name = str(request["name"])
        self.party = int(request["party"])
        self.time = str(request["time"])
        self.notes: str | None = request.get("notes")
        self.window = int(request["window_minutes"])
        self.callback = str(request["callback_number"])
        self.style = style
        self.closing_line = closing_line
        self.agreed_time = self.time
        self.offered: str | None = None
        self.offer_line: str | None = None
        self.stage = "asking"  # asking -> readback -> done
        self.unanswered: list[str] = []
        self.purpose: dict[str, str] = {}  # call_id -> what that record was for
        self.last_line = ""  # the business's last whole line
        self.booked_said: list[str] = []  # the business's words that it booked, before the read-back
        self.reply: Reply | None = None  # the script of the business line heard last

    # -- what the business said -------------------------------------------------------------------

    def heard_business(self, line: str, reply: Reply | None = None) -> None:
        """A whole business line, with the script of what the model makes of it (None: nothing beyond its cues)."""
        self.reply = reply
        self.last_line = line.strip()
        if self.stage == "done":
            return
        if self.stage == "asking" and _BOOKED_SAID.search(line) and not _NOT_CONFIRMED.search(line):
            self.booked_said.append(line.strip())
        if self.stage == "readback" and _CONFIRMS.search(line) and not _NOT_CONFIRMED.search(line):
            self._book(line)
            return
        offered = self._offer_in(reply)
        if offered is not None:
            self._answer_offer(line, offered)
            return
        if _FULL.search(line) or _REFUSES.search(line) or (_NEEDS.search(line) and self.unanswered):
            self.stage = "done"
            # "we can't book it without a deposit", after a question the request does not answer: a missing detail
            needs = bool(_NEEDS.search(line) and self.unanswered)
            # "we're takeaway only, no tables here" is a refusal, not a full house: the refusal words come first
            code = "details_missing" if needs else "refused" if _REFUSES.search(line) else "fully_booked" if _FULL.search(line) else "refused"
            args = self._scripted(_record("declined", reason=line.strip(), quotes=[line.strip()], reason_code=code,
                                          outcome_quote=_first_sentence(line)))
            self.voice.say("I understand. Thank you for checking.", then=lambda: self._async_record(args, "declined"))
            return
        questions = [s.strip() for s in _SENTENCES.findall(line) if s.strip().endswith("?")]
        self._answer_questions(questions)
        if not questions:
            # Nothing left to answer: the details are exchanged. Note it; the read-back comes
            # with the continued response, once the app has answered the record.
            self.voice.record(_record("in_progress", unanswered_questions=list(self.unanswered)), "details")

    def _offer_in(self, reply: Reply | None) -> str | None:
        """Another time the business offers, as the scenario scripts it (`Reply.offer`), unless it is the agreed one."""
        offered = reply.offer if reply is not None else None
        if offered is None or minutes_between(self.agreed_time, offered) in (0, None):
            return None
        return offered

    def _scripted(self, args: dict[str, Any]) -> dict[str, Any]:
        """A record's arguments with the fields the script gives for the line just heard."""
        return args | (self.reply.record if self.reply is not None else {})

    def _answer_offer(self, line: str, offered: str) -> None:
        minutes = minutes_between(self.time, offered)
        inside = minutes is not None and abs(minutes) <= self.window
        self.offered, self.offer_line = offered, line.strip()
        if inside or self.style != "careful":
            self.agreed_time = offered
            rest = [s.strip() for s in _SENTENCES.findall(line) if s.strip().endswith("?") and not _ABOUT_THE_OFFER.search(s)]
            self._answer_questions(rest, lead=f"Yes, {offered} works.")
            return
        self.stage = "done"
        reason = next((s.strip() for s in _SENTENCES.findall(line) if _FULL.search(s)), line.strip())
        args = self._scripted(_record("declined", reason=reason, alternative_offered=offered, unanswered_questions=self.unanswered,
                                      quotes=[line.strip()], reason_code="no_slot_in_window", outcome_quote=_first_sentence(line)))
        self.voice.say(
            f"Thank you, but {offered} doesn't work for {self.name}, so I'll leave it for now.",
            then=lambda: self._async_record(args, "declined"),
        )

    def _answer_questions(self, questions: list[str], lead: str | None = None) -> None:
        said: list[str] = [lead] if lead else []
        noted: list[str] = []
        for q in questions:
            asks = [k for k, pattern in _ASKS.items() if pattern.search(q)]
            if not asks:
                noted.append(q)
            for ask in asks:
                said.append(self._answer(ask))
        if noted:
            self.unanswered.extend(noted)
            said.append(f"I don't have that information, so I'll check with {self.name} and get back to you.")
        if said:
            then = None
            if noted:
                args = _record("in_progress", unanswered_questions=list(noted))
                then = lambda: self._async_record(args, "noted")  # noqa: E731
            self.voice.say(" ".join(said), then=then)

    def _answer(self, ask: str) -> str:
        match ask:
            case "name":
                return f"The booking is under {self.name}."
            case "callback":
                return f"You can reach {self.name} on {self.callback}."
            case "party":
                return f"It's for {self.party} people."
            case "time":
                return f"{self.agreed_time}."
            case _:
                return f"Just one: {self.notes}." if self.notes else "No special requests, thank you."

    def _book(self, line: str) -> None:
        self.stage = "booked"
        minutes = minutes_between(self.time, self.agreed_time)
        if self.style == "careless_lying":
            minutes = 0
        args = _record(
            "booked",
            confirmation_text=line.strip(),
            confirmed_party=self.party,
            confirmed_time=self.agreed_time,
            confirmed_constraints=self.notes,
            minutes_from_requested=minutes,
            unanswered_questions=self.unanswered,
            quotes=list(dict.fromkeys(q for q in (self.offer_line, *self.booked_said, line.strip()) if q)),
            # a yes to the read-back: each fact stands in the agent's question that the yes answers
            outcome_quote=_first_sentence(line), party_readback=True, time_readback=True, date_readback=True,
        )
        self.voice.record(self._scripted(args), "booked")

    async def _async_record(self, args: dict[str, Any], purpose: str) -> None:
        self.voice.record(args, purpose)

    # -- what the app answered ----------------------------------------------------------------------

    def continued(self, call_id: str, output: dict[str, Any]) -> None:
        """A response.create after the output of one of our records: the backend goes on."""
        purpose = self.purpose.get(call_id)
        recorded = bool(output.get("recorded"))
        if purpose == "details" and recorded:
            self.stage = "readback"
            notes = self.notes or "no special requests"
            self.voice.say(
                f"Let me read that back: a table for {self.party} people, {self.agreed_time}, {notes}, "
                f"under the name {self.name}. Is that right?"
            )
        elif purpose in ("booked", "declined") and recorded:
            self.stage = "done"
            self.voice.say(self.closing_line, then=self.voice.end_call)
        elif purpose == "booked" and "outside" in str(output.get("why", "")):
            # The app refused an out-of-window booking: take it back, and record what was offered.
            self.stage = "done"
            args = _record(
                "declined",
                reason=self.offer_line or f"{self.time} was not available",
                alternative_offered=self.offered,
                unanswered_questions=self.unanswered,
                quotes=[self.offer_line] if self.offer_line else [],
                reason_code="no_slot_in_window",
                outcome_quote=_first_sentence(self.offer_line) if self.offer_line else None,
            )
            self.voice.say(
                f"I'm so sorry, I've just realised {self.agreed_time} is outside the time {self.name} can make, "
                "so please don't hold the table. Thank you anyway.",
                then=lambda: self._async_record(args, "declined"),
            )
        elif purpose == "declined" and not recorded:
            # The app refused the decline too: nothing more to record that it would take. Say goodbye and
            # hang up, as a model does, and leave the outcome to the app (it did not go quiet mid-call).
            self.stage = "done"
            self.voice.say(self.closing_line, then=self.voice.end_call)
        elif purpose == "booked" and not recorded:
            # The app did not accept the booking from the business's words (it was taken back, or the
            # business confirmed something else): nothing is booked, in the business's last words.
            self.stage = "done"
            args = _record("declined", reason=self.last_line or "the booking was not confirmed", quotes=[self.last_line],
                           reason_code="refused", unanswered_questions=self.unanswered, outcome_quote=_first_sentence(self.last_line) or None)
            self.voice.say("I'm sorry, it sounds like that won't work, so please don't hold anything. Thank you anyway.",
                           then=lambda: self._async_record(args, "declined"))
