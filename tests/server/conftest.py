"""Fixtures of the server's tests: a real ``cairn serve`` per backend for the session, and
``mem``: the Python API over it, in a fresh tenant for each test (so the API tests
imported into this folder run through the server unchanged)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from cairn import Memory
from server.serving import BACKENDS, Server, ServerPool


@pytest.fixture(scope="session")
def servers(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerPool]:
    pool = ServerPool(tmp_path_factory.mktemp("servers"))
    yield pool
    pool.stop_all()


@pytest.fixture(params=sorted(BACKENDS))
def server(request: pytest.FixtureRequest, servers: ServerPool) -> Server:
    return servers.get(request.param)


@pytest.fixture
def mem(server: Server) -> Iterator[Memory]:
    with server.memory() as memory:
        yield memory
