"""MemoryRecall: composes the stages; it owns no ranking math of its own.

query formulation → lanes → fuse → rerank (opt-in) → score → trust filter → min score →
dedup → budget → format. Every candidate's fate is kept for the trace.
"""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any

import numpy as np

from cairn.adapters.embedding import Embedder
from cairn.config import Rag
from cairn.engine.recall.episodes import propagate
from cairn.engine.recall.formatting import Fence, format_line, format_preamble
from cairn.engine.recall.fusion import Fused, LaneRanking, rrf, score_fusion
from cairn.engine.recall.query import formulate, prune_common_terms
from cairn.engine.recall.relevance import (
    CALIBRATIONS,
    Relevance,
    coverage,
    evidence,
    memory_terms,
    model_reads,
    relevances,
    term_weights,
)
from cairn.engine.recall.rerank import Reranker, rerank_order
from cairn.engine.recall.scoring import ScoreBreakdown, rank_key, score
from cairn.engine.recall.selection import budget, dedup, filter_min_score, filter_trust
from cairn.engine.recall.timeframe import date_prior, query_range
from cairn.model import Record
from cairn.storage.base import EpisodePlace, LaneFilter, LaneHit, Store

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class RecallRequest:
    query: str
    tenant: str
    agent: str
    project_id: str | None = None
    max_results: int | None = None
    max_chars: int | None = None
    include_trust: tuple[str, ...] | None = None


@dataclass(frozen=True, slots=True)
class Candidate:
    row: int
    record: Record
    ranks: dict[str, int]
    fused: float
    breakdown: ScoreBreakdown
    relevance: Relevance  # absolute, comparable across queries: what minScore is a floor on
    line: str = ""  # the formatted preamble line; set for delivered memories

    @property
    def score(self) -> float:
        return self.breakdown.final


@dataclass(frozen=True, slots=True)
class RecallResult:
    query: str
    preamble: str
    memories: tuple[Candidate, ...]  # delivered, inside the budget
    ranked: tuple[Candidate, ...]  # after filters and dedup, before the budget
    trace: tuple[dict[str, Any], ...]
    timings_ms: dict[str, float] = field(default_factory=dict)
    rerank: str | None = None  # None when off; "applied", "timeout", "error: ..."


def _relevance(
    signals: dict[int, Relevance], fused: list[Fused], breakdowns: list[ScoreBreakdown]
) -> list[Relevance]:
    # A candidate inherits relevance by ranking close to the query's best evidence.
    own = [signals[f.row] for f in fused]
    scores = relevances([r.evidence for r in own], [b.final for b in breakdowns])
    return [replace(r, score=s) for r, s in zip(own, scores, strict=True)]


def _lane(name: str, weight: float, hits: list[LaneHit]) -> LaneRanking:
    return LaneRanking(name, weight, tuple(h.row for h in hits), tuple(h.score for h in hits))


