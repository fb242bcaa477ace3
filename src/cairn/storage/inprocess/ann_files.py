"""The files of the approximate indexes: where a graph is kept between processes.

Each graph is written next to the database as ``<db>.ann/<partition>.<token>.usearch``
plus a sidecar ``<partition>.json`` holding the token, the ``change_seq`` the graph
reflects, the tenant, agent, model(s), dim and graph settings. Writing is atomic and
ordered: the data file under a fresh name (fsynced), then the sidecar replaced, then older
data files deleted, all under an ``flock`` on ``<db>.ann/lock``; a sidecar claiming a newer
``change_seq`` is never replaced by an older state.

A graph is loaded only when its sidecar matches, and :func:`compare` then checks it against
the rows just loaded from the database: every key must be a live row of the partition, and
the stored vector of every row changed since the file was written, plus a sample of the
others, must match that row's vector (cosine >= 0.98; one mismatch in the sample and every
vector is checked). Those checks, not the sidecar's ``change_seq`` alone, are what make a
stale file (a rebuilt projection, a restored database) harmless; what to do with the
differences is the graph's decision (:mod:`cairn.storage.inprocess.ann_graph`).

Permanent forgetting leaves no trace in the file: usearch's ``remove`` only unlinks a node;
its vector stays in the slot and in every later save, and which freed slot a later ``add``
reuses is not something to rely on. So the graph notes, for each purged row, the stored
bytes and a neighbour's stored bytes (a *needle* and its *filler*), and :meth:`AnnFiles.save`
patches the written file -- the filler over every occurrence of its needle, found in one
pass over the file's vector section however many rows were purged -- and reloads the graph
from it, so memory holds no copy either; if the bytes were still found, the graph is
rebuilt from the live rows. Only then is the file published, and the older files, which
held the vector, are deleted.

Nothing here imports usearch: the graph hands in the function that makes an empty index.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import mmap
import os
import secrets
import struct
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from cairn.storage.inprocess.vector_index import Block, ExactVectorIndex

log = logging.getLogger(__name__)

FORMAT = 1
_VECTOR_MATCH = 0.98  # cosine between a stored (int8) vector and the row's float32 one
_VECTOR_SAMPLE = 2048  # unchanged rows whose stored vector is checked on load
_FULL_SCANS = 4  # needles also searched across the whole file (each scan reads it all)

# (stored bytes of a purged vector, bytes to write over them)
Needle = tuple[bytes, bytes]


@dataclass(frozen=True, slots=True)
class GraphFormat:
    """What a file must have been written with to be loaded into this store's graphs."""

    dim: int
    dtype: str
    connectivity: int


@dataclass(frozen=True, slots=True)
class LoadedGraph:
    index: Any  # usearch.index.Index
    saved_seq: int  # the change_seq the file reflects


@dataclass(frozen=True, slots=True)
class Differences:
    """How a loaded graph differs from the partition's rows in the database now."""

    scrub: list[int]  # keys without a vector in the database, or with another vector
    unlink: list[int]  # keys of rows that are no longer live (superseded, evicted)
    pending: list[int]  # live rows the graph lacks, or holds with another vector
    count: int  # rows that differ, each counted once
    live: int  # live rows of the partition it was compared with


@dataclass(frozen=True, slots=True)
class Saved:
    index: Any  # the graph to keep in memory: reloaded from the file after a scrub
    done: bool  # False when the file could not be written: the changes are still unsaved


def partition_name(tenant: str, agent: str) -> str:
    return hashlib.sha256(f"{tenant}\x00{agent}".encode()).hexdigest()[:24]


def live_rows(block: Block) -> np.ndarray:
    n = block.size
    return block.rows[:n][block.live[:n]]


def stored_vectors(index: Any, keys: np.ndarray) -> np.ndarray:
    """Vectors as the graph stores them (its dtype), one row per key."""
    return np.vstack(index.get(np.asarray(keys, dtype=np.uint64), dtype=index.dtype))


