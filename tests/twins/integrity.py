"""What the SQLite store enforces in SQL, for the in-memory twin: the trust CHECK, and
the redaction of journal payloads after a permanent forget."""

from __future__ import annotations

import copy
from typing import Any

from cairn.errors import StorageError
from cairn.model import Record
from cairn.storage.sql.writes import redact as redact_in_place


def redact(data: Any, marker: str) -> Any:
    """A copy of an event payload with its content fields redacted, as the SQL stores do."""
    copied = copy.deepcopy(data)
    redact_in_place(copied, marker)
    return copied


def check(record: Record) -> None:
    """The database's CHECK: what cairn learned itself can never claim system trust."""
    if record.trust == "system" and record.origin in ("reflection", "review"):
        raise StorageError("the store refused the change: a learned doc cannot be system")
