"""Records, vectors and rows for the storage tests of every backend (the contract suite
and each backend's own tests build them the same way)."""

from __future__ import annotations

from typing import Any

import numpy as np

from cairn.model import Record
from cairn.storage.ports import NewRow, RecordStore
from cairn.text import text_hash

DIM = 8


def vec(*hot: int, dim: int = DIM) -> np.ndarray:
    """A unit vector with weight on the given dimensions."""
    out = np.zeros(dim, dtype=np.float32)
    for i in hot:
        out[i] += 1.0
    return out / np.linalg.norm(out)


def record(
    record_id: str, body: str, *, tenant: str = "t1", agent: str = "a", **fields: Any
) -> Record:
    values: dict[str, Any] = {
        "id": record_id,
        "version": 1,
        "tenant": tenant,
        "agent": agent,
        "body": body,
        "recorded_at": "2026-01-01T00:00:00.000000Z",
        "text_hash": text_hash(body),
    }
    values.update(fields)
    return Record(**values)


def insert(
    store: RecordStore,
    *items: Record,
    vectors: dict[str, np.ndarray] | None = None,
    entities: bool = True,
) -> list[int]:
    """Rows for ``items`` in one transaction (entity keys shared by all, unless not)."""
    with store.transaction() as tx:
        return tx.insert_records(
            [
                NewRow(
                    r,
                    (vectors or {}).get(r.id),
                    "test-model",
                    ("shared-key", r.id) if entities else None,
                )
                for r in items
            ]
        )
