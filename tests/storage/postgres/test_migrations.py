"""PostgreSQL schemas are versioned with the record model and migrate forward, all or nothing."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any

import psycopg
import pytest
from psycopg import sql

from cairn.errors import StorageError
from cairn.storage.postgres import PostgresRecordStore
from cairn.storage.postgres.migrate import migrate, schema_version
from cairn.storage.postgres.schema import LATEST_VERSION, MIGRATIONS
from cairn.storage.sqlite.schema import LATEST_VERSION as SQLITE_VERSION
from pg_support import fresh_schema

from .helpers import insert, record


@pytest.fixture
def schema() -> Iterator[tuple[str, str]]:
    with fresh_schema("mig") as made:
        yield made


def admin(url: str, schema: str) -> psycopg.Connection[Any]:
    conn = psycopg.connect(url, autocommit=True)
    conn.execute(sql.SQL("SET search_path TO {}, public").format(sql.Identifier(schema)))
    return conn


def applied(url: str, schema: str) -> list[tuple[int, str]]:
    with admin(url, schema) as conn:
        return [
            (int(v), str(at))
            for v, at in conn.execute("SELECT version, applied_at FROM schema_version ORDER BY 1")
        ]


def test_a_new_schema_is_made_at_the_record_models_version(schema: tuple[str, str]) -> None:
    url, name = schema
    store = PostgresRecordStore(url, schema=name)
    assert store.stats("t").schema_version == LATEST_VERSION == SQLITE_VERSION == 8
    store.close()
    first = applied(url, name)
    assert [v for v, _ in first] == [v for v, _ in MIGRATIONS]
    again = PostgresRecordStore(url, schema=name)  # up to date: nothing applied twice
    again.close()
    assert applied(url, name) == first


def test_a_forward_migration_keeps_the_data_and_records_its_version(
    schema: tuple[str, str],
) -> None:
    url, name = schema
    store = PostgresRecordStore(url, schema=name)
    insert(store, record("R1", "written under the latest schema"))
    store.close()
    nxt = LATEST_VERSION + 1
    later = (*MIGRATIONS, (nxt, "ALTER TABLE records ADD COLUMN note text NOT NULL DEFAULT 'x'"))
    with admin(url, name) as conn:
        assert migrate(conn, name, migrations=later) == nxt
        assert schema_version(conn, name) == nxt
        assert conn.execute("SELECT body, note FROM records").fetchall() == [
            ("written under the latest schema", "x")
        ]
        assert migrate(conn, name, migrations=later) == nxt  # applied once only
    assert [v for v, _ in applied(url, name)] == [*(v for v, _ in MIGRATIONS), nxt]


def test_a_failing_migration_changes_nothing(schema: tuple[str, str]) -> None:
    url, name = schema
    PostgresRecordStore(url, schema=name).close()
    broken = (
        *MIGRATIONS,
        (LATEST_VERSION + 1, "ALTER TABLE records ADD COLUMN half_done text; SELECT 1 / 0;"),
    )
    with admin(url, name) as conn:
        with pytest.raises(psycopg.errors.DivisionByZero):
            migrate(conn, name, migrations=broken)
        assert schema_version(conn, name) == LATEST_VERSION
        columns = conn.execute(
            "SELECT column_name FROM information_schema.columns"
            " WHERE table_schema = %s AND table_name = 'records'",
            (name,),
        ).fetchall()
        assert ("half_done",) not in columns


def test_a_schema_newer_than_this_cairn_is_refused(schema: tuple[str, str]) -> None:
    url, name = schema
    PostgresRecordStore(url, schema=name).close()
    with admin(url, name) as conn:
        conn.execute("INSERT INTO schema_version VALUES (99, 'later')")
    with pytest.raises(StorageError, match="version 99, newer than this cairn"):
        PostgresRecordStore(url, schema=name)


def test_a_schema_of_another_program_is_refused(schema: tuple[str, str]) -> None:
    url, name = schema
    with admin(url, name) as conn:
        conn.execute(sql.SQL("CREATE SCHEMA {}").format(sql.Identifier(name)))
        conn.execute("CREATE TABLE invoices (id int)")
    with pytest.raises(StorageError, match="tables of another program"):
        PostgresRecordStore(url, schema=name)
    with admin(url, name) as conn:  # and nothing of cairn's was added to it
        tables = conn.execute(
            "SELECT tablename FROM pg_tables WHERE schemaname = %s", (name,)
        ).fetchall()
    assert tables == [("invoices",)]


def test_processes_opening_one_new_schema_at_once_migrate_it_once(
    schema: tuple[str, str],
) -> None:
    url, name = schema
    errors: list[BaseException] = []
    stores: list[PostgresRecordStore] = []

    def open_one() -> None:
        try:
            stores.append(PostgresRecordStore(url, schema=name, max_connections=1))
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=open_one) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(600)  # generous: the same suite runs on an emulated processor too
    assert errors == [] and len(stores) == 4
    insert(stores[0], record("R1", "one"))
    assert stores[3].get("t1", "a", "R1") is not None
    for store in stores:
        store.close()
    assert [v for v, _ in applied(url, name)] == [v for v, _ in MIGRATIONS]


def test_a_schema_five_store_gains_outcome_provenance_and_telemetry(
    schema: tuple[str, str],
) -> None:
    from cairn.model import Application

    url, name = schema
    with admin(url, name) as conn:
        conn.execute(sql.SQL("CREATE SCHEMA {}").format(sql.Identifier(name)))
        conn.execute(sql.SQL("SET search_path TO {}, public").format(sql.Identifier(name)))
        conn.execute("CREATE EXTENSION IF NOT EXISTS vector SCHEMA public")
        assert migrate(conn, name, migrations=MIGRATIONS[:1]) == 5
        conn.execute(
            "INSERT INTO applications(tenant, agent, application_id, record_id, record_version,"
            " task, delivery, created_at, outcome) VALUES ('t', 'a', 'APP', 'R', 1, 'x',"
            " 'resident', '2026', 'ignored')"
        )
    store = PostgresRecordStore(url, schema=name)
    assert store.stats("t").schema_version == LATEST_VERSION
    (old,) = store.applications("t", "a")
    assert isinstance(old, Application) and old.outcome_source is None
    with store.transaction() as tx:
        tx.set_outcome("t", "a", "APP", "contributed-to-failure", "2027", source="observed")
        tx.add_counters("t", "a", {"reflect:runs": 1})
    assert store.applications("t", "a")[0].outcome_source == "observed"
    assert store.counters("t", None) == {"a": {"reflect:runs": 1.0}}
    store.close()
