"""Every storage pair passes the same contract: record store + search index.

Pairs: the embedded default (SQLite file + in-process index), the in-memory twins, the
PostgreSQL pair (record store + in-database index, on a real server with pgvector, one
schema per test), and the PostgreSQL record store followed through its change feed by the
in-process index (as any follower of the feed would be).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from cairn.model import Event, Record
from cairn.storage.inprocess import InProcessSearchIndex
from cairn.storage.ports import RecordStore, SearchIndex
from cairn.storage.sqlite.record_store import SqliteRecordStore
from pg_support import fresh_schema
from record_builders import DIM, insert, record, vec
from twins.record_store import MemoryRecordStore
from twins.search_index import MemorySearchIndex

__all__ = ["Pair", "event", "insert", "record", "vec"]  # the suite's builders


@dataclass
class Pair:
    name: str
    records: RecordStore
    index: SearchIndex
    # Another index over the same records, as a second process would have.
    second_index: Callable[[], SearchIndex]
    cleanup: ExitStack = field(default_factory=ExitStack)


def _rank(record: Record) -> float:
    return float(record.used_count) - float(record.failure_count)


def _sqlite(tmp: Path) -> Pair:
    store = SqliteRecordStore(tmp / "memory.db", rank_hint=_rank)
    return Pair(
        "sqlite",
        store,
        InProcessSearchIndex(store, dim=DIM, graphs_beside=None),
        lambda: InProcessSearchIndex(SqliteRecordStore(tmp / "memory.db"), dim=DIM),
    )


def _memory(tmp: Path) -> Pair:
    store = MemoryRecordStore(rank_hint=_rank)
    return Pair("memory", store, MemorySearchIndex(store), lambda: MemorySearchIndex(store))


def _postgres_pair(follow_feed: bool) -> Callable[[Path], Pair]:
    def make(tmp: Path) -> Pair:
        cleanup = ExitStack()
        url, schema = cleanup.enter_context(fresh_schema())  # skips if no server can start
        from cairn.storage.postgres import PostgresRecordStore, PostgresSearchIndex

        # Stores close before their schema is dropped (callbacks run last-in, first-out).
        store = PostgresRecordStore(url, schema=schema, rank_hint=_rank, max_connections=2)
        cleanup.callback(store.close)

        def index_over(records: PostgresRecordStore) -> SearchIndex:
            if follow_feed:
                return InProcessSearchIndex(records, dim=DIM)
            return PostgresSearchIndex(records, dim=DIM)

        def second() -> SearchIndex:
            other = PostgresRecordStore(url, schema=schema, max_connections=2)
            cleanup.callback(other.close)
            return index_over(other)

        name = "postgres+inprocess" if follow_feed else "postgres"
        return Pair(name, store, index_over(store), second, cleanup)

    return make


PAIRS: dict[str, Callable[[Path], Pair]] = {
    "sqlite": _sqlite,
    "memory": _memory,
    "postgres": _postgres_pair(follow_feed=False),
    "postgres+inprocess": _postgres_pair(follow_feed=True),
}


@pytest.fixture(params=sorted(PAIRS))
def pair(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Pair]:
    made = PAIRS[request.param](tmp_path)
    with made.cleanup:
        yield made
        made.index.close()
        made.records.close()


def event(event_id: str, *, tenant: str = "t1", agent: str = "a", **payload: Any) -> Event:
    return Event(event_id, "memory.stored", tenant, agent, dict(payload), "2026-01-01T00:00:00Z")
