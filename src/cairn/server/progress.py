"""How far a bulk mutation running in this server has got, for the client that sent it.

A bulk mutation (ingest, import, rebuild) reports ``(done, total)`` through its
provider's ``progress`` callback as it embeds and commits; while it runs here, the
callback writes into this board under the request's tenant and idempotency key, and
``GET /v1/progress?key=...`` reads it back for the same tenant only (another tenant's
key is never found, whoever asks). The entry goes when the request ends, so the board
holds only what is in flight.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager


class ProgressBoard:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._running: dict[tuple[str, str], tuple[int, int]] = {}

    @contextmanager
    def running(self, tenant: str, key: str) -> Iterator[Callable[[int, int], None]]:
        """The callback a request under way reports to; its entry is dropped after."""
        where = (tenant, key)

        def report(done: int, total: int) -> None:
            with self._lock:
                self._running[where] = (done, total)

        with self._lock:
            self._running[where] = (0, 0)
        try:
            yield report
        finally:
            with self._lock:
                self._running.pop(where, None)

    def read(self, tenant: str, key: str) -> tuple[int, int] | None:
        """``(done, total)`` of the tenant's request under way with ``key``, else None."""
        with self._lock:
            return self._running.get((tenant, key))
