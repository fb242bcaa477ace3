"""The prompt hook reads the user's words as `cairn signal` does (issues 21 and 25), through
the real command and recorded Claude Code events in a real git repository: a Chinese
convention is kept for this repository, a correction shows the old and the new text, and a
statement the reader is unsure of is passed on to the agent as a question, not dropped."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from hooks.test_hook_command import cairn, home, hook, memories, repo  # noqa: F401

pytestmark = pytest.mark.slow  # many cairn processes


def notice(out: dict[str, Any] | None) -> str:
    assert out is not None
    said: str = out["systemMessage"]
    return said


def test_a_chinese_convention_said_in_a_prompt_is_kept_for_this_repository(
    home: Path,  # noqa: F811
    repo: Path,  # noqa: F811
) -> None:
    out = hook(home, repo, "prompt", "prompt-task", prompt="别再往 main 直接 push 了，都走 PR")
    assert notice(out).startswith("cairn remembered for this repository: 别再往 main")
    (rule,) = [m for m in memories(home, repo) if "PR" in m["body"]]
    assert (rule["scope"], rule["operations"]) == ("project", ["push"])


def test_a_correction_in_a_prompt_shows_the_old_and_the_new_text(
    home: Path,  # noqa: F811
    repo: Path,  # noqa: F811
) -> None:
    rule = "这个项目里装依赖一律用 pnpm，别用 npm 或 yarn"
    assert cairn(home, repo, "signal", rule).returncode == 0
    out = hook(home, repo, "prompt", "prompt-task", prompt="不对，应该用 pnpm 9，不是 npm")
    said = notice(out)
    assert said.startswith("cairn corrected ") and "(now version 2)" in said
    assert "这个项目里装依赖一律用 pnpm 9，别用 npm 或 yarn" in said and f"(was: {rule})" in said
    (stored,) = memories(home, repo)
    assert stored["body"] == "这个项目里装依赖一律用 pnpm 9，别用 npm 或 yarn"


def test_an_unsure_statement_is_asked_about_not_dropped(
    home: Path,  # noqa: F811
    repo: Path,  # noqa: F811
) -> None:
    text = "记得周五之前清一下 staging 数据库"
    out = hook(home, repo, "prompt", "prompt-task", prompt=text)
    said = notice(out)
    assert said.startswith("cairn is not sure whether the user wants this kept")
    assert "cairn signal --as rule|preference|fact" in said and text in said
    assert memories(home, repo) == []
    # The answer stores it, as the question says.
    proc = cairn(home, repo, "signal", "--json", "--as", "rule", text)
    assert proc.returncode == 0 and json.loads(proc.stdout)["outcome"] == "stored"
