from __future__ import annotations

import math
from datetime import UTC, date, datetime

import pytest

from cairn.engine.recall.episodes import propagate
from cairn.engine.recall.timeframe import date_prior, query_range
from cairn.storage.ports import EpisodePlace

NOW = datetime(2026, 6, 15, tzinfo=UTC)


def place(episode: str | None, position: int | None, when: str | None = None) -> EpisodePlace:
    return EpisodePlace(episode, position, when)


def test_neighbours_lift_each_other_within_an_episode_only() -> None:
    scores = {1: 1.0, 2: 0.1, 3: 0.1, 4: 0.1}
    places = {1: place("s1", 5), 2: place("s1", 6), 3: place("s1", 8), 4: place("s2", 6)}
    out = propagate(
        scores, places, neighbour_weight=0.5, window=2, episode_weight=0.0, episode_top=3
    )
    assert out[2] == pytest.approx(0.1 + 0.5 * 1.0 + 0.5 / 2 * 0.1)  # d=1 and d=2 neighbours
    assert out[3] == pytest.approx(0.1 + 0.5 / 2 * 0.1)  # distance 2 from row 2, 3 from row 1
    assert out[4] == pytest.approx(0.1)  # another episode: no lift
    assert out[1] == pytest.approx(1.0 + 0.5 * 0.1)


def test_episode_score_is_mean_of_top_n() -> None:
    scores = {1: 0.9, 2: 0.6, 3: 0.3, 4: 0.0, 5: 0.5}
    places = {r: place("a", None) for r in (1, 2, 3, 4)} | {5: place(None, None)}
    out = propagate(
        scores, places, neighbour_weight=0.0, window=2, episode_weight=1.0, episode_top=3
    )
    assert out[4] == pytest.approx(0.0 + (0.9 + 0.6 + 0.3) / 3)
    assert out[5] == 0.5  # no episode: unchanged


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("What did Mel do on 8 May, 2023?", (date(2023, 5, 8), date(2023, 5, 8))),
        ("what happened May 8th, 2023", (date(2023, 5, 8), date(2023, 5, 8))),
        ("plans in June 2023?", (date(2023, 6, 1), date(2023, 6, 30))),
        ("trips in the summer of 2022", (date(2022, 6, 1), date(2022, 8, 31))),
        ("during 2021", (date(2021, 1, 1), date(2021, 12, 31))),
        ("the 2024-02-29 deploy", (date(2024, 2, 29), date(2024, 2, 29))),
        ("what did we decide last week?", (date(2026, 6, 2), date(2026, 6, 8))),
        ("anything yesterday", (date(2026, 6, 14), date(2026, 6, 14))),
        ("what is the package manager", None),
        ("on 31 February 2023", None),
        ("winter 2022", (date(2022, 12, 1), date(2023, 2, 28))),
    ],
)
def test_query_range(query: str, expected: tuple[date, date] | None) -> None:
    assert query_range(query, NOW) == expected


def test_date_prior_favours_the_named_time_and_the_days_after() -> None:
    scores = {1: 0.0, 2: 0.0, 3: 0.0, 4: 0.0}
    places = {
        1: place(None, None, "2023-05-08T10:00:00Z"),
        2: place(None, None, "2023-05-20T10:00:00Z"),  # within the 14 days after
        3: place(None, None, "2023-07-08T10:00:00Z"),
        4: place(None, None, None),
    }
    span = (date(2023, 5, 8), date(2023, 5, 8))
    out = date_prior(scores, places, span, weight=2.0, after_days=14, tau_days=15)
    assert out[1] == pytest.approx(2.0) and out[2] == pytest.approx(2.0)
    assert 0 < out[3] < 0.2 and out[4] == 0.0


