"""``InProcessSearchIndex.holding``: a recall's calls read the index at one feed position,
caught up once when the hold begins; a write made meanwhile (here through a second store
on the same file, as another process would) shows at the next hold, and a hold whose
catch-up fails leaves each call to catch up (and fail) on its own."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from cairn.errors import StorageError
from cairn.storage.inprocess import InProcessSearchIndex
from cairn.storage.ports import LaneFilter
from cairn.storage.sqlite.record_store import SqliteRecordStore
from record_builders import insert, record, vec

WHERE = LaneFilter("t1", "a")
A, B = "01J0000000000000000000000A", "01J0000000000000000000000B"


class CountingStore(SqliteRecordStore):
    def __init__(self, path: Path) -> None:
        super().__init__(path)
        self.head_reads = 0
        self.fail = False

    def feed_position(self) -> Any:
        self.head_reads += 1
        if self.fail:
            raise StorageError("the feed cannot be read")
        return super().feed_position()


Opened = tuple[CountingStore, SqliteRecordStore, InProcessSearchIndex]


@pytest.fixture
def opened(tmp_path: Path) -> Iterator[Opened]:
    """The counting store, a second store on the same file (the writes of another
    process) and the index over the first; closed after the test."""
    path = tmp_path / "memory.db"
    store, writer = CountingStore(path), SqliteRecordStore(path)
    index = InProcessSearchIndex(store, dim=8)
    try:
        yield store, writer, index
    finally:
        index.close()
        writer.close()
        store.close()


def test_a_hold_reads_the_head_once_and_sees_one_position(opened: Opened) -> None:
    store, writer, index = opened
    (row_a,) = insert(writer, record(A, "alpha beta"), vectors={A: vec(1)})
    with index.holding():
        reads = store.head_reads
        assert [h.row for h in index.keyword(WHERE, ["alpha"], 5)] == [row_a]
        (row_b,) = insert(writer, record(B, "alpha gamma"), vectors={B: vec(1, 2)})
        assert [h.row for h in index.vector(WHERE, vec(1), 5)] == [row_a]
        assert [h.row for h in index.keyword(WHERE, ["alpha"], 5)] == [row_a]
        assert index.term_counts(WHERE, ["alpha"]).documents == 1
        with index.holding():  # nested: still the same position
            assert index.vector_scores(WHERE, vec(1), [row_a, row_b]).keys() == {row_a}
        assert store.head_reads == reads  # caught up once, when the hold began
    assert sorted(h.row for h in index.keyword(WHERE, ["alpha"], 5)) == [row_a, row_b]
    with index.holding():
        assert len(index.vector(WHERE, vec(1), 5)) == 2


def test_a_hold_is_per_thread(opened: Opened) -> None:
    _, writer, index = opened
    (row_a,) = insert(writer, record(A, "alpha"), vectors={A: vec(1)})
    seen: list[int] = []
    with index.holding():
        assert [h.row for h in index.keyword(WHERE, ["alpha"], 5)] == [row_a]
        (row_b,) = insert(writer, record(B, "alpha"), vectors={B: vec(1)})
        other = threading.Thread(
            target=lambda: seen.extend(h.row for h in index.keyword(WHERE, ["alpha"], 5))
        )
        other.start()
        other.join()
    assert sorted(seen) == [row_a, row_b]  # the other thread held nothing: caught up


def test_a_hold_whose_catch_up_fails_holds_nothing(tmp_path: Path) -> None:
    store = CountingStore(tmp_path / "memory.db")
    index = InProcessSearchIndex(store, dim=8)
    try:
        insert(store, record(A, "alpha"), vectors={A: vec(1)})
        store.fail = True
        with index.holding():
            with pytest.raises(StorageError, match="the feed cannot be read"):
                index.keyword(WHERE, ["alpha"], 5)
            store.fail = False
            assert len(index.keyword(WHERE, ["alpha"], 5)) == 1  # each call on its own
    finally:
        index.close()
        store.close()
