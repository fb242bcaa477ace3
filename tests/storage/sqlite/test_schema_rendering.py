"""The SQLite file's schema, rendered from the one description both stores share, is the
schema the hand-written scripts made: for a new file, at every version from 5 on, and for a
file of any older version upgraded in place."""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from pathlib import Path

import pytest

from cairn.storage.sqlite import migrate as migrate_module
from cairn.storage.sqlite.record_store import SqliteRecordStore
from cairn.storage.sqlite.schema import LATEST_VERSION, MIGRATIONS
from schema_support import frozen, sqlite_catalog

FROZEN = frozen("sqlite")


def build(
    path: Path, migrations: Sequence[tuple[int, str]], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A file made by the store's own migration code running ``migrations`` (and the work
    it does in Python after versions 4 and 5), up to their last version."""
    with monkeypatch.context() as patch:
        patch.setattr(migrate_module, "MIGRATIONS", tuple(migrations))
        patch.setattr(migrate_module, "LATEST_VERSION", migrations[-1][0])
        conn = sqlite3.connect(path, isolation_level=None)
        try:
            migrate_module.migrate(conn, path, None)
        finally:
            conn.close()


def test_the_frozen_copy_is_the_whole_history() -> None:
    assert [v for v, _ in FROZEN] == [v for v, _ in MIGRATIONS] == list(range(1, 9))
    assert LATEST_VERSION == 8
    # versions 1 to 4 are SQLite's own history, kept as they were written
    assert [s for _, s in FROZEN[:4]] == [s.strip() + "\n" for _, s in MIGRATIONS[:4]]


def test_a_new_file_gets_exactly_the_schema_the_hand_written_scripts_made(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    build(tmp_path / "frozen.db", FROZEN, monkeypatch)
    SqliteRecordStore(tmp_path / "frozen.db").close()  # opened by this cairn: nothing to apply
    SqliteRecordStore(tmp_path / "new.db").close()
    old, new = sqlite_catalog(tmp_path / "frozen.db"), sqlite_catalog(tmp_path / "new.db")
    assert sorted(old) == sorted(new)
    for name in old:
        assert new[name] == old[name], name
    assert (
        "table records" in new
        and "index records_hash" in new
        and new["versions"] == list(range(1, 9))
    )


@pytest.mark.parametrize("version", [5, 6, 7, 8])
def test_each_rendered_version_leaves_the_schema_its_script_left(
    version: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    build(tmp_path / "frozen.db", FROZEN[:version], monkeypatch)
    build(tmp_path / "new.db", MIGRATIONS[:version], monkeypatch)
    assert sqlite_catalog(tmp_path / "new.db") == sqlite_catalog(tmp_path / "frozen.db")


@pytest.mark.parametrize("version", [1, 4, 5, 6, 7])
def test_a_file_of_an_older_version_upgrades_to_the_same_schema(
    version: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    build(tmp_path / "old.db", FROZEN[:version], monkeypatch)
    SqliteRecordStore(tmp_path / "old.db").close()  # only the versions after its own run
    SqliteRecordStore(tmp_path / "new.db").close()
    upgraded, new = sqlite_catalog(tmp_path / "old.db"), sqlite_catalog(tmp_path / "new.db")
    assert upgraded == new


def test_the_comparison_sees_a_changed_column(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    build(tmp_path / "frozen.db", FROZEN, monkeypatch)
    changed = (
        *FROZEN[:-1],
        (8, FROZEN[-1][1].replace("text_hash, recorded_at", "text_hash DESC, recorded_at")),
    )
    build(tmp_path / "changed.db", changed, monkeypatch)
    old, new = sqlite_catalog(tmp_path / "frozen.db"), sqlite_catalog(tmp_path / "changed.db")
    assert old["index records_hash"] != new["index records_hash"]
    relaxed = (
        *FROZEN[:4],
        (5, FROZEN[4][1].replace("trust TEXT NOT NULL", "trust TEXT")),
        *FROZEN[5:],
    )
    build(tmp_path / "relaxed.db", relaxed, monkeypatch)
    assert sqlite_catalog(tmp_path / "relaxed.db")["table records"] != old["table records"]
