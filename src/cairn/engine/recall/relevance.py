"""Absolute relevance of each candidate to the query: the score ``minScore`` is a floor on.

The ranking score orders the candidates of one query but means nothing across queries: the
fused score is normalised to the query's best hit (BM25 has no fixed scale), so the best
hit of "what is the capital of France" scores as high as that of a question the store
really answers. Relevance is built from signals with a fixed scale instead.

**Evidence** of one memory, from three signals:

* ``cosine``: the raw cosine of the query vector to the memory's vector, used only when the
  embedder can read both texts (see :func:`model_reads`) and has a calibration;
* ``surprise``: how far that cosine stands above what the store's own similarities make
  likely for the best of its N memories (:func:`surprises`: the vector lane's scores are
  the top of the query's similarity distribution over the store, fitted as order
  statistics, with the best-of-N term ``E[z] ≈ sqrt(2 ln N)``);
* ``coverage``: the share of the query's term weight that the memory contains, in [0, 1].
  A term weighs ``ln(1 + (N - n + 0.5) / (n + 0.5))`` over the N live memories, n of which
  contain it (always positive, unlike BM25's IDF): a query word no memory contains keeps
  its full weight, so a question about something never stored has low coverage
  everywhere, and a word in every memory weighs almost nothing.

mapped through a logistic, ``evidence = σ(intercept + a·cosine + b·coverage + c·surprise)``.
**The calibration belongs to the embedder** (``calibrations.json``, one entry per model id:
MiniLM, use-multilingual, e5-small): a model's cosines have their own scale. The cosine
calibration (``with_vectors``) is fitted by ``benchmarks/abstention.py --fit``, a search of
the floor's frontier on the fit half of the coding-rules, paraphrase and LoCoMo stores
(``benchmarks/abstention_search.py``): the most positives kept while every set of
questions nothing answers abstains at least as often as before. A memory without a usable
cosine is judged on coverage alone (``keyword_only``; ``unread_query`` for a query the
model does not read), on the scale of the query's script: Chinese is indexed as
overlapping bigrams, so its coverage runs lower. An embedder the file does not hold (the
hashing embedder of tests, one a caller builds) has its cosines ignored. A memory with
neither a usable cosine nor a shared term has no evidence at all (0), not a base rate.

**Relevance** of a candidate is its own evidence, or what it inherits by ranking close to
the query's best evidence: ``max(evidence_i, best_evidence · share_i²)``, where ``share_i``
is its ranking score over the best ranking score of the query. A reply that shares no
word with the question but sits next to the turn that does ranks close to it (episode
context) and stays; the unrelated tail of a query does not. When nothing is evident
(every evidence below the floor), nothing inherits anything, so the query abstains.

Relevance only filters; it never reorders the ranking. MiniLM is an English model: its
cosine between texts it cannot read (Chinese, emoji, other scripts) is high whatever they
say, so it counts only when the model reads both texts (``latin_only``).
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from statistics import NormalDist
from typing import Any

from cairn.adapters.embedding import MODEL_ID as DEFAULT_MODEL
from cairn.text import index_terms, normal_term


@dataclass(frozen=True, slots=True)
class Calibration:
    """``evidence = 1 / (1 + exp(-(intercept + cosine·c + coverage·v + surprise·s)))``."""

    intercept: float
    cosine: float
    coverage: float
    surprise: float = 0.0


@dataclass(frozen=True, slots=True)
class Calibrations:
    """One embedder's calibration (``calibrations.json``)."""

    embedder: str  # the model id whose cosines with_vectors was fitted on
    with_vectors: Calibration | None  # None: its cosine is not used (coverage alone)
    keyword_only: Calibration  # a query the model reads, no usable cosine
    unread_query: Calibration  # a query the model does not read (Chinese, emoji...)
    latin_only: bool  # the model reads Latin-script text only (see model_reads)


CALIBRATION_FILE = "calibrations.json"


@lru_cache(maxsize=1)
def _fitted() -> dict[str, Calibrations]:
    raw = json.loads(
        resources.files("cairn.engine.recall").joinpath(CALIBRATION_FILE).read_text("utf-8")
    )
    return {model: _calibrations(model, entry) for model, entry in raw["embedders"].items()}


