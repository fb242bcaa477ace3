"""classify_statement keeps its latest readings (a hook reads one prompt as a signal, then
as a task): a kept reading is the one computed afresh, per text and per ``edits``."""

from __future__ import annotations

from cairn.engine.statements import signals
from cairn.engine.statements.signals import classify_statement

TEXTS = [
    "Always run the linter before committing",
    "actually, use pnpm 10",
    "prettier 换成 biome",
    "forget that I always use tabs",
    "skip the tests this time",
    "How do I deploy the API?",
    "",
    "   ",
    "never push to main " * 200,  # longer than what is kept
]


def test_a_kept_reading_is_the_fresh_one_for_each_text_and_edits() -> None:
    for _ in range(2):  # the second pass reads the kept ones
        for text in TEXTS:
            for edits in (True, False):
                assert classify_statement(text, edits=edits) == signals._classify(text, edits)
    assert classify_statement("prettier 换成 biome").kind == "correct"
    assert classify_statement("prettier 换成 biome", edits=False).kind != "correct"


def test_what_is_kept_is_bounded() -> None:
    for n in range(300):
        classify_statement(f"Always run suite number {n} before pushing")
    info = signals._kept.cache_info()
    assert info.currsize <= info.maxsize == 64
    classify_statement(TEXTS[-1])  # a long text is read afresh, never kept
    assert signals._kept.cache_info()[:2] == info[:2]  # (hits, misses): not asked
