from __future__ import annotations

import pytest

from cairn.engine.recall.fusion import LaneRanking, rrf


def test_single_lane_keeps_its_order() -> None:
    fused = rrf([LaneRanking("keyword", 1.0, (7, 3, 9))])
    assert [f.row for f in fused] == [7, 3, 9]
    assert fused[0].score == pytest.approx(1.0)  # rank 1 in the only lane


def test_weighted_sum_and_normalisation() -> None:
    lanes = [LaneRanking("keyword", 1.0, (1, 2)), LaneRanking("vector", 1.5, (2, 1))]
    fused = {f.row: f for f in rrf(lanes, k=60)}
    norm = 2.5 / 61
    assert fused[1].score == pytest.approx((1.0 / 61 + 1.5 / 62) / norm)
    assert fused[2].score == pytest.approx((1.0 / 62 + 1.5 / 61) / norm)
    # The heavier vector lane puts its first choice on top.
    assert rrf(lanes)[0].row == 2
    assert fused[1].ranks == {"keyword": 1, "vector": 2}


def test_first_in_every_lane_scores_one() -> None:
    lanes = [LaneRanking("a", 1.0, (5,)), LaneRanking("b", 1.5, (5,)), LaneRanking("c", 1.0, (5,))]
    assert rrf(lanes)[0].score == pytest.approx(1.0)


def test_empty_or_zero_weight_lanes_do_not_dilute() -> None:
    lanes = [LaneRanking("keyword", 1.0, ()), LaneRanking("vector", 1.5, (4, 8))]
    fused = rrf(lanes)
    assert [f.row for f in fused] == [4, 8]
    assert fused[0].score == pytest.approx(1.0)
    assert rrf([LaneRanking("x", 0.0, (1,))]) == []


def test_ties_keep_first_appearance() -> None:
    lanes = [LaneRanking("a", 1.0, (1, 2)), LaneRanking("b", 1.0, (2, 1))]
    assert [f.row for f in rrf(lanes)] == [1, 2]


def test_score_fusion_normalises_keyword_and_fills_missing_lanes() -> None:
    from cairn.engine.recall.fusion import score_fusion

    lanes = [
        LaneRanking("keyword", 1.0, (1, 2), (10.0, 5.0)),
        LaneRanking("vector", 1.5, (3, 2), (0.8, 0.6)),
    ]
    fused = score_fusion(lanes, {"vector": {1: 0.5}})
    assert fused[1] == pytest.approx((1.0 * 1.0 + 1.5 * 0.5) / 2.5)  # filled cosine
    assert fused[2] == pytest.approx((1.0 * 0.5 + 1.5 * 0.6) / 2.5)
    assert fused[3] == pytest.approx((1.5 * 0.8) / 2.5)  # no keyword score
    # A strong keyword-only hit is not buried under weak rows both lanes found.
    assert fused[1] > fused[2]


def test_score_fusion_single_lane_keeps_order_and_ignores_negative_cosine() -> None:
    from cairn.engine.recall.fusion import score_fusion

    fused = score_fusion([LaneRanking("vector", 1.5, (4, 5, 6), (0.9, 0.2, -0.3))])
    assert sorted(fused, key=lambda r: -fused[r]) == [4, 5, 6]
    assert fused[6] == 0.0
    assert score_fusion([LaneRanking("keyword", 0.0, (1,), (3.0,))]) == {}


def row_by_row_fusion(
    lanes: list[LaneRanking], fill: dict[str, dict[int, float]], extra: list[int]
) -> dict[int, float]:
    """The reference: each row's weighted mean added up in Python, lane after lane."""
    active = [lane for lane in lanes if lane.rows and lane.weight > 0]
    total = 0.0
    for lane in active:
        total += lane.weight
    rows = list(dict.fromkeys([*(r for lane in active for r in lane.rows), *extra]))
    fused = dict.fromkeys(rows, 0.0)
    for lane in active:
        scores = dict(zip(lane.rows, lane.scores, strict=True))
        scores.update({r: s for r, s in fill.get(lane.name, {}).items() if r not in scores})
        scale = max(scores.values()) if lane.name == "keyword" else 1.0
        if scale <= 0:
            continue
        for row in rows:
            fused[row] += lane.weight * (max(scores.get(row, 0.0), 0.0) / scale)
    return {row: value / total for row, value in fused.items()}


@pytest.mark.parametrize("seed", range(20))
def test_score_fusion_equals_adding_row_by_row_to_the_bit(seed: int) -> None:
    import random

    from cairn.engine.recall.fusion import score_fusion

    rng = random.Random(seed)

    def lane(name: str, weight: float) -> LaneRanking:
        rows = tuple(rng.sample(range(400), rng.randint(0, 200)))
        return LaneRanking(name, weight, rows, tuple(rng.uniform(-0.3, 30.0) for _ in rows))

    lanes = [lane("keyword", 1.0), lane("vector", rng.uniform(0.5, 2.0)), lane("entity", 0.3)]
    fill = {"vector": {r: rng.uniform(-1.0, 1.0) for r in rng.sample(range(500), 150)}}
    extra = rng.sample(range(400, 500), 20)
    expected = row_by_row_fusion(lanes, fill, extra)
    got = score_fusion(lanes, fill, extra_rows=extra)
    assert list(got) == list(expected)  # same rows, same order
    assert all(got[r] == expected[r] for r in expected)
