"""A partition's first graph, built on a thread of its own while searches go on.

Building the HNSW graph of a partition that just reached the threshold takes tens of
seconds (50k vectors: ~30-70 s on a loaded 2-core machine). Built inside the index's sync,
it held the search index's lock all that time, so every other tenant's recall on a
long-running server waited for it. Here the build works on a copy of the partition's live
rows and vectors taken under the lock (a fraction of a second), adds them outside it
(usearch releases the GIL while it adds), and the partition keeps being searched exactly
until the graph is ready; the next sync then checks the graph against the partition as it
is by then (:func:`cairn.storage.inprocess.ann_files.compare`: rows written, changed or removed
meanwhile) and repairs it, the way a graph loaded from its file is.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from typing import Any

import numpy as np

from cairn.storage.inprocess.ann_files import compare, live_rows
from cairn.storage.inprocess.vector_index import Block, ExactVectorIndex

log = logging.getLogger(__name__)

_ADD_ROWS = 4096  # per call to the graph's add: bounded temporary copies


class GraphBuild:
    """One background build: started with a snapshot, ``done`` once ``index`` (or
    ``error``) is set."""

    def __init__(
        self, exact: ExactVectorIndex, block: Block, seq: int, new_index: Callable[[], Any]
    ) -> None:
        self.rows = live_rows(block).copy()
        self.vectors = block.matrix[exact.slots(block, self.rows)]  # a copy (fancy index)
        self.seq = seq
        self.label = f"{block.tenant}/{block.agent}"
        self.index: Any | None = None
        self.error: BaseException | None = None
        self.done = threading.Event()
        self._new_index = new_index
        self._thread = threading.Thread(
            target=self._run, name=f"cairn-ann-{self.label}", daemon=True
        )
        self._thread.start()

    def _run(self) -> None:
        start = time.perf_counter()
        try:
            index = self._new_index()
            keys = self.rows.astype(np.uint64)
            for begin in range(0, len(keys), _ADD_ROWS):
                end = begin + _ADD_ROWS
                index.add(keys[begin:end], self.vectors[begin:end], threads=0)
            self.index = index
            log.info(
                "built the ANN of %s: %d vectors in %.1f s (in the background)",
                self.label,
                len(keys),
                time.perf_counter() - start,
            )
        except BaseException as exc:  # reported by the sync that adopts it
            self.error = exc
        finally:
            self.vectors = np.empty((0, 0), dtype=np.float32)  # the copy is not kept
            self.done.set()

    def wait(self, timeout: float | None = None) -> bool:
        return self.done.wait(timeout)


def adopt(job: GraphBuild, exact: ExactVectorIndex, block: Block) -> tuple[Any, set[int]]:
    """A finished build's graph, repaired to the partition as it is now (rows gone or
    changed since the copy taken out), and the rows still to add (pending)."""
    if job.error is not None or job.index is None:
        raise job.error or RuntimeError("the ANN build ended without a graph")
    found = compare(exact, block, job.index, job.seq)
    for row in [*found.scrub, *found.unlink]:
        job.index.remove(row)
    return job.index, set(found.pending)
