"""Doc lifecycle: promotion at the proof count, demotion on sustained failing reuse."""

from __future__ import annotations

from dataclasses import replace

from cairn.engine.learning.lifecycle import LifecycleRules, transition

from .support import doc

RULES = LifecycleRules(promote_at=3, demote_at=2)


def _marked(record, proof: int, failures: int):  # type: ignore[no-untyped-def]
    return replace(record, source={"lifecycle": {"proof_count": proof, "failure_count": failures}})


def test_a_candidate_is_promoted_at_the_proof_count() -> None:
    candidate = doc("D", "x")
    assert transition(replace(candidate, proof_count=2), RULES) is None
    moved = transition(replace(candidate, proof_count=3), RULES)
    assert moved is not None and (moved.to_state, moved.event_type) == (
        "active",
        "lifecycle.promoted",
    )
    assert transition(replace(candidate, proof_count=3), LifecycleRules(4, 2)) is None


def test_sustained_failing_reuse_demotes_one_step_at_a_time() -> None:
    active = _marked(doc("D", "x", state="active", proof_count=3), 3, 0)
    assert transition(replace(active, failure_count=1), RULES) is None  # not sustained
    stale = transition(replace(active, failure_count=2), RULES)
    assert stale is not None and (stale.from_state, stale.to_state) == ("active", "stale")
    # Failures balanced by successes since the mark are not sustained.
    assert transition(replace(active, failure_count=2, proof_count=5), RULES) is None
    now_stale = _marked(replace(active, state="stale", failure_count=2), 3, 2)
    assert transition(replace(now_stale, failure_count=3), RULES) is None
    archived = transition(replace(now_stale, failure_count=4), RULES)
    assert archived is not None and archived.to_state == "archived"
    back = transition(replace(now_stale, proof_count=6), RULES)
    assert back is not None and (back.to_state, back.reason) == ("active", "restored")


def test_only_live_docs_move() -> None:
    rule = doc("R", "x", origin="user", authority="explicit", state="proven", proof_count=9)
    assert transition(rule, RULES) is None
    gone = doc("D", "x", proof_count=9, evicted_at="2026-07-01")
    assert transition(gone, RULES) is None


def test_pinned_and_well_proven_docs_are_never_demoted() -> None:
    rules = LifecycleRules(promote_at=3, demote_at=2, protect_at=5)
    attacked = _marked(doc("D", "x", state="active", proof_count=5, failure_count=9), 5, 0)
    assert transition(attacked, rules) is None
    assert transition(replace(attacked, proof_count=4), rules) is not None
    assert transition(replace(attacked, proof_count=4, pinned=True), rules) is None
