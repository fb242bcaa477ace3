"""The values of the provider contract: records, tombstones, applications, journal events,
and the fields of a memory to write. Shared by requests and responses
(:mod:`cairn.provider.contract`)."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from cairn.errors import InvalidInput
from cairn.identifiers import check_name
from cairn.limits import (
    MAX_BODY_CHARS,
    MAX_INT32,
    MAX_NAME_CHARS,
    MAX_PAGE,
    MAX_QUERY_CHARS,
    MAX_SHORT_CHARS,
)
from cairn.provider.checked import (
    Body,
    EpisodeId,
    IdempotencyKey,
    MemoryId,
    Operations,
    Paths,
    Phases,
    ProjectId,
    Ref,
    Source,
    Tags,
    TaskTypes,
    Title,
    When,
    normalised,
    refusal,
)

CONTRACT_VERSION = "cairn.provider.v1"
Trust = Literal["system", "learned", "external"]
Scope = Literal["global", "project"]
Outcome = Literal[
    "used-successfully", "ignored", "overridden", "corrected", "contributed-to-failure"
]
Kind = Literal["fact", "preference", "policy", "profile", "episode", "skill", "topic"]
Text = Annotated[str, Field(max_length=MAX_BODY_CHARS)]
Short = Annotated[str, Field(max_length=MAX_SHORT_CHARS)]
Query = Annotated[str, Field(max_length=MAX_QUERY_CHARS)]  # a query, a task, a note
Name = Annotated[str, Field(min_length=1, max_length=MAX_NAME_CHARS)]  # an event type
# The agent a request is for: a name safe wherever a namespace becomes part of a file name.
Agent = Annotated[
    str,
    Field(min_length=1, max_length=MAX_NAME_CHARS),
    normalised(lambda v: check_name("agent", v)),
]
Key = IdempotencyKey
RecordId = MemoryId  # as stored: trimmed, upper case (provider/checked.py)
Page = Annotated[int, Field(ge=1, le=MAX_PAGE)]  # what a listing or a journal page asks for


class Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)


# Requests are strict: a boolean is true or false (never "no" or 0), an integer is not
# 1.0 or "3", a list is a list. What the values mean is checked here too, once for every
# route, by cairn.validation's check of each field (provider/checked.py; an observation's
# in contract/learning.py): the services take a request's values as valid.
STRICT = ConfigDict(extra="forbid", frozen=True, strict=True, defer_build=True)


class Request(Model):
    """The base of every query and mutation (strict, see above)."""

    model_config = STRICT


class RecordModel(Model):
    """One version of a memory (every field of :class:`cairn.model.Record`)."""

    id: str
    version: int
    tenant: str
    agent: str
    body: str
    kind: str
    memory_type: str
    title: str | None = None
    tags: list[str] = []
    language: str | None = None
    authority: str
    origin: str
    trust: str
    scope: str
    project_id: str | None = None
    path_patterns: list[str] = []
    operations: list[str] = []
    phases: list[str] = []
    task_types: list[str] = []
    state: str
    pinned: bool = False
    evicted_at: str | None = None
    forgotten_at: str | None = None
    proof_count: int = 0
    failure_count: int = 0
    used_count: int = 0
    ignored_count: int = 0
    last_applied_at: str | None = None
    last_success_at: str | None = None
    confidence: float = 1.0
    importance: float = 0.5
    evidence: list[str] = []
    source: dict[str, Any] = {}
    external_ref: str | None = None
    episode_id: str | None = None
    position: int | None = None
    occurred_at: str | None = None
    recorded_at: str
    valid_to: str | None = None
    expired_at: str | None = None
    supersedes: int | None = None
    superseded_by: int | None = None
    text_hash: str


class RelevanceModel(Model):
    score: float  # absolute, in [0, 1]: what rag.minScore is a floor on
    evidence: float
    cosine: float | None
    coverage: float
    surprise: float | None = None  # the cosine against the store's own similarities


class TombstoneModel(Model):
    record_id: str
    tenant: str
    agent: str
    scope: str
    project_id: str | None
    text_hash: str
    reason: str
    permanent: bool
    removed_at: str
    restored_at: str | None = None


class ApplicationModel(Model):
    application_id: str
    tenant: str
    agent: str
    record_id: str
    record_version: int
    task: str | None
    delivery: str
    why_applied: list[str]
    created_at: str
    outcome: str | None = None
    outcome_at: str | None = None
    session_id: str | None = None
    outcome_source: str | None = None
    outcome_session: str | None = None


class EventModel(Model):
    event_id: str
    type: str
    tenant: str
    agent: str
    payload: dict[str, Any]
    occurred_at: str
    recorded_at: str
    seq: int | None = None
    episode_id: str | None = None
    session_id: str | None = None
    sender: str | None = None
    caused_by: str | None = None
    supersedes: str | None = None


class MemoryFields(Model):
    """A memory to write: the body and every optional field a caller may set, each
    checked here once for every route (:mod:`cairn.provider.checked`) and held in the
    form cairn stores."""

    model_config = STRICT

    body: Body
    kind: Kind | None = None  # remember: preference; store and ingest: fact
    title: Title | None = None
    tags: Tags = []
    trust: Trust = "learned"
    occurred_at: When | None = None
    source: Source | None = None
    external_ref: Ref | None = None
    pinned: bool = False
    memory_type: Literal["semantic", "episodic", "procedural", "working"] | None = None
    scope: Scope = "global"
    project_id: ProjectId | None = None
    path_patterns: Paths = []
    operations: Operations = []
    phases: Phases = []
    task_types: TaskTypes = []
    episode_id: EpisodeId | None = None
    position: int | None = Field(None, ge=0, le=MAX_INT32)

    @model_validator(mode="after")
    def _placed(self) -> MemoryFields:
        if self.scope == "project" and self.project_id is None:
            raise refusal(InvalidInput("a project-scoped memory needs a project id"))
        if self.scope == "global" and self.project_id is not None:
            raise refusal(InvalidInput("project_id is given but scope is 'global'"))
        return self


class WordsFields(Model):
    """A write whose body is someone's words (``read_words``): the statement reader sets
    the selector and kind they state; "in this repo" binds the memory to
    ``current_project_id``, the repository the words were said in."""

    read_words: bool = False
    current_project_id: ProjectId | None = None
