"""Going through the local daemon: when to, and what to do when it fails.

A command goes through the daemon when one serves its home *with the very config the
command would read* (the same file, unchanged since the daemon started: ``daemon.json``
says which), and does its work in-process, as without a daemon, when none runs. Finding
out costs a lock probe and a small file read, no config parsing.

When a request fails on the way (no connection, the connection dropped, no answer in
time), the rule that keeps every write exactly once:

- no daemon holds the home's lock any more — *definitely* none runs (it died, or
  stopped): the request is done in-process. That is safe even when the daemon had got it:
  every mutation carries an idempotency key, and the same key again is a no-op, so a
  write the daemon committed just before it died is not made twice, and one it did not
  commit is not lost;
- a daemon still holds the lock (stuck, overloaded, shutting down): the real error, and
  nothing in-process — the daemon may yet apply the request.

An error the daemon *answers* (bad input, an unknown id, a failing store) is the
command's error, exactly as in-process.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from cairn.daemon.paths import (
    DaemonPaths,
    config_file,
    config_stamp,
    daemon_paths,
    daemon_running,
    read_info,
)
from cairn.errors import StorageError

if TYPE_CHECKING:
    from cairn.provider import Provider
    from cairn.provider.contract import (
        ApplyRequest,
        ApplyResponse,
        QueryRequest,
        QueryResponse,
        StatusResponse,
    )
    from cairn.provider.remote import RemoteProvider

T = TypeVar("T")

INFO_WAIT_SECONDS = 1.0  # a daemon writes daemon.json right after taking its lock


@dataclass(frozen=True, slots=True)
class Daemon:
    """A running daemon that serves this command's home and config."""

    paths: DaemonPaths
    info: dict[str, Any]

    @property
    def socket(self) -> str:
        return str(self.info.get("socket") or self.paths.socket)

    @property
    def timeout(self) -> float:
        value = self.info.get("timeout_seconds")
        return float(value) if isinstance(value, int | float) and value > 0 else 30.0

    @property
    def pid(self) -> int | None:
        value = self.info.get("pid")
        return value if isinstance(value, int) else None


def find_daemon(
    home: Path,
    config_path: str | None,
    *,
    autostart: Callable[[], float | None] | None = None,
    warn: Callable[[str], None] | None = None,
) -> Daemon | None:
    """The daemon to go through, or None: do the work in-process.

    ``autostart``: asked only when no daemon runs; a number is the seconds a new daemon
    may take to start (then it is started and used), None leaves it stopped. ``warn``:
    told why a running daemon is not used. StorageError: a daemon runs but cannot be
    used safely (it wrote nothing about itself)."""
    paths = daemon_paths(home)
    if not daemon_running(paths):
        wait = autostart() if autostart is not None else None
        if wait is None:
            return None
        from cairn.daemon.control import start

        start(home, config_path, timeout=wait)
    info = _wait_for_info(paths)
    if info is None:
        if not daemon_running(paths):
            return None  # it stopped meanwhile
        raise StorageError(
            f"a cairn daemon holds {paths.lock} but wrote no {paths.info.name};"
            " see cairn daemon status"
        )
    mine = config_stamp(config_file(home, config_path))
    if info.get("config") != mine:
        if warn is not None:
            which = mine["path"] if mine else "the defaults"
            warn(
                f"the cairn daemon (pid {info.get('pid')}) serves another config than"
                f" {which} (or it changed since the daemon started): working in-process;"
                " restart it to use it (cairn daemon stop; cairn daemon start)"
            )
        return None
    return Daemon(paths, info)


def _wait_for_info(paths: DaemonPaths) -> dict[str, Any] | None:
    import time

    deadline = time.monotonic() + INFO_WAIT_SECONDS
    while (info := read_info(paths)) is None and time.monotonic() < deadline:
        if not daemon_running(paths):
            return None
        time.sleep(0.01)
    return info


def still_running(daemon: Daemon, failure: str, *, sent: bool) -> StorageError:
    """The error when a request failed and the daemon still runs."""
    from cairn.daemon.fast import still_running as message

    return StorageError(message(daemon.pid, failure, sent=sent))


def forward_hook(
    daemon: Daemon, host: str, kind: str, raw: bytes, tenant: str, agent: str
) -> str | None:
    """The host's output for one hook event, run whole by the daemon; None: the daemon
    went away before answering (definitely not running), so run the hook in-process."""
    from cairn.daemon.fast import HookFailed, hook_through

    try:
        return hook_through(daemon.info, str(daemon.paths.home), host, kind, raw, tenant, agent)
    except HookFailed as exc:
        raise StorageError(str(exc)) from None


class DaemonProvider:
    """The provider contract through the daemon, falling back to the embedded engine
    (opened by ``fallback``) only once the daemon definitely no longer runs."""

    def __init__(
        self, daemon: Daemon, tenant: str, agent: str, fallback: Callable[[], Provider]
    ) -> None:
        from cairn.provider.remote import RemoteProvider

        self.daemon = daemon
        self.tenant = tenant
        self.agent = agent
        self._fallback = fallback
        self._remote: RemoteProvider | None = RemoteProvider.over_socket(
            daemon.socket, tenant=tenant, agent=agent, timeout=daemon.timeout
        )
        self._local: Provider | None = None
        self._progress: Callable[[int, int], None] | None = None

    @property
    def progress(self) -> Callable[[int, int], None] | None:
        return self._progress

    @progress.setter
    def progress(self, value: Callable[[int, int], None] | None) -> None:
        self._progress = value
        for provider in (self._remote, self._local):  # the daemon reports, when asked
            if provider is not None:
                provider.progress = value

    @property
    def in_process(self) -> bool:
        """Whether the daemon went away and requests now run in this process."""
        return self._local is not None

    def status(self) -> StatusResponse:
        answer = self._do(lambda p: p.status())
        if self._local is None:
            where = f"{self.daemon.info.get('store')} (through the daemon at {self.daemon.socket})"
            answer = answer.model_copy(update={"provider": "local", "location": where})
        return answer

    def query(self, request: QueryRequest) -> QueryResponse:
        return self._do(lambda p: p.query(request))

    def apply(self, request: ApplyRequest) -> ApplyResponse:
        return self._do(lambda p: p.apply(request))

    def close(self) -> None:
        for provider in (self._remote, self._local):
            if provider is not None:
                provider.close()

    def _do(self, call: Callable[[Provider], T]) -> T:
        from cairn.provider.remote import Unreachable

        if self._local is None:
            assert self._remote is not None
            try:
                return call(self._remote)
            except Unreachable as exc:
                if daemon_running(self.daemon.paths):
                    raise still_running(self.daemon, str(exc), sent=exc.sent) from None
                print(
                    f"cairn: warning: the cairn daemon stopped ({exc}); working in-process",
                    file=sys.stderr,
                )
                self._remote.close()
                self._remote = None
                self._local = self._fallback()
                self._local.progress = self._progress
        return call(self._local)
