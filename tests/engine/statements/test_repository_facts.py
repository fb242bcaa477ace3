"""Which descriptions are about one repository: its name in the words, its files, its CI."""

from __future__ import annotations

import pytest

from cairn.engine.statements.repository_facts import (
    is_about_repository,
    names_repository_contents,
    says_this_repository,
)


@pytest.mark.parametrize(
    "text",
    [
        "Our CI runs on GitHub Actions; the workflow file is .github/workflows/ci.yml",
        "Database migrations live in db/migrations and are applied with pnpm db:migrate.",
        "The flaky test tests/e2e/checkout.spec.ts fails on slow machines.",
        "Feature flags are read from config/flags.yaml.",
        "The logger is in log.ts.",
        "Update CHANGELOG.md with every user-visible change.",
        "The Makefile has a target for the docs.",
        "The pipeline deploys on every tag.",
        "This repo deploys with Fly.io.",
        "本项目的文档在 docs 目录。",
    ],
)
def test_a_description_of_this_repository(text: str) -> None:
    assert is_about_repository(text)


@pytest.mark.parametrize(
    "text",
    [
        "The user's name is Dana; she works in Lisbon (UTC+0).",
        "I moved here last year and love it.",  # a bare "here" is not a repository
        "Dana uses Node.js and Vue.js at work.",  # names of things, not files
        "See https://example.com/docs/a.md for the background.",  # a URL
        "The meeting moved to 2026/10/02.",
        "Lisbon and/or Porto, 24/7.",
        "Dana's email is dana@acme.io.",
        "Our staging cluster is in eu-west-1.",
    ],
)
def test_a_description_of_something_else(text: str) -> None:
    assert not is_about_repository(text)


def test_the_words_and_the_contents_are_told_apart() -> None:
    assert says_this_repository("The tests in this project use pytest.")
    assert not names_repository_contents("The tests in this project use pytest.")
    assert names_repository_contents("Tests live in tests/unit.")
    assert not says_this_repository("Tests live in tests/unit.")
    assert not says_this_repository('He wrote "use tabs in this repo" once.')  # quoted speech
