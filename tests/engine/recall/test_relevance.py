"""Absolute relevance (recall/relevance.py): the signals, the calibration, the floor."""

from __future__ import annotations

import importlib.util
import math
import random
import sys
from pathlib import Path
from typing import get_args

import pytest
from hypothesis import given
from hypothesis import strategies as st

from cairn import Memory
from cairn.adapters import embedding, multilingual_e5, multilingual_use
from cairn.adapters.hashing import HashingEmbedder
from cairn.config import EmbeddingsConfig
from cairn.engine.recall.relevance import (
    calibrated_models,
    calibration_for,
    coverage,
    embedder_reads,
    evidence,
    memory_terms,
    model_reads,
    relevances,
    surprises,
    term_weights,
)
from cairn.text import normal_term
from conftest import FrozenClock

FLOOR = 0.1  # the default rag.minScore
DEFAULT = calibration_for(embedding.MODEL_ID)


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
    low = evidence(0.1, 0.0, True, DEFAULT)
    assert evidence(0.6, 0.0, True, DEFAULT) > low
    assert evidence(0.3, 0.0, True, DEFAULT, 2.0) > evidence(0.3, 0.0, True, DEFAULT, 0.0)
    assert evidence(None, 0.0, True, DEFAULT) == 0.0  # no cosine and no shared term
    assert evidence(None, 0.0, False, DEFAULT) == 0.0
    assert evidence(None, 0.5, True, DEFAULT) > evidence(None, 0.2, True, DEFAULT) > 0
    # A query the model does not read is judged on coverage alone, on its own scale.
    assert evidence(None, 0.2, False, DEFAULT) != evidence(None, 0.2, True, DEFAULT)
    assert 0.0 <= evidence(-1.0, 0.0, True, DEFAULT) < evidence(1.0, 1.0, True, DEFAULT) <= 1.0


def test_the_fit_puts_the_default_floor_between_unrelated_and_related() -> None:
    # What MiniLM gives an unrelated pair (cosine ~0.1, no shared word), the best of a
    # question nothing answers (~0.25) and a paraphrase sharing no word (~0.4).
    assert evidence(0.1, 0.0, True, DEFAULT) < FLOOR
    assert evidence(0.25, 0.0, True, DEFAULT, 0.0) < FLOOR
    assert evidence(0.4, 0.0, True, DEFAULT, 0.0) > FLOOR
    # Standing clear of the store's other memories counts, up to a point.
    assert evidence(0.3, 0.0, True, DEFAULT, 3.0) > evidence(0.3, 0.0, True, DEFAULT, 0.0)
    assert evidence(0.1, 0.0, True, DEFAULT, 3.0) < FLOOR
    # Without a cosine (a memory in a script the model does not read), a shared rare word.
    assert evidence(None, 0.6, True, DEFAULT) > FLOOR
    assert DEFAULT.with_vectors is not None and DEFAULT.with_vectors.cosine > 0


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


# -- one calibration per embedder ------------------------------------------------------------

OFFERED = {
    "minilm-onnx": embedding.MODEL_ID,
    "use-multilingual": multilingual_use.MODEL_ID,
    "e5-small": multilingual_e5.MODEL_ID,
}


def test_every_model_the_config_offers_has_a_cosine_calibration_of_its_own() -> None:
    providers = set(get_args(EmbeddingsConfig.model_fields["provider"].annotation))
    # The hashing embedder's vectors are its words: coverage already measures them.
    assert providers - {"hashing"} == set(OFFERED)
    assert set(OFFERED.values()) <= calibrated_models()
    fitted = {calibration_for(m).with_vectors for m in OFFERED.values()}
    assert None not in fitted and len(fitted) == len(OFFERED)  # each fitted on its own


def test_an_embedder_nothing_was_fitted_for_has_its_cosine_ignored() -> None:
    unknown = calibration_for(HashingEmbedder().model_id)
    assert unknown.with_vectors is None and not unknown.latin_only
    assert evidence(0.99, 0.0, True, unknown) == 0.0  # no shared word: no evidence at all
    assert evidence(0.99, 0.5, True, unknown) == evidence(None, 0.5, True, DEFAULT)


