"""Texts shaped to make a backtracking pattern try every way of splitting them: a long run
of blanks, a filler word said many times, a long run of path characters. The reader's
answer must be what it is for the same text at a size the old patterns could still read
(each case holds both), and it must come back: before the patterns were made possessive
and the path cue gated by its words, 400 blanks took 141 s, 40 "please" minutes, and one
100,000-character ingest line two minutes (tests/reliability/test_hostile_inputs.py)."""

from __future__ import annotations

import re
from collections.abc import Callable

import pytest

from cairn.engine.statements.reader import StatementReading, read_statement
from cairn.engine.statements.signal_cues import _CUES, any_cue


def _gist(reading: StatementReading) -> tuple[object, ...]:
    return (reading.signal, reading.cue, reading.memory_kind, reading.target_terms)


# (a text with a run of `n` repeats, signal at a small n, signal at a large n)
SHAPES: list[tuple[Callable[[int], str], str]] = [
    (lambda n: "a" + " " * n + "b", "neutral"),
    (lambda n: "a" + "\t" * n + "b", "neutral"),
    (lambda n: "please " * n + "ignore the rule about staging", "forget"),
    (lambda n: "ok, " * n + "forget the rule about staging", "forget"),
    (lambda n: "the pnpm rule" + " " * n + "no longer applies", "forget"),
    (lambda n: "那条" + " " * n + "规则作废", "forget"),
    (lambda n: "use vitest" + " " * n + ", instead of jest", "correct"),
    (lambda n: "sorry, " * n + "i meant pnpm, not npm", "correct"),
    (lambda n: "x" * (n * 50), "neutral"),
    (lambda n: "中/" * (n * 20), "neutral"),
    # A run of path characters, then the place cue's own words: the path part was re-read
    # from every place in the run (100,000 characters: 21 s).
    (lambda n: "src/" + "x" * (n * 50) + " / 下 不要", "neutral"),
    (lambda n: "src/a" + " " * (n * 50) + "/ 下 不要", "neutral"),
    # Many cues in one clause: each was checked against every one taken before it.
    (lambda n: "always " * (n * 7), "rule"),
]


@pytest.mark.parametrize(("shape", "signal"), SHAPES)
def test_a_long_run_reads_as_the_same_text_at_a_small_size(
    shape: Callable[[int], str], signal: str
) -> None:
    small, large = read_statement(shape(3)), read_statement(shape(2000))
    assert small.signal == signal
    assert _gist(large)[:3] == _gist(small)[:3]


def test_a_place_prohibition_is_still_read_with_its_words_anywhere_in_the_clause() -> None:
    for text in (
        "src/api 下面的代码不要用全局变量",
        "代码都在src/里但是tests/下面不要动",
        "lib/下别改",
        "/etc/nginx 下面不要改配置",
        "我们项目所有的代码src/api下面不要用全局变量",
    ):
        assert read_statement(text).signal == "rule", text


def test_every_match_of_a_gated_cue_holds_one_of_its_words() -> None:
    gated = [c for c in _CUES if c.needs]
    assert gated, "the path cue is gated"
    samples = [
        "src/api 下面的代码不要用全局变量",
        "a/b里面别放密钥",
        "x.y/z 中禁止提交",
        "docs/ 下 不能改",
    ]
    for cue in gated:
        found = [m.group(0) for s in samples for m in cue.pattern.finditer(s)]
        assert found, cue.pattern.pattern
        assert all(any(w in m for w in cue.needs) for m in found)
        # what every match must contain is the pattern's last alternation: nothing else
        last = re.search(r"\(\?:([^()]*)\)$", cue.pattern.pattern)
        assert last is not None and set(last.group(1).split("|")) == set(cue.needs)
        assert f"(?:{cue.pattern.pattern})" not in any_cue().pattern
