"""The queries of the contract over the embedded engine: one handler per request of the
registry (:mod:`cairn.provider.registry`), each one service call answering with the
engine's own values (a :class:`~cairn.model.Record`, a
:class:`~cairn.engine.recall.pipeline.RecallResult`...). In process those are what a
caller gets; :mod:`cairn.provider.wire` makes them the contract's models at an edge."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pydantic import BaseModel

from cairn.engine.recall.pipeline import RecallResult
from cairn.model import Application, Event, Expanded, Namespace, Record, Tombstone
from cairn.provider.contract import (
    ApplicationsQuery,
    ExpandQuery,
    ExplainQuery,
    ExportQuery,
    HistoryQuery,
    JournalQuery,
    ListQuery,
    RecallQuery,
    ShowQuery,
    TaskQuery,
    TombstonesQuery,
)
from cairn.provider.engine import Engine, Handler
from cairn.storage.ports import EventFilter, RecordQuery

if TYPE_CHECKING:  # the task service is built on first use (cairn.provider.engine)
    from cairn.services.tasks import TaskDelivery


def recall(p: Engine, request: RecallQuery, ns: Namespace) -> RecallResult:
    return p.services.recall.recall(
        request.query,
        ns,
        project_id=request.project_id,
        max_results=request.max_results,
        max_chars=request.max_chars,
        include_trust=request.include_trust,
        as_of=request.as_of,
    )


def task(p: Engine, request: TaskQuery, ns: Namespace) -> TaskDelivery:
    return p.services.tasks().context(
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


def expand(p: Engine, request: ExpandQuery, ns: Namespace) -> Expanded:
    return p.services.tasks().expand(request.record_id, ns, task=request.task)


def list_(p: Engine, request: ListQuery, ns: Namespace) -> list[Record]:
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
        as_of=request.as_of,
        contains=request.text or None,
        order=request.order,
        limit=request.limit,
        offset=request.offset,
    )
    return list(p.services.reads.records(query))


def show(p: Engine, request: ShowQuery, ns: Namespace) -> Record:
    return p.services.reads.get(request.record_id, ns, as_of=request.as_of)


def history(p: Engine, request: HistoryQuery, ns: Namespace) -> list[Record]:
    return list(p.services.reads.history(request.record_id, ns))


def journal(p: Engine, request: JournalQuery, ns: Namespace) -> list[Event]:
    where = EventFilter(
        types=tuple(request.types),
        episode_id=request.episode_id,
        session_id=request.session_id,
        before_seq=request.before_seq,
        newest_first=request.newest_first,
    )
    return list(
        p.services.reads.journal(ns, after_seq=request.after_seq, limit=request.limit, where=where)
    )


def tombstones(p: Engine, request: TombstonesQuery, ns: Namespace) -> list[Tombstone]:
    return list(p.services.reads.tombstones(ns, record_id=request.record_id))


def applications(
    p: Engine, request: ApplicationsQuery, ns: Namespace
) -> tuple[list[Application], int]:
    """The newest applications of the memory (``limit``), and how many it has in all."""
    apps, total = p.services.reads.applications(request.record_id, ns, limit=request.limit)
    return list(apps), total


def explain(p: Engine, request: ExplainQuery, ns: Namespace) -> dict[str, Any]:
    return p.services.tasks().explain(ns)


def export(p: Engine, request: ExportQuery, ns: Namespace) -> list[str]:
    return list(p.services.transfer().export(ns))


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
