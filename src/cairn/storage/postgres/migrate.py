"""Bringing a PostgreSQL schema to the newest version, in one transaction per open.

Setting up is serialised across processes by an advisory lock, so several servers opening
one database at once migrate it exactly once. Every migration is forward-only; all of them
run in one transaction (PostgreSQL's DDL is transactional), so a failure leaves the schema
as it was.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from psycopg import Connection, sql

from cairn.errors import StorageError
from cairn.storage.postgres.schema import (
    MIGRATIONS,
    OWN_TABLES,
    SERVER_TABLES,
    SERVER_TOKENS,
    STORE_ROLE,
    TENANT_TABLES,
)
from cairn.storage.sql.ddl import POSTGRES_DDL
from cairn.storage.sql.dialect import POSTGRES
from cairn.storage.sql.versions import apply_versions

SETUP_LOCK = "cairn.setup"
# Work a migration does in Python after its script (none so far: schema 5 is the first).
AFTER_SCRIPT: dict[int, Callable[[], None]] = {}


def schema_version(conn: Connection[Any], schema: str) -> int:
    # The catalog is read through pg_tables, under this statement's snapshot: a name
    # lookup (to_regclass) may still answer from before the lock this process waited for.
    if "schema_version" not in _tables(conn, schema):
        return 0
    version = conn.execute(
        sql.SQL("SELECT max(version) FROM {}.schema_version").format(sql.Identifier(schema))
    ).fetchone()
    return int(version[0] or 0) if version else 0


def _tables(conn: Connection[Any], schema: str) -> set[str]:
    found = conn.execute(
        "SELECT tablename FROM pg_tables WHERE schemaname = %s", (schema,)
    ).fetchall()
    return {str(r[0]) for r in found}


def migrate(
    conn: Connection[Any],
    schema: str,
    *,
    migrations: Sequence[tuple[int, str]] = MIGRATIONS,
) -> int:
    """Apply every migration newer than the schema, all or nothing; returns the version.

    ``conn`` has ``search_path`` set to the schema (and pgvector's schema)."""
    latest = migrations[-1][0] if migrations else 0
    current = schema_version(conn, schema)
    if current == latest:
        return current
    with conn.transaction():
        conn.execute("SELECT pg_advisory_xact_lock(hashtext(%s))", (SETUP_LOCK,))
        current = schema_version(conn, schema)  # another process may have migrated meanwhile
        if current > latest:
            raise StorageError(
                f"the PostgreSQL schema {schema!r} has version {current}, newer than this"
                f" cairn ({latest}); upgrade cairn"
            )
        if current == 0:
            foreign = _tables(conn, schema) - OWN_TABLES
            if foreign:
                raise StorageError(
                    f"the PostgreSQL schema {schema!r} holds tables of another program"
                    f" ({', '.join(sorted(foreign)[:5])}); name another memory.store.schema"
                )
        apply_versions(
            lambda query, params: conn.execute(query.encode("utf-8"), params or None),
            POSTGRES,
            POSTGRES_DDL,
            current,
            migrations,
            statements=lambda script: [script],  # PostgreSQL takes a whole script at once
            after=AFTER_SCRIPT,
        )
        current = latest
    return current


def ensure_server_tables(conn: Connection[Any]) -> None:
    """Make the server's own tables (its tokens) when missing, once across processes."""
    with conn.transaction():
        conn.execute("SELECT pg_advisory_xact_lock(hashtext(%s))", (SETUP_LOCK,))
        conn.execute(SERVER_TOKENS.encode("utf-8"))


def plan(
    conn: Connection[Any],
    schema: str,
    *,
    migrations: Sequence[tuple[int, str]] = MIGRATIONS,
) -> list[str]:
    """What opening the store would change in ``schema``, one line each, changing
    nothing (``cairn migrate --dry-run``)."""
    steps: list[str] = []
    if conn.execute("SELECT 1 FROM pg_extension WHERE extname = 'vector'").fetchone() is None:
        steps.append("CREATE EXTENSION vector (pgvector; needs a superuser the first time)")
    known = conn.execute("SELECT 1 FROM pg_namespace WHERE nspname = %s", (schema,)).fetchone()
    if known is None:
        steps.append(f"CREATE SCHEMA {schema}")
    current = schema_version(conn, schema) if known is not None else 0
    latest = migrations[-1][0] if migrations else 0
    if current > latest:
        raise StorageError(
            f"the PostgreSQL schema {schema!r} has version {current}, newer than this cairn"
            f" ({latest}); upgrade cairn"
        )
    for n, (version, script) in enumerate(migrations):
        if version > current:
            first = n == 0  # the first version's script is the whole schema
            what = "every table, index and the tenant wall" if first else _summary(script)
            steps.append(f"schema version {version}: {what}")
    tables = _tables(conn, schema) if known is not None else set()
    steps += [f"CREATE TABLE {name}" for name in SERVER_TABLES if name not in tables]
    role = conn.execute("SELECT 1 FROM pg_roles WHERE rolname = %s", (STORE_ROLE,)).fetchone()
    if role is None:
        steps.append(f"CREATE ROLE {STORE_ROLE} (used when connecting as a superuser)")
    return steps


def _summary(script: str) -> str:
    """A migration's first comment line (what it is for), or its first statement."""
    lines = [line.strip() for line in script.strip().splitlines() if line.strip()]
    for line in lines:
        if line.startswith("--"):
            return line.lstrip("- ").rstrip(",:;")
    return lines[0][:100] if lines else "(empty)"


def ensure_store_role(conn: Connection[Any], schema: str) -> None:
    """Give the unprivileged role the store's work runs as what it needs in this schema.

    A superuser (or a role with BYPASSRLS) is never subject to row-level security, so a
    store connecting as one switches every pooled connection to this role; the role may
    read and write the tables, never own or alter them."""
    with conn.transaction():
        conn.execute("SELECT pg_advisory_xact_lock(hashtext(%s))", (SETUP_LOCK,))
        exists = conn.execute("SELECT 1 FROM pg_roles WHERE rolname = %s", (STORE_ROLE,))
        if exists.fetchone() is None:
            conn.execute(
                sql.SQL("CREATE ROLE {} NOLOGIN NOSUPERUSER NOBYPASSRLS").format(
                    sql.Identifier(STORE_ROLE)
                )
            )
        role, name = sql.Identifier(STORE_ROLE), sql.Identifier(schema)
        missing = conn.execute(
            "SELECT count(*) FROM unnest(%s::text[]) AS t(name) WHERE NOT has_table_privilege("
            "%s, format('%%I.%%I', %s::text, t.name), 'SELECT, INSERT, UPDATE, DELETE')",
            (["meta", "schema_version", *TENANT_TABLES, *SERVER_TABLES], STORE_ROLE, schema),
        ).fetchone()
        if missing is not None and int(missing[0]) == 0:
            return
        conn.execute(sql.SQL("GRANT USAGE ON SCHEMA {} TO {}").format(name, role))
        conn.execute(
            sql.SQL("GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA {} TO {}").format(
                name, role
            )
        )
        conn.execute(
            sql.SQL("GRANT USAGE, SELECT, UPDATE ON ALL SEQUENCES IN SCHEMA {} TO {}").format(
                name, role
            )
        )


def ensure_index(conn: Connection[Any], name: str, ddl: str) -> None:
    """Create an index once, whichever of several processes asks first."""
    with conn.transaction():
        conn.execute("SELECT pg_advisory_xact_lock(hashtext(%s))", (SETUP_LOCK,))
        found = conn.execute(
            "SELECT 1 FROM pg_indexes WHERE schemaname = current_schema() AND indexname = %s",
            (name,),
        ).fetchone()
        if found is None:
            conn.execute(ddl.encode("utf-8"))


def drop_index(conn: Connection[Any], name: str) -> None:
    """Drop one of this schema's own indexes, whichever of several processes asks first."""
    with conn.transaction():
        conn.execute("SELECT pg_advisory_xact_lock(hashtext(%s))", (SETUP_LOCK,))
        conn.execute(sql.SQL("DROP INDEX IF EXISTS {}").format(sql.Identifier(name)))
