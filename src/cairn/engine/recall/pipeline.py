"""MemoryRecall: composes the stages; it owns no ranking math of its own.

query formulation → lanes → fuse (with episode context and the query's time) → rerank
(opt-in) → score → trust filter → min score → dedup → budget → format. Every candidate's
fate is kept for the trace; a failing optional lane is named there and recall carries on.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any, Protocol, cast

import numpy as np

from cairn.adapters.embedding import Embedder
from cairn.config import Rag
from cairn.engine.recall import as_of
from cairn.engine.recall.combine import PoolContext, Signals, rescore
from cairn.engine.recall.embedder_weights import for_embedder
from cairn.engine.recall.episodes import propagate
from cairn.engine.recall.formatting import Fence, format_line, format_preamble
from cairn.engine.recall.fusion import Fused, lane_ranks, rrf, score_fusion, top_fused
from cairn.engine.recall.lanes import Lanes, StageClock, one_reading
from cairn.engine.recall.query import formulate
from cairn.engine.recall.relevance import (
    Relevance,
    calibration_for,
    coverage,
    embedder_reads,
    evidence,
    memory_terms,
    normal_forms,
    relevances,
    surprises,
    term_weights,
)
from cairn.engine.recall.rerank import Reranker, rerank_order
from cairn.engine.recall.scoring import ScoreBreakdown, rank_key, score
from cairn.engine.recall.selection import budget, dedup, filter_min_score, filter_trust
from cairn.engine.recall.speakers import lift_speakers
from cairn.engine.recall.timeframe import date_prior, query_range
from cairn.engine.recall.topic import TOPIC_ROWS, could_name, vector_text
from cairn.engine.relative_dates import stored_dates
from cairn.model import Record
from cairn.storage.ports import (
    EpisodePlace,
    LaneFilter,
    RecordQuery,
    Records,
    SearchIndex,
    Selections,
)
from cairn.timeutil import to_iso


class RecallReads(Records, Selections, Protocol):
    """What a recall reads of the record store: records (listed, in one read) and the rows
    its lanes found."""


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
    """One recalled memory: a version of a record, known by its id and version (the
    row the store keeps it in stays below the engine's values)."""

    record: Record
    ranks: dict[str, int]
    fused: float
    breakdown: ScoreBreakdown
    relevance: Relevance  # absolute, comparable across queries: what minScore is a floor on
    line: str = ""  # the formatted preamble line; set for delivered memories
    combination: Signals | None = None  # what the learned combination read; None when off

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
    failures: dict[str, str] = field(default_factory=dict)  # lane -> why it failed


def score_pool(request: RecallRequest, rag: Rag) -> int:
    """Fused candidates fetched and scored: a caller asking for many results gets more."""
    return max(rag.scorePool, 2 * (request.max_results or rag.maxResults))


class MemoryRecall:
    def __init__(
        self,
        records: RecallReads,
        index: SearchIndex,
        embedder: Embedder,
        reranker: Reranker | None = None,
    ) -> None:
        self._records = records
        self._index = index
        self._embedder = embedder
        self._reranker = reranker

    def recall(self, request: RecallRequest, rag: Rag, now: datetime) -> RecallResult:
        # One read for the whole recall where the store can hold one (PostgreSQL: one
        # connection and one tenant scope), one catch-up where the index follows the feed.
        with one_reading(self._records, self._index, request.tenant):
            return self._recall(request, rag, now)[0]

    def recall_near(
        self, request: RecallRequest, rag: Rag, now: datetime, vector: np.ndarray
    ) -> tuple[RecallResult, dict[str, float]]:
        """A recall, and the cosine of ``vector`` to each ranked memory that has a vector,
        by record id: what a statement's match reads of its candidates' meaning."""
        with one_reading(self._records, self._index, request.tenant):
            result, rows = self._recall(request, rag, now)
            where = LaneFilter(request.tenant, request.agent, request.project_id)
            wanted = [rows[c.record.id] for c in result.ranked]
            by_row = self._index.vector_scores(where, vector, wanted) if wanted else {}
        ids = {rows[c.record.id]: c.record.id for c in result.ranked}
        return result, {ids[row]: cosine for row, cosine in by_row.items() if row in ids}

    def _recall(
        self, request: RecallRequest, rag: Rag, now: datetime
    ) -> tuple[RecallResult, dict[str, int]]:
        """The result, and the row of each scored memory by record id (for recall_near)."""
        clock = StageClock()
        rag = for_embedder(rag, self._embedder.model_id)  # the vector lane's weight
        where = LaneFilter(request.tenant, request.agent, request.project_id)
        query = clock.run("formulate", lambda: formulate(request.query))
        lanes = Lanes(self._index, self._embedder, where, rag, clock)
        lanes.keyword(query.terms)
        if embedder_reads(self._embedder.model_id, request.query):
            text = request.query
            if rag.vectorWithoutSpeakers and could_name(text):  # topic.py
                best = lanes.keyword_rows(TOPIC_ROWS)
                text = clock.run("topic", lambda: self._topic(request.query, where, best))
            lanes.vector(text, request.query)
        if rag.entityLane:
            # Seeded by the plain fusion of the other lanes: context and dates come after.
            seeds = sorted(raw := score_fusion(lanes.rankings), key=lambda r: -raw[r])
            if seeds:
                lanes.entity(seeds[: rag.entity.seedCount])
        fused, context = clock.run("fuse", lambda: self._fuse(lanes, request, rag, now))
        records = clock.run(
            "fetch", lambda: self._records.records_by_rows(where, [f.row for f in fused])
        )
        fused = [f for f in fused if f.row in records]
        signals, distinct = clock.run(
            "relevance", lambda: self._evidence(request.query, query.terms, lanes, fused, records)
        )
        combination: dict[int, Signals] = {}
        if context is not None:
            fused, combination = clock.run(
                "combine",
                lambda: rescore(
                    request.query, fused, context, records, signals, distinct_terms=distinct
                ),
            )
        if rag.speakerWeight > 0 and fused:
            pool = fused
            fused, _ = clock.run(
                "speakers", lambda: lift_speakers(request.query, pool, records, rag.speakerWeight)
            )
        rerank_status: str | None = None
        if rag.rerank.enabled and self._reranker is not None and fused:
            fused, rerank_status = clock.run(
                "rerank", lambda: self._rerank(request.query, fused, records, rag)
            )
        pool_size = rag.rerank.maxCandidates if rerank_status == "applied" else 0
        candidates = clock.run(
            "score", lambda: _scored(fused, records, rag, now, pool_size, signals, combination)
        )
        rows = {records[f.row].id: f.row for f in fused}  # a live version per record
        return self._select(request, rag, candidates, clock, rerank_status, lanes.failures), rows

    def recall_as_of(self, request: RecallRequest, rag: Rag, at: datetime) -> RecallResult:
        """Recall as memory stood at ``at``: the versions then in force (evicted or
        superseded since, included), scored with the clock at ``at``."""
        clock = StageClock()
        stamp = to_iso(at)
        listed = self._records.list_records(
            RecordQuery(
                request.tenant,
                request.agent,
                project_id=request.project_id,
                with_global=request.project_id is not None,
                as_of=stamp,
            )
        )
        records = as_of.in_force(listed, stamp)
        texts = [as_of.record_text(r) for r in records]
        query = clock.run("formulate", lambda: formulate(request.query))
        keyword = clock.run("keyword", lambda: as_of.keyword_scores(query.terms, texts))
        top = sorted(keyword, key=lambda i: (-keyword[i], i))[: rag.laneCandidates]
        cosine: dict[int, float] = {}
        if top:
            vectors = clock.run(
                "vector", lambda: self._embedder.embed([request.query, *(texts[i] for i in top)])
            )
            cosine = as_of.cosines(vectors[0], vectors[1:], top)
        fused = clock.run(
            "fuse",
            lambda: as_of.fuse_history(
                keyword,
                cosine,
                fts_weight=rag.weights.fts,
                vector_weight=rag.weights.vector,
                pool=score_pool(request, rag),
            ),
        )
        by_row = dict(enumerate(records))
        calibration = calibration_for(self._embedder.model_id)
        signals = clock.run(
            "relevance",
            lambda: as_of.relevance_at(request.query, query.terms, records, cosine, calibration),
        )
        candidates = clock.run("score", lambda: _scored(fused, by_row, rag, at, 0, signals))
        return self._select(request, rag, candidates, clock, None, {})

    def _select(
        self,
        request: RecallRequest,
        rag: Rag,
        candidates: list[Candidate],
        clock: StageClock,
        rerank_status: str | None,
        failures: dict[str, str],
    ) -> RecallResult:
        # A candidate is one version of a record: its id and version key it in here.
        trace = {_key(c): _trace_entry(c) for c in candidates}
        allowed = request.include_trust or rag.includeTrustLevels
        kept, dropped_trust = filter_trust(candidates, lambda c: c.record.trust, allowed)
        kept, dropped_min = filter_min_score(kept, lambda c: c.relevance.score, rag.minScore)
        kept, dropped_dup = dedup(kept, lambda c: c.record.body, lambda c: c.record.recorded_at)
        fence = Fence.new()
        lines: dict[tuple[str, int], str] = {}

        def line_of(c: Candidate) -> str:
            # Formatting is only paid for the candidates the budget actually considers.
            key = _key(c)
            if key not in lines:
                lines[key] = format_line(c.record, fence)
            return lines[key]

        delivered, dropped_budget = clock.run(
            "budget",
            lambda: budget(
                kept,
                lambda c: len(line_of(c)) + 1,
                request.max_results or rag.maxResults,
                request.max_chars or rag.maxContextChars,
            ),
        )
        delivered = [replace(c, line=lines[_key(c)]) for c in delivered]
        for drop in (*dropped_trust, *dropped_min, *dropped_dup, *dropped_budget):
            trace[_key(cast(Candidate, drop.item))]["fate"] = f"dropped: {drop.reason}"
        preamble = clock.run("format", lambda: format_preamble([c.line for c in delivered]))
        clock.timings["total"] = clock.total()  # wall time of the whole call
        return RecallResult(
            query=request.query,
            preamble=preamble,
            memories=tuple(delivered),
            ranked=tuple(kept),
            trace=tuple(trace[_key(c)] for c in candidates),
            timings_ms=clock.timings,
            rerank=rerank_status,
            failures=dict(failures),
        )

    def _topic(self, query: str, where: LaneFilter, rows: list[int]) -> str:
        said = self._records.records_by_rows(where, rows).values() if rows else ()
        return vector_text(query, said)

    def _fuse(
        self, lanes: Lanes, request: RecallRequest, rag: Rag, now: datetime
    ) -> tuple[list[Fused], PoolContext | None]:
        """The fused pool, and what the learned combination reads of it (None when off)."""
        pool = score_pool(request, rag)
        if rag.fusion.method == "rrf":
            return rrf(lanes.rankings, rag.rrfK)[:pool], None
        where, qvec = lanes.where, lanes.query_vector
        fill: dict[str, dict[int, float]] = {}
        if qvec is not None:
            # A strong keyword hit outside the vector lane's cut still gets its cosine.
            in_vector = {
                row for lane in lanes.rankings if lane.name == "vector" for row in lane.rows
            }
            others = [r for lane in lanes.rankings for r in lane.rows if r not in in_vector]
            fill["vector"] = self._index.vector_scores(where, qvec, others)
        scores = score_fusion(lanes.rankings, fill)
        if not scores:
            return [], None
        neighbours: list[int] = []
        if rag.episodes.expandTop > 0 and rag.episodes.window > 0:
            scores, neighbours = self._expand(scores, lanes, fill, rag)
        base = scores
        span = query_range(request.query, now)
        episodes = rag.episodes
        uses_places = episodes.neighbourWeight > 0 or episodes.episodeWeight > 0
        places: dict[int, EpisodePlace] = {}
        if uses_places or span or rag.fusion.learned:
            places = self._index.places(where, list(scores))
        if places and uses_places:
            scores = propagate(
                scores,
                places,
                neighbour_weight=episodes.neighbourWeight,
                window=episodes.window,
                episode_weight=episodes.episodeWeight,
                episode_top=episodes.episodeTop,
            )
        if span and rag.timeframe.weight > 0:
            frame = rag.timeframe
            # The days the candidates' own words name, resolved at ingest: read only for a
            # query that names a time.
            named = self._records.records_by_rows(where, list(scores))
            scores = date_prior(
                scores,
                places,
                span,
                weight=frame.weight,
                after_days=frame.afterDays,
                tau_days=frame.tauDays,
                resolved={row: stored_dates(r.source) for row, r in named.items() if r.source},
            )
        fused = top_fused(scores, lane_ranks(lanes.rankings, neighbours), pool)
        return fused, PoolContext(base, places) if rag.fusion.learned else None

    def _expand(
        self,
        scores: dict[int, float],
        lanes: Lanes,
        fill: dict[str, dict[int, float]],
        rag: Rag,
    ) -> tuple[dict[int, float], list[int]]:
        """Add the episode neighbours of the best hits that no lane returned, scored by
        the lanes' own measures (cosine, BM25) so they compete like any candidate."""
        where = lanes.where
        best = sorted(scores, key=lambda row: -scores[row])[: rag.episodes.expandTop]
        places = self._index.places(where, best)
        near = self._index.neighbours(
            where, [places[row] for row in best if row in places], rag.episodes.window
        )
        extra = [row for row in near if row not in scores]
        if not extra:
            return scores, []
        if lanes.query_vector is not None:
            fill.setdefault("vector", {}).update(
                self._index.vector_scores(where, lanes.query_vector, extra)
            )
        if lanes.searched_terms:
            fill.setdefault("keyword", {}).update(
                self._index.keyword_scores(where, lanes.searched_terms, extra)
            )
        return score_fusion(lanes.rankings, fill, extra_rows=extra), extra

    def _evidence(
        self,
        text: str,
        terms: tuple[str, ...],
        lanes: Lanes,
        fused: list[Fused],
        records: dict[int, Record],
    ) -> tuple[dict[int, Relevance], dict[int, int]]:
        """Each candidate's own evidence of relevance (relevance.py): the raw cosine, when
        the embedder's cosines are calibrated and it reads both texts, how far that cosine
        stands above the store's own, and the share of the query's term weight the memory
        holds; and, where the index knows it, each candidate's number of distinct index
        terms (the combination's length signal)."""
        rows = [f.row for f in fused]
        model = self._embedder.model_id
        calibration = calibration_for(model)
        read = embedder_reads(model, text)
        qvec = lanes.relevance_vector  # the query as asked: the calibration's
        cosines: dict[int, float] = {}
        if read and qvec is not None:  # reported even when not calibrated (trace, fitting)
            cosines = self._index.vector_scores(lanes.where, qvec, rows)
        counts = lanes.term_counts(terms) if terms else None
        weights = term_weights(terms, counts.per_term, counts.documents) if counts else {}
        # An index that keeps each row's analysed terms (the embedded one) says which query
        # terms a candidate holds: the same answer as analysing its text again, without
        # tokenising and stemming every pooled memory.
        row_terms = getattr(self._index, "row_terms", None)
        known: dict[int, tuple[frozenset[str], int]] = (
            row_terms(lanes.where, terms, rows) if row_terms is not None else {}
        )
        surprise = surprises(*lanes.vector_population(counts), cosines) if cosines else {}
        out: dict[int, Relevance] = {}
        for row in rows:
            record = records[row]
            cosine = cosines.get(row) if embedder_reads(model, record.body) else None
            found = known.get(row)
            if not weights:
                covered = 0.0
            elif found is not None:
                covered = coverage(weights, normal_forms(found[0]))
            else:
                covered = coverage(weights, memory_terms(record.title, record.body, *record.tags))
            gap = surprise.get(row) if cosine is not None else None
            own = evidence(cosine, covered, read, calibration, gap)
            out[row] = Relevance(own, own, cosine, covered, gap)
        return out, {row: found[1] for row, found in known.items()}

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


def _scored(
    fused: list[Fused],
    records: dict[int, Record],
    rag: Rag,
    now: datetime,
    pool_size: int,
    signals: dict[int, Relevance],
    combination: dict[int, Signals] | None = None,
) -> list[Candidate]:
    breakdowns = [score(f.score, records[f.row], rag.boosts, now) for f in fused]
    relevance = _relevance(signals, fused, breakdowns)
    scored = [
        Candidate(
            record=records[f.row],
            ranks=f.ranks,
            fused=f.score,
            breakdown=b,
            relevance=r,
            combination=(combination or {}).get(f.row),
        )
        for f, b, r in zip(fused, breakdowns, relevance, strict=True)
    ]

    def key(c: Candidate) -> tuple[float, int]:
        return rank_key(c.score, c.record.trust)

    # A reranked pool and its tail are ordered apart, pool first.
    return sorted(scored[:pool_size], key=key) + sorted(scored[pool_size:], key=key)


def _relevance(
    signals: dict[int, Relevance], fused: list[Fused], breakdowns: list[ScoreBreakdown]
) -> list[Relevance]:
    # A candidate inherits relevance by ranking close to the query's best evidence.
    own = [signals[f.row] for f in fused]
    scores = relevances([r.evidence for r in own], [b.final for b in breakdowns])
    return [replace(r, score=s) for r, s in zip(own, scores, strict=True)]


def _key(c: Candidate) -> tuple[str, int]:
    return c.record.id, c.record.version


def _trace_entry(c: Candidate) -> dict[str, Any]:
    return {
        "id": c.record.id,
        "version": c.record.version,
        "ranks": c.ranks,
        "fused": c.fused,
        "factors": c.breakdown.as_dict(),
        "relevance": c.relevance.as_dict(),
        **({"combination": c.combination.as_dict()} if c.combination is not None else {}),
        "fate": "delivered",
    }


__all__ = ["Candidate", "MemoryRecall", "RecallRequest", "RecallResult", "score_pool"]
