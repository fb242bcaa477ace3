"""Repositories and ids a person can read and type back, through the real `cairn` command in
real git repositories, in English and Chinese: a repository's readable name beside its id in
every view and in its Markdown file's name, ``--project`` as a path, a name or an id (an
unknown one refused), and memory ids by a unique prefix or by an application's id."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from cairn import Memory
from cairn.adapters.repository import repository_identity
from cli.test_scenarios import World, git, make_world


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> World:
    world = make_world(tmp_path_factory.mktemp("project"))
    git(world.places["blog"], "remote", "add", "origin", "git@github.com:Acme/Blog-Site.git")
    world.ok("shop", "remember", "--scope", "project", "Always use pnpm to install dependencies.")
    world.ok("blog", "remember", "--scope", "project", "在这个仓库里，部署前一定要先跑集成测试")
    world.ok("shop", "remember", "Write commit messages in English.")
    return world


def test_every_view_shows_the_name_beside_the_id(world: World) -> None:
    shop, blog = world.project_id("shop"), world.project_id("blog")
    listed = world.ok("shop", "list", "--everywhere", "--wide")
    assert f"project shop ({shop})" in listed and f"project blog-site ({blog})" in listed
    rule = next(r for r in world.js("shop", "list") if r["scope"] == "project")
    assert f"shop ({shop})" in world.ok("shop", "show", rule["id"])
    context = world.ok("shop", "context", "--task", "install the dependencies")
    assert context.splitlines()[0] == f"project shop ({shop})"
    # Every printed item, "Apply these" included, carries its memory id.
    assert f"- {rule['id']}  Always use pnpm" in context


def test_markdown_files_are_named_by_the_repository(world: World) -> None:
    names = sorted(p.name for p in (world.home / "projects").glob("*.md"))
    assert len(names) == 2 and names[0].startswith("blog-site-") and names[1].startswith("shop-")
    text = (world.home / "projects" / names[1]).read_text(encoding="utf-8")
    assert "Always use pnpm" in text and "shop" in text


@pytest.mark.parametrize("typed", ["shop", "SHOP", "blog-site", "acme/blog-site", "ID", "PATH"])
def test_a_project_is_taken_by_name_id_or_path(world: World, typed: str) -> None:
    place = "blog" if "blog" in typed else "shop"
    pid = world.project_id(place)
    value = {"ID": pid, "PATH": str(world.places["shop-api"])}.get(typed, typed)
    listed = world.js("outside", "list", "--project", value)
    assert listed and {r["project_id"] for r in listed} == {pid}, typed


@pytest.mark.parametrize("typed", ["nosuch", "git:ffffffffffffffff", "/no/such/folder", "商店"])
def test_an_unknown_project_is_refused_not_answered_globally(world: World, typed: str) -> None:
    for command in (["list"], ["context", "--task", "deploy"], ["recall", "deploy"]):
        proc = world.refused("outside", *command, "--project", typed)
        assert proc.stdout == "" and len(proc.stderr.strip().splitlines()) == 1, (command, typed)


def test_an_older_file_is_renamed_when_the_repository_is_named(tmp_path: Path) -> None:
    """Memory written before names existed sits in ``projects/project-<hash>.md``; the
    first command in the repository names it and the file moves, its entries intact."""
    world = make_world(tmp_path)
    pid = repository_identity(world.places["shop"]).project_id  # (status would name it)
    world.ok("outside", "status")  # the home, as the command makes it
    config = {"memory": {"embeddings": {"provider": "hashing"}}}
    with Memory.open(world.home / "memory.db", config=config) as mem:  # tells no name
        mem.remember("Use tabs here", scope="project", project_id=pid)
    (old,) = (world.home / "projects").glob("*.md")
    legacy = old.with_name("project-" + old.name.rsplit("-", 1)[1])
    if old != legacy:
        os.replace(old, legacy)
    world.ok("shop", "list")
    files = sorted(p.name for p in (world.home / "projects").glob("*.md"))
    assert len(files) == 1 and files[0].startswith("shop-"), files
    assert "Use tabs here" in (world.home / "projects" / files[0]).read_text("utf-8")


def shortest_unique(wanted: str, others: list[str]) -> str:
    for n in range(6, len(wanted) + 1):
        if not any(o.startswith(wanted[:n]) for o in others if o != wanted):
            return wanted[:n]
    raise AssertionError("equal ids")


def test_ids_by_prefix_and_by_application(world: World) -> None:
    ids = [r["id"] for r in world.js("shop", "list", "--everywhere")]
    chinese = next(r for r in world.js("blog", "list") if "集成测试" in r["body"])
    short = shortest_unique(chinese["id"], ids)
    assert "集成测试" in world.ok("blog", "expand", short.lower())
    shared = os.path.commonprefix(ids)  # noqa: RUF071 (ids: a character prefix is meant)
    if len(shared) >= 6:
        proc = world.refused("shop", "forget", shared[:6])
        assert all(i in proc.stderr for i in ids[:5]) and "type more" in proc.stderr
        assert len(world.js("shop", "list", "--everywhere")) == len(ids)  # nothing forgotten
    context = world.ok("shop", "context", "--task", "install the dependencies")
    app_id = re.search(r"\[app (\w+)\]", context)
    assert app_id is not None
    shown = world.js("shop", "show", app_id.group(1))
    assert shown["body"].startswith("Always use pnpm")  # the application's memory


def test_a_session_start_hook_names_the_repository(tmp_path: Path) -> None:
    """Through the real SessionStart event, as Claude Code sends it: the repository is
    named before anything else happened in this home."""
    import json

    from cairn.provider.contract import projects as pc
    from cli_runner import invoke_cairn
    from hook_events import event

    world = make_world(tmp_path)
    git(world.places["shop"], "remote", "add", "origin", "https://github.com/acme/shop-web.git")
    data = event("session-start", cwd=str(world.places["shop"]))
    proc = invoke_cairn(
        world.home, "hook", "session-start", stdin=json.dumps(data).encode(),
        cwd=world.places["shop"],
    )  # fmt: skip
    assert proc.returncode == 0 and proc.stderr == ""
    config = {"memory": {"embeddings": {"provider": "hashing"}}}
    with Memory.open(world.home / "memory.db", config=config) as mem:
        named = mem.provider.query(pc.ProjectsQuery())
        assert isinstance(named, pc.ProjectsResponse)
        assert [(p.name, p.remote) for p in named.projects] == [
            ("shop-web", "github.com/acme/shop-web")
        ]
