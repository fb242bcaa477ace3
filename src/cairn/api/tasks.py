"""The Python API of recall and personal memory for tasks (SPEC §5): what a task should
know, one item in full, how an applied memory did, what outcomes taught, and a user's
statement acted on; with the plain frozen values a task's context is returned as."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from cairn.api import Api
from cairn.engine.recall.pipeline import RecallResult
from cairn.model import Application, Expanded, Record
from cairn.provider import contract as c
from cairn.provider.convert import request_list
from cairn.provider.wire import to_application, to_record


@dataclass(frozen=True, slots=True)
class DeliveredItem:
    record_id: str
    version: int
    title: str
    summary: str
    body: str | None
    kind: str
    trust: str
    delivery: str
    why_applied: tuple[str, ...]
    application_id: str


@dataclass(frozen=True, slots=True)
class TaskContext:
    task: str
    resident: tuple[DeliveredItem, ...]
    manifest: tuple[DeliveredItem, ...]
    constraints: tuple[str, ...]
    applications: tuple[Application, ...]


def delivered(item: c.DeliveredModel) -> DeliveredItem:
    return DeliveredItem(
        item.id,
        item.version,
        item.title,
        item.summary,
        item.body,
        item.kind,
        item.trust,
        item.delivery,
        tuple(item.why_applied),
        item.application_id,
    )


class Tasks(Api):
    def recall(
        self,
        query: str,
        *,
        project_id: str | None = None,
        max_results: int | None = None,
        max_chars: int | None = None,
        include_trust: Sequence[str] | None = None,
        as_of: str | datetime | None = None,
        agent: str | None = None,
    ) -> RecallResult:
        """The memories that apply to ``query``, inside the budget, with a trace
        (``as_of``: as memory stood then)."""
        result: RecallResult = self._client.value(
            c.RecallQuery,
            agent=agent,
            query=query,
            project_id=project_id,
            max_results=max_results,
            max_chars=max_chars,
            include_trust=request_list("include_trust", include_trust),
            as_of=as_of.isoformat() if isinstance(as_of, datetime) else as_of,
        )
        return result

    # -- personal memory for tasks -------------------------------------------------------

    def context(
        self,
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
        agent: str | None = None,
    ) -> TaskContext:
        """What this task should know: resident rules, a manifest, one-off constraints."""
        response = self._client.query(
            c.TaskQuery,
            c.TaskResponse,
            agent=agent,
            task=task,
            project_id=project_id,
            paths=request_list("paths", paths),
            operation=operation,
            phase=phase,
            task_type=task_type,
            session_id=session_id,
            profile_budget=profile_budget,
            task_budget=task_budget,
        )
        return TaskContext(
            task=response.task,
            resident=tuple(delivered(i) for i in response.resident),
            manifest=tuple(delivered(i) for i in response.manifest),
            constraints=tuple(x.text for x in response.constraints),
            applications=tuple(to_application(a) for a in response.applications),
        )

    def expand(
        self, record_id: str, *, task: str | None = None, agent: str | None = None
    ) -> Expanded:
        """The full body, sources and verification of one item, recorded as an application."""
        found: Expanded = self._client.value(
            c.ExpandQuery, agent=agent, record_id=record_id, task=task
        )
        return found

    def feedback(
        self,
        application_id: str,
        outcome: str,
        *,
        event_id: str | None = None,
        agent: str | None = None,
        session_id: str | None = None,
        sender: str | None = None,
    ) -> Record:
        """Report how an applied memory did. One outcome per application: the same one
        again changes nothing; a different one replaces it. ``session_id`` and ``sender``
        say who judged it, as this process knows (default: the owner, in no known
        session); a failure counts once two sessions report one."""
        response = self._client.apply(
            c.FeedbackRequest,
            c.FeedbackResponse,
            event_id,
            agent=agent,
            application_id=application_id,
            outcome=outcome,
            session_id=session_id,
            sender=sender,
        )
        return to_record(response.record)

    def explain(self, *, agent: str | None = None) -> dict[str, Any]:
        """Hit rate (relevance) and outcome value per memory, and totals."""
        report: dict[str, Any] = self._client.query(
            c.ExplainQuery, c.ExplainResponse, agent=agent
        ).model_dump(exclude={"contract", "view"})
        return report

    def signal(
        self,
        text: str,
        *,
        project_id: str | None = None,
        event_id: str | None = None,
        agent: str | None = None,
    ) -> c.SignalResponse:
        """Classify a user statement and act on it: a rule is remembered, a one-off comes
        back as a constraint, a forget acts only on one clear match."""
        response: c.SignalResponse = self._client.apply(
            c.SignalRequest,
            c.SignalResponse,
            event_id,
            agent=agent,
            text=text,
            project_id=project_id,
        )
        return response
