"""The record store's learning queries, on every pair: the anti-poison filter is in the
query, sweep candidates, recent events, outcome provenance and telemetry counters."""

from __future__ import annotations

from typing import Any

from cairn.model import Application, Event
from cairn.storage.ports import RecordChange, SweepQuery, TrajectoryQuery

from .conftest import Pair, insert, record


def observed(event_id: str, *, tenant: str = "t1", **payload: Any) -> Event:
    base: dict[str, Any] = {
        "success": True,
        "note": f"what worked in {event_id}",
        "content_trust": "learned",
        "sender_trust": "system",
    }
    base.update(payload)
    return Event(event_id, "episode.completed", tenant, "a", base, "2026-01-01T00:00:00Z")


def test_trajectories_never_return_poisoned_failed_or_silent_observations(pair: Pair) -> None:
    with pair.records.transaction() as tx:
        tx.append_events(
            [
                observed("GOOD"),
                observed("EXTERNAL-CONTENT", content_trust="external"),
                observed("UNTRUSTED-SENDER", sender_trust="external"),
                observed("FAILED", success=False),
                observed("NO-NOTE", note=""),
                observed("STRING-TRUE", success="true"),  # only a real true is a success
                observed("MISSING-TRUST", content_trust=None),
                observed("OTHER-TENANT", tenant="t2"),
                Event("STORED", "memory.stored", "t1", "a", {"success": True}, "2026"),
                observed("GOOD-TOO", content_trust="system", sender_trust="learned"),
            ]
        )
    found = pair.records.trajectories(TrajectoryQuery("t1", "a"))
    assert [e.event_id for e in found] == ["GOOD", "GOOD-TOO"]
    seqs = [e.seq for e in found]
    assert all(isinstance(s, int) for s in seqs)
    after_first = pair.records.trajectories(TrajectoryQuery("t1", "a", after_seq=seqs[0] or 0))
    assert [e.event_id for e in after_first] == ["GOOD-TOO"]
    upto = pair.records.trajectories(TrajectoryQuery("t1", "a", through_seq=seqs[0]))
    assert [e.event_id for e in upto] == ["GOOD"]
    # A caller that widened the trust it admits sees exactly what it asked for, no more.
    wide = TrajectoryQuery("t1", "a", content_trust=("learned", "external"))
    assert [e.event_id for e in pair.records.trajectories(wide)] == ["GOOD", "EXTERNAL-CONTENT"]
    assert pair.records.trajectories(TrajectoryQuery("t1", "a", sender_trust=())) == []


def test_recent_events_newest_first_by_type(pair: Pair) -> None:
    with pair.records.transaction() as tx:
        tx.append_events(
            [
                Event("R1", "learning.reflected", "t1", "a", {"n": 1}, "2026"),
                Event("X", "memory.stored", "t1", "a", {}, "2026"),
                Event("R2", "learning.reflected", "t1", "a", {"n": 2}, "2026"),
                Event("R3", "learning.reflected", "t1", "b", {"n": 3}, "2026"),
                Event("R4", "learning.reflected", "t2", "a", {"n": 4}, "2026"),
            ]
        )
    store = pair.records
    assert [e.event_id for e in store.recent_events("t1", "a", ["learning.reflected"], 5)] == [
        "R2",
        "R1",
    ]
    assert [e.event_id for e in store.recent_events("t1", "a", None, 1)] == ["R2"]
    assert [e.event_id for e in store.recent_events("t1", None, ["learning.reflected"], 9)] == [
        "R3",
        "R2",
        "R1",
    ]
    assert store.recent_events("t1", "a", [], 5) == []


