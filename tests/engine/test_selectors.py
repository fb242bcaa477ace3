"""Tests for gitignore-like globs and explainable selector matching."""

from __future__ import annotations

import dataclasses

import pytest

from cairn.engine.selectors import (
    Selector,
    SelectorMatch,
    TaskConditions,
    glob_match,
    match_selector,
    normalize_path,
)

GLOB_CASES: list[tuple[str, str, bool]] = [
    # ** spanning any number of segments, including none
    ("src/api/**", "src/api/users.py", True),
    ("src/api/**", "src/api/v1/users/handlers.py", True),
    ("src/api/**", "src/api", False),  # inside the directory, not the directory itself
    ("src/api/**", "src/apix/users.py", False),
    ("src/api/**", "lib/src/api/users.py", False),  # has a slash: anchored at the root
    ("**/test_*.py", "test_x.py", True),
    ("**/test_*.py", "a/b/test_x.py", True),
    ("**/test_*.py", "a/b/x_test.py", False),
    ("src/**/test_*.py", "src/test_a.py", True),
    ("src/**/test_*.py", "src/pkg/sub/test_a.py", True),
    ("src/**/test_*.py", "tests/test_a.py", False),
    ("src/**/test_*.py", "src/pkg/test_a.pyc", False),
    ("a/**/b", "a/b", True),
    ("a/**/b", "a/x/b", True),
    ("a/**/b", "a/x/y/z/b", True),
    ("a/**/b", "a/x/b/c.txt", True),  # b names a directory: everything below it
    ("a/**/b", "a/xb", False),
    ("**", "anything/at/all.txt", True),
    # basename patterns match at any depth
    ("*.md", "README.md", True),
    ("*.md", "docs/guide/intro.md", True),
    ("*.md", "docs/guide/intro.mdx", False),
    ("*.md", "notes.md.bak", False),
    ("Makefile", "tools/Makefile", True),
    ("Makefile", "tools/makefile", False),  # case-sensitive
    # * stays inside one segment
    ("src/*.py", "src/app.py", True),
    ("src/*.py", "src/pkg/app.py", False),
    ("src/*/app.py", "src/pkg/app.py", True),
    # leading / anchors at the root
    ("/README.md", "README.md", True),
    ("/README.md", "docs/README.md", False),
    ("README.md", "docs/README.md", True),
    # directories match everything below them
    ("docs/", "docs/guide/intro.md", True),
    ("docs/", "docs", False),  # a trailing slash is for what is below
    ("docs/", "docsite/index.md", False),
    ("docs/", "packages/ui/docs/x.md", True),  # like .gitignore: no inner slash, any depth
    ("/docs/", "packages/ui/docs/x.md", False),
    ("docs", "docs/guide/intro.md", True),
    ("src/api", "src/api/users.py", True),
    ("src/api", "src/api", True),
    # ? and character classes
    ("file?.txt", "file1.txt", True),
    ("file?.txt", "file10.txt", False),
    ("file?.txt", "dir/file/.txt", False),  # ? never matches /
    ("[abc].js", "b.js", True),
    ("[abc].js", "d.js", False),
    ("v[0-9].md", "v7.md", True),
    ("v[0-9].md", "vx.md", False),
    ("[!abc].js", "d.js", True),
    ("[!abc].js", "a.js", False),
    ("[]x].js", "].js", True),  # ] first in a class is a member
    ("weird[.txt", "weird[.txt", True),  # an unclosed [ is a literal
    # literal regex metacharacters
    ("a+b (copy).txt", "a+b (copy).txt", True),
    ("a+b (copy).txt", "aab (copy).txt", False),
    # normalisation of paths and patterns
    ("src/api/**", "./src/api/users.py", True),
    ("src/api/**", "src\\api\\users.py", True),
    ("./src/*.py", "src/app.py", True),
    ("src\\*.py", "src/app.py", True),
    ("src/api/**", "src//api/./users.py", True),
    # empty never matches
    ("", "src/app.py", False),
    ("*.py", "", False),
]


