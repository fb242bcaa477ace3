"""Stable repository identity, taken from git itself.

Project-scoped memories must follow the *repository*, not the folder it happens to be checked
out in: a linked worktree, a second clone or a renamed folder are the same project. The most
stable fact git offers is the set of root commits (``git rev-list --max-parents=0 HEAD``), which
every clone and worktree shares and which survives renames, moves and remote changes. The
identity therefore falls back in order of stability:

1. ``git:<hash>`` of the sorted root commit ids (``kind="root-commit"``);
2. ``remote:<hash>`` of the normalised ``origin`` URL when there are no commits yet, or when
   the clone is shallow (a shallow clone's "roots" are just its depth boundary);
3. ``path:<hash>`` of the main worktree's absolute path, found through
   ``git rev-parse --git-common-dir`` so linked worktrees still agree;
4. ``path:<hash>`` of the resolved folder outside git, or when git is unavailable.

git runs read-only, without a terminal prompt and with a timeout, so a broken or slow
repository degrades the identity instead of hanging the agent.
"""

from __future__ import annotations

import hashlib
import os
import re
import subprocess
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Literal
from urllib.parse import urlsplit

__all__ = ["RepositoryIdentity", "normalize_remote", "relative_path", "repository_identity"]

IdentityKind = Literal["root-commit", "remote", "path"]

_GIT_TIMEOUT_SECONDS = 5
_HASH_LENGTH = 16
# Variables set by git hooks and wrappers that would make git ignore the path we pass with -C
# and describe some other repository instead.
_GIT_LOCATION_VARIABLES = (
    "GIT_DIR",
    "GIT_WORK_TREE",
    "GIT_COMMON_DIR",
    "GIT_INDEX_FILE",
    "GIT_OBJECT_DIRECTORY",
    "GIT_ALTERNATE_OBJECT_DIRECTORIES",
    "GIT_CEILING_DIRECTORIES",
    "GIT_NAMESPACE",
)
# scp-like syntax: [user@]host:path, where the host has no slash ("C:\\repo" is a path).
_SCP_LIKE = re.compile(r"^(?:(?P<user>[^@/]+)@)?(?P<host>[^:/\\]{2,}):(?P<path>(?!//).*)$")


@dataclass(frozen=True, slots=True)
class RepositoryIdentity:
    project_id: str
    kind: IdentityKind
    root: Path  # the worktree top level, or the folder outside git
    name: str  # the remote's repo name, else the main worktree's folder name
    remote: str | None  # normalised origin URL when present


def repository_identity(path: Path) -> RepositoryIdentity:
    """Identify the repository containing ``path`` (a file or a folder)."""
    given = Path(path).expanduser()
    if not given.exists():
        raise ValueError(f"path does not exist: {given}")
    resolved = given.resolve()
    folder = resolved if resolved.is_dir() else resolved.parent

    located = _git(
        folder, "rev-parse", "--show-toplevel", "--git-common-dir", "--is-shallow-repository"
    )
    lines = located.splitlines() if located is not None else []
    if len(lines) < 3:
        # Outside a work tree (or no usable git): the folder is all we know.
        return _path_identity(folder, folder, folder.name or str(folder))
    root = Path(lines[0]).resolve()
    # --git-common-dir may be relative to the directory git ran in.
    common_dir = (folder / lines[1]).resolve()
    shallow = lines[2].strip() == "true"

    origin = _git(folder, "config", "--get", "remote.origin.url")
    remote = _normalize_or_none(origin)
    main_worktree = _main_worktree(folder, common_dir)
    name = _remote_name(remote) or main_worktree.name or root.name

    roots = None if shallow else _git(folder, "rev-list", "--max-parents=0", "HEAD")
    root_commits = sorted(set(roots.split())) if roots else []
    if root_commits:
        digest = _digest("\n".join(root_commits))
        return RepositoryIdentity(f"git:{digest}", "root-commit", root, name, remote)
    if remote is not None:
        return RepositoryIdentity(f"remote:{_digest(remote)}", "remote", root, name, remote)
    return _path_identity(main_worktree, root, name)


