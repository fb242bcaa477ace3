"""What learned docs a prompt may receive (SPEC §6).

Archived docs never surface. Procedure docs — reflection's ``skill`` docs with a tool
footprint — are capped at ``limit`` per prompt: the most corroborated (highest proof)
keep their slot, ties by id, so the choice is stable. Other docs are not capped.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TypeVar

from cairn.engine.learning.deltas import is_doc, reflection_of
from cairn.model import Record

T = TypeVar("T")


def is_procedure(record: Record) -> bool:
    return is_doc(record) and record.kind == "skill" and bool(reflection_of(record).get("tools"))


def surface(items: Sequence[T], record_of: Callable[[T], Record], limit: int) -> list[T]:
    kept = [i for i in items if not (is_doc(record_of(i)) and record_of(i).state == "archived")]
    procedures = sorted(
        (i for i in kept if is_procedure(record_of(i))),
        key=lambda i: (-record_of(i).proof_count, record_of(i).id),
    )
    allowed = {id(i) for i in procedures[:limit]}
    return [i for i in kept if not is_procedure(record_of(i)) or id(i) in allowed]
