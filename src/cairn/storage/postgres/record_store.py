"""The PostgreSQL record store: the server backend, shared by any number of processes.

Every read and write runs in a transaction on a pooled connection, scoped to its tenant by
row-level security (:mod:`cairn.storage.postgres.database`). Writers of every process take
the feed's next ``change_seq`` first and so run one at a time, as on SQLite; readers never
wait for them.

The in-database search index (:mod:`cairn.storage.postgres.search_index`) reads the index
tables this store writes in the same transactions, so no process holds postings or vectors
and a write is searchable by every process the moment it commits. The change feed
(``changes_since``) is still kept for any other follower, e.g. an in-process index.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from typing import Any

import numpy as np

from cairn.storage.ports import ChangeBatch, FeedPosition, PendingPurge, StoreStats
from cairn.storage.postgres.database import LOCK_TIMEOUT_S, POOL_TIMEOUT_S, Database, Session
from cairn.storage.postgres.schema import TENANT_TABLES
from cairn.storage.postgres.tokens import PostgresTokenRows
from cairn.storage.postgres.transaction import PostgresTransaction
from cairn.storage.sql.dialect import POSTGRES
from cairn.storage.sql.journal import SqlJournal
from cairn.storage.sql.reads import SqlReads
from cairn.storage.sql.upkeep import FEED_BATCH, OneEmbedder, SqlUpkeep, clear_purge
from cairn.storage.sql.writes import RankHint

# Tables a permanent forget leaves dead tuples of the body in.
_PURGED_TABLES = ("records", "events", "applications", "record_terms", "postings", "vectors")


class PostgresRecordStore(SqlReads, SqlJournal, SqlUpkeep):
    """The reads and the journal's are the SQL stores' shared code (:mod:`cairn.storage.sql`)
    over the PostgreSQL dialect, each in a session scoped to its tenant; this class runs the
    pool, the transactions and what only PostgreSQL does (a server-side cursor for the feed,
    vacuuming after a purge, the tokens table).

    Safe to share between threads (each call takes a pooled connection).

    ``url``: a libpq URL (``postgresql://user@host:port/db``); ``schema``: the schema that
    holds this store's tables (made on first open). ``rank_hint`` is the engine's stored
    ranking of a record (see :class:`cairn.storage.sqlite.record_store.SqliteRecordStore`).
    """

    def __init__(
        self,
        url: str,
        *,
        schema: str = "cairn",
        rank_hint: RankHint | None = None,
        max_connections: int = 8,
        pool_timeout: float = POOL_TIMEOUT_S,
        lock_timeout: float = LOCK_TIMEOUT_S,
    ) -> None:
        super().__init__(
            POSTGRES, self._all, lambda sql, params: self._all(None, sql, params, every=True)
        )
        self.db = Database(
            url,
            schema,
            max_connections=max_connections,
            pool_timeout=pool_timeout,
            lock_timeout=lock_timeout,
        )
        self._rank = rank_hint
        self._embedder = OneEmbedder(
            POSTGRES, f"{self.db.where} (schema {self.db.schema})", "use another schema"
        )

    # -- what an operator sees -----------------------------------------------------------

    def intent(self, what: str) -> AbstractContextManager[None]:
        """Name what this thread's database work is for in its errors ("writing")."""
        return self.db.intent(what)

    def health(self) -> dict[str, Any]:
        """The database's versions and this process's pool, for status and metrics."""
        return {"versions": dict(self.db.versions), "pool": self.db.pool_stats()}

    def tokens(self) -> PostgresTokenRows:
        """The server's tokens kept in this schema (every host on it reads the same)."""
        return PostgresTokenRows(self.db)

    def observe(self, observer: Callable[[str, float, str | None], None] | None) -> None:
        """Call ``observer(what, seconds, error)`` after each unit of work (metrics)."""
        self.db.observer = observer

    # -- writes --------------------------------------------------------------------------

    @contextmanager
    def transaction(self) -> Iterator[PostgresTransaction]:
        try:
            with self.db.write() as (session, seq):
                yield PostgresTransaction(session, seq, self._rank, self._note_model)
        except BaseException:
            self._embedder.forget()  # the meta row may have been rolled back with the rest
            raise

    def _note_model(self, session: Session, model: str) -> None:
        """One store holds the vectors of one embedder: mixing two would rank nonsense."""

        def execute(sql: str, params: Sequence[Any]) -> list[Any]:
            cursor = session.conn.execute(sql.encode(), params)
            return cursor.fetchall() if cursor.description is not None else []

        self._embedder.note(execute, model)

    # -- reads ---------------------------------------------------------------------------

    def reading(self, tenant: str) -> AbstractContextManager[None]:
        """The reads of this thread inside, on one connection in one transaction."""
        return self.db.reading(tenant)

    def _all(
        self, tenant: str | None, query: str, params: Sequence[Any], *, every: bool = False
    ) -> list[Any]:
        with self.db.session(tenant, every_tenant=every) as s:
            return s.conn.execute(query.encode(), params).fetchall()

    def vectors_by_hash(self, tenant: str, agent: str, model: str) -> dict[str, np.ndarray]:
        with self.db.session(tenant) as s:
            cursor = s.cursor(binary=True).execute(
                "SELECT r.text_hash, r.title, v.vec FROM vectors v"
                " JOIN records r ON r.row = v.row"
                " WHERE v.tenant = %s AND v.agent = %s AND v.model = %s",
                (tenant, agent, model),
            )
            found = cursor.fetchall()
        # A title changes what was embedded: only untitled rows map from their body alone.
        return {h: vec for h, title, vec in found if title is None}

    # -- change feed ---------------------------------------------------------------------

    def changes_since(self, position: FeedPosition) -> Iterator[ChangeBatch]:
        sql, params = self._feed_start(position)
        with self.db.session(None, every_tenant=True) as s:
            # A server-side cursor: a 1M-row load never holds more than one chunk.
            cursor = s.conn.cursor(name="cairn_feed", binary=True)
            cursor.execute(sql.encode(), params)
            try:
                while found := cursor.fetchmany(FEED_BATCH):
                    yield ChangeBatch.from_rows(found, vector=_vector_bytes, blob=bytes)
            finally:
                cursor.close()

    # -- entity links --------------------------------------------------------------------

    # -- purges --------------------------------------------------------------------------

    def _clear_purge(self, purge: PendingPurge) -> None:
        sql, params = clear_purge(POSTGRES, purge)
        with self.db.session(purge.tenant) as s:
            s.conn.execute(sql.encode(), params)

    def checkpoint(self) -> None:
        """Vacuum the tables a purge rewrote, so the dead row versions that held the body
        are removed and their space reused. PostgreSQL cannot promise more from inside:
        its write-ahead log and base backups are the operator's to rotate and encrypt."""
        with self.db.admin() as conn:
            conn.execute(f"VACUUM {', '.join(_PURGED_TABLES)}".encode())

    # -- status --------------------------------------------------------------------------

    def stats(self, tenant: str, agent: str | None = None) -> StoreStats:
        # one connection and one transaction for the counts and the sizes
        with self.db.reading(tenant), self.db.session(tenant) as s:
            version = s.conn.execute("SELECT max(version) FROM schema_version").fetchone()
            size = s.conn.execute(
                "SELECT coalesce(sum(pg_total_relation_size(format('%%I.%%I', %s::text, t))), 0)"
                " FROM unnest(%s::text[]) AS t",
                (self.db.schema, ["meta", *TENANT_TABLES]),
            ).fetchone()
            return self._counted(
                tenant,
                agent,
                schema_version=int(version[0]) if version and version[0] else 0,
                size=int(size[0]) if size else 0,
                extra={"backend": "postgresql", "schema": self.db.schema},
            )

    def close(self) -> None:
        self.db.close()


def _vector_bytes(value: Any) -> bytes:
    return np.asarray(value, dtype="<f4").tobytes()
