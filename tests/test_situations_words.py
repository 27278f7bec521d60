"""The pure situation checks (calld.core.situations): which words are a hold, a menu, a recording,
a screener, a wrong party, or only a courtesy; and which audio is sound."""

from __future__ import annotations

import struct

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from calld.core import situations as s
from calld.policy import optout


@pytest.mark.parametrize(
    ("text", "cue"),
    [
        ("Sure, let me check on that for you.", "let me check"),
        ("Hang on a sec.", "hang on"),
        ("One moment please", "one moment"),
        ("Please hold.", "please hold"),
        ("Bear with me while I look", "bear with me"),
        ("We\u2019re open nine to five.", None),
        ("We have a second location downtown.", None),
        ("That'd be the kitchen department, let me transfer you.", "transfer you"),
        ("I'll put you through to garden.", "put you through"),
        ("Let me get my manager.", "let me get my manager"),
        ("I'll put you down for seven.", None),  # a booking, not a transfer
    ],
)
def test_hold_cues(text, cue):
    assert s.hold_cue(text) == cue


def test_each_kind_of_moment_is_told_apart():
    assert s.menu_prompt("For store hours, press 1. For the operator, press 0.") is not None
    assert s.menu_prompt("We're open until 9.") is None
    assert s.menu_prompt("To return to the main menu, stay on the line.") is not None
    assert s.menu_prompt("Please listen carefully, as our menu options have changed.") is not None
    assert s.menu_prompt("Our full menu is on our website.") is None  # a restaurant's menu is no phone menu
    assert s.recording("You've reached Joe's. Please leave a message after the tone.") is not None
    assert s.recording("Hello, Joe's Hardware.") is None
    assert s.recording("Do you want to leave a message for her, or should I go look?") is None  # an offer
    assert s.recording("Do you want to leave a message") is None  # a question, maybe: judged at its end
    assert s.recording("Sorry, Joe is not available to take your call.") is not None
    assert s.recording("Sorry, Joe is not available to take your call.", in_conversation=True) is None
    assert s.recording("Please leave a message after the tone.", in_conversation=True) == "after the tone"
    assert s.screening("Please state your name and why you're calling.") is not None
    assert s.screening("How can I help you?") is None
    assert s.wrong_party("I think you have the wrong number.") == "wrong number"
    assert s.wrong_party("This is a private residence") is not None
    assert s.wrong_party("This is Joe's Hardware") is None


@pytest.mark.parametrize(
    ("text", "more"),
    [
        ("Thanks, bye-bye!", False),
        ("You too, have a great day.", False),
        ("Okay, thank you, bye.", False),
        ("Oh wait, do you want me to hold one for you?", True),
        ("Actually we also close early on Sundays now.", True),
        ("No problem, maybe another time. Goodbye.", False),
        ("Oh, no problem, I'll cancel it. Goodbye.", False),
        ("Thanks for calling, see you soon!", False),
        ("Bye. Oh, one more thing, we close early on Fridays.", True),  # more after their farewell
        ("What name was that for", True),  # no question mark: still more words than a courtesy
        ("Wait, what name was that for?", True),
    ],
)
def test_a_courtesy_during_the_goodbye_is_not_more(text, more):
    assert s.more_than_courtesy(text) is more


def test_loud_tells_sound_from_line_silence():
    assert not s.loud(bytes(640))
    assert not s.loud(struct.pack("<320h", *([200, -200] * 160)))  # hiss
    assert s.loud(struct.pack("<320h", *([3000, -3000] * 160)))


def test_loud_reads_little_endian_samples_and_either_peak():
    assert s.loud(struct.pack("<5h", 0, 0, -700, 0, 0))  # a negative peak alone is sound
    assert s.loud(struct.pack("<2h", 0, 700) + b"\x7f")  # a trailing odd byte is not a sample
    assert not s.loud(struct.pack("<h", 0) + b"\x7f")
    assert not s.loud(struct.pack("<4h", 3, 3, 3, 0))  # read big-endian, 3 would be 768: loud
    assert not s.loud(b"\x7f")


@given(st.lists(st.one_of(st.integers(-32768, 32767), st.sampled_from([-32768, -601, -600, 600, 601, 32767])), min_size=1, max_size=330))
def test_loud_is_a_peak_past_the_threshold_either_way(samples):
    """The one-reduction reading (unsigned, shifted by the threshold) says what max(abs) would, the
    extremes included (-32768 has no positive twin in 16 bits)."""
    assert s.loud(struct.pack(f"<{len(samples)}h", *samples)) == any(abs(x) > s.LOUD_PEAK for x in samples)


@given(st.lists(st.one_of(
    st.binary(min_size=0, max_size=9),  # no sample, or odd bytes
    st.lists(st.integers(-32768, 32767), min_size=1, max_size=330).map(lambda xs: struct.pack(f"<{len(xs)}h", *xs)),
    st.sampled_from([bytes(640), struct.pack("<320h", *([601] * 320)), struct.pack("<320h", *([-601] + [0] * 319))]),
), max_size=30))
def test_a_stretch_judged_at_once_is_each_frame_judged_alone(pcms):
    assert s.loud_each(pcms) == tuple(s.loud(p) for p in pcms)


