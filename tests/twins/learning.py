"""The in-memory twin's learning queries: the same filters as the SQLite store's SQL."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from cairn.model import Event, Record
from cairn.storage.ports import SweepQuery, TrajectoryQuery


def trajectories(events: Iterable[Event], query: TrajectoryQuery) -> list[Event]:
    found: list[Event] = []
    for event in events:
        payload = event.payload
        seq = event.seq or 0
        if (event.tenant, event.agent) != (query.tenant, query.agent) or seq <= query.after_seq:
            continue
        if query.through_seq is not None and seq > query.through_seq:
            continue
        if event.type not in query.types or payload.get("success") is not True:
            continue
        if not payload.get("note"):
            continue
        if payload.get("content_trust") not in query.content_trust:
            continue
        if payload.get("sender_trust") not in query.sender_trust:
            continue
        found.append(event)
    found.sort(key=lambda e: e.seq or 0)
    return found[: query.limit] if query.limit is not None else found


def recent_events(
    events: Iterable[Event],
    tenant: str,
    agent: str | None,
    types: Sequence[str] | None,
    limit: int,
) -> list[Event]:
    found = [
        e
        for e in events
        if e.tenant == tenant
        and (agent is None or e.agent == agent)
        and (types is None or e.type in types)
    ]
    found.sort(key=lambda e: -(e.seq or 0))
    return found[:limit]


def sweep_candidates(live: Iterable[Record], query: SweepQuery) -> list[Record]:
    found = [
        r
        for r in live
        if (r.tenant, r.agent) == (query.tenant, query.agent)
        and not r.pinned
        and r.trust != "system"
        and r.proof_count < query.high_proof_floor
        and (
            r.failure_count >= query.failure_floor
            or (r.last_applied_at or r.recorded_at) < query.idle_before
        )
    ]
    found.sort(key=lambda r: r.id)
    return found[: query.limit] if query.limit is not None else found


def counters(
    table: dict[tuple[str, str, str], float], tenant: str, agent: str | None
) -> dict[str, dict[str, float]]:
    out: dict[str, dict[str, float]] = {}
    for (t, a, name), value in sorted(table.items()):
        if t == tenant and (agent is None or a == agent):
            out.setdefault(a, {})[name] = value
    return out
