"""Recall as of a past time: what was in force then, ranked by its own words."""

from __future__ import annotations

from cairn.engine.recall.as_of import fuse_history, in_force, keyword_scores
from cairn.model import Record


def rec(body: str, **fields: object) -> Record:
    return Record(id=body[:4], version=1, tenant="t", agent="a", body=body, **fields)  # type: ignore[arg-type]


def test_bm25_scores_only_texts_sharing_a_term_rarer_terms_weigh_more() -> None:
    texts = ["deploy the billing service", "deploy the search service", "lunch at noon"]
    scores = keyword_scores(["billing", "deploy"], texts)
    assert set(scores) == {0, 1} and scores[0] > scores[1]
    assert keyword_scores([], texts) == {} and keyword_scores(["x"], []) == {}
    assert keyword_scores(["deploying"], texts).keys() == {0, 1}  # stemmed like the lane


def test_evicted_after_the_time_asked_was_still_in_force() -> None:
    records = [
        rec("kept"),
        rec("evicted later", evicted_at="2026-06-02"),
        rec("evicted before", evicted_at="2026-05-01"),
        rec(""),  # permanently forgotten: nothing to show
    ]
    assert [r.body for r in in_force(records, "2026-06-01")] == ["kept", "evicted later"]


def test_fusion_of_the_two_lanes_puts_the_best_first() -> None:
    fused = fuse_history({0: 3.0, 1: 1.0}, {1: 0.9, 0: 0.8}, fts_weight=1, vector_weight=1, pool=5)
    assert [f.row for f in fused] == [0, 1] and fused[0].score == 1.0
    assert fused[1].ranks == {"keyword": 2, "vector": 1}
    assert fuse_history({}, {}, fts_weight=1, vector_weight=1, pool=5) == []
