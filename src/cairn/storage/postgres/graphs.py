"""HNSW graphs per partition: each large (tenant, agent) gets a partial index of its own.

One HNSW index over every tenant's vectors is walked with the tenant as a filter, so a
tenant holding a tenth of the rows has nine of ten visited candidates thrown away; the
walk then goes on (iterative scan) and costs several times an exact scan of the tenant's
rows (measured at 100k: 30-90 ms against 6-60 ms exact). A partial index whose predicate
names the partition holds that partition's vectors alone, so its walk only ever meets
rows it may return. Small partitions have no graph and are ranked exactly; a partition
gets its graph when it reaches the index's threshold of live memories.

The graph is built off the request path: a search that finds a large partition without
a valid graph asks for one and is answered exactly meanwhile. The build is
``CREATE INDEX CONCURRENTLY`` (writers go on) on a connection of its own, serialised
across processes by an advisory lock on the index's name; a build left invalid by a crash
is dropped and made again. ``build`` does the same in the caller's thread (bulk loads,
tests).

The partition is named in the index predicate as literals, so the planner can only prove
the index applies to a query naming the same literals: the graph query inlines them
(quoted by psycopg), and the tenant stays the query's condition as everywhere else.
"""

from __future__ import annotations

import hashlib
import logging
import threading
import time
from typing import Any

from psycopg import sql

from cairn.storage.postgres.database import Database

log = logging.getLogger(__name__)
_RECHECK_S = 30.0  # how often a partition without a graph looks for one again
# maintenance_work_mem of a build at least: a 100k graph builds in memory. A larger
# setting of the database's own is kept (a graph that outgrows the build memory builds
# far slower: a 400k partition of 384-dimension vectors needs ~1 GB).
_BUILD_MEMORY = "512MB"


def graph_name(dim: int, tenant: str, agent: str) -> str:
    digest = hashlib.sha256(f"{tenant}\x00{agent}".encode()).hexdigest()[:20]
    return f"vectors_hnsw_{dim}_{digest}"


def partition_condition(dim: int, tenant: str, agent: str) -> sql.Composed:
    """The predicate of a partition's graph, as the graph query must repeat it."""
    return sql.SQL("tenant = {} AND agent = {} AND live AND dim = {}").format(
        sql.Literal(tenant), sql.Literal(agent), sql.Literal(dim)
    )


def graph_ddl(dim: int, tenant: str, agent: str) -> sql.Composed:
    return sql.SQL(
        "CREATE INDEX CONCURRENTLY IF NOT EXISTS {} ON vectors"
        " USING hnsw ((vec::vector({})) vector_cosine_ops) WHERE {}"
    ).format(
        sql.Identifier(graph_name(dim, tenant, agent)),
        sql.Literal(dim),
        partition_condition(dim, tenant, agent),
    )


class PartitionGraphs:
    """Which partitions have a usable graph, and the builds of the missing ones."""

    def __init__(self, db: Database) -> None:
        self._db = db
        self._ready: set[str] = set()
        self._checked: dict[str, float] = {}
        self._building: set[str] = set()
        self._lock = threading.Lock()

    def ready(self, conn: Any, dim: int, tenant: str, agent: str) -> bool:
        """Whether the partition's graph is valid; asks for a build when it is not (at
        most every ``_RECHECK_S`` per partition, so a search pays no catalog read)."""
        name = graph_name(dim, tenant, agent)
        if name in self._ready:
            return True
        now = time.monotonic()
        with self._lock:
            if now - self._checked.get(name, -_RECHECK_S) < _RECHECK_S:
                return False
            self._checked[name] = now
        if _valid(conn, name):
            self._ready.add(name)
            return True
        self._start(dim, tenant, agent)
        return False

    def _start(self, dim: int, tenant: str, agent: str) -> None:
        name = graph_name(dim, tenant, agent)
        with self._lock:
            if name in self._building:
                return
            self._building.add(name)

        def run() -> None:
            try:
                self.build(dim, tenant, agent, wait=False)
            except Exception as exc:  # a failed build leaves the partition exact
                log.warning("building the HNSW graph %s failed: %s", name, exc)
            finally:
                with self._lock:
                    self._building.discard(name)
                    self._checked.pop(name, None)

        threading.Thread(target=run, name=f"cairn-graph-{name[-8:]}", daemon=True).start()

    def build(self, dim: int, tenant: str, agent: str, *, wait: bool = True) -> bool:
        """Build the partition's graph now (``wait``: after any build of it under way
        elsewhere; else give up when one is). True when the graph is valid afterwards."""
        name = graph_name(dim, tenant, agent)
        with self._db.admin() as conn:
            # Tried, not waited for: a statement waiting on the lock is a transaction the
            # other process's CREATE INDEX CONCURRENTLY would wait for in turn.
            while not _try_lock(conn, name):
                if not wait:
                    return False
                time.sleep(0.2)
            try:
                if _valid(conn, name):
                    self._ready.add(name)
                    return True
                if _exists(conn, name):
                    conn.execute(sql.SQL("DROP INDEX CONCURRENTLY {}").format(sql.Identifier(name)))
                raise_build_memory(conn)
                started = time.perf_counter()
                conn.execute(graph_ddl(dim, tenant, agent))
                log.info("built %s in %.1f s", name, time.perf_counter() - started)
                valid = _valid(conn, name)
            finally:
                conn.execute("SELECT pg_advisory_unlock(hashtext(%s))", (name,))
        if valid:
            self._ready.add(name)
        return valid

    def forget(self) -> None:
        """Look every partition up again (after indexes were dropped under us)."""
        with self._lock:
            self._ready.clear()
            self._checked.clear()


def raise_build_memory(conn: Any, at_least: str = _BUILD_MEMORY) -> str:
    """Raise the session's maintenance_work_mem to ``at_least``, never lower it; the
    setting in force afterwards."""
    conn.execute(
        "SELECT set_config('maintenance_work_mem', %s, false)"
        " WHERE pg_size_bytes(current_setting('maintenance_work_mem')) < pg_size_bytes(%s)",
        (at_least, at_least),
    )
    found = conn.execute("SELECT current_setting('maintenance_work_mem')").fetchone()
    return str(found[0]) if found else ""


def _try_lock(conn: Any, name: str) -> bool:
    got = conn.execute("SELECT pg_try_advisory_lock(hashtext(%s))", (name,)).fetchone()
    return bool(got and got[0])


def _exists(conn: Any, name: str) -> bool:
    found = conn.execute("SELECT to_regclass(%s) IS NOT NULL", (name,)).fetchone()
    return bool(found and found[0])


def _valid(conn: Any, name: str) -> bool:
    found = conn.execute(
        "SELECT indisvalid AND indisready FROM pg_index WHERE indexrelid = to_regclass(%s)",
        (name,),
    ).fetchone()
    return bool(found and found[0])
