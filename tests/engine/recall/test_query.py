from __future__ import annotations

from cairn.engine.recall.query import formulate


def test_stop_words_dropped_and_terms_lowercase_unique() -> None:
    q = formulate("What is the Package manager for THE package?")
    assert q.terms == ("package", "manager")


def test_fts_syntax_becomes_plain_words() -> None:
    q = formulate('"AND OR NEAR( * ^ - col:val')
    assert q.terms == ("near", "col", "val")  # "and" and "or" are stop words
    assert all('"' not in t and "*" not in t for t in q.terms)


def test_cjk_trigrams_and_identifiers() -> None:
    q = formulate("以后都用pnpm安装 user_id getUserName")
    assert "以后都" in q.grams and "后都用" in q.grams
    assert "user_id" in q.grams and "getUserName" in q.grams
    assert "pnpm" in q.terms
