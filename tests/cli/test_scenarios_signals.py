"""Scenarios of forgetting and correcting by words, and of feedback, through the real `cairn`
command in real git repositories, in English and Chinese: a forget or a correction acts only
on the one memory that clearly matches, in the current scope; anything else changes nothing
(the export stays byte-identical), exits 2 and shows the candidates; an application has one
outcome, whatever a hook retries."""

from __future__ import annotations

import json
from typing import Any

import pytest

from cli.test_scenarios import World, context_bodies, make_world

RULES = {
    "pnpm": ("shop", "Always use pnpm to install dependencies in this repo."),
    "lint": ("shop", "From now on, always run the linter before committing."),
    "short": ("blog", "I prefer short commit messages."),
    "english": ("blog", "From now on, write commit messages in English."),
    "integration": ("shop", "在这个仓库里，部署前一定要先跑集成测试"),
    "commit-zh": ("shop", "以后提交信息一律用英文写"),
    "squash-zh": ("blog", "我们团队一律用 squash 合并提交"),
}


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> World:
    return make_world(tmp_path_factory.mktemp("signals"))


@pytest.fixture(scope="module")
def rules(world: World) -> dict[str, dict[str, Any]]:
    said = {}
    for name, (place, text) in RULES.items():
        reply = world.js(place, "signal", text)
        assert reply["outcome"] == "stored", reply
        said[name] = reply["record"]
    assert said["pnpm"]["scope"] == said["integration"]["scope"] == "project"
    return said


def live_ids(world: World, place: str) -> set[str]:
    return {r["id"] for r in world.js(place, "list")}


def refused_signal(world: World, place: str, text: str) -> dict[str, Any]:
    """A signal that must change nothing: exit 2, the export byte-identical, the reply in
    text and in JSON."""
    before = world.export()
    said = world.refused(place, "signal", text)
    assert said.stdout.startswith("nothing "), said.stdout
    reply = world.refused(place, "--json", "signal", text)
    assert world.export() == before, text
    data: dict[str, Any] = json.loads(reply.stdout)
    for candidate in data["candidates"]:
        assert candidate["record"]["id"] in said.stdout  # every candidate shown with its id
    return data


# --- 2. forget and correct by words ------------------------------------------------------------


@pytest.mark.parametrize(
    ("place", "text"),
    [
        ("shop", "Forget what I said about Kubernetes"),
        ("shop", "Forget the rule about deploying on Fridays"),
        ("blog", "please forget the note about the staging database password"),
        ("shop", "忘掉关于 Docker 镜像的那条规则"),
        ("blog", "忘掉周五不能发版那条"),
        ("outside", "Forget the rule about Terraform modules"),
    ],
)
def test_a_forget_of_something_never_stored_changes_nothing(
    world: World, rules: dict[str, dict[str, Any]], place: str, text: str
) -> None:
    data = refused_signal(world, place, text)
    assert (data["kind"], data["outcome"]) == ("forget", "no-match")
    assert data["record"] is None and data["tombstone"] is None
    # The closest memories are listed, so the user can pick one by id if they meant it.
    assert data["candidates"], text
    assert all(c["coverage"] < 0.6 for c in data["candidates"])


@pytest.mark.parametrize("text", ["Forget the pnpm rule", "忘掉 pnpm 那条规则"])
def test_a_forget_in_another_repository_never_touches_this_ones_rules(
    world: World, rules: dict[str, dict[str, Any]], text: str
) -> None:
    for place in ("blog", "outside"):
        data = refused_signal(world, place, text)
        assert data["outcome"] == "no-match"
        assert rules["pnpm"]["id"] not in [c["record"]["id"] for c in data["candidates"]]
    assert rules["pnpm"]["id"] in live_ids(world, "shop")


def test_a_forget_that_matches_several_asks_for_an_id(
    world: World, rules: dict[str, dict[str, Any]]
) -> None:
    data = refused_signal(world, "blog", "forget the commit message rule")
    assert data["outcome"] == "ambiguous"
    shown = {c["record"]["id"] for c in data["candidates"]}
    assert shown == {rules["short"]["id"], rules["english"]["id"]}


@pytest.mark.parametrize(
    ("name", "place", "text"),
    [
        ("pnpm", "worktree", "Forget the pnpm rule"),
        ("lint", "clone", "forget what I said about the linter"),
        ("squash-zh", "blog", "忘记 squash 合并那条"),
    ],
)
def test_a_clear_match_is_forgotten_and_can_be_restored(
    world: World, rules: dict[str, dict[str, Any]], name: str, place: str, text: str
) -> None:
    target = rules[name]
    others = live_ids(world, place) - {target["id"]}
    said = world.ok(place, "signal", text)
    assert said.startswith(f"forgot {target['id']}: ")
    assert live_ids(world, place) == others
    assert target["id"] in {r["id"] for r in world.js(place, "list", "--all")}
    world.ok(place, "restore", target["id"])
    assert target["id"] in live_ids(world, place)


