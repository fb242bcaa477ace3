"""A home or database file that is not what cairn expects: one error line, never a
traceback, and nothing written to a file that is not cairn's."""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Callable
from pathlib import Path

import pytest

from cairn import CairnError, InvalidInput, Memory
from reliability.hostile_corpus import CONFIG, invoke

HASHING = {"memory": {"embeddings": {"provider": "hashing"}}}


def _cairn_db(path: Path) -> None:
    with Memory.open(path, HASHING) as mem:
        for i in range(40):
            mem.remember(f"memory number {i} about zebrafinches " + "x" * 200)


def _garbage(path: Path) -> None:
    path.write_bytes(b"this is a text file, not a database\n" * 20)


def _folder(path: Path) -> None:
    path.mkdir()


def _fifo(path: Path) -> None:
    os.mkfifo(path)


def _loop(path: Path) -> None:
    os.symlink(path, path)


def _dangling(path: Path) -> None:
    os.symlink(path.parent / "missing" / "memory.db", path)


def _header_only(path: Path) -> None:
    path.write_bytes(b"SQLite format 3\x00")


def _truncated(path: Path) -> None:
    _cairn_db(path)
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 3])


def _corrupted(path: Path) -> None:
    _cairn_db(path)
    data = bytearray(path.read_bytes())
    data[4096 : 4096 * 3] = b"\xff" * (4096 * 2)
    path.write_bytes(bytes(data))


def _foreign(path: Path) -> None:
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE invoices (id INTEGER PRIMARY KEY, amount REAL)")
    conn.execute("INSERT INTO invoices (amount) VALUES (12.5)")
    conn.commit()
    conn.close()


REFUSED: list[tuple[str, Callable[[Path], None]]] = [
    ("garbage", _garbage),
    ("folder", _folder),
    ("fifo", _fifo),
    ("symlink-loop", _loop),
    ("dangling-symlink", _dangling),
]
DAMAGED: list[tuple[str, Callable[[Path], None]]] = [
    ("header-only", _header_only),
    ("truncated", _truncated),
    ("corrupted", _corrupted),
]


def _home(tmp_path: Path) -> Path:
    home = tmp_path / "home"
    home.mkdir()
    (home / "config.yaml").write_text(CONFIG)
    return home


def _snapshot(path: Path) -> bytes | str:
    if path.is_symlink():
        return f"link:{os.readlink(path)}"
    if path.is_dir():
        return "dir:" + ",".join(sorted(os.listdir(path)))
    if path.is_fifo():
        return "fifo"
    return path.read_bytes()


def _assert_one_line(stderr: str) -> None:
    assert "Traceback" not in stderr
    lines = stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("cairn: error:"), stderr


@pytest.mark.parametrize(("name", "make"), REFUSED)
def test_a_database_path_that_is_not_a_database_is_refused(
    name: str, make: Callable[[Path], None], tmp_path: Path
) -> None:
    home = _home(tmp_path)
    db = home / "memory.db"
    make(db)
    before = _snapshot(db)
    for argv in (["list"], ["remember", "x"], ["status"]):
        result = invoke(home, *argv)
        assert result.exception is None or isinstance(result.exception, SystemExit)
        assert result.exit_code == 2, (name, argv, result.stderr)
        _assert_one_line(result.stderr)
    with pytest.raises(InvalidInput):
        Memory.open(db, HASHING)
    assert _snapshot(db) == before


@pytest.mark.parametrize("target", ["/dev/null", "/dev/zero"])
def test_a_device_as_the_store_path_is_refused(target: str, tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    (home / "config.yaml").write_text(
        f"memory:\n  store:\n    path: {target}\n  embeddings:\n    provider: hashing\n"
    )
    result = invoke(home, "list")
    assert result.exit_code == 2, result.stderr
    _assert_one_line(result.stderr)


@pytest.mark.parametrize(("name", "make"), DAMAGED)
def test_a_damaged_database_gives_one_line_not_a_traceback(
    name: str, make: Callable[[Path], None], tmp_path: Path
) -> None:
    home = _home(tmp_path)
    make(home / "memory.db")
    for argv in (["list"], ["recall", "zebrafinches"], ["remember", "x"]):
        result = invoke(home, *argv)
        assert result.exception is None or isinstance(result.exception, SystemExit), (
            f"{argv}: {result.exception!r}"
        )
        assert result.exit_code == 2, result.stderr
        _assert_one_line(result.stderr)
        assert "is damaged" in result.stderr and "cairn doctor" in result.stderr
    with pytest.raises(CairnError), Memory.open(home / "memory.db", HASHING) as mem:
        mem.recall("zebrafinches")


def test_another_applications_database_is_refused_and_left_alone(tmp_path: Path) -> None:
    home = _home(tmp_path)
    db = home / "memory.db"
    _foreign(db)
    before = db.read_bytes()
    result = invoke(home, "list")
    assert result.exit_code == 2, result.stderr
    _assert_one_line(result.stderr)
    assert db.read_bytes() == before


def test_an_empty_file_is_refused_not_taken_for_a_new_store(tmp_path: Path) -> None:
    home = _home(tmp_path)
    (home / "memory.db").write_bytes(b"")
    for argv in (["remember", "kept"], ["list"], ["export"]):
        result = invoke(home, *argv)
        assert result.exit_code == 2, (argv, result.stderr)
        _assert_one_line(result.stderr)
        assert "is empty (0 bytes)" in result.stderr and "cairn doctor" in result.stderr
    assert (home / "memory.db").read_bytes() == b""


def test_a_garbage_wal_file_loses_nothing(tmp_path: Path) -> None:
    home = _home(tmp_path)
    assert invoke(home, "remember", "kept across a garbage WAL").exit_code == 0
    (home / "memory.db-wal").write_bytes(b"garbage" * 100)
    result = invoke(home, "list")
    assert result.exit_code == 0 and "kept across a garbage WAL" in result.stdout


def test_a_home_that_is_a_file_is_refused(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.write_text("not a folder")
    result = invoke(home, "list")
    assert result.exit_code == 2 and "Traceback" not in result.stderr
    assert home.read_text() == "not a folder"


def test_a_home_whose_parent_is_a_file_is_refused(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("x")
    result = invoke(tmp_path / "file" / "home", "list")
    assert result.exit_code == 2, result.stderr
    _assert_one_line(result.stderr)
