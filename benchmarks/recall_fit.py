"""Fit the learned combination (``cairn/engine/recall/combine.py``) and cross-validate it.

The combination re-scores the pool of fused candidates with a weighted sum of signals
(its docstring lists them). This script collects, through the real engine, every pooled
candidate's signals for

* the LoCoMo turn-level questions (1,536; ``locomo.py``'s protocol), and
* the query-shapes set (``query_shapes.py``: coding rules and LoCoMo paraphrases),

as the trace reports them (``recall(...).trace[i]["combination"]``; they do not depend on
the weights), then fits the two sets of weights (questions, and other queries:
``combine.is_question``) by a listwise loss (softmax over the pool: the log
probability of the gold memories, "any" plus half of "all"), with a small L2 penalty,
in numpy, on one half at a time:

* half A: LoCoMo conversations 1-5 and odd-numbered coding rules; half B: the rest;
* reported: the fit of each half tested on the other (2-fold cross-validation), the
  mean of the two fits (what ``QUESTION_WEIGHTS`` and ``STATEMENT_WEIGHTS`` ship) on
  each half, and the cross-validated
  figures with each signal left out in turn (the ablation).

    python benchmarks/recall_fit.py --data ../shared/data/locomo10.json --json out.json
    python benchmarks/recall_fit.py --data ... --collected pool.jsonl        # save pools
    python benchmarks/recall_fit.py --replay pool.jsonl                     # refit only
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import Any

import numpy as np

from cairn import Memory, MemoryInput
from cairn.adapters.embedding import MiniLmOnnxEmbedder
from cairn.engine.recall.combine import (
    QUESTION_WEIGHTS,
    STATEMENT_WEIGHTS,
    Weights,
    is_question,
)

sys.path.insert(0, str(Path(__file__).parent))
from locomo import CachedEmbedder, Conversation, load_locomo
from query_shapes import CODING, load_queries, load_rules

SIGNALS = [f.name for f in fields(Weights)]
CONFIG: dict[str, Any] = {"agents": {"default": {"rag": {"minScore": 0}}}}
L2 = 1e-3
STEPS = 300
ALL_WEIGHT = 0.5  # the "all evidence" term of the loss, beside the "any" term


@dataclass(frozen=True, slots=True)
class Pool:
    source: str  # "locomo" (questions) | "shapes"
    half: str  # "A" | "B"
    evidence: int  # how many gold memories the query has
    features: list[list[float]]  # per pooled candidate: fused, then SIGNALS (raw)
    gold: list[bool]
    question: bool = True  # which set of weights the query is scored by

    def matrix(self) -> np.ndarray:
        """fused, the signals where the query is a question, the signals where it is not
        (so one weight vector holds both sets)."""
        x = np.asarray(self.features, dtype=np.float64).reshape(-1, len(SIGNALS) + 1)
        q = 1.0 if self.question else 0.0
        return np.hstack([x[:, :1], x[:, 1:] * q, x[:, 1:] * (1 - q)])


def _features(combination: dict[str, float]) -> list[float]:
    c = combination
    row = {**c, "coverage_squared": c["coverage"] ** 2}
    return [c["fused"], *(row[name] for name in SIGNALS)]


def _pool(
    result: Any, ref_of: dict[str, str], gold: set[str], source: str, half: str, text: str
) -> Pool:
    feats, labels = [], []
    for entry in result.trace:
        if "combination" not in entry:
            continue
        feats.append(_features(entry["combination"]))
        labels.append(ref_of.get(entry["id"], "") in gold)
    return Pool(source, half, len(gold), feats, labels, is_question(text))


def collect(conversations: Sequence[Conversation], embedder: CachedEmbedder) -> list[Pool]:
    pools: list[Pool] = []
    shapes = load_queries()
    with tempfile.TemporaryDirectory(prefix="cairn-fit-") as tmp:
        for n, conv in enumerate(conversations):
            half = "A" if n < len(conversations) // 2 else "B"
            embedder.embed([t.body for t in conv.turns])
            mem = Memory.open(Path(tmp) / f"{conv.sample_id}.db", CONFIG, embedder=embedder)
            with mem:
                ids = mem.store_many(
                    MemoryInput(
                        body=t.body,
                        occurred_at=t.occurred_at,
                        external_ref=t.ref,
                        episode_id=t.episode,
                        position=t.position,
                    )
                    for t in conv.turns
                )
                ref_of = {i: t.ref for i, t in zip(ids, conv.turns, strict=True)}
                asked = [(q.text, set(q.evidence), "locomo") for q in conv.questions]
                asked += [
                    (s.text, {s.relevant}, "shapes") for s in shapes if s.store == conv.sample_id
                ]
                for text, gold, source in asked:
                    embedder.embed_query(text)
                    result = mem.recall(text, max_results=20, max_chars=1_000_000)
                    pools.append(_pool(result, ref_of, gold, source, half, text))
            print(f"  {conv.sample_id}: {len(pools)} pools", flush=True)
        rules = load_rules()
        embedder.embed([body for _, body in rules])
        mem = Memory.open(Path(tmp) / "coding.db", CONFIG, embedder=embedder)
        with mem:
            ref_of = {mem.remember(body, kind="policy").id: rid for rid, body in rules}
            for s in shapes:
                if s.store != CODING:
                    continue
                embedder.embed_query(s.text)
                result = mem.recall(s.text, max_results=20, max_chars=1_000_000)
                pools.append(_pool(result, ref_of, {s.relevant}, "shapes", s.half, s.text))
    return pools


def scores(pool: Pool, w: np.ndarray) -> np.ndarray:
    return pool.matrix() @ w if pool.features else np.zeros(0)


def metrics(pools: Sequence[Pool], w: np.ndarray) -> dict[str, float]:
    out: dict[str, list[float]] = {"any@1": [], "any@5": [], "any@10": [], "all@10": []}
    for p in pools:
        order = np.argsort(-scores(p, w), kind="stable")
        hits = np.asarray(p.gold, dtype=bool)[order] if len(order) else np.zeros(0, bool)
        for k in (1, 5, 10):
            out[f"any@{k}"].append(float(hits[:k].any()))
        out["all@10"].append(float(hits[:10].sum() == p.evidence))
    return {k: float(np.mean(v)) if v else 0.0 for k, v in out.items()}


def _loss_grad(w: np.ndarray, data: list[tuple[np.ndarray, np.ndarray, float]]) -> np.ndarray:
    grad = np.zeros_like(w)
    total = 0.0
    for x, y, weight in data:
        s = x @ w
        p = np.exp(s - s.max())
        p /= p.sum()
        gold_p = float((p * y).sum())
        g = (p - p * y / gold_p) + ALL_WEIGHT * (p - y / y.sum())
        grad += weight * (x.T @ g)
        total += weight
    grad /= total
    grad[1:] += 2 * L2 * w[1:]
    return grad


def fit(pools: Sequence[Pool], mask: Sequence[bool] | None = None) -> np.ndarray:
    """Weights relative to the fused score's (1), by Adam on the listwise loss. Each
    source counts as much as the other, so the smaller query-shapes set is not drowned."""
    one = np.asarray(mask if mask is not None else [True] * len(SIGNALS), dtype=float)
    keep = np.concatenate([[1.0], one, one])
    usable = [p for p in pools if any(p.gold)]
    counts = {s: sum(p.source == s for p in usable) for s in ("locomo", "shapes")}
    data = [
        (
            p.matrix() * keep,
            np.asarray(p.gold, dtype=np.float64),
            1.0 if p.source == "locomo" else counts["locomo"] / max(counts["shapes"], 1) / 4,
        )
        for p in usable
    ]
    w = np.zeros(2 * len(SIGNALS) + 1)
    w[0] = 5.0
    m = np.zeros_like(w)
    v = np.zeros_like(w)
    for t in range(1, STEPS + 1):
        g = _loss_grad(w, data)
        m = 0.9 * m + 0.1 * g
        v = 0.999 * v + 0.001 * g * g
        w -= 0.05 * (m / (1 - 0.9**t)) / (np.sqrt(v / (1 - 0.999**t)) + 1e-8)
    return w / w[0]


def weights_vector(question: Weights, statement: Weights) -> np.ndarray:
    return np.asarray(
        [1.0, *(getattr(question, n) for n in SIGNALS), *(getattr(statement, n) for n in SIGNALS)]
    )


def named(w: np.ndarray) -> dict[str, dict[str, float]]:
    n = len(SIGNALS)
    return {
        "question": dict(zip(SIGNALS, w[1 : n + 1].round(3), strict=True)),
        "statement": dict(zip(SIGNALS, w[n + 1 :].round(3), strict=True)),
    }


def cross_validate(pools: Sequence[Pool], mask: Sequence[bool] | None = None) -> dict[str, Any]:
    halves = {h: [p for p in pools if p.half == h] for h in "AB"}
    fitted = {h: fit(halves[h], mask) for h in "AB"}
    out: dict[str, Any] = {"weights": {h: named(w) for h, w in fitted.items()}}
    for source in ("locomo", "shapes"):
        for test, train in (("A", "B"), ("B", "A")):
            part = [p for p in halves[test] if p.source == source]
            out[f"{source} {test} (fit on {train})"] = metrics(part, fitted[train])
    out["mean"] = (fitted["A"] + fitted["B"]) / 2
    return out


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--data", type=Path, help="path to locomo10.json")
    parser.add_argument("--embedding-cache", type=Path, metavar="NPZ")
    parser.add_argument("--collected", type=Path, metavar="JSONL", help="save the pools here")
    parser.add_argument("--replay", type=Path, metavar="JSONL", help="fit saved pools")
    parser.add_argument("--json", type=Path, metavar="OUT")
    args = parser.parse_args(argv)
    if args.replay:
        rows = [json.loads(line) for line in args.replay.read_text().splitlines() if line]
        pools = [Pool(**r) for r in rows]
    else:
        if args.data is None:
            raise SystemExit("--data is required unless --replay is given")
        embedder = CachedEmbedder(MiniLmOnnxEmbedder(), args.embedding_cache)
        pools = collect(load_locomo(args.data), embedder)
        embedder.save()
        if args.collected:
            with args.collected.open("w", encoding="utf-8") as f:
                for p in pools:
                    f.write(json.dumps(asdict(p)) + "\n")
    report: dict[str, Any] = {}
    base = np.zeros(2 * len(SIGNALS) + 1)
    base[0] = 1.0
    shipped = weights_vector(QUESTION_WEIGHTS, STATEMENT_WEIGHTS)
    for name, w in (("fused alone (learned off)", base), ("shipped weights", shipped)):
        report[name] = {
            f"{s} {h}": metrics([p for p in pools if p.source == s and p.half == h], w)
            for s in ("locomo", "shapes")
            for h in "AB"
        }
    cv = cross_validate(pools)
    report["cross-validation"] = {k: v for k, v in cv.items() if k != "mean"}
    report["mean of the two fits"] = named(cv["mean"])
    report["ablation (cross-validated, one signal left out)"] = {}
    for i, name in enumerate(SIGNALS):
        mask = [j != i for j in range(len(SIGNALS))]
        dropped = cross_validate(pools, mask)
        report["ablation (cross-validated, one signal left out)"][name] = {
            k: v for k, v in dropped.items() if k not in ("mean", "weights")
        }
    print(json.dumps(report, indent=1, default=float))
    if args.json:
        args.json.write_text(json.dumps(report, indent=1, default=float), encoding="utf-8")


if __name__ == "__main__":
    main()
