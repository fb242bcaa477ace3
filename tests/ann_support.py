"""Shared by the tests of the approximate vector index (tests/storage/inprocess/test_ann_*.py).

A table embedder maps ``v<i> ...`` texts to clustered vectors, so the tests know each
memory's vector; small sizes with a low ``annThreshold`` force the ANN path. ``StoreView``
gives the tests the pair of ports under a memory — the SQLite record store and the
in-process search index with its graphs — and the few internals they inspect.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from cairn import Memory, MemoryInput
from cairn.compose import assemble
from cairn.config import parse_config
from cairn.engine.director import stored_rank
from cairn.model import Record
from cairn.provider.local import LocalProvider, Ports
from cairn.storage.inprocess import InProcessSearchIndex
from cairn.storage.inprocess.ann_graph import AnnIndexes
from cairn.storage.inprocess.vector_index import ExactVectorIndex
from cairn.storage.ports import LaneFilter, LaneHit
from cairn.storage.sqlite.record_store import SqliteRecordStore

DIM = 32
THRESHOLD = 200
TENANTS = ("a", "b")


def clustered(n: int, seed: int, centers: int = 12) -> np.ndarray:
    """Unit vectors in tight clusters, like embeddings of texts on a few topics."""
    rng = np.random.default_rng(seed)
    middle = rng.standard_normal((centers, DIM)).astype(np.float32)
    out = middle[rng.integers(0, centers, n)] + 0.35 * rng.standard_normal((n, DIM))
    out = out.astype(np.float32)
    return out / np.linalg.norm(out, axis=1, keepdims=True)


class TableEmbedder:
    """Text ``v<i> ...`` embeds to row ``i`` of a table; anything else to a hash vector."""

    model_id = "test-table-32"
    dim = DIM

    def __init__(self, table: np.ndarray) -> None:
        self.table = table

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        out = np.empty((len(texts), DIM), dtype=np.float32)
        for i, text in enumerate(texts):
            head = text.split()[0]
            if head.startswith("v") and head[1:].isdigit():
                out[i] = self.table[int(head[1:])]
            else:
                rng = np.random.default_rng(abs(hash(text)) % 2**32)
                v = rng.standard_normal(DIM)
                out[i] = v / np.linalg.norm(v)
        return out


VECTORS = clustered(2000, seed=7)


class StoreView:
    """A record store and its search index on one file, as a process holds them."""

    def __init__(self, records: SqliteRecordStore, index: InProcessSearchIndex) -> None:
        self.records = records
        self.index = index
        self.path = records.path

    @property
    def _ann(self) -> AnnIndexes | None:
        return self.index._ann

    @_ann.setter
    def _ann(self, value: AnnIndexes | None) -> None:
        self.index._ann = value

    @property
    def _index(self) -> ExactVectorIndex:
        self.index.refresh()
        return self.index._vectors

    def vector_search(self, where: LaneFilter, query: np.ndarray, limit: int) -> list[LaneHit]:
        return self.index.vector(where, query, limit)

    def records_by_rows(self, rows: Sequence[int]) -> dict[int, Record]:
        found: dict[int, Record] = {}
        for tenant in TENANTS:
            found.update(self.records.records_by_rows(LaneFilter(tenant, "default"), rows))
        return found

    def close(self) -> None:
        self.index.close()
        self.records.close()


def make_store(path: Path, threshold: int | None = THRESHOLD, **ann: Any) -> StoreView:
    records = SqliteRecordStore(path, rank_hint=stored_rank)
    index = InProcessSearchIndex(records, dim=DIM, graphs_beside=path, ann_threshold=threshold)
    if ann and threshold is not None:
        index._ann = AnnIndexes.open(path, DIM, threshold, **ann)
    return StoreView(records, index)


def memory_over(store: StoreView, embedder: Any, tenant: str = "a") -> Memory:
    config = parse_config({"memory": {"markdown": {"enabled": False}}})
    provider = assemble(config, Ports(store.records, store.index), embedder, tenant=tenant)
    return Memory(provider, config)


def open_memory(path: Path, threshold: int | None = THRESHOLD, tenant: str = "a") -> Memory:
    return memory_over(make_store(path, threshold), TableEmbedder(VECTORS), tenant)


def fill(mem: Memory, tenant: str, first: int, count: int) -> None:
    items = [
        MemoryInput(
            body=f"v{i} memory number {i} of {tenant}",
            scope="project" if i % 3 == 0 else "global",
            project_id=f"{tenant}-p{i % 2}" if i % 3 == 0 else None,
        )
        for i in range(first, first + count)
    ]
    mem.for_tenant(tenant).store_many(items)


def store_of(mem: Memory) -> StoreView:
    provider = mem.provider
    assert isinstance(provider, LocalProvider)
    records, index = provider.ports.records, provider.ports.index
    assert isinstance(records, SqliteRecordStore) and isinstance(index, InProcessSearchIndex)
    return StoreView(records, index)


def ann_rows(
    store: StoreView, query: np.ndarray, tenant: str, project: str | None, k: int
) -> list[int]:
    """The ANN path itself (not the exact fallback), after a sync."""
    store.vector_search(LaneFilter(tenant, "default"), query, 1)  # sync
    assert store._ann is not None
    found = store._ann.search(store._index, query, tenant, "default", project, k)
    assert found is not None, "the ANN path was not taken"
    return [row for row, _ in found]


def exact_rows(
    store: StoreView, query: np.ndarray, tenant: str, project: str | None, k: int
) -> list[int]:
    return [row for row, _ in store._index.search(query, tenant, "default", project, k)]


def lane(store: StoreView, query: np.ndarray, tenant: str, k: int = 10) -> list[int]:
    return [h.row for h in store.vector_search(LaneFilter(tenant, "default"), query, k)]


def ann_files(db: Path) -> list[Path]:
    return sorted(Path(f"{db}.ann").glob("*.usearch"))


def sources(store: StoreView) -> dict[str, str]:
    assert store._ann is not None
    return {p["tenant"]: p["source"] for p in store._ann.describe()}
