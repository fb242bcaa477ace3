"""BM25 over in-memory postings, one partition per tenant and agent.

Why not FTS5's ``bm25()``: measured at 100k memories, matching a query's terms in FTS5 took
0.4 ms, but ranking the matches took 7/26 ms (p50/p95) and joining them to ``records`` for
the tenant filter another 6/14 ms -- FTS5 calls ``bm25()`` once per matching row through the
auxiliary-function API and knows nothing of tenants, so a query of a few common words ranked
tens of thousands of rows of every tenant. Here each tenant+agent has its own postings in
numpy arrays: a query gathers its terms' postings (a binary search each), scores them in a
few vector operations and keeps the top ``limit``.

Persistence: the analysed terms of every record are written beside it (``record_terms``:
64-bit term hashes and their counts), and this index is a cache of that table, fed by the
store's ``change_seq`` sync like the vector index, so several processes stay consistent.
Term hashes rather than words: the table never holds a forgotten body's words, and needs no
vocabulary table.

Scoring is :mod:`cairn.bm25` (FTS5's formula), with N and n counted over the live memories
of the partition being searched: one tenant's memories never move another tenant's ranking.

The same postings say which query terms a given row holds (:meth:`KeywordIndex.row_terms`),
and each slot keeps its number of distinct terms: recall's relevance and length signals
read those instead of tokenising and stemming every pooled memory's text again.

Layout: a partition keeps a large immutable *base* segment (postings sorted by term, CSR)
and a small *delta* segment rebuilt from new postings when a search finds some; the delta is
merged into the base when it outgrows a sixteenth of it (or 50k postings). Both are sorted,
so a merge places every posting from the key counts alone, without a sort; a recall right
after a write re-sorts only the new postings, and a large load merges as it goes instead of
holding every posting unsorted. Postings of rows no longer live stay (searches mask them)
until they are most of the base; a merge then drops them, and such a row that comes back
is re-read from ``record_terms`` by the sync.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from cairn.bm25 import idf, share
from cairn.storage.inprocess.arrays import capacity_for, grown
from cairn.storage.inprocess.segments import Segment
from cairn.storage.terms import query_keys, term_key

_MIN_DELTA = 50_000  # postings a delta may hold before it is merged into the base
_DENSE_SLACK = 1 << 20
_OFFSET_BITS = 32
_SLOT_MASK = (1 << _OFFSET_BITS) - 1

_EMPTY = np.zeros(0, dtype=np.int64)


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


class KeywordIndex:
    """Every partition, and where each row lives."""

    def __init__(self) -> None:
        self._codes: dict[str | None, int] = {None: 0}
        self._partitions: list[Partition] = []
        self._partition_of: dict[tuple[int, int], Partition] = {}
        self._by_name: dict[tuple[str, str], Partition] = {}
        self._loc = np.full(1024, -1, dtype=np.int64)  # row -> partition << 32 | slot
        self._sparse: dict[int, int] = {}

    def _code(self, name: str | None) -> int:
        found = self._codes.get(name)
        if found is None:
            found = self._codes[name] = len(self._codes)
        return found

    def partition(self, tenant: str, agent: str) -> Partition | None:
        t, a = self._codes.get(tenant), self._codes.get(agent)
        if t is None or a is None:
            return None
        return self._partition_of.get((t, a))

    def _partition_for(self, tenant: str, agent: str) -> Partition:
        cached = self._by_name.get((tenant, agent))
        if cached is not None:
            return cached
        key = (self._code(tenant), self._code(agent))
        found = self._partition_of.get(key)
        if found is None:
            found = Partition(len(self._partitions))
            self._partitions.append(found)
            self._partition_of[key] = found
        self._by_name[(tenant, agent)] = found
        return found

    def _locate(self, row: int) -> int:
        if 0 <= row < len(self._loc):
            return int(self._loc[row])
        return self._sparse.get(row, -1)

    def _place(self, row: int, packed: int) -> None:
        if row >= len(self._loc) and row < 2 * len(self._loc) + _DENSE_SLACK:
            grown = np.full(max(row + 1, 2 * len(self._loc)), -1, dtype=np.int64)
            grown[: len(self._loc)] = self._loc
            self._loc = grown
            for moved in [r for r in self._sparse if r < len(grown)]:
                grown[moved] = self._sparse.pop(moved)
        if 0 <= row < len(self._loc):
            self._loc[row] = packed
        elif packed < 0:
            self._sparse.pop(row, None)
        else:
            self._sparse[row] = packed

    def sync(
        self,
        rows: Sequence[int],
        tenants: Sequence[str],
        agents: Sequence[str],
        projects: Sequence[str | None],
        live: Sequence[bool],
        lengths: Sequence[int | None],
        keys: Sequence[bytes | None],
        counts: Sequence[bytes | None],
    ) -> None:
        """Apply changed rows; a row without terms (purged) leaves the index."""
        fresh: dict[Partition, tuple[list[int], list[bytes], list[bytes]]] = {}
        for i, row in enumerate(rows):
            packed = self._locate(row)
            part = self._partition_for(tenants[i], agents[i])
            project = self._code(projects[i])
            if packed >= 0:
                old = self._partitions[packed >> _OFFSET_BITS]
                slot = packed & _SLOT_MASK
                if keys[i] is None or old is not part:
                    old.set_state(slot, False, 0)  # purged, or moved: the slot stays dead
                    self._place(row, -1)
                    if keys[i] is None:
                        continue
                else:
                    old.set_state(slot, bool(live[i]), project)
                    if old.indexed[slot] or not live[i]:
                        continue
                    # Back to life after its postings left with a merge: index them again.
                    entry = fresh.setdefault(part, ([], [], []))
                    entry[0].append(slot)
                    entry[1].append(keys[i] or b"")
                    entry[2].append(counts[i] or b"")
                    continue
            if keys[i] is None:
                continue
            part.grow(part.size + 1)
            slot = part.size
            part.size += 1
            part.rows[slot] = row
            part.length[slot] = float(lengths[i] or 0)
            part.distinct[slot] = len(keys[i] or b"") // 8
            part.set_state(slot, bool(live[i]), project)
            self._place(row, (part.id << _OFFSET_BITS) | slot)
            entry = fresh.setdefault(part, ([], [], []))
            entry[0].append(slot)
            entry[1].append(keys[i] or b"")
            entry[2].append(counts[i] or b"")
        for part, (slots, key_blobs, count_blobs) in fresh.items():
            sizes = np.fromiter((len(b) // 8 for b in key_blobs), np.int64, len(key_blobs))
            key_arr = np.frombuffer(b"".join(key_blobs), dtype="<i8").astype(np.int64)
            tf_arr = np.frombuffer(b"".join(count_blobs), dtype="<u2").astype(np.uint16)
            slot_arr = np.repeat(np.asarray(slots, dtype=np.int32), sizes)
            part.add_postings(slot_arr, key_arr, tf_arr)

    def document_counts(
        self, tenant: str, agent: str, terms: Sequence[str]
    ) -> tuple[int, dict[str, int]]:
        part = self.partition(tenant, agent)
        if part is None:
            return 0, dict.fromkeys(terms, 0)
        part.settle()
        out: dict[str, int] = {}
        for term in terms:
            keys = np.fromiter(query_keys([term]), dtype=np.int64)
            found = part.document_counts(keys) if len(keys) else _EMPTY
            out[term] = int(found.max()) if len(found) else 0
        return part.live_count, out

    def scores(
        self, tenant: str, agent: str, terms: Sequence[str], rows: Sequence[int]
    ) -> dict[int, float]:
        """BM25 of specific rows of this tenant and agent (live ones), e.g. rows that
        recall brings in as context rather than as keyword hits."""
        part = self.partition(tenant, agent)
        if part is None or not rows:
            return {}
        part.settle()
        wanted = self._slots_in(part, rows, part.live)
        if not wanted:
            return {}
        keys = np.fromiter(query_keys(terms), dtype=np.int64)
        found = part.scores_for(keys, np.asarray([s for _, s in wanted], dtype=np.int32))
        return {row: float(score) for (row, _), score in zip(wanted, found.tolist(), strict=True)}

    def _slots_in(
        self, part: Partition, rows: Sequence[int], flags: np.ndarray
    ) -> list[tuple[int, int]]:
        """(row, slot) of the ``rows`` that live in ``part`` with their flag set."""
        wanted: list[tuple[int, int]] = []
        for row in rows:
            packed = self._locate(row)
            if packed >= 0 and (packed >> _OFFSET_BITS) == part.id:
                slot = packed & _SLOT_MASK
                if flags[slot]:
                    wanted.append((row, slot))
        return wanted

    def row_terms(
        self, tenant: str, agent: str, terms: Sequence[str], rows: Sequence[int]
    ) -> dict[int, tuple[frozenset[str], int]]:
        """Per row, which of the query ``terms`` its analysed text holds (terms with one
        key count together) and how many distinct terms it has, read from the postings,
        live rows or not. A row whose postings this index does not hold (another
        partition, purged, or dropped by a merge after it left) is absent."""
        part = self.partition(tenant, agent)
        if part is None or not rows:
            return {}
        part.settle()
        wanted = self._slots_in(part, rows, part.indexed)
        if not wanted:
            return {}
        by_key: dict[int, list[str]] = {}
        for term in dict.fromkeys(terms):
            by_key.setdefault(term_key(term), []).append(term)
        keys = np.fromiter(by_key, dtype=np.int64, count=len(by_key))
        groups = list(by_key.values())
        slots = np.asarray([s for _, s in wanted], dtype=np.int32)
        held = part.holding(keys, slots).tolist()
        none: frozenset[str] = frozenset()
        out: dict[int, tuple[frozenset[str], int]] = {}
        for (row, _), flags, distinct in zip(
            wanted, held, part.distinct[slots].tolist(), strict=True
        ):
            found = [t for flag, group in zip(flags, groups, strict=True) if flag for t in group]
            out[row] = (frozenset(found) if found else none, distinct)
        return out

    def eligible(
        self, tenant: str, agent: str, project_id: str | None, rows: Sequence[int], *, live: bool
    ) -> list[int]:
        """The rows of this tenant and agent among ``rows``, in their order; with ``live``,
        only live rows in scope (``project_id`` None: any scope; else global rows plus
        that project's)."""
        part = self.partition(tenant, agent)
        if part is None or len(rows) == 0:
            return []
        wanted = np.asarray(rows, dtype=np.int64)
        packed = self._locate_many(wanted)
        keep = (packed >= 0) & ((packed >> _OFFSET_BITS) == part.id)
        if live:
            slots = np.where(keep, packed & _SLOT_MASK, 0)
            keep &= part.live[slots]
            if project_id is not None:
                project = self._codes.get(project_id, -1)
                scope = part.project[slots]
                keep &= (scope == 0) | (scope == project)
        kept: list[int] = wanted[keep].tolist()
        return kept

    def _locate_many(self, rows: np.ndarray) -> np.ndarray:
        packed = np.full(len(rows), -1, dtype=np.int64)
        dense = (rows >= 0) & (rows < len(self._loc))
        packed[dense] = self._loc[rows[dense]]
        if self._sparse:
            for i in np.flatnonzero(~dense).tolist():
                packed[i] = self._sparse.get(int(rows[i]), -1)
        return packed

    def search(
        self, tenant: str, agent: str, project_id: str | None, terms: Sequence[str], limit: int
    ) -> list[tuple[int, float]]:
        part = self.partition(tenant, agent)
        if part is None:
            return []
        part.settle()
        keys = np.fromiter(query_keys(terms), dtype=np.int64)
        # An unknown project matches only global rows (-1 is never a stored code).
        project = None if project_id is None else self._codes.get(project_id, -1)
        return part.search(keys, project, limit)
