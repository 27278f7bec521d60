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
from collections.abc import Callable, Sequence
from functools import lru_cache

import numpy
from attrs import frozen

_APOSTROPHES = str.maketrans({"\u2019": "'", "\u2018": "'", "`": "'"})


@lru_cache(maxsize=4)  # the reducer asks several tables about the same words in one step
def normalise(text: str) -> str:
    return " ".join(text.translate(_APOSTROPHES).lower().split())


# No phrase of any table spans a sentence's end (none has ".", "?" or "!" in it), so the words are
# read a sentence at a time, and a finished sentence is read once, whatever the business says after
# it: the checks run on every word over the whole segment so far, and a long announcement would
# otherwise cost more with every word it adds.
_SENTENCES = re.compile(r"[^.?!]*[.?!]|[^.?!]+$")
_SENTENCE_ENDS = frozenset(".?!")


@lru_cache(maxsize=4)  # several tables, the same words
def _sentences(said: str) -> list[str]:
    return _SENTENCES.findall(said)


@frozen
class _Phrases:
    """A table of phrases, in the order they are tried, and how to read one sentence for all of them.

    `read` gives what each phrase matches in the sentence, or None when none does (almost always:
    one pass of all the phrases as a single alternation says so at a third of the cost of trying
    each). `read_finished` is `read` remembering the sentences it has read."""

    patterns: tuple[re.Pattern[str], ...]
    read: Callable[[str], tuple[str | None, ...] | None]
    read_finished: Callable[[str], tuple[str | None, ...] | None]


def _first(table: _Phrases, text: str, *, stated: bool = False) -> str | None:
    """The match of the table's first phrase that is said anywhere in `text`, at its first place.

    The same as trying each phrase over the whole text in turn: a phrase found in a sentence is
    found at the same place in the text, and a sentence's edges are word boundaries in both.
    `stated`: only in sentences said to their end that ask nothing (whether one is a question is
    known only at its end)."""
    found = []
    for sentence in _sentences(normalise(text)):
        finished = sentence[-1] in _SENTENCE_ENDS
        if stated and (not finished or sentence[-1] == "?"):
            continue
        hits = table.read_finished(sentence) if finished else table.read(sentence)
        if hits is not None:
            found.append(hits)
    for i in range(len(table.patterns)):
        for hits in found:
            if hits[i] is not None:
                return hits[i]
    return None


