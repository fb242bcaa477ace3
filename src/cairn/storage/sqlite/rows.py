"""How domain values map to SQLite rows and back: columns by name, JSON for lists."""

from __future__ import annotations

import json
import sqlite3
from dataclasses import fields
from typing import Any

from cairn.model import Application, Event, Record, Tombstone

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
INSERT_EVENT = (
    "INSERT INTO events(" + ", ".join(EVENT_COLUMNS[1:]) + ")"
    " VALUES (" + ", ".join("?" * (len(EVENT_COLUMNS) - 1)) + ")"
)

TOMBSTONE_COLUMNS: tuple[str, ...] = tuple(f.name for f in fields(Tombstone))
SELECT_TOMBSTONE = "SELECT " + ", ".join(TOMBSTONE_COLUMNS) + " FROM tombstones"

APPLICATION_COLUMNS: tuple[str, ...] = tuple(f.name for f in fields(Application))
SELECT_APPLICATION = "SELECT " + ", ".join(APPLICATION_COLUMNS) + " FROM applications"


def to_db(name: str, value: Any) -> Any:
    if name in JSON_LIST_FIELDS:
        # Most lists are empty: skipping the encoder for them is a fifth of a bulk write.
        return json.dumps(list(value), ensure_ascii=False) if value else "[]"
    if name == "source":
        return json.dumps(value or {}, ensure_ascii=False, sort_keys=True)
    if name == "pinned":
        return int(bool(value))
    return value


def record_values(record: Record) -> list[Any]:
    return [to_db(n, getattr(record, n)) for n in RECORD_COLUMNS]


def record_from_row(row: sqlite3.Row | tuple[Any, ...]) -> tuple[int, Record]:
    """(row id, Record) from a ``SELECT_RECORD`` result."""
    values = dict(zip(("row", *RECORD_COLUMNS), row, strict=True))
    key = int(values.pop("row"))
    for name in JSON_LIST_FIELDS:
        raw = values[name]
        # Most lists are empty: skipping the JSON parser for them halves the cost of a row.
        values[name] = () if raw == "[]" else tuple(json.loads(raw))
    raw_source = values["source"]
    values["source"] = {} if raw_source == "{}" else json.loads(raw_source)
    values["pinned"] = bool(values["pinned"])
    return key, Record(**values)


def event_values(event: Event) -> tuple[Any, ...]:
    data = event.to_dict()
    data["payload"] = json.dumps(event.payload, ensure_ascii=False, sort_keys=True)
    return tuple(data[name] for name in EVENT_COLUMNS[1:])


def event_from_row(row: tuple[Any, ...]) -> Event:
    values = dict(zip(EVENT_COLUMNS, row, strict=True))
    values["payload"] = json.loads(values["payload"])
    return Event(**values)


def tombstone_values(stone: Tombstone) -> tuple[Any, ...]:
    data = stone.to_dict()
    data["permanent"] = int(stone.permanent)
    return tuple(data[name] for name in TOMBSTONE_COLUMNS)


def tombstone_from_row(row: tuple[Any, ...]) -> Tombstone:
    values = dict(zip(TOMBSTONE_COLUMNS, row, strict=True))
    values["permanent"] = bool(values["permanent"])
    return Tombstone(**values)


def application_values(app: Application) -> tuple[Any, ...]:
    data = app.to_dict()
    data["why_applied"] = json.dumps(list(app.why_applied), ensure_ascii=False)
    return tuple(data[name] for name in APPLICATION_COLUMNS)


def application_from_row(row: tuple[Any, ...]) -> Application:
    values = dict(zip(APPLICATION_COLUMNS, row, strict=True))
    values["why_applied"] = tuple(json.loads(values["why_applied"]))
    return Application(**values)
