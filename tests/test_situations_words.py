"""The pure situation checks (calld.core.situations): which words are a hold, a menu, a recording,
a screener, a wrong party, or only a courtesy; and which audio is sound."""

from __future__ import annotations

import struct

import pytest

from calld.core import situations as s


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
    ],
)
def test_hold_cues(text, cue):
    assert s.hold_cue(text) == cue


def test_each_kind_of_moment_is_told_apart():
    assert s.menu_prompt("For store hours, press 1. For the operator, press 0.") is not None
    assert s.menu_prompt("We're open until 9.") is None
    assert s.recording("You've reached Joe's. Please leave a message after the tone.") is not None
    assert s.recording("Hello, Joe's Hardware.") is None
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


def test_a_clerk_who_does_not_know_the_item_is_not_a_wrong_number():
    from calld.core import situations

    assert situations.wrong_party("Hmm, never heard of it, sorry.") is None
