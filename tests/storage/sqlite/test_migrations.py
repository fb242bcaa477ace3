"""Old files open and upgrade in place; v5 makes every key tenant-scoped."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from cairn.errors import DamagedStore, InvalidInput, StorageError
from cairn.model import Record
from cairn.storage.inprocess import InProcessSearchIndex
from cairn.storage.ports import LaneFilter, NewRow
from cairn.storage.sqlite.migrate import split_sql
from cairn.storage.sqlite.record_store import SqliteRecordStore
from cairn.storage.sqlite.schema import LATEST_VERSION, MIGRATIONS


def make_file(path: Path, version: int) -> sqlite3.Connection:
    """A file exactly as schema ``version`` left it (its migrations, nothing newer)."""
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("CREATE TABLE schema_version (version INTEGER PRIMARY KEY, applied_at TEXT)")
    for number, script in MIGRATIONS:
        if number > version:
            break
        for statement in split_sql(script):
            conn.execute(statement)
        conn.execute("INSERT INTO schema_version VALUES (?, '2026-01-01T00:00:00Z')", (number,))
    return conn


def insert_old(conn: sqlite3.Connection, record_id: str, tenant: str, body: str) -> None:
    conn.execute(
        "INSERT INTO records(id, version, tenant, agent, body, kind, memory_type, authority,"
        " origin, trust, scope, state, recorded_at, text_hash) VALUES (?, 1, ?,"
        " 'default', ?, 'policy', 'procedural', 'explicit', 'user',"
        " 'learned', 'global', 'proven', '2026-01-01T00:00:00.000000Z', 'h')",
        (record_id, tenant, body),
    )


def test_v1_file_opens_and_upgrades(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    conn = make_file(path, 1)
    insert_old(conn, "01OLD", "default", "written by schema one about pnpm")
    conn.close()
    store = SqliteRecordStore(path, rank_hint=lambda r: 42.0)
    assert store.stats("default").schema_version == LATEST_VERSION == 8
    record = store.get("default", "default", "01OLD")
    assert record is not None and record.body == "written by schema one about pnpm"
    assert record.importance == 0.5  # the column v2 added, defaulted
    assert record.episode_id is None and record.position is None  # v3's columns
    # v4 analysed the old row into record_terms: the keyword lane finds it.
    index = InProcessSearchIndex(store, dim=8)
    assert len(index.keyword(LaneFilter("default", "default"), ["pnpm"], 5)) == 1
    # v5 filled the engine's rank hint for live rows.
    (found,) = store._all("SELECT rank_hint FROM records", ())
    assert found[0] == 42.0
    # v8: a body is looked up by its hash through an index, not a scan of the tenant.
    plan = store._all(
        "EXPLAIN QUERY PLAN SELECT row FROM records"
        " WHERE tenant = ? AND agent = ? AND live AND scope = ? AND text_hash = ?"
        " ORDER BY recorded_at, id",  # as a write's duplicate check lists them
        ("default", "default", "global", "x"),
    )
    assert any("records_hash" in str(step[-1]) for step in plan)
    store.close()
    again = SqliteRecordStore(path)  # an up-to-date file: nothing applied twice
    assert again.stats("default").schema_version == LATEST_VERSION
    again.close()


def test_v4_file_keys_become_tenant_scoped_and_entities_move_beside_terms(
    tmp_path: Path,
) -> None:
    path = tmp_path / "v4.db"
    conn = make_file(path, 4)
    insert_old(conn, "01SHARED", "alpha", "alpha's rule about pnpm")
    conn.execute("INSERT INTO record_terms(row, length, keys, counts) VALUES (1, 0, x'', x'')")
    conn.execute("INSERT INTO entities(tenant, key) VALUES ('alpha', 'pnpm')")
    conn.execute("INSERT INTO record_entities(entity_id, row) VALUES (1, 1)")
    conn.execute(
        "INSERT INTO events(event_id, type, tenant, agent, occurred_at, recorded_at, payload)"
        " VALUES ('E1', 'memory.stored', 'alpha', 'default', 'x', 'x', '{}')"
    )
    conn.close()
    store = SqliteRecordStore(path)
    # The same record id and event id in another tenant no longer collide.
    with store.transaction() as tx:
        shared = Record(
            id="01SHARED", version=1, tenant="beta", agent="default", body="b", text_hash="h"
        )
        tx.insert_records([NewRow(shared)])
        from cairn.model import Event

        assert tx.append_events([Event("E1", "memory.stored", "beta", "default", {}, "x")]) == [
            True
        ]
    assert store.get("alpha", "default", "01SHARED").body == "alpha's rule about pnpm"  # type: ignore[union-attr]
    assert store.get("beta", "default", "01SHARED").body == "b"  # type: ignore[union-attr]
    tables = {r[0] for r in store._all("SELECT name FROM sqlite_master WHERE type='table'", ())}
    assert "entities" not in tables and "record_entities" not in tables  # no plain-text keys
    (blob,) = store._all("SELECT entity_keys FROM record_terms WHERE row = 1", ())
    assert blob[0] is not None and len(blob[0]) == 8
    store.close()


def test_newer_schema_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "new.db"
    SqliteRecordStore(path).close()
    conn = sqlite3.connect(path)
    conn.execute("INSERT INTO schema_version VALUES (99, 'future')")
    conn.commit()
    conn.close()
    with pytest.raises(StorageError, match="newer than this cairn"):
        SqliteRecordStore(path)


@pytest.mark.parametrize(
    ("content", "error", "words"),
    [
        (b"this is not a database at all", InvalidInput, "not a cairn memory file"),
        # an SQLite header over garbage: a store whose pages were lost
        (b"SQLite format 3\x00" + b"\xff" * 200, DamagedStore, "is damaged.*cairn doctor"),
        (b"", DamagedStore, "is empty"),
    ],
)
def test_a_file_that_is_not_a_memory_file_is_one_clear_error(
    tmp_path: Path, content: bytes, error: type[Exception], words: str
) -> None:
    path = tmp_path / "notes.db"
    path.write_bytes(content)
    with pytest.raises(error, match=words):
        SqliteRecordStore(path)
    assert path.read_bytes() == content  # untouched


def test_another_programs_database_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "other.db"
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE invoices (id INTEGER)")
    conn.commit()
    conn.close()
    before = path.read_bytes()
    with pytest.raises(InvalidInput, match="another program"):
        SqliteRecordStore(path)
    assert path.read_bytes() == before  # not even its journal mode changed


def test_a_folder_is_not_a_memory_file(tmp_path: Path) -> None:
    with pytest.raises(InvalidInput, match="is a folder"):
        SqliteRecordStore(tmp_path)


def test_trust_check_constraint(tmp_path: Path) -> None:
    store = SqliteRecordStore(tmp_path / "c.db")
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


def test_v5_file_gains_outcome_provenance_and_telemetry(tmp_path: Path) -> None:
    path = tmp_path / "v5.db"
    conn = make_file(path, 5)
    conn.execute(
        "INSERT INTO applications(tenant, agent, application_id, record_id, record_version,"
        " task, delivery, created_at, outcome) VALUES ('t', 'a', 'APP', 'R', 1, 'x',"
        " 'resident', '2026', 'ignored')"
    )
    conn.close()
    store = SqliteRecordStore(path)
    (old,) = store.applications("t", "a")
    assert (old.outcome, old.outcome_source, old.outcome_session) == ("ignored", None, None)
    with store.transaction() as tx:
        tx.set_outcome("t", "a", "APP", "contributed-to-failure", "2027", source="observed")
        tx.add_counters("t", "a", {"reflect:admitted": 2})
    assert store.applications("t", "a")[0].outcome_source == "observed"
    assert store.counters("t", "a") == {"a": {"reflect:admitted": 2.0}}
    conn = sqlite3.connect(path)
    with pytest.raises(sqlite3.IntegrityError):  # only the known judges of an outcome
        conn.execute("UPDATE applications SET outcome_source = 'anyone'")
    conn.close()
    store.close()
