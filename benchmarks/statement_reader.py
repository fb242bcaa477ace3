"""How well the statement reader reads how people talk: the labelled corpus
(``data/statements.jsonl``, built by ``statement_corpus.py``) through
:func:`cairn.engine.statements.reader.read_statement`, as `cairn signal` would act on it inside a
repository. Reported on the ``report`` split only (authors never fitted), per language:

* speech act: accuracy, per-act precision and recall, and the confusion matrix;
* scope and kind: accuracy over the statements a person labelled as stored (rule,
  preference, fact) that the reader also stores;
* operations, phases and paths: micro precision and recall over the labelled stored
  statements (a statement the reader does not store contributes its labels as misses);
* asked: labelled stored statements the reader does not store but asks about (``unsure``);
  dropped: those it neither stores nor asks about.

    python benchmarks/statement_reader.py [--split report|fit|all] [--json out.json]
        [--cues-only]   # the cue grammar alone, without the learned reader
"""

from __future__ import annotations

import argparse
import json
import time
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

from cairn.engine.statements.reader import StatementReading, read_statement, stored_scope

CORPUS = Path(__file__).parent / "data" / "statements.jsonl"
ACTS = ("rule", "preference", "fact", "one-off", "correction", "forget", "neutral")
STORED = ("rule", "preference", "fact")
ACT_OF_KIND = {"policy": "rule", "preference": "preference", "fact": "fact"}
ACT_OF_SIGNAL = {"correct": "correction", "forget": "forget", "one-off": "one-off"}


def act_of(reading: StatementReading) -> str:
    if reading.signal == "rule":
        return ACT_OF_KIND[reading.memory_kind or "policy"]
    return ACT_OF_SIGNAL.get(reading.signal, "neutral")


def load(split: str) -> list[dict[str, Any]]:
    rows = [json.loads(line) for line in CORPUS.read_text(encoding="utf-8").splitlines()]
    return [r for r in rows if split == "all" or r["split"] == split]


def _pr(tp: int, fp: int, fn: int) -> tuple[float, float]:
    precision = tp / (tp + fp) if tp + fp else 1.0
    recall = tp / (tp + fn) if tp + fn else 1.0
    return round(precision, 3), round(recall, 3)


def evaluate(rows: list[dict[str, Any]], *, learned: bool = True) -> dict[str, Any]:
    by_language: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for row in rows:
        by_language[row["language"]].append(row)
    report: dict[str, Any] = {}
    started = time.perf_counter()
    for language, group in [*sorted(by_language.items()), ("all", rows)]:
        report[language] = _measure(group, learned=learned)
    report["microseconds_per_statement"] = round(
        (time.perf_counter() - started) / max(1, 2 * len(rows)) * 1e6, 1
    )
    return report


def _measure(rows: list[dict[str, Any]], *, learned: bool) -> dict[str, Any]:
    confusion: Counter[tuple[str, str]] = Counter()
    scope_ok = kind_ok = both_stored = asked = dropped = 0
    fields = {name: [0, 0, 0] for name in ("operations", "phases", "paths")}
    misses: list[str] = []
    for row in rows:
        reading = read_statement(row["text"], learned=learned)
        act = act_of(reading)
        confusion[(row["act"], act)] += 1
        if act != row["act"]:
            misses.append(f"{row['act']}->{act}: {row['text']}")
        if row["act"] not in STORED:
            continue
        stored = act in STORED
        if not stored:
            asked += reading.unsure
            dropped += not reading.unsure
        if stored:
            both_stored += 1
            scope_ok += stored_scope(reading, in_repository=True) == row["scope"]
            kind_ok += (reading.memory_kind or "policy") == row["kind"]
        selector = reading.selector
        found = {
            "operations": set(selector.operations) if stored else set(),
            "phases": set(selector.phases) if stored else set(),
            "paths": set(selector.path_patterns) if stored else set(),
        }
        for name, counts in fields.items():
            want = set(row[name])
            counts[0] += len(found[name] & want)
            counts[1] += len(found[name] - want)
            counts[2] += len(want - found[name])
    total = sum(confusion.values())
    per_act = {}
    for act in ACTS:
        tp = confusion[(act, act)]
        fp = sum(n for (gold, said), n in confusion.items() if said == act and gold != act)
        fn = sum(n for (gold, said), n in confusion.items() if gold == act and said != act)
        per_act[act] = _pr(tp, fp, fn)
    return {
        "statements": total,
        "act_accuracy": round(sum(confusion[(a, a)] for a in ACTS) / max(1, total), 3),
        "per_act": per_act,
        "confusion": {g: {s: confusion[(g, s)] for s in ACTS} for g in ACTS},
        "stored_labelled": sum(n for (g, _), n in confusion.items() if g in STORED),
        "scope_accuracy": round(scope_ok / max(1, both_stored), 3),
        "kind_accuracy": round(kind_ok / max(1, both_stored), 3),
        **{
            name: dict(zip(("precision", "recall"), _pr(*c), strict=True))
            for name, c in fields.items()
        },
        "asked": asked,
        "dropped": dropped,
        "misses": misses,
    }


def print_report(report: dict[str, Any]) -> None:
    print(
        "language  n    act    scope  kind   ops P/R      phases P/R   paths P/R    asked dropped"
    )
    for language, r in report.items():
        if not isinstance(r, dict):
            continue
        row = (
            f"{language:8}  {r['statements']:<4} {r['act_accuracy']:.3f}  {r['scope_accuracy']:.3f}"
            f"  {r['kind_accuracy']:.3f}"
        )
        for name in ("operations", "phases", "paths"):
            row += f"  {r[name]['precision']:.2f}/{r[name]['recall']:.2f}  "
        print(row + f"  {r['asked']:<5} {r['dropped']}")
    print(f"{report['microseconds_per_statement']} µs per statement")
    whole = report["all"]
    print("\nconfusion (rows: labelled, columns: read)")
    print(" " * 11 + " ".join(f"{a[:6]:>6}" for a in ACTS))
    for gold in ACTS:
        print(f"{gold:10} " + " ".join(f"{whole['confusion'][gold][s]:>6}" for s in ACTS))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--split", default="report", choices=("report", "blind", "fit", "all"))
    parser.add_argument("--json", type=Path, default=None)
    parser.add_argument("--cues-only", action="store_true")
    parser.add_argument("--misses", action="store_true", help="print what was read wrong")
    args = parser.parse_args()
    report = evaluate(load(args.split), learned=not args.cues_only)
    print_report(report)
    if args.misses:
        for language, r in report.items():
            if isinstance(r, dict) and language != "all":
                print(f"\n{language}:")
                for miss in r["misses"]:
                    print("  " + miss)
    if args.json:
        args.json.write_text(json.dumps(report, ensure_ascii=False, indent=2) + "\n")


if __name__ == "__main__":
    main()
