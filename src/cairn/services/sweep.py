"""The forgetting sweep as a job (SPEC §6; ``cairn sweep``, scheduled): no model.

The store pre-selects what may be evicted (live, not pinned, not ``system``, under the
high-proof floor, at the failure floor or idle too long); the engine's rules decide. Each
eviction is a ``lifecycle.evicted`` event, reversible with ``unevict``; the run is
recorded with its counts.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime

from cairn.config import Config
from cairn.engine.learning.sweep import Eviction, decide, idle_before
from cairn.model import Namespace
from cairn.services.journal import Journal
from cairn.services.learning import Learning, sweep_rules
from cairn.services.store_roles import SweepReads
from cairn.storage.ports import SweepQuery
from cairn.timeutil import age_days

RUN_EVENT = "lifecycle.swept"


@dataclass(frozen=True, slots=True)
class SweepRun:
    ran: bool
    reason: str | None = None
    examined: int = 0
    evictions: tuple[Eviction, ...] = ()


class Sweeper:
    def __init__(
        self,
        records: SweepReads,
        journal: Journal,
        config: Config,
        learning: Learning,
        clock: Callable[[], datetime],
    ) -> None:
        self._records = records
        self._journal = journal
        self._config = config
        self._learning = learning
        self._clock = clock

    def run(self, ns: Namespace, *, if_due: bool = False) -> SweepRun:
        agent = self._config.agent(ns.agent)
        forget = agent.learning.forget
        if not agent.learning.enabled or not forget.enabled:
            return SweepRun(False, "learning is off for this agent")
        now = self._clock()
        if if_due:
            last = self._records.recent_events(ns.tenant, ns.agent, [RUN_EVENT], 1)
            if last and (age_days(last[0].recorded_at, now) or 0.0) * 24 < forget.intervalHours:
                return SweepRun(False, "not due yet")
        rules = sweep_rules(agent)
        found = self._records.sweep_candidates(
            SweepQuery(
                ns.tenant,
                ns.agent,
                failure_floor=rules.failure_floor,
                idle_before=idle_before(now, rules),
                high_proof_floor=rules.high_proof_floor,
            )
        )
        evictions = tuple(e for r in found if (e := decide(r, rules, now)) is not None)
        self._learning.commit_lifecycle(ns, [], evictions)
        reasons: dict[str, int] = {}
        for eviction in evictions:
            reasons[eviction.reason] = reasons.get(eviction.reason, 0) + 1
        payload = {"examined": len(found), "evicted": len(evictions), "reasons": reasons}
        event = self._journal.event(RUN_EVENT, payload, ns, None)
        self._journal.commit([event], {}, counters={"sweep:runs": 1})
        return SweepRun(True, None, len(found), evictions)
