"""Postings of one partition of the keyword index, sorted by term (CSR).

A segment is immutable: the keyword index (:mod:`cairn.storage.inprocess.keyword_index`)
builds a small one from new postings and merges it into a large one as it grows.
"""

from __future__ import annotations

import numpy as np


class Segment:
    """Immutable postings sorted by term: ``keys[i]``'s postings are
    ``slots[starts[i]:starts[i + 1]]`` with counts ``tfs[...]``."""

    __slots__ = ("keys", "slots", "starts", "tfs")

    def __init__(self, keys: np.ndarray, starts: np.ndarray, slots: np.ndarray, tfs: np.ndarray):
        self.keys = keys  # sorted, distinct
        self.starts = starts
        self.slots = slots  # int32, 6 bytes a posting with the count
        self.tfs = tfs  # uint16

    @classmethod
    def build(cls, keys: np.ndarray, slots: np.ndarray, tfs: np.ndarray) -> Segment:
        """From unsorted postings (small batches: this sorts them all)."""
        order = np.argsort(keys, kind="stable")
        sorted_keys = keys[order]
        if len(sorted_keys):
            firsts = np.flatnonzero(np.r_[True, sorted_keys[1:] != sorted_keys[:-1]])
        else:
            firsts = np.zeros(0, dtype=np.int64)
        return cls(
            sorted_keys[firsts],
            np.r_[firsts, len(sorted_keys)].astype(np.int64),
            slots[order].astype(np.int32, copy=False),
            tfs[order].astype(np.uint16, copy=False),
        )

    @classmethod
    def merge(cls, a: Segment, b: Segment) -> Segment:
        """Both sorted: each posting's place follows from the key counts, no sort and no
        per-posting key array (a sort of the expanded postings needed ~60 bytes a posting
        at its peak, over the 3 GB budget at a million memories; this needs ~20)."""
        keys = np.union1d(a.keys, b.keys)
        group_a = np.searchsorted(keys, a.keys)
        group_b = np.searchsorted(keys, b.keys)
        count_a = np.zeros(len(keys), dtype=np.int64)
        count_a[group_a] = np.diff(a.starts)
        count_b = np.zeros(len(keys), dtype=np.int64)
        count_b[group_b] = np.diff(b.starts)
        starts = np.zeros(len(keys) + 1, dtype=np.int64)
        np.cumsum(count_a + count_b, out=starts[1:])
        slots = np.empty(int(starts[-1]), dtype=np.int32)
        tfs = np.empty(int(starts[-1]), dtype=np.uint16)
        # Inside a key, a's postings (older rows) come first, then b's.
        for seg, shift in (
            (a, starts[group_a] - a.starts[:-1]),
            (b, starts[group_b] + count_a[group_b] - b.starts[:-1]),
        ):
            width = np.int32 if len(slots) < 2**31 else np.int64
            dest = np.arange(len(seg), dtype=width) + np.repeat(
                shift.astype(width), np.diff(seg.starts)
            )
            slots[dest] = seg.slots
            tfs[dest] = seg.tfs
            del dest
        return cls(keys, starts, slots, tfs)

    def without(self, keep: np.ndarray) -> Segment:
        """The postings where ``keep`` (one flag per posting) is set."""
        kept = np.zeros(len(self.slots) + 1, dtype=np.int64)
        np.cumsum(keep, out=kept[1:])
        counts = kept[self.starts[1:]] - kept[self.starts[:-1]]
        present = counts > 0
        starts = np.zeros(int(np.count_nonzero(present)) + 1, dtype=np.int64)
        np.cumsum(counts[present], out=starts[1:])
        return Segment(self.keys[present], starts, self.slots[keep], self.tfs[keep])

    def __len__(self) -> int:
        return len(self.slots)

    def postings(self, keys: np.ndarray) -> list[tuple[np.ndarray, np.ndarray] | None]:
        found = np.searchsorted(self.keys, keys)
        out: list[tuple[np.ndarray, np.ndarray] | None] = []
        for key, at in zip(keys.tolist(), found.tolist(), strict=True):
            if at < len(self.keys) and int(self.keys[at]) == key:
                lo, hi = int(self.starts[at]), int(self.starts[at + 1])
                out.append((self.slots[lo:hi], self.tfs[lo:hi]))
            else:
                out.append(None)
        return out
