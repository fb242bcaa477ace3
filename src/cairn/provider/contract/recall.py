"""The ``recall`` view: the memories a query finds, ranked, with each one's score, the
ranks it had in every lane, the factors that moved it and why it is relevant; the preamble
an agent reads, the trace and the timings of each stage, and any lane that failed."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from cairn.limits import MAX_PAGE, MAX_RESULTS
from cairn.provider.checked import Asked, AsOf, InProject
from cairn.provider.models import (
    CONTRACT_VERSION,
    Agent,
    RecordModel,
    RelevanceModel,
    Request,
    Trust,
)


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)


class _Query(Request, _Model):
    agent: Agent | None = None


class RecallQuery(_Query):
    view: Literal["recall"] = "recall"
    query: Asked
    project_id: InProject | None = None
    max_results: int | None = Field(None, ge=1, le=MAX_RESULTS)
    max_chars: int | None = Field(None, ge=1, le=MAX_PAGE)
    include_trust: list[Trust] | None = None
    as_of: AsOf | None = None  # as memory stood then (evicted, superseded included)


class RecalledModel(_Model):
    """One recalled memory, known by its record's id and version (no storage row)."""

    record: RecordModel
    score: float
    fused: float
    ranks: dict[str, int]
    factors: dict[str, float]
    relevance: RelevanceModel
    line: str = ""

    @model_validator(mode="before")
    @classmethod
    def _without_row(cls, data: Any) -> Any:
        # A daemon or server started by an older cairn still sends the storage row it
        # once put here: it is dropped, so its answer reads as this version's.
        if isinstance(data, dict) and "row" in data:
            return {k: v for k, v in data.items() if k != "row"}
        return data


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
