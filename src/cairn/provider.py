"""The versioned provider contract (SPEC §7): ``status / query / apply``.

Requests and responses are typed models, so a RemoteProvider can speak the same
contract over HTTP and be a drop-in for this LocalProvider. Every mutation carries an
idempotency key, which becomes the journal event id: a retried apply is a no-op.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from cairn.errors import InvalidInput
from cairn.memory import Memory
from cairn.model import Record
from cairn.tasks import OUTCOMES, DeliveredItem

CONTRACT_VERSION = "cairn.provider.v1"
View = Literal["combined", "profile", "task", "manage", "manifest", "expand", "recall"]
Mutation = Literal[
    "remember", "correct", "forget", "restore", "observe", "review", "feedback", "delta"
]


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class StatusResponse(_Model):
    contract: str = CONTRACT_VERSION
    provider: Literal["local", "remote"]
    version: str
    backend: str
    counts: dict[str, int]
    healthy: bool
    token_configured: bool


class QueryRequest(_Model):
    view: View
    text: str | None = None  # task text or recall query
    project_id: str | None = None
    paths: tuple[str, ...] = ()
    operation: str | None = None
    phase: str | None = None
    task_type: str | None = None
    record_id: str | None = None  # for view "expand"
    session_id: str | None = None
    limit: int | None = Field(None, ge=1, le=10_000)


class QueryResponse(_Model):
    contract: str = CONTRACT_VERSION
    view: View
    items: tuple[dict[str, Any], ...] = ()
    resident: tuple[dict[str, Any], ...] = ()
    manifest: tuple[dict[str, Any], ...] = ()
    constraints: tuple[dict[str, Any], ...] = ()
    applications: tuple[dict[str, Any], ...] = ()
    preamble: str | None = None


class ApplyRequest(_Model):
    mutation: Mutation
    idempotency_key: str = Field(min_length=1, max_length=200)
    text: str | None = None
    record_id: str | None = None
    application_id: str | None = None
    outcome: str | None = None
    permanent: bool = False
    kind: str = "preference"
    trust: Literal["system", "learned", "external"] = "learned"
    title: str | None = None
    tags: tuple[str, ...] = ()
    pinned: bool = False
    occurred_at: str | None = None
    source: dict[str, Any] | None = None
    scope: Literal["global", "project"] = "global"
    project_id: str | None = None
    path_patterns: tuple[str, ...] = ()
    operations: tuple[str, ...] = ()
    phases: tuple[str, ...] = ()
    task_types: tuple[str, ...] = ()


class ApplyResponse(_Model):
    contract: str = CONTRACT_VERSION
    mutation: Mutation
    ok: bool
    record: dict[str, Any] | None = None
    detail: dict[str, Any] = Field(default_factory=dict)


def _record(record: Record) -> dict[str, Any]:
    return record.to_dict()


def _delivered(item: DeliveredItem, *, with_body: bool) -> dict[str, Any]:
    """One delivered item: a manifest line, or (resident) the full body too."""
    record = item.record
    data: dict[str, Any] = {
        "id": record.id,
        "version": record.version,
        "title": item.title,
        "summary": item.summary,
        "kind": record.kind,
        "state": record.state,
        "authority": record.authority,
        "scope": record.scope,
        "whyApplied": list(item.why_applied),
        "application_id": item.application_id,
    }
    if with_body:
        data["body"] = record.body
    return data


class LocalProvider:
    """The contract over the embedded engine."""

    def __init__(self, memory: Memory) -> None:
        self._memory = memory

    def status(self) -> StatusResponse:
        from cairn import __version__

        stats = self._memory.status()
        counts = {
            k: int(v)
            for k, v in stats.items()
            if k in ("records", "versions", "events", "tombstones")
        }
        return StatusResponse(
            provider="local",
            version=__version__,
            backend=str(stats["backend"]),
            counts=counts,
            healthy=True,
            token_configured=False,
        )

    def query(self, request: QueryRequest) -> QueryResponse:
        mem = self._memory
        if request.view in ("task", "combined", "manifest", "profile"):
            if not request.text:
                raise InvalidInput(f"view {request.view!r} needs the task text")
            ctx = mem.context(
                request.text,
                project_id=request.project_id,
                paths=request.paths,
                operation=request.operation,
                phase=request.phase,
                task_type=request.task_type,
                session_id=request.session_id,
            )
            resident = tuple(
                _delivered(i, with_body=True)
                for i in ctx.resident
                if request.view != "profile" or i.record.kind == "profile"
            )
            manifest = tuple(_delivered(i, with_body=False) for i in ctx.manifest)
            if request.view == "manifest":
                resident = ()
            if request.view == "profile":
                manifest = ()
            return QueryResponse(
                view=request.view,
                resident=resident,
                manifest=manifest,
                constraints=ctx.constraints,
                applications=ctx.applications,
            )
        if request.view == "recall":
            if request.text is None:
                raise InvalidInput("view 'recall' needs a query text")
            result = mem.recall(
                request.text, project_id=request.project_id, max_results=request.limit
            )
            items = tuple({"record": _record(c.record), "score": c.score} for c in result.memories)
            return QueryResponse(view="recall", items=items, preamble=result.preamble)
        if request.view == "expand":
            if not request.record_id:
                raise InvalidInput("view 'expand' needs a record id")
            found = mem.expand(request.record_id, task=request.text)
            return QueryResponse(
                view="expand",
                items=(
                    {
                        "record": _record(found["record"]),
                        "application_id": found["application_id"],
                        "sources": found["sources"],
                        "verification": found["verification"],
                    },
                ),
            )
        records = mem.list(project_id=request.project_id, limit=request.limit)  # manage
        return QueryResponse(view="manage", items=tuple(_record(r) for r in records))

    def apply(self, request: ApplyRequest) -> ApplyResponse:
        mem = self._memory
        key = request.idempotency_key
        if request.mutation == "remember":
            if request.text is None:  # an empty text is the engine's to refuse, precisely
                raise InvalidInput("remember needs text")
            record = mem.remember(
                request.text,
                kind=request.kind,
                trust=request.trust,
                title=request.title,
                tags=request.tags,
                pinned=request.pinned,
                occurred_at=request.occurred_at,
                source=request.source,
                scope=request.scope,
                project_id=request.project_id,
                path_patterns=request.path_patterns,
                operations=request.operations,
                phases=request.phases,
                task_types=request.task_types,
                event_id=key,
            )
            return ApplyResponse(mutation="remember", ok=True, record=_record(record))
        if request.mutation in ("correct", "forget", "restore") and not request.record_id:
            raise InvalidInput(f"{request.mutation} needs a record id")
        if request.mutation == "correct":
            if request.text is None:
                raise InvalidInput("correct needs the new text")
            record = mem.correct(str(request.record_id), request.text, event_id=key)
            return ApplyResponse(mutation="correct", ok=True, record=_record(record))
        if request.mutation == "forget":
            stone = mem.forget(str(request.record_id), permanent=request.permanent, event_id=key)
            return ApplyResponse(mutation="forget", ok=True, detail={"tombstone": stone.to_dict()})
        if request.mutation == "restore":
            record = mem.restore(str(request.record_id), event_id=key)
            return ApplyResponse(mutation="restore", ok=True, record=_record(record))
        if request.mutation == "feedback":
            if not request.application_id or request.outcome not in OUTCOMES:
                raise InvalidInput("feedback needs an application id and a known outcome")
            record = mem.feedback(request.application_id, request.outcome, event_id=key)
            return ApplyResponse(mutation="feedback", ok=True, record=_record(record))
        raise InvalidInput(
            f"mutation {request.mutation!r} is part of the contract but not served by this"
            " provider yet (it arrives with the reflection engine)"
        )
