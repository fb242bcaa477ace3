"""The in-memory twin of the search index: every lane by brute force over the feed.

The same BM25 (FTS5's formula, statistics per tenant and agent), cosine and entity
counting as the embedded index, computed the plain way over every row of the partition.
Slow past a few thousand rows and meant for tests, where it shows that the engine relies on
the contract rather than on one index's internals.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass

import numpy as np

from cairn.bm25 import idf, share
from cairn.storage.ports import (
    EpisodePlace,
    FeedPosition,
    LaneFilter,
    LaneHit,
    RecordStore,
    TermCounts,
)
from cairn.storage.terms import decode_counts, decode_keys, query_keys


@dataclass(frozen=True, slots=True)
class _Entry:
    tenant: str
    agent: str
    project: str | None
    live: bool
    vector: np.ndarray | None
    length: int
    terms: dict[int, int]
    entities: frozenset[int]
    place: EpisodePlace


class MemorySearchIndex:
    def __init__(self, records: RecordStore) -> None:
        self._records = records
        self._entries: dict[int, _Entry] = {}
        self._position = FeedPosition(-1, -1)
        self._lock = threading.RLock()

    def holding(self) -> AbstractContextManager[None]:
        return nullcontext()  # each call catches up on its own

    def refresh(self) -> None:
        with self._lock:
            head = self._records.feed_position()
            if head == self._position:
                return
            start = self._position
            if head.generation != start.generation:
                self._entries.clear()
                start = FeedPosition(head.generation, -1)
            for b in self._records.changes_since(start):
                for i, row in enumerate(b.rows):
                    keys, counts = b.term_keys[i], b.term_counts[i]
                    if keys is None:
                        self._entries.pop(row, None)  # purged: gone from every lane
                        continue
                    blob = b.vectors[i]
                    self._entries[row] = _Entry(
                        b.tenants[i],
                        b.agents[i],
                        b.projects[i],
                        b.live[i],
                        None if blob is None else np.frombuffer(blob, dtype=np.float32),
                        b.lengths[i] or 0,
                        dict(
                            zip(
                                decode_keys(keys).tolist(),
                                decode_counts(counts or b"").tolist(),
                                strict=True,
                            )
                        ),
                        frozenset(decode_keys(b.entity_keys[i] or b"").tolist()),
                        EpisodePlace(
                            b.episodes[i],
                            b.positions[i],
                            (b.occurred[i] or "")[:10] or None,
                        ),
                    )
            self._position = head

    def _partition(self, where: LaneFilter, *, scoped: bool) -> dict[int, _Entry]:
        self.refresh()
        return {
            row: e
            for row, e in self._entries.items()
            if e.tenant == where.tenant
            and e.agent == where.agent
            and e.live
            and (
                not scoped
                or where.project_id is None
                or e.project is None
                or e.project == where.project_id
            )
        }

    def _bm25(
        self, where: LaneFilter, terms: Sequence[str], rows: Sequence[int]
    ) -> dict[int, float]:
        everyone = self._partition(where, scoped=False)  # statistics: the whole partition
        n = len(everyone)
        if n == 0:
            return {}
        avgdl = (sum(e.length for e in everyone.values()) / n) or 1.0
        out: dict[int, float] = {}
        for key in query_keys(terms):
            df = sum(1 for e in everyone.values() if key in e.terms)
            if df == 0:
                continue
            weight = idf(n, df)
            for row in rows:
                entry = everyone.get(row)
                tf = entry.terms.get(key, 0) if entry is not None else 0
                if tf:
                    length = float(entry.length)  # type: ignore[union-attr]
                    out[row] = out.get(row, 0.0) + share(float(tf), length, weight, avgdl)
        return out

    def keyword(self, where: LaneFilter, terms: Sequence[str], limit: int) -> list[LaneHit]:
        with self._lock:
            scores = self._bm25(where, terms, list(self._partition(where, scoped=True)))
        ranked = sorted(scores.items(), key=lambda item: (-item[1], item[0]))
        return [LaneHit(row, score) for row, score in ranked[:limit]]

    def term_counts(self, where: LaneFilter, terms: Sequence[str]) -> TermCounts:
        with self._lock:
            everyone = self._partition(where, scoped=False)
        counts = {}
        for term in terms:
            keys = list(query_keys([term]))
            counts[term] = sum(1 for e in everyone.values() if keys[0] in e.terms)
        return TermCounts(len(everyone), counts)

    def keyword_scores(
        self, where: LaneFilter, terms: Sequence[str], rows: Sequence[int]
    ) -> dict[int, float]:
        with self._lock:
            return self._bm25(where, terms, rows)

    def vector(self, where: LaneFilter, query: np.ndarray, limit: int) -> list[LaneHit]:
        with self._lock:
            scored = [
                (row, float(e.vector @ query))
                for row, e in self._partition(where, scoped=True).items()
                if e.vector is not None
            ]
        scored.sort(key=lambda item: (-item[1], item[0]))
        return [LaneHit(row, score) for row, score in scored[:limit]]

    def vector_scores(
        self, where: LaneFilter, query: np.ndarray, rows: Sequence[int]
    ) -> dict[int, float]:
        with self._lock:
            self.refresh()
            out = {}
            for row in rows:
                e = self._entries.get(row)
                mine = e is not None and (e.tenant, e.agent) == (where.tenant, where.agent)
                if mine and e is not None and e.vector is not None:
                    out[row] = float(e.vector @ query)
            return out

    def entity(self, where: LaneFilter, seeds: Sequence[int], per_entity_cap: int) -> list[LaneHit]:
        with self._lock:
            self.refresh()
            namespace = {
                row: e
                for row, e in self._entries.items()
                if (e.tenant, e.agent) == (where.tenant, where.agent)
            }
            keys: set[int] = set()
            for seed in seeds:
                if seed in namespace:
                    keys |= namespace[seed].entities
            counts: dict[int, int] = {}
            for key in keys:
                carriers = sorted(row for row, e in namespace.items() if key in e.entities)
                for row in carriers[-per_entity_cap:]:
                    counts[row] = counts.get(row, 0) + 1
            eligible = self._partition(where, scoped=True)
        hits = [
            LaneHit(row, float(n))
            for row, n in counts.items()
            if row in eligible and row not in set(seeds)
        ]
        return sorted(hits, key=lambda h: (-h.score, h.row))

    def places(self, where: LaneFilter, rows: Sequence[int]) -> dict[int, EpisodePlace]:
        with self._lock:
            self.refresh()
            return {
                row: e.place
                for row in rows
                if (e := self._entries.get(row)) is not None
                and (e.tenant, e.agent) == (where.tenant, where.agent)
            }

    def neighbours(
        self, where: LaneFilter, places: Sequence[EpisodePlace], window: int
    ) -> dict[int, EpisodePlace]:
        anchors = [
            (p.episode_id, p.position)
            for p in places
            if p.episode_id is not None and p.position is not None
        ]
        if window <= 0:
            return {}
        with self._lock:
            eligible = self._partition(where, scoped=True)
        out = {}
        for row, e in eligible.items():
            place = e.place
            if place.episode_id is None or place.position is None:
                continue
            if any(
                place.episode_id == ep and abs(place.position - pos) <= window
                for ep, pos in anchors
            ):
                out[row] = place
        return out

    def close(self) -> None:
        return None
