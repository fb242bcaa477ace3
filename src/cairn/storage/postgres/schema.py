"""The PostgreSQL schema: the record store's tables, the in-database index, the tenant wall.

Versions are numbered with the record model, like the SQLite file's: PostgreSQL support
begins at schema 5 (every key begins with the tenant and agent), so a store of either
backend reporting schema 5 holds the same records, versions, journal, tombstones and
applications. A later change of the record model takes the next number in both stores.

Beside the records live the tables the in-database search index reads, written in the same
transactions as the records they index:

- ``record_terms``: each row's analysed terms and entity keys, encoded as in SQLite (the
  change feed hands them to any follower);
- ``postings``: one row per (row, term) with the term count, the document's length, its
  liveness and project, keyed by tenant, agent and term, so a keyword search reads exactly
  the postings of its terms in its partition;
- ``term_stats`` / ``partition_stats``: live documents per term and per partition, and
  their total length -- BM25's statistics, kept exact as rows come and go;
- ``vectors``: each row's vector (pgvector) with its namespace, project and liveness; an
  HNSW index per dimension is made by the search index that knows it;
- ``entity_links``: hashed entity keys per row, for the entity lane.

Every text column sorts bytewise (``COLLATE "C"``), as SQLite compares text, so ids and ISO
times order and compare the same in both stores.

Row-level security is the second wall behind the tenant in every key: each table with a
tenant column admits only the rows of the tenant the transaction names in the session
variable ``cairn.tenant``. A transaction that names none sees nothing and can write
nothing. Reading across tenants (the change feed, pending purges and links) needs the
explicit ``cairn.every_tenant = 'on'`` and is read-only.
"""

from __future__ import annotations

from cairn.storage.sql import schema as described
from cairn.storage.sql.ddl import POSTGRES_DDL, script

STORE_ROLE = "cairn_store"
TENANT_SETTING = "cairn.tenant"
EVERY_TENANT_SETTING = "cairn.every_tenant"


def _walled(tables: list[described.Table]) -> tuple[str, ...]:
    """The tables holding one tenant's data each row: row-level security applies to all."""
    return tuple(t.name for t in tables if any(c.name == "tenant" for c in t.columns))


TENANT_TABLES = _walled(POSTGRES_DDL.tables(described.at(described.LATEST_VERSION)))


def _wall(table: str) -> list[str]:
    """The tenant wall of one table: reads of the named tenant (or, explicitly, of every
    tenant); writes of the named tenant only."""
    mine = f"tenant = current_setting('{TENANT_SETTING}', true)"
    every = f"current_setting('{EVERY_TENANT_SETTING}', true) = 'on'"
    return [
        f"ALTER TABLE {table} ENABLE ROW LEVEL SECURITY",
        f"ALTER TABLE {table} FORCE ROW LEVEL SECURITY",
        f"CREATE POLICY {table}_read ON {table} FOR SELECT USING ({mine} OR {every})",
        f"CREATE POLICY {table}_insert ON {table} FOR INSERT WITH CHECK ({mine})",
        f"CREATE POLICY {table}_update ON {table} FOR UPDATE USING ({mine}) WITH CHECK ({mine})",
        f"CREATE POLICY {table}_delete ON {table} FOR DELETE USING ({mine})",
    ]


def _first() -> str:
    """Schema 5, PostgreSQL's first: every table and index of the base, the sequence that
    numbers record rows (SQLite's rowid), and the tenant wall."""
    statements = ["CREATE SEQUENCE records_row_seq AS bigint"]
    statements += POSTGRES_DDL.create(described.BASE)
    for table in _walled(POSTGRES_DDL.tables(described.BASE)):
        statements += _wall(table)
    return script(statements, "v5: every table, index and the tenant wall")


def _step(version: int, summary: str, changes: tuple[described.Change, ...]) -> str:
    statements = [s for change in changes for s in POSTGRES_DDL.change(change)]
    added = [c.table for c in changes if isinstance(c, described.AddTable)]
    for table in _walled(POSTGRES_DDL.tables(described.Schema(tuple(added), ()))):
        statements += _wall(table)
    return script(statements, f"v{version}: {summary}")


MIGRATIONS: tuple[tuple[int, str], ...] = (
    (described.BASE_VERSION, _first()),
    *((version, _step(version, summary, changes)) for version, summary, changes in described.STEPS),
)
LATEST_VERSION = MIGRATIONS[-1][0]
# The server's own tables, of no tenant, beside the versioned schema (which SQLite's
# mirrors): made when missing, under the setup lock, by every version that knows them.
SERVER_TABLES: tuple[str, ...] = ("server_tokens",)
# The server's tokens, in the database every server of it reads, so a token made or
# revoked on one host holds on all of them at once. Only each token's SHA-256 is kept.
# Not behind the tenant wall: a request's tenant is what its token says.
SERVER_TOKENS = """
CREATE TABLE IF NOT EXISTS server_tokens (
    id text COLLATE "C" PRIMARY KEY,
    sha256 text COLLATE "C" NOT NULL UNIQUE,
    tenant text COLLATE "C" NOT NULL,
    agent text COLLATE "C",
    created_at text NOT NULL
)
"""
OWN_TABLES = frozenset(("schema_version", "meta", *TENANT_TABLES, *SERVER_TABLES))
