"""Hooks that tell: what the Stop hook's review (and `cairn review`) stored is said at the
next session start, once, with the way to drop it; and the review reads every turn since
the last one it read, not only the last turn. The real command, recorded Claude Code
events and transcript, a real git repository, in English and Chinese."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest

from cairn.hooks.learned import note, tell
from cairn.provider.models import RecordModel
from cli_runner import run_cairn
from hook_events import event, transcript_lines

pytestmark = pytest.mark.slow  # many cairn processes

FIRST_PROMPT = "Fix the rounding of the cart total; it shows 10.005 instead of 10.01."
LAST_PROMPT = "Install the dependencies and run the tests."


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "shop"
    root.mkdir()
    for args in (
        ["init", "-q"],
        ["-c", "user.email=t@example.org", "-c", "user.name=t", "commit", "-q", "--allow-empty",
         "-m", "init"],
    ):  # fmt: skip
        subprocess.run(["git", *args], cwd=root, check=True, capture_output=True)
    return root


def hook(home: Path, repo: Path, kind: str, name: str, **changes: Any) -> dict[str, Any] | None:
    data = event(name, cwd=str(repo), **changes)
    proc = run_cairn(home, "hook", kind, stdin=json.dumps(data).encode(), cwd=repo)
    assert proc.returncode == 0 and proc.stderr == "", proc.stderr
    assert not (home / "logs" / "hooks.log").exists()
    return json.loads(proc.stdout) if proc.stdout.strip() else None


def transcript(path: Path, first: str, last: str) -> Path:
    lines = [
        line.replace(FIRST_PROMPT, first).replace(LAST_PROMPT, last) for line in transcript_lines()
    ]
    assert lines != transcript_lines()
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def bodies(home: Path, repo: Path) -> dict[str, str]:
    proc = run_cairn(home, "list", "--json", cwd=repo)
    return {m["body"]: m["id"] for m in json.loads(proc.stdout)}


@pytest.mark.parametrize(
    ("first", "last"),
    [
        ("Our staging cluster is in eu-west-1.", "Remember the API rate limit is 100 per minute."),
        ("记住：预发布环境的地址是 staging.example.cn", LAST_PROMPT),
    ],
    ids=["english", "chinese"],
)
def test_the_next_session_start_says_what_the_stop_hook_learned(
    tmp_path: Path, repo: Path, first: str, last: str
) -> None:
    home = tmp_path / "home"
    session = transcript(tmp_path / "session.jsonl", first, last)
    # Only the last turn's stop ran (the first one's timed out): both turns are reviewed.
    assert hook(home, repo, "stop", "stop", transcript_path=str(session)) is None
    stored = bodies(home, repo)
    learned = [b for b in stored if "staging" in b or "rate limit" in b]
    assert learned and any("staging" in b for b in learned), stored
    # A stop of the same turn again reviews nothing more.
    hook(home, repo, "stop", "stop", transcript_path=str(session))
    assert bodies(home, repo) == stored
    # The next session starts: the user is told, in the message the host shows them.
    out = hook(home, repo, "session-start", "session-start", session_id="next-session")
    assert out is not None
    message = out["systemMessage"]
    assert message.startswith("cairn learned in the last session:") and "cairn forget" in message
    for body in learned:
        assert stored[body] in message
    assert "staging" in message
    # Told once: a second start says nothing of it.
    again = hook(home, repo, "session-start", "session-start", session_id="third-session")
    assert again is None or "learned in the last session" not in again.get("systemMessage", "")
    # The id it names can be typed back.
    shown = re.search(r"cairn forget (\w+)", message)
    assert shown is not None
    dropped = run_cairn(home, "forget", shown.group(1), cwd=repo)
    assert dropped.returncode == 0, dropped.stderr


def test_a_note_for_another_repository_waits_for_it(tmp_path: Path) -> None:
    folder = tmp_path / "sessions"
    base: dict[str, Any] = {
        "version": 1, "title": "", "kind": "fact", "memory_type": "semantic",
        "trust": "learned", "state": "trial", "authority": "inferred", "origin": "review",
    }  # fmt: skip
    here = RecordModel.model_construct(
        **base, id="A" * 26, body="The CI runs on Fridays", scope="project", project_id="git:a"
    )
    there = RecordModel.model_construct(
        **base, id="B" * 26, body="部署在周五", scope="project", project_id="git:b"
    )
    note(folder, "s1", [here, there])
    note(folder, "s1", [here])  # noted once
    told = tell(folder, "git:a")
    assert "A" * 26 in told and "B" * 26 not in told and "this repository" in told
    assert tell(folder, "git:a") == ""
    assert "部署在周五" in tell(folder, "git:b")
