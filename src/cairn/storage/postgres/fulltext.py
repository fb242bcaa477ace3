"""The other way to rank keywords in PostgreSQL: ``tsvector`` + GIN and ``ts_rank``.

Kept beside the default (BM25 over the analysed terms, :mod:`search_index`) so the two can
be measured on the same data (``benchmarks/locomo.py --backends postgres-tsrank``; the
figures are in docs/benchmarks.md). ``ts_rank`` weighs how often and how close the query's
lexemes occur in a document but knows no inverse document frequency, so a common word
counts as much as a rare one; and a GIN index is not partitioned by tenant, so a word
matches every tenant's rows before the tenant filter drops them. The column and its index
are added on demand, only to a schema this index is opened on.
"""

from __future__ import annotations

from collections.abc import Sequence

from cairn.storage.ports import LaneFilter, LaneHit
from cairn.storage.postgres.migrate import ensure_index
from cairn.storage.postgres.record_store import PostgresRecordStore
from cairn.storage.postgres.search_index import PostgresSearchIndex, _params, _scope

_COLUMN = (
    "ALTER TABLE records ADD COLUMN IF NOT EXISTS fts tsvector GENERATED ALWAYS AS ("
    "to_tsvector('english', coalesce(title, '') || ' ' || body || ' ' || tags)) STORED"
)
_INDEX = "CREATE INDEX IF NOT EXISTS records_fts ON records USING gin (fts)"


class TsRankSearchIndex(PostgresSearchIndex):
    """The in-database index with its keyword lane on ``ts_rank`` (``normalization``: the
    flags of ``ts_rank``, e.g. 1 = divide by 1 + log(document length))."""

    def __init__(
        self,
        records: PostgresRecordStore,
        *,
        dim: int,
        ann_threshold: int | None = None,
        normalization: int = 0,
    ) -> None:
        super().__init__(records, dim=dim, ann_threshold=ann_threshold)
        self._normalization = normalization
        with self._db.admin() as conn:
            ensure_index(conn, "records_fts", _COLUMN + "; " + _INDEX)

    def _ranked(
        self, where: LaneFilter, terms: Sequence[str], extra: str, limit: int | None, **more: object
    ) -> list[LaneHit]:
        query = (
            "SELECT r.row, ts_rank(r.fts, q.q, %(norm)s) AS score FROM records r,"
            " (SELECT websearch_to_tsquery('english', %(text)s) AS q) q"
            " WHERE r.tenant = %(tenant)s AND r.agent = %(agent)s AND r.live AND r.fts @@ q.q"
            f"{extra} ORDER BY score DESC, r.row LIMIT %(limit)s"
        )
        # websearch syntax: any text is a valid query; OR joins the terms as BM25 does.
        text = " OR ".join(t.replace('"', " ").replace("-", " ") for t in terms)
        params = _params(where, text=text, norm=self._normalization, limit=limit, **more)
        found = self._rows(where, query.encode(), params)
        return [LaneHit(int(row), float(score)) for row, score in found]

    def keyword(self, where: LaneFilter, terms: Sequence[str], limit: int) -> list[LaneHit]:
        if not terms or limit <= 0:
            return []
        return self._ranked(where, terms, _scope(where, "r."), limit)

    def keyword_scores(
        self, where: LaneFilter, terms: Sequence[str], rows: Sequence[int]
    ) -> dict[int, float]:
        if not terms or not rows:
            return {}
        hits = self._ranked(
            where, terms, " AND r.row = ANY(%(rows)s::int8[])", None, rows=[int(r) for r in rows]
        )
        return {h.row: h.score for h in hits if h.score > 0}
