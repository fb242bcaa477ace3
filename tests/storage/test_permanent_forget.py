"""A permanent forget leaves no byte of the body anywhere under the cairn home."""

from __future__ import annotations

from pathlib import Path

from cairn import Memory
from cairn.storage.terms import term_key

SECRET = "Xylophonic quarblewick zentrofax 7741: the vault code is 9931-alpha"
CORRECTED = "Xylophonic quarblewick zentrofax 7741: the vault code is now 4410-omega"
NEEDLES = [b"quarblewick", b"zentrofax", b"9931-alpha", b"4410-omega", b"Xylophonic"]
TERM_NEEDLES = [
    term_key(word).to_bytes(8, "little", signed=True) for word in ("quarblewick", "zentrofax")
]


def all_bytes(home: Path) -> bytes:
    return b"".join(p.read_bytes() for p in sorted(home.rglob("*")) if p.is_file())


def test_permanent_forget_purges_records_indexes_journal_free_pages_and_wal(
    tmp_path: Path, embedder, clock
) -> None:
    home = tmp_path / "home"
    mem = Memory.open(home / "memory.db", config={}, embedder=embedder, clock=clock)
    for i in range(60):
        mem.store(f"ordinary memory number {i} about gardening and tomatoes")
    rec = mem.store(SECRET, title="zentrofax vault", tags=["quarblewick"])
    mem.correct(rec.id, CORRECTED)
    for i in range(20):
        mem.store(f"later memory {i} about bicycles")
    # The needles are really on disk before the forget (the check can fail), the keyword
    # index's term keys of the secret words included.
    assert all(n in all_bytes(home) for n in NEEDLES[:3] + TERM_NEEDLES)

    mem.forget(rec.id, permanent=True)

    # Still fully usable, and the tombstone keeps only a hash.
    assert mem.recall("gardening tomatoes").memories
    assert all(m.record.id != rec.id for m in mem.recall("zentrofax vault code").memories)
    stone = mem.tombstones()[0]
    assert stone.permanent and len(stone.text_hash) == 64
    journal = [e.payload for e in mem.journal()]
    assert any(p.get("record_id") == rec.id for p in journal)
    mem.close()

    data = all_bytes(home)
    for needle in NEEDLES + TERM_NEEDLES:
        assert needle not in data, f"{needle!r} survived a permanent forget"
    assert b"ordinary memory number 59" in data  # the rest is intact


def test_permanent_forget_survives_rebuild(tmp_path: Path, embedder, clock) -> None:
    mem = Memory.open(tmp_path / "m.db", config={}, embedder=embedder, clock=clock)
    rec = mem.store(SECRET)
    mem.store("something else entirely")
    mem.forget(rec.id, permanent=True)
    mem.rebuild()
    assert [r.body for r in mem.list()] == ["something else entirely"]
    assert all(c.record.id != rec.id for c in mem.recall("quarblewick vault").ranked)
    mem.close()
    data = all_bytes(tmp_path)
    assert not any(n in data for n in NEEDLES)