def test_only_the_english_model_is_blind_to_chinese() -> None:
    question = "怎么安装项目的依赖？"
    assert not embedder_reads(embedding.MODEL_ID, question)
    assert embedder_reads(multilingual_use.MODEL_ID, question)
    assert embedder_reads(multilingual_e5.MODEL_ID, question)


# -- the cosine against the store's own -------------------------------------------------------


def _store(n: int, seed: int = 7) -> list[float]:
    rng = random.Random(seed)
    return sorted((rng.gauss(0.1, 0.05) for _ in range(n)), reverse=True)


def test_a_memory_standing_clear_of_the_store_is_a_surprise_the_best_of_noise_is_not() -> None:
    scores = _store(200)
    noise = surprises(scores, 200, {0: scores[0]})[0]
    hit = surprises([0.45, *scores[1:]], 200, {0: 0.45})[0]
    assert abs(noise) < 1.0 < 4.0 < hit


def test_the_same_cosine_is_less_surprising_in_a_larger_store() -> None:
    # The lane returns its top 200 either way; the store behind them differs.
    scores = _store(200)
    small = surprises(scores, 200, {1: 0.3})[1]
    large = surprises(scores, 100_000, {1: 0.3})[1]
    assert large < small


def test_too_few_scores_say_nothing_about_the_store() -> None:
    assert surprises([0.5, 0.2, 0.1, 0.05], 4, {0: 0.5}) == {}
    assert surprises([0.3] * 10, 10, {0: 0.3}) == {}  # no spread at all
    assert surprises([], 0, {}) == {}


# -- the held-out paraphrase set (benchmarks/data/paraphrase.jsonl) ---------------------------

BENCHMARKS = Path(__file__).parents[3] / "benchmarks"


def _paraphrase_module() -> object:
    spec = importlib.util.spec_from_file_location("paraphrase", BENCHMARKS / "paraphrase.py")
    assert spec is not None and spec.loader is not None
    found = importlib.util.module_from_spec(spec)
    sys.modules["paraphrase"] = found
    try:
        spec.loader.exec_module(found)
    finally:
        sys.modules.pop("paraphrase", None)
    return found


def test_the_paraphrase_set_shares_no_content_word_and_has_both_splits_of_everything() -> None:
    module: object = _paraphrase_module()
    items = module.load()  # type: ignore[attr-defined]  # refuses a pair sharing a word
    pairs = [i for i in items if i.kind == "pair"]
    negatives = [i for i in items if i.kind == "negative"]
    assert len(pairs) >= 200 and len(negatives) >= 200
    assert any(i.kind == "cross" and i.memory for i in items)  # English about Chinese
    for domain in ("coding", "chat"):
        for lang in ("en", "zh"):
            for split in ("fit", "report"):
                wanted = {"pair", "negative"}
                found = {
                    i.kind for i in items if (i.domain, i.lang, i.split) == (domain, lang, split)
                }
                assert wanted <= found, (domain, lang, split)
    shared = module.shared_content_words  # type: ignore[attr-defined]
    assert shared("Priya adopted a kitten.", "Who adopted a cat?") == {"adopt"}
    assert shared("小林领养了一只小猫。", "有谁养宠物吗？") == set()
    assert shared("周末前能不能上线？", "上线时间") == {"上线"}


# -- the default path: paraphrases kept ------------------------------------------------------

SIX = [
    "Priya adopted a kitten called Biscuit last spring.",
    "The quarterly planning meeting moved to Thursday at 10am.",
    "Jonas prefers his coffee black, no sugar.",
    "The team offsite will be in Lisbon in May.",
    "Marta is allergic to shellfish.",
    "Our wifi password was changed to the one on the fridge note.",
]


@pytest.mark.slow
def test_real_model_keeps_a_paraphrase_sharing_no_word_and_abstains_on_the_unrelated(
    tmp_path: Path,
) -> None:
    with Memory.open(tmp_path / "six.db", config={}) as real:
        for body in SIX:
            real.remember(body, kind="fact")
        found = real.recall("Does anyone here have a pet?").memories
        assert found and found[0].record.body == SIX[0]
        assert found[0].relevance.surprise is not None
        for query in ("what is the capital of France", "?!.,;:", "how do I reverse a linked list?"):
            assert real.recall(query).memories == (), query
