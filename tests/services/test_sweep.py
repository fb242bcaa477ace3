"""The forgetting sweep: exemptions hold whatever the failures, disuse evicts, unevict
reverses, thresholds come from config; evicted rows still answer as_of."""

from __future__ import annotations

from pathlib import Path

from .support import delivered, docs, open_mem, succeed


def test_pinned_system_and_well_proven_memories_are_exempt(tmp_path: Path, clock) -> None:
    learning = {"forget": {"failureEvictionFloor": 2, "highProofFloor": 3}}
    with open_mem(tmp_path / "m.db", clock, learning) as mem:
        # (a failing doc is also demoted, and once archived no longer delivered)
        pinned = mem.remember(
            "Ship only from main", kind="policy", pinned=True, operations=["ship"]
        )
        system = mem.remember(
            "Ship with make ship", kind="policy", trust="system", operations=["ship"]
        )
        plain = mem.store("Ship on Fridays", kind="policy", operations=["ship"])
        said = mem.remember("Ship with a changelog", kind="policy", operations=["ship"])
        for key in ("a", "b"):
            succeed(mem, key, "Tag the release before you ship", operations=["ship"])
        mem.reflect()
        (doc,) = docs(mem)
        for i in range(3):
            apps = delivered(mem, "ship it", operation="ship")
            mem.observe(True, applications=[apps[doc.id]], event_id=f"ok{i}")
        for i in range(4):  # induced, counted failures against all of them
            apps = delivered(mem, "ship it", operation="ship")
            ids = [apps[r] for r in (pinned.id, system.id, plain.id, doc.id, said.id) if r in apps]
            mem.observe(False, applications=ids, deterministic=True, event_id=f"bad{i}")
        assert all(mem.get(r.id).failure_count == 4 for r in (pinned, system))
        assert mem.get(doc.id).failure_count >= 2
        swept = mem.sweep()
        assert [r.id for r in (pinned, system, doc) if mem.get(r.id).evicted_at] == []
        # An inferred rule with no success is retired by its first counted failure.
        assert mem.get(plain.id).state == "superseded"
        # The user's own rule is theirs: not evicted, flagged for their review instead.
        kept = mem.get(said.id)
        assert kept.evicted_at is None and kept.state == "proven" and kept.failure_count == 4
        flagged = {f["record_id"]: f["question"] for f in mem.explain()["review"]}
        assert set(flagged) == {said.id, system.id}  # the pinned one the user kept already
        assert "followed by 4 failures; keep, correct or forget?" in flagged[said.id]
        assert swept.ran


def test_disuse_evicts_and_unevict_reverses_for_good(tmp_path: Path, clock) -> None:
    learning = {"forget": {"maxDormantDays": 30}}
    with open_mem(tmp_path / "m.db", clock, learning) as mem:
        old = mem.store("The staging host is stage-2", kind="fact")
        said = mem.remember("The billing database's owner is Dana", kind="fact")
        before = clock.now.isoformat()
        clock.advance(days=31)
        fresh = mem.store("The staging host is stage-3", kind="fact")
        swept = mem.sweep()
        # What the user said is never evicted for disuse: only the inferred memory is.
        assert [(e["record_id"], e["reason"]) for e in swept.evicted] == [(old.id, "dormant")]
        assert mem.get(said.id).evicted_at is None
        assert mem.get(fresh.id).evicted_at is None
        assert old.id not in {m.record.id for m in mem.recall("staging host").memories}
        # Still inspectable, and as memory stood before, it was there.
        assert mem.get(old.id).evicted_at is not None
        then = mem.recall("staging host", as_of=before)
        assert [m.record.id for m in then.memories] == [old.id]
        mem.unevict(old.id)
        assert mem.sweep().evicted == []  # not evicted again for the idleness the user saw
        assert old.id in {m.record.id for m in mem.recall("staging host").memories}


def test_learning_off_stops_the_sweep(tmp_path: Path, clock) -> None:
    with open_mem(tmp_path / "m.db", clock, {"enabled": False}) as mem:
        mem.remember("The staging host is stage-2", kind="fact")
        clock.advance(days=400)
        swept = mem.sweep()
        assert not swept.ran and mem.list()[0].evicted_at is None
