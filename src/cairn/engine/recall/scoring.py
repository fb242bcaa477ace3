"""Multiplicative scoring (SPEC §4). Every factor is centred so a missing signal is 1.0.

``final = base × Π (1 + α_f · (signal_f − 0.5)) × forget``; the clock is passed in.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import datetime

from cairn.config import Boosts
from cairn.model import Record
from cairn.timeutil import age_days

TRUST_WEIGHT = {"system": 1.0, "learned": 0.5, "external": 0.0}
TRUST_ORDER = {"system": 0, "learned": 1, "external": 2}
PROOF_HALF_LIFE_DAYS = 30.0
FORGET_HALF_LIFE_DAYS = 30.0
TIE_EPSILON = 1e-9


def clamp01(value: float) -> float:
    return min(1.0, max(0.0, value))


def recency_signal(record: Record, now: datetime) -> float:
    age = age_days(record.recorded_at, now)
    return 0.5 if age is None else 1.0 / (1.0 + age)


def temporal_signal(record: Record, now: datetime) -> float:
    age = age_days(record.occurred_at, now)
    return 0.5 if age is None else 1.0 / (1.0 + age)


def proof_signal(record: Record, now: datetime) -> float:
    """0.5 + ln(proofs)/10, damped by confidence and a 30-day half-life since last success."""
    if record.proof_count <= 0:
        return 0.5
    since = age_days(record.last_success_at, now)
    damping = 1.0 if since is None else 0.5 ** (since / PROOF_HALF_LIFE_DAYS)
    lift = math.log(record.proof_count) / 10.0 * clamp01(record.confidence) * damping
    return clamp01(0.5 + lift)


def usefulness_signal(record: Record) -> float:
    seen = record.used_count + record.ignored_count
    return 0.5 if seen == 0 else record.used_count / seen


def fade(record: Record, now: datetime) -> float:
    """0.5 + 0.5·exp(−λ·Δt^β): in (0.5, 1]; failures raise λ so wrong fades faster than old."""
    last = record.last_applied_at or record.recorded_at
    dt = age_days(last, now) or 0.0
    beta = 1.2 if record.memory_type in ("episodic", "working") else 0.8
    lam = math.log(2) / FORGET_HALF_LIFE_DAYS * math.exp(-1.5 * clamp01(record.importance))
    lam *= 1.0 + record.failure_count
    if record.pinned:
        return 1.0
    return 0.5 + 0.5 * math.exp(-lam * dt**beta)


@dataclass(frozen=True, slots=True)
class ScoreBreakdown:
    base: float
    recency: float
    temporal: float
    proof: float
    trust: float
    usefulness: float
    forget: float
    final: float

    def as_dict(self) -> dict[str, float]:
        return {
            "base": self.base,
            "recency": self.recency,
            "temporal": self.temporal,
            "proof": self.proof,
            "trust": self.trust,
            "usefulness": self.usefulness,
            "forget": self.forget,
            "final": self.final,
        }


def score(base: float, record: Record, boosts: Boosts, now: datetime) -> ScoreBreakdown:
    def centred(alpha: float, signal: float) -> float:
        return 1.0 + alpha * (signal - 0.5)

    recency = centred(boosts.recency, recency_signal(record, now))
    temporal = centred(boosts.temporal, temporal_signal(record, now))
    proof = centred(boosts.proof, proof_signal(record, now))
    trust = centred(boosts.trust, TRUST_WEIGHT.get(record.trust, 0.0))
    usefulness = centred(boosts.usefulness, usefulness_signal(record))
    forget = 1.0 + boosts.forget * (fade(record, now) - 1.0)
    final = base * recency * temporal * proof * trust * usefulness * forget
    return ScoreBreakdown(base, recency, temporal, proof, trust, usefulness, forget, final)


def rank_key(final: float, trust: str) -> tuple[float, int]:
    """Sort key: score descending; within 1e-9, system > learned > external."""
    return (-round(final / TIE_EPSILON) * TIE_EPSILON, TRUST_ORDER.get(trust, 3))
