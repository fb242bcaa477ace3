"""The mutations of the contract over the embedded engine: one handler per route of the
registry (:mod:`cairn.provider.registry`), each one service call under the request's
idempotency key."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from cairn.model import Namespace
from cairn.provider.contract import (
    CorrectRequest,
    EvictRequest,
    FeedbackRequest,
    FeedbackResponse,
    ForgetRequest,
    ForgetResponse,
    ImportRequest,
    ImportResponse,
    IngestRequest,
    IngestResponse,
    MatchModel,
    PinRequest,
    RebuildRequest,
    RebuildResponse,
    RememberRequest,
    RestoreRequest,
    SignalRequest,
    SignalResponse,
    StoreRequest,
    WriteResponse,
)
from cairn.provider.convert import memory_input, words_of
from cairn.provider.engine import Engine, Handler
from cairn.provider.wire import record_model, tombstone_model


def _written(mutation: Any, record: Any) -> WriteResponse:
    return WriteResponse.model_construct(
        mutation=mutation,
        record=record_model(record),
        created=False,
        changed=True,
        duplicate_of=None,
        redacted=[],
        warnings=[],
    )


def _stored(request: RememberRequest | StoreRequest, written: Any) -> WriteResponse:
    return WriteResponse.model_construct(
        mutation=request.mutation,
        record=record_model(written.record),
        created=written.created,
        changed=written.created,
        duplicate_of=written.duplicate_of,
        redacted=list(written.redacted),
        warnings=[],
    )


def remember(p: Engine, request: RememberRequest, ns: Namespace) -> WriteResponse:
    item = memory_input(request, "preference")
    words = words_of(request, request, "preference")
    written = p.services.writes().remember(item, ns, event_id=request.idempotency_key, words=words)
    return _stored(request, written)


def store(p: Engine, request: StoreRequest, ns: Namespace) -> WriteResponse:
    item = memory_input(request, "fact")
    written = p.services.writes().store(
        item,
        ns,
        origin=request.origin,
        event_id=request.idempotency_key,
        words=words_of(request, request, "fact"),
    )
    return _stored(request, written)


def ingest(p: Engine, request: IngestRequest, ns: Namespace) -> IngestResponse:
    items = [memory_input(i, "fact") for i in request.items]
    # Without a key per item, each is derived from the batch's key (a retry stores
    # nothing twice); each body is read as a statement when the route says so.
    done = p.services.writes().store_many(
        items,
        ns,
        batch_size=request.batch_size,
        keys=request.item_keys,
        batch_key=request.idempotency_key,
        progress=p.progress,
        words=[words_of(request, i, "fact") for i in request.items] if request.read_words else None,
    )
    return IngestResponse.model_construct(
        stored=len(done.records),
        skipped=done.skipped,
        redacted=done.redacted,
        ids=[r.id for r in done.records],
        warnings=[],
    )


def correct(p: Engine, request: CorrectRequest, ns: Namespace) -> WriteResponse:
    corrected = p.services.writes().correct(
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
        event_id=request.idempotency_key,
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


def forget(p: Engine, request: ForgetRequest, ns: Namespace) -> ForgetResponse:
    s = p.services
    stone = s.writes().forget(
        request.record_id,
        ns,
        permanent=request.permanent,
        reason=request.reason,
        event_id=request.idempotency_key,
    )
    warnings = s.purges.finish() if request.permanent else []
    return ForgetResponse.model_construct(tombstone=tombstone_model(stone), warnings=warnings)


def restore(p: Engine, request: RestoreRequest, ns: Namespace) -> WriteResponse:
    record = p.services.writes().restore(request.record_id, ns, event_id=request.idempotency_key)
    return _written("restore", record)


def evict(p: Engine, request: EvictRequest, ns: Namespace) -> WriteResponse:
    record = p.services.writes().set_eviction(
        request.record_id,
        ns,
        evicted=request.mutation == "evict",
        event_id=request.idempotency_key,
    )
    return _written(request.mutation, record)


def pin(p: Engine, request: PinRequest, ns: Namespace) -> WriteResponse:
    record = p.services.writes().set_pinned(
        request.record_id, ns, pinned=request.mutation == "pin", event_id=request.idempotency_key
    )
    return _written(request.mutation, record)


def feedback(p: Engine, request: FeedbackRequest, ns: Namespace) -> FeedbackResponse:
    result = p.services.tasks().feedback(
        request.application_id,
        request.outcome,
        ns,
        event_id=request.idempotency_key,
        session=request.session_id,
        sender=request.sender,
    )
    return FeedbackResponse.model_construct(
        record=record_model(result.record),
        application_id=result.application_id,
        outcome=result.outcome,
        previous=result.previous,
        changes={k: list(v) for k, v in result.changes.items()},
    )


def signal(p: Engine, request: SignalRequest, ns: Namespace) -> SignalResponse:
    found = p.services.signals().signal(
        request.text,
        ns,
        project_id=request.project_id,
        event_id=request.idempotency_key,
        store_as=request.store_as,
        scope=request.scope,
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
        previous=found.previous,
        scope_source=found.scope_source,
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


def import_(p: Engine, request: ImportRequest, ns: Namespace) -> ImportResponse:
    s = p.services
    count = s.transfer().import_(request.lines, ns, source=request.source, progress=p.progress)
    warnings = s.purges.finish()  # an imported permanent tombstone purges the copy
    return ImportResponse.model_construct(imported=count, warnings=warnings)


def rebuild(p: Engine, request: RebuildRequest, ns: Namespace) -> RebuildResponse:
    s = p.services
    replayed = s.replay().rebuild(ns.tenant, progress=p.progress)
    warnings = s.purges.finish()
    return RebuildResponse.model_construct(replayed=replayed, warnings=warnings)


HANDLERS: dict[type[BaseModel], Handler] = {
    RememberRequest: remember,
    StoreRequest: store,
    IngestRequest: ingest,
    CorrectRequest: correct,
    ForgetRequest: forget,
    RestoreRequest: restore,
    EvictRequest: evict,
    PinRequest: pin,
    FeedbackRequest: feedback,
    SignalRequest: signal,
    ImportRequest: import_,
    RebuildRequest: rebuild,
}
