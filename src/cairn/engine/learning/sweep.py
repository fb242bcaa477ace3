"""The forgetting sweep (SPEC §6), no model: which memories to soft-evict, and why not.

A memory is evicted (``evicted_at``: out of recall, still inspectable, reversible) when
it has been idle longer than ``max_dormant_days`` — not applied since, or since it was
recorded — or when it reached ``failure_floor`` corroborated failures. Exempt whatever
its record says: the user's explicit word (failures against it raise a review flag, see
:mod:`cairn.engine.learning.review`), pinned, ``system`` trust, or ``proof_count >=
high_proof_floor``. A
memory the user took back from eviction is not evicted again for what they already saw:
only failures beyond those it had then, and idleness counted from then.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from cairn.engine.recall.scoring import fade
from cairn.model import Record
from cairn.timeutil import age_days, to_iso


@dataclass(frozen=True, slots=True)
class SweepRules:
    max_dormant_days: int
    failure_floor: int
    high_proof_floor: int


@dataclass(frozen=True, slots=True)
class Eviction:
    record_id: str
    version: int
    reason: str  # "failures" | "dormant"
    failure_count: int
    idle_days: float
    strength: float  # the forget factor's fade at the sweep: wrong fades faster than old

    def payload(self) -> dict[str, Any]:
        return {
            "record_id": self.record_id,
            "version": self.version,
            "reason": self.reason,
            "failure_count": self.failure_count,
            "idle_days": round(self.idle_days, 3),
            "strength": round(self.strength, 6),
        }

    @property
    def key(self) -> str:
        return f"evict:{self.record_id}:{self.version}:{self.reason}:{self.failure_count}"


def idle_before(now: datetime, rules: SweepRules) -> str:
    return to_iso(now - timedelta(days=rules.max_dormant_days))


def exemption(record: Record, rules: SweepRules) -> str | None:
    if record.authority == "explicit":
        return "explicit"  # the user's word: failures flag it for their review instead
    if record.pinned:
        return "pinned"
    if record.trust == "system":
        return "system"
    if record.proof_count >= rules.high_proof_floor:
        return "high-proof"
    return None


def kept(record: Record) -> dict[str, Any]:
    """What the user's last unevict kept the memory with (failures, time)."""
    found = record.source.get("unevicted")
    return dict(found) if isinstance(found, dict) else {}


def decide(record: Record, rules: SweepRules, now: datetime) -> Eviction | None:
    if not record.is_live or exemption(record, rules) is not None:
        return None
    back = kept(record)
    last = max(record.last_applied_at or record.recorded_at, str(back.get("at") or ""))
    idle = age_days(last, now) or 0.0
    seen = int(back.get("failure_count") or 0)
    reason = None
    if record.failure_count >= rules.failure_floor and record.failure_count > seen:
        reason = "failures"
    elif idle > rules.max_dormant_days:
        reason = "dormant"
    if reason is None:
        return None
    return Eviction(
        record.id, record.version, reason, record.failure_count, idle, fade(record, now)
    )
