"""BM25, the keyword lanes' one formula (FTS5's: k1 = 1.2, b = 0.75).

``idf = ln((N - n + 0.5) / (n + 0.5))`` floored at 1e-6 (a term in most documents weighs
almost nothing, never less than nothing), and each term's share of a document with ``tf``
occurrences and ``length`` tokens (title, body and tags) is
``idf * (k1 + 1) * tf / (tf + k1 * (1 - b) + k1 * b * length / avgdl)``.

Every keyword lane scores with it: the in-process index over numpy postings (arrays of
``tf`` and ``length``), PostgreSQL in SQL (:func:`sql_idf`, :func:`sql_share` render the
same formula), and recall as of a past time over the versions then in force. ``N``, ``n``
and ``avgdl`` are the statistics of whatever set is searched (one tenant and agent for the
lanes): this module holds no state.
"""

from __future__ import annotations

import math
from typing import TypeVar

import numpy as np

K1 = 1.2
B = 0.75
MIN_IDF = 1e-6

Counts = TypeVar("Counts", float, np.ndarray)


def idf(documents: int, holding: int) -> float:
    """The weight of a term held by ``holding`` of ``documents`` documents."""
    return max(math.log((documents - holding + 0.5) / (holding + 0.5)), MIN_IDF)


def share(tf: Counts, length: Counts, weight: float, avgdl: float) -> Counts:
    """One term's BM25 contribution for documents with these counts and lengths (numbers
    or arrays of them); ``weight`` is the term's :func:`idf`."""
    norm = (K1 * (1.0 - B)) + (K1 * B / avgdl) * length
    result: Counts = weight * (K1 + 1.0) * tf / (tf + norm)
    return result


def sql_idf(documents: str, holding: str) -> str:
    """:func:`idf` as an SQL expression over these two columns (PostgreSQL's ``ln``)."""
    return f"greatest(ln(({documents} - {holding} + 0.5) / ({holding} + 0.5)), {MIN_IDF})"


def sql_share(tf: str, length: str, weight: str, avgdl: str) -> str:
    """:func:`share` as an SQL expression over these columns."""
    return f"{weight} * {K1 + 1.0} * {tf} / ({tf} + {K1} * ({1.0 - B} + {B} * {length} / {avgdl}))"
