"""A correction in words is placed in the text it corrects: the old term replaced where it
stands, everything else kept, the clause that now forbids the new term adjusted."""

from __future__ import annotations

import pytest

from cairn.engine.statements.correction import Edit, read_edit, revise


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
        # issue 21: the new term takes its kin's place; "never npm" gives npm up.
        (
            "Always use pnpm to install dependencies in this repository; never npm or yarn.",
            "Actually, use npm",
            "Always use npm to install dependencies in this repository; never yarn.",
        ),
        ("always use pnpm 10", "use npm", "always use npm"),
        ("Never use npm or yarn; always pnpm.", "use yarn", "Never use npm; always yarn."),
        ("Never use yarn, always pnpm", "use yarn", "always yarn"),
        # issue 25: the Chinese forms.
        (
            "这个项目里装依赖一律用 pnpm，别用 npm 或 yarn",
            "不对，应该用 pnpm 9，不是 npm",
            "这个项目里装依赖一律用 pnpm 9，别用 npm 或 yarn",
        ),
        (
            "Python 代码缩进用两个空格",
            "改一下，之前说的两个空格缩进改成四个空格",
            "Python 代码缩进用四个空格",
        ),
        ("数据库迁移一律用 goose", "改一下，数据库迁移 goose 改成 atlas", "数据库迁移一律用 atlas"),
        ("日志统一用 zap", "不对，应该用 slog，不用 zap", "日志统一用 slog"),
        ("前端代码格式化统一用 prettier", "prettier 换成 biome", "前端代码格式化统一用 biome"),
        ("缩进统一用 2 个空格", "改成 4 个空格", "缩进统一用 4 个空格"),
        ("单测统一用 jest", "用 vitest 替换 jest", "单测统一用 vitest"),
        (
            "Always run the tests with jest",
            "switch from jest to vitest",
            "Always run the tests with vitest",
        ),
        ("Indent with 2 spaces", "make it 4 spaces", "Indent with 4 spaces"),
        (
            "Format with black before committing",
            "replace black with ruff",
            "Format with ruff before committing",
        ),
    ],
)
def test_a_correction_is_placed_in_the_rule_it_corrects(old: str, statement: str, new: str) -> None:
    revision = revise(old, statement)
    assert revision is not None and revision.text == new
    assert revision.placing in ("named", "family")


@pytest.mark.parametrize(
    ("old", "statement", "new"),
    [
        # A tool's flags go with it; a bare value takes the one value's place; a unit stays.
        ("Run the tests with pytest -x before every push.", "actually, use pytest -q",
         "Run the tests with pytest -q before every push."),
        ("Use Python 3.11 for this project.", "3.12", "Use Python 3.12 for this project."),
        ("Use Python 3.11 for this project.", "actually python 3.12",
         "Use Python 3.12 for this project."),
        ("Indent YAML with 2 spaces.", "4 spaces, not 2", "Indent YAML with 4 spaces."),
        # A verb heads the new wording; the kin term inside it is what changes.
        ("Always write commit messages in English.", "actually, write them in Chinese",
         "Always write commit messages in Chinese."),
        ("提交信息一律用英文写", "不对，用中文", "提交信息一律用中文写"),
    ],
)  # fmt: skip
def test_tried_by_hand_nothing_is_spliced(old: str, statement: str, new: str) -> None:
    revision = revise(old, statement)
    assert revision is not None and revision.text == new


@pytest.mark.parametrize(
    ("old", "statement"),
    [
        # Changes only the case of a word: nothing to do.
        ("Deploy to staging first, then production.", "actually, deploy to canary first"),
        # Whole, "them" would lose what it stands for.
        ("Always write commit messages in English.", "actually, keep them short"),
    ],
)
def test_a_wording_that_cannot_be_placed_or_taken_whole_is_refused(
    old: str, statement: str
) -> None:
    assert revise(old, statement) is None


def test_a_kin_term_is_placed_by_family_and_a_named_one_by_name() -> None:
    by_kin = revise("Always run the tests with jest", "use vitest")
    assert by_kin is not None and by_kin.placing == "family"
    named = revise("Always run the tests with jest", "use jest 29")
    assert named is not None and (named.text, named.placing) == (
        "Always run the tests with jest 29",
        "named",
    )


@pytest.mark.parametrize(
    ("old", "statement"),
    [
        ("Use npm here, npm everywhere", "yarn, not npm"),  # the old word twice: ambiguous
        ("Use pnpm 8 or pnpm 9", "pnpm 10"),  # the anchor twice
        ("Always use tabs for Go files", "use npm"),  # no kin of npm to replace
        ("Deploy with make ship", "goose 改成 atlas"),  # names an old term the text lacks
        ("Always use pnpm", "use pnpm"),  # changes nothing
    ],
)
def test_what_cannot_be_placed_is_not_guessed(old: str, statement: str) -> None:
    assert revise(old, statement) is None


def test_a_statement_that_is_a_rule_by_itself_replaces_the_text_whole() -> None:
    revision = revise(
        "Deploy with make ship", "Actually, always use the release script for deploys"
    )
    assert revision is not None and revision.placing == "whole"
    assert revision.text == "always use the release script for deploys"


@pytest.mark.parametrize(
    ("statement", "edit"),
    [
        ("X 改成 Y", Edit("Y", "X")),
        ("把 goose 换成 atlas 吧", Edit("atlas", "goose")),
        ("应该用 slog，不是 zap", Edit("slog", "zap")),
        ("不用 zap，用 slog", Edit("slog", "zap")),
        ("use vitest instead of jest", Edit("vitest", "jest")),
        ("switch from jest to vitest", Edit("vitest", "jest")),
        ("replace black with ruff", Edit("ruff", "black")),
        ("yarn rather than npm", Edit("yarn", "npm")),
        ("Actually, use npm", Edit("npm", None)),
        ("不对，应该用 pnpm 9", Edit("pnpm 9", None)),
        ("No, Node 20", Edit("Node 20", None)),
    ],
)
def test_the_edit_is_read_in_the_forms_people_use(statement: str, edit: Edit) -> None:
    assert read_edit(statement) == edit
