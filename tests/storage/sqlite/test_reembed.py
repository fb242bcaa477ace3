"""The swap of ``cairn reembed`` on a real SQLite file: every vector and the model id in
one transaction, rows written meanwhile embedded inside it, and a failure changing nothing."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import numpy as np
import pytest

from cairn.storage.sqlite.record_store import SqliteRecordStore
from cairn.storage.sqlite.reembed import recorded_embedder, swap, texts_to_embed
from record_builders import insert, record, vec


def _fake_model(texts: list[str] | tuple[str, ...]) -> np.ndarray:
    """A deterministic 4-d 'model': enough to tell its vectors from the old 8-d ones."""
    out = np.array([[len(t), 1.0, 0.0, 0.0] for t in texts], dtype=np.float32)
    return out / np.linalg.norm(out, axis=1, keepdims=True)


def _vectors(path: Path) -> dict[int, tuple[str, int]]:
    with sqlite3.connect(path) as conn:
        rows = conn.execute("SELECT row, model, dim FROM vectors").fetchall()
    return {r[0]: (r[1], r[2]) for r in rows}


def test_every_vector_and_the_model_id_change_together(tmp_path: Path) -> None:
    path = tmp_path / "memory.db"
    store = SqliteRecordStore(path)
    insert(store, record("a", "数据库迁移用 goose", title="迁移"), vectors={"a": vec(1)})
    insert(store, record("b", "周五下午不要发版"), vectors={"b": vec(2)})
    rows, texts = texts_to_embed(path)
    assert texts == ["迁移: 数据库迁移用 goose", "周五下午不要发版"]
    assert recorded_embedder(path) == "test-model"
    # Written after the texts were read: embedded inside the swap.
    insert(store, record("c", "部署之前先在 staging 验证"), vectors={"c": vec(3)})
    computed = dict(zip(rows, _fake_model(texts), strict=True))
    done = swap(path, "fake-4", computed, _fake_model)
    assert (done.previous, done.rows, done.late) == ("test-model", 3, 1)
    assert set(_vectors(path).values()) == {("fake-4", 4)}
    assert recorded_embedder(path) == "fake-4"
    store.close()


def test_a_failure_inside_the_swap_leaves_the_old_vectors(tmp_path: Path) -> None:
    path = tmp_path / "memory.db"
    store = SqliteRecordStore(path)
    insert(store, record("a", "数据库迁移用 goose"), vectors={"a": vec(1)})
    insert(store, record("b", "周五下午不要发版"), vectors={"b": vec(2)})
    store.close()
    rows, texts = texts_to_embed(path)

    def broken(texts: object) -> np.ndarray:
        raise RuntimeError("the model died")

    with pytest.raises(RuntimeError):
        swap(path, "fake-4", {rows[0]: _fake_model(texts[:1])[0]}, broken)
    assert set(_vectors(path).values()) == {("test-model", 8)}
    assert recorded_embedder(path) == "test-model"


def test_no_file_is_no_model(tmp_path: Path) -> None:
    assert recorded_embedder(tmp_path / "none.db") is None
