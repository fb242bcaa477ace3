"""Weighted N-lane reciprocal rank fusion (SPEC §4)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from itertools import repeat

import numpy as np


@dataclass(frozen=True, slots=True)
class LaneRanking:
    name: str
    weight: float
    rows: tuple[int, ...]  # best first
    scores: tuple[float, ...] = ()  # the lane's own scores, for the trace


@dataclass(frozen=True, slots=True)
class Fused:
    row: int
    score: float  # in [0, 1]
    ranks: dict[str, int] = field(default_factory=dict)  # lane -> rank from 1


def rrf(lanes: Sequence[LaneRanking], k: int = 60) -> list[Fused]:
    """``Σ w_i / (k + rank_i)``, normalised by ``Σ w / (k + 1)`` into [0, 1].

    Only lanes that returned something count in the normaliser, so one lane alone keeps
    its order and a row first in every lane scores exactly 1. Ties keep the order of first
    appearance (lanes in the order given), which makes the result deterministic.
    """
    active = [lane for lane in lanes if lane.rows and lane.weight > 0]
    if not active:
        return []
    total_weight = _added_in_order(lane.weight for lane in active)
    sums: dict[int, float] = {}
    ranks: dict[int, dict[str, int]] = {}
    for lane in active:
        for position, row in enumerate(lane.rows, start=1):
            # Each term as the weight times a share of rank 1 (exactly 1.0 there), summed in
            # the order of ``total_weight``: rounding can then never lift a score past 1.
            share = (k + 1) / (k + position)
            sums[row] = sums.get(row, 0.0) + lane.weight * share
            ranks.setdefault(row, {})[lane.name] = position
    # Sorted by the score reported, so rows whose scores are equal keep their first appearance.
    scores = {row: value / total_weight for row, value in sums.items()}
    order = sorted(scores, key=lambda row: -scores[row])
    return [Fused(row=row, score=scores[row], ranks=ranks[row]) for row in order]


def score_fusion(
    lanes: Sequence[LaneRanking],
    fill: dict[str, dict[int, float]] | None = None,
    extra_rows: Sequence[int] = (),
) -> dict[int, float]:
    """Weighted mean of per-lane scores: ``Σ w_i · s_i / Σ w_i``.

    Keyword scores are divided by the lane's best (BM25 has no fixed scale); cosine and
    entity scores are used as they are. ``fill`` supplies lane scores for rows the lane's
    top-k did not reach (the vector lane can score any row), so a strong keyword hit is
    not punished for being outside the other lane's cut. Measured on LoCoMo, this keeps a
    keyword rank-1 hit from sinking below rows that both lanes found weakly, which rank
    fusion (RRF) does by construction. ``extra_rows`` are candidates no lane returned
    (episode neighbours of the best hits), scored from ``fill`` alone.
    """
    active = [lane for lane in lanes if lane.rows and lane.weight > 0]
    if not active:
        return {}
    total_weight = _added_in_order(lane.weight for lane in active)
    rows = list(dict.fromkeys([*(row for lane in active for row in lane.rows), *extra_rows]))
    # In numpy, lane after lane: each row's sum takes the same float operations in the
    # same order as adding up row by row would, so the scores are the same to the bit.
    fused = np.zeros(len(rows), dtype=np.float64)
    for lane in active:
        scores = dict(zip(lane.rows, lane.scores, strict=True))
        scores.update({r: s for r, s in (fill or {}).get(lane.name, {}).items() if r not in scores})
        scale = max(scores.values()) if lane.name == "keyword" else 1.0
        if scale <= 0:
            continue
        found = np.fromiter(map(scores.get, rows, repeat(0.0)), dtype=np.float64, count=len(rows))
        # Divided before weighting, so a lane's best row counts its weight exactly.
        fused += lane.weight * (np.maximum(found, 0.0) / scale)
    return dict(zip(rows, (fused / total_weight).tolist(), strict=True))


def _added_in_order(values: Iterable[float]) -> float:
    """Left to right, as each row's sum is; ``sum()`` compensates rounding from Python 3.12,
    and a total rounded otherwise than its parts could put a score a hair past 1."""
    total = 0.0
    for value in values:
        total += value
    return total


def lane_ranks(
    lanes: Sequence[LaneRanking], neighbours: Sequence[int] = ()
) -> dict[int, dict[str, int]]:
    """Each row's rank in every lane that returned it (from 1), for the trace."""
    ranks: dict[int, dict[str, int]] = {}
    for lane in lanes:
        for position, row in enumerate(lane.rows, start=1):
            ranks.setdefault(row, {})[lane.name] = position
    for position, row in enumerate(neighbours, start=1):
        ranks.setdefault(row, {})["neighbour"] = position
    return ranks


def top_fused(scores: dict[int, float], ranks: dict[int, dict[str, int]], pool: int) -> list[Fused]:
    """The ``pool`` best rows, scores divided by the best so the top is 1.

    Sorting is stable, so rows tied on score keep lane order.
    """
    if not scores:
        return []
    top = max(scores.values())
    order = sorted(scores, key=lambda row: -scores[row])[:pool]
    return [
        Fused(
            row=row, score=max(scores[row], 0.0) / top if top > 0 else 0.0, ranks=ranks.get(row, {})
        )
        for row in order
    ]
