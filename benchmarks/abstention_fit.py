"""The abstention benchmark's records, metrics, floor simulation and calibration fit.

Used by ``abstention.py``: every query is run once with the floor off, keeping each
candidate's signals (cosine, coverage, ranking score) from the recall trace, so any
calibration and floor can be replayed on them (:func:`simulate`) and fitted (:func:`fit`).
"""

from __future__ import annotations

import statistics
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from cairn.engine.recall.relevance import (
    Calibration,
    Calibrations,
    embedder_reads,
    evidence,
    relevances,
)

DEPTH = 20  # the LoCoMo protocol's list depth (locomo.DEPTH)
FIT, CHECK = "fit", "check"


@dataclass(frozen=True, slots=True)
class Seen:
    """One candidate of one query as the floor-off run saw it, in ranked order."""

    ref: str  # rule id or dia_id
    cosine: float | None  # None: not usable (a text the model does not read)
    coverage: float
    final: float  # the ranking score
    surprise: float | None = None  # the cosine against the store's own (relevance.surprises)


@dataclass(frozen=True, slots=True)
class Asked:
    """One query's outcome with the floor off and on."""

    store: str  # "coding", a LoCoMo sample id, or "paraphrase:coding" / "paraphrase:chat"
    kind: str  # "positive" | "negative" | "question"
    half: str
    group: str
    query: str
    gold: frozenset[str]  # the expected refs (empty for a negative)
    off: tuple[str, ...]  # refs returned, floor off
    on: tuple[str, ...]  # refs returned, floor on
    seen: tuple[Seen, ...]  # floor-off candidates after trust and dedup


# -- metrics -------------------------------------------------------------------------------


def _mean(values: Iterable[float]) -> float | None:
    found = list(values)
    return statistics.fmean(found) if found else None


def hit(refs: Sequence[str], gold: frozenset[str], k: int) -> float:
    return float(any(r in gold for r in refs[:k]))


def summarise(asked: Sequence[Asked]) -> dict[str, Any]:
    """The figures of one store kind over these queries."""
    negs = [x for x in asked if x.kind == "negative"]
    out: dict[str, Any] = {
        "negatives": len(negs),
        "abstain_on": _mean(float(not x.on) for x in negs),
        "abstain_off": _mean(float(not x.off) for x in negs),
        "abstain_by_group": {
            g: _mean(float(not x.on) for x in negs if x.group == g)
            for g in sorted({x.group for x in negs})
        },
    }
    pos = [x for x in asked if x.kind == "positive"]
    if pos:
        out.update(
            positives=len(pos),
            kept5_off=_mean(hit(x.off, x.gold, 5) for x in pos),
            kept5_on=_mean(hit(x.on, x.gold, 5) for x in pos),
            returned_on=_mean(len(x.on) for x in pos),
        )
    qs = [x for x in asked if x.kind == "question"]
    if qs:
        out.update(
            questions=len(qs),
            recall_any10_off=_mean(hit(x.off, x.gold, 10) for x in qs),
            recall_any10_on=_mean(hit(x.on, x.gold, 10) for x in qs),
        )
    return out


def from_details(row: dict[str, Any]) -> Asked:
    """An :class:`Asked` back from one line of ``abstention.py --details``."""
    return Asked(
        row["store"],
        row["kind"],
        row["half"],
        row["group"],
        row["query"],
        frozenset(row["gold"]),
        tuple(row["off"]),
        tuple(row["on"]),
        tuple(Seen(*s) for s in row["seen"]),
    )


# -- replaying a floor -----------------------------------------------------------------------


def is_coding(x: Asked) -> bool:
    """Whether the query was asked in a coding store (else a chat store)."""
    return x.store in ("coding", "paraphrase:coding")


def replay(x: Asked, cals: Calibrations) -> list[float]:
    """Each candidate's relevance under these calibrations, as the pipeline computes it."""
    read = embedder_reads(cals.embedder, x.query)
    own = [evidence(s.cosine, s.coverage, read, cals, s.surprise) for s in x.seen]
    return relevances(own, [s.final for s in x.seen])


def simulate(asked: Sequence[Asked], cals: Calibrations, floor: float) -> dict[str, Any]:
    """The figures a floor would give with these calibrations, replayed on the floor-off
    candidates (for the fit and the floor sweep; it ignores dedup and the character budget,
    so the real floor-on run gives the figures to quote)."""
    out = []
    for x in asked:
        kept = [s.ref for s, r in zip(x.seen, replay(x, cals), strict=True) if r >= floor]
        depth = DEPTH if x.kind == "question" else 5
        out.append(replace(x, on=tuple(kept[:depth])))
    return summarise(out)


# -- fit -------------------------------------------------------------------------------------

# Which pairs each calibration is fitted on: its query kind, and whether cosine is a feature.
KINDS = {
    "with_vectors": (True, True),  # the model reads the query; cosine and coverage
    "keyword_only": (True, False),  # the model reads the query; coverage alone
    "unread_query": (False, False),  # a query the model does not read; coverage alone
}


