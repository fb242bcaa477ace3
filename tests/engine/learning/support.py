"""Observations and records for the learning engine's unit tests."""

from __future__ import annotations

from typing import Any

from cairn.engine.learning.observations import Observation
from cairn.model import Record
from cairn.text import text_hash


def obs(seq: int, note: str, **fields: Any) -> Observation:
    values: dict[str, Any] = {
        "event_id": f"E{seq:03d}",
        "seq": seq,
        "type": "episode.completed",
        "episode": f"EP{seq:03d}",
        "session": "s1",
        "sender": "user",
        "sender_trust": "system",
        "sender_named": True,
        "content_trust": "learned",
        "success": True,
        "deterministic": False,
        "command": None,
        "tools": (),
        "steps": 0,
        "note": note,
        "task": None,
        "topic": None,
        "kind": None,
        "project_id": None,
        "path_patterns": (),
        "operations": (),
        "phases": (),
        "task_types": (),
        "occurred_at": f"2026-06-01T12:00:{seq:02d}.000000Z",
        "recorded_at": f"2026-06-01T12:00:{seq:02d}.000000Z",
    }
    values.update(fields)
    return Observation(**values)


def doc(record_id: str, body: str, **fields: Any) -> Record:
    values: dict[str, Any] = {
        "id": record_id,
        "version": 1,
        "tenant": "t",
        "agent": "a",
        "body": body,
        "kind": "topic",
        "authority": "inferred",
        "origin": "reflection",
        "state": "candidate",
        "recorded_at": "2026-06-01T12:00:00.000000Z",
        "text_hash": text_hash(body),
    }
    values.update(fields)
    return Record(**values)
