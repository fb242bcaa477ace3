"""Where a home's local daemon lives, and whether one runs (over :mod:`cairn.daemon.probe`).

The daemon's files sit together in one private folder (mode 0700), ``<home>/run`` unless
a socket path there would be too long (see :func:`cairn.daemon.probe.folder_of`):

- ``daemon.sock``: the unix socket (mode 0600: the socket's permissions are its auth);
- ``daemon.lock``: held (``flock``) by the running daemon for its whole life. The kernel
  lets go of it when the process ends however it ends, so a lock that can be taken means
  *definitely no daemon* — the one fact that allows a command to do its work in-process
  instead (a pid file alone cannot say it: pids are reused);
- ``daemon.json``: what it serves (pid, socket, the config file as it was when it
  started, settings a client needs); ``daemon.pid``: its pid.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cairn.daemon import probe


@dataclass(frozen=True, slots=True)
class DaemonPaths:
    home: Path
    folder: Path

    @property
    def socket(self) -> Path:
        return self.folder / probe.SOCKET_NAME

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
    absolute = os.path.abspath(home)
    return DaemonPaths(Path(absolute), Path(probe.folder_of(absolute)))


def daemon_running(paths: DaemonPaths) -> bool:
    """Whether a daemon holds this home's lock. False means definitely none runs."""
    return probe.lock_held(str(paths.lock))


def read_info(paths: DaemonPaths) -> dict[str, Any] | None:
    """What the running daemon wrote about itself (None: nothing readable)."""
    return probe.read_json(str(paths.info))


def config_file(home: Path, explicit: str | os.PathLike[str] | None) -> Path | None:
    """The config file a command in ``home`` reads (None: the defaults)."""
    found = probe.config_file_of(str(home), os.fspath(explicit) if explicit else None)
    return Path(found) if found is not None else None


def config_stamp(path: Path | None) -> dict[str, Any] | None:
    """The config file as it is now: its path, size and modification time (None: none)."""
    return probe.stamp_of(str(path) if path is not None else None)
