"""How fragments make turns (domain.transcript.add_fragment): a speaker talked over keeps their turn,
a pause ends it, and only a speaker's latest turn ever grows."""

from __future__ import annotations

from calld.domain.transcript import TALK_OVER_GAP_MS, add_fragment, last_to_speak, latest_turn


def _words(*fragments: tuple[str, str, int]) -> tuple:
    """(speaker, text, start_ms) fragments of 300 ms each, fed in order."""
    turns: tuple = ()
    for speaker, text, start in fragments:
        turns = add_fragment(turns, speaker, text, start, start + 300)
    return turns


def test_words_said_over_the_other_side_stay_in_the_speaker_s_turn():
    turns = _words(("agent", "Thank", 0), ("business", "Oh", 300), ("agent", " you", 300),
                   ("business", " wait,", 600), ("agent", " so", 600), ("business", " we close at four.", 900),
                   ("agent", " much.", 900))
    assert [(t.speaker, t.text) for t in turns] == [("agent", "Thank you so much."),
                                                  ("business", "Oh wait, we close at four.")]
    assert latest_turn(turns, "agent") == 0 and latest_turn(turns, "business") == 1
    assert [s.char for s in turns[1].spans] == [0, 2, 8]  # each fragment still placed in its turn


def test_a_pause_ends_a_turn_though_the_other_side_spoke_over_it():
    turns = _words(("business", "We're open nine to five.", 0), ("agent", "Great,", 200),
                   ("business", "Anything else?", 300 + TALK_OVER_GAP_MS + 1))
    assert [t.speaker for t in turns] == ["business", "agent", "business"]


def test_a_reply_after_the_other_side_finished_is_a_new_turn():
    # the agent began after the business had stopped for longer than a word gap: it was not talking over
    turns = _words(("business", "Hello?", 0), ("agent", "Hi,", 300 + TALK_OVER_GAP_MS + 1),
                   ("business", "Yes?", 300 + TALK_OVER_GAP_MS + 200))
    assert [t.speaker for t in turns] == ["business", "agent", "business"]


def test_without_times_fragments_join_only_the_last_turn():
    turns: tuple = ()
    for speaker, text in (("agent", "Thank"), ("business", "Oh"), ("agent", " you"), ("business", " wait")):
        turns = add_fragment(turns, speaker, text)
    assert [t.text for t in turns] == ["Thank", "Oh", " you", " wait"]


def test_words_kept_off_the_line_never_join_a_turn_that_reached_it():
    turns = add_fragment((), "agent", "Hello,", 0, 300)
    turns = add_fragment(turns, "business", "Hi", 300, 600)
    turns = add_fragment(turns, "agent", " bye", 600, 900, on_line=False)
    assert [(t.speaker, t.on_line) for t in turns] == [("agent", True), ("business", True), ("agent", False)]


def test_whose_word_ended_last_is_read_from_the_times_not_the_turn_order():
    turns = _words(("business", "We're", 0), ("agent", "So", 300), ("business", " open.", 300))
    assert [t.speaker for t in turns] == ["business", "agent"]
    assert last_to_speak(turns) == "agent"  # both ended at 600: the later turn
    turns = add_fragment(turns, "business", " Bye.", 600, 900)
    assert last_to_speak(turns) == "business"
