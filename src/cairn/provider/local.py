"""The contract over the embedded engine: each request goes to one service call."""

from __future__ import annotations

from collections.abc import Callable
from contextlib import nullcontext
from dataclasses import dataclass
from typing import Any

from cairn.engine.recall.formatting import ContextEntry, Fence, format_context
from cairn.errors import InvalidInput
from cairn.identifiers import check_name
from cairn.provider.contract import (
    ApplicationsQuery,
    ApplicationsResponse,
    ApplyRequest,
    ApplyResponse,
    ConstraintModel,
    CorrectRequest,
    DeliveredModel,
    EvictRequest,
    ExpandQuery,
    ExpandResponse,
    ExplainQuery,
    ExplainResponse,
    ExportQuery,
    ExportResponse,
    FeedbackRequest,
    FeedbackResponse,
    ForgetRequest,
    ForgetResponse,
    HistoryQuery,
    ImportRequest,
    ImportResponse,
    IngestRequest,
    IngestResponse,
    JournalQuery,
    JournalResponse,
    ListQuery,
    MatchModel,
    PinRequest,
    QueryRequest,
    QueryResponse,
    RebuildRequest,
    RebuildResponse,
    RecallQuery,
    RecordResponse,
    RecordsResponse,
    RememberRequest,
    RestoreRequest,
    ShowQuery,
    SignalRequest,
    SignalResponse,
    StatusResponse,
    StoreRequest,
    TaskQuery,
    TaskResponse,
    TombstonesQuery,
    TombstonesResponse,
    WriteResponse,
)
from cairn.provider.convert import (
    application_model,
    delivered_model,
    event_model,
    memory_input,
    recall_response,
    record_model,
    tombstone_model,
)
from cairn.provider.learning import (
    LEARNING_APPLY,
    LEARNING_QUERY,
    LEARNING_RESPONSES,
    LearningServices,
    apply_learning,
    query_learning,
)
from cairn.services.journal import Namespace
from cairn.services.purges import Purges
from cairn.services.reads import Reads, time_of
from cairn.services.recall import Recall
from cairn.services.replay import Replay
from cairn.services.signals import Signals
from cairn.services.tasks import Tasks
from cairn.services.transfer import Transfer
from cairn.services.writes import Writes
from cairn.storage.ports import EventFilter, RecordQuery, RecordStore, SearchIndex

Progress = Callable[[int, int], None]


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


@dataclass(frozen=True, slots=True)
class Ports:
    """The storage pair the services run on (kept for status and diagnostics)."""

    records: RecordStore
    index: SearchIndex


@dataclass(frozen=True, slots=True)
class Services:
    """What the local provider is built from (wired by :mod:`cairn.compose`)."""

    writes: Writes
    reads: Reads
    recall: Recall
    tasks: Tasks
    signals: Signals
    transfer: Transfer
    replay: Replay
    purges: Purges
    ports: Ports
    describe: Callable[[], dict[str, Any]]  # backend, location, embedder
    after_write: Callable[[Namespace], list[str]]  # refresh derived files; warnings
    close: Callable[[], None]
    learning: LearningServices | None = None  # observe, reflect, sweep, review, ask


