from __future__ import annotations

import pytest

from cairn.engine.correction import revise


@pytest.mark.parametrize(
    ("old", "statement", "new"),
    [
        (
            "In this repo, always use pnpm to install dependencies.",
            "use pnpm 10",
            "In this repo, always use pnpm 10 to install dependencies.",
        ),
        ("Always install with pnpm 8.", "use pnpm 10 for installs", "Always install with pnpm 10."),
        ("Use Node 18 for this project.", "Node 20", "Use Node 20 for this project."),
        ("Always use npm to install.", "yarn, not npm", "Always use yarn to install."),
        ("Always use npm to install.", "use yarn instead of npm", "Always use yarn to install."),
        ("永远用 npm 安装依赖", "用 pnpm，不用 npm", "永远用 pnpm 安装依赖"),
    ],
)
def test_a_correction_is_merged_into_the_rule_it_corrects(
    old: str, statement: str, new: str
) -> None:
    assert revise(old, statement) == new


@pytest.mark.parametrize(
    ("old", "statement"),
    [
        ("Deploy with make ship", "use the release script"),  # nothing to place: as stated
        ("Use npm here, npm everywhere", "yarn, not npm"),  # the old word twice: ambiguous
        ("Use pnpm 8 or pnpm 9", "pnpm 10"),  # the anchor twice
    ],
)
def test_what_cannot_be_placed_with_confidence_is_taken_as_stated(old: str, statement: str) -> None:
    assert revise(old, statement) == statement
