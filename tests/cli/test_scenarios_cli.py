"""Scenarios of the command line's conventions, through the real `cairn` command in real git
repositories: global options anywhere, errors as one line (one JSON object under --json)
with the exit code of their kind, a closed pipe, the effective configuration, the current
project in `status`, `show --as-of` and `correct` with the same text."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from cli.test_scenarios import World, make_world
from cli_runner import use_test_embedder


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> World:
    world = make_world(tmp_path_factory.mktemp("conventions"))
    world.ok("shop", "signal", "Use tabs in this repo.")
    world.ok("blog", "remember", "Answer in English, even when asked in Chinese.")
    return world


def test_global_options_go_before_or_after_the_command(world: World) -> None:
    assert world.ok("shop", "list", "--json") == world.ok("shop", "--json", "list")
    after = json.loads(world.ok("shop", "recall", "tabs", "--json"))
    assert after["memories"][0]["body"] == "Use tabs in this repo."
    world.ok("shop", "remember", "Acme deploys on Tuesdays.", "--tenant", "acme")
    acme = world.js("shop", "list", "--tenant", "acme")
    assert [r["body"] for r in acme] == ["Acme deploys on Tuesdays."]
    assert "Acme" not in world.ok("shop", "list")
    other_home = world.home.parent / "other-home"
    use_test_embedder(other_home)
    status = json.loads(world.ok("blog", "status", "--home", str(other_home), "--json"))
    assert status["location"] == str(other_home / "memory.db")
    assert status["counts"]["records"] == 0
    # After "--" an option-like word is text, not an option.
    said = world.js("blog", "remember", "--", "--json is a flag, not a memory")
    assert said["record"]["body"] == "--json is a flag, not a memory"


@pytest.mark.parametrize(
    ("args", "code", "words"),
    [
        (("show", "01NOSUCHID"), 2, "no memory with id 01NOSUCHID"),
        (("forget", "01NOSUCHID"), 2, "no memory with id"),
        (("feedback", "01NOSUCHAPP", "ignored"), 2, "no application"),
        (("recall", "tabs", "--project", "nonsense"), 2, "nonsense"),
        (("remember", ""), 2, "body is empty"),
        (("list", "--bogus"), 2, "No such option '--bogus'"),
        (("frobnicate",), 2, "No such command 'frobnicate'"),
        (("feedback", "X", "maybe"), 2, "'maybe' is not one of"),
    ],
)
def test_under_json_an_error_is_one_json_object_on_stderr(
    world: World, args: tuple[str, ...], code: int, words: str
) -> None:
    plain = world.refused("shop", *args, code=code)
    (line,) = plain.stderr.splitlines()
    assert line.startswith("cairn: error: ") and words in line
    for shaped in (("--json", *args), (*args, "--json")):
        proc = world.refused("shop", *shaped, code=code)
        assert proc.stdout == ""
        (line,) = proc.stderr.splitlines()
        error = json.loads(line)
        assert set(error) == {"error", "code"} and error["code"] == code
        assert words in error["error"]


@pytest.mark.parametrize(
    "args",
    [
        ("remember",),
        ("recall",),
        ("context",),
        ("list", "--limit", "0"),
        ("list", "--scope", "everywhere"),
        ("feedback", "only-one-argument"),
        ("signal", "--project"),
    ],
)
def test_a_usage_error_is_one_line_and_exit_2(world: World, args: tuple[str, ...]) -> None:
    proc = world.refused("shop", *args)
    (line,) = proc.stderr.splitlines()
    assert line.startswith("cairn: error: ") and f"(see 'cairn {args[0]} --help')" in line
    assert proc.stdout == ""


def test_export_into_a_closed_pipe_ends_quietly(tmp_path: Path) -> None:
    home = tmp_path / "home"
    use_test_embedder(home)
    many = tmp_path / "many.jsonl"
    many.write_text(
        "".join(json.dumps({"body": f"memory number {n} " + "x" * 300}) + "\n" for n in range(400)),
        encoding="utf-8",
    )
    env = {**os.environ, "CAIRN_HOME": str(home), "PYTHONPATH": os.pathsep.join(sys.path)}
    env.pop("CAIRN_CONFIG", None)
    cairn = f"{shlex.quote(sys.executable)} -m cairn.cli.main"
    subprocess.run(f"{cairn} ingest {shlex.quote(str(many))}", shell=True, env=env, check=True)
    # The export is far larger than a pipe's buffer: `head` closes it while cairn writes.
    proc = subprocess.run(
        ["bash", "-c", f"set -o pipefail; {cairn} export | head -1"],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
        check=False,
    )
    assert (proc.returncode, proc.stderr) == (0, "")
    (line,) = proc.stdout.splitlines()
    assert json.loads(line)["format"] == "cairn.export.v1"
    assert len(subprocess.run(f"{cairn} export", shell=True, env=env, capture_output=True,
                              check=True).stdout) > 256 * 1024  # fmt: skip


def test_config_show_prints_every_default_of_agents_default(world: World) -> None:
    from cairn.config import AgentConfig

    defaults: dict[str, Any] = AgentConfig().model_dump(mode="json")
    shown = world.js("shop", "config", "show")
    assert shown["agents"]["default"] == defaults
    assert yaml.safe_load(world.ok("shop", "config", "show"))["agents"]["default"] == defaults
    # A setting of one's own is shown in place, every other default beside it.
    home = world.home.parent / "configured-home"
    home.mkdir()
    (home / "config.yaml").write_text(
        "memory:\n  embeddings:\n    provider: hashing\n"
        "agents:\n  default:\n    rag:\n      maxResults: 3\n  reviewer:\n    rag:\n"
        "      minScore: 0.3\n",
        encoding="utf-8",
    )
    shown = world.js("shop", "config", "show", "--home", str(home))
    expected = json.loads(json.dumps(defaults))
    expected["rag"]["maxResults"] = 3
    assert shown["agents"]["default"] == expected
    assert shown["agents"]["reviewer"]["rag"]["minScore"] == 0.3
    assert shown["agents"]["reviewer"]["rag"]["maxResults"] == defaults["rag"]["maxResults"]
    assert shown["memory"]["embeddings"]["provider"] == "hashing"


def test_status_names_the_current_project(world: World) -> None:
    shop_id = world.project_id("shop")
    for place in ("shop", "shop-api", "worktree", "clone"):
        said = world.ok(place, "status")
        assert f"here         project shop ({shop_id})" in said, place
    blog = world.js("blog", "status")["project"]
    assert blog["name"] == "blog" and blog["id"] != shop_id
    assert world.js("outside", "status")["project"] is None
    said = world.ok("outside", "status")
    assert "here         no git repository" in said
    assert "memories     " in said and "current" in said


def test_show_as_of_before_a_record_existed_says_so(world: World) -> None:
    record = world.js("shop", "remember", "记住：预发环境的数据库叫 orders-stage")["record"]
    proc = world.refused("shop", "show", record["id"], "--as-of", "2000-01-01")
    (line,) = proc.stderr.splitlines()
    assert f"memory {record['id']} did not exist yet at 2000-01-01" in line
    error = json.loads(
        world.refused("shop", "--json", "show", record["id"], "--as-of", "2000-01-01").stderr
    )
    assert error["code"] == 2 and "did not exist yet" in error["error"]
    world.ok("shop", "correct", record["id"], "记住：预发环境的数据库叫 orders-stage-2")
    then = world.js("shop", "show", record["id"], "--as-of", record["recorded_at"])
    assert (then["version"], then["body"]) == (1, "记住：预发环境的数据库叫 orders-stage")
    now = world.js("shop", "show", record["id"])
    assert (now["version"], now["body"]) == (2, "记住：预发环境的数据库叫 orders-stage-2")


@pytest.mark.parametrize(
    "text", ["Run the formatter before every commit.", "每次提交前先运行格式化工具"]
)
def test_correct_with_the_same_text_is_a_no_op(world: World, text: str) -> None:
    rid = world.js("blog", "remember", text)["record"]["id"]
    before = world.export()
    said = world.ok("blog", "correct", rid, text)
    assert said.strip() == f"{rid} already says that (version 1, nothing changed)"
    reply = world.js("blog", "correct", rid, text)
    assert (reply["changed"], reply["record"]["version"]) == (False, 1)
    assert world.export() == before
    assert len(world.js("blog", "show", rid, "--history")) == 1