class MemoryRecall:
    def __init__(
        self,
        store: Store,
        embedder: Embedder,
        reranker: Reranker | None = None,
    ) -> None:
        self._store = store
        self._embedder = embedder
        self._reranker = reranker

    def recall(self, request: RecallRequest, rag: Rag, now: datetime) -> RecallResult:
        timings: dict[str, float] = {}
        clock = time.perf_counter
        started = clock()

        def timed(stage: str, fn: Callable[[], Any]) -> Any:
            start = clock()
            try:
                return fn()
            finally:
                timings[stage] = (clock() - start) * 1000.0

        where = LaneFilter(request.tenant, request.agent, request.project_id)
        query = timed("formulate", lambda: formulate(request.query))
        limit = rag.laneCandidates
        searched: list[str] = []  # the terms the keyword lane used, after pruning

        def keyword() -> list[LaneHit]:
            terms = query.terms
            pruning = rag.keywordPruning
            if len(terms) > pruning.keepAtLeast:
                total, counts = self._store.keyword_document_counts(where, terms)
                if total >= pruning.minDocuments:
                    terms = prune_common_terms(
                        terms,
                        counts,
                        total,
                        max_share=pruning.maxShare,
                        keep_at_least=pruning.keepAtLeast,
                    )
            searched.extend(terms)
            return self._store.keyword_search(where, terms, limit)

        keyword_hits: list[LaneHit] = timed("lane.keyword", keyword)
        vector_hits: list[LaneHit] = []
        qvec: np.ndarray | None = None
        if rag.weights.vector > 0 and request.query.strip():
            qvec = timed("embed", lambda: self._embedder.embed([request.query])[0])
            vector_hits = timed(
                "lane.vector", lambda: self._store.vector_search(where, qvec, limit)
            )
        lanes = [
            _lane("keyword", rag.weights.fts, keyword_hits),
            _lane("vector", rag.weights.vector, vector_hits),
        ]

        def fuse() -> list[Fused]:
            return self._fuse(lanes, qvec, request, rag, now, where, searched)

        fused: list[Fused] = timed("fuse", fuse)
        if rag.entityLane and fused:
            seeds = [f.row for f in fused[: rag.entity.seedCount]]
            neighbours = timed(
                "lane.entity",
                lambda: self._store.entity_neighbours(where, seeds, rag.entity.perEntityCap),
            )
            # Lane score tanh(shared·0.5); the seeds themselves rank first in the lane.
            entity_hits = [LaneHit(s, 1.0) for s in seeds] + [
                LaneHit(h.row, math.tanh(h.score * 0.5)) for h in neighbours
            ]
            entity_hits.sort(key=lambda h: -h.score)
            lanes.append(_lane("entity", rag.weights.entity, entity_hits))
            fused = timed("fuse", fuse)
        fused = fused[: self._pool(request, rag)]

        records = timed("fetch", lambda: self._store.records_by_rows([f.row for f in fused]))
        fused = [f for f in fused if f.row in records]
        rerank_status: str | None = None
        if rag.rerank.enabled and self._reranker is not None and fused:
            fused, rerank_status = timed(
                "rerank", lambda: self._rerank(request.query, fused, records, rag)
            )

        signals = timed(
            "relevance",
            lambda: self._evidence(request.query, query.terms, qvec, fused, records, where),
        )
        fence = Fence.new()
        pool_size = rag.rerank.maxCandidates if rerank_status == "applied" else 0

        def score_all() -> list[Candidate]:
            breakdowns = [score(f.score, records[f.row], rag.boosts, now) for f in fused]
            relevance = _relevance(signals, fused, breakdowns)
            scored = [
                Candidate(
                    row=f.row,
                    record=records[f.row],
                    ranks=f.ranks,
                    fused=f.score,
                    breakdown=b,
                    relevance=r,
                )
                for f, b, r in zip(fused, breakdowns, relevance, strict=True)
            ]

            def key(c: Candidate) -> tuple[float, int]:
                return rank_key(c.score, c.record.trust)

            # A reranked pool and its tail are ordered apart, pool first.
            return sorted(scored[:pool_size], key=key) + sorted(scored[pool_size:], key=key)

        candidates = timed("score", score_all)
        trace: dict[int, dict[str, Any]] = {
            c.row: {
                "id": c.record.id,
                "version": c.record.version,
                "ranks": c.ranks,
                "fused": c.fused,
                "factors": c.breakdown.as_dict(),
                "relevance": c.relevance.as_dict(),
                "fate": "delivered",
            }
            for c in candidates
        }
        allowed = request.include_trust or rag.includeTrustLevels
        kept, dropped_trust = filter_trust(candidates, lambda c: c.record.trust, allowed)
        kept, dropped_min = filter_min_score(kept, lambda c: c.relevance.score, rag.minScore)
        kept, dropped_dup = dedup(kept, lambda c: c.record.body, lambda c: c.record.recorded_at)
        ranked = list(kept)
        lines: dict[int, str] = {}

        def line_of(c: Candidate) -> str:
            # Formatting is only paid for the candidates the budget actually considers.
            if c.row not in lines:
                lines[c.row] = format_line(c.record, fence)
            return lines[c.row]

        delivered, dropped_budget = timed(
            "budget",
            lambda: budget(
                ranked,
                lambda c: len(line_of(c)) + 1,
                request.max_results or rag.maxResults,
                request.max_chars or rag.maxContextChars,
            ),
        )
        delivered = [replace(c, line=lines[c.row]) for c in delivered]
        for drop in (*dropped_trust, *dropped_min, *dropped_dup, *dropped_budget):
            trace[drop.item.row]["fate"] = f"dropped: {drop.reason}"  # type: ignore[attr-defined]
        preamble = timed("format", lambda: format_preamble([c.line for c in delivered]))
        timings["total"] = (clock() - started) * 1000.0  # wall time of the whole call
        return RecallResult(
            query=request.query,
            preamble=preamble,
            memories=tuple(delivered),
            ranked=tuple(ranked),
            trace=tuple(trace[c.row] for c in candidates),
            timings_ms=timings,
            rerank=rerank_status,
        )

    def _fuse(
        self,
        lanes: list[LaneRanking],
        qvec: np.ndarray | None,
        request: RecallRequest,
        rag: Rag,
        now: datetime,
        where: LaneFilter,
        terms: list[str],
    ) -> list[Fused]:
        if rag.fusion.method == "rrf":
            return rrf(lanes, rag.rrfK)
        fill: dict[str, dict[int, float]] = {}
        if qvec is not None and rag.weights.vector > 0:
            in_vector = {row for lane in lanes if lane.name == "vector" for row in lane.rows}
            others = [r for lane in lanes for r in lane.rows if r not in in_vector]
            fill["vector"] = self._store.vector_scores(qvec, others)
        scores = score_fusion(lanes, fill)
        if not scores:
            return []
        neighbours: list[int] = []
        if rag.episodes.expandTop > 0 and rag.episodes.window > 0:
            scores, neighbours = self._expand(scores, lanes, fill, qvec, rag, where, terms)
        span = query_range(request.query, now)
        places: dict[int, EpisodePlace] = {}
        if rag.episodes.neighbourWeight > 0 or rag.episodes.episodeWeight > 0 or span:
            places = self._store.episode_positions(list(scores))
        if places and (rag.episodes.neighbourWeight > 0 or rag.episodes.episodeWeight > 0):
            scores = propagate(
                scores,
                places,
                neighbour_weight=rag.episodes.neighbourWeight,
                window=rag.episodes.window,
                episode_weight=rag.episodes.episodeWeight,
                episode_top=rag.episodes.episodeTop,
            )
        if span and rag.timeframe.weight > 0:
            scores = date_prior(
                scores,
                places,
                span,
                weight=rag.timeframe.weight,
                after_days=rag.timeframe.afterDays,
                tau_days=rag.timeframe.tauDays,
            )
        top = max(scores.values())
        ranks: dict[int, dict[str, int]] = {}
        for lane in lanes:
            for position, row in enumerate(lane.rows, start=1):
                ranks.setdefault(row, {})[lane.name] = position
        for position, row in enumerate(neighbours, start=1):
            ranks.setdefault(row, {})["neighbour"] = position
        order = sorted(scores, key=lambda row: -scores[row])  # stable: lane order breaks ties
        # Only the pool is ever fetched and scored; the rest would be built for nothing.
        order = order[: self._pool(request, rag)]
        return [
            Fused(
                row=row,
                score=max(scores[row], 0.0) / top if top > 0 else 0.0,
                ranks=ranks.get(row, {}),
            )
            for row in order
        ]

    def _evidence(
        self,
        text: str,
        terms: tuple[str, ...],
        qvec: np.ndarray | None,
        fused: list[Fused],
        records: dict[int, Record],
        where: LaneFilter,
    ) -> dict[int, Relevance]:
        """Each candidate's own evidence of relevance (relevance.py): the raw cosine, when
        it is the calibrated model's and it reads both texts, and the share of the query's
        term weight."""
        rows = [f.row for f in fused]
        read = model_reads(text)
        calibrated = self._embedder.model_id == CALIBRATIONS.embedder
        use = read and calibrated and qvec is not None
        cosines = self._store.vector_scores(qvec, rows) if use and qvec is not None else {}
        total, counts = self._store.keyword_document_counts(where, terms) if terms else (0, {})
        weights = term_weights(terms, counts, total)
        out: dict[int, Relevance] = {}
        for row in rows:
            record = records[row]
            cosine = cosines.get(row) if model_reads(record.body) else None
            covered = coverage(weights, memory_terms(record.title, record.body, *record.tags))
            own = evidence(cosine, covered, read)
            out[row] = Relevance(own, own, cosine, covered)
        return out

    @staticmethod
    def _pool(request: RecallRequest, rag: Rag) -> int:
        # A caller asking for many results gets a pool to match.
        return max(rag.scorePool, 2 * (request.max_results or rag.maxResults))

    def _expand(
        self,
        scores: dict[int, float],
        lanes: list[LaneRanking],
        fill: dict[str, dict[int, float]],
        qvec: np.ndarray | None,
        rag: Rag,
        where: LaneFilter,
        terms: list[str],
    ) -> tuple[dict[int, float], list[int]]:
        """Add the episode neighbours of the best hits that no lane returned, scored by
        the lanes' own measures (cosine, BM25) so they compete like any candidate."""
        best = sorted(scores, key=lambda row: -scores[row])[: rag.episodes.expandTop]
        places = self._store.episode_positions(best)
        near = self._store.episode_neighbours(
            where, [places[row] for row in best if row in places], rag.episodes.window
        )
        extra = [row for row in near if row not in scores]
        if not extra:
            return scores, []
        if qvec is not None and rag.weights.vector > 0:
            fill.setdefault("vector", {}).update(self._store.vector_scores(qvec, extra))
        if terms:
            fill.setdefault("keyword", {}).update(self._store.keyword_scores(where, terms, extra))
        return score_fusion(lanes, fill, extra_rows=extra), extra

    def _rerank(
        self, query: str, fused: list[Fused], records: dict[int, Record], rag: Rag
    ) -> tuple[list[Fused], str]:
        assert self._reranker is not None
        pool = fused[: rag.rerank.maxCandidates]
        order, failure = rerank_order(
            self._reranker, query, [records[f.row].body for f in pool], rag.rerank.timeoutMs
        )
        if order is None:
            return fused, failure or "error"
        # The pool keeps its fused score distribution, reassigned in the reranked order.
        scores = [f.score for f in pool]
        reranked = [
            Fused(row=pool[i].row, score=scores[rank], ranks={**pool[i].ranks, "rerank": rank + 1})
            for rank, i in enumerate(order)
        ]
        return reranked + fused[len(pool) :], "applied"
