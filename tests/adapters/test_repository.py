"""Tests for repository identity against real git repositories."""

from __future__ import annotations

import dataclasses
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from cairn.adapters.repository import (
    RepositoryIdentity,
    normalize_remote,
    relative_path,
    repository_identity,
)

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")


def _git_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(
        GIT_AUTHOR_NAME="Cairn Test",
        GIT_AUTHOR_EMAIL="test@example.com",
        GIT_COMMITTER_NAME="Cairn Test",
        GIT_COMMITTER_EMAIL="test@example.com",
        # Keep the machine's own git configuration out of the test repositories.
        GIT_CONFIG_NOSYSTEM="1",
        GIT_CONFIG_GLOBAL=os.devnull,
        GIT_TERMINAL_PROMPT="0",
    )
    return env


def git(cwd: Path, *args: str) -> str:
    completed = subprocess.run(
        ["git", *args], cwd=cwd, env=_git_env(), capture_output=True, text=True, check=True
    )
    return completed.stdout.strip()


def make_repo(path: Path, content: str) -> Path:
    path.mkdir(parents=True)
    git(path, "init", "-q", "-b", "main")
    (path / "README.md").write_text(content, encoding="utf-8")
    (path / "src").mkdir()
    (path / "src" / "app.py").write_text("print('hi')\n", encoding="utf-8")
    git(path, "add", ".")
    git(path, "commit", "-q", "-m", f"initial: {content}")
    return path


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return make_repo(tmp_path / "alpha", "alpha repository\n")


def test_root_commit_identity(repo: Path) -> None:
    identity = repository_identity(repo)
    assert identity.kind == "root-commit"
    assert identity.project_id.startswith("git:")
    assert len(identity.project_id) == len("git:") + 16
    assert identity.root == repo.resolve()
    assert identity.name == "alpha"
    assert identity.remote is None


def test_identity_is_a_frozen_value(repo: Path) -> None:
    identity = repository_identity(repo)
    assert isinstance(identity, RepositoryIdentity)
    with pytest.raises(dataclasses.FrozenInstanceError):
        identity.name = "other"  # type: ignore[misc]


def test_subfolder_and_file_give_the_same_identity(repo: Path) -> None:
    top = repository_identity(repo)
    assert repository_identity(repo / "src") == top
    assert repository_identity(repo / "src" / "app.py") == top


def test_linked_worktree_shares_the_id(repo: Path, tmp_path: Path) -> None:
    linked = tmp_path / "alpha-feature"
    git(repo, "worktree", "add", "-q", "-b", "feature", str(linked))
    main_id = repository_identity(repo)
    linked_id = repository_identity(linked)
    from_subfolder = repository_identity(linked / "src")

    assert linked_id.project_id == main_id.project_id == from_subfolder.project_id
    assert linked_id.root == linked.resolve()  # the worktree's own top level
    assert linked_id.name == "alpha"  # named after the main worktree, not "alpha-feature"


def test_more_commits_keep_the_id(repo: Path) -> None:
    before = repository_identity(repo).project_id
    (repo / "more.txt").write_text("more\n", encoding="utf-8")
    git(repo, "add", "more.txt")
    git(repo, "commit", "-q", "-m", "second")
    assert repository_identity(repo).project_id == before


def test_clone_elsewhere_shares_the_id(repo: Path, tmp_path: Path) -> None:
    clone = tmp_path / "elsewhere" / "renamed-clone"
    clone.parent.mkdir()
    git(tmp_path, "clone", "-q", str(repo), str(clone))
    original = repository_identity(repo)
    cloned = repository_identity(clone)

    assert cloned.project_id == original.project_id
    assert cloned.kind == "root-commit"
    assert cloned.remote == repo.resolve().as_posix()
    assert cloned.name == "alpha"  # the remote's repository name, not the folder's


def test_different_repositories_differ(repo: Path, tmp_path: Path) -> None:
    other = make_repo(tmp_path / "beta", "beta repository\n")
    assert repository_identity(other).project_id != repository_identity(repo).project_id


def test_merged_histories_hash_all_root_commits(repo: Path, tmp_path: Path) -> None:
    other = make_repo(tmp_path / "beta", "beta repository\n")
    before = repository_identity(repo).project_id
    git(repo, "fetch", "-q", str(other), "main:beta")
    git(repo, "merge", "-q", "-s", "ours", "--allow-unrelated-histories", "-m", "join", "beta")
    assert len(git(repo, "rev-list", "--max-parents=0", "HEAD").split()) == 2
    assert repository_identity(repo).project_id != before


def test_repository_without_commits_uses_the_remote(tmp_path: Path) -> None:
    empty = tmp_path / "fresh"
    empty.mkdir()
    git(empty, "init", "-q")
    git(empty, "remote", "add", "origin", "git@github.com:Foo/Bar.git")
    identity = repository_identity(empty)

    assert identity.kind == "remote"
    assert identity.project_id.startswith("remote:")
    assert identity.remote == "github.com/foo/bar"
    assert identity.name == "bar"
    assert identity.root == empty.resolve()

    # Any spelling of the same remote is the same project.
    twin = tmp_path / "twin"
    twin.mkdir()
    git(twin, "init", "-q")
    git(twin, "remote", "add", "origin", "https://github.com/foo/bar")
    assert repository_identity(twin).project_id == identity.project_id


