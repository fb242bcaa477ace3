"""Tests for reading a selector from a statement's words (most cases go through
tests/engine/statements/test_reader.py, which measures the labelled sets)."""

from __future__ import annotations

import pytest

from cairn.engine.selectors import Selector
from cairn.engine.statements.selector_words import (
    clause_spans,
    read_scope,
    read_selector,
    scope_spans,
)


def test_read_selector_needs_no_signal_cue() -> None:
    # A text given to `remember` has no "always" or "from now on"; its selector is still read.
    selector = read_selector("Run black on src/api before committing in this repo")
    assert selector == Selector(
        scope="project",
        project_id=None,
        path_patterns=("src/api/**",),
        operations=("commit",),
    )


def test_read_selector_of_plain_text_is_the_global_default() -> None:
    assert read_selector("Prefer composition over inheritance.") == Selector()
    assert read_selector("") == Selector()


@pytest.mark.parametrize(
    ("text", "scope"),
    [
        ("use tabs here", "project"),
        ("use tabs in here", "project"),
        ("here's why: use tabs", "global"),
        ("from here on use tabs", "global"),
        ('he said "use tabs in this repo"', "global"),  # quoted speech is not the user's
        ("本仓库用 tab", "project"),
        ("仓库里用 tab", "global"),
    ],
)
def test_read_scope(text: str, scope: str) -> None:
    assert read_scope(text) == scope


def test_scope_spans_cover_the_scope_words() -> None:
    text = "Use tabs in this repo and here."
    assert [text[s:e] for s, e in scope_spans(text)] == ["this repo", "here"]


def test_clause_spans_split_at_clause_punctuation() -> None:
    text = "First, do this; then that. 然后，这个。"
    assert [text[s:e].strip(" ,;.。，") for s, e in clause_spans(text)] == [
        "First",
        "do this",
        "then that",
        "然后",
        "这个",
    ]


@pytest.mark.parametrize(
    ("text", "paths"),
    [
        ("Always run the tests in src/api before pushing", ()),
        ("Run the unit tests under tests/unit before committing.", ()),
        ("When you edit src/api, run the tests in tests/api.", ("src/api/**",)),
        ("In src/api, always run mypy before committing", ("src/api/**",)),
        ("Tests in src/legacy are flaky; skip them", ("src/legacy/**",)),
    ],
)
def test_a_path_that_says_which_tests_is_not_where_the_rule_applies(
    text: str, paths: tuple[str, ...]
) -> None:
    assert read_selector(text).path_patterns == paths
