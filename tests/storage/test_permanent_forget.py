"""A permanent forget leaves no byte of the body anywhere under the cairn home."""

from __future__ import annotations

import random
from collections.abc import Iterator
from pathlib import Path

from cairn import Memory, MemoryInput
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


_FILLER = (
    ("blue", "quiet", "late", "shared", "small", "remote", "nightly", "careful"),
    ("lantern", "build", "ledger", "garden", "deploy", "invoice", "review", "kettle"),
    ("sits", "runs", "waits", "breaks", "ships", "moves", "stays", "fails"),
    (
        "near the door",
        "after lunch",
        "on Fridays",
        "in staging",
        "before the release",
        "at the office",
        "every morning",
        "under load",
    ),
)


def _words() -> Iterator[str]:
    """Unique fixed-length words: zqbbbm + four letters + q."""
    letters = "bcdfghjklmnpvwxz"
    for n in range(16**4):
        yield "zqbbbm" + "".join(letters[(n >> (4 * i)) & 15] for i in (3, 2, 1, 0)) + "q"


def _body(word: str, rng: random.Random, secret: str | None = None) -> str:
    adj, noun, verb, place = (rng.choice(options) for options in _FILLER)
    text = f"{word} note: the {adj} {noun} {verb} {place}, filed under {word}."
    return text + (f" The vault phrase is {secret}." if secret is not None else "")


def test_no_stale_copy_survives_in_pages_still_in_use(tmp_path: Path, embedder, clock) -> None:
    """secure_delete zeroes a deleted cell, but a b-tree balance can leave a copy of a moved
    cell in the free space of a page still in use (found by the kill harness: a purged
    row's term keys in a record_terms page); finishing the purge rewrites the file. Without
    that rewrite, this seeded sequence left such copies of five purged words."""
    home = tmp_path / "home"
    config = {"memory": {"markdown": {"enabled": False}}}
    mem = Memory.open(home / "memory.db", config=config, embedder=embedder, clock=clock)
    rng, words = random.Random(6), _words()
    bodies = [_body(next(words), rng) for _ in range(60)]
    ids = mem.store_many([MemoryInput(body=b) for b in bodies])
    live = {i: {b.split()[0]} for i, b in zip(ids, bodies, strict=True)}
    secrets: dict[str, str] = {}
    gone: set[str] = set()
    for _ in range(500):
        op = rng.choices(["remember", "store", "correct", "purge"], [30, 10, 20, 40])[0]
        if op in ("remember", "store"):
            word, secret = next(words), next(words)
            write = mem.remember if op == "remember" else mem.store
            record_id = write(_body(word, rng, secret)).id
            live[record_id], secrets[record_id] = {word, secret}, secret
        elif op == "correct":
            record_id, word = rng.choice(sorted(live)), next(words)
            mem.correct(record_id, _body(word, rng, secrets.get(record_id)))
            live[record_id].add(word)
        else:
            record_id = rng.choice(sorted(live))
            mem.forget(record_id, permanent=True)
            gone |= live.pop(record_id)
    mem.close()
    data = all_bytes(home)
    keys = {w: term_key(w).to_bytes(8, "little", signed=True) for w in sorted(gone)}
    assert [w for w, key in keys.items() if key in data or w.encode() in data] == []
    assert all(w.encode() in data for kept in live.values() for w in kept)  # it can fail
