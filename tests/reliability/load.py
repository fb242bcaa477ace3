"""Concurrent load: writer and reader processes on one file through the API, at once.

Each writer stores memories (and now and then corrects one of its own) as fast as it can
and logs every acknowledged write; each reader checks, while they write, that the counts
never go down, that a record seen once stays, and that the newest write a writer
acknowledged before the read began is there, by id and by its word (workers.py). After
the run: every acknowledged write is present exactly as acknowledged, nothing else; no
process printed a traceback or ``database is locked``; no half record; replay equals the
live state.
"""

from __future__ import annotations

import json
import random
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cairn.model import MemoryInput
from reliability.checks import Model, after_close, verify
from reliability.harness import (
    Tally,
    Words,
    body_for,
    child_env,
    make_home,
    open_memory,
    word_of,
    worker_argv,
)


@dataclass
class LoadResult:
    writers: int
    readers: int
    seconds: float
    stores: int = 0
    corrections: int = 0
    write_ms: dict[str, float] = field(default_factory=dict)  # p50, p99, max
    reads: int = 0
    read_checks: int = 0
    locked: int = 0  # "database is locked" anywhere in any process's output
    tally: Tally = field(default_factory=lambda: Tally("load"))

    def as_dict(self) -> dict[str, Any]:
        data = {k: v for k, v in vars(self).items() if k != "tally"}
        data["checks"] = self.tally.as_dict()
        return data


def _percentile(values: list[float], q: float) -> float:
    if not values:
        return 0.0
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def run_load(
    root: Path, *, writers: int = 4, readers: int = 4, seconds: float = 60.0, real: bool = False
) -> LoadResult:
    home = make_home(root / "load-home", real=real)
    model = Model()
    rng = random.Random(7)
    words = Words(999)
    mem = open_memory(home)
    try:  # something to read from the first moment
        bodies = [body_for(words(), rng) for _ in range(50)]
        for record_id, body in zip(
            mem.store_many([MemoryInput(body=b) for b in bodies]), bodies, strict=True
        ):
            model.add(record_id, word_of(body) or "")
    finally:
        mem.close()
    result = LoadResult(writers, readers, seconds)
    ack_logs = [root / f"writer-{i}.log" for i in range(writers)]
    read_logs = [root / f"reader-{i}.json" for i in range(readers)]
    argvs = [
        worker_argv("writer", str(home), str(ack_logs[i]), str(i), str(seconds))
        for i in range(writers)
    ]
    argvs += [
        worker_argv(
            "reader", str(home), str(read_logs[i]), str(i), str(seconds), *map(str, ack_logs)
        )
        for i in range(readers)
    ]
    err_logs = [root / f"{a[2]}-{a[5]}.err" for a in argvs]
    procs = []
    for argv, err_log in zip(argvs, err_logs, strict=True):
        with err_log.open("wb") as err:
            procs.append(
                subprocess.Popen(argv, env=child_env(home), stdout=subprocess.DEVNULL, stderr=err)
            )
    deadline = time.monotonic() + seconds + 300
    for proc, argv in zip(procs, argvs, strict=True):
        try:
            proc.wait(timeout=max(1.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
            result.tally.problem("errors", f"{argv[2]} {argv[5]} did not finish in time")
    for proc, argv, err_log in zip(procs, argvs, err_logs, strict=True):
        text = err_log.read_text(encoding="utf-8", errors="replace")
        what = f"{argv[2]} {argv[5]}"
        result.locked += text.count("database is locked")
        if "Traceback" in text:
            result.tally.problem("tracebacks", f"{what}: {text.strip()[-800:]}")
        elif proc.returncode != 0:
            result.tally.problem("errors", f"{what}: exit {proc.returncode}: {text[-300:]}")
    _collect(result, model, ack_logs, read_logs)
    mem = open_memory(home)
    try:
        verify(home, mem, model, result.tally, "after the load", rng=rng, sample=200)
    finally:
        mem.close()
    after_close(home, model, result.tally, "after the load")
    return result


def _collect(result: LoadResult, model: Model, ack_logs: list[Path], read_logs: list[Path]) -> None:
    latencies: list[float] = []
    for log in ack_logs:
        text = log.read_text(encoding="utf-8") if log.exists() else ""
        for line in text.split("\n")[:-1]:
            ack = json.loads(line)
            latencies.append(ack["ms"])
            result.tally.acknowledged += 1
            if ack["op"] == "store":
                result.stores += 1
                model.add(ack["id"], ack["word"])
            else:
                result.corrections += 1
                model.correct(ack["id"], ack["word"])
                if model.records[ack["id"]].version != ack["version"]:
                    result.tally.problem("partial", f"{ack['id']}: versions out of order")
    result.write_ms = {
        "p50": round(_percentile(latencies, 0.5), 1),
        "p99": round(_percentile(latencies, 0.99), 1),
        "max": round(max(latencies, default=0.0), 1),
    }
    for log in read_logs:
        if not log.exists():
            result.tally.problem("errors", f"{log.name}: the reader left no summary")
            continue
        summary = json.loads(log.read_text(encoding="utf-8"))
        result.reads += summary["reads"]
        result.read_checks += summary["checks"]
        for problem in summary["problems"]:
            result.tally.problem("lost", f"{log.name}: {problem}")
