"""The store's file on disk: what is refused before SQLite sees it, how a new one is made,
how one is opened when it cannot be written, and what a failing disk or file is called.

- A file that is empty or not SQLite is never taken for a new store: an empty
  ``memory.db`` is a store cut short (cairn never leaves one: a new store is built under
  another name and linked into place whole), and a foreign file is someone else's.
- A new store is private from its first byte (0600 in a 0700 folder); SQLite gives the
  ``-wal`` and ``-shm`` files the database's own mode.
- A store that cannot be written (a read-only file, folder or file system, or a full disk
  where SQLite cannot make its ``-shm`` file) still opens for reading: ``immutable`` when
  no write-ahead log holds commits the file lacks. Writes are then refused in one line.
- SQLite's errors become cairn's: a full disk, a read-only store and a damaged file each
  say so, with what to do, instead of the message of whatever statement met them.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
from collections.abc import Callable
from pathlib import Path
from urllib.parse import quote

from cairn.errors import (
    CairnError,
    DamagedStore,
    DiskFull,
    InvalidInput,
    ReadOnlyStore,
    StorageError,
    StoreUnusable,
)
from cairn.homes import make_private_folder

SQLITE_MAGIC = b"SQLite format 3\x00"
BUSY_TIMEOUT_S = 60.0
PRIVATE_FILE = 0o600
PRIVATE_FOLDER = 0o700
SIDE_FILES = ("-wal", "-shm", "-journal")
DISK_FULL = "the disk is full"

# SQLite's primary result codes (the low byte of an extended code)
_CORRUPT, _FULL, _CANTOPEN, _READONLY, _IOERR, _NOTADB = 11, 13, 14, 8, 10, 26
_BUSY, _LOCKED = 5, 6


def repair_hint(path: Path) -> str:
    return (
        f"run `cairn doctor` to check it and `cairn doctor --repair` to rebuild it from its"
        f" journal and Markdown files (the damaged file is kept beside it); or restore {path}"
        " from a backup"
    )


def damaged(path: Path, detail: str) -> DamagedStore:
    return DamagedStore(f"{path} is damaged ({detail}): nothing was changed; {repair_hint(path)}")


def check_store_file(path: Path) -> bool:
    """Whether ``path`` holds a store already (False: none yet); refuses an empty file
    and a file that is not SQLite."""
    try:
        with path.open("rb") as handle:
            head = handle.read(len(SQLITE_MAGIC))
    except FileNotFoundError:
        return False
    except IsADirectoryError:
        raise InvalidInput(f"{path} is a folder, not a memory file") from None
    except OSError as exc:
        raise InvalidInput(f"{path}: cannot read ({exc.strerror or exc})") from None
    if not head:
        raise DamagedStore(
            f"{path} is empty (0 bytes), so it is not a store cairn can use, and cairn will"
            " not start a new one over it; nothing was written to it. If it should hold"
            f" memories, {repair_hint(path)}; else remove it to start a new store"
        )
    if head != SQLITE_MAGIC:
        raise InvalidInput(f"{path} is not a cairn memory file (not an SQLite file)")
    return True


def connect(path: Path, *, immutable: bool = False) -> sqlite3.Connection:
    """A connection in autocommit mode (transactions are explicit); ``immutable``: read
    only, without locks or the ``-shm`` file, for a store nothing else can write."""
    target = f"file:{quote(str(path))}?immutable=1" if immutable else str(path)
    return sqlite3.connect(
        target, uri=immutable, isolation_level=None, check_same_thread=False,
        timeout=BUSY_TIMEOUT_S,
    )  # fmt: skip


def check_tables(conn: sqlite3.Connection, path: Path) -> None:
    """Read the schema (which also finds a damaged header, and makes the ``-shm`` file);
    refuses another program's database before anything is written to it."""
    names = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    if names and not names & {"schema_version", "meta"}:
        raise InvalidInput(
            f"{path} is an SQLite file of another program, not cairn's; nothing was written"
            " to it (choose another memory.store.path)"
        )


def open_store(path: Path) -> tuple[sqlite3.Connection, str | None]:
    """The store's connection, and why it is read-only (None: it can be written)."""
    why = unwritable(path)
    conn: sqlite3.Connection | None = None
    try:
        conn = connect(path)
        check_tables(conn, path)
    except sqlite3.Error as exc:
        if conn is not None:
            conn.close()
        problem = failure(exc, path)
        cannot_write = isinstance(problem, (ReadOnlyStore, DiskFull))
        if not cannot_write or log_holds_commits(path):
            raise problem from None
        # SQLite could not make its -shm file (a read-only folder, a full disk); with no
        # commits waiting in a log, the file alone is the whole store: read it as it is.
        conn = connect(path, immutable=True)
        try:
            check_tables(conn, path)
        except BaseException as again:
            conn.close()
            if isinstance(again, sqlite3.Error):
                raise failure(again, path) from None
            raise
        why = why or (DISK_FULL if isinstance(problem, DiskFull) else str(problem))
    except BaseException:
        if conn is not None:
            conn.close()
        raise
    try:
        if why is None:
            conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("PRAGMA synchronous=NORMAL")
        conn.execute("PRAGMA secure_delete=ON")
        conn.execute("PRAGMA foreign_keys=OFF")
        conn.execute("PRAGMA cache_size=-65536")
    except sqlite3.Error as exc:
        conn.close()
        raise failure(exc, path) from None
    return conn, why


