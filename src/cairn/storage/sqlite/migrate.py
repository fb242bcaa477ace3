"""Bringing a file to the newest schema, in one transaction (tested from real old files)."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from cairn.errors import StorageError
from cairn.storage.sql.ddl import SQLITE_DDL
from cairn.storage.sql.dialect import SQLITE
from cairn.storage.sql.rows import SELECT_RECORD, record_from_row
from cairn.storage.sql.versions import apply_versions
from cairn.storage.sql.writes import RankHint
from cairn.storage.sqlite.schema import LATEST_VERSION, MIGRATIONS
from cairn.storage.terms import analyse, entity_blob


def schema_version(conn: sqlite3.Connection) -> int:
    has_table = conn.execute(
        "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'schema_version'"
    ).fetchone()
    if not has_table:
        return 0
    found = conn.execute("SELECT max(version) FROM schema_version").fetchone()
    return int(found[0] or 0)


def migrate(conn: sqlite3.Connection, path: Path, rank_hint: RankHint | None) -> None:
    """Apply every migration newer than the file, all or nothing."""
    current = schema_version(conn)
    if current == LATEST_VERSION:
        return
    if current > LATEST_VERSION:
        raise StorageError(
            f"{path} has schema {current}, newer than this cairn ({LATEST_VERSION}); upgrade cairn"
        )
    if current == 0 and _has_foreign_tables(conn):
        raise StorageError(f"{path} is an SQLite file of another program, not cairn's")
    conn.execute("BEGIN IMMEDIATE")
    try:
        apply_versions(
            conn.execute,
            SQLITE,
            SQLITE_DDL,
            schema_version(conn),  # another process may have migrated meanwhile
            MIGRATIONS,
            statements=split_sql,
            after={4: lambda: _fill_record_terms(conn), 5: lambda: _after_v5(conn, rank_hint)},
        )
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise


def _has_foreign_tables(conn: sqlite3.Connection) -> bool:
    found = conn.execute("SELECT count(*) FROM sqlite_master WHERE type = 'table'").fetchone()
    return int(found[0]) > 0


def _fill_record_terms(conn: sqlite3.Connection) -> None:
    """Analyse the rows written before schema 4 (purged rows have nothing to index)."""
    cursor = conn.execute(
        "SELECT row, title, body, tags FROM records WHERE NOT purged ORDER BY row"
    )
    while found := cursor.fetchmany(4096):
        conn.executemany(
            "INSERT INTO record_terms(row, length, keys, counts) VALUES (?,?,?,?)",
            [
                (row, *analyse((title, body, " ".join(json.loads(tags or "[]")))))
                for row, title, body, tags in found
            ],
        )


def _after_v5(conn: sqlite3.Connection, rank_hint: RankHint | None) -> None:
    _entities_to_keys(conn)
    _fill_rank_hints(conn, rank_hint)


def _entities_to_keys(conn: sqlite3.Connection) -> None:
    """Schema 2-4 kept entity keys in plain text in ``entities``; 5 keeps them hashed
    beside each row's terms, so they leave with the row's body."""
    links: dict[int, list[str]] = {}
    for row, key in conn.execute(
        "SELECT re.row, e.key FROM record_entities re JOIN entities e ON e.id = re.entity_id"
    ):
        links.setdefault(int(row), []).append(key)
    conn.executemany(
        "UPDATE record_terms SET entity_keys = ? WHERE row = ?",
        [(entity_blob(keys), row) for row, keys in links.items()],
    )
    conn.execute("DROP TABLE record_entities")
    conn.execute("DROP TABLE entities")


def _fill_rank_hints(conn: sqlite3.Connection, rank_hint: RankHint | None) -> None:
    if rank_hint is None:
        return
    cursor = conn.execute(SELECT_RECORD + " WHERE live")
    while found := cursor.fetchmany(4096):
        hints = [(rank_hint(record), row) for row, record in map(record_from_row, found)]
        conn.executemany("UPDATE records SET rank_hint = ? WHERE row = ?", hints)


def split_sql(script: str) -> list[str]:
    """Split a migration into statements; triggers hold ';' inside BEGIN ... END."""
    statements: list[str] = []
    buffer: list[str] = []
    for line in script.splitlines():
        buffer.append(line)
        candidate = "\n".join(buffer).strip()
        if candidate and sqlite3.complete_statement(candidate):
            statements.append(candidate)
            buffer = []
    rest = "\n".join(buffer).strip()
    if rest:
        statements.append(rest)
    return statements
