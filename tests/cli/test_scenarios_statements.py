"""Statements as engineers say them, through the real `cairn` command in real git
repositories, in Chinese and English (issues 21 and 25): conventions are kept, in the
repository they are said in; personal habits are global; a correction is placed in the rule
it corrects and loses nothing, shows the old and the new text, and asks when more than one
rule could take it; forgets in everyday words; Chinese task words reach the selectors; and a
statement the reader is unsure of stores nothing and says how to store it."""

from __future__ import annotations

import json
from typing import Any

import pytest

from cli.test_scenarios import World, make_world


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> World:
    return make_world(tmp_path_factory.mktemp("statements"))


def said(world: World, place: str, text: str) -> dict[str, Any]:
    reply: dict[str, Any] = world.js(place, "signal", text)
    return reply


def nothing_changes(world: World, place: str, text: str) -> dict[str, Any]:
    before = world.export()
    proc = world.refused(place, "--json", "signal", text)
    assert world.export() == before, text
    data: dict[str, Any] = json.loads(proc.stdout)
    return data


# --- nothing dropped: conventions in the repository, habits global ----------------------------

# statement, kind, scope, operations, phases, paths
KEPT = (
    ("别再往 main 直接 push 了，都走 PR", "policy", "project", ["push"], [], []),
    ("我一般 commit message 用英文写", "preference", "global", ["commit"], [], []),
    ("src/components 下面的组件文件名都用 PascalCase", "policy", "project", [], [],
     ["src/components/**"]),
    ("code review 的时候重点看 any", "policy", "project", [], ["review"], []),
    ("这个项目提交之前要跑 golangci-lint", "policy", "project", ["commit"], [], []),
    ("这个仓库部署的时候先发 staging", "policy", "project", ["deploy"], [], []),
    ("我一般提交之前 rebase", "preference", "global", ["commit"], [], []),
    ("这个仓库的单测用 vitest", "fact", "project", [], [], []),
    # Where things live is worth knowing everywhere: it names no path the rule is for.
    ("设计组件都在 packages/ui", "fact", "project", [], [], []),
    ("以后写组件都用函数式组件", "policy", "project", [], [], []),
    ("以后接口错误码都统一用 errcode 包", "policy", "project", [], [], []),
    ("发版之前记得更新 CHANGELOG.md", "policy", "project", ["release"], [], []),
    ("I usually rebase before committing", "preference", "global", ["commit"], [], []),
    ("Design components live in packages/ui", "fact", "project", [], [], []),
    ("In every project, use ruff for linting.", "policy", "global", [], [], []),
)  # fmt: skip


@pytest.mark.parametrize(("text", "kind", "scope", "operations", "phases", "paths"), KEPT)
def test_a_convention_said_in_a_repository_is_kept_there_and_a_habit_everywhere(
    world: World,
    text: str,
    kind: str,
    scope: str,
    operations: list[str],
    phases: list[str],
    paths: list[str],
) -> None:
    reply = said(world, "shop", text)
    assert reply["outcome"] == "stored", reply
    record = reply["record"]
    assert (record["kind"], record["scope"]) == (kind, scope), text
    assert (record["operations"], record["phases"]) == (operations, phases), text
    assert record["path_patterns"] == paths, text
    assert record["project_id"] == (world.project_id("shop") if scope == "project" else None)
    # The other repository never sees a rule of this one.
    blog = {r["id"] for r in world.js("blog", "list")}
    assert (record["id"] in blog) == (scope == "global"), text


def test_the_reply_says_which_scope_and_how_to_change_it(world: World) -> None:
    out = world.ok("shop", "signal", "写测试的时候 mock 数据统一放 `__mocks__`")
    assert "for this repository" in out and "said in this repository without a scope word" in out
    assert "--scope global" in out
    out = world.ok("blog", "signal", "我习惯用 4 个空格缩进")
    assert "every project (global)" in out and "your own habit or taste" in out


# --- corrections that lose nothing -----------------------------------------------------------


def test_actually_use_npm_rewrites_the_term_and_keeps_the_rest(world: World) -> None:
    rule = "Always use pnpm to install dependencies in this repository; never npm or yarn."
    kept = world.js("outside", "remember", rule, "--scope", "global", "--operation", "install")
    target = kept["record"]
    out = world.ok("outside", "signal", "Actually, use npm")
    new = "Always use npm to install dependencies in this repository; never yarn."
    assert out.startswith(f"corrected {target['id']} (now version 2)")
    assert f"  was: {rule}\n" in out and f"  now: {new}\n" in out
    record = world.js("outside", "show", target["id"])
    assert (record["body"], record["scope"], record["operations"]) == (new, "global", ["install"])
    history = world.js("outside", "show", target["id"], "--history")
    assert [h["body"] for h in history] == [rule, new]


def test_a_correction_two_rules_could_take_asks_which(world: World) -> None:
    # The global rule names npm; this repository's rule names a kin of it: ask, change nothing.
    local = said(world, "clone", "这个仓库 always use pnpm 10")["record"]
    data = nothing_changes(world, "worktree", "Actually, use yarn")
    assert data["outcome"] == "ambiguous"
    ids = {c["record"]["id"] for c in data["candidates"]}
    assert local["id"] in ids and len(ids) == 2
    out = world.refused("shop", "signal", "Actually, use yarn").stdout
    assert out.startswith("nothing corrected: several memories match") and local["id"] in out
    world.ok("shop", "forget", local["id"])


