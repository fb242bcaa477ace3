"""The ``status`` of a provider: which engine answers (local or remote, its version and
backend), for which tenant and agent, with which embedder and why, how much it holds, and
whether it is healthy. Every route answers it the same (SPEC §7)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict

from cairn.provider.models import CONTRACT_VERSION


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)


class StatusResponse(_Model):
    contract: str = CONTRACT_VERSION
    provider: Literal["local", "remote"]
    version: str
    backend: str
    tenant: str
    agent: str
    location: str | None = None  # the file or the server
    embedder: str | None = None
    embedder_chosen_by: str | None = None  # config, store, locale, first texts, default
    embedder_reason: str | None = None  # one line: why
    schema_version: int | None = None
    backend_versions: dict[str, str] = {}  # the database's: "postgresql", "pgvector"
    counts: dict[str, int]
    healthy: bool
    token_configured: bool
    warnings: list[str] = []
