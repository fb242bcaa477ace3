"""The synthetic corpus and process harness shared by the latency benchmarks.

``recall_latency.py`` and ``scale.py`` measure the same memories the same way through
these modules; the names below are what they share.
"""

from latency.corpus import DIM, NOISE_NORM, Dataset, LookupEmbedder, make_queries, pool_cache
from latency.harness import (
    file_sizes,
    log,
    peak_rss_mb,
    run_script_worker,
    summary,
    worker_ingest,
    worker_pool,
    worker_real_ingest,
    worker_recall,
)
from latency.report import machine

__all__ = [
    "DIM",
    "NOISE_NORM",
    "Dataset",
    "LookupEmbedder",
    "file_sizes",
    "log",
    "machine",
    "make_queries",
    "peak_rss_mb",
    "pool_cache",
    "run_script_worker",
    "summary",
    "worker_ingest",
    "worker_pool",
    "worker_real_ingest",
    "worker_recall",
]
