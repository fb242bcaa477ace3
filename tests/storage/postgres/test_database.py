"""The database layer under faults a real PostgreSQL produces: a backend terminated under a
recall's lane, a statement that aborts the read transaction, pooled connections the server
dropped, errors worded by what the work was for, timeouts taken from the config."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest

from cairn import Memory
from cairn.adapters.hashing import HashingEmbedder
from cairn.errors import StorageError, StorageUnavailable
from cairn.provider import contract as c
from cairn.storage.postgres import PostgresRecordStore
from cairn.storage.postgres.database import lost_connection
from pg_support import fresh_schema


@pytest.fixture
def mem(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Memory]:
    monkeypatch.setenv("CAIRN_HOME", str(tmp_path / "home"))
    with fresh_schema("db") as (url, schema):
        config = {"memory": {"store": {"url": url, "postgresSchema": schema, "poolSize": 3}}}
        memory = Memory.open(config=config, embedder=HashingEmbedder())
        for n, river in enumerate(("Danube", "Rhine", "Loire", "Elbe")):
            memory.remember(f"The {river} river flooded the valley in spring", event_id=f"k{n}")
        yield memory
        memory.close()


def _index(mem: Memory) -> Any:
    return mem.provider.ports.index  # type: ignore[attr-defined]


def _kill_own_backend(index: Any, tenant: str) -> None:
    """What a restart or an administrator does to the connection a lane runs on."""
    with index._db.session(tenant) as s:
        s.conn.execute("SELECT pg_terminate_backend(pg_backend_pid())")


def test_a_lane_whose_connection_is_dropped_leaves_the_other_lanes_answering(
    mem: Memory, monkeypatch: pytest.MonkeyPatch
) -> None:
    index = _index(mem)
    searched = index.vector

    def vector_on_a_dropped_connection(where: Any, query: Any, limit: int) -> Any:
        _kill_own_backend(index, where.tenant)
        return searched(where, query, limit)

    monkeypatch.setattr(index, "vector", vector_on_a_dropped_connection)
    answer = mem.provider.query(c.RecallQuery(query="Danube river flooded"))
    assert isinstance(answer, c.RecallResponse)
    assert "vector" in answer.failures
    assert answer.memories, "the keyword lane answers on a fresh connection"
    assert "Danube" in answer.memories[0].record.body
    monkeypatch.setattr(index, "vector", searched)
    again = mem.provider.query(c.RecallQuery(query="Danube river flooded"))
    assert isinstance(again, c.RecallResponse) and not again.failures


def test_a_lane_whose_statement_fails_leaves_the_read_transaction_usable(
    mem: Memory, monkeypatch: pytest.MonkeyPatch
) -> None:
    index = _index(mem)

    def vector_that_fails(where: Any, query: Any, limit: int) -> Any:
        with index._db.session(where.tenant) as s:
            s.conn.execute("SELECT 1 / 0")  # aborts the transaction the recall reads in

    monkeypatch.setattr(index, "vector", vector_that_fails)
    answer = mem.provider.query(c.RecallQuery(query="Rhine river flooded"))
    assert isinstance(answer, c.RecallResponse)
    assert "division by zero" in answer.failures["vector"]
    assert answer.memories and "Rhine" in answer.memories[0].record.body


def test_pooled_connections_the_server_dropped_are_replaced_at_checkout(mem: Memory) -> None:
    pool = mem.provider.ports.records.db._pool  # type: ignore[attr-defined]
    held = [pool.getconn() for _ in range(3)]  # every connection the pool may have
    pids = [conn.info.backend_pid for conn in held]
    for conn in held:
        pool.putconn(conn)
    with psycopg.connect(mem.provider.ports.records.db.url, autocommit=True) as admin:  # type: ignore[attr-defined]
        admin.execute("SELECT pg_terminate_backend(pid) FROM unnest(%s::int[]) AS pid", (pids,))
    for _ in range(6):  # every pooled connection is dead: each is checked, then replaced
        assert mem.recall("Loire").memories
    mem.remember("The Seine river is in Paris", event_id="after-drop")


def test_a_write_that_fails_says_writing(mem: Memory) -> None:
    records = mem.provider.ports.records  # type: ignore[attr-defined]
    records.db._pool.close()  # nothing can be done on it any more
    with pytest.raises(StorageError, match=r"PostgreSQL \(writing postgresql://"):
        mem.remember("The Po river crosses Italy", event_id="closed")
    with pytest.raises(StorageError, match=r"PostgreSQL \(reading postgresql://"):
        mem.recall("Po")


def test_a_pool_that_has_no_connection_in_time_is_unavailable_within_the_timeout() -> None:
    with fresh_schema("db") as (url, schema):
        store = PostgresRecordStore(url, schema=schema, max_connections=1, pool_timeout=0.5)
        try:
            with store.db.session("t") as held:  # the one connection, held
                held.conn.execute("SELECT 1")
                with pytest.raises(StorageUnavailable) as refused:
                    store.get("t", "a", "R1")
            assert not refused.value.retryable  # waiting again would only wait again
            assert store.health()["pool"]["max"] == 1
            assert store.health()["versions"]["pgvector"] != "unknown"
        finally:
            store.close()


def test_what_counts_as_a_lost_connection() -> None:
    assert lost_connection(psycopg.errors.AdminShutdown("terminating connection"))
    assert lost_connection(psycopg.OperationalError("the connection is closed"))
    assert not lost_connection(psycopg.errors.LockNotAvailable("lock timeout"))
    assert not lost_connection(psycopg.errors.DivisionByZero("division by zero"))
