"""The approximate (HNSW) vector graph: same answers as exact search, same guarantees.

Small sizes with a low ``ann_threshold`` force the ANN path; speed is measured by
``benchmarks/scale.py``, never here. Files and their checks: test_ann_files.py.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from ann_support import (
    DIM,
    VECTORS,
    ann_files,
    ann_rows,
    clustered,
    exact_rows,
    fill,
    lane,
    open_memory,
    sources,
    store_of,
)
from cairn import Memory
from cairn.storage.inprocess.ann_graph import AnnIndexes, load_usearch
from cairn.storage.inprocess.vector_index import ExactVectorIndex

if load_usearch() is None:  # imports onnxruntime first: the other order crashes
    pytest.skip("usearch is not installed", allow_module_level=True)


@pytest.fixture
def db(tmp_path: Path) -> Iterator[Path]:
    path = tmp_path / "memory.db"
    yield path


@pytest.fixture
def two_tenants(db: Path) -> Iterator[Memory]:
    mem = open_memory(db)
    fill(mem, "a", 0, 600)
    fill(mem, "b", 600, 400)
    yield mem
    mem.close()


def test_top_hits_match_exact_search_on_clustered_vectors(two_tenants: Memory) -> None:
    store = store_of(two_tenants)
    queries = clustered(40, seed=99)
    recalls: list[float] = []
    for i, q in enumerate(queries):
        tenant = "a" if i % 2 else "b"
        project = None if i % 4 < 2 else f"{tenant}-p{i % 2}"
        got = ann_rows(store, q, tenant, project, 10)
        truth = exact_rows(store, q, tenant, project, 10)
        recalls.append(len(set(got) & set(truth)) / len(truth))
        # Rescored exactly: the same cosine as exact search for every shared row.
        exact_scores = dict(store._index.search(q, tenant, "default", project, 50))
        assert store._ann is not None
        for row, score in store._ann.search(store._index, q, tenant, "default", project, 10) or []:
            if row in exact_scores:
                assert score == pytest.approx(exact_scores[row], abs=1e-6)
    assert float(np.mean(recalls)) >= 0.9
    assert sources(store) == {"a": "built", "b": "built"}
    assert len(ann_files(store.path)) == 2  # one graph per tenant+agent, persisted


def test_tenants_and_projects_never_leak(two_tenants: Memory) -> None:
    store = store_of(two_tenants)
    for i in (600, 650, 700):  # tenant b's own vectors, searched as tenant a
        rows = ann_rows(store, VECTORS[i], "a", None, 50)
        records = store.records_by_rows(rows)
        assert {r.tenant for r in records.values()} == {"a"}
        assert all(r.body != f"v{i} memory number {i} of b" for r in records.values())
        scoped = ann_rows(store, VECTORS[i], "a", "a-p1", 50)
        for record in store.records_by_rows(scoped).values():
            assert record.scope == "global" or record.project_id == "a-p1"


def test_forgotten_superseded_and_purged_rows_never_come_back(two_tenants: Memory) -> None:
    mem = two_tenants
    store = store_of(mem)
    victims = {}
    for i in (10, 20, 30):
        top = lane(store, VECTORS[i], "a", 1)[0]
        victims[i] = store.records_by_rows([top])[top]
        assert victims[i].body.startswith(f"v{i} ")
    mem.forget(victims[10].id)
    mem.correct(victims[20].id, "v1999 corrected text")
    mem.forget(victims[30].id, permanent=True)
    for i in (10, 20, 30):
        rows = ann_rows(store, VECTORS[i], "a", None, 100)
        bodies = {r.body for r in store.records_by_rows(rows).values()}
        assert victims[i].body not in bodies
        assert set(rows) <= set(store._index.rows())  # live rows only
        assert all(
            r.forgotten_at is None and r.superseded_by is None
            for r in store.records_by_rows(rows).values()
        )
    # The correction is found under its new vector.
    rows = ann_rows(store, VECTORS[1999], "a", None, 1)
    assert store.records_by_rows(rows)[rows[0]].body == "v1999 corrected text"


def test_without_usearch_search_stays_exact(db: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "usearch", None)
    monkeypatch.setitem(sys.modules, "usearch.index", None)
    mem = open_memory(db)
    fill(mem, "a", 0, 300)
    store = store_of(mem)
    assert store._ann is None
    query = VECTORS[11]
    assert lane(store, query, "a") == exact_rows(store, query, "a", None, 10)
    assert not Path(f"{db}.ann").exists()
    mem.close()


def test_below_the_threshold_search_is_exact_and_writes_nothing(db: Path) -> None:
    mem = open_memory(db, threshold=10_000)
    fill(mem, "a", 0, 300)
    store = store_of(mem)
    assert lane(store, VECTORS[3], "a") == exact_rows(store, VECTORS[3], "a", None, 10)
    assert store._ann is not None and store._ann.describe() == []
    assert not ann_files(db)
    mem.close()


def test_exact_blocks_compact_and_zero_purged_vectors() -> None:
    vectors = clustered(5001, seed=11)
    index = ExactVectorIndex(DIM)
    rows = list(range(1, 5001))
    index.upsert_many(rows, ["t"] * 5000, ["x"] * 5000, [None] * 5000, [True] * 5000, vectors[1:])
    for row in range(1, 3001):  # most rows superseded: the block compacts itself
        index.upsert(row, "t", "x", None, False, vectors[row])
    block = index.block("t", "x")
    assert block is not None and block.size < 5000 and block.live_count == 2000
    for row in (3001, 4000, 5000):
        assert index.search(vectors[row], "t", "x", None, 1)[0][0] == row
    index.upsert_many([4500], ["u"], ["x"], [None], [True], vectors[4500:4501])  # moves
    assert index.search(vectors[4500], "u", "x", None, 1)[0][0] == 4500
    assert index.search(vectors[4500], "t", "x", None, 1)[0][0] != 4500
    index.drop(4000)
    assert 4000 not in index.scores(vectors[0], [4000, 4001])
    assert index.search(vectors[4000], "t", "x", None, 1)[0][0] != 4000
    assert not np.any(block.matrix[block.size :])  # no stale bytes past the live rows
    # A row id far past the dense range still works, also once the range grows past it.
    index.upsert(10**12, "t", "x", None, True, vectors[0])
    index.upsert(3 * 2**20, "t", "x", None, True, vectors[1])
    for step, row in enumerate((10**6, 2 * 10**6, 32 * 10**5)):  # the dense range grows
        index.upsert_many([row], ["t"], ["x"], [None], [True], vectors[2 + step : 3 + step])
    assert not index._sparse.keys() - {10**12}
    for row, vec in ((10**12, vectors[0]), (3 * 2**20, vectors[1]), (32 * 10**5, vectors[4])):
        assert index.search(vec, "t", "x", None, 1)[0][0] == row
        assert row in index.scores(vec, [row])


def test_a_failing_ann_degrades_to_exact_search(
    db: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    mem = open_memory(db)
    fill(mem, "a", 0, 300)
    store = store_of(mem)

    def broken(*_args: object) -> None:
        raise RuntimeError("disk on fire")

    monkeypatch.setattr(AnnIndexes, "_attach", broken)
    assert lane(store, VECTORS[3], "a") == exact_rows(store, VECTORS[3], "a", None, 10)
    assert store._ann is not None and store._ann.describe() == []
    assert "vector search stays exact" in caplog.text
    mem.close()
