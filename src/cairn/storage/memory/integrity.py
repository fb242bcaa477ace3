"""What the SQLite store enforces in SQL, for the in-memory twin: the trust CHECK, and
the redaction of journal payloads after a permanent forget."""

from __future__ import annotations

from typing import Any

from cairn.errors import StorageError
from cairn.model import Record

_REDACTED_KEYS = ("body", "title", "tags", "source", "external_ref", "text", "statement")


def redact(data: Any, marker: str) -> Any:
    if isinstance(data, dict):
        return {
            k: (marker if isinstance(v, str) else type(v)())
            if k in _REDACTED_KEYS and v not in (None, "", [], {})
            else redact(v, marker)
            for k, v in data.items()
        }
    if isinstance(data, list):
        return [redact(v, marker) for v in data]
    return data


def check(record: Record) -> None:
    """The database's CHECK: what cairn learned itself can never claim system trust."""
    if record.trust == "system" and record.origin in ("reflection", "review"):
        raise StorageError("the store refused the change: a learned doc cannot be system")
