"""The private folders the workers of one ``cairn serve --workers N`` run share.

A multi-worker run keeps its metrics samples and its bulk work's progress in folders under
the system's temporary directory; a graceful stop removes them, a killed server cannot. So
each folder's name carries the pid of the process that made it, and a run sweeps, before
it makes its own, the folders of this user whose maker is no longer alive. A folder of a
living process (another server, or a process that reused a dead server's pid) is left
alone: the sweep never removes what may still be in use.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

KINDS = ("metrics", "progress")


def make_run_folder(kind: str) -> str:
    """A new folder (mode 0700) for this run's ``kind``, named by this process."""
    if kind not in KINDS:
        raise ValueError(f"unknown run folder kind {kind!r}")
    return tempfile.mkdtemp(prefix=f"cairn-{kind}-{os.getpid()}-")


def sweep_orphans(root: Path | None = None) -> list[Path]:
    """Remove this user's run folders whose maker has died; the folders removed."""
    base = Path(root if root is not None else tempfile.gettempdir())
    removed: list[Path] = []
    try:
        entries = list(base.iterdir())
    except OSError:
        return removed
    uid = os.getuid()
    for entry in entries:
        pid = _maker(entry.name)
        if pid is None or pid == os.getpid() or _alive(pid):
            continue
        try:
            info = entry.lstat()
        except OSError:
            continue
        if not entry.is_dir() or entry.is_symlink() or info.st_uid != uid:
            continue
        shutil.rmtree(entry, ignore_errors=True)
        removed.append(entry)
    return removed


def _maker(name: str) -> int | None:
    """The pid in a run folder's name (``cairn-<kind>-<pid>-<random>``), else None."""
    parts = name.split("-", 3)
    if len(parts) != 4 or parts[0] != "cairn" or parts[1] not in KINDS:
        return None
    return int(parts[2]) if parts[2].isdigit() and int(parts[2]) > 0 else None


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process: alive
        return True
    return True
