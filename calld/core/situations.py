"""What kind of moment the business's words (or the line's sound) are: pure, deterministic checks.

The reducer asks these about the business's speech since the last segment boundary (see
`Call.segment`): a hold cue, a phone menu, a recorded greeting, a call screener, a wrong party,
or a mere courtesy during the goodbye. Each is a small table of phrases on normalised text
(lower case, plain apostrophes, single spaces), so a journal line can say which phrase matched.
Agent speech is never passed here.

Audio: `loud(pcm)` says whether a 16 kHz PCM16LE chunk carries sound (speech or music) rather
than line silence, from its peak sample; hold music is a long run of loud frames with no words.
"""

from __future__ import annotations

import re
from functools import lru_cache

import numpy
from attrs import frozen

_APOSTROPHES = str.maketrans({"\u2019": "'", "\u2018": "'", "`": "'"})


@lru_cache(maxsize=4)  # the reducer asks several tables about the same words in one step
def normalise(text: str) -> str:
    return " ".join(text.translate(_APOSTROPHES).lower().split())


@frozen
class _Phrases:
    """A table of phrases, in the order they are tried, and all of them as one alternation.

    The checks run on every word the business says, over the whole segment so far, and almost
    always find nothing: one pass of the alternation says so at a third of the cost of trying
    each phrase, and only a hit pays for finding which phrase comes first in the table."""

    patterns: tuple[re.Pattern[str], ...]
    any: re.Pattern[str]


def _first(table: _Phrases, text: str) -> str | None:
    said = normalise(text)
    if table.any.search(said) is None:
        return None
    for p in table.patterns:
        if (m := p.search(said)) is not None:
            return m.group(0)
    return None


def _phrases(*ps: str) -> _Phrases:
    return _Phrases(tuple(re.compile(rf"\b{p}\b") for p in ps), re.compile("|".join(rf"\b(?:{p})\b" for p in ps)))


_HOLD = _phrases(
    r"let me (quickly )?(check|look|see|find out|ask|go (and )?(check|look|see))",
    r"(i'll|i will|i'm going to|let me just) (go )?(check|look|find out|ask)",
    r"hang on",
    r"hold on",
    r"(please )?hold( the line)?,? please",
    r"please (stay on the line|hold)",
    r"(just )?one (moment|second|sec|minute|mo)",
    r"just a (moment|second|sec|minute|mo)",
    r"bear with me",
    r"give me (a|one) (second|sec|moment|minute)",
    r"your call is (important|in a queue|being held)",
    r"all (of )?our (agents|staff|representatives|team members) are (currently )?(busy|helping)",
)
_MENU = _phrases(
    r"press (\d|zero|one|two|three|four|five|six|seven|eight|nine|star|pound|hash)",
    r"(dial|enter) (\d|zero|one|two|three|four|five|six|seven|eight|nine|the extension|your)",
    r"(main )?menu",
    r"for [a-z ,']+,? (press|dial|say) ",
)
_RECORDING = _phrases(
    r"leave (a|your) (brief |short )?(message|name and number)",
    r"after the (tone|beep)",
    r"at the (tone|beep)",
    r"voice ?mail",
    r"mailbox",
    r"(is|are) (not available|unavailable) to take your call",
    r"record your message",
)
_SCREENING = _phrases(
    r"(state|say) your name",
    r"who('s| is) calling",
    r"(reason|purpose) (for|of) (your|the|this) call",
    r"why (you're|you are) calling",
    r"what (is|'s) (this|your call) (regarding|about)",
    r"call screening",
    r"screening (service|this call|calls)",
)
_WRONG_PARTY = _phrases(
    r"wrong number",
    r"(this is|you've reached|you have reached) a (private )?(residence|home|house)",
    r"(this is|it's) a private (number|residence|home|line)",
    r"(this is|it's) not (a|the) (business|store|shop|company)",
    r"(there's|there is) no (business|store|shop|company) (here|at this number)",
    r"you (must )?have the wrong",
)
# Words a goodbye is made of: said during our goodbye, they need no answer.
_COURTESY = frozenset(
    "ok okay alright all right sure yes yeah yep thanks thank you so much very bye goodbye bye-bye "
    "cheers take care have a an good great nice lovely day night evening weekend too same to welcome "
    "you're your no problem worries np pleasure my oh right then".split()
)


def hold_cue(text: str) -> str | None:
    """The phrase that puts us on hold ("let me check", "please hold", ...), or None."""
    return _first(_HOLD, text)


def menu_prompt(text: str) -> str | None:
    """The phrase that makes this a phone menu ("press 1", "for hours, press"), or None."""
    return _first(_MENU, text)


def recording(text: str) -> str | None:
    """The phrase that makes this a recorded greeting or voicemail ("leave a message"), or None."""
    return _first(_RECORDING, text)


def screening(text: str) -> str | None:
    """The phrase that makes this a call screener ("state your name"), or None."""
    return _first(_SCREENING, text)


def wrong_party(text: str) -> str | None:
    """The phrase that says we reached the wrong party ("wrong number", "a residence"), or None."""
    return _first(_WRONG_PARTY, text)


# Set phrases of a closing whose words are not courtesy on their own ("maybe another time").
_CLOSING_PHRASES = _phrases(
    r"thanks? (you )?for (calling|your call|ringing|checking|asking)",
    r"(maybe|perhaps) (another|next) time",
    r"(see|talk to|speak to|catch) you (then|soon|later|next time|again)",
    r"have a good one",
    r"not a problem",
    r"(take it easy|all the best|good luck|appreciate it|sounds good|will do|got it|no harm done)",
    r"(i'll|i will|we'll|we will) (cancel|let (them|him|her) know|pass (it|that) on|take care of (it|that))( it| that)?",
)
_FAREWELLS = frozenset({"bye", "goodbye", "bye-bye", "byebye", "bye bye"})


def asks_something(text: str) -> bool:
    """Words said during our goodbye that ask a question (the transcript marks it)."""
    return "?" in text


def more_than_courtesy(text: str) -> bool:
    """True when words said during our goodbye need an answer: a question, or 3+ words beyond a courtesy
    after their last farewell word ("No problem, maybe another time. Goodbye." is all courtesy)."""
    said = normalise(text)
    if asks_something(said):
        return True
    for p in _CLOSING_PHRASES.patterns:
        said = p.sub(" ", said)
    words = [w.strip(".,!;:") for w in said.split()]
    last_bye = max((i for i, w in enumerate(words) if w in _FAREWELLS), default=-1)
    return len([w for w in words[last_bye + 1 :] if w and w not in _COURTESY]) >= 3


# -- audio ---------------------------------------------------------------------------------------

LOUD_PEAK = 600  # about -35 dBFS: above a quiet line's hiss, below any speech or music
_PCM16LE = numpy.dtype("<i2")
_peak_high, _peak_low = numpy.maximum.reduce, numpy.minimum.reduce


def loud(pcm: bytes) -> bool:
    """Whether a PCM16LE chunk carries sound, judged from its peak sample.

    It runs on every inbound frame (50 a second a call): numpy's reductions over a view of the
    bytes take about 1.5 us a frame, where max()/min() over an array took about 14 us."""
    if len(pcm) < 2:
        return False
    samples = numpy.frombuffer(pcm, _PCM16LE, len(pcm) // 2)
    return bool(_peak_high(samples) > LOUD_PEAK or _peak_low(samples) < -LOUD_PEAK)
