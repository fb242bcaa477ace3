"""A Memory on a real SQLite file with a given learning config, for service tests."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from cairn import Memory
from cairn.adapters.hashing import HashingEmbedder


def open_mem(
    path: Path, clock: Any, learning: dict[str, Any] | None = None, **memory: Any
) -> Memory:
    config: dict[str, Any] = {"memory": {"markdown": {"enabled": False}, **memory}}
    if learning is not None:
        config["agents"] = {"default": {"learning": learning}}
    return Memory.open(path, config=config, embedder=HashingEmbedder(), clock=clock)


def succeed(mem: Memory, key: str, note: str, **fields: Any) -> Any:
    fields.setdefault("session_id", "s1")
    fields.setdefault("episode_id", key)
    return mem.observe(True, note=note, event_id=key, **fields)


def delivered(mem: Memory, task: str, **conditions: Any) -> dict[str, str]:
    """record id -> application id of everything a task received."""
    ctx = mem.context(task, **conditions)
    return {i.record_id: i.application_id for i in (*ctx.resident, *ctx.manifest)}


def docs(mem: Memory, **filters: Any) -> list[Any]:
    return [r for r in mem.list(include_forgotten=True, **filters) if r.origin == "reflection"]
