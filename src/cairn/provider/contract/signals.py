"""``signal``: a sentence the user said, read for what it means — a rule, a preference, a
fact, a correction or a request to forget — stored accordingly, with the memories it was
matched against and the constraint it became."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict

from cairn.provider.checked import InProject, Statement
from cairn.provider.models import (
    CONTRACT_VERSION,
    Agent,
    Key,
    RecordModel,
    Request,
    TombstoneModel,
)


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)


class _Mutation(Request, _Model):
    idempotency_key: Key
    agent: Agent | None = None


class SignalRequest(_Mutation):
    mutation: Literal["signal"] = "signal"
    text: Statement
    project_id: InProject | None = None
    store_as: Literal["rule", "preference", "fact"] | None = None
    scope: Literal["project", "global"] | None = None


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
