"""What calld texts back: plain words, one or two sentences, the business's own words where it has them.

Pure functions from intents and results to text. A reply never carries a stack trace, a setting
name, a URL, an HTTP status or an internal id: results are read field by field (never dumped),
and any text that came from elsewhere (a quote, a refusal's message) passes `safe_words` first
or is replaced by a general sentence. ASCII punctuation, so an SMS stays in the GSM alphabet.
"""

from __future__ import annotations

import re
import unicodedata
from typing import Any

from calld.messaging.parse import AskIntent, BookIntent, FollowUp, Incomplete, Weekday

EXAMPLE = "hours +1 415 555 0142"
MAX_QUOTE = 280

# What must never reach a person: URLs, SETTING_NAMES, HTTP statuses, exception reprs, our ids, CLI flags.
_LEAKS = re.compile(
    r"https?://|wss?://|www\.|\b[A-Z][A-Z0-9]*_[A-Z0-9_]+\b|\bHTTP\b|\b[1-5]\d\d\b(?=\s*(?:error|status|from|response))|"
    r"\bstatus(?: code)? \d{3}\b|Traceback|Error\(|Exception|\b(?:run|req|txt)_[0-9a-zA-Z]+|v3:|--[a-z]|calld-ctl|"
    r"\bcall_control_id\b|\.py\b|\{|\}",
)

_ASK_PHRASE = {
    "hours": "ask their opening hours",
    "stock": "ask if they have {item} in stock",
    "aisle": "ask which aisle {item} is in",
}


def safe_words(text: object, limit: int = MAX_QUOTE) -> str | None:
    """`text` as one tidy line, if it is fit to show a person; None if it is not."""
    if not isinstance(text, str):
        return None
    line = " ".join(text.split()).strip().strip("\"'").strip()
    if not line or _LEAKS.search(line):
        return None
    if len(line) > limit:
        line = line[: limit - 3].rsplit(" ", 1)[0].rstrip(",;:") + "..."
    return plain(line)


_PUNCTUATION = {0x2018: "'", 0x2019: "'", 0x201B: "'", 0x2032: "'", 0x201C: '"', 0x201D: '"', 0x201F: '"', 0x2033: '"',
                0x2013: "-", 0x2014: "-", 0x2026: "...", 0x00A0: " "}


def plain(text: str) -> str:
    """`text` in ASCII, as an SMS in the GSM alphabet wants: smart quotes and dashes as plain marks,
    accents dropped ("jalape\u00f1o" -> "jalapeno"), anything else (an emoji) left out."""
    folded = unicodedata.normalize("NFKD", text.translate(_PUNCTUATION))
    return " ".join(folded.encode("ascii", "ignore").decode().split())


def spoken_number(e164: str) -> str:
    """+14155550142 -> +1 415-555-0142 (NANP); other numbers as they are."""
    if re.fullmatch(r"\+1\d{10}", e164):
        return f"+1 {e164[2:5]}-{e164[5:8]}-{e164[8:]}"
    return e164


def what_we_do(intent: AskIntent | BookIntent) -> str:
    """The person's own words (an item, a time, a note) are said back in ASCII, however they were typed."""
    if isinstance(intent, AskIntent):
        return _ASK_PHRASE[intent.ask].format(item=plain(intent.item or ""))
    notes = f" ({plain(intent.notes)})" if intent.notes else ""
    return f"book a table for {intent.party}, {plain(intent.time)}{notes}"


def topic(intent: AskIntent | BookIntent) -> str:
    """What a call was about, in a few words: "opening hours", "cast iron skillet in stock"."""
    if isinstance(intent, BookIntent):
        return f"table for {intent.party}, {plain(intent.time)}"
    item = plain(intent.item or "")
    return {"hours": "opening hours", "stock": f"{item} in stock", "aisle": f"aisle for {item}"}[intent.ask]


def about(intent: AskIntent | BookIntent, text: str) -> str:
    """A result that must say which call it answers (another was on at the same time)."""
    return f"{spoken_number(intent.to)}, {topic(intent)}: {text}"


