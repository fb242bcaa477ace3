"""A home is private: made so, and an older loose one tightened (and said once)."""

from __future__ import annotations

import os
import stat
from pathlib import Path

from cairn.homes import make_private, make_private_folder, open_private


def _mode(path: Path) -> int:
    return stat.S_IMODE(os.lstat(path).st_mode)


def test_a_loose_home_and_all_in_it_are_tightened_once(tmp_path: Path) -> None:
    home = tmp_path / "home"
    (home / "projects").mkdir(parents=True)
    for name in ("memory.db", "memory.db-wal", "profile.md", "projects/shop.md", "backup.jsonl"):
        (home / name).write_text("x")
        os.chmod(home / name, 0o644)
    os.chmod(home, 0o755)
    os.symlink("/etc/hostname", home / "link")
    notice = make_private(home, home / "memory.db")
    assert notice is not None and notice.startswith(f"made {home} (mode 0755) and 6 more")
    assert _mode(home) == _mode(home / "projects") == 0o700
    for name in ("memory.db", "memory.db-wal", "profile.md", "projects/shop.md", "backup.jsonl"):
        assert _mode(home / name) == 0o600, name
    assert _mode(Path("/etc/hostname")) & 0o044  # a link's target is not ours to change
    assert make_private(home, home / "memory.db") is None  # said once: now it is private


def test_a_store_outside_the_home_has_only_its_own_files_tightened(tmp_path: Path) -> None:
    shared = tmp_path / "shared"
    shared.mkdir()
    os.chmod(shared, 0o755)
    for name in ("team.db", "team.db-shm", "team.db.ann", "notes.txt"):
        (shared / name).write_text("x")
        os.chmod(shared / name, 0o644)
    make_private(tmp_path / "home", shared / "team.db")
    assert [_mode(shared / n) for n in ("team.db", "team.db-shm", "team.db.ann")] == [0o600] * 3
    assert _mode(shared / "notes.txt") == 0o644 and _mode(shared) == 0o755


def test_files_are_born_private(tmp_path: Path) -> None:
    folder = make_private_folder(tmp_path / "a" / "logs")
    with open_private(folder / "errors.log") as log:
        log.write("one\n")
    with open_private(folder / "errors.log") as log:
        log.write("two\n")
    assert _mode(folder) == 0o700 and _mode(folder / "errors.log") == 0o600
    assert _mode(tmp_path / "a") == 0o700  # the folder made on the way too, not the umask's
    assert (folder / "errors.log").read_text() == "one\ntwo\n"
    with open_private(folder / "marker", "w") as out:
        out.write("only this")
    assert (folder / "marker").read_text() == "only this"


def test_a_store_opened_by_path_leaves_the_other_files_of_its_folder(tmp_path: Path) -> None:
    from cairn import Memory

    data = tmp_path / "data"
    data.mkdir()
    (data / "notes.txt").write_text("the application's own file")
    os.chmod(data / "notes.txt", 0o644)
    with Memory.open(data / "memory.db", {"memory": {"embeddings": {"provider": "hashing"}}}) as m:
        m.remember("a note")
    assert _mode(data / "memory.db") == 0o600
    assert _mode(data / "notes.txt") == 0o644
