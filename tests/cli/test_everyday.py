"""The small things of the everyday loop, each as its class, through the real `cairn`
command in real git repositories and the real Claude Code prompt hook, in English and
Chinese: no "remember that" in what is stored, `explain` in words, the user's own rules
labelled as theirs, whole bodies when piped, confirmations on standard output."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cli.test_scenarios import World, make_world
from cli_runner import invoke_cairn
from hook_events import event


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> World:
    return make_world(tmp_path_factory.mktemp("everyday"))


def bodies(world: World) -> list[str]:
    return [r["body"] for r in world.js("shop", "list", "--everywhere")]


@pytest.mark.parametrize(
    ("said", "stored"),
    [
        ("Remember that the staging URL is https://staging.example.com",
         "The staging URL is https://staging.example.com"),
        ("记住：预发布环境的地址是 staging.example.cn", "预发布环境的地址是 staging.example.cn"),
    ],
)  # fmt: skip
def test_remember_that_is_not_stored_by_signal_or_the_prompt_hook(
    world: World, said: str, stored: str
) -> None:
    out = world.js("shop", "signal", said)
    assert out["record"]["body"] == stored
    # The same words through the prompt hook (a real UserPromptSubmit event) add nothing.
    data = event("prompt-rule", cwd=str(world.places["shop"]), prompt=said)
    proc = invoke_cairn(
        world.home, "hook", "prompt", stdin=json.dumps(data).encode(), cwd=world.places["shop"]
    )
    assert proc.returncode == 0 and proc.stderr == ""
    assert bodies(world).count(stored) == 1 and said not in bodies(world)


def test_explain_speaks_in_words_and_withholds_a_rate_from_too_few_uses(world: World) -> None:
    world.ok("shop", "remember", "--kind", "policy", "Always use pnpm to install dependencies")
    ctx = world.js("shop", "context", "--task", "install the dependencies with pnpm")
    (item,) = [i for i in ctx["resident"] if "pnpm" in (i["body"] or "")]
    world.ok("shop", "feedback", item["application_id"], "used-successfully")
    text = world.ok("shop", "explain")
    assert "{" not in text and "}" not in text  # no Python dicts
    assert "hit rate: not yet known (1 of the 5 judged uses it needs)" in text
    assert "used successfully once" in text and "delivered once" in text


def test_the_users_own_rules_are_labelled_as_theirs(world: World) -> None:
    world.ok("shop", "remember", "--kind", "policy", "Never force-push to main")
    row = next(line for line in world.ok("shop", "list").splitlines() if "force-push" in line)
    assert " user " in row and " learned " not in row
    rid = row.split()[0]
    assert "stated by the user" in world.ok("shop", "show", rid)


def test_a_piped_list_shows_whole_bodies(world: World) -> None:
    long = "When you touch the payment code, " + "check the refund path and the ledger. " * 4
    world.ok("shop", "remember", long.strip())
    listed = world.ok("shop", "list")  # a pipe: not a terminal
    assert " ".join(long.split()) in listed and "…" not in listed


def test_export_confirms_on_standard_output(world: World, tmp_path: Path) -> None:
    target = tmp_path / "out.jsonl"
    proc = world.run("shop", "export", str(target))
    assert proc.returncode == 0 and proc.stderr == ""
    assert proc.stdout.startswith("exported ") and str(target) in proc.stdout
    assert target.read_text(encoding="utf-8").count("\n") > 1
