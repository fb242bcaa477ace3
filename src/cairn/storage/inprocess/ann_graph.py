"""Approximate nearest neighbours (HNSW, via the optional ``usearch``) for big partitions.

Why: exact search costs one pass over a partition's vectors per query, and that pass is
memory-bound; at a few tens of thousands of rows a graph costs about what exact search
does, hence the default threshold of 50k live vectors (measurements: ``docs/benchmarks.md``,
"Approximate nearest neighbours"). Below it the exact block search stays the default;
without ``usearch`` installed everything stays exact.

This module is the graph's life: when a partition gets a graph, how it follows the exact
index (adds, removals, purges), how it is searched and when exact search answers instead.
Where the graph is kept between processes -- files, sidecar, lock, the check of a loaded
file, the scrub of purged vectors -- is :mod:`cairn.storage.inprocess.ann_files`.

Design choices (each one tested in ``tests/storage/inprocess/test_ann_graph.py`` and
``tests/storage/inprocess/test_ann_files.py``):

* One graph per tenant+agent partition -- the same partitions as the exact blocks of
  :mod:`cairn.storage.inprocess.vector_index` -- and only for partitions with at least ``threshold``
  live vectors. Tenant isolation is structural: a graph holds nothing but its own
  partition's rows, so no query can be answered from another tenant, and nothing is wasted
  on oversampling past other tenants' rows (one shared graph would need 10x oversampling
  for a tenant holding 10 % of the rows, and a small tenant would always fall back).
* Liveness: the graph holds live rows only. A row that is superseded, evicted, forgotten or
  purged leaves the graph at the next sync (``_sync_index`` already learns every such row
  because its ``change_seq`` moved).
* Project scope (global rows plus the asked project's) is the one filter left, and it is
  applied before ranking: the graph is asked for ``limit x oversample / share`` candidates
  (``share`` = the eligible fraction of the partition, counted exactly), every candidate is
  checked against the exact block (still live, in scope), and when fewer than ``limit``
  eligible candidates survive while more eligible rows exist, the search falls back to the
  exact block. A scope holding at most ``4 x limit`` rows is searched exactly right away.
* Candidates are rescored with the exact float32 vectors of the block, so the scores are
  the same cosines exact search returns, and the graph can store int8 (4x smaller; the
  order is restored by the rescoring). ``oversample`` 4 was chosen on the 1M set;
  ``expansion_search`` made no difference there.
* Rows synced but not yet in the graph (``pending``) are searched exactly and merged, so a
  fresh write is found at once; each sync adds pending rows for at most ``catch_up_ms``,
  unless they exceed ``max_pending_share`` of the partition, then all at once.
* A loaded graph that differs from the database in more than ``max_repair_share`` of the
  rows is rebuilt; smaller differences are repaired (purged rows scrubbed, dead rows
  unlinked, missing rows pending).
* A purged row's stored bytes are noted (with a neighbour's, to write over them) before
  its removal, and the graph is written at once (also by a process finding the purge on
  open): the file is scrubbed at the next sync of a process with it loaded, or next open.
* A first graph is built off the lock in a long-running process (``background``).

usearch is imported only when a partition first reaches the threshold, and onnxruntime is
imported before it: see :func:`load_usearch` for the crash the other order causes.
"""

from __future__ import annotations

import contextlib
import importlib.util
import logging
import math
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from cairn.storage.inprocess.ann_build import GraphBuild, adopt
from cairn.storage.inprocess.ann_files import (
    AnnFiles,
    GraphFormat,
    Needle,
    compare,
    live_rows,
    stored_vectors,
)
from cairn.storage.inprocess.vector_index import CHANGED_VECTOR, PURGED, Block, ExactVectorIndex

log = logging.getLogger(__name__)

DEFAULT_ANN_THRESHOLD = 50_000


@dataclass(frozen=True, slots=True)
class AnnSettings:
    threshold: int = DEFAULT_ANN_THRESHOLD
    connectivity: int = 16
    expansion_add: int = 128
    expansion_search: int = 64
    dtype: str = "i8"
    oversample: float = 4.0
    max_candidates: int = 4096
    catch_up_ms: float = 20.0
    max_pending_share: float = 0.02
    save_every: int = 5000  # graph changes before the file is rewritten (purges: at once)
    max_repair_share: float = 0.25  # differences found on load beyond which we rebuild
    background: bool = False  # first graphs built on a thread, off the lock: ann_build


def usearch_installed() -> bool:
    """Whether ``usearch`` can be imported, without importing it (see :func:`load_usearch`)."""
    try:
        return importlib.util.find_spec("usearch") is not None
    except (ImportError, ValueError):  # ValueError: sys.modules holds None for it
        return False


