"""From the caller's values to the contract's requests, and from a request to the
services' inputs (a memory's fields, how its words are read, idempotency keys)."""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from collections.abc import Mapping
from datetime import date
from numbers import Integral
from typing import TYPE_CHECKING, Any

from cairn.errors import InvalidInput
from cairn.model import MemoryInput
from cairn.provider.contract import MemoryFields

if TYPE_CHECKING:
    from cairn.services.wording import Words


def words_of(request: Any, fields: MemoryFields, default_kind: str) -> Words | None:
    """How a write's body is read as a statement (None: as given), from the request's
    ``read_words`` and ``current_project_id``."""
    if not request.read_words:
        return None
    from cairn.services.wording import Words  # the statement reader: a write's, on first use

    return Words(request.current_project_id, fields.kind is not None, default_kind)


def memory_input(fields: MemoryFields, default_kind: str) -> MemoryInput:
    return MemoryInput(
        body=fields.body,
        kind=fields.kind or default_kind,
        title=fields.title,
        tags=tuple(fields.tags),
        trust=fields.trust,
        occurred_at=fields.occurred_at,
        source=fields.source,
        external_ref=fields.external_ref,
        pinned=fields.pinned,
        memory_type=fields.memory_type,
        scope=fields.scope,
        project_id=fields.project_id,
        path_patterns=tuple(fields.path_patterns),
        operations=tuple(fields.operations),
        phases=tuple(fields.phases),
        task_types=tuple(fields.task_types),
        episode_id=fields.episode_id,
        position=fields.position,
    )


def content_keys(items: list[dict[str, Any]]) -> list[str]:
    """One idempotency key per item from its content (every field, as request data) and
    how often the same item came before: a batch stored again maps onto its first write,
    and two equal items of one batch are two memories."""
    seen: Counter[str] = Counter()
    keys = []
    for data in items:
        text = json.dumps(data, ensure_ascii=False, sort_keys=True, default=str)
        digest = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:40]
        seen[digest] += 1
        keys.append(f"items:{digest}:{seen[digest]}")
    return keys


def memory_fields(item: MemoryInput) -> dict[str, Any]:
    """The fields of a MemoryInput as request data (validated by the contract)."""
    if not isinstance(item, MemoryInput):
        raise InvalidInput(f"a memory must be a MemoryInput, not {type(item).__name__}")
    position = item.position
    if isinstance(position, Integral) and not isinstance(position, bool):
        position = int(position)  # numpy and other integer types are integers
    data: dict[str, Any] = {
        "body": item.body,
        "kind": item.kind,
        "title": item.title,
        "tags": _listed(item.tags, "tags"),
        "trust": item.trust,
        "occurred_at": item.occurred_at.isoformat()
        if isinstance(item.occurred_at, date)  # a datetime is a date too
        else item.occurred_at,
        # A mapping is copied; anything else goes on as it is, to be refused, not coerced.
        "source": dict(item.source) if isinstance(item.source, Mapping) else item.source,
        "external_ref": item.external_ref,
        "pinned": item.pinned,
        "memory_type": item.memory_type,
        "scope": item.scope,
        "project_id": item.project_id,
        "episode_id": item.episode_id,
        "position": position,
    }
    for name in ("path_patterns", "operations", "phases", "task_types"):
        data[name] = _listed(getattr(item, name), name)
    return data


def request_list(name: str, values: Any) -> Any:
    """A list for a request; a string is refused rather than split into characters, and
    anything but a list or tuple goes on as it is, for the contract to refuse."""
    if isinstance(values, str):
        raise InvalidInput(f"{name} must be a list of text, not a string")
    return list(values) if isinstance(values, tuple) else values


def _listed(value: Any, name: str) -> Any:
    if isinstance(value, str):
        raise InvalidInput(f"{name} must be a list of text, not a string")
    return list(value) if isinstance(value, list | tuple) else value
