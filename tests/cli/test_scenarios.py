"""Scenarios of personal memory as a coding-agent user lives them, through the real `cairn`
command in real git repositories (a repository, its linked worktree and clone, a second
repository, a folder outside git), in English and Chinese: the scope a rule's own words
give it, and the current repository as every command's default.

The helpers here (:class:`World`, :func:`make_world`) serve the other scenario modules too.
The homes use the model-free hashing embedder (see tests/cli_runner.py).
"""

from __future__ import annotations

import json
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from cli.test_personal_memory import git, make_repo
from cli_runner import invoke_cairn

SELECTOR_FIELDS = ("scope", "project_id", "path_patterns", "operations", "phases", "task_types")


@dataclass(frozen=True)
class World:
    """One user's home and the places they run `cairn` from."""

    home: Path
    places: dict[str, Path]
    real: bool = False  # the real embedding model rather than the hashing one
    _ids: dict[str, str] = field(default_factory=dict)

    def run(self, place: str, *args: str) -> subprocess.CompletedProcess[str]:
        return invoke_cairn(self.home, *args, cwd=self.places[place], real=self.real)

    def ok(self, place: str, *args: str) -> str:
        proc = self.run(place, *args)
        assert proc.returncode == 0, (args, proc.returncode, proc.stderr)
        return proc.stdout

    def js(self, place: str, *args: str) -> Any:
        return json.loads(self.ok(place, "--json", *args))

    def refused(self, place: str, *args: str, code: int = 2) -> subprocess.CompletedProcess[str]:
        proc = self.run(place, *args)
        assert proc.returncode == code, (args, proc.returncode, proc.stdout, proc.stderr)
        assert "Traceback" not in proc.stderr
        return proc

    def export(self) -> str:
        return self.ok("shop", "export")

    def project_id(self, place: str) -> str:
        """The id `status` names for the repository of ``place``."""
        if place not in self._ids:
            self._ids[place] = str(self.js(place, "status")["project"]["id"])
        return self._ids[place]


def make_world(root: Path, *, real: bool = False) -> World:
    """Two repositories (the shop with a linked worktree and a clone, and the blog), a
    folder of the shop, and a folder outside any repository."""
    shop = make_repo(root / "shop", "the shop")
    git(shop, "worktree", "add", "-q", str(root / "shop-feature"), "-b", "feature")
    git(root, "clone", "-q", str(shop), str(root / "shop-clone"))
    blog = make_repo(root / "blog", "the blog")
    outside = root / "scratch"
    outside.mkdir()
    inside_git = subprocess.run(
        ["git", "rev-parse", "--show-toplevel"], cwd=outside, capture_output=True, check=False
    )
    assert inside_git.returncode != 0, "the scratch folder must be outside any repository"
    places = {
        "shop": shop,
        "shop-api": shop / "src" / "api",
        "worktree": root / "shop-feature",
        "clone": root / "shop-clone",
        "blog": blog,
        "outside": outside,
    }
    return World(root / "home", places, real)


def bodies(items: list[dict[str, Any]]) -> list[str]:
    return [str(i.get("body") or i.get("summary") or "") for i in items]


def context_bodies(ctx: dict[str, Any]) -> list[str]:
    return bodies([*ctx["resident"], *ctx["manifest"]])


# --- 1. the scope, kind and selectors a statement's words give it -----------------------------

# statement, kind, path patterns, operations, phases
PROJECT_RULES = (
    ("Use tabs in this repo.", "policy", [], [], []),
    ("Use Node 20 for this project.", "policy", [], [], []),
    ("Never force-push in this repository.", "policy", [], ["push"], []),
    ("Here we always pin exact dependency versions.", "policy", [], [], []),
    ("Always write a migration for every change under db/ in this repo.", "policy",
     ["db/**"], ["edit"], []),
    ("在这个仓库里，永远用 pnpm 安装依赖", "policy", [], ["install"], []),
    ("本项目的 Python 代码一律用 4 个空格缩进", "policy", ["*.py"], [], []),
    ("以后在这个项目里，每次提交前都要先跑 make lint", "policy", [], ["commit"], []),
    ("本仓库的 docs/ 目录下一律用中文写文档", "policy", ["docs/**"], [], []),
    ("我们团队一律用 squash 合并", "policy", [], ["merge"], []),
    ("During review, always check that every endpoint in src/api has a test.", "policy",
     ["src/api/**"], [], ["review"]),
    ("在代码评审阶段，一律检查 src/api 下的接口有没有测试", "policy", ["src/api/**"], [],
     ["review"]),
    ("发布阶段一律先跑冒烟测试", "policy", [], [], ["release"]),
    ("记住：我们的 staging 数据库在 10.0.0.5", "fact", [], [], []),
)  # fmt: skip
# The speaker's own taste and how the agent talks to them are global wherever said; a team's
# convention said inside a repository without a scope word is that repository's (above).
GLOBAL_RULES = (
    ("我喜欢用 tab 缩进", "preference", [], [], []),
    ("I'd rather you answer in English.", "preference", [], [], []),
    ("我一般 commit message 用英文写", "preference", [], ["commit"], []),
    ("In every project, keep functions under 50 lines.", "policy", [], [], []),
)  # fmt: skip


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> World:
    return make_world(tmp_path_factory.mktemp("scenarios"))


