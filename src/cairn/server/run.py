"""The server's composition root: one engine per process, the app over it, uvicorn.

The engine is whatever storage pair the configuration names (``cairn.compose`` wires it);
the server writes Markdown files only as its home's local daemon (they are a person's view
of their own memory, on their own machine, kept as the command line in-process keeps
them). A SIGTERM or SIGINT stops it gracefully: it stops accepting, lets the requests in
flight finish (up to ``grace`` seconds), then closes the engine.

Besides TCP (token auth), it listens on the home's unix socket (mode 0600, in a 0700
folder): that is the local daemon the command line, the hooks and the MCP server go
through (:mod:`cairn.daemon`). The socket's files are removed when it stops.
"""

from __future__ import annotations

import gc
import json
import logging
import os
import shutil
import signal
import socket
import threading
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import uvicorn
from fastapi import FastAPI
from uvicorn.supervisors import Multiprocess

from cairn.config import Config, parse_config, redact_url
from cairn.errors import InvalidInput
from cairn.limits import MAX_HTTP_BODY_BYTES
from cairn.provider import contract as c
from cairn.provider.client import Client
from cairn.provider.local import LocalProvider
from cairn.server import logs, schedule
from cairn.server.app import create_app, store_sizes
from cairn.server.auth import TokenStore, tokens_path
from cairn.server.metrics import MULTIPROCESS_ENV, Metrics
from cairn.server.progress import ProgressBoard
from cairn.server.run_folders import make_run_folder, sweep_orphans
from cairn.server.tokens import server_tokens

if TYPE_CHECKING:
    from cairn.server.local import LocalSocket

log = logging.getLogger("cairn.server")

DEFAULT_PORT = 8750
SETTINGS_ENV = "CAIRN_SERVE_SETTINGS"
_STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)


def open_engine(
    config: Config, home: Path, path: Path | None = None, *, daemon: bool = False
) -> LocalProvider:
    """The one engine of this process, over the configured storage pair. ``daemon``: it
    serves its home's unix socket, so it is that home's local daemon and keeps the home's
    Markdown projection as the command line in-process does (``memory.markdown``); a
    server for others writes no Markdown."""
    from cairn.compose import open_provider

    if config.memory.remote.endpoint is not None:
        raise InvalidInput(
            "memory.remote.endpoint is set: this home uses another server, so it has no"
            " store to serve (unset it in the server's config)"
        )
    engine = open_provider(
        config, path=path, home=home, markdown=None if daemon else False, long_running=True
    )
    assert isinstance(engine, LocalProvider)  # no remote is configured
    return engine


