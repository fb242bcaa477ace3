"""The provider contract ``cairn.provider.v1`` (SPEC §7): ``status``, ``query``, ``apply``.

Every interface — the Python API, the CLI, the HTTP server, MCP, the hooks — speaks these
models, so there is one route for each operation and one JSON schema for all of them.
Requests are validated at this boundary (unknown fields refused); responses are built
from the engine's values. Keys are snake_case everywhere; a record's own id is ``id``,
references to it are ``record_id``; applications are named by ``application_id``.

A query names its ``view``, a mutation its ``mutation``; both are discriminated unions.
Every mutation carries an ``idempotency_key``: the same key again is a no-op, so a retry
is always safe. The tenant is never part of a request: it is the provider's binding (the
local store's tenant, or the token of a remote one); ``agent`` picks an agent inside it.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter

from cairn.limits import MAX_BATCH, MAX_PAGE, MAX_RESULTS
from cairn.provider import learning_contract as lc
from cairn.provider import projects_contract as pc
from cairn.provider.browse_contract import (
    ApplicationsQuery,
    ApplicationsResponse,
    JournalQuery,
    ListQuery,
    TombstonesQuery,
)
from cairn.provider.models import CONTRACT_VERSION as CONTRACT_VERSION
from cairn.provider.models import (
    ApplicationModel,
    EventModel,
    Key,
    Kind,
    MemoryFields,
    Name,
    Outcome,
    Query,
    RecordId,
    RecordModel,
    RelevanceModel,
    Request,
    Short,
    Text,
    TombstoneModel,
    Trust,
    WordsFields,
)


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)


# -- status ---------------------------------------------------------------------------------


class StatusResponse(_Model):
    contract: str = CONTRACT_VERSION
    provider: Literal["local", "remote"]
    version: str
    backend: str
    tenant: str
    agent: str
    location: str | None = None  # the file or the server
    embedder: str | None = None
    embedder_chosen_by: str | None = None  # config, store, locale, first texts, default
    embedder_reason: str | None = None  # one line: why
    schema_version: int | None = None
    backend_versions: dict[str, str] = {}  # the database's: "postgresql", "pgvector"
    counts: dict[str, int]
    healthy: bool
    token_configured: bool
    warnings: list[str] = []


# -- queries --------------------------------------------------------------------------------


class _Query(Request, _Model):
    agent: Name | None = None


class RecallQuery(_Query):
    view: Literal["recall"] = "recall"
    query: Query
    project_id: Short | None = None
    max_results: int | None = Field(None, ge=1, le=MAX_RESULTS)
    max_chars: int | None = Field(None, ge=1, le=MAX_PAGE)
    include_trust: list[Trust] | None = None
    as_of: Short | None = None  # as memory stood then (evicted, superseded included)


class TaskQuery(_Query):
    view: Literal["task", "combined", "profile", "manifest"] = "task"
    task: Query
    project_id: Short | None = None
    paths: list[Short] = []
    operation: Short | None = None
    phase: Short | None = None
    task_type: Short | None = None
    session_id: Short | None = None
    profile_budget: int = Field(2000, ge=0, le=MAX_PAGE)
    task_budget: int = Field(6000, ge=0, le=MAX_PAGE)
    preview: bool = False  # diagnosis: what would be delivered, no application recorded


class ExpandQuery(_Query):
    view: Literal["expand"] = "expand"
    record_id: RecordId
    task: Query | None = None


class ShowQuery(_Query):
    view: Literal["show"] = "show"
    record_id: RecordId
    as_of: Short | None = None


class HistoryQuery(_Query):
    view: Literal["history"] = "history"
    record_id: RecordId


class ExplainQuery(_Query):
    view: Literal["explain"] = "explain"


class ExportQuery(_Query):
    view: Literal["export"] = "export"


QueryRequest = Annotated[
    RecallQuery
    | TaskQuery
    | ExpandQuery
    | ListQuery
    | ShowQuery
    | HistoryQuery
    | JournalQuery
    | TombstonesQuery
    | ApplicationsQuery
    | ExplainQuery | ExportQuery | pc.ProjectsQuery
    | lc.LearningQuery,
    Field(discriminator="view"),
]


class RecalledModel(_Model):
    row: int
    record: RecordModel
    score: float
    fused: float
    ranks: dict[str, int]
    factors: dict[str, float]
    relevance: RelevanceModel
    line: str = ""


class RecallResponse(_Model):
    contract: str = CONTRACT_VERSION
    view: Literal["recall"] = "recall"
    query: str
    preamble: str
    memories: list[RecalledModel]
    ranked: list[RecalledModel]
    trace: list[dict[str, Any]]
    timings_ms: dict[str, float]
    rerank: str | None = None
    failures: dict[str, str] = {}


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


class ExpandResponse(_Model):
    contract: str = CONTRACT_VERSION
    view: Literal["expand"] = "expand"
    record: RecordModel
    application_id: str
    sources: dict[str, Any]
    verification: dict[str, Any]


class RecordsResponse(_Model):
    contract: str = CONTRACT_VERSION
    view: Literal["manage", "history"]
    records: list[RecordModel]


class RecordResponse(_Model):
    contract: str = CONTRACT_VERSION
    view: Literal["show"] = "show"
    record: RecordModel


class JournalResponse(_Model):
    contract: str = CONTRACT_VERSION
    view: Literal["journal"] = "journal"
    events: list[EventModel]


class TombstonesResponse(_Model):
    contract: str = CONTRACT_VERSION
    view: Literal["tombstones"] = "tombstones"
    tombstones: list[TombstoneModel]


class ExplainResponse(_Model):
    contract: str = CONTRACT_VERSION
    view: Literal["explain"] = "explain"
    applications: int
    with_outcome: int
    hit_rate: float | None
    records: dict[str, dict[str, Any]]
    review: list[dict[str, Any]] = []  # the user's rules that outcomes keep failing


class ExportResponse(_Model):
    contract: str = CONTRACT_VERSION
    view: Literal["export"] = "export"
    lines: list[str]


QueryResponse = (
    RecallResponse
    | TaskResponse
    | ExpandResponse
    | RecordsResponse
    | RecordResponse
    | JournalResponse
    | TombstonesResponse
    | ApplicationsResponse
    | ExplainResponse
    | ExportResponse | pc.ProjectsResponse
    | lc.LearningQueryResponse
)


# -- mutations ------------------------------------------------------------------------------


class _Mutation(Request, _Model):
    idempotency_key: Key
    agent: Name | None = None


class RememberRequest(MemoryFields, WordsFields):
    """What the user said explicitly: authority explicit, state proven."""

    mutation: Literal["remember"] = "remember"
    idempotency_key: Key
    agent: Name | None = None


class StoreRequest(MemoryFields, WordsFields):
    """Something the agent learned: authority inferred, state trial."""

    mutation: Literal["store"] = "store"
    idempotency_key: Key
    agent: Name | None = None
    origin: Literal["user", "tool", "review", "reflection", "import", "system"] = "tool"


class IngestRequest(_Mutation, WordsFields):
    mutation: Literal["ingest"] = "ingest"
    items: list[MemoryFields]
    item_keys: list[Key] | None = None  # none: derived from the batch key, place, content
    batch_size: int = Field(256, ge=1, le=MAX_BATCH)


class CorrectRequest(_Mutation):
    """A new version: the text, and the title, kind or selectors given (None keeps; [] clears)."""

    mutation: Literal["correct"] = "correct"
    record_id: RecordId
    text: Text
    title: Short | None = None
    kind: Kind | None = None
    path_patterns: list[Short] | None = None
    operations: list[Short] | None = None
    phases: list[Short] | None = None
    task_types: list[Short] | None = None
    authority: Literal["explicit", "inferred"] = "explicit"


class ForgetRequest(_Mutation):
    mutation: Literal["forget"] = "forget"
    record_id: RecordId
    permanent: bool = False
    reason: Literal["user-remove", "markdown-delete", "negative-feedback"] = "user-remove"


class RestoreRequest(_Mutation):
    mutation: Literal["restore"] = "restore"
    record_id: RecordId


class EvictRequest(_Mutation):
    mutation: Literal["evict", "unevict"]
    record_id: RecordId


class PinRequest(_Mutation):
    mutation: Literal["pin", "unpin"]
    record_id: RecordId


class FeedbackRequest(_Mutation):
    mutation: Literal["feedback"] = "feedback"
    application_id: RecordId
    outcome: Outcome
    session_id: Short | None = None  # who judged it: set by the serving process (attribution)
    sender: Short | None = None


class SignalRequest(_Mutation):
    mutation: Literal["signal"] = "signal"
    text: Text
    project_id: Short | None = None
    store_as: Literal["rule", "preference", "fact"] | None = None
    scope: Literal["project", "global"] | None = None


class ImportRequest(_Mutation):
    mutation: Literal["import"] = "import"
    lines: list[str]
    source: Short = "import"


class RebuildRequest(_Mutation):
    mutation: Literal["rebuild"] = "rebuild"


ApplyRequest = Annotated[
    RememberRequest
    | StoreRequest
    | IngestRequest
    | CorrectRequest
    | ForgetRequest
    | RestoreRequest
    | EvictRequest
    | PinRequest
    | FeedbackRequest
    | SignalRequest
    | ImportRequest | RebuildRequest | pc.NameProjectRequest
    | lc.LearningApply,
    Field(discriminator="mutation"),
]


class WriteResponse(_Model):
    contract: str = CONTRACT_VERSION
    mutation: Literal["remember", "store", "correct", "restore", "evict", "unevict", "pin", "unpin"]
    record: RecordModel
    created: bool = True  # False: a retried key, or a statement repeating a live memory
    changed: bool = True  # False: nothing changed (same text, same state)
    duplicate_of: str | None = None
    redacted: list[str] = []  # kinds of secrets cut out of the text
    warnings: list[str] = []


class ForgetResponse(_Model):
    contract: str = CONTRACT_VERSION
    mutation: Literal["forget"] = "forget"
    tombstone: TombstoneModel
    warnings: list[str] = []


class FeedbackResponse(_Model):
    contract: str = CONTRACT_VERSION
    mutation: Literal["feedback"] = "feedback"
    record: RecordModel
    application_id: str
    outcome: str
    previous: str | None
    changes: dict[str, list[Any]]  # field -> [before, after]; empty: nothing changed


class IngestResponse(_Model):
    contract: str = CONTRACT_VERSION
    mutation: Literal["ingest"] = "ingest"
    stored: int
    skipped: int
    redacted: int
    ids: list[str]
    warnings: list[str] = []


class MatchModel(_Model):
    record: RecordModel
    coverage: float
    cosine: float
    clear: bool


class SignalResponse(_Model):
    contract: str = CONTRACT_VERSION
    mutation: Literal["signal"] = "signal"
    kind: str
    cue: str | None
    confidence: float
    language: str
    statement: str
    outcome: str
    record: RecordModel | None = None
    previous: str | None = None  # a correction: the text it replaced
    scope_source: str | None = None  # a rule: said | personal | unstated
    constraint: str | None = None
    tombstone: TombstoneModel | None = None
    candidates: list[MatchModel] = []
    warnings: list[str] = []


class ImportResponse(_Model):
    contract: str = CONTRACT_VERSION
    mutation: Literal["import"] = "import"
    imported: int
    warnings: list[str] = []


class RebuildResponse(_Model):
    contract: str = CONTRACT_VERSION
    mutation: Literal["rebuild"] = "rebuild"
    replayed: int
    warnings: list[str] = []


ApplyResponse = (
    WriteResponse
    | ForgetResponse
    | FeedbackResponse
    | IngestResponse
    | SignalResponse
    | ImportResponse
    | RebuildResponse | pc.NameProjectResponse
    | lc.LearningApplyResponse
)

QUERY: TypeAdapter[Any] = TypeAdapter(QueryRequest, config=ConfigDict(defer_build=True))
APPLY: TypeAdapter[Any] = TypeAdapter(ApplyRequest, config=ConfigDict(defer_build=True))


def parse_query(data: Any) -> Any:
    """A query request from JSON-like data (raises pydantic's ValidationError)."""
    return QUERY.validate_python(data)


def parse_apply(data: Any) -> Any:
    return APPLY.validate_python(data)


__all__ = [
    "ApplicationModel",
    "ApplicationsQuery",
    "ApplicationsResponse",
    "EventModel",
    "JournalQuery",
    "ListQuery",
    "MemoryFields",
    "RecordModel",
    "RelevanceModel",
    "TombstoneModel",
    "TombstonesQuery",
]
