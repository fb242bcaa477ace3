"""The calibration of the cosine (``with_vectors``) by a search of the floor's frontier.

A maximum-likelihood logistic answers "how likely is this pair relevant", but the floor
has one job: keep the memories that answer while the questions nothing answers get
nothing. So the cosine calibration is chosen on that, on the fit half only:

* **constraints**: on every kind of negative query (coding rules, paraphrase coding,
  paraphrase chat, LoCoMo), the floor abstains at least as often as ``floors`` asks, and
  on every kind of positive it keeps at least ``floors`` less ``max_loss`` (``floors``:
  the figures of :data:`PREVIOUS`, the calibration before this search, with the default
  model: never worse than before); LoCoMo recall_any@10 falls by at most ``max_loss``
  against the floor off;
* **objective**: the mean share of positives kept (coding rules and paraphrase stores,
  top 5), LoCoMo recall_any@10 counted as one more such share.

For each direction on a grid of (cosine, coverage, surprise) weights, the most lenient
intercept that meets the constraints is found by bisection (abstention only grows as the
intercept falls); the best direction wins. Replayed on the floor-off candidates with
numpy, as :func:`abstention_fit.simulate` replays them one by one (it checks this).
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from abstention_fit import DEPTH, Asked
from cairn.engine.recall.relevance import (
    SHARE_EXPONENT,
    Calibration,
    Calibrations,
    embedder_reads,
    evidence,
)

# The default model's cosine calibration before issue 24 (fitted by maximum likelihood,
# benchmarks/abstention_fit.fit): the floors the search may not fall below.
PREVIOUS = Calibration(intercept=-5.598, cosine=9.217, coverage=5.243)
COSINE = (12.0, 16.0, 24.0, 32.0, 48.0)
COVERAGE = (0.0, 5.0, 10.0)
SURPRISE = (0.0, 0.5, 1.0)
LOW, HIGH = -60.0, 10.0  # the intercepts searched
STEPS = 14


def kind_of(x: Asked) -> str:
    """The set a query counts in: its store kind and whether it is a negative."""
    named = x.store == "coding" or x.store.startswith("paraphrase:")
    store = x.store if named else "locomo"
    return f"{store}/{'negative' if x.kind == 'negative' else 'positive'}"


@dataclass(frozen=True, slots=True)
class Prepared:
    """One query's floor-off candidates as arrays."""

    kind: str
    vector: np.ndarray  # bool: the cosine calibration applies to this candidate
    features: np.ndarray  # (n, 4): 1, cosine, coverage, surprise
    fixed: np.ndarray  # the evidence of the candidates it does not apply to
    share: np.ndarray  # (final / best final) ** exponent
    gold: np.ndarray  # bool
    depth: int


def prepare(asked: Sequence[Asked], cals: Calibrations) -> list[Prepared]:
    out = []
    for x in asked:
        read = embedder_reads(cals.embedder, x.query)
        vector = np.array([read and s.cosine is not None for s in x.seen])
        features = np.array(
            [[1.0, s.cosine or 0.0, s.coverage, s.surprise or 0.0] for s in x.seen]
        ).reshape(-1, 4)
        fixed = np.array([evidence(None, s.coverage, read, cals) for s in x.seen])
        finals = np.array([max(s.final, 0.0) for s in x.seen])
        top = finals.max() if len(finals) else 0.0
        share = (finals / top) ** SHARE_EXPONENT if top > 0 else np.zeros_like(finals)
        gold = np.array([s.ref in x.gold for s in x.seen])
        depth = DEPTH if x.kind == "question" else 5
        out.append(Prepared(kind_of(x), vector, features, fixed, share, gold, depth))
    return out


def figures(prepared: Sequence[Prepared], weights: np.ndarray, floor: float) -> dict[str, float]:
    """Per kind: the share of negatives that abstain, or of positives whose gold is kept
    within the depth."""
    totals: dict[str, list[float]] = {}
    for p in prepared:
        z = p.features @ weights
        own = np.where(p.vector, 1.0 / (1.0 + np.exp(-np.clip(z, -700, 700))), p.fixed)
        relevance = np.maximum(own, own.max() * p.share) if len(own) else own
        kept = relevance >= floor
        if p.kind.endswith("negative"):
            value = float(not kept.any())
        else:
            value = float(p.gold[kept][: p.depth].any())
        totals.setdefault(p.kind, []).append(value)
    return {k: float(np.mean(v)) for k, v in totals.items()}


def previous_floors(asked: Sequence[Asked], start: Calibrations, floor: float) -> dict[str, float]:
    """The figures of :data:`PREVIOUS` on these queries (a run of the default model)."""
    w = PREVIOUS
    weights = np.array([w.intercept, w.cosine, w.coverage, w.surprise])
    return figures(prepare(asked, replace(start, with_vectors=w)), weights, floor)


def search(
    train: Sequence[Asked],
    start: Calibrations,
    floor: float,
    floors: dict[str, float],
    max_loss: float,
) -> tuple[Calibrations, dict[str, Any]]:
    """The cosine calibration of the best direction (see the module's docstring)."""
    prepared = prepare(train, start)
    off = figures(prepared, np.array([50.0, 0.0, 0.0, 0.0]), 0.0)  # keeps everything
    recall_floor = off.get("locomo/positive", 0.0) - max_loss

    def abstains(f: dict[str, float]) -> bool:  # only harder as the intercept falls
        for kind, wanted in floors.items():
            slack = max_loss if kind.endswith("positive") else 0.0
            if kind.endswith("negative") and f.get(kind, 1.0) < wanted - slack:
                return False
        return True

    def keeps(f: dict[str, float]) -> bool:  # only easier as the intercept rises
        for kind, wanted in floors.items():
            if kind.endswith("positive") and f.get(kind, 1.0) < wanted - max_loss:
                return False
        return f.get("locomo/positive", 1.0) >= recall_floor

    best: tuple[float, Calibration, dict[str, float]] | None = None
    grid = list(itertools.product(COSINE, COVERAGE, SURPRISE))
    directions = [(PREVIOUS.cosine, PREVIOUS.coverage, 0.0), *grid]  # never worse than it
    for cosine, coverage, surprise in directions:
        low, high = LOW, HIGH
        if not abstains(figures(prepared, np.array([low, cosine, coverage, surprise]), floor)):
            continue
        for _ in range(STEPS):  # the most lenient intercept at which the negatives abstain
            mid = (low + high) / 2
            if abstains(figures(prepared, np.array([mid, cosine, coverage, surprise]), floor)):
                low = mid
            else:
                high = mid
        got = figures(prepared, np.array([low, cosine, coverage, surprise]), floor)
        if not keeps(got):
            continue
        score = float(np.mean([v for k, v in got.items() if k.endswith("positive")]))
        if best is None or score > best[0]:
            best = (score, Calibration(round(low, 3), cosine, coverage, surprise), got)
    if best is None:
        raise SystemExit("no cosine calibration meets the negatives' floors on the fit half")
    score, cal, got = best
    return replace(start, with_vectors=cal), {"objective": score, "fit": got, "floors": floors}


__all__ = ["PREVIOUS", "figures", "prepare", "previous_floors", "search"]
