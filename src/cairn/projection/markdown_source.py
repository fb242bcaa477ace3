"""What the Markdown projection reads and changes of a memory, as protocols.

The projection sits below every interface: it never imports one. Writing and purging the
files read a :class:`MemoryReader` (the projection service hands one over the store,
:mod:`cairn.services.markdown`); ``sync`` and restoring a lost database also change
memory, through a :class:`MemoryEditor` (a :class:`cairn.Memory` is one).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any, Protocol

from cairn.model import Record

__all__ = ["MemoryEditor", "MemoryReader"]


class MemoryReader(Protocol):
    """The memories one tenant and agent keep in their files."""

    @property
    def tenant(self) -> str: ...

    @property
    def agent(self) -> str: ...

    def list(self) -> Sequence[Record]:
        """The current memories the files hold."""
        ...

    def history(self, record_id: str) -> Sequence[Record]:
        """Every version of a memory, oldest first; ``NotFound`` for an unknown id."""
        ...


class MemoryEditor(MemoryReader, Protocol):
    """A memory that ``sync`` and a restore change (every write one request)."""

    def correct(
        self,
        record_id: str,
        body: str,
        *,
        title: str | None = None,
        kind: str | None = None,
        path_patterns: Sequence[str] | None = None,
        operations: Sequence[str] | None = None,
        phases: Sequence[str] | None = None,
        task_types: Sequence[str] | None = None,
    ) -> Record: ...

    def forget(self, record_id: str, *, reason: str = "user-remove") -> object: ...

    def remember(self, body: str, *, kind: str = "preference", **fields: Any) -> Record: ...

    def import_(self, lines: Iterable[str]) -> int: ...
