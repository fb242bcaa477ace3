"""Between the engine's values and the contract's models, both ways.

Responses are built with ``model_construct``: the values come from the store, already
valid, and a large ingest or export should not pay for validating them again.
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from collections.abc import Mapping
from dataclasses import fields
from datetime import date
from numbers import Integral
from typing import Any, TypeVar

from pydantic import BaseModel

from cairn.engine.recall.pipeline import Candidate, RecallResult
from cairn.engine.recall.relevance import Relevance
from cairn.engine.recall.scoring import ScoreBreakdown
from cairn.errors import InvalidInput
from cairn.model import Application, Event, MemoryInput, Record, Tombstone
from cairn.provider.contract import (
    CONTRACT_VERSION,
    ApplicationModel,
    EventModel,
    MemoryFields,
    RecalledModel,
    RecallResponse,
    RecordModel,
    RelevanceModel,
    TombstoneModel,
)
from cairn.services.tasks import DeliveredItem
from cairn.services.wording import Words

_LIST_FIELDS = ("tags", "path_patterns", "operations", "phases", "task_types", "evidence")
_RECORD_FIELDS = tuple(f.name for f in fields(Record))
_FIELDS_SET = frozenset(_RECORD_FIELDS)


def record_model(record: Record) -> RecordModel:
    """The contract's model of a record from the store (valid already: not checked again,
    which a response of hundreds of records would otherwise pay for)."""
    data = {name: getattr(record, name) for name in _RECORD_FIELDS}
    for name in _LIST_FIELDS:
        data[name] = list(data[name])
    model = RecordModel.__new__(RecordModel)
    object.__setattr__(model, "__dict__", data)
    object.__setattr__(model, "__pydantic_fields_set__", set(_FIELDS_SET))
    object.__setattr__(model, "__pydantic_extra__", None)
    object.__setattr__(model, "__pydantic_private__", {"_record": record})
    return model


def to_record(model: RecordModel | dict[str, Any]) -> Record:
    if isinstance(model, RecordModel):
        if model._record is not None:
            return model._record
        data = {name: getattr(model, name) for name in _RECORD_FIELDS}
    else:
        data = dict(model)
    for name in _LIST_FIELDS:
        data[name] = tuple(data.get(name) or ())
    return Record(**data)


def tombstone_model(stone: Tombstone) -> TombstoneModel:
    return TombstoneModel.model_construct(**stone.to_dict())


def to_tombstone(model: TombstoneModel) -> Tombstone:
    return Tombstone(**model.model_dump())


def application_model(app: Application) -> ApplicationModel:
    return ApplicationModel.model_construct(**app.to_dict())


def to_application(model: ApplicationModel) -> Application:
    data = model.model_dump()
    data["why_applied"] = tuple(data["why_applied"])
    return Application(**data)


def event_model(event: Event) -> EventModel:
    return EventModel.model_construct(**event.to_dict())


def to_event(model: EventModel) -> Event:
    return Event(**model.model_dump())


def words_of(request: Any, fields: MemoryFields, default_kind: str) -> Words | None:
    """How a write's body is read as a statement (None: as given), from the request's
    ``read_words`` and ``current_project_id``."""
    if not request.read_words:
        return None
    return Words(request.current_project_id, fields.kind is not None, default_kind)


def memory_input(fields: MemoryFields, default_kind: str) -> MemoryInput:
    return MemoryInput(
        body=fields.body,
        kind=fields.kind or default_kind,
        title=fields.title,
        tags=tuple(fields.tags),
        trust=fields.trust,
        occurred_at=fields.occurred_at,
        source=fields.source,
        external_ref=fields.external_ref,
        pinned=fields.pinned,
        memory_type=fields.memory_type,
        scope=fields.scope,
        project_id=fields.project_id,
        path_patterns=tuple(fields.path_patterns),
        operations=tuple(fields.operations),
        phases=tuple(fields.phases),
        task_types=tuple(fields.task_types),
        episode_id=fields.episode_id,
        position=fields.position,
    )


def content_keys(items: list[dict[str, Any]]) -> list[str]:
    """One idempotency key per item from its content (every field, as request data) and
    how often the same item came before: a batch stored again maps onto its first write,
    and two equal items of one batch are two memories."""
    seen: Counter[str] = Counter()
    keys = []
    for data in items:
        text = json.dumps(data, ensure_ascii=False, sort_keys=True, default=str)
        digest = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:40]
        seen[digest] += 1
        keys.append(f"items:{digest}:{seen[digest]}")
    return keys


def memory_fields(item: MemoryInput) -> dict[str, Any]:
    """The fields of a MemoryInput as request data (validated by the contract)."""
    if not isinstance(item, MemoryInput):
        raise InvalidInput(f"a memory must be a MemoryInput, not {type(item).__name__}")
    position = item.position
    if isinstance(position, Integral) and not isinstance(position, bool):
        position = int(position)  # numpy and other integer types are integers
    data: dict[str, Any] = {
        "body": item.body,
        "kind": item.kind,
        "title": item.title,
        "tags": _listed(item.tags, "tags"),
        "trust": item.trust,
        "occurred_at": item.occurred_at.isoformat()
        if isinstance(item.occurred_at, date)  # a datetime is a date too
        else item.occurred_at,
        # A mapping is copied; anything else goes on as it is, to be refused, not coerced.
        "source": dict(item.source) if isinstance(item.source, Mapping) else item.source,
        "external_ref": item.external_ref,
        "pinned": item.pinned,
        "memory_type": item.memory_type,
        "scope": item.scope,
        "project_id": item.project_id,
        "episode_id": item.episode_id,
        "position": position,
    }
    for name in ("path_patterns", "operations", "phases", "task_types"):
        data[name] = _listed(getattr(item, name), name)
    return data


def request_list(name: str, values: Any) -> Any:
    """A list for a request; a string is refused rather than split into characters, and
    anything but a list or tuple goes on as it is, for the contract to refuse."""
    if isinstance(values, str):
        raise InvalidInput(f"{name} must be a list of text, not a string")
    return list(values) if isinstance(values, tuple) else values


def _listed(value: Any, name: str) -> Any:
    if isinstance(value, str):
        raise InvalidInput(f"{name} must be a list of text, not a string")
    return list(value) if isinstance(value, list | tuple) else value


_RECALLED_SET = frozenset(RecalledModel.model_fields)
_RELEVANCE_SET = frozenset(RelevanceModel.model_fields)
_RESPONSE_SET = frozenset(RecallResponse.model_fields) - {"contract", "view"}  # defaults
M = TypeVar("M", bound=BaseModel)


def _constructed(cls: type[M], data: dict[str, Any], fields_set: frozenset[str], private: Any) -> M:
    """``cls.model_construct(**data)`` for data that names every field: what it does,
    without its per-field defaults pass (a recall builds ~80 models; this is ~3x cheaper)."""
    model = cls.__new__(cls)
    object.__setattr__(model, "__dict__", data)
    object.__setattr__(model, "__pydantic_fields_set__", set(fields_set))
    object.__setattr__(model, "__pydantic_extra__", None)
    object.__setattr__(model, "__pydantic_private__", private)
    return model


def recalled(c: Candidate, models: dict[int, RecordModel] | None = None) -> RecalledModel:
    model = models.get(c.row) if models is not None else None
    if model is None:
        model = record_model(c.record)
        if models is not None:
            models[c.row] = model
    r = c.relevance
    relevance = _constructed(
        RelevanceModel,
        {"score": r.score, "evidence": r.evidence, "cosine": r.cosine, "coverage": r.coverage},
        _RELEVANCE_SET,
        None,
    )
    data = {
        "row": c.row,
        "record": model,
        "score": c.score,
        "fused": c.fused,
        "ranks": dict(c.ranks),
        "factors": c.breakdown.as_dict(),
        "relevance": relevance,
        "line": c.line,
    }
    return _constructed(RecalledModel, data, _RECALLED_SET, None)


def recall_response(result: RecallResult) -> RecallResponse:
    """The response, which keeps ``result`` for :func:`to_recall_result` in this process."""
    models: dict[int, RecordModel] = {}  # a delivered memory is also among the ranked
    data = {
        "contract": CONTRACT_VERSION,
        "view": "recall",
        "query": result.query,
        "preamble": result.preamble,
        "memories": [recalled(c, models) for c in result.memories],
        "ranked": [recalled(c, models) for c in result.ranked],
        "trace": list(result.trace),
        "timings_ms": dict(result.timings_ms),
        "rerank": result.rerank,
        "failures": dict(result.failures),
    }
    return _constructed(RecallResponse, data, _RESPONSE_SET, {"_result": result})


def to_candidate(model: RecalledModel) -> Candidate:
    f = model.factors
    breakdown = ScoreBreakdown(
        f["base"],
        f["recency"],
        f["temporal"],
        f["proof"],
        f["trust"],
        f["usefulness"],
        f["forget"],
        f["final"],
    )
    r = model.relevance
    relevance = Relevance(r.score, r.evidence, r.cosine, r.coverage)
    return Candidate(
        model.row,
        to_record(model.record),
        dict(model.ranks),
        model.fused,
        breakdown,
        relevance,
        model.line,
    )


def to_recall_result(response: RecallResponse) -> RecallResult:
    """The engine's result: the one the response was built from when it was answered in
    this process (the same values, without converting each model back), else rebuilt."""
    if isinstance(response._result, RecallResult):
        return response._result
    return RecallResult(
        query=response.query,
        preamble=response.preamble,
        memories=tuple(to_candidate(m) for m in response.memories),
        ranked=tuple(to_candidate(m) for m in response.ranked),
        trace=tuple(response.trace),
        timings_ms=dict(response.timings_ms),
        rerank=response.rerank,
        failures=dict(response.failures),
    )


def delivered_model(item: DeliveredItem, *, with_body: bool) -> dict[str, Any]:
    record = item.record
    return {
        "id": record.id,
        "version": record.version,
        "title": item.title,
        "summary": item.summary,
        "body": record.body if with_body else None,
        "kind": record.kind,
        "state": record.state,
        "authority": record.authority,
        "trust": record.trust,
        "scope": record.scope,
        "project_id": record.project_id,
        "delivery": item.delivery,
        "why_applied": list(item.why_applied),
        "application_id": item.application_id,
        "rank_score": item.rank_score,
    }
