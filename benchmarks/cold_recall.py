"""A cold ``cairn recall`` (no daemon), whole processes, two or more versions of cairn
alternating run by run on copies of one store.

Each run is a new ``python -m cairn.cli.fast recall QUERY`` process (Python's start, the
imports, the store's open and first refresh, the model's load, one query embedding and
the recall) in the benchmark repository of ``benchmarks/hooks.py``'s store (build it
once with ``hooks.py --reuse DIR``, or let this script build it under ``--store``). Each
tree's ``src`` goes first on PYTHONPATH, its bytecode compiled first; the runs go
tree A, tree B, tree A, ... so both see the same load. Wall and CPU (user + system of the
process) p50 / p95 per tree, and the 1-minute load average before and after.

    python benchmarks/cold_recall.py --store DIR/store --trees OLD/src NEW/src
        [--runs 20] [--json OUT]
"""

from __future__ import annotations

import argparse
import compileall
import json
import os
import random
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from hooks import TEMPLATES, fill, prepare


def run_once(tree: Path, root: Path, query: str) -> tuple[float, float, bytes]:
    """Wall and CPU ms of one cold recall with ``tree``'s cairn on the store under ``root``."""
    env = {**os.environ, "PYTHONPATH": str(tree), "CAIRN_HOME": str(root / "home")}
    for name in ("CAIRN_CONFIG", "CAIRN_DATABASE_URL", "PYTHONDONTWRITEBYTECODE"):
        env.pop(name, None)
    command = [sys.executable, "-m", "cairn.cli.fast", "recall", query]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.run(command, cwd=root / "shop", env=env, capture_output=True)
    wall = (time.perf_counter() - start) * 1000
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime) * 1000
    if proc.returncode != 0:
        raise SystemExit(f"{tree}: recall failed: {proc.stderr.decode()[-2000:]}")
    return wall, cpu, proc.stdout


def summary(samples: list[float]) -> dict[str, float]:
    ordered = sorted(samples)
    return {
        "runs": len(ordered),
        "p50": round(statistics.median(ordered), 1),
        "p95": round(ordered[round(0.95 * (len(ordered) - 1))], 1),
        "min": round(ordered[0], 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--store", type=Path, required=True, help="hooks.py's store")
    parser.add_argument("--trees", type=Path, nargs="+", required=True, help="src folders")
    parser.add_argument("--runs", type=int, default=20, help="runs per tree")
    parser.add_argument("--records", type=int, default=10_000)
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()
    prepare(args.store, args.records, random.Random(11))
    rng = random.Random(5)
    queries = [fill(rng.choice(TEMPLATES), rng) for _ in range(args.runs)]
    walls: dict[str, list[float]] = {str(t): [] for t in args.trees}
    cpus: dict[str, list[float]] = {str(t): [] for t in args.trees}
    outputs: dict[str, list[bytes]] = {str(t): [] for t in args.trees}
    with tempfile.TemporaryDirectory() as tmp:
        roots = {}
        for n, tree in enumerate(args.trees):
            compileall.compile_dir(str(tree), quiet=1)
            roots[str(tree)] = root = Path(tmp) / f"tree-{n}"
            shutil.copytree(args.store, root, symlinks=True)
            run_once(tree.resolve(), root, "warm the file cache")
        load_before = os.getloadavg()[0]
        for i, query in enumerate(queries):
            order = args.trees if i % 2 == 0 else list(reversed(args.trees))
            for tree in order:
                wall, cpu, out = run_once(tree.resolve(), roots[str(tree)], query)
                walls[str(tree)].append(wall)
                cpus[str(tree)].append(cpu)
                outputs[str(tree)].append(out)
        load_after = os.getloadavg()[0]
    first = outputs[str(args.trees[0])]
    same = {t: outs == first for t, outs in outputs.items()}
    loads = f"{load_before:.2f} -> {load_after:.2f}"
    print(f"{args.runs} cold recalls per tree, alternating; load {loads}")
    print(f"{'tree':<40} {'wall p50':>9} {'wall p95':>9} {'cpu p50':>8} {'cpu p95':>8}  output")
    result: dict[str, Any] = {"load_before_after": [load_before, load_after], "trees": {}}
    for tree in walls:
        w, c = summary(walls[tree]), summary(cpus[tree])
        print(f"{tree:<40} {w['p50']:>9.0f} {w['p95']:>9.0f} {c['p50']:>8.0f} {c['p95']:>8.0f}"
              f"  {'same as the first tree' if same[tree] else 'DIFFERS'}")  # fmt: skip
        result["trees"][tree] = {"wall_ms": w, "cpu_ms": c, "output_same": same[tree]}
    if args.json:
        args.json.write_text(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
