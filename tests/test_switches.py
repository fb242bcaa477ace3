"""The switches (SPEC §7): learning off keeps the data and forms nothing new; retrieval
off stops giving memory to tasks while managing it keeps working."""

from __future__ import annotations

from pathlib import Path

from cairn import Memory
from cairn.adapters.hashing import HashingEmbedder
from services.support import open_mem, succeed


def test_retrieval_off_stops_delivering_memory_and_management_still_works(
    tmp_path: Path, clock
) -> None:
    path = tmp_path / "m.db"
    with open_mem(path, clock) as mem:
        rule = mem.remember("Always run make check before pushing", kind="policy")
    off = {"agents": {"default": {"retrieval": {"enabled": False}}}}
    with Memory.open(path, config=off, embedder=HashingEmbedder(), clock=clock) as mem:
        assert mem.recall("what to run before pushing").memories == ()
        ctx = mem.context("push the change")
        assert ctx.resident == () and ctx.manifest == ()
        assert not mem.ask("what to run before pushing?").answered
        assert [r.id for r in mem.list()] == [rule.id]
        assert mem.get(rule.id).body.startswith("Always")
        mem.correct(rule.id, "Always run make check-all before pushing")
        mem.forget(rule.id)
        mem.restore(rule.id)
        assert mem.get(rule.id).version == 2


def test_learning_off_keeps_the_docs_it_has(tmp_path: Path, clock) -> None:
    path = tmp_path / "m.db"
    with open_mem(path, clock) as mem:
        succeed(mem, "e1", "Run make check before pushing")
        succeed(mem, "e2", "Run make check before pushing")
        mem.reflect()
        (doc,) = mem.list()
    with open_mem(path, clock, {"enabled": False}) as mem:
        assert [r.id for r in mem.list()] == [doc.id]  # kept, and still delivered
        assert doc.id in {i.record_id for i in mem.context("push it").manifest}
        assert not succeed(mem, "e3", "Answer briefly").kept
        assert not mem.reflect().ran and not mem.sweep().ran
