"""What the Python API returns for personal memory for tasks, as plain frozen values."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from cairn.errors import InvalidInput
from cairn.model import Application, MemoryInput
from cairn.provider import contract as c
from cairn.provider.convert import memory_fields


@dataclass(frozen=True, slots=True)
class DeliveredItem:
    record_id: str
    version: int
    title: str
    summary: str
    body: str | None
    kind: str
    trust: str
    delivery: str
    why_applied: tuple[str, ...]
    application_id: str


@dataclass(frozen=True, slots=True)
class TaskContext:
    task: str
    resident: tuple[DeliveredItem, ...]
    manifest: tuple[DeliveredItem, ...]
    constraints: tuple[str, ...]
    applications: tuple[Application, ...]


def input_fields(body: str, kind: str, fields: dict[str, Any]) -> dict[str, Any]:
    try:
        item = MemoryInput(body=body, kind=kind, **fields)
    except TypeError as exc:
        raise InvalidInput(f"unknown field: {exc}") from None
    return memory_fields(item)


def delivered(item: c.DeliveredModel) -> DeliveredItem:
    return DeliveredItem(
        item.id,
        item.version,
        item.title,
        item.summary,
        item.body,
        item.kind,
        item.trust,
        item.delivery,
        tuple(item.why_applied),
        item.application_id,
    )
