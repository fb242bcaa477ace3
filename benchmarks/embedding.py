"""Benchmark the default embedder (all-MiniLM-L6-v2, int8 ONNX) on synthetic texts.

For each batch size it measures, over --repeats runs:

* sorted texts/s: one ``embed(all_texts)`` call, the way ingestion uses it (the
  embedder sorts by token length internally, so padding is minimal);
* chunked texts/s and per-batch latency: the same texts passed as ``embed(chunk)``
  calls of batch-size texts in their original order, as a caller streaming batches
  would (no global sort, so it also shows what the sort buys);

then the latency of embedding one short query. Texts are deterministic for a --seed.

    python benchmarks/embedding.py                       # varied lengths (3-250 words)
    python benchmarks/embedding.py --words 100 --json out.json
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import statistics
import time
from collections.abc import Sequence

import numpy as np

from cairn.adapters.embedding import MiniLmOnnxEmbedder

# Common English words: nearly one WordPiece token each, so words ~ tokens.
_WORD_TEXT = """
the a of to and in is it you that he was for on are with as his they be at one have this
from or had by word but what some we can out other were all there when up use your how
said an each she which do their time if will way about many then them write would like so
these her long make thing see him two has look more day could go come did number sound no
most people my over know water than call first who may down side been now find any new
work part take get place made live where after back little only round man year came show
every good me give our under name very through just form sentence great think say help low
line differ turn cause much mean before move right boy old too same tell does set three
want air well also play small end put home read hand port large spell add even land here
must big high such follow act why ask men change went light kind off need house picture try
us again animal point mother world near build self earth father head stand own page should
country found answer school grow study still learn plant cover food sun four between state
keep eye never last let thought city tree cross farm hard start might story saw far sea draw
left late run while press close night real life few north open seem together next white
children begin got walk example ease paper group always music those both mark often letter
until mile river car feet care second book carry took science eat room friend began idea
fish mountain stop once base hear horse cut sure watch color face wood main enough plain
girl usual young ready above ever red list though feel talk bird soon body dog family direct
pose leave song measure door product black short numeral class wind question happen complete
ship area half rock order fire south problem piece told knew pass since top whole king space
heard best hour better true during hundred five remember step early hold west ground interest
reach fast verb sing listen six table travel less morning ten simple several vowel toward war
lay against pattern slow center love person money serve appear road map rain rule govern
pull cold notice voice unit power town fine certain fly fall lead cry dark machine note wait
plan figure star box noun field rest correct able pound done beauty drive stood contain front
teach week final gave green oh quick develop ocean warm free minute strong special mind behind
clear tail produce fact street inch multiply nothing course stay wheel full force blue object
decide surface deep moon island foot system busy test record boat common gold possible plane
"""
_WORDS = _WORD_TEXT.split()

_QUERY = "what does the user prefer for dark mode"


def make_texts(n: int, seed: int, words: int | None) -> list[str]:
    """n sentences; each `words` long, or of varied length (mostly short, some long)."""
    rng = random.Random(seed)
    texts = []
    for _ in range(n):
        # Log-uniform 3..250 words (about 3..250 tokens): many short notes and a tail of
        # long paragraphs, so arrival-order batches carry a lot of padding.
        k = words or round(3 * (250 / 3) ** rng.random())
        text = " ".join(rng.choice(_WORDS) for _ in range(k))
        texts.append(text[0].upper() + text[1:] + ".")
    return texts


def _pct(values: Sequence[float], q: float) -> float:
    return float(np.percentile(np.asarray(values), q))


def bench_batch_size(texts: list[str], batch_size: int, repeats: int, threads: int | None) -> dict:
    embedder = MiniLmOnnxEmbedder(batch_size=batch_size, threads=threads)
    embedder.embed(texts[: batch_size * 2])  # load the model and warm up outside the timings
    sorted_rates, chunked_rates, batch_ms = [], [], []
    for _ in range(repeats):
        start = time.perf_counter()
        embedder.embed(texts)
        sorted_rates.append(len(texts) / (time.perf_counter() - start))

        total = 0.0
        for i in range(0, len(texts), batch_size):
            start = time.perf_counter()
            embedder.embed(texts[i : i + batch_size])
            elapsed = time.perf_counter() - start
            total += elapsed
            batch_ms.append(elapsed * 1000)
        chunked_rates.append(len(texts) / total)
    return {
        "batch_size": batch_size,
        "sorted_texts_per_s_median": statistics.median(sorted_rates),
        "chunked_texts_per_s_median": statistics.median(chunked_rates),
        "batch_ms_p50": _pct(batch_ms, 50),
        "batch_ms_p95": _pct(batch_ms, 95),
    }


def bench_query(n: int, threads: int | None) -> dict:
    embedder = MiniLmOnnxEmbedder(threads=threads)
    for _ in range(5):  # load + warm up
        embedder.embed([_QUERY])
    ms = []
    for _ in range(n):
        start = time.perf_counter()
        embedder.embed([_QUERY])
        ms.append((time.perf_counter() - start) * 1000)
    return {"query": _QUERY, "runs": n, "ms_p50": _pct(ms, 50), "ms_p95": _pct(ms, 95)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-n", type=int, default=256, help="texts per run (default 256)")
    parser.add_argument("--words", type=int, default=None, help="fixed words per text")
    parser.add_argument("--batch-sizes", default="1,8,32,64", help="comma-separated")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--queries", type=int, default=100, help="single-query runs")
    parser.add_argument("--threads", type=int, default=None, help="default: all cores")
    parser.add_argument("--seed", type=int, default=1234)
    parser.add_argument("--json", metavar="OUT", help="also write the results here")
    args = parser.parse_args()

    # Other processes on a small machine skew every figure; the load average says how much.
    load_before = os.getloadavg()[0]
    texts = make_texts(args.n, args.seed, args.words)
    batch_sizes = [int(b) for b in args.batch_sizes.split(",")]
    rows = [bench_batch_size(texts, b, args.repeats, args.threads) for b in batch_sizes]
    query = bench_query(args.queries, args.threads)
    load = {"before": load_before, "after": os.getloadavg()[0]}

    shape = f"{args.words} words" if args.words else "varied length"
    print(
        f"{args.n} texts ({shape}), "
        f"{args.repeats} repeats, threads={args.threads or os.cpu_count()}, "
        f"load average {load['before']:.1f} -> {load['after']:.1f}"
    )
    print(
        f"{'batch':>5}  {'sorted t/s':>10}  {'chunked t/s':>11}  {'batch p50 ms':>12}  "
        f"{'batch p95 ms':>12}"
    )
    for r in rows:
        print(
            f"{r['batch_size']:>5}  {r['sorted_texts_per_s_median']:>10.1f}  "
            f"{r['chunked_texts_per_s_median']:>11.1f}  {r['batch_ms_p50']:>12.1f}  "
            f"{r['batch_ms_p95']:>12.1f}"
        )
    print(f"single query: p50 {query['ms_p50']:.2f} ms, p95 {query['ms_p95']:.2f} ms")

    if args.json:
        result = {
            "machine": {"cpus": os.cpu_count(), "platform": platform.platform(), "load": load},
            "params": vars(args),
            "batches": rows,
            "single_query": query,
        }
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump(result, f, indent=2)


if __name__ == "__main__":
    main()