def calling_now(intent: AskIntent | BookIntent) -> str:
    return f"Calling {spoken_number(intent.to)} now to {what_we_do(intent)}. I'll text you what they say."


def already_calling(intent: AskIntent | BookIntent) -> str:
    return f"I'm already calling {spoken_number(intent.to)} to {what_we_do(intent)}. I'll text you what they say."


def confirm(intent: AskIntent | BookIntent) -> str:
    return f"Call {spoken_number(intent.to)} and {what_we_do(intent)}? Reply YES to call, or NO to skip."


def confirm_part(intent: AskIntent | BookIntent) -> str:
    """An offer of only the part of a request that reads as what it claims to be (the rest is not said)."""
    only = "a product's name" if isinstance(intent, AskIntent) else "a few words about the table"
    return f"I can only pass on {only}, so I left out the rest. {confirm(intent)}"


CANCELLED = "OK, I won't call."
WELCOME = "You're welcome! Text me whenever you'd like me to call somewhere."
NOTHING_PENDING = f"There's nothing waiting for a yes or no. Text me a request, e.g. \"{EXAMPLE}\", or HELP."
HELP = (
    "I phone businesses for you and text back what they say. Try \"hours +1 415 555 0142\", "
    "\"is the cast iron skillet in stock at 415-555-0142?\", \"which aisle is the WD-40 at 415-555-0142?\" or "
    "\"book a table for 2 Friday 7pm at 415-555-0142\". Reply STOP to stop texts."
)
STOPPED = "You won't get any more texts from me. Reply START if you change your mind."
STARTED = "Welcome back! Text HELP to see what I can do."
UNLINKED = "Sorry, this number isn't set up to ask for calls here. The person who runs this service can add you."
NOT_UNDERSTOOD = f"Sorry, I didn't catch that. Text a request like \"{EXAMPLE}\", or HELP for more."
RATE_LIMITED = "You've asked for quite a few calls in the last hour. Please try again a little later."
TOO_MANY_TEXTS = "That's a lot of texts at once, so I'll pause replying for a bit. Please try again later."
NOT_SET_UP = "Your account can't place calls yet: it has no phone number to call from. The person who runs this service can fix that."
BUSY = "I'm on a lot of calls right now. Please try again in a few minutes."
RESTARTING = "I'm restarting at the moment. Please send that again in a minute or two."
SOMETHING_WRONG = "Sorry, something went wrong on my side and I don't have an answer. Please try again in a few minutes."
SEVERAL = f"I can ask one thing per call. Send each question in its own text, e.g. \"{EXAMPLE}\"."
INVALID = "Sorry, I can't place that call as asked. Text HELP for the kinds of requests I can handle."

_INCOMPLETE = {
    "number": f"Which number should I call? Send it with your request, e.g. \"{EXAMPLE}\".",
    "area_code": f"I need the whole number, area code too. Send it with your request, e.g. \"{EXAMPLE}\".",
    "party": "How many people is the table for? e.g. \"book a table for 2 Friday 7pm at +1 415 555 0142\".",
    "time": "When would you like the table? e.g. \"book a table for 2 Friday 7pm at +1 415 555 0142\".",
    "item": "What should I ask about? e.g. \"is the cast iron skillet in stock at +1 415 555 0142\".",
}


def incomplete(what: Incomplete) -> str:
    return _INCOMPLETE[what.missing]


def refused(message: object) -> str:
    """A request calld will not place: its reason when that is fit to show, else a general line."""
    why = safe_words(message, 200)
    return f"I can't place that call: {why.rstrip('.')}." if why else INVALID


# -- outcomes -----------------------------------------------------------------------------------------

