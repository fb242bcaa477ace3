"""Weighted N-lane reciprocal rank fusion (SPEC §4)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field


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
    total_weight = sum(lane.weight for lane in active)
    norm = total_weight / (k + 1)
    sums: dict[int, float] = {}
    ranks: dict[int, dict[str, int]] = {}
    for lane in active:
        for position, row in enumerate(lane.rows, start=1):
            sums[row] = sums.get(row, 0.0) + lane.weight / (k + position)
            ranks.setdefault(row, {})[lane.name] = position
    order = sorted(sums, key=lambda row: -sums[row])
    return [Fused(row=row, score=sums[row] / norm, ranks=ranks[row]) for row in order]
