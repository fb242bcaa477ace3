"""The reliability harness, full or quick: SIGKILLs, concurrent load, cross-tenant attacks,
faults of the disk and the file.

    python benchmarks/reliability.py                    # quick: what CI runs (a few minutes)
    python benchmarks/reliability.py --full --json docs/reliability-full.json
    python benchmarks/reliability.py --only-faults --json docs/reliability-faults.json

Everything runs the real thing on real files: the `cairn` command and worker processes on
the public API, each on a home folder under ``--workdir`` (a temporary folder by default).
The harness itself lives in tests/reliability/ (kills.py, load.py, attacks.py, checks.py);
docs/reliability.md says what each check means and holds the figures of a full run.

Full mode
    kills     40 per scenario on the model-free hashing embedder (import, ingest, edits,
              purges, rebuild: 200), then 24 on the real default model (ingest, edits,
              purges, rebuild)
    load      4 writers + 4 readers for 60 s (hashing), then 20 s on the real model
    attacks   the cross-tenant attack list once
    server    10 SIGKILLs of `cairn serve` while 4 clients write (ingest batches under a
              batch key or keys per item, store, remember), every request retried until
              answered and a quarter sent once more after their answer: 0 duplicates,
              0 lost (server_kills.py)
    faults    a full disk (a real tmpfs), a read-only home (a read-only bind mount), flipped
              bytes, an empty and a foreign file, dates out of range, privacy (faults.py)
Quick mode: 30 kills, 4 on the real model, 10 s of load, the attacks, 3 server kills, the
faults. ``--only-server-kills`` runs the server part alone.
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path[0] = str(ROOT / "tests")  # the harness package, ahead of this script's folder

from reliability.attacks import run_attacks  # noqa: E402
from reliability.faults import run_faults  # noqa: E402
from reliability.harness import PROBLEMS, Tally  # noqa: E402
from reliability.kills import run_kills  # noqa: E402
from reliability.load import run_load  # noqa: E402
from reliability.server_kills import run_server_kills  # noqa: E402

FULL = {
    "kills": {"import": 40, "ingest": 40, "edits": 40, "purges": 40, "rebuild": 40},
    "real_kills": {"ingest": 6, "edits": 6, "purges": 6, "rebuild": 6},
    "load_seconds": 60.0,
    "real_load_seconds": 20.0,
    "scale": 1.0,
    "sample": 40,
    "server_kills": {"kills": 10, "clients": 4, "writes_per_client": 60},
}
QUICK = {
    "kills": {"import": 4, "ingest": 6, "edits": 8, "purges": 8, "rebuild": 4},
    "real_kills": {"ingest": 2, "purges": 2},
    "load_seconds": 10.0,
    "real_load_seconds": 0.0,
    "scale": 0.5,
    "sample": 20,
    "server_kills": {"kills": 3, "clients": 3, "writes_per_client": 20},
}
KILL_COLUMNS = (
    "kills",
    "committed",
    "rolled_back",
    "completed",
    "acknowledged",
    "checked",
    "lane_checks",
    "absent_checks",
    "replays",
    "purges_resumed",
    "files_cleaned_on_open",
)


def _log(message: str) -> None:
    print(f"  {time.strftime('%H:%M:%S')} {message}", file=sys.stderr, flush=True)


def _table(rows: list[list[Any]], header: list[str]) -> str:
    cells = [header, *[[str(c) for c in row] for row in rows]]
    widths = [max(len(r[i]) for r in cells) for i in range(len(header))]
    lines = [
        "  ".join(
            c.rjust(w) if i else c.ljust(w)
            for i, (c, w) in enumerate(zip(row, widths, strict=True))
        )
        for row in cells
    ]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--full", action="store_true", help="200+ kills, 60 s of load")
    parser.add_argument("--json", type=Path, default=None, help="write the figures here")
    parser.add_argument("--seed", type=int, default=20260601)
    parser.add_argument("--workdir", type=Path, default=None, help="keep the homes here")
    parser.add_argument("--no-real", action="store_true", help="skip the real-model part")
    parser.add_argument(
        "--only-real", action="store_true", help="only the real-model part (its kills and its load)"
    )
    parser.add_argument(
        "--only-server-kills",
        action="store_true",
        help="only the SIGKILLs of cairn serve with retried writes",
    )
    parser.add_argument(
        "--only-faults", action="store_true", help="only the faults of the disk and the file"
    )
    args = parser.parse_args(argv)
    plan = FULL if args.full else QUICK
    with tempfile.TemporaryDirectory(prefix="cairn-reliability-") as tmp:
        work = args.workdir or Path(tmp)
        work.mkdir(parents=True, exist_ok=True)
        report = _run(plan, work, args)
    report["mode"] = "full" if args.full else "quick"
    print(_render(report))
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    return 0 if report["totals"]["problems"] == 0 else 1


def _run(plan: dict[str, Any], work: Path, args: argparse.Namespace) -> dict[str, Any]:
    started = time.monotonic()
    if args.only_faults:
        return _faults_only(work, started)
    served = None
    if not args.only_real:
        _log("SIGKILLs of cairn serve, every write retried")
        served = run_server_kills(work / "server-kills", seed=args.seed, **plan["server_kills"])
    if args.only_server_kills and served is not None:
        return _server_only(served, args, started)
    tallies = (
        {}
        if args.only_real
        else run_kills(
            work / "kills",
            plan["kills"],
            seed=args.seed,
            scale=plan["scale"],
            sample=plan["sample"],
            progress=_log,
        )
    )
    if not args.no_real and plan["real_kills"]:
        real = run_kills(
            work / "kills-real",
            plan["real_kills"],
            seed=args.seed + 1,
            real=True,
            scale=plan["scale"] * 0.5,
            sample=plan["sample"] // 2,
            progress=_log,
        )
        tallies.update({f"{name} (real model)": t for name, t in real.items()})
    loads: dict[str, Any] = {}
    if not args.only_real:
        _log("concurrent load (hashing embedder)")
        loads["hashing"] = run_load(work / "load", seconds=plan["load_seconds"])
    if not args.no_real and plan["real_load_seconds"]:
        _log("concurrent load (real model)")
        loads["real model"] = run_load(
            work / "load-real", seconds=plan["real_load_seconds"], real=True
        )
    _log("cross-tenant attacks")
    attacks = run_attacks(work / "attacks")
    total = Tally("all")
    for tally in tallies.values():
        total.merge(tally)
    for load in loads.values():
        total.merge(load.tally)
    total.merge(attacks.tally)
    faults = None
    if not args.only_real:
        _log("faults of the disk and the file")
        faults = run_faults(work / "faults")
        total.merge(faults.tally)
    problems = {kind: len(messages) for kind, messages in total.problems.items()}
    if served is not None:
        problems["server_duplicates"] = served.duplicates
        problems["server_lost"] = served.lost + len(served.refused)
    return {
        "seed": args.seed,
        "machine": f"{platform.machine()}, {platform.python_version()}, {platform.system()}",
        "seconds": round(time.monotonic() - started, 1),
        "kills": {name: t.as_dict() for name, t in tallies.items()},
        "load": {name: load.as_dict() for name, load in loads.items()},
        "attacks": attacks.as_dict(),
        "server_kills": served.as_dict() if served is not None else None,
        "faults": faults.as_dict() if faults is not None else None,
        "totals": {
            "kills": sum(t.kills for t in tallies.values()),
            "acknowledged_writes": sum(t.acknowledged for t in tallies.values()),
            "acknowledged_checks": sum(t.checked for t in tallies.values()),
            "load_writes": sum(load.tally.acknowledged for load in loads.values()),
            "lock_errors": sum(load.locked for load in loads.values()),
            "cross_tenant_reads": len(attacks.reads),
            "cross_tenant_writes": len(attacks.writes),
            **{f"problems_{kind}": n for kind, n in problems.items()},
            "problems": sum(problems.values()) + len(attacks.reads) + len(attacks.writes),
            "messages": total.failures()[:100],
        },
    }


def _server_only(served: Any, args: argparse.Namespace, started: float) -> dict[str, Any]:
    return {
        "seed": args.seed,
        "machine": f"{platform.machine()}, {platform.python_version()}, {platform.system()}",
        "seconds": round(time.monotonic() - started, 1),
        "kills": {}, "load": {}, "attacks": None,
        "server_kills": served.as_dict(),
        "totals": {"problems": served.problems, "messages": served.refused[:100]},
    }  # fmt: skip


def _server_line(served: dict[str, Any]) -> str:
    return (
        f"cairn serve SIGKILLs: {served['kills']} kills, {served['clients']} clients,"
        f" {served['requests']} writes answered ({served['items']} bodies) after"
        f" {served['tries']} tries ({served['unanswered_tries']} unanswered,"
        f" {served['resent_after_answer']} sent again after their answer);"
        f" stored {served['stored']}, duplicates {served['duplicates']},"
        f" lost {served['lost']}, refused {len(served['refused'])}"
    )


def _faults_only(work: Path, started: float) -> dict[str, Any]:
    _log("faults of the disk and the file")
    faults = run_faults(work / "faults")
    problems = {kind: len(messages) for kind, messages in faults.tally.problems.items()}
    return {
        "machine": f"{platform.machine()}, {platform.python_version()}, {platform.system()}",
        "seconds": round(time.monotonic() - started, 1),
        "faults": faults.as_dict(),
        "totals": {
            **{f"problems_{kind}": n for kind, n in problems.items()},
            "problems": sum(problems.values()),
            "messages": faults.tally.failures()[:100],
        },
    }


FAULT_COLUMNS = (
    "commands",
    "true_words",
    "memories_kept",
    "repaired",
    "untouched",
    "restored_from_markdown",
    "left_byte_for_byte",
    "said_once",
    "new_home_loose",
    "old_home_loose",
    "other_user_read",
)


def _render_faults(faults: dict[str, Any]) -> str:
    rows = [
        [name, *(figures.get(c, "") for c in FAULT_COLUMNS), figures.get("skipped", "")]
        for name, figures in faults["cases"].items()
    ]
    return _table(rows, ["fault", *FAULT_COLUMNS, "skipped"])


def _render(report: dict[str, Any]) -> str:
    if "kills" not in report:
        return "\n".join(
            [
                f"cairn reliability, faults only, {report['seconds']} s on {report['machine']}",
                "",
                _render_faults(report["faults"]),
                "",
                f"problems: {report['totals']['problems']}",
                *(f"  {m[:300]}" for m in report["totals"]["messages"][:20]),
            ]
        )
    if report["attacks"] is None:
        return _server_line(report["server_kills"])
    kills = report["kills"]
    rows = [
        [name, *(t[c] for c in KILL_COLUMNS), sum(t["problems"].values())]
        for name, t in kills.items()
    ]
    out = [
        f"cairn reliability, {report['mode']} mode, seed {report['seed']},"
        f" {report['seconds']} s on {report['machine']}",
        "",
        _table(rows, ["scenario", *KILL_COLUMNS, "problems"]),
        "",
    ]
    rows = []
    for name, load in report["load"].items():
        checks = load["checks"]
        rows.append(
            [
                name,
                load["writers"],
                load["readers"],
                load["seconds"],
                load["stores"],
                load["corrections"],
                load["write_ms"]["p50"],
                load["write_ms"]["p99"],
                load["write_ms"]["max"],
                load["reads"],
                load["read_checks"],
                load["locked"],
                sum(checks["problems"].values()),
            ]
        )
    out += [
        _table(
            rows,
            [
                "load",
                "writers",
                "readers",
                "s",
                "stores",
                "corrections",
                "write p50 ms",
                "p99",
                "max",
                "reads",
                "read checks",
                "locked",
                "problems",
            ],
        ),
        "",
    ]
    attacks = report["attacks"]
    out.append(
        f"cross-tenant attacks: {attacks['tried']} tried, {attacks['refused']} refused,"
        f" {attacks['own_copy']} acted on the attacker's own copy;"
        f" cross-tenant reads {attacks['cross_tenant_reads']},"
        f" writes {attacks['cross_tenant_writes']}"
    )
    if report.get("server_kills"):
        out.append(_server_line(report["server_kills"]))
    if report.get("faults"):
        out += ["", _render_faults(report["faults"]), ""]
    totals = report["totals"]
    out.append("problems: " + ", ".join(f"{k} {totals[f'problems_{k}']}" for k in PROBLEMS))
    for message in totals["messages"][:20]:
        out.append(f"  {message[:300]}")
    return "\n".join(out)


if __name__ == "__main__":
    sys.exit(main())
