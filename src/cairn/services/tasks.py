"""Personal memory for tasks (SPEC §5): what a task should know, expansion on request,
and outcomes that teach ranking and lifecycle."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from cairn.config import Config
from cairn.engine.director import PRERANK_LIMIT, DirectedItem, DirectorCandidate, direct
from cairn.engine.learning.observations import sender_trust
from cairn.engine.learning.review import needs_review, review_flag
from cairn.engine.learning.surface import surface
from cairn.engine.selectors import (
    Selector,
    SelectorMatch,
    TaskConditions,
    match_selector,
    normalize_path,
)
from cairn.engine.statements.selector_words import mentioned_actions
from cairn.engine.statements.signals import classify_statement
from cairn.errors import InvalidInput, NotFound
from cairn.identifiers import new_ulid
from cairn.model import (
    NEGATIVE_OUTCOMES,
    Application,
    Constraint,
    Expanded,
    Namespace,
    Record,
)
from cairn.services.idempotency import check_same_request
from cairn.services.journal import Journal
from cairn.services.recall import Recall
from cairn.services.secrets import SecretGuard
from cairn.services.store_roles import TaskReads
from cairn.storage.ports import RecordQuery, RuleQuery
from cairn.timeutil import to_iso

# Kinds a task receives by selector alone; facts and episodes come only through recall.
DIRECTOR_KINDS = ("policy", "preference", "profile", "skill")
DIRECTOR_RECALL_POOL = 30
_COUNTERS = ("used_count", "proof_count", "ignored_count", "failure_count", "state")


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
class TaskDelivery:
    """What the director delivered for one task: resident items (with their bodies), the
    manifest (titles and summaries, expanded on request), the one-off constraints, and
    one application per item."""

    task: str
    resident: tuple[DeliveredItem, ...]
    manifest: tuple[DeliveredItem, ...]
    constraints: tuple[Constraint, ...]
    applications: tuple[Application, ...]


@dataclass(frozen=True, slots=True)
class FeedbackResult:
    record: Record
    application_id: str
    outcome: str
    previous: str | None  # the outcome this one replaced
    changes: dict[str, tuple[Any, Any]]  # field -> (before, after); empty: nothing changed


class SelectorMatches:
    """Rules' matches against a task's conditions, kept across tasks in a long-lived
    process (the daemon): a prompt's director matches a few hundred candidates, mostly
    the same rules under the same conditions as the prompt before. A match is a pure
    function of the selector's fields and the conditions, so it is kept by those."""

    def __init__(self, limit: int = 20_000, conditions: int = 64) -> None:
        self._limit = limit
        self._conditions = conditions
        self._matches: dict[TaskConditions, dict[tuple[object, ...], SelectorMatch]] = {}

    def match(self, record: Record, conditions: TaskConditions) -> SelectorMatch:
        matches = self._matches.get(conditions)
        if matches is None or len(matches) >= self._limit:
            if len(self._matches) >= self._conditions:
                self._matches.clear()
            matches = self._matches[conditions] = {}
        key = (
            record.scope,
            record.project_id,
            record.path_patterns,
            record.operations,
            record.phases,
            record.task_types,
        )
        found = matches.get(key)
        if found is None:
            found = matches[key] = match_selector(_selector_of(record), conditions)
        return found


def _selector_of(record: Record) -> Selector:
    return Selector(
        scope="project" if record.scope == "project" else "global",
        project_id=record.project_id,
        path_patterns=record.path_patterns,
        operations=record.operations,
        phases=record.phases,
        task_types=record.task_types,
    )


