"""The cost of a write with the Markdown projection on, by how many memories people own.

Builds a SQLite store with N owned memories (half global, in ``profile.md``; half across
ten project files) and then, with the projection on, times single writes through the
embedded provider (the route every command, hook and daemon request takes):

- ``agent note``: a memory the agent infers (``store``: owned by no one, in no file);
- ``owned, small file``: an explicit memory of a project whose file holds a few entries;
- ``owned, profile``: an explicit global memory (the profile holds N/2 entries);
- ``projection off``: the same owned write with the projection off (the write itself).

Each kind is timed ``--writes`` times per repeat, over ``--repeats`` fresh copies of the
store; medians and p95 are over every write. The embedder is the hashing one: what is
measured is the write path and its files, not the model. Run it with another checkout's
``src`` first on ``PYTHONPATH`` to measure that version on the same workload:

    PYTHONPATH=src python benchmarks/markdown_writes.py [--owned 100 2000] [--writes 30]
        [--repeats 3] [--json OUT]
"""

from __future__ import annotations

import argparse
import json
import platform
import shutil
import statistics
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

import cairn
from cairn.adapters.hashing import HashingEmbedder
from cairn.compose import open_provider
from cairn.config import parse_config
from cairn.provider import contract as c

PROJECTS = [f"git:{n:016x}" for n in range(1, 11)]
SMALL = "git:" + "f" * 16  # a project whose file holds only what the benchmark writes
WORDS = ["alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta", "iota", "kappa",
         "lambda", "mu", "nu", "xi"]  # fmt: skip


def sentence(n: int) -> str:
    words = [WORDS[(n // len(WORDS) ** i) % len(WORDS)] for i in range(4)]
    return f"Rule {n}: always {' '.join(words)} before the release of build {n}."


def engine(home: Path, *, markdown: bool) -> Any:
    return open_provider(
        parse_config({}),
        path=home / "memory.db",
        home=home,
        embedder=HashingEmbedder(),
        markdown=markdown,
    )


def seed(home: Path, owned: int) -> None:
    """``owned`` explicit memories, written with the projection off, then one write with
    it on, so the files exist (and a follower has its cursor) before timing starts."""
    provider = engine(home, markdown=False)
    try:
        for n in range(owned):
            scope = {} if n % 2 == 0 else {"scope": "project", "project_id": PROJECTS[n % 10]}
            provider.apply(c.RememberRequest(body=sentence(n), idempotency_key=f"s{n}", **scope))
    finally:
        provider.close()
    provider = engine(home, markdown=True)
    try:
        provider.apply(c.RememberRequest(body="Answer in English.", idempotency_key="warm"))
    finally:
        provider.close()


def timed(home: Path, kind: str, writes: int, start: int) -> list[float]:
    provider = engine(home, markdown=kind != "projection off")
    seconds = []
    try:
        # Untimed: a copied store is another file, so the projection's first write after
        # the copy may rewrite every file (a cursor names the store it follows).
        provider.apply(c.RememberRequest(body=f"Keep commit {start} small.", idempotency_key="c"))
        for n in range(start, start + writes):
            body = sentence(100_000 + n)
            if kind == "agent note":
                request: Any = c.StoreRequest(body=body, idempotency_key=f"w{n}")
            elif kind == "owned, profile":
                request = c.RememberRequest(body=body, idempotency_key=f"w{n}")
            else:
                request = c.RememberRequest(
                    body=body, idempotency_key=f"w{n}", scope="project", project_id=SMALL
                )
            began = time.perf_counter()
            provider.apply(request)
            seconds.append(time.perf_counter() - began)
    finally:
        provider.close()
    return seconds


def p95(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--owned", type=int, nargs="+", default=[100, 2000])
    parser.add_argument("--writes", type=int, default=30)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    kinds = ["agent note", "owned, small file", "owned, profile", "projection off"]
    source = Path(cairn.__file__).parent
    commit = subprocess.run(
        ["git", "-C", str(source), "rev-parse", "--short", "HEAD"],
        capture_output=True, text=True, check=False,
    ).stdout.strip()  # fmt: skip
    results: dict[str, Any] = {"cairn": str(source), "commit": commit,
                               "python": platform.python_version(), "runs": {}}  # fmt: skip
    for owned in args.owned:
        with tempfile.TemporaryDirectory(prefix="cairn-md-bench-") as tmp:
            built = Path(tmp) / "built"
            built.mkdir()
            seed(built, owned)
            samples: dict[str, list[float]] = {k: [] for k in kinds}
            for repeat in range(args.repeats):
                for i, kind in enumerate(kinds):
                    home = Path(tmp) / f"r{repeat}-{i}"
                    shutil.copytree(built, home)
                    samples[kind] += timed(home, kind, args.writes, repeat * 1000)
                    shutil.rmtree(home)
        row = {}
        for kind, seconds in samples.items():
            median = statistics.median(seconds)
            row[kind] = {
                "median_ms": round(median * 1000, 2),
                "p95_ms": round(p95(seconds) * 1000, 2),
                "writes_per_s": round(1 / median, 1),
                "n": len(seconds),
            }
            print(f"{commit} owned={owned:5d} {kind:18s} median {row[kind]['median_ms']:7.2f} ms"
                  f"  p95 {row[kind]['p95_ms']:7.2f} ms  {row[kind]['writes_per_s']:7.1f}/s",
                  flush=True)  # fmt: skip
        results["runs"][str(owned)] = row
    if args.json is not None:
        args.json.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
