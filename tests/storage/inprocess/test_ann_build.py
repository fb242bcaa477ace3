"""A partition's first graph built in the background: searched exactly while it is built
(the index's lock is never held for the build), then adopted and repaired to what was
written, changed or forgotten meanwhile, with the same answers as exact search."""

from __future__ import annotations

from pathlib import Path

import pytest

from ann_support import (
    VECTORS,
    TableEmbedder,
    ann_rows,
    clustered,
    exact_rows,
    fill,
    lane,
    make_store,
    memory_over,
    sources,
)
from cairn.storage.inprocess.ann_build import GraphBuild
from cairn.storage.inprocess.ann_graph import load_usearch

if load_usearch() is None:  # imports onnxruntime first: the other order crashes
    pytest.skip("usearch is not installed", allow_module_level=True)


def test_a_first_graph_is_built_off_the_lock_then_adopted_with_what_came_meanwhile(
    tmp_path: Path,
) -> None:
    store = make_store(tmp_path / "memory.db", background=True)
    mem = memory_over(store, TableEmbedder(VECTORS))
    try:
        fill(mem, "a", 0, 300)  # past the threshold (200)
        query = clustered(1, seed=5)[0]
        assert lane(store, query, "a")  # this sync starts the build and answers exactly
        assert store._ann is not None
        building = dict(store._ann._building)
        assert list(building) == [("a", "default")] and sources(store) == {}
        job: GraphBuild = building[("a", "default")]
        fill(mem, "a", 300, 3)  # written while it builds: found at once, exactly
        gone = mem.for_tenant("a").list(limit=1)[0]
        mem.for_tenant("a").forget(gone.id)
        assert job.wait(60) and job.error is None
        lane(store, query, "a")  # the next sync adopts it
        assert sources(store) == {"a": "built"} and not store._ann._building
        for q in clustered(20, seed=11):
            assert ann_rows(store, q, "a", None, 5) == exact_rows(store, q, "a", None, 5)
        graph = store._ann._parts[("a", "default")]
        assert gone.id not in {r.id for r in mem.for_tenant("a").list(limit=1000)}
        rows_in_graph = set(int(k) for k in graph.index.keys) | graph.pending
        live = {r for r in store._index.blocks()[0].rows[store._index.blocks()[0].live]}
        assert rows_in_graph == live  # the forgotten row out, the late rows pending or in
    finally:
        mem.close()
