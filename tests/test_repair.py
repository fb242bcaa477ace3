"""``cairn doctor --repair``'s engine: a damaged store rebuilt from what of its journal can
be read, then from its Markdown files; the damaged file kept, nothing made up."""

from __future__ import annotations

from pathlib import Path

import pytest

from cairn import Memory
from cairn.compose import open_provider, resolve
from cairn.errors import InvalidInput
from cairn.provider.local import LocalProvider
from cairn.repair import repair_store

CONFIG = {"memory": {"embeddings": {"provider": "hashing"}}}


def _fresh(home: Path):  # type: ignore[no-untyped-def]
    def open_store(path: Path) -> LocalProvider:
        provider = open_provider(resolve(CONFIG), path=path, home=home, markdown=False)
        assert isinstance(provider, LocalProvider)
        return provider

    return open_store


def _ids(path: Path, tenant: str = "default") -> list[str]:
    with Memory.open(path, CONFIG, tenant=tenant) as mem:
        return sorted(r.id for r in mem.list(limit=100_000))


def test_flipped_bytes_are_repaired_from_the_journal(tmp_path: Path) -> None:
    path = tmp_path / "memory.db"
    with Memory.open(path, CONFIG) as mem, Memory.open(path, CONFIG, tenant="acme") as other:
        for i in range(60):
            mem.remember(f"note {i} of the default tenant " + "y" * 400)
        other.remember("acme's own note")
    ids, acme = _ids(path), _ids(path, "acme")
    data = bytearray(path.read_bytes())
    middle = len(data) // 2
    data[middle : middle + 8192] = bytes(b ^ 0xFF for b in data[middle : middle + 8192])
    path.write_bytes(bytes(data))
    damaged = bytes(data)
    report = repair_store(path, _fresh(tmp_path))
    assert report.kept is not None and report.kept.read_bytes() == damaged
    assert report.replayed == report.events
    # what the journal lost, the damaged file's rows give back: every memory is there
    assert _ids(path, "acme") == acme
    assert _ids(path) == ids
    assert report.events + report.from_rows >= len(ids) + len(acme)


def test_an_empty_file_comes_back_from_the_markdown_files(tmp_path: Path) -> None:
    path = tmp_path / "memory.db"
    with Memory.open(path, CONFIG) as mem:
        mem.remember("Always run make lint before committing.")
        mem.remember("The user prefers tabs.")
    ids = _ids(path)
    path.write_bytes(b"")
    for side in ("-wal", "-shm"):
        Path(f"{path}{side}").unlink(missing_ok=True)
    report = repair_store(path, _fresh(tmp_path))
    assert (report.events, report.from_markdown) == (0, 2)
    assert _ids(path) == ids


def test_another_programs_file_is_left_alone(tmp_path: Path) -> None:
    import sqlite3

    path = tmp_path / "memory.db"
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE invoices (id INTEGER)")
    before = path.read_bytes()
    with pytest.raises(InvalidInput, match="not a cairn store"):
        repair_store(path, _fresh(tmp_path))
    assert path.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["memory.db"]