def test_expansion_brings_in_a_neighbour_no_lane_found(tmp_path, embedder, clock) -> None:  # type: ignore[no-untyped-def]
    from cairn.memory import Memory, MemoryInput

    turns = [
        "Did you go to the harbour regatta on Saturday?",
        "Yes! The blue boat won, we cheered all afternoon.",
        "Lunch was sandwiches.",
    ]
    filler = [f"filler note {i} about taxes" for i in range(20)]
    path = tmp_path / "m.db"
    # laneCandidates 1: each lane returns only its best row, so the reply is no lane's hit.
    rag = {"laneCandidates": 1, "minScore": 0}
    with Memory.open(
        path, config={"agents": {"default": {"rag": rag}}}, embedder=embedder, clock=clock
    ) as on:
        on.store_many(
            [MemoryInput(body=t, episode_id="s1", position=i) for i, t in enumerate(turns)]
        )
        on.store_many(
            [MemoryInput(body=t, episode_id="s2", position=i) for i, t in enumerate(filler)]
        )
        result = on.recall("harbour regatta")
    no_expansion = {"agents": {"default": {"rag": {**rag, "episodes": {"expandTop": 0}}}}}
    with Memory.open(path, config=no_expansion, embedder=embedder, clock=clock) as off:
        baseline = off.recall("harbour regatta")
    assert turns[1] not in [c.record.body for c in baseline.ranked]
    reached = [c for c in result.ranked if c.record.body == turns[1]]
    assert reached and "neighbour" in reached[0].ranks
    assert result.ranked[0].record.body == turns[0]  # the hit itself stays first


def test_a_range_at_the_last_day_of_the_calendar_has_its_prior() -> None:
    """ "what happened on 9999-12-31": the days after it are past the calendar's end."""
    span = query_range("what happened on 9999-12-31?", NOW)
    assert span == (date(9999, 12, 31), date(9999, 12, 31))
    places = {1: place(None, None, "9999-12-31T23:59:59.999999Z"), 2: place(None, None, None)}
    out = date_prior({1: 0.0, 2: 0.0}, places, span, weight=2.0, after_days=14, tau_days=15)
    assert out == {1: pytest.approx(2.0), 2: 0.0}


def test_the_date_prior_reads_the_days_a_memory_own_words_name() -> None:
    """Told on 8 May that it happened "three months ago": it counts as February, and a
    named day gets no after-days extension (the words say when it happened)."""
    places = {1: place(None, None, "2023-05-08T10:00:00Z"), 2: place(None, None, "2023-05-08")}
    resolved = {1: [(date(2023, 2, 1), date(2023, 2, 28))], 3: [(date(2023, 2, 10),) * 2]}
    span = (date(2023, 2, 1), date(2023, 2, 28))
    scores = {1: 0.0, 2: 0.0, 3: 0.0}
    out = date_prior(
        scores, places, span, weight=2.0, after_days=14, tau_days=15, resolved=resolved
    )
    assert out[1] == pytest.approx(2.0) and out[3] == pytest.approx(2.0)  # 3 has no place
    assert out[2] < 0.4  # told 68 days after February's end
    late = date_prior(
        {1: 0.0}, {}, (date(2023, 1, 30),) * 2, weight=2.0, after_days=14, tau_days=15,
        resolved={1: [(date(2023, 2, 1), date(2023, 2, 1))]},
    )  # fmt: skip
    assert late[1] == pytest.approx(2.0 * math.exp(-2 / 15))


def test_recall_finds_the_memory_whose_words_name_the_asked_time(tmp_path, embedder, clock) -> None:  # type: ignore[no-untyped-def]
    from cairn.memory import Memory

    config = {"agents": {"default": {"rag": {"minScore": 0}}}}
    with Memory.open(tmp_path / "m.db", config=config, embedder=embedder, clock=clock) as mem:
        told = [
            mem.store(f"We moved to Berlin {when}", occurred_at="2023-05-08")
            for when in ("two days ago", "three months ago", "last year")
        ]
        # Told on 8 May 2023: by its time alone, each is as far from February or 2022.
        asked = {"moved to Berlin in February 2023": told[1], "moved to Berlin in 2022": told[2]}
        for query, expected in asked.items():
            ranked = mem.recall(query).ranked
            assert ranked[0].record.id == expected.id, query
            assert ranked[0].score > ranked[1].score