def normalize_remote(url: str) -> str:
    """Reduce a git remote URL to ``host/owner/repo``.

    ``git@github.com:Foo/Bar.git``, ``https://github.com/foo/bar`` and
    ``ssh://git@github.com/foo/bar.git`` all become ``github.com/foo/bar``: the scheme,
    credentials, port, ``.git`` suffix and trailing slashes go, and the result is lower-cased
    because the hosting services treat owner and repository names case-insensitively. Local
    remotes (``/srv/git/repo.git``, ``file:///srv/git/repo``) keep their case, since file systems
    may not, and become an absolute POSIX path such as ``/srv/git/repo``.
    """
    text = url.strip()
    if not text:
        raise ValueError("remote URL is empty")
    if "://" in text:
        parts = urlsplit(text)
        if parts.scheme.lower() == "file":
            return _clean_local(parts.path)
        host = (parts.hostname or "").lower()  # drops credentials and port
        return _join_remote(host, parts.path)
    scp = _SCP_LIKE.match(text)
    if scp is not None and not _looks_like_local_path(text):
        return _join_remote(scp.group("host").lower(), scp.group("path"))
    if _looks_like_local_path(text):
        return _clean_local(text)
    # Already host/path (e.g. a normalised value): normalising again changes nothing.
    host, _, rest = text.partition("/")
    return _join_remote(host.lower(), rest)


def relative_path(identity: RepositoryIdentity, path: Path) -> str:
    """POSIX path of ``path`` relative to ``identity.root`` (``""`` for the root itself).

    Raises ``ValueError`` when ``path`` lies outside the repository.
    """
    target = Path(path).expanduser().resolve()
    try:
        relative = target.relative_to(identity.root)
    except ValueError:
        raise ValueError(f"{target} is outside the repository at {identity.root}") from None
    text = relative.as_posix()
    return "" if text == "." else text


# --- helpers ---------------------------------------------------------------------------------


def _git(folder: Path, *args: str) -> str | None:
    """Run a read-only git command in ``folder``; ``None`` on any failure (or no git at all)."""
    env = {k: v for k, v in os.environ.items() if k not in _GIT_LOCATION_VARIABLES}
    env["GIT_TERMINAL_PROMPT"] = "0"
    # Never take the index lock for a lookup; another git process may be running.
    env["GIT_OPTIONAL_LOCKS"] = "0"
    try:
        completed = subprocess.run(
            ["git", "-C", str(folder), *args],
            capture_output=True,
            text=True,
            timeout=_GIT_TIMEOUT_SECONDS,
            check=False,
            env=env,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    if completed.returncode != 0:
        return None
    return completed.stdout.strip()


def _main_worktree(folder: Path, common_dir: Path) -> Path:
    """The main worktree's folder: the parent of the shared ``.git`` directory."""
    if common_dir.name == ".git":
        return common_dir.parent
    # A separate git dir (git init --separate-git-dir) or a bare repository: ask git, whose
    # first worktree entry is always the main one.
    listing = _git(folder, "worktree", "list", "--porcelain")
    if listing:
        first = listing.splitlines()[0]
        if first.startswith("worktree "):
            return Path(first.removeprefix("worktree ")).resolve()
    return common_dir


def _path_identity(identified: Path, root: Path, name: str) -> RepositoryIdentity:
    return RepositoryIdentity(f"path:{_digest(str(identified))}", "path", root, name, None)


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:_HASH_LENGTH]


def _normalize_or_none(url: str | None) -> str | None:
    if not url:
        return None
    try:
        return normalize_remote(url) or None
    except ValueError:
        return None


def _remote_name(remote: str | None) -> str | None:
    if not remote:
        return None
    return PurePosixPath(remote).name or None


def _looks_like_local_path(text: str) -> bool:
    return (
        text.startswith(("/", "./", "../", "~", "\\"))
        or bool(re.match(r"^[A-Za-z]:[\\/]", text))  # a Windows drive
    )


def _strip_repo_suffix(path: str) -> str:
    path = path.replace("\\", "/").rstrip("/")
    if path.endswith(".git"):
        path = path[: -len(".git")].rstrip("/")
    return path


def _join_remote(host: str, path: str) -> str:
    cleaned = _strip_repo_suffix(path).strip("/").lower()
    return f"{host}/{cleaned}" if cleaned else host


def _clean_local(path: str) -> str:
    return _strip_repo_suffix(path) or "/"
