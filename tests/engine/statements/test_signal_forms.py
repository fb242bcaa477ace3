"""Forgets that end with their verdict or open with a dismissal, and unmarked edits."""

from __future__ import annotations

import pytest

from cairn.engine.statements.reader import read_statement


@pytest.mark.parametrize(
    ("text", "target"),
    [
        ("之前说的 mock 数据那条不算了", "mock 数据"),
        ("之前说的 errcode 那条不算了", "errcode"),
        ("errcode 那条作废吧", "errcode"),
        ("作废之前关于 staging 的规则", "staging"),
        ("删掉关于 lodash 的那条", "lodash"),
        ("忘掉 Kubernetes 的那条", "kubernetes"),
        ("别管之前说的 goose 那条了", "goose"),
        ("never mind what I said about staging", "staging"),
        ("ignore what I said about mocks", "mocks"),
        ("disregard the rule about Fridays", "fridays"),
        ("that pnpm rule no longer applies", "pnpm"),
        ("the note about the VPN is obsolete", "vpn"),
    ],
)
def test_forgets_in_everyday_words(text: str, target: str) -> None:
    reading = read_statement(text)
    assert reading.signal == "forget", text
    assert reading.target == target
    assert "那条" not in reading.statement


@pytest.mark.parametrize(
    "text",
    ["这个功能不要了", "ignore the failing test", "never mind", "那个按钮取消掉", "drop the table"],
)
def test_a_verdict_on_something_that_is_no_memory_is_not_a_forget(text: str) -> None:
    assert read_statement(text).signal != "forget"


@pytest.mark.parametrize(
    "text", ["prettier 换成 biome", "use vitest instead of jest", "switch from jest to vitest"]
)
def test_an_unmarked_edit_is_a_correction_only_when_asked_to_be(text: str) -> None:
    assert read_statement(text).signal == "correct"
    assert read_statement(text, edits=False).signal != "correct"


@pytest.mark.parametrize(
    ("text", "kind", "source"),
    [
        ("别再往 main 直接 push 了，都走 PR", "policy", "unstated"),
        ("我一般 commit message 用英文写", "preference", "personal"),
        ("src/components 下面的组件文件名都用 PascalCase", "policy", "unstated"),
        ("code review 的时候重点看 any", "policy", "unstated"),
        ("这个项目提交之前要跑 golangci-lint", "policy", "said"),
        ("这个仓库部署的时候先发 staging", "policy", "said"),
        ("这个仓库的单测用 vitest", "fact", "said"),
        ("设计组件都在 packages/ui", "fact", "unstated"),
        ("发版之前记得更新 CHANGELOG.md", "policy", "unstated"),
        ("I usually rebase before committing", "preference", "personal"),
        ("In every project, use ruff", "policy", "said"),
        ("Always reply in English", "policy", "personal"),
    ],
)
def test_conventions_are_rules_with_where_their_scope_comes_from(
    text: str, kind: str, source: str
) -> None:
    reading = read_statement(text)
    assert (reading.signal, reading.memory_kind, reading.scope_source) == ("rule", kind, source)


@pytest.mark.parametrize(
    ("text", "unsure"),
    [
        ("记得周五之前清一下 staging 数据库", True),
        ("fix the login bug", False),
        ("为什么测试失败了", False),
        ("这个仓库里的测试跑得很慢。", False),
    ],
)
def test_a_neutral_reading_with_some_evidence_is_unsure(text: str, unsure: bool) -> None:
    reading = read_statement(text)
    assert (reading.signal, reading.unsure) == ("neutral", unsure)
