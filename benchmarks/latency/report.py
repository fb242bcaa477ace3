"""The report of the latency benchmark: the printed tables and the target checks.

Reads only the report dict the harness assembles (:func:`latency.harness.orchestrate`),
so a saved ``--json`` can be printed again with :func:`print_report`.
"""

from __future__ import annotations

import os
import platform
import sqlite3
from importlib import metadata
from pathlib import Path
from typing import Any

import numpy as np

from cairn import __version__

STAGES = (
    "formulate",
    "lane.keyword",
    "embed",
    "lane.vector",
    "fuse",
    "fetch",
    "score",
    "budget",
    "format",
    "total",
)
DERIVED = ("untimed", "wall", "engine", "cpu")
# The team's goals, checked at the largest size (set for 100k).
TARGETS = {"wall_p95_ms": 40.0, "engine_p95_ms": 15.0, "ingest_per_s": 5000.0}


def machine() -> dict[str, Any]:
    cpu = "unknown"
    mem_total = None
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal"):
                mem_total = round(int(line.split()[1]) / 2**20, 1)
    except OSError:
        pass
    return {
        "cpus": os.cpu_count(),
        "cpu": cpu,
        "mem_gib": mem_total,
        "platform": platform.platform(),
        "python": platform.python_version(),
        "numpy": np.__version__,
        "onnxruntime": metadata.version("onnxruntime"),
        "sqlite": sqlite3.sqlite_version,
        "cairn": __version__,
        "loadavg_at_start": os.getloadavg(),
    }


def _fmt(v: float | None, digits: int = 2) -> str:
    if v is None or (isinstance(v, float) and np.isnan(v)):
        return "-"
    return f"{v:.{digits}f}"


