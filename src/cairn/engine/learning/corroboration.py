"""Corroboration (SPEC §6): when a topic may seed a doc, and when a failure counts.

Two gates for a topic's successes:

* ``distinct_sessions`` — at least two distinct (session, sender) successes. Each episode
  counts once (its first event), so an episode continued in another session, or N
  near-identical successes from one sender in one session, are one observation.
* ``single_owner`` (default) — the distinct-sessions gate, and also: the one explicitly
  trusted owner succeeded at it ``min_observations`` times (distinct episodes), even in a
  single session. Only a sender the operator *named* at a non-external tier is an owner,
  and only when it is the only one: with two or more named senders the box is multi-user
  and the distinct-sessions gate alone applies.

One gate for failures: each ``failure_count`` increment needs corroboration — a
deterministic source (a failing test, a verifier), the owner's own verdict, or failures
observed in at least two independent sessions. An untrusted sender's outcome never counts.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from cairn.engine.learning.observations import Observation
from cairn.model import NEGATIVE_OUTCOMES, Application


@dataclass(frozen=True, slots=True)
class Gate:
    mode: str  # "single_owner" | "distinct_sessions"
    min_observations: int
    owner: str | None  # the one explicitly trusted sender, when there is exactly one


def owner_of(senders: Mapping[str, str]) -> str | None:
    """The single-owner box's owner: the only sender named at a non-external tier."""
    trusted = sorted(name for name, trust in senders.items() if trust != "external")
    return trusted[0] if len(trusted) == 1 else None


@dataclass(frozen=True, slots=True)
class Verdict:
    corroborated: bool
    via: str | None  # "distinct_sessions" | "single_owner" | None
    cardinality: int  # distinct (session, sender) pairs among the episodes
    episodes: int


def episodes(members: Iterable[Observation]) -> list[Observation]:
    """The first observation of each episode, oldest first."""
    first: dict[str, Observation] = {}
    for obs in sorted(members, key=lambda o: o.seq):
        first.setdefault(obs.episode, obs)
    return list(first.values())


def corroborate(members: Sequence[Observation], gate: Gate) -> Verdict:
    firsts = episodes(members)
    cardinality = len({obs.pair for obs in firsts})
    if cardinality >= 2:
        return Verdict(True, "distinct_sessions", cardinality, len(firsts))
    if gate.mode == "single_owner" and gate.owner is not None:
        owned = [o for o in firsts if o.sender == gate.owner and o.sender_named]
        if len(owned) >= gate.min_observations:
            return Verdict(True, "single_owner", cardinality, len(firsts))
    return Verdict(False, None, cardinality, len(firsts))


def outcome_source(sender_trust: str, deterministic: bool) -> str:
    """Who judged an observed outcome (``cairn.model.OUTCOME_SOURCES``)."""
    if sender_trust == "external":
        return "untrusted"
    return "deterministic" if deterministic else "observed"


def counted_failures(applications: Iterable[Application]) -> int:
    """The corroborated failures among a memory's applications' current outcomes.

    Each failure judged by a deterministic source or by the owner counts; failures only
    observed count once two independent (known, distinct) sessions report one, one per
    session; an untrusted sender's never count.
    """
    direct = 0
    sessions: set[str] = set()
    for app in applications:
        if app.outcome not in NEGATIVE_OUTCOMES:
            continue
        source = app.outcome_source or "owner"  # outcomes kept before provenance: the owner's
        if source in ("owner", "deterministic"):
            direct += 1
        elif source == "observed" and app.outcome_session:
            sessions.add(app.outcome_session)
    return direct + (len(sessions) if len(sessions) >= 2 else 0)