@pytest.fixture(scope="module")
def stated(world: World) -> dict[str, dict[str, Any]]:
    """Every rule said once, from the shop, its worktree or a folder of the shop."""
    places = ("shop", "worktree", "shop-api")
    said = {}
    for n, (text, *_) in enumerate(PROJECT_RULES + GLOBAL_RULES):
        reply = world.js(places[n % len(places)], "signal", text)
        assert reply["outcome"] == "stored", (text, reply)
        said[text] = reply["record"]
    return said


@pytest.mark.parametrize(
    ("text", "kind", "paths", "operations", "phases"), PROJECT_RULES + GLOBAL_RULES
)
def test_the_words_set_scope_kind_and_selectors(
    world: World,
    stated: dict[str, dict[str, Any]],
    text: str,
    kind: str,
    paths: list[str],
    operations: list[str],
    phases: list[str],
) -> None:
    record = stated[text]
    is_project = any(text == rule[0] for rule in PROJECT_RULES)
    assert record["scope"] == ("project" if is_project else "global"), text
    assert record["project_id"] == (world.project_id("shop") if is_project else None)
    assert (record["kind"], record["authority"], record["state"]) == (kind, "explicit", "proven")
    assert record["path_patterns"] == paths
    assert record["operations"] == operations
    assert record["phases"] == phases
    assert record["task_types"] == []


def test_the_reply_says_where_the_rule_applies(world: World) -> None:
    said = world.ok("shop", "signal", "In this repo, always run mypy before pushing.")
    assert said.startswith("remembered policy ") and "for this repository" in said
    assert "[ops push]" in said
    said = world.ok("blog", "signal", "我比较喜欢简短的提交信息")
    assert said.startswith("remembered preference ") and "every project (global)" in said


def test_project_rules_never_reach_the_other_repository(
    world: World, stated: dict[str, dict[str, Any]]
) -> None:
    project_ids = {stated[text]["id"] for text, *_ in PROJECT_RULES}
    global_ids = {stated[text]["id"] for text, *_ in GLOBAL_RULES}
    # The shop, its linked worktree and its clone all see the shop's rules ...
    for place in ("shop", "worktree", "clone"):
        listed = {r["id"] for r in world.js(place, "list")}
        assert project_ids | global_ids <= listed, place
    # ... the blog sees none of them, in list, recall or context, in either language.
    blog_list = world.js("blog", "list")
    assert project_ids.isdisjoint(r["id"] for r in blog_list)
    assert global_ids <= {r["id"] for r in blog_list}
    text_list = world.ok("blog", "list")
    for text, *_ in PROJECT_RULES:
        assert text[:30] not in text_list
        recalled = world.js("blog", "recall", text, "--limit", "50")
        assert project_ids.isdisjoint(m["id"] for m in recalled["memories"]), text
        assert text not in recalled["preamble"]
    for task in ("install the dependencies with pnpm", "用 tab 缩进 Python 代码并提交",
                 "write the docs and add a db migration"):  # fmt: skip
        ctx = world.js("blog", "context", "--task", task)
        assert project_ids.isdisjoint(i["id"] for i in [*ctx["resident"], *ctx["manifest"]])
        assert ctx["project"]["name"] == "blog"


def test_selectors_from_the_words_show_in_show_and_list(
    world: World, stated: dict[str, dict[str, Any]]
) -> None:
    review = stated["During review, always check that every endpoint in src/api has a test."]
    shown = world.ok("clone", "show", review["id"])
    assert "path_patterns  src/api/**" in shown and "phases         review" in shown
    for name in SELECTOR_FIELDS:  # every field, set or not
        assert f"  {name} " in shown, name
    listed = world.ok("clone", "list")
    line = next(row for row in listed.splitlines() if row.startswith(review["id"]))
    assert "[paths src/api/**; phases review]" in line
    zh = stated["本项目的 Python 代码一律用 4 个空格缩进"]
    line = next(row for row in listed.splitlines() if row.startswith(zh["id"]))
    assert "[paths *.py]" in line and "project shop (git:" in line
    as_json = {r["id"]: r for r in world.js("clone", "list")}
    for record in stated.values():
        for name in SELECTOR_FIELDS:
            assert as_json[record["id"]][name] == record[name], name


# --- 3. the current repository by default ------------------------------------------------------


