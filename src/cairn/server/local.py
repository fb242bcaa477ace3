"""The daemon's side of the unix socket: claiming it, and the routes only the socket
serves (who a request over it acts as is :func:`cairn.server.auth.local_binding`).

Claiming: the lock first (one daemon per home; a second is refused, naming the first),
then the folder (0700, the user's own, no symlink), then the socket. A socket file left
by a daemon that died is removed — safely: only under the lock (so no live daemon owns
it), only if it is a socket, and only if nothing answers on it. The socket is bound with
mode 0600; who can connect to it is who may use this home's memory, so a request over it
carries no token, only the tenant and agent it is for (``X-Cairn-Tenant`` /
``X-Cairn-Agent``), and acts as exactly those. The TCP listener keeps requiring tokens:
a request is trusted as local only when it arrived on this socket (uvicorn reports the
socket's path as the request's server address; a TCP request always has a port).
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import logging
import os
import socket
import stat
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from fastapi import FastAPI, Request, Response

from cairn.daemon.paths import DaemonPaths, read_info
from cairn.errors import InvalidInput
from cairn.server.auth import is_local, local_binding

if TYPE_CHECKING:
    from collections.abc import Mapping

    from cairn.provider.local import LocalProvider
    from cairn.server.metrics import Metrics

log = logging.getLogger("cairn.server")
access = logging.getLogger("cairn.server.access")

LOCK_WAIT_SECONDS = 2.0  # a client probing the lock holds it for microseconds


def private_folder(folder: Path) -> None:
    """``folder`` exists, is a real folder of this user, and only this user can enter it."""
    try:
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        st = os.lstat(folder)
    except OSError as exc:
        raise InvalidInput(f"cannot make the daemon's folder {folder}: {exc.strerror}") from None
    if not stat.S_ISDIR(st.st_mode):
        raise InvalidInput(f"{folder} is not a folder (a symlink?); the daemon will not use it")
    if st.st_uid != os.getuid():
        raise InvalidInput(f"{folder} belongs to another user; the daemon will not use it")
    if stat.S_IMODE(st.st_mode) != 0o700:
        os.chmod(folder, 0o700)


class LocalSocket:
    """This process's claim on a home's daemon socket, from :meth:`claim` to
    :meth:`release`."""

    def __init__(self, paths: DaemonPaths) -> None:
        self.paths = paths
        self._lock: int | None = None
        self._inode: int | None = None

    def claim(self) -> socket.socket:
        """The listening unix socket; InvalidInput when another daemon serves the home."""
        private_folder(self.paths.folder)
        self._take_lock()
        try:
            self._clear_stale()
            return self._bind()
        except BaseException:
            self.release()
            raise

    def _take_lock(self) -> None:
        fd = os.open(self.paths.lock, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        deadline = time.monotonic() + LOCK_WAIT_SECONDS
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except OSError:
                # A client probing holds it shared for microseconds; a daemon holds it
                # for good, and says so in daemon.json right after taking it.
                if time.monotonic() > deadline or self.paths.info.exists():
                    os.close(fd)
                    info = read_info(self.paths) or {}
                    pid = f" (pid {info['pid']})" if "pid" in info else ""
                    raise InvalidInput(
                        f"a cairn daemon{pid} already serves {self.paths.home} on"
                        f" {self.paths.socket} (cairn daemon status; cairn serve"
                        " --no-socket serves TCP beside it)"
                    ) from None
                time.sleep(0.02)
        self._lock = fd

    def _clear_stale(self) -> None:
        path = self.paths.socket
        try:
            st = os.lstat(path)
        except FileNotFoundError:
            return
        if not stat.S_ISSOCK(st.st_mode):
            raise InvalidInput(f"{path} exists and is not a socket; remove it yourself")
        probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        probe.settimeout(1.0)
        try:
            probe.connect(str(path))
        except OSError:
            pass  # nothing listens: a dead daemon's socket
        else:
            raise InvalidInput(f"something already listens on {path}; not replacing it")
        finally:
            probe.close()
        path.unlink()
        log.info("removed a stale socket", extra={"socket": str(path)})
        for leftover in (self.paths.info, self.paths.pid):
            leftover.unlink(missing_ok=True)

    def _bind(self) -> socket.socket:
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        old = os.umask(0o177)  # the socket is born 0600: no moment when others could connect
        try:
            sock.bind(str(self.paths.socket))
        except OSError as exc:
            sock.close()
            raise InvalidInput(f"cannot listen on {self.paths.socket}: {exc.strerror}") from None
        finally:
            os.umask(old)
        os.chmod(self.paths.socket, 0o600)
        self._inode = os.lstat(self.paths.socket).st_ino
        sock.listen(512)
        sock.set_inheritable(True)
        return sock

    def announce(self, info: Mapping[str, Any]) -> None:
        """Write what a client needs to know (and the pid file): the daemon answers now."""
        for path, text in (
            (self.paths.info, json.dumps(dict(info), indent=2) + "\n"),
            (self.paths.pid, f"{os.getpid()}\n"),
        ):
            tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            with os.fdopen(fd, "w", encoding="utf-8") as out:
                out.write(text)
            os.replace(tmp, path)

    def still_ours(self) -> bool:
        """Whether the home's socket is still the one this process made (False once the
        socket, its folder or the whole home was removed, or another file took its place)."""
        try:
            return os.lstat(self.paths.socket).st_ino == self._inode
        except OSError:
            return False

    def release(self) -> None:
        """Remove the socket (if still the one this process made) and its files, then let
        go of the lock: from here on a client knows no daemon runs."""
        if self._lock is None:
            return
        with contextlib.suppress(OSError):
            if self._inode is not None and os.lstat(self.paths.socket).st_ino == self._inode:
                self.paths.socket.unlink()
        for path in (self.paths.info, self.paths.pid):
            path.unlink(missing_ok=True)
        os.close(self._lock)
        self._lock = None


def add_local_routes(
    app: FastAPI, engine: LocalProvider, home: Path, socket_path: str, metrics: Metrics
) -> None:
    """``GET /local/daemon`` (who serves) and ``POST /local/hook/{host}/{kind}`` (a whole
    agent hook run here, on the warm engine), on the socket only: over TCP they are 404."""
    from starlette.background import BackgroundTask
    from starlette.concurrency import run_in_threadpool

    from cairn.errors import CairnError
    from cairn.hooks.events import HOOK_KINDS
    from cairn.hooks.run import HOSTS, run_hook
    from cairn.provider.attribution import COMMAND_LINE
    from cairn.provider.client import Client
    from cairn.server.app import error_reply

    def refuse_remote(request: Request) -> Response | None:
        if is_local(request.scope, socket_path):
            return None
        return error_reply(404, "not_found", "no such route")

    @app.get("/local/daemon", include_in_schema=False)
    async def daemon(request: Request) -> Response:
        refused = refuse_remote(request)
        if refused is not None:
            return refused
        body = {"pid": os.getpid(), "home": str(home), "socket": socket_path}
        return Response(json.dumps(body), media_type="application/json")

    @app.post("/local/hook/{host}/{kind}", include_in_schema=False)
    async def hook(request: Request, host: str, kind: str) -> Response:
        refused = refuse_remote(request)
        if refused is not None:
            return refused
        start = time.perf_counter()
        try:
            binding = local_binding(request.headers)
        except CairnError as exc:
            return error_reply(400, "invalid_input", str(exc))
        if host not in HOSTS or kind not in HOOK_KINDS:
            return error_reply(404, "not_found", f"no hook {host} {kind}")
        raw = await request.body()
        tenant, agent = binding.tenant, binding.agent or "default"
        # The host waits for the reply, not for the home's Markdown files (a hook shows no
        # warning of theirs): they are refreshed right after the reply is sent.
        provider, refresh = engine.bound(tenant=tenant, agent=agent).files_later()

        def work() -> str:
            client = Client(provider, attribution=COMMAND_LINE)
            return run_hook(host, kind, raw, lambda: client, home)

        output = await run_in_threadpool(work)
        seconds = time.perf_counter() - start
        metrics.observe("/local/hook", kind, 200, seconds)
        access.info(
            "request",
            extra={"route": "/local/hook", "operation": kind, "status": 200,
                   "ms": round(seconds * 1000, 2), "tenant": tenant, "token": "local"},
        )  # fmt: skip
        return Response(
            output.encode("utf-8"),
            media_type="text/plain; charset=utf-8",
            background=BackgroundTask(refresh),  # on a worker thread, after the reply
        )
