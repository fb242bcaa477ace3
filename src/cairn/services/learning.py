"""Learning from outcomes (SPEC §6): observations into the journal, and what follows
from them at once — the lifecycle of the docs they judged, and eviction at the failure
floor.

An observation is journaled as it is reported (its id is the caller's idempotency key,
so a retry is a no-op) with the sender's *effective* trust: the lower of the operator's
word for the sender (``learning.senders``, else ``learning.defaultSenderTrust``) and what
the caller claims. With learning off nothing is kept, so the same observation sent again
later is new and is learned from.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from cairn.config import AgentConfig, Config
from cairn.engine.learning.lifecycle import LifecycleRules, Transition, transition
from cairn.engine.learning.observations import sender_trust
from cairn.engine.learning.sweep import Eviction, SweepRules, decide
from cairn.model import Namespace
from cairn.services.journal import Journal
from cairn.services.secrets import SecretGuard
from cairn.services.store_roles import RecordsEventsApplications

# What an observation says in text, which the secret policy covers before it is journaled
# (the sender is matched against learning.senders; sessions and episodes are ids).
OBSERVED_TEXTS = (
    "command", "tools", "note", "task", "topic", "project_id", "path_patterns", "operations",
    "phases", "task_types",
)  # fmt: skip


@dataclass(frozen=True, slots=True)
class ObservationInput:
    """One task episode's event, as an agent (or its hook) reports it."""

    type: str = "episode.completed"
    success: bool | None = None  # context.outcome: from the outcome
    episode_id: str | None = None
    session_id: str | None = None
    sender: str | None = None  # default: learning.owner
    sender_trust: str | None = None  # a claim; it can lower the sender's trust, not raise it
    content_trust: str = "learned"  # trust of the content the lesson was drawn from
    deterministic: bool = False  # judged by a test run or a verifier
    command: str | None = None
    tools: Sequence[str] = ()
    steps: int | None = None
    note: str | None = None  # what worked
    task: str | None = None
    topic: str | None = None
    kind: str | None = None  # skill | profile | topic
    project_id: str | None = None
    path_patterns: Sequence[str] = ()
    operations: Sequence[str] = ()
    phases: Sequence[str] = ()
    task_types: Sequence[str] = ()
    applications: Sequence[str] = ()  # the deliveries this outcome judges
    application_id: str | None = None  # context.outcome
    outcome: str | None = None  # context.outcome
    occurred_at: str | None = None  # as stored


@dataclass(frozen=True, slots=True)
class Settled:
    transitions: tuple[Transition, ...] = ()
    evictions: tuple[Eviction, ...] = ()


@dataclass(frozen=True, slots=True)
class Observed:
    event_id: str
    kept: bool
    duplicate: bool = False
    reason: str | None = None
    sender_trust: str | None = None
    judged: tuple[str, ...] = ()  # application ids whose outcome this set
    settled: Settled = field(default_factory=Settled)


def lifecycle_rules(agent: AgentConfig) -> LifecycleRules:
    reflect = agent.learning.reflect
    return LifecycleRules(
        promote_at=reflect.promoteAtProofCount,
        demote_at=reflect.demoteAtFailures,
        protect_at=agent.learning.forget.highProofFloor,
    )


def sweep_rules(agent: AgentConfig) -> SweepRules:
    forget = agent.learning.forget
    return SweepRules(forget.maxDormantDays, forget.failureEvictionFloor, forget.highProofFloor)


def _words(values: Sequence[str]) -> list[str]:
    """Selectors as journaled: trimmed, each once (the contract bounded and checked them)."""
    return list(dict.fromkeys(v.strip() for v in values))


