"""Row-level security is a second wall: a query that forgets its tenant still sees only the
tenant its transaction names, and one that names none sees nothing."""

from __future__ import annotations

from collections.abc import Iterator

import psycopg
import pytest

from cairn.errors import StorageError
from cairn.model import Application, Event, Tombstone
from cairn.storage.ports import LaneFilter
from cairn.storage.postgres import PostgresRecordStore, PostgresSearchIndex
from cairn.storage.postgres.schema import TENANT_TABLES
from pg_support import fresh_schema

from .helpers import DIM, insert, record, vec


@pytest.fixture
def store() -> Iterator[PostgresRecordStore]:
    with fresh_schema("wall") as (url, schema):
        made = PostgresRecordStore(url, schema=schema, max_connections=2)
        for tenant in ("t1", "t2"):
            insert(
                made,
                record("R1", f"alpha secret of {tenant}", tenant=tenant),
                record("R2", f"beta note of {tenant}", tenant=tenant),
                vectors={"R1": vec(0), "R2": vec(1)},
            )
            with made.transaction() as tx:
                tx.append_events(
                    [Event("E1", "memory.stored", tenant, "a", {"record": {"id": "R2"}}, "x")]
                )
                tx.put_tombstone(
                    Tombstone("R9", tenant, "a", "global", None, "h", "user-remove", False, "x")
                )
                tx.put_applications(
                    [Application("AP", tenant, "a", "R1", 1, "task", "resident", (), "x")]
                )
                tx.purge(tenant, "a", "R2", "[gone]")  # leaves a pending purge row
                tx.add_counters(tenant, "a", {"reflect:runs": 1})
        yield made
        made.close()


def counts(
    store: PostgresRecordStore, tenant: str | None, *, every: bool = False
) -> dict[str, int]:
    """Rows per tenant table seen by a query with no tenant condition at all."""
    out = {}
    with store.db.session(tenant, every_tenant=every) as s:
        for table in TENANT_TABLES:
            found = s.conn.execute(f"SELECT count(*) FROM {table}".encode()).fetchone()
            out[table] = int(found[0]) if found else -1
    return out


def test_the_store_works_as_a_role_the_wall_applies_to(store: PostgresRecordStore) -> None:
    with store.db.session(None) as s:
        found = s.conn.execute(
            "SELECT current_user, rolsuper, rolbypassrls FROM pg_roles WHERE rolname = current_user"
        ).fetchone()
    assert found is not None and found[1:] == (False, False), found


def test_a_transaction_that_names_no_tenant_sees_nothing(store: PostgresRecordStore) -> None:
    everything = counts(store, None, every=True)
    assert all(n > 0 for n in everything.values()), everything  # the rows are there
    assert counts(store, None) == dict.fromkeys(TENANT_TABLES, 0)
    # A connection outside the store's sessions, as its role, without the setting at all:
    with psycopg.connect(store.db.url) as conn:
        conn.execute(f"SET search_path TO {store.db.schema}, {store.db.vector_schema}".encode())
        conn.execute("SET ROLE cairn_store")
        for table in TENANT_TABLES:
            found = conn.execute(f"SELECT count(*) FROM {table}".encode()).fetchone()
            assert found == (0,), table


def test_a_query_without_a_tenant_condition_sees_only_the_named_tenant(
    store: PostgresRecordStore,
) -> None:
    everything = counts(store, None, every=True)
    mine, theirs = counts(store, "t1"), counts(store, "t2")
    assert mine == theirs  # both tenants wrote the same shape of data
    assert {t: mine[t] + theirs[t] for t in TENANT_TABLES} == everything
    with store.db.session("t1") as s:
        bodies = {r[0] for r in s.conn.execute("SELECT body FROM records")}
    assert bodies == {"alpha secret of t1", ""}


def test_writes_cannot_cross_the_wall(store: PostgresRecordStore) -> None:
    with store.db.session("t1") as s:
        changed = s.conn.execute("UPDATE records SET body = 'overwritten' WHERE tenant = 't2'")
        assert changed.rowcount == 0
        deleted = s.conn.execute("DELETE FROM events WHERE tenant = 't2'")
        assert deleted.rowcount == 0
    with pytest.raises(StorageError, match="row-level security"), store.db.session("t1") as s:
        s.conn.execute(
            "INSERT INTO tombstones(tenant, agent, record_id, scope, text_hash, reason,"
            " removed_at) VALUES ('t2', 'a', 'X', 'global', 'h', 'user-remove', 'x')"
        )
    # Reading every tenant (the change feed's scope) gives no write either.
    with store.db.session(None, every_tenant=True) as s:
        assert s.conn.execute("UPDATE records SET body = 'x'").rowcount == 0
    assert store.get("t2", "a", "R1").body == "alpha secret of t2"  # type: ignore[union-attr]


def test_a_transaction_writing_for_one_tenant_cannot_insert_rows_of_another(
    store: PostgresRecordStore,
) -> None:
    with pytest.raises(StorageError, match="row-level security"), store.transaction() as tx:
        tx._s.scope("t1")  # as a bug would: the scope of one tenant, a row of another
        tx._s.conn.execute(
            "INSERT INTO pending_purges(tenant, agent, record_id) VALUES ('t2', 'a', 'Z')"
        )
    assert [p.record_id for p in store.pending_purges() if p.tenant == "t2"] == ["R2"]


def test_every_lane_answers_one_tenant_only(store: PostgresRecordStore) -> None:
    index = PostgresSearchIndex(store, dim=DIM)
    mine = LaneFilter("t1", "a")
    hits = index.keyword(mine, ["alpha", "secret"], 10) + index.vector(mine, vec(0), 10)
    rows = {h.row for h in hits}
    assert {r.tenant for r in store.records_by_rows(mine, list(rows)).values()} == {"t1"}
    theirs = LaneFilter("t2", "a")
    their_rows = {h.row for h in index.keyword(theirs, ["alpha"], 10)}
    assert their_rows and not rows & their_rows
    assert index.keyword_scores(mine, ["alpha"], list(their_rows)) == {}
    assert index.vector_scores(mine, vec(0), list(their_rows)) == {}
    assert index.places(mine, list(their_rows)) == {}
    assert index.entity(mine, list(their_rows), 10) == []
    assert store.records_by_rows(mine, list(their_rows)) == {}
