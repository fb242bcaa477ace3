from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from cairn.errors import StorageError
from cairn.storage.sqlite.schema import LATEST_VERSION, MIGRATIONS
from cairn.storage.sqlite.store import SqliteStore, _split_sql


def make_v1_file(path: Path) -> None:
    """A file exactly as the first schema left it, with one record written by v1."""
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("CREATE TABLE schema_version (version INTEGER PRIMARY KEY, applied_at TEXT)")
    for statement in _split_sql(MIGRATIONS[0][1]):
        conn.execute(statement)
    conn.execute("INSERT INTO schema_version VALUES (1, '2026-01-01T00:00:00Z')")
    conn.execute(
        "INSERT INTO records(id, version, tenant, agent, body, kind, memory_type, authority,"
        " origin, trust, scope, state, recorded_at, text_hash) VALUES ('01OLD', 1, 'default',"
        " 'default', 'written by schema one about pnpm', 'fact', 'semantic', 'inferred', 'tool',"
        " 'learned', 'global', 'trial', '2026-01-01T00:00:00.000000Z', 'h')"
    )
    conn.close()


def test_v1_file_opens_and_upgrades(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    make_v1_file(path)
    store = SqliteStore(path, dim=8)
    assert store.schema_version == LATEST_VERSION == 4
    record = store.get("default", "default", "01OLD")
    assert record is not None and record.body == "written by schema one about pnpm"
    assert record.importance == 0.5  # the column v2 added, defaulted
    assert record.episode_id is None and record.position is None  # v3's columns
    # v4 analysed the old row into record_terms: the keyword lane finds it; v2 tables work.
    from cairn.storage.base import LaneFilter

    hits = store.keyword_search(LaneFilter("default", "default"), ["pnpm"], 5)
    assert len(hits) == 1
    with store.transaction() as tx:
        (row,) = [r for r, _ in tx.versions("default", "default", "01OLD")]
        tx.set_entities(row, "default", ["pnpm"])
    store.close()
    # Re-opening an up-to-date file applies nothing twice.
    again = SqliteStore(path, dim=8)
    assert again.schema_version == 4
    again.close()


def test_newer_schema_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "new.db"
    SqliteStore(path, dim=8).close()
    conn = sqlite3.connect(path)
    conn.execute("INSERT INTO schema_version VALUES (99, 'future')")
    conn.commit()
    conn.close()
    with pytest.raises(StorageError, match="newer than this cairn"):
        SqliteStore(path, dim=8)


def test_trust_check_constraint(tmp_path: Path) -> None:
    store = SqliteStore(tmp_path / "c.db", dim=8)
    conn = sqlite3.connect(tmp_path / "c.db")
    base = (
        "INSERT INTO records(id, version, tenant, agent, body, kind, memory_type, authority,"
        " origin, trust, scope, state, recorded_at, text_hash) VALUES"
        " (?, 1, 't', 'a', 'b', 'fact', 'semantic', 'inferred', ?, ?, 'global', 'trial', 'x', 'h')"
    )
    with pytest.raises(sqlite3.IntegrityError):
        conn.execute(base, ("A", "tool", "root"))  # not a trust level
    with pytest.raises(sqlite3.IntegrityError):
        conn.execute(base, ("B", "reflection", "system"))  # learned docs are never system
    conn.execute(base, ("C", "reflection", "learned"))
    conn.close()
    store.close()
