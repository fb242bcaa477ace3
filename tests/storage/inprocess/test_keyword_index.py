from __future__ import annotations

import random
import sqlite3

import pytest

from cairn.storage.inprocess import keyword_partition
from cairn.storage.inprocess.keyword_index import KeywordIndex
from cairn.storage.terms import analyse

WORDS = [
    "deploy",
    "kestrel",
    "pnpm",
    "install",
    "running",
    "runs",
    "migration",
    "database",
    "postgres",
    "sqlite",
    "cache",
    "token",
    "budget",
    "recall",
    "memory",
    "agent",
    "project",
    "build",
    "release",
    "tests",
    "failing",
    "passing",
    "caroline",
    "painting",
    "adoption",
    "support",
    "group",
    "museum",
    "concert",
]


def corpus(n: int, seed: int = 7) -> list[str]:
    rng = random.Random(seed)
    return [" ".join(rng.choice(WORDS) for _ in range(rng.randint(3, 25))) for _ in range(n)]


def load(index: KeywordIndex, rows: list[int], texts: list[str], **kw: object) -> None:
    analysed = [analyse([t]) for t in texts]
    n = len(rows)
    index.sync(
        rows,
        list(kw.get("tenants", ["t"] * n)),  # type: ignore[arg-type]
        ["a"] * n,
        list(kw.get("projects", [None] * n)),  # type: ignore[arg-type]
        list(kw.get("live", [True] * n)),  # type: ignore[arg-type]
        [a[0] for a in analysed],
        [a[1] for a in analysed],
        [a[2] for a in analysed],
    )


def fts5_bm25(texts: list[str], terms: list[str]) -> list[tuple[int, float]]:
    """The reference: SQLite's own FTS5 bm25() over the same documents."""
    conn = sqlite3.connect(":memory:")
    conn.execute("CREATE VIRTUAL TABLE d USING fts5(body, tokenize='porter unicode61')")
    conn.executemany("INSERT INTO d(rowid, body) VALUES (?, ?)", enumerate(texts, start=1))
    match = " OR ".join(f'"{t}"' for t in terms)
    found = conn.execute(
        "SELECT rowid, -bm25(d) FROM d WHERE d MATCH ? ORDER BY bm25(d), rowid", (match,)
    ).fetchall()
    return [(int(r), float(s)) for r, s in found]


@pytest.mark.parametrize("terms", [["kestrel"], ["running", "postgres"], ["cache", "token", "x"]])
def test_scores_equal_fts5_bm25(terms: list[str]) -> None:
    texts = corpus(400)
    index = KeywordIndex()
    load(index, list(range(1, 401)), texts)
    got = index.search("t", "a", None, terms, 1000)
    want = fts5_bm25(texts, terms)
    assert [r for r, _ in got] == [r for r, _ in want]
    assert [s for _, s in got] == pytest.approx([s for _, s in want], rel=1e-5)
    assert index.search("t", "a", None, terms, 5) == got[:5]


