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

import json
from collections.abc import Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from typing import Any

import numpy as np

from cairn.errors import InvalidInput
from cairn.model import Application, Event, Record, Tombstone
from cairn.storage.ports import (
    OWNED_KINDS,
    ChangeBatch,
    EventFilter,
    FeedPosition,
    LaneFilter,
    PendingPurge,
    RecordQuery,
    RuleQuery,
    StoreStats,
    SweepQuery,
    TrajectoryQuery,
    order_of,
)
from cairn.storage.postgres import learning
from cairn.storage.postgres.database import Database, Session
from cairn.storage.postgres.rows import (
    SELECT_APPLICATION,
    SELECT_EVENT,
    SELECT_RECORD,
    SELECT_TOMBSTONE,
    application_from_row,
    event_from_row,
    record_from_row,
    tombstone_from_row,
)
from cairn.storage.postgres.schema import TENANT_TABLES
from cairn.storage.postgres.transaction import PostgresTransaction, RankHint

_FEED_BATCH = 16_384
_FEED_COLUMNS = (
    "r.row, r.tenant, r.agent, r.project_id, r.live, r.change_seq, v.vec, v.model,"
    " t.length, t.keys, t.counts, t.entity_keys, r.episode_id, r.position, r.occurred_at"
)
# Tables a permanent forget leaves dead tuples of the body in.
_PURGED_TABLES = ("records", "events", "applications", "record_terms", "postings", "vectors")


ASCII_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")


