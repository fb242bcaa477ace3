"""The fields of a new memory (``MemoryInput``) as one value, checked and in their stored form."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from cairn.limits import (
    MAX_INT32,
    MAX_PROJECT_ID_CHARS,
    MAX_REF_CHARS,
    MAX_SELECTOR_CHARS,
    MAX_TAG_CHARS,
    MAX_TITLE_CHARS,
)
from cairn.model import KINDS, MEMORY_TYPES, SCOPES, TRUST_LEVELS
from cairn.validation.text import (
    check_body,
    check_line,
    check_token,
    error_at,
    kind_of,
    shown,
)
from cairn.validation.values import (
    check_bool,
    check_choice,
    check_int,
    check_source,
    check_text_list,
    check_time,
    optional,
)

_MEMORY_FIELDS = (
    "body", "kind", "title", "tags", "trust", "occurred_at", "source", "external_ref",
    "pinned", "memory_type", "scope", "project_id", "path_patterns", "operations", "phases",
    "task_types", "episode_id", "position",
)  # fmt: skip
SELECTORS = ("path_patterns", "operations", "phases", "task_types")
LOWER_SELECTORS = ("operations", "phases", "task_types")  # compared case-insensitively


def refuse_unknown(data: Mapping[str, Any], known: Sequence[str], where: str) -> None:
    """One error naming the first field that is not one of ``known``."""
    for key in data:
        if key not in known:
            raise error_at(where, f"unknown field {shown(key)}")


def validate_memory_fields(
    data: Mapping[str, Any], *, where: str, max_body_chars: int
) -> dict[str, Any]:
    """The fields of a new memory (``MemoryInput``), checked and in their stored form."""
    if not isinstance(data, Mapping):
        raise error_at(where, f"a memory must be an object, not {kind_of(data)}")
    refuse_unknown(data, _MEMORY_FIELDS, where)
    if "body" not in data:
        raise error_at(where, "body is required")
    get = data.get
    # A null kind is the caller's default (the contract's: fact; remember: preference).
    kind = check_choice("kind", get("kind") or "fact", KINDS, where=where)
    scope = check_choice("scope", get("scope", "global"), SCOPES, where=where)
    project_id = optional(
        check_line, "project_id", get("project_id"), MAX_PROJECT_ID_CHARS, where=where
    )
    if scope == "project" and project_id is None:
        raise error_at(where, "a project-scoped memory needs a project id")
    if scope == "global" and project_id is not None:
        raise error_at(where, "project_id is given but scope is 'global'")
    out: dict[str, Any] = {
        "body": check_body(data["body"], max_body_chars, where=where),
        "kind": kind,
        "title": optional(check_line, "title", get("title"), MAX_TITLE_CHARS, where=where),
        "tags": check_text_list("tags", get("tags", ()), MAX_TAG_CHARS, where=where),
        "trust": check_choice("trust level", get("trust", "learned"), TRUST_LEVELS, where=where),
        "occurred_at": optional(check_time, "occurred_at", get("occurred_at"), where=where),
        "source": check_source(get("source"), where=where),
        "external_ref": optional(
            check_line, "external_ref", get("external_ref"), MAX_REF_CHARS, where=where
        ),
        "pinned": check_bool("pinned", get("pinned", False), where=where),
        "memory_type": optional(
            check_choice, "memory type", get("memory_type"), MEMORY_TYPES, where=where
        ),
        "scope": scope,
        "project_id": project_id.strip() if project_id else None,
        "episode_id": optional(check_token, "episode_id", get("episode_id"), where=where),
        "position": optional(check_int, "position", get("position"), 0, MAX_INT32, where=where),
    }
    for name in SELECTORS:
        values = check_text_list(
            name, get(name, ()), MAX_SELECTOR_CHARS, where=where, printable=True
        )
        out[name] = tuple(v.lower() for v in values) if name in LOWER_SELECTORS else values
    return out