class LocalProvider:
    """``tenant`` is this provider's binding; ``agent`` the default agent of requests."""

    def __init__(self, services: Services, *, tenant: str, agent: str, owner: bool = True) -> None:
        self._s = services
        self.tenant = tenant
        self.agent = agent
        self._owner = owner  # a bound sibling shares the engine and never closes it
        self.progress: Progress | None = None  # bulk work reports here when set

    def _ns(self, agent: str | None) -> Namespace:
        return Namespace(self.tenant, check_name("agent", agent) if agent else self.agent)

    def close(self) -> None:
        if self._owner:
            self._s.close()

    @property
    def ports(self) -> Ports:
        """The storage pair under this provider, for diagnostics and benchmarks."""
        return self._s.ports

    def bound(self, *, tenant: str | None = None, agent: str | None = None) -> LocalProvider:
        """This engine bound to another tenant or default agent (the same services)."""
        return LocalProvider(
            self._s,
            tenant=check_name("tenant", tenant) if tenant is not None else self.tenant,
            agent=check_name("agent", agent) if agent is not None else self.agent,
            owner=False,
        )

    # -- status --------------------------------------------------------------------------

    def status(self) -> StatusResponse:
        from cairn import __version__

        ns = self._ns(None)
        stats = self._s.reads.stats(ns)
        info = self._s.describe()
        return StatusResponse(
            provider="local",
            version=__version__,
            backend=str(info.get("backend", "sqlite")),
            tenant=ns.tenant,
            agent=ns.agent,
            location=info.get("location"),
            embedder=info.get("embedder"),
            schema_version=stats.schema_version,
            backend_versions=dict(info.get("versions") or {}),
            counts={
                "records": stats.records,
                "versions": stats.versions,
                "events": stats.events,
                "tombstones": stats.tombstones,
                "applications": stats.applications,
                "bytes": stats.bytes,
            },
            healthy=True,
            token_configured=False,
            warnings=list(info.get("warnings", [])),
        )

    # -- queries -------------------------------------------------------------------------

    def query(self, request: QueryRequest) -> QueryResponse:
        ns = self._ns(request.agent)
        s = self._s
        if isinstance(request, LEARNING_QUERY):
            return query_learning(self._learning(), request, ns)
        if isinstance(request, RecallQuery):
            result = s.recall.recall(
                request.query,
                ns,
                project_id=request.project_id,
                max_results=request.max_results,
                max_chars=request.max_chars,
                include_trust=request.include_trust,
                as_of=request.as_of,
            )
            return recall_response(result)
        if isinstance(request, TaskQuery):
            return self._task(request, ns)
        if isinstance(request, ExpandQuery):
            found = s.tasks.expand(request.record_id, ns, task=request.task)
            return ExpandResponse.model_construct(
                record=record_model(found.record),
                application_id=found.application_id,
                sources=found.sources,
                verification=found.verification,
            )
        if isinstance(request, ListQuery):
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
            records = [record_model(r) for r in s.reads.records(query)]
            return RecordsResponse.model_construct(view="manage", records=records)
        if isinstance(request, ShowQuery):
            record = s.reads.get(request.record_id, ns, as_of=request.as_of)
            return RecordResponse.model_construct(record=record_model(record))
        if isinstance(request, HistoryQuery):
            versions = [record_model(r) for r in s.reads.history(request.record_id, ns)]
            return RecordsResponse.model_construct(view="history", records=versions)
        if isinstance(request, JournalQuery):
            where = EventFilter(
                types=tuple(request.types),
                episode_id=request.episode_id,
                session_id=request.session_id,
                before_seq=request.before_seq,
                newest_first=request.newest_first,
            )
            events = s.reads.journal(
                ns, after_seq=request.after_seq, limit=request.limit, where=where
            )
            return JournalResponse.model_construct(events=[event_model(e) for e in events])
        if isinstance(request, TombstonesQuery):
            stones = s.reads.tombstones(ns, record_id=request.record_id)
            return TombstonesResponse.model_construct(
                tombstones=[tombstone_model(t) for t in stones]
            )
        if isinstance(request, ApplicationsQuery):
            apps, total = s.reads.applications(request.record_id, ns, limit=request.limit)
            return ApplicationsResponse.model_construct(
                record_id=request.record_id,
                applications=[application_model(a) for a in apps],
                total=total,
            )
        if isinstance(request, ExplainQuery):
            report = s.tasks.explain(ns)
            return ExplainResponse.model_construct(**report)
        if isinstance(request, ExportQuery):
            return ExportResponse.model_construct(lines=list(s.transfer.export(ns)))
        raise InvalidInput(f"unknown view {getattr(request, 'view', '?')!r}")

    def _task(self, request: TaskQuery, ns: Namespace) -> TaskResponse:
        ctx = self._s.tasks.context(
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
        )
        view = request.view
        resident = [
            DeliveredModel.model_construct(**delivered_model(i, with_body=True))
            for i in ctx.resident
            if view != "profile" or i.record.kind == "profile"
        ]
        manifest = [
            DeliveredModel.model_construct(**delivered_model(i, with_body=False))
            for i in ctx.manifest
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

    # -- mutations -----------------------------------------------------------------------

    def apply(self, request: ApplyRequest) -> ApplyResponse:
        ns = self._ns(request.agent)
        # A store that words its errors by purpose (PostgreSQL) says "writing" for every
        # failure of a mutation, its first read included.
        intent = getattr(self._s.ports.records, "intent", None)
        with intent("writing") if intent is not None else nullcontext():
            return self._applied(request, ns)

    def _applied(self, request: ApplyRequest, ns: Namespace) -> ApplyResponse:
        response = self._apply(request, ns)
        if isinstance(response, FeedbackResponse) and response.changes and self._s.learning:
            # A doc's lifecycle follows its outcomes at once (promotion, eviction).
            self._s.learning.learning.settle(ns, [response.record.id])
        quiet = isinstance(response, LEARNING_RESPONSES) and not response.changed
        if not quiet and (not isinstance(response, FeedbackResponse) or response.changes):
            warnings = self._s.after_write(ns)
            if warnings and hasattr(response, "warnings"):
                response = response.model_copy(update={"warnings": [*response.warnings, *warnings]})
        return response

    def _apply(self, request: ApplyRequest, ns: Namespace) -> ApplyResponse:
        s = self._s
        key = request.idempotency_key
        if isinstance(request, LEARNING_APPLY):
            return apply_learning(self._learning(), request, ns)
        if isinstance(request, RememberRequest | StoreRequest):
            kind = "preference" if isinstance(request, RememberRequest) else "fact"
            item = memory_input(request, kind)
            if isinstance(request, RememberRequest):
                written = s.writes.remember(item, ns, event_id=key)
            else:
                written = s.writes.store(item, ns, origin=request.origin, event_id=key)
            return WriteResponse.model_construct(
                mutation=request.mutation,
                record=record_model(written.record),
                created=written.created,
                changed=written.created,
                duplicate_of=written.duplicate_of,
                redacted=list(written.redacted),
                warnings=[],
            )
        if isinstance(request, IngestRequest):
            items = [memory_input(i, "fact") for i in request.items]
            done = s.writes.store_many(
                items,
                ns,
                batch_size=request.batch_size,
                keys=request.item_keys,
                progress=self.progress,
            )
            return IngestResponse.model_construct(
                stored=len(done.records),
                skipped=done.skipped,
                redacted=done.redacted,
                ids=[r.id for r in done.records],
                warnings=[],
            )
        if isinstance(request, CorrectRequest):
            corrected = s.writes.correct(
                request.record_id,
                request.text,
                ns,
                title=request.title,
                kind=request.kind,
                selectors={
                    name: getattr(request, name)
                    for name in ("path_patterns", "operations", "phases", "task_types")
                    if getattr(request, name) is not None
                },
                authority=request.authority,
                event_id=key,
            )
            return WriteResponse.model_construct(
                mutation="correct",
                record=record_model(corrected.record),
                created=False,
                changed=corrected.changed,
                duplicate_of=None,
                redacted=[],
                warnings=[],
            )
        if isinstance(request, ForgetRequest):
            stone = s.writes.forget(
                request.record_id,
                ns,
                permanent=request.permanent,
                reason=request.reason,
                event_id=key,
            )
            warnings = s.purges.finish() if request.permanent else []
            return ForgetResponse.model_construct(
                tombstone=tombstone_model(stone), warnings=warnings
            )
        if isinstance(request, RestoreRequest):
            record = s.writes.restore(request.record_id, ns, event_id=key)
            return self._written("restore", record)
        if isinstance(request, EvictRequest):
            record = s.writes.set_eviction(
                request.record_id, ns, evicted=request.mutation == "evict", event_id=key
            )
            return self._written(request.mutation, record)
        if isinstance(request, PinRequest):
            record = s.writes.set_pinned(
                request.record_id, ns, pinned=request.mutation == "pin", event_id=key
            )
            return self._written(request.mutation, record)
        if isinstance(request, FeedbackRequest):
            result = s.tasks.feedback(request.application_id, request.outcome, ns, event_id=key)
            return FeedbackResponse.model_construct(
                record=record_model(result.record),
                application_id=result.application_id,
                outcome=result.outcome,
                previous=result.previous,
                changes={k: list(v) for k, v in result.changes.items()},
            )
        if isinstance(request, SignalRequest):
            return self._signal(request, ns)
        if isinstance(request, ImportRequest):
            count = s.transfer.import_(request.lines, ns, source=request.source)
            warnings = s.purges.finish()  # an imported permanent tombstone purges the copy
            return ImportResponse.model_construct(imported=count, warnings=warnings)
        if isinstance(request, RebuildRequest):
            replayed = s.replay.rebuild(ns.tenant, progress=self.progress)
            warnings = s.purges.finish()
            return RebuildResponse.model_construct(replayed=replayed, warnings=warnings)
        raise InvalidInput(f"unknown mutation {getattr(request, 'mutation', '?')!r}")

    def _learning(self) -> LearningServices:
        if self._s.learning is None:
            raise InvalidInput("this engine was assembled without the learning layer")
        return self._s.learning

    def _written(self, mutation: Any, record: Any) -> WriteResponse:
        return WriteResponse.model_construct(
            mutation=mutation,
            record=record_model(record),
            created=False,
            changed=True,
            duplicate_of=None,
            redacted=[],
            warnings=[],
        )

    def _signal(self, request: SignalRequest, ns: Namespace) -> SignalResponse:
        found = self._s.signals.signal(
            request.text, ns, project_id=request.project_id, event_id=request.idempotency_key
        )
        record = found.written.record if found.written is not None else found.target
        return SignalResponse.model_construct(
            kind=found.kind,
            cue=found.cue,
            confidence=found.confidence,
            language=found.language,
            statement=found.statement,
            outcome=found.outcome,
            record=record_model(record) if record is not None else None,
            constraint=found.constraint,
            tombstone=tombstone_model(found.forgotten) if found.forgotten else None,
            candidates=[
                MatchModel.model_construct(
                    record=record_model(c.record),
                    coverage=c.coverage,
                    cosine=c.cosine,
                    clear=c.clear,
                )
                for c in found.candidates
            ],
            warnings=[],
        )
