"""The provider contract and its providers: every interface goes through one of them."""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

from cairn.provider.contract import (
    CONTRACT_VERSION,
    ApplyRequest,
    ApplyResponse,
    QueryRequest,
    QueryResponse,
    StatusResponse,
)


class Provider(Protocol):
    """``status / query / apply`` (SPEC §7), local or remote alike."""

    tenant: str
    agent: str
    progress: Callable[[int, int], None] | None  # where bulk work reports, when set

    def status(self) -> StatusResponse: ...

    def query(self, request: QueryRequest) -> QueryResponse: ...

    def apply(self, request: ApplyRequest) -> ApplyResponse: ...

    def close(self) -> None: ...


__all__ = [
    "CONTRACT_VERSION",
    "ApplyRequest",
    "ApplyResponse",
    "Provider",
    "QueryRequest",
    "QueryResponse",
    "StatusResponse",
]
