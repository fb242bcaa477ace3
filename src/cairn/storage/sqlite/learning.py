"""The record store's queries for learning: trajectories with the anti-poison filter in
the SQL, sweep candidates, recent events by type, telemetry counters."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from cairn.model import Application, Event, Record
from cairn.storage.ports import SweepQuery, TrajectoryQuery
from cairn.storage.sqlite.rows import (
    SELECT_APPLICATION,
    SELECT_EVENT,
    SELECT_RECORD,
    application_from_row,
    event_from_row,
    record_from_row,
)

Rows = Callable[[str, Sequence[Any]], list[Any]]


def _marks(values: Sequence[Any]) -> str:
    return ", ".join("?" * len(values))


def trajectories(rows: Rows, query: TrajectoryQuery) -> list[Event]:
    if not (query.types and query.content_trust and query.sender_trust):
        return []
    # Both trust axes and the outcome are tested here, in the query: a poisoned row is
    # never read out of the file, so no caller can forget to drop it.
    sql = (
        SELECT_EVENT + " WHERE tenant = ? AND agent = ? AND seq > ?"
        f" AND type IN ({_marks(query.types)})"
        " AND json_extract(payload, '$.success') = 1"
        " AND length(coalesce(json_extract(payload, '$.note'), '')) > 0"
        f" AND json_extract(payload, '$.content_trust') IN ({_marks(query.content_trust)})"
        f" AND json_extract(payload, '$.sender_trust') IN ({_marks(query.sender_trust)})"
    )
    params: list[Any] = [
        query.tenant,
        query.agent,
        query.after_seq,
        *query.types,
        *query.content_trust,
        *query.sender_trust,
    ]
    if query.through_seq is not None:
        sql += " AND seq <= ?"
        params.append(query.through_seq)
    sql += " ORDER BY seq"
    if query.limit is not None:
        sql += " LIMIT ?"
        params.append(query.limit)
    return [event_from_row(r) for r in rows(sql, params)]


def recent_events(
    rows: Rows, tenant: str, agent: str | None, types: Sequence[str] | None, limit: int
) -> list[Event]:
    sql = SELECT_EVENT + " WHERE tenant = ?"
    params: list[Any] = [tenant]
    if agent is not None:
        sql += " AND agent = ?"
        params.append(agent)
    if types is not None:
        if not types:
            return []
        if len(types) > 1 and agent is not None:
            # One walk of the type index each, merged: an IN list would walk the whole
            # journal of the namespace from its newest event.
            found = [
                e
                for t in dict.fromkeys(types)
                for e in recent_events(rows, tenant, agent, [t], limit)
            ]
            found.sort(key=lambda e: e.seq or 0, reverse=True)
            return found[:limit]
        sql += f" AND type IN ({_marks(types)})"
        params += list(types)
    sql += " ORDER BY seq DESC LIMIT ?"
    params.append(limit)
    return [event_from_row(r) for r in rows(sql, params)]


def sweep_candidates(rows: Rows, query: SweepQuery) -> list[Record]:
    sql = (
        SELECT_RECORD + " WHERE tenant = ? AND agent = ? AND live AND NOT pinned"
        " AND trust <> 'system' AND proof_count < ?"
        " AND (failure_count >= ? OR coalesce(last_applied_at, recorded_at) < ?)"
        " ORDER BY id"
    )
    params: list[Any] = [
        query.tenant,
        query.agent,
        query.high_proof_floor,
        query.failure_floor,
        query.idle_before,
    ]
    if query.limit is not None:
        sql += " LIMIT ?"
        params.append(query.limit)
    return [record_from_row(r)[1] for r in rows(sql, params)]


def counters(rows: Rows, tenant: str, agent: str | None) -> dict[str, dict[str, float]]:
    sql = "SELECT agent, name, value FROM telemetry WHERE tenant = ?"
    params: list[Any] = [tenant]
    if agent is not None:
        sql += " AND agent = ?"
        params.append(agent)
    out: dict[str, dict[str, float]] = {}
    for who, name, value in rows(sql + " ORDER BY agent, name", params):
        out.setdefault(who, {})[name] = float(value)
    return out


def applications_by_id(
    rows: Rows, tenant: str, agent: str, application_ids: Sequence[str]
) -> list[Application]:
    ids = list(dict.fromkeys(application_ids))
    out: list[Application] = []
    for start in range(0, len(ids), 500):
        chunk = ids[start : start + 500]
        found = rows(
            SELECT_APPLICATION + " WHERE tenant = ? AND agent = ?"
            f" AND application_id IN ({_marks(chunk)}) ORDER BY created_at, application_id",
            [tenant, agent, *chunk],
        )
        out += [application_from_row(r) for r in found]
    return out
