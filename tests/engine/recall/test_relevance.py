"""Absolute relevance (recall/relevance.py): the signals, the calibration, the floor."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from cairn import Memory
from cairn.adapters.hashing import HashingEmbedder
from cairn.engine.recall.relevance import (
    CALIBRATIONS,
    coverage,
    evidence,
    memory_terms,
    model_reads,
    relevances,
    term_weights,
)
from cairn.text import normal_term
from conftest import FrozenClock

FLOOR = 0.1  # the default rag.minScore


def test_a_word_no_memory_contains_weighs_most_and_one_in_every_memory_least() -> None:
    weights = term_weights(("france", "deploy", "the"), {"deploy": 3, "the": 100}, 100)
    w = {t: weights[normal_term(t)] for t in ("france", "deploy", "the")}
    assert w["france"] > w["deploy"] > w["the"] > 0
    assert math.isclose(w["france"], math.log(1 + 100.5 / 0.5))


def test_words_of_one_stem_are_one_term() -> None:
    weights = term_weights(("tests", "test", "testing"), {"tests": 4}, 10)
    assert len(weights) == 1


def test_coverage_is_the_share_of_query_weight_the_memory_holds() -> None:
    weights = term_weights(("install", "dependencies", "france"), {"install": 1}, 50)
    terms = memory_terms("Always use pnpm to install dependencies")
    share = coverage(weights, terms)
    wanted = (weights[normal_term("install")] + weights[normal_term("dependencies")]) / sum(
        weights.values()
    )
    assert 0 < share < 1 and math.isclose(share, wanted)
    assert coverage(weights, memory_terms("Deploy on Tuesdays")) == 0.0
    assert coverage({}, terms) == 0.0  # a query of no terms ("?!.,;:") covers nothing
    # Stems match as in the keyword lane: "installing" finds "install".
    stemmed = term_weights(("installing",), {}, 50)
    assert coverage(stemmed, terms) == 1.0


@pytest.mark.parametrize(
    ("text", "read"),
    [
        ("how do I install dependencies?", True),
        ("Café crème, s'il vous plaît", True),
        ("可以用 npm install 吗？", True),  # mostly Latin letters
        ("怎么安装项目的依赖？", False),
        ("🐱🐱🐱", False),
        ("?!.,;:", False),
        ("1234567890", False),
        ("Как установить зависимости?", False),
    ],
)
def test_model_reads_mostly_latin_text_only(text: str, read: bool) -> None:
    assert model_reads(text) is read


def test_evidence_grows_with_each_signal_and_none_is_no_evidence() -> None:
    low = evidence(0.1, 0.0, True)
    assert evidence(0.6, 0.0, True) > low
    assert evidence(0.1, 0.8, True) > low
    assert evidence(None, 0.0, True) == 0.0  # no cosine and no shared term
    assert evidence(None, 0.0, False) == 0.0
    assert evidence(None, 0.5, True) > evidence(None, 0.2, True) > 0
    # A query the model does not read is judged on coverage alone, on its own scale.
    assert evidence(None, 0.2, False) != evidence(None, 0.2, True)
    assert 0.0 <= evidence(-1.0, 0.0, True) < evidence(1.0, 1.0, True) <= 1.0


def test_the_fit_puts_the_default_floor_between_unrelated_and_related() -> None:
    # What MiniLM gives an unrelated pair (cosine ~0.1, no shared word) and a paraphrase
    # (cosine ~0.5) or a shared rare word.
    assert evidence(0.1, 0.0, True) < FLOOR
    assert evidence(0.5, 0.0, True) > FLOOR
    assert evidence(0.2, 0.6, True) > FLOOR
    assert CALIBRATIONS.with_vectors.cosine > 0 and CALIBRATIONS.with_vectors.coverage > 0


def test_relevance_is_own_evidence_or_inherited_from_the_best() -> None:
    out = relevances([0.9, 0.02, 0.01], [1.0, 0.8, 0.2])
    assert out[0] == 0.9
    assert math.isclose(out[1], 0.9 * 0.8**2)  # ranks close to the best: inherits
    assert math.isclose(out[2], 0.9 * 0.2**2)  # the tail does not clear the floor
    assert out[2] < FLOOR < out[1]
    assert relevances([], []) == []
    with pytest.raises(ValueError):
        relevances([0.5], [1.0, 2.0])


unit = st.floats(min_value=0.0, max_value=1.0, allow_nan=False)


@given(st.lists(st.tuples(unit, st.floats(min_value=0.0, max_value=5.0)), min_size=1))
def test_nothing_inherits_past_the_best_evidence(pairs: list[tuple[float, float]]) -> None:
    own = [o for o, _ in pairs]
    out = relevances(own, [r for _, r in pairs])
    assert all(o <= v <= max(own) for o, v in zip(own, out, strict=True))
    # So when nothing is evident enough, the query abstains.
    if max(own) < FLOOR:
        assert all(v < FLOOR for v in out)


# -- through recall (the hashing embedder: relevance from coverage alone) --------------------

RULES = [
    "Use pnpm, never npm or yarn, to install packages in web-dashboard.",
    "Open pull requests against develop, not main, in billing-api.",
    "Deploy to production only Tuesday to Thursday, never on Fridays.",
    "在这个仓库里，永远用 pnpm 安装依赖，不要用 npm。",
]


@pytest.fixture
def rules(mem: Memory) -> Memory:
    for body in RULES:
        mem.remember(body, kind="policy")
    return mem


@pytest.mark.parametrize(
    "query", ["?!.,;:", "what is the capital of France", "write a poem about cats", "你好"]
)
def test_a_query_nothing_stored_is_relevant_to_returns_nothing(rules: Memory, query: str) -> None:
    result = rules.recall(query)
    assert result.memories == () and result.preamble == ""
    assert all(t["fate"] == "dropped: min-score" for t in result.trace)


def test_a_relevant_query_keeps_its_memory_with_an_absolute_score(rules: Memory) -> None:
    result = rules.recall("install the packages for web-dashboard")
    assert result.memories[0].record.body == RULES[0]
    top = result.memories[0].relevance
    assert FLOOR <= top.score <= 1 and top.coverage > 0
    assert result.trace[0]["relevance"]["score"] == top.score
    assert rules.recall("用什么安装依赖").memories[0].record.body == RULES[3]


def test_the_floor_filters_and_never_reorders(
    tmp_path: Path, rules: Memory, embedder: HashingEmbedder, clock: FrozenClock
) -> None:
    query = "install the packages for web-dashboard, then deploy to production"
    floored = [c.record.id for c in rules.recall(query).ranked]
    no_floor = {"agents": {"default": {"rag": {"minScore": 0}}}}
    with Memory.open(tmp_path / "memory.db", no_floor, embedder=embedder, clock=clock) as off:
        everything = [c.record.id for c in off.recall(query).ranked]
    assert floored and len(floored) < len(everything)
    assert floored == [i for i in everything if i in floored]  # same order, only filtered


# -- the default path: the real model ---------------------------------------------------------


@pytest.mark.slow
def test_real_model_abstains_on_the_issue_examples_and_keeps_real_matches(
    tmp_path: Path,
) -> None:
    with Memory.open(tmp_path / "real.db", config={}) as real:
        for body in RULES:
            real.remember(body, kind="policy")
        for query in ("?!.,;:", "what is the capital of France", "write a poem about cats"):
            assert real.recall(query).memories == (), query
        assert real.recall("how do I install dependencies?").memories[0].record.body == RULES[0]
        assert (
            real.recall("which branch should the billing-api PR target?").memories[0].record.body
            == (RULES[1])
        )
        assert real.recall("怎么安装项目的依赖？").memories[0].record.body == RULES[3]
        ctx = real.context("write a poem about cats")
        items = (*ctx.resident, *ctx.manifest)
        assert items == ()  # global rules without a selector are about no task in particular