class AnnFiles:
    """The ``<db>.ann`` directory of one store."""

    def __init__(
        self,
        directory: Path,
        fmt: GraphFormat,
        new_index: Callable[[], Any],
        usearch_version: str | None,
    ) -> None:
        self.directory = directory
        self.format = fmt
        self._new_index = new_index
        self._usearch_version = usearch_version

    def load(self, block: Block, seq: int) -> LoadedGraph | None:
        """The graph written for ``block``'s partition, if its sidecar matches and it
        reflects no change past ``seq``; None: build it."""
        if not self.directory.exists():
            return None
        name = partition_name(block.tenant, block.agent)
        with self._locked(shared=True):
            meta = self._read_sidecar(name)
            if meta is None:
                return None
            expected = self._expected_meta(block)
            if any(meta.get(k) != v for k, v in expected.items()):
                log.info("ANN sidecar of %s/%s differs: rebuilding", block.tenant, block.agent)
                return None
            saved_seq = meta.get("change_seq")
            data = self.directory / str(meta.get("data", ""))
            if not isinstance(saved_seq, int) or saved_seq > seq or data.parent != self.directory:
                return None
            try:
                if data.stat().st_size != meta.get("bytes"):
                    return None
                index = self._new_index()
                index.load(str(data))
            except (OSError, RuntimeError, ValueError) as exc:
                log.warning("cannot load %s (%s): rebuilding", data, exc)
                return None
        if index.ndim != self.format.dim:
            return None
        return LoadedGraph(index, saved_seq)

    def save(
        self,
        block: Block,
        index: Any,
        seq: int,
        needles: list[Needle],
        rebuild: Callable[[], Any],
    ) -> Saved:
        """Write ``index`` as the partition's graph at ``seq``, scrubbing ``needles`` from
        the file first; ``rebuild`` makes a fresh graph from the live rows, for when
        purged bytes survive the patch."""
        name = partition_name(block.tenant, block.agent)
        kept = index
        try:
            with self._locked():
                current = self._read_sidecar(name)
                newer = (
                    current is not None
                    and isinstance(current.get("change_seq"), int)
                    and current["change_seq"] > seq
                    and (self.directory / str(current.get("data", ""))).exists()
                )
                if newer and not needles:
                    return Saved(kept, done=True)
                token = secrets.token_hex(8)
                tmp = self.directory / f"{name}.{token}.tmp"
                data = self.directory / f"{name}.{token}.usearch"
                _write(kept, tmp)
                if needles:
                    kept = self._scrub(kept, tmp, needles, rebuild)
                if newer:  # the graph in memory is clean now; the newer file stays
                    tmp.unlink()
                    return Saved(kept, done=True)
                os.replace(tmp, data)
                meta = {
                    **self._expected_meta(block),
                    "change_seq": seq,
                    "data": data.name,
                    "bytes": data.stat().st_size,
                    "vectors": len(kept),
                    "usearch": self._usearch_version,
                }
                sidecar = self._sidecar_path(name)
                side_tmp = sidecar.with_suffix(f".{token}.jsontmp")
                fd = os.open(side_tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
                with os.fdopen(fd, "w", encoding="utf-8") as handle:
                    json.dump(meta, handle)
                    handle.flush()
                    os.fsync(handle.fileno())
                os.replace(side_tmp, sidecar)
                self._remove_files(name, keep=data)
                _fsync_dir(self.directory)
        except OSError as exc:
            log.warning("cannot write the ANN file for %s/%s: %s", block.tenant, block.agent, exc)
            return Saved(kept, done=False)
        return Saved(kept, done=True)

    def remove(self, tenant: str, agent: str) -> None:
        """Delete the partition's graph and sidecar (it fell below the threshold)."""
        name = partition_name(tenant, agent)
        with self._locked():
            self._remove_files(name, keep=None)
            with contextlib.suppress(FileNotFoundError):
                self._sidecar_path(name).unlink()

    # -- inside ---------------------------------------------------------------------------

    def _sidecar_path(self, name: str) -> Path:
        return self.directory / f"{name}.json"

    @contextlib.contextmanager
    def _locked(self, shared: bool = False) -> Iterator[None]:
        self.directory.mkdir(mode=0o700, parents=True, exist_ok=True)  # private, as the store
        try:
            import fcntl
        except ImportError:  # no flock here: single-writer use only
            yield
            return
        fd = os.open(self.directory / "lock", os.O_RDWR | os.O_CREAT | os.O_APPEND, 0o600)
        with os.fdopen(fd, "a+b") as handle:
            fcntl.flock(handle, fcntl.LOCK_SH if shared else fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(handle, fcntl.LOCK_UN)

    def _expected_meta(self, block: Block) -> dict[str, Any]:
        return {
            "format": FORMAT,
            "tenant": block.tenant,
            "agent": block.agent,
            "models": sorted(block.models),
            "dim": self.format.dim,
            "metric": "cos",
            "dtype": self.format.dtype,
            "connectivity": self.format.connectivity,
        }

    def _read_sidecar(self, name: str) -> dict[str, Any] | None:
        try:
            found = json.loads(self._sidecar_path(name).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        return found if isinstance(found, dict) else None

    def _remove_files(self, name: str, keep: Path | None) -> None:
        for path in self.directory.glob(f"{name}.*.usearch"):
            if path != keep:
                with contextlib.suppress(FileNotFoundError):
                    path.unlink()
        for path in self.directory.glob(f"{name}.*.tmp"):
            with contextlib.suppress(FileNotFoundError):
                path.unlink()

    def _scrub(
        self, index: Any, path: Path, needles: list[Needle], rebuild: Callable[[], Any]
    ) -> Any:
        """Overwrite purged vectors' bytes in a written file, then reload the graph from
        it so memory holds no copy either; rebuild if any bytes survived."""
        if _patch(path, needles):
            index = self._new_index()
            index.load(str(path))
        if _contains_any(path, [needle for needle, _ in needles]):
            log.warning("purged bytes survived the patch: rebuilding the graph")
            index = rebuild()
            _write(index, path)
        return index


def compare(exact: ExactVectorIndex, block: Block, index: Any, saved_seq: int) -> Differences:
    """Check a loaded graph against the block.

    Every key is checked (a live row of this partition?). Stored vectors are checked for
    every row changed since the file was written, plus a sample of the others: in the same
    database those cannot differ, and a replaced database shows in any sample; a sample
    that differs anywhere gets every vector checked."""
    keys = np.asarray(index.keys, dtype=np.uint64).astype(np.int64)
    rows = live_rows(block)
    slots = exact.slots(block, keys)
    known = slots >= 0
    known[known] = block.live[slots[known]]
    stale = keys[~known]
    missing = np.setdiff1d(rows, keys[known], assume_unique=True)
    common, common_slots = keys[known], slots[known]
    changed = block.seq[common_slots] > saved_seq
    rng = np.random.default_rng(saved_seq)
    sample = np.flatnonzero(~changed)
    sample = rng.choice(sample, min(len(sample), _VECTOR_SAMPLE), replace=False)
    check = np.union1d(np.flatnonzero(changed), sample)
    mismatched = _mismatched(index, block, common[check], common_slots[check])
    if mismatched:
        mismatched = _mismatched(index, block, common, common_slots)
    # Rows of the file without a vector in the database now were purged (or belong to a
    # replaced projection, like rows whose vector differs): scrubbed, not only unlinked.
    # Rows that are merely not live (superseded, evicted) are unlinked.
    return Differences(
        scrub=[int(r) for r in keys[slots < 0]] + mismatched,
        unlink=stale[slots[~known] >= 0].tolist(),
        pending=[int(r) for r in missing] + mismatched,
        count=len(stale) + len(missing) + len(mismatched),
        live=len(rows),
    )


def _mismatched(index: Any, block: Block, rows: np.ndarray, slots: np.ndarray) -> list[int]:
    """Rows whose vector in the graph is not (up to quantisation) the block's."""
    out: list[int] = []
    for begin in range(0, len(rows), 32_768):
        chunk = rows[begin : begin + 32_768]
        stored = stored_vectors(index, chunk).astype(np.float32)
        stored /= np.maximum(np.linalg.norm(stored, axis=1, keepdims=True), 1e-12)
        mine = block.matrix[slots[begin : begin + 32_768]]
        norms = np.maximum(np.linalg.norm(mine, axis=1), 1e-12)
        cos = np.einsum("ij,ij->i", stored, mine) / norms
        out.extend(chunk[cos < _VECTOR_MATCH].tolist())
    return out


def _write(index: Any, path: Path) -> None:
    index.save(str(path))
    os.chmod(path, 0o600)  # the graph holds the memories' vectors: private, as the store
    with open(path, "rb") as handle:
        os.fsync(handle.fileno())


def vector_section(m: mmap.mmap, width: int) -> np.ndarray | None:
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


def _patch(path: Path, needles: list[Needle]) -> int:
    """Write each filler over every occurrence of its needle in the file; how many."""
    done = 0
    with open(path, "r+b") as handle, mmap.mmap(handle.fileno(), 0) as m:
        section = vector_section(m, len(needles[0][0]))
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
        section = vector_section(m, len(needles[0]))
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


__all__ = [
    "AnnFiles",
    "Differences",
    "GraphFormat",
    "LoadedGraph",
    "Needle",
    "Saved",
    "compare",
    "live_rows",
    "partition_name",
    "stored_vectors",
    "vector_section",
]
