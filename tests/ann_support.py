"""Shared by the tests of the approximate vector index (tests/storage/test_ann_*.py).

A table embedder maps ``v<i> ...`` texts to clustered vectors, so the tests know each
memory's vector; small sizes with a low ``ann_threshold`` force the ANN path.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np

from cairn import Memory, MemoryInput
from cairn.config import parse_config
from cairn.storage.base import LaneFilter
from cairn.storage.sqlite.store import SqliteStore

DIM = 32
THRESHOLD = 200


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


def open_memory(path: Path, threshold: int | None = THRESHOLD, tenant: str = "a") -> Memory:
    store = SqliteStore(path, dim=DIM, ann_threshold=threshold)
    return Memory(store, parse_config({}), TableEmbedder(VECTORS), tenant=tenant)


def fill(mem: Memory, tenant: str, first: int, count: int) -> None:
    items = [
        MemoryInput(
            body=f"v{i} memory number {i} of {tenant}",
            scope="project" if i % 3 == 0 else "global",
            project_id=f"{tenant}-p{i % 2}" if i % 3 == 0 else None,
        )
        for i in range(first, first + count)
    ]
    mem.store_many(items, tenant=tenant)


def store_of(mem: Memory) -> SqliteStore:
    store = mem.store_backend
    assert isinstance(store, SqliteStore)
    return store


def ann_rows(
    store: SqliteStore, query: np.ndarray, tenant: str, project: str | None, k: int
) -> list[int]:
    """The ANN path itself (not the exact fallback), after a sync."""
    store.vector_search(LaneFilter(tenant, "default"), query, 1)  # sync
    assert store._ann is not None
    found = store._ann.search(store._index, query, tenant, "default", project, k)
    assert found is not None, "the ANN path was not taken"
    return [row for row, _ in found]


def exact_rows(
    store: SqliteStore, query: np.ndarray, tenant: str, project: str | None, k: int
) -> list[int]:
    return [row for row, _ in store._index.search(query, tenant, "default", project, k)]


def lane(store: SqliteStore, query: np.ndarray, tenant: str, k: int = 10) -> list[int]:
    return [h.row for h in store.vector_search(LaneFilter(tenant, "default"), query, k)]


def ann_files(db: Path) -> list[Path]:
    return sorted(Path(f"{db}.ann").glob("*.usearch"))


def sources(store: SqliteStore) -> dict[str, str]:
    assert store._ann is not None
    return {p["tenant"]: p["source"] for p in store._ann.describe()}