class Tasks:
    def __init__(
        self,
        records: TaskReads,
        journal: Journal,
        recall: Recall,
        config: Config,
        clock: Callable[[], datetime],
    ) -> None:
        self._records = records
        self._journal = journal
        self._recall = recall
        self._config = config
        self._clock = clock
        self._guard = SecretGuard()
        self._matches = SelectorMatches()

    def _stored_task(self, task: str | None, *, stored: bool = True) -> str | None:
        """The task text as its applications keep it, after the secret policy (a preview
        stores nothing, so nothing of it is refused)."""
        policy = self._config.memory.secrets if stored else "allow"
        return self._guard.scrub(policy, {"task": task})[0]["task"]  # type: ignore[no-any-return]

    def context(
        self,
        task: str,
        ns: Namespace,
        *,
        project_id: str | None = None,
        paths: Sequence[str] = (),
        operation: str | None = None,
        phase: str | None = None,
        task_type: str | None = None,
        session_id: str | None = None,
        profile_budget: int = 2000,
        task_budget: int = 6000,
        preview: bool = False,
        broad: bool = False,
    ) -> TaskDelivery:
        """What this task should know: resident text, a manifest, one-off constraints.

        Every delivered item gets an application record (journal-first) whose id is the
        handle for ``feedback``; a ``preview`` (diagnosis) records none, so looking at
        what would apply never counts as a delivery.
        """
        # The request was checked at the contract (provider/checked.py), in the form the
        # director compares: the task's text, its paths, its words lower-cased.
        operations, phases, task_types = mentioned_actions(task)  # named by the task's words
        conditions = TaskConditions(
            project_id=project_id,
            paths=tuple(normalize_path(p) for p in paths),
            operation=operation,
            phase=phase,
            task_type=task_type,
            mentioned_operations=operations,
            mentioned_phases=phases,
            mentioned_task_types=task_types,
        )
        constraints = tuple(
            Constraint(c.statement, c.cue, c.confidence)
            for c in [classify_statement(task)]
            if c.kind == "one-off"
        )
        agent = self._config.agent(ns.agent)
        if not agent.retrieval.enabled:
            return TaskDelivery(task, (), (), constraints, ())
        now = self._clock()
        allowed = set(agent.rag.includeTrustLevels)
        relevance = self._relevant(task, ns, project_id)
        rules = self._records.rule_candidates(
            RuleQuery(
                ns.tenant,
                ns.agent,
                project_id,
                DIRECTOR_KINDS,
                operation=conditions.operation,
                phase=conditions.phase,
                task_type=conditions.task_type,
                limit=PRERANK_LIMIT,
            )
        )
        candidates: dict[str, DirectorCandidate] = {}
        # Many rules share one selector (the same project, operation, paths): a match is
        # decided once per selector and conditions (SelectorMatches).
        for record in [*rules, *(r for r, _ in relevance.values())]:
            if record.trust not in allowed:
                continue  # the director honours includeTrustLevels, like recall
            match = self._matches.match(record, conditions)
            found = relevance.get(record.id)
            score = found[1] if found is not None and found[0].version == record.version else None
            candidates[record.id] = DirectorCandidate(record, match, score)
        # Archived docs never surface; procedure docs are capped, most proven first.
        chosen = surface(
            list(candidates.values()),
            lambda c: c.record,
            agent.learning.reflect.maxProcedureDocsSurfaced,
        )
        direction = direct(
            chosen,
            now,
            profile_budget=profile_budget,
            task_budget=task_budget,
            task=task,
            broad=broad,
        )
        stamp = to_iso(now)
        kept_task = self._stored_task(task, stored=not preview)
        applications = tuple(
            Application(
                application_id=new_ulid(),
                tenant=ns.tenant,
                agent=ns.agent,
                record_id=item.record.id,
                record_version=item.record.version,
                task=kept_task,
                delivery=item.delivery,
                why_applied=item.why_applied,
                created_at=stamp,
                session_id=session_id,
            )
            for item in (*direction.resident, *direction.manifest)
        )
        if applications and not preview:
            payload = {"applications": [a.to_dict() for a in applications]}
            event = self._journal.event("context.applied", payload, ns, None, session_id=session_id)
            self._journal.commit([event], {})
        by_record = {a.record_id: a.application_id for a in applications}

        def delivered(item: DirectedItem) -> DeliveredItem:
            return DeliveredItem(
                item.record,
                item.delivery,
                item.why_applied,
                by_record[item.record.id],
                item.title,
                item.summary,
                item.rank_score,
            )

        return TaskDelivery(
            task=task,
            resident=tuple(delivered(i) for i in direction.resident),
            manifest=tuple(delivered(i) for i in direction.manifest),
            constraints=constraints,
            applications=applications,
        )

    def _relevant(
        self, task: str, ns: Namespace, project_id: str | None
    ) -> dict[str, tuple[Record, float]]:
        """Memories the task text itself is relevant to, with their relevance (0-1)."""
        rag = self._config.agent(ns.agent).rag
        # The director needs only the few most relevant hits, not a full recall's pool.
        rag = rag.model_copy(
            update={"scorePool": DIRECTOR_RECALL_POOL, "laneCandidates": DIRECTOR_RECALL_POOL}
        )
        found: dict[str, tuple[Record, float]] = {}
        result = self._recall.recall(task, ns, project_id=project_id, rag=rag)
        for hit in result.ranked:
            # Recall keeps only what clears the absolute relevance floor (rag.minScore), so
            # "relevant to the task text" means the same in every store and for every task.
            found[hit.record.id] = (hit.record, hit.relevance.score)
        return found

    def expand(self, record_id: str, ns: Namespace, *, task: str | None = None) -> Expanded:
        """The full body, sources and verification of one item, recorded as an application."""
        record = self._records.get(ns.tenant, ns.agent, record_id)
        if record is None or not record.body:
            raise NotFound(f"no memory with id {record_id}")
        if not record.is_live:
            raise InvalidInput(f"memory {record.id} is not active (forgotten or evicted)")
        if task is not None:
            task = self._stored_task(task)
        application = Application(
            application_id=new_ulid(),
            tenant=ns.tenant,
            agent=ns.agent,
            record_id=record.id,
            record_version=record.version,
            task=task,
            delivery="expanded",
            why_applied=("expanded on request",),
            created_at=self._journal.now(),
        )
        payload = {"applications": [application.to_dict()]}
        self._journal.commit([self._journal.event("context.applied", payload, ns, None)], {})
        versions = len(self._records.history(ns.tenant, ns.agent, record.id))
        return Expanded(
            record=record,
            application_id=application.application_id,
            sources={
                "source": record.source,
                "origin": record.origin,
                "evidence": list(record.evidence),
            },
            verification={
                "authority": record.authority,
                "state": record.state,
                "proof_count": record.proof_count,
                "used_count": record.used_count,
                "ignored_count": record.ignored_count,
                "failure_count": record.failure_count,
                "last_success_at": record.last_success_at,
                "versions": versions,
            },
        )

    def feedback(
        self,
        application_id: str,
        outcome: str,
        ns: Namespace,
        *,
        event_id: str | None,
        session: str | None = None,
        sender: str | None = None,
    ) -> FeedbackResult:
        """Report how an applied memory did. An application has one outcome: the same one
        again changes nothing, a different one replaces it; counters follow.

        The verdict is attributed to ``session`` and ``sender`` as the serving process
        knows them (unknown: the owner, in no known session), judged at the sender's
        configured trust: it is an observed outcome like any other, so a failure counts
        only once corroborated. With learning off it is kept for telemetry only."""
        app_id = application_id  # the contract's: trimmed, upper case; the outcome a Literal
        known = next(
            (
                a
                for a in self._records.applications(ns.tenant, ns.agent)
                if a.application_id == app_id
            ),
            None,
        )
        if known is None:
            raise NotFound(f"no application with id {application_id}")
        before = self._records.get(ns.tenant, ns.agent, known.record_id)
        if before is None:
            raise NotFound(f"memory {known.record_id} is gone")
        same = {"application_id": app_id, "outcome": outcome}  # what a retry must repeat
        done = self._records.event(ns.tenant, ns.agent, event_id) if event_id else None
        if event_id is not None and done is not None:  # a retry, or the key reused: 409
            check_same_request(event_id, done, "context.outcome", same)
        elif known.outcome != outcome:
            provenance = self._provenance(ns, session, sender)
            payload = {**same, "provenance": provenance}
            event = self._journal.event(
                "context.outcome",
                payload,
                ns,
                event_id,
                session_id=provenance["session"],
                sender=provenance["sender"],
            )
            self._journal.commit([event], {})
        after = self._records.get(ns.tenant, ns.agent, known.record_id)
        assert after is not None
        changes = {
            name: (getattr(before, name), getattr(after, name))
            for name in _COUNTERS
            if getattr(before, name) != getattr(after, name)
        }
        return FeedbackResult(after, app_id, outcome, known.outcome, changes)

    def _provenance(self, ns: Namespace, session: str | None, sender: str | None) -> dict[str, Any]:
        learning = self._config.agent(ns.agent).learning
        who = (sender or learning.owner).strip()  # a sender the contract checked, or the owner
        trust = sender_trust(who, None, learning.senders, learning.defaultSenderTrust)
        provenance: dict[str, Any] = {
            "session": session or None,
            "sender": who,
            "trust": trust.trust,
            "deterministic": False,  # a verdict reported by a caller is never a verifier's
        }
        if not learning.enabled:
            provenance["counted"] = False
        return provenance

    def explain(self, ns: Namespace) -> dict[str, Any]:
        """Hit rate (relevance) and outcome value per memory, and totals."""
        per: dict[str, dict[str, Any]] = {}
        for app in self._records.applications(ns.tenant, ns.agent):
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
        review = [
            {"record_id": r.id, "body": r.body, "failure_count": r.failure_count,
             "question": review_flag(r)}
            for r in self._records.list_records(RecordQuery(ns.tenant, ns.agent, owned=True))
            if needs_review(r)
        ]  # fmt: skip
        for item in review:
            per.get(str(item["record_id"]), {})["review"] = item["question"]
        delivered = sum(r["delivered"] for r in per.values())
        judged = sum(r["with_outcome"] for r in per.values())
        used_total = sum(r["outcomes"].get("used-successfully", 0) for r in per.values())
        return {
            "applications": delivered,
            "with_outcome": judged,
            "hit_rate": used_total / judged if judged else None,
            "records": per,
            "review": review,
        }