# Words per reason code (calld.domain.status), for the statuses whose reason changes what to say.
_REASON_WORDS = {
    # declined
    "unknown": "They didn't know, I'm afraid.",
    "hung_up": "They hung up before answering. You might try again later.",
    "unconfirmed": "I couldn't confirm an answer from what they said.",
    "fully_booked": "They're fully booked then, sorry.",
    "no_slot_in_window": "They had nothing close enough to the time you asked for.",
    "details_missing": "They needed details I didn't have, so nothing is booked. Try calling them yourself?",
    "opt_out": "They asked not to be called again, so I won't call them.",
    # no_answer
    "ring_timeout": "Nobody picked up at {who}. Please try again later.",
    "busy": "The line at {who} was busy. Please try again in a little while.",
    "rejected": "The call to {who} didn't go through. You could try again later, or check the number.",
    "hung_up_early": "Someone at {who} picked up, then hung up before I could ask. You might try again later.",
    "silent_line": "Someone picked up at {who}, but nobody spoke. You might try again later.",
    "went_silent": "Someone at {who} heard {asked}, then went quiet, so I hung up. You might try again later.",
    # failed
    "wrong_number": "Whoever answered {who} said that's not the place you meant. Could you check the number?",
    "number_unreachable": "{who} doesn't seem to be in service. Could you check the number?",
    "ivr_unnavigable": "I got stuck in their phone menu and couldn't reach a person. You might call them yourself.",
    "hold_timeout": "They kept me on hold too long, so I hung up. Please try again later.",
    "time_limit": "The call ran long without an answer, so I hung up. Please try again later.",
    "daemon_restart": "I was restarted in the middle of that call. Please send your request again.",
}

def _reason_code(result: dict[str, Any]) -> str | None:
    reason = result.get("reason")
    return reason if isinstance(reason, str) and re.fullmatch(r"[a-z][a-z0-9_]*", reason) else None


def _quote(result: dict[str, Any], *fallbacks: str) -> str | None:
    """The business's own words: the evidence quotes (all of them: a later word may correct the
    first), else the named result fields."""
    evidence = result.get("evidence")
    if isinstance(evidence, list):
        said = [str(q["quote"]) for q in evidence if isinstance(q, dict) and q.get("quote")]
        if quoted := safe_words(" ".join(dict.fromkeys(said))):
            return quoted
    for name in fallbacks:
        if quoted := safe_words(result.get(name)):
            return quoted
    return None


def outcome(result: dict[str, Any], intent: AskIntent | BookIntent) -> str:
    """One or two sentences for a finished call: the status, the reason where it matters, their words."""
    status = result.get("status")
    code = _reason_code(result)
    who = spoken_number(intent.to)
    # an answer given, then "don't call us again": both are told
    asked_not = " They also asked not to be called again, so I won't call them." if result.get("opt_out") else ""
    if status == "answered":
        quote = _quote(result, "answer_text")
        # A recorded greeting or information line is not a person: say so (it may be out of date).
        heard = "Their recorded message says" if result.get("verdict_source") == "greeting" else "They said"
        said = f"{heard}: \"{quote}\"" if quote else f"I reached {who}, but I couldn't make out a clear answer. You might try again."
        if _no_set_hours(result):
            said = f"They don't keep set hours. {said}"
        return said + asked_not
    if status == "booked":
        party = result.get("confirmed_party") if isinstance(result.get("confirmed_party"), int) else None
        when = safe_words(result.get("confirmed_time"), 80)
        head = f"You're booked: a table for {party}, {when}." if party and when else "You're booked."
        moved = result.get("minutes_from_requested")
        if isinstance(moved, int) and moved:
            head = head[:-1] + f" ({abs(moved)} minutes {'later' if moved > 0 else 'earlier'} than you asked)."
        agreed = safe_words(result.get("confirmed_constraints"), 120)
        if agreed:
            head += f" About your note: {agreed.rstrip('.')}."
        quote = _quote(result, "confirmation_text")
        return (f"{head} They said: \"{quote}\"" if quote else head) + asked_not
    if status == "refused":  # turned down before any call: the rule's own words, when fit to show
        return refused(result.get("detail"))
    asked = "the booking request" if isinstance(intent, BookIntent) else "the question"
    words = _REASON_WORDS.get(code or "", "").format(who=who, asked=asked)
    if status == "declined":
        # Only the business's own words are quoted: the evidence, or an opt-out as they said it (a
        # result's detail is calld's or the model's account, never theirs).
        quote = _quote(result, "opt_out") if code == "opt_out" else _quote(result)
        if isinstance(intent, BookIntent):
            text = words or "They couldn't book that."
            if quote:
                text += f" They said: \"{quote}\""
            if alt := safe_words(result.get("alternative_offered"), 120):
                text += f" They offered {alt.rstrip('.')} instead; text me again if that works."
            return text
        if words:
            return f"{words} Their words: \"{quote}\"" if quote else words
        if quote:
            return f"They wouldn't tell me. Their words: \"{quote}\""
        return "They couldn't tell me that over the phone. You might ask them in person."
    if status == "voicemail":
        return "I reached their voicemail and didn't leave a message. Text \"call them again\" and I'll try once more."
    if status == "no_answer":
        return words or f"Nobody picked up at {who}. Please try again later."
    if status == "failed" and words:
        return words
    return "Sorry, the call didn't work out, so I don't have an answer. Please try again in a few minutes."


