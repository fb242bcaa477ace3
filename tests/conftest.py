"""Shared fixtures.

Unit tests use a small deterministic embedder (token hashing) so they run in
milliseconds; the default path, with the real MiniLM model, is exercised by the tests
marked ``slow`` and by tests/adapters/test_embedding.py.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from cairn import Memory
from cairn.adapters.hashing import HashingEmbedder


class FrozenClock:
    def __init__(self, start: datetime | None = None) -> None:
        self.now = start or datetime(2026, 6, 1, 12, 0, tzinfo=UTC)

    def __call__(self) -> datetime:
        self.now += timedelta(microseconds=1)  # strictly increasing, like real time
        return self.now

    def advance(self, **kwargs: float) -> None:
        self.now += timedelta(**kwargs)


@pytest.fixture
def clock() -> FrozenClock:
    return FrozenClock()


@pytest.fixture
def embedder() -> HashingEmbedder:
    return HashingEmbedder()


@pytest.fixture
def mem(tmp_path: Path, embedder: HashingEmbedder, clock: FrozenClock) -> Iterator[Memory]:
    memory = Memory.open(tmp_path / "memory.db", config={}, embedder=embedder, clock=clock)
    yield memory
    memory.close()


# The longest files, started first: under `pytest -n` (whole files per worker) one of them
# started last would leave the other workers idle while it runs on alone.
LONGEST_FIRST = (
    "reliability/test_kills.py",
    "cli/test_cli.py",
    "reliability/test_cross_tenant.py",
    "reliability/test_faults.py",
    "reliability/test_fault_routes.py",
    "reliability/test_concurrent_load.py",
    "hooks/test_hook_command.py",
    "daemon/test_control.py",
    "provider/test_remote.py",
    "provider/test_route_parity.py",
)


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """Stop the PostgreSQL servers this process started (each xdist worker ends its own
    session), so no run leaves a server's data behind in the temporary folder."""
    for name, stop in (
        ("pg_support", "stop_server"),
        ("server.pg_fault_support", "stop_fault_postgres"),
    ):
        module = sys.modules.get(name)  # imported only where a test needed it
        if module is not None:
            getattr(module, stop)()


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    def rank(item: pytest.Item) -> int:
        path = item.path.as_posix()
        return next((n for n, end in enumerate(LONGEST_FIRST) if path.endswith(end)), 99)

    items.sort(key=rank)  # stable: the order inside each file, and of the rest, is kept
