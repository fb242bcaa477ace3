"""Ingest throughput: ``cairn ingest`` with the real model, and ``store_many`` without it.

    python benchmarks/ingest.py --data /path/to/locomo10.json
    python benchmarks/ingest.py --data ... --lines 1000 --runs 3 --baseline /tmp/base/src
    python benchmarks/ingest.py --only bulk --bulk-size 20000 --json out.json

Two measurements, each run ``--runs`` times in a fresh subprocess and a fresh home, the
trees given alternating (this checkout's ``src``, then ``--baseline`` when given, e.g. a
worktree of the previous main), so both see the same machine:

    cli    ``cairn ingest FILE --json`` inside a throwaway git repository: the first
           ``--lines`` LoCoMo turns as JSONL (``{"body": "<speaker>: <text>"}``), the
           real model embedding every body, each line read as a statement, as a user's
           ingest runs. Reports memories/s (wall) and the process's CPU seconds; with
           ``--archive`` also ``cairn export``, then ``cairn import`` of it into another
           tenant and ``cairn rebuild`` of that tenant, each timed the same way.
    bulk   ``Memory.store_many`` of ``--bulk-size`` memories of the latency corpus
           (``latency/corpus.py``) with random unit vectors: the write path without the
           model (validation, the secret policy, the commit, the indexes).

The machine's 1-minute load average is printed beside every run: on a shared machine
wall times measure the queue for a core, and CPU per memory is the steadier figure.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
SRC = HERE.parent / "src"

BULK_WORKER = """
import json, sys, time, tempfile
from pathlib import Path
sys.path.insert(0, {bench!r})
import numpy as np
from latency.corpus import Dataset
from cairn import Memory

class RandomVectors:
    model_id = "all-MiniLM-L6-v2-onnx-int8"
    dim = 384
    def __init__(self):
        self.rng = np.random.default_rng(0)
    def embed(self, texts):
        v = self.rng.standard_normal((len(texts), 384)).astype(np.float32)
        return v / np.linalg.norm(v, axis=1, keepdims=True)

ds = Dataset.build(7, 2000, 4)
by = {{}}
for i in range({size}):
    m = ds.memory(i)
    by.setdefault(m.tenant, []).append(m.item)
folder = tempfile.mkdtemp()
mem = Memory.open(Path(folder) / "b.db", config={{}}, embedder=RandomVectors(),
                  tenant=ds.tenants[0])
cpu, wall = time.process_time(), time.perf_counter()
for tenant, items in by.items():
    mem.for_tenant(tenant).store_many(items)
