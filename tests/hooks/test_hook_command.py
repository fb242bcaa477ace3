"""`cairn hook` end to end: the real command, recorded Claude Code events, a real git
repository and a real store (hashing embedder, so a process starts quickly)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from cli_runner import run_cairn
from hook_events import event, transcript_lines

pytestmark = pytest.mark.slow  # many cairn processes


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "shop"
    root.mkdir()
    for args in (
        ["init", "-q"],
        [
            "-c",
            "user.email=t@example.org",
            "-c",
            "user.name=t",
            "commit",
            "-q",
            "--allow-empty",
            "-m",
            "init",
        ],
    ):
        subprocess.run(["git", *args], cwd=root, check=True, capture_output=True)
    return root


@pytest.fixture
def home(tmp_path: Path) -> Path:
    return tmp_path / "home"


def cairn(home: Path, repo: Path, *args: str, stdin: bytes | None = None) -> Any:
    return run_cairn(home, *args, stdin=stdin, cwd=repo)


def hook(home: Path, repo: Path, kind: str, name: str, **changes: Any) -> dict[str, Any] | None:
    """Run one hook on a recorded event moved into ``repo``; its JSON output, or None."""
    data = event(name, cwd=str(repo), **changes)
    proc = cairn(home, repo, "hook", kind, stdin=json.dumps(data).encode())
    assert proc.returncode == 0, proc.stderr
    assert not (home / "logs" / "hooks.log").exists(), (home / "logs" / "hooks.log").read_text()
    if not proc.stdout.strip():
        return None
    out: dict[str, Any] = json.loads(proc.stdout)
    return out


def context_of(out: dict[str, Any] | None) -> str:
    assert out is not None
    text: str = out["hookSpecificOutput"]["additionalContext"]
    return text


def memories(home: Path, repo: Path, *args: str) -> list[dict[str, Any]]:
    proc = cairn(home, repo, "list", "--json", *args)
    assert proc.returncode == 0, proc.stderr
    listed: list[dict[str, Any]] = json.loads(proc.stdout)
    return listed


def seed(home: Path, repo: Path) -> None:
    for args in (
        [
            "remember",
            "Always use pnpm to install dependencies, never npm.",
            "--kind",
            "policy",
            "--scope",
            "project",
        ],
        [
            "remember",
            "The user prefers short commit messages in the imperative mood.",
            "--kind",
            "preference",
        ],
    ):
        assert cairn(home, repo, *args).returncode == 0


def test_session_start_gives_the_director_text_for_the_repository(home: Path, repo: Path) -> None:
    seed(home, repo)
    out = hook(home, repo, "session-start", "session-start")
    assert out is not None and set(out) == {"hookSpecificOutput"}
    assert out["hookSpecificOutput"]["hookEventName"] == "SessionStart"
    text = context_of(out)
    assert text.startswith("From cairn, long-term memory for the shop repository:")
    assert "Always use pnpm" in text and "short commit messages" in text
    assert "why:" in text and "[app " in text
    applied = json.loads(cairn(home, repo, "explain", "--json").stdout)
    assert applied["applications"] == 2


def test_a_prompt_that_states_a_rule_stores_it_for_this_repository(home: Path, repo: Path) -> None:
    seed(home, repo)
    hook(home, repo, "session-start", "session-start")
    out = hook(home, repo, "prompt", "prompt-rule")
    assert out is not None
    notice = out["systemMessage"]
    assert notice.startswith("cairn remembered for this repository: From now on, always run")
    stored = [m for m in memories(home, repo) if "linter" in m["body"]]
    assert len(stored) == 1
    rule = stored[0]
    assert rule["scope"] == "project" and rule["authority"] == "explicit"
    assert "commit" in rule["operations"]
    assert rule["id"] in notice and notice in context_of(out)
    # the same prompt again adds nothing
    hook(home, repo, "prompt", "prompt-rule")
    assert len([m for m in memories(home, repo) if "linter" in m["body"]]) == 1


def test_a_prompt_holding_half_a_surrogate_pair_is_still_read_and_answered(
    home: Path, repo: Path
) -> None:
    # json.dumps writes the lone half as the escape a host would send ("\\ud83d").
    seed(home, repo)
    out = hook(home, repo, "prompt", "prompt-rule", prompt="From now on, always lint \ud83d")
    assert out is not None
    assert out["systemMessage"].startswith("cairn remembered for this repository:")
    stored = [m for m in memories(home, repo) if "lint" in m["body"]]
    assert [m["body"] for m in stored] == ["From now on, always lint \ufffd"]
    out = hook(
        home,
        repo,
        "prompt",
        "prompt-task",
        session_id="a-session-given-nothing-yet",
        prompt="Install the dependencies and run the tests. \udfff",
    )
    assert "pnpm" in context_of(out)


def test_a_one_off_holds_for_this_task_only_and_is_never_stored(home: Path, repo: Path) -> None:
    seed(home, repo)
    before = len(memories(home, repo))
    out = hook(home, repo, "prompt", "prompt-one-off")
    text = context_of(out)
    assert out is not None and "for this task only (not stored)" in out["systemMessage"]
    assert "For this task only:\n- Don't push this time" in text
    assert len(memories(home, repo)) == before


def test_a_forget_acts_only_on_a_clear_match(home: Path, repo: Path) -> None:
    seed(home, repo)
    hook(home, repo, "prompt", "prompt-rule")
    (rule,) = [m for m in memories(home, repo) if "linter" in m["body"]]
    missed = hook(
        home, repo, "prompt", "prompt-forget", prompt="Forget the rule about deploying on Fridays."
    )
    assert missed is not None and missed["systemMessage"].startswith("cairn forgot nothing")
    assert len(memories(home, repo)) == 3
    out = hook(home, repo, "prompt", "prompt-forget")
    assert out is not None and out["systemMessage"].startswith(f"cairn forgot {rule['id']}")
    assert [m["id"] for m in memories(home, repo) if "linter" in m["body"]] == []
    forgotten = [m for m in memories(home, repo, "--all") if m["id"] == rule["id"]]
    assert forgotten and forgotten[0]["forgotten_at"]


def test_a_prompt_nothing_is_relevant_to_prints_nothing_at_all(home: Path, repo: Path) -> None:
    seed(home, repo)
    hook(home, repo, "session-start", "session-start")  # the rules are in context already
    proc = cairn(
        home,
        repo,
        "hook",
        "prompt",
        stdin=json.dumps(event("prompt-nothing", cwd=str(repo))).encode(),
    )
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, "", "")


def test_a_prompt_gets_only_what_the_session_was_not_given(home: Path, repo: Path) -> None:
    seed(home, repo)
    assert "Always use pnpm" in context_of(hook(home, repo, "session-start", "session-start"))
    assert (
        cairn(
            home,
            repo,
            "remember",
            "The CI cache key must include the pnpm lockfile hash.",
            "--kind",
            "fact",
        ).returncode
        == 0
    )  # learned after the session started
    text = context_of(
        hook(
            home,
            repo,
            "prompt",
            "prompt-task",
            prompt="Why does the CI cache key miss after a lockfile change?",
        )
    )
    assert "CI cache key" in text
    assert "Always use pnpm" not in text and "short commit messages" not in text
    # after a compaction the context starts over: the rules are given again
    assert "Always use pnpm" in context_of(
        hook(home, repo, "session-start", "session-start-compact")
    )


def write_transcript(path: Path, expand: str | None = None) -> Path:
    lines = transcript_lines()
    if expand is not None:
        lines = [
            line.replace(
                '"command": "pnpm install"', f'"command": "cairn expand {expand} && pnpm install"'
            )
            for line in lines
        ]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def observed(home: Path, repo: Path) -> list[dict[str, Any]]:
    proc = cairn(home, repo, "journal", "--json")
    assert proc.returncode == 0, proc.stderr
    events: list[dict[str, Any]] = json.loads(proc.stdout)
    return [e for e in events if e["type"] == "episode.completed"]


def test_stop_observes_the_turn_with_the_outcome_it_shows(home: Path, repo: Path) -> None:
    seed(home, repo)
    (pnpm,) = [m for m in memories(home, repo) if "pnpm" in m["body"]]
    hook(home, repo, "session-start", "session-start")
    transcript = write_transcript(repo.parent / "session.jsonl", expand=pnpm["id"])
    assert hook(home, repo, "stop", "stop", transcript_path=str(transcript)) is None
    (episode,) = observed(home, repo)
    payload = episode["payload"]
    assert payload["success"] is True and payload["tools"] == ["Bash", "Edit"]
    assert payload["task"] == "Install the dependencies and run the tests."
    assert payload["note"].startswith("Dependencies are installed")
    assert payload["project_id"] and episode["session_id"] == event("stop")["session_id"]
    assert episode["episode_id"] == f"claude-code:{event('stop')['session_id']}"
    explained = json.loads(cairn(home, repo, "explain", "--json").stdout)
    assert explained["records"][pnpm["id"]]["outcomes"] == {"used-successfully": 1}
    others = [r for k, r in explained["records"].items() if k != pnpm["id"]]
    assert all(r["with_outcome"] == 0 for r in others)  # no evidence, no outcome
    # the same stop again records nothing more
    hook(home, repo, "stop", "stop", transcript_path=str(transcript))
    assert len(observed(home, repo)) == 1
    assert json.loads(cairn(home, repo, "explain", "--json").stdout)["with_outcome"] == 1


def test_stop_reviews_the_users_words_without_repeating_what_the_prompt_stored(
    home: Path, repo: Path
) -> None:
    rule = event("prompt-rule")["prompt"]
    hook(home, repo, "prompt", "prompt-rule")
    assert [m["body"] for m in memories(home, repo)] == [rule]
    said = f"{rule} Our staging cluster is in eu-west-1."
    lines = [
        line.replace("Install the dependencies and run the tests.", said)
        for line in transcript_lines()
    ]
    transcript = repo.parent / "session.jsonl"
    transcript.write_text("\n".join(lines) + "\n", encoding="utf-8")
    hook(home, repo, "stop", "stop", transcript_path=str(transcript))
    found = {m["body"]: m for m in memories(home, repo)}
    assert set(found) == {rule, "Our staging cluster is in eu-west-1."}  # the rule once
    fact = found["Our staging cluster is in eu-west-1."]
    assert (fact["kind"], fact["origin"], fact["state"]) == ("fact", "review", "trial")
    assert len(observed(home, repo)) == 1


def test_stop_does_nothing_while_the_host_continues_for_a_stop_hook(home: Path, repo: Path) -> None:
    seed(home, repo)
    transcript = write_transcript(repo.parent / "session.jsonl")
    assert hook(home, repo, "stop", "stop-active", transcript_path=str(transcript)) is None
    assert observed(home, repo) == []


@pytest.mark.parametrize(
    "stdin",
    [b"{not json", json.dumps({"hook_event_name": "Stop", "session_id": "x"}).encode()],
)
def test_a_hook_never_fails_the_host(home: Path, repo: Path, stdin: bytes) -> None:
    proc = cairn(home, repo, "hook", "prompt", stdin=stdin)
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, "", "")
    logged = (home / "logs" / "hooks.log").read_text(encoding="utf-8")
    assert "cairn hook claude-code prompt" in logged and "HookInputError" in logged


def test_a_broken_store_is_logged_and_the_host_sees_nothing(home: Path, repo: Path) -> None:
    seed(home, repo)
    (home / "memory.db").write_bytes(b"this is not a database" * 100)
    for suffix in ("-wal", "-shm"):
        (home / f"memory.db{suffix}").unlink(missing_ok=True)
    data = json.dumps(event("prompt-task", cwd=str(repo))).encode()
    proc = cairn(home, repo, "hook", "prompt", stdin=data)
    assert (proc.returncode, proc.stdout) == (0, "")
    assert "Traceback" in (home / "logs" / "hooks.log").read_text(encoding="utf-8")
