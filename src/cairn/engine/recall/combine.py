"""A learned combination of the signals recall already has, re-scoring the fused pool.

Fusion (``fusion.py``), episode context (``episodes.py``) and the date prior
(``timeframe.py``) give each candidate one score by hand-set weights. Over the pool of
fetched candidates (``scorePool``, 50) this stage adds a linear combination of signals
that score leaves out or weighs otherwise, each on a fixed scale:

* ``coverage``: the share of the query's term weight the memory holds
  (``relevance.coverage``), squared, so a memory holding every rare word of the query is
  lifted more than BM25's saturation gives it;
* ``length``: ``ln(1 + distinct index terms)`` (words, CJK bigrams, identifiers, so a
  Chinese memory is not counted shorter than its English twin); a short reply
  ("Congrats on winning!") shares the question's words and meaning and rarely holds the
  answer, and BM25's length normalisation favours it;
* ``neighbour_1`` / ``neighbour_2``: the best plain fused score (lanes only) among the
  candidates one / two positions away in the same episode;
* ``time_cue``: 1 when the query asks when ("When did...", "What year...", "How long...")
  and the memory mentions a time ("yesterday", "last week", a month, a year);
* ``vector_rank``: ``10 / (10 + rank)`` in the vector lane (0 outside it), the order of
  meaning apart from the cosine's scale.

``combined = fused + Σ w_i · signal_i``, divided by the pool's best so the top is 1 again.
There are two sets of weights, one for questions ("When did...?", "what does X do") and
one for everything else (keywords, identifiers, a statement that restates a memory): a
question's answer is often the reply beside the turn that matches it, so neighbours and
length count for questions, while a statement names the memory itself, and there the
fitted neighbour weights are slightly negative. The weights are fitted
(``benchmarks/recall_fit.py``) by a listwise loss on LoCoMo questions and the query-shapes
set, one half of the conversations and rules at a time, and the shipped weights are the
mean of the two halves' fits. Three more signals were
measured and left out, as leaving each out changed nothing cross-validated: the keyword
score over the lane's best, the linear coverage beside its square, and the date
closeness (the date prior of ``timeframe.py`` already carries it).
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache

from cairn.engine.recall.fusion import Fused
from cairn.engine.recall.relevance import Relevance, memory_terms
from cairn.model import Record
from cairn.storage.ports import EpisodePlace


@dataclass(frozen=True, slots=True)
class Weights:
    coverage_squared: float
    length: float
    neighbour_1: float
    neighbour_2: float
    time_cue: float
    vector_rank: float


# Fitted by ``benchmarks/recall_fit.py``: the mean of the fits on each half (LoCoMo
# conversations 1-5 with odd-numbered coding rules, and the rest), relative to the fused
# score's weight of 1. No statement asks when, so time_cue has no weight there.
QUESTION_WEIGHTS = Weights(
    coverage_squared=0.184,
    length=0.225,
    neighbour_1=0.168,
    neighbour_2=0.225,
    time_cue=0.256,
    vector_rank=0.144,
)
STATEMENT_WEIGHTS = Weights(
    coverage_squared=0.378,
    length=0.076,
    neighbour_1=-0.057,
    neighbour_2=-0.045,
    time_cue=0.0,
    vector_rank=0.161,
)
RANK_SCALE = 10.0  # vector_rank = RANK_SCALE / (RANK_SCALE + rank)


@dataclass(frozen=True, slots=True)
class Signals:
    fused: float  # the fused score, normalised to the pool's best
    coverage: float = 0.0
    length: float = 0.0
    neighbour_1: float = 0.0
    neighbour_2: float = 0.0
    time_cue: float = 0.0
    vector_rank: float = 0.0

    def as_dict(self) -> dict[str, float]:
        return {name: getattr(self, name) for name in self.__slots__}


_WHEN = re.compile(r"^\s*(when|what (year|month|date|day)|how long)\b", re.IGNORECASE)
_TIME = re.compile(
    r"\b(yesterday|today|tonight|tomorrow|last|next|ago|week|weekend|month|year|monday"
    r"|tuesday|wednesday|thursday|friday|saturday|sunday|january|february|march|april"
    r"|may|june|july|august|september|october|november|december|\d{4}|since|recently"
    r"|lately)\b",
    re.IGNORECASE,
)


_QUESTION = re.compile(
    r"\?\s*$|^\s*(who|whom|whose|what|when|where|why|how|which|did|does|do|is|are|was"
    r"|were|can|could|would|will|has|have|had|should)\b",
    re.IGNORECASE,
)


def is_question(query: str) -> bool:
    """A question (ends in "?" or opens with an English question word), as opposed to
    keywords, an identifier or a statement. A Chinese question (ending in the full-width
    "？") counts as a statement: the question weights were fitted on English
    conversations, and on the bilingual set they lose (USE recall@10 0.908 -> 0.894)."""
    return _QUESTION.search(query) is not None


def weights_for(query: str) -> Weights:
    return QUESTION_WEIGHTS if is_question(query) else STATEMENT_WEIGHTS


def asks_when(query: str) -> bool:
    return _WHEN.search(query) is not None


@lru_cache(maxsize=8192)
def mentions_time(body: str) -> bool:
    return _TIME.search(body) is not None


def length_signal(record: Record, distinct_terms: int | None = None) -> float:
    """``distinct_terms``: the memory's distinct index terms when the index knows them
    (they are analysed at ingest); otherwise its text is analysed here."""
    if distinct_terms is None:
        distinct_terms = len(memory_terms(record.title, record.body, *record.tags))
    return math.log1p(distinct_terms)


def vector_rank_signal(rank: int | None) -> float:
    return 0.0 if rank is None else RANK_SCALE / (RANK_SCALE + rank)


def neighbour_signals(
    rows: Sequence[int],
    base: Mapping[int, float],
    places: Mapping[int, EpisodePlace],
) -> dict[int, tuple[float, float]]:
    """For each row, the best ``base`` score among candidates one and two positions away
    in its episode; (0, 0) for a row without a place."""
    by_place: dict[tuple[str, int], float] = {}
    for row, score in base.items():
        place = places.get(row)
        if place is not None and place.episode_id is not None and place.position is not None:
            by_place[(place.episode_id, place.position)] = score
    out: dict[int, tuple[float, float]] = {}
    for row in rows:
        place = places.get(row)
        if place is None or place.episode_id is None or place.position is None:
            out[row] = (0.0, 0.0)
            continue
        near = []
        for distance in (1, 2):
            scores = [
                by_place.get((place.episode_id, place.position + step), 0.0)
                for step in (-distance, distance)
            ]
            near.append(max(0.0, *scores))
        out[row] = (near[0], near[1])
    return out


def combine(signals: Sequence[Signals], weights: Weights) -> list[float]:
    """Each candidate's combined score, in the order given, divided by the best (so the
    top is 1; all 0 when nothing scores above 0)."""
    raw = [
        s.fused
        + weights.coverage_squared * s.coverage * s.coverage
        + weights.length * s.length
        + weights.neighbour_1 * s.neighbour_1
        + weights.neighbour_2 * s.neighbour_2
        + weights.time_cue * s.time_cue
        + weights.vector_rank * s.vector_rank
        for s in signals
    ]
    top = max(raw, default=0.0)
    return [max(value, 0.0) / top if top > 0 else 0.0 for value in raw]


@dataclass(frozen=True, slots=True)
class PoolContext:
    """What fusion knows of the candidates that the combination reads."""

    base: Mapping[int, float]  # plain fused score (lanes only) of every candidate
    places: Mapping[int, EpisodePlace]


def pool_signals(
    query: str,
    fused: Sequence[Fused],
    context: PoolContext,
    records: Mapping[int, Record],
    evidence: Mapping[int, Relevance],
    distinct_terms: Mapping[int, int] | None = None,
) -> list[Signals]:
    rows = [f.row for f in fused]
    known = distinct_terms or {}
    near = neighbour_signals(rows, context.base, context.places)
    when = asks_when(query)
    out = []
    for f in fused:
        record = records[f.row]
        body = record.body
        found = evidence.get(f.row)
        out.append(
            Signals(
                fused=f.score,
                coverage=found.coverage if found is not None else 0.0,
                length=length_signal(record, known.get(f.row)),
                neighbour_1=near[f.row][0],
                neighbour_2=near[f.row][1],
                time_cue=1.0 if when and mentions_time(body) else 0.0,
                vector_rank=vector_rank_signal(f.ranks.get("vector")),
            )
        )
    return out


def rescore(
    query: str,
    fused: Sequence[Fused],
    context: PoolContext,
    records: Mapping[int, Record],
    evidence: Mapping[int, Relevance],
    weights: Weights | None = None,
    *,
    distinct_terms: Mapping[int, int] | None = None,
) -> tuple[list[Fused], dict[int, Signals]]:
    """The pool re-scored by the combination (by default the weights for the query's
    shape), best first (ties keep the fused order), and each row's signals (for the
    trace). ``distinct_terms``: each row's distinct index terms, where the index knows."""
    signals = pool_signals(query, fused, context, records, evidence, distinct_terms)
    scores = combine(signals, weights if weights is not None else weights_for(query))
    order = sorted(range(len(fused)), key=lambda i: -scores[i])
    rescored = [Fused(row=fused[i].row, score=scores[i], ranks=fused[i].ranks) for i in order]
    return rescored, {f.row: s for f, s in zip(fused, signals, strict=True)}