print(json.dumps({{"wall_s": time.perf_counter() - wall, "cpu_s": time.process_time() - cpu}}))
mem.close()
"""


def load() -> float:
    return os.getloadavg()[0]


def locomo_lines(data: Path, n: int) -> list[str]:
    conversations = json.loads(data.read_text(encoding="utf-8"))
    out: list[str] = []
    for conv in conversations:
        turns = conv["conversation"]
        for key in sorted(turns):
            if key.startswith("session_") and isinstance(turns[key], list):
                for turn in turns[key]:
                    out.append(json.dumps({"body": f"{turn['speaker']}: {turn['text']}"}))
                    if len(out) == n:
                        return out
    return out


def run_cli(src: Path, lines_file: Path, n: int, with_archive: bool) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as folder:
        repo = Path(folder) / "repo"
        repo.mkdir()
        git = ["git", "-C", str(repo), "-c", "user.email=b@b", "-c", "user.name=b"]
        subprocess.run([*git, "init", "-q"], check=True)
        subprocess.run([*git, "commit", "-q", "--allow-empty", "-m", "init"], check=True)
        subprocess.run([*git, "remote", "add", "origin", "https://example.com/b.git"], check=True)
        env = {**os.environ, "CAIRN_HOME": str(Path(folder) / "home"), "PYTHONPATH": str(src)}

        def timed(*args: str) -> tuple[dict[str, Any], float, float]:
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            start = time.perf_counter()
            done = subprocess.run(
                [sys.executable, "-m", "cairn.cli.main", "--json", *args],
                cwd=repo, env=env, capture_output=True, text=True, check=True,
            )  # fmt: skip
            wall = time.perf_counter() - start
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
            return json.loads(done.stdout), wall, cpu

        answer, wall, cpu = timed("ingest", str(lines_file))
        row: dict[str, Any] = {"stored": answer["stored"], "wall_s": wall, "cpu_s": cpu,
                               "per_s": n / wall, "cpu_ms_per_memory": cpu * 1000 / n}  # fmt: skip
        if with_archive:  # the same memories through `cairn import` and `cairn rebuild`
            timed("export", str(Path(folder) / "all.jsonl"))
            for name, args in (
                ("import", ("--tenant", "copy", "import", str(Path(folder) / "all.jsonl"))),
                ("rebuild", ("--tenant", "copy", "rebuild")),
            ):
                _, wall, cpu = timed(*args)
                row[name] = {"wall_s": wall, "cpu_s": cpu, "per_s": n / wall,
                             "cpu_ms_per_memory": cpu * 1000 / n}  # fmt: skip
    row["load"] = load()
    return row


def run_bulk(src: Path, size: int) -> dict[str, Any]:
    code = BULK_WORKER.format(bench=str(HERE), size=size)
    env = {**os.environ, "PYTHONPATH": str(src)}
    done = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
    )
    out: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    out.update(per_s=size / out["wall_s"], per_cpu_s=size / out["cpu_s"], load=load())
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", type=Path, help="locomo10.json (for the cli measurement)")
    parser.add_argument("--lines", type=int, default=1000)
    parser.add_argument("--bulk-size", type=int, default=5000)
    parser.add_argument("--runs", type=int, default=2)
    parser.add_argument("--only", choices=("cli", "bulk"))
    parser.add_argument(
        "--archive", action="store_true",
        help="cli: also `cairn export`, then `import` into another tenant and `rebuild` it",
    )  # fmt: skip
    parser.add_argument("--baseline", type=Path, help="another tree's src folder, run beside")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    trees = {"this": SRC, **({"baseline": args.baseline} if args.baseline else {})}
    kinds = [k for k in ("cli", "bulk") if args.only in (None, k)]
    if "cli" in kinds and args.data is None:
        parser.error("--data locomo10.json is needed for the cli measurement (or --only bulk)")
    report: dict[str, Any] = {"lines": args.lines, "bulk_size": args.bulk_size, "runs": {}}
    with tempfile.TemporaryDirectory() as folder:
        lines_file = Path(folder) / "lines.jsonl"
        if "cli" in kinds:
            lines_file.write_text("\n".join(locomo_lines(args.data, args.lines)) + "\n")
        for kind in kinds:
            for n in range(args.runs):
                for name, src in trees.items():
                    if kind == "cli":
                        row = run_cli(src, lines_file, args.lines, args.archive)
                        said = (f"{row['per_s']:7.1f}/s wall  {row['cpu_ms_per_memory']:6.1f} ms"
                                " CPU a memory")  # fmt: skip
                        for step in ("import", "rebuild"):
                            if step in row:
                                said += (f"; {step} {row[step]['per_s']:7.1f}/s"
                                         f" {row[step]['cpu_ms_per_memory']:6.1f} ms")  # fmt: skip
                    else:
                        row = run_bulk(src, args.bulk_size)
                        said = f"{row['per_s']:7.0f}/s wall  {row['per_cpu_s']:6.0f}/CPU-s"
                    report["runs"].setdefault(kind, {}).setdefault(name, []).append(row)
                    print(f"{kind:4s} run {n + 1} {name:8s} {said}  load {row['load']:.1f}")
    if args.json:
        args.json.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
