"""The Markdown files through the real `cairn` command: tenants apart, sync's exit codes,
entries added by hand, and permanent forget. The homes use the hashing embedder, so these
subprocesses do not load the model (the default path is covered by test_personal_memory)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from cli_runner import invoke_cairn


@pytest.fixture
def home(tmp_path: Path) -> Path:
    home = tmp_path / "home"
    home.mkdir()
    (home / "config.yaml").write_text("memory:\n  embeddings:\n    provider: hashing\n")
    return home


def cairn(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return invoke_cairn(home, *args)


def ok(home: Path, *args: str) -> str:
    proc = cairn(home, *args)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def remember(home: Path, *args: str) -> str:
    return str(json.loads(ok(home, "--json", "remember", *args))["record"]["id"])


def test_a_second_tenant_remembers_into_its_own_files(home: Path) -> None:
    remember(home, "Default tenant's rule")
    before = (home / "profile.md").read_bytes()
    proc = cairn(home, "--tenant", "acme", "remember", "Acme's rule")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("remembered ") and proc.stderr == ""
    acme = home / "tenants" / "acme" / "default" / "profile.md"
    assert "Acme's rule" in acme.read_text(encoding="utf-8")
    assert (home / "profile.md").read_bytes() == before
    proc = cairn(home, "--tenant", "acme", "--agent", "Reviewer", "remember", "Reviewer's rule")
    assert proc.returncode == 0, proc.stderr
    reviewer = next((home / "tenants" / "acme").glob("reviewer~*/profile.md"))
    assert "Reviewer's rule" in reviewer.read_text(encoding="utf-8")
    assert "Acme's rule" not in reviewer.read_text(encoding="utf-8")
    assert json.loads(ok(home, "--tenant", "acme", "--json", "sync"))["conflicts"] == []


def test_a_projection_that_fails_after_a_commit_is_a_warning(home: Path) -> None:
    remember(home, "first")
    profile = home / "profile.md"
    # A file of another agent where profile.md belongs, and one in that agent's own folder
    # already, so it cannot be moved there: the write after the commit is refused.
    foreign = profile.read_text().replace('"agent":"default"', '"agent":"other"')
    profile.write_text(foreign)
    (home / "tenants" / "default" / "other").mkdir(parents=True)
    (home / "tenants" / "default" / "other" / "profile.md").write_text(foreign)
    proc = cairn(home, "--json", "remember", "second")
    assert proc.returncode == 0 and "warning: the Markdown files were not updated" in proc.stderr
    assert json.loads(proc.stdout)["record"]["body"] == "second"
    assert len(json.loads(ok(home, "--json", "list"))) == 2


def test_sync_adds_entries_typed_by_hand(home: Path) -> None:
    remember(home, "Answer in English")
    profile = home / "profile.md"
    text = profile.read_text(encoding="utf-8")
    text = text.replace(
        "## Preferences\n",
        "## Preferences\n\n### Tabs\npaths: Makefile\n\nUse tabs in Makefiles.\n\n",
    )
    profile.write_text(text, encoding="utf-8")
    report = json.loads(ok(home, "--json", "sync"))
    (added,) = report["added"]
    shown = json.loads(ok(home, "--json", "show", added))
    assert shown["body"] == "Use tabs in Makefiles." and shown["kind"] == "preference"
    assert f"<!-- cairn {added}@1 -->" in profile.read_text(encoding="utf-8")
    assert json.loads(ok(home, "--json", "sync"))["added"] == []


def test_a_conflict_keeps_the_edit_and_exits_1_naming_the_entry(home: Path) -> None:
    # global by its option: said inside a repository (the suite's own folder), a convention
    # with no scope word would be that repository's, in its own file
    record_id = remember(home, "Deploy on Fridays", "--scope", "global")
    profile = home / "profile.md"
    stale = profile.read_text(encoding="utf-8")
    ok(home, "correct", record_id, "Never deploy on Fridays")
    profile.write_text(stale.replace("\nDeploy on Fridays\n", "\nDeploy on Thursdays\n"))

    proc = cairn(home, "sync")

    assert proc.returncode == 1
    text = profile.read_text(encoding="utf-8")
    line = text.split("\n").index(f"<!-- cairn-conflict {record_id}@1 -->")  # 0-based: heading
    assert f"could not apply {profile}:{line} {record_id}" in proc.stderr
    assert proc.stderr.count("\n") == 1
    assert f"conflict {profile}:{line} {record_id}: edited version 1" in proc.stdout
    assert "Deploy on Thursdays" in text and "Never deploy on Fridays" in text
    shown = json.loads(ok(home, "--json", "show", record_id))
    assert (shown["version"], shown["body"]) == (2, "Never deploy on Fridays")
    again = cairn(home, "--json", "sync")
    assert again.returncode == 1
    assert json.loads(again.stdout)["conflicts"][0]["line"] == line


def test_a_malformed_file_exits_2_with_nothing_changed(home: Path) -> None:
    record_id = remember(home, "Use spaces")
    profile = home / "profile.md"
    text = profile.read_text(encoding="utf-8").replace("\nUse spaces\n", "\nUse tabs\n")
    profile.write_text(text.replace(f"{record_id}@1", f"{record_id}@x"), encoding="utf-8")
    proc = cairn(home, "sync")
    assert proc.returncode == 2 and "the cairn line must read" in proc.stderr
    assert proc.stderr.count("\n") == 1
    assert json.loads(ok(home, "--json", "show", record_id))["version"] == 1


def test_forget_permanent_purges_an_unparseable_file_too(home: Path) -> None:
    secret = remember(home, "the vault code is 9931-quarblewick")
    remember(home, "Use spaces")
    profile = home / "profile.md"
    profile.write_text(profile.read_text(encoding="utf-8") + "\n## half-typed section\n")
    assert cairn(home, "sync").returncode == 2
    proc = cairn(home, "forget", secret, "--permanent")
    assert proc.returncode == 0, proc.stderr
    for path in home.rglob("*.md"):
        assert b"quarblewick" not in path.read_bytes() and secret.encode() not in path.read_bytes()
    assert "Use spaces" in profile.read_text(encoding="utf-8")
    assert cairn(home, "sync").returncode == 0