def load_usearch() -> Any | None:
    """The ``usearch.index`` module, or None when the optional dependency is missing.

    onnxruntime (the default embedder's runtime) is imported first when it is installed:
    importing it *after* usearch crashes the process (SIGSEGV in libstdc++'s codecvt during
    onnxruntime's module init; seen with usearch 2.26.6, numkong 7.8.6 and onnxruntime 1.32
    on Linux x86-64), while the other order works. For the same reason usearch is imported
    only when a partition first needs a graph, never when a store opens.
    """
    with contextlib.suppress(Exception):  # not installed or broken: cannot crash later
        import onnxruntime  # noqa: F401
    try:
        import usearch.index as module
    except ImportError:
        return None
    return module


@dataclass
class _Partition:
    block: Block
    index: Any  # usearch.index.Index
    pending: set[int] = field(default_factory=set)
    unsaved: int = 0
    needles: list[Needle] = field(default_factory=list)
    source: str = "built"


class AnnIndexes:
    """The approximate indexes of one store, following its exact blocks."""

    def __init__(self, directory: Path | None, dim: int, settings: AnnSettings) -> None:
        self.directory = directory
        self.dim = dim
        self.settings = settings
        self._usearch: Any | None = None  # imported when a partition first needs a graph
        self._files: AnnFiles | None = None  # made with it; None for an in-memory store
        self._unavailable = False
        self._parts: dict[tuple[str, str], _Partition] = {}
        self._exact: ExactVectorIndex | None = None
        self._seq = 0
        self._building: dict[tuple[str, str], GraphBuild] = {}

    @classmethod
    def open(
        cls, db_path: Path, dim: int, threshold: int | None, **options: Any
    ) -> AnnIndexes | None:
        """None when ANN is switched off (``threshold`` None) or usearch is missing."""
        if threshold is None:
            return None
        if not usearch_installed():
            log.info("usearch is not installed: vector search stays exact")
            return None
        directory = None if str(db_path) == ":memory:" else Path(f"{db_path}.ann")
        return cls(directory, dim, AnnSettings(threshold=max(1, threshold), **options))

    # -- following the exact index ----------------------------------------------------------

    def sync(self, exact: ExactVectorIndex, seq: int) -> None:
        """Bring every graph up to the exact index just synced to ``seq``.

        A failure here never fails a recall: it is logged, and this store searches exactly
        from then on (the files are left for a later process to check and reuse)."""
        if self._unavailable:
            return
        try:
            self._sync(exact, seq)
        except Exception:
            log.exception("the ANN index failed: vector search stays exact in this process")
            self._unavailable = True
            for part in self._parts.values():
                part.block.tracked = False
                part.block.journal.clear()
            self._parts.clear()

    def _sync(self, exact: ExactVectorIndex, seq: int) -> None:
        if exact is not self._exact:  # first sync, or the projection was reset
            for part in self._parts.values():
                part.block.tracked = False
            self._parts.clear()
            self._building.clear()
            self._exact = exact
        self._seq = seq
        threshold = self.settings.threshold
        for block in exact.blocks():
            key = (block.tenant, block.agent)
            found = self._parts.get(key)
            if found is not None and block.live_count < threshold // 2:
                self._detach(key, found)
                continue
            if found is None:
                if block.live_count < threshold or not self._load_module():
                    continue
                made = self._built(exact, block) if self.settings.background else None
                if made is None and self.settings.background:
                    continue  # being built: searched exactly until it is ready
                found = self._parts[key] = made or self._attach(exact, block)
            part = found
            self._apply_journal(exact, part)
            self._catch_up(exact, part)
            if part.needles or part.unsaved >= self.settings.save_every:
                self._save(exact, part)

    def _load_module(self) -> bool:
        if self._usearch is None and not self._unavailable:
            self._usearch = load_usearch()
            self._unavailable = self._usearch is None
            if self._unavailable:
                log.warning("usearch cannot be imported: vector search stays exact")
            elif self.directory is not None:
                s = self.settings
                self._files = AnnFiles(
                    self.directory,
                    GraphFormat(self.dim, s.dtype, s.connectivity),
                    self._new_index,
                    getattr(self._usearch, "__version__", None) or _usearch_version(),
                )
        return self._usearch is not None

    def _new_index(self) -> Any:
        s = self.settings
        assert self._usearch is not None
        return self._usearch.Index(
            ndim=self.dim,
            metric="cos",
            dtype=s.dtype,
            connectivity=s.connectivity,
            expansion_add=s.expansion_add,
            expansion_search=s.expansion_search,
        )

    def _attach(self, exact: ExactVectorIndex, block: Block) -> _Partition:
        part = self._load(exact, block)
        if part is None:
            part = self._build(exact, block)
            self._save(exact, part)
        block.tracked = True
        block.journal.clear()
        return part

    def _built(self, exact: ExactVectorIndex, block: Block) -> _Partition | None:
        """The graph from its file or a finished background build; None while building."""
        key = (block.tenant, block.agent)
        job = self._building.get(key)
        if job is None and (part := self._load(exact, block)) is None:
            self._building[key] = GraphBuild(exact, block, self._seq, self._new_index)
            return None
        if job is not None and not job.done.is_set():
            return None
        if job is not None:
            index, pending = adopt(self._building.pop(key), exact, block)
            if len(pending) > self.settings.max_pending_share * block.live_count:
                self._building[key] = GraphBuild(exact, block, self._seq, self._new_index)
                return None  # much was written meanwhile: build again from the new state
            part = _Partition(block, index, pending, unsaved=len(index), source="built")
            self._save(exact, part)
        block.tracked = True
        block.journal.clear()
        return part

    def _detach(self, key: tuple[str, str], part: _Partition) -> None:
        part.block.tracked = False
        part.block.journal.clear()
        del self._parts[key]
        if self._files is not None:
            self._files.remove(*key)

    def _build(self, exact: ExactVectorIndex, block: Block) -> _Partition:
        start = time.perf_counter()
        index = self._new_index()
        rows = live_rows(block)
        slots = exact.slots(block, rows)
        for begin in range(0, len(rows), 65_536):  # bounded temporary copies
            chunk = slice(begin, begin + 65_536)
            index.add(rows[chunk].astype(np.uint64), block.matrix[slots[chunk]], threads=0)
        log.info("built the ANN of %s/%s: %d vectors in %.1f s", block.tenant, block.agent,
                 len(rows), time.perf_counter() - start)  # fmt: skip
        return _Partition(block, index, unsaved=len(rows), source="built")

    def _load(self, exact: ExactVectorIndex, block: Block) -> _Partition | None:
        """The partition's graph from its file, repaired, or None: build it."""
        if self._files is None:
            return None
        loaded = self._files.load(block, self._seq)
        if loaded is None:
            return None
        found = compare(exact, block, loaded.index, loaded.saved_seq)
        if found.count > self.settings.max_repair_share * max(1, found.live):
            log.info("ANN file of %s/%s differs in %d rows: rebuilding", block.tenant,
                     block.agent, found.count)  # fmt: skip
            return None
        part = _Partition(block, loaded.index, source="loaded")
        if found.scrub:
            self._purge(part, found.scrub)
        for row in found.unlink:
            part.index.remove(row)
            part.unsaved += 1
        part.pending.update(found.pending)
        return part

    def _save(self, exact: ExactVectorIndex, part: _Partition) -> None:
        if self._files is None:
            part.unsaved, part.needles = 0, []
            return
        saved = self._files.save(
            part.block,
            part.index,
            self._seq,
            part.needles,
            rebuild=lambda: self._build(exact, part.block).index,
        )
        part.index = saved.index
        if saved.done:
            part.unsaved, part.needles = 0, []

    def _apply_journal(self, exact: ExactVectorIndex, part: _Partition) -> None:
        block = part.block
        if not block.journal:
            return
        rows = np.fromiter(block.journal.keys(), dtype=np.int64, count=len(block.journal))
        flags = np.fromiter(block.journal.values(), dtype=np.int64, count=len(block.journal))
        block.journal.clear()
        slots = exact.slots(block, rows)
        live = np.zeros(len(rows), dtype=bool)
        live[slots >= 0] = block.live[slots[slots >= 0]]
        in_graph = np.asarray(part.index.contains(rows.astype(np.uint64)), dtype=bool)
        purged: list[int] = []
        for row, flag, is_live, present in zip(
            rows.tolist(), flags.tolist(), live.tolist(), in_graph.tolist(), strict=True
        ):
            if flag & PURGED:
                part.pending.discard(row)
                if present:
                    purged.append(row)
            elif not is_live:
                part.pending.discard(row)
                if present:
                    part.index.remove(row)
                    part.unsaved += 1
            else:
                if present and flag & CHANGED_VECTOR:
                    part.index.remove(row)
                    part.unsaved += 1
                    present = False
                if not present:
                    part.pending.add(row)
        if purged:
            self._purge(part, purged)

    def _purge(self, part: _Partition, rows: list[int]) -> None:
        """Remove purged rows, noting their stored bytes and a filler for them: the next
        write overwrites those bytes in the file and reloads (see :mod:`ann_files`)."""
        index = part.index
        for row in rows:
            stored = stored_vectors(index, np.asarray([row]))
            needle = stored.tobytes()
            filler = np.roll(stored, 1).tobytes()  # used when the graph has no other node
            found = index.search(stored[0].astype(np.float32), 3, threads=1)
            others = [int(k) for k in found.keys if int(k) != row]
            if others:
                near = stored_vectors(index, np.asarray(others[:1])).tobytes()
                if near == needle:  # a live row with the very same vector: its bytes stay
                    needle = b""
                filler = near  # a neighbour's vector keeps the graph's geometry sensible
            index.remove(row)
            if needle:
                part.needles.append((needle, filler))
            part.unsaved += 1

    def _catch_up(self, exact: ExactVectorIndex, part: _Partition) -> None:
        if not part.pending:
            return
        block = part.block
        everything = len(part.pending) > self.settings.max_pending_share * block.live_count
        deadline = time.perf_counter() + self.settings.catch_up_ms / 1000
        todo = np.fromiter(part.pending, dtype=np.int64, count=len(part.pending))
        step = 65_536 if everything else 32
        for begin in range(0, len(todo), step):
            rows = todo[begin : begin + step]
            slots = exact.slots(block, rows)
            ok = slots >= 0
            ok[ok] = block.live[slots[ok]]
            rows, slots = rows[ok], slots[ok]
            if len(rows):
                fresh = ~np.asarray(part.index.contains(rows.astype(np.uint64)), dtype=bool)
                rows, slots = rows[fresh], slots[fresh]
            if len(rows):
                part.index.add(
                    rows.astype(np.uint64), block.matrix[slots], threads=0 if everything else 1
                )
                part.unsaved += len(rows)
            part.pending.difference_update(todo[begin : begin + step].tolist())
            if not everything and time.perf_counter() > deadline:
                break

    # -- search ----------------------------------------------------------------------------

    def search(
        self,
        exact: ExactVectorIndex,
        query: np.ndarray,
        tenant: str,
        agent: str,
        project_id: str | None,
        limit: int,
    ) -> list[tuple[int, float]] | None:
        """Top ``limit`` (row, cosine) like exact search, or None: use exact search."""
        try:
            return self._search(exact, query, tenant, agent, project_id, limit)
        except Exception:
            log.exception("the ANN search failed: vector search stays exact in this process")
            self._unavailable = True
            self._parts.clear()
            return None

    def _search(
        self,
        exact: ExactVectorIndex,
        query: np.ndarray,
        tenant: str,
        agent: str,
        project_id: str | None,
        limit: int,
    ) -> list[tuple[int, float]] | None:
        part = self._parts.get((tenant, agent))
        if part is None or exact is not self._exact or limit <= 0:
            return None
        block = part.block
        live = block.live_count
        if live == 0 or len(part.pending) > self.settings.max_pending_share * live:
            return None
        project_code = exact.project_code(project_id)
        mask = block.scope_mask(project_code) if project_code is not None else None
        eligible = live if mask is None else int(np.count_nonzero(mask))
        if eligible == 0:
            return []
        if mask is not None and eligible <= 4 * limit:
            slots = np.flatnonzero(mask)
            return block.top(slots, block.matrix[slots] @ query, limit)
        share = eligible / live
        indexed = len(part.index)
        count = min(
            math.ceil(limit * self.settings.oversample / share),
            self.settings.max_candidates,
            indexed,
        )
        slots = np.empty(0, dtype=np.int64)
        if count > 0:
            found = part.index.search(query, count, threads=1)
            slots = exact.slots(block, np.asarray(found.keys, dtype=np.int64))
            slots = slots[slots >= 0]
            slots = slots[block.eligible(slots, project_code)]
        from_graph = len(slots)
        if part.pending:
            rows = np.fromiter(part.pending, dtype=np.int64, count=len(part.pending))
            extra = exact.slots(block, rows)
            extra = extra[extra >= 0]
            extra = extra[block.eligible(extra, project_code)]
            slots = np.unique(np.concatenate([slots, extra]))
        # Too few eligible candidates while the graph holds more: exact is the answer.
        if len(slots) < min(limit, eligible) and (count < indexed or from_graph == 0):
            return None
        return block.top(slots, block.matrix[slots] @ query, limit)

    def describe(self) -> list[dict[str, Any]]:
        return [
            {
                "tenant": t,
                "agent": a,
                "vectors": len(p.index),
                "pending": len(p.pending),
                "source": p.source,
                "memory_bytes": int(p.index.memory_usage),
            }
            for (t, a), p in self._parts.items()
        ]


def _usearch_version() -> str | None:
    try:
        from importlib.metadata import version

        return version("usearch")
    except Exception:  # only informative
        return None


__all__ = [
    "DEFAULT_ANN_THRESHOLD",
    "AnnIndexes",
    "AnnSettings",
    "load_usearch",
    "usearch_installed",
]
