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

The package is cut by purpose: :mod:`.status`, :mod:`.recall`, :mod:`.tasks` (the
director's views and ``expand``), :mod:`.records` (a memory's life), :mod:`.archive`
(export, import, rebuild), :mod:`.outcomes` (feedback, explain), :mod:`.signals`,
:mod:`.browse` (list, journal, tombstones, applications), :mod:`.projects` and
:mod:`.learning`. This module joins their requests into the two discriminated unions the
registry and every edge parse with, and re-exports every model.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import ConfigDict, Field, TypeAdapter

from cairn.provider.contract import learning as lc
from cairn.provider.contract import projects as pc
from cairn.provider.contract.archive import (
    ExportQuery,
    ExportResponse,
    ImportRequest,
    ImportResponse,
    RebuildRequest,
    RebuildResponse,
)
from cairn.provider.contract.browse import (
    ApplicationsQuery,
    ApplicationsResponse,
    JournalQuery,
    JournalResponse,
    ListQuery,
    TombstonesQuery,
    TombstonesResponse,
)
from cairn.provider.contract.outcomes import (
    ExplainQuery,
    ExplainResponse,
    FeedbackRequest,
    FeedbackResponse,
)
from cairn.provider.contract.recall import (
    RecalledModel,
    RecallQuery,
    RecallResponse,
)
from cairn.provider.contract.records import (
    CorrectRequest,
    EvictRequest,
    ForgetRequest,
    ForgetResponse,
    HistoryQuery,
    IngestRequest,
    IngestResponse,
    PinRequest,
    RecordResponse,
    RecordsResponse,
    RememberRequest,
    RestoreRequest,
    ShowQuery,
    StoreRequest,
    WriteResponse,
)
from cairn.provider.contract.signals import (
    MatchModel,
    SignalRequest,
    SignalResponse,
)
from cairn.provider.contract.status import StatusResponse
from cairn.provider.contract.tasks import (
    ConstraintModel,
    DeliveredModel,
    ExpandQuery,
    ExpandResponse,
    TaskQuery,
    TaskResponse,
)
from cairn.provider.models import CONTRACT_VERSION as CONTRACT_VERSION
from cairn.provider.models import (
    ApplicationModel,
    EventModel,
    MemoryFields,
    RecordModel,
    RelevanceModel,
    TombstoneModel,
)

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
    | ExplainQuery
    | ExportQuery
    | pc.ProjectsQuery
    | lc.LearningQuery,
    Field(discriminator="view"),
]

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
    | ExportResponse
    | pc.ProjectsResponse
    | lc.LearningQueryResponse
)

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
    | ImportRequest
    | RebuildRequest
    | pc.NameProjectRequest
    | lc.LearningApply,
    Field(discriminator="mutation"),
]

ApplyResponse = (
    WriteResponse
    | ForgetResponse
    | FeedbackResponse
    | IngestResponse
    | SignalResponse
    | ImportResponse
    | RebuildResponse
    | pc.NameProjectResponse
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
    "APPLY",
    "CONTRACT_VERSION",
    "QUERY",
    "ApplicationModel",
    "ApplicationsQuery",
    "ApplicationsResponse",
    "ApplyRequest",
    "ApplyResponse",
    "ConstraintModel",
    "CorrectRequest",
    "DeliveredModel",
    "EventModel",
    "EvictRequest",
    "ExpandQuery",
    "ExpandResponse",
    "ExplainQuery",
    "ExplainResponse",
    "ExportQuery",
    "ExportResponse",
    "FeedbackRequest",
    "FeedbackResponse",
    "ForgetRequest",
    "ForgetResponse",
    "HistoryQuery",
    "ImportRequest",
    "ImportResponse",
    "IngestRequest",
    "IngestResponse",
    "JournalQuery",
    "JournalResponse",
    "ListQuery",
    "MatchModel",
    "MemoryFields",
    "PinRequest",
    "QueryRequest",
    "QueryResponse",
    "RebuildRequest",
    "RebuildResponse",
    "RecallQuery",
    "RecallResponse",
    "RecalledModel",
    "RecordModel",
    "RecordResponse",
    "RecordsResponse",
    "RelevanceModel",
    "RememberRequest",
    "RestoreRequest",
    "ShowQuery",
    "SignalRequest",
    "SignalResponse",
    "StatusResponse",
    "StoreRequest",
    "TaskQuery",
    "TaskResponse",
    "TombstoneModel",
    "TombstonesQuery",
    "TombstonesResponse",
    "WriteResponse",
    "learning",
    "parse_apply",
    "parse_query",
    "projects",
]
