"""The lifecycle of mental-model docs (SPEC §6): candidate → active → stale → archived.

A doc starts ``candidate``; attributed successful reuse lifts ``proof_count``, and at
``promote_at`` it is ``active``. Corroborated, *sustained* failing reuse demotes it one
step: at least ``demote_at`` corroborated failures since its last change of state, and
more failures than successes since then (active → stale → archived). A stale doc that
succeeds again as often as a candidate needs to is active again. Each change records the
counts it was made at (its *mark*), so the next one counts only what came after. What the
sweep exempts — pinned, or at least ``protect_at`` proofs — is never demoted either: a
poisoner who induces failures cannot retire it by the lifecycle instead.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from cairn.engine.learning.deltas import is_doc
from cairn.model import Record


@dataclass(frozen=True, slots=True)
class LifecycleRules:
    promote_at: int
    demote_at: int
    protect_at: int | None = None  # the sweep's high-proof floor


@dataclass(frozen=True, slots=True)
class Transition:
    record_id: str
    version: int
    from_state: str
    to_state: str
    reason: str
    proof_count: int
    failure_count: int

    @property
    def event_type(self) -> str:
        if self.reason == "promoted":
            return "lifecycle.promoted"
        return "lifecycle.demoted" if self.reason == "demoted" else "lifecycle.restored"

    def payload(self) -> dict[str, Any]:
        return {
            "record_id": self.record_id,
            "version": self.version,
            "from": self.from_state,
            "to": self.to_state,
            "reason": self.reason,
            "proof_count": self.proof_count,
            "failure_count": self.failure_count,
        }

    @property
    def key(self) -> str:
        return (
            f"lifecycle:{self.record_id}:{self.version}:{self.to_state}"
            f":{self.proof_count}:{self.failure_count}"
        )


def mark(record: Record) -> tuple[int, int]:
    """(proof, failures) when the doc last changed state."""
    found = record.source.get("lifecycle")
    if not isinstance(found, dict):
        return (0, 0)
    return (int(found.get("proof_count") or 0), int(found.get("failure_count") or 0))


def transition(record: Record, rules: LifecycleRules) -> Transition | None:
    if not is_doc(record) or not record.is_live:
        return None
    proofs, failures = mark(record)
    gained = record.proof_count - proofs
    failed = record.failure_count - failures
    protected = (
        record.pinned
        or record.authority == "explicit"
        or (rules.protect_at is not None and record.proof_count >= rules.protect_at)
    )
    sustained = failed >= rules.demote_at and failed > gained and not protected
    state = record.state
    to: tuple[str, str] | None = None
    if state == "candidate" and record.proof_count >= rules.promote_at:
        to = ("active", "promoted")
    elif state == "active" and sustained:
        to = ("stale", "demoted")
    elif state == "stale" and sustained:
        to = ("archived", "demoted")
    elif state == "stale" and gained >= rules.promote_at and gained > failed:
        to = ("active", "restored")
    if to is None:
        return None
    return Transition(
        record.id, record.version, state, to[0], to[1], record.proof_count, record.failure_count
    )