def _calibrations(model: str, entry: dict[str, Any]) -> Calibrations:
    def one(name: str) -> Calibration:
        return Calibration(**entry[name])

    vectors = entry["with_vectors"]
    return Calibrations(
        embedder=model,
        with_vectors=Calibration(**vectors) if vectors is not None else None,
        keyword_only=one("keyword_only"),
        unread_query=one("unread_query"),
        latin_only=bool(entry["latin_only"]),
    )


def calibrated_models() -> frozenset[str]:
    """The model ids ``calibrations.json`` holds a calibration for."""
    return frozenset(_fitted())


def calibration_for(model_id: str) -> Calibrations:
    """The calibration of this embedder; an embedder the file does not know (one a caller
    built) gets the default's keyword calibrations and no cosine: its cosines have a scale
    nothing was fitted on."""
    fitted = _fitted()
    if model_id in fitted:
        return fitted[model_id]
    base = fitted[DEFAULT_MODEL]
    return Calibrations(
        embedder=model_id,
        with_vectors=None,
        keyword_only=base.keyword_only,
        unread_query=base.unread_query,
        latin_only=False,
    )


SHARE_EXPONENT = 2.0


@dataclass(frozen=True, slots=True)
class Relevance:
    score: float  # in [0, 1]: what minScore is a floor on
    evidence: float  # the memory's own evidence, in [0, 1]
    cosine: float | None  # None when not used (lane off, or a text the model cannot read)
    coverage: float
    surprise: float | None = None  # the cosine against the store's own (see surprises)

    def as_dict(self) -> dict[str, float | None]:
        return {
            "score": self.score,
            "evidence": self.evidence,
            "cosine": self.cosine,
            "coverage": self.coverage,
            "surprise": self.surprise,
        }


_LETTER = re.compile(r"[^\W\d_]")
_LATIN = re.compile(r"[A-Za-z\u00c0-\u024f]")  # Basic Latin to Latin Extended-B


def model_reads(text: str) -> bool:
    """Whether the default (English) embedder reads this text: most of its letters are
    Latin. Digits, punctuation and emoji are not letters; a text of none reads as no."""
    if text.isascii():
        return _LATIN.search(text) is not None
    latin = len(_LATIN.findall(text))
    return latin > 0 and 2 * latin >= len(_LETTER.findall(text))


def embedder_reads(model_id: str, text: str) -> bool:
    """Whether this embedder's vector of ``text`` means anything: an English-only model's
    vector of Chinese text is close to everything (see :func:`model_reads`)."""
    return not calibration_for(model_id).latin_only or model_reads(text)


def term_weights(
    terms: Sequence[str], document_counts: Mapping[str, int], total: int
) -> dict[str, float]:
    """The weight of each distinct query term, keyed by its normal form (one per stem, as
    the keyword index keys it)."""
    total = max(total, 0)
    weights: dict[str, float] = {}
    for term in terms:
        n = min(max(document_counts.get(term, 0), 0), total)
        weight = math.log(1.0 + (total - n + 0.5) / (n + 0.5))
        key = normal_term(term)
        weights[key] = max(weights.get(key, 0.0), weight)
    return weights


def memory_terms(*texts: str | None) -> frozenset[str]:
    """The normal forms of a memory's indexed terms (title, body, tags), as the keyword
    lane sees them. Recall reads them from the embedded index's postings where it can
    (``row_terms``); this analyses the text, for other indexes. Short texts are memoised
    (recall asks again for the same memories); long ones are not kept."""
    if sum(len(t) for t in texts if t) <= MEMOISED_CHARS:
        return _memoised_terms(texts)
    return _terms(texts)


MEMOISED_CHARS = 2000  # 8192 memoised texts hold at most ~16 M characters


def _terms(texts: tuple[str | None, ...]) -> frozenset[str]:
    words = {t for text in texts if text for t in index_terms(text)}
    return frozenset(map(normal_term, words))


_memoised_terms = lru_cache(maxsize=8192)(_terms)


def normal_forms(terms: frozenset[str]) -> frozenset[str]:
    """Index terms in the form :func:`coverage` compares (one per stem)."""
    return frozenset(map(normal_term, terms))


