"""The task views (``task``, ``combined``, ``profile``, ``manifest``) and ``expand``: what the
director delivers for a task — resident memories with their bodies, a manifest of titles,
the constraints and the application records that make an outcome attributable — and the
whole of one delivered memory, with its sources, when the agent asks for it."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from cairn.limits import MAX_PAGE
from cairn.provider.checked import InProject, Operation, Phase, SessionId, Task, TaskPaths, TaskType
from cairn.provider.models import (
    CONTRACT_VERSION,
    Agent,
    ApplicationModel,
    RecordId,
    RecordModel,
    Request,
)


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)


class _Query(Request, _Model):
    agent: Agent | None = None


class TaskQuery(_Query):
    view: Literal["task", "combined", "profile", "manifest"] = "task"
    task: Task
    project_id: InProject | None = None
    paths: TaskPaths = []
    operation: Operation | None = None
    phase: Phase | None = None
    task_type: TaskType | None = None
    session_id: SessionId | None = None
    profile_budget: int = Field(2000, ge=0, le=MAX_PAGE)
    task_budget: int = Field(6000, ge=0, le=MAX_PAGE)
    preview: bool = False  # diagnosis: what would be delivered, no application recorded


class DeliveredModel(_Model):
    id: str
    version: int
    title: str
    summary: str
    body: str | None = None  # resident items carry their body; manifest items do not
    kind: str
    state: str
    authority: str
    trust: str
    scope: str
    project_id: str | None
    delivery: str
    why_applied: list[str]
    application_id: str
    rank_score: float


class ConstraintModel(_Model):
    text: str
    cue: str | None
    confidence: float


class TaskResponse(_Model):
    contract: str = CONTRACT_VERSION
    view: Literal["task", "combined", "profile", "manifest"]
    task: str
    project_id: str | None
    resident: list[DeliveredModel]
    manifest: list[DeliveredModel]
    constraints: list[ConstraintModel]
    applications: list[ApplicationModel]
    text: str = ""  # the director's text for the agent (resident, manifest, why), fenced


class ExpandQuery(_Query):
    view: Literal["expand"] = "expand"
    record_id: RecordId
    task: Task | None = None


class ExpandResponse(_Model):
    contract: str = CONTRACT_VERSION
    view: Literal["expand"] = "expand"
    record: RecordModel
    application_id: str
    sources: dict[str, Any]
    verification: dict[str, Any]
