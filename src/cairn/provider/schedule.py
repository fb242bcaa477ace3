"""Learning on a schedule, for the long-running process (SPEC §6).

Reflection (``learning.reflect.intervalHours``, default 3 h) and the forgetting sweep
(``learning.forget.intervalHours``) run when due, per agent, through a :class:`Client` like
any request (its one-line refusal, its answer's type checked). A run that fails is logged
and tried again at the next tick: background learning never blocks or breaks the
foreground.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Sequence

from cairn.identifiers import new_ulid
from cairn.provider import Provider
from cairn.provider.client import Client
from cairn.provider.contract.learning import (
    ReflectRequest,
    ReflectResponse,
    SweepRequest,
    SweepResponse,
)

log = logging.getLogger(__name__)


def run_due(provider: Provider, agents: Sequence[str]) -> list[str]:
    """Run what is due for each agent now; the names of the runs that ran."""
    ran: list[str] = []
    client = Client(provider)
    for agent in agents:
        for name in ("reflect", "sweep"):
            try:
                if _run(client, name, agent):
                    ran.append(f"{agent}:{name}")
            except Exception as exc:  # a background job must never take the process down
                log.warning("scheduled %s for agent %s failed: %s", name, agent, exc)
    return ran


def _run(client: Client, name: str, agent: str) -> bool:
    """One run if it is due; whether it ran."""
    key = f"schedule:{new_ulid()}"
    if name == "reflect":
        return client.apply(ReflectRequest, ReflectResponse, key, agent=agent, if_due=True).ran
    return client.apply(SweepRequest, SweepResponse, key, agent=agent, if_due=True).ran


class LearningSchedule:
    """A daemon thread that calls :func:`run_due` every ``tick_s`` seconds."""

    def __init__(self, provider: Provider, agents: Sequence[str], *, tick_s: float = 60.0):
        self._provider = provider
        self._agents = tuple(agents)
        self._tick = tick_s
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        if self._thread is None:
            self._thread = threading.Thread(target=self._loop, name="cairn-learning", daemon=True)
            self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
            self._thread = None

    def _loop(self) -> None:
        while not self._stop.is_set():
            run_due(self._provider, self._agents)
            self._stop.wait(self._tick)