def _pairs(
    asked: Sequence[Asked], name: str, cal: Calibration, embedder: str
) -> tuple[np.ndarray, np.ndarray, np.ndarray, dict[str, int]]:
    """Relevant pairs (a query and the memory that answers it: the expected rule in the
    top 5, the best-ranked evidence turn in the top 10) against, for each negative query,
    its candidate of most evidence under ``cal``. Each group (coding or chat, relevant or
    not) weighs the same in total. The cosine fit leaves out pairs without a cosine; the
    coverage fits keep pairs of no shared term (scored 0 by rule, but they show where
    the boundary lies)."""
    query_read, with_cosine = KINDS[name]

    def usable(s: Seen) -> bool:
        return s.cosine is not None or not with_cosine

    def row(s: Seen) -> list[float]:
        vector = [s.cosine or 0.0, s.surprise or 0.0] if with_cosine else []
        return [1.0, s.coverage, *vector]

    def own(s: Seen) -> float:
        z = cal.intercept + cal.coverage * s.coverage + cal.cosine * (s.cosine or 0.0)
        return float(z + cal.surprise * (s.surprise or 0.0))

    groups: dict[tuple[bool, bool], list[list[float]]] = {}
    for x in asked:
        if embedder_reads(embedder, x.query) != query_read:
            continue
        chat = not is_coding(x)
        seen = [s for s in x.seen if usable(s)]
        if x.kind == "negative":
            if seen:
                groups.setdefault((chat, False), []).append(row(max(seen, key=own)))
            continue
        depth = 5 if x.kind == "positive" else 10
        gold = next((s for s in x.seen[:depth] if s.ref in x.gold), None)
        if gold is not None and usable(gold):
            groups.setdefault((chat, True), []).append(row(gold))
    xs: list[list[float]] = []
    ys: list[float] = []
    ws: list[float] = []
    for (_, relevant), rows in groups.items():
        xs += rows
        ys += [1.0 if relevant else 0.0] * len(rows)
        ws += [1.0 / len(rows)] * len(rows)
    sizes = {
        f"{'chat' if c else 'coding'}/{'relevant' if r else 'negative'}": len(v)
        for (c, r), v in groups.items()
    }
    w = np.asarray(ws)
    return np.asarray(xs), np.asarray(ys), w / w.sum() * len(w), sizes


def fit_logistic(x: np.ndarray, y: np.ndarray, w: np.ndarray, l2: float) -> np.ndarray:
    """Weighted logistic regression by Newton's method, with a ridge of ``l2``."""
    beta = np.zeros(x.shape[1])
    for _ in range(200):
        p = 1.0 / (1.0 + np.exp(-(x @ beta)))
        grad = x.T @ (w * (p - y)) + l2 * beta
        hess = (x * (w * p * (1 - p))[:, None]).T @ x + l2 * np.eye(x.shape[1])
        step = np.linalg.solve(hess, grad)
        beta -= step
        if np.max(np.abs(step)) < 1e-9:
            break
    return beta


def fit(
    train: Sequence[Asked], start: Calibrations, floor: float, goal: float, max_loss: float
) -> tuple[Calibrations, dict[str, Any]]:
    """Maximum likelihood for each calibration (repeated to a fixed point, since a
    negative's hardest candidate depends on the fit), then one shift of all three
    intercepts, i.e. one prior odds of relevance: the most lenient shift with which
    ``goal`` of the coding negatives abstain at ``floor`` while LoCoMo recall_any@10 falls
    by at most ``max_loss``."""
    names = [n for n in KINDS if n != "with_vectors" or start.with_vectors is not None]
    cals: dict[str, Calibration] = {}
    for name in names:
        cal = getattr(start, name)
        assert isinstance(cal, Calibration)
        cals[name] = cal
    sizes: dict[str, dict[str, int]] = {}
    for _ in range(50):  # to a fixed point: the hardest candidates stop changing
        before = dict(cals)
        for name in names:
            with_cosine = KINDS[name][1]
            x, y, w, sizes[name] = _pairs(train, name, cals[name], start.embedder)
            if len(set(y.tolist())) < 2:
                continue  # one class only: nothing to fit, the start stands
            # A small group (the unread queries) gets a firmer ridge against separation.
            b = fit_logistic(x, y, w, l2=1e-3 if len(y) > 100 else 1e-2)
            cals[name] = Calibration(
                intercept=round(float(b[0]), 3),
                coverage=round(float(b[1]), 3),
                cosine=round(float(b[2]), 3) if with_cosine else 0.0,
                surprise=round(float(b[3]), 3) if with_cosine else 0.0,
            )
        if cals == before:
            break
    mle = replace(start, **cals)
    coding = [x for x in train if is_coding(x)]
    chat = [x for x in train if x.kind == "question"]
    base = summarise(chat).get("recall_any10_off") if chat else None
    for shift in np.arange(4.0, -8.0, -0.05):
        shifted = replace(
            start,
            **{
                n: replace(c, intercept=round(c.intercept + float(shift), 3))
                for n, c in cals.items()
            },
        )
        abstain = simulate(coding, shifted, floor)["abstain_on"] or 0.0
        recall = simulate(chat, shifted, floor).get("recall_any10_on") if chat else None
        if abstain >= goal and (base is None or recall is None or base - recall <= max_loss):
            return shifted, {"mle": mle, "shift": round(float(shift), 2), "pairs": sizes}
    raise SystemExit("no intercept shift meets the goal on the fit half")
