"""The approximate (HNSW) vector index: same answers as exact search, same guarantees.

Small sizes with a low ``ann_threshold`` force the ANN path; speed is measured by
``benchmarks/scale.py``, never here.
"""

from __future__ import annotations

import json
import mmap
import shutil
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path

import numpy as np
import pytest

from cairn import Memory, MemoryInput
from cairn.config import parse_config
from cairn.storage.ann_index import AnnIndexes, _vector_section, load_usearch
from cairn.storage.ports import LaneFilter
from cairn.storage.sqlite.store import SqliteStore
from cairn.storage.vector_index import ExactVectorIndex

if load_usearch() is None:  # imports onnxruntime first: the other order crashes
    pytest.skip("usearch is not installed", allow_module_level=True)

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
    mem.forget(victims[10].id, tenant="a")
    mem.correct(victims[20].id, "v1999 corrected text", tenant="a")
    mem.forget(victims[30].id, permanent=True, tenant="a")
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


@pytest.mark.parametrize("dtype", ["f32", "i8"])
def test_permanent_forget_leaves_no_bytes_in_the_ann_file(db: Path, dtype: str) -> None:
    distinctive = np.linspace(-1.0, 1.0, DIM, dtype=np.float32) ** 3 + 0.123
    distinctive /= np.linalg.norm(distinctive)
    table = VECTORS.copy()
    table[1500] = distinctive
    store = SqliteStore(db, dim=DIM, ann_threshold=THRESHOLD)
    store._ann = AnnIndexes.open(db, DIM, THRESHOLD, dtype=dtype)
    mem = Memory(store, parse_config({}), TableEmbedder(table), tenant="a")
    fill(mem, "a", 1200, 400)  # holds v1500, the distinctive one
    assert store._ann is not None
    lane(store, distinctive, "a")  # builds and writes the graph
    part = next(iter(store._ann._parts.values()))
    row = lane(store, distinctive, "a", 1)[0]
    stored = np.vstack(part.index.get(np.asarray([row], np.uint64), dtype=part.index.dtype))
    needles = [stored.tobytes()] + ([distinctive.tobytes()] if dtype == "f32" else [])

    def file_bytes() -> bytes:
        files = ann_files(db)
        assert files
        return b"".join(p.read_bytes() for p in files)

    assert all(n in file_bytes() for n in needles)  # the check can fail
    # Other removals first: freed slots that a later add could reuse instead of this one.
    for i in (1210, 1220):
        other = lane(store, VECTORS[i], "a", 1)[0]
        mem.forget(store.records_by_rows([other])[other].id)
    lane(store, distinctive, "a")
    record = store.records_by_rows([row])[row]
    mem.forget(record.id, permanent=True)
    assert row not in lane(store, distinctive, "a", 50)  # the sync scrubs and rewrites
    data = file_bytes()
    assert not any(n in data for n in needles)
    assert len(ann_files(db)) == 1  # older files, which held it, are gone
    mem.close()


def test_a_purge_while_closed_is_scrubbed_from_the_file_on_open(db: Path) -> None:
    distinctive = np.full(DIM, 0.25, dtype=np.float32)
    distinctive[::3] = -0.5
    distinctive /= np.linalg.norm(distinctive)
    table = VECTORS.copy()
    table[1300] = distinctive
    store = SqliteStore(db, dim=DIM, ann_threshold=THRESHOLD)
    store._ann = AnnIndexes.open(db, DIM, THRESHOLD, dtype="f32")
    mem = Memory(store, parse_config({}), TableEmbedder(table), tenant="a")
    fill(mem, "a", 1200, 300)
    row = lane(store, distinctive, "a", 1)[0]
    record_id = store.records_by_rows([row])[row].id
    mem.close()
    # Another process without an ANN purges it: the file still holds the vector.
    other = open_memory(db, threshold=None)
    other.forget(record_id, permanent=True)
    other.close()
    assert distinctive.tobytes() in b"".join(p.read_bytes() for p in ann_files(db))
    again = SqliteStore(db, dim=DIM, ann_threshold=THRESHOLD)
    again._ann = AnnIndexes.open(db, DIM, THRESHOLD, dtype="f32")
    assert row not in lane(again, distinctive, "a", 50)
    assert sources(again) == {"a": "loaded"}
    assert distinctive.tobytes() not in b"".join(p.read_bytes() for p in ann_files(db))
    again.close()


