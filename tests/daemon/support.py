"""A real ``cairn daemon`` in a temporary home, for the tests: start, stop, and reading
what it counted (its ``/metrics`` over the socket) and logged."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any

from cairn.daemon.paths import daemon_paths
from cairn.daemon.wire import exchange
from cli_runner import TEST_CONFIG

EVENTS = Path(__file__).resolve().parents[1] / "data" / "hooks" / "claude-code"


def env_for(home: Path) -> dict[str, str]:
    env = {**os.environ, "CAIRN_HOME": str(home), "PYTHONPATH": os.pathsep.join(sys.path)}
    env.pop("CAIRN_CONFIG", None)
    return env


def cairn(
    home: Path, *args: str, stdin: bytes | None = None, cwd: Path | None = None,
    entry: str = "cairn.cli.fast",
) -> subprocess.CompletedProcess[str]:  # fmt: skip
    """The real command (by default through the installed entry point's module)."""
    proc = subprocess.run(
        [sys.executable, "-m", entry, *args], input=stdin, capture_output=True,
        env=env_for(home), timeout=300, cwd=cwd, check=False,
    )  # fmt: skip
    return subprocess.CompletedProcess(
        proc.args, proc.returncode, proc.stdout.decode(), proc.stderr.decode()
    )


def make_home(root: Path, extra: str = "") -> Path:
    home = root / "home"
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.yaml").write_text(TEST_CONFIG + extra, encoding="utf-8")
    return home


def make_repo(root: Path) -> Path:
    repo = root / "shop"
    repo.mkdir()
    git = ["git", "-c", "user.email=t@example.org", "-c", "user.name=t"]
    subprocess.run([*git, "init", "-q"], cwd=repo, check=True)
    subprocess.run([*git, "commit", "-q", "--allow-empty", "-m", "init"], cwd=repo, check=True)
    return repo


def event(name: str, repo: Path, **changes: Any) -> bytes:
    data = json.loads((EVENTS / f"{name}.json").read_text(encoding="utf-8"))
    data.update(cwd=str(repo), **changes)
    return json.dumps(data).encode()


def start(home: Path, *args: str) -> dict[str, Any]:
    proc = cairn(home, "--json", "daemon", "start", *args)
    assert proc.returncode == 0, proc.stderr + log_text(home)
    state: dict[str, Any] = json.loads(proc.stdout)
    return state


def stop(home: Path) -> None:
    proc = cairn(home, "daemon", "stop")
    assert proc.returncode == 0, proc.stderr


@contextmanager
def running(home: Path, *args: str) -> Iterator[dict[str, Any]]:
    state = start(home, *args)
    try:
        yield state
    finally:
        if daemon_paths(home).lock.exists():
            cairn(home, "daemon", "stop")
        pid = state.get("pid")
        if isinstance(pid, int):  # whatever a test did to it, it ends here
            with suppress(ProcessLookupError):
                os.kill(pid, 9)


def counted(home: Path, route: str, operation: str | None = None) -> float:
    """How many requests of ``route`` (and ``operation``) the daemon's metrics count."""
    reply = exchange(daemon_paths(home).socket, "GET", "/metrics", timeout=10)
    assert reply.status == 200
    total = 0.0
    for line in reply.body.decode().splitlines():
        wanted = operation is None or f'operation="{operation}"' in line
        if line.startswith("cairn_requests_total{") and f'route="{route}"' in line and wanted:
            total += float(line.rsplit(" ", 1)[1])
    return total


def log_text(home: Path) -> str:
    path = daemon_paths(home).log
    return path.read_text(encoding="utf-8", errors="replace") if path.exists() else ""


def access_lines(home: Path, route: str) -> list[dict[str, Any]]:
    found = []
    for line in log_text(home).splitlines():
        if '"event": "request"' in line and re.search(f'"route": "{route}"', line):
            found.append(json.loads(line))
    return found
