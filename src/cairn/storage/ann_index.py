"""Approximate nearest neighbours (HNSW, via the optional ``usearch``) for big partitions.

Why: exact search costs one pass over a partition's vectors per query, and that pass is
memory-bound. Measured with ``benchmarks/scale.py`` on the 2-core machine (vector lane alone,
limit 100): 400k rows exact 29 ms p50 / 38 ms p95, through the graph 3.4 / 6.0 ms with
recall@10 0.979 against exact. At 40k rows exact (3.2 ms) costs about what the graph does
(2.8 ms), hence the default threshold of 50k live vectors: below it the exact block search
stays the default; without ``usearch`` installed everything stays exact.

Design choices (each one tested in ``tests/storage/test_ann_index.py``):

* One graph per tenant+agent partition -- the same partitions as the exact blocks of
  :mod:`cairn.storage.vector_index` -- and only for partitions with at least ``threshold``
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
  the same cosines exact search returns, and the graph can store int8 (4x smaller: 508 MB
  of files and ~0.9 GB in memory at 1M; the order is restored by the rescoring: recall@10
  0.935 raw, 0.998 rescored on 100k clustered MiniLM-like vectors). ``oversample`` 4 (400
  candidates for the lane's 100) was chosen on the 1M set: recall@10 0.948 / 0.972 / 0.981
  for 2 / 3 / 4, p50 2.3 / 2.7 / 3.3 ms; ``expansion_search`` made no difference there.
* Rows synced but not yet in the graph (``pending``) are searched exactly and merged, so a
  fresh write is found at once; each sync adds pending rows for at most ``catch_up_ms``,
  unless they exceed ``max_pending_share`` of the partition, then all at once.

Persistence, kept consistent across processes: each graph is written next to the database
as ``<db>.ann/<partition>.<token>.usearch`` plus a sidecar ``<partition>.json`` holding the
token, the ``change_seq`` the graph reflects, the tenant, agent, model(s), dim and graph
settings. Writing is atomic and ordered: the data file under a fresh name (fsynced), then
the sidecar replaced, then older data files deleted, all under an ``flock`` on
``<db>.ann/lock``; a sidecar claiming a newer ``change_seq`` is never replaced by an older
state. On open a graph is loaded only when its sidecar matches, and it is then checked
against the rows just loaded from the database: every key must be a live row of the
partition, and the stored vector of every row changed since the file was written, plus a
sample of the others, must match that row's vector (cosine >= 0.98; one mismatch in the
sample and every vector is checked); missing rows become pending. Too many differences, or
any mismatch of the sidecar, and the graph is rebuilt from the block and written back.
Those checks, not the sidecar's ``change_seq`` alone, are what make a stale file (a rebuilt
projection, a restored database) harmless. Building costs ~5-8 minutes for 1M vectors on
the 2-core machine (once; later opens load the files and check them in ~2 s at 1M, while
loading the float32 vectors from SQLite into the exact blocks takes ~17 s).

Permanent forgetting leaves no trace in the file: usearch's ``remove`` only unlinks a node;
its vector stays in the slot and in every later save (checked), and which freed slot a later
``add`` reuses is not something to rely on (also checked). So for a purged row the stored
bytes are noted before the removal, together with a neighbour's stored bytes, and the
graph is written at once (also in the process that finds the purge on open). The written
file is patched -- the neighbour's bytes over every occurrence of the purged bytes, found
in one pass over the file's vector section however many rows were purged -- and the graph
is reloaded from it, so memory holds no copy either; if the bytes were still found, the
graph would be rebuilt from the live rows. Only then is the file published, and the older
files, which held the vector, are deleted. This happens at the next sync of any process
with the graph loaded (the next vector search), or when the graph is next opened.

usearch is imported only when a partition first reaches the threshold, and onnxruntime is
imported before it: see :func:`load_usearch` for the crash the other order causes.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.util
import json
import logging
import math
import mmap
import os
import secrets
import struct
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from cairn.storage.vector_index import CHANGED_VECTOR, PURGED, Block, ExactVectorIndex

log = logging.getLogger(__name__)

DEFAULT_ANN_THRESHOLD = 50_000
FORMAT = 1
_VECTOR_MATCH = 0.98  # cosine between a stored (int8) vector and the row's float32 one
_VECTOR_SAMPLE = 2048  # unchanged rows whose stored vector is checked on load


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
    # (stored bytes of a purged vector, bytes to write over them)
    needles: list[tuple[bytes, bytes]] = field(default_factory=list)
    source: str = "built"


def _partition_name(tenant: str, agent: str) -> str:
    return hashlib.sha256(f"{tenant}\x00{agent}".encode()).hexdigest()[:24]


class AnnIndexes:
    """The approximate indexes of one store, following its exact blocks."""

    def __init__(self, directory: Path | None, dim: int, settings: AnnSettings) -> None:
        self.directory = directory
        self.dim = dim
        self.settings = settings
        self._usearch: Any | None = None  # imported when a partition first needs a graph
        self._unavailable = False
        self._parts: dict[tuple[str, str], _Partition] = {}
        self._exact: ExactVectorIndex | None = None
        self._seq = 0

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
                found = self._parts[key] = self._attach(exact, block)
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

    def _detach(self, key: tuple[str, str], part: _Partition) -> None:
        part.block.tracked = False
        part.block.journal.clear()
        del self._parts[key]
        if self.directory is not None:
            with self._locked():
                self._remove_files(_partition_name(*key), keep=None)
                with contextlib.suppress(FileNotFoundError):
                    self._sidecar_path(_partition_name(*key)).unlink()

    def _live_rows(self, block: Block) -> np.ndarray:
        n = block.size
        return block.rows[:n][block.live[:n]]

    def _build(self, exact: ExactVectorIndex, block: Block) -> _Partition:
        start = time.perf_counter()
        index = self._new_index()
        rows = self._live_rows(block)
        slots = exact.slots(block, rows)
        for begin in range(0, len(rows), 65_536):  # bounded temporary copies
            chunk = slice(begin, begin + 65_536)
            index.add(rows[chunk].astype(np.uint64), block.matrix[slots[chunk]], threads=0)
        log.info(
            "built the ANN of %s/%s: %d vectors in %.1f s",
            block.tenant,
            block.agent,
            len(rows),
            time.perf_counter() - start,
        )
        return _Partition(block, index, unsaved=len(rows), source="built")

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

    def _stored(self, index: Any, keys: np.ndarray) -> np.ndarray:
        """Vectors as the graph stores them (its dtype), one row per key."""
        return np.vstack(index.get(np.asarray(keys, dtype=np.uint64), dtype=index.dtype))

    def _purge(self, part: _Partition, rows: list[int]) -> None:
        """Remove purged rows, noting their stored bytes and a filler for them: the next
        write overwrites those bytes in the file and reloads (see the module docstring)."""
        index = part.index
        for row in rows:
            stored = self._stored(index, np.asarray([row]))
            needle = stored.tobytes()
            filler = np.roll(stored, 1).tobytes()  # used when the graph has no other node
            found = index.search(stored[0].astype(np.float32), 3, threads=1)
            others = [int(k) for k in found.keys if int(k) != row]
            if others:
                near = self._stored(index, np.asarray(others[:1])).tobytes()
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

    # -- files ------------------------------------------------------------------------------

    def _sidecar_path(self, name: str) -> Path:
        assert self.directory is not None
        return self.directory / f"{name}.json"

    @contextlib.contextmanager
    def _locked(self, shared: bool = False) -> Iterator[None]:
        assert self.directory is not None
        self.directory.mkdir(parents=True, exist_ok=True)
        try:
            import fcntl
        except ImportError:  # no flock here: single-writer use only
            yield
            return
        with open(self.directory / "lock", "a+b") as handle:
            fcntl.flock(handle, fcntl.LOCK_SH if shared else fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(handle, fcntl.LOCK_UN)

    def _expected_meta(self, block: Block) -> dict[str, Any]:
        s = self.settings
        return {
            "format": FORMAT,
            "tenant": block.tenant,
            "agent": block.agent,
            "models": sorted(block.models),
            "dim": self.dim,
            "metric": "cos",
            "dtype": s.dtype,
            "connectivity": s.connectivity,
        }

    def _read_sidecar(self, name: str) -> dict[str, Any] | None:
        try:
            found = json.loads(self._sidecar_path(name).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        return found if isinstance(found, dict) else None

    def _load(self, exact: ExactVectorIndex, block: Block) -> _Partition | None:
        if self.directory is None or not self.directory.exists():
            return None
        name = _partition_name(block.tenant, block.agent)
        with self._locked(shared=True):
            meta = self._read_sidecar(name)
            if meta is None:
                return None
            expected = self._expected_meta(block)
            if any(meta.get(k) != v for k, v in expected.items()):
                log.info("ANN sidecar of %s/%s differs: rebuilding", block.tenant, block.agent)
                return None
            seq = meta.get("change_seq")
            data = self.directory / str(meta.get("data", ""))
            if not isinstance(seq, int) or seq > self._seq or data.parent != self.directory:
                return None
            try:
                if data.stat().st_size != meta.get("bytes"):
                    return None
                index = self._new_index()
                index.load(str(data))
            except (OSError, RuntimeError, ValueError) as exc:
                log.warning("cannot load %s (%s): rebuilding", data, exc)
                return None
        if index.ndim != self.dim:
            return None
        part = _Partition(block, index, source="loaded")
        return part if self._reconcile(exact, part, seq) else None

    def _reconcile(self, exact: ExactVectorIndex, part: _Partition, saved_seq: int) -> bool:
        """Check a loaded graph against the block; repair small differences.

        Every key is checked (a live row of this partition?). Stored vectors are checked
        for every row changed since the file was written, plus a sample of the others: in
        the same database those cannot differ, and a replaced database shows in any
        sample; a sample that differs anywhere gets every vector checked."""
        block, index = part.block, part.index
        keys = np.asarray(index.keys, dtype=np.uint64).astype(np.int64)
        live_rows = self._live_rows(block)
        slots = exact.slots(block, keys)
        known = slots >= 0
        known[known] = block.live[slots[known]]
        stale = keys[~known]
        missing = np.setdiff1d(live_rows, keys[known], assume_unique=True)
        common, common_slots = keys[known], slots[known]
        changed = block.seq[common_slots] > saved_seq
        rng = np.random.default_rng(saved_seq)
        sample = np.flatnonzero(~changed)
        sample = rng.choice(sample, min(len(sample), _VECTOR_SAMPLE), replace=False)
        check = np.union1d(np.flatnonzero(changed), sample)
        mismatched = self._mismatched(part, common[check], common_slots[check])
        if mismatched:
            mismatched = self._mismatched(part, common, common_slots)
        differences = len(stale) + len(missing) + len(mismatched)
        if differences > self.settings.max_repair_share * max(1, len(live_rows)):
            log.info(
                "ANN file of %s/%s differs in %d rows: rebuilding",
                block.tenant,
                block.agent,
                differences,
            )
            return False
        # Rows of the file without a vector in the database now were purged (or belong to
        # a replaced projection, like rows whose vector differs): scrubbed, not only
        # unlinked. Rows that are merely not live (superseded, evicted) are unlinked.
        gone = [int(r) for r in keys[slots < 0]] + mismatched
        if gone:
            self._purge(part, gone)
        for row in stale[slots[~known] >= 0].tolist():
            part.index.remove(row)
            part.unsaved += 1
        part.pending.update(int(r) for r in missing)
        part.pending.update(mismatched)
        return True

    def _mismatched(self, part: _Partition, rows: np.ndarray, slots: np.ndarray) -> list[int]:
        """Rows whose vector in the graph is not (up to quantisation) the block's."""
        out: list[int] = []
        for begin in range(0, len(rows), 32_768):
            chunk = rows[begin : begin + 32_768]
            stored = self._stored(part.index, chunk).astype(np.float32)
            stored /= np.maximum(np.linalg.norm(stored, axis=1, keepdims=True), 1e-12)
            mine = part.block.matrix[slots[begin : begin + 32_768]]
            norms = np.maximum(np.linalg.norm(mine, axis=1), 1e-12)
            cos = np.einsum("ij,ij->i", stored, mine) / norms
            out.extend(chunk[cos < _VECTOR_MATCH].tolist())
        return out

    def _remove_files(self, name: str, keep: Path | None) -> None:
        assert self.directory is not None
        for path in self.directory.glob(f"{name}.*.usearch"):
            if path != keep:
                with contextlib.suppress(FileNotFoundError):
                    path.unlink()
        for path in self.directory.glob(f"{name}.*.tmp"):
            with contextlib.suppress(FileNotFoundError):
                path.unlink()

    def _save(self, exact: ExactVectorIndex, part: _Partition) -> None:
        if self.directory is None:
            part.unsaved, part.needles = 0, []
            return
        block = part.block
        name = _partition_name(block.tenant, block.agent)
        try:
            with self._locked():
                current = self._read_sidecar(name)
                newer = (
                    current is not None
                    and isinstance(current.get("change_seq"), int)
                    and current["change_seq"] > self._seq
                    and (self.directory / str(current.get("data", ""))).exists()
                )
                if newer and not part.needles:
                    part.unsaved = 0
                    return
                token = secrets.token_hex(8)
                tmp = self.directory / f"{name}.{token}.tmp"
                data = self.directory / f"{name}.{token}.usearch"
                self._write(part, tmp)
                if part.needles:
                    self._scrub(exact, part, tmp)
                if newer:  # the graph in memory is clean now; the newer file stays
                    tmp.unlink()
                    part.unsaved, part.needles = 0, []
                    return
                os.replace(tmp, data)
                meta = {
                    **self._expected_meta(block),
                    "change_seq": self._seq,
                    "data": data.name,
                    "bytes": data.stat().st_size,
                    "vectors": len(part.index),
                    "usearch": getattr(self._usearch, "__version__", None) or _usearch_version(),
                }
                sidecar = self._sidecar_path(name)
                side_tmp = sidecar.with_suffix(f".{token}.jsontmp")
                with open(side_tmp, "w", encoding="utf-8") as handle:
                    json.dump(meta, handle)
                    handle.flush()
                    os.fsync(handle.fileno())
                os.replace(side_tmp, sidecar)
                self._remove_files(name, keep=data)
                _fsync_dir(self.directory)
        except OSError as exc:
            log.warning("cannot write the ANN file for %s/%s: %s", block.tenant, block.agent, exc)
            return
        part.unsaved, part.needles = 0, []

    def _write(self, part: _Partition, path: Path) -> None:
        part.index.save(str(path))
        with open(path, "rb") as handle:
            os.fsync(handle.fileno())

    def _scrub(self, exact: ExactVectorIndex, part: _Partition, path: Path) -> None:
        """Overwrite purged vectors' bytes in a written file, then reload the graph from
        it so memory holds no copy either; rebuild if any bytes survived."""
        if _patch(path, part.needles):
            index = self._new_index()
            index.load(str(path))
            part.index = index
        if _contains_any(path, [needle for needle, _ in part.needles]):
            log.warning("purged bytes survived the patch: rebuilding the graph")
            part.index = self._build(exact, part.block).index
            self._write(part, path)


