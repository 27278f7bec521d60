"""calld.domain.tokens: the normalisations the evidence check, the transcript assessment and the call's page
compare words by, each pinned by a small case of our own where the check's tests leave it unpinned."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from calld.domain.tokens import tokens


def said(text: str) -> list[str]:
    return [t.word for t in tokens(text)]


@pytest.mark.parametrize("yes", ["Mm-hmm", "mm-hmm!", "Uh-huh", "uh-huh."])
def test_a_yes_of_no_word_is_one_token_and_no_filler(yes: str) -> None:
    # "uh" and "mm", "hmm" alone are fillers; joined by their dash they are one word, a yes ("huh" alone is none)
    assert said(yes) == [yes.lower().rstrip("!.")]
    assert said(f"Oh, {yes}, Friday at 8.") == [yes.lower().rstrip("!."), "friday", "at", "8"]


@pytest.mark.parametrize("plain", ["We don't open Sundays.", "It's Tuesday's slot.", "Seven o'clock works."])
def test_a_typographic_apostrophe_reads_as_a_plain_one(plain: str) -> None:
    assert said(plain.replace("'", "\u2019")) == said(plain)


def test_a_number_and_oclock_keep_their_s_apart() -> None:
    assert said("Nine o'clock's the earliest.") == ["9", "oclock", "s", "the", "earliest"]
    assert said("Four's fine.") == ["4", "s", "fine"]


@given(st.integers(1, 9), st.sampled_from([("twenty", 20), ("thirty", 30), ("forty", 40), ("fifty", 50)]))
def test_a_number_said_in_three_words_is_one(hundreds: int, tens: tuple[str, int]) -> None:
    ones = ("one", "two", "three", "four", "five", "six", "seven", "eight", "nine")[hundreds - 1]
    assert said(f"about {ones} hundred {tens[0]} left") == ["about", str(hundreds * 100 + tens[1]), "left"]


@pytest.mark.parametrize("words, digits", [("the twelfth", "the 12th"), ("the twenty-first", "the 21st"),
                                           ("the third", "the 3rd"), ("the thirtieth", "the 30th")])
def test_an_ordinal_in_words_is_its_number_and_th(words: str, digits: str) -> None:
    assert said(words) == said(digits) == ["the", digits[4:-2], "th"]


@pytest.mark.parametrize("words, count", [("a dozen", "12"), ("three dozen", "36"), ("two dozens", "24"),
                                          ("half a dozen", "6")])
def test_dozens_are_counted(words: str, count: str) -> None:
    assert said(f"we have {words} eggs") == ["we", "have", count, "eggs"]


@pytest.mark.parametrize("run, ends", [("8:30-4:45", ("8:30", "4:45")), ("9-5:30", ("9", "5:30")),
                                       ("10:15\u20136", ("10:15", "6"))])
def test_a_dash_between_clock_times_is_a_run(run: str, ends: tuple[str, str]) -> None:
    assert said(f"open {run} daily") == ["open", ends[0], "to", ends[1], "daily"]


def test_fillers_are_dropped() -> None:
    # the check's FILLERS, each said in a sentence of ours: none is a word the check compares
    spoken = "Um, uh, er, erm, ah, oh, hmm, mm, well, like, so, basically, the ladders are in aisle 4."
    assert said(spoken) == ["the", "ladders", "are", "in", "aisle", "4"]


def test_a_g_dropped_in_writing_is_said_and_only_where_its_apostrophe_is() -> None:
    assert said("I got nothin' till ten, we're goin' home") == ["i", "got", "nothing", "till", "10", "we're", "going", "home"]
    assert said("The cabin in Berlin, nothin") == ["the", "cabin", "in", "berlin", "nothin"]


def test_one_after_the_and_a_word_is_a_pronoun_but_the_last_one_counts() -> None:
    assert said("Friday's the late one till half five") == ["friday's", "the", "late", "one", "till", "half", "5"]
    assert said("the fresh one's in the dairy") == ["the", "fresh", "one", "s", "in", "the", "dairy"]
    assert said("we've got the last one") == ["we've", "got", "the", "last", "1"]
    assert said("one of them") == ["1", "of", "them"]
