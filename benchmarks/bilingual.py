"""Bilingual benchmark: Chinese, English and mixed memories and queries, code identifiers.

Data (``data/bilingual_memories.jsonl``, ``data/bilingual_queries.jsonl``), written by hand
before anything was measured: 512 memories of one developer (work rules with code
identifiers, infrastructure, colleagues, family, health, travel, hobbies, money, meeting
decisions; 227 in Chinese, 146 in English, 139 mixed) and 709 queries, each naming the
memory that answers it (questions, declarative paraphrases, keywords, code identifiers;
in the same language as the memory or the other one).

One fresh store per embedder: every memory stored with ``Memory.store_many`` (as a fact),
then every query through ``Memory.recall(q, max_results=10)`` with ``rag.minScore: 0``,
scored on ``result.ranked``: recall@1/5/10 (the memory in the top k) and MRR, overall, by
the languages of query and memory, and by query shape. Runs:

* ``keyword``: cairn's keyword lane alone (BM25 over words, CJK bigrams and identifiers);
* ``minilm``: the default config (all-MiniLM-L6-v2, English only);
* ``use``: the default config with ``memory.embeddings.provider: use-multilingual``;
* ``e5``: with ``e5-small`` (multilingual-e5-small, 4-bit; slow, opt-in);
* ``chosen``: a default install as a user gets it: no embedder in the config, an English
  locale, so the store chooses its embedder with its first texts (the first embedding
  batch of the ``store_many``; ``cairn.embedder_choice``); the choice is printed.

Halves: odd- and even-numbered queries, reported apart (nothing was fitted on this set).

    python benchmarks/bilingual.py --json out.json
    python benchmarks/bilingual.py --runs keyword,minilm,use,e5 --embedding-cache /tmp/bi
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from cairn import Memory, MemoryInput, __version__
from cairn.adapters.embedding import Embedder

sys.path.insert(0, str(Path(__file__).parent))
from locomo import CachedEmbedder

DATA = Path(__file__).parent / "data"
KS = (1, 5, 10)
DEPTH = 10
PROVIDERS = {"minilm": "minilm-onnx", "use": "use-multilingual", "e5": "e5-small"}
RUNS = ("keyword", *PROVIDERS, "chosen")
DEFAULT_RUNS = ("keyword", "minilm", "use")


@dataclass(frozen=True, slots=True)
class Item:
    id: str
    lang: str
    body: str


@dataclass(frozen=True, slots=True)
class Query:
    id: str
    text: str
    lang: str
    shape: str
    relevant: frozenset[str]


def load(data: Path = DATA) -> tuple[list[Item], list[Query]]:
    def lines(name: str) -> list[dict[str, Any]]:
        path = data / name
        return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]

    items = [Item(r["id"], r["lang"], r["body"]) for r in lines("bilingual_memories.jsonl")]
    queries = [
        Query(r["id"], r["query"], r["lang"], r["shape"], frozenset(r["relevant"]))
        for r in lines("bilingual_queries.jsonl")
    ]
    known = {i.id for i in items}
    unknown = sorted(m for q in queries for m in q.relevant if m not in known)
    if unknown:
        raise SystemExit(f"queries name unknown memories: {unknown[:5]}")
    return items, queries


def make_embedder(run: str) -> Embedder:
    from cairn.compose import make_embedder as compose_embedder
    from cairn.config import parse_config

    return compose_embedder(parse_config({"memory": {"embeddings": {"provider": PROVIDERS[run]}}}))


def run_config(run: str) -> dict[str, Any]:
    rag: dict[str, Any] = {"minScore": 0}
    if run == "keyword":
        rag["weights"] = {"vector": 0}
    provider = PROVIDERS.get(run, "minilm-onnx")
    return {
        "memory": {"embeddings": {"provider": provider}},
        "agents": {"default": {"rag": rag}},
    }


def run_one(
    run: str, items: Sequence[Item], queries: Sequence[Query], workdir: Path, cache: Path | None
) -> list[tuple[list[str], float]]:
    """Each query's ranked memory ids (best first) and its recall wall time in ms."""
    if run == "chosen":
        return run_chosen(items, queries, workdir)
    embedder = CachedEmbedder(
        make_embedder("minilm" if run == "keyword" else run),
        cache / f"{run}.npz" if cache is not None else None,
    )
    embedder.embed([i.body for i in items])
    mem = Memory.open(workdir / f"{run}.db", run_config(run), embedder=embedder)
    out = []
    with mem:
        mem.store_many(MemoryInput(body=i.body, external_ref=i.id) for i in items)
        for q in queries:
            if run != "keyword":
                embedder.embed_query(q.text)
            start = time.perf_counter()
            result = mem.recall(q.text, max_results=DEPTH, max_chars=1_000_000)
            elapsed = (time.perf_counter() - start) * 1000
            out.append(([c.record.external_ref or "" for c in result.ranked[:DEPTH]], elapsed))
    embedder.save()
    if embedder.query_ms:
        out_ms = statistics.median(embedder.query_ms)
        print(f"  {run}: embedding one query p50 {out_ms:.1f} ms", flush=True)
    return out


