"""Observe: effective sender trust, duplicates, learning off, outcomes through the
failure corroboration gate, eviction at the floor."""

from __future__ import annotations

from pathlib import Path

import pytest

from cairn.errors import InvalidInput, NotFound

from .support import delivered, docs, open_mem, succeed


def test_the_sender_trust_is_the_lower_of_the_operators_word_and_the_claim(
    tmp_path: Path, clock
) -> None:
    learning = {"senders": {"user": "system", "bot": "learned"}}
    with open_mem(tmp_path / "m.db", clock, learning) as mem:
        assert succeed(mem, "a", "x y z").sender_trust == "system"  # the owner, by default
        assert succeed(mem, "b", "x y z", sender="stranger").sender_trust == "external"
        assert succeed(mem, "c", "x y z", sender="bot", sender_trust="system").sender_trust == (
            "learned"  # a claim never raises trust
        )
        lowered = succeed(mem, "d", "x y z", sender_trust="external")
        assert lowered.sender_trust == "external"
        again = succeed(mem, "a", "x y z")
        assert (again.kept, again.duplicate) == (False, True)  # a duplicate id: a no-op
        events = {e.event_id: e for e in mem.journal()}
        assert events["a"].sender == "user" and events["a"].episode_id == "a"
        assert events["b"].payload["provenance"]["trust"] == "external"


def test_bad_observations_are_one_clear_error_and_change_nothing(tmp_path: Path, clock) -> None:
    with open_mem(tmp_path / "m.db", clock) as mem:
        with pytest.raises(InvalidInput, match="success"):
            mem.observe(None, note="x", event_id="k1")
        with pytest.raises(InvalidInput, match="application and outcome"):
            mem.observe(type="context.outcome", event_id="k2")
        with pytest.raises(NotFound, match="no application"):
            mem.observe(False, applications=["01NOSUCHAPPLICATION0000000"], event_id="k3")
        with pytest.raises(InvalidInput, match="content_trust"):
            mem.observe(True, note="x", content_trust="root", event_id="k4")
        assert mem.journal() == []


def test_with_learning_off_nothing_is_kept_and_the_same_observation_counts_later(
    tmp_path: Path, clock
) -> None:
    path = tmp_path / "m.db"
    with open_mem(path, clock, {"enabled": False}) as mem:
        for key in ("o1", "o2"):
            seen = succeed(mem, key, "Run make check before pushing")
            assert (seen.kept, seen.reason) == (False, "learning is off for this agent")
        assert mem.journal() == []
        assert not mem.reflect().ran
    with open_mem(path, clock) as mem:  # back on: the keys of the paused period are free
        assert all(succeed(mem, k, "Run make check before pushing").kept for k in ("o1", "o2"))
        assert mem.reflect().admitted == 1
        assert [d.body for d in docs(mem)] == ["Run make check before pushing"]


def _a_doc(mem, **fields):  # type: ignore[no-untyped-def]
    for key in ("s1", "s2"):
        succeed(mem, key, "Mock the orders queue in unit tests", operations=["test"], **fields)
    mem.reflect()
    (doc,) = docs(mem)
    return doc


def test_one_sessions_failures_never_count_two_sessions_and_deterministic_ones_do(
    tmp_path: Path, clock
) -> None:
    with open_mem(tmp_path / "m.db", clock) as mem:
        doc = _a_doc(mem)
        for i in range(4):  # an attacker's one session, failing again and again
            apps = delivered(mem, "test the orders queue", operation="test", session_id="evil")
            mem.observe(False, applications=[apps[doc.id]], session_id="evil", event_id=f"f{i}")
        assert mem.get(doc.id).failure_count == 0
        apps = delivered(mem, "test the orders queue", operation="test", session_id="s9")
        mem.observe(False, applications=[apps[doc.id]], session_id="s9", event_id="other")
        assert mem.get(doc.id).failure_count == 2  # two independent sessions agree
        untrusted = delivered(mem, "test the orders queue", operation="test")
        mem.observe(
            False,
            applications=[untrusted[doc.id]],
            sender="stranger",
            deterministic=True,
            session_id="s10",
            event_id="u",
        )
        assert mem.get(doc.id).failure_count == 2  # an untrusted sender's never counts
        apps = delivered(mem, "test the orders queue", operation="test")
        seen = mem.observe(
            False,
            applications=[apps[doc.id]],
            deterministic=True,
            command="pytest -q",
            session_id="s11",
            event_id="ci",
        )
        after = mem.get(doc.id)
        assert after.failure_count == 3 and after.evicted_at is not None  # at the floor
        assert [e["reason"] for e in seen.evicted] == ["failures"]
        assert mem.telemetry().agents["default"]["counters"]["learning:memory_evicted"] == 1


def test_successful_reuse_promotes_at_the_configured_proof_count(tmp_path: Path, clock) -> None:
    learning = {"reflect": {"promoteAtProofCount": 2}}
    with open_mem(tmp_path / "m.db", clock, learning) as mem:
        doc = _a_doc(mem)
        assert doc.state == "candidate"
        for i in range(2):
            apps = delivered(mem, "test the orders queue", operation="test")
            seen = mem.observe(True, applications=[apps[doc.id]], event_id=f"ok{i}")
        assert [t["to"] for t in seen.lifecycle] == ["active"]
        assert (mem.get(doc.id).state, mem.get(doc.id).proof_count) == ("active", 2)
        # An outcome on a single application: the context.outcome type.
        apps = delivered(mem, "test the orders queue", operation="test")
        mem.observe(
            type="context.outcome",
            application_id=apps[doc.id],
            outcome="ignored",
            event_id="ign",
        )
        assert mem.get(doc.id).ignored_count == 1
