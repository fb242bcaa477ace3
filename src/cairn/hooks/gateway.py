"""The hooks' way to memory: typed requests through one provider, and stable keys.

The command line's :class:`cairn.cli.app.App` is one (its provider comes from the one
function every interface uses); a test may pass another over any provider.
"""

from __future__ import annotations

from typing import Any, Protocol, TypeVar

T = TypeVar("T")


class Gateway(Protocol):
    tenant: str
    agent: str

    def query(self, model: type[Any], answer: type[T], **data: Any) -> T:
        """One query through the provider; its response, of the type it must have."""
        ...

    def apply(self, model: type[Any], answer: type[T], key: str, **data: Any) -> T:
        """One mutation through the provider, under an idempotency key."""
        ...

    def key(self, *parts: object) -> str:
        """A stable idempotency key for these parts."""
        ...
