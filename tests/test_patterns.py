"""Lazy patterns: compiled at first use, then the compiled pattern in every respect."""

from __future__ import annotations

import re

from cairn.engine import secrets, selector_words, signal_cues
from cairn.patterns import LazyPattern, lazy_compile


def test_a_lazy_pattern_compiles_at_its_first_use_and_matches_as_re_does() -> None:
    lazy = lazy_compile(r"(?<![a-z])here(?![a-z])", re.IGNORECASE)
    assert isinstance(lazy, LazyPattern)
    assert lazy._compiled is None  # nothing compiled yet
    assert lazy.pattern == r"(?<![a-z])here(?![a-z])"
    assert lazy._compiled is None  # its source is known without compiling
    eager = re.compile(r"(?<![a-z])here(?![a-z])", re.IGNORECASE)
    text = "Here and there, not where: HERE."
    assert [m.span() for m in lazy.finditer(text)] == [m.span() for m in eager.finditer(text)]
    assert lazy.sub("X", text) == eager.sub("X", text)
    assert lazy.flags == eager.flags
    assert lazy.search("nowhere") is None
    assert lazy.compiled() is lazy.compiled()  # compiled once


def test_importing_the_cue_modules_compiles_none_of_their_patterns() -> None:
    found = [
        value
        for module in (signal_cues, selector_words, secrets)
        for value in vars(module).values()
        if isinstance(value, LazyPattern)
    ]
    assert len(found) > 20
    # a fresh interpreter proves it in tests/cli (the import test); here: they are lazy
    # and each one still compiles to a valid pattern.
    for pattern in found:
        assert isinstance(pattern.compiled(), re.Pattern)
