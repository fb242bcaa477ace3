"""Scenarios of what a user sees, through the real `cairn` command in real git repositories,
in English and Chinese: recall that abstains when nothing stored is relevant, selectors shown
in every view and never silently dropped from a task's context, and the Markdown files a
person edits by hand."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from cli.test_scenarios import SELECTOR_FIELDS, World, context_bodies, make_world

STORED = (
    ("shop", "signal", "Always use pnpm to install dependencies in this repo."),
    ("shop", "signal", "在这个仓库里，部署前一定要先跑集成测试"),
    ("shop", "signal", "Never force-push to main."),
    ("shop", "signal", "我喜欢用 tab 缩进"),
    ("shop", "remember", "My sister Alice lives in Lisbon and works as a nurse."),
    ("shop", "remember", "我的猫叫团子，今年三岁。"),
)


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> World:
    world = make_world(tmp_path_factory.mktemp("views"))
    for place, command, text in STORED:
        world.ok(place, command, text)
    return world


# --- 4. abstention: nothing relevant, nothing returned --------------------------------------

UNRELATED = (
    "what is the capital of France",
    "write a poem about the ocean at night",
    "?!.,;:",
    "法国的首都是哪里",
    "给我写一首关于大海的诗",
)


@pytest.mark.parametrize("query", UNRELATED)
def test_recall_of_something_unrelated_returns_nothing(world: World, query: str) -> None:
    for place in ("shop", "blog"):
        recalled = world.js(place, "recall", query)
        assert recalled["memories"] == [] and recalled["preamble"] == "", (place, query)
    assert world.ok("shop", "recall", query).strip() == "(no memory applies)"


@pytest.mark.parametrize(
    "task", ["write a poem about the ocean at night", "给我写一首关于大海的诗"]
)
def test_context_calls_nothing_relevant_to_an_unrelated_task(world: World, task: str) -> None:
    ctx = world.js("shop", "context", "--task", task)
    for item in [*ctx["resident"], *ctx["manifest"]]:
        why = item["why_applied"]
        relevant = ("words in common with the task", "close in meaning")
        assert not any(r.startswith(relevant) for r in why)


@pytest.mark.slow
def test_recall_abstains_with_the_real_model(tmp_path_factory: pytest.TempPathFactory) -> None:
    real = make_world(tmp_path_factory.mktemp("views-real"), real=True)
    lines = [json.dumps({"body": text, "kind": "policy"}) for _, _, text in STORED]
    stored = real.home.parent / "stored.jsonl"
    stored.write_text("\n".join(lines) + "\n", encoding="utf-8")
    real.ok("shop", "ingest", str(stored))
    for query in ("what is the capital of France", "法国的首都是哪里"):
        assert real.js("shop", "recall", query)["memories"] == [], query


def test_recall_still_finds_what_is_relevant(world: World) -> None:
    # The other half of abstention: a relevant query is answered, in either language.
    found = world.js("shop", "recall", "install dependencies with pnpm")
    assert "Always use pnpm to install dependencies in this repo." in [
        m["body"] for m in found["memories"]
    ]
    found = world.js("shop", "recall", "Alice Lisbon")
    assert found["memories"][0]["body"].startswith("My sister Alice lives in Lisbon")


# --- 6. selectors shown, and never silently dropped ------------------------------------------


@pytest.fixture(scope="module")
def scoped(world: World) -> dict[str, Any]:
    """A rule with a value in every selector dimension."""
    reply = world.js(
        "shop", "remember", "Squash-merge feature branches that touch the API",
        "--scope", "project", "--kind", "policy", "--path", "src/api/**",
        "--operation", "merge", "--phase", "review", "--task-type", "feature",
    )  # fmt: skip
    return dict(reply["record"])


EVERY_SELECTOR = {
    "scope": "project",
    "path_patterns": ["src/api/**"],
    "operations": ["merge"],
    "phases": ["review"],
    "task_types": ["feature"],
}


def test_every_view_shows_every_selector(world: World, scoped: dict[str, Any]) -> None:
    rid = scoped["id"]
    views = {
        "remember": scoped,
        "show": world.js("clone", "show", rid),
        "list": next(r for r in world.js("clone", "list") if r["id"] == rid),
        "history": world.js("clone", "show", rid, "--history")[-1],
        "expand": world.js("clone", "expand", rid)["record"],
        "recall": next(
            m
            for m in world.js("clone", "recall", "squash merge feature branches")["memories"]
            if m["id"] == rid
        ),
    }
    for view, record in views.items():
        assert set(SELECTOR_FIELDS) <= set(record), view
        assert {k: record[k] for k in EVERY_SELECTOR} == EVERY_SELECTOR, view
        assert record["project_id"] == world.project_id("shop"), view
    shown = world.ok("clone", "show", rid)
    for line in (
        "scope          project",
        "path_patterns  src/api/**",
        "operations     merge",
        "phases         review",
        "task_types     feature",
    ):
        assert line in shown
    row = next(r for r in world.ok("clone", "list").splitlines() if r.startswith(rid))
    assert "[paths src/api/**; ops merge; phases review; types feature]" in row
    assert f"project shop ({world.project_id('shop')})" in row and "policy" in row
    expanded = world.ok("clone", "expand", rid)
    assert "path_patterns  src/api/**" in expanded and "task_types     feature" in expanded


@pytest.mark.parametrize(
    "text",
    [
        "During review, always check that every endpoint in src/api has a test.",
        "在代码评审阶段，一律检查 src/api 下的接口有没有测试",
    ],
)
def test_a_rule_for_an_unstated_phase_goes_to_the_manifest_saying_so(
    world: World, text: str
) -> None:
    rid = world.js("shop", "signal", text)["record"]["id"]
    task = ("add an endpoint", "--path", "src/api/users.py")
    ctx = world.js("worktree", "context", "--task", *task)
    (item,) = [i for i in ctx["manifest"] if i["id"] == rid]
    assert "path src/api/users.py matches src/api/**" in item["why_applied"]
    assert "phase not stated (rule applies to phase review)" in item["why_applied"]
    assert rid not in [i["id"] for i in ctx["resident"]]
    said = world.ok("worktree", "context", "--task", *task)
    assert rid in said and "phase not stated" in said
    # Stated, the phase matches and the rule is applied in full; another phase leaves it out.
    ctx = world.js("worktree", "context", "--task", *task, "--phase", "review")
    (item,) = [i for i in ctx["resident"] if i["id"] == rid]
    assert "phase review matches" in item["why_applied"]
    ctx = world.js("worktree", "context", "--task", *task, "--phase", "implement")
    assert rid not in [i["id"] for i in [*ctx["resident"], *ctx["manifest"]]]


def test_every_unstated_dimension_is_named(world: World, scoped: dict[str, Any]) -> None:
    ctx = world.js("shop", "context", "--task", "look over the branch")
    (item,) = [i for i in ctx["manifest"] if i["id"] == scoped["id"]]
    why = " ".join(item["why_applied"])
    for dimension in ("path", "operation", "phase", "task type"):
        assert f"{dimension} not stated" in why, dimension
    ctx = world.js(
        "shop", "context", "--task", "look over the branch", "--path", "src/api/users.py",
        "--operation", "merge", "--phase", "review", "--task-type", "feature",
    )  # fmt: skip
    (item,) = [i for i in ctx["resident"] if i["id"] == scoped["id"]]
    assert "not stated" not in " ".join(item["why_applied"])
    assert "Squash-merge feature branches" in " ".join(context_bodies(ctx))


# --- 8. Markdown a person owns ----------------------------------------------------------------


def project_file(world: World, place: str) -> Path:
    project_id = world.project_id(place)
    (path,) = [
        p
        for p in (world.home / "projects").glob("*.md")
        if f'"project_id":"{project_id}"' in p.read_text(encoding="utf-8")
    ]
    return path


def test_an_entry_added_by_hand_to_a_project_file_becomes_its_memory(world: World) -> None:
    path = project_file(world, "shop")
    text = path.read_text(encoding="utf-8")
    assert "## Policies\n" in text
    typed = "### 接口测试\npaths: src/api/**\n\n在 src/api 下新增接口时，一律先写失败的测试。\n\n"
    path.write_text(text.replace("## Policies\n", "## Policies\n\n" + typed, 1), encoding="utf-8")
    report = world.js("blog", "sync")  # sync works on every file, wherever it is run
    (added,) = report["added"]
    assert report["conflicts"] == []
    shown = world.js("shop", "show", added)
    assert shown["body"] == "在 src/api 下新增接口时，一律先写失败的测试。"
    assert (shown["scope"], shown["project_id"]) == ("project", world.project_id("shop"))
    assert (shown["kind"], shown["path_patterns"]) == ("policy", ["src/api/**"])
    assert added in {r["id"] for r in world.js("worktree", "list")}
    assert added not in {r["id"] for r in world.js("blog", "list")}
    assert f"<!-- cairn {added}@1 -->" in path.read_text(encoding="utf-8")
    assert world.js("shop", "sync")["added"] == []


def test_a_conflict_in_a_project_file_keeps_the_users_text(world: World) -> None:
    rid = world.js("shop", "signal", "In this repo, keep every line under 100 characters.")[
        "record"
    ]["id"]
    path = project_file(world, "shop")
    stale = path.read_text(encoding="utf-8")
    world.ok("shop", "correct", rid, "In this repo, keep every line under 88 characters.")
    mine = "\nIn this repo, keep every line under 120 characters.\n"
    edited = stale.replace("\nIn this repo, keep every line under 100 characters.\n", mine)
    assert edited != stale
    path.write_text(edited, encoding="utf-8")
    proc = world.refused("shop", "sync", code=1)
    (line,) = proc.stderr.splitlines()
    assert line.startswith(f"cairn: error: sync could not apply {path}:") and rid in line
    assert f"conflict {path}:" in proc.stdout
    text = path.read_text(encoding="utf-8")
    assert "under 120 characters" in text and "under 88 characters" in text
    shown = world.js("shop", "show", rid)
    assert (shown["version"], shown["body"]) == (
        2, "In this repo, keep every line under 88 characters.",
    )  # fmt: skip
    # Under --json the failure is one JSON object on stderr, with the same exit code.
    again = world.refused("shop", "--json", "sync", code=1)
    (error,) = again.stderr.splitlines()
    assert json.loads(error)["code"] == 1 and rid in json.loads(error)["error"]
    assert json.loads(again.stdout)["conflicts"][0]["record_id"] == rid
