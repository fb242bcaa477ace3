"""A PostgreSQL whose pgvector cannot compute a distance here is refused at start, in one
line, by the store and by ``cairn serve`` — before any table, index or recall uses it.

The crash itself is real: a backend that dies in the middle of the 384-dimension
distance. Here the distance operator of the store's own schema is one that terminates
its backend, which is what a pgvector built with instructions this processor lacks does
(by SIGILL); the client sees the same lost connection either way.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest
import yaml
from psycopg import sql

from cairn.errors import StorageError
from cairn.storage.postgres import PostgresRecordStore, local_server
from cairn.storage.postgres.probe import PROBE_DIMENSIONS, check_vectors
from pg_support import fresh_schema, server_uri


@pytest.fixture
def sabotaged() -> Iterator[tuple[str, str]]:
    """A schema whose ``<=>`` on vectors ends the backend computing it."""
    with fresh_schema("probe") as (url, name):
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
            conn.execute(sql.SQL("CREATE SCHEMA {}").format(sql.Identifier(name)))
            conn.execute(
                sql.SQL(
                    "CREATE FUNCTION {}.dies(a vector, b vector) RETURNS float8 LANGUAGE sql"
                    " AS 'SELECT pg_terminate_backend(pg_backend_pid())::int::float8'"
                ).format(sql.Identifier(name))
            )
            conn.execute(
                sql.SQL(
                    "CREATE OPERATOR {}.<=> (LEFTARG = vector, RIGHTARG = vector,"
                    " FUNCTION = {}.dies)"
                ).format(sql.Identifier(name), sql.Identifier(name))
            )
        yield url, name


def test_the_test_server_computes_a_real_distance() -> None:
    url = server_uri()
    check_vectors(url)  # raises when it cannot
    with psycopg.connect(url, autocommit=True) as conn:
        row = conn.execute(
            f"SELECT array_fill(1::real, ARRAY[{PROBE_DIMENSIONS}])::vector"
            f" <=> (array_fill(0::real, ARRAY[{PROBE_DIMENSIONS - 1}]) || 1::real)::vector"
        ).fetchone()
    assert row is not None
    # cosine distance of (1,…,1) and (0,…,0,1): 1 − 1/√384
    assert abs(float(row[0]) - (1 - 1 / PROBE_DIMENSIONS**0.5)) < 1e-5


def test_a_store_whose_vectors_crash_the_backend_is_refused_in_one_line(
    sabotaged: tuple[str, str],
) -> None:
    url, name = sabotaged
    with pytest.raises(StorageError) as caught:
        PostgresRecordStore(url, schema=name)
    message = str(caught.value)
    assert "\n" not in message
    assert "pgvector cannot run on this processor" in message
    assert f"{PROBE_DIMENSIONS}-dimension distance" in message
    with psycopg.connect(url, autocommit=True) as conn:  # and nothing of cairn's was made
        tables = conn.execute(
            "SELECT count(*) FROM information_schema.tables WHERE table_schema = %s", (name,)
        ).fetchone()
    assert tables == (0,)


def test_cairn_serve_refuses_such_a_database_at_start(
    sabotaged: tuple[str, str], tmp_path: Path
) -> None:
    url, name = sabotaged
    home = tmp_path / "home"
    home.mkdir()
    config = {"memory": {"store": {"url": url, "postgresSchema": name}}}
    (home / "config.yaml").write_text(yaml.safe_dump(config), encoding="utf-8")
    done = subprocess.run(
        [sys.executable, "-m", "cairn.cli.main", "--home", str(home), "serve", "--port", "0"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode != 0
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert any("pgvector cannot run on this processor" in line for line in lines), done.stderr
    assert "Traceback" not in done.stderr


def test_the_local_server_refuses_a_folder_it_cannot_start_in(tmp_path: Path) -> None:
    folder = tmp_path / "blocked"
    folder.write_text("a file where the data folder should be", encoding="utf-8")
    with pytest.raises(StorageError, match="could not start"):
        local_server.start(folder)
