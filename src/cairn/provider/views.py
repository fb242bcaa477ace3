"""How the embedded engine's answers are shown: each query's response of the engine's
value (:func:`response`), a task's context among them — the view's part of it
(``profile``, ``manifest``, ``task``, ``combined``) and the fenced text an agent reads."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel

from cairn.engine.recall.formatting import ContextEntry, Fence, format_context
from cairn.model import Application, Expanded, Record
from cairn.provider import contract as c
from cairn.provider.contract import ConstraintModel, DeliveredModel, TaskQuery, TaskResponse
from cairn.provider.wire import (
    application_model,
    event_model,
    recall_json,
    recall_response,
    record_model,
    tombstone_model,
)

if TYPE_CHECKING:  # the task service is built on first use (cairn.provider.engine)
    from cairn.services.tasks import DeliveredItem, TaskDelivery


def _entry(item: DeliveredModel) -> ContextEntry:
    return ContextEntry(
        record_id=item.id,
        title=None,
        summary=item.summary,
        body=item.body or "",
        trust=item.trust,
        why=tuple(item.why_applied),
        application_id=item.application_id,
    )


def task_response(request: TaskQuery, ctx: TaskDelivery) -> TaskResponse:
    """The response to ``request`` of the context the engine assembled for its task."""
    view = request.view
    resident = [
        DeliveredModel.model_construct(**delivered_model(i, with_body=True))
        for i in ctx.resident
        if view != "profile" or i.record.kind == "profile"
    ]
    manifest = [
        DeliveredModel.model_construct(**delivered_model(i, with_body=False)) for i in ctx.manifest
    ]
    if view == "manifest":
        resident = []
    if view == "profile":
        manifest = []
    constraints = [c.text for c in ctx.constraints]
    text = format_context(
        constraints,
        [_entry(i) for i in resident],
        [_entry(i) for i in manifest],
        Fence.new(),
    )
    return TaskResponse.model_construct(
        view=view,
        task=ctx.task,
        project_id=request.project_id,
        resident=resident,
        manifest=manifest,
        constraints=[
            ConstraintModel.model_construct(text=c.text, cue=c.cue, confidence=c.confidence)
            for c in ctx.constraints
        ],
        applications=[application_model(a) for a in ctx.applications],
        text=text,
    )


def delivered_model(item: DeliveredItem, *, with_body: bool) -> dict[str, Any]:
    record = item.record
    return {
        "id": record.id,
        "version": record.version,
        "title": item.title,
        "summary": item.summary,
        "body": record.body if with_body else None,
        "kind": record.kind,
        "state": record.state,
        "authority": record.authority,
        "trust": record.trust,
        "scope": record.scope,
        "project_id": record.project_id,
        "delivery": item.delivery,
        "why_applied": list(item.why_applied),
        "application_id": item.application_id,
        "rank_score": item.rank_score,
    }


def _records(
    view: Literal["manage", "history"],
) -> Callable[[Any, list[Record]], c.RecordsResponse]:
    def answer(request: Any, records: list[Record]) -> c.RecordsResponse:
        return c.RecordsResponse.model_construct(
            view=view, records=[record_model(r) for r in records]
        )

    return answer


def _applications(
    request: c.ApplicationsQuery, found: tuple[list[Application], int]
) -> c.ApplicationsResponse:
    apps, total = found
    return c.ApplicationsResponse.model_construct(
        record_id=request.record_id,
        applications=[application_model(a) for a in apps],
        total=total,
    )


def _expanded(request: c.ExpandQuery, found: Expanded) -> c.ExpandResponse:
    return c.ExpandResponse.model_construct(
        record=record_model(found.record),
        application_id=found.application_id,
        sources=found.sources,
        verification=found.verification,
    )


# query -> its response, of the request (as the engine resolved it) and the engine's value
RESPONSES: dict[type[BaseModel], Callable[[Any, Any], BaseModel]] = {
    c.RecallQuery: lambda q, result: recall_response(result),
    c.TaskQuery: task_response,
    c.ExpandQuery: _expanded,
    c.ListQuery: _records("manage"),
    c.HistoryQuery: _records("history"),
    c.ShowQuery: lambda q, record: c.RecordResponse.model_construct(record=record_model(record)),
    c.JournalQuery: lambda q, events: c.JournalResponse.model_construct(
        events=[event_model(e) for e in events]
    ),
    c.TombstonesQuery: lambda q, stones: c.TombstonesResponse.model_construct(
        tombstones=[tombstone_model(t) for t in stones]
    ),
    c.ApplicationsQuery: _applications,
    c.ExplainQuery: lambda q, report: c.ExplainResponse.model_construct(**report),
    c.ExportQuery: lambda q, lines: c.ExportResponse.model_construct(lines=lines),
}


def response(request: BaseModel, value: Any) -> BaseModel:
    """The contract's response to ``request`` of the engine's ``value`` (a model of the
    contract already where the engine has no value of its own: the learning layer's)."""
    if isinstance(value, BaseModel):
        return value
    return RESPONSES[type(request)](request, value)


def response_json(request: BaseModel, value: Any) -> bytes:
    """:func:`response` as the JSON a route sends (``model_dump_json``), byte for byte; a
    recall's without building its models (:func:`cairn.provider.wire.recall_json`)."""
    if type(request) is c.RecallQuery and not isinstance(value, BaseModel):
        return recall_json(value)
    return response(request, value).model_dump_json().encode()