def test_a_correction_without_a_clear_match_changes_nothing(
    world: World, rules: dict[str, dict[str, Any]]
) -> None:
    # Nothing about Terraform or Java is stored; the blog has no pnpm rule (the shop's is not
    # in its scope). A correction that names a package manager would take the shop's pnpm
    # rule (test_scenarios_corrections.py).
    for place, text in (
        ("shop", "Actually, use Terraform 1.6"),
        ("shop", "不对，应该用 Java 21"),
        ("blog", "Actually, use pnpm 11"),
        ("outside", "No, use pnpm 12"),
    ):
        data = refused_signal(world, place, text)
        assert (data["kind"], data["outcome"]) == ("correct", "no-match"), text
        if place != "shop":
            assert rules["pnpm"]["id"] not in [c["record"]["id"] for c in data["candidates"]]
    assert world.js("shop", "show", rules["pnpm"]["id"])["version"] == 1


def test_a_correction_that_matches_several_asks_for_an_id(world: World) -> None:
    world.ok("blog", "signal", "Always lint the TypeScript code with eslint 8.")
    world.ok("blog", "signal", "Always format the TypeScript code with eslint 8 too.")
    data = refused_signal(world, "blog", "Actually, use eslint 9")
    assert data["outcome"] == "ambiguous" and len(data["candidates"]) == 2


@pytest.mark.parametrize(
    ("place", "text"),
    [
        ("shop", "In this repo, always run mypy before pushing."),
        ("worktree", "这个项目里一律用 ruff 格式化代码"),
        ("blog", "I'd rather you answer in English."),
    ],
)
def test_a_rule_said_again_adds_no_record(world: World, place: str, text: str) -> None:
    first = world.js(place, "signal", text)
    assert first["outcome"] == "stored"
    before = {r["id"] for r in world.js(place, "list", "--all")}
    for where in (place, "clone" if first["record"]["scope"] == "project" else "outside"):
        again = world.js(where, "signal", text)
        assert (again["outcome"], again["record"]["id"]) == ("duplicate", first["record"]["id"])
        said = world.ok(where, "signal", text)
        assert said == f"already remembered as {first['record']['id']}; nothing added\n"
    assert {r["id"] for r in world.js(place, "list", "--all")} == before
    # `remember` of the same text in the same scope returns the same record too.
    record = first["record"]
    same_place = ["--scope", record["scope"]]
    for option, name in (("--path", "path_patterns"), ("--operation", "operations")):
        same_place += [part for value in record[name] for part in (option, value)]
    reply = world.js(place, "remember", text, "--kind", record["kind"], *same_place)
    assert (reply["created"], reply["duplicate_of"]) == (False, first["record"]["id"])


def test_a_rule_said_again_after_it_was_forgotten_is_remembered_again(world: World) -> None:
    text = "From now on, prefer ripgrep over grep."
    first = world.js("blog", "signal", text)["record"]
    world.ok("blog", "signal", "forget the ripgrep rule")
    assert first["id"] not in live_ids(world, "blog")
    again = world.js("blog", "signal", text)
    assert again["outcome"] == "stored" and again["record"]["id"] != first["id"]
    assert again["record"]["id"] in live_ids(world, "blog")
    # The same for `remember`, and a second forget by words finds the new record.
    said = world.ok("blog", "signal", "forget the ripgrep rule")
    assert said.startswith(f"forgot {again['record']['id']}")
    kept = world.js("blog", "remember", "Prefer ripgrep over grep")["record"]["id"]
    world.ok("blog", "forget", kept)
    back = world.js("blog", "remember", "Prefer ripgrep over grep")
    assert back["created"] and back["record"]["id"] != kept
    assert back["record"]["id"] in live_ids(world, "blog")
    assert world.ok("blog", "remember", "Prefer ripgrep over grep").startswith(
        f"already remembered as {back['record']['id']}"
    )


# --- 5. one outcome per application ----------------------------------------------------------


def counters(world: World, record_id: str) -> tuple[int, int, int, int]:
    r = world.js("shop", "show", record_id)
    return (r["used_count"], r["proof_count"], r["ignored_count"], r["failure_count"])


