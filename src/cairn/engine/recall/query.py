"""Query formulation: the terms of the keyword lane (words, CJK bigrams, identifiers).

User text is never query syntax: terms are looked up as they are, so
``"AND OR NEAR( * ^ -`` is searched as words (or, when nothing is left, not at all).
"""

from __future__ import annotations

from dataclasses import dataclass

from cairn.text import STOP_WORDS, index_terms

MAX_TERMS = 32


@dataclass(frozen=True, slots=True)
class FormulatedQuery:
    text: str
    terms: tuple[str, ...]  # keyword lane: index terms of the text, stop words dropped


def formulate(text: str) -> FormulatedQuery:
    terms = [t for t in index_terms(text) if t not in STOP_WORDS]
    return FormulatedQuery(text=text, terms=tuple(dict.fromkeys(terms))[:MAX_TERMS])


def prune_common_terms(
    terms: tuple[str, ...],
    counts: dict[str, int],
    total: int,
    *,
    max_share: float,
    keep_at_least: int,
) -> tuple[str, ...]:
    """Drop terms found in more than ``max_share`` of ``total`` documents.

    The rarest ``keep_at_least`` terms always stay, so a query of only common words
    still searches something. Order of the remaining terms is kept.
    """
    if not terms or total <= 0:
        return terms
    by_rarity = sorted(terms, key=lambda t: counts.get(t, 0))
    keep = set(by_rarity[:keep_at_least])
    keep.update(t for t in terms if counts.get(t, 0) <= max_share * total)
    return tuple(t for t in terms if t in keep)
