"""How domain values map to rows of either store and back: columns by name, JSON text for
lists and the source map (both stores hold the same bytes for a record, so the selector
tests -- a quoted word inside the JSON text -- are the same), booleans for flags (SQLite
keeps them as 0 and 1)."""

from __future__ import annotations

import json
import operator
from collections.abc import Sequence
from dataclasses import fields
from typing import Any

from cairn.model import Application, Event, Record, Tombstone
from cairn.storage.sql.dialect import Dialect

JSON_LIST_FIELDS = frozenset(
    ("tags", "path_patterns", "operations", "phases", "task_types", "evidence")
)
RECORD_COLUMNS: tuple[str, ...] = tuple(f.name for f in fields(Record))
SELECT_RECORD = "SELECT row, " + ", ".join(RECORD_COLUMNS) + " FROM records"

EVENT_COLUMNS: tuple[str, ...] = (
    "seq",
    "event_id",
    "type",
    "tenant",
    "agent",
    "occurred_at",
    "recorded_at",
    "episode_id",
    "session_id",
    "sender",
    "caused_by",
    "supersedes",
    "payload",
)
SELECT_EVENT = "SELECT " + ", ".join(EVENT_COLUMNS) + " FROM events"

TOMBSTONE_COLUMNS: tuple[str, ...] = tuple(f.name for f in fields(Tombstone))
SELECT_TOMBSTONE = "SELECT " + ", ".join(TOMBSTONE_COLUMNS) + " FROM tombstones"

APPLICATION_COLUMNS: tuple[str, ...] = tuple(f.name for f in fields(Application))
SELECT_APPLICATION = "SELECT " + ", ".join(APPLICATION_COLUMNS) + " FROM applications"


def insert_event(dialect: Dialect) -> str:
    names = EVENT_COLUMNS[1:]  # seq is the store's
    return f"INSERT INTO events({', '.join(names)}) VALUES ({dialect.marks(len(names))})"


# json.dumps(value, ensure_ascii=False[, sort_keys=True]) with the encoder made once, not
# on every call (a bulk write encodes a few values per record): the same text.
_as_list = json.JSONEncoder(ensure_ascii=False).encode
_as_object = json.JSONEncoder(ensure_ascii=False, sort_keys=True).encode


def to_db(name: str, value: Any) -> Any:
    if name in JSON_LIST_FIELDS:
        # Most lists are empty: skipping the encoder for them is a fifth of a bulk write.
        return _as_list(list(value)) if value else "[]"
    if name == "source":
        return _as_object(value or {})
    if name == "pinned":
        return bool(value)
    return value


_fields_of = operator.attrgetter(*RECORD_COLUMNS)


def record_values(record: Record) -> list[Any]:
    """The record's columns in RECORD_COLUMNS order, each as :func:`to_db` gives it
    (positional, the conversions at their places: a bulk write makes one per record)."""
    values = list(_fields_of(record))
    for at in _LISTS:
        value = values[at]
        values[at] = _as_list(list(value)) if value else "[]"
    values[_SOURCE] = _as_object(values[_SOURCE] or {})
    values[_PINNED] = bool(values[_PINNED])
    return values


# Where the converted columns sit among RECORD_COLUMNS, and in a ``SELECT_RECORD`` row
# (the row id comes first).
_LISTS = tuple(RECORD_COLUMNS.index(name) for name in sorted(JSON_LIST_FIELDS))
_SOURCE = RECORD_COLUMNS.index("source")
_PINNED = RECORD_COLUMNS.index("pinned")
_JSON_LIST_AT = tuple(1 + at for at in _LISTS)
_SOURCE_AT = 1 + _SOURCE
_PINNED_AT = 1 + _PINNED


def record_from_row(row: Sequence[Any]) -> tuple[int, Record]:
    """(row id, Record) from a ``SELECT_RECORD`` result."""
    if len(row) != len(RECORD_COLUMNS) + 1:
        raise ValueError(f"a record row has {len(RECORD_COLUMNS) + 1} columns, not {len(row)}")
    # Positional: the columns are the record's fields in order (RECORD_COLUMNS is made
    # from them), which builds a record in about two thirds of the time of keywords.
    values = list(row)
    for at in _JSON_LIST_AT:
        raw = values[at]
        # Most lists are empty: skipping the JSON parser for them halves the cost of a row.
        values[at] = () if raw == "[]" else tuple(json.loads(raw))
    raw_source = values[_SOURCE_AT]
    values[_SOURCE_AT] = {} if raw_source == "{}" else json.loads(raw_source)
    values[_PINNED_AT] = bool(values[_PINNED_AT])
    return int(values[0]), Record(*values[1:])


_event_fields = operator.attrgetter(*EVENT_COLUMNS[1:-1])  # all but seq and the payload


def event_values(event: Event) -> tuple[Any, ...]:
    payload = _as_object(event.payload)
    return (*_event_fields(event), payload)


def event_from_row(row: Sequence[Any]) -> Event:
    values = dict(zip(EVENT_COLUMNS, row, strict=True))
    values["payload"] = json.loads(values["payload"])
    return Event(**values)


def tombstone_values(stone: Tombstone) -> tuple[Any, ...]:
    data = stone.to_dict()
    data["permanent"] = bool(stone.permanent)
    return tuple(data[name] for name in TOMBSTONE_COLUMNS)


def tombstone_from_row(row: Sequence[Any]) -> Tombstone:
    values = dict(zip(TOMBSTONE_COLUMNS, row, strict=True))
    values["permanent"] = bool(values["permanent"])
    return Tombstone(**values)


def application_values(app: Application) -> tuple[Any, ...]:
    data = app.to_dict()
    data["why_applied"] = json.dumps(list(app.why_applied), ensure_ascii=False)
    return tuple(data[name] for name in APPLICATION_COLUMNS)


def application_from_row(row: Sequence[Any]) -> Application:
    values = dict(zip(APPLICATION_COLUMNS, row, strict=True))
    values["why_applied"] = tuple(json.loads(values["why_applied"]))
    return Application(**values)
