"""The learned combination: query shapes, neighbour signals, and the re-scoring itself."""

from __future__ import annotations

from pathlib import Path

import pytest

from cairn import Memory, MemoryInput
from cairn.adapters.hashing import HashingEmbedder
from cairn.engine.recall.combine import (
    QUESTION_WEIGHTS,
    STATEMENT_WEIGHTS,
    Signals,
    asks_when,
    combine,
    is_question,
    mentions_time,
    neighbour_signals,
    vector_rank_signal,
    weights_for,
)
from cairn.storage.ports import EpisodePlace
from conftest import FrozenClock


@pytest.mark.parametrize(
    "query",
    [
        "When did Caroline go to the LGBTQ support group?",
        "what does retry_with_backoff do",
        "How long has Melanie been painting",
        "Is the staging database on Postgres 16?",
        "Which port does the API listen on",
    ],
)
def test_questions(query: str) -> None:
    assert is_question(query)
    assert weights_for(query) is QUESTION_WEIGHTS


@pytest.mark.parametrize(
    "query",
    [
        "retry_with_backoff",
        "staging database postgres",
        "Caroline went to a support group for LGBTQ people in May",
        "never force-push to main",
        "部署 之前 跑 测试",
        "支付超时默认是多少毫秒？",  # fitted on English questions only: see is_question
    ],
)
def test_keywords_identifiers_and_statements_are_not_questions(query: str) -> None:
    assert not is_question(query)
    assert weights_for(query) is STATEMENT_WEIGHTS


def test_a_statement_gets_no_lift_from_its_neighbours() -> None:
    # A statement names the memory itself, so the fitted context weights are not positive.
    assert STATEMENT_WEIGHTS.neighbour_1 <= 0 and STATEMENT_WEIGHTS.neighbour_2 <= 0
    assert QUESTION_WEIGHTS.neighbour_1 > 0 and QUESTION_WEIGHTS.neighbour_2 > 0


def test_time_cue_needs_a_when_question_and_a_time_in_the_memory() -> None:
    assert asks_when("When did she move?") and asks_when("what year was it")
    assert not asks_when("Where did she move?")
    assert mentions_time("We moved last week") and mentions_time("It was in 2021")
    assert not mentions_time("We moved to a bigger flat")


def test_vector_rank_signal_falls_with_rank_and_is_zero_outside_the_lane() -> None:
    assert vector_rank_signal(None) == 0.0
    assert vector_rank_signal(0) == 1.0
    assert vector_rank_signal(1) > vector_rank_signal(10) > vector_rank_signal(100) > 0


def test_neighbour_signals_read_the_same_episode_only() -> None:
    places = {
        1: EpisodePlace("s1", 4, None),
        2: EpisodePlace("s1", 5, None),
        3: EpisodePlace("s1", 7, None),
        4: EpisodePlace("s2", 6, None),
        5: EpisodePlace(None, None, None),
    }
    base = {1: 0.9, 2: 0.2, 3: 0.5, 4: 1.0, 5: 0.8}
    near = neighbour_signals([1, 2, 3, 4, 5], base, places)
    assert near[2] == (0.9, 0.5)  # position 4 one away, position 7 two away
    assert near[1] == (0.2, 0.0)
    assert near[3] == (0.0, 0.2)  # s2's position 6 is another episode
    assert near[4] == (0.0, 0.0)
    assert near[5] == (0.0, 0.0)  # no place: no neighbours


def test_combine_normalises_to_the_best_and_floors_at_zero() -> None:
    scores = combine([Signals(0.5), Signals(1.0), Signals(0.0)], QUESTION_WEIGHTS)
    assert scores[1] == 1.0 and 0 < scores[0] < 1 and scores[2] == 0.0
    assert combine([Signals(0.0), Signals(0.0)], QUESTION_WEIGHTS) == [0.0, 0.0]
    assert combine([], QUESTION_WEIGHTS) == []


def test_a_long_reply_beside_the_match_overtakes_a_short_match_for_a_question_only() -> None:
    short_match = Signals(fused=1.0, coverage=0.6, length=1.1, vector_rank=1.0)
    reply = Signals(
        fused=0.8, coverage=0.3, length=3.0, neighbour_1=1.0, neighbour_2=0.4, vector_rank=0.8
    )
    asked = combine([short_match, reply], QUESTION_WEIGHTS)
    stated = combine([short_match, reply], STATEMENT_WEIGHTS)
    assert asked[1] > asked[0]
    assert stated[0] > stated[1]


def _episode(tmp_path: Path, clock: FrozenClock, learned: bool) -> Memory:
    config = {"agents": {"default": {"rag": {"minScore": 0, "fusion": {"learned": learned}}}}}
    mem = Memory.open(tmp_path / "m.db", config, embedder=HashingEmbedder(), clock=clock)
    turns = [
        "Did you finish the pottery class this week?",
        "Yes! I made a blue bowl and a small vase, the glaze came out great.",
        "I am going hiking with my kids on Saturday.",
    ]
    mem.store_many(
        MemoryInput(body=t, episode_id="s1", position=i, occurred_at="2024-05-02")
        for i, t in enumerate(turns)
    )
    return mem


def test_the_trace_shows_what_the_combination_read(tmp_path: Path, clock: FrozenClock) -> None:
    with _episode(tmp_path, clock, learned=True) as mem:
        trace = mem.recall("What did she make in the pottery class?").trace
    assert trace and all("combination" in entry for entry in trace)
    read = trace[0]["combination"]
    assert set(read) >= {"fused", "coverage", "length", "neighbour_1", "vector_rank"}


def test_no_combination_when_it_is_off(tmp_path: Path, clock: FrozenClock) -> None:
    with _episode(tmp_path / "off", clock, learned=False) as mem:
        trace = mem.recall("What did she make in the pottery class?").trace
    assert trace and not any("combination" in entry for entry in trace)