def test_delta_and_merge_rank_like_one_bulk_load(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(keyword_partition, "_MIN_DELTA", 50)  # merge often
    texts = corpus(600, seed=3)
    bulk, trickle = KeywordIndex(), KeywordIndex()
    load(bulk, list(range(1, 601)), texts)
    for start in range(0, 600, 37):  # a search between every batch settles the delta
        load(trickle, list(range(start + 1, min(start + 38, 601))), texts[start : start + 37])
        trickle.search("t", "a", None, ["deploy"], 3)
    part = trickle.partition("t", "a")
    assert part is not None and part.base is not None and len(part.base) > 0
    for terms in (["deploy", "museum"], ["sqlite"], ["adoption", "group", "release"]):
        assert trickle.search("t", "a", None, terms, 50) == bulk.search("t", "a", None, terms, 50)


def test_tenants_scope_liveness_and_purge(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(keyword_partition, "_MIN_DELTA", 0)  # every settle merges
    index = KeywordIndex()
    texts = ["kestrel one", "kestrel two", "kestrel three", "kestrel four", "kestrel five"]
    load(
        index,
        [1, 2, 3, 4, 5],
        texts,
        tenants=["t", "t", "other", "t", "t"],
        projects=[None, "p1", None, "p2", None],
        live=[True, True, True, True, False],
    )

    def rows(project: str | None = None) -> list[int]:
        return sorted(r for r, _ in index.search("t", "a", project, ["kestrel"], 10))

    assert rows() == [1, 2, 4]  # tenant "other" and the dead row never appear
    assert rows("p1") == [1, 2]  # global rows and p1's
    assert rows("unknown") == [1]
    assert index.document_counts("t", "a", ["kestrel", "absent"]) == (
        3,
        {"kestrel": 3, "absent": 0},
    )
    # Row 5 comes back to life after a merge dropped its postings: the sync re-reads them.
    load(index, [5], ["kestrel five"])
    assert rows() == [1, 2, 4, 5]
    # Purged (no terms any more): gone for good.
    index.sync([2], ["t"], ["a"], ["p1"], [False], [None], [None], [None])
    assert rows() == [1, 4, 5]
    assert index.search("nobody", "a", None, ["kestrel"], 10) == []


def test_scores_of_given_rows_equal_search_scores(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(keyword_partition, "_MIN_DELTA", 100)  # a base and a delta both hold rows
    texts = corpus(500, seed=11)
    index = KeywordIndex()
    load(index, list(range(1, 301)), texts[:300])
    index.search("t", "a", None, ["deploy"], 1)  # settles: a base exists
    load(index, list(range(301, 501)), texts[300:])
    terms = ["deploy", "museum", "sqlite"]
    ranked = dict(index.search("t", "a", None, terms, 1000))
    rows = [3, 150, 320, 499, 77]
    got = index.scores("t", "a", terms, rows)
    assert got == pytest.approx({r: ranked.get(r, 0.0) for r in rows})
    assert index.scores("other", "a", terms, rows) == {}


def test_dead_postings_leave_once_most_and_come_back_with_their_row(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(keyword_partition, "_MIN_DELTA", 0)  # every settle merges into the base
    index = KeywordIndex()
    load(index, [1, 2, 3, 4], ["kestrel"] * 4)  # one posting each
    load(index, [2, 3, 4], ["kestrel"] * 3, live=[False] * 3)
    load(index, [5], ["kestrel"])  # merges: three of five postings are dead
    part = index.partition("t", "a")
    assert part is not None and part.base is not None and len(part.base) == 2
    load(index, [3], ["kestrel"])  # row 3 is live again: indexed anew from its terms
    assert sorted(r for r, _ in index.search("t", "a", None, ["kestrel"], 10)) == [1, 3, 5]


# -- which query terms a row holds (recall's relevance reads it instead of the text) --------

HELD_TEXTS = [
    ("Deploys", "Deploying the kestrel service runs the migrations", ["release", "ops"]),
    (None, "Café au lait at the museum; the CAFE opens at nine", []),
    (None, "以后都用pnpm安装依赖，不要用 npm", ["工具"]),
    ("getUserName", "Call getUserName() from cart_batch_v2.go before the checkout", ["api-v2"]),
    (None, "Caroline's painting group meets about adoption support", ["Painting"]),
    (None, "nothing shared at all here", []),
]
HELD_QUERY = [
    "deploy", "running", "cafe", "café", "npm", "安装", "依赖", "getusername", "user",
    "cart_batch_v2.go", "batch", "paint", "ops", "api", "v2", "工具", "absent", "painting",
]  # fmt: skip


def by_analysis(
    title: str | None, body: str, tags: list[str], terms: list[str]
) -> tuple[frozenset[str], int]:
    """What analysing the text again finds: the query terms it holds, its distinct terms."""
    from cairn.engine.recall.relevance import memory_terms
    from cairn.text import normal_term

    mine = memory_terms(title, body, *tags)
    return frozenset(t for t in terms if normal_term(t) in mine), len(mine)


def load_records(index: KeywordIndex, rows: list[int], live: list[bool], tenant: str = "t") -> None:
    from cairn.storage.terms import analyse_record

    analysed = [analyse_record(*HELD_TEXTS[r % len(HELD_TEXTS)]) for r in rows]
    n = len(rows)
    index.sync(
        rows,
        [tenant] * n,
        ["a"] * n,
        [None] * n,
        live,
        [a[0] for a in analysed],
        [a[1] for a in analysed],
        [a[2] for a in analysed],
    )


def test_held_terms_equal_what_analysing_each_text_finds() -> None:
    index = KeywordIndex()
    rows = list(range(1, 61))
    load_records(index, rows, [r % 7 != 0 for r in rows])  # dead rows keep their postings
    load_records(index, [1000], [True], tenant="other")
    held = index.row_terms("t", "a", HELD_QUERY, [*rows, 1000, 5000])
    assert set(held) == set(rows)  # another tenant's row and an unknown row: not held here
    for row in rows:
        title, body, tags = HELD_TEXTS[row % len(HELD_TEXTS)]
        assert held[row] == by_analysis(title, body, tags, HELD_QUERY), (row, body)
    assert held[5] == (frozenset(), 5)  # shares nothing
    assert {"deploy", "running", "ops"} <= held[6][0] and {"cafe", "café"} <= held[1][0]
    assert {"npm", "安装", "依赖", "工具"} <= held[2][0] and "cart_batch_v2.go" in held[3][0]


def test_held_terms_read_the_delta_and_the_merged_base_alike(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setattr(keyword_partition, "_MIN_DELTA", 10)
    index = KeywordIndex()
    for start in range(1, 200, 13):  # batches: some merge into the base, the last stay a delta
        load_records(index, list(range(start, start + 13)), [True] * 13)
    rows = list(range(1, 209))
    held = index.row_terms("t", "a", HELD_QUERY, rows)
    for row in rows:
        title, body, tags = HELD_TEXTS[row % len(HELD_TEXTS)]
        assert held[row] == by_analysis(title, body, tags, HELD_QUERY)


def test_a_purged_row_is_not_held() -> None:
    index = KeywordIndex()
    load_records(index, [1, 2], [True, True])
    index.sync([2], ["t"], ["a"], [None], [False], [None], [None], [None])
    assert set(index.row_terms("t", "a", ["deploy", "cafe"], [1, 2])) == {1}
    assert index.row_terms("t", "a", ["deploy"], []) == {}
    assert index.row_terms("t", "a", [], [1]) == {1: by_analysis(*HELD_TEXTS[1], [])}
    assert index.row_terms("nobody", "a", ["deploy"], [1]) == {}


def test_eligible_keeps_the_rows_of_the_partition_in_scope_in_their_order() -> None:
    index = KeywordIndex()
    far = 10**12  # past the dense range: located through the sparse map
    rows = [3, 1, 2, 7, 8, far]
    analysed = [analyse([t]) for t in corpus(len(rows))]
    index.sync(
        rows,
        ["t", "t", "t", "other", "t", "t"],
        ["a"] * len(rows),
        ["p1", None, "p2", None, "p1", None],
        [True, True, True, True, False, True],
        [a[0] for a in analysed],
        [a[1] for a in analysed],
        [a[2] for a in analysed],
    )
    asked = [far, 8, 7, 2, 3, 1, 99, 3]
    assert index.eligible("t", "a", None, asked, live=False) == [far, 8, 2, 3, 1, 3]
    assert index.eligible("t", "a", None, asked, live=True) == [far, 2, 3, 1, 3]
    assert index.eligible("t", "a", "p1", asked, live=True) == [far, 3, 1, 3]
    assert index.eligible("t", "a", "unknown", asked, live=True) == [far, 1]
    assert index.eligible("t", "a", None, [], live=True) == []
    assert index.eligible("nobody", "a", None, asked, live=False) == []


def _state(index: KeywordIndex) -> dict[str, object]:
    """Everything a sync leaves in the index, settled: codes, where each row is, and per
    partition its slots' columns, counts and postings."""
    parts = []
    for part in index._partitions:
        part.settle()
        n = part.size
        segments = [
            (s.keys.tolist(), s.starts.tolist(), s.slots.tolist(), s.tfs.tolist())
            for s in (part.base, part.delta)
            if s is not None
        ]
        columns = [getattr(part, c)[:n].tolist() for c in ("rows", "length", "distinct")]
        columns += [getattr(part, c)[:n].tolist() for c in ("project", "live", "indexed")]
        parts.append((part.id, n, columns, part.live_count, part.live_length, segments))
    rows = sorted({r for p in index._partitions for r in p.rows[: p.size].tolist()})
    where = {r: index._locate(r) for r in rows}
    return {"codes": dict(index._codes), "where": where, "partitions": parts}


def _one_by_one(monkeypatch: pytest.MonkeyPatch) -> None:
    """The sync with every new row added as a changed row is (the reference)."""

    def each(self: KeywordIndex, at: range, columns: object, fresh: object) -> None:
        for i in at:
            self._sync_one(i, columns, fresh)  # type: ignore[arg-type]

    monkeypatch.setattr(KeywordIndex, "_add_new", each)


def test_new_rows_added_a_run_at_a_time_leave_the_state_of_one_by_one(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A first load (every row new), then a batch mixing changes of held rows, purges,
    moves to another tenant, rows past the dense range and new rows, then a batch that
    names one row twice: the same codes, places, columns, counts and postings."""
    monkeypatch.setattr(keyword_partition, "_MIN_DELTA", 300)  # merges happen within the loads
    rng = random.Random(5)
    texts = corpus(1500, seed=5)
    tenants = ["t", "u", "v"]
    projects = [None, "p1", "p2", "p3"]
    first = list(range(1, 1001))
    far = [10**12 + n for n in range(5)]  # located through the sparse map

    def batch(rows: list[int], purge: set[int] = frozenset()) -> list[object]:  # type: ignore[assignment]
        analysed = [analyse([texts[r % len(texts)]]) for r in rows]
        return [
            rows,
            [rng.choice(tenants) for _ in rows],
            [rng.choice(["a", "b"]) for _ in rows],
            [rng.choice(projects) for _ in rows],
            [rng.random() < 0.8 for _ in rows],
            [None if r in purge else a[0] for r, a in zip(rows, analysed, strict=True)],
            [None if r in purge else a[1] for r, a in zip(rows, analysed, strict=True)],
            [None if r in purge else a[2] for r, a in zip(rows, analysed, strict=True)],
        ]

    second_rows = [*rng.sample(first, 300), *far, *range(1001, 1400), *rng.sample(first, 50)]
    second_rows = list(dict.fromkeys(second_rows))
    rng.shuffle(second_rows)
    batches = [
        batch(first),
        batch(second_rows, purge=set(rng.sample(second_rows, 40))),
        batch([*range(1400, 1450), 1420, *range(1450, 1500)]),  # 1420 twice
        batch(list(range(1500, 1510)), purge={1503}),
    ]
    runs, single = KeywordIndex(), KeywordIndex()
    for columns in batches:
        runs.sync(*columns)  # type: ignore[arg-type]
    with monkeypatch.context() as patched:
        _one_by_one(patched)
        for columns in batches:
            single.sync(*columns)  # type: ignore[arg-type]
    assert _state(runs) == _state(single)
    assert runs._sparse and set(runs._sparse) <= set(far)  # those took the sparse map's path
    for tenant in tenants:
        for terms in (["deploy", "museum"], ["sqlite", "cache"]):
            assert runs.search(tenant, "a", "p1", terms, 40) == single.search(
                tenant, "a", "p1", terms, 40
            )
