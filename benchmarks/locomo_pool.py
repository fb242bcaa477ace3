"""LoCoMo's scored pools, kept to replay re-orderings of them without recalling again.

A change that only re-orders the pool a recall already scored (a session-diversity cap,
a session-level score, a blend of the relevance estimate into the order) can be measured
on every LoCoMo question in a second instead of a four-minute run. ``dump`` builds each
conversation's store as ``locomo.py`` builds it and writes, for every question, the pool
a recall ranks: the turn-level questions (categories 1-4) recalled as ``locomo.py``
recalls them (``max_results`` 20, so a pool of ``scorePool`` 50), the session-level ones
(all five categories, ``locomo_sessions.py``) with ``max_results`` 50 (a pool of 100).
Each ranked memory keeps its turn, its final score, its fused score and its relevance.

``replay`` scores that file as the two protocols score it (turn: any@5 / any@10 /
all@10 at depth 20; session: any@5 / any@10 over the ranked turns' sessions at depth 50),
by halves (conversations 1-5 = A, 6-10 = B) and categories, and the variants below, so a
parameter is chosen on half A and read on half B:

* ``diversity``: the list rebuilt greedily, each turn of a session already listed losing
  λ of the final score (best = 1); optionally only for questions asking for a set;
* ``session-score``: the sessions ordered by a score over their pooled turns (best turn
  plus a share of the next ones, or a soft maximum) instead of by their best turn;
* ``relevance``: the final score plus w × the relevance estimate.

A diversity step that only demotes turns never changes the session protocol's order:
the sessions' first turns keep the order of their best scores.

    PYTHONPATH=src python benchmarks/locomo_pool.py dump --data ../shared/data/locomo10.json \
        --embedding-cache emb.npz --out pool.jsonl [--rag '{"scorePool": 100}']
    PYTHONPATH=src python benchmarks/locomo_pool.py replay pool.jsonl
"""

from __future__ import annotations

import argparse
import json
import math
import re
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from cairn import Memory, MemoryInput
from cairn.compose import make_embedder
from cairn.config import parse_config
from locomo import (
    CATEGORIES,
    CachedEmbedder,
    EngineRun,
    embedder_config,
    engine_config,
    load_locomo,
)
from locomo_sessions import SESSION_DEPTH, load_session_questions

TURN_DEPTH = 20
Row = list[Any]  # [ref, final score, fused score, relevance]
Order = Callable[[dict[str, Any]], Sequence[Row]]
# Questions that ask for several things ("What X has Y done?", "both", "How many").
ASKS_SET = re.compile(
    r"\b(both|how many|in what ways|what (kinds?|types?|sorts?) of|what (has|have|are)"
    r"|where (has|have)|what \w+(?: \w+)? (has|have|does|do|did) \w+ (\w+ )?\w+\?)",
    re.IGNORECASE,
)


def dump(data: Path, cache: Path | None, rag: dict[str, Any], out: Path) -> None:
    conversations = load_locomo(data)
    by_session = load_session_questions(data, conversations)
    inner = make_embedder(parse_config(embedder_config("minilm-onnx")))
    embedder = CachedEmbedder(inner, cache)
    config = engine_config(EngineRun("pool", "as given", rag), None)
    start = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="cairn-locomo-pool-") as tmp, out.open("w") as f:
        for number, conv in enumerate(conversations):
            mem = Memory.open(Path(tmp) / f"{conv.sample_id}.db", config, embedder=embedder)
            with mem:
                mem.store_many(
                    MemoryInput(
                        body=t.body,
                        occurred_at=t.occurred_at,
                        external_ref=t.ref,
                        episode_id=t.episode,
                        position=t.position,
                    )
                    for t in conv.turns
                )
                asked: list[tuple[str, str, int, list[Any], int]] = [
                    ("turn", q.text, q.category, sorted(q.evidence), TURN_DEPTH)
                    for q in conv.questions
                ]
                asked += [
                    ("session", q.text, q.category, sorted(q.sessions), SESSION_DEPTH)
                    for q in by_session[number]
                ]
                for kind, text, category, gold, depth in asked:
                    result = mem.recall(text, max_results=depth, max_chars=1_000_000)
                    ranked = [
                        [c.record.external_ref, c.score, c.fused, c.relevance.score]
                        for c in result.ranked
                    ]
                    line = {"conversation": number, "kind": kind, "question": text}
                    line |= {"category": category, "gold": gold, "ranked": ranked}
                    f.write(json.dumps(line) + "\n")
            print(f"{conv.sample_id}: {time.perf_counter() - start:.0f}s", flush=True)
    embedder.save()


def session_of(ref: str) -> int:
    return int(ref.split(":")[0][1:])


def half(item: dict[str, Any]) -> str:
    return "A" if item["conversation"] < 5 else "B"


def plain(item: dict[str, Any]) -> Sequence[Row]:
    return list(item["ranked"])


def turn_scores(items: Sequence[dict[str, Any]], order: Order) -> dict[str, tuple[float, ...]]:
    """any@5 / any@10 / all@10 over all, each half, each category and category by half."""
    hits: dict[str, list[tuple[bool, bool, bool]]] = defaultdict(list)
    for item in items:
        if item["kind"] != "turn":
            continue
        ranked = [row[0] for row in order(item)][:TURN_DEPTH]
        gold = set(item["gold"])
        hit = (
            bool(gold & set(ranked[:5])),
            bool(gold & set(ranked[:10])),
            gold <= set(ranked[:10]),
        )
        name = CATEGORIES[item["category"]]
        for key in ("all", half(item), name, f"{name} {half(item)}"):
            hits[key].append(hit)
    return {k: tuple(sum(h[i] for h in v) / len(v) for i in range(3)) for k, v in hits.items()}


