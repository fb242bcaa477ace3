"""The in-database index ranks as the embedded one does, keeps exact statistics through
every change, and walks the HNSW index only for partitions past the threshold."""

from __future__ import annotations

import random
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from psycopg import sql

from cairn.storage.inprocess import InProcessSearchIndex
from cairn.storage.ports import LaneFilter, RecordChange, RecordStore, SearchIndex
from cairn.storage.postgres import PostgresRecordStore, PostgresSearchIndex
from cairn.storage.postgres.fulltext import TsRankSearchIndex
from cairn.storage.postgres.graphs import graph_name
from cairn.storage.postgres.search_index import vector_sql, walk_settings
from cairn.storage.postgres.vectors import PgVector
from cairn.storage.sqlite.record_store import SqliteRecordStore
from pg_support import fresh_schema

from .helpers import DIM, insert, record

WORDS = (
    *("deploy", "release", "pnpm", "install", "build", "test", "lint", "cache", "docker"),
    *("image", "kafka", "topic", "queue", "retry", "timeout", "postgres", "index", "vacuum"),
    *("schema", "migrate", "token", "secret", "rotate", "東京", "日本語", "parse_config"),
    "HttpClient",
)
T1 = LaneFilter("t1", "a")


@pytest.fixture
def pg() -> Iterator[PostgresRecordStore]:
    with fresh_schema("idx") as (url, schema):
        store = PostgresRecordStore(url, schema=schema, max_connections=2)
        yield store
        store.close()


def body(rng: random.Random) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(rng.randint(2, 12)))


def same_history(store: RecordStore) -> dict[str, int]:
    """One sequence of writes and lifecycle changes."""
    rng = random.Random(7)
    items = [
        record(
            f"R{i:03d}",
            body(rng),
            scope="project" if i % 5 == 0 else "global",
            project_id="p1" if i % 5 == 0 else None,
            tags=("ops",) if i % 7 == 0 else (),
        )
        for i in range(80)
    ]
    items += [record(f"X{i:03d}", body(rng), tenant="t2") for i in range(40)]
    rows = dict(zip([r.id + r.tenant for r in items], insert(store, *items), strict=True))
    with store.transaction() as tx:
        for i in range(0, 80, 6):
            tx.update_record(rows[f"R{i:03d}t1"], RecordChange(evicted_at="2026-02-01T00:00:00Z"))
        for i in range(1, 80, 9):
            tx.update_record(rows[f"R{i:03d}t1"], RecordChange(forgotten_at="2026-02-01T00:00:00Z"))
        for i in range(2, 80, 11):
            tx.update_record(rows[f"R{i:03d}t1"], RecordChange(state="superseded", superseded_by=2))
    with store.transaction() as tx:
        tx.update_record(rows["R006t1"], RecordChange(evicted_at=None))  # back to life
        tx.update_record(rows["R003t1"], RecordChange(project_id="p2", scope="project"))
        tx.purge("t1", "a", "R004", "[gone]")
        tx.purge("t1", "a", "R006", "[gone]")  # was live again, then purged
    return rows  # (record id + tenant) -> row


def by_id(hits: list[tuple[int, float]], rows: dict[str, int]) -> list[tuple[str, float]]:
    ids = {row: rid for rid, row in rows.items()}
    return [(ids[row], score) for row, score in hits]


def same(a: list[tuple[str, float]], b: list[tuple[str, float]]) -> bool:
    """The same ids in the same order, with the same scores to float32 precision."""
    return [i for i, _ in a] == [i for i, _ in b] and all(
        x == pytest.approx(y, rel=1e-5) for (_, x), (_, y) in zip(a, b, strict=True)
    )


def test_bm25_and_statistics_match_the_embedded_index_through_every_change(
    pg: PostgresRecordStore, tmp_path: Path
) -> None:
    sqlite = SqliteRecordStore(tmp_path / "m.db")
    embedded: SearchIndex = InProcessSearchIndex(sqlite, dim=DIM)
    database: SearchIndex = PostgresSearchIndex(pg, dim=DIM)
    rows_s, rows_p = same_history(sqlite), same_history(pg)
    rng = random.Random(11)
    queries = [[rng.choice(WORDS) for _ in range(rng.randint(1, 4))] for _ in range(25)]
    for terms in queries:
        for where in (T1, LaneFilter("t1", "a", "p1"), LaneFilter("t2", "a")):
            hits_s = [(h.row, h.score) for h in embedded.keyword(where, terms, 15)]
            hits_p = [(h.row, h.score) for h in database.keyword(where, terms, 15)]
            assert same(by_id(hits_p, rows_p), by_id(hits_s, rows_s)), (terms, where)
        assert database.term_counts(T1, terms) == embedded.term_counts(T1, terms)
        wanted_s = [rows_s[f"R{i:03d}t1"] for i in range(0, 80, 4)]
        wanted_p = [rows_p[f"R{i:03d}t1"] for i in range(0, 80, 4)]
        scores_s = embedded.keyword_scores(T1, terms, wanted_s)
        scores_p = database.keyword_scores(T1, terms, wanted_p)
        assert same(
            by_id(sorted(scores_p.items()), rows_p), by_id(sorted(scores_s.items()), rows_s)
        )
    sqlite.close()