def _vector_section(m: mmap.mmap, width: int) -> np.ndarray | None:
    """The file's vectors as a (slots, width) byte matrix, or None if the layout is not
    the one known: usearch's dense format starts with u32 slots, u32 bytes per vector,
    then the vectors of every slot (removed ones included) in slot order."""
    if len(m) < 8 or width < 8:
        return None
    slots, cols = struct.unpack_from("<II", m, 0)
    if cols != width or 8 + slots * cols > len(m):
        return None
    return np.frombuffer(m, dtype=np.uint8, count=slots * cols, offset=8).reshape(slots, cols)


def _matching_slots(section: np.ndarray, needles: list[bytes]) -> list[tuple[int, bytes]]:
    """(slot, needle) for every slot holding one of the needles: one pass, any count."""
    prefixes = np.array([int.from_bytes(n[:8], "little") for n in needles], dtype=np.uint64)
    heads = np.ascontiguousarray(section[:, :8]).view(np.uint64).ravel()
    wanted = set(needles)
    found: list[tuple[int, bytes]] = []
    for i in np.flatnonzero(np.isin(heads, prefixes)).tolist():
        held = section[i].tobytes()
        if held in wanted:
            found.append((i, held))
    return found


_FULL_SCANS = 4  # needles also searched across the whole file (each scan reads it all)