def run_chosen(
    items: Sequence[Item], queries: Sequence[Query], workdir: Path
) -> list[tuple[list[str], float]]:
    """The ``chosen`` run: the engine builds its own embedder (nothing cached, nothing
    named), under an English locale."""
    import os

    saved = {k: os.environ.pop(k, None) for k in ("LC_ALL", "LC_MESSAGES", "LANG")}
    os.environ["LANG"] = "en_US.UTF-8"
    try:
        mem = Memory.open(workdir / "chosen.db", {"agents": {"default": {"rag": {"minScore": 0}}}})
        out = []
        with mem:
            mem.store_many(MemoryInput(body=i.body, external_ref=i.id) for i in items)
            status = mem.status()
            print(
                f"  chosen: {status.embedder} (chosen by {status.embedder_chosen_by}:"
                f" {status.embedder_reason})",
                flush=True,
            )
            for q in queries:
                start = time.perf_counter()
                result = mem.recall(q.text, max_results=DEPTH, max_chars=1_000_000)
                elapsed = (time.perf_counter() - start) * 1000
                out.append(([c.record.external_ref or "" for c in result.ranked[:DEPTH]], elapsed))
        return out
    finally:
        os.environ.pop("LANG", None)
        os.environ.update({k: v for k, v in saved.items() if v is not None})


def score(ranked: Sequence[str], relevant: frozenset[str]) -> dict[str, float]:
    hits = [r in relevant for r in ranked[:DEPTH]]
    out = {f"recall@{k}": float(any(hits[:k])) for k in KS}
    first = next((i for i, h in enumerate(hits) if h), None)
    out["mrr"] = 0.0 if first is None else 1.0 / (first + 1)
    return out


def summarise(rows: Sequence[dict[str, float]]) -> dict[str, float]:
    if not rows:
        return {}
    out = {m: statistics.fmean(r[m] for r in rows) for m in rows[0]}
    out["queries"] = len(rows)
    return out


def groups(queries: Sequence[Query], items: Sequence[Item]) -> dict[str, list[int]]:
    lang_of = {i.id: i.lang for i in items}
    out: dict[str, list[int]] = {"all": list(range(len(queries)))}
    for n, q in enumerate(queries):
        memory_lang = lang_of[min(q.relevant)]
        for key in (
            f"query {q.lang}",
            f"memory {memory_lang}",
            f"{q.lang} -> {memory_lang}",
            "cross-language" if _crosses(q.lang, memory_lang) else "same language",
            f"shape {q.shape}",
            f"half {'odd' if n % 2 == 0 else 'even'}",
        ):
            out.setdefault(key, []).append(n)
    return dict(sorted(out.items(), key=lambda kv: (kv[0] != "all", kv[0])))


def _crosses(query_lang: str, memory_lang: str) -> bool:
    """An English query for a Chinese memory or the reverse; mixed text shares both."""
    return {query_lang, memory_lang} == {"en", "zh"}


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--runs", default=",".join(DEFAULT_RUNS), help=f"from {', '.join(RUNS)}")
    parser.add_argument("--json", type=Path, metavar="OUT")
    parser.add_argument("--embedding-cache", type=Path, metavar="DIR")
    parser.add_argument("--details", type=Path, metavar="JSONL")
    args = parser.parse_args(argv)
    runs = [r.strip() for r in args.runs.split(",") if r.strip()]
    if not runs or any(r not in RUNS for r in runs):
        raise SystemExit(f"--runs: choose from {', '.join(RUNS)}")
    if args.embedding_cache is not None:
        args.embedding_cache.mkdir(parents=True, exist_ok=True)
    items, queries = load()
    print(f"bilingual: {len(items)} memories, {len(queries)} queries; runs {', '.join(runs)}")
    ranked: dict[str, list[tuple[list[str], float]]] = {}
    with tempfile.TemporaryDirectory(prefix="cairn-bilingual-") as tmp:
        for run in runs:
            ranked[run] = run_one(run, items, queries, Path(tmp), args.embedding_cache)
    per_group = groups(queries, items)
    results: dict[str, dict[str, dict[str, float]]] = {}
    for name, members in per_group.items():
        results[name] = {
            run: summarise([score(ranked[run][n][0], queries[n].relevant) for n in members])
            for run in runs
        }
    for run in runs:
        latencies = np.asarray([ms for _, ms in ranked[run]])
        results["all"][run]["latency_ms_p50"] = float(np.percentile(latencies, 50))
        results["all"][run]["latency_ms_p95"] = float(np.percentile(latencies, 95))
    print(f"\n{'group':<22}{'n':>5}" + "".join(f"{r:>22}" for r in runs))
    print(f"{'':<27}" + "".join(f"{'@1 / @5 / @10':>22}" for _ in runs))
    for name, by_run in results.items():
        n = int(next(iter(by_run.values()))["queries"])
        cells = "".join(
            f"{m['recall@1']:>8.3f}{m['recall@5']:>7.3f}{m['recall@10']:>7.3f}"
            for m in by_run.values()
        )
        print(f"{name:<22}{n:>5}{cells}")
    if args.details:
        with args.details.open("w", encoding="utf-8") as f:
            for n, q in enumerate(queries):
                row = {"id": q.id, "query": q.text, "relevant": sorted(q.relevant)}
                row["runs"] = {run: ranked[run][n][0] for run in runs}
                f.write(json.dumps(row, ensure_ascii=False) + "\n")
    if args.json:
        args.json.write_text(
            json.dumps(
                {
                    "results": results,
                    "config": {run: run_config(run) for run in runs},
                    "machine": {"platform": platform.platform(), "cairn": __version__},
                },
                indent=2,
            ),
            encoding="utf-8",
        )


if __name__ == "__main__":
    main()
