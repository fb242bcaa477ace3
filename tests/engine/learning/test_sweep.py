"""The forgetting sweep: failures and disuse evict; pinned, system and proven are exempt."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime

from cairn.engine.learning.sweep import SweepRules, decide, exemption, idle_before

from .support import doc

RULES = SweepRules(max_dormant_days=365, failure_floor=3, high_proof_floor=5)
NOW = datetime(2027, 6, 1, tzinfo=UTC)


def test_failures_at_the_floor_evict() -> None:
    failing = doc("D", "x", failure_count=3, recorded_at="2027-05-01T00:00:00.000000Z")
    evicted = decide(failing, RULES, NOW)
    assert evicted is not None and evicted.reason == "failures"
    assert decide(replace(failing, failure_count=2), RULES, NOW) is None
    # Wrong fades faster than old: the same age, more failures, lower strength.
    healthy = decide(replace(failing, recorded_at="2026-01-01T00:00:00.000000Z"), RULES, NOW)
    assert healthy is not None
    assert evicted.strength > 0.5


def test_disuse_beyond_the_dormant_days_evicts() -> None:
    old = doc("D", "x", recorded_at="2026-05-01T00:00:00.000000Z")
    assert decide(old, RULES, NOW) is not None and decide(old, RULES, NOW).reason == "dormant"  # type: ignore[union-attr]
    used = replace(old, last_applied_at="2027-01-01T00:00:00.000000Z")
    assert decide(used, RULES, NOW) is None
    assert idle_before(NOW, RULES) == "2026-06-01T00:00:00.000000Z"


def test_exemptions() -> None:
    failing = doc("D", "x", failure_count=9, recorded_at="2020-01-01T00:00:00.000000Z")
    for exempt, why in (
        (replace(failing, pinned=True), "pinned"),
        (replace(failing, trust="system", origin="user"), "system"),
        (replace(failing, proof_count=5), "high-proof"),
    ):
        assert exemption(exempt, RULES) == why
        assert decide(exempt, RULES, NOW) is None
    assert decide(replace(failing, proof_count=4), RULES, NOW) is not None


def test_an_unevicted_memory_is_not_evicted_again_for_what_the_user_saw() -> None:
    kept = doc(
        "D",
        "x",
        failure_count=3,
        recorded_at="2020-01-01T00:00:00.000000Z",
        source={"unevicted": {"at": "2027-05-01T00:00:00.000000Z", "failure_count": 3}},
    )
    assert decide(kept, RULES, NOW) is None
    again = decide(replace(kept, failure_count=4), RULES, NOW)
    assert again is not None and again.reason == "failures"
