"""The statement's language, and its last Latin word read from the tail."""

from __future__ import annotations

import random

from cairn.engine.statements.language import _LATIN_WORD, language_of, last_latin_word


def test_the_last_word_read_from_the_tail_is_the_last_word_of_the_whole_text() -> None:
    rng = random.Random(20261203)
    pieces = ["a", "B", "'", " ", "  ", "\t", "中", "1", "-", "x" * 300, "don't", "it's", "'s"]
    for _ in range(20_000):
        text = "".join(rng.choice(pieces) for _ in range(rng.randint(0, 120)))
        words = _LATIN_WORD.findall(text)
        assert last_latin_word(text) == (words[-1] if words else None), text


def test_a_long_tail_without_a_word_falls_back_to_the_whole_text() -> None:
    assert last_latin_word("please " + "中 " * 400) == "please"
    assert last_latin_word("x" * 1000) == "x" * 1000
    assert last_latin_word("") is None


def test_english_jargon_inside_chinese_stays_chinese() -> None:
    assert language_of("这个 repo 里用 pnpm") == "zh"
    assert language_of("always use pnpm") == "en"
