"""How far a bulk mutation running in this server has got, for the client that sent it.

A bulk mutation (ingest, import, rebuild) reports ``(done, total)`` through its
provider's ``progress`` callback as it embeds and commits; while it runs here, the
callback writes into this board under the request's tenant and idempotency key, and
``GET /v1/progress?key=...`` reads it back for the same tenant only (another tenant's
key is never found, whoever asks). The entry goes when the request ends, so the board
holds only what is in flight.

With ``cairn serve --workers N`` the client's poll may reach another worker than the one
doing the work, so the board of a multi-worker run is a folder the run's workers share
(private to the server's user, removed when the run ends): one small file per request
under way, named by a digest of its tenant and key, holding both, rewritten whole
(write, then rename) at each report. A file whose writer died is not read.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path


class ProgressBoard:
    """The requests under way of this process, or (``folder``) of every process writing
    into that folder."""

    def __init__(self, folder: Path | None = None) -> None:
        self._folder = folder
        self._lock = threading.Lock()
        self._running: dict[tuple[str, str], tuple[int, int]] = {}

    @contextmanager
    def running(self, tenant: str, key: str) -> Iterator[Callable[[int, int], None]]:
        """The callback a request under way reports to; its entry is dropped after."""
        where = (tenant, key)

        def report(done: int, total: int) -> None:
            with self._lock:
                self._running[where] = (done, total)
                if self._folder is not None:
                    self._write(tenant, key, done, total)

        report(0, 0)
        try:
            yield report
        finally:
            with self._lock:
                self._running.pop(where, None)
                if self._folder is not None and where not in self._running:
                    with contextlib.suppress(OSError):
                        self._file(tenant, key).unlink()

    def read(self, tenant: str, key: str) -> tuple[int, int] | None:
        """``(done, total)`` of the tenant's request under way with ``key``, else None."""
        with self._lock:
            found = self._running.get((tenant, key))
        if found is not None or self._folder is None:
            return found
        return self._read(tenant, key)

    def _file(self, tenant: str, key: str) -> Path:
        assert self._folder is not None
        name = hashlib.sha256(f"{tenant}\0{key}".encode("utf-8", "surrogatepass")).hexdigest()
        return self._folder / f"{name}.json"

    def _write(self, tenant: str, key: str, done: int, total: int) -> None:
        target = self._file(tenant, key)
        entry = {"tenant": tenant, "key": key, "done": done, "total": total, "pid": os.getpid()}
        partial = target.with_name(f"{target.name}.{os.getpid()}.{threading.get_ident()}")
        try:
            fd = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            with os.fdopen(fd, "w", encoding="utf-8") as out:
                out.write(json.dumps(entry, ensure_ascii=True))
            partial.replace(target)
        except OSError:  # progress is shown, never needed: a full disk fails no request
            with contextlib.suppress(OSError):
                partial.unlink()

    def _read(self, tenant: str, key: str) -> tuple[int, int] | None:
        try:
            entry = json.loads(self._file(tenant, key).read_text(encoding="utf-8"))
            figures = (int(entry["done"]), int(entry["total"]))
            owner = (entry["tenant"], entry["key"], int(entry["pid"]))
        except (OSError, ValueError, TypeError, KeyError):
            return None
        if owner[:2] != (tenant, key) or not _alive(owner[2]):
            return None
        return figures


def _alive(pid: int) -> bool:
    if pid <= 0:  # never a process group
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's: alive
        return True
    return True