def listen(host: str, port: int) -> socket.socket:
    """A listening socket on ``host:port`` (port 0: a free one), or InvalidInput."""
    try:
        family, kind, proto, _, address = socket.getaddrinfo(
            host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE
        )[0]
        sock = socket.socket(family, kind, proto)
    except (OSError, IndexError) as exc:
        raise InvalidInput(f"--host {host}: {exc}") from None
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(address)
        sock.listen(2048)
    except OSError as exc:
        sock.close()
        raise InvalidInput(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from None
    sock.set_inheritable(True)
    return sock


@dataclass(frozen=True, slots=True)
class Settings:
    """What a serving process needs; passed to worker processes as JSON."""

    config: dict[str, Any]
    home: str
    tokens: str
    path: str | None
    max_body_bytes: int
    socket: str | None = None  # the local daemon's unix socket, when it listens on one
    tokens_explicit: bool = False  # --tokens FILE: that file, even for a store with tokens
    progress: str | None = None  # the folder of bulk work under way the workers share


def build_app(settings: Settings) -> FastAPI:
    """This process's engine, warmed, and the app over it."""
    config = parse_config(settings.config)
    path = Path(settings.path) if settings.path else None
    home = Path(settings.home)
    engine = open_engine(config, home, path, daemon=settings.socket is not None)
    records = engine.ports.records
    tokens = server_tokens(records, settings.tokens, explicit=settings.tokens_explicit)
    health = getattr(records, "health", None)  # a store with a pool (PostgreSQL)
    metrics = Metrics(store_sizes(engine, tokens), database=health)
    observe = getattr(records, "observe", None)
    if observe is not None:
        observe(metrics.observe_database)
    app = create_app(
        engine,
        tokens,
        metrics=metrics,
        max_body_bytes=settings.max_body_bytes,
        local_socket=settings.socket,
        board=ProgressBoard(Path(settings.progress) if settings.progress else None),
    )
    if settings.socket is not None:
        from cairn.hooks.run import warm_up
        from cairn.server.local import add_local_routes

        add_local_routes(app, engine, home, settings.socket, metrics)
        warm_up(Client(engine))  # the daemon: its hooks' first prompts compile nothing
    schedule.attach(app, engine, tokens, home)  # reflection and sweep, when due
    # Load the model (and the default partition) now, not in the first request.
    Client(engine).query(c.RecallQuery, c.RecallResponse, query="warm up")
    # What is loaded now lives as long as the process (the engine, the indexes' arrays and
    # their Python wrappers, the model): out of the collector's sight, a full collection
    # no longer walks it on a request (45-85 ms pauses at 100k memories otherwise). What
    # of it later becomes garbage is never freed, which is bounded by this one load.
    gc.collect()
    gc.freeze()
    return app


def available_cores() -> int:
    """The cores this process may run on (its CPU affinity where the system has one,
    else every core): the default of ``cairn serve --workers``."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # no affinity on this system (macOS)
        return max(1, os.cpu_count() or 1)


def worker_app() -> FastAPI:
    """The app of one worker process of ``--workers`` (uvicorn imports it by name)."""
    from prometheus_client import disable_created_metrics

    disable_created_metrics()  # type: ignore[no-untyped-call]  # *_created: noise
    return build_app(Settings(**json.loads(os.environ[SETTINGS_ENV])))


def serve(
    config: Config,
    *,
    home: Path,
    host: str = "127.0.0.1",
    port: int = DEFAULT_PORT,
    tokens: Path | None = None,
    tokens_explicit: bool = False,
    path: Path | None = None,
    grace: int = 30,
    max_body_bytes: int = MAX_HTTP_BODY_BYTES,
    log_level: str = "info",
    workers: int | None = None,
    tcp: bool = True,
    local: bool = True,
    config_file: Path | None = None,
) -> None:
    """Serve until SIGTERM or SIGINT: on ``host:port`` unless not ``tcp``, and on the
    home's unix socket (the local daemon) unless not ``local``. ``config_file``: the file
    ``config`` was read from (None: the defaults), recorded for clients, which go through
    the daemon only while their config is that very file, unchanged.

    ``workers`` (None: one per core, :func:`available_cores`) > 1: that many processes
    accept on the one socket, each with an engine of its own over the same store (an
    engine answers on one core at a time; the store is shared by any number of
    processes: SQLite in WAL mode with one writer at a time, PostgreSQL). Their metrics
    are written to one folder for the run (removed at the end), so a scrape of any
    worker sums them all.
    """
    logs.configure(log_level)
    if workers is None:
        workers = available_cores()
    from prometheus_client import disable_created_metrics

    disable_created_metrics()  # type: ignore[no-untyped-call]  # *_created: noise
    if not tcp and not local:
        raise InvalidInput("--no-tcp and --no-socket: the server would listen nowhere")
    if config.memory.remote.endpoint is not None:
        open_engine(config, home, path)  # refused, with the reason
    from cairn.daemon.paths import daemon_paths
    from cairn.server.local import LocalSocket

    claim = LocalSocket(daemon_paths(home)) if local else None
    sockets: list[socket.socket] = []
    metrics_folder: str | None = None
    progress_folder: str | None = None
    try:
        if claim is not None:
            sockets.append(claim.claim())
        if tcp:
            sockets.append(listen(host, port))
        if workers > 1:  # a poll may reach another worker than the one doing the work
            sweep_orphans()  # what a killed multi-worker run left behind
            progress_folder = make_run_folder("progress")
        settings = Settings(
            # what the config sets, not its defaults: a config that names no embedder
            # still names none in the serving process (the store chooses one then)
            config=config.model_dump(mode="json", exclude_unset=True),
            home=str(home),
            tokens=str(tokens or tokens_path(home)),
            path=str(path) if path else None,
            max_body_bytes=max_body_bytes,
            socket=str(claim.paths.socket) if claim is not None else None,
            tokens_explicit=tokens_explicit,
            progress=progress_folder,
        )
        where: dict[str, Any] = {"socket": settings.socket, "url": None}
        if tcp:
            bound_host, bound_port = sockets[-1].getsockname()[:2]
            url = f"http://{_url_host(bound_host)}:{bound_port}"
            where.update(host=bound_host, port=bound_port, url=url)
        if claim is not None:
            # Now, before the engine warms: a client's request meanwhile waits in the
            # socket's backlog and is answered once the engine is ready.
            claim.announce(_daemon_info(config, home, config_file, settings, where))
        if workers == 1:
            app: FastAPI | str = build_app(settings)
        else:
            open_engine(config, home, path).close()  # a store that cannot open fails here
            os.environ[SETTINGS_ENV] = json.dumps(asdict(settings))
            # One folder of samples for this run's workers: a scrape reads them all.
            metrics_folder = make_run_folder("metrics")
            os.environ[MULTIPROCESS_ENV] = metrics_folder
            app = f"{__name__}:worker_app"
    except BaseException:
        if progress_folder is not None:
            shutil.rmtree(progress_folder, ignore_errors=True)
        for sock in sockets:
            sock.close()
        if claim is not None:
            claim.release()
        raise
    log.info("listening", extra={**where, "workers": workers, **_tokens_info(config, settings)})
    options = uvicorn.Config(
        app,
        factory=workers > 1,
        workers=workers,
        log_config=logs.log_config(log_level),
        access_log=False,
        timeout_graceful_shutdown=grace,
        server_header=False,
        proxy_headers=False,
        lifespan="on",
    )
    if claim is not None:
        _watch_socket(claim)
    # uvicorn shuts down gracefully at the signal, then raises it again for the handler it
    # found; that handler only notes it, so a graceful stop ends the command with exit 0.
    stops: list[int] = []
    previous = {sig: signal.signal(sig, lambda n, _: stops.append(n)) for sig in _STOP_SIGNALS}
    try:
        if workers == 1:
            uvicorn.Server(options).run(sockets=sockets)
        else:
            Multiprocess(options, sockets=sockets).run()
    finally:
        if metrics_folder is not None:
            os.environ.pop(MULTIPROCESS_ENV, None)
            shutil.rmtree(metrics_folder, ignore_errors=True)
        if progress_folder is not None:
            shutil.rmtree(progress_folder, ignore_errors=True)
        for sock in sockets:
            sock.close()
        if claim is not None:
            claim.release()
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    if stops:
        log.info("stopped by signal", extra={"signal": signal.Signals(stops[0]).name})


SOCKET_CHECK_SECONDS = 2.0


def _watch_socket(claim: LocalSocket, every: float = SOCKET_CHECK_SECONDS) -> None:
    """Stop this daemon (gracefully, as ``cairn daemon stop`` does) once its socket is no
    longer its own: the home was deleted, or the socket removed. No client can reach it
    then, and it would otherwise hold the store and the model until the machine restarts
    (a test run killed before its clean-up left such daemons behind)."""

    def watch() -> None:
        while claim.still_ours():
            time.sleep(every)
        log.warning(
            "the daemon's socket is gone; stopping",
            extra={"socket": str(claim.paths.socket), "home": str(claim.paths.home)},
        )
        os.kill(os.getpid(), signal.SIGTERM)

    threading.Thread(target=watch, name="cairn-socket-watch", daemon=True).start()


def _daemon_info(
    config: Config,
    home: Path,
    config_file: Path | None,
    settings: Settings,
    where: dict[str, Any],
) -> dict[str, Any]:
    """What clients read before they go through the daemon (``daemon.json``)."""
    from cairn import __version__
    from cairn.daemon.paths import config_stamp
    from cairn.timeutil import to_iso, utc_now

    return {
        "pid": os.getpid(),
        "version": __version__,
        "home": str(home),
        "socket": settings.socket,
        "url": where.get("url"),
        "config": config_stamp(config_file),
        "store": redact_url(
            settings.path
            or config.memory.store.url
            or config.memory.store.path
            or str(home / "memory.db")
        ),
        "timeout_seconds": config.memory.daemon.timeoutSeconds,
        "started_at": to_iso(utc_now()),
    }


def _tokens_info(config: Config, settings: Settings) -> dict[str, Any]:
    url = config.memory.store.url
    if not settings.tokens_explicit and url is not None and not url.startswith("sqlite:///"):
        return {"tokens": "the database", "tokens_file": settings.tokens}
    store = TokenStore(settings.tokens)
    return {"tokens": str(store.path), "tenants": len({b.tenant for b in store.bindings()})}


def _url_host(host: str) -> str:
    return f"[{host}]" if ":" in host else host