def _patch(path: Path, needles: list[tuple[bytes, bytes]]) -> int:
    """Write each filler over every occurrence of its needle in the file; how many."""
    done = 0
    with open(path, "r+b") as handle, mmap.mmap(handle.fileno(), 0) as m:
        section = _vector_section(m, len(needles[0][0]))
        scan = needles
        if section is not None:
            fillers = dict(needles)
            for slot, needle in _matching_slots(section, list(fillers)):
                section[slot] = np.frombuffer(fillers[needle], dtype=np.uint8)
                done += 1
            del section  # release the buffer before the map closes
            scan = needles[:_FULL_SCANS]
        for needle, filler in scan:  # beyond the vectors, or another layout
            at = m.find(needle)
            while at >= 0:
                m[at : at + len(needle)] = filler
                done += 1
                at = m.find(needle, at + len(needle))
        m.flush()
        os.fsync(handle.fileno())
    return done


def _contains_any(path: Path, needles: list[bytes]) -> bool:
    with open(path, "rb") as handle, mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as m:
        section = _vector_section(m, len(needles[0]))
        scan = needles
        if section is not None:
            hit = bool(_matching_slots(section, needles))
            del section
            if hit:
                return True
            scan = needles[:_FULL_SCANS]
        return any(m.find(needle) >= 0 for needle in scan)


def _fsync_dir(directory: Path) -> None:
    with contextlib.suppress(OSError):
        fd = os.open(directory, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


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
]
