"""The embedded search index: every lane answered from memory, fed by the change feed.

The record store's change feed (:meth:`RecordStore.changes_since`) hands over each row whose
projection moved: its namespace, scope, liveness, vector, analysed terms, entity keys and place in
its episode. This index keeps them in numpy structures per tenant and agent — BM25 postings
(:mod:`~cairn.storage.inprocess.keyword_index`), float32 vector blocks
(:mod:`~cairn.storage.inprocess.vector_index`) with an optional HNSW graph per large partition
(:mod:`~cairn.storage.inprocess.ann_graph`), episode places (:mod:`~cairn.storage.inprocess.places`)
and entity postings — and catches up before every lane, so a process sees every other process's
writes at its next search. A new feed generation (a rebuilt projection) reloads everything.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

import numpy as np

from cairn.errors import StorageError
from cairn.storage.inprocess.ann_graph import DEFAULT_ANN_THRESHOLD, AnnIndexes
from cairn.storage.inprocess.entities import EntityPostings
from cairn.storage.inprocess.keyword_index import KeywordIndex
from cairn.storage.inprocess.places import RowPlaces
from cairn.storage.inprocess.vector_index import ExactVectorIndex
from cairn.storage.ports import (
    ChangeBatch,
    EpisodePlace,
    FeedPosition,
    LaneFilter,
    LaneHit,
    RecordStore,
    TermCounts,
)

_NOTHING = FeedPosition(-1, -1)


class InProcessSearchIndex:
    """``graphs_beside``: the database file whose ``.ann`` folder holds HNSW graphs (None:
    no graphs);
    ``ann_threshold``: live vectors from which a partition gets a graph (None: never);
    ``background_builds``: a long-running process builds a partition's first graph on a
    thread, off this index's lock (searched exactly meanwhile): a server's other tenants
    never wait for it."""

    def __init__(
        self,
        records: RecordStore,
        *,
        dim: int,
        graphs_beside: Path | None = None,
        ann_threshold: int | None = DEFAULT_ANN_THRESHOLD,
        background_builds: bool = False,
    ) -> None:
        self._records = records
        self._dim = dim
        self._lock = threading.RLock()
        self._position = _NOTHING
        self._held = threading.local()  # .depth: holding() contexts open on this thread
        self._graphs = (graphs_beside, ann_threshold, background_builds)
        self._ann = self._open_graphs()
        self._vectors: ExactVectorIndex
        self._reset()

    def _open_graphs(self) -> AnnIndexes | None:
        beside, threshold, background = self._graphs
        if beside is None:
            return None
        return AnnIndexes.open(beside, self._dim, threshold, background=background)

    def _follow_width(self, width: int) -> None:
        """Vectors of another width than the index's: a store that chose its embedder
        with its first memories (the index was made before it knew). Taken up while the
        index holds no vector; after that the store refuses a second embedder."""
        if width == self._dim:
            return
        if len(self._vectors) or self._vectors.blocks():
            raise StorageError(
                f"the store's vectors have {width} dimensions, the index's {self._dim}:"
                " one store holds one embedder's vectors"
            )
        self._dim = width
        self._ann = self._open_graphs()
        self._vectors = ExactVectorIndex(width)

    def _reset(self) -> None:
        self._vectors = ExactVectorIndex(self._dim)
        self._words = KeywordIndex()
        self._places = RowPlaces()
        self._entities = EntityPostings()

    # -- following the feed --------------------------------------------------------------

    @contextmanager
    def holding(self) -> Iterator[None]:
        """One catch-up with the feed for everything this thread asks inside (a recall's
        lanes, fusion and evidence): they all read the index at one feed position, and a
        recall reads the feed's head once instead of before each of its ~8 calls."""
        depth = getattr(self._held, "depth", 0)
        caught_up = True
        if depth == 0:
            try:
                self.refresh()
            except Exception:  # not held then: each call catches up (or fails) on its own
                caught_up = False
        if not caught_up:
            yield
            return
        self._held.depth = depth + 1
        try:
            yield
        finally:
            self._held.depth = depth

    def refresh(self) -> None:
        if getattr(self._held, "depth", 0):
            return  # caught up when the holding() around this call began
        with self._lock:
            head = self._records.feed_position()
            if head == self._position:
                return
            start = self._position
            if head.generation != start.generation:
                self._reset()
                start = FeedPosition(head.generation, -1)
            for batch in self._records.changes_since(start):
                self._apply(batch)
            self._position = head
            if self._ann is not None:
                # Graphs follow the exact blocks: new rows, rows that left, purges
                # (scrubbed from the persisted file too), build or load at the threshold.
                self._ann.sync(self._vectors, head.seq)

    def _apply(self, batch: ChangeBatch) -> None:
        self._places.update(batch.rows, batch.episodes, batch.positions, batch.occurred)
        self._words.sync(
            batch.rows,
            batch.tenants,
            batch.agents,
            batch.projects,
            batch.live,
            batch.lengths,
            batch.term_keys,
            batch.term_counts,
        )
        self._entities.sync(batch.rows, batch.tenants, batch.agents, batch.entity_keys)
        with_vectors = [i for i, vec in enumerate(batch.vectors) if vec is not None]
        for i, vec in enumerate(batch.vectors):
            if vec is None:
                self._vectors.drop(batch.rows[i])  # no vector any more: purged
        if with_vectors:
            # One buffer per batch: one copy, not one call per row.
            blob = b"".join(batch.vectors[i] or b"" for i in with_vectors)
            matrix = np.frombuffer(blob, dtype=np.float32).reshape(len(with_vectors), -1)
            self._follow_width(int(matrix.shape[1]))
            self._vectors.upsert_many(
                [batch.rows[i] for i in with_vectors],
                [batch.tenants[i] for i in with_vectors],
                [batch.agents[i] for i in with_vectors],
                [batch.projects[i] for i in with_vectors],
                [batch.live[i] for i in with_vectors],
                matrix,
                [batch.models[i] or "unknown" for i in with_vectors],
                [batch.seqs[i] for i in with_vectors],
            )

    # -- lanes ---------------------------------------------------------------------------

    def keyword(self, where: LaneFilter, terms: Sequence[str], limit: int) -> list[LaneHit]:
        if not terms or limit <= 0:
            return []
        with self._lock:
            self.refresh()
            hits = self._words.search(where.tenant, where.agent, where.project_id, terms, limit)
        return [LaneHit(row, score) for row, score in hits]

    def term_counts(self, where: LaneFilter, terms: Sequence[str]) -> TermCounts:
        with self._lock:
            self.refresh()
            total, counts = self._words.document_counts(where.tenant, where.agent, terms)
        return TermCounts(total, counts)

    def keyword_scores(
        self, where: LaneFilter, terms: Sequence[str], rows: Sequence[int]
    ) -> dict[int, float]:
        if not terms or not rows:
            return {}
        with self._lock:
            self.refresh()
            scores = self._words.scores(where.tenant, where.agent, terms, rows)
        return {row: score for row, score in scores.items() if score > 0}

    def row_terms(
        self, where: LaneFilter, terms: Sequence[str], rows: Sequence[int]
    ) -> dict[int, tuple[frozenset[str], int]]:
        """Per row, which of ``terms`` its analysed text holds and its distinct terms, from
        the postings (rows the index holds no postings for are left out): recall's
        relevance and length signals read this rather than analysing each text again."""
        if not rows:
            return {}
        with self._lock:
            self.refresh()
            return self._words.row_terms(where.tenant, where.agent, terms, rows)

    def vector(self, where: LaneFilter, query: np.ndarray, limit: int) -> list[LaneHit]:
        if limit <= 0:
            return []
        vec = np.asarray(query, dtype=np.float32)
        with self._lock:
            self.refresh()
            if vec.shape[-1] != self._dim:  # a query embedded before the store chose
                return []
            hits = None
            if self._ann is not None:  # None here too: not indexed, or exact is better
                hits = self._ann.search(
                    self._vectors, vec, where.tenant, where.agent, where.project_id, limit
                )
            if hits is None:
                hits = self._vectors.search(vec, where.tenant, where.agent, where.project_id, limit)
        return [LaneHit(row, score) for row, score in hits]

    def vector_scores(
        self, where: LaneFilter, query: np.ndarray, rows: Sequence[int]
    ) -> dict[int, float]:
        if not rows:
            return {}
        with self._lock:
            self.refresh()
            block = self._vectors.block(where.tenant, where.agent)
            if block is None or np.asarray(query).shape[-1] != self._dim:
                return {}
            wanted = np.asarray(rows, dtype=np.int64)
            slots = self._vectors.slots(block, wanted)
            inside = slots >= 0
            sims = block.matrix[slots[inside]] @ np.asarray(query, dtype=np.float32)
            return {
                int(row): float(sim)
                for row, sim in zip(wanted[inside].tolist(), sims.tolist(), strict=True)
            }

    def entity(self, where: LaneFilter, seeds: Sequence[int], per_entity_cap: int) -> list[LaneHit]:
        if not seeds:
            return []
        with self._lock:
            self.refresh()
            counts = self._entities.shared(where.tenant, where.agent, seeds, per_entity_cap)
            seed_set = set(seeds)
            rows = [r for r in counts if r not in seed_set]
            kept = self._words.eligible(
                where.tenant, where.agent, where.project_id, rows, live=True
            )
        hits = [LaneHit(row, float(counts[row])) for row in kept]
        hits.sort(key=lambda h: (-h.score, h.row))
        return hits

    def places(self, where: LaneFilter, rows: Sequence[int]) -> dict[int, EpisodePlace]:
        with self._lock:
            self.refresh()
            mine = self._words.eligible(where.tenant, where.agent, None, rows, live=False)
            return self._places.places(list(dict.fromkeys(mine)))

    def neighbours(
        self, where: LaneFilter, places: Sequence[EpisodePlace], window: int
    ) -> dict[int, EpisodePlace]:
        anchors = list(
            dict.fromkeys(
                (p.episode_id, p.position)
                for p in places
                if p.episode_id is not None and p.position is not None
            )
        )
        if not anchors or window <= 0:
            return {}
        out: dict[int, EpisodePlace] = {}
        with self._lock:
            self.refresh()
            for episode_id, _ in anchors:
                members = self._words.eligible(
                    where.tenant,
                    where.agent,
                    where.project_id,
                    self._places.episode_rows(episode_id),
                    live=True,
                )
                for row, place in self._places.places(members).items():
                    if place.position is None:
                        continue
                    if any(
                        e == episode_id and abs(place.position - p) <= window for e, p in anchors
                    ):
                        out[row] = place
        return out

    def describe(self) -> list[dict[str, object]]:
        """The approximate graphs this process holds (for status and benchmarks)."""
        with self._lock:
            return [] if self._ann is None else list(self._ann.describe())

    def close(self) -> None:
        return None
