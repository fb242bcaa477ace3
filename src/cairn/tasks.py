"""Personal memory for tasks (SPEC §5): what a task should know, expansion on request,
outcomes that teach ranking, the value report, and free-text user signals.

Mixed into :class:`cairn.memory.Memory`; the methods reach the rest of the API through
``_MemoryCore``, the part of ``Memory`` they build on.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Protocol

import numpy as np

from cairn.config import Config
from cairn.engine.director import (
    PRERANK_LIMIT,
    TIER_ORDER,
    DirectedItem,
    DirectorCandidate,
    direct,
)
from cairn.engine.recall.pipeline import MemoryRecall, RecallRequest, RecallResult
from cairn.engine.selectors import Selector, TaskConditions, match_selector, normalize_path
from cairn.engine.signals import classify_statement
from cairn.errors import InvalidInput, NotFound
from cairn.ids import new_ulid
from cairn.model import Event, Record, Tombstone
from cairn.storage.base import Store
from cairn.timeutil import to_iso
from cairn.validation import (
    MAX_SELECTOR_CHARS,
    check_choice,
    check_int,
    check_line,
    check_text,
    check_text_list,
    check_token,
)

OUTCOMES = ("used-successfully", "ignored", "overridden", "corrected", "contributed-to-failure")
NEGATIVE_OUTCOMES = ("overridden", "corrected", "contributed-to-failure")
# Kinds a task receives by selector alone; facts and episodes come only through recall.
DIRECTOR_KINDS = ("policy", "preference", "profile", "skill")
DIRECTOR_RECALL_POOL = 30


@dataclass(frozen=True, slots=True)
class DeliveredItem:
    record: Record
    delivery: str
    why_applied: tuple[str, ...]
    application_id: str
    title: str
    summary: str
    rank_score: float


@dataclass(frozen=True, slots=True)
class TaskContext:
    task: str
    resident: tuple[DeliveredItem, ...]
    manifest: tuple[DeliveredItem, ...]
    constraints: tuple[dict[str, Any], ...]
    applications: tuple[dict[str, Any], ...]


def _delivered(item: DirectedItem, app_ids: dict[str, str]) -> DeliveredItem:
    return DeliveredItem(
        record=item.record,
        delivery=item.delivery,
        why_applied=item.why_applied,
        application_id=app_ids[item.record.id],
        title=item.title,
        summary=item.summary,
        rank_score=item.rank_score,
    )


def _selector_of(record: Record) -> Selector:
    return Selector(
        scope="project" if record.scope == "project" else "global",
        project_id=record.project_id,
        path_patterns=record.path_patterns,
        operations=record.operations,
        phases=record.phases,
        task_types=record.task_types,
    )


class _MemoryCore(Protocol):
    """What the task methods use of :class:`cairn.memory.Memory`."""

    config: Config
    _store: Store
    _recall: MemoryRecall
    _clock: Callable[[], datetime]

    def _ns(self, tenant: str | None, agent: str | None) -> tuple[str, str]: ...

    def _event(
        self,
        type_: str,
        payload: dict[str, Any],
        tenant: str,
        agent: str,
        event_id: str | None,
        occurred_at: str | None = None,
        session_id: str | None = None,
    ) -> Event: ...

    def _commit(self, events: Sequence[Event], vectors: dict[str, np.ndarray]) -> list[bool]: ...

    def get(
        self, record_id: str, *, tenant: str | None = None, agent: str | None = None
    ) -> Record: ...

    def history(
        self, record_id: str, *, tenant: str | None = None, agent: str | None = None
    ) -> list[Record]: ...

    def remember(
        self,
        body: str,
        *,
        kind: str = "preference",
        scope: str = "global",
        project_id: str | None = None,
        tenant: str | None = None,
        agent: str | None = None,
    ) -> Record: ...

    def recall(
        self,
        query: str,
        *,
        project_id: str | None = None,
        tenant: str | None = None,
        agent: str | None = None,
    ) -> RecallResult: ...

    def forget(
        self, record_id: str, *, tenant: str | None = None, agent: str | None = None
    ) -> Tombstone: ...


class TaskMemory:
    def context(
        self: _MemoryCore,
        task: str,
        *,
        project_id: str | None = None,
        paths: Sequence[str] = (),
        operation: str | None = None,
        phase: str | None = None,
        task_type: str | None = None,
        session_id: str | None = None,
        profile_budget: int = 2000,
        task_budget: int = 6000,
        tenant: str | None = None,
        agent: str | None = None,
    ) -> TaskContext:
        """What this task should know: resident text, a manifest, one-off constraints.

        Every delivered item gets an application record (journal-first) whose id is the
        handle for ``feedback``.
        """
        ten, ag = self._ns(tenant, agent)
        task = check_text("task", task, 10_000)
        if project_id is not None:
            check_line("project id", project_id, 500)
        paths = check_text_list("paths", paths, 4096, max_items=10_000, printable=True)
        for name, value in (("operation", operation), ("phase", phase), ("task type", task_type)):
            if value is not None:
                check_line(name, value, MAX_SELECTOR_CHARS)
        if session_id is not None:
            check_token("session id", session_id)
        check_int("profile budget", profile_budget, 0, 10_000_000)
        check_int("task budget", task_budget, 0, 10_000_000)
        conditions = TaskConditions(
            project_id=project_id,
            paths=tuple(normalize_path(p) for p in paths),
            operation=operation,
            phase=phase,
            task_type=task_type,
        )
        constraints = tuple(
            {"text": c.statement, "cue": c.cue, "confidence": c.confidence}
            for c in [classify_statement(task)]
            if c.kind == "one-off"
        )
        if not self.config.agent(ag).retrieval.enabled:
            return TaskContext(task, (), (), constraints, ())
        now = self._clock()
        relevance: dict[tuple[str, int], float] = {}
        recalled: list[Record] = []
        # The director needs only the few most relevant hits, not a full recall's pool.
        rag = self.config.agent(ag).rag
        rag = rag.model_copy(
            update={"scorePool": DIRECTOR_RECALL_POOL, "laneCandidates": DIRECTOR_RECALL_POOL}
        )
        request = RecallRequest(query=task, tenant=ten, agent=ag, project_id=project_id)
        for hit in self._recall.recall(request, rag, now).ranked:
            # In a small store the vector lane ranks everything; only a shared word or a
            # top vector rank counts as "relevant to the task text".
            if "keyword" in hit.ranks or hit.ranks.get("vector", 99) <= 3:
                relevance[(hit.record.id, hit.record.version)] = hit.score
                recalled.append(hit.record)
        candidates: dict[str, DirectorCandidate] = {}
        pool = (
            self._store.selector_candidates(
                ten,
                ag,
                project_id,
                DIRECTOR_KINDS,
                operation=operation,
                phase=phase,
                task_type=task_type,
                has_paths=bool(conditions.paths),
                order=TIER_ORDER,
                limit=PRERANK_LIMIT,
            )
            + recalled
        )
        for record in pool:
            match = match_selector(_selector_of(record), conditions)
            candidates[record.id] = DirectorCandidate(
                record, match, relevance.get((record.id, record.version))
            )
        direction = direct(
            list(candidates.values()),
            now,
            profile_budget=profile_budget,
            task_budget=task_budget,
        )
        stamp = to_iso(now)
        applications = [
            {
                "application_id": new_ulid(),
                "tenant": ten,
                "agent": ag,
                "record_id": item.record.id,
                "record_version": item.record.version,
                "task": task,
                "delivery": item.delivery,
                "why_applied": list(item.why_applied),
                "created_at": stamp,
            }
            for item in (*direction.resident, *direction.manifest)
        ]
        if applications:
            event = self._event(
                "context.applied",
                {"applications": applications},
                ten,
                ag,
                None,
                session_id=session_id,
            )
            self._commit([event], {})
        by_record = {a["record_id"]: a["application_id"] for a in applications}
        return TaskContext(
            task=task,
            resident=tuple(_delivered(i, by_record) for i in direction.resident),
            manifest=tuple(_delivered(i, by_record) for i in direction.manifest),
            constraints=constraints,
            applications=tuple(applications),
        )

    def expand(
        self: _MemoryCore,
        record_id: str,
        *,
        task: str | None = None,
        tenant: str | None = None,
        agent: str | None = None,
    ) -> dict[str, Any]:
        """The full body, sources and verification of one item, recorded as an application."""
        ten, ag = self._ns(tenant, agent)
        if task is not None:
            check_text("task", task, 10_000)
        record = self.get(record_id, tenant=ten, agent=ag)
        if not record.is_live:
            raise InvalidInput(f"memory {record.id} is not active (forgotten or evicted)")
        application = {
            "application_id": new_ulid(),
            "tenant": ten,
            "agent": ag,
            "record_id": record.id,
            "record_version": record.version,
            "task": task,
            "delivery": "expanded",
            "why_applied": ["expanded on request"],
            "created_at": to_iso(self._clock()),
        }
        self._commit(
            [self._event("context.applied", {"applications": [application]}, ten, ag, None)], {}
        )
        history = self.history(record.id, tenant=ten, agent=ag)
        return {
            "record": record,
            "application_id": application["application_id"],
            "sources": {
                "source": record.source,
                "origin": record.origin,
                "evidence": list(record.evidence),
            },
            "verification": {
                "authority": record.authority,
                "state": record.state,
                "proof_count": record.proof_count,
                "used_count": record.used_count,
                "ignored_count": record.ignored_count,
                "failure_count": record.failure_count,
                "last_success_at": record.last_success_at,
                "versions": len(history),
            },
        }

    def feedback(
        self: _MemoryCore,
        application_id: str,
        outcome: str,
        *,
        event_id: str | None = None,
        tenant: str | None = None,
        agent: str | None = None,
    ) -> Record:
        """Report how an applied memory did; it updates counters, ranking and lifecycle."""
        ten, ag = self._ns(tenant, agent)
        check_choice("outcome", outcome, OUTCOMES)
        app_id = check_token("application id", application_id).upper()
        known = {a.application_id: a for a in self._store.applications(ten, ag)}
        if app_id not in known:
            raise NotFound(f"no application with id {application_id}")
        event = self._event(
            "context.outcome", {"application_id": app_id, "outcome": outcome}, ten, ag, event_id
        )
        self._commit([event], {})
        record = self._store.get(ten, ag, known[app_id].record_id)
        if record is None:
            raise NotFound(f"memory {known[app_id].record_id} is gone")
        return record

    def explain(
        self: _MemoryCore, *, tenant: str | None = None, agent: str | None = None
    ) -> dict[str, Any]:
        """Hit rate (relevance) and outcome value per memory, and totals."""
        ten, ag = self._ns(tenant, agent)
        per: dict[str, dict[str, Any]] = {}
        for app in self._store.applications(ten, ag):
            row = per.setdefault(app.record_id, {"delivered": 0, "with_outcome": 0, "outcomes": {}})
            row["delivered"] += 1
            if app.outcome:
                row["with_outcome"] += 1
                row["outcomes"][app.outcome] = row["outcomes"].get(app.outcome, 0) + 1
        for row in per.values():
            used = row["outcomes"].get("used-successfully", 0)
            bad = sum(row["outcomes"].get(o, 0) for o in NEGATIVE_OUTCOMES)
            row["hit_rate"] = (used / row["with_outcome"]) if row["with_outcome"] else None
            row["value"] = (used - bad) / row["with_outcome"] if row["with_outcome"] else None
        delivered = sum(r["delivered"] for r in per.values())
        judged = sum(r["with_outcome"] for r in per.values())
        used_total = sum(r["outcomes"].get("used-successfully", 0) for r in per.values())
        return {
            "applications": delivered,
            "with_outcome": judged,
            "hit_rate": used_total / judged if judged else None,
            "records": per,
        }

    def signal(
        self: _MemoryCore,
        text: str,
        *,
        project_id: str | None = None,
        tenant: str | None = None,
        agent: str | None = None,
    ) -> dict[str, Any]:
        """Classify a free-text user statement and act on it.

        A long-term rule is remembered (explicit, proven); a one-off instruction comes back
        as a task-scoped constraint and is never stored; "forget that …" forgets the best
        match among current memories.
        """
        ten, ag = self._ns(tenant, agent)
        text = check_text("statement", text, self.config.memory.store.maxBodyChars)
        if project_id is not None:
            check_line("project id", project_id, 500)
        found = classify_statement(text)
        result: dict[str, Any] = {
            "kind": found.kind,
            "cue": found.cue,
            "confidence": found.confidence,
            "language": found.language,
        }
        if found.kind == "rule":
            scope = "project" if project_id else "global"
            record = self.remember(
                text, kind="policy", scope=scope, project_id=project_id, tenant=ten, agent=ag
            )
            result["record"] = record
        elif found.kind == "one-off":
            result["constraint"] = {"text": found.statement, "cue": found.cue}
        elif found.kind == "forget":
            hits = self.recall(found.statement, project_id=project_id, tenant=ten, agent=ag).ranked
            if not hits:
                raise NotFound(f"nothing in memory matches {found.statement!r}")
            result["forgotten"] = self.forget(hits[0].record.id, tenant=ten, agent=ag)
            result["record"] = hits[0].record
        return result
