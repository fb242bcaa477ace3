"""Reflection (SPEC §6): the journal's trusted successes into mental-model docs.

One run: read the trajectories after the cursor (the anti-poison filter is in the
store's query), cluster them by topic, keep the topics that corroborate, plan learning
deltas against the current docs, apply each delta (its id is its content hash: applied
once, however often it is planned), merge near-duplicates, move docs through their
lifecycle, and record the run with the cursor and the funnel counts. A run that
corroborates nothing abstains — a benign skip.

The cursor resumes at the oldest observation still waiting for corroboration, so a
second success next run corroborates the first. A run that dies part way loses nothing:
the next one plans the same deltas from the same cursor, skips those already applied,
and ends in the same docs, byte for byte.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import numpy as np

from cairn.adapters.embedding import Embedder
from cairn.config import AgentConfig, Config
from cairn.engine.learning.consolidation import merge_participants, merges
from cairn.engine.learning.corroboration import Gate, owner_of
from cairn.engine.learning.deltas import Delta, is_doc, plan
from cairn.engine.learning.lifecycle import Transition, transition
from cairn.engine.learning.observations import observation_of
from cairn.engine.learning.reflect import Funnel, Wording, judge, pending
from cairn.errors import CairnError
from cairn.model import DOC_KINDS, Namespace, Record, record_from_dict
from cairn.services.journal import Journal
from cairn.services.learning import Learning, lifecycle_rules
from cairn.services.store_roles import RecordsAndHistory
from cairn.storage.ports import RecordQuery, TrajectoryQuery
from cairn.timeutil import age_days

RUN_EVENT = "learning.reflected"
WordingFor = Callable[[Namespace, list[str]], Wording | None]


@dataclass(frozen=True, slots=True)
class ReflectionRun:
    ran: bool
    reason: str | None = None
    funnel: Funnel | None = None
    deltas: tuple[Delta, ...] = ()  # applied by this run (noops and repeats left out)
    noops: int = 0
    merged: int = 0
    transitions: tuple[Transition, ...] = ()
    resume_seq: int = 0
    through_seq: int = 0
    warnings: tuple[str, ...] = ()

    @property
    def admitted(self) -> int:
        return sum(d.op in ("create", "update", "supersede") for d in self.deltas)

    @property
    def abstained(self) -> bool:
        return self.funnel is None or self.funnel.abstained


def gate_of(agent: AgentConfig) -> Gate:
    learning = agent.learning
    corroboration = learning.reflect.corroboration
    return Gate(corroboration.mode, corroboration.minObservations, owner_of(learning.senders))


class Reflection:
    def __init__(
        self,
        records: RecordsAndHistory,
        journal: Journal,
        config: Config,
        learning: Learning,
        embedder: Embedder,
        clock: Callable[[], datetime],
        wording_for: WordingFor | None = None,
    ) -> None:
        self._records = records
        self._journal = journal
        self._config = config
        self._learning = learning
        self._embedder = embedder
        self._clock = clock
        self._wording_for = wording_for
        self._vectors: dict[str, np.ndarray] = {}

    def last_run(self, ns: Namespace) -> dict[str, Any] | None:
        found = self._records.recent_events(ns.tenant, ns.agent, [RUN_EVENT], 1)
        return {**found[0].payload, "at": found[0].recorded_at} if found else None

    def run(self, ns: Namespace, *, if_due: bool = False) -> ReflectionRun:
        agent = self._config.agent(ns.agent)
        if not agent.learning.enabled or not agent.learning.reflect.enabled:
            return ReflectionRun(False, "learning is off for this agent")
        last = self.last_run(ns)
        if if_due and last is not None:
            since = age_days(str(last["at"]), self._clock()) or 0.0
            if since * 24 < agent.learning.reflect.intervalHours:
                return ReflectionRun(False, "not due yet")
        resume = int(last["resume_seq"]) if last is not None else 0
        newest = self._records.recent_events(ns.tenant, ns.agent, None, 1)
        through = int(newest[0].seq or 0) if newest else 0
        events = self._records.trajectories(
            TrajectoryQuery(ns.tenant, ns.agent, after_seq=resume, through_seq=through)
        )
        observations = [observation_of(e) for e in events]
        warnings: list[str] = []
        wording = self._wording_for(ns, warnings) if self._wording_for is not None else None
        reflect = agent.learning.reflect
        candidates, funnel = judge(observations, gate_of(agent), reflect.clusterSimilarity, wording)
        stones = self._records.tombstones(ns.tenant, ns.agent)
        forgotten = frozenset(s.text_hash for s in stones if s.restored_at is None)
        planned = plan(
            candidates,
            [d for d in self._docs(ns) if d.state != "superseded"],
            forgotten,
            tenant=ns.tenant,
            agent=ns.agent,
            threshold=reflect.clusterSimilarity,
        )
        applied = [d for d in planned if d.op != "noop" and self._apply(ns, d, warnings)]
        merged: list[Delta] = []
        if reflect.consolidation.enabled:
            for delta in self._merges(ns, reflect.consolidation.similarity):
                if self._apply(ns, delta, warnings):
                    merged.append(delta)
        rules = lifecycle_rules(agent)
        moved = [t for d in self._docs(ns) if (t := transition(d, rules)) is not None]
        self._learning.commit_lifecycle(ns, moved, [])
        waiting = (
            pending(
                observations,
                candidates,
                newest[0].recorded_at if newest else "",
                reflect.pendingDays,
            )
            if newest
            else []
        )
        cursor = min(o.seq for o in waiting) - 1 if waiting else through
        run = ReflectionRun(
            True,
            "nothing corroborated" if funnel.abstained else None,
            funnel,
            tuple(applied),
            sum(d.op == "noop" for d in planned),
            len(merged) // 2 if merged else 0,
            tuple(moved),
            cursor,
            through,
            tuple(warnings),
        )
        self._record_run(ns, run)
        return run

    def _docs(self, ns: Namespace) -> list[Record]:
        query = RecordQuery(ns.tenant, ns.agent, kinds=DOC_KINDS, include_inactive=True)
        return [r for r in self._records.list_records(query) if is_doc(r)]

    def _apply(self, ns: Namespace, delta: Delta, warnings: list[str]) -> bool:
        """One delta in its own transaction; False when it was applied before (or fails:
        a memory changed under it is left as it is, and said so)."""
        event = self._journal.event("learning.delta", delta.event_payload(), ns, delta.key)
        preview = delta.record
        if preview is None and delta.changes.get("body") and delta.target:
            current = self._records.get(ns.tenant, ns.agent, delta.target)
            if current is not None:
                preview = record_from_dict({**current.to_dict(), **delta.changes})
        try:
            (fresh,) = self._journal.commit(
                [event], self._journal.embed([preview]) if preview is not None else {}
            )
        except CairnError as exc:
            warnings.append(f"{delta.op} of {delta.target} was not applied: {exc}")
            return False
        return fresh

    def _merges(self, ns: Namespace, threshold: float) -> list[Delta]:
        owned = self._records.list_records(RecordQuery(ns.tenant, ns.agent, owned=True))
        participants = merge_participants(owned)
        texts = {r.text_hash: r.body for r in participants if r.text_hash not in self._vectors}
        if texts:
            hashes = sorted(texts)
            vectors = self._embedder.embed([texts[h] for h in hashes])
            self._vectors.update(zip(hashes, vectors, strict=True))

        def similarity(a: Record, b: Record) -> float:
            return float(np.dot(self._vectors[a.text_hash], self._vectors[b.text_hash]))

        return merges(participants, similarity, threshold)

    def _record_run(self, ns: Namespace, run: ReflectionRun) -> None:
        assert run.funnel is not None
        ops: dict[str, int] = {}
        for delta in run.deltas:
            ops[delta.op] = ops.get(delta.op, 0) + 1
        payload = {
            "resume_seq": run.resume_seq,
            "through_seq": run.through_seq,
            "admitted": run.admitted,
            "funnel": run.funnel.as_dict(),
            "ops": ops,
            "noops": run.noops,
            "merged": run.merged,
            "transitions": len(run.transitions),
        }
        counters = {
            "reflect:runs": 1,
            "reflect:admitted": run.admitted,
            **{
                f"reflect:funnel:{name}": float(value)
                for name, value in run.funnel.as_dict().items()
                if name != "maxClusterCardinality"
            },
        }
        event = self._journal.event(RUN_EVENT, payload, ns, None)
        self._journal.commit([event], {}, counters=counters)