def test_repository_without_commits_or_remote_uses_the_main_worktree_path(
    tmp_path: Path,
) -> None:
    bare = tmp_path / "nothing-yet"
    (bare / "pkg").mkdir(parents=True)
    git(bare, "init", "-q")
    identity = repository_identity(bare / "pkg")
    assert identity.kind == "path"
    assert identity.project_id.startswith("path:")
    assert identity.root == bare.resolve()
    assert identity.name == "nothing-yet"
    assert identity == repository_identity(bare)


def test_shallow_clone_uses_the_remote(repo: Path, tmp_path: Path) -> None:
    # A shallow clone's parentless commits are its depth boundary, not the true roots.
    (repo / "more.txt").write_text("more\n", encoding="utf-8")
    git(repo, "add", "more.txt")
    git(repo, "commit", "-q", "-m", "second")
    shallow = tmp_path / "shallow"
    git(tmp_path, "clone", "-q", "--depth", "1", repo.resolve().as_uri(), str(shallow))
    identity = repository_identity(shallow)
    assert identity.kind == "remote"
    assert identity.remote == repo.resolve().as_posix()


def test_plain_folder_uses_the_path(tmp_path: Path) -> None:
    folder = tmp_path / "notes"
    folder.mkdir()
    (folder / "todo.txt").write_text("x\n", encoding="utf-8")
    identity = repository_identity(folder)
    assert identity.kind == "path"
    assert identity.project_id.startswith("path:")
    assert identity.root == folder.resolve()
    assert identity.name == "notes"
    assert identity.remote is None
    # A file outside git identifies by its folder.
    assert repository_identity(folder / "todo.txt") == identity
    # Different folders differ.
    other = tmp_path / "other"
    other.mkdir()
    assert repository_identity(other).project_id != identity.project_id


def test_missing_git_binary_degrades_to_the_path(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    empty_bin = tmp_path / "empty-bin"
    empty_bin.mkdir()
    monkeypatch.setenv("PATH", str(empty_bin))
    identity = repository_identity(repo / "src")
    assert identity.kind == "path"
    assert identity.root == (repo / "src").resolve()


def test_git_hook_environment_does_not_redirect_the_lookup(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Hooks export GIT_DIR; the identity must still describe the path we asked about.
    other = make_repo(tmp_path / "beta", "beta repository\n")
    expected = repository_identity(repo)
    monkeypatch.setenv("GIT_DIR", str(other / ".git"))
    monkeypatch.setenv("GIT_WORK_TREE", str(other))
    assert repository_identity(repo) == expected


def test_nonexistent_path_raises(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="does not exist") as caught:
        repository_identity(tmp_path / "missing")
    assert "\n" not in str(caught.value)


def test_relative_path(repo: Path, tmp_path: Path) -> None:
    identity = repository_identity(repo / "src")
    assert relative_path(identity, repo) == ""
    assert relative_path(identity, repo / "src") == "src"
    assert relative_path(identity, repo / "src" / "app.py") == "src/app.py"
    assert relative_path(identity, repo / "src" / ".." / "README.md") == "README.md"
    assert relative_path(identity, repo / "not" / "yet" / "created.py") == "not/yet/created.py"
    with pytest.raises(ValueError, match="outside"):
        relative_path(identity, tmp_path)


@pytest.mark.parametrize(
    ("url", "normal"),
    [
        ("git@github.com:Foo/Bar.git", "github.com/foo/bar"),
        ("https://github.com/foo/bar", "github.com/foo/bar"),
        ("ssh://git@github.com/foo/bar.git", "github.com/foo/bar"),
        ("https://github.com/foo/bar.git/", "github.com/foo/bar"),
        ("https://github.com/foo/bar/", "github.com/foo/bar"),
        ("https://user:s3cret@GitHub.COM/Foo/Bar.git", "github.com/foo/bar"),
        (
            "ssh://git@gitlab.example.com:2222/group/sub/proj.git",
            "gitlab.example.com/group/sub/proj",
        ),
        ("https://gitlab.example.com:8443/group/sub/proj", "gitlab.example.com/group/sub/proj"),
        ("git://git.kernel.org/pub/scm/git/git.git", "git.kernel.org/pub/scm/git/git"),
        ("deploy@bitbucket.org:Team/Repo.git", "bitbucket.org/team/repo"),
        ("  git@github.com:foo/bar.git\n", "github.com/foo/bar"),
        ("github.com/foo/bar", "github.com/foo/bar"),  # idempotent
        ("file:///srv/Git/Repo.git", "/srv/Git/Repo"),  # local paths keep their case
        ("/srv/git/repo.git/", "/srv/git/repo"),
        ("C:\\repos\\project.git", "C:/repos/project"),
    ],
)
def test_normalize_remote(url: str, normal: str) -> None:
    assert normalize_remote(url) == normal


def test_normalize_remote_rejects_empty() -> None:
    with pytest.raises(ValueError, match="empty"):
        normalize_remote("   ")
