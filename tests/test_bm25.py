"""BM25, the one formula of every keyword lane: FTS5's, the same in Python and in SQL."""

from __future__ import annotations

import math

import numpy as np

from cairn.bm25 import MIN_IDF, idf, share, sql_idf, sql_share


def test_a_rarer_term_weighs_more_and_a_common_one_never_less_than_the_floor() -> None:
    assert idf(100, 1) > idf(100, 10) > idf(100, 40)
    assert idf(100, 1) == math.log(99.5 / 1.5)
    assert idf(100, 90) == MIN_IDF  # held by most documents: almost nothing, never negative


def test_a_share_saturates_with_counts_and_shrinks_with_length() -> None:
    weight = idf(1000, 5)
    one, two, many = (share(float(tf), 10.0, weight, 10.0) for tf in (1, 2, 50))
    assert one < two < many < weight * 2.2  # bounded by (k1 + 1) * idf
    assert share(1.0, 5.0, weight, 10.0) > one > share(1.0, 40.0, weight, 10.0)
    assert one == weight * 2.2 / (1.0 + 1.2)  # a document of average length: tf (k1+1)/(tf+k1)


def test_arrays_score_like_numbers() -> None:
    tfs = np.array([1.0, 3.0, 7.0])
    lengths = np.array([4.0, 12.0, 30.0])
    found = share(tfs, lengths, 0.7, 11.0)
    expected = [share(float(t), float(n), 0.7, 11.0) for t, n in zip(tfs, lengths, strict=True)]
    assert np.allclose(found, expected)


def test_the_sql_forms_compute_the_same_numbers() -> None:
    names = {"greatest": max, "ln": math.log}
    for documents, holding in ((100, 1), (100, 90), (7, 3)):
        rendered = sql_idf(str(float(documents)), str(float(holding)))
        assert eval(rendered, names) == idf(documents, holding)
    rendered = sql_share("3.0", "12.0", "0.7", "11.0")
    assert math.isclose(eval(rendered, names), share(3.0, 12.0, 0.7, 11.0))
