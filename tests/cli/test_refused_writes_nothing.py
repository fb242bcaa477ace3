"""Bad input gets a clear one-line error and changes nothing (SPEC §7), inside a git
repository too: there a command finds the repository and would record its readable name
(a write: the project registry, and the Markdown that shows it). The command's own request
is checked first; a refused one records nothing, by the command line and by the hook.
Through the real `cairn` command in a real repository, the store made beforehand."""

from __future__ import annotations

import hashlib
import json
import sqlite3
from pathlib import Path

import pytest

from cli.test_personal_memory import make_repo
from cli_runner import invoke_cairn
from hook_events import raw

LINE = "the character U+000A (it must be one line)"

# (the command line, its one line): each resolves the repository of the working folder
REFUSED: list[tuple[tuple[str, ...], str]] = [
    (("list", "--tag", "a\nb"), f"tag contains {LINE}"),
    (("list", "--as-of", "yesterday"), "as_of is not an ISO-8601 time: 'yesterday'"),
    (("recall", "deploy", "--as-of", "yesterday"), "as_of is not an ISO-8601 time: 'yesterday'"),
    (("recall", "a\x01b"), "the query contains the character U+0001"),
    (("context", "--task", "x" * 10_001), "task is 10,001 characters; the limit is 10,000"),
    (("remember", "--tag", "a\nb", "Use tabs."), f"tags[0] contains {LINE}"),
    (("ask", "why\x01"), "question contains the character U+0001"),
    (("review", "TRANSCRIPT"), "transcript contains a NUL byte"),
    (("observe", "--success", "--project", ".", "--session", "a b"),
     "session id 'a b' must be printable, without spaces"),
    (("signal", "always \x01 use tabs"), "the statement contains the character U+0001"),
    (("feedback", "\x07x", "ignored"), "not an application id: '\\x07x'"),
]  # fmt: skip


def _world(root: Path) -> tuple[Path, Path]:
    """A home whose store exists (made outside any repository) and a repository it has
    never seen."""
    home, outside = root / "home", root / "outside"
    outside.mkdir()
    made = invoke_cairn(home, "remember", "Write commit messages in English.", cwd=outside)
    assert made.returncode == 0, made.stderr
    (root / "transcript.txt").write_bytes(b"user: always use tabs\x00\n")
    return home, make_repo(root / "shop", "the shop")


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    return _world(tmp_path_factory.mktemp("refused"))


def _store(home: Path) -> tuple[list[tuple[object, ...]], dict[str, tuple[str, int]]]:
    """The journal's rows, and each file of the home with its content's hash and mtime
    (but SQLite's shared-memory index, which reading the journal here touches)."""
    with sqlite3.connect(f"file:{home / 'memory.db'}?mode=ro", uri=True) as db:
        events = db.execute("SELECT * FROM events ORDER BY rowid").fetchall()
    files = {
        str(p.relative_to(home)): (hashlib.sha256(p.read_bytes()).hexdigest(), p.stat().st_mtime_ns)
        for p in sorted(home.rglob("*"))
        if p.is_file() and p.parent.name != "logs" and not p.name.endswith("-shm")
    }
    return events, files


@pytest.mark.parametrize(("args", "message"), REFUSED, ids=[a[0] for a, _ in REFUSED])
def test_a_refused_command_in_a_repository_records_nothing(
    world: tuple[Path, Path], args: tuple[str, ...], message: str
) -> None:
    home, repo = world
    argv = [str(repo.parent / "transcript.txt") if a == "TRANSCRIPT" else a for a in args]
    before = _store(home)
    assert "project.named" not in str(before[0])  # the repository is still to be named
    proc = invoke_cairn(home, *argv, cwd=repo)
    assert (proc.returncode, proc.stdout, proc.stderr) == (2, "", f"cairn: error: {message}\n")
    assert _store(home) == before


def test_a_hook_whose_session_is_refused_records_nothing(world: tuple[Path, Path]) -> None:
    home, repo = world
    before = _store(home)
    assert "project.named" not in str(before[0])
    event = raw("session-start", cwd=str(repo), session_id="a b")
    proc = invoke_cairn(home, "hook", "session-start", stdin=event, cwd=repo)
    assert (proc.returncode, proc.stdout) == (0, "")  # a hook never fails the host
    logged = (home / "logs" / "hooks.log").read_text(encoding="utf-8")
    assert "session id 'a b' must be printable, without spaces" in logged
    assert _store(home) == before


def test_a_refused_command_in_a_new_home_makes_no_store(tmp_path: Path) -> None:
    """A key that reads the store (remember, signal, feedback) is made only once the
    request is checked: a refused one does not even create the store."""
    home, repo = tmp_path / "home", make_repo(tmp_path / "shop", "the shop")
    for args, message in REFUSED:
        if "TRANSCRIPT" in args:
            continue
        proc = invoke_cairn(home, *args, cwd=repo)
        assert (proc.returncode, proc.stderr) == (2, f"cairn: error: {message}\n"), args
    assert sorted(p.name for p in home.iterdir()) == ["config.yaml"]


def _named(home: Path, repo: Path) -> list[str]:
    journal = json.loads(invoke_cairn(home, "--json", "journal", cwd=repo).stdout)
    return [e["payload"]["name"] for e in journal if e["type"] == "project.named"]


@pytest.mark.parametrize(
    "served",
    [("list", "--tag", "ok"), ("status",), ("hook", "session-start")],
    ids=["list", "status", "hook"],
)
def test_the_repository_is_named_by_a_command_that_is_served(
    tmp_path: Path, served: tuple[str, ...]
) -> None:
    """Not a write avoided for good: the first command served there records the name
    (once), as before; so do `status` (no request of its own) and the session's hook."""
    home, repo = _world(tmp_path)
    refused = invoke_cairn(home, "list", "--tag", "a\nb", cwd=repo)
    assert refused.returncode == 2 and _named(home, repo) == []
    event = raw("session-start", cwd=str(repo)) if served[0] == "hook" else None
    for _ in range(2):
        proc = invoke_cairn(home, *served, stdin=event, cwd=repo)
        assert proc.returncode == 0 and "Traceback" not in proc.stderr, proc.stderr
    assert _named(home, repo) == ["shop"]
