"""A permanent forget interrupted after its commit is finished at the next open."""

from __future__ import annotations

from pathlib import Path

import pytest

from cairn import Memory
from cairn.errors import StorageError
from cairn.storage.sqlite.record_store import SqliteRecordStore

SECRET = "quarblewick zentrofax vault code 9931"


def all_bytes(folder: Path) -> bytes:
    return b"".join(p.read_bytes() for p in folder.rglob("*") if p.is_file())


def test_a_purge_whose_after_work_failed_is_finished_on_the_next_open(
    tmp_path: Path,
    embedder,
    clock,
    monkeypatch: pytest.MonkeyPatch,  # type: ignore[no-untyped-def]
) -> None:
    path = tmp_path / "memory.db"
    mem = Memory.open(path, config={}, embedder=embedder, clock=clock)
    rule = mem.remember(SECRET)  # explicit: it is in profile.md too
    assert SECRET.encode() in (tmp_path / "profile.md").read_bytes()

    def held(self: SqliteRecordStore) -> None:
        raise StorageError("the WAL is held by another reader")

    monkeypatch.setattr(SqliteRecordStore, "checkpoint", held)  # as if a reader held the WAL
    response = mem.forget(rule.id, permanent=True)
    assert response.permanent
    pending = mem.provider.ports.records.pending_purges()  # type: ignore[attr-defined]
    assert [p.record_id for p in pending] == [rule.id]  # committed, but not finished
    mem.close()
    monkeypatch.undo()

    again = Memory.open(path, config={}, embedder=embedder, clock=clock)  # finishes it
    assert again.provider.ports.records.pending_purges() == []  # type: ignore[attr-defined]
    again.close()
    assert SECRET.encode() not in all_bytes(tmp_path)
