"""The provider contract and its providers: every interface goes through one of them."""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol, TypeVar

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


T = TypeVar("T")


def expect(response: object, answer: type[T]) -> T:
    """The response if it is of the expected type; a provider that answers otherwise is
    a defect (or a server of another contract version), reported as such."""
    if not isinstance(response, answer):
        from cairn.errors import StorageError

        raise StorageError(
            f"the provider answered {type(response).__name__}, expected {answer.__name__}"
        )
    return response


__all__ = [
    "CONTRACT_VERSION",
    "ApplyRequest",
    "ApplyResponse",
    "Provider",
    "QueryRequest",
    "QueryResponse",
    "StatusResponse",
    "expect",
]
