"""The vector lane's text: the query without the speakers it names."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

from cairn import Memory, MemoryInput
from cairn.adapters.hashing import HashingEmbedder
from cairn.engine.recall.topic import could_name, unnamed
from conftest import FrozenClock


@pytest.mark.parametrize(
    ("query", "names", "topic"),
    [
        ("What exercises has John done?", {"John"}, "What exercises has they done?"),
        ("What do Melanie's kids like?", {"Melanie"}, "What do their kids like?"),
        ("What do Melanie’s kids like?", {"Melanie"}, "What do their kids like?"),
        ("Do Jon and Gina both dance?", {"Jon", "Gina"}, "Do they and they both dance?"),
        ("Jolene did yoga on Mount Talkeetna", {"Jolene"}, "they did yoga on Mount Talkeetna"),
        ("Did Dr. Who Man call?", {"Dr. Who Man", "Who"}, "Did they call?"),  # longest first
        ("你知道李雷喜欢什么吗", {"李雷"}, "你知道喜欢什么吗"),
        ("李雷？", {"李雷"}, "李雷？"),  # nothing but punctuation left: as given
        ("What has Johnny done?", {"John"}, "What has Johnny done?"),  # whole words only
        ("what has john done?", {"John"}, "what has john done?"),  # case is kept
        ("What has John done?", set(), "What has John done?"),
    ],
)
def test_the_names_are_taken_out(query: str, names: set[str], topic: str) -> None:
    assert unnamed(query, names) == topic


def test_only_a_query_with_a_possible_name_is_looked_at() -> None:
    assert could_name("What did John do?")
    assert could_name("Jolene did yoga")  # a statement opens with its subject
    assert could_name("李雷喜欢爬山")
    assert not could_name("What is the deploy command?")  # an opening stop word
    assert not could_name("how do i run the tests")
    assert not could_name("2023-05-01 12:00")


class RecordingEmbedder(HashingEmbedder):
    def __init__(self) -> None:
        super().__init__()
        self.texts: list[str] = []

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        self.texts.extend(texts)
        return super().embed(texts)


TURNS = [
    "Maria: Hey John, how was the gym this week?",
    "John: I'm doing kickboxing and it gives me so much energy.",
    "Maria: I volunteered at the shelter again.",
]


def _embedded(path: Path, clock: FrozenClock, query: str, rag: dict[str, object]) -> list[str]:
    """What the recall embedded: the vector lane's text, then the query as asked when
    that differs (the relevance floor reads it)."""
    embedder = RecordingEmbedder()
    config = {"agents": {"default": {"rag": {"minScore": 0, **rag}}}}
    with Memory.open(path, config=config, embedder=embedder, clock=clock) as mem:
        mem.store_many(
            MemoryInput(body=t, episode_id="s1", position=i) for i, t in enumerate(TURNS)
        )
        embedder.texts.clear()
        result = mem.recall(query)
        assert result.ranked  # the recall itself went through
        return list(embedder.texts)


def test_the_vector_lane_embeds_the_query_without_a_named_speaker(
    tmp_path: Path, clock: FrozenClock
) -> None:
    query = "What exercises has John done?"
    assert _embedded(tmp_path / "a.db", clock, query, {}) == [
        "What exercises has they done?",
        query,
    ]
    off = {"vectorWithoutSpeakers": False}
    assert _embedded(tmp_path / "b.db", clock, query, off) == [query]


def test_a_name_that_is_no_speaker_stays(tmp_path: Path, clock: FrozenClock) -> None:
    # Maria speaks in the store; "Laura" is only a word of the query.
    query = "What did Laura say about the shelter?"
    assert _embedded(tmp_path / "a.db", clock, query, {}) == [query]
    # Maria is a speaker: the name goes, the rest of the question stays.
    asked = "Where does Maria volunteer?"
    assert _embedded(tmp_path / "b.db", clock, asked, {})[0] == "Where does they volunteer?"


def test_the_floor_reads_the_query_as_asked(tmp_path: Path, clock: FrozenClock) -> None:
    # The relevance floor was calibrated on the query's own vector: the cosine it reports
    # is the asked query's, the same with the topic on or off.
    cosines = []
    for i, rag in enumerate(({}, {"vectorWithoutSpeakers": False})):
        config = {"agents": {"default": {"rag": {"minScore": 0, **rag}}}}
        path = tmp_path / f"{i}.db"
        with Memory.open(path, config=config, embedder=HashingEmbedder(), clock=clock) as mem:
            mem.store_many(MemoryInput(body=t) for t in TURNS)
            result = mem.recall("What exercises has John done?")
            cosines.append({c.record.body: c.relevance.cosine for c in result.ranked})
    assert cosines[0] == cosines[1] and any(v is not None for v in cosines[0].values())
