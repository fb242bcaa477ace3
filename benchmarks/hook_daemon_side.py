"""What the daemon does for one hook, measured in one process: the daemon's engine (opened
and warmed as ``cairn daemon start`` opens it), then ``run_hook`` on each prompt as the
daemon's ``/local/hook`` route runs it, the home's Markdown refreshed after each reply
(untimed, as the route does it after sending the reply). The store and the prompts are
``benchmarks/hooks.py``'s (build it once with ``hooks.py --reuse DIR``); each run works
on a fresh copy of it. ``--time`` names functions (``module:Class.method``) to time: wall
ms a hook and calls a hook, nested times included, counted wherever they run (the
refresh after the reply included: the Markdown follower shows there).

    python benchmarks/hook_daemon_side.py --store DIR/store [--prompts 100]
        [--profile OUT.prof] [--time cairn.hooks.handlers:_signal ...]

Alternate two versions of cairn by running this twice with another PYTHONPATH.
"""

from __future__ import annotations

import argparse
import cProfile
import functools
import gc
import importlib
import os
import random
import shutil
import statistics
import tempfile
import time
from collections import Counter, defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

from cairn.config import Config
from cairn.hooks.run import run_hook
from cairn.provider import contract as c
from cairn.provider.attribution import COMMAND_LINE
from cairn.provider.client import Client
from cairn.server.run import open_engine
from hooks import TEMPLATES, fill, prompt_event

SPENT: defaultdict[str, float] = defaultdict(float)
CALLS: Counter[str] = Counter()


def timed(path: str) -> None:
    """Wrap ``module:Owner.name`` so that its wall time adds up in :data:`SPENT`."""
    module, _, name = path.partition(":")
    owner: Any = importlib.import_module(module)
    *outer, last = name.split(".")
    for part in outer:
        owner = getattr(owner, part)
    inner = getattr(owner, last)

    @functools.wraps(inner)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        start = time.perf_counter()
        try:
            return inner(*args, **kwargs)
        finally:
            SPENT[path] += time.perf_counter() - start
            CALLS[path] += 1

    setattr(owner, last, wrapper)


def p95(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[round(0.95 * (len(ordered) - 1))]


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--store", type=Path, required=True, help="hooks.py's store folder")
    parser.add_argument("--prompts", type=int, default=100)
    parser.add_argument("--profile", type=Path, default=None)
    parser.add_argument("--time", nargs="*", default=[])
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp) / "run"
        shutil.copytree(args.store, work, symlinks=True)
        home, repo = work / "home", work / "shop"
        os.environ["CAIRN_HOME"] = str(home)
        engine = open_engine(Config(), home, daemon=True)
        Client(engine).query(c.RecallQuery, c.RecallResponse, query="warm up")
        gc.collect()
        gc.freeze()  # as the daemon does after its warm-up
        rng = random.Random(11)

        def hook(i: int, tag: str) -> tuple[str, Callable[[], Any]]:
            prompt = fill(rng.choice(TEMPLATES), rng).replace("Always", "How do I")
            raw = prompt_event(f"bench-{tag}-{i // 10:04d}", repo, prompt)
            bound = engine.bound(tenant="default", agent="default")
            held = getattr(bound, "files_later", None)  # absent before a8cc31c
            provider, refresh = held() if held is not None else (bound, list)
            client = Client(provider, attribution=COMMAND_LINE)
            return run_hook("claude-code", "prompt", raw, lambda: client, home), refresh

        hook(0, "warm")[1]()
        for path in args.time:
            timed(path)
        profile = cProfile.Profile() if args.profile else None
        wall: list[float] = []
        cpu: list[float] = []
        after: list[float] = []  # CPU of the refresh after each reply
        answered = 0
        for i in range(args.prompts):
            started, used = time.perf_counter(), time.process_time()
            if profile is not None:
                profile.enable()
            output, refresh = hook(i, "daemon")
            if profile is not None:
                profile.disable()
            wall.append((time.perf_counter() - started) * 1000)
            cpu.append((time.process_time() - used) * 1000)
            answered += bool(output.strip())
            used = time.process_time()
            refresh()  # after the reply, as the route does
            after.append((time.process_time() - used) * 1000)
        engine.close()
        errors = home / "logs" / "hooks.log"
        failed = errors.read_text(encoding="utf-8")[-2000:] if errors.exists() else ""
    if profile is not None:
        profile.dump_stats(args.profile)
    n = args.prompts
    print(
        f"{n} prompts, {answered} with output; a hook in the daemon: wall p50"
        f" {statistics.median(wall):.1f} / p95 {p95(wall):.1f} ms, CPU p50"
        f" {statistics.median(cpu):.1f} / p95 {p95(cpu):.1f} / mean {statistics.mean(cpu):.1f}"
        f" ms; the refresh after it CPU mean {statistics.mean(after):.1f} ms;"
        f" load {os.getloadavg()[0]:.2f}"
    )
    for path, seconds in sorted(SPENT.items(), key=lambda item: -item[1]):
        print(f"{seconds * 1000 / n:8.2f} ms {CALLS[path] / n:5.2f} calls a hook  {path}")
    if failed:
        print(failed)


if __name__ == "__main__":
    main()
