"""The PostgreSQL schema, rendered from the one description both stores share, is the
schema the hand-written scripts made: for a new store, at every version, and for a store of
an older version upgraded in place."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

import psycopg
import pytest
from psycopg import sql

from cairn.storage.postgres import PostgresRecordStore
from cairn.storage.postgres.migrate import migrate
from cairn.storage.postgres.schema import LATEST_VERSION, MIGRATIONS, TENANT_TABLES
from pg_support import drop_schema, new_schema_name, server_uri
from schema_support import frozen, postgres_catalog

FROZEN = frozen("postgres")


@pytest.fixture
def schemas() -> Iterator[tuple[str, list[str]]]:
    """The test server's URL, and a list that each schema a test makes is added to (all
    of them dropped afterwards)."""
    url, made = server_uri(), []
    try:
        yield url, made
    finally:
        for name in made:
            drop_schema(url, name)


def _admin(url: str, name: str) -> psycopg.Connection[Any]:
    conn = psycopg.connect(url, autocommit=True)
    conn.execute("CREATE EXTENSION IF NOT EXISTS vector SCHEMA public")
    conn.execute(sql.SQL("CREATE SCHEMA IF NOT EXISTS {}").format(sql.Identifier(name)))
    conn.execute(sql.SQL("SET search_path TO {}, public").format(sql.Identifier(name)))
    return conn


def build(url: str, made: list[str], migrations: Sequence[tuple[int, str]]) -> str:
    """A schema made by the store's own migration code running ``migrations``."""
    name = new_schema_name("render")
    made.append(name)
    with _admin(url, name) as conn:
        assert migrate(conn, name, migrations=migrations) == migrations[-1][0]
    return name


def catalog(url: str, name: str) -> dict[str, Any]:
    with psycopg.connect(url, autocommit=True) as conn:
        return postgres_catalog(conn, name)


def test_the_frozen_copy_is_the_whole_history() -> None:
    assert [v for v, _ in FROZEN] == [v for v, _ in MIGRATIONS] == [5, 6, 7, 8]
    assert LATEST_VERSION == 8
    assert TENANT_TABLES == (
        "events",
        "records",
        "tombstones",
        "applications",
        "pending_purges",
        "record_terms",
        "vectors",
        "postings",
        "term_stats",
        "partition_stats",
        "entity_links",
        "telemetry",
    )


def test_a_new_store_gets_exactly_the_schema_the_hand_written_scripts_made(
    schemas: tuple[str, list[str]],
) -> None:
    url, made = schemas
    old = build(url, made, FROZEN)
    PostgresRecordStore(url, schema=old).close()  # its server tables and role grants
    new = new_schema_name("render")
    made.append(new)
    PostgresRecordStore(url, schema=new).close()
    before, after = catalog(url, old), catalog(url, new)
    for part in before:
        assert after[part] == before[part], part
    assert after["versions"] == [5, 6, 7, 8]
    assert any(p[1] == "records_read" for p in after["policies"])
    assert any(c[1] == "records_hash" for c in after["indexes"])


@pytest.mark.parametrize("version", [5, 6, 7, 8])
def test_each_rendered_version_leaves_the_schema_its_script_left(
    version: int, schemas: tuple[str, list[str]]
) -> None:
    url, made = schemas
    old = build(url, made, FROZEN[: version - 4])
    new = build(url, made, MIGRATIONS[: version - 4])
    assert catalog(url, new) == catalog(url, old)


@pytest.mark.parametrize("version", [5, 6, 7])
def test_a_store_of_an_older_version_upgrades_to_the_same_schema(
    version: int, schemas: tuple[str, list[str]]
) -> None:
    url, made = schemas
    old = build(url, made, FROZEN[: version - 4])
    PostgresRecordStore(url, schema=old).close()  # only the versions after its own run
    new = build(url, made, MIGRATIONS)
    PostgresRecordStore(url, schema=new).close()
    assert catalog(url, old) == catalog(url, new)


def test_the_comparison_sees_a_changed_policy_and_a_changed_default(
    schemas: tuple[str, list[str]],
) -> None:
    url, made = schemas
    reference = catalog(url, build(url, made, FROZEN))
    wall = FROZEN[0][1].replace("FOR DELETE USING (", "FOR DELETE USING (true OR ", 1)
    walled = catalog(url, build(url, made, ((5, wall), *FROZEN[1:])))
    assert walled["policies"] != reference["policies"]
    default = FROZEN[0][1].replace("DEFAULT 0.5", "DEFAULT 0.25")
    defaulted = catalog(url, build(url, made, ((5, default), *FROZEN[1:])))
    assert defaulted["columns"] != reference["columns"]
