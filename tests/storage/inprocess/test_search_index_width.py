"""The embedded index of a store that chose its embedder after the index was made (its
first memory chose it): the index takes up the width of the first vectors it is fed, a
query of the width it had before finds nothing (never a crash), and a second width once
it holds vectors is refused in one line."""

from __future__ import annotations

from pathlib import Path

import pytest

from cairn.errors import StorageError
from cairn.storage.inprocess import InProcessSearchIndex
from cairn.storage.ports import LaneFilter
from cairn.storage.sqlite.record_store import SqliteRecordStore
from record_builders import insert, record, vec

WHERE = LaneFilter("t1", "a")


def test_the_index_takes_up_the_width_of_the_first_vectors(tmp_path: Path) -> None:
    store = SqliteRecordStore(tmp_path / "memory.db")
    index = InProcessSearchIndex(store, dim=16, graphs_beside=tmp_path / "memory.db")
    try:
        assert index.vector(WHERE, vec(1, dim=16), 5) == []  # empty: nothing either way
        (row,) = insert(store, record("01J0000000000000000000000A", "x"), vectors={
            "01J0000000000000000000000A": vec(3, dim=24),
        })  # fmt: skip
        assert index.vector(WHERE, vec(1, dim=16), 5) == []  # the old width: nothing found
        hits = index.vector(WHERE, vec(3, dim=24), 5)
        assert [h.row for h in hits] == [row] and hits[0].score == pytest.approx(1.0)
        assert index.vector_scores(WHERE, vec(3, dim=16), [row]) == {}
        assert index.vector_scores(WHERE, vec(3, dim=24), [row]) == pytest.approx({row: 1.0})
        insert(store, record("01J0000000000000000000000B", "y"), vectors={
            "01J0000000000000000000000B": vec(2, dim=32),
        })  # fmt: skip
        with pytest.raises(StorageError, match="one store holds one embedder's vectors") as err:
            index.vector(WHERE, vec(3, dim=24), 5)
        assert "\n" not in str(err.value)
    finally:
        index.close()
        store.close()


def test_vectors_of_the_width_it_was_made_for_change_nothing(tmp_path: Path) -> None:
    store = SqliteRecordStore(tmp_path / "memory.db")
    index = InProcessSearchIndex(store, dim=16)
    try:
        (row,) = insert(store, record("01J0000000000000000000000A", "x"), vectors={
            "01J0000000000000000000000A": vec(5, dim=16),
        })  # fmt: skip
        assert [h.row for h in index.vector(WHERE, vec(5, dim=16), 5)] == [row]
    finally:
        index.close()
        store.close()
