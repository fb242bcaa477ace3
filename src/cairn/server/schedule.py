"""The server's learning schedule: reflection and the forgetting sweep for every tenant it
serves, when due.

A long-running ``cairn serve`` is where learning on a timer belongs (SPEC §6): each tick
(every minute) it reads the token store -- the tenants and agents it serves, so a token
made while it runs is picked up -- and asks each of them for a reflection and a sweep
``if_due``, through the same provider a request of that tenant gets. Whether and how often
either runs is the agent's configuration: ``learning.enabled``, ``learning.reflect`` and
``learning.forget`` (``enabled``, ``intervalHours``); a run that fails is logged and tried
again at the next tick (:mod:`cairn.provider.schedule`).

One schedule per home: the processes of ``--workers`` share the server's home, and only
the one holding the lock file ``learning.lock`` there runs the ticks (another takes over
if it exits). Servers on other machines sharing one PostgreSQL each run their own.
"""

from __future__ import annotations

import fcntl
import logging
import os
import threading
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import IO, Any

from fastapi import FastAPI

from cairn.provider.schedule import run_due
from cairn.server.app import Engine
from cairn.server.auth import TokenStore

log = logging.getLogger("cairn.server")
TICK_S = 60.0
LOCK_FILE = "learning.lock"


class ServedLearning:
    """Ticks of learning for the tenants a token store serves."""

    def __init__(
        self, engine: Engine, tokens: TokenStore, home: Path, *, tick_s: float = TICK_S
    ) -> None:
        self._engine = engine
        self._tokens = tokens
        self._lock_path = home / LOCK_FILE
        self._lock: IO[bytes] | None = None
        self._tick = tick_s
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.ran: list[str] = []  # every run this schedule made, oldest first

    def served(self) -> list[tuple[str, str]]:
        return sorted({(b.tenant, b.agent or "default") for b in self._tokens.bindings()})

    def holds_lock(self) -> bool:
        """Whether this process runs the home's schedule (taking the lock if free)."""
        if self._lock is not None:
            return True
        try:
            fd = os.open(self._lock_path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
            handle = os.fdopen(fd, "ab")  # held while we run
        except OSError as exc:
            log.warning("learning schedule: cannot open %s: %s", self._lock_path, exc)
            return False
        try:
            fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            handle.close()
            return False
        self._lock = handle
        return True

    def tick(self) -> list[str]:
        """One round over every served tenant and agent: the runs that ran
        (``tenant:agent:reflect`` / ``tenant:agent:sweep``)."""
        if not self.holds_lock():
            return []
        ran: list[str] = []
        for tenant, agent in self.served():
            if self._stop.is_set():
                break
            try:
                provider = self._engine.bound(tenant=tenant, agent=agent)
            except Exception as exc:  # a tenant that cannot be served now: the next tick
                log.warning("learning schedule: tenant %s: %s", tenant, exc)
                continue
            ran += [f"{tenant}:{name}" for name in run_due(provider, [agent])]
        if ran:
            log.info("learning ran", extra={"runs": ran})
            self.ran += ran
        return ran

    def start(self) -> None:
        if self._thread is None:
            self._stop.clear()
            self._thread = threading.Thread(target=self._loop, name="cairn-learning", daemon=True)
            self._thread.start()

    @property
    def running(self) -> bool:
        return self._thread is not None

    def stop(self) -> None:
        """Stop ticking (a run under way finishes first) and give the lock back."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
            self._thread = None
        if self._lock is not None:
            self._lock.close()
            self._lock = None

    def _loop(self) -> None:
        first = True
        while not self._stop.is_set():
            try:
                ran = self.tick()
            except Exception as exc:  # never take the server down
                log.warning("learning schedule tick failed: %s", exc)
                ran = []
            if first:  # what was due at start is done (benchmarks wait for this line)
                log.info("learning first tick done", extra={"runs": ran})
                first = False
            self._stop.wait(self._tick)


def attach(
    app: FastAPI, engine: Engine, tokens: TokenStore, home: Path, *, tick_s: float | None = None
) -> ServedLearning:
    """Run the schedule while ``app`` serves: started after its startup, stopped before its
    shutdown closes the engine. ``CAIRN_LEARNING_TICK_S`` overrides the tick (tests)."""
    if tick_s is None:
        tick_s = float(os.environ.get("CAIRN_LEARNING_TICK_S", TICK_S))
    schedule = ServedLearning(engine, tokens, home, tick_s=tick_s)
    inner = app.router.lifespan_context

    @asynccontextmanager
    async def lifespan(served: FastAPI) -> AsyncIterator[Any]:
        async with inner(served) as state:
            schedule.start()
            try:
                yield state
            finally:
                schedule.stop()

    app.router.lifespan_context = lifespan
    return schedule
