"""Secret detection on the checked-in corpus: recall on positives, near-misses left alone.

Data: ``tests/engine/data/secrets/positives.jsonl`` (secrets as people paste them: config
snippets, log lines, chat sentences, Chinese and English, obfuscated) and
``near_misses.jsonl`` (commit hashes, UUIDs, checksums, base64 images, identifiers,
placeholders, prose about passwords), both built by ``make_corpus.py`` beside them from
synthetic values (none is a real credential).

A positive is *caught* when ``redact`` leaves none of its secret substrings in the text; a
near-miss is *left alone* when ``find_secrets`` finds nothing in it. Per class and overall,
with the time per text.

    python benchmarks/secrets_corpus.py
    python benchmarks/secrets_corpus.py --json docs/secrets-corpus.json
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

CORPUS = Path(__file__).resolve().parent.parent / "tests" / "engine" / "data" / "secrets"


def load(name: str) -> list[dict[str, Any]]:
    path = CORPUS / f"{name}.jsonl"
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


@dataclass
class Figures:
    per_class: dict[str, list[int]] = field(default_factory=lambda: defaultdict(lambda: [0, 0]))
    failures: list[str] = field(default_factory=list)

    def add(self, cls: str, ok: bool, ident: str) -> None:
        self.per_class[cls][0] += ok
        self.per_class[cls][1] += 1
        if not ok:
            self.failures.append(ident)

    @property
    def rate(self) -> float:
        good = sum(g for g, _ in self.per_class.values())
        total = sum(n for _, n in self.per_class.values())
        return good / total if total else 1.0


def caught(row: dict[str, Any]) -> bool:
    from cairn.engine.secrets import redact

    out, kinds = redact(row["text"])
    return bool(kinds) and not any(s in out for s in row["secrets"])


def left_alone(row: dict[str, Any]) -> bool:
    from cairn.engine.secrets import find_secrets

    return not find_secrets(row["text"])


def evaluate() -> tuple[Figures, Figures, float]:
    positives, near = load("positives"), load("near_misses")
    recall, precision = Figures(), Figures()
    start = time.perf_counter()
    for row in positives:
        recall.add(row["class"], caught(row), row["id"])
    for row in near:
        precision.add(row["class"], left_alone(row), row["id"])
    per_text_ms = (time.perf_counter() - start) * 1000 / (len(positives) + len(near))
    return recall, precision, per_text_ms


def table(title: str, figures: Figures) -> list[str]:
    lines = [f"{title:<28} {'ok':>5} {'of':>5} {'rate':>7}"]
    for cls in sorted(figures.per_class):
        good, total = figures.per_class[cls]
        lines.append(f"  {cls:<26} {good:>5} {total:>5} {good / total:>7.3f}")
    total = sum(n for _, n in figures.per_class.values())
    good = sum(g for g, _ in figures.per_class.values())
    lines.append(f"  {'all':<26} {good:>5} {total:>5} {figures.rate:>7.3f}")
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--json", metavar="OUT", type=Path, help="write the figures here")
    args = parser.parse_args(argv)
    recall, precision, per_text_ms = evaluate()
    print("\n".join(table("positives caught", recall)))
    print("\n".join(table("near-misses left alone", precision)))
    print(f"time per text: {per_text_ms:.3f} ms")
    if recall.failures or precision.failures:
        print("missed:", " ".join(recall.failures) or "-", file=sys.stderr)
        print("flagged:", " ".join(precision.failures) or "-", file=sys.stderr)
    if args.json:
        out = {
            "positives": {k: {"ok": g, "of": n} for k, (g, n) in sorted(recall.per_class.items())},
            "near_misses": {
                k: {"ok": g, "of": n} for k, (g, n) in sorted(precision.per_class.items())
            },
            "recall": round(recall.rate, 4),
            "near_misses_left_alone": round(precision.rate, 4),
            "missed": recall.failures,
            "flagged": precision.failures,
            "ms_per_text": round(per_text_ms, 3),
        }
        args.json.write_text(json.dumps(out, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
