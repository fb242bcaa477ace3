"""The learning part of the provider contract ``cairn.provider.v1`` (SPEC §6, §7).

Mutations: ``observe`` (a task episode or outcome), ``reflect``, ``sweep``, ``review`` (a
transcript) and ``delta`` (one learning delta from outside, e.g. a remote reflection).
Queries: ``ask`` (an answer from memory, with citations) and ``telemetry`` (counters and
the last runs). Like every request they are validated here, strictly (unknown fields
refused, a boolean is true or false), and every mutation carries an idempotency key.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, model_validator

from cairn.errors import InvalidInput
from cairn.limits import (
    MAX_COMMAND_CHARS,
    MAX_KEY_CHARS,
    MAX_LIST_ITEMS,
    MAX_QUERY_CHARS,
    MAX_SELECTOR_CHARS,
    MAX_SHORT_CHARS,
    MAX_STEPS,
    MAX_TAG_CHARS,
)
from cairn.provider.checked import (
    ApplicationId,
    DeltaStatement,
    DeltaTitle,
    Evidence,
    InProject,
    Operations,
    Paths,
    Phases,
    ProjectId,
    Question,
    Sender,
    SessionId,
    TaskTypes,
    Transcript,
    When,
)
from cairn.provider.models import CONTRACT_VERSION as CONTRACT
from cairn.provider.models import (
    Agent,
    Key,
    Outcome,
    RecordId,
    RecordModel,
    Request,
    Trust,
)
from cairn.validation import check_text

Observation = Literal[
    "episode.completed",
    "verification.completed",
    "review.resolved",
    "failure.resolved",
    "context.outcome",
]
DocKind = Literal["skill", "profile", "topic"]


def _checked(name: str, limit: int, *, blank_ok: bool = False) -> AfterValidator:
    """Free text of an observation, checked here once for every route: no NUL, controls or
    lone surrogates, and something visible (``blank_ok``: a blank value stands for none);
    its bound is pydantic's, beside it. The learning service takes it as it is."""

    def check(value: str) -> str:
        if not value or (blank_ok and not value.strip()):
            return value
        return check_text(name, value, limit)

    return AfterValidator(check)


def _text(name: str, limit: int) -> tuple[Any, AfterValidator]:
    return Field(max_length=limit), _checked(name, limit)


_Episode = Annotated[str, *_text("episode id", MAX_KEY_CHARS)]
_Command = Annotated[str, *_text("command", MAX_COMMAND_CHARS)]
_Task = Annotated[str, *_text("task", MAX_QUERY_CHARS)]
_Topic = Annotated[str, *_text("topic", MAX_TAG_CHARS)]
_Project = Annotated[str, *_text("project", MAX_SHORT_CHARS)]
_Note = Annotated[
    str, Field(max_length=MAX_QUERY_CHARS), _checked("note", MAX_QUERY_CHARS, blank_ok=True)
]
_ITEMS = Field(max_length=MAX_LIST_ITEMS)  # a list of selectors or tools
_Tools = Annotated[list[Annotated[str, *_text("tools", MAX_SELECTOR_CHARS)]], _ITEMS]
_Paths = Annotated[list[Annotated[str, *_text("path patterns", MAX_SELECTOR_CHARS)]], _ITEMS]
_Operations = Annotated[list[Annotated[str, *_text("operations", MAX_SELECTOR_CHARS)]], _ITEMS]
_Phases = Annotated[list[Annotated[str, *_text("phases", MAX_SELECTOR_CHARS)]], _ITEMS]
_TaskTypes = Annotated[list[Annotated[str, *_text("task types", MAX_SELECTOR_CHARS)]], _ITEMS]


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)


class _Mutation(Request, _Model):
    idempotency_key: Key
    agent: Agent | None = None


class ObserveRequest(_Mutation):
    """A task episode or an outcome, valid when built: the learning service journals it
    as it is (trimmed, lower-cased, its secrets scrubbed)."""

    mutation: Literal["observe"] = "observe"
    type: Observation = "episode.completed"
    success: bool | None = None
    episode_id: _Episode | None = None
    session_id: SessionId | None = None  # a token, as the journal keeps it
    sender: Sender | None = None
    sender_trust: Trust | None = None
    content_trust: Trust = "learned"
    deterministic: bool = False
    command: _Command | None = None
    tools: _Tools = []
    steps: int | None = Field(None, ge=0, le=MAX_STEPS)
    note: _Note | None = None
    task: _Task | None = None
    topic: _Topic | None = None
    kind: DocKind | None = None
    project_id: _Project | None = None
    path_patterns: _Paths = []
    operations: _Operations = []
    phases: _Phases = []
    task_types: _TaskTypes = []
    applications: list[ApplicationId] = []
    application_id: ApplicationId | None = None
    outcome: Outcome | None = None
    occurred_at: When | None = None

    @model_validator(mode="after")
    def _judges_something(self) -> ObserveRequest:
        if self.type == "context.outcome":
            if self.application_id is None or self.outcome is None:
                raise InvalidInput("a context.outcome names its application and outcome")
        elif self.success is None:
            raise InvalidInput("an observation says whether the task succeeded (success)")
        return self


class ReflectRequest(_Mutation):
    mutation: Literal["reflect"] = "reflect"
    if_due: bool = False  # only when the last run is older than reflect.intervalHours


class SweepRequest(_Mutation):
    mutation: Literal["sweep"] = "sweep"
    if_due: bool = False


class ReviewRequest(_Mutation):
    mutation: Literal["review"] = "review"
    transcript: Transcript
    format: Literal["auto", "claude-jsonl", "messages"] = "auto"
    project_id: ProjectId | None = None


class DeltaRequest(_Mutation):
    mutation: Literal["delta"] = "delta"
    op: Literal["create", "update", "supersede", "forget"]
    target: RecordId | None = None
    kind: DocKind = "topic"
    statement: DeltaStatement | None = None
    title: DeltaTitle | None = None
    project_id: ProjectId | None = None
    path_patterns: Paths = []
    operations: Operations = []
    phases: Phases = []
    task_types: TaskTypes = []
    evidence: Evidence = []


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
    agent: Agent | None = None


class AskQuery(_Query):
    view: Literal["ask"] = "ask"
    question: Question
    project_id: InProject | None = None


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