def ranked_sessions(rows: Sequence[Row]) -> list[int]:
    return list(dict.fromkeys(session_of(row[0]) for row in rows[:SESSION_DEPTH]))


def session_scores(
    items: Sequence[dict[str, Any]], sessions: Callable[[dict[str, Any]], list[int]]
) -> dict[str, tuple[float, ...]]:
    """Session any@5 / any@10 over all and each half."""
    hits: dict[str, list[tuple[bool, bool]]] = defaultdict(list)
    for item in items:
        if item["kind"] != "session":
            continue
        order, gold = sessions(item), set(item["gold"])
        hit = (bool(gold & set(order[:5])), bool(gold & set(order[:10])))
        for key in ("all", half(item)):
            hits[key].append(hit)
    return {k: tuple(sum(h[i] for h in v) / len(v) for i in range(2)) for k, v in hits.items()}


def diversity(weight: float, only_sets: bool) -> Order:
    """Greedy: the next turn is the best by final score, less ``weight`` when a turn of
    its session is already listed (the rest of the pool follows in its order)."""

    def order(item: dict[str, Any]) -> Sequence[Row]:
        rows = list(item["ranked"])
        if only_sets and not ASKS_SET.search(item["question"]):
            return rows
        out: list[Row] = []
        seen: set[int] = set()
        while rows and len(out) < SESSION_DEPTH:
            best = max(
                range(len(rows)),
                key=lambda i: (rows[i][1] - (weight if session_of(rows[i][0]) in seen else 0), -i),
            )
            row = rows.pop(best)
            out.append(row)
            seen.add(session_of(row[0]))
        return out + rows

    return order


def relevance_blend(weight: float) -> Order:
    def order(item: dict[str, Any]) -> Sequence[Row]:
        return sorted(item["ranked"], key=lambda row: -(row[1] + weight * row[3]))

    return order


def by_session_score(aggregate: Callable[[list[float]], float]) -> Callable[..., list[int]]:
    """Sessions ordered by ``aggregate`` of their pooled turns' final scores, best first."""

    def sessions(item: dict[str, Any]) -> list[int]:
        scores: dict[int, list[float]] = defaultdict(list)
        for row in item["ranked"]:
            scores[session_of(row[0])].append(row[1])
        return sorted(scores, key=lambda s: -aggregate(sorted(scores[s], reverse=True)))

    return sessions


def soft_max(tau: float) -> Callable[[list[float]], float]:
    return lambda v: tau * math.log(sum(math.exp(x / tau) for x in v))


def second_share(share: float) -> Callable[[list[float]], float]:
    return lambda v: v[0] + share * (v[1] if len(v) > 1 else 0.0)


def fmt(values: tuple[float, ...]) -> str:
    return " / ".join(f"{v:.3f}" for v in values)


def replay(path: Path) -> None:
    items = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    turn_orders: dict[str, Order] = {"as ranked": plain}
    for weight in (0.01, 0.02, 0.03, 0.05, 0.1):
        turn_orders[f"diversity λ {weight}"] = diversity(weight, False)
        turn_orders[f"diversity λ {weight}, sets only"] = diversity(weight, True)
    for weight in (0.05, 0.1, 0.2):
        turn_orders[f"relevance w {weight}"] = relevance_blend(weight)
    print("turn level: any@5 / any@10 / all@10 (half A | half B); multi-hop all@10 A / B")
    for name, order in turn_orders.items():
        s = turn_scores(items, order)
        print(
            f"  {name:28} {fmt(s['A'])} | {fmt(s['B'])};"
            f" multi-hop {s['multi-hop A'][2]:.3f} / {s['multi-hop B'][2]:.3f};"
            f" single-hop {fmt(s['single-hop'])}; temporal {fmt(s['temporal'])}"
        )
    session_orders: dict[str, Callable[[dict[str, Any]], list[int]]] = {
        "as ranked": lambda item: ranked_sessions(item["ranked"]),
        "diversity λ 0.05": lambda item: ranked_sessions(diversity(0.05, False)(item)),
    }
    for share in (0.1, 0.2, 0.5):
        session_orders[f"best + {share} × second"] = by_session_score(second_share(share))
    for tau in (0.02, 0.05, 0.1):
        session_orders[f"soft maximum τ {tau}"] = by_session_score(soft_max(tau))
    print("session level: any@5 / any@10 (half A | half B)")
    for name, sessions in session_orders.items():
        s = session_scores(items, sessions)
        print(f"  {name:28} {fmt(s['A'])} | {fmt(s['B'])}; all {fmt(s['all'])}")


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    d = sub.add_parser("dump", help="recall every question and keep its scored pool")
    d.add_argument("--data", type=Path, required=True, help="path to locomo10.json")
    d.add_argument("--embedding-cache", type=Path, metavar="NPZ")
    d.add_argument("--rag", type=json.loads, default={}, help="rag settings as JSON")
    d.add_argument("--out", type=Path, required=True)
    r = sub.add_parser("replay", help="score a dump and the re-orderings of its pools")
    r.add_argument("pool", type=Path)
    args = parser.parse_args(argv)
    if args.command == "dump":
        if not isinstance(args.rag, dict):
            raise SystemExit("--rag must be a JSON object")
        dump(args.data, args.embedding_cache, args.rag, args.out)
    else:
        replay(args.pool)


if __name__ == "__main__":
    main()
