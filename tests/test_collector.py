"""The daemon's full garbage-collector walks: never automatic while it owns the collector, taken
when the last call ends, or once overdue; and the collector as it was when the daemon lets go."""

from __future__ import annotations

import gc
from collections.abc import Iterator

import pytest

from calld.daemon.collector import MIDDLE_THRESHOLD, NEVER, FullCollections


@pytest.fixture
def full_walks() -> Iterator[list[int]]:
    """The generation of every collection, in order; the collector's thresholds restored after."""
    seen: list[int] = []
    saved = gc.get_threshold()

    def note(phase: str, info: dict[str, int]) -> None:
        if phase == "stop":
            seen.append(info["generation"])

    gc.callbacks.append(note)
    try:
        yield seen
    finally:
        gc.callbacks.remove(note)
        gc.set_threshold(*saved)
        gc.unfreeze()


def test_owning_the_collector_stops_automatic_full_walks_and_letting_go_restores_it(full_walks: list[int]) -> None:
    policy = FullCollections()
    young, middle, old = gc.get_threshold()
    policy.take_over(now=0.0)
    assert policy.owned and gc.get_threshold() == (young, min(middle, MIDDLE_THRESHOLD), NEVER)
    assert gc.get_threshold()[1] <= 5  # the middle generation walked often: each walk short
    assert gc.get_freeze_count() > 0  # the start-up heap is out of every walk
    full_walks.clear()
    survivors = [[] for _ in range(400_000)]  # enough young survivors for CPython to start a full walk
    assert 1 in full_walks and 2 not in full_walks
    del survivors
    policy.give_back()
    assert not policy.owned and gc.get_threshold() == (young, middle, old)


def test_the_last_call_ending_takes_a_full_walk_and_one_still_running_does_not(full_walks: list[int]) -> None:
    policy = FullCollections(max_interval_s=600)
    policy.take_over(now=0.0)
    full_walks.clear()
    assert not policy.call_ended(calls_in_flight=3, now=10.0)
    assert not policy.call_started(now=20.0)
    assert full_walks == []
    assert policy.call_ended(calls_in_flight=0, now=30.0)
    assert full_walks == [2] and policy.taken == 1


def test_when_calls_never_stop_a_full_walk_is_taken_once_overdue(full_walks: list[int]) -> None:
    policy = FullCollections(max_interval_s=600)
    policy.take_over(now=0.0)
    full_walks.clear()
    assert not policy.call_started(now=599.0)
    assert policy.call_started(now=600.0)  # overdue: taken at a call's start rather than never
    assert not policy.call_ended(calls_in_flight=5, now=900.0)  # the interval starts again from 600
    assert policy.call_ended(calls_in_flight=5, now=1200.0)
    assert full_walks == [2, 2]


def test_a_policy_that_does_not_own_the_collector_never_walks(full_walks: list[int]) -> None:
    policy = FullCollections(max_interval_s=0)
    full_walks.clear()
    assert not policy.call_ended(calls_in_flight=0, now=1.0)
    assert not policy.call_started(now=2.0)
    assert full_walks == []
