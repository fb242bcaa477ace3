"""What a command checks before it goes through the daemon: where the daemon's files
are, whether one holds the lock, what it wrote about itself, and which config file the
command would read. Plain strings and the few standard modules Python has loaded anyway
(no pathlib, dataclasses or typing at run time, and not :mod:`json`, which imports
``re`` and ``enum``: its C scanner reads ``daemon.json``): the hooks' fast path imports
this and :mod:`cairn.daemon.wire`, and little else.
"""

from __future__ import annotations

import fcntl
import os

SOCKET_NAME = "daemon.sock"
MAX_SOCKET_PATH = 100  # bytes; sun_path is 108 on Linux, 104 on the BSDs and macOS


def folder_of(home: str) -> str:
    """The daemon's folder for ``home``: ``<home>/run``, or, when a socket path there is
    too long for the kernel, a folder named by a digest of the home in the user's
    runtime directory or the system's temporary folder."""
    home = os.path.abspath(home)
    first = os.path.join(home, "run")
    if _fits(first):
        return first
    import hashlib
    import tempfile

    tag = hashlib.sha256(os.fsencode(home)).hexdigest()[:16]
    runtime = os.environ.get("XDG_RUNTIME_DIR")
    if runtime and os.path.isabs(runtime) and _fits(os.path.join(runtime, "cairn", tag)):
        return os.path.join(runtime, "cairn", tag)
    return os.path.join(tempfile.gettempdir(), f"cairn-{os.getuid()}", tag)


def _fits(folder: str) -> bool:
    return len(os.fsencode(os.path.join(folder, SOCKET_NAME))) <= MAX_SOCKET_PATH


def lock_held(lock: str) -> bool:
    """Whether a daemon holds ``lock``. False means definitely none runs: the kernel
    releases a lock when its process ends, however it ends."""
    try:
        fd = os.open(lock, os.O_RDONLY | os.O_CLOEXEC)
    except (FileNotFoundError, NotADirectoryError):
        return False  # no lock file, or a path that cannot hold one: nothing serves there
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


def read_json(path: str) -> dict[str, object] | None:
    try:
        with open(path, encoding="utf-8") as file:
            data = loads(file.read())
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


class _Plain:
    """What :func:`json.loads` passes its C scanner by default."""

    strict = True
    object_hook = None
    object_pairs_hook = None
    parse_float = float
    parse_int = int
    parse_constant = float  # NaN, Infinity, -Infinity, as json's own table maps them
    array_hook = None  # read by the scanner of Python 3.15 on


_WHITESPACE = " \t\n\r"


def loads(text: str) -> object:
    """:func:`json.loads` of a document, through the C scanner :mod:`json` itself uses,
    without importing :mod:`json` (whose module start costs a hook through the daemon
    more than the rest of its client side). ValueError: not one JSON document."""
    try:
        from _json import make_scanner

        scan = make_scanner(_Plain)  # type: ignore[arg-type]  # its context is duck-typed
    except Exception:  # no C accelerator, or one that wants more of its context
        import json

        return json.loads(text)
    start = len(text) - len(text.lstrip(_WHITESPACE))
    try:
        value, end = scan(text, start)
    except StopIteration:
        raise ValueError("not a JSON document") from None
    if text[end:].strip(_WHITESPACE):
        raise ValueError("more than one JSON document")
    return value


def config_file_of(home: str, explicit: str | None) -> str | None:
    """The config file a command in ``home`` reads, as :func:`cairn.config.resolve_config`
    picks it: an explicit file, else env CAIRN_CONFIG, else <home>/config.yaml when there
    (None: the defaults)."""
    if explicit is not None:
        return os.path.abspath(explicit)
    env = os.environ.get("CAIRN_CONFIG")
    if env:
        return os.path.abspath(env)
    candidate = os.path.join(os.path.abspath(home), "config.yaml")
    return candidate if os.path.exists(candidate) else None


def stamp_of(path: str | None) -> dict[str, object] | None:
    """A config file as it is now (path, size, modification time); None: no file. The
    store named by CAIRN_DATABASE_URL is part of it (as a hash: no password in
    daemon.json), so a command with another store in its environment works in-process."""
    url = os.environ.get("CAIRN_DATABASE_URL", "").strip()
    store: dict[str, object] = {}
    if url:
        import hashlib  # only then: loading OpenSSL costs a hook more than its request

        store["store_env"] = hashlib.sha256(url.encode()).hexdigest()[:16]
    if path is None:
        return {"path": None, **store} if store else None
    try:
        st = os.stat(path)
    except OSError:
        return {"path": path, "missing": True, **store}
    return {"path": path, "size": st.st_size, "mtime_ns": st.st_mtime_ns, **store}


def serving_info(home: str, config_path: str | None) -> dict[str, object] | None:
    """What the daemon serving ``home`` with this very config wrote about itself, or None
    when no daemon runs, or when it serves another config (or this one as it was
    before it changed). Only the fast path uses the shortcut; see
    :func:`cairn.daemon.client.find_daemon` for the whole rule."""
    folder = folder_of(home)
    if not lock_held(os.path.join(folder, "daemon.lock")):
        return None
    info = read_json(os.path.join(folder, "daemon.json"))
    if info is None or info.get("config") != stamp_of(config_file_of(home, config_path)):
        return None
    return info
