"""The checks of an export's entries: every field of a record and of a tombstone, with
its type and range, so what an import stores is as valid as what cairn writes itself."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from cairn.errors import InvalidInput
from cairn.identifiers import check_name
from cairn.limits import (
    MAX_BODY_CHARS,
    MAX_EVIDENCE_ITEMS,
    MAX_ID_CHARS,
    MAX_INT32,
    MAX_KEY_CHARS,
    MAX_PROJECT_ID_CHARS,
    MAX_REF_CHARS,
    MAX_SELECTOR_CHARS,
    MAX_TAG_CHARS,
    MAX_TITLE_CHARS,
)
from cairn.model import (
    AUTHORITIES,
    KINDS,
    MEMORY_TYPES,
    ORIGINS,
    SCOPES,
    STATES,
    TOMBSTONE_REASONS,
    TRUST_LEVELS,
)
from cairn.text import text_hash
from cairn.validation.memory import (
    LOWER_SELECTORS,
    SELECTORS,
    refuse_unknown,
)
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
    check_fraction,
    check_int,
    check_source,
    check_stored_time,
    check_text_list,
    optional,
)

_HEX64 = re.compile(r"[0-9a-f]{64}\Z")
# Ids are ULIDs when cairn makes them; hand-written Markdown may hold others. Lookups are
# upper-cased, so a stored id must be upper-case to be found again.
_RECORD_ID = re.compile(rf"[0-9A-Z][0-9A-Z_-]{{0,{MAX_ID_CHARS - 1}}}\Z")

_RECORD_TIMES = (
    "evicted_at", "forgotten_at", "last_applied_at", "last_success_at", "occurred_at",
    "valid_to", "expired_at",
)  # fmt: skip
_RECORD_COUNTERS = ("proof_count", "failure_count", "used_count", "ignored_count")
_RECORD_CHOICES = (
    ("kind", KINDS, "fact"),
    ("memory_type", MEMORY_TYPES, "semantic"),
    ("authority", AUTHORITIES, "inferred"),
    ("origin", ORIGINS, "tool"),
    ("trust", TRUST_LEVELS, "learned"),
    ("scope", SCOPES, "global"),
    ("state", STATES, "trial"),
)
_RECORD_FIELDS = (
    "id", "version", "tenant", "agent", "body", "title", "tags", "language", "project_id",
    "pinned", "confidence", "importance", "evidence", "source", "external_ref", "episode_id",
    "position", "recorded_at", "supersedes", "superseded_by", "text_hash",
    *_RECORD_TIMES, *_RECORD_COUNTERS, *(c[0] for c in _RECORD_CHOICES), *SELECTORS,
)  # fmt: skip


def _required(data: Mapping[str, Any], names: Sequence[str], where: str) -> None:
    for name in names:
        if name not in data:
            raise error_at(where, f"{name} is required")


def _check_identity(data: Mapping[str, Any], id_field: str, where: str) -> dict[str, Any]:
    record_id = data[id_field]
    if not (isinstance(record_id, str) and _RECORD_ID.match(record_id)):
        raise error_at(
            where,
            f"{id_field} must be 1-{MAX_ID_CHARS} upper-case letters, digits, - or _ (a ULID),"
            f" not {shown(record_id)}",
        )
    out: dict[str, Any] = {id_field: record_id}
    for what in ("tenant", "agent"):
        if what in data:
            try:
                out[what] = check_name(what, data[what])
            except InvalidInput as exc:
                raise error_at(where, str(exc)) from None
    return out


def _check_scope(data: Mapping[str, Any], where: str) -> tuple[str, str | None]:
    scope = check_choice("scope", data.get("scope", "global"), SCOPES, where=where)
    project_id = optional(
        check_line, "project_id", data.get("project_id"), MAX_PROJECT_ID_CHARS, where=where
    )
    if (scope == "project") != (project_id is not None):
        raise error_at(where, "project_id must be set exactly when scope is 'project'")
    return scope, project_id


def _check_hash(data: Mapping[str, Any], where: str) -> str:
    value = data["text_hash"]
    if not (isinstance(value, str) and _HEX64.match(value)):
        raise error_at(where, f"text_hash must be 64 lower-case hex digits, not {shown(value)}")
    return value


def validate_export_record(
    data: Any, *, where: str, max_body_chars: int = MAX_BODY_CHARS
) -> dict[str, Any]:
    """One record of an export line: every field with its type and range."""
    if not isinstance(data, Mapping):
        raise error_at(where, f"record must be an object, not {kind_of(data)}")
    refuse_unknown(data, _RECORD_FIELDS, where)
    _required(data, ("id", "version", "body", "recorded_at", "text_hash"), where)
    get = data.get
    out = _check_identity(data, "id", where)
    version = check_int("version", data["version"], 1, MAX_INT32, where=where)
    out["version"] = version
    out["body"] = check_body(data["body"], max_body_chars, where=where)
    for name, allowed, default in _RECORD_CHOICES:
        out[name] = check_choice(name, get(name, default), allowed, where=where)
    if out["trust"] == "system" and out["origin"] in ("reflection", "review"):
        raise error_at(where, f"trust 'system' cannot come from origin {out['origin']!r}")
    out["scope"], out["project_id"] = _check_scope(data, where)
    out["title"] = optional(check_line, "title", get("title"), MAX_TITLE_CHARS, where=where)
    out["tags"] = check_text_list("tags", get("tags", ()), MAX_TAG_CHARS, where=where)
    out["language"] = optional(check_token, "language", get("language"), 35, where=where)
    for name in SELECTORS:
        values = check_text_list(
            name, get(name, ()), MAX_SELECTOR_CHARS, where=where, printable=True
        )
        out[name] = tuple(v.lower() for v in values) if name in LOWER_SELECTORS else values
    out["pinned"] = check_bool("pinned", get("pinned", False), where=where)
    for name in _RECORD_COUNTERS:
        out[name] = check_int(name, get(name, 0), 0, MAX_INT32, where=where)
    out["confidence"] = check_fraction("confidence", get("confidence", 1.0), where=where)
    out["importance"] = check_fraction("importance", get("importance", 0.5), where=where)
    out["evidence"] = check_text_list(
        "evidence", get("evidence", ()), MAX_KEY_CHARS, where=where, max_items=MAX_EVIDENCE_ITEMS
    )
    source = check_source(get("source", {}), where=where)
    if source is None:
        raise error_at(where, "source must be an object, not null")
    out["source"] = source
    out["external_ref"] = optional(
        check_line, "external_ref", get("external_ref"), MAX_REF_CHARS, where=where
    )
    out["episode_id"] = optional(check_token, "episode_id", get("episode_id"), where=where)
    out["position"] = optional(check_int, "position", get("position"), 0, MAX_INT32, where=where)
    out["recorded_at"] = check_stored_time("recorded_at", data["recorded_at"], where=where)
    for name in _RECORD_TIMES:
        out[name] = optional(check_stored_time, name, get(name), where=where)
    out["supersedes"] = optional(
        check_int, "supersedes", get("supersedes"), 1, version - 1, where=where
    )
    out["superseded_by"] = optional(
        check_int, "superseded_by", get("superseded_by"), version + 1, MAX_INT32, where=where
    )
    out["text_hash"] = _check_hash(data, where)
    if out["text_hash"] != text_hash(out["body"]):
        raise error_at(where, "text_hash does not match the body")
    return out


_TOMBSTONE_FIELDS = (
    "record_id", "tenant", "agent", "scope", "project_id", "text_hash", "reason", "permanent",
    "removed_at", "restored_at",
)  # fmt: skip


def validate_export_tombstone(data: Any, *, where: str) -> dict[str, Any]:
    """One tombstone of an export line: every field with its type and range."""
    if not isinstance(data, Mapping):
        raise error_at(where, f"tombstone must be an object, not {kind_of(data)}")
    refuse_unknown(data, _TOMBSTONE_FIELDS, where)
    _required(data, ("record_id", "text_hash", "reason", "removed_at"), where)
    out = _check_identity(data, "record_id", where)
    out["scope"], out["project_id"] = _check_scope(data, where)
    out["text_hash"] = _check_hash(data, where)
    out["reason"] = check_choice("reason", data["reason"], TOMBSTONE_REASONS, where=where)
    out["permanent"] = check_bool("permanent", data.get("permanent", False), where=where)
    out["removed_at"] = check_stored_time("removed_at", data["removed_at"], where=where)
    restored = optional(check_stored_time, "restored_at", data.get("restored_at"), where=where)
    if restored is not None and (out["permanent"] or restored < out["removed_at"]):
        raise error_at(where, "restored_at must follow removed_at, and only when not permanent")
    out["restored_at"] = restored
    return out
