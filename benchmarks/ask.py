"""``ask`` abstains when memory holds no answer, and quotes only what answers.

Over a realistic team memory (``tests/services/data/ask_questions.json``: 55 memories of
services, owners, hosts, ports, schedules, rules and the user's preferences), each
answerable question names the memories that answer it and each unanswerable one asks
about a subject or an attribute memory does not hold — most of them near misses of a
stored fact (the production database's port when memory has the staging one's, who owns
the search service when memory has who owns billing). Reported: answerable questions
answered with a supporting citation, unanswerable ones abstained, and unrelated quotes
(a cited memory that is not one of the question's answers; for an unanswerable question
any quote at all).

    python benchmarks/ask.py                    # the default embedder (MiniLM)
    python benchmarks/ask.py --embedder hashing --json out.json
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path
from typing import Any

from cairn import Memory

DATA = Path(__file__).resolve().parent.parent / "tests" / "services" / "data" / "ask_questions.json"


def evaluate(mem: Memory, data: dict[str, Any]) -> dict[str, Any]:
    ids = {key: mem.store(body, kind="fact").id for key, body in data["memories"].items()}
    keys = {v: k for k, v in ids.items()}
    answered = unrelated = abstained = 0
    misses: list[dict[str, Any]] = []
    for question, expected in data["answerable"]:
        got = mem.ask(question)
        cited = [keys.get(c.record_id, c.record_id) for c in got.citations]
        wrong = [c for c in cited if c not in expected]
        unrelated += len(wrong)
        if got.answered and any(c in expected for c in cited):
            answered += 1
        else:
            misses.append({"question": question, "cited": cited})
        if wrong:
            misses.append({"question": question, "unrelated": wrong})
    for question in data["unanswerable"]:
        got = mem.ask(question)
        cited = [keys.get(c.record_id, c.record_id) for c in got.citations]
        unrelated += len(cited)
        if not got.answered:
            abstained += 1
        else:
            misses.append({"question": question, "quoted": cited})
    n_ok, n_no = len(data["answerable"]), len(data["unanswerable"])
    return {
        "memories": len(ids),
        "answerable": n_ok,
        "unanswerable": n_no,
        "answered_with_support": round(answered / n_ok, 3),
        "abstained": round(abstained / n_no, 3),
        "unrelated_quotes": unrelated,
        "misses": misses,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--embedder", choices=("minilm", "hashing"), default="minilm")
    parser.add_argument("--json", dest="json_out", default=None)
    args = parser.parse_args()
    embedder = None
    if args.embedder == "hashing":
        from cairn.adapters.hashing import HashingEmbedder

        embedder = HashingEmbedder()
    data = json.loads(DATA.read_text(encoding="utf-8"))
    config = {"memory": {"markdown": {"enabled": False}}}
    with (
        tempfile.TemporaryDirectory() as folder,
        Memory.open(Path(folder) / "m.db", config=config, embedder=embedder) as mem,
    ):
        out = evaluate(mem, data)
    out["embedder"] = args.embedder
    text = json.dumps(out, indent=2)
    if args.json_out:
        Path(args.json_out).write_text(text + "\n", encoding="utf-8")
    print(text)
    ok = out["answered_with_support"] >= 0.9 and out["abstained"] >= 0.9
    return 0 if ok and out["unrelated_quotes"] == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
