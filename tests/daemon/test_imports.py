"""The client path imports nothing heavy: a hook and a command through a running daemon,
in real processes, with what each had imported when it ended."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from daemon.support import env_for, event, make_home, make_repo, running

pytestmark = pytest.mark.slow

HEAVY = {
    *("numpy", "onnxruntime", "tokenizers", "sqlite_vec", "usearch", "sqlite3"),
    *("fastapi", "uvicorn", "starlette", "cairn.engine", "cairn.storage", "cairn.compose"),
}
# The hook's fast path does without the command line's and the contract's libraries too.
NOT_IN_THE_HOOK = {"click", "pydantic", "httpx", "yaml", "cairn.config", "cairn.provider"}


def modules_of(
    home: Path, module: str, *args: str, stdin: bytes = b"", cwd: Path
) -> tuple[set[str], str]:
    """The modules a real ``cairn`` process (entry ``module``) had imported at exit,
    and its output."""
    out = home.parent / "modules.json"
    code = (
        "import atexit, json, sys\n"
        f"atexit.register(lambda: open({str(out)!r}, 'w').write(json.dumps(sorted(sys.modules))))\n"
        f"sys.argv = ['cairn', *{list(args)!r}]\n"
        f"from {module} import main\n"
        "main()\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], input=stdin, capture_output=True,
                          env=env_for(home), cwd=cwd, timeout=120, check=False)  # fmt: skip
    assert proc.returncode == 0, proc.stderr.decode()
    found: list[str] = json.loads(out.read_text())
    out.unlink()
    return set(found), proc.stdout.decode()


def heavy(modules: set[str], names: set[str]) -> set[str]:
    return {m for m in modules if m in names or m.split(".")[0] in names
            or any(m.startswith(n + ".") for n in names)}  # fmt: skip


def test_a_hook_through_the_daemon_imports_nothing_heavy(tmp_path: Path) -> None:
    home = make_home(tmp_path)
    repo = make_repo(tmp_path)
    with running(home):
        modules, stdout = modules_of(home, "cairn.cli.fast", "hook", "prompt",
                                     stdin=event("prompt-rule", repo), cwd=repo)  # fmt: skip
        assert "cairn remembered" in stdout  # it did go through, and did the work
        assert heavy(modules, HEAVY | NOT_IN_THE_HOOK) == set()
        assert "cairn.daemon.fast" in modules


# What a hook through the daemon may import beyond what Python's own start already has:
# cairn's client modules, three C modules (the lock, the socket, the JSON scanner) and
# __future__ (every module's ``from __future__ import annotations`` loads it).
HOOK_CLIENT = {
    "__future__",
    *("cairn", "cairn.cli", "cairn.cli.fast"),
    *("cairn.daemon", "cairn.daemon.fast", "cairn.daemon.probe", "cairn.daemon.wire"),
    *("fcntl", "_socket", "_json"),
}
# The harness itself imports nothing (atexit is built in): what it lists is the process's.
_LISTED = (
    "import atexit, sys\n"
    "out, sys.argv = sys.argv[1], ['cairn', *sys.argv[2:]]\n"
    "atexit.register(lambda: open(out, 'w').write('\\n'.join(sorted(sys.modules))))\n"
)


def listed(
    home: Path, body: str, *args: str, stdin: bytes = b"", cwd: Path
) -> tuple[set[str], str]:
    """The modules a process running ``body`` had at exit, and its output."""
    out = home.parent / "listed.txt"
    proc = subprocess.run([sys.executable, "-c", _LISTED + body, str(out), *args],
                          input=stdin, capture_output=True, env=env_for(home), cwd=cwd,
                          timeout=120, check=False)  # fmt: skip
    assert proc.returncode == 0, proc.stderr.decode()
    found = set(out.read_text().split("\n"))
    out.unlink()
    return found, proc.stdout.decode()


def test_a_hook_through_the_daemon_imports_little_beyond_python_itself(tmp_path: Path) -> None:
    """Not json (it imports re and enum), hashlib (OpenSSL), collections or typing: a hook
    runs on every prompt, and each of them costs more than its whole request."""
    home = make_home(tmp_path)
    repo = make_repo(tmp_path)
    start_only, _ = listed(home, "pass\n", cwd=repo)
    with running(home):
        hook, stdout = listed(home, "from cairn.cli.fast import main\nmain()\n", "hook",
                              "prompt", stdin=event("prompt-rule", repo), cwd=repo)  # fmt: skip
    assert "cairn remembered" in stdout  # it did go through, and did the work
    assert "cairn.daemon.fast" in hook  # it did go through the daemon's fast path
    assert hook - start_only <= HOOK_CLIENT, sorted(hook - start_only - HOOK_CLIENT)
    assert {"json", "re", "enum", "hashlib", "typing", "collections"}.isdisjoint(hook - start_only)


def test_a_command_through_the_daemon_imports_nothing_heavy(tmp_path: Path) -> None:
    home = make_home(tmp_path)
    with running(home):
        modules, stdout = modules_of(home, "cairn.cli.main", "remember", "Use pnpm",
                                     cwd=tmp_path)  # fmt: skip
        assert "remembered" in stdout
        assert heavy(modules, HEAVY) == set()
        modules, stdout = modules_of(home, "cairn.cli.main", "recall", "pnpm",
                                     cwd=tmp_path)  # fmt: skip
        assert "Use pnpm" in stdout
        assert heavy(modules, HEAVY) == set()


def test_a_recall_through_the_entry_point_imports_no_command_line(tmp_path: Path) -> None:
    # a plain recall is answered before click, the config or the contract is imported
    home = make_home(tmp_path)
    repo = make_repo(tmp_path)
    with running(home):
        modules_of(home, "cairn.cli.main", "remember", "Use pnpm", cwd=repo)
        modules, stdout = modules_of(home, "cairn.cli.fast", "recall", "pnpm", cwd=repo)
        assert "Use pnpm" in stdout
        assert heavy(modules, HEAVY | NOT_IN_THE_HOOK) == set()
        assert "cairn.daemon.fast" in modules


def test_without_a_daemon_the_same_command_does_import_the_engine(tmp_path: Path) -> None:
    """The check can fail: in-process, the engine and the store are imported."""
    home = make_home(tmp_path)
    modules, _ = modules_of(home, "cairn.cli.main", "recall", "pnpm", cwd=tmp_path)
    assert {"numpy", "sqlite3", "cairn.engine"} <= heavy(modules, HEAVY)
