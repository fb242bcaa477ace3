"""The learned half of the statement reader: shipped in the package, deterministic, and
reading what the cue grammar cannot enumerate."""

from __future__ import annotations

import numpy as np
import pytest

from cairn.engine.statements.learned import features, fold, model, spell
from cairn.engine.statements.reader import read_statement


def test_the_package_ships_a_model_with_every_head() -> None:
    trained = model()
    assert trained is not None
    assert set(trained.acts) == {
        "rule", "preference", "fact", "one-off", "correction", "forget", "neutral",
    }  # fmt: skip
    assert trained.scopes == ("project", "global")
    reading = trained.read("以后提交之前都要跑 golangci-lint", ("sig=rule",))
    assert 0.0 <= reading.act_probability <= 1.0 and reading.act in trained.acts


def test_features_are_the_same_for_the_same_text_and_differ_with_the_cues() -> None:
    a = features("Always run ruff before committing")
    assert np.array_equal(a, features("Always run ruff before committing"))
    assert len(np.setdiff1d(features("Always run ruff before committing", ("sig=rule",)), a)) == 1


def test_traditional_characters_fold_one_for_one() -> None:
    text = "這個專案 commit 之前都要先跑 lint 喔；以後不要直接推到 main"
    folded = fold(text)
    assert folded == "这个专案 commit 之前都要先跑 lint 喔；以后不要直接推到 main"
    assert len(folded) == len(text)


@pytest.mark.parametrize(
    ("typed", "read"),
    [
        ("alwasy run ruff befor commiting", "always run ruff before committing"),
        ("nevr push to main", "never push to main"),
        ("i perfer tabs", "i prefer tabs"),
        ("forgt the mock rule", "forget the mock rule"),
        ("Actualy, use pnpm", "Actually, use pnpm"),
        # Real words stay what they are.
        ("I forgot the test, very good, ever", "I forgot the test, very good, ever"),
    ],
)
def test_slips_of_cue_words_are_put_right_and_real_words_stay(typed: str, read: str) -> None:
    assert spell(typed) == read


@pytest.mark.parametrize(
    ("text", "signal", "kind"),
    [
        ("alwasy run ruff befor commiting", "rule", "policy"),
        ("以後不要直接推到 main", "rule", "policy"),
        ("我比較喜歡用 tab 縮排", "rule", "preference"),
        ("這個儲存庫的測試用 vitest", "rule", "fact"),
        ("forgt the staging rule", "forget", None),
        ("fix the login bug", "neutral", None),
    ],
)
def test_the_reader_reads_slips_and_traditional_characters(
    text: str, signal: str, kind: str | None
) -> None:
    reading = read_statement(text)
    assert (reading.signal, reading.memory_kind) == (signal, kind)


def test_the_statement_keeps_the_users_own_characters() -> None:
    reading = read_statement("忘掉關於 staging 的那條規則")
    assert reading.signal == "forget"
    assert "staging" in reading.target_terms


@pytest.mark.parametrize("text", ["pnpm only for installs", "no console.log in src/api"])
def test_what_only_the_learned_model_reads(text: str) -> None:
    assert read_statement(text, learned=False).signal == "neutral"
    assert read_statement(text).signal == "rule"


def test_a_learned_guess_below_acting_is_asked_about() -> None:
    assert read_statement("测试用 vitest", learned=False).unsure is False
    reading = read_statement("测试用 vitest")
    assert (reading.signal, reading.unsure) == ("neutral", True)
