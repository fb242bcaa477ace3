"""An idempotency key names one request: the same key with another request is refused.

A retry sends the same key with the same request and gets the first answer back; a key
sent again with a different request is a client's bug (a key reused across requests, a
key derived from too little), and answering it with the first request's result, as if it
had been done, would silently drop the second. So the journal event the key names is
compared with what the new request would write; any difference is a Conflict (HTTP 409)
that names the fields that differ.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from cairn.engine.relative_dates import SOURCE_KEY
from cairn.errors import Conflict
from cairn.model import Event, MemoryInput, Record

# What a new memory's request decides (the rest — ids, times, counters — is the store's).
MEMORY_FIELDS = (
    "body", "kind", "title", "tags", "trust", "source", "external_ref", "pinned",
    "memory_type", "scope", "project_id", "path_patterns", "operations", "phases",
    "task_types", "episode_id", "position",
)  # fmt: skip


def _plain(value: Any) -> Any:
    return json.loads(json.dumps(value, default=str))


def check_same_request(
    key: str, stored: Event, event_type: str, expected: Mapping[str, Any]
) -> None:
    """Refuse when the event ``stored`` under ``key`` is not this request: another type
    of change, or a payload that differs in any of ``expected``'s fields."""
    if stored.type != event_type or stored.payload.get("action") != expected.get(
        "action", stored.payload.get("action")
    ):
        what = stored.payload.get("action") or stored.type
        raise Conflict(
            f"the idempotency key {key!r} was already used for another change ({what});"
            " a new request needs a new key"
        )
    differs = [
        name
        for name, value in expected.items()
        if name != "action" and _plain(stored.payload.get(name)) != _plain(value)
    ]
    if differs:
        raise Conflict(
            f"the idempotency key {key!r} was already used for a different request"
            f" ({', '.join(differs)} differ{'s' if len(differs) == 1 else ''}); a new request"
            " needs a new key"
        )


def check_same_memory(
    key: str, stored: Event, event_type: str, record: Record, item: MemoryInput
) -> None:
    """As :func:`check_same_request`, for a new memory: ``record`` is what the request
    would store now (validated and redacted as the first one was)."""
    before = stored.payload.get("record")
    if stored.type != event_type or not isinstance(before, dict):
        check_same_request(key, stored, event_type, {"action": "remember"})
        return
    now = _plain(record.to_dict())
    names = [n for n in MEMORY_FIELDS if n in now]
    if item.occurred_at is not None:  # else the store's own clock chose it
        names.append("occurred_at")
    differs = [n for n in names if _asked(n, _plain(before.get(n))) != _asked(n, now.get(n))]
    if differs:
        raise Conflict(
            f"the idempotency key {key!r} was already used for a different request"
            f" ({', '.join(differs)} differ{'s' if len(differs) == 1 else ''}); a new request"
            " needs a new key"
        )


def _asked(name: str, value: Any) -> Any:
    """What the request decided of a field: a source without the dates the store resolved
    (against its own clock, when the memory has no time of its own, so a retry on
    another day resolves "yesterday" to another day)."""
    if name == "source" and isinstance(value, dict):
        return {k: v for k, v in value.items() if k != SOURCE_KEY}
    return value
