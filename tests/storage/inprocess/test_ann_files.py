"""The files of the approximate vector index: persisted, checked on load, scrubbed.

Every graph is written beside the database; a file that does not match the database is
rebuilt, a purged vector leaves no bytes in any file, and several stores on one database
agree. The graph itself: test_ann_graph.py.
"""

from __future__ import annotations

import json
import mmap
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from ann_support import (
    DIM,
    THRESHOLD,
    VECTORS,
    TableEmbedder,
    ann_files,
    ann_rows,
    clustered,
    exact_rows,
    fill,
    lane,
    make_store,
    memory_over,
    open_memory,
    sources,
    store_of,
)
from cairn.storage.inprocess.ann_files import AnnFiles, GraphFormat, compare, vector_section
from cairn.storage.inprocess.ann_graph import AnnIndexes, load_usearch
from cairn.storage.inprocess.vector_index import Block, ExactVectorIndex
from cairn.storage.ports import LaneFilter

if load_usearch() is None:  # imports onnxruntime first: the other order crashes
    pytest.skip("usearch is not installed", allow_module_level=True)


@pytest.fixture
def db(tmp_path: Path) -> Iterator[Path]:
    path = tmp_path / "memory.db"
    yield path


@pytest.mark.parametrize("dtype", ["f32", "i8"])
def test_permanent_forget_leaves_no_bytes_in_the_ann_file(db: Path, dtype: str) -> None:
    distinctive = np.linspace(-1.0, 1.0, DIM, dtype=np.float32) ** 3 + 0.123
    distinctive /= np.linalg.norm(distinctive)
    table = VECTORS.copy()
    table[1500] = distinctive
    store = make_store(db, THRESHOLD)
    store._ann = AnnIndexes.open(db, DIM, THRESHOLD, dtype=dtype)
    mem = memory_over(store, TableEmbedder(table))
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
    store = make_store(db, THRESHOLD)
    store._ann = AnnIndexes.open(db, DIM, THRESHOLD, dtype="f32")
    mem = memory_over(store, TableEmbedder(table))
    fill(mem, "a", 1200, 300)
    row = lane(store, distinctive, "a", 1)[0]
    record_id = store.records_by_rows([row])[row].id
    mem.close()
    # Another process without an ANN purges it: the file still holds the vector.
    other = open_memory(db, threshold=None)
    other.forget(record_id, permanent=True)
    other.close()
    assert distinctive.tobytes() in b"".join(p.read_bytes() for p in ann_files(db))
    again = make_store(db, THRESHOLD)
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
    third = make_store(db, THRESHOLD)
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
    store = make_store(db, THRESHOLD)
    recalls = []
    for query in clustered(10, seed=5):
        truth = [row for row, _ in exact.search(query, "a", "default", None, 10)]
        recalls.append(len(set(ann_rows(store, query, "a", None, 10)) & set(truth)) / 10)
    assert float(np.mean(recalls)) >= 0.9
    assert sources(store) == {"a": "built"}
    assert json.loads(_sidecar(db).read_text())["connectivity"] == 16
    store.close()


def _exact_only(db: Path) -> ExactVectorIndex:
    store = make_store(db, None)
    store.vector_search(LaneFilter("a", "default"), VECTORS[0], 1)
    return store._index


def test_many_purges_at_once_leave_no_bytes(db: Path) -> None:
    store = make_store(db, THRESHOLD)
    store._ann = AnnIndexes.open(db, DIM, THRESHOLD, dtype="f32")
    mem = memory_over(store, TableEmbedder(VECTORS))
    fill(mem, "a", 0, 400)
    lane(store, VECTORS[0], "a")
    (data,) = ann_files(db)
    with open(data, "rb") as handle, mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as m:
        section = vector_section(m, DIM * 4)
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


def _graph(rows: list[int], vectors: np.ndarray) -> Any:
    usearch = load_usearch()
    assert usearch is not None
    index = usearch.Index(ndim=DIM, metric="cos", dtype="f32", connectivity=16)
    index.add(np.asarray(rows, dtype=np.uint64), vectors)
    return index


def _block(rows: list[int]) -> tuple[ExactVectorIndex, Block]:
    exact = ExactVectorIndex(DIM)
    n = len(rows)
    exact.upsert_many(rows, ["t"] * n, ["x"] * n, [None] * n, [True] * n, VECTORS[:n], seqs=[1] * n)
    block = exact.block("t", "x")
    assert block is not None
    return exact, block


def test_compare_names_every_kind_of_difference() -> None:
    rows = list(range(1, 101))
    exact, block = _block(rows)
    exact.upsert(7, "t", "x", None, False, None)  # superseded since the file was written
    exact.upsert_many([9], ["t"], ["x"], [None], [True], -VECTORS[8:9], seqs=[5])  # new vector
    # The file: rows 1..99 with their old vectors, and row 500, which has no vector now.
    graph = _graph([*rows[:99], 500], np.vstack([VECTORS[:99], VECTORS[1999:]]))
    found = compare(exact, block, graph, saved_seq=1)
    assert found.scrub == [500, 9]  # no vector, or another one: its bytes must go
    assert found.unlink == [7]
    assert sorted(found.pending) == [9, 100]  # re-added with the new vector; never added
    assert (found.count, found.live) == (4, 99)
    assert compare(exact, block, _graph(rows, VECTORS[:100]), saved_seq=1).scrub == [9]


def test_an_older_state_never_replaces_a_newer_file(tmp_path: Path) -> None:
    rows = list(range(1, 101))
    _, block = _block(rows)

    def new_index() -> Any:
        return _graph([], np.empty((0, DIM), dtype=np.float32))

    def no_rebuild() -> Any:
        raise AssertionError("nothing to scrub: no rebuild")

    files = AnnFiles(tmp_path / "m.db.ann", GraphFormat(DIM, "f32", 16), new_index, "test")
    assert files.save(block, _graph(rows, VECTORS[:100]), 10, [], no_rebuild).done
    (sidecar,) = files.directory.glob("*.json")
    written = json.loads(sidecar.read_text())
    assert (written["change_seq"], written["vectors"]) == (10, 100)
    # A process that is behind writes its smaller, older graph: the newer file stays.
    assert files.save(block, _graph(rows[:50], VECTORS[:50]), 5, [], no_rebuild).done
    assert json.loads(sidecar.read_text()) == written
    assert [p.name for p in files.directory.glob("*.usearch")] == [written["data"]]
    loaded = files.load(block, 10)
    assert loaded is not None and (len(loaded.index), loaded.saved_seq) == (100, 10)
    assert files.load(block, 9) is None  # the file reflects changes this process lacks
    files.remove("t", "x")
    assert not [*files.directory.glob("*.usearch"), *files.directory.glob("*.json")]
