"""Context precision: is "Apply these" only what applies, and is nothing else shown?

The set ``benchmarks/data/context_precision.json`` holds a store of rules, preferences and
facts across two repositories (``shop``, a TypeScript web app; ``billing``, a Python
service) and global memory, with paths, operations and phases, in English and Chinese;
and coding tasks, each labelled with the records that must be resident, those that may be
in the manifest, and those that must not appear (everything of the other repository).

Every record is stored through the public API in a fresh SQLite store with the default
embedder (the real model); each task goes through ``Memory.context`` with its repository,
paths, operation and phase, as a hook or the CLI would send them. Reported:

- resident precision and recall (micro-averaged over tasks; the core profile, resident
  by design, is counted apart);
- manifest precision (manifest items that are labelled resident or may-be-in-manifest);
- leaks: any item of the other repository shown at all (must be 0);
- how many whyApplied lines are the old generic phrase (must be 0).

    python benchmarks/context_precision.py [--embedder minilm-onnx|hashing] [--json OUT]
"""

from __future__ import annotations

import argparse
import json
import platform
import tempfile
import time
from pathlib import Path
from typing import Any

from cairn import Memory

DATA = Path(__file__).parent / "data" / "context_precision.json"
PROJECTS = {"shop": "git:5a0b000000000001", "billing": "git:b111000000000002"}
GENERIC = "relevant to the task text"


def build(mem: Memory, records: list[dict[str, Any]]) -> dict[str, str]:
    """Store every record; the record key by stored id."""
    keys: dict[str, str] = {}
    for r in records:
        scope = "global" if r["scope"] == "global" else "project"
        made = mem.remember(
            r["body"],
            kind=r["kind"],
            scope=scope,
            project_id=PROJECTS.get(r["scope"]),
            path_patterns=r["paths"],
            operations=r["operations"],
            phases=r["phases"],
        )
        keys[made.id] = r["key"]
    return keys


def measure(mem: Memory, keys: dict[str, str], tasks: list[dict[str, Any]]) -> dict[str, Any]:
    hit = resident_n = wanted_n = manifest_ok = manifest_n = leaks = generic = profile = 0
    misses: list[dict[str, Any]] = []
    for t in tasks:
        ctx = mem.context(
            t["task"],
            project_id=PROJECTS[t["repo"]],
            paths=t["paths"],
            operation=t["operation"],
            phase=t["phase"],
        )
        must, may = set(t["must_resident"]), set(t["may_manifest"])
        never = set(t["must_not_appear"])
        resident = set()
        for item in ctx.resident:
            key = keys[item.record_id]
            if item.kind == "profile":
                profile += 1
                continue
            resident.add(key)
        manifest = {keys[i.record_id] for i in ctx.manifest}
        shown = resident | manifest
        leaks += len(shown & never & other_repo(t, keys))
        generic += sum(GENERIC in w for i in (*ctx.resident, *ctx.manifest) for w in i.why_applied)
        hit += len(resident & must)
        resident_n += len(resident)
        wanted_n += len(must)
        manifest_ok += len(manifest & (must | may))
        manifest_n += len(manifest)
        if resident != must:
            misses.append(
                {
                    "task": t["task"],
                    "missing": sorted(must - resident),
                    "extra": sorted(resident - must),
                }
            )
    return {
        "tasks": len(tasks),
        "resident_precision": hit / resident_n if resident_n else 1.0,
        "resident_recall": hit / wanted_n if wanted_n else 1.0,
        "manifest_precision": manifest_ok / manifest_n if manifest_n else 1.0,
        "resident_items": resident_n,
        "labelled_resident": wanted_n,
        "manifest_items": manifest_n,
        "profile_resident": profile,
        "other_repository_leaks": leaks,
        "generic_why": generic,
        "misses": misses,
    }


_OTHER: dict[str, set[str]] = {}


def other_repo(task: dict[str, Any], keys: dict[str, str]) -> set[str]:
    """Keys of the records bound to the repository the task is not in."""
    return _OTHER["billing" if task["repo"] == "shop" else "shop"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--embedder", default="minilm-onnx")
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()
    data = json.loads(DATA.read_text(encoding="utf-8"))
    for repo in PROJECTS:
        _OTHER[repo] = {r["key"] for r in data["records"] if r["scope"] == repo}
    config = {"memory": {"embeddings": {"provider": args.embedder}, "markdown": {"enabled": False}}}
    with tempfile.TemporaryDirectory() as tmp:
        started = time.perf_counter()
        with Memory.open(Path(tmp) / "memory.db", config=config) as mem:
            keys = build(mem, data["records"])
            result = measure(mem, keys, data["tasks"])
        seconds = time.perf_counter() - started
    print(f"context precision: {len(data['records'])} records, {result['tasks']} tasks, "
          f"embedder {args.embedder}, {seconds:.0f} s")  # fmt: skip
    print("| measure | value | target |")
    print("|---|---|---|")
    print(f"| resident precision | {result['resident_precision']:.3f} | ≥ 0.90 |")
    print(f"| resident recall | {result['resident_recall']:.3f} | ≥ 0.90 |")
    print(f"| manifest precision | {result['manifest_precision']:.3f} | — |")
    print(f"| other repository's items shown | {result['other_repository_leaks']} | 0 |")
    print(f"| generic whyApplied lines | {result['generic_why']} | 0 |")
    print(
        f"resident {result['resident_items']} (labelled {result['labelled_resident']}),"
        f" manifest {result['manifest_items']},"
        f" core profile resident {result['profile_resident']}"
    )
    for miss in result["misses"][:15]:
        print(f"  {miss['task']!r}: missing {miss['missing']} extra {miss['extra']}")
    if args.json:
        result["machine"] = platform.platform()
        args.json.write_text(json.dumps(result, ensure_ascii=False, indent=2), encoding="utf-8")


if __name__ == "__main__":
    main()