def print_report(report: dict[str, Any]) -> None:
    sizes = list(report["sizes"])
    print()
    print(f"cairn recall benchmark — {report['machine']['cpus']} CPUs, {report['machine']['cpu']}")
    print(
        "stored vectors: SYNTHETIC (mean of real sentence embeddings + noise); "
        "query vectors: REAL model"
    )
    loads = [report["machine"]["loadavg_at_start"][0]]
    for d in report["sizes"].values():
        loads += [x for pair in d["loadavg_1m"].values() for x in pair]
    print(f"1-min load average during the run: {min(loads):.1f}-{max(loads):.1f}", end="")
    busy = max(loads) > 1.5 * (report["machine"]["cpus"] or 1)
    print(" -- the machine was busy; treat absolute numbers with care" if busy else "")
    print()
    print("Recall latency, warm (ms); 'wall' = end to end incl. query embedding;")
    print("'engine' = wall - embed; 'untimed' = wall - sum of stages; 'cpu' = process CPU")
    head = f"{'stage':<14}" + "".join(f"{s + ' p50':>13}{s + ' p95':>13}" for s in sizes)
    print(head)
    print("-" * len(head))
    order = [*STAGES, *DERIVED]
    extra = sorted({k for s in sizes for k in report["sizes"][s]["recall"]["stages"]} - set(order))
    for stage in [*order, *extra]:
        cells = ""
        for s in sizes:
            st = report["sizes"][s]["recall"]["stages"].get(stage)
            cells += f"{_fmt(st['p50'] if st else None):>13}{_fmt(st['p95'] if st else None):>13}"
        print(f"{stage:<14}{cells}")
    print()
    print("Cold (first query in a fresh process; single query, shown for scale only)")
    print(
        f"{'size':>8} {'open ms':>9} {'wall ms':>9} {'embed ms':>9} {'vector ms':>10} "
        f"{'keyword ms':>11}"
    )
    for s in sizes:
        r = report["sizes"][s]["recall"]
        c = r["cold"]
        print(
            f"{s:>8} {_fmt(r['open_ms'], 1):>9} {_fmt(c['wall'], 1):>9} "
            f"{_fmt(c.get('embed'), 1):>9} {_fmt(c.get('lane.vector'), 1):>10} "
            f"{_fmt(c.get('lane.keyword'), 1):>11}"
        )
    print()
    print("Sanity (not a quality metric): matched queries whose source memory was delivered")
    for s in sizes:
        q = report["sizes"][s]["recall"]["queries"]
        print(
            f"{s:>8}: {q['source_delivered']}/{q['matched']} matched; "
            f"{q['mean_delivered']:.1f} memories delivered per query on average"
        )
    print()
    print("Ingest (store_many)")
    print(
        f"{'run':<28} {'memories':>9} {'batch':>6} {'overall/s':>10} "
        f"{'median batch/s':>15} {'batch p50 ms':>13} {'batch p95 ms':>13}"
    )
    real = report["ingest"].get("real_embedder")
    rows: list[tuple[str, dict[str, Any]]] = []
    if real:
        rows.append(("real model (MiniLM ONNX)", real))
    for s in sizes:
        rows.append((f"no embedding, {s}", report["ingest"]["no_embedding"][s]))
    for name, r in rows:
        print(
            f"{name:<28} {r['memories']:>9} {r['batch_size']:>6} {_fmt(r['per_s'], 0):>10} "
            f"{_fmt(r['per_s_median_batch'], 0):>15} {_fmt(r['batch_ms']['p50'], 1):>13} "
            f"{_fmt(r['batch_ms']['p95'], 1):>13}"
        )
    print()
    print("Peak RSS (MiB, VmHWM of each worker process)")
    print(
        f"{'size':>8} {'ingest':>9} {'(harness vectors)':>18} {'recall':>9} "
        f"{'recall after cold':>18}"
    )
    for s in sizes:
        d = report["sizes"][s]
        print(
            f"{s:>8} {_fmt(d['rss']['ingest_peak_mb'], 0):>9} "
            f"{_fmt(d['rss']['ingest_harness_vectors_mb'], 0):>18} "
            f"{_fmt(d['rss']['recall_peak_mb'], 0):>9} "
            f"{_fmt(d['rss']['recall_after_cold_mb'], 0):>18}"
        )
    if real:
        peak = report["ingest"]["real_embedder_peak_rss_mb"]
        print(f"real-model ingest worker: {_fmt(peak, 0)} MiB")
    print(
        f"parent: {_fmt(report['rss']['parent_peak_mb'], 0)} MiB; ru_maxrss of the largest "
        f"child: {_fmt(report['rss']['children_ru_maxrss_mb'], 0)} MiB"
    )
    print()
    print("Database size (MiB)")
    print(f"{'size':>8} {'db':>9} {'wal':>9} {'db after close':>15} {'bytes/memory':>13}")
    for s in sizes:
        f = report["sizes"][s]["db"]
        print(
            f"{s:>8} {f['after_ingest']['db_bytes'] / 2**20:>9.1f} "
            f"{f['after_ingest']['wal_bytes'] / 2**20:>9.1f} "
            f"{f['after_close']['db_bytes'] / 2**20:>15.1f} "
            f"{f['after_close']['db_bytes'] / int(s):>13.0f}"
        )
    print()
    checks = report.get("targets", {}).get("checks", [])
    if checks:
        print("Targets")
        for c in checks:
            print(
                f"  {c['what']:<52} {c['measured']:>10.1f} {c['op']} {c['target']:<8} "
                f"{c['verdict']}"
            )
    print(f"\nwall time of the whole run: {report['wall_s'] / 60:.1f} min")


def target_checks(report: dict[str, Any]) -> list[dict[str, Any]]:
    sizes = [int(s) for s in report["sizes"]]
    checks: list[dict[str, Any]] = []
    big = str(max(sizes))
    stages = report["sizes"][big]["recall"]["stages"]
    for what, key, target in (
        (f"recall wall p95 at {big}, incl. query embedding (ms)", "wall", TARGETS["wall_p95_ms"]),
        (f"engine (wall - embed) p95 at {big} (ms)", "engine", TARGETS["engine_p95_ms"]),
    ):
        measured = stages[key]["p95"]
        checks.append(
            {
                "what": what,
                "measured": measured,
                "op": "<=",
                "target": target,
                "verdict": "PASS" if measured <= target else "FAIL",
            }
        )
    for s in sizes:
        rate = report["ingest"]["no_embedding"][str(s)]["per_s"]
        checks.append(
            {
                "what": f"ingest without embedding at {s} (memories/s)",
                "measured": rate,
                "op": ">=",
                "target": TARGETS["ingest_per_s"],
                "verdict": "PASS" if rate >= TARGETS["ingest_per_s"] else "FAIL",
            }
        )
    return checks
