"""The server's composition root: one engine per process, the app over it, uvicorn.

The engine is whatever storage pair the configuration names (``cairn.compose`` wires it);
the server never writes Markdown files (they are a person's view of their own memory, on
their own machine). A SIGTERM or SIGINT stops it gracefully: it stops accepting, lets the
requests in flight finish (up to ``grace`` seconds), then closes the engine.
"""

from __future__ import annotations

import logging
import signal
import socket
from pathlib import Path

import uvicorn

from cairn.config import Config
from cairn.errors import InvalidInput
from cairn.provider import contract as c
from cairn.provider.local import LocalProvider
from cairn.server import logs
from cairn.server.app import MAX_BODY_BYTES, create_app
from cairn.server.auth import TokenStore, tokens_path

log = logging.getLogger("cairn.server")

DEFAULT_PORT = 8750
_STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)


def open_engine(config: Config, home: Path, path: Path | None = None) -> LocalProvider:
    """The one engine of this process, over the configured storage pair."""
    from cairn.compose import open_provider

    if config.memory.remote.endpoint is not None:
        raise InvalidInput(
            "memory.remote.endpoint is set: this home uses another server, so it has no"
            " store to serve (unset it in the server's config)"
        )
    engine = open_provider(config, path=path, home=home, markdown=False)
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


def serve(
    config: Config,
    *,
    home: Path,
    host: str = "127.0.0.1",
    port: int = DEFAULT_PORT,
    tokens: Path | None = None,
    path: Path | None = None,
    grace: int = 30,
    max_body_bytes: int = MAX_BODY_BYTES,
    log_level: str = "info",
) -> None:
    """Serve until SIGTERM or SIGINT."""
    logs.configure(log_level)
    from prometheus_client import disable_created_metrics

    disable_created_metrics()  # type: ignore[no-untyped-call]  # *_created: noise
    sock = listen(host, port)
    try:
        engine = open_engine(config, home, path)
    except BaseException:
        sock.close()
        raise
    store = TokenStore(tokens or tokens_path(home))
    app = create_app(engine, store, max_body_bytes=max_body_bytes)
    # Load the model (and the default partition) now, not in the first request.
    engine.query(c.RecallQuery(query="warm up"))
    bound_host, bound_port = sock.getsockname()[:2]
    log.info(
        "listening",
        extra={
            "host": bound_host,
            "port": bound_port,
            "url": f"http://{_url_host(bound_host)}:{bound_port}",
            "backend": engine.status().backend,
            "tokens": str(store.path),
            "tenants": len({b.tenant for b in store.bindings()}),
        },
    )
    server = uvicorn.Server(
        uvicorn.Config(
            app,
            log_config=logs.log_config(log_level),
            access_log=False,
            timeout_graceful_shutdown=grace,
            server_header=False,
            proxy_headers=False,
            lifespan="on",
        )
    )
    # uvicorn shuts down gracefully at the signal, then raises it again for the handler it
    # found; that handler only notes it, so a graceful stop ends the command with exit 0.
    stops: list[int] = []
    previous = {sig: signal.signal(sig, lambda n, _: stops.append(n)) for sig in _STOP_SIGNALS}
    try:
        server.run(sockets=[sock])
    finally:
        sock.close()
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    if stops:
        log.info("stopped by signal", extra={"signal": signal.Signals(stops[0]).name})


def _url_host(host: str) -> str:
    return f"[{host}]" if ":" in host else host
