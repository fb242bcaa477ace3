"""Telemetry (SPEC §6): counters only, never content, per tenant and agent.

Counts that come with a change (a reflection run, a promotion, an eviction) are added in
that change's transaction (``Journal.commit(counters=...)``). Recall latency by stage is
measured on every recall, which writes nothing: it is buffered here and written in one
transaction now and then, when asked for, and when the engine closes.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping

from cairn.errors import StoreUnusable
from cairn.model import Namespace
from cairn.services.store_roles import EventsAndTransactions

FLUSH_EVERY = 256  # buffered recalls


class Telemetry:
    def __init__(self, records: EventsAndTransactions) -> None:
        self._records = records
        self._lock = threading.Lock()
        self._buffer: dict[tuple[str, str], dict[str, float]] = {}
        self._pending = 0

    def count(self, ns: Namespace, counters: Mapping[str, float]) -> None:
        with self._lock:
            row = self._buffer.setdefault((ns.tenant, ns.agent), {})
            for name, value in counters.items():
                row[name] = row.get(name, 0.0) + float(value)
            self._pending += 1
            due = self._pending >= FLUSH_EVERY
        if due:
            self.flush()

    def recall(self, ns: Namespace, timings_ms: Mapping[str, float]) -> None:
        """One recall's latency by stage (milliseconds summed; divide by ``recall:calls``)."""
        counters = {f"recall:ms:{stage}": ms for stage, ms in timings_ms.items()}
        self.count(ns, {"recall:calls": 1, **counters})

    def flush(self) -> None:
        with self._lock:
            buffer, self._buffer, self._pending = self._buffer, {}, 0
        if not buffer:
            return
        try:
            with self._records.transaction() as tx:
                for (tenant, agent), counters in sorted(buffer.items()):
                    tx.add_counters(tenant, agent, counters)
        except StoreUnusable:
            pass  # a read-only store or a full disk: latency counts are not worth a failed read

    def counters(self, tenant: str, agent: str | None) -> dict[str, dict[str, float]]:
        self.flush()
        return self._records.counters(tenant, agent)