# -- follow-ups: texts about the last request's business ----------------------------------------------

_OFFER_HOURS = "Reply YES and I'll call {who} to ask their opening hours, or NO to skip."


def _clock(hhmm: object) -> str | None:
    """"09:00" -> "9 AM", "17:30" -> "5:30 PM", "12:00" -> "noon"; None for anything else."""
    if not isinstance(hhmm, str) or not re.fullmatch(r"([01]\d|2[0-3]):[0-5]\d", hhmm):
        return None
    hour, minute = int(hhmm[:2]), int(hhmm[3:])
    if minute == 0 and hour in (0, 12):
        return "midnight" if hour == 0 else "noon"
    shown = f"{hour % 12 or 12}" + (f":{minute:02d}" if minute else "")
    return f"{shown} {'AM' if hour < 12 else 'PM'}"


def _open_words(day: dict[str, Any]) -> str | None:
    """One typed day's hours in words: "open 9 AM to 5 PM", "closed", "open 24 hours"."""
    if day.get("closed") is True:
        return "closed"
    if day.get("around_the_clock") is True:
        return "open 24 hours"
    opens, closes = _clock(day.get("opens")), _clock(day.get("closes"))
    if opens and closes:
        return f"open {opens} to {closes}"
    if opens:
        return f"open from {opens}"
    if closes:
        return f"open until {closes}"
    return None


def _typed_hours(result: dict[str, Any] | None) -> list[dict[str, Any]] | None:
    """The typed hours of an answered hours call (the ranges the app read from their words); None if it was not one."""
    if not isinstance(result, dict) or result.get("status") != "answered":
        return None
    answer = result.get("answer")
    if not isinstance(answer, dict) or answer.get("kind") != "hours":
        return None
    ranges = answer.get("ranges")
    return [r for r in ranges if isinstance(r, dict)] if isinstance(ranges, list) else []


def _no_set_hours(result: dict[str, Any] | None) -> bool:
    """An answered hours call whose answer is that they keep no set hours ("by appointment only")."""
    answer = result.get("answer") if isinstance(result, dict) and result.get("status") == "answered" else None
    return isinstance(answer, dict) and answer.get("kind") == "no_set_hours"


def hours_on(result: dict[str, Any] | None, day: Weekday) -> str | None:
    """What the last call's typed hours say about `day` ("open 9 AM to 5 PM", "closed"); None if nothing.
    Where more than one reading names the day, a weekly one wins over one for a single date, and a later
    one over an earlier (a later word may correct the first)."""
    named = [r for r in _typed_hours(result) or [] if isinstance(r.get("days"), list) and day in r["days"]]
    named.sort(key=lambda r: r.get("date") is None)
    for reading in reversed(named):
        if words := _open_words(reading):
            return words
    return None


def _listed(parts: list[str]) -> str:
    return parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " and " + parts[-1]