def private(path: Path) -> None:
    """Take group and other access away from one file (a file of another user is left)."""
    try:
        if os.lstat(path).st_mode & 0o077:
            os.chmod(path, PRIVATE_FILE)
    except OSError:
        pass


def create_store(path: Path, build: Callable[[sqlite3.Connection], None]) -> None:
    """Make a new store at ``path``, whole or not at all: built (``build``) under a
    temporary name, then linked to ``path`` — so a kill never leaves an empty or half-made
    file under the real name. Another process making it meanwhile wins; its file is used."""
    try:
        if not path.parent.exists():  # an existing folder is the user's to set
            make_private_folder(path.parent)
    except OSError as exc:
        raise failure_of_os(exc, path, "create the folder for") from None
    temporary = path.with_name(f".{path.name}.{os.getpid()}.{os.urandom(4).hex()}.new")
    try:
        os.close(os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, PRIVATE_FILE))
        conn = connect(temporary)
        try:
            conn.execute("PRAGMA journal_mode=WAL")
            build(conn)
        finally:
            conn.close()  # the last connection: the log is folded in and removed
        try:
            os.link(temporary, path)
        except FileExistsError:
            pass
        except OSError:  # no hard links here: a rename, which could replace a racer's
            if not path.exists():
                os.replace(temporary, path)
    except sqlite3.Error as exc:
        raise failure(exc, path) from None
    except OSError as exc:
        raise failure_of_os(exc, path, "create") from None
    finally:
        for leftover in (temporary, *(Path(f"{temporary}{s}") for s in SIDE_FILES)):
            with contextlib.suppress(OSError):
                leftover.unlink()


def unwritable(path: Path) -> str | None:
    """Why the store at ``path`` cannot be written here (None: it can, as far as one can
    tell before trying)."""
    folder = path.parent
    try:
        if os.statvfs(folder).f_flag & os.ST_RDONLY:
            return "it is on a read-only file system"
    except OSError:
        pass
    if not os.access(path, os.W_OK):
        return "the file is read-only"
    sides = [Path(f"{path}{s}") for s in ("-wal", "-shm")]
    if not all(s.exists() for s in sides) and not os.access(folder, os.W_OK | os.X_OK):
        return f"its folder {folder} is read-only"
    return None


def log_holds_commits(path: Path) -> bool:
    """Whether the write-ahead log beside ``path`` may hold commits not in the file."""
    try:
        return os.path.getsize(f"{path}-wal") > 0
    except OSError:
        return False


def disk_full(path: Path) -> bool:
    try:
        found = os.statvfs(path.parent)
    except OSError:
        return False
    return found.f_bavail == 0 or found.f_favail == 0


def full(path: Path) -> DiskFull:
    return DiskFull(
        f"the disk holding {path} is full: nothing was changed (free some space and try again)"
    )


def read_only(path: Path, why: str) -> StoreUnusable:
    """The refusal of a write to a store opened read-only, for the reason ``why``."""
    if why == DISK_FULL:
        return full(path)
    return ReadOnlyStore(f"{path} cannot be written ({why}): nothing was changed; reads work")


def failure(exc: sqlite3.Error, path: Path) -> CairnError:
    """What an SQLite error on the store means, in one line that says what to do."""
    code = (getattr(exc, "sqlite_errorcode", None) or 0) & 0xFF
    detail = str(exc)
    if code == _FULL or "disk is full" in detail:
        return full(path)
    if code in (_CORRUPT, _NOTADB) or "malformed" in detail or "not a database" in detail:
        return damaged(path, detail)
    if code == _READONLY:
        return read_only(path, unwritable(path) or detail)
    if code in (_IOERR, _CANTOPEN):
        if disk_full(path):
            return full(path)
        why = unwritable(path)
        if why is not None:
            return read_only(path, why)
        return StorageError(f"cannot read or write {path}: {detail}")
    if code in (_BUSY, _LOCKED):
        return StorageError(f"{path} is busy (another process holds it): {detail}; try again")
    return StorageError(f"{path}: {detail}")


def failure_of_os(exc: OSError, path: Path, doing: str) -> CairnError:
    import errno

    if exc.errno in (errno.ENOSPC, errno.EDQUOT):
        return full(path)
    if exc.errno in (errno.EROFS, errno.EACCES, errno.EPERM):
        return read_only(path, exc.strerror or str(exc))
    return InvalidInput(f"cannot {doing} {path}: {exc.strerror or exc}")
