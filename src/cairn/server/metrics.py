"""Prometheus metrics of the server (``GET /metrics``).

Per route and operation (the query's view, the mutation): request counts by status and a
latency histogram; per recall stage (the stages of ``RecallResponse.timings_ms``): a
latency histogram; requests in flight; and store sizes, totals over the tenants the
server's tokens serve, without tenant labels (metrics must name no tenant); and, on
PostgreSQL, the connection pool (in use, idle, waiting), each unit of database work's
latency and its errors. Each server keeps its own registry, so two apps in one process
never mix their counts.

With ``--workers`` > 1 every worker writes its samples into the run's folder
(``PROMETHEUS_MULTIPROC_DIR``, prometheus-client's multiprocess mode) and a scrape,
whichever worker answers it, reads them all: counters and histograms summed over the
workers, live gauges (in flight, the pools) summed over the workers alive.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from typing import Any

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest
from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.multiprocess import MultiProcessCollector
from prometheus_client.registry import Collector

CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"

# Seconds: fine below 100 ms, where a recall should be, coarse above.
REQUEST_BUCKETS = (
    0.001, 0.0025, 0.005, 0.01, 0.015, 0.02, 0.03, 0.04, 0.06, 0.08, 0.1, 0.15, 0.25, 0.5,
    1.0, 2.5, 5.0, 10.0, 30.0,
)  # fmt: skip
DATABASE_BUCKETS = (
    0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0,
)  # fmt: skip
MULTIPROCESS_ENV = "PROMETHEUS_MULTIPROC_DIR"
STAGE_BUCKETS = (
    0.0001, 0.00025, 0.0005, 0.001, 0.002, 0.004, 0.008, 0.015, 0.03, 0.06, 0.125, 0.25, 1.0,
)  # fmt: skip

# What a size is called, and where it comes from in a status's counts.
SIZES = {
    "records": "live memories",
    "versions": "stored versions of memories",
    "events": "journal events",
    "tombstones": "forgotten memories (tombstones in force)",
    "applications": "application records (memories delivered to tasks)",
}


class _StoreSizes(Collector):
    """Store sizes, measured at most every ``ttl`` seconds (a scrape every few seconds
    must not count a large store each time)."""

    def __init__(self, measure: Callable[[], Mapping[str, int]], ttl: float) -> None:
        self._measure = measure
        self._ttl = ttl
        self._lock = threading.Lock()
        self._at = -float("inf")
        self._sizes: Mapping[str, int] = {}

    def collect(self) -> Iterator[Metric]:
        with self._lock:
            if time.monotonic() - self._at >= self._ttl:
                self._sizes = dict(self._measure())
                self._at = time.monotonic()
            sizes = self._sizes
        for name, what in SIZES.items():
            if name in sizes:
                help_text = f"{what}, summed over the tenants and agents the tokens serve"
                yield GaugeMetricFamily(f"cairn_store_{name}", help_text, value=sizes[name])
        if "bytes" in sizes:
            yield GaugeMetricFamily("cairn_store_bytes", "size of the store", value=sizes["bytes"])
        if "tenants" in sizes:
            yield GaugeMetricFamily(
                "cairn_tenants", "tenants with at least one token", value=sizes["tenants"]
            )


class Metrics:
    """``sizes``: the store sizes (measured at most every ``ttl`` s); ``database``: the
    store's health (``{"pool": {...}}``), None for a store without a pool."""

    def __init__(
        self,
        sizes: Callable[[], Mapping[str, int]] | None = None,
        ttl: float = 15.0,
        *,
        database: Callable[[], Mapping[str, Any]] | None = None,
    ) -> None:
        self.registry = CollectorRegistry()
        self._folder = os.environ.get(MULTIPROCESS_ENV) or None
        self._sizes = _StoreSizes(sizes, ttl) if sizes is not None else None
        self._database = database
        self.requests = Counter(
            "cairn_requests",
            "requests answered, by route, operation (view or mutation) and HTTP status",
            ["route", "operation", "status"],
            registry=self.registry,
        )
        self.latency = Histogram(
            "cairn_request_seconds",
            "time from a request's arrival to its answer, by route and operation",
            ["route", "operation"],
            buckets=REQUEST_BUCKETS,
            registry=self.registry,
        )
        self.stages = Histogram(
            "cairn_recall_stage_seconds",
            "time of each recall stage (the stages of RecallResponse.timings_ms)",
            ["stage"],
            buckets=STAGE_BUCKETS,
            registry=self.registry,
        )
        self.in_flight = Gauge(
            "cairn_requests_in_flight",
            "requests being answered now",
            registry=self.registry,
            multiprocess_mode="livesum",
        )
        self.pool = Gauge(
            "cairn_db_pool_connections",
            "PostgreSQL connections of the pools, by state (in_use, idle, waiting: requests"
            " waiting for one; max: the pools' limit)",
            ["state"],
            registry=self.registry,
            multiprocess_mode="livesum",
        )
        self.db_seconds = Histogram(
            "cairn_db_seconds",
            "time of each unit of database work (a read transaction, a write transaction)",
            ["work"],
            buckets=DATABASE_BUCKETS,
            registry=self.registry,
        )
        self.db_errors = Counter(
            "cairn_db_errors",
            "units of database work that failed, by work and error (StorageUnavailable: the"
            " database unreachable, restarting, out of connections or a lock not granted)",
            ["work", "error"],
            registry=self.registry,
        )
        if self._sizes is not None and self._folder is None:
            self.registry.register(self._sizes)

    def observe_database(self, work: str, seconds: float, error: str | None) -> None:
        """One unit of database work (the store's observer)."""
        self.db_seconds.labels(work).observe(seconds)
        if error is not None:
            self.db_errors.labels(work, error).inc()

    def sample_pool(self) -> None:
        """This process's pool now (after each request and at each scrape: with several
        workers, each one's last sample is summed)."""
        if self._database is None:
            return
        try:
            pool = self._database().get("pool") or {}
        except Exception:  # a gauge must never fail the request it follows
            return
        for state in ("in_use", "idle", "waiting", "max"):
            if state in pool:
                self.pool.labels(state).set(pool[state])

    def observe(self, route: str, operation: str, status: int, seconds: float) -> None:
        self.requests.labels(route, operation, str(status)).inc()
        self.latency.labels(route, operation).observe(seconds)

    def observe_recall(self, timings_ms: Mapping[str, float]) -> None:
        for stage, ms in timings_ms.items():
            self.stages.labels(stage).observe(ms / 1000.0)

    def render(self) -> bytes:
        self.sample_pool()
        if self._folder is None:
            return generate_latest(self.registry)
        every = CollectorRegistry()
        MultiProcessCollector(every, path=self._folder)  # type: ignore[no-untyped-call]
        if self._sizes is not None:
            every.register(self._sizes)  # the store's, the same from any worker
        return generate_latest(every)

    def process_ended(self) -> None:
        """This worker stops: its live gauges leave the sums (its counts stay)."""
        if self._folder is not None:
            from prometheus_client.multiprocess import mark_process_dead

            mark_process_dead(os.getpid(), self._folder)  # type: ignore[no-untyped-call]
