"""The PostgreSQL pair's fast paths keep their meaning: a recall's reads in one
transaction, a large partition's own graph built off the request path, integer arrays in
binary form."""

from __future__ import annotations

import time
from collections.abc import Iterator

import numpy as np
import pytest

from cairn.storage.ports import LaneFilter
from cairn.storage.postgres import PostgresRecordStore, PostgresSearchIndex
from cairn.storage.postgres.arrays import Int4Array, Int8Array
from cairn.storage.postgres.graphs import raise_build_memory
from pg_support import fresh_schema

from .helpers import DIM, insert, record


@pytest.fixture
def pg() -> Iterator[PostgresRecordStore]:
    with fresh_schema("perf") as (url, schema):
        store = PostgresRecordStore(url, schema=schema, max_connections=3)
        yield store
        store.close()


def backend_and_transaction(store: PostgresRecordStore, tenant: str) -> tuple[int, int, str]:
    with store.db.session(tenant) as s:
        found = s.conn.execute(
            "SELECT pg_backend_pid(), txid_current(), current_setting('cairn.tenant', true)"
        ).fetchone()
    assert found is not None
    return int(found[0]), int(found[1]), str(found[2])


def test_reads_inside_reading_share_one_transaction_scoped_to_the_tenant(
    pg: PostgresRecordStore,
) -> None:
    insert(pg, record("A", "alpha"), record("B", "beta", tenant="t2"))
    with pg.reading("t1"):
        first = backend_and_transaction(pg, "t1")
        second = backend_and_transaction(pg, "t1")
        assert first == second and first[2] == "t1"
        # The wall holds inside it: the other tenant's rows stay invisible.
        with pg.db.session("t1") as s:
            assert s.conn.execute("SELECT count(*) FROM records").fetchone() == (1,)
    outside = [backend_and_transaction(pg, "t1") for _ in range(2)]
    assert outside[0][1] != outside[1][1]  # a transaction each, as before


def test_a_large_partition_gets_its_graph_off_the_request_path(pg: PostgresRecordStore) -> None:
    rng = np.random.default_rng(5)
    vectors = rng.standard_normal((60, DIM)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    items = [record(f"M{i}", f"memory {i}") for i in range(60)]
    insert(pg, *items, vectors={f"M{i}": vectors[i] for i in range(60)})
    index = PostgresSearchIndex(pg, dim=DIM, ann_threshold=50)
    exact = PostgresSearchIndex(pg, dim=DIM, ann_threshold=None)
    where = LaneFilter("t1", "a")
    first = index.vector(where, vectors[0], 10)  # answered exactly; a build is asked for
    assert [h.row for h in first] == [h.row for h in exact.vector(where, vectors[0], 10)]
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        index.graphs.forget()  # look again now, not after the recheck interval
        with pg.db.session("t1") as s:
            if index.uses_graph(where, DIM, s):
                break
        time.sleep(0.2)
    with pg.db.session("t1") as s:
        assert index.uses_graph(where, DIM, s)
    walked = index.vector(where, vectors[0], 10)
    assert walked[0].row == first[0].row and len(walked) == 10


def test_integer_arrays_arrive_as_the_numbers_sent(pg: PostgresRecordStore) -> None:
    wide = np.array([0, -1, 2**62, -(2**63), 7], dtype=np.int64)
    narrow = np.array([0, -5, 2**31 - 1, 65535], dtype=np.int64)
    with pg.db.session(None) as s:
        got = s.conn.execute(
            "SELECT %s::int8[], %s::int4[], %s::int8[]",
            (Int8Array(wide), Int4Array(narrow), Int8Array([])),
        ).fetchone()
    assert got == (wide.tolist(), narrow.tolist(), [])


def test_a_graph_build_raises_the_build_memory_but_keeps_a_larger_setting(
    pg: PostgresRecordStore,
) -> None:
    with pg.db.admin() as conn:
        conn.execute("SET maintenance_work_mem = '64MB'")
        assert raise_build_memory(conn) == "512MB"
        conn.execute("SET maintenance_work_mem = '2GB'")
        assert raise_build_memory(conn) == "2GB"
        assert raise_build_memory(conn, at_least="3GB") == "3GB"


def test_a_bulk_insert_stores_its_postings_in_key_order(pg: PostgresRecordStore) -> None:
    words = ["zeta", "alpha", "mango", "delta", "kilo", "bravo", "yankee", "echo"]
    items = [
        record(f"M{i}", " ".join(words[(i * 3 + j) % len(words)] for j in range(4)))
        for i in range(40)
    ]
    insert(pg, *items)
    with pg.db.session("t1") as s:
        stored = s.conn.execute("SELECT term, row FROM postings ORDER BY ctid").fetchall()
    assert len(stored) == 40 * 4 and len({row for _, row in stored}) == 40
    assert stored == sorted(stored)  # term, then row: the primary key's order
