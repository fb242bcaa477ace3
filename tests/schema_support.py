"""The store schemas as released before they were rendered from one description, and a
reading of what a store's catalog holds, so the two can be compared piece by piece.

``storage/frozen_schema/{sqlite,postgres}.sql`` are the migration scripts exactly as
``cairn.storage.sqlite.schema`` and ``cairn.storage.postgres.schema`` wrote them out by hand
at schema 8 (commit b7e162d), their constants expanded: a frozen copy, never to be edited.
"""

from __future__ import annotations

import re
import sqlite3
from pathlib import Path
from typing import Any

FROZEN = Path(__file__).parent / "storage" / "frozen_schema"
_VERSION = re.compile(r"^-- @@ cairn schema version (\d+)$", re.MULTILINE)


def frozen(dialect: str) -> tuple[tuple[int, str], ...]:
    """The frozen migrations of ``dialect`` ("sqlite" or "postgres"), in order."""
    text = (FROZEN / f"{dialect}.sql").read_text(encoding="utf-8")
    parts = _VERSION.split(text)[1:]
    return tuple((int(parts[i]), parts[i + 1].strip() + "\n") for i in range(0, len(parts), 2))


def _normal(sql: str) -> str:
    """SQL text without comments, with its blanks made one space, none inside brackets."""
    text = re.sub(r"--[^\n]*", "", sql)
    text = re.sub(r"\s+", " ", text).strip()
    return text.replace("( ", "(").replace(" )", ")")


def _clauses(create: str) -> list[str]:
    """The column definitions and table constraints of a CREATE TABLE, each normalised."""
    text = _normal(create)
    inner = text[text.index("(") + 1 : text.rindex(")")]
    clauses, depth, start = [], 0, 0
    for i, char in enumerate(inner):
        depth += {"(": 1, ")": -1}.get(char, 0)
        if char == "," and depth == 0:
            clauses.append(inner[start:i].strip())
            start = i + 1
    clauses.append(inner[start:].strip())
    return sorted(clauses)


def sqlite_catalog(path: Path) -> dict[str, Any]:
    """Every table (columns in order, foreign keys, each clause of its definition), index
    (columns, order, collation, uniqueness, condition) and trigger of an SQLite file, the
    versions it records and the counters ``meta`` holds."""
    conn = sqlite3.connect(path)
    try:
        found: dict[str, Any] = {}
        rows = conn.execute("SELECT type, name, tbl_name, sql FROM sqlite_master ORDER BY 1, 2")
        for kind, name, table, sql in rows.fetchall():
            if kind == "table":
                found[f"table {name}"] = {
                    "columns": conn.execute(f"PRAGMA table_xinfo({name})").fetchall(),
                    "foreign keys": conn.execute(f"PRAGMA foreign_key_list({name})").fetchall(),
                    "clauses": _clauses(sql),
                    "indexes": sorted(conn.execute(f"PRAGMA index_list({name})").fetchall()),
                }
            elif kind == "index":
                found[f"index {name}"] = {
                    "table": table,
                    "columns": conn.execute(f"PRAGMA index_xinfo({name})").fetchall(),
                    "sql": None if sql is None else _normal(sql),
                }
            else:
                found[f"{kind} {name}"] = _normal(sql)
        found["versions"] = [v for (v,) in conn.execute("SELECT version FROM schema_version")]
        found["meta"] = sorted(conn.execute("SELECT key, value FROM meta").fetchall())
        return found
    finally:
        conn.close()


def postgres_catalog(conn: Any, schema: str) -> dict[str, Any]:
    """Every column (type, collation, nullability, default, generation, identity),
    constraint, index, policy, row-level security flag, sequence and grant of a PostgreSQL
    schema, the versions it records and the counters ``meta`` holds."""

    def rows(query: str) -> list[tuple[Any, ...]]:
        return sorted(conn.execute(query, {"s": schema}).fetchall())

    return {
        "columns": rows(
            "SELECT table_name, ordinal_position, column_name, data_type, udt_name,"
            " is_nullable, column_default, collation_name, is_generated,"
            " generation_expression, is_identity, identity_generation"
            " FROM information_schema.columns WHERE table_schema = %(s)s"
        ),
        "constraints": rows(
            "SELECT c.relname, k.conname, k.contype, pg_get_constraintdef(k.oid)"
            " FROM pg_constraint k JOIN pg_class c ON c.oid = k.conrelid"
            " JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = %(s)s"
        ),
        "indexes": rows(
            "SELECT tablename, indexname, replace(indexdef, %(s)s || '.', '')"
            " FROM pg_indexes WHERE schemaname = %(s)s"
        ),
        "policies": rows(
            "SELECT tablename, policyname, permissive, roles::text, cmd, qual, with_check"
            " FROM pg_policies WHERE schemaname = %(s)s"
        ),
        "row security": rows(
            "SELECT c.relname, c.relkind, c.relrowsecurity, c.relforcerowsecurity"
            " FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace"
            " WHERE n.nspname = %(s)s"
        ),
        "sequences": rows(
            "SELECT sequencename, data_type::text, start_value, increment_by, max_value,"
            " cycle FROM pg_sequences WHERE schemaname = %(s)s"
        ),
        "grants": rows(
            "SELECT grantee, table_name, privilege_type FROM information_schema.role_table_grants"
            " WHERE table_schema = %(s)s"
        ),
        "versions": [
            v for (v,) in conn.execute(f'SELECT version FROM "{schema}".schema_version ORDER BY 1')
        ],
        "meta": sorted(conn.execute(f'SELECT key, value FROM "{schema}".meta').fetchall()),
    }
