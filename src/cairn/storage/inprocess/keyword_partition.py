"""One partition of the keyword index (:mod:`cairn.storage.inprocess.keyword_index`): the
memories of one tenant and agent, their postings (a base and a delta
:class:`~cairn.storage.inprocess.segments.Segment`) and their BM25 scores."""

from __future__ import annotations

import numpy as np

from cairn.bm25 import idf, share
from cairn.storage.inprocess.arrays import capacity_for, grown
from cairn.storage.inprocess.segments import Segment

_MIN_DELTA = 50_000  # postings a delta may hold before it is merged into the base


class Partition:
    """The memories of one tenant and agent: per-slot row, length, scope and liveness."""

    def __init__(self, partition_id: int) -> None:
        self.id = partition_id
        self.size = 0
        self.rows = np.zeros(1024, dtype=np.int64)
        self.length = np.zeros(1024, dtype=np.float32)
        self.distinct = np.zeros(1024, dtype=np.int32)  # distinct term keys of the row
        self.project = np.zeros(1024, dtype=np.int32)  # 0 = global scope
        self.live = np.zeros(1024, dtype=bool)
        self.indexed = np.zeros(1024, dtype=bool)  # its postings are in a segment
        self.live_count = 0
        self.live_length = 0.0
        self.base: Segment | None = None
        self.delta: Segment | None = None
        self._pending: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
        self._pending_count = 0

    def grow(self, needed: int) -> None:
        if needed > len(self.rows):
            size = capacity_for(len(self.rows), needed)
            for attr in ("rows", "length", "distinct", "project", "live", "indexed"):
                setattr(self, attr, grown(getattr(self, attr), size, self.size))

    def set_state(self, slot: int, live: bool, project: int) -> None:
        if live != bool(self.live[slot]):
            sign = 1 if live else -1
            self.live_count += sign
            self.live_length += sign * float(self.length[slot])
            self.live[slot] = live
        self.project[slot] = project

    def add_postings(self, slots: np.ndarray, keys: np.ndarray, tfs: np.ndarray) -> None:
        if len(keys):
            self._pending.append((keys, slots, tfs))
            self._pending_count += len(keys)
        self.indexed[slots] = True
        if self._pending_count > self._merge_at():
            # A large load merges as it goes, never holding it all unsorted. (Merging
            # straight into the base at 1/4 growth copied less but raised the peak RSS
            # of a 1M load by ~200 MiB, too close to the 3 GB budget.)
            self.settle()

    def _merge_at(self) -> int:
        return max(_MIN_DELTA, len(self.base) // 16 if self.base is not None else 0)

    def settle(self) -> None:
        """Fold pending postings into the delta, or the delta into the base when large."""
        if not self._pending:
            return
        keys, slots, tfs = (np.concatenate(c) for c in zip(*self._pending, strict=True))
        self._pending.clear()
        self._pending_count = 0
        fresh = Segment.build(keys, slots, tfs)
        del keys, slots, tfs
        delta = fresh if self.delta is None else Segment.merge(self.delta, fresh)
        if len(delta) <= self._merge_at():
            self.delta = delta
            return
        self.delta = None
        base = delta if self.base is None else Segment.merge(self.base, delta)
        self.base = None
        del delta
        # Rows no longer live (superseded, forgotten, evicted) keep their postings until
        # they are most of the base; then they leave, and a row that comes back later
        # is indexed again from record_terms by the sync.
        keep = self.live[base.slots]
        if np.count_nonzero(keep) * 2 < len(keep):
            self.indexed[base.slots[~keep]] = False
            base = base.without(keep)
        self.base = base

    def document_counts(self, keys: np.ndarray) -> np.ndarray:
        """Live memories containing each key."""
        counts = np.zeros(len(keys), dtype=np.int64)
        for segment in (self.base, self.delta):
            if segment is None:
                continue
            for i, found in enumerate(segment.postings(keys)):
                if found is not None:
                    counts[i] += int(np.count_nonzero(self.live[found[0]]))
        return counts

    def scores_for(self, keys: np.ndarray, slots: np.ndarray) -> np.ndarray:
        """BM25 of these (live) slots for the query keys, 0 where none matches."""
        out = np.zeros(len(slots), dtype=np.float64)
        if self.live_count == 0 or len(keys) == 0 or len(slots) == 0:
            return out
        n_docs = self.live_count
        avgdl = self.live_length / n_docs if self.live_length > 0 else 1.0
        position = np.full(self.size, -1, dtype=np.int64)  # slot -> index into ``slots``
        position[slots] = np.arange(len(slots))
        for i, df in enumerate(self.document_counts(keys).tolist()):
            if df == 0:
                continue
            for segment in (self.base, self.delta):
                found = None if segment is None else segment.postings(keys[i : i + 1])[0]
                if found is None:
                    continue
                at = position[found[0]]
                hit = at >= 0
                if not hit.any():
                    continue
                wanted = at[hit]
                out[wanted] += share(
                    found[1][hit].astype(np.float64),
                    self.length[slots[wanted]],
                    idf(n_docs, df),
                    avgdl,
                )
        return out

    def holding(self, keys: np.ndarray, slots: np.ndarray) -> np.ndarray:
        """Which of these (indexed) slots hold each key: one row per slot, one column per key."""
        held = np.zeros((len(slots), len(keys)), dtype=bool)
        if len(keys) == 0 or len(slots) == 0:
            return held
        position = np.full(self.size, -1, dtype=np.int64)  # slot -> index into ``slots``
        position[slots] = np.arange(len(slots))
        for segment in (self.base, self.delta):
            if segment is None:
                continue
            for j, found in enumerate(segment.postings(keys)):
                if found is not None:
                    at = position[found[0]]
                    held[at[at >= 0], j] = True
        return held

    def search(self, keys: np.ndarray, project: int | None, limit: int) -> list[tuple[int, float]]:
        if self.live_count == 0 or limit <= 0 or len(keys) == 0:
            return []
        n_docs = self.live_count
        avgdl = self.live_length / n_docs if self.live_length > 0 else 1.0
        gathered: list[list[tuple[np.ndarray, np.ndarray]]] = [[] for _ in range(len(keys))]
        for segment in (self.base, self.delta):
            if segment is None:
                continue
            for i, found in enumerate(segment.postings(keys)):
                if found is not None:
                    gathered[i].append(found)
        slot_parts: list[np.ndarray] = []
        score_parts: list[np.ndarray] = []
        for parts in gathered:
            if not parts:
                continue
            slots = parts[0][0] if len(parts) == 1 else np.concatenate([p[0] for p in parts])
            tfs = parts[0][1] if len(parts) == 1 else np.concatenate([p[1] for p in parts])
            tfs = tfs.astype(np.float32)
            alive = self.live[slots]
            df = int(np.count_nonzero(alive))
            if df == 0:
                continue
            if df < len(slots):
                slots, tfs = slots[alive], tfs[alive]
            score_parts.append(share(tfs, self.length[slots], idf(n_docs, df), avgdl))
            slot_parts.append(slots)
        if not slot_parts:
            return []
        slots = np.concatenate(slot_parts)
        scores = np.concatenate(score_parts)
        if project is not None:
            proj = self.project[slots]
            keep = (proj == 0) | (proj == project)
            slots, scores = slots[keep], scores[keep]
            if len(slots) == 0:
                return []
        if len(slot_parts) > 1:
            # Sum per document: sort-based when the matches are few, a dense bincount
            # over the partition when they are many.
            if len(slots) * 16 < self.size:
                uniq, inverse = np.unique(slots, return_inverse=True)
                scores = np.bincount(inverse, weights=scores, minlength=len(uniq))
                slots = uniq
            else:
                dense = np.bincount(slots, weights=scores, minlength=self.size)
                slots = np.flatnonzero(dense)
                scores = dense[slots]
        k = min(limit, len(slots))
        if k < len(slots):
            # Everything tied with the k-th best stays in, so ties break by row below and
            # not by where argpartition happened to put them.
            cut = np.partition(scores, len(scores) - k)[len(scores) - k]
            best = np.flatnonzero(scores >= cut)
        else:
            best = np.arange(len(slots))
        # Ties break by row (older first), like FTS5's rowid order.
        rows = self.rows[slots[best]]
        picked = scores[best]
        order = np.lexsort((rows, -picked))[:k]
        return list(zip(rows[order].tolist(), picked[order].tolist(), strict=True))
