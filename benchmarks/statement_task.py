"""The held-out statement task: a fact or a task stated, does recall put its memory first?

An agent often sends recall a declarative sentence, not a question: a fact it is about to
rely on ("The billing service PRs target the develop branch.") or the task it is doing
("I'm adding a charting library to the dashboard."). This set
(``data/statement_task.jsonl``, written and committed before anything was measured, and
never used to fit anything) holds 264 such statements, each naming one memory and
worded apart from it where the memory's identifiers allow:

* 166 over the **coding-rules store** (``data/coding_rules.jsonl``, one per rule, 20 of
  them in Chinese over the Chinese rules), stored as ``query_shapes.py`` stores them;
* 98 over the **LoCoMo stores** (built as ``locomo.py`` builds them), each restating one
  turn in the third person ("Jolene did yoga on top of Mount Talkeetna yesterday
  morning."), the turns drawn at random among those over 90 characters that
  ``query_shapes.jsonl`` does not already ask about, generic ones skipped.

Two halves, as in ``query_shapes.py``: coding odd / even rule numbers, LoCoMo
conversations 1-5 / 6-10; half A is the one a ranking change may be fitted on, half B is
reported. Scored on ``result.ranked`` of ``recall(q, max_results=10, max_chars=1_000_000)``
with ``rag.minScore: 0``: recall@1/5/10 and MRR. Runs: ``bm25`` (plain SQLite FTS5, as in
``locomo.py``), ``keyword`` (cairn's keyword lane alone), ``default`` and any ``--rag-run``.

    python benchmarks/statement_task.py --data ../shared/data/locomo10.json --json out.json
"""

from __future__ import annotations

import json
import statistics
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from cairn.adapters.embedding import MiniLmOnnxEmbedder

sys.path.insert(0, str(Path(__file__).parent))
from locomo import CachedEmbedder, load_locomo
from query_shapes import (
    CODING,
    DATA,
    ShapedQuery,
    evaluate,
    run_arguments,
    runs_of,
    score,
    write_json,
)

METRICS = ("recall@1", "recall@5", "recall@10", "mrr")


@dataclass(frozen=True, slots=True)
class Statement:
    query: ShapedQuery
    lang: str  # "en" or "zh"


def load_statements(path: Path = DATA / "statement_task.jsonl") -> list[Statement]:
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]
    return [
        Statement(ShapedQuery(r["store"], r["relevant"], r["shape"], r["query"]), r["lang"])
        for r in rows
    ]


def groups(statements: Sequence[Statement]) -> dict[str, list[int]]:
    """Query indexes per reported group: everything, each half, each language (FTS5 cannot
    split Chinese into words, so ``en`` is the fair comparison with it), each store kind."""
    out: dict[str, list[int]] = {"all": list(range(len(statements)))}
    for n, s in enumerate(statements):
        kind = CODING if s.query.store == CODING else "locomo"
        keys = [f"half {s.query.half}", s.lang, kind, f"{kind} half {s.query.half}"]
        if kind == CODING:
            keys.append(f"{kind} {s.lang}")
        for key in keys:
            out.setdefault(key, []).append(n)
    return dict(
        sorted(
            out.items(),
            key=lambda kv: (kv[0] != "all", kv[0].split(" ")[0] in {CODING, "locomo"}, kv[0]),
        )
    )


def report(
    statements: Sequence[Statement], ranked: dict[str, list[list[str]]]
) -> dict[str, dict[str, dict[str, float]]]:
    out: dict[str, dict[str, dict[str, float]]] = {}
    for name, members in groups(statements).items():
        out[name] = {}
        for run, lists in ranked.items():
            rows = [score(lists[n], statements[n].query.relevant) for n in members]
            out[name][run] = {m: statistics.fmean(r[m] for r in rows) for m in METRICS}
            out[name][run]["queries"] = float(len(rows))
    return out


def print_report(results: dict[str, dict[str, dict[str, float]]]) -> None:
    runs = list(next(iter(results.values())))
    print(f"\n{'group':<20}{'n':>5}" + "".join(f"{r[:27]:>29}" for r in runs))
    print(f"{'':<25}" + "".join(f"{'@1 / @5 / @10 / MRR':>29}" for _ in runs))
    for name, by_run in results.items():
        n = int(next(iter(by_run.values()))["queries"])
        cells = "".join("".join(f"{m[k]:>7.3f}" for k in METRICS) + " " for m in by_run.values())
        print(f"{name:<20}{n:>5} {cells}")


def main(argv: Sequence[str] | None = None) -> None:
    args = run_arguments(__doc__).parse_args(argv)
    statements = load_statements()
    runs = runs_of(args)
    embedder = CachedEmbedder(MiniLmOnnxEmbedder(), args.embedding_cache)
    queries = [s.query for s in statements]
    ranked = evaluate(queries, load_locomo(args.data), runs, embedder)
    embedder.save()
    results = report(statements, ranked)
    print_report(results)
    if args.details:
        with args.details.open("w", encoding="utf-8") as f:
            for n, s in enumerate(statements):
                row = {"store": s.query.store, "relevant": s.query.relevant, "query": s.query.text}
                row["half"] = s.query.half
                f.write(json.dumps({**row, "runs": {r: ranked[r][n] for r in runs}}) + "\n")
    if args.json:
        write_json(args.json, results, runs)


if __name__ == "__main__":
    main()
