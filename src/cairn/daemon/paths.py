"""Where a home's local daemon lives, and whether one runs. Standard library only.

The daemon's files sit together in one private folder (mode 0700): ``<home>/run``, or,
when a socket path there would be too long for the kernel (``sun_path`` holds about 100
bytes), a folder of the user's runtime directory (``$XDG_RUNTIME_DIR``) or of the system's
temporary folder, named by a digest of the home:

- ``daemon.sock``: the unix socket (mode 0600: the socket's permissions are its auth);
- ``daemon.lock``: held (``flock``) by the running daemon for its whole life. The kernel
  lets go of it when the process ends however it ends, so a lock that can be taken means
  *definitely no daemon* — the one fact that allows a command to do its work in-process
  instead (a pid file alone cannot say it: pids are reused);
- ``daemon.json``: what it serves (pid, socket, the config file as it was when it
  started, settings a client needs), written once it answers; ``daemon.pid`` its pid.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

SOCKET_NAME = "daemon.sock"
MAX_SOCKET_PATH = 100  # bytes; sun_path is 108 on Linux, 104 on the BSDs and macOS


@dataclass(frozen=True, slots=True)
class DaemonPaths:
    home: Path
    folder: Path

    @property
    def socket(self) -> Path:
        return self.folder / SOCKET_NAME

    @property
    def lock(self) -> Path:
        return self.folder / "daemon.lock"

    @property
    def info(self) -> Path:
        return self.folder / "daemon.json"

    @property
    def pid(self) -> Path:
        return self.folder / "daemon.pid"

    @property
    def log(self) -> Path:
        return self.home / "logs" / "daemon.log"


def daemon_paths(home: Path) -> DaemonPaths:
    """The daemon files of ``home`` (one daemon per home: it serves that home's store)."""
    home = Path(os.path.abspath(home))
    tag = hashlib.sha256(os.fsencode(home)).hexdigest()[:16]
    candidates = [home / "run"]
    runtime = os.environ.get("XDG_RUNTIME_DIR")
    if runtime and os.path.isabs(runtime):
        candidates.append(Path(runtime) / "cairn" / tag)
    candidates.append(Path(tempfile.gettempdir()) / f"cairn-{os.getuid()}" / tag)
    for folder in candidates:
        if len(os.fsencode(folder / SOCKET_NAME)) <= MAX_SOCKET_PATH:
            return DaemonPaths(home, folder)
    return DaemonPaths(home, candidates[-1])


def daemon_running(paths: DaemonPaths) -> bool:
    """Whether a daemon holds this home's lock. False means definitely none runs."""
    try:
        fd = os.open(paths.lock, os.O_RDONLY | os.O_CLOEXEC)
    except FileNotFoundError:
        return False
    except OSError:
        return True  # cannot tell: never take it for "not running"
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except OSError:
        return True  # held (EWOULDBLOCK), or cannot tell: either way not "none runs"
    else:
        fcntl.flock(fd, fcntl.LOCK_UN)
        return False
    finally:
        os.close(fd)


def read_info(paths: DaemonPaths) -> dict[str, Any] | None:
    """What the running daemon wrote about itself (None: nothing readable)."""
    try:
        data = json.loads(paths.info.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def config_file(home: Path, explicit: str | os.PathLike[str] | None) -> Path | None:
    """The config file a command in ``home`` reads (as :func:`cairn.config.resolve_config`
    picks it: an explicit file, else env CAIRN_CONFIG, else <home>/config.yaml when there;
    None: the defaults)."""
    if explicit is not None:
        return Path(os.path.abspath(explicit))
    env = os.environ.get("CAIRN_CONFIG")
    if env:
        return Path(os.path.abspath(env))
    candidate = Path(os.path.abspath(home)) / "config.yaml"
    return candidate if candidate.exists() else None


def config_stamp(path: Path | None) -> dict[str, Any] | None:
    """The config file as it is now: its path, size and modification time (None: none)."""
    if path is None:
        return None
    try:
        st = os.stat(path)
    except OSError:
        return {"path": str(path), "missing": True}
    return {"path": str(path), "size": st.st_size, "mtime_ns": st.st_mtime_ns}
