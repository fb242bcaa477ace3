"""Personal memory for coding agents, as a user drives it: real git repositories,
linked worktrees and clones, the real `cairn` command (with the test embedder)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from cli_runner import invoke_cairn

GIT_ENV = {
    "GIT_AUTHOR_NAME": "t",
    "GIT_AUTHOR_EMAIL": "t@example.com",
    "GIT_COMMITTER_NAME": "t",
    "GIT_COMMITTER_EMAIL": "t@example.com",
}


def git(cwd: Path, *args: str) -> None:
    import os

    subprocess.run(
        ["git", *args], cwd=cwd, check=True, capture_output=True, env={**os.environ, **GIT_ENV}
    )


def make_repo(path: Path, message: str) -> Path:
    path.mkdir(parents=True)
    git(path, "init", "-q")
    (path / "README.md").write_text(message)
    (path / "src" / "api").mkdir(parents=True)
    (path / "src" / "api" / "users.py").write_text("x = 1\n")
    git(path, "add", "-A")
    git(path, "commit", "-q", "-m", message)
    return path


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("world")
    repo = make_repo(root / "shop", "the shop")
    git(repo, "worktree", "add", "-q", str(root / "shop-feature"), "-b", "feature")
    git(root, "clone", "-q", str(repo), str(root / "shop-clone"))
    other = make_repo(root / "blog", "the blog")
    return {
        "home": root / "home",
        "repo": repo,
        "worktree": root / "shop-feature",
        "clone": root / "shop-clone",
        "other": other,
    }


def ok(world: dict[str, Path], cwd: str, *args: str) -> str:
    proc = invoke_cairn(world["home"], *args, cwd=world[cwd])
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def as_json(world: dict[str, Path], cwd: str, *args: str) -> object:
    return json.loads(ok(world, cwd, "--json", *args))


def test_project_rules_follow_the_repository_and_never_leak(world: dict[str, Path]) -> None:
    rule = as_json(
        world,
        "repo",
        "remember",
        "Always use pnpm in this repo",
        "--scope",
        "project",
        "--kind",
        "policy",
    )
    assert rule["record"]["scope"] == "project"  # type: ignore[index]
    for place in ("repo", "worktree", "clone"):
        listed = as_json(world, place, "list", ".")
        assert [r["body"] for r in listed] == ["Always use pnpm in this repo"], place  # type: ignore[union-attr,index]
    assert as_json(world, "other", "list", ".") == []
    # From a subfolder of the linked worktree, the task context carries the rule ...
    task = "always use pnpm to install the dependencies"
    ctx = as_json(world, "worktree", "context", "--task", task)
    assert [i["body"] for i in ctx["resident"]] == ["Always use pnpm in this repo"]  # type: ignore[index]
    assert "current project matches" in ctx["resident"][0]["why_applied"]  # type: ignore[index]
    # ... and in the other repository it never appears.
    other = as_json(world, "other", "context", "--task", "install the dependencies")
    assert all(
        "pnpm" not in (i["body"] or i["summary"])
        for i in [*other["resident"], *other["manifest"]]  # type: ignore[union-attr]
    )  # type: ignore[index]


def test_path_rule_applies_only_to_matching_paths(world: dict[str, Path]) -> None:
    ok(
        world,
        "repo",
        "remember",
        "In src/api/** write the failing test first",
        "--scope",
        "project",
        "--path",
        "src/api/**",
        "--kind",
        "policy",
    )
    hit = as_json(
        world, "clone", "context", "--task", "add a users endpoint", "--path", "src/api/users.py"
    )
    items = {i["body"]: i for i in hit["resident"]}  # type: ignore[index]
    why = items["In src/api/** write the failing test first"]["why_applied"]
    assert "path src/api/users.py matches src/api/**" in why
    miss = as_json(
        world, "clone", "context", "--task", "add a users endpoint", "--path", "README.md"
    )
    bodies = [i["body"] or i["summary"] for i in [*miss["resident"], *miss["manifest"]]]  # type: ignore[index]
    assert not any("failing test first" in b for b in bodies)


def test_one_off_instruction_constrains_the_task_and_is_never_stored(
    world: dict[str, Path],
) -> None:
    before = as_json(world, "repo", "list")
    said = as_json(world, "repo", "signal", "Don't commit this time, I want to review first")
    assert said["kind"] == "one-off" and said["constraint"]  # type: ignore[index,operator]
    said_zh = as_json(world, "repo", "signal", "这次先不要提交")
    assert said_zh["kind"] == "one-off"  # type: ignore[index]
    assert as_json(world, "repo", "list") == before
    ctx = as_json(world, "repo", "context", "--task", "fix the typo but don't push this time")
    assert ctx["constraints"] and ctx["constraints"][0]["cue"]  # type: ignore[index]
    rule = as_json(world, "repo", "signal", "From now on, always run the linter before pushing")
    assert rule["kind"] == "rule" and rule["record"]["state"] == "proven"  # type: ignore[index]
    assert rule["record"]["authority"] == "explicit"  # type: ignore[index]


def test_correct_forget_restore_rebuild_permanent(world: dict[str, Path]) -> None:
    rec = as_json(
        world, "repo", "remember", "Deploy with make ship-zebrafish", "--scope", "project"
    )
    rid = rec["record"]["id"]  # type: ignore[index]
    ok(world, "repo", "correct", rid, "Deploy with make ship-quokka")
    history = as_json(world, "repo", "show", rid, "--history")
    assert [(h["version"], h["state"]) for h in history] == [(1, "superseded"), (2, "proven")]  # type: ignore[union-attr,index]
    ok(world, "repo", "forget", rid)
    assert rid not in ok(world, "repo", "list", ".")
    ok(world, "repo", "restore", rid)
    assert rid in ok(world, "repo", "list", ".")
    ok(world, "repo", "forget", rid)
    ok(world, "repo", "rebuild")
    assert rid not in ok(world, "repo", "list", ".")
    ctx = as_json(world, "repo", "context", "--task", "deploy with make ship")
    assert rid not in json.dumps(ctx)
    ok(world, "repo", "restore", rid)
    ok(world, "repo", "forget", rid, "--permanent")
    data = b"".join(p.read_bytes() for p in world["home"].rglob("*") if p.is_file())
    assert b"zebrafish" not in data and b"quokka" not in data


def test_feedback_promotes_trial_and_supersedes_failing(world: dict[str, Path]) -> None:
    jsonl = world["home"] / "inferred.jsonl"
    jsonl.write_text(
        '{"body": "Use the staging queue named orders-v2 for order tests", "kind": "policy"}\n'
        '{"body": "Mock the orders queue with an in-memory fake", "kind": "policy"}\n'
    )
    ok(world, "repo", "ingest", str(jsonl))
    ctx = as_json(world, "repo", "context", "--task", "write tests for the orders queue")
    items = {i["summary"]: i for i in [*ctx["resident"], *ctx["manifest"]]}  # type: ignore[index]
    good = items["Use the staging queue named orders-v2 for order tests"]
    bad = items["Mock the orders queue with an in-memory fake"]
    assert good["state"] == "trial" and good in ctx["manifest"]  # type: ignore[index,operator]
    promoted = as_json(world, "repo", "feedback", good["application_id"], "used-successfully")
    assert promoted["record"]["state"] == "proven"  # type: ignore[index]
    assert promoted["record"]["used_count"] == 1  # type: ignore[index]
    failed = as_json(world, "repo", "feedback", bad["application_id"], "contributed-to-failure")
    # One report from the command line (no session it knows) is not corroboration: the
    # memory stays on trial, its failure uncounted (a second session's report would count).
    assert failed["record"]["state"] == "trial"  # type: ignore[index]
    assert failed["record"]["failure_count"] == 0  # type: ignore[index]
    again = as_json(world, "repo", "context", "--task", "write tests for the orders queue")
    resident = {i["summary"]: i for i in again["resident"]}  # type: ignore[index]
    assert (
        "applied successfully once"
        in resident["Use the staging queue named orders-v2 for order tests"]["why_applied"]
    )
    report = as_json(world, "repo", "explain")
    assert report["with_outcome"] == 2 and report["hit_rate"] == 0.5  # type: ignore[index]
    bad_input = invoke_cairn(world["home"], "feedback", "01NOSUCHAPP", "ignored")
    assert bad_input.returncode == 2 and "no application" in bad_input.stderr


def test_markdown_edit_and_delete_round_trip_through_sync(world: dict[str, Path]) -> None:
    keep = as_json(world, "repo", "remember", "Tabs in Makefiles, spaces elsewhere")["record"]  # type: ignore[index]
    edit = as_json(world, "repo", "remember", "Release notes go in NOTES.txt")["record"]  # type: ignore[index]
    drop = as_json(world, "repo", "remember", "Use the blue theme for dashboards")["record"]  # type: ignore[index]
    profile = world["home"] / "profile.md"
    text = profile.read_text(encoding="utf-8")
    assert "Release notes go in NOTES.txt" in text and "blue theme" in text
    # A person edits one body and deletes another entry, as in any editor.
    text = text.replace("Release notes go in NOTES.txt", "Release notes go in CHANGELOG.md")
    entry_start = text.index("### Use the blue theme")
    entry_end = text.find("\n### ", entry_start + 1)
    section_end = text.find("\n## ", entry_start + 1)
    ends = [
        e for e in (entry_end, section_end, text.find("\n<!-- cairn-index", entry_start)) if e != -1
    ]
    text = text[:entry_start] + text[min(ends) + 1 :]
    profile.write_text(text, encoding="utf-8")
    report = as_json(world, "repo", "sync")
    assert report["corrected"] == [edit["id"]]  # type: ignore[index]
    assert report["forgotten"] == [drop["id"]]  # type: ignore[index]
    assert as_json(world, "repo", "show", edit["id"])["body"] == "Release notes go in CHANGELOG.md"  # type: ignore[index]
    assert drop["id"] not in ok(world, "repo", "list")
    assert keep["id"] in ok(world, "repo", "list")
    # Synced state is rendered back: the deleted entry stays gone, the edit is there.
    again = profile.read_text(encoding="utf-8")
    assert "CHANGELOG.md" in again and "blue theme" not in again


def test_database_lost_rebuild_from_markdown(world: dict[str, Path]) -> None:
    before = {
        (r["id"], r["version"], r["body"], r["scope"], r["project_id"])  # type: ignore[index]
        for r in as_json(world, "repo", "list", "--everywhere")
    }  # type: ignore[union-attr]
    assert before
    for name in ("memory.db", "memory.db-wal", "memory.db-shm"):
        (world["home"] / name).unlink(missing_ok=True)
    restored = as_json(world, "repo", "rebuild", "--from-markdown")
    assert restored["restored"] == len(before)  # type: ignore[index]
    after = {
        (r["id"], r["version"], r["body"], r["scope"], r["project_id"])  # type: ignore[index]
        for r in as_json(world, "repo", "list", "--everywhere")
    }  # type: ignore[union-attr]
    assert after == before
    # Path rules keep their selectors: the worktree still gets the path rule for src/api.
    ctx = as_json(
        world, "worktree", "context", "--task", "add a users endpoint", "--path", "src/api/users.py"
    )
    assert any("src/api/**" in " ".join(i["why_applied"]) for i in ctx["resident"])  # type: ignore[index]
