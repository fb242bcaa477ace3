"""One reflection pass, as pure steps: observations → topics → verdicts → candidates.

The funnel counts what happened at each step (counts only, never content): the
trajectories admitted by the anti-poison query, the topic candidates, how many
corroborated (and how many through the single owner's repetition), the largest number of
distinct (session, sender) pairs in one topic, and whether the run abstained.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from cairn.engine.learning.clustering import Topic, cluster, signature
from cairn.engine.learning.corroboration import Gate, Verdict, corroborate
from cairn.engine.learning.deltas import Candidate
from cairn.engine.learning.distill import Draft, distill
from cairn.engine.learning.observations import Observation
from cairn.timeutil import age_days, from_iso

# A hook that may reword a draft (the optional LLM distillation); the default keeps it.
Wording = Callable[[str, Sequence[Observation], Draft], Draft]


@dataclass(frozen=True, slots=True)
class Funnel:
    trajectories: int
    candidates: int
    corroborated: int
    single_owner: int
    max_cardinality: int
    abstained: bool

    def as_dict(self) -> dict[str, int | bool]:
        return {
            "trajectories": self.trajectories,
            "candidates": self.candidates,
            "corroborated": self.corroborated,
            "singleOwnerCorroborated": self.single_owner,
            "maxClusterCardinality": self.max_cardinality,
            "abstained": self.abstained,
        }


def statements(topic: Topic) -> list[tuple[Observation, ...]]:
    """A profile topic's distinct statements (same content words), oldest first."""
    groups: dict[frozenset[str], list[Observation]] = {}
    for obs in topic.members:
        groups.setdefault(signature(obs.note), []).append(obs)
    return sorted((tuple(g) for g in groups.values()), key=lambda g: g[0].seq)


def _judge(topic: Topic, gate: Gate) -> tuple[Verdict, tuple[Observation, ...]]:
    if topic.kind != "profile":
        return corroborate(topic.members, gate), topic.members
    # The latest statement about the user that corroborates on its own is the profile;
    # an older corroborated one it differs from is corrected by it.
    best: tuple[Verdict, tuple[Observation, ...]] | None = None
    for group in statements(topic):
        verdict = corroborate(group, gate)
        if verdict.corroborated and (best is None or group[-1].seq > best[1][-1].seq):
            best = (verdict, group)
    return best if best is not None else (corroborate(topic.members, gate), topic.members)


def judge(
    observations: Sequence[Observation],
    gate: Gate,
    cluster_similarity: float,
    wording: Wording | None = None,
) -> tuple[list[Candidate], Funnel]:
    topics = cluster(observations, cluster_similarity)
    found: list[Candidate] = []
    single = 0
    widest = 0
    for topic in topics:
        verdict, members = _judge(topic, gate)
        widest = max(widest, verdict.cardinality)
        if not verdict.corroborated:
            continue
        single += verdict.via == "single_owner"
        draft = distill(topic.kind, members)
        if wording is not None:
            draft = wording(topic.kind, members, draft)
        found.append(Candidate(topic, verdict, members, draft))
    funnel = Funnel(
        trajectories=len(observations),
        candidates=len(topics),
        corroborated=len(found),
        single_owner=single,
        max_cardinality=widest,
        abstained=not found,
    )
    return found, funnel


def pending(
    observations: Sequence[Observation], candidates: Sequence[Candidate], newest: str, days: float
) -> list[Observation]:
    """Observations not yet corroborated that may still be: those of no corroborated
    topic, younger than ``days`` before the newest one (a reflection cursor resumes at the
    oldest of them, so a second observation next run can still corroborate the first)."""
    used = {o.event_id for c in candidates for o in c.members}
    now = from_iso(newest)
    return [
        o
        for o in observations
        if o.event_id not in used and (age_days(o.recorded_at, now) or 0.0) <= days
    ]