def _phrases(*ps: str) -> _Phrases:
    patterns = tuple(re.compile(rf"\b{p}\b") for p in ps)
    any_of = re.compile("|".join(rf"\b(?:{p})\b" for p in ps))

    def read(sentence: str) -> tuple[str | None, ...] | None:
        if any_of.search(sentence) is None:
            return None
        return tuple(m.group(0) if (m := p.search(sentence)) else None for p in patterns)

    # Pure, so remembered: enough finished sentences for every call the daemon holds at once.
    return _Phrases(patterns, read, lru_cache(maxsize=4096)(read))


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
    # A transfer rings on, then someone new picks up: waited for like a hold.
    r"(transfer|transferring|connect|connecting) you",
    r"(put|putting) you (through|on hold)",
    r"let me get (someone|somebody|my manager|the manager|a manager)",
)
_MENU = _phrases(
    r"press (\d|zero|one|two|three|four|five|six|seven|eight|nine|star|pound|hash)",
    r"(dial|enter) (\d|zero|one|two|three|four|five|six|seven|eight|nine|the extension|your)",
    # A menu that names itself, never the bare word: a restaurant's "our full menu is on our website".
    r"(main|following) menu",
    r"(our|the) menu options (have )?changed",
    r"listen (carefully )?to (the|these|our) menu( options)?",
    r"(return to|repeat) (this|the) menu",
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
# A machine's own words, never a person's: "leave a message" and "not available to take your call"
# are a receptionist's too, once one is talking with the agent.
_MACHINE = _phrases(
    r"after the (tone|beep)",
    r"at the (tone|beep)",
    r"voice ?mail",
    r"mailbox",
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


# An agent line that claims to be a person, or denies being automated: never allowed (DESIGN.md, honesty).
CLAIMS_HUMAN = re.compile(
    r"\b(i'?m|i am)\s+(?:a\s+)?(?:real\s+|actual\s+)?(?:person|human(?: being)?)\b|"
    r"\b(i'?m|i am)\s+not\s+(?:a|an)\s+(?:robot|bot|machine|computer|ai|automated|artificial|assistant)\b|"
    r"\b(i'?m|i am)\s+not\s+(?:automated|artificial)|\bnot\s+an?\s+(?:robot|bot|ai)\b",
    re.I,
)


def hold_cue(text: str) -> str | None:
    """The phrase that puts us on hold ("let me check", "please hold", ...), or None."""
    return _first(_HOLD, text)


def menu_prompt(text: str) -> str | None:
    """The phrase that makes this a phone menu ("press 1", "for hours, press"), or None."""
    return _first(_MENU, text)


def recording(text: str, *, in_conversation: bool = False) -> str | None:
    """The phrase that makes this a recorded greeting or voicemail ("leave a message"), or None.

    Only in a statement heard to its end: a question is a person's offer ("Do you want to leave a
    message for her?"). `in_conversation` (the business is answering the agent's ask): only a
    machine's own cues count ("after the tone", "voicemail")."""
    return _first(_MACHINE if in_conversation else _RECORDING, text, stated=True)


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
    # a courtesy that names the booked day ("see ya saturday", "see you friday night then")
    r"(see|catch) (you|ya|u) (on |this |next )?(monday|tuesday|wednesday|thursday|friday|saturday|sunday|tomorrow|tonight)s?"
    r"( (night|morning|evening|afternoon))?( then)?",
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
_PCM16LE_UNSIGNED = numpy.dtype("<u2")
_peak_high = numpy.maximum


def loud(pcm: bytes) -> bool:
    """Whether a PCM16LE chunk carries sound, judged from its peak sample.

    It runs on every inbound frame (50 a second a call): numpy's reductions over a view of the
    bytes take about 1.5 us a frame, where max()/min() over an array took about 14 us."""
    if len(pcm) < 2:
        return False
    shifted = numpy.frombuffer(pcm, _PCM16LE_UNSIGNED, len(pcm) // 2) + numpy.uint16(LOUD_PEAK)  # as in loud_each
    return bool(_peak_high.reduce(shifted) > 2 * LOUD_PEAK)


def loud_each(pcms: Sequence[bytes], joined: bytes | None = None) -> tuple[bool, ...]:
    """`loud` of each chunk, judged in one pass over them all: a stretch of forwarded frames, 25 at
    a time while the hold-music watch is on (about 5 us a stretch, where a call apiece took 45).

    One reduction, not two: read as unsigned and shifted up by LOUD_PEAK (wrapping), a sample is
    loud exactly when it lands above 2 * LOUD_PEAK (-600..600 land on 0..1200; -601 wraps to 65535).
    `joined`, when the caller has it, is `b"".join(pcms)`: the runtime joins a stretch once, for
    its WAV and for this."""
    if not pcms:
        return ()
    sizes = set(map(len, pcms))  # one pass in C: usually a single size, 640 bytes
    if any(n < 2 or n % 2 for n in sizes):  # a chunk with no sample, or an odd byte: one by one
        return tuple(loud(p) for p in pcms)
    shifted = numpy.frombuffer(b"".join(pcms) if joined is None else joined, _PCM16LE_UNSIGNED) + numpy.uint16(LOUD_PEAK)
    if len(sizes) == 1:  # every frame alike (20 ms each)
        peaks = _peak_high.reduce(shifted.reshape(len(pcms), -1), axis=1)
    else:
        peaks = _peak_high.reduceat(shifted, numpy.cumsum([0, *(len(p) // 2 for p in pcms[:-1])]))
    return tuple((peaks > 2 * LOUD_PEAK).tolist())
