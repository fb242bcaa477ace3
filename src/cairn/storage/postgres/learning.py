"""The PostgreSQL record store's queries for learning (as :mod:`cairn.storage.sqlite.
learning`): trajectories with the anti-poison filter in the SQL, sweep candidates, recent
events by type, applications by id, telemetry counters."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from cairn.model import Application, Event, Record
from cairn.storage.ports import SweepQuery, TrajectoryQuery
from cairn.storage.postgres.rows import (
    SELECT_APPLICATION,
    SELECT_EVENT,
    SELECT_RECORD,
    application_from_row,
    event_from_row,
    record_from_row,
)

# (tenant, query, params) -> rows, read in that tenant's scope (None: every tenant).
Rows = Callable[..., list[Any]]


def trajectories(rows: Rows, query: TrajectoryQuery) -> list[Event]:
    if not (query.types and query.content_trust and query.sender_trust):
        return []
    # Both trust axes and the outcome are tested here, in the query: a poisoned row is
    # never read out of the database, so no caller can forget to drop it.
    sql = (
        SELECT_EVENT + " WHERE tenant = %s AND agent = %s AND seq > %s"
        " AND type = ANY(%s::text[])"
        " AND payload::jsonb -> 'success' = 'true'::jsonb"
        " AND length(coalesce(payload::jsonb ->> 'note', '')) > 0"
        " AND payload::jsonb ->> 'content_trust' = ANY(%s::text[])"
        " AND payload::jsonb ->> 'sender_trust' = ANY(%s::text[])"
    )
    params: list[Any] = [
        query.tenant,
        query.agent,
        query.after_seq,
        list(query.types),
        list(query.content_trust),
        list(query.sender_trust),
    ]
    if query.through_seq is not None:
        sql += " AND seq <= %s"
        params.append(query.through_seq)
    sql += " ORDER BY seq"
    if query.limit is not None:
        sql += " LIMIT %s"
        params.append(query.limit)
    return [event_from_row(r) for r in rows(query.tenant, sql.encode(), params)]


def recent_events(
    rows: Rows, tenant: str, agent: str | None, types: Sequence[str] | None, limit: int
) -> list[Event]:
    sql = SELECT_EVENT + " WHERE tenant = %s"
    params: list[Any] = [tenant]
    if agent is not None:
        sql += " AND agent = %s"
        params.append(agent)
    if types is not None:
        if not types:
            return []
        sql += " AND type = ANY(%s::text[])"
        params.append(list(types))
    sql += " ORDER BY seq DESC LIMIT %s"
    params.append(limit)
    return [event_from_row(r) for r in rows(tenant, sql.encode(), params)]


def sweep_candidates(rows: Rows, query: SweepQuery) -> list[Record]:
    sql = (
        SELECT_RECORD + " WHERE tenant = %s AND agent = %s AND live AND NOT pinned"
        " AND trust <> 'system' AND proof_count < %s"
        " AND (failure_count >= %s OR coalesce(last_applied_at, recorded_at) < %s)"
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
        sql += " LIMIT %s"
        params.append(query.limit)
    return [record_from_row(r)[1] for r in rows(query.tenant, sql.encode(), params)]


def applications_by_id(
    rows: Rows, tenant: str, agent: str, application_ids: Sequence[str]
) -> list[Application]:
    found = rows(
        tenant,
        (
            SELECT_APPLICATION + " WHERE tenant = %s AND agent = %s"
            " AND application_id = ANY(%s::text[]) ORDER BY created_at, application_id"
        ).encode(),
        [tenant, agent, list(dict.fromkeys(application_ids))],
    )
    return [application_from_row(r) for r in found]


def counters(rows: Rows, tenant: str, agent: str | None) -> dict[str, dict[str, float]]:
    sql = "SELECT agent, name, value FROM telemetry WHERE tenant = %s"
    params: list[Any] = [tenant]
    if agent is not None:
        sql += " AND agent = %s"
        params.append(agent)
    out: dict[str, dict[str, float]] = {}
    for who, name, value in rows(tenant, (sql + " ORDER BY agent, name").encode(), params):
        out.setdefault(str(who), {})[str(name)] = float(value)
    return out