def hours_for_days(last: AskIntent | BookIntent, result: dict[str, Any] | None, days: tuple[Weekday, ...]) -> tuple[str, bool]:
    """A follow-up about opening hours on `days`, answered from the last call where it said: the text, and
    whether every day was known (if not, the text offers to call and ask)."""
    who = spoken_number(last.to)
    if _no_set_hours(result):  # no day has hours of its own: say so, with their words
        quote = _quote(result or {}, "answer_text")
        heard = f" They said: \"{quote}\"" if quote else ""
        return f"When I called {who}, they said they don't keep set hours, so I can't say for {_listed([d.capitalize() for d in days])}.{heard}", True
    known = {day: hours_on(result, day) for day in days}
    said = [f"on {day.capitalize()} they're {words}" for day, words in known.items() if words]
    unknown = [day.capitalize() for day, words in known.items() if not words]
    recorded = isinstance(result, dict) and result.get("verdict_source") == "greeting"
    source = f"the recorded message at {who}" if recorded else f"my call to {who}"
    offer = _OFFER_HOURS.format(who=who)
    if not unknown:
        return f"From {source}: {_listed(said)}.", True
    if said:
        return f"From {source}: {_listed(said)}. They didn't say about {_listed(unknown)}. {offer}", False
    typed = _typed_hours(result)
    if typed is not None:  # an hours answer without those days; or one whose days the app could not read: their words
        quote = _quote(result or {}, "answer_text") if not typed else None
        heard = f" They said: \"{quote}\"" if quote else ""
        return f"When I called {who}, they didn't tell me about {_listed(unknown)}.{heard} {offer}", False
    return f"I don't know their hours for {_listed(unknown)}. {offer}", False


def hours_again(last: AskIntent | BookIntent, result: dict[str, Any] | None) -> str | None:
    """Their hours asked again, no day named, after a call that answered them: what they said then."""
    if (_typed_hours(result) is None and not _no_set_hours(result)) or not isinstance(last, AskIntent) or last.ask != "hours":
        return None
    assert result is not None
    quote = _quote(result, "answer_text")
    if quote is None:
        return None
    heard = "Their recorded message said" if result.get("verdict_source") == "greeting" else "They said"
    return f"When I called {spoken_number(last.to)} about their hours: {heard}: \"{quote}\" Text \"call them again\" to ask afresh."


def _example_item(item: str | None) -> str | None:
    return safe_words(item, 60) if item else None


def no_last_request(follow: FollowUp) -> str:
    """A follow-up with no recent request of theirs to go on: what to send instead."""
    item = _example_item(follow.item)
    if follow.what == "elsewhere" and follow.to:
        return f"What should I ask {spoken_number(follow.to)}? Send the question with the number, e.g. \"hours {spoken_number(follow.to)}\"."
    if follow.what in ("hours", "day"):
        return _INCOMPLETE["number"]
    if follow.what == "stock" and item:
        return f"Which number should I call? Send it with your question, e.g. \"is the {item} in stock at +1 415 555 0142\"."
    if follow.what == "aisle" and item:
        return f"Which number should I call? Send it with your question, e.g. \"which aisle is the {item} in at +1 415 555 0142\"."
    if follow.what == "book":
        return "Which number should I call? Send it with the booking, e.g. \"book a table for 2 Friday 7pm at +1 415 555 0142\"."
    return f"I don't have a recent request of yours to go on. Send the number with your question, e.g. \"{EXAMPLE}\"."


def which_item(follow: FollowUp, last: AskIntent | BookIntent) -> str:
    """A follow-up about an item the last request never named ("which aisle?" after asking the hours)."""
    item = _example_item(follow.item)
    if follow.what == "same" and item:
        return (f"Do you mean whether {spoken_number(last.to)} has {item}? Text \"do they have {item}?\" "
                f"or \"which aisle is the {item} in?\".")
    if follow.what == "aisle":
        return "Which item do you mean? e.g. \"which aisle is the WD-40 in?\"."
    return "Which item do you mean? e.g. \"do they have propane?\"."


def already_booked(last: BookIntent, result: dict[str, Any]) -> str:
    """"Call them again" after a booking that was made: it is not made twice."""
    party = result.get("confirmed_party") if isinstance(result.get("confirmed_party"), int) else last.party
    when = safe_words(result.get("confirmed_time"), 80) or plain(last.time)
    return (f"You're already booked at {spoken_number(last.to)}: a table for {party}, {when}. I won't book it twice. "
            f"For another table, text the day and time, e.g. \"book a table for 2 Saturday 8pm\".")
