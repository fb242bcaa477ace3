"""The contract suite runs on every route to the engine: the embedded provider, and a
RemoteProvider talking to a real ``cairn serve`` process — on each storage backend.

``mem`` is parametrized by (route, backend); a backend joins by adding its entry to
``server.serving.BACKENDS`` (the server's store) and to ``LOCAL`` (the embedded one).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from cairn import Memory
from cairn.adapters.hashing import HashingEmbedder
from server.serving import BACKENDS, ServerPool


def _local_sqlite(tmp: Path, embedder: HashingEmbedder, clock: Callable[[], object]) -> Memory:
    return Memory.open(tmp / "memory.db", config={}, embedder=embedder, clock=clock)  # type: ignore[arg-type]


def _local_postgres(tmp: Path, embedder: HashingEmbedder, clock: Callable[[], object]) -> Memory:
    from pg_support import new_schema_name, server_uri

    store = {"url": server_uri(), "postgresSchema": new_schema_name("prov")}
    config = {"memory": {"store": store, "markdown": {"enabled": False}}}
    return Memory.open(config=config, embedder=embedder, clock=clock)  # type: ignore[arg-type]


# backend -> the embedded engine on it
LOCAL: dict[str, Callable[[Path, HashingEmbedder, Callable[[], object]], Memory]] = {
    "sqlite": _local_sqlite,
    "postgres": _local_postgres,
}
ROUTES = [("local", b) for b in sorted(LOCAL)] + [("server", b) for b in sorted(BACKENDS)]


@pytest.fixture(scope="session")
def servers(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerPool]:
    pool = ServerPool(tmp_path_factory.mktemp("servers"))
    yield pool
    pool.stop_all()


@pytest.fixture(params=ROUTES, ids=[f"{r}-{b}" for r, b in ROUTES])
def mem(
    request: pytest.FixtureRequest,
    tmp_path: Path,
    embedder: HashingEmbedder,
    clock: Callable[[], object],
) -> Iterator[Memory]:
    route, backend = request.param
    if route == "local":
        memory = LOCAL[backend](tmp_path, embedder, clock)
        yield memory
        memory.close()
        return
    pool: ServerPool = request.getfixturevalue("servers")
    with pool.get(backend).memory() as memory:
        yield memory
