"""The search index contract: every lane filtered inside the lane, fed by the change feed."""

from __future__ import annotations

import pytest

from cairn.storage.ports import EpisodePlace, LaneFilter, RecordChange

from .conftest import Pair, insert, record, vec

T1 = LaneFilter("t1", "a")


def test_keyword_lane_ranks_by_bm25_within_the_namespace(pair: Pair) -> None:
    insert(
        pair.records,
        record("R1", "use pnpm to install dependencies"),
        record("R2", "pnpm pnpm pnpm everywhere"),
        record("R3", "nothing relevant here"),
        record("X1", "pnpm install in tenant two", tenant="t2"),
    )
    hits = pair.index.keyword(T1, ["pnpm", "install"], 10)
    bodies = pair.records.records_by_rows(T1, [h.row for h in hits])
    assert [bodies[h.row].id for h in hits] == ["R1", "R2"]
    assert hits[0].score > hits[1].score > 0
    other = pair.index.keyword(LaneFilter("t2", "a"), ["pnpm"], 10)
    assert len(other) == 1 and other[0].row not in bodies


def test_tenant_statistics_never_move_another_tenants_scores(pair: Pair) -> None:
    insert(pair.records, record("R1", "deploy with make"), record("R2", "other words"))
    before = pair.index.keyword(T1, ["deploy"], 5)
    insert(
        pair.records,
        *(record(f"X{i}", f"deploy deploy {i}", tenant="t2") for i in range(30)),
    )
    after = pair.index.keyword(T1, ["deploy"], 5)
    assert [(h.row, round(h.score, 6)) for h in before] == [
        (h.row, round(h.score, 6)) for h in after
    ]


@pytest.mark.parametrize("lane", ["keyword", "vector", "entity"])
def test_lanes_drop_rows_that_are_not_live_or_out_of_scope_before_ranking(
    pair: Pair, lane: str
) -> None:
    rows = insert(
        pair.records,
        record("G", "alpha rule global"),
        record("P", "alpha rule project", scope="project", project_id="p1"),
        record("Q", "alpha rule other project", scope="project", project_id="p2"),
        record("F", "alpha rule forgotten", forgotten_at="2026-01-02T00:00:00Z"),
        record("E", "alpha rule evicted", evicted_at="2026-01-02T00:00:00Z"),
        record("S", "alpha rule superseded", state="superseded", superseded_by=2),
        vectors={k: vec(0) for k in "GPQFES"},
    )
    where = LaneFilter("t1", "a", "p1")
    if lane == "keyword":
        hits = pair.index.keyword(where, ["alpha"], 1)  # the limit counts eligible rows only
        found = pair.index.keyword(where, ["alpha"], 10)
    elif lane == "vector":
        hits = pair.index.vector(where, vec(0), 1)
        found = pair.index.vector(where, vec(0), 10)
    else:
        hits = pair.index.entity(where, [rows[0]], 200)[:1]
        found = pair.index.entity(where, [rows[0]], 200)
    ids = {r.id for r in pair.records.records_by_rows(T1, [h.row for h in found]).values()}
    expected = {"G", "P"} - ({"G"} if lane == "entity" else set())  # a seed is not its hit
    assert ids == expected
    assert len(hits) == 1


def test_vector_lane_and_scores_are_cosine_within_the_namespace(pair: Pair) -> None:
    rows = insert(
        pair.records,
        record("A", "a"),
        record("B", "b"),
        vectors={"A": vec(0), "B": vec(1)},
    )
    (theirs,) = insert(pair.records, record("A", "a", tenant="t2"), vectors={"A": vec(0)})
    hits = pair.index.vector(T1, vec(0), 5)
    assert [h.row for h in hits] == rows
    assert hits[0].score == pytest.approx(1.0, abs=1e-5)
    scores = pair.index.vector_scores(T1, vec(1), [*rows, theirs])
    assert set(scores) == set(rows)  # another tenant's row is not scored
    assert scores[rows[1]] == pytest.approx(1.0, abs=1e-5)


def test_keyword_scores_and_term_counts(pair: Pair) -> None:
    rows = insert(pair.records, record("A", "red apple"), record("B", "green apple"))
    counts = pair.index.term_counts(T1, ["apple", "red", "blue"])
    assert counts.documents == 2
    assert counts.per_term == {"apple": 2, "red": 1, "blue": 0}
    scores = pair.index.keyword_scores(T1, ["red"], rows)
    assert set(scores) == {rows[0]}
    hit = pair.index.keyword(T1, ["red"], 1)[0]
    assert scores[rows[0]] == pytest.approx(hit.score, rel=1e-5)


def test_places_and_neighbours_within_episodes(pair: Pair) -> None:
    rows = insert(
        pair.records,
        *(
            record(
                f"T{i}",
                f"turn {i}",
                episode_id="s1",
                position=i,
                occurred_at="2026-03-04T10:00:00Z",
            )
            for i in range(6)
        ),
        record("O", "elsewhere", episode_id="s2", position=1),
        record("X", "other tenant", tenant="t2", episode_id="s1", position=2),
    )
    places = pair.index.places(T1, rows)
    assert places[rows[2]] == EpisodePlace("s1", 2, "2026-03-04")
    assert rows[-1] not in places  # another tenant's row has no place here
    near = pair.index.neighbours(T1, [places[rows[2]]], 1)
    assert set(near) == {rows[1], rows[2], rows[3]}


def test_a_second_index_follows_writes_of_another_writer(pair: Pair) -> None:
    follower = pair.second_index()
    assert follower.keyword(T1, ["zebra"], 5) == []
    insert(pair.records, record("Z", "zebra crossing"))
    assert len(follower.keyword(T1, ["zebra"], 5)) == 1
    row = follower.keyword(T1, ["zebra"], 5)[0].row
    with pair.records.transaction() as tx:
        tx.update_record(row, RecordChange(forgotten_at="2026-05-01T00:00:00Z"))
    assert follower.keyword(T1, ["zebra"], 5) == []
    follower.close()


def test_a_purged_row_leaves_every_lane(pair: Pair) -> None:
    (row,) = insert(pair.records, record("S", "secret phrase"), vectors={"S": vec(4)})
    assert pair.index.keyword(T1, ["secret"], 5)
    with pair.records.transaction() as tx:
        tx.purge("t1", "a", "S", "[gone]")
    assert pair.index.keyword(T1, ["secret"], 5) == []
    assert pair.index.vector(T1, vec(4), 5) == []
    assert pair.index.vector_scores(T1, vec(4), [row]) == {}


def test_a_rebuilt_generation_reloads_the_index(pair: Pair) -> None:
    insert(pair.records, record("A", "kiwi fruit"))
    assert len(pair.index.keyword(T1, ["kiwi"], 5)) == 1
    with pair.records.transaction() as tx:
        tx.clear_projection("t1")
    assert pair.index.keyword(T1, ["kiwi"], 5) == []
    insert(pair.records, record("A", "kiwi again"))
    assert len(pair.index.keyword(T1, ["kiwi"], 5)) == 1