def test_sweep_candidates_leave_out_the_exempt(pair: Pair) -> None:
    old = "2020-01-01T00:00:00.000000Z"
    insert(
        pair.records,
        record("FAILING", "fails a lot", failure_count=3, recorded_at="2026-05-01"),
        record("IDLE", "not used for years", recorded_at=old),
        record("USED", "used lately", recorded_at=old, last_applied_at="2026-05-01"),
        record("PINNED", "pinned", failure_count=9, pinned=True),
        record("SYSTEM", "system", failure_count=9, trust="system"),
        record("PROVEN", "well proven", failure_count=9, proof_count=5),
        record("HEALTHY", "healthy", failure_count=1, recorded_at="2026-05-01"),
        record("GONE", "evicted already", failure_count=9, evicted_at="2026-05-02"),
        record("OTHER", "other tenant", failure_count=9, tenant="t2"),
    )
    query = SweepQuery("t1", "a", failure_floor=3, idle_before="2025-06-01", high_proof_floor=5)
    assert [r.id for r in pair.records.sweep_candidates(query)] == ["FAILING", "IDLE"]


def test_outcome_provenance_and_applications_of_one_memory(pair: Pair) -> None:
    app = Application("APP1", "t1", "a", "R1", 1, "task", "resident", ("why",), "2026-01-01")
    with pair.records.transaction() as tx:
        tx.put_applications(
            [
                app,
                Application("APP2", "t1", "a", "R1", 2, None, "manifest", (), "2026-01-02"),
                Application("APP3", "t1", "a", "R2", 1, None, "manifest", (), "2026-01-03"),
                Application("APP4", "t2", "a", "R1", 1, None, "manifest", (), "2026-01-04"),
            ]
        )
        tx.set_outcome(
            "t1", "a", "APP1", "contributed-to-failure", "2026-02", source="observed", session="s9"
        )
        assert [a.application_id for a in tx.applications_of("t1", "a", "R1")] == [
            "APP1",
            "APP2",
        ]
        judged = tx.application("t1", "a", "APP1")
        assert judged is not None
        assert (judged.outcome_source, judged.outcome_session) == ("observed", "s9")
    found = pair.records.applications_by_id("t1", "a", ["APP3", "APP1", "APP4", "NONE"])
    assert [a.application_id for a in found] == ["APP1", "APP3"]  # APP4 is another tenant's
    assert found[0].outcome_source == "observed"


def test_counters_add_up_per_namespace_and_roll_back(pair: Pair) -> None:
    store = pair.records
    with store.transaction() as tx:
        tx.add_counters("t1", "a", {"reflect:admitted": 2, "reflect:runs": 1})
        tx.add_counters("t1", "b", {"reflect:runs": 1})
        tx.add_counters("t2", "a", {"reflect:runs": 7})
    with store.transaction() as tx:
        tx.add_counters("t1", "a", {"reflect:admitted": 1.5})
    try:
        with store.transaction() as tx:
            tx.add_counters("t1", "a", {"reflect:admitted": 100})
            raise RuntimeError("crash")
    except RuntimeError:
        pass
    assert store.counters("t1", "a") == {"a": {"reflect:admitted": 3.5, "reflect:runs": 1.0}}
    assert store.counters("t1", None) == {
        "a": {"reflect:admitted": 3.5, "reflect:runs": 1.0},
        "b": {"reflect:runs": 1.0},
    }
    assert store.counters("t3", None) == {}


def test_a_learned_doc_can_never_be_system(pair: Pair) -> None:
    import pytest

    from cairn.errors import StorageError

    doc = record("DOC", "a learned doc", origin="reflection", trust="system", kind="skill")
    with pytest.raises(StorageError):
        insert(pair.records, doc)
    assert pair.records.get("t1", "a", "DOC") is None  # nothing written
    (row,) = insert(pair.records, record("DOC", "a learned doc", origin="reflection"))
    with pytest.raises(StorageError), pair.records.transaction() as tx:
        tx.update_record(row, RecordChange(trust="system"))
    assert pair.records.get("t1", "a", "DOC").trust == "learned"  # type: ignore[union-attr]
    insert(pair.records, record("SYS", "the operator's", origin="system", trust="system"))
