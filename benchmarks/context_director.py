"""Context director latency: ``Memory.context`` p50/p95 with N records in the store.

Method: N memories (policies and preferences with project, path, operation and phase
selectors, plus facts and episodes) across 20 projects, stored through the public API.
Embedding N texts with the real model takes minutes on 2 cores, so stored vectors are
synthetic: each memory's vector is the real MiniLM embedding of its template sentence
plus small noise (clustered like real embeddings). Task texts are embedded by the real
model at query time, as in production. Each measured call also writes its application
records (journal-first), as the real command does.

    python benchmarks/context_director.py [--records 10000] [--tasks 200] [--json OUT]
"""

from __future__ import annotations

import argparse
import json
import platform
import random
import statistics
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from cairn import Memory, MemoryInput
from cairn.adapters.embedding import MiniLmOnnxEmbedder

TEMPLATES = [
    "Always use {tool} to {verb} in this repository",
    "Never {verb} directly on {branch}; open a pull request first",
    "In {path} write the failing test before the {thing}",
    "Prefer {style} for {thing} code and explain exceptions in a comment",
    "The {thing} service reads its settings from {path}",
    "Run {tool} before every {verb}; CI rejects changes without it",
    "{person} reviews {thing} changes and prefers small commits",
    "Last week the {thing} release failed because {tool} was skipped",
]
WORDS = {
    "tool": ["pnpm", "ruff", "eslint", "black", "mypy", "pytest", "cargo", "make lint"],
    "verb": ["install dependencies", "commit", "push", "deploy", "release", "merge"],
    "branch": ["main", "release", "production"],
    "path": ["src/api/**", "docs/**", "src/web/**/*.ts", "config/flags.yaml", "db/migrations"],
    "thing": ["billing", "checkout", "search", "auth", "payments", "reporting", "handler"],
    "style": ["dataclasses", "pure functions", "small modules", "explicit types"],
    "person": ["Dana", "Lee", "Priya", "Marco"],
}
OPERATIONS = ["edit", "commit", "test", "review", "deploy"]
PHASES = ["plan", "implement", "verify", "release"]


class TemplateEmbedder:
    """Stored texts: template vector + noise; anything else: the real model."""

    def __init__(self, real: MiniLmOnnxEmbedder, table: dict[str, np.ndarray]) -> None:
        self._real = real
        self._table = table
        self.model_id = real.model_id
        self.dim = real.dim

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        missing = [i for i, t in enumerate(texts) if t not in self._table]
        if missing:
            out[missing] = self._real.embed([texts[i] for i in missing])
        for i, text in enumerate(texts):
            if text in self._table:
                out[i] = self._table[text]
        return out


def fill(template: str, rng: random.Random) -> str:
    return template.format(**{k: rng.choice(v) for k, v in WORDS.items()})


def build(records: int, rng: random.Random, real: MiniLmOnnxEmbedder):  # type: ignore[no-untyped-def]
    sentences = sorted({fill(t, rng) for t in TEMPLATES for _ in range(60)})
    base = dict(zip(sentences, real.embed(sentences), strict=True))
    items: list[MemoryInput] = []
    table: dict[str, np.ndarray] = {}
    for n in range(records):
        sentence = rng.choice(sentences)
        body = f"{sentence} (note {n})"
        vec = base[sentence] + np.random.default_rng(n).normal(0, 0.02, real.dim)
        table[body] = (vec / np.linalg.norm(vec)).astype(np.float32)
        kind = rng.choice(["policy", "policy", "preference", "fact", "episode"])
        project = f"project-{rng.randrange(20)}"
        scoped = rng.random() < 0.6
        items.append(
            MemoryInput(
                body=body,
                kind=kind,
                scope="project" if scoped else "global",
                project_id=project if scoped else None,
                path_patterns=(rng.choice(WORDS["path"]),) if rng.random() < 0.3 else (),
                operations=(rng.choice(OPERATIONS),) if rng.random() < 0.3 else (),
                phases=(rng.choice(PHASES),) if rng.random() < 0.2 else (),
            )
        )
    return items, table


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=10_000)
    parser.add_argument("--tasks", type=int, default=200)
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()
    rng = random.Random(7)
    real = MiniLmOnnxEmbedder()
    items, table = build(args.records, rng, real)
    with tempfile.TemporaryDirectory() as tmp:
        mem = Memory.open(
            Path(tmp) / "memory.db", config={}, embedder=TemplateEmbedder(real, table)
        )
        start = time.perf_counter()
        mem.store_many(items, batch_size=1000)
        ingest_s = time.perf_counter() - start
        tasks = [fill(rng.choice(TEMPLATES), rng) for _ in range(args.tasks + 10)]
        timings: list[float] = []
        sizes: list[int] = []
        for i, task in enumerate(tasks):
            t0 = time.perf_counter()
            ctx = mem.context(
                task,
                project_id=f"project-{rng.randrange(20)}",
                paths=(rng.choice(["src/api/users.py", "docs/index.md", "src/web/app.ts"]),),
                operation=rng.choice(OPERATIONS),
                phase=rng.choice(PHASES),
            )
            elapsed = (time.perf_counter() - t0) * 1000
            if i >= 10:  # the first calls warm the model and the vector cache
                timings.append(elapsed)
                sizes.append(len(ctx.resident) + len(ctx.manifest))
        mem.close()
    timings.sort()
    result = {
        "records": args.records,
        "tasks": len(timings),
        "context_ms": {
            "p50": statistics.median(timings),
            "p95": timings[int(0.95 * (len(timings) - 1))],
            "max": timings[-1],
        },
        "items_per_task": statistics.mean(sizes),
        "ingest_s_without_model": ingest_s,
        "machine": {"python": platform.python_version(), "cpus": __import__("os").cpu_count()},
    }
    print(f"{'records':>8} {'tasks':>6} {'p50 ms':>8} {'p95 ms':>8} {'max ms':>8} {'items':>6}")
    c = result["context_ms"]
    print(
        f"{args.records:>8} {len(timings):>6} {c['p50']:>8.1f} {c['p95']:>8.1f}"
        f" {c['max']:>8.1f} {result['items_per_task']:>6.1f}"
    )
    if args.json:
        args.json.write_text(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
