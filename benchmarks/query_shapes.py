"""Queries that are not questions: does recall still put the right memory first?

The defaults were tuned on LoCoMo's questions. This set (``data/query_shapes.jsonl``,
written by hand before anything was measured) asks in other shapes:

* over the **coding-rules store** (``data/coding_rules.jsonl``, 166 rules stored with
  ``Memory.remember(kind="policy")``, as ``abstention.py`` stores them): 107 short keyword
  queries ("squash merge", "pnpm 安装"), 69 code identifiers ("pnpm gen:api",
  "docker-compose.test.yml", "TODO(alice, PAY-88)"), 26 declarative paraphrases and 82
  *context* queries, what an agent's hook would send while working: a command
  ("git push --force origin main"), a path, a line of code
  ("hashlib.md5(password.encode()).hexdigest()"), a task statement;
* over the **LoCoMo stores** (built as ``locomo.py`` builds them): 111 declarative
  paraphrases of a turn ("Tim attended a Harry Potter conference in the UK"), the turns
  drawn at random among those of more than 70 characters, generic ones skipped.

The first batch (keywords, identifiers, paraphrases: 297 queries) scored near the ceiling
for every run, so a second, harder batch (the context queries and 16 paraphrases that
avoid the turn's words) was written after that first measurement and before any tuning.

Each query names one memory. Scored on ``result.ranked`` of
``recall(q, max_results=10, max_chars=1_000_000)`` with ``rag.minScore: 0``: recall@1/5/10
(the memory in the top k) and MRR, by store and shape and by half (coding: odd/even rule
numbers; LoCoMo: conversations 1-5 / 6-10). References in the same run:

* ``bm25``: plain SQLite FTS5 (``porter unicode61``), stop words dropped, the other tokens
  quoted and OR-joined, as in ``locomo.py`` (it cannot split Chinese text into words);
* ``keyword``: cairn's keyword lane alone (BM25 over words, CJK bigrams and identifiers).

    python benchmarks/query_shapes.py --data ../shared/data/locomo10.json --json out.json
    python benchmarks/query_shapes.py --data ... --rag-run 'v2={"weights": {"vector": 2}}'
"""

from __future__ import annotations

import argparse
import json
import sqlite3
import statistics
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cairn import Memory, MemoryInput
from cairn.adapters.embedding import MiniLmOnnxEmbedder

sys.path.insert(0, str(Path(__file__).parent))
from locomo import _WORD, STOP_WORDS, CachedEmbedder, Conversation, load_locomo, parse_rag_run

DATA = Path(__file__).parent / "data"
KS = (1, 5, 10)
DEPTH = 10
CODING = "coding"


@dataclass(frozen=True, slots=True)
class ShapedQuery:
    store: str  # "coding" or a LoCoMo sample id
    relevant: str  # a rule id or a dia_id
    shape: str  # keyword | identifier | paraphrase
    text: str

    @property
    def half(self) -> str:
        if self.store == CODING:
            return "A" if int(self.relevant.lstrip("m")) % 2 else "B"
        return "A" if int(self.store.rsplit("-", 1)[1]) <= 43 else "B"  # conversations 1-5


def load_queries(path: Path = DATA / "query_shapes.jsonl") -> list[ShapedQuery]:
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]
    return [ShapedQuery(r["store"], r["relevant"], r["shape"], r["query"]) for r in rows]


def load_rules(path: Path = DATA / "coding_rules.jsonl") -> list[tuple[str, str]]:
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]
    return [(r["id"], r["body"]) for r in rows]


def fts5_ranked(docs: Sequence[tuple[str, str]], queries: Sequence[str]) -> list[list[str]]:
    """Plain FTS5 BM25 over (ref, body) documents, as the LoCoMo reference queries it."""
    db = sqlite3.connect(":memory:")
    try:
        db.execute("CREATE VIRTUAL TABLE docs USING fts5(body, tokenize='porter unicode61')")
        db.executemany(
            "INSERT INTO docs(rowid, body) VALUES (?, ?)",
            [(i, body) for i, (_, body) in enumerate(docs)],
        )
        out = []
        for text in queries:
            terms = dict.fromkeys(w for w in _WORD.findall(text.lower()) if w not in STOP_WORDS)
            rows: list[tuple[int]] = []
            if terms:
                match = " OR ".join('"' + t.replace('"', '""') + '"' for t in terms)
                rows = db.execute(
                    "SELECT rowid FROM docs WHERE docs MATCH ? ORDER BY bm25(docs) LIMIT ?",
                    (match, DEPTH),
                ).fetchall()
            out.append([docs[r][0] for (r,) in rows])
        return out
    finally:
        db.close()


def engine_config(rag: dict[str, Any]) -> dict[str, Any]:
    return {"agents": {"default": {"rag": {"minScore": 0, **rag}}}}


def ranked_coding(
    rules: Sequence[tuple[str, str]],
    queries: Sequence[str],
    rag: dict[str, Any],
    embedder: CachedEmbedder,
    path: Path,
) -> list[list[str]]:
    embedder.embed([body for _, body in rules])
    mem = Memory.open(path, engine_config(rag), embedder=embedder)
    with mem:
        ref = {mem.remember(body, kind="policy").id: rid for rid, body in rules}
        return [_ranked(mem, q, embedder, ref.get) for q in queries]


def ranked_conversation(
    conv: Conversation,
    queries: Sequence[str],
    rag: dict[str, Any],
    embedder: CachedEmbedder,
    path: Path,
) -> list[list[str]]:
    embedder.embed([t.body for t in conv.turns])
    mem = Memory.open(path, engine_config(rag), embedder=embedder)
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
        return [_ranked(mem, q, embedder, None) for q in queries]


