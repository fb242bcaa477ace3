"""cairn at scale: ingest, recall latency by stage, peak memory, file size and ANN quality.

    python benchmarks/scale.py                                   # 10k, 100k and 1M memories
    python benchmarks/scale.py --sizes 10000,100000 --json out.json
    python benchmarks/scale.py --sizes 1000000 --reuse           # keep an earlier ingest

Why a second script beside ``recall_latency.py``: that one answers "how fast is recall at
10k-100k"; this one adds what only shows at a million memories -- the approximate (HNSW)
vector index, its persisted file and its build time, its recall against exact search, and
peak memory with everything loaded. It imports the data generator, the synthetic vectors
and the ingest/recall workers of ``latency/`` (shared with ``recall_latency.py``, so both
measure the same memories the same way) and adds its own workers.

Data (see ``latency/corpus.py`` for the generator)
    Synthetic memories of 5-120 words over a mixed vocabulary (names, code identifiers,
    tools, dates, ...), 4 tenants of uneven size (40/30/20/10 %), 5 projects each, 60 %
    project-scoped. STORED VECTORS ARE SYNTHETIC at every size, 1M included: the
    normalised mean of the real MiniLM embeddings of the memory's sentences plus small
    noise, so they cluster like real embeddings of the same texts. QUERY VECTORS ARE
    REAL: the model embeds every query inside the timings.

Steps per size, each in a fresh subprocess (so sizes never share a heap)
    ingest     ``Memory.store_many`` into an empty file, vectors looked up (no model):
               memories/s, file size, peak RSS of the worker (it also holds the harness's
               generated memories and vectors, reported apart).
    index      a fresh process opens the file and runs one recall: the vector index is
               loaded from the table and, where a tenant is at or above the ANN threshold
               (``memory.store.annThreshold``, default 50k), the HNSW index is built
               and written next to the database. Reports that first-recall time, the
               ANN files' size and peak RSS.
    recall     a fresh process: ``Memory.open`` (the ANN is loaded from its file), one
               cold query, warm-up, then measured queries: p50/p95 of every stage of
               ``result.timings_ms``, wall time (end to end, query embedding included),
               "engine" = wall - embed, peak RSS (VmHWM) -- the number the 3 GB goal is
               about.
    ann        the vector lane alone on the same file: the ANN path (forced on with a low
               threshold at sizes where no tenant reaches the default) against exact
               search on the same in-memory rows, with the queries' real vectors:
               recall@10 and @100 of the lane, and the lane's latency both ways.
    real       ``--real-sample`` memories ingested with the real model embedding every
               body (ingest "with embedding"; the model dominates it).

``--reuse`` keeps a database from an earlier run of the same size and seed instead of
ingesting again (a 1M ingest takes 25-30 minutes on the 2-core machine); the report says
which sizes were reused, and their ingest figures are those of that earlier run. Its ANN
files are deleted first so the index step builds them, unless ``--keep-ann``.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

import latency as rl
from cairn import Memory
from cairn.adapters.embedding import MiniLmOnnxEmbedder
from cairn.provider.local import LocalProvider
from cairn.storage.inprocess import InProcessSearchIndex
from cairn.storage.ports import LaneFilter
from cairn.storage.sqlite.record_store import SqliteRecordStore

TARGETS = {
    "wall_p95_ms": {100_000: 40.0, 1_000_000: 150.0},
    "engine_p95_ms": {100_000: 15.0},
    "peak_rss_mb": {1_000_000: 3072.0},
}
SHOWN_STAGES = ("embed", "lane.keyword", "lane.vector", "fuse", "fetch", "score", "total")
LANE_LIMIT = 200  # rag.laneCandidates, what recall asks of the vector lane


def _db(args: argparse.Namespace, size: int) -> Path:
    return Path(args.workdir) / f"recall-{size}.db"


def _ann_dir(db: Path) -> Path:
    return Path(f"{db}.ann")


def _dir_bytes(path: Path) -> int:
    if not path.exists():
        return 0
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


# --------------------------------------------------------------------------------------
# workers
# --------------------------------------------------------------------------------------


def worker_index(args: argparse.Namespace, ds: rl.Dataset, out: dict[str, Any]) -> None:
    """First recall in a fresh process: loads the vectors and builds/persists the ANN."""
    db = _db(args, args.w_size)
    ann_dir = _ann_dir(db)
    out["ann_files_before_bytes"] = _dir_bytes(ann_dir)
    query = rl.make_queries(ds, args.w_size, 1, "index")[0]
    embedder = rl.LookupEmbedder({}, np.empty((0, rl.DIM), np.float32), MiniLmOnnxEmbedder())
    embedder.embed(["load the model before the clock starts"])
    start = time.perf_counter()
    mem = Memory.open(db, config={}, embedder=embedder, tenant=ds.tenants[0])
    out["open_ms"] = (time.perf_counter() - start) * 1000
    start = time.perf_counter()
    result = mem.for_tenant(query.tenant).recall(query.text, project_id=query.project)
    out["first_recall_ms"] = (time.perf_counter() - start) * 1000
    out["first_recall_timings_ms"] = dict(result.timings_ms)
    provider = mem.provider
    index = provider.ports.index if isinstance(provider, LocalProvider) else None
    out["partitions"] = index.describe() if isinstance(index, InProcessSearchIndex) else []
    mem.close()
    out["ann_files_bytes"] = _dir_bytes(ann_dir)
    out["ann_files"] = sorted(p.name for p in ann_dir.iterdir()) if ann_dir.exists() else []
    out["peak_rss_mb"] = rl.peak_rss_mb()


def worker_ann(args: argparse.Namespace, ds: rl.Dataset, out: dict[str, Any]) -> None:
    """The vector lane through the ANN against exact search over the same rows."""
    db = _db(args, args.w_size)
    queries = rl.make_queries(ds, args.w_size, args.ann_queries, "ann")
    vectors = MiniLmOnnxEmbedder().embed([q.text for q in queries])
    threshold = args.ann_threshold
    biggest = max(ds.tenant_weights()) * args.w_size
    forced = threshold > biggest
    if forced:
        # No tenant reaches the threshold at this size: force the ANN on for the check.
        threshold = max(1000, int(min(ds.tenant_weights()) * args.w_size * 0.5))
    out["threshold"] = threshold
    out["forced"] = forced
    start = time.perf_counter()
    records = SqliteRecordStore(db)
    store = InProcessSearchIndex(records, dim=rl.DIM, graphs_beside=db, ann_threshold=threshold)
    store.vector(LaneFilter(tenant=ds.tenants[0], agent="default"), vectors[0], 1)
    out["load_ms"] = (time.perf_counter() - start) * 1000
    exact_index = store._vectors
    r10: list[float] = []
    r100: list[float] = []
    ann_ms: list[float] = []
    exact_ms: list[float] = []
    for q, vec in zip(queries, vectors, strict=True):
        where = LaneFilter(tenant=q.tenant, agent="default", project_id=q.project)
        t0 = time.perf_counter()
        ann = store.vector(where, vec, LANE_LIMIT)
        t1 = time.perf_counter()
        exact = exact_index.search(vec, q.tenant, "default", q.project, LANE_LIMIT)
        t2 = time.perf_counter()
        ann_ms.append((t1 - t0) * 1000)
        exact_ms.append((t2 - t1) * 1000)
        truth = [row for row, _ in exact]
        got = [hit.row for hit in ann]
        for k, sink in ((10, r10), (100, r100)):
            if truth[:k]:
                sink.append(len(set(got[:k]) & set(truth[:k])) / len(truth[:k]))
    out["recall_at_10"] = float(np.mean(r10))
    out["recall_at_100"] = float(np.mean(r100))
    out["queries"] = len(queries)
    out["ann_lane_ms"] = rl.summary(ann_ms)
    out["exact_lane_ms"] = rl.summary(exact_ms)
    out["partitions"] = store.describe()
    store.close()
    records.close()
    out["peak_rss_mb"] = rl.peak_rss_mb()


WORKERS: dict[str, Callable[[argparse.Namespace, rl.Dataset, dict[str, Any]], None]] = {
    "pool": rl.worker_pool,
    "ingest": rl.worker_ingest,
    "real-ingest": rl.worker_real_ingest,
    "index": worker_index,
    "recall": rl.worker_recall,
    "ann": worker_ann,
}


# --------------------------------------------------------------------------------------
# orchestration
# --------------------------------------------------------------------------------------


def run_worker(args: argparse.Namespace, kind: str, extra: list[str]) -> dict[str, Any]:
    return rl.run_script_worker(Path(__file__), args.passthrough, args.workdir, kind, extra)


def _reusable(args: argparse.Namespace, size: int) -> dict[str, Any] | None:
    marker = Path(f"{_db(args, size)}.ingest.json")
    if not (args.reuse and marker.exists() and _db(args, size).exists()):
        return None
    saved: dict[str, Any] = json.loads(marker.read_text(encoding="utf-8"))
    return saved if saved.get("seed") == args.seed and saved.get("size") == size else None


def orchestrate(args: argparse.Namespace) -> None:
    started = time.perf_counter()
    workdir = Path(args.workdir)
    workdir.mkdir(parents=True, exist_ok=True)
    ds = rl.Dataset.build(args.seed, args.pool, args.tenants)
    pool_file = rl.pool_cache(ds, workdir)
    if not pool_file.exists():
        rl.log(f"embedding the {len(ds.pool)}-sentence pool with the real model")
        run_worker(args, "pool", [])
    common = ["--w-pool", str(pool_file)]
    report: dict[str, Any] = {
        "machine": rl.machine(),
        "method": {
            "stored_vectors": "SYNTHETIC at every size: normalised mean of real MiniLM "
            f"embeddings of the memory's sentences + Gaussian noise (norm {rl.NOISE_NORM})",
            "query_vectors": "real: the model embeds each query inside the timings",
            "tenants": list(ds.tenants),
            "tenant_weights": ds.tenant_weights(),
            "queries": args.queries,
            "warmup": args.warmup,
            "ann_threshold": args.ann_threshold,
            "seed": args.seed,
        },
        "sizes": {},
    }
    if args.real_sample > 0:
        rl.log(f"ingest of {args.real_sample} memories with the real model")
        real = run_worker(args, "real-ingest", common)
        report["real_ingest"] = {
            **real["ingest"],
            "model_load_s": real["model_load_s"],
            "peak_rss_mb": real["peak_rss_mb"],
        }
        rl.log(f"  {real['ingest']['per_s']:.1f} memories/s")
    for size in args.sizes:
        entry: dict[str, Any] = {}
        sized = [*common, "--w-size", str(size)]
        saved = _reusable(args, size)
        if saved is None:
            rl.log(f"size {size}: ingest")
            ing = run_worker(args, "ingest", sized)
            saved = {"seed": args.seed, "size": size, "ingest": ing}
            Path(f"{_db(args, size)}.ingest.json").write_text(json.dumps(saved), encoding="utf-8")
            entry["reused"] = False
        else:
            rl.log(f"size {size}: reusing the database of an earlier ingest")
            entry["reused"] = True
        ing = saved["ingest"]
        entry["ingest"] = {
            **ing["ingest"],
            "peak_rss_mb": ing["peak_rss_mb"],
            "harness_vectors_mb": ing["harness_vectors_mb"],
            "generate_s": ing["generate_s"],
        }
        entry["db"] = {
            "after_ingest": ing["files_after_ingest"],
            "after_close": ing["files_after_close"],
        }
        entry["data"] = {k: ing[k] for k in ("distinct_bodies", "mean_words", "tenants")}
        rl.log(f"  {ing['ingest']['per_s']:.0f} memories/s")
        if args.fresh_ann:
            shutil.rmtree(_ann_dir(_db(args, size)), ignore_errors=True)
        rl.log(f"size {size}: first recall (vector index load / ANN build)")
        entry["index"] = run_worker(args, "index", sized)
        rl.log(f"  {entry['index']['first_recall_ms'] / 1000:.1f} s")
        rl.log(f"size {size}: recall ({args.warmup} warm-up + {args.queries} measured)")
        rec = run_worker(args, "recall", sized)
        entry["recall"] = {
            k: rec[k] for k in ("stages", "cold", "open_ms", "queries", "peak_rss_mb")
        }
        entry["recall"]["after_cold_mb"] = rec["rss_mb_after_cold"]
        rl.log(
            f"  wall p50 {rec['stages']['wall']['p50']:.1f} ms, p95 "
            f"{rec['stages']['wall']['p95']:.1f} ms; peak RSS {rec['peak_rss_mb']:.0f} MiB"
        )
        rl.log(f"size {size}: ANN against exact")
        entry["ann"] = run_worker(args, "ann", sized)
        rl.log(f"  recall@10 {entry['ann']['recall_at_10']:.3f}")
        entry["db"]["ann_files_bytes"] = _dir_bytes(_ann_dir(_db(args, size)))
        entry["db"]["final_bytes"] = rl.file_sizes(_db(args, size))
        report["sizes"][str(size)] = entry
        if args.json:  # keep what is done so far if a later size fails
            Path(args.json).write_text(json.dumps(report, indent=2), encoding="utf-8")
    report["checks"] = checks(report)
    report["wall_s"] = time.perf_counter() - started
    print_report(report)
    if args.json:
        Path(args.json).write_text(json.dumps(report, indent=2), encoding="utf-8")
        rl.log(f"wrote {args.json}")


def checks(report: dict[str, Any]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for size_key, entry in report["sizes"].items():
        size = int(size_key)
        measured = {
            "wall_p95_ms": entry["recall"]["stages"]["wall"]["p95"],
            "engine_p95_ms": entry["recall"]["stages"]["engine"]["p95"],
            "peak_rss_mb": entry["recall"]["peak_rss_mb"],
        }
        for name, by_size in TARGETS.items():
            if size in by_size:
                value, target = measured[name], by_size[size]
                out.append(
                    {
                        "what": f"{name} at {size}",
                        "measured": value,
                        "target": target,
                        "verdict": "PASS" if value <= target else "FAIL",
                    }
                )
    return out


def _f(value: float | None, digits: int = 1) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def print_report(report: dict[str, Any]) -> None:
    sizes = list(report["sizes"])
    print()
    print("cairn scale benchmark -- stored vectors SYNTHETIC, query vectors REAL")
    print(f"machine: {report['machine'].get('cpus')} CPUs, {report['machine'].get('cpu')}")
    print()
    print("Recall latency (ms; fresh process, ANN loaded from its file where one applies)")
    columns = (*SHOWN_STAGES, "wall", "engine")
    header = f"{'size':>8} {'':>4} " + " ".join(f"{s:>12}" for s in columns)
    print(header)
    for s in sizes:
        st = report["sizes"][s]["recall"]["stages"]
        for q in ("p50", "p95"):
            cells = [_f(st.get(name, {}).get(q)) for name in (*SHOWN_STAGES, "wall", "engine")]
            print(f"{s:>8} {q:>4} " + " ".join(f"{c:>12}" for c in cells))
    print("(wall: the recall call end to end, query embedding included; engine: wall - embed)")
    print()
    print("Ingest (store_many, vectors looked up: no model)")
    print(f"{'size':>8} {'memories/s':>11} {'seconds':>9} {'batch p95 ms':>13} {'reused':>7}")
    for s in sizes:
        ing = report["sizes"][s]["ingest"]
        reused = "yes" if report["sizes"][s]["reused"] else "no"
        print(
            f"{s:>8} {_f(ing['per_s'], 0):>11} {_f(ing['seconds'], 0):>9} "
            f"{_f(ing['batch_ms']['p95']):>13} {reused:>7}"
        )
    real = report.get("real_ingest")
    if real:
        print(
            f"with the real model embedding every body: {real['per_s']:.1f} memories/s "
            f"over {real['memories']} memories"
        )
    print()
    print("Vector index: first recall in a fresh process (loads vectors, builds the ANN)")
    print(
        f"{'size':>8} {'open ms':>9} {'first recall s':>15} {'ANN files MiB':>14} "
        f"{'peak MiB':>9}  graphs"
    )
    for s in sizes:
        ix = report["sizes"][s]["index"]
        graphs = ", ".join(
            f"{p['tenant']} {p['vectors']} {p['source']}" for p in ix.get("partitions", [])
        )
        print(
            f"{s:>8} {_f(ix['open_ms'], 0):>9} {ix['first_recall_ms'] / 1000:>15.1f} "
            f"{ix['ann_files_bytes'] / 2**20:>14.1f} {_f(ix['peak_rss_mb'], 0):>9}  "
            f"{graphs or 'none (every tenant below the threshold: exact)'}"
        )
    print()
    print(f"ANN vector lane against exact search (limit {LANE_LIMIT}, real query vectors)")
    print(
        f"{'size':>8} {'threshold':>10} {'forced':>7} {'recall@10':>10} {'recall@100':>11} "
        f"{'ann p50/p95 ms':>15} {'exact p50/p95 ms':>17}"
    )
    for s in sizes:
        a = report["sizes"][s]["ann"]
        print(
            f"{s:>8} {a['threshold']:>10} {a['forced']!s:>7} {a['recall_at_10']:>10.3f} "
            f"{a['recall_at_100']:>11.3f} "
            f"{_f(a['ann_lane_ms']['p50'], 2):>7}/{_f(a['ann_lane_ms']['p95'], 2):<7} "
            f"{_f(a['exact_lane_ms']['p50'], 2):>8}/{_f(a['exact_lane_ms']['p95'], 2):<8}"
        )
    print()
    print("Memory and files (MiB)")
    print(
        f"{'size':>8} {'recall peak':>12} {'index peak':>11} {'ingest peak':>12} "
        f"{'db':>9} {'wal':>7} {'ANN files':>10}"
    )
    for s in sizes:
        e = report["sizes"][s]
        db = e["db"]["final_bytes"]
        print(
            f"{s:>8} {_f(e['recall']['peak_rss_mb'], 0):>12} "
            f"{_f(e['index']['peak_rss_mb'], 0):>11} "
            f"{_f(e['ingest']['peak_rss_mb'], 0):>12} {db['db_bytes'] / 2**20:>9.1f} "
            f"{db['wal_bytes'] / 2**20:>7.1f} {e['db']['ann_files_bytes'] / 2**20:>10.1f}"
        )
    print("(ingest peak includes the harness's generated memories and vectors)")
    print()
    if report.get("checks"):
        print("Targets")
        for c in report["checks"]:
            print(f"  {c['what']:<28} {c['measured']:>9.1f} <= {c['target']:<8} {c['verdict']}")
    print(f"\nwall time of the whole run: {report['wall_s'] / 60:.1f} min")


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    doc = __doc__ or ""
    parser = argparse.ArgumentParser(
        description=doc.splitlines()[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--sizes", default="10000,100000,1000000")
    parser.add_argument("--json", metavar="OUT", help="write the full report here")
    parser.add_argument("--queries", type=int, default=200, help="measured recalls per size")
    parser.add_argument("--warmup", type=int, default=20)
    parser.add_argument("--ann-queries", type=int, default=200, help="queries for the ANN check")
    parser.add_argument(
        "--ann-threshold", type=int, default=50_000, help="the store's default, for the ANN check"
    )
    parser.add_argument("--workdir", default=str(Path(tempfile.gettempdir()) / "cairn-scale-bench"))
    parser.add_argument("--seed", type=int, default=1234)
    parser.add_argument("--pool", type=int, default=3000)
    parser.add_argument("--tenants", type=int, default=4)
    parser.add_argument("--batch-size", type=int, default=256)
    parser.add_argument("--real-sample", type=int, default=1000)
    parser.add_argument("--reuse", action="store_true", help="reuse an earlier ingest")
    parser.add_argument(
        "--keep-ann",
        dest="fresh_ann",
        action="store_false",
        help="with --reuse: keep ANN files from an earlier run (the index step then loads "
        "them instead of building)",
    )
    for name, kind in (("--w-kind", str), ("--w-out", str), ("--w-pool", str), ("--w-size", int)):
        parser.add_argument(name, type=kind, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    args.sizes = [int(s) for s in str(args.sizes).split(",") if s.strip()]
    if not args.sizes or min(args.sizes) < 1000:
        parser.error("--sizes: each size must be at least 1000")
    args.workdir = str(Path(args.workdir).resolve())
    args.w_profile = False  # recall_latency's recall worker reads it
    args.passthrough = [
        "--sizes",
        ",".join(map(str, args.sizes)),
        "--queries",
        str(args.queries),
        "--warmup",
        str(args.warmup),
        "--ann-queries",
        str(args.ann_queries),
        "--ann-threshold",
        str(args.ann_threshold),
        "--workdir",
        args.workdir,
        "--seed",
        str(args.seed),
        "--pool",
        str(args.pool),
        "--tenants",
        str(args.tenants),
        "--batch-size",
        str(args.batch_size),
        "--real-sample",
        str(args.real_sample),
    ]
    return args


def main(argv: Sequence[str] | None = None) -> None:
    args = parse_args(argv)
    if args.w_kind:
        ds = rl.Dataset.build(args.seed, args.pool, args.tenants)
        out: dict[str, Any] = {"loadavg_start": os.getloadavg()}
        WORKERS[args.w_kind](args, ds, out)
        out["loadavg_end"] = os.getloadavg()
        Path(args.w_out).write_text(json.dumps(out), encoding="utf-8")
        return
    orchestrate(args)


if __name__ == "__main__":
    main()