@pytest.mark.parametrize(("pattern", "path", "expected"), GLOB_CASES)
def test_glob_match(pattern: str, path: str, expected: bool) -> None:
    assert glob_match(pattern, path) is expected


def test_glob_table_is_large() -> None:
    assert len(GLOB_CASES) >= 30
    assert any(not expected for _, _, expected in GLOB_CASES)


@pytest.mark.parametrize(
    ("raw", "normal"),
    [
        ("./src/app.py", "src/app.py"),
        ("src\\api\\users.py", "src/api/users.py"),
        ("././a//b/", "a/b"),
        ("", ""),
    ],
)
def test_normalize_path(raw: str, normal: str) -> None:
    assert normalize_path(raw) == normal


# --- selectors -------------------------------------------------------------------------------


def test_global_selector_without_conditions_matches_anything() -> None:
    result = match_selector(Selector(), TaskConditions())
    assert result == SelectorMatch(True, ("global rule",), 0, None)
    other = match_selector(Selector(), TaskConditions(project_id="git:abc", operation="push"))
    assert other.matches


def test_global_selector_ignores_project_id() -> None:
    selector = Selector(scope="global", project_id="git:aaa")
    assert match_selector(selector, TaskConditions(project_id="git:bbb")).matches


def test_project_selector_matches_only_its_project() -> None:
    selector = Selector(scope="project", project_id="git:abc")
    hit = match_selector(selector, TaskConditions(project_id="git:abc"))
    assert hit == SelectorMatch(True, ("current project matches",), 1, None)

    miss = match_selector(selector, TaskConditions(project_id="git:def"))
    assert not miss.matches
    assert miss.mismatch == "current project git:def is not git:abc"
    assert miss.specificity == 0

    unknown = match_selector(selector, TaskConditions())
    assert not unknown.matches
    assert unknown.mismatch == "no current project (rule is for project git:abc)"


def test_project_selector_without_id_never_matches() -> None:
    result = match_selector(Selector(scope="project"), TaskConditions(project_id="git:abc"))
    assert not result.matches
    assert result.mismatch == "project rule has no project id"


def test_path_reason_names_the_path_and_pattern() -> None:
    selector = Selector(scope="project", project_id="p", path_patterns=("src/api/**",))
    task = TaskConditions(project_id="p", paths=("src/api/users.py",))
    result = match_selector(selector, task)
    assert result.matches
    assert result.reasons == ("current project matches", "path src/api/users.py matches src/api/**")
    assert result.specificity == 2


def test_any_path_matching_any_pattern_satisfies_paths() -> None:
    selector = Selector(path_patterns=("src/api/**", "*.sql"))
    task = TaskConditions(paths=("README.md", "db/migrations/001_init.sql"))
    result = match_selector(selector, task)
    assert result.matches
    assert result.reasons == ("global rule", "path db/migrations/001_init.sql matches *.sql")
    assert result.specificity == 1


def test_path_mismatch_explains() -> None:
    selector = Selector(path_patterns=("src/api/**",))
    result = match_selector(selector, TaskConditions(paths=("src/web/app.ts",)))
    assert not result.matches
    assert result.mismatch == "path src/web/app.ts does not match src/api/**"
    assert result.reasons == ("global rule",)

    several = match_selector(
        Selector(path_patterns=("src/api/**", "lib/**")),
        TaskConditions(paths=("a.ts", "b.ts", "c.ts", "d.ts", "e.ts")),
    )
    assert several.mismatch == (
        "paths a.ts, b.ts, c.ts and 2 more do not match src/api/** or lib/**"
    )


def test_path_rule_for_a_task_without_paths_matches_as_unstated() -> None:
    # A path rule is for its paths only: without paths it is offered, noting the gap,
    # and it is never counted as a matched dimension.
    result = match_selector(Selector(path_patterns=("src/api/**",)), TaskConditions())
    assert result.matches and result.specificity == 0
    assert result.unstated == ("path not stated (rule applies to src/api/**)",)


