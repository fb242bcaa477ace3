"""Who said it: the speaker of a memory, the speakers a query names, and the lift."""

from __future__ import annotations

from pathlib import Path

import pytest

from cairn import Memory, MemoryInput
from cairn.adapters.hashing import HashingEmbedder
from cairn.engine.recall.fusion import Fused
from cairn.engine.recall.speakers import lift_speakers, named_in, speaker_of
from conftest import FrozenClock
from record_builders import record


@pytest.mark.parametrize(
    ("body", "speaker"),
    [
        ("Melanie: I loved reading Charlotte's Web as a kid.", "Melanie"),
        ("Dr. Who Man: hello", "Dr. Who Man"),
        ("李雷：我上周去爬山了", "李雷"),
        ("a note: lower case is no name", None),
        ("Jon Snow Stark Long: four words are no name", None),
        ("http://example.com is a link", None),
        ("no colon at all", None),
        ("2023: a year", None),
    ],
)
def test_the_speaker_opens_a_transcript_line(body: str, speaker: str | None) -> None:
    assert speaker_of(record("r", body)) == speaker


def test_a_given_speaker_wins_over_the_line() -> None:
    assert speaker_of(record("r", "Melanie: hi", source={"speaker": " Caroline "})) == "Caroline"
    assert speaker_of(record("r", "Melanie: hi", source={"speaker": 3})) == "Melanie"


def test_a_query_names_a_speaker_as_written() -> None:
    known = {"Melanie", "Caroline", "Note", "李雷", "A"}
    assert named_in("What books has Melanie read?", known) == {"Melanie"}
    assert named_in("What do Melanie's kids like?", known) == {"Melanie"}
    assert named_in("Did Caroline and Melanie meet?", known) == {"Caroline", "Melanie"}
    assert named_in("what books has melanie read?", known) == set()  # case is kept
    assert named_in("What did Melanies do?", known) == set()  # a whole word
    assert named_in("Is A the answer?", known) == set()  # one letter names no one
    assert named_in("你知道李雷喜欢什么吗", known) == {"李雷"}
    assert named_in("李雷喜欢爬山", known) == set()  # uncased: not at the start


def test_a_statement_names_its_subject_first_unless_the_pool_writes_it_as_a_word() -> None:
    known = {"Melanie", "Caroline", "Note"}
    chat = ["Melanie: I made this bowl in my class.", "Caroline: Love it!"]
    assert named_in("Melanie made a bowl in pottery class.", known, chat) == {"Melanie"}
    assert named_in("Melanie's bowl", known, chat) == {"Melanie"}
    assert named_in(" Melanie asked Caroline why", known, chat) == {"Melanie", "Caroline"}
    assert named_in("Melanies bowl", known, chat) == set()  # a whole word
    notes = ["Note: deploy on Tuesdays", "leave a note for ops"]
    assert named_in("Note the tests that failed", known, notes) == set()  # the sentence's
    assert named_in("Note the tests that failed", known, notes[:1]) == {"Note"}
    assert named_in("Note the tests that failed", known, ["a Notebook"]) == {"Note"}


def test_the_named_speaker_memories_rise_and_nothing_else_moves() -> None:
    bodies = [
        "Caroline: Charlotte's Web? I never read it.",
        "Melanie: I loved reading Charlotte's Web as a kid.",
        "Caroline: books are great",
        "a note without a speaker",
    ]
    records = {i: record(f"r{i}", body) for i, body in enumerate(bodies)}
    pool = [Fused(0, 1.0), Fused(1, 0.8), Fused(2, 0.7), Fused(3, 0.6)]
    lifted, count = lift_speakers("What books has Melanie read?", pool, records, 0.3)
    assert [f.row for f in lifted] == [1, 0, 2, 3] and count == 1
    assert lifted[0].score == 1.0 and lifted[1].score == pytest.approx(1.0 / 1.1)
    same, none = lift_speakers("What books are good?", pool, records, 0.3)
    assert same == pool and none == 0
    assert lift_speakers("What has Melanie read?", pool, records, 0.0)[0] == pool


def test_recall_puts_the_named_speaker_turn_first(
    tmp_path: Path, embedder: HashingEmbedder, clock: FrozenClock
) -> None:
    turns = [
        "Caroline: Have you read any good books lately, like Charlotte's Web?",
        "Melanie: Yes, I read books to the kids every night.",
    ]
    config = {"agents": {"default": {"rag": {"minScore": 0, "speakerWeight": 0.3}}}}
    with Memory.open(tmp_path / "m.db", config=config, embedder=embedder, clock=clock) as mem:
        mem.store_many(
            MemoryInput(body=t, episode_id="s1", position=i) for i, t in enumerate(turns)
        )
        result = mem.recall("What books has Melanie read?")
        assert result.ranked[0].record.body == turns[1]
        assert "speakers" in result.timings_ms


def test_recall_puts_the_stated_subject_turn_first(
    tmp_path: Path, embedder: HashingEmbedder, clock: FrozenClock
) -> None:
    turns = [
        "Caroline: Melanie, is that the bowl you made in your pottery class?",
        "Melanie: Yes! It took some work, but I'm proud of this bowl.",
    ]
    statement = "Melanie made a bowl in pottery class."
    ranked: dict[float, str] = {}
    for weight in (0.0, 2.0):
        config = {"agents": {"default": {"rag": {"minScore": 0, "speakerWeight": weight}}}}
        path = tmp_path / f"m{weight}.db"
        with Memory.open(path, config=config, embedder=embedder, clock=clock) as mem:
            mem.store_many(
                MemoryInput(body=t, episode_id="s1", position=i) for i, t in enumerate(turns)
            )
            ranked[weight] = mem.recall(statement).ranked[0].record.body
    assert ranked == {0.0: turns[0], 2.0: turns[1]}
