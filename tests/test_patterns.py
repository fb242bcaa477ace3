"""Lazy patterns: compiled at first use, then the compiled pattern in every respect."""

from __future__ import annotations

import random
import re
import subprocess
import sys

import pytest

from cairn.engine import secrets
from cairn.engine.statements import selector_words, signal_cues
from cairn.patterns import LazyPattern, any_of, finditer_at, lazy_compile


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
    for pattern in found:
        assert isinstance(pattern.compiled(), re.Pattern)


def test_a_fresh_process_compiles_no_cue_pattern_at_import() -> None:
    # in this test process other tests may have used some; a new interpreter has not
    code = (
        "import gc\n"
        "import cairn.compose, cairn.engine.statements.signals, cairn.engine.statements.reader\n"
        "from cairn.patterns import LazyPattern\n"
        "found = [o for o in gc.get_objects() if isinstance(o, LazyPattern)]\n"
        "print(len(found), sum(o._compiled is not None for o in found))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120, check=True)  # fmt: skip
    made, compiled = map(int, done.stdout.split())
    assert made > 100
    assert compiled == 0


def test_an_attribute_asked_once_is_kept_and_is_the_compiled_patterns() -> None:
    lazy = lazy_compile(r"b+", re.IGNORECASE)
    assert "finditer" not in lazy.__dict__
    first = lazy.finditer
    assert lazy.__dict__["finditer"] == first  # kept: the next use skips __getattr__
    assert lazy.finditer == lazy.compiled().finditer
    assert [m.span() for m in lazy.finditer("aBbab", 1, 5)] == [(1, 3), (4, 5)]
    assert lazy.groups == 0 and lazy.__dict__["groups"] == 0


def test_any_of_matches_exactly_where_the_plain_alternation_does() -> None:
    rng = random.Random(3)
    words = ["sk-", "sk-ant-", "sk", "pass", "passwd", "pw", "a.b", "x+y", "密码", "密钥"]
    trie = re.compile(any_of(words))
    plain = re.compile("|".join(re.escape(w) for w in words))
    assert any_of(["sk-", "sk-ant-", "sk"]) == r"sk(?:\-(?:ant\-)?)?"
    for _ in range(3000):
        text = "".join(rng.choice("skpaw-ntdx+y.b 密码钥") for _ in range(rng.randrange(0, 12)))
        assert (trie.search(text) is None) == (plain.search(text) is None), text
    with pytest.raises(ValueError):
        any_of(["a", ""])


def test_finditer_at_finds_what_finditer_finds() -> None:
    rng = random.Random(4)
    pattern = re.compile(r"(?i)(?<![\w-])(?:to|ten)(?:ken)?\s*[:=]\s*\w+")
    for _ in range(3000):
        text = "".join(rng.choice(["tok", "en", "TOKEN", "ten", ":", "=", " ", "-", "x1", "é"])
                       for _ in range(rng.randrange(0, 14)))  # fmt: skip
        expected = [(m.start(), m.end()) for m in pattern.finditer(text)]
        found = finditer_at(pattern, text, text.lower(), ("to", "ten"))
        assert [(m.start(), m.end()) for m in found] == expected, text