def test_two_stores_on_one_file_stay_consistent(db: Path) -> None:
    first = open_memory(db)
    fill(first, "a", 0, 300)
    second = open_memory(db)
    s1, s2 = store_of(first), store_of(second)
    assert lane(s1, VECTORS[5], "a", 1) == lane(s2, VECTORS[5], "a", 1)
    # A write by one is found by the other at once (pending rows are searched exactly).
    fill(second, "a", 300, 40)
    (top,) = lane(s1, VECTORS[320], "a", 1)
    assert s1.records_by_rows([top])[top].body.startswith("v320 ")
    # A forget by one disappears from the other.
    top = lane(s2, VECTORS[7], "a", 1)[0]
    first.forget(s2.records_by_rows([top])[top].id)
    assert top not in lane(s2, VECTORS[7], "a", 100)
    assert top not in lane(s1, VECTORS[7], "a", 100)
    # A third store loads the written graph and repairs what it lacks. All three hold the
    # same rows (their exact indexes agree) and their graphs answer like exact search.
    third = SqliteStore(db, dim=DIM, ann_threshold=THRESHOLD)
    recalls = []
    for q in clustered(10, seed=3):
        truth = exact_rows(s1, q, "a", None, 10)
        for store in (s1, s2, third):
            got = ann_rows(store, q, "a", None, 10)
            assert exact_rows(store, q, "a", None, 10) == truth
            recalls.append(len(set(got) & set(truth)) / 10)
    assert float(np.mean(recalls)) >= 0.9
    assert sources(third) == {"a": "loaded"}
    third.close()
    first.close()
    second.close()


def _sidecar(db: Path) -> Path:
    (found,) = Path(f"{db}.ann").glob("*.json")
    return found


@pytest.mark.parametrize(
    "damage",
    ["connectivity", "models", "future_seq", "truncated", "other_database"],
)
def test_a_sidecar_or_file_that_does_not_match_is_rebuilt(
    db: Path, tmp_path: Path, damage: str
) -> None:
    mem = open_memory(db)
    fill(mem, "a", 0, 300)
    lane(store_of(mem), VECTORS[42], "a")  # builds and writes the graph
    mem.close()
    sidecar = _sidecar(db)
    meta = json.loads(sidecar.read_text())
    if damage == "connectivity":
        meta["connectivity"] = 99
    elif damage == "models":
        meta["models"] = ["another-model"]
    elif damage == "future_seq":
        meta["change_seq"] += 1000
    elif damage == "truncated":
        data = Path(f"{db}.ann") / meta["data"]
        data.write_bytes(data.read_bytes()[:100])
    sidecar.write_text(json.dumps(meta))
    if damage == "other_database":
        # Same path, same row ids, other vectors: the stored vectors do not match.
        ann_dir = Path(f"{db}.ann")
        shutil.move(ann_dir, tmp_path / "kept")
        for p in db.parent.glob("memory.db*"):
            p.unlink()
        other = open_memory(db, threshold=None)
        fill(other, "a", 1000, 300)
        other.close()
        shutil.rmtree(ann_dir, ignore_errors=True)
        shutil.move(tmp_path / "kept", ann_dir)
    exact = _exact_only(db)
    store = SqliteStore(db, dim=DIM, ann_threshold=THRESHOLD)
    recalls = []
    for query in clustered(10, seed=5):
        truth = [row for row, _ in exact.search(query, "a", "default", None, 10)]
        recalls.append(len(set(ann_rows(store, query, "a", None, 10)) & set(truth)) / 10)
    assert float(np.mean(recalls)) >= 0.9
    assert sources(store) == {"a": "built"}
    assert json.loads(_sidecar(db).read_text())["connectivity"] == 16
    store.close()


def _exact_only(db: Path) -> ExactVectorIndex:
    store = SqliteStore(db, dim=DIM, ann_threshold=None)
    store.vector_search(LaneFilter("a", "default"), VECTORS[0], 1)
    return store._index


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


def test_many_purges_at_once_leave_no_bytes(db: Path) -> None:
    store = SqliteStore(db, dim=DIM, ann_threshold=THRESHOLD)
    store._ann = AnnIndexes.open(db, DIM, THRESHOLD, dtype="f32")
    mem = Memory(store, parse_config({}), TableEmbedder(VECTORS), tenant="a")
    fill(mem, "a", 0, 400)
    lane(store, VECTORS[0], "a")
    (data,) = ann_files(db)
    with open(data, "rb") as handle, mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as m:
        section = _vector_section(m, DIM * 4)
        assert section is not None  # the layout the one-pass scrub relies on
        del section
    victims = [r for r in mem.list(limit=400) if int(r.body.split()[0][1:]) % 10 == 0]
    assert len(victims) == 40
    for record in victims:
        mem.forget(record.id, permanent=True)
    found = store.records_by_rows(lane(store, VECTORS[10], "a", 100))  # syncs
    assert not {r.body for r in found.values()} & {v.body for v in victims}
    files = b"".join(p.read_bytes() for p in ann_files(db))
    for i in range(0, 400, 10):
        assert VECTORS[i].tobytes() not in files
    assert VECTORS[11].tobytes() in files  # the rest is intact
    mem.close()


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