@pytest.mark.parametrize(
    ("selector", "task", "unstated"),
    [
        (
            Selector(operations=("commit",)),
            TaskConditions(),
            "operation not stated (rule applies to operation commit)",
        ),
        (
            Selector(task_types=("refactor",)),
            TaskConditions(task_type=""),
            "task type not stated (rule applies to task type refactor)",
        ),
        (
            Selector(phases=("plan",)),
            TaskConditions(),
            "phase not stated (rule applies to phase plan)",
        ),
    ],
)
def test_unstated_dimensions_are_named(
    selector: Selector, task: TaskConditions, unstated: str
) -> None:
    result = match_selector(selector, task)
    assert result.matches and result.unstated == (unstated,)


def test_task_paths_are_normalised_in_reasons() -> None:
    result = match_selector(
        Selector(path_patterns=("src/api/**",)), TaskConditions(paths=(".\\src\\api\\x.py",))
    )
    assert result.reasons[-1] == "path src/api/x.py matches src/api/**"


@pytest.mark.parametrize(
    ("selector", "task", "reason"),
    [
        (
            Selector(operations=("commit",)),
            TaskConditions(operation="commit"),
            "operation commit matches",
        ),
        (
            Selector(operations=("Commit", "push")),
            TaskConditions(operation="PUSH"),
            "operation PUSH matches",
        ),
        (Selector(phases=("review",)), TaskConditions(phase="Review"), "phase Review matches"),
        (
            Selector(task_types=("bugfix",)),
            TaskConditions(task_type="BugFix"),
            "task type BugFix matches",
        ),
    ],
)
def test_case_insensitive_dimensions(selector: Selector, task: TaskConditions, reason: str) -> None:
    result = match_selector(selector, task)
    assert result.matches
    assert result.reasons == ("global rule", reason)
    assert result.specificity == 1


@pytest.mark.parametrize(
    ("selector", "task", "mismatch"),
    [
        (
            Selector(operations=("commit",)),
            TaskConditions(operation="push"),
            "operation push is not commit",
        ),
        (
            Selector(operations=("commit", "merge", "push")),
            TaskConditions(operation="deploy"),
            "operation deploy is not commit, merge or push",
        ),
        (
            Selector(phases=("plan",)),
            TaskConditions(phase="implement"),
            "phase implement is not plan",
        ),
    ],
)
def test_dimension_mismatches(selector: Selector, task: TaskConditions, mismatch: str) -> None:
    result = match_selector(selector, task)
    assert not result.matches
    assert result.mismatch == mismatch


def test_full_selector_specificity_and_reasons() -> None:
    selector = Selector(
        scope="project",
        project_id="git:1234",
        path_patterns=("src/api/**",),
        operations=("commit",),
        phases=("implement",),
        task_types=("feature",),
    )
    task = TaskConditions(
        project_id="git:1234",
        paths=("src/api/users.py",),
        operation="commit",
        phase="implement",
        task_type="feature",
    )
    result = match_selector(selector, task)
    assert result == SelectorMatch(
        True,
        (
            "current project matches",
            "path src/api/users.py matches src/api/**",
            "operation commit matches",
            "phase implement matches",
            "task type feature matches",
        ),
        5,
        None,
    )


def test_all_failing_dimensions_are_reported() -> None:
    selector = Selector(
        scope="project", project_id="git:1", path_patterns=("src/api/**",), operations=("commit",)
    )
    task = TaskConditions(project_id="git:2", paths=("src/api/a.py",), operation="push")
    result = match_selector(selector, task)
    assert not result.matches
    assert result.mismatch == "current project git:2 is not git:1; operation push is not commit"
    # The satisfied dimension is still explained and counted.
    assert result.reasons == ("path src/api/a.py matches src/api/**",)
    assert result.specificity == 1


def test_blank_selector_values_are_ignored() -> None:
    result = match_selector(Selector(operations=("", "  "), path_patterns=("",)), TaskConditions())
    assert result.matches


def test_values_are_frozen_and_scope_is_checked() -> None:
    with pytest.raises(dataclasses.FrozenInstanceError):
        Selector().scope = "project"  # type: ignore[misc]
    with pytest.raises(ValueError, match="scope"):
        Selector(scope="team")  # type: ignore[arg-type]
