"""Small builders shared by the PostgreSQL store's own tests (the storage suite's own)."""

from __future__ import annotations

from record_builders import DIM, insert, record, vec

__all__ = ["DIM", "insert", "record", "vec"]
