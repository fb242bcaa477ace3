"""Where a user's cairn home is by default, and keeping it private (the home 0700, every
file in it 0600). Standard library only: every command (and a hook through the daemon)
needs it before anything else, and must not pay for the config parser to learn it."""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Any


def default_home() -> Path:
    """env CAIRN_HOME, else ~/.cairn."""
    return Path(os.environ.get("CAIRN_HOME") or Path.home() / ".cairn")


PRIVATE_FOLDER = 0o700
PRIVATE_FILE = 0o600


def make_private_folder(folder: Path) -> Path:
    """``folder``, made if missing, that only its owner can enter (mode 0700); a missing
    parent is made 0700 too (``mkdir(parents=True)`` would make it 0755)."""
    missing: list[Path] = []
    at = folder
    while not at.exists() and at != at.parent:
        missing.append(at)
        at = at.parent
    for made in reversed(missing):
        made.mkdir(mode=PRIVATE_FOLDER, exist_ok=True)
    if os.stat(folder).st_mode & 0o077:
        os.chmod(folder, PRIVATE_FOLDER)
    return folder


def open_private(path: Path, mode: str = "a") -> Any:
    """``path`` opened as text (``mode`` "a" or "w"), created 0600: what cairn writes
    under a home (logs, markers) holds the user's memory, so no one else may read it."""
    flags = os.O_WRONLY | os.O_CREAT | (os.O_APPEND if mode == "a" else os.O_TRUNC)
    fd = os.open(path, flags | os.O_CLOEXEC, PRIVATE_FILE)
    try:
        if os.fstat(fd).st_mode & 0o077:
            os.fchmod(fd, PRIVATE_FILE)
    except OSError:
        pass
    return os.fdopen(fd, mode, encoding="utf-8")


def make_private(home: Path | None, store: Path | None = None) -> str | None:
    """Take group and other access away from ``home`` and everything in it (the store,
    its journal and logs, the Markdown projection, tokens, sockets, exports written there:
    all of it is the user's memory), and from the files of a ``store`` kept elsewhere (it
    and its ``-wal``, ``-shm``, ``.ann`` ...: every name it begins; with ``home`` None,
    only those). Symbolic links and what others own are left alone. Returns the one line
    that says what was tightened (None: all was private already)."""
    loose: list[tuple[str, int]] = []

    def tighten(path: str, private_mode: int) -> None:
        try:
            st = os.lstat(path)
        except OSError:
            return
        if stat.S_ISLNK(st.st_mode) or st.st_uid != os.getuid() or not st.st_mode & 0o077:
            return
        try:
            os.chmod(path, private_mode)
        except OSError:
            return
        loose.append((path, stat.S_IMODE(st.st_mode)))

    def tighten_tree(path: str) -> None:
        if not os.path.isdir(path) or os.path.islink(path):
            tighten(path, PRIVATE_FILE)
            return
        tighten(path, PRIVATE_FOLDER)
        for root, folders, names in os.walk(path):
            for name in folders:
                tighten(os.path.join(root, name), PRIVATE_FOLDER)
            for name in names:
                tighten(os.path.join(root, name), PRIVATE_FILE)

    def entries(folder: Path) -> list[str]:
        try:
            return sorted(os.listdir(folder))
        except OSError:
            return []

    if home is not None and home.is_dir():
        tighten_tree(str(home))
    if store is not None and store.parent != home:  # (inside the home: done above)
        for name in entries(store.parent):
            if name.startswith(store.name) or name.startswith(f".{store.name}."):
                tighten_tree(str(store.parent / name))
    if not loose:
        return None
    first, mode = loose[0]
    more = f" and {len(loose) - 1} more" if len(loose) > 1 else ""
    return (
        f"made {first} (mode {mode:04o}){more} private to its owner (folders 0700, files"
        " 0600): other users could read the memory in them"
    )