@given(st.lists(st.tuples(st.integers(0, 319), st.sampled_from([0, 601, -601, 32767, -32768])), min_size=1, max_size=30))
def test_a_stretch_of_20_ms_frames_is_judged_frame_by_frame(peaks):
    """Frames alike in size (every real stretch): one sample off at a frame's edge must not move its
    loudness to a neighbour."""
    pcms = [struct.pack("<320h", *([0] * at + [value] + [0] * (319 - at))) for at, value in peaks]
    assert s.loud_each(pcms) == tuple(value != 0 for _, value in peaks)


def test_a_stretch_of_equal_frames_is_judged_frame_by_frame():
    quiet, last, first = bytes(640), struct.pack("<320h", *([0] * 319 + [-601])), struct.pack("<320h", *([601] + [0] * 319))
    assert s.loud_each([quiet, last, quiet, quiet, last]) == (False, True, False, False, True)
    assert s.loud_each([quiet, first, quiet, last, quiet]) == (False, True, False, True, False)
    assert s.loud_each([struct.pack("<320h", *([600] * 320))]) == (False,)  # the threshold itself is quiet


def test_a_clerk_who_does_not_know_the_item_is_not_a_wrong_number():
    from calld.core import situations

    assert situations.wrong_party("Hmm, never heard of it, sorry.") is None


# -- reading sentence by sentence, with one pass per table, finds what trying each phrase would ----

# Words the phrase tables are made of, whole phrases of each table, some words in none, and
# sentence ends, so that texts hit, miss, and hit in several sentences at once.
_VOCABULARY = (
    "let me check look quickly go and i'll i'm going to just hang hold on the line please stay one a moment "
    "second sec bear with give your call is important in queue all of our agents are busy press 1 zero star "
    "dial enter extension main menu for hours, leave brief message name number after tone beep at voice mail "
    "voicemail mailbox not available unavailable take record state say who's who calling reason purpose of "
    "this why you're what regarding about screening service wrong you've reached private residence home it's "
    "business store there's no here must have stop ringing remove us me off from list don't do never ever "
    "again more calls put add didn't said we open nine five Saturday. Sunday? Okay. thanks bye "
    "someone holdings menus stopped checkout Hello! press... hold?on . ? !"  # phrases inside words, ends
).split() + [
    "let me check", "hang on", "please hold", "one moment", "press 1", "main menu", "for hours, press",
    "leave a message", "after the tone", "state your name", "who's calling", "wrong number",
    "this is a private residence", "stop calling", "don't call us", "no more calls", "take us off your list",
    "do not call list", "I didn't say",
]
_TEXTS = st.lists(st.sampled_from(_VOCABULARY), max_size=40).map(" ".join)


@settings(max_examples=1000, deadline=None, database=None)
@given(_TEXTS)
def test_a_table_read_by_sentence_finds_the_phrase_each_in_turn_would(text):
    said = s.normalise(text)
    for check, table in ((s.hold_cue, s._HOLD), (s.menu_prompt, s._MENU), (s.screening, s._SCREENING),
                         (s.wrong_party, s._WRONG_PARTY)):
        in_turn = next((m.group(0) for p in table.patterns if (m := p.search(said))), None)
        assert check(text) == in_turn, (check.__name__, text)
        assert check(text) == in_turn, (check.__name__, text)  # again, from what was remembered
    # A recording is read only in the statements heard to their end.
    stated = " ".join(x for x in s._SENTENCES.findall(said) if x[-1] in ".!")
    for answering, table in ((False, s._RECORDING), (True, s._MACHINE)):
        in_turn = next((m.group(0) for p in table.patterns if (m := p.search(stated))), None)
        assert s.recording(text, in_conversation=answering) == in_turn, (answering, text)


@pytest.mark.parametrize(
    ("text", "cue"),
    [
        ("Hang on. Let me check.", "let me check"),  # the table's order, not the sentences'
        ("Hang on. Let me", "hang on"),
        ("Hang on. Let me check", "let me check"),  # a phrase in the sentence still being said
        ("Hold on, let me. Check. That", "hold on"),  # no phrase across a sentence's end
    ],
)
def test_a_phrase_is_found_in_any_sentence_and_the_tables_order_decides(text, cue):
    assert s.hold_cue(text) == cue


@settings(max_examples=1000, deadline=None, database=None)
@given(_TEXTS)
def test_the_opt_out_check_by_sentence_finds_the_sentence_each_in_turn_would(text):
    in_turn = None
    for sentence in optout._SENTENCE.findall(text):
        if any((m := p.search(sentence)) and not optout._NEGATED.search(sentence[: m.start()]) for p in optout._PATTERNS):
            in_turn = sentence.strip()
            break
    assert optout.detect_opt_out(text) == in_turn, text
    assert optout.detect_opt_out(text) == in_turn, text


def test_an_opt_out_is_heard_in_the_sentence_still_being_said():
    assert optout.detect_opt_out("Thanks for calling. Please stop calling") == "Please stop calling"
    assert optout.detect_opt_out("Please stop. Calling us is fine") is None
