"""``cairn daemon start | stop | status``: the daemon as a background process.

``start`` runs ``cairn serve --no-tcp`` (or on a loopback port too, with ``port``)
detached from the terminal — a session of its own, no standard input, its log in
``<home>/logs/daemon.log`` — and returns once it answers ``/health`` on its socket.
``stop`` asks it to stop (SIGTERM: the requests in flight finish, the engine closes, the
socket and its files are removed) and waits until it let go of its lock. Both are safe
to repeat: starting a running daemon or stopping a stopped one changes nothing.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from cairn.daemon.paths import DaemonPaths, daemon_paths, daemon_running, read_info
from cairn.daemon.wire import WireError, exchange
from cairn.errors import StorageError
from cairn.homes import make_private_folder


def answers(paths: DaemonPaths, timeout: float = 2.0) -> bool:
    """Whether the daemon's socket answers ``/health`` with 200."""
    try:
        return exchange(paths.socket, "GET", "/health", timeout=timeout).status == 200
    except WireError:
        return False


def status(home: Path) -> dict[str, Any]:
    """Whether a daemon serves ``home``, and where."""
    paths = daemon_paths(home)
    running = daemon_running(paths)
    info = read_info(paths) if running else None
    state: dict[str, Any] = {
        "running": running,
        "answering": running and answers(paths),
        "home": str(paths.home),
        "socket": str(paths.socket),
        "log": str(paths.log),
    }
    if info:
        state.update(
            {k: info.get(k) for k in ("pid", "version", "url", "store", "config", "started_at")}
        )
    return state


def start(
    home: Path,
    config_path: str | None,
    *,
    port: int | None = None,
    timeout: float = 60.0,
    log_level: str = "info",
) -> dict[str, Any]:
    """Start the daemon of ``home`` (nothing when one runs); its status once it answers."""
    paths = daemon_paths(home)
    if daemon_running(paths) and answers(paths):
        return {**status(home), "started": False}
    command = [sys.executable, "-m", "cairn.cli.main", "--home", str(paths.home)]
    if config_path is not None:
        command += ["--config", os.path.abspath(config_path)]
    # One process: the daemon answers one user's hooks and commands, and each worker
    # would hold a model and the indexes of its own (a server host sets --workers).
    command += ["serve", "--log-level", log_level, "--workers", "1"]
    command += ["--no-tcp"] if port is None else ["--port", str(port)]
    make_private_folder(paths.log.parent)
    fd = os.open(paths.log, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    with os.fdopen(fd, "ab") as log:
        log.write(f"--- cairn daemon start {time.strftime('%Y-%m-%dT%H:%M:%S')}\n".encode())
        log.flush()
        process = subprocess.Popen(
            command,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=log,
            start_new_session=True,  # no terminal: a Ctrl-C or a closed shell leaves it be
            close_fds=True,
        )
    deadline = time.monotonic() + timeout
    while not answers(paths, timeout=1.0):
        code = process.poll()
        if code is not None and not daemon_running(paths):
            raise StorageError(
                f"the cairn daemon did not start (exit {code}): {_last_error(paths.log)}"
                f" (log: {paths.log})"
            )
        if time.monotonic() > deadline:
            raise StorageError(
                f"the cairn daemon did not answer within {timeout:g} s (log: {paths.log})"
            )
        time.sleep(0.05)
    return {**status(home), "started": True}


def stop(home: Path, *, timeout: float = 60.0) -> dict[str, Any]:
    """Stop the daemon of ``home`` gracefully (nothing when none runs)."""
    paths = daemon_paths(home)
    if not daemon_running(paths):
        _remove_leftovers(paths)
        return {**status(home), "stopped": False}
    pid = _serving_pid(paths)
    if pid is None:
        raise StorageError(
            f"a cairn daemon holds {paths.lock} but does not say its pid; see {paths.log}"
        )
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + timeout
    while daemon_running(paths) or alive(pid):
        if time.monotonic() > deadline:
            raise StorageError(
                f"the cairn daemon (pid {pid}) did not stop within {timeout:g} s"
                f" (kill -9 {pid} ends it; nothing of the store is lost)"
            )
        time.sleep(0.05)
    return {**status(home), "stopped": True, "pid": pid}


def alive(pid: int) -> bool:
    """Whether process ``pid`` still runs (a zombie nobody reaped yet has ended)."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as file:
            state = file.read().rsplit(")", 1)[1].split()[0]
    except FileNotFoundError:
        return False
    except (OSError, IndexError):
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        except PermissionError:
            return True
        return True
    return state not in ("Z", "X")


def _serving_pid(paths: DaemonPaths) -> int | None:
    """The pid of the process that serves the socket (asked over it, so a reused pid in a
    stale file is never signalled), else the pid it wrote."""
    try:
        reply = exchange(paths.socket, "GET", "/local/daemon", timeout=5.0)
        pid = json.loads(reply.body).get("pid") if reply.status == 200 else None
    except (WireError, ValueError, AttributeError):
        pid = None
    if isinstance(pid, int):
        return pid
    info = read_info(paths) or {}
    written = info.get("pid")
    return written if isinstance(written, int) and written > 0 else None


def _remove_leftovers(paths: DaemonPaths) -> None:
    """The files of a daemon that died without removing them (none runs: the lock is free)."""
    for path in (paths.info, paths.pid):
        path.unlink(missing_ok=True)


def _last_error(log: Path) -> str:
    try:
        lines = log.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return "no log"
    for line in reversed(lines[-50:]):
        text = line.strip()
        if text.startswith("cairn: error:"):
            return text.removeprefix("cairn: error:").strip()
        with contextlib.suppress(ValueError, AttributeError):
            data = json.loads(text)
            if data.get("level") in ("error", "ERROR"):
                return str(data.get("message") or data.get("event"))
    return lines[-1].strip() if lines else "no output"
