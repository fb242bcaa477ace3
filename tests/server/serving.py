"""A real ``cairn serve`` process for tests, and Memories that reach it over HTTP.

:class:`Server` starts ``python -m cairn.cli.main serve --port 0`` (a free loopback port,
read back from its "listening" log line), waits for ``/health``, and stops it with
SIGTERM. :class:`ServerPool` keeps one server per storage backend for a test session;
each test then works in a tenant of its own (a fresh token), so tests share the process
but never each other's data (the wall between tenants is what the server is about).

The backend is a parameter: ``BACKENDS`` maps its name to the configuration the server's
store needs (the SQLite file in the server's home needs none; PostgreSQL a schema of its
own on the test server of ``pg_support``); another storage pair joins by adding its entry.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import yaml

from cairn import Memory
from cairn.server.auth import TokenStore, tokens_path


def _postgres(home: Path) -> dict[str, Any]:
    """A schema of its own on the test PostgreSQL (skips the test when none can start)."""
    from pg_support import new_schema_name, server_uri

    schema = new_schema_name("srv")
    return {"memory": {"store": {"url": server_uri(), "postgresSchema": schema}}}


# backend name -> the server's config for its store, given the server's home
BACKENDS: dict[str, Callable[[Path], dict[str, Any]]] = {
    "sqlite": lambda home: {},
    "postgres": _postgres,
}

TEST_EMBEDDER = {"memory": {"embeddings": {"provider": "hashing"}}}
TICK_ENV = "CAIRN_LEARNING_TICK_S"
# The shared servers' learning schedule ticks once at start (no test tenant exists yet) and
# not again in a session: a reflection or sweep written into a test's tenant between two
# of its reads would be a race of the test, not a finding. The schedule itself is tested
# where it is the subject (test_schedule.py, and test_isolation.py on a fast tick).
QUIET_TICK_S = 86_400.0


def _merged(base: dict[str, Any], extra: dict[str, Any]) -> dict[str, Any]:
    out = dict(base)
    for key, value in extra.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = _merged(out[key], value)
        else:
            out[key] = value
    return out


@dataclass
class Server:
    home: Path
    process: subprocess.Popen[bytes]
    log_path: Path
    url: str = ""
    settings: dict[str, Any] = field(default_factory=dict)
    _tokens: tuple[TokenStore, Callable[[], None]] | None = None

    @property
    def tokens(self) -> TokenStore:
        """The server's tokens where ``cairn token`` keeps them: its database's for a
        store on PostgreSQL, else the home's tokens.json."""
        if self._tokens is None:
            from cairn.config import parse_config, with_environment
            from cairn.server.tokens import open_tokens

            config = with_environment(parse_config(self.settings))  # CAIRN_DATABASE_URL
            self._tokens = open_tokens(config, tokens_path(self.home), explicit=False)
        return self._tokens[0]

    @classmethod
    def start(
        cls,
        home: Path,
        backend: str = "sqlite",
        *,
        args: tuple[str, ...] = (),
        config: dict[str, Any] | None = None,
        timeout: float = 60.0,
        test_embedder: bool = True,
        learning_tick_s: float | None = QUIET_TICK_S,
        workers: int | None = 1,
    ) -> Server:
        """``test_embedder`` False: no embedder in the config (the store chooses one).
        ``learning_tick_s``: the learning schedule's tick; once a day by default, so no
        scheduled reflection or sweep races a test's reads (None: the server's own, 60 s).
        ``workers``: ``--workers`` unless ``args`` name it (None: the default, one per
        core); one process by default, so a test reads one engine's logs and gauges."""
        if workers is not None and "--workers" not in args:
            args = ("--workers", str(workers), *args)
        home.mkdir(parents=True, exist_ok=True)
        base = TEST_EMBEDDER if test_embedder else {}
        settings = _merged(_merged(base, BACKENDS[backend](home)), config or {})
        (home / "config.yaml").write_text(yaml.safe_dump(settings), encoding="utf-8")
        log_path = home / f"server-{uuid.uuid4().hex[:6]}.log"
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
        for name in ("CAIRN_HOME", "CAIRN_CONFIG", TICK_ENV):
            env.pop(name, None)
        if learning_tick_s is not None:
            env[TICK_ENV] = str(learning_tick_s)
        with log_path.open("wb") as log:
            process = subprocess.Popen(
                [sys.executable, "-m", "cairn.cli.main", "--home", str(home), "serve",
                 "--port", "0", *args],
                stdout=subprocess.DEVNULL, stderr=log, env=env,
            )  # fmt: skip
        server = cls(home, process, log_path, settings=settings)
        try:
            server._wait_ready(timeout)
        except BaseException:
            server.kill()
            raise
        return server

    def _wait_ready(self, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while not self.url:
            if self.process.poll() is not None:
                raise RuntimeError(f"cairn serve exited {self.process.returncode}: {self.text()}")
            for line in self.logs():
                if line.get("event") == "listening":
                    self.url = str(line["url"])
            if time.monotonic() > deadline:
                raise TimeoutError(f"cairn serve did not listen in {timeout} s: {self.text()}")
            time.sleep(0.05)
        while True:
            try:
                if httpx.get(f"{self.url}/health", timeout=5).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline:
                raise TimeoutError(f"cairn serve is not healthy after {timeout} s")
            time.sleep(0.05)

    # -- what tests use ------------------------------------------------------------------

    def token(self, tenant: str, agent: str | None = None) -> str:
        from datetime import UTC, datetime

        secret, _ = self.tokens.create(tenant, agent, now=datetime.now(UTC))
        return secret

    def client(self, token: str | None) -> httpx.Client:
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        return httpx.Client(base_url=self.url, headers=headers, timeout=30, trust_env=False)

    @contextmanager
    def memory(self, tenant: str | None = None, agent: str | None = None) -> Iterator[Memory]:
        """A Memory over this server through the composition root (``memory.remote``),
        the token in an environment variable of its own, as a user would set it."""
        tenant = tenant or f"t-{uuid.uuid4().hex[:12]}"
        env = f"CAIRN_TEST_TOKEN_{uuid.uuid4().hex[:8].upper()}"
        os.environ[env] = self.token(tenant, agent)
        config = {"memory": {"remote": {"endpoint": self.url, "tokenEnv": env}}}
        mem = Memory.open(config=config)
        try:
            yield mem
        finally:
            mem.close()
            os.environ.pop(env, None)

    def wait_for_learning(self, runs: Sequence[str], timeout: float = 30.0) -> None:
        """Wait until the learning schedule has made these runs (``tenant:agent:reflect``)."""
        deadline = time.monotonic() + timeout
        while True:
            made = {
                run
                for line in self.logs()
                if line.get("event") == "learning ran"
                for run in line.get("runs", ())
            }
            if set(runs) <= made:
                return
            if time.monotonic() > deadline:
                missing = sorted(set(runs) - made)
                raise TimeoutError(f"the learning schedule did not run {missing} in {timeout} s")
            time.sleep(0.05)

    def logs(self) -> list[dict[str, Any]]:
        lines = []
        for raw in self.text().splitlines():
            try:
                lines.append(json.loads(raw))
            except ValueError:
                lines.append({"event": "not json", "line": raw})
        return lines

    def text(self) -> str:
        return self.log_path.read_text(encoding="utf-8", errors="replace")

    def stop(self, timeout: float = 30.0) -> int:
        """SIGTERM, then wait for a graceful exit; the exit code."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout)
            except subprocess.TimeoutExpired:
                self.kill()
                raise
        return int(self.process.returncode)

    def kill(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait(10)

    def close_tokens(self) -> None:
        if self._tokens is not None:
            self._tokens[1]()
            self._tokens = None


class ServerPool:
    """One server per backend for a test session, started when first asked for."""

    def __init__(self, root: Path) -> None:
        self._root = root
        self._servers: dict[str, Server] = {}

    def get(self, backend: str) -> Server:
        if backend not in self._servers:
            self._servers[backend] = Server.start(
                self._root / backend, backend, learning_tick_s=QUIET_TICK_S
            )
        return self._servers[backend]

    def stop_all(self) -> None:
        for server in self._servers.values():
            server.close_tokens()
            code = server.stop()
            assert code == 0, f"cairn serve exited {code}: {server.text()[-2000:]}"
        self._servers.clear()
