"""Redaction of journal payloads after a permanent forget (the twin of the SQLite one)."""

from __future__ import annotations

from typing import Any

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
