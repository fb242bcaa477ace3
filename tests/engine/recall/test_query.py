from __future__ import annotations

from cairn.engine.recall.query import formulate


def test_stop_words_dropped_and_terms_lowercase_unique() -> None:
    q = formulate("What is the Package manager for THE package?")
    assert q.terms == ("package", "manager")


def test_query_syntax_becomes_plain_terms() -> None:
    q = formulate('"AND OR NEAR( * ^ - col:val')
    # "and" and "or" are stop words; "col:val" is also kept whole, as an identifier.
    assert q.terms == ("near", "col", "val", "col:val")
    assert all('"' not in t and "*" not in t for t in q.terms)


def test_cjk_bigrams_camel_humps_and_whole_identifiers() -> None:
    q = formulate("以后都用pnpm安装 user_id getUserName")
    assert {"以后", "后都", "都用", "安装", "pnpm"} <= set(q.terms)
    assert {"user", "id", "user_id"} <= set(q.terms)
    assert {"getusername", "get", "user", "name"} <= set(q.terms)


def test_cjk_and_identifier_parts_are_found(mem) -> None:  # type: ignore[no-untyped-def]
    mem.store("以后都用pnpm安装依赖")
    mem.store("The handler calls getUserName before src/auth/session_store.py loads")
    mem.store("unrelated note about lunch")
    assert mem.recall("都用什么安装").memories[0].record.body.startswith("以后")
    for query in ("UserName", "session_store", "session_store.py"):
        assert "getUserName" in mem.recall(query).memories[0].record.body, query


def test_prune_common_terms_keeps_rare_and_at_least_n() -> None:
    from cairn.engine.recall.query import prune_common_terms

    counts = {"the": 900, "deploy": 40, "kestrel": 2, "server": 300}
    terms = ("the", "deploy", "kestrel", "server")
    assert prune_common_terms(terms, counts, 1000, max_share=0.05, keep_at_least=2) == (
        "deploy",
        "kestrel",
    )
    # Only common words: the rarest ones still search.
    assert prune_common_terms(("the", "server"), counts, 1000, max_share=0.05, keep_at_least=1) == (
        "server",
    )
    assert prune_common_terms(terms, counts, 0, max_share=0.05, keep_at_least=2) == terms
