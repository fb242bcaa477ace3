"""The queries of the contract over the embedded engine: one handler per route of the
registry (:mod:`cairn.provider.registry`), each one service call."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel

from cairn.model import Namespace
from cairn.provider.contract import (
    ApplicationsQuery,
    ApplicationsResponse,
    ExpandQuery,
    ExpandResponse,
    ExplainQuery,
    ExplainResponse,
    ExportQuery,
    ExportResponse,
    HistoryQuery,
    JournalQuery,
    JournalResponse,
    ListQuery,
    RecallQuery,
    RecallResponse,
    RecordResponse,
    RecordsResponse,
    ShowQuery,
    TaskQuery,
    TaskResponse,
    TombstonesQuery,
    TombstonesResponse,
)
from cairn.provider.convert import (
    application_model,
    event_model,
    recall_response,
    record_model,
    tombstone_model,
)
from cairn.provider.views import task_response
from cairn.services.reads import time_of
from cairn.storage.ports import EventFilter, RecordQuery

if TYPE_CHECKING:
    from cairn.provider.local import LocalProvider

Handler = Callable[["LocalProvider", Any, Namespace], BaseModel]


def recall(p: LocalProvider, request: RecallQuery, ns: Namespace) -> RecallResponse:
    result = p.services.recall.recall(
        request.query,
        ns,
        project_id=request.project_id,
        max_results=request.max_results,
        max_chars=request.max_chars,
        include_trust=request.include_trust,
        as_of=request.as_of,
    )
    return recall_response(result)


def task(p: LocalProvider, request: TaskQuery, ns: Namespace) -> TaskResponse:
    ctx = p.services.tasks.context(
        request.task,
        ns,
        project_id=request.project_id,
        paths=request.paths,
        operation=request.operation,
        phase=request.phase,
        task_type=request.task_type,
        session_id=request.session_id,
        profile_budget=request.profile_budget,
        task_budget=request.task_budget,
        preview=request.preview,
        broad=request.view == "combined",  # a session's start: every rule that matches
    )
    return task_response(request, ctx)


def expand(p: LocalProvider, request: ExpandQuery, ns: Namespace) -> ExpandResponse:
    found = p.services.tasks.expand(request.record_id, ns, task=request.task)
    return ExpandResponse.model_construct(
        record=record_model(found.record),
        application_id=found.application_id,
        sources=found.sources,
        verification=found.verification,
    )


def list_(p: LocalProvider, request: ListQuery, ns: Namespace) -> RecordsResponse:
    query = RecordQuery(
        ns.tenant,
        ns.agent,
        project_id=request.project_id,
        with_global=request.with_global,
        scope=request.scope,
        kinds=tuple(request.kinds),
        states=tuple(request.states),
        trust=tuple(request.trust),
        tag=request.tag,
        include_inactive=request.include_forgotten,
        owned=request.owned,
        as_of=time_of(request.as_of),
        contains=request.text or None,
        order=request.order,
        limit=request.limit,
        offset=request.offset,
    )
    records = [record_model(r) for r in p.services.reads.records(query)]
    return RecordsResponse.model_construct(view="manage", records=records)


def show(p: LocalProvider, request: ShowQuery, ns: Namespace) -> RecordResponse:
    record = p.services.reads.get(request.record_id, ns, as_of=request.as_of)
    return RecordResponse.model_construct(record=record_model(record))


def history(p: LocalProvider, request: HistoryQuery, ns: Namespace) -> RecordsResponse:
    versions = [record_model(r) for r in p.services.reads.history(request.record_id, ns)]
    return RecordsResponse.model_construct(view="history", records=versions)


def journal(p: LocalProvider, request: JournalQuery, ns: Namespace) -> JournalResponse:
    where = EventFilter(
        types=tuple(request.types),
        episode_id=request.episode_id,
        session_id=request.session_id,
        before_seq=request.before_seq,
        newest_first=request.newest_first,
    )
    events = p.services.reads.journal(
        ns, after_seq=request.after_seq, limit=request.limit, where=where
    )
    return JournalResponse.model_construct(events=[event_model(e) for e in events])


def tombstones(p: LocalProvider, request: TombstonesQuery, ns: Namespace) -> TombstonesResponse:
    stones = p.services.reads.tombstones(ns, record_id=request.record_id)
    return TombstonesResponse.model_construct(tombstones=[tombstone_model(t) for t in stones])


def applications(
    p: LocalProvider, request: ApplicationsQuery, ns: Namespace
) -> ApplicationsResponse:
    apps, total = p.services.reads.applications(request.record_id, ns, limit=request.limit)
    return ApplicationsResponse.model_construct(
        record_id=request.record_id,
        applications=[application_model(a) for a in apps],
        total=total,
    )


def explain(p: LocalProvider, request: ExplainQuery, ns: Namespace) -> ExplainResponse:
    return ExplainResponse.model_construct(**p.services.tasks.explain(ns))


def export(p: LocalProvider, request: ExportQuery, ns: Namespace) -> ExportResponse:
    return ExportResponse.model_construct(lines=list(p.services.transfer.export(ns)))


HANDLERS: dict[type[BaseModel], Handler] = {
    RecallQuery: recall,
    TaskQuery: task,
    ExpandQuery: expand,
    ListQuery: list_,
    ShowQuery: show,
    HistoryQuery: history,
    JournalQuery: journal,
    TombstonesQuery: tombstones,
    ApplicationsQuery: applications,
    ExplainQuery: explain,
    ExportQuery: export,
}
