"""The in-database search index: every lane answered by PostgreSQL, nothing held in process.

- **keyword**: BM25 computed in SQL over the postings the record store writes with each record --
  :mod:`cairn.bm25`, rendered as SQL -- over the analysed terms of :mod:`cairn.storage.terms`, with
  N, n and the mean length read from the partition's exact statistics. So the ranking is the
  embedded index's, number for number; CJK bigrams and code identifiers are terms of it already.
- **vector**: cosine over pgvector. A partition below ``ann_threshold`` live memories is
  ranked exactly (its rows, by the partition index); a larger one walks an HNSW graph of
  its own (a partial index, :mod:`cairn.storage.postgres.graphs`) with an iterative scan,
  so the scope filter is applied inside the walk and still fills the limit.
- **entity**: the newest rows of each of the seeds' hashed entity keys, counted per row.
- **places / neighbours**: the records' episode columns, by the episode index.

Every query names the tenant and agent in its conditions and runs in a session scoped to
the tenant, so row-level security is a second wall behind each of them. There is no feed
to follow: ``refresh`` has nothing to do, and a write is searchable by every process the
moment it commits.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager, nullcontext
from datetime import date
from typing import Any

import numpy as np
from psycopg import sql

from cairn.bm25 import sql_idf, sql_share
from cairn.storage.inprocess.ann_graph import DEFAULT_ANN_THRESHOLD
from cairn.storage.ports import EpisodePlace, LaneFilter, LaneHit, TermCounts
from cairn.storage.postgres.database import Session
from cairn.storage.postgres.graphs import PartitionGraphs, partition_condition
from cairn.storage.postgres.migrate import drop_index
from cairn.storage.postgres.record_store import PostgresRecordStore
from cairn.storage.postgres.vectors import PgVector
from cairn.storage.terms import decode_keys, query_keys

GLOBAL_GRAPH = "vectors_hnsw_{}"
_IN_SCOPE = " AND ({alias}project_id IS NULL OR {alias}project_id = %(project)s)"

_BM25 = f"""
WITH part AS (
    SELECT documents::float8 AS n,
           CASE WHEN length > 0 THEN length::float8 / documents ELSE 1.0 END AS avgdl
    FROM partition_stats WHERE tenant = %(tenant)s AND agent = %(agent)s AND documents > 0
), q AS (
    SELECT s.term, {sql_idf("part.n", "s.df")} AS idf
    FROM term_stats s, part
    WHERE s.tenant = %(tenant)s AND s.agent = %(agent)s AND s.term = ANY(%(keys)s::int8[])
      AND s.df > 0
)
SELECT p.row, sum({sql_share("p.tf", "p.length", "q.idf", "part.avgdl")}) AS score
FROM q CROSS JOIN part CROSS JOIN LATERAL (
    SELECT p.row, p.tf, p.length FROM postings p
    WHERE p.tenant = %(tenant)s AND p.agent = %(agent)s AND p.term = q.term AND p.live {{where}}
    OFFSET 0
) p
GROUP BY p.row
"""
# The lateral subquery reads each query term's postings by the key (tenant, agent, term);
# OFFSET 0 keeps the planner from flattening it into a join that, on a young table whose
# statistics say "one row", scanned the whole partition's postings once per term.


def _params(where: LaneFilter, **more: Any) -> dict[str, Any]:
    return {"tenant": where.tenant, "agent": where.agent, "project": where.project_id, **more}


def _scope(where: LaneFilter, alias: str = "") -> str:
    return "" if where.project_id is None else _IN_SCOPE.format(alias=alias)


def _day(occurred_at: str | None) -> str | None:
    """The ISO day of a time, as the embedded index gives it (None when not a date)."""
    if not occurred_at:
        return None
    try:
        return date.fromisoformat(occurred_at[:10]).isoformat()
    except ValueError:
        return None


def walk_settings(s: Session, limit: int, *, on: bool) -> None:
    """Settings of an HNSW walk (``on``), or back to the defaults.

    The walk goes on past rows the filters drop until the limit is full, and its candidate
    list is at least the limit, so it can return that many. No sort: the only plan that
    yields rows in distance order without one is the walk, whatever the planner's
    statistics say of the partition (a young table looks empty to it)."""
    s.conn.execute(
        "SELECT set_config('hnsw.ef_search', %s, true),"
        " set_config('hnsw.iterative_scan', %s, true), set_config('enable_sort', %s, true)",
        (str(min(1000, max(64, 2 * limit))), "relaxed_order", "off") if on else ("40", "off", "on"),
    )


def vector_sql(where: LaneFilter, dim: int, *, graph: bool) -> sql.SQL | sql.Composed:
    """The vector lane's query: through the partition's HNSW graph of ``dim``, or exact."""
    if graph:
        distance = sql.SQL(f"vec::vector({dim}) <=> %(q)s::vector({dim})")
        query = "SELECT row, {} AS d FROM vectors WHERE {}{} ORDER BY {} LIMIT %(limit)s"
        return sql.SQL(query).format(
            distance,
            partition_condition(dim, where.tenant, where.agent),
            sql.SQL(_scope(where)),
            distance,
        )
    # Every row of the partition (the expression differs from the graphs', so the planner
    # reads the partition index and sorts).
    return sql.SQL(
        "SELECT row, vec <=> %(q)s AS d FROM vectors"
        " WHERE tenant = %(tenant)s AND agent = %(agent)s AND live"
        f" AND dim = %(dim)s{_scope(where)} ORDER BY d, row LIMIT %(limit)s"
    )


class PostgresSearchIndex:
    """``dim``: the embedder's dimension, or how to read it (a store that chooses its
    embedder with its first memories learns it then);
    ``ann_threshold``: live memories from which a partition is searched through HNSW
    (None: always exact)."""

    def __init__(
        self,
        records: PostgresRecordStore,
        *,
        dim: int | Callable[[], int],
        ann_threshold: int | None = DEFAULT_ANN_THRESHOLD,
    ) -> None:
        self._db = records.db
        fixed = dim if isinstance(dim, int) else 0
        self._dim_of: Callable[[], int] = (lambda: fixed) if isinstance(dim, int) else dim
        dim = self._dim
        self._ann_threshold = ann_threshold
        self.graphs = PartitionGraphs(self._db)
        # One graph over every tenant, from before the graphs per partition: walking it
        # with a tenant filter was slower than no graph, and each write paid for it.
        with self._db.session(None) as s:
            present = s.conn.execute("SELECT to_regclass(%s)", (GLOBAL_GRAPH.format(dim),))
            old = present.fetchone()
        if old is not None and old[0] is not None:
            with self._db.admin() as conn:
                drop_index(conn, GLOBAL_GRAPH.format(dim))

    @property
    def _dim(self) -> int:
        return self._dim_of()

    def _rows(self, where: LaneFilter, query: Any, params: Any, *, binary: bool = False) -> Any:
        with self._db.session(where.tenant) as s:
            return s.cursor(binary=binary).execute(query, params).fetchall()

    # -- keyword -------------------------------------------------------------------------

    def keyword(self, where: LaneFilter, terms: Sequence[str], limit: int) -> list[LaneHit]:
        if not terms or limit <= 0:
            return []
        query = (
            _BM25.format(where=_scope(where, "p.")) + " ORDER BY score DESC, p.row LIMIT %(limit)s"
        )
        found = self._rows(
            where, query.encode(), _params(where, keys=list(query_keys(terms)), limit=limit)
        )
        return [LaneHit(int(row), float(score)) for row, score in found]

    def term_counts(self, where: LaneFilter, terms: Sequence[str]) -> TermCounts:
        keys = {term: next(iter(query_keys([term]))) for term in terms}
        found = self._rows(
            where,
            "SELECT true, 0::int8, documents FROM partition_stats"
            " WHERE tenant = %(tenant)s AND agent = %(agent)s"
            " UNION ALL SELECT false, term, df::int8 FROM term_stats"
            " WHERE tenant = %(tenant)s AND agent = %(agent)s AND term = ANY(%(keys)s::int8[])",
            _params(where, keys=list(set(keys.values()))),
        )
        documents = next((int(n) for total, _, n in found if total), 0)
        df = {int(key): int(n) for total, key, n in found if not total}
        return TermCounts(documents, {term: df.get(key, 0) for term, key in keys.items()})

    def keyword_scores(
        self, where: LaneFilter, terms: Sequence[str], rows: Sequence[int]
    ) -> dict[int, float]:
        if not terms or not rows:
            return {}
        query = _BM25.format(where="AND p.row = ANY(%(rows)s::int8[])")
        found = self._rows(
            where,
            query.encode(),
            _params(where, keys=list(query_keys(terms)), rows=[int(r) for r in rows]),
        )
        return {int(row): float(score) for row, score in found if score > 0}

    # -- vector --------------------------------------------------------------------------

    def _partition_size(self, s: Session, where: LaneFilter) -> int:
        found = s.conn.execute(
            "SELECT documents FROM partition_stats WHERE tenant = %s AND agent = %s",
            (where.tenant, where.agent),
        ).fetchone()
        return int(found[0]) if found else 0

    def large(self, where: LaneFilter, dim: int, s: Session) -> bool:
        """Whether this partition is large enough for a graph (at ``ann_threshold``)."""
        if self._ann_threshold is None or dim != self._dim:
            return False
        return self._partition_size(s, where) >= self._ann_threshold

    def uses_graph(self, where: LaneFilter, dim: int, s: Session) -> bool:
        """Whether this partition is searched through its HNSW graph (else exactly): it is
        large and its graph is built (a missing one is asked for, off this request)."""
        return self.large(where, dim, s) and self.graphs.ready(
            s.conn, dim, where.tenant, where.agent
        )

    def build_graphs(self) -> list[tuple[str, str]]:
        """Build now the graph of every large partition that has none (after a bulk load);
        the partitions built."""
        if self._ann_threshold is None:
            return []
        with self._db.session(None, every_tenant=True) as s:
            found = s.conn.execute(
                "SELECT tenant, agent FROM partition_stats WHERE documents >= %s"
                " ORDER BY tenant, agent",
                (self._ann_threshold,),
            ).fetchall()
        built = []
        for tenant, agent in found:
            if self.graphs.build(self._dim, str(tenant), str(agent)):
                built.append((str(tenant), str(agent)))
        return built

    def vector(self, where: LaneFilter, query: np.ndarray, limit: int) -> list[LaneHit]:
        if limit <= 0:
            return []
        vec = np.asarray(query, dtype=np.float32).reshape(-1)
        dim = int(vec.shape[0])
        params = _params(where, q=PgVector(vec), dim=dim, limit=limit)
        with self._db.session(where.tenant) as s:
            graph = self.uses_graph(where, dim, s)
            if graph:
                walk_settings(s, limit, on=True)
            found = s.conn.execute(vector_sql(where, dim, graph=graph), params).fetchall()
            if graph:
                walk_settings(s, limit, on=False)
        # A relaxed walk may yield a few rows out of order: ties and order as the exact lane.
        hits = sorted(((float(d), int(row)) for row, d in found))
        return [LaneHit(row, 1.0 - d) for d, row in hits]

    def vector_scores(
        self, where: LaneFilter, query: np.ndarray, rows: Sequence[int]
    ) -> dict[int, float]:
        if not rows:
            return {}
        vec = np.asarray(query, dtype=np.float32).reshape(-1)
        found = self._rows(
            where,
            "SELECT row, 1 - (vec <=> %(q)s) FROM vectors"
            " WHERE tenant = %(tenant)s AND agent = %(agent)s AND dim = %(dim)s"
            " AND row = ANY(%(rows)s::int8[])",
            _params(where, q=PgVector(vec), dim=int(vec.shape[0]), rows=[int(r) for r in rows]),
        )
        return {int(row): float(score) for row, score in found}

    # -- entity --------------------------------------------------------------------------

    def entity(self, where: LaneFilter, seeds: Sequence[int], per_entity_cap: int) -> list[LaneHit]:
        if not seeds or per_entity_cap <= 0:
            return []
        seed_rows = [int(s) for s in seeds]
        with self._db.session(where.tenant) as s:
            blobs = s.conn.execute(
                "SELECT entity_keys FROM record_terms WHERE tenant = %s AND agent = %s"
                " AND row = ANY(%s::int8[]) AND entity_keys IS NOT NULL",
                (where.tenant, where.agent, seed_rows),
            ).fetchall()
            keys = sorted({k for (blob,) in blobs for k in decode_keys(blob).tolist()})
            if not keys:
                return []
            # Each key's newest rows (of any liveness, as the embedded index counts them),
            # then only live rows in scope that are not seeds themselves.
            found = s.conn.execute(
                (
                    "SELECT c.row, c.n FROM (SELECT l.row, count(*) AS n"
                    " FROM unnest(%(keys)s::int8[]) AS k(key) CROSS JOIN LATERAL ("
                    "   SELECT e.row FROM entity_links e WHERE e.tenant = %(tenant)s"
                    "   AND e.agent = %(agent)s AND e.key = k.key ORDER BY e.row DESC"
                    "   LIMIT %(cap)s) l GROUP BY l.row) c"
                    " JOIN records r ON r.row = c.row"
                    " WHERE r.tenant = %(tenant)s AND r.agent = %(agent)s AND r.live"
                    f"{_scope(where, 'r.')} AND NOT (c.row = ANY(%(seeds)s::int8[]))"
                    " ORDER BY c.n DESC, c.row"
                ).encode(),
                _params(where, keys=keys, cap=per_entity_cap, seeds=seed_rows),
            ).fetchall()
        return [LaneHit(int(row), float(n)) for row, n in found]

    # -- episodes ------------------------------------------------------------------------

    def places(self, where: LaneFilter, rows: Sequence[int]) -> dict[int, EpisodePlace]:
        if not rows:
            return {}
        found = self._rows(
            where,
            "SELECT row, episode_id, position, occurred_at FROM records"
            " WHERE tenant = %s AND agent = %s AND row = ANY(%s::int8[]) AND NOT purged",
            (where.tenant, where.agent, [int(r) for r in rows]),
        )
        return {int(r): EpisodePlace(e, p, _day(o)) for r, e, p, o in found}

    def neighbours(
        self, where: LaneFilter, places: Sequence[EpisodePlace], window: int
    ) -> dict[int, EpisodePlace]:
        anchors = list(
            dict.fromkeys(
                (p.episode_id, p.position)
                for p in places
                if p.episode_id is not None and p.position is not None
            )
        )
        if not anchors or window <= 0:
            return {}
        found = self._rows(
            where,
            (
                "SELECT DISTINCT r.row, r.episode_id, r.position, r.occurred_at FROM records r"
                " JOIN unnest(%(episodes)s::text[], %(positions)s::int4[]) AS a(episode, pos)"
                " ON r.episode_id = a.episode"
                " AND r.position BETWEEN a.pos - %(window)s AND a.pos + %(window)s"
                " WHERE r.tenant = %(tenant)s AND r.agent = %(agent)s AND r.live"
                f"{_scope(where, 'r.')}"
            ).encode(),
            _params(
                where,
                episodes=[e for e, _ in anchors],
                positions=[p for _, p in anchors],
                window=window,
            ),
        )
        return {int(r): EpisodePlace(e, p, _day(o)) for r, e, p, o in found}

    def refresh(self) -> None:
        return None  # the index is the database: nothing to catch up with

    def holding(self) -> AbstractContextManager[None]:
        return nullcontext()  # each call reads the database (the store's reading holds it)

    def close(self) -> None:
        return None  # the connections are the record store's
