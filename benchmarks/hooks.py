"""Hook and start-up latency: whole processes, as an agent host runs them.

Measures, each as its own process from start to exit (Python's own start included):

- ``cairn hook prompt`` on a Claude Code UserPromptSubmit event (the recorded format of
  tests/data/hooks), in a real git repository, with N memories in the store (default
  10,000), p50/p95 over at least 100 runs: the signal, the context director for the
  prompt, the session notes, the host's JSON;
- ``cairn --version`` (what every command pays before it does anything);
- a cold ``cairn recall``: a new process that imports, opens the store, loads the model
  and recalls once.

Without the daemon every process opens the store and loads the model itself; then the
same prompts again through the daemon (``cairn daemon start``: the engine and the model
loaded once; each hook process sends its event over the daemon's unix socket and prints
the answer), and ``cairn recall`` through it. The load average is recorded before and
after each phase (the machine is shared). The store is built
as benchmarks/context_director.py builds its own (policies, preferences, facts and
episodes with selectors across 20 projects, one of them the benchmark's repository;
stored vectors are the real model's embedding of each template sentence plus noise), so
the real ``cairn`` process sees a store of the real model; prompts and queries are
embedded by the real model in the measured process.

    python benchmarks/hooks.py [--records 10000] [--prompts 120] [--runs 30]
                               [--in-process-prompts 30] [--json OUT]
                               [--only cold|daemon] [--reuse DIR] [--cairn COMMAND]
                               [--trees SRC [SRC ...] --rounds N]

``--only cold``: only the processes without a hook (``--version``, a cold recall, a
recall through the daemon); ``--only daemon``: only what goes through the daemon (no cold
recall, no hook without it: minutes of model loads); ``--reuse DIR``: build the store and
repository in DIR once and measure on them again in later runs (so two versions of
cairn, ``--cairn "python -m cairn.cli.fast"`` with another PYTHONPATH, are measured on
the same file). ``--trees SRC...``: two (or more) versions of cairn side by side in one
run, alternating (round 1 in the order given, round 2 reversed, ...): each tree's
``src`` folder goes first on PYTHONPATH of every process it runs (its daemon included),
and each (tree, round) measures on its own copy of one store built once, so no run sees
another's session notes or remembered prompts.

After the daemon's first (warm-up) hook the run waits for the Markdown refresh that hook
set off to end (:func:`settle`): over a copied store it rewrites every file, a second of
work beside the first timed prompts otherwise.

The hook process's own CPU (user + system of the ``cairn hook prompt`` process: Python's
start, the imports of the client, the request) is reported beside ``python -c pass``
(Python's start alone) and the daemon's own time per hook (its access log): the wall time
of a hook is about these two plus the wait for a core.
"""

from __future__ import annotations

import argparse
import dataclasses
import fcntl
import json
import os
import platform
import random
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from cairn import Memory
from cairn.adapters.embedding import MiniLmOnnxEmbedder
from cairn.adapters.repository import repository_identity
from context_director import TEMPLATES, TemplateEmbedder, build, fill

HERE_PROJECT = "project-0"  # the generated project that becomes the benchmark repository


def cairn_command(given: str | None = None) -> list[str]:
    if given:
        return given.split()
    found = shutil.which("cairn", path=str(Path(sys.executable).parent))
    return [found] if found else [sys.executable, "-m", "cairn.cli.main"]


def make_repository(root: Path) -> str:
    root.mkdir(parents=True)
    git = ["git", "-c", "user.email=bench@example.org", "-c", "user.name=bench"]
    subprocess.run([*git, "init", "-q"], cwd=root, check=True)
    subprocess.run([*git, "commit", "-q", "--allow-empty", "-m", "init"], cwd=root, check=True)
    return repository_identity(root).project_id


def fill_store(home: Path, records: int, project_id: str, rng: random.Random) -> float:
    real = MiniLmOnnxEmbedder()
    items, table = build(records, rng, real)
    items = [
        dataclasses.replace(i, project_id=project_id) if i.project_id == HERE_PROJECT else i
        for i in items
    ]
    home.mkdir(parents=True, exist_ok=True)
    start = time.perf_counter()
    mem = Memory.open(home / "memory.db", config={}, embedder=TemplateEmbedder(real, table))
    mem.store_many(items, batch_size=1000)
    mem.close()
    return time.perf_counter() - start