def coverage(weights: Mapping[str, float], terms: frozenset[str]) -> float:
    """Share of the query's term weight found in the memory; 0 for a query with no terms."""
    total = sum(weights.values())
    if total <= 0:
        return 0.0
    return sum(w for key, w in weights.items() if key in terms) / total


def _logistic(z: float) -> float:
    return 1.0 / (1.0 + math.exp(-z)) if z > -700 else 0.0


def evidence(
    cosine: float | None,
    covered: float,
    query_read: bool,
    calibrations: Calibrations,
    surprise: float | None = None,
) -> float:
    """One memory's own evidence of relevance. ``cosine`` None: no usable cosine (the
    vector lane off, no vector, a text the model does not read, or an embedder whose
    cosines are not calibrated); ``query_read``: whether the model reads the query;
    ``surprise``: see :func:`surprises` (None, when not known, counts as 0)."""
    vectors = calibrations.with_vectors
    if cosine is not None and query_read and vectors is not None:
        z = vectors.intercept + vectors.cosine * cosine + vectors.coverage * covered
        return _logistic(z + vectors.surprise * (surprise or 0.0))
    if covered <= 0.0:
        return 0.0
    cal = calibrations.keyword_only if query_read else calibrations.unread_query
    return _logistic(cal.intercept + cal.coverage * covered)


MIN_SPREAD_POINTS = 4  # lane scores below the best needed to estimate the store's spread
SURPRISE_CAP = 8.0


@lru_cache(maxsize=256)
def _normal_scores(population: int, count: int) -> tuple[float, ...]:
    """The expected z-scores of the ``count`` largest of ``population`` normal draws
    (Blom's approximation): for the best of N about ``sqrt(2 ln N)`` for large N."""
    unit = NormalDist()
    return tuple(unit.inv_cdf(1.0 - (j - 0.375) / (population + 0.25)) for j in range(1, count + 1))


def surprises(
    lane_scores: Sequence[float], population: int, cosines: Mapping[int, float]
) -> dict[int, float]:
    """How far each cosine stands above what the store makes likely for the best of its N
    memories: ``(cosine - mu) / sigma - E[z of the best of N]``.

    ``mu`` and ``sigma`` describe the query's cosines over the whole store; the vector lane
    returns only the top of that distribution, so they are fitted to its order statistics
    (the lane's scores below the best, against the normal scores expected at their ranks
    among ``population`` memories). A memory that really answers stands clear of what the
    store's other memories make likely; the best hit of a question nothing answers is
    about where the best of N unrelated memories falls, and it falls higher in a larger
    store (the ``E[z]`` term). Empty when the lane gave too few scores to tell."""
    ordered = sorted(lane_scores, reverse=True)
    count = len(ordered)
    if count - 1 < MIN_SPREAD_POINTS:
        return {}
    expected = _normal_scores(max(population, count), count)
    xs, ys = expected[1:], ordered[1:]
    mean_x = math.fsum(xs) / len(xs)
    mean_y = math.fsum(ys) / len(ys)
    var_x = math.fsum((x - mean_x) ** 2 for x in xs)
    cov = math.fsum((x - mean_x) * (y - mean_y) for x, y in zip(xs, ys, strict=True))
    if var_x <= 0 or cov <= 1e-9:
        return {}
    sigma = cov / var_x
    mu = mean_y - sigma * mean_x
    best = expected[0]
    return {
        row: max(-SURPRISE_CAP, min(SURPRISE_CAP, (c - mu) / sigma - best))
        for row, c in cosines.items()
    }


def relevances(
    evidences: Sequence[float],
    ranking_scores: Sequence[float],
    exponent: float = SHARE_EXPONENT,
) -> list[float]:
    """``max(evidence_i, best_evidence · (score_i / best_score) ** exponent)`` per candidate,
    in the order given."""
    if len(evidences) != len(ranking_scores):
        raise ValueError("one ranking score per evidence")
    if not evidences:
        return []
    best = max(evidences)
    top = max(ranking_scores)
    out = []
    for own, ranking in zip(evidences, ranking_scores, strict=True):
        share = max(ranking, 0.0) / top if top > 0 else 0.0
        out.append(max(own, best * share**exponent))
    return out