def test_recall_context_list_follow_the_current_repository(
    world: World, stated: dict[str, dict[str, Any]]
) -> None:
    tabs = stated["Use tabs in this repo."]["id"]
    here = world.js("shop-api", "recall", "tabs")
    assert tabs in [m["id"] for m in here["memories"]]
    assert here["project"]["name"] == "shop"
    assert tabs not in [m["id"] for m in world.js("blog", "recall", "tabs")["memories"]]
    ctx = world.js("worktree", "context", "--task", "use tabs to indent in this repo")
    assert tabs in [i["id"] for i in ctx["resident"]]
    # `list` in a repository: its own and global memories; `--scope` narrows it.
    only_project = world.js("shop", "list", "--scope", "project")
    assert {r["scope"] for r in only_project} == {"project"}
    assert {r["project_id"] for r in only_project} == {world.project_id("shop")}
    only_global = world.js("shop", "list", "--scope", "global")
    assert only_global and {r["scope"] for r in only_global} == {"global"}
    # `remember --scope project` binds to the repository of the folder it is run in.
    bound = world.js("worktree", "remember", "Lint with ruff", "--scope", "project")["record"]
    assert bound["project_id"] == world.project_id("shop")
    assert bound["id"] in {r["id"] for r in world.js("clone", "list", "--scope", "project")}
    assert bound["id"] not in {r["id"] for r in world.js("blog", "list")}


def test_a_project_named_by_path_dot_or_id_is_the_same_project(
    world: World, stated: dict[str, dict[str, Any]]
) -> None:
    shop_id = world.project_id("shop")
    by_default = [r["id"] for r in world.js("shop", "list", ".")]
    assert stated["Use Node 20 for this project."]["id"] in by_default
    names = (str(world.places["shop"]), str(world.places["worktree"] / "src"), shop_id)
    for name in names:
        assert [r["id"] for r in world.js("blog", "list", "--project", name)] == by_default, name
    assert [r["id"] for r in world.js("shop-api", "list", "--project", ".")] == by_default
    recalled = [
        [m["id"] for m in world.js("blog", "recall", "Node 20", "--project", name)["memories"]]
        for name in names
    ]
    assert recalled[0] and recalled == [recalled[0]] * len(names)
    assert stated["Use Node 20 for this project."]["id"] in recalled[0]
    ctx = world.js(
        "blog", "context", "--task", "which Node version to use for this project", "--project",
        shop_id,
    )  # fmt: skip
    assert ctx["project"]["id"] == shop_id
    assert stated["Use Node 20 for this project."]["id"] in [i["id"] for i in ctx["resident"]]


@pytest.mark.parametrize(
    "args",
    [
        ("recall", "tabs", "--project", "nonsense"),
        ("context", "--task", "indent", "--project", "nonsense"),
        ("list", "--project", "nonsense"),
        ("list", "git:0000000000000000"),
        ("remember", "Use spaces", "--project", "nonsense"),
        ("signal", "Use spaces in this repo.", "--project", "git:0000000000000000"),
    ],
)
def test_an_unknown_project_is_an_error(world: World, args: tuple[str, ...]) -> None:
    before = world.export()
    proc = world.refused("blog", *args)
    (line,) = proc.stderr.splitlines()
    assert line.startswith("cairn: error: ") and args[-1] in line
    assert proc.stdout == ""
    assert world.export() == before


def test_outside_a_repository_a_project_scope_is_refused(
    world: World, stated: dict[str, dict[str, Any]]
) -> None:
    before = world.export()
    for args in (
        ("remember", "Use spaces", "--scope", "project"),
        ("signal", "Use spaces in this repo."),
        ("signal", "在这个仓库里一律用空格缩进"),
    ):
        proc = world.refused("outside", *args)
        (line,) = proc.stderr.splitlines()
        assert "not inside a git repository" in line or "no repository is known" in line
        assert "--project" in line
    assert world.export() == before
    # Naming the project makes it work, from anywhere.
    named = world.js(
        "outside", "remember", "Run make check before pushing", "--scope", "project",
        "--project", str(world.places["clone"]),
    )  # fmt: skip
    assert named["record"]["project_id"] == world.project_id("shop")


def test_outside_a_repository_only_global_memory_applies(
    world: World, stated: dict[str, dict[str, Any]]
) -> None:
    project_ids = {stated[text]["id"] for text, *_ in PROJECT_RULES}
    listed = world.js("outside", "list")
    assert listed and {r["scope"] for r in listed} == {"global"}
    assert "(no memories)" not in world.ok("outside", "list")
    for query in ("tabs", "Use Node 20 for this project.", "在这个仓库里，永远用 pnpm 安装依赖"):
        recalled = world.js("outside", "recall", query, "--limit", "50")
        assert recalled["project"] is None
        assert project_ids.isdisjoint(m["id"] for m in recalled["memories"]), query
    ctx = world.js("outside", "context", "--task", "install dependencies and indent with tabs")
    assert project_ids.isdisjoint(i["id"] for i in [*ctx["resident"], *ctx["manifest"]])
    assert "no git repository" in world.ok("outside", "status")
