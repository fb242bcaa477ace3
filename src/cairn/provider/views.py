"""How the embedded engine's answers are shown: a task's context as the contract's
:class:`~cairn.provider.contract.TaskResponse` — the view's part of it (``profile``,
``manifest``, ``task``, ``combined``) and the fenced text an agent reads."""

from __future__ import annotations

from cairn.engine.recall.formatting import ContextEntry, Fence, format_context
from cairn.provider.contract import ConstraintModel, DeliveredModel, TaskQuery, TaskResponse
from cairn.provider.convert import application_model, delivered_model
from cairn.services.tasks import TaskContext


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


def task_response(request: TaskQuery, ctx: TaskContext) -> TaskResponse:
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
