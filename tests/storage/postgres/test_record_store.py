"""What the PostgreSQL record store adds to the contract: several writers at once, clear
errors, the embedder guard, read-your-writes inside a transaction."""

from __future__ import annotations

import threading
from collections.abc import Iterator

import pytest

from cairn.errors import InvalidInput, StorageError
from cairn.model import Event
from cairn.storage.ports import FeedPosition, NewRow, RecordQuery
from cairn.storage.postgres import PostgresRecordStore
from pg_support import fresh_schema

from .helpers import insert, record, vec


@pytest.fixture
def place() -> Iterator[tuple[str, str]]:
    with fresh_schema("rs") as made:
        yield made


def test_writers_in_several_processes_lose_nothing_and_the_feed_skips_nothing(
    place: tuple[str, str],
) -> None:
    url, schema = place
    stores = [PostgresRecordStore(url, schema=schema, max_connections=1) for _ in range(4)]
    follower = stores[0]
    seen: list[int] = []
    position = follower.feed_position()
    errors: list[BaseException] = []

    def write(n: int) -> None:
        try:
            for i in range(15):
                with stores[n].transaction() as tx:
                    event = Event(f"E{n}-{i}", "memory.stored", "t1", "a", {}, "x")
                    assert tx.append_events([event, event]) == [True, False]
                    tx.insert_records([NewRow(record(f"W{n}-{i}", f"writer {n} item {i}"))])
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=write, args=(n,)) for n in range(4)]
    for t in threads:
        t.start()
    while any(t.is_alive() for t in threads):  # a follower reading while they write
        head = follower.feed_position()
        seen += [r for b in follower.changes_since(position) for r in b.rows]
        position = head
        threads[0].join(0.01)
    seen += [r for b in follower.changes_since(position) for r in b.rows]
    assert errors == []
    assert len(follower.list_records(RecordQuery("t1", "a"))) == 60
    assert len(list(follower.events("t1", "a"))) == 60
    # Every row reaches the follower (a row may come twice when it committed between the
    # head read and the scan: following is idempotent; skipping one would not be).
    every = {r for b in follower.changes_since(FeedPosition(-1, -1)) for r in b.rows}
    assert set(seen) == every and len(every) == 60
    assert follower.feed_position().seq == 60
    for store in stores:
        store.close()


def test_a_transaction_reads_its_own_writes_through_the_store(place: tuple[str, str]) -> None:
    url, schema = place
    store = PostgresRecordStore(url, schema=schema, max_connections=1)
    with store.transaction() as tx:
        tx.insert_records([NewRow(record("R1", "not committed yet"))])
        # One pooled connection, already in use by the transaction: no deadlock, and the
        # row is visible as it is on SQLite's single connection.
        assert store.get("t1", "a", "R1") is not None
    assert store.get("t1", "a", "R1") is not None
    store.close()


def test_one_store_holds_the_vectors_of_one_embedder(place: tuple[str, str]) -> None:
    url, schema = place
    store = PostgresRecordStore(url, schema=schema)
    insert(store, record("R1", "one"), vectors={"R1": vec(1)})
    refused = pytest.raises(InvalidInput, match="holds vectors of the embedder 'test-model'")
    with refused, store.transaction() as tx:
        tx.insert_records([NewRow(record("R2", "two"), vec(2), "other-model")])
    assert store.get("t1", "a", "R2") is None
    store.close()


def test_an_unreachable_server_is_one_clear_error() -> None:
    with pytest.raises(
        StorageError, match=r"^cannot connect to postgresql://nobody@127\.0\.0\.1:1/x"
    ):
        PostgresRecordStore("postgresql://nobody:secret@127.0.0.1:1/x?connect_timeout=2")
    try:
        PostgresRecordStore("postgresql://nobody:secret@127.0.0.1:1/x?connect_timeout=2")
    except StorageError as exc:
        assert "secret" not in str(exc) and "\n" not in str(exc)


def test_a_bad_schema_name_is_refused_before_connecting() -> None:
    with pytest.raises(InvalidInput, match=r"invalid memory\.store\.schema"):
        PostgresRecordStore("postgresql://127.0.0.1:1/x", schema="Robert'); DROP TABLE")


def test_finishing_a_purge_vacuums_the_tables_it_rewrote(place: tuple[str, str]) -> None:
    url, schema = place
    store = PostgresRecordStore(url, schema=schema)
    insert(store, record("S", "the secret body"), vectors={"S": vec(3)})
    with store.transaction() as tx:
        tx.purge("t1", "a", "S", "[gone]")
    assert store.finish_purges(store.pending_purges()) == []
    assert store.pending_purges() == []
    with store.db.session(None, every_tenant=True) as s:
        dead = s.conn.execute(
            "SELECT coalesce(sum(n_dead_tup), 0) FROM pg_stat_user_tables"
            " WHERE schemaname = %s AND relname IN ('records', 'record_terms', 'postings')",
            (schema,),
        ).fetchone()
    assert dead == (0,)
    (batch,) = list(store.changes_since(FeedPosition(-1, -1)))
    assert batch.term_keys == [None] and batch.vectors == [None]
    store.close()
