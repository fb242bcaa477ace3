"""The store as lines (SPEC §7): ``export`` writes a tenant's memory out as JSON lines,
``import`` reads such lines back in, and ``rebuild`` replays the journal into the records
and indexes."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict

from cairn.provider.checked import ImportSource
from cairn.provider.models import (
    CONTRACT_VERSION,
    Agent,
    Key,
    Request,
)


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)


class _Query(Request, _Model):
    agent: Agent | None = None


class _Mutation(Request, _Model):
    idempotency_key: Key
    agent: Agent | None = None


class ExportQuery(_Query):
    view: Literal["export"] = "export"


class ExportResponse(_Model):
    contract: str = CONTRACT_VERSION
    view: Literal["export"] = "export"
    lines: list[str]


class ImportRequest(_Mutation):
    mutation: Literal["import"] = "import"
    lines: list[str]
    source: ImportSource = "import"


class ImportResponse(_Model):
    contract: str = CONTRACT_VERSION
    mutation: Literal["import"] = "import"
    imported: int
    warnings: list[str] = []


class RebuildRequest(_Mutation):
    mutation: Literal["rebuild"] = "rebuild"


class RebuildResponse(_Model):
    contract: str = CONTRACT_VERSION
    mutation: Literal["rebuild"] = "rebuild"
    replayed: int
    warnings: list[str] = []
