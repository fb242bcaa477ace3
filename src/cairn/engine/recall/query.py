"""Query formulation: the terms of the keyword lane (words, CJK bigrams, identifiers).

User text is never query syntax: terms are looked up as they are, so
``"AND OR NEAR( * ^ -`` is searched as words (or, when nothing is left, not at all).
"""

from __future__ import annotations

from dataclasses import dataclass

from cairn.text import index_terms

# Common English function words: they match everything and rank nothing.
STOP_WORDS = frozenset(
    [
        "a",
        "about",
        "above",
        "after",
        "again",
        "against",
        "all",
        "am",
        "an",
        "and",
        "any",
        "are",
        "aren't",
        "as",
        "at",
        "be",
        "because",
        "been",
        "before",
        "being",
        "below",
        "between",
        "both",
        "but",
        "by",
        "can",
        "cannot",
        "could",
        "did",
        "didn't",
        "do",
        "does",
        "doesn't",
        "doing",
        "don't",
        "down",
        "during",
        "each",
        "few",
        "for",
        "from",
        "further",
        "had",
        "has",
        "have",
        "having",
        "he",
        "her",
        "here",
        "hers",
        "herself",
        "him",
        "himself",
        "his",
        "how",
        "i",
        "if",
        "in",
        "into",
        "is",
        "isn't",
        "it",
        "it's",
        "its",
        "itself",
        "just",
        "let",
        "me",
        "more",
        "most",
        "my",
        "myself",
        "no",
        "nor",
        "not",
        "now",
        "of",
        "off",
        "on",
        "once",
        "only",
        "or",
        "other",
        "ought",
        "our",
        "ours",
        "ourselves",
        "out",
        "over",
        "own",
        "same",
        "she",
        "should",
        "so",
        "some",
        "such",
        "than",
        "that",
        "the",
        "their",
        "theirs",
        "them",
        "themselves",
        "then",
        "there",
        "these",
        "they",
        "this",
        "those",
        "through",
        "to",
        "too",
        "under",
        "until",
        "up",
        "very",
        "was",
        "wasn't",
        "we",
        "were",
        "what",
        "when",
        "where",
        "which",
        "while",
        "who",
        "whom",
        "why",
        "will",
        "with",
        "would",
        "you",
        "your",
        "yours",
        "yourself",
        "yourselves",
        "s",
        "t",
        "d",
        "ll",
        "m",
        "re",
        "ve",
    ]
)
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
