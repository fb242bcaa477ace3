from __future__ import annotations

import numpy as np
import pytest

from cairn.storage.inprocess.vector_index import ExactVectorIndex


def unit(*values: float) -> np.ndarray:
    v = np.asarray(values, dtype=np.float32)
    return v / np.linalg.norm(v)


def test_search_filters_before_ranking_and_bulk_load_matches_single() -> None:
    rows = [1, 2, 3, 4, 5]
    tenants = ["a", "a", "b", "a", "a"]
    projects = [None, "p1", None, "p2", None]
    live = [True, True, True, True, False]
    vectors = np.stack([unit(1, 0), unit(0.9, 0.1), unit(1, 0), unit(0.8, 0.2), unit(1, 0)])
    bulk, single = ExactVectorIndex(2), ExactVectorIndex(2)
    bulk.upsert_many(rows, tenants, ["x"] * 5, projects, live, vectors)
    for i, row in enumerate(rows):
        single.upsert(row, tenants[i], "x", projects[i], live[i], vectors[i])
    query = unit(1, 0)
    for index in (bulk, single):
        # Tenant b's exact match and the dead row never appear; p2 only when asked.
        assert [r for r, _ in index.search(query, "a", "x", None, 10)] == [1, 2, 4]
        assert [r for r, _ in index.search(query, "a", "x", "p1", 10)] == [1, 2]
        assert index.search(query, "nobody", "x", None, 10) == []
        assert [r for r, _ in index.search(query, "a", "x", None, 1)] == [1]
    assert bulk.scores(query, [3, 4, 99]) == pytest.approx({3: 1.0, 4: float(vectors[3] @ query)})
    bulk.upsert(2, "a", "x", "p1", False, None)  # superseded: stays stored, leaves results
    assert [r for r, _ in bulk.search(query, "a", "x", None, 10)] == [1, 4]


def test_growth_keeps_everything() -> None:
    index = ExactVectorIndex(4)
    rng = np.random.default_rng(1)
    vectors = rng.normal(size=(3000, 4)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    index.upsert_many(
        list(range(3000)), ["t"] * 3000, ["a"] * 3000, [None] * 3000, [True] * 3000, vectors
    )
    assert len(index) == 3000
    best, score = index.search(vectors[1234], "t", "a", None, 1)[0]
    assert best == 1234 and score == pytest.approx(1.0, abs=1e-5)
