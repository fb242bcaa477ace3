"""Checking a store's file and reading the journal out of a damaged one."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from cairn import Memory
from cairn.storage.sqlite.doctor import check, salvage_events

HASHING = {"memory": {"embeddings": {"provider": "hashing"}, "markdown": {"enabled": False}}}


def _store(path: Path, count: int) -> None:
    with Memory.open(path, HASHING) as mem:
        for i in range(count):
            mem.remember(f"note {i} about zebrafinches " + "x" * 300)


def test_a_sound_store_passes_every_check(tmp_path: Path) -> None:
    _store(tmp_path / "memory.db", 5)
    findings = check(tmp_path / "memory.db")
    assert [f.check for f in findings] == [
        "file", "integrity", "schema", "journal", "versions", "keywords", "feed", "events",
    ]  # fmt: skip
    assert all(f.ok for f in findings), findings
    assert findings[-1].detail == "5 journal events"


def test_the_store_checks_find_what_the_integrity_check_cannot(tmp_path: Path) -> None:
    path = tmp_path / "memory.db"
    _store(path, 3)
    with sqlite3.connect(path) as conn:  # sound pages, broken store
        conn.execute("DELETE FROM record_terms WHERE row = (SELECT min(row) FROM records)")
        conn.execute("UPDATE events SET payload = '{not json' WHERE seq = 2")
    bad = {f.check: f for f in check(path) if not f.ok}
    assert set(bad) == {"keywords", "journal"}
    assert bad["keywords"].detail == "1 memory versions without their keyword row"


def test_a_damaged_file_is_found_and_its_journal_read_around_the_damage(
    tmp_path: Path,
) -> None:
    path = tmp_path / "memory.db"
    _store(path, 200)
    data = bytearray(path.read_bytes())
    middle = len(data) // 2
    data[middle : middle + 4096 * 3] = b"\xff" * (4096 * 3)
    path.write_bytes(bytes(data))
    findings = {f.check: f for f in check(path)}
    assert not findings["integrity"].ok
    salvage = salvage_events(path)
    seqs = [e.seq for e in salvage.events]
    assert seqs == sorted(seqs) and len(set(seqs)) == len(seqs)
    assert len(salvage.events) + salvage.unreadable >= 1
    assert all(e.payload for e in salvage.events)


def test_an_empty_or_missing_file_salvages_nothing_and_ends(tmp_path: Path) -> None:
    (tmp_path / "empty.db").write_bytes(b"")
    assert salvage_events(tmp_path / "empty.db").events == []
    assert salvage_events(tmp_path / "missing.db").events == []
    assert check(tmp_path / "missing.db")[0].ok  # no store yet: made on the first write
    assert not check(tmp_path / "empty.db")[0].ok
