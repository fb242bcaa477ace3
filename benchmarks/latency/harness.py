"""The process harness of the latency benchmarks: workers, their processes, the run.

Each measurement runs in a fresh process of the entry point (``recall_latency.py``, or
``scale.py`` with its own workers), so sizes never share a heap: :func:`run_script_worker`
starts it with ``--w-kind``, the process runs :func:`serve_worker` and writes a JSON that
the parent reads back. :func:`orchestrate` runs the measurements in order and assembles
the report that :mod:`latency.report` prints.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import json
import os
import pstats
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from cairn import Memory, MemoryInput
from cairn.adapters.embedding import DIM, MiniLmOnnxEmbedder
from latency.corpus import (
    MATCHING_SHARE,
    NOISE_NORM,
    PROJECTS_PER_TENANT,
    Dataset,
    LookupEmbedder,
    Query,
    SynthMemory,
    make_queries,
    memory_vectors,
    pool_cache,
)
from latency.report import DERIVED, STAGES, TARGETS, machine, print_report, target_checks

# --------------------------------------------------------------------------------------
# measurement helpers
# --------------------------------------------------------------------------------------


def pct(values: Sequence[float], q: float) -> float:
    return float(np.percentile(np.asarray(values, dtype=np.float64), q)) if values else float("nan")


def summary(values: Sequence[float]) -> dict[str, float]:
    return {"p50": pct(values, 50), "p95": pct(values, 95), "n": len(values)}


def maxrss_mb() -> float:
    """``ru_maxrss``; on Linux it is inherited across fork and exec (the parent's peak)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0  # KiB on Linux


def peak_rss_mb() -> float:
    """Peak RSS of this process's own address space (VmHWM, reset at exec)."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024.0
    except OSError:
        pass
    return maxrss_mb()


def current_rss_mb() -> float:
    with open("/proc/self/statm", encoding="ascii") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def file_sizes(db: Path) -> dict[str, int]:
    def size(p: Path) -> int:
        return p.stat().st_size if p.exists() else 0

    return {
        "db_bytes": size(db),
        "wal_bytes": size(Path(f"{db}-wal")),
        "shm_bytes": size(Path(f"{db}-shm")),
    }


def fresh_db(path: Path) -> None:
    for p in (path, Path(f"{path}-wal"), Path(f"{path}-shm")):
        p.unlink(missing_ok=True)


def ingest(
    mem: Memory,
    memories: Sequence[SynthMemory],
    tenants: Sequence[str],
    batch_size: int,
    embed_starts: Callable[[], list[float]] | None,
) -> dict[str, Any]:
    """Time ``store_many`` (one call per tenant) and each of its batches.

    A batch ends at its ``progress`` callback (committed). It starts at the embedder's call
    for it when ``embed_starts`` can tell (so the up-front validation of the whole call is
    kept apart), else at the previous batch's end or the call's start.
    """
    by_tenant: dict[str, list[MemoryInput]] = {t: [] for t in tenants}
    for m in memories:
        by_tenant[m.tenant].append(m.item)
    batches: list[tuple[float, int]] = []  # (end time, memories in the batch)
    calls: list[tuple[float, int]] = []  # (start time, index of its first batch)
    wall = 0.0
    for tenant, items in by_tenant.items():
        if not items:
            continue
        done_before = [0]

        def progress(done: int, _total: int, seen: list[int] = done_before) -> None:
            batches.append((time.perf_counter(), done - seen[0]))
            seen[0] = done

        start = time.perf_counter()
        calls.append((start, len(batches)))
        mem.for_tenant(tenant).store_many(items, batch_size=batch_size, progress=progress)
        wall += time.perf_counter() - start
    starts = sorted(embed_starts()) if embed_starts is not None else []
    batch_ms: list[float] = []
    rates: list[float] = []
    validate_s = 0.0
    call_iter = iter(calls)
    next_call = next(call_iter, None)
    prev_end = 0.0
    for i, (end, n) in enumerate(batches):
        begin = prev_end
        if next_call is not None and next_call[1] == i:
            begin = next_call[0]
            next_call = next(call_iter, None)
        inside = [s for s in starts if begin <= s < end]
        if inside:
            if begin != prev_end:  # first batch of a call: validation came before it
                validate_s += inside[0] - begin
            begin = inside[0]
        ms = (end - begin) * 1000
        batch_ms.append(ms)
        if ms > 0:
            rates.append(n / (ms / 1000))
        prev_end = end
    return {
        "memories": len(memories),
        "batch_size": batch_size,
        "store_many_calls": len(calls),
        "seconds": wall,
        "per_s": len(memories) / wall,
        "batches": len(batches),
        "batch_ms": summary(batch_ms),
        "per_s_median_batch": statistics.median(rates) if rates else None,
        "validate_s": validate_s if starts else None,
    }


# --------------------------------------------------------------------------------------
# workers (each runs in its own process)
# --------------------------------------------------------------------------------------


def worker_pool(args: argparse.Namespace, ds: Dataset, out: dict[str, Any]) -> None:
    """Embed the sentence pool with the real model into its cache file."""
    start = time.perf_counter()
    vectors = MiniLmOnnxEmbedder().embed([s.text for s in ds.pool])
    out["seconds"] = time.perf_counter() - start
    out["sentences_per_s"] = len(ds.pool) / out["seconds"]
    np.save(pool_cache(ds, Path(args.workdir)), vectors)
    out["peak_rss_mb"] = peak_rss_mb()


def _memories(ds: Dataset, n: int, first: int = 0) -> list[SynthMemory]:
    return [ds.memory(i) for i in range(first, first + n)]


def worker_ingest(args: argparse.Namespace, ds: Dataset, out: dict[str, Any]) -> None:
    size: int = args.w_size
    workdir = Path(args.workdir)
    db = workdir / f"recall-{size}.db"
    fresh_db(db)
    out["rss_mb_after_import"] = current_rss_mb()
    pool = np.load(args.w_pool)
    start = time.perf_counter()
    memories = _memories(ds, size)
    vectors = memory_vectors(ds, memories, pool)
    table = {m.embedding_text: i for i, m in enumerate(memories)}
    out["generate_s"] = time.perf_counter() - start
    out["distinct_bodies"] = len({m.item.body for m in memories})
    out["mean_words"] = statistics.fmean(len(m.item.body.split()) for m in memories)
    out["tenants"] = {t: sum(m.tenant == t for m in memories) for t in ds.tenants}
    out["harness_vectors_mb"] = vectors.nbytes / 2**20
    out["rss_mb_before_ingest"] = current_rss_mb()
    embedder = LookupEmbedder(table, vectors, MiniLmOnnxEmbedder())
    mem = Memory.open(db, config={}, embedder=embedder, tenant=ds.tenants[0])
    result = ingest(
        mem,
        memories,
        ds.tenants,
        args.batch_size,
        lambda: [s for s, _ in embedder.calls],
    )
    result["lookup_ms_total"] = sum((e - s) * 1000 for s, e in embedder.calls)
    result["embedded_for_real"] = embedder.embedded_for_real
    out["ingest"] = result
    out["files_after_ingest"] = file_sizes(db)
    out["status"] = mem.status().model_dump(exclude={"location"})
    mem.close()
    out["files_after_close"] = file_sizes(db)
    out["peak_rss_mb"] = peak_rss_mb()


def worker_real_ingest(args: argparse.Namespace, ds: Dataset, out: dict[str, Any]) -> None:
    n: int = args.real_sample
    db = Path(args.workdir) / f"real-ingest-{n}.db"
    fresh_db(db)
    memories = _memories(ds, n)
    from cairn import Config
    from cairn.compose import make_embedder

    embedder = make_embedder(Config())  # exactly the embedder Memory.open() would build
    start = time.perf_counter()
    embedder.embed(["warm up the model"])
    out["model_load_s"] = time.perf_counter() - start
    mem = Memory.open(db, config={}, embedder=embedder, tenant=ds.tenants[0])
    out["ingest"] = ingest(mem, memories, ds.tenants, args.batch_size, None)
    out["embedder"] = type(embedder).__name__
    mem.close()
    out["files_after_close"] = file_sizes(db)
    out["peak_rss_mb"] = peak_rss_mb()
    db.unlink(missing_ok=True)


def _recall_once(mem: Memory, q: Query) -> tuple[dict[str, float], Any]:
    cpu = time.process_time()
    start = time.perf_counter()
    result = mem.for_tenant(q.tenant).recall(q.text, project_id=q.project)
    wall = (time.perf_counter() - start) * 1000
    timings = dict(result.timings_ms)
    row = dict(timings)
    row["wall"] = wall
    row["engine"] = wall - timings.get("embed", 0.0)
    row["untimed"] = wall - timings.get("total", 0.0)
    # CPU time of the process (all threads, the model's too): far below wall = contention.
    row["cpu"] = (time.process_time() - cpu) * 1000
    return row, result


def worker_recall(args: argparse.Namespace, ds: Dataset, out: dict[str, Any]) -> None:
    size: int = args.w_size
    db = Path(args.workdir) / f"recall-{size}.db"
    out["rss_mb_after_import"] = current_rss_mb()
    cold_q, *_ = make_queries(ds, size, 1, "cold")
    warm = make_queries(ds, size, args.warmup, "warmup")
    measured = make_queries(ds, size, args.queries, "measured")
    embedder = LookupEmbedder({}, np.empty((0, DIM), np.float32), MiniLmOnnxEmbedder())
    start = time.perf_counter()
    mem = Memory.open(db, config={}, embedder=embedder, tenant=ds.tenants[0])
    out["open_ms"] = (time.perf_counter() - start) * 1000
    row, _ = _recall_once(mem, cold_q)
    out["cold"] = {"query": cold_q.text, **row}
    out["rss_mb_after_cold"] = current_rss_mb()
    for q in warm:
        _recall_once(mem, q)
    rows: list[dict[str, float]] = []
    hits = matched = delivered = 0
    for q in measured:
        row, result = _recall_once(mem, q)
        rows.append(row)
        delivered += len(result.memories)
        if q.source is not None:
            matched += 1
            body = ds.memory(q.source).item.body
            hits += any(c.record.body == body for c in result.memories)
    stages = [s for s in (*STAGES, *DERIVED) if any(s in r for r in rows)]
    extra = sorted({k for r in rows for k in r} - set(stages))
    out["stages"] = {s: summary([r[s] for r in rows if s in r]) for s in [*stages, *extra]}
    out["queries"] = {
        "measured": len(measured),
        "warmup": len(warm),
        "matched": matched,
        "source_delivered": hits,
        "mean_delivered": delivered / max(1, len(measured)),
        "examples": [q.text for q in measured[:5]],
    }
    out["query_vectors_from_real_model"] = embedder.embedded_for_real
    if args.w_profile:
        profiler = cProfile.Profile()
        profiler.enable()
        for q in measured:
            _recall_once(mem, q)
        profiler.disable()
        out["profile"] = _write_profile(profiler, Path(args.workdir) / f"profile-recall-{size}.txt")
    mem.close()
    out["files_after_close"] = file_sizes(db)
    out["peak_rss_mb"] = peak_rss_mb()


def worker_profile_ingest(args: argparse.Namespace, ds: Dataset, out: dict[str, Any]) -> None:
    n = min(10_000, max(args.sizes))
    db = Path(args.workdir) / "profile-ingest.db"
    fresh_db(db)
    pool = np.load(args.w_pool)
    memories = _memories(ds, n)
    vectors = memory_vectors(ds, memories, pool)
    table = {m.embedding_text: i for i, m in enumerate(memories)}
    embedder = LookupEmbedder(table, vectors, MiniLmOnnxEmbedder())
    mem = Memory.open(db, config={}, embedder=embedder, tenant=ds.tenants[0])
    profiler = cProfile.Profile()
    profiler.enable()
    result = ingest(mem, memories, ds.tenants, args.batch_size, None)
    profiler.disable()
    mem.close()
    out["ingest"] = result
    out["profile"] = _write_profile(profiler, Path(args.workdir) / "profile-ingest.txt")
    fresh_db(db)


def _write_profile(profiler: cProfile.Profile, path: Path) -> str:
    buf = io.StringIO()
    for order in ("tottime", "cumulative"):
        buf.write(f"==== sorted by {order} ====\n")
        pstats.Stats(profiler, stream=buf).strip_dirs().sort_stats(order).print_stats(35)
    path.write_text(buf.getvalue(), encoding="utf-8")
    return str(path)


WORKERS: dict[str, Callable[[argparse.Namespace, Dataset, dict[str, Any]], None]] = {
    "ingest": worker_ingest,
    "recall": worker_recall,
    "real-ingest": worker_real_ingest,
    "profile-ingest": worker_profile_ingest,
    "pool": worker_pool,
}


def serve_worker(args: argparse.Namespace) -> None:
    """Inside a worker process: run the measurement ``--w-kind``, write its JSON."""
    ds = Dataset.build(args.seed, args.pool, args.tenants)
    out: dict[str, Any] = {"loadavg_start": os.getloadavg()}
    WORKERS[args.w_kind](args, ds, out)
    out["loadavg_end"] = os.getloadavg()
    out["ru_maxrss_mb"] = maxrss_mb()
    Path(args.w_out).write_text(json.dumps(out), encoding="utf-8")


# --------------------------------------------------------------------------------------
# processes and the run
# --------------------------------------------------------------------------------------


def log(message: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


def run_worker(
    script: Path, args: argparse.Namespace, kind: str, extra: list[str]
) -> dict[str, Any]:
    """Run one measurement in a fresh process of the entry point ``script``."""
    passthrough = [
        "--sizes", ",".join(map(str, args.sizes)),
        "--queries", str(args.queries),
        "--warmup", str(args.warmup),
        "--workdir", str(args.workdir),
        "--seed", str(args.seed),
        "--pool", str(args.pool),
        "--tenants", str(args.tenants),
        "--batch-size", str(args.batch_size),
        "--real-sample", str(args.real_sample),
    ]  # fmt: skip
    return run_script_worker(script, passthrough, args.workdir, kind, extra)


def run_script_worker(
    script: Path, passthrough: list[str], workdir: Path, kind: str, extra: list[str]
) -> dict[str, Any]:
    """Run one measurement in a fresh process of ``script``; return the JSON it wrote.

    A fresh process per measurement keeps peak RSS and caches of one size out of the next.
    """
    with tempfile.NamedTemporaryFile("r", suffix=".json", dir=workdir, delete=False) as handle:
        out_path = Path(handle.name)
    cmd = [
        sys.executable, str(script.resolve()), *passthrough,
        "--w-kind", kind, "--w-out", str(out_path), *extra,
    ]  # fmt: skip
    start = time.perf_counter()
    subprocess.run(cmd, check=True)
    data: dict[str, Any] = json.loads(out_path.read_text(encoding="utf-8"))
    out_path.unlink()
    data["worker_wall_s"] = time.perf_counter() - start
    return data


def orchestrate(args: argparse.Namespace, script: Path) -> None:
    """Run every measurement, each in a fresh process of ``script``, and report."""
    started = time.perf_counter()
    workdir = Path(args.workdir)
    workdir.mkdir(parents=True, exist_ok=True)
    log(f"workdir {workdir}; sizes {args.sizes}; seed {args.seed}")
    ds = Dataset.build(args.seed, args.pool, args.tenants)
    pool_file = pool_cache(ds, workdir)
    pool_info: dict[str, Any] = {"cached": pool_file.exists(), "file": str(pool_file)}
    if not pool_file.exists():
        log(f"embedding the {len(ds.pool)}-sentence pool with the real model (cached afterwards)")
        pool = run_worker(script, args, "pool", [])
        pool_info.update(seconds=pool["seconds"], sentences_per_s=pool["sentences_per_s"])
        log(f"  {pool['seconds']:.1f} s ({pool['sentences_per_s']:.0f} sentences/s)")
    common = ["--w-pool", str(pool_file)]
    report: dict[str, Any] = {
        "sizes": {},
        "ingest": {"no_embedding": {}},
        "machine": machine(),
        "method": {
            "stored_vectors": "synthetic: normalised mean of real MiniLM embeddings of the "
            f"memory's sentences + Gaussian noise (norm {NOISE_NORM}), re-normalised",
            "query_vectors": "real: MiniLmOnnxEmbedder on the query text, inside the timings",
            "sentence_pool": args.pool,
            "pool_embedding": pool_info,
            "tenants": list(ds.tenants),
            "tenant_weights": ds.tenant_weights(),
            "projects_per_tenant": PROJECTS_PER_TENANT,
            "matched_query_share": MATCHING_SHARE,
            "queries": args.queries,
            "warmup": args.warmup,
            "batch_size": args.batch_size,
            "seed": args.seed,
            "wall": "perf_counter around Memory.recall()",
        },
    }
    if args.real_sample > 0:
        log(f"ingest of {args.real_sample} memories with the real embedder")
        real = run_worker(script, args, "real-ingest", common)
        report["ingest"]["real_embedder"] = real["ingest"]
        report["ingest"]["real_embedder_model_load_s"] = real["model_load_s"]
        report["ingest"]["real_embedder_peak_rss_mb"] = real["peak_rss_mb"]
        report["ingest"]["real_embedder_loadavg_1m"] = [
            real["loadavg_start"][0],
            real["loadavg_end"][0],
        ]
        log(f"  {real['ingest']['per_s']:.1f} memories/s")
    for size in args.sizes:
        log(f"size {size}: ingest (no embedding)")
        ing = run_worker(script, args, "ingest", [*common, "--w-size", str(size)])
        log(
            f"  {ing['ingest']['per_s']:.0f} memories/s over {ing['ingest']['seconds']:.1f} s "
            f"(generation {ing['generate_s']:.1f} s)"
        )
        log(f"size {size}: recall ({args.warmup} warm-up + {args.queries} measured queries)")
        profile = ["--w-profile"] if args.profile and size == max(args.sizes) else []
        rec = run_worker(script, args, "recall", [*common, "--w-size", str(size), *profile])
        log(
            f"  wall p50 {rec['stages']['wall']['p50']:.1f} ms, "
            f"p95 {rec['stages']['wall']['p95']:.1f} ms"
        )
        report["ingest"]["no_embedding"][str(size)] = ing["ingest"]
        report["sizes"][str(size)] = {
            "recall": {
                k: rec[k]
                for k in ("stages", "cold", "open_ms", "queries", "query_vectors_from_real_model")
            },
            "ingest_no_embedding": ing["ingest"],
            "data": {k: ing[k] for k in ("distinct_bodies", "mean_words", "tenants", "generate_s")},
            "status": ing["status"],
            "rss": {
                "ingest_peak_mb": ing["peak_rss_mb"],
                "ingest_harness_vectors_mb": ing["harness_vectors_mb"],
                "ingest_before_store_mb": ing["rss_mb_before_ingest"],
                "recall_peak_mb": rec["peak_rss_mb"],
                "recall_after_import_mb": rec["rss_mb_after_import"],
                "recall_after_cold_mb": rec["rss_mb_after_cold"],
            },
            "db": {
                "after_ingest": ing["files_after_ingest"],
                "after_close": ing["files_after_close"],
            },
            "worker_wall_s": {"ingest": ing["worker_wall_s"], "recall": rec["worker_wall_s"]},
            "loadavg_1m": {
                "ingest": [ing["loadavg_start"][0], ing["loadavg_end"][0]],
                "recall": [rec["loadavg_start"][0], rec["loadavg_end"][0]],
            },
        }
        if "profile" in rec:
            report["sizes"][str(size)]["profile_file"] = rec["profile"]
    if args.profile:
        log("profiling a 10k ingest")
        prof = run_worker(script, args, "profile-ingest", common)
        report["ingest"]["profile_file"] = prof["profile"]
    report["rss"] = {
        "parent_peak_mb": peak_rss_mb(),
        "parent_ru_maxrss_mb": maxrss_mb(),
        "children_ru_maxrss_mb": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024.0,
    }
    report["targets"] = {"goals": TARGETS, "checks": target_checks(report)}
    report["wall_s"] = time.perf_counter() - started
    print_report(report)
    if args.json:
        Path(args.json).write_text(json.dumps(report, indent=2), encoding="utf-8")
        log(f"wrote {args.json}")
    if not args.keep_db:
        for size in args.sizes:
            fresh_db(workdir / f"recall-{size}.db")
