"""Applying a store's schema versions, the same in both stores.

Each store opens its own transaction around this (SQLite's ``BEGIN IMMEDIATE``, PostgreSQL's
advisory lock), reads its version under it and refuses a schema newer than this cairn or of
another program; then every version after the one it holds runs, in order, each followed by
the work the store does in Python after it (filling a new table from old rows) and by its
row in ``schema_version``. A version already applied never runs again.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from cairn.storage.sql.ddl import Spelling
from cairn.storage.sql.dialect import Dialect
from cairn.storage.sql.schema import Type

Execute = Callable[[str, Sequence[Any]], object]


def apply_versions(
    execute: Execute,
    dialect: Dialect,
    spelling: Spelling,
    current: int,
    migrations: Sequence[tuple[int, str]],
    *,
    statements: Callable[[str], list[str]],
    after: Mapping[int, Callable[[], None]],
) -> None:
    """Run every migration newer than ``current`` (``statements``: a script's statements,
    as the driver takes them), recording each."""
    number, text = spelling.types[Type.INT], spelling.types[Type.TEXT]
    execute(
        "CREATE TABLE IF NOT EXISTS schema_version"
        f" (version {number} PRIMARY KEY, applied_at {text} NOT NULL)",
        (),
    )
    for version, script in migrations:
        if version <= current:
            continue
        for statement in statements(script):
            execute(statement, ())
        step = after.get(version)
        if step is not None:
            step()
        execute(
            "INSERT INTO schema_version(version, applied_at)"
            f" VALUES ({dialect.mark}, {spelling.now})",
            (version,),
        )
