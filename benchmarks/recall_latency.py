"""Recall latency by stage, ingest rate, peak memory and file size of cairn at 10k-100k+.

    python benchmarks/recall_latency.py                          # 10k and 100k memories
    python benchmarks/recall_latency.py --sizes 10000 --queries 100 --json out.json
    python benchmarks/recall_latency.py --profile                # + cProfile at the largest size
    python benchmarks/recall_latency.py --quick                  # a 1k smoke run (~10 s)

Everything goes through the public API (``Memory.open``, ``store_many``, ``recall``). The
run is deterministic for a ``--seed`` (the data, the queries and their order; not the clock).

Data
    Synthetic but shaped like an agent's memory: a pool of ``--pool`` (3,000) distinct
    sentences is generated from ~35 templates over a vocabulary mixing common English,
    people's names, code identifiers (snake_case, camelCase, paths, env vars), tools,
    numbers, versions and dates, grouped into topics. Each memory picks a topic (tied to
    its tenant and project), draws sentences mostly from that topic until it reaches a
    log-uniform target of 5-120 words, and usually ends with a short unique detail (a
    ticket, a PR number, a date). Memories are spread over ``--tenants`` (4) tenants of
    uneven size (40/30/20/10 %), five projects each, 60 % project-scoped, with a mix of
    kinds, trust levels (10 % system, 5 % external) and tags. Memory ``i`` is generated
    from its own seeded RNG, so the first 10k of the 100k store are the 10k store.

Vectors -- which ones are synthetic
    Embedding 100k texts with the real model takes ~45 min on the 2-core machine, so only
    the sentence pool is embedded with the real model (``MiniLmOnnxEmbedder``, cached as
    ``pool-<hash>.npy`` in the workdir). A stored memory's vector is SYNTHETIC: the
    normalised mean of the real embeddings of its sentences plus small Gaussian noise
    (norm 0.15), re-normalised -- so stored vectors cluster like real embeddings of the
    same texts. They are handed to ``store_many`` through ``LookupEmbedder``, an
    ``embedder=`` that looks stored texts up in the precomputed table and falls back to the
    real model for anything else. Every QUERY vector is REAL: queries are never in the
    table, so ``embed`` in the recall timings is the real model on the query text.

Measurements (each size in fresh subprocesses, so sizes never share a heap)
    ingest    generate the memories, precompute their vectors (untimed), then time
              ``store_many`` per tenant into an empty file. Batch times come from the
              embedder's call (a batch starts) to the ``progress`` callback (it committed).
    recall    a fresh process opens the file: ``Memory.open`` time; the first (cold) query
              reported alone (it loads the model and the vector index); ``--warmup``
              queries; then ``--queries`` measured queries. Per query: each stage of
              ``timings_ms``, wall time of the ``recall`` call (end to end, with the query
              embedding), "engine" = wall - embed, and "untimed" = wall - sum of stages.
    real      ingest of the first ``--real-sample`` memories into an empty file with the
              default embedder (the real model embeds every body).
    RSS       peak RSS of each worker's own address space (VmHWM; ingest workers also
              hold the harness's precomputed vectors, reported apart), plus ``ru_maxrss``
              of the parent and of its children (on Linux ``ru_maxrss`` survives fork and
              exec, so a worker's own ``ru_maxrss`` would include its parent's peak).
    DB size   main file and WAL right after ingest, and after close (checkpointed).

Only medians and p95 are quoted; ingest throughput is given over the whole run and per
batch (median, and the p95 batch time). ``--profile`` adds a cProfile of the measured
queries at the largest size and of a 10k ingest, written to the workdir.

Code: the sentence pool in ``latency/vocabulary.py``, memories, queries and vectors in
``latency/corpus.py``, the workers and their processes in ``latency/harness.py``, the
printed tables and target checks in ``latency/report.py``; this file parses the command
line and is the script every worker process runs.
"""

from __future__ import annotations

import argparse
import tempfile
from collections.abc import Sequence
from pathlib import Path

from latency.harness import orchestrate, serve_worker

# What --quick runs instead of the defaults: one small size, enough to see every stage.
QUICK = {"sizes": "1000", "queries": 30, "warmup": 5, "pool": 600, "real_sample": 100}


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    doc = __doc__ or ""
    # --quick changes the defaults; an option given explicitly still wins.
    quick = argparse.ArgumentParser(add_help=False)
    quick.add_argument("--quick", action="store_true")
    presets = QUICK if quick.parse_known_args(argv)[0].quick else {}
    parser = argparse.ArgumentParser(
        description=doc.splitlines()[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--sizes", default="10000,100000", help="comma-separated store sizes")
    parser.add_argument("--queries", type=int, default=200, help="measured queries per size")
    parser.add_argument("--warmup", type=int, default=20, help="warm-up queries per size")
    parser.add_argument("--json", metavar="OUT", help="write the full report here")
    parser.add_argument(
        "--workdir",
        default=str(Path(tempfile.gettempdir()) / "cairn-recall-bench"),
        help="databases, the pool-embedding cache and profiles (default: %(default)s)",
    )
    parser.add_argument("--seed", type=int, default=1234)
    parser.add_argument("--pool", type=int, default=3000, help="distinct real-embedded sentences")
    parser.add_argument("--tenants", type=int, default=4)
    parser.add_argument("--batch-size", type=int, default=256, help="store_many batch size")
    parser.add_argument(
        "--real-sample",
        type=int,
        default=2000,
        help="memories ingested with the real model (0: skip)",
    )
    parser.add_argument("--profile", action="store_true", help="cProfile recall and ingest")
    parser.add_argument("--keep-db", action="store_true", help="keep the databases afterwards")
    parser.add_argument(
        "--quick",
        action="store_true",
        help="a smoke run: " + ", ".join(f"--{k.replace('_', '-')} {v}" for k, v in QUICK.items()),
    )
    # Internal: how the orchestrator runs one measurement in a fresh process.
    for name, kind in (("--w-kind", str), ("--w-out", str), ("--w-pool", str), ("--w-size", int)):
        parser.add_argument(name, type=kind, help=argparse.SUPPRESS)
    parser.add_argument("--w-profile", action="store_true", help=argparse.SUPPRESS)
    parser.set_defaults(**presets)
    args = parser.parse_args(argv)
    args.sizes = [int(s) for s in str(args.sizes).split(",") if s.strip()]
    if not args.sizes or min(args.sizes) < 100:
        parser.error("--sizes: each size must be at least 100")
    if args.queries < 1 or args.warmup < 0:
        parser.error("--queries must be >= 1 and --warmup >= 0")
    args.workdir = str(Path(args.workdir).resolve())
    return args


def main(argv: Sequence[str] | None = None) -> None:
    args = parse_args(argv)
    if args.w_kind:
        serve_worker(args)
        return
    orchestrate(args, Path(__file__))


if __name__ == "__main__":
    main()
