"""Going through the daemon: the provider over the socket, its fallback rule, and the
MCP server through a real daemon."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from cairn.cli.app import open_memory
from cairn.config import parse_config
from cairn.daemon.client import Daemon, DaemonProvider, find_daemon
from cairn.daemon.paths import daemon_paths
from cairn.errors import StorageError
from cairn.provider import contract as c
from cairn.provider.remote import Unreachable
from daemon.support import counted, env_for, make_home, make_repo, running

CONFIG = parse_config({"memory": {"embeddings": {"provider": "hashing"}}})


class DiedMidRequest:
    """A provider over a daemon that got the request, applied it (to the same store) and
    died before answering — the case a blind retry would apply twice."""

    def __init__(self, engine: Any) -> None:
        self.engine = engine
        self.closed = False

    def apply(self, request: Any) -> Any:
        self.engine.apply(request)
        raise Unreachable("the cairn daemon failed: connection reset", sent=True)

    def close(self) -> None:
        self.closed = True


def provider_over(home: Path, remote: Any) -> DaemonProvider:
    paths = daemon_paths(home)
    provider = DaemonProvider(
        Daemon(paths, {"pid": 1, "socket": str(paths.socket), "store": "x"}),
        "default",
        "default",
        lambda: open_memory(CONFIG, home, "default", "default"),
    )
    provider._remote = remote  # the daemon's side, simulated
    return provider


def remember(key: str) -> c.RememberRequest:
    return c.RememberRequest(body="Always run the linter", idempotency_key=key)


def test_a_write_the_daemon_applied_before_dying_is_not_applied_twice(tmp_path: Path) -> None:
    home = make_home(tmp_path)
    engine = open_memory(CONFIG, home, "default", "default")
    provider = provider_over(home, DiedMidRequest(engine))
    try:
        answer = provider.apply(remember("k-1"))  # no daemon holds the lock: in-process
        assert isinstance(answer, c.WriteResponse)
        assert provider.in_process
        listed = engine.query(c.ListQuery())
        assert isinstance(listed, c.RecordsResponse)
        assert [r.body for r in listed.records] == ["Always run the linter"]
        again = provider.apply(remember("k-2"))  # in-process from here on
        assert isinstance(again, c.WriteResponse) and again.duplicate_of is not None
    finally:
        provider.close()
        engine.close()


def test_no_fallback_while_a_daemon_holds_the_lock(tmp_path: Path) -> None:
    import fcntl
    import os

    home = make_home(tmp_path)
    paths = daemon_paths(home)
    paths.folder.mkdir(parents=True)
    lock = os.open(paths.lock, os.O_RDWR | os.O_CREAT, 0o600)
    fcntl.flock(lock, fcntl.LOCK_EX)  # as a live daemon holds it

    class Stuck:
        def apply(self, request: Any) -> Any:
            raise Unreachable("the cairn daemon did not answer within 2 s", sent=True)

        def close(self) -> None:
            pass

    opened: list[bool] = []
    provider = provider_over(home, Stuck())
    provider._fallback = lambda: opened.append(True)  # type: ignore[assignment,return-value]
    try:
        with pytest.raises(StorageError, match="still runs: it may still apply it"):
            provider.apply(remember("k-1"))
        assert opened == [] and not provider.in_process
    finally:
        os.close(lock)


def test_find_daemon_without_one_is_none_and_autostart_is_asked(tmp_path: Path) -> None:
    home = make_home(tmp_path)
    asked: list[bool] = []
    assert find_daemon(home, None, autostart=lambda: asked.append(True)) is None  # type: ignore[func-returns-value]
    assert asked == [True]


@pytest.mark.slow
def test_the_mcp_server_goes_through_the_daemon(tmp_path: Path) -> None:
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    from mcp_server.test_server import round_trip

    home = make_home(tmp_path)
    repo = make_repo(tmp_path)
    with running(home):
        params = StdioServerParameters(
            command=sys.executable, args=["-m", "cairn.cli.main", "mcp"], env=env_for(home),
            cwd=str(repo),
        )  # fmt: skip

        async def main() -> None:
            async with stdio_client(params) as (read, write), ClientSession(read, write) as s:
                await round_trip(s)

        asyncio.run(main())
        assert counted(home, "/v1/apply", "remember") + counted(home, "/v1/apply", "store") == 1
        assert counted(home, "/v1/apply", "feedback") == 1
        assert counted(home, "/v1/query", "task") >= 1
    proc = subprocess.run(
        [sys.executable, "-m", "cairn.cli.main", "explain", "--json"],
        env=env_for(home), cwd=repo, capture_output=True, text=True, check=True,
    )  # fmt: skip
    assert json.loads(proc.stdout)["with_outcome"] == 1  # the home's own store