class PostgresRecordStore:
    """Safe to share between threads (each call takes a pooled connection).

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
    ) -> None:
        self.db = Database(url, schema, max_connections=max_connections)
        self._rank = rank_hint
        self._model: str | None = None

    # -- writes --------------------------------------------------------------------------

    @contextmanager
    def transaction(self) -> Iterator[PostgresTransaction]:
        try:
            with self.db.write() as (session, seq):
                yield PostgresTransaction(session, seq, self._rank, self._note_model)
        except BaseException:
            self._model = None  # the meta row may have been rolled back with the rest
            raise

    def _note_model(self, session: Session, model: str) -> None:
        """One store holds the vectors of one embedder: mixing two would rank nonsense."""
        if self._model == model:
            return
        found = session.conn.execute("SELECT value FROM meta WHERE key = 'embedder'").fetchone()
        if found is None:
            session.conn.execute("INSERT INTO meta(key, value) VALUES ('embedder', %s)", (model,))
        elif found[0] != model:
            raise InvalidInput(
                f"{self.db.where} (schema {self.db.schema}) holds vectors of the embedder"
                f" {found[0]!r}, not {model!r}; open it with that embedder or use another schema"
            )
        self._model = model

    # -- reads ---------------------------------------------------------------------------

    def reading(self, tenant: str) -> AbstractContextManager[None]:
        """The reads of this thread inside, on one connection in one transaction."""
        return self.db.reading(tenant)

    def _all(
        self, tenant: str | None, query: Any, params: Sequence[Any], *, every: bool = False
    ) -> list[Any]:
        with self.db.session(tenant, every_tenant=every) as s:
            return s.conn.execute(query, params).fetchall()

    def get(
        self, tenant: str, agent: str, record_id: str, *, as_of: str | None = None
    ) -> Record | None:
        if as_of is None:
            query = (
                SELECT_RECORD + " WHERE tenant = %s AND agent = %s AND id = %s"
                " AND superseded_by IS NULL ORDER BY version DESC LIMIT 1"
            )
            params: list[Any] = [tenant, agent, record_id]
        else:
            query = (
                SELECT_RECORD + " WHERE tenant = %s AND agent = %s AND id = %s"
                " AND recorded_at <= %s AND (expired_at IS NULL OR expired_at > %s)"
                " ORDER BY version DESC LIMIT 1"
            )
            params = [tenant, agent, record_id, as_of, as_of]
        found = self._all(tenant, query, params)
        return record_from_row(found[0])[1] if found else None

    def history(self, tenant: str, agent: str, record_id: str) -> list[Record]:
        found = self._all(
            tenant,
            SELECT_RECORD + " WHERE tenant = %s AND agent = %s AND id = %s ORDER BY version",
            (tenant, agent, record_id),
        )
        return [record_from_row(r)[1] for r in found]

    def list_records(self, query: RecordQuery) -> list[Record]:
        sql = SELECT_RECORD + " WHERE tenant = %s AND agent = %s"
        params: list[Any] = [query.tenant, query.agent]
        if query.as_of is not None:
            sql += " AND recorded_at <= %s AND (expired_at IS NULL OR expired_at > %s)"
            params += [query.as_of, query.as_of]
        elif query.include_inactive:
            sql += " AND superseded_by IS NULL AND NOT purged"
        else:
            sql += " AND live"
        if query.project_id is not None:
            if query.with_global:
                sql += " AND (scope = 'global' OR project_id = %s)"
            else:
                sql += " AND scope = 'project' AND project_id = %s"
            params.append(query.project_id)
        if query.scope is not None:
            sql += " AND scope = %s"
            params.append(query.scope)
        for column, values in (
            ("kind", query.kinds),
            ("state", query.states),
            ("trust", query.trust),
        ):
            if values:
                sql += f" AND {column} = ANY(%s::text[])"
                params.append(list(values))
        if query.owned:
            sql += " AND (authority = 'explicit' OR kind = ANY(%s::text[]))"
            params.append(list(OWNED_KINDS))
        if query.text_hash is not None:
            sql += " AND text_hash = %s"
            params.append(query.text_hash)
        if query.tag is not None:
            sql += " AND strpos(tags, %s) > 0"
            params.append(json.dumps(query.tag, ensure_ascii=False))
        if query.contains:
            # Folds ASCII letters only, like the SQLite store (a substring, never a pattern).
            fold = "translate({}, 'ABCDEFGHIJKLMNOPQRSTUVWXYZ', 'abcdefghijklmnopqrstuvwxyz')"
            needle = query.contains.translate(ASCII_LOWER)
            sql += (
                f" AND (strpos({fold.format('body')}, %s) > 0"
                f" OR strpos({fold.format('coalesce(title, %s)')}, %s) > 0)"
            )
            params += [needle, "", needle]
        if query.id_prefix:
            sql += " AND starts_with(id, %s)"
            params.append(query.id_prefix)
        column, descending = order_of(query.order)
        way = " DESC NULLS LAST" if descending else ""
        tie = " DESC" if descending else ""
        sql += f" ORDER BY {column}{way}, id{tie}"
        if query.limit is not None or query.offset:
            sql += " LIMIT %s OFFSET %s"
            params += [query.limit, query.offset]
        records = [record_from_row(r)[1] for r in self._all(query.tenant, sql.encode(), params)]
        if query.as_of is not None:
            # Forgetting is recorded in tombstones, not in the version's times.
            records = [r for r in records if not r.forgotten_at or r.forgotten_at > query.as_of]
        return records

    def rule_candidates(self, query: RuleQuery) -> list[Record]:
        sql = (
            SELECT_RECORD + " WHERE tenant = %s AND agent = %s AND live"
            " AND kind = ANY(%s::text[]) AND (scope = 'global' OR project_id = %s)"
        )
        params: list[Any] = [query.tenant, query.agent, list(query.kinds), query.project_id]
        for column, value in (
            ("operations", query.operation),
            ("phases", query.phase),
            ("task_types", query.task_type),
        ):
            if value is not None:
                # Selector words are stored lower-case, so a substring test on the JSON
                # text is exact for a quoted word.
                sql += f" AND ({column} = '[]' OR strpos({column}, %s) > 0)"
                params.append(json.dumps(value.lower(), ensure_ascii=False))
        sql += " ORDER BY rank_hint DESC, id LIMIT %s"
        params.append(query.limit)
        return [record_from_row(r)[1] for r in self._all(query.tenant, sql.encode(), params)]

    def records_by_rows(self, where: LaneFilter, rows: Sequence[int]) -> dict[int, Record]:
        if not rows:
            return {}
        found = self._all(
            where.tenant,
            SELECT_RECORD + " WHERE tenant = %s AND agent = %s AND row = ANY(%s::int8[])",
            (where.tenant, where.agent, list(dict.fromkeys(int(r) for r in rows))),
        )
        return dict(record_from_row(r) for r in found)

    def events(
        self,
        tenant: str,
        agent: str | None,
        *,
        after_seq: int = 0,
        limit: int | None = None,
        where: EventFilter | None = None,
    ) -> Iterator[Event]:
        sql = SELECT_EVENT + " WHERE tenant = %s AND seq > %s"
        params: list[Any] = [tenant, after_seq]
        if agent is not None:
            sql += " AND agent = %s"
            params.append(agent)
        where = where or EventFilter()
        if where.types:
            sql += " AND type = ANY(%s::text[])"
            params.append(list(where.types))
        for column, value in (("episode_id", where.episode_id), ("session_id", where.session_id)):
            if value is not None:
                sql += f" AND {column} = %s"
                params.append(value)
        if where.before_seq is not None:
            sql += " AND seq < %s"
            params.append(where.before_seq)
        sql += " ORDER BY seq DESC LIMIT %s" if where.newest_first else " ORDER BY seq LIMIT %s"
        params.append(limit)
        for row in self._all(tenant, sql.encode(), params):
            yield event_from_row(row)

    def event(self, tenant: str, agent: str, event_id: str) -> Event | None:
        found = self._all(
            tenant,
            SELECT_EVENT + " WHERE tenant = %s AND agent = %s AND event_id = %s",
            (tenant, agent, event_id),
        )
        return event_from_row(found[0]) if found else None

    def known_events(self, tenant: str, agent: str, event_ids: Sequence[str]) -> set[str]:
        if not event_ids:
            return set()
        found = self._all(
            tenant,
            "SELECT event_id FROM events WHERE tenant = %s AND agent = %s"
            " AND event_id = ANY(%s::text[])",
            (tenant, agent, list(dict.fromkeys(event_ids))),
        )
        return {r[0] for r in found}

    def recent_events(
        self, tenant: str, agent: str | None, types: Sequence[str] | None, limit: int
    ) -> list[Event]:
        return learning.recent_events(self._all, tenant, agent, types, limit)

    def trajectories(self, query: TrajectoryQuery) -> list[Event]:
        return learning.trajectories(self._all, query)

    def sweep_candidates(self, query: SweepQuery) -> list[Record]:
        return learning.sweep_candidates(self._all, query)

    def applications_by_id(
        self, tenant: str, agent: str, application_ids: Sequence[str]
    ) -> list[Application]:
        return learning.applications_by_id(self._all, tenant, agent, application_ids)

    def counters(self, tenant: str, agent: str | None) -> dict[str, dict[str, float]]:
        return learning.counters(self._all, tenant, agent)

    def tombstones(self, tenant: str, agent: str) -> list[Tombstone]:
        found = self._all(
            tenant,
            SELECT_TOMBSTONE + " WHERE tenant = %s AND agent = %s ORDER BY removed_at, record_id",
            (tenant, agent),
        )
        return [tombstone_from_row(r) for r in found]

    def applications(
        self, tenant: str, agent: str, *, record_id: str | None = None, id_prefix: str = ""
    ) -> list[Application]:
        sql = SELECT_APPLICATION + " WHERE tenant = %s AND agent = %s"
        params: list[Any] = [tenant, agent]
        if record_id is not None:
            sql += " AND record_id = %s"
            params.append(record_id)
        if id_prefix:
            sql += " AND starts_with(application_id, %s)"
            params.append(id_prefix)
        found = self._all(tenant, (sql + " ORDER BY created_at, application_id").encode(), params)
        return [application_from_row(r) for r in found]

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

    def feed_position(self) -> FeedPosition:
        found = dict(self._all(None, "SELECT key, value FROM meta", ()))
        return FeedPosition(int(found.get("generation", 0)), int(found["change_seq"]))

    def changes_since(self, position: FeedPosition) -> Iterator[ChangeBatch]:
        current = self.feed_position()
        full = position.generation != current.generation or position.seq < 0
        with self.db.session(None, every_tenant=True) as s:
            # A server-side cursor: a 1M-row load never holds more than one chunk.
            cursor = s.conn.cursor(name="cairn_feed", binary=True)
            cursor.execute(
                f"SELECT {_FEED_COLUMNS} FROM records r LEFT JOIN vectors v ON v.row = r.row"
                " LEFT JOIN record_terms t ON t.row = r.row WHERE r.change_seq > %s"
                " ORDER BY r.row",
                (-1 if full else position.seq,),
            )
            try:
                while found := cursor.fetchmany(_FEED_BATCH):
                    yield ChangeBatch.from_rows(found, vector=_vector_bytes, blob=bytes)
            finally:
                cursor.close()

    # -- entity links --------------------------------------------------------------------

    def pending_links(self, agent: str, limit: int) -> list[tuple[int, str]]:
        found = self._all(
            None,
            "SELECT row, coalesce(title, '') || ' ' || body FROM records"
            " WHERE agent = %s AND NOT entities_linked ORDER BY row LIMIT %s",
            (agent, limit),
            every=True,
        )
        return [(int(row), text) for row, text in found]

    def set_links(self, links: Sequence[tuple[int, tuple[str, ...]]]) -> None:
        with self.transaction() as tx:
            tx.set_entity_keys(links)

    # -- purges --------------------------------------------------------------------------

    def pending_purges(self) -> list[PendingPurge]:
        found = self._all(
            None, "SELECT tenant, agent, record_id FROM pending_purges", (), every=True
        )
        return [PendingPurge(*r) for r in found]

    def finish_purge(self, purge: PendingPurge) -> None:
        with self.db.session(purge.tenant) as s:
            s.conn.execute(
                "DELETE FROM pending_purges WHERE tenant = %s AND agent = %s AND record_id = %s",
                (purge.tenant, purge.agent, purge.record_id),
            )

    def checkpoint(self) -> None:
        """Vacuum the tables a purge rewrote, so the dead row versions that held the body
        are removed and their space reused. PostgreSQL cannot promise more from inside:
        its write-ahead log and base backups are the operator's to rotate and encrypt."""
        with self.db.admin() as conn:
            conn.execute(f"VACUUM {', '.join(_PURGED_TABLES)}".encode())

    # -- status --------------------------------------------------------------------------

    def embedder(self) -> str | None:
        found = self._all(None, "SELECT value FROM meta WHERE key = 'embedder'", ())
        return str(found[0][0]) if found else None

    def stats(self, tenant: str, agent: str | None = None) -> StoreStats:
        where = "tenant = %s" + (" AND agent = %s" if agent is not None else "")
        params = (tenant,) if agent is None else (tenant, agent)
        with self.db.session(tenant) as s:

            def count(table: str, extra: str = "") -> int:
                query = f"SELECT count(*) FROM {table} WHERE {where}{extra}".encode()
                found = s.conn.execute(query, params).fetchone()
                return int(found[0]) if found else 0

            version = s.conn.execute("SELECT max(version) FROM schema_version").fetchone()
            size = s.conn.execute(
                "SELECT coalesce(sum(pg_total_relation_size(format('%%I.%%I', %s::text, t))), 0)"
                " FROM unnest(%s::text[]) AS t",
                (self.db.schema, ["meta", *TENANT_TABLES]),
            ).fetchone()
            return StoreStats(
                records=count("records", " AND live"),
                versions=count("records"),
                events=count("events"),
                tombstones=count("tombstones", " AND restored_at IS NULL"),
                applications=count("applications"),
                schema_version=int(version[0]) if version and version[0] else 0,
                bytes=int(size[0]) if size else 0,
                extra={"backend": "postgresql", "schema": self.db.schema},
            )

    def close(self) -> None:
        self.db.close()


def _vector_bytes(value: Any) -> bytes:
    return np.asarray(value, dtype="<f4").tobytes()