def test_feedback_retried_then_replaced_counts_only_the_current_outcome(world: World) -> None:
    record = world.js("shop", "signal", "在这个仓库里，每次提交前都要先跑 make check")["record"]
    ctx = world.js("shop", "context", "--task", "提交代码", "--operation", "commit")
    (item,) = [i for i in ctx["resident"] if i["id"] == record["id"]]
    app = item["application_id"]
    first = world.ok("shop", "feedback", app, "used-successfully")
    assert first.strip() == (f"used-successfully: {record['id']} used_count 0→1, proof_count 0→1")
    for _ in range(2):  # a hook retrying
        said = world.ok("shop", "feedback", app, "used-successfully")
        assert said.strip() == f"used-successfully: already recorded for {app}; nothing changed"
    assert counters(world, record["id"]) == (1, 1, 0, 0)
    replaced = world.js("shop", "feedback", app, "contributed-to-failure")
    assert replaced["previous"] == "used-successfully"
    # The failure is one uncorroborated report (the command line knows no session): the
    # success is taken back, no failure is counted.
    assert replaced["changes"] == {"used_count": [1, 0], "proof_count": [1, 0]}
    assert counters(world, record["id"]) == (0, 0, 0, 0)
    assert world.ok("shop", "feedback", app, "contributed-to-failure").endswith("nothing changed\n")
    # Back to the first outcome: it replaces the failure (it is not a retry of the first).
    back = world.ok("shop", "feedback", app, "used-successfully")
    assert "(replaces contributed-to-failure)" in back and "used_count 0→1" in back
    assert counters(world, record["id"]) == (1, 1, 0, 0)
    explained = world.js("shop", "explain")["records"][record["id"]]
    assert explained["outcomes"] == {"used-successfully": 1}
    # A second application of the same memory adds its own outcome, once.
    ctx = world.js("worktree", "context", "--task", "commit the fix", "--operation", "commit")
    (item,) = [i for i in ctx["resident"] if i["id"] == record["id"]]
    for _ in range(3):
        world.ok("worktree", "feedback", item["application_id"], "ignored")
    assert counters(world, record["id"]) == (1, 1, 1, 0)
    assert "make check" in " ".join(context_bodies(ctx))


# --- Clear Chinese forgets and clear corrections need the real model: the hashing embedder
# has no sense of Chinese words, and none of paraphrase, so with it few statements are ever
# close enough in meaning to act on.


@pytest.mark.slow
def test_chinese_and_clear_corrections_by_words_with_the_real_model(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    real = make_world(tmp_path_factory.mktemp("signals-real"), real=True)
    # Conventions said in a repository without a scope word are that repository's: both
    # commit-message rules are the shop's.
    ids = {
        name: real.js(place, "signal", text)["record"]["id"]
        for name, place, text in (
            ("integration", "shop", "在这个仓库里，部署前一定要先跑集成测试"),
            ("english", "shop", "以后提交信息一律用英文写"),
            ("one-line", "shop", "提交信息以后一律写成一行"),
        )
    }
    for place, text, outcome in (
        ("blog", "忘掉集成测试那条规则", "no-match"),  # the shop's rule, said in the blog
        ("shop", "忘掉关于 Docker 镜像的那条规则", "no-match"),
        ("shop", "忘掉提交信息那条", "ambiguous"),
        ("shop", "不对，应该用 Java 21", "no-match"),
    ):
        before = real.export()
        proc = real.refused(place, "--json", "signal", text)
        assert json.loads(proc.stdout)["outcome"] == outcome, text
        assert real.export() == before, text
    said = real.ok("worktree", "signal", "忘掉集成测试那条规则")
    assert said.startswith(f"forgot {ids['integration']}: ")
    assert {r["id"] for r in real.js("shop", "list")} == {ids["english"], ids["one-line"]}
    # A correction, in Chinese then in English: the one clear match gets a new version.
    pnpm = real.js("clone", "signal", "在这个仓库里，一律用 pnpm 8 安装依赖")["record"]["id"]
    fixed = real.js("worktree", "signal", "不对，应该用 pnpm 9")
    assert (fixed["outcome"], fixed["record"]["id"]) == ("corrected", pnpm)
    assert fixed["record"]["version"] == 2 and "pnpm 9" in fixed["record"]["body"]
    assert (fixed["record"]["scope"], fixed["record"]["operations"]) == ("project", ["install"])
    said = real.ok("shop", "signal", "Actually, use pnpm 10")
    assert said.startswith(f"corrected {pnpm} (now version 3): ") and "pnpm 10" in said
    history = real.js("shop", "show", pnpm, "--history")
    assert [(h["version"], h["state"]) for h in history] == [
        (1, "superseded"), (2, "superseded"), (3, "proven"),
    ]  # fmt: skip
    refused = real.refused("blog", "--json", "signal", "Actually, use pnpm 11")
    assert json.loads(refused.stdout)["outcome"] == "no-match"
    # Chinese names a rule in its own word order: "用英文写提交信息" is "提交信息一律用英文写".
    said = real.ok("shop", "signal", "用英文写提交信息那条，忘了吧")
    assert said.startswith(f"forgot {ids['english']}: ")
    assert {r["id"] for r in real.js("shop", "list")} == {ids["one-line"], pnpm}
