"""The markdown table of a ``benchmarks/server.py --json`` report, in the docs' format.

    python benchmarks/server_tables.py out.json [more.json ...]

One row per phase and size: throughput, recall / context / write percentiles, failed
requests, lost acknowledged writes, the server processes' CPU per request, the engine's
own mean time per recall (from the servers' metrics) and the 1-minute load average at
the phase's start and end.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

HEADER = (
    "| memories | phase | req/s | recalls/s | recall p50 / p95 / p99 | context p50 / p95"
    " | write p50 / p95 | failed | lost writes | server CPU / request | engine | load avg |"
)


def _size(n: int) -> str:
    if n >= 1_000_000 and n % 1_000_000 == 0:
        return f"{n // 1_000_000}M"
    if n >= 1000 and n % 1000 == 0:
        return f"{n // 1000}k"
    return f"{n:,}"


def _ms(op: dict[str, Any], keys: Sequence[str]) -> str:
    if not op:
        return ""
    return " / ".join(f"{op[k]:.0f}" for k in keys)


def rows(report: dict[str, Any]) -> list[str]:
    out = []
    for size in report["sizes"]:
        for phase in size["phases"]:
            ops = phase["ops"]
            recall = ops.get("recall", {})
            writes = phase["acknowledged_writes"]
            lost = f"{phase['lost_writes']} of {writes}" if "write" in ops else ""
            engine = phase.get("server_recall_means", {}).get("engine_total_ms")
            load = phase.get("loadavg_1m") or []
            cells = [
                _size(size["size"]),
                phase["phase"],
                f"{phase['per_s']:.1f}",
                f"{recall.get('per_s', 0):.1f}",
                _ms(recall, ("p50_ms", "p95_ms", "p99_ms")),
                _ms(ops.get("context", {}), ("p50_ms", "p95_ms")),
                _ms(ops.get("write", {}), ("p50_ms", "p95_ms")),
                str(phase["failed"]),
                lost,
                f"{phase['server_cpu_ms_per_request']:.1f} ms",
                "" if engine is None else f"{engine:.0f} ms",
                "–".join(f"{v:.1f}" for v in load),
            ]
            out.append("| " + " | ".join(cells) + " |")
    return out


def table(reports: Sequence[dict[str, Any]]) -> str:
    lines = [HEADER, "|" + "---|" * HEADER.count(" | ") + "---|"]
    for report in reports:
        lines += rows(report)
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> None:
    paths = list(sys.argv[1:] if argv is None else argv)
    if not paths:
        raise SystemExit("usage: server_tables.py REPORT.json [...]")
    print(table([json.loads(Path(p).read_text(encoding="utf-8")) for p in paths]))


if __name__ == "__main__":
    main()
