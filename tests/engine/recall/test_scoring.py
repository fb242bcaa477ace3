from __future__ import annotations

import math
from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest

from cairn.config import Boosts
from cairn.engine.recall import scoring
from cairn.model import Record
from cairn.timeutil import to_iso

NOW = datetime(2026, 6, 1, tzinfo=UTC)


def rec(**kw: object) -> Record:
    base = Record(id="R", version=1, tenant="t", agent="a", body="b", recorded_at=to_iso(NOW))
    return replace(base, **kw)  # type: ignore[arg-type]


def ago(days: float) -> str:
    return to_iso(NOW - timedelta(days=days))


def test_neutral_record_scores_base_times_recency_only() -> None:
    # Recorded just now: recency signal 1 → factor 1 + 0.2·0.5; no other signal.
    b = scoring.score(0.5, rec(), Boosts(), NOW)
    assert b.temporal == 1.0 and b.proof == 1.0 and b.usefulness == 1.0
    assert b.trust == pytest.approx(1.0)  # learned = 0.5 is the neutral trust weight
    assert b.recency == pytest.approx(1.1)
    assert b.forget == pytest.approx(1.0)
    assert b.final == pytest.approx(0.5 * 1.1)


def test_all_alphas_zero_gives_base() -> None:
    zero = Boosts(recency=0, temporal=0, proof=0, trust=0, usefulness=0, forget=0)
    b = scoring.score(0.37, rec(trust="system", proof_count=9, used_count=3), zero, NOW)
    assert b.final == pytest.approx(0.37)


def test_recency_and_temporal_signals() -> None:
    assert scoring.recency_signal(rec(recorded_at=ago(1)), NOW) == pytest.approx(0.5)
    assert scoring.temporal_signal(rec(), NOW) == 0.5  # no occurred_at: neutral
    assert scoring.temporal_signal(rec(occurred_at=ago(3)), NOW) == pytest.approx(0.25)


def test_trust_weights() -> None:
    assert scoring.score(1, rec(trust="system"), Boosts(), NOW).trust == pytest.approx(1.05)
    assert scoring.score(1, rec(trust="external"), Boosts(), NOW).trust == pytest.approx(0.95)


def test_proof_signal_grows_with_proofs_and_decays() -> None:
    assert scoring.proof_signal(rec(proof_count=0), NOW) == 0.5
    assert scoring.proof_signal(rec(proof_count=1), NOW) == 0.5  # ln 1 = 0
    fresh = scoring.proof_signal(rec(proof_count=20, last_success_at=ago(0)), NOW)
    assert fresh == pytest.approx(0.5 + math.log(20) / 10)
    month = scoring.proof_signal(rec(proof_count=20, last_success_at=ago(30)), NOW)
    assert month == pytest.approx(0.5 + math.log(20) / 20)
    low_conf = scoring.proof_signal(rec(proof_count=20, confidence=0.5), NOW)
    assert low_conf == pytest.approx(0.5 + math.log(20) / 20)


def test_usefulness_signal() -> None:
    assert scoring.usefulness_signal(rec()) == 0.5
    assert scoring.usefulness_signal(rec(used_count=3, ignored_count=1)) == 0.75


def test_fade_episodic_faster_and_failures_faster_still() -> None:
    old = ago(200)
    semantic = scoring.fade(rec(recorded_at=old, memory_type="semantic"), NOW)
    episodic = scoring.fade(rec(recorded_at=old, memory_type="episodic"), NOW)
    failing = scoring.fade(rec(recorded_at=old, memory_type="semantic", failure_count=2), NOW)
    assert 0.5 < episodic < semantic < 1.0
    assert failing < semantic
    assert scoring.fade(rec(recorded_at=old, pinned=True), NOW) == 1.0
    lam = math.log(2) / 30 * math.exp(-1.5 * 0.5)
    assert semantic == pytest.approx(0.5 + 0.5 * math.exp(-lam * 200**0.8))


def test_forget_factor_is_one_plus_alpha_times_fade_minus_one() -> None:
    r = rec(recorded_at=ago(100))
    b = scoring.score(1.0, r, Boosts(), NOW)
    assert b.forget == pytest.approx(1 + 0.1 * (scoring.fade(r, NOW) - 1))


def test_ties_break_by_trust() -> None:
    keys = sorted(
        [
            ("external", scoring.rank_key(0.5, "external")),
            ("system", scoring.rank_key(0.5 + 1e-12, "system")),
            ("learned", scoring.rank_key(0.5, "learned")),
        ],
        key=lambda kv: kv[1],
    )
    assert [k for k, _ in keys] == ["system", "learned", "external"]
    assert scoring.rank_key(0.6, "external") < scoring.rank_key(0.5, "system")
