"""The contract's models at the process edges (SPEC §7): the engine's values as the
responses the HTTP server, the daemon's socket and the MCP server send, and back.

In process nothing here runs for a caller of :class:`cairn.Memory`: the embedded engine
answers with its own values (:meth:`cairn.provider.local.LocalProvider.serve`). A
provider's ``query`` (what every route serves) is
:func:`cairn.provider.views.response` of that value, built of the models here; a
response from another process (a remote server, the daemon) is :func:`value` of it.

Responses are built with ``model_construct``: the values come from the store, valid
already, and a large export or listing should not pay for validating them again.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import fields
from typing import Any

import pydantic_core
from pydantic import BaseModel

from cairn.engine.recall.pipeline import Candidate, RecallResult
from cairn.engine.recall.relevance import Relevance
from cairn.engine.recall.scoring import ScoreBreakdown
from cairn.errors import StorageError
from cairn.model import Application, Event, Expanded, Record, Tombstone
from cairn.provider import contract as c
from cairn.provider.contract import (
    ApplicationModel,
    EventModel,
    RecalledModel,
    RecallResponse,
    RecordModel,
    RelevanceModel,
    TombstoneModel,
)

_LIST_FIELDS = ("tags", "path_patterns", "operations", "phases", "task_types", "evidence")
_RECORD_FIELDS = tuple(f.name for f in fields(Record))


def record_model(record: Record) -> RecordModel:
    """The contract's model of a record from the store (valid already: not checked again,
    which a response of hundreds of records would otherwise pay for)."""
    data = {name: getattr(record, name) for name in _RECORD_FIELDS}
    for name in _LIST_FIELDS:
        data[name] = list(data[name])
    return RecordModel.model_construct(**data)


def to_record(model: RecordModel | dict[str, Any]) -> Record:
    data = (
        {name: getattr(model, name) for name in _RECORD_FIELDS}
        if isinstance(model, RecordModel)
        else dict(model)
    )
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


def recalled(cand: Candidate, models: dict[tuple[str, int], RecordModel]) -> RecalledModel:
    key = cand.record.id, cand.record.version
    model = models.get(key)
    if model is None:
        model = models[key] = record_model(cand.record)
    r = cand.relevance
    return RecalledModel.model_construct(
        record=model,
        score=cand.score,
        fused=cand.fused,
        ranks=dict(cand.ranks),
        factors=cand.breakdown.as_dict(),
        relevance=RelevanceModel.model_construct(
            score=r.score,
            evidence=r.evidence,
            cosine=r.cosine,
            coverage=r.coverage,
            surprise=r.surprise,
        ),
        line=cand.line,
    )


def recall_response(result: RecallResult) -> RecallResponse:
    models: dict[tuple[str, int], RecordModel] = {}  # a delivered one is also ranked
    return RecallResponse.model_construct(
        query=result.query,
        preamble=result.preamble,
        memories=[recalled(x, models) for x in result.memories],
        ranked=[recalled(x, models) for x in result.ranked],
        trace=list(result.trace),
        timings_ms=dict(result.timings_ms),
        rerank=result.rerank,
        failures=dict(result.failures),
    )


def recall_json(result: RecallResult) -> bytes:
    """``recall_response(result).model_dump_json()``, byte for byte, without building the
    models: the same fields in the same order, serialized by the same serializer. A
    recall's response holds its scoring pool (~50 records, ~100 KB): the ~130 models
    cost more than the serialization (measured: 4.6 against 1.7 ms a recall at 100k).
    A value the serializer does not know (which the models would refuse or warn about)
    takes the models' path."""
    records: dict[tuple[str, int], dict[str, Any]] = {}  # a delivered one is also ranked
    data = {
        "contract": c.CONTRACT_VERSION,
        "view": "recall",
        "query": result.query,
        "preamble": result.preamble,
        "memories": [_recalled_data(x, records) for x in result.memories],
        "ranked": [_recalled_data(x, records) for x in result.ranked],
        "trace": list(result.trace),
        "timings_ms": result.timings_ms,
        "rerank": result.rerank,
        "failures": result.failures,
    }
    try:
        return pydantic_core.to_json(data, inf_nan_mode="null")
    except pydantic_core.PydanticSerializationError:
        return recall_response(result).model_dump_json().encode()


def _recalled_data(
    cand: Candidate, records: dict[tuple[str, int], dict[str, Any]]
) -> dict[str, Any]:
    """The fields of :func:`recalled`'s model, in its order, as plain values."""
    key = cand.record.id, cand.record.version
    record = records.get(key)
    if record is None:
        record = records[key] = cand.record.to_dict()
    r = cand.relevance
    return {
        "record": record,
        "score": cand.score,
        "fused": cand.fused,
        "ranks": cand.ranks,
        "factors": cand.breakdown.as_dict(),
        "relevance": {
            "score": r.score,
            "evidence": r.evidence,
            "cosine": r.cosine,
            "coverage": r.coverage,
            "surprise": r.surprise,
        },
        "line": cand.line,
    }


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
    relevance = Relevance(r.score, r.evidence, r.cosine, r.coverage, r.surprise)
    return Candidate(
        to_record(model.record),
        dict(model.ranks),
        model.fused,
        breakdown,
        relevance,
        model.line,
    )


def to_recall_result(response: RecallResponse) -> RecallResult:
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


# response -> the engine's value, for one that came from another process
VALUES: dict[type[BaseModel], Callable[[Any], Any]] = {
    c.RecallResponse: to_recall_result,
    c.RecordResponse: lambda r: to_record(r.record),
    c.RecordsResponse: lambda r: [to_record(x) for x in r.records],
    c.ExpandResponse: lambda r: Expanded(
        to_record(r.record), r.application_id, dict(r.sources), dict(r.verification)
    ),
    c.JournalResponse: lambda r: [to_event(e) for e in r.events],
    c.TombstonesResponse: lambda r: [to_tombstone(t) for t in r.tombstones],
    c.ExportResponse: lambda r: list(r.lines),
}


def value(answer: BaseModel) -> Any:
    """The engine's value of a response from another process (a remote server, the
    daemon): what the embedded engine would have answered in process."""
    convert = VALUES.get(type(answer))
    if convert is None:
        raise StorageError(f"{type(answer).__name__} has no value of the engine")
    return convert(answer)