@pytest.mark.parametrize(
    ("rule", "correction", "new"),
    [
        ("这个项目里装依赖一律用 pnpm，别用 npm 或 yarn", "不对，应该用 pnpm 9，不是 npm",
         "这个项目里装依赖一律用 pnpm 9，别用 npm 或 yarn"),
        ("这个项目的 Python 代码缩进用两个空格", "改一下，之前说的两个空格缩进改成四个空格",
         "这个项目的 Python 代码缩进用四个空格"),
        ("这个项目数据库迁移一律用 goose", "改一下，数据库迁移 goose 改成 atlas",
         "这个项目数据库迁移一律用 atlas"),
        ("这个项目日志统一用 zap", "不对，应该用 slog，不用 zap", "这个项目日志统一用 slog"),
        ("这个项目前端代码格式化统一用 prettier", "prettier 换成 biome",
         "这个项目前端代码格式化统一用 biome"),
        ("In this repo, run the unit tests with jest before pushing.",
         "use vitest instead of jest",
         "In this repo, run the unit tests with vitest before pushing."),
        ("In this repo, always lint Go code with staticcheck.",
         "switch from staticcheck to golangci-lint",
         "In this repo, always lint Go code with golangci-lint."),
    ],
)  # fmt: skip
def test_a_correction_in_the_words_people_use_is_placed_in_its_rule(
    world: World, rule: str, correction: str, new: str
) -> None:
    first = said(world, "blog", rule)["record"]
    assert first["scope"] == "project"
    reply = said(world, "blog", correction)
    assert (reply["outcome"], reply["record"]["id"]) == ("corrected", first["id"]), reply
    record = reply["record"]
    assert (record["body"], reply["previous"]) == (new, rule)
    for name in ("scope", "project_id", "operations", "phases", "path_patterns", "kind"):
        assert record[name] == first[name], name
    world.ok("blog", "forget", first["id"])


def test_a_correction_nothing_takes_changes_nothing(world: World) -> None:
    world.js("blog", "signal", "这个项目一律用 tab 缩进")
    for text in ("不对，应该用 Java 21", "Actually, use Terraform 1.6"):
        data = nothing_changes(world, "blog", text)
        assert (data["kind"], data["outcome"]) == ("correct", "no-match"), text
    # An unmarked edit no memory takes is a code change, not a correction: nothing said.
    reply = said(world, "blog", "把 axios 换成 fetch")
    assert (reply["kind"], reply["outcome"]) == ("neutral", "nothing")


# --- forgets in everyday words -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("rule", "forget"),
    [
        ("以后 fixture 工厂统一放 factories 目录", "之前说的 factories 那条不算了"),
        ("以后接口错误码都统一用 errcode 包", "之前说的 errcode 那条不算了"),
        ("以后 Kubernetes 的 manifest 一律放 deploy/k8s", "删掉关于 Kubernetes 的那条"),
        ("以后 preview 环境每周五重置", "作废之前关于 preview 环境的规则"),
        ("From now on, deploy a canary before production.",
         "never mind what I said about the canary"),
        ("From now on, keep the fixtures in tests/fixtures.",
         "that fixtures rule no longer applies"),
    ],
)  # fmt: skip
def test_a_forget_in_everyday_words_drops_its_one_match(
    world: World, rule: str, forget: str
) -> None:
    record = said(world, "worktree", rule)["record"]
    reply = said(world, "shop", forget)
    assert (reply["kind"], reply["outcome"]) == ("forget", "forgotten"), reply
    assert reply["record"]["id"] == record["id"]
    assert "的那条" not in reply["statement"] and "那条" not in reply["statement"]
    assert record["id"] not in {r["id"] for r in world.js("shop", "list")}


# --- task words ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "task", ["给项目加一个 lodash 依赖", "把 axios 升级到最新版本", "bump react to 19"]
)
def test_chinese_and_english_install_words_bring_the_install_rule(world: World, task: str) -> None:
    rule = said(world, "clone", "这个仓库装依赖一律用 bun")["record"]
    assert rule["operations"] == ["install"]
    ctx = world.js("shop", "context", "--task", task)
    resident = {i["id"]: i for i in ctx["resident"]}
    assert rule["id"] in resident, (task, ctx)
    assert "operation not stated" not in json.dumps(resident[rule["id"]], ensure_ascii=False)


# --- unsure: nothing stored, and how to store it --------------------------------------------------


def test_an_unsure_statement_stores_nothing_and_says_how_to_store_it(world: World) -> None:
    text = "记得周五之前清一下 staging 数据库"
    data = nothing_changes(world, "shop", text)
    assert (data["kind"], data["outcome"], data["record"]) == ("neutral", "unsure", None)
    out = world.refused("shop", "signal", text).stdout
    assert out.startswith("nothing stored:") and "--as rule|preference|fact" in out
    assert "--scope project|global" in out
    stored = world.js("shop", "signal", "--as", "rule", "--scope", "global", text)
    assert stored["outcome"] == "stored"
    record = stored["record"]
    assert (record["kind"], record["scope"]) == ("policy", "global")
    # A task is not a question: it stores nothing and exits 0.
    assert world.js("shop", "signal", "fix the login bug")["outcome"] == "nothing"
