"""What the vector lane's second text costs a recall (``engine/recall/topic.py``).

When a query names speakers of the store, the vector lane embeds it with the names
replaced by "they" and the relevance floor reads the query as asked: two texts in one
model call instead of one. This measures, with the real model on one ORT thread (as the
query path runs it), the CPU of one call of the question alone against one call of the
pair, over LoCoMo's questions that name a speaker of their conversation, alternating the
two, and how many questions name one at all. The speakers named are found as a whole
word of the question (the recall decides it over the keyword lane's best rows; for the
cost, which texts reach the model is what matters).

    PYTHONPATH=src python benchmarks/vector_text_cost.py --data /work/shared/data/locomo10.json
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import time
from collections.abc import Callable
from pathlib import Path

from cairn.adapters.embedding import MiniLmOnnxEmbedder
from cairn.adapters.embedding_cache import CachedEmbedder
from cairn.engine.recall.topic import could_name, unnamed


def questions(data: Path) -> tuple[list[tuple[str, str]], int]:
    """(question, its text with the speakers named replaced) for each question that names
    a speaker, and the number of questions in all."""
    pairs: list[tuple[str, str]] = []
    total = 0
    for sample in json.loads(data.read_text(encoding="utf-8")):
        conv = sample["conversation"]
        speakers = {conv["speaker_a"], conv["speaker_b"]}
        for qa in sample["qa"]:
            q = str(qa["question"])
            total += 1
            named = {s for s in speakers if re.search(rf"(?<!\w){re.escape(s)}(?!\w)", q)}
            if named and could_name(q):
                text = unnamed(q, named)
                if text != q:
                    pairs.append((q, text))
    return pairs, total


def cpu_ms(fn: Callable[[list[str]], object], texts: list[str]) -> float:
    start = time.process_time()
    fn(texts)
    return (time.process_time() - start) * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, required=True)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    pairs, total = questions(args.data)
    model = MiniLmOnnxEmbedder(threads=1)
    model.embed(["warm up"])
    one: list[float] = []
    two: list[float] = []
    for _ in range(args.repeats):
        for q, text in pairs:
            one.append(cpu_ms(model.embed, [q]))
            two.append(cpu_ms(model.embed, [text, q]))
    cached = CachedEmbedder(model)
    for q, text in pairs:
        cached.embed([text, q])
    hit = [cpu_ms(cached.embed, [text, q]) for q, text in pairs]

    def p95(xs: list[float]) -> float:
        return sorted(xs)[int(0.95 * (len(xs) - 1))]

    out = {
        "questions": total,
        "naming_a_speaker": len(pairs),
        "one_text_cpu_ms": {"p50": statistics.median(one), "p95": p95(one)},
        "pair_cpu_ms": {"p50": statistics.median(two), "p95": p95(two)},
        "pair_cached_cpu_ms": {"p50": statistics.median(hit), "p95": p95(hit)},
        "extra_per_naming_recall_ms": statistics.median(two) - statistics.median(one),
    }
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
