"""The store's file: made whole and private, refused when it is empty or someone else's,
opened for reading when it cannot be written, and SQLite's failures said as what they
are (a full disk on a real tmpfs, a read-only file system on a real read-only mount)."""

from __future__ import annotations

import os
import sqlite3
import stat
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from cairn.errors import DamagedStore, DiskFull, InvalidInput, ReadOnlyStore, StorageError
from cairn.model import Event
from cairn.storage.sqlite import files
from cairn.storage.sqlite.record_store import SqliteRecordStore
from reliability.faults import read_only_view, small_disk


def _mode(path: Path) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


def _event(n: int, body: str = "x") -> Event:
    return Event(
        event_id=f"e{n}", type="test.note", tenant="default", agent="default",
        occurred_at="2026-06-01T12:00:00.000000Z", recorded_at="2026-06-01T12:00:00.000000Z",
        payload={"body": body},
    )  # fmt: skip


def _write(store: SqliteRecordStore, n: int, body: str = "x") -> None:
    with store.transaction() as tx:
        tx.append_events([_event(n, body)])


def _events(store: SqliteRecordStore) -> list[str]:
    return [e.event_id for e in store.events("default", None)]


def test_a_new_store_is_private_from_its_first_byte(tmp_path: Path) -> None:
    path = tmp_path / "home" / "memory.db"
    store = SqliteRecordStore(path)
    try:
        _write(store, 1)
        assert _mode(path.parent) == 0o700
        for name in ("memory.db", "memory.db-wal", "memory.db-shm"):
            assert _mode(path.parent / name) == 0o600, name
        assert sorted(os.listdir(path.parent)) == ["memory.db", "memory.db-shm", "memory.db-wal"]
    finally:
        store.close()


def test_stores_made_at_once_by_two_openers_are_one(tmp_path: Path) -> None:
    path = tmp_path / "memory.db"
    first, second = SqliteRecordStore(path), SqliteRecordStore(path)
    try:
        _write(first, 1)
        _write(second, 2)
        assert _events(first) == ["e1", "e2"] == _events(second)
    finally:
        first.close()
        second.close()


@pytest.mark.parametrize(
    ("content", "error", "words"),
    [
        (b"", DamagedStore, r"is empty \(0 bytes\).*cairn doctor"),
        (b"hello, not a database", InvalidInput, "not an SQLite file"),
        (b"SQLite format 3\x00" + b"\x00" * 84, DamagedStore, "is damaged"),
    ],
)
def test_an_empty_or_foreign_file_is_never_a_new_store(
    tmp_path: Path, content: bytes, error: type[Exception], words: str
) -> None:
    path = tmp_path / "memory.db"
    path.write_bytes(content)
    with pytest.raises(error, match=words):
        SqliteRecordStore(path)
    assert path.read_bytes() == content
    assert sorted(os.listdir(tmp_path)) == ["memory.db"]  # no -wal, no -shm, no temp file


def test_the_errors_of_sqlite_are_said_as_what_they_are(tmp_path: Path) -> None:
    path = tmp_path / "memory.db"

    def error(code: int, text: str) -> sqlite3.Error:
        exc = sqlite3.OperationalError(text)
        exc.sqlite_errorcode = code  # type: ignore[attr-defined]
        return exc

    assert isinstance(files.failure(error(13, "database or disk is full"), path), DiskFull)
    damaged = files.failure(error(11, "database disk image is malformed"), path)
    assert isinstance(damaged, DamagedStore) and "cairn doctor --repair" in str(damaged)
    assert isinstance(files.failure(error(26, "file is not a database"), path), DamagedStore)
    assert isinstance(files.failure(error(5, "database is locked"), path), StorageError)
    assert "busy" in str(files.failure(error(5, "database is locked"), path))


@pytest.fixture
def disk(tmp_path: Path) -> Iterator[Path]:
    with small_disk(tmp_path / "disk", 1024) as mounted:
        if not mounted:
            pytest.skip("mounting a tmpfs is not permitted here")
        yield tmp_path / "disk"


def test_a_full_disk_says_so_changes_nothing_and_reads_go_on(disk: Path) -> None:
    store = SqliteRecordStore(disk / "memory.db")
    try:
        _write(store, 1, "kept")
        big = os.urandom(60_000).hex()
        with pytest.raises(DiskFull, match="is full: nothing was changed"):
            for n in range(2, 200):
                _write(store, n, big)
        written = _events(store)  # whatever committed before the disk filled
        with pytest.raises(DiskFull):
            _write(store, 1000, big)
        assert _events(store) == written and written[0] == "e1"
    finally:
        store.close()
    # the last connection is gone (its -shm with it) and not a byte is free: still reads
    filler = disk / "filler"
    try:
        with filler.open("wb") as out:
            while True:
                out.write(b"\0" * 4096)
                out.flush()
    except OSError:
        pass  # full (perhaps before the filler could even be made)
    reopened = SqliteRecordStore(disk / "memory.db")
    try:
        assert _events(reopened) == written
        with pytest.raises(DiskFull):
            _write(reopened, 2000, big)
    finally:
        reopened.close()
    filler.unlink(missing_ok=True)
    (disk / "memory.db-shm").unlink(missing_ok=True)  # left at 0 bytes by the full disk


def test_a_read_only_file_system_still_reads_and_refuses_writes(tmp_path: Path) -> None:
    store = SqliteRecordStore(tmp_path / "home" / "memory.db")
    _write(store, 1)
    store.close()  # the last one: -wal and -shm are gone, as after any command
    with read_only_view(tmp_path / "home", tmp_path / "view") as mounted:
        if not mounted:
            pytest.skip("a read-only bind mount is not permitted here")
        seen = SqliteRecordStore(tmp_path / "view" / "memory.db")
        try:
            assert seen.read_only == "it is on a read-only file system"
            assert _events(seen) == ["e1"]
            with pytest.raises(ReadOnlyStore, match=r"cannot be written.*reads work"):
                _write(seen, 2)
        finally:
            seen.close()


def test_an_immutable_file_is_read_only_even_for_root(tmp_path: Path) -> None:
    path = tmp_path / "memory.db"
    store = SqliteRecordStore(path)
    _write(store, 1)
    store.close()
    if subprocess.run(["chattr", "+i", str(path)], capture_output=True).returncode != 0:
        pytest.skip("chattr +i is not available on this file system")
    try:
        seen = SqliteRecordStore(path)
        try:
            assert seen.read_only == "the file is read-only"
            assert _events(seen) == ["e1"]
            with pytest.raises(ReadOnlyStore):
                _write(seen, 2)
        finally:
            seen.close()
    finally:
        subprocess.run(["chattr", "-i", str(path)], check=True)
