"""Recall as memory stood at a past time (SPEC §3: bi-temporal, ``as_of``).

The search index holds the memories live now; the versions in force at time T (evicted
or superseded since, included) are searched here instead: BM25 (:mod:`cairn.bm25`, the
lanes' formula, with the statistics of these versions) over their own words, then
cosine for the keyword hits, fused as the live lanes are. The rest of the pipeline (score
with the clock at T, trust filter, min score, dedup, budget, format) is the same.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

import numpy as np

from cairn.bm25 import idf, share
from cairn.engine.recall.fusion import Fused, LaneRanking, lane_ranks, score_fusion, top_fused
from cairn.engine.recall.relevance import (
    Calibrations,
    Relevance,
    coverage,
    embedder_reads,
    evidence,
    memory_terms,
    term_weights,
)
from cairn.model import Record
from cairn.text import index_terms, normal_term


def record_text(record: Record) -> str:
    return f"{record.title}: {record.body}" if record.title else record.body


def in_force(records: Sequence[Record], at: str) -> list[Record]:
    """What recall would have considered at ``at``: not yet evicted, with a body."""
    return [r for r in records if r.body and (r.evicted_at is None or r.evicted_at > at)]


def keyword_scores(terms: Sequence[str], texts: Sequence[str]) -> dict[int, float]:
    """BM25 of each text that shares a term with the query, by position."""
    wanted = list(dict.fromkeys(normal_term(t) for t in terms))
    if not wanted or not texts:
        return {}
    docs = [Counter(normal_term(t) for t in index_terms(text)) for text in texts]
    lengths = [sum(d.values()) for d in docs]
    average = (sum(lengths) / len(lengths)) or 1.0
    total = len(docs)
    df = {t: sum(1 for d in docs if t in d) for t in wanted}
    out: dict[int, float] = {}
    for i, (doc, length) in enumerate(zip(docs, lengths, strict=True)):
        score = 0.0
        for term in wanted:
            tf = doc.get(term, 0)
            if tf:
                score += share(float(tf), float(length), idf(total, df[term]), average)
        if score > 0:
            out[i] = score
    return out


def fuse_history(
    keyword: dict[int, float],
    cosine: dict[int, float],
    *,
    fts_weight: float,
    vector_weight: float,
    pool: int,
) -> list[Fused]:
    kw_rows = sorted(keyword, key=lambda i: (-keyword[i], i))
    vec_rows = sorted(cosine, key=lambda i: (-cosine[i], i))
    lanes = [
        LaneRanking("keyword", fts_weight, tuple(kw_rows), tuple(keyword[i] for i in kw_rows)),
        LaneRanking("vector", vector_weight, tuple(vec_rows), tuple(cosine[i] for i in vec_rows)),
    ]
    scores = score_fusion(lanes)
    return top_fused(scores, lane_ranks(lanes, []), pool) if scores else []


def cosines(query: np.ndarray, vectors: np.ndarray, rows: Sequence[int]) -> dict[int, float]:
    return {row: float(np.dot(query, vec)) for row, vec in zip(rows, vectors, strict=True)}


def relevance_at(
    query: str,
    terms: Sequence[str],
    records: Sequence[Record],
    cosine: dict[int, float],
    calibration: Calibrations,
) -> dict[int, Relevance]:
    """Each candidate's own evidence of relevance, as the live recall computes it, with
    the term statistics of what was in force at the time (not of today's index)."""
    held = [memory_terms(r.title, r.body, *r.tags) for r in records]
    counts = {t: sum(normal_term(t) in h for h in held) for t in terms}
    weights = term_weights(terms, counts, len(records)) if terms else {}
    model = calibration.embedder
    read = embedder_reads(model, query)
    usable = calibration.with_vectors is not None
    out: dict[int, Relevance] = {}
    for row, (record, terms_held) in enumerate(zip(records, held, strict=True)):
        raw = cosine.get(row) if usable and embedder_reads(model, record.body) else None
        covered = coverage(weights, terms_held)
        own = evidence(raw, covered, read, calibration)
        out[row] = Relevance(own, own, raw, covered)
    return out
