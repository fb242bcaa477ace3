"""The learning part of the provider contract ``cairn.provider.v1`` (SPEC §6, §7).

Mutations: ``observe`` (a task episode or outcome), ``reflect``, ``sweep``, ``review`` (a
transcript) and ``delta`` (one learning delta from outside, e.g. a remote reflection).
Queries: ``ask`` (an answer from memory, with citations) and ``telemetry`` (counters and
the last runs). Like every request they are validated here, strictly (unknown fields
refused, a boolean is true or false), and every mutation carries an idempotency key.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from cairn.limits import MAX_STEPS
from cairn.provider.models import CONTRACT_VERSION as CONTRACT
from cairn.provider.models import (
    Key,
    Name,
    Outcome,
    RecordId,
    RecordModel,
    Request,
    Short,
    Text,
    Trust,
)
from cairn.provider.models import Query as Note

Observation = Literal[
    "episode.completed",
    "verification.completed",
    "review.resolved",
    "failure.resolved",
    "context.outcome",
]
DocKind = Literal["skill", "profile", "topic"]


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)


class _Mutation(Request, _Model):
    idempotency_key: Key
    agent: Name | None = None


class ObserveRequest(_Mutation):
    mutation: Literal["observe"] = "observe"
    type: Observation = "episode.completed"
    success: bool | None = None
    episode_id: Short | None = None
    session_id: Short | None = None
    sender: Short | None = None
    sender_trust: Trust | None = None
    content_trust: Trust = "learned"
    deterministic: bool = False
    command: Short | None = None
    tools: list[Short] = []
    steps: int | None = Field(None, ge=0, le=MAX_STEPS)
    note: Note | None = None
    task: Note | None = None
    topic: Short | None = None
    kind: DocKind | None = None
    project_id: Short | None = None
    path_patterns: list[Short] = []
    operations: list[Short] = []
    phases: list[Short] = []
    task_types: list[Short] = []
    applications: list[RecordId] = []
    application_id: RecordId | None = None
    outcome: Outcome | None = None
    occurred_at: Short | None = None


class ReflectRequest(_Mutation):
    mutation: Literal["reflect"] = "reflect"
    if_due: bool = False  # only when the last run is older than reflect.intervalHours


class SweepRequest(_Mutation):
    mutation: Literal["sweep"] = "sweep"
    if_due: bool = False


class ReviewRequest(_Mutation):
    mutation: Literal["review"] = "review"
    transcript: Text
    format: Literal["auto", "claude-jsonl", "messages"] = "auto"
    project_id: Short | None = None


class DeltaRequest(_Mutation):
    mutation: Literal["delta"] = "delta"
    op: Literal["create", "update", "supersede", "forget"]
    target: RecordId | None = None
    kind: DocKind = "topic"
    statement: Note | None = None
    title: Short | None = None
    project_id: Short | None = None
    path_patterns: list[Short] = []
    operations: list[Short] = []
    phases: list[Short] = []
    task_types: list[Short] = []
    evidence: list[Key] = []


LearningApply = ObserveRequest | ReflectRequest | SweepRequest | ReviewRequest | DeltaRequest


class ObserveResponse(_Model):
    contract: str = CONTRACT
    mutation: Literal["observe"] = "observe"
    event_id: str
    kept: bool
    duplicate: bool = False
    reason: str | None = None
    sender_trust: str | None = None
    judged: list[str] = []
    lifecycle: list[dict[str, Any]] = []
    evicted: list[dict[str, Any]] = []
    changed: bool = False
    warnings: list[str] = []


class ReflectResponse(_Model):
    contract: str = CONTRACT
    mutation: Literal["reflect"] = "reflect"
    ran: bool
    abstained: bool
    reason: str | None = None
    admitted: int = 0
    funnel: dict[str, Any] = {}
    deltas: list[dict[str, Any]] = []
    noops: int = 0
    merged: int = 0
    lifecycle: list[dict[str, Any]] = []
    cursor: int = 0
    changed: bool = False
    warnings: list[str] = []


class SweepResponse(_Model):
    contract: str = CONTRACT
    mutation: Literal["sweep"] = "sweep"
    ran: bool
    reason: str | None = None
    examined: int = 0
    evicted: list[dict[str, Any]] = []
    changed: bool = False
    warnings: list[str] = []


class ReviewResponse(_Model):
    contract: str = CONTRACT
    mutation: Literal["review"] = "review"
    stored: list[RecordModel]
    skipped: list[dict[str, Any]]
    turns: int
    user_turns: int
    llm: bool = False
    reason: str | None = None
    changed: bool = False
    warnings: list[str] = []


class DeltaResponse(_Model):
    contract: str = CONTRACT
    mutation: Literal["delta"] = "delta"
    applied: bool
    delta: dict[str, Any]
    record: RecordModel | None = None
    changed: bool = False
    warnings: list[str] = []


LearningApplyResponse = (
    ObserveResponse | ReflectResponse | SweepResponse | ReviewResponse | DeltaResponse
)


class _Query(Request, _Model):
    agent: Name | None = None


class AskQuery(_Query):
    view: Literal["ask"] = "ask"
    question: Note
    project_id: Short | None = None


class TelemetryQuery(_Query):
    view: Literal["telemetry"] = "telemetry"
    all_agents: bool = False
    runs: int = Field(5, ge=0, le=100)


LearningQuery = AskQuery | TelemetryQuery


class CitationModel(_Model):
    record_id: str
    quote: str
    score: float


class AskResponse(_Model):
    contract: str = CONTRACT
    view: Literal["ask"] = "ask"
    question: str
    answered: bool
    answer: str
    citations: list[CitationModel]
    llm: bool = False
    warnings: list[str] = []


class TelemetryResponse(_Model):
    contract: str = CONTRACT
    view: Literal["telemetry"] = "telemetry"
    agents: dict[str, dict[str, Any]]  # agent -> {"counters": {...}, "runs": [...]}
    llm_features: list[str] = []


LearningQueryResponse = AskResponse | TelemetryResponse