CPU: list[float] = []  # CPU time (user + system) of every measured process, in order


def timed(
    command: Sequence[str], *, cwd: Path, env: dict[str, str], stdin: bytes | None = None
) -> tuple[float, subprocess.CompletedProcess[bytes]]:
    """Wall time of one whole process (ms); its CPU time goes to ``CPU``. On a shared,
    busy machine the wall time waits for the other tenants' work, the CPU time much less."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.run(command, cwd=cwd, env=env, input=stdin, capture_output=True)
    elapsed = (time.perf_counter() - start) * 1000
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    CPU.append((after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime) * 1000)
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(command)} failed: {proc.stderr.decode()[-2000:]}")
    return elapsed, proc


def measure(
    runs: int, command: Sequence[str], *, cwd: Path, env: dict[str, str]
) -> tuple[list[float], list[float]]:
    """Wall and CPU milliseconds of ``runs`` processes of ``command``."""
    mark = len(CPU)
    wall = [timed(command, cwd=cwd, env=env)[0] for _ in range(runs)]
    return wall, CPU[mark:]


def summary(samples: list[float]) -> dict[str, float]:
    ordered = sorted(samples)
    return {
        "runs": len(ordered),
        "p50": statistics.median(ordered),
        "p95": ordered[round(0.95 * (len(ordered) - 1))],
        "min": ordered[0],
        "max": ordered[-1],
    }


def prompt_event(session: str, repo: Path, prompt: str) -> bytes:
    return json.dumps(
        {
            "session_id": session,
            "transcript_path": f"{Path.home()}/.claude/projects/-bench/{session}.jsonl",
            "cwd": str(repo),
            "permission_mode": "default",
            "hook_event_name": "UserPromptSubmit",
            "prompt": prompt,
        }
    ).encode()


def hook_runs(
    cairn: Sequence[str], n: int, repo: Path, env: dict[str, str], rng: random.Random, tag: str
) -> tuple[list[float], list[float], int]:
    """Wall and CPU ms of ``n`` ``cairn hook prompt`` processes; how many said something."""
    wall: list[float] = []
    answered = 0
    mark = len(CPU)
    for i in range(n):
        session = f"bench-{tag}-{i // 10:04d}"  # ten prompts a session, as in a real one
        prompt = fill(rng.choice(TEMPLATES), rng).replace("Always", "How do I")
        elapsed, proc = timed(
            [*cairn, "hook", "prompt"], cwd=repo, env=env,
            stdin=prompt_event(session, repo, prompt),
        )  # fmt: skip
        wall.append(elapsed)
        answered += bool(proc.stdout.strip())
    return wall, CPU[mark:], answered


def recall_runs(
    cairn: Sequence[str], n: int, repo: Path, env: dict[str, str], rng: random.Random
) -> tuple[list[float], list[float]]:
    mark = len(CPU)
    wall = [
        timed([*cairn, "recall", fill(rng.choice(TEMPLATES), rng)], cwd=repo, env=env)[0]
        for _ in range(n)
    ]
    return wall, CPU[mark:]


def daemon_hook_ms(home: Path) -> list[float]:
    """How long the daemon took for each hook it ran (its access log)."""
    found = []
    log = home / "logs" / "daemon.log"
    for line in log.read_text(encoding="utf-8").splitlines() if log.exists() else []:
        if '"route": "/local/hook"' in line:
            found.append(float(json.loads(line)["ms"]))
    return found[1:]  # the warm-up's first


def settle(home: Path) -> None:
    """Wait for the daemon's Markdown refresh after the warm-up's hook to end. Over a
    copied store (``--trees``, ``--only daemon``) it rewrites every file (the follower's
    cursor names the store's old path): a second of work that would otherwise run beside
    the first timed prompts. Done when the follower's lock is free and its cursor stayed
    as it was for half a second."""
    lock, cursor = home / ".cairn-markdown-feed.lock", home / ".cairn-markdown-feed.json"

    def stamp() -> int | None:
        return cursor.stat().st_mtime_ns if cursor.exists() else None

    time.sleep(0.5)
    for _ in range(120):
        seen = stamp()
        with open(lock, "a") as held:
            fcntl.flock(held, fcntl.LOCK_EX)  # waits for a refresh under way; closing frees it
        time.sleep(0.5)
        if stamp() == seen:
            return


def load() -> float:
    return round(os.getloadavg()[0], 2)


def prepare(root: Path, records: int, rng: random.Random) -> float:
    """The store and the repository under ``root`` (built unless already there); seconds."""
    repo, home = root / "shop", root / "home"
    if (home / "memory.db").exists():
        return 0.0
    shutil.rmtree(repo, ignore_errors=True)
    project_id = make_repository(repo)
    return fill_store(home, records, project_id, rng)


def measure_tree(
    cairn: Sequence[str], root: Path, env: dict[str, str], args: argparse.Namespace
) -> dict[str, Any]:
    """Every phase of one version of cairn on the store under ``root``."""
    rng = random.Random(11)
    repo, home = root / "shop", root / "home"
    (home / "logs").mkdir(parents=True, exist_ok=True)
    for log in ("daemon.log", "hooks.log"):
        (home / "logs" / log).unlink(missing_ok=True)
    env = {**env, "CAIRN_HOME": str(home)}
    env.pop("CAIRN_CONFIG", None)
    hooks = args.only in ("all", "daemon")
    cold = args.only in ("all", "cold")
    rows: dict[str, tuple[list[float], list[float]]] = {}
    loads: dict[str, tuple[float, float]] = {}

    def phase(name: str, run: Any) -> Any:
        before = load()
        out = run()
        loads[name] = (before, load())
        rows[name] = (out[0], out[1])
        return out

    phase(
        "python -c pass",
        lambda: measure(args.runs, [sys.executable, "-c", "pass"], cwd=repo, env=env),
    )
    phase("cairn --version", lambda: measure(args.runs, [*cairn, "--version"], cwd=repo, env=env))
    timed([*cairn, "recall", "warm the file cache"], cwd=repo, env=env)
    if cold:
        phase("cairn recall (cold)", lambda: recall_runs(cairn, args.runs, repo, env, rng))
    in_process = (
        phase(
            "hook prompt (no daemon)",
            lambda: hook_runs(cairn, args.in_process_prompts, repo, env, rng, "solo"),
        )
        if args.only == "all"
        else ([], [], 0)
    )
    started = time.perf_counter()
    timed([*cairn, "daemon", "start"], cwd=repo, env=env)
    start_s = time.perf_counter() - started
    try:
        if hooks:
            timed([*cairn, "hook", "prompt"], cwd=repo, env=env,
                  stdin=prompt_event("warm", repo, "How do I warm up?"))  # fmt: skip
            settle(home)
        through = (
            phase(
                "hook prompt (daemon)",
                lambda: hook_runs(cairn, max(args.prompts, 100), repo, env, rng, "daemon"),
            )
            if hooks
            else ([], [], 0)
        )
        phase("cairn recall (daemon)", lambda: recall_runs(cairn, args.runs, repo, env, rng))
    finally:
        timed([*cairn, "daemon", "stop"], cwd=repo, env=env)
    served = daemon_hook_ms(home)
    errors = home / "logs" / "hooks.log"
    return {
        "daemon_start_s": round(start_s, 2),
        "processes_ms": {name: summary(wall) for name, (wall, _) in rows.items()},
        "cpu_ms": {name: summary(cpu) for name, (_, cpu) in rows.items()},
        "daemon_side_hook_ms": summary(served) if served else None,
        "load_before_after": loads,
        "hook_prompts_with_output": {"no daemon": in_process[2], "daemon": through[2]},
        "hook_errors_logged": errors.read_text()[-2000:] if errors.exists() else "",
    }


def show(label: str, result: dict[str, Any]) -> None:
    print(f"{label}: the daemon started in {result['daemon_start_s']:.1f} s")
    print(f"{'process':<26} {'runs':>5} {'p50 ms':>8} {'p95 ms':>8} {'min ms':>8}"
          f" {'cpu p50':>8} {'cpu p95':>8} {'load':>11}")  # fmt: skip
    for name, row in result["processes_ms"].items():
        used = result["cpu_ms"][name]
        before, after = result["load_before_after"][name]
        print(f"{name:<26} {row['runs']:>5} {row['p50']:>8.0f} {row['p95']:>8.0f}"
              f" {row['min']:>8.0f} {used['p50']:>8.0f} {used['p95']:>8.0f}"
              f" {before:>5.2f}>{after:<5.2f}")  # fmt: skip
    inside = result["daemon_side_hook_ms"]
    hook = result["cpu_ms"].get("hook prompt (daemon)")
    start = result["cpu_ms"]["python -c pass"]
    if inside and hook:
        print(f"a hook through the daemon: its process's CPU p50 {hook['p50']:.1f} / p95"
              f" {hook['p95']:.1f} ms (Python's own start alone: {start['p50']:.1f} /"
              f" {start['p95']:.1f}); inside the daemon p50 {inside['p50']:.1f} / p95"
              f" {inside['p95']:.1f} ms (its access log); the rest of the wall time is"
              " waiting for a core")  # fmt: skip
    print(f"hook prompts with output: {result['hook_prompts_with_output']};"
          f" errors logged: {bool(result['hook_errors_logged'])}")  # fmt: skip
    if result["hook_errors_logged"]:
        print(result["hook_errors_logged"])


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--records", type=int, default=10_000)
    parser.add_argument("--prompts", type=int, default=120, help="hook runs (at least 100)")
    parser.add_argument("--runs", type=int, default=30, help="--version and recall runs")
    parser.add_argument("--in-process-prompts", type=int, default=30,
                        help="hook runs without the daemon (each loads the model)")  # fmt: skip
    parser.add_argument("--json", type=Path, default=None)
    parser.add_argument("--only", choices=("all", "cold", "daemon"), default="all")
    parser.add_argument("--reuse", type=Path, default=None, help="keep the store here")
    parser.add_argument("--cairn", default=None, help="the command to measure")
    parser.add_argument("--trees", type=Path, nargs="+", default=None,
                        help="src folders of versions of cairn to alternate")  # fmt: skip
    parser.add_argument("--rounds", type=int, default=2, help="rounds of --trees")
    args = parser.parse_args()
    cairn = cairn_command(args.cairn)
    runs: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory() as tmp:
        root = args.reuse or Path(tmp)
        pristine = root / "store" if args.trees else root
        fill_s = prepare(pristine, args.records, random.Random(11))
        if not args.trees:
            runs.append({"tree": None, "round": 1,
                         **measure_tree(cairn, root, dict(os.environ), args)})  # fmt: skip
            show(f"{args.records:,} memories", runs[-1])
        for n in range(1, args.rounds + 1 if args.trees else 1):
            for tree in args.trees if n % 2 else list(reversed(args.trees)):
                work = root / f"run-{n}-{tree.resolve().parent.name}"
                shutil.rmtree(work, ignore_errors=True)
                shutil.copytree(pristine, work, symlinks=True)
                env = {**os.environ, "PYTHONPATH": str(tree.resolve())}
                try:
                    measured = measure_tree(cairn, work, env, args)
                finally:
                    shutil.rmtree(work, ignore_errors=True)
                runs.append({"tree": str(tree), "round": n, **measured})
                show(f"{tree} (round {n})", measured)
    result: dict[str, Any] = {
        "records": args.records,
        "store_fill_s_without_model": round(fill_s, 1),
        "runs": runs,
        "targets_ms": {
            "hook prompt (daemon) p95": 60,
            "cairn --version p95": 150,
            "cairn recall (cold) p95": 700,
        },
        "machine": {
            "python": platform.python_version(),
            "cpus": os.cpu_count(),
            "load_at_end": os.getloadavg(),
        },
    }
    if args.json:
        args.json.write_text(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