class Learning:
    def __init__(
        self,
        records: RecordsEventsApplications,
        journal: Journal,
        config: Config,
        guard: SecretGuard,
        clock: Callable[[], datetime],
    ) -> None:
        self._records = records
        self._journal = journal
        self._config = config
        self._guard = guard
        self._clock = clock

    # -- observe -------------------------------------------------------------------------

    def observe(self, item: ObservationInput, ns: Namespace, *, event_id: str) -> Observed:
        agent = self._config.agent(ns.agent)
        payload, sender, session = self._payload(item, agent)
        if not agent.learning.enabled:
            return Observed(event_id, kept=False, reason="learning is off for this agent")
        if self._records.event(ns.tenant, ns.agent, event_id) is not None:
            return Observed(event_id, kept=False, duplicate=True, reason="already observed")
        occurred = item.occurred_at or None  # as stored (the contract's When)
        event = self._journal.event(
            item.type,
            payload,
            ns,
            event_id,
            session_id=session,
            occurred_at=occurred,
            sender=sender,
            episode_id=item.episode_id,
        )
        judged = tuple(self._judged(payload))
        (fresh,) = self._journal.commit([event], {})
        if not fresh:
            return Observed(event_id, kept=False, duplicate=True, reason="already observed")
        touched = [
            a.record_id for a in self._records.applications_by_id(ns.tenant, ns.agent, judged)
        ]
        return Observed(
            event_id,
            kept=True,
            sender_trust=str(payload["sender_trust"]),
            judged=judged,
            settled=self.settle(ns, touched),
        )

    @staticmethod
    def _judged(payload: dict[str, Any]) -> list[str]:
        if payload.get("application_id"):
            return [str(payload["application_id"])]
        return [str(a) for a in payload.get("applications") or ()]

    def _payload(
        self, item: ObservationInput, agent: AgentConfig
    ) -> tuple[dict[str, Any], str, str | None]:
        """The observation as journaled. The contract checked it (ObserveRequest: choices,
        bounds, text, what it judges); here it is trimmed, its ids normalised, its sender's
        trust resolved."""
        learning = agent.learning
        sender = (item.sender or learning.owner).strip()
        session = item.session_id or None
        trust = sender_trust(
            sender, item.sender_trust, learning.senders, learning.defaultSenderTrust
        )
        success = item.success
        application_id = outcome = None
        applications: list[str] = []
        if item.type == "context.outcome":
            assert item.application_id is not None and item.outcome is not None
            application_id = item.application_id  # trimmed, upper case: the contract's
            outcome = item.outcome
            success = outcome == "used-successfully" if success is None else success
        else:
            applications = list(dict.fromkeys(item.applications))
        note = item.note.strip() if item.note is not None and item.note.strip() else None
        payload: dict[str, Any] = {
            "success": success,
            "deterministic": bool(item.deterministic),
            "command": item.command or None,
            "tools": _words(item.tools),
            "steps": item.steps,
            "note": note,
            "task": item.task or None,
            "topic": item.topic.strip() if item.topic else None,
            "kind": item.kind,
            "content_trust": item.content_trust,
            "sender_trust": trust.trust,
            "sender_named": trust.named,
            "project_id": item.project_id or None,
            "path_patterns": _words(item.path_patterns),
            "operations": [w.lower() for w in _words(item.operations)],
            "phases": [w.lower() for w in _words(item.phases)],
            "task_types": [w.lower() for w in _words(item.task_types)],
            "provenance": {
                "session": session,
                "sender": sender,
                "trust": trust.trust,
                "deterministic": bool(item.deterministic),
            },
        }
        texts = {name: payload[name] for name in OBSERVED_TEXTS}
        payload.update(self._guard.scrub(self._config.memory.secrets, texts)[0])
        if application_id is not None:
            payload.update(application_id=application_id, outcome=outcome)
        else:
            payload["applications"] = applications
        return payload, sender, session

    # -- what follows from outcomes -------------------------------------------------------

    def settle(self, ns: Namespace, record_ids: Sequence[str]) -> Settled:
        """Lifecycle transitions of these memories and eviction at the failure floor,
        decided now (the scheduled sweep also evicts on disuse)."""
        agent = self._config.agent(ns.agent)
        if not agent.learning.enabled or not record_ids:
            return Settled()
        rules = lifecycle_rules(agent)
        sweep = sweep_rules(agent)
        now = self._clock()
        transitions: list[Transition] = []
        evictions: list[Eviction] = []
        for record_id in sorted(set(record_ids)):
            record = self._records.get(ns.tenant, ns.agent, record_id)
            if record is None:
                continue
            moved = transition(record, rules)
            if moved is not None:
                transitions.append(moved)
            evicted = decide(record, sweep, now) if agent.learning.forget.enabled else None
            if evicted is not None and evicted.reason == "failures":
                evictions.append(evicted)
        self.commit_lifecycle(ns, transitions, evictions)
        return Settled(tuple(transitions), tuple(evictions))

    def commit_lifecycle(
        self, ns: Namespace, transitions: Sequence[Transition], evictions: Sequence[Eviction]
    ) -> None:
        events = [
            self._journal.event(t.event_type, t.payload(), ns, t.key) for t in transitions
        ] + [self._journal.event("lifecycle.evicted", e.payload(), ns, e.key) for e in evictions]
        if not events:
            return
        counters = {
            "learning:memory_promoted": sum(t.reason == "promoted" for t in transitions),
            "learning:memory_demoted": sum(t.reason == "demoted" for t in transitions),
            "learning:memory_restored": sum(t.reason == "restored" for t in transitions),
            "learning:memory_evicted": len(evictions),
        }
        self._journal.commit(events, {}, counters={k: v for k, v in counters.items() if v})
