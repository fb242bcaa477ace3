"""Outcomes of delivered memory: ``feedback`` judges one application (helpful, harmful, …)
and says what it changed in the memory; ``explain`` reads the hit rate and the per-memory
figures that outcomes build, with the user's rules that outcomes keep failing."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from cairn.provider.checked import ApplicationId, Sender, SessionId
from cairn.provider.models import (
    CONTRACT_VERSION,
    Agent,
    Key,
    Outcome,
    RecordModel,
    Request,
)


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)


class _Query(Request, _Model):
    agent: Agent | None = None


class _Mutation(Request, _Model):
    idempotency_key: Key
    agent: Agent | None = None


class FeedbackRequest(_Mutation):
    mutation: Literal["feedback"] = "feedback"
    application_id: ApplicationId
    outcome: Outcome
    session_id: SessionId | None = None  # who judged it: set by the serving process (attribution)
    sender: Sender | None = None


class FeedbackResponse(_Model):
    contract: str = CONTRACT_VERSION
    mutation: Literal["feedback"] = "feedback"
    record: RecordModel
    application_id: str
    outcome: str
    previous: str | None
    changes: dict[str, list[Any]]  # field -> [before, after]; empty: nothing changed


class ExplainQuery(_Query):
    view: Literal["explain"] = "explain"


class ExplainResponse(_Model):
    contract: str = CONTRACT_VERSION
    view: Literal["explain"] = "explain"
    applications: int
    with_outcome: int
    hit_rate: float | None
    records: dict[str, dict[str, Any]]
    review: list[dict[str, Any]] = []  # the user's rules that outcomes keep failing
