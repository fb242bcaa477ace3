"""Running the lanes: each lane is asked once, a failing optional lane is named, not fatal.

The keyword lane prunes terms that are in too large a share of a big partition (see
:func:`cairn.engine.recall.query.prune_common_terms`); the vector lane embeds the query;
the entity lane, when on, is seeded by the best rows the other lanes found. A lane that
raises is logged as a warning and reported in ``failures``; recall carries on without it.
"""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TypeVar

import numpy as np

from cairn.adapters.embedding import Embedder
from cairn.config import Rag
from cairn.engine.recall.fusion import LaneRanking
from cairn.engine.recall.query import prune_common_terms
from cairn.storage.ports import LaneFilter, LaneHit, Records, SearchIndex, TermCounts

log = logging.getLogger(__name__)
T = TypeVar("T")


@dataclass
class StageClock:
    """Milliseconds per stage; a stage run twice adds up."""

    timings: dict[str, float] = field(default_factory=dict)
    started: float = field(default_factory=time.perf_counter)

    def total(self) -> float:
        """Wall time since the clock started, in milliseconds."""
        return (time.perf_counter() - self.started) * 1000.0

    def run(self, stage: str, fn: Callable[[], T]) -> T:
        start = time.perf_counter()
        try:
            return fn()
        finally:
            elapsed = (time.perf_counter() - start) * 1000.0
            self.timings[stage] = self.timings.get(stage, 0.0) + elapsed


@contextmanager
def one_reading(records: Records, index: SearchIndex, tenant: str) -> Iterator[None]:
    """Around a whole recall: the store's one read where it can hold one, and one
    catch-up with the feed for an index that follows it (the embedded index's
    ``holding``: every lane then reads one feed position, and the feed's head is read
    once a recall, not before each of the lanes' ~8 calls)."""
    with records.reading(tenant), index.holding():
        yield


def ranking(name: str, weight: float, hits: Sequence[LaneHit]) -> LaneRanking:
    return LaneRanking(name, weight, tuple(h.row for h in hits), tuple(h.score for h in hits))


def entity_ranking(
    weight: float, seeds: Sequence[int], neighbours: Sequence[LaneHit]
) -> LaneRanking:
    """The entity lane's own order (SPEC §4): the seeds first, then rows sharing entities
    with them, scored ``tanh(shared · 0.5)``."""
    hits = [LaneHit(s, 1.0) for s in seeds] + [
        LaneHit(h.row, math.tanh(h.score * 0.5)) for h in neighbours
    ]
    hits.sort(key=lambda h: -h.score)
    return ranking("entity", weight, hits)


@dataclass
class Lanes:
    """The lanes of one recall, their results and their failures."""

    index: SearchIndex
    embedder: Embedder
    where: LaneFilter
    rag: Rag
    clock: StageClock
    rankings: list[LaneRanking] = field(default_factory=list)
    failures: dict[str, str] = field(default_factory=dict)
    query_vector: np.ndarray | None = None
    asked_vector: np.ndarray | None = None  # the query as asked, when the lane read another

    @property
    def relevance_vector(self) -> np.ndarray | None:
        return self.asked_vector if self.asked_vector is not None else self.query_vector

    searched_terms: tuple[str, ...] = ()
    counted: tuple[tuple[str, ...], TermCounts] | None = None  # the last term_counts asked

    def term_counts(self, terms: tuple[str, ...]) -> TermCounts:
        """The index's document counts of ``terms``, asked once per recall."""
        if self.counted is None or self.counted[0] != terms:
            self.counted = (terms, self.index.term_counts(self.where, terms))
        return self.counted[1]

    def keyword_rows(self, limit: int) -> list[int]:
        """The keyword lane's best rows, at most ``limit`` (none before it ran)."""
        lane = next((lane for lane in self.rankings if lane.name == "keyword"), None)
        return list(lane.rows[:limit]) if lane is not None else []

    def vector_population(self, counts: TermCounts | None) -> tuple[list[float], int]:
        """The vector lane's scores, and how many memories they are the top of: all of them
        when the lane returned fewer than it was asked for, else the partition's live count."""
        scores = [s for lane in self.rankings if lane.name == "vector" for s in lane.scores]
        if self.asked_vector is not None:  # the same rows, as the asked query sees them
            rows = [r for lane in self.rankings if lane.name == "vector" for r in lane.rows]
            scores = list(self.index.vector_scores(self.where, self.asked_vector, rows).values())
        population = len(scores)
        if population >= self.rag.laneCandidates and counts is not None:
            population = max(population, counts.documents)
        return scores, population

    def _guarded(self, lane: str, fn: Callable[[], T], empty: T) -> T:
        try:
            return fn()
        except Exception as exc:  # an optional lane must never fail the recall
            log.warning("the %s lane failed (%s); recall goes on without it", lane, exc)
            self.failures[lane] = f"{type(exc).__name__}: {exc}"
            return empty

    def keyword(self, terms: tuple[str, ...]) -> None:
        def search() -> list[LaneHit]:
            chosen = terms
            pruning = self.rag.keywordPruning
            if len(chosen) > pruning.keepAtLeast:
                counts = self.term_counts(chosen)
                if counts.documents >= pruning.minDocuments:
                    chosen = prune_common_terms(
                        chosen,
                        counts.per_term,
                        counts.documents,
                        max_share=pruning.maxShare,
                        keep_at_least=pruning.keepAtLeast,
                    )
            self.searched_terms = chosen
            return self.index.keyword(self.where, chosen, self.rag.laneCandidates)

        def timed() -> list[LaneHit]:
            return self.clock.run("lane.keyword", search)

        empty: list[LaneHit] = []
        hits = self._guarded("keyword", timed, empty) if terms else empty
        self.rankings.append(ranking("keyword", self.rag.weights.fts, hits))

    def vector(self, text: str, asked: str | None = None) -> None:
        """The vector lane over ``text``; ``asked``, when it differs (the query as asked,
        before topic.py took names out), is embedded in the same call and is what the
        relevance floor reads (:attr:`relevance_vector`), as it was calibrated on it."""
        hits: list[LaneHit] = []
        if self.rag.weights.vector > 0 and text.strip():
            texts = [text] if asked is None or asked == text else [text, asked]

            def search() -> list[LaneHit]:
                vectors = self.clock.run("embed", lambda: self.embedder.embed(texts))
                vector = self.query_vector = vectors[0]
                self.asked_vector = vectors[1] if len(texts) > 1 else None
                limit = self.rag.laneCandidates
                return self.clock.run(
                    "lane.vector", lambda: self.index.vector(self.where, vector, limit)
                )

            hits = self._guarded("vector", search, hits)
        self.rankings.append(ranking("vector", self.rag.weights.vector, hits))

    def entity(self, seeds: Sequence[int]) -> None:
        def search() -> list[LaneHit]:
            cap = self.rag.entity.perEntityCap
            return self.clock.run("lane.entity", lambda: self.index.entity(self.where, seeds, cap))

        empty: list[LaneHit] = []
        neighbours = self._guarded("entity", search, empty)
        if "entity" not in self.failures:
            self.rankings.append(entity_ranking(self.rag.weights.entity, seeds, neighbours))
