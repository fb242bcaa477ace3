"""The write path's statement step: the words add the selector and kind they state."""

from __future__ import annotations

from typing import Any

import pytest

from cairn.model import MemoryInput
from cairn.services.wording import NoRepository, Words, read_words
from cairn.services.writes import stored_form


def fields(body: str, **given: Any) -> dict[str, Any]:
    return stored_form(MemoryInput(body=body, **given))


def test_a_rule_in_this_repo_is_bound_to_the_repository_it_was_said_in() -> None:
    out = read_words(fields("In this repo, always run make lint before committing."),
                     Words("p1", kind_given=False, default_kind="preference"))  # fmt: skip
    assert (out["scope"], out["project_id"], out["operations"]) == ("project", "p1", ("commit",))
    assert out["kind"] == "policy"


def test_the_words_add_to_what_the_caller_set() -> None:
    given = fields("Always run black on src/api before committing.", kind="skill",
                   operations=["deploy"], tags=["python"])  # fmt: skip
    out = read_words(given, Words("p1"))
    assert out["kind"] == "skill"  # the caller's kind is kept
    assert out["operations"] == ("deploy", "commit")
    assert out["path_patterns"] == ("src/api/**",)
    # a convention said in a repository with no scope word is that repository's
    assert out["tags"] == ("python",) and out["scope"] == "project"


def test_a_fact_about_this_repositorys_files_belongs_to_the_project() -> None:
    fact = fields("Our CI runs on GitHub Actions; the workflow file is .github/workflows/ci.yml")
    assert read_words(fact, Words("p1"))["scope"] == "project"
    # with no repository known, a path alone does not say which one: it stays global
    assert read_words(fact, Words(None))["scope"] == "global"
    assert read_words(fields("Dana lives in Lisbon."), Words("p1"))["scope"] == "global"


def test_a_project_the_caller_named_is_kept() -> None:
    given = fields("Use tabs in this repo.", scope="project", project_id="other")
    assert read_words(given, Words("p1"))["project_id"] == "other"


@pytest.mark.parametrize("body", ["Use tabs in this repo.", "This project deploys with Fly.io."])
def test_words_about_the_current_repository_with_none_known_are_refused(body: str) -> None:
    with pytest.raises(NoRepository, match="no repository is known"):
        read_words(fields(body), Words(None))


def test_neither_caller_nor_words_give_a_kind_the_default_is_used() -> None:
    out = read_words(
        fields("Dana lives in Lisbon."), Words(None, kind_given=False, default_kind="preference")
    )
    assert out["kind"] == "preference"