def test_statistics_equal_a_recount_of_the_live_postings(pg: PostgresRecordStore) -> None:
    same_history(pg)
    with pg.db.session(None, every_tenant=True) as s:
        run = s.conn.execute
        assert (
            run("SELECT tenant, agent, term, df FROM term_stats ORDER BY 1, 2, 3").fetchall()
            == run(
                "SELECT tenant, agent, term, count(*) FROM postings WHERE live"
                " GROUP BY 1, 2, 3 ORDER BY 1, 2, 3"
            ).fetchall()
        )
        assert (
            run(
                "SELECT tenant, agent, documents, length FROM partition_stats ORDER BY 1, 2"
            ).fetchall()
            == run(
                "SELECT r.tenant, r.agent, count(*), sum(t.length) FROM records r"
                " JOIN record_terms t ON t.row = r.row WHERE r.live GROUP BY 1, 2 ORDER BY 1, 2"
            ).fetchall()
        )
        # The lanes' copies of liveness and project follow the records exactly.
        assert run(
            "SELECT count(*) FROM postings p JOIN records r ON r.row = p.row"
            " WHERE p.live <> r.live OR p.project_id IS DISTINCT FROM r.project_id"
        ).fetchone() == (0,)
        # A purged body leaves no postings, terms or entity keys behind.
        assert run(
            "SELECT count(*) FROM records r WHERE r.purged AND (EXISTS (SELECT 1 FROM postings"
            " p WHERE p.row = r.row) OR EXISTS (SELECT 1 FROM record_terms t WHERE t.row ="
            " r.row) OR EXISTS (SELECT 1 FROM entity_links e WHERE e.row = r.row))"
        ).fetchone() == (0,)


def unit(rng: np.random.Generator, n: int) -> np.ndarray:
    m = rng.standard_normal((n, DIM)).astype(np.float32)
    return m / np.linalg.norm(m, axis=1, keepdims=True)


def test_large_partitions_walk_the_hnsw_index_and_still_filter_inside_it(
    pg: PostgresRecordStore,
) -> None:
    rng = np.random.default_rng(3)
    query = unit(rng, 1)[0]
    mine = unit(rng, 400)
    near = query + 0.05 * unit(rng, 300)  # another tenant's rows crowd the query
    near /= np.linalg.norm(near, axis=1, keepdims=True)
    items = [
        record(
            f"M{i}",
            f"m {i}",
            scope="project" if i % 3 else "global",
            project_id=f"p{i % 3}" if i % 3 else None,
        )
        for i in range(400)
    ]
    insert(pg, *items, vectors={f"M{i}": mine[i] for i in range(400)})
    crowd = [record(f"N{i}", f"n {i}", tenant="t2") for i in range(300)]
    insert(pg, *crowd, vectors={f"N{i}": near[i] for i in range(300)})
    graph = PostgresSearchIndex(pg, dim=DIM, ann_threshold=350)
    exact = PostgresSearchIndex(pg, dim=DIM, ann_threshold=None)
    where = LaneFilter("t1", "a", "p1")
    with pg.db.session("t1") as s:
        assert graph.large(where, DIM, s) and not graph.uses_graph(where, DIM, s)
    # Only the partition that reached the threshold gets a graph (t2 holds 300 rows).
    assert graph.build_graphs() == [("t1", "a")]
    with pg.db.session("t1") as s:
        assert graph.uses_graph(where, DIM, s) and not exact.uses_graph(where, DIM, s)
        assert not graph.uses_graph(LaneFilter("t2", "a"), DIM, s)
        walk_settings(s, 10, on=True)
        params = {
            "tenant": "t1",
            "agent": "a",
            "project": "p1",
            "q": PgVector(query),
            "dim": DIM,
            "limit": 10,
        }
        explain = sql.SQL("EXPLAIN {}").format(vector_sql(where, DIM, graph=True))
        plans = {"graph": "\n".join(r[0] for r in s.conn.execute(explain, params))}
        walk_settings(s, 10, on=False)
        explain = sql.SQL("EXPLAIN {}").format(vector_sql(where, DIM, graph=False))
        plans["exact"] = "\n".join(r[0] for r in s.conn.execute(explain, params))
    assert graph_name(DIM, "t1", "a") in plans["graph"], plans["graph"]
    assert "hnsw" not in plans["exact"], plans["exact"]
    walked = graph.vector(where, query, 10)
    truth = exact.vector(where, query, 10)
    assert len(walked) == 10  # the walk went past the other tenant and other projects
    rows = pg.records_by_rows(LaneFilter("t1", "a"), [h.row for h in walked])
    assert {r.tenant for r in rows.values()} == {"t1"}
    assert all(r.project_id in (None, "p1") for r in rows.values())
    assert len({h.row for h in walked} & {h.row for h in truth}) >= 8
    assert [h.score for h in walked] == sorted((h.score for h in walked), reverse=True)


def test_the_ts_rank_alternative_ranks_live_rows_of_the_namespace(pg: PostgresRecordStore) -> None:
    rows = insert(
        pg,
        record("A", "deploy the release with make"),
        record("B", "deploy, deployed, deploying: deploy"),
        record("C", "nothing of the kind"),
        record("F", "deploy but forgotten", forgotten_at="2026-02-01T00:00:00Z"),
        record("X", "deploy in another tenant", tenant="t2"),
    )
    index = TsRankSearchIndex(pg, dim=DIM)
    hits = index.keyword(T1, ["deploy"], 10)
    ids = {row: r.id for row, r in pg.records_by_rows(T1, [h.row for h in hits]).items()}
    assert [ids[h.row] for h in hits] == ["B", "A"]  # stems match; more occurrences rank first
    assert ids[index.keyword(T1, ["deploy", "release"], 1)[0].row] == "A"  # both words
    assert hits[0].score > hits[1].score > 0
    scores = index.keyword_scores(T1, ["deploy"], rows)
    assert scores == {h.row: pytest.approx(h.score) for h in hits}