def _ranked(mem: Memory, query: str, embedder: CachedEmbedder, ref_of: Any) -> list[str]:
    embedder.embed_query(query)
    result = mem.recall(query, max_results=DEPTH, max_chars=1_000_000)
    return [
        (ref_of(c.record.id) if ref_of else c.record.external_ref) or ""
        for c in result.ranked[:DEPTH]
    ]


def score(ranked: Sequence[str], relevant: str) -> dict[str, float]:
    hits = [r == relevant for r in ranked[:DEPTH]]
    out = {f"recall@{k}": float(any(hits[:k])) for k in KS}
    first = next((i for i, h in enumerate(hits) if h), None)
    out["mrr"] = 0.0 if first is None else 1.0 / (first + 1)
    return out


def evaluate(
    queries: Sequence[ShapedQuery],
    conversations: Sequence[Conversation],
    runs: dict[str, dict[str, Any] | None],
    embedder: CachedEmbedder,
) -> dict[str, list[list[str]]]:
    """Every run's ranked refs per query (in the order of ``queries``); a run of None is
    the FTS5 reference."""
    rules = load_rules()
    by_store: dict[str, list[int]] = {}
    for n, q in enumerate(queries):
        by_store.setdefault(q.store, []).append(n)
    convs = {c.sample_id: c for c in conversations}
    out: dict[str, list[list[str]]] = {r: [[] for _ in queries] for r in runs}
    with tempfile.TemporaryDirectory(prefix="cairn-shapes-") as tmp:
        for store, members in by_store.items():
            texts = [queries[n].text for n in members]
            for run, rag in runs.items():
                path = Path(tmp) / f"{store}-{run}.db"
                if rag is None:
                    docs = rules
                    if store != CODING:
                        docs = [(t.ref, t.body) for t in convs[store].turns]
                    ranked = fts5_ranked(docs, texts)
                elif store == CODING:
                    ranked = ranked_coding(rules, texts, rag, embedder, path)
                else:
                    ranked = ranked_conversation(convs[store], texts, rag, embedder, path)
                for n, r in zip(members, ranked, strict=True):
                    out[run][n] = r
    return out


def report(
    queries: Sequence[ShapedQuery], ranked: dict[str, list[list[str]]]
) -> dict[str, dict[str, dict[str, float]]]:
    groups: dict[str, list[int]] = {"all": list(range(len(queries)))}
    for n, q in enumerate(queries):
        kind = CODING if q.store == CODING else "locomo"
        for key in (kind, f"{kind} {q.shape}", f"{kind} half {q.half}"):
            groups.setdefault(key, []).append(n)
    out: dict[str, dict[str, dict[str, float]]] = {}
    for name, members in groups.items():
        out[name] = {}
        for run, lists in ranked.items():
            rows = [score(lists[n], queries[n].relevant) for n in members]
            out[name][run] = {m: statistics.fmean(r[m] for r in rows) for m in rows[0]}
            out[name][run]["queries"] = float(len(rows))
    return out


def print_report(results: dict[str, dict[str, dict[str, float]]]) -> None:
    runs = list(next(iter(results.values())))
    print(f"\n{'group':<24}{'n':>5}" + "".join(f"{r[:20]:>22}" for r in runs))
    print(f"{'':<29}" + "".join(f"{'@1 / @5 / @10':>22}" for _ in runs))
    for name, by_run in results.items():
        n = int(next(iter(by_run.values()))["queries"])
        cells = "".join(
            f"{m['recall@1']:>8.3f}{m['recall@5']:>7.3f}{m['recall@10']:>7.3f}"
            for m in by_run.values()
        )
        print(f"{name:<24}{n:>5}{cells}")


def run_arguments(doc: str | None) -> argparse.ArgumentParser:
    """The command line of a held-out query set over the LoCoMo and coding stores (this
    script's and ``statement_task.py``'s)."""
    parser = argparse.ArgumentParser(description=(doc or "").splitlines()[0])
    parser.add_argument("--data", type=Path, required=True, help="path to locomo10.json")
    parser.add_argument("--json", type=Path, metavar="OUT")
    parser.add_argument("--embedding-cache", type=Path, metavar="NPZ")
    parser.add_argument("--details", type=Path, metavar="JSONL")
    parser.add_argument(
        "--rag-run",
        type=parse_rag_run,
        action="append",
        default=[],
        metavar="NAME=JSON",
        help="an extra engine run with these rag overrides",
    )
    return parser


def runs_of(args: argparse.Namespace) -> dict[str, dict[str, Any] | None]:
    """BM25, the keyword lane alone, the default, and each ``--rag-run``."""
    return {
        "bm25": None,
        "keyword": {"weights": {"vector": 0}},
        "default": {},
        **{r.name: dict(r.rag) for r in args.rag_run},
    }


def write_json(path: Path, results: object, runs: dict[str, dict[str, Any] | None]) -> None:
    path.write_text(json.dumps({"results": results, "runs": runs}, indent=2), encoding="utf-8")


def main(argv: Sequence[str] | None = None) -> None:
    args = run_arguments(__doc__).parse_args(argv)
    queries = load_queries()
    conversations = load_locomo(args.data)
    runs = runs_of(args)
    embedder = CachedEmbedder(MiniLmOnnxEmbedder(), args.embedding_cache)
    ranked = evaluate(queries, conversations, runs, embedder)
    embedder.save()
    results = report(queries, ranked)
    print_report(results)
    if args.details:
        with args.details.open("w", encoding="utf-8") as f:
            for n, q in enumerate(queries):
                row = {"store": q.store, "relevant": q.relevant, "shape": q.shape, "query": q.text}
                f.write(json.dumps({**row, "runs": {r: ranked[r][n] for r in runs}}) + "\n")
    if args.json:
        write_json(args.json, results, runs)


if __name__ == "__main__":
    main()
