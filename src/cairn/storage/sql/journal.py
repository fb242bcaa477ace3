"""The journal's reads, written once for both SQL stores: events in order or filtered, by
id, the newest of some types, the trajectories reflection learns from (with the
anti-poison filter in the query), and the telemetry counters; and the store's own state
(feed position, embedder, pending purges)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

from cairn.model import Event
from cairn.storage.ports import EventFilter, FeedPosition, PendingPurge, TrajectoryQuery
from cairn.storage.sql.dialect import Dialect, Fetch, SqlPart
from cairn.storage.sql.rows import SELECT_EVENT, event_from_row


class SqlJournal(SqlPart):
    """The journal reads of both stores."""

    def events(
        self,
        tenant: str,
        agent: str | None,
        *,
        after_seq: int = 0,
        limit: int | None = None,
        where: EventFilter | None = None,
    ) -> Iterator[Event]:
        d, m = self._d, self._d.mark
        sql = SELECT_EVENT + f" WHERE tenant = {m} AND seq > {m}"
        params: list[Any] = [tenant, after_seq]
        if agent is not None:
            sql += f" AND agent = {m}"
            params.append(agent)
        where = where or EventFilter()
        if where.types:
            condition, values = d.one_of("type", where.types)
            sql += " AND " + condition
            params += values
        for column, value in (("episode_id", where.episode_id), ("session_id", where.session_id)):
            if value is not None:
                sql += f" AND {column} = {m}"
                params.append(value)
        if where.before_seq is not None:
            sql += f" AND seq < {m}"
            params.append(where.before_seq)
        sql += " ORDER BY seq DESC" if where.newest_first else " ORDER BY seq"
        if limit is not None:
            sql += f" LIMIT {m}"
            params.append(limit)
        for row in self._fetch(tenant, sql, params):
            yield event_from_row(row)

    def event(self, tenant: str, agent: str, event_id: str) -> Event | None:
        m = self._d.mark
        found = self._fetch(
            tenant,
            SELECT_EVENT + f" WHERE tenant = {m} AND agent = {m} AND event_id = {m}",
            [tenant, agent, event_id],
        )
        return event_from_row(found[0]) if found else None

    def known_events(self, tenant: str, agent: str, event_ids: Sequence[str]) -> set[str]:
        return known_event_ids(self._d, self._fetch, tenant, agent, event_ids)

    def recent_events(
        self, tenant: str, agent: str | None, types: Sequence[str] | None, limit: int
    ) -> list[Event]:
        m = self._d.mark
        sql = SELECT_EVENT + f" WHERE tenant = {m}"
        params: list[Any] = [tenant]
        if agent is not None:
            sql += f" AND agent = {m}"
            params.append(agent)
        if types is not None:
            if not types:
                return []
            if len(types) > 1 and agent is not None:
                # One walk of the type index each, merged: a list of types would walk the
                # whole journal of the namespace from its newest event.
                found = [
                    e
                    for t in dict.fromkeys(types)
                    for e in self.recent_events(tenant, agent, [t], limit)
                ]
                found.sort(key=lambda e: e.seq or 0, reverse=True)
                return found[:limit]
            condition, values = self._d.one_of("type", types)
            sql += " AND " + condition
            params += values
        sql += f" ORDER BY seq DESC LIMIT {m}"
        params.append(limit)
        return [event_from_row(r) for r in self._fetch(tenant, sql, params)]

    def trajectories(self, query: TrajectoryQuery) -> list[Event]:
        if not (query.types and query.content_trust and query.sender_trust):
            return []
        d, m = self._d, self._d.mark
        # Both trust axes and the outcome are tested here, in the query: a poisoned row is
        # never read out of the store, so no caller can forget to drop it.
        types, type_values = d.one_of("type", query.types)
        content, content_values = d.one_of(
            d.json_text("payload", "content_trust"), query.content_trust
        )
        sender, sender_values = d.one_of(d.json_text("payload", "sender_trust"), query.sender_trust)
        sql = (
            SELECT_EVENT + f" WHERE tenant = {m} AND agent = {m} AND seq > {m}"
            f" AND {types} AND {d.json_true('payload', 'success')}"
            f" AND length(coalesce({d.json_text('payload', 'note')}, '')) > 0"
            f" AND {content} AND {sender}"
        )
        params: list[Any] = [
            query.tenant,
            query.agent,
            query.after_seq,
            *type_values,
            *content_values,
            *sender_values,
        ]
        if query.through_seq is not None:
            sql += f" AND seq <= {m}"
            params.append(query.through_seq)
        sql += " ORDER BY seq"
        if query.limit is not None:
            sql += f" LIMIT {m}"
            params.append(query.limit)
        return [event_from_row(r) for r in self._fetch(query.tenant, sql, params)]

    def counters(self, tenant: str, agent: str | None) -> dict[str, dict[str, float]]:
        m = self._d.mark
        sql = f"SELECT agent, name, value FROM telemetry WHERE tenant = {m}"
        params: list[Any] = [tenant]
        if agent is not None:
            sql += f" AND agent = {m}"
            params.append(agent)
        out: dict[str, dict[str, float]] = {}
        for who, name, value in self._fetch(tenant, sql + " ORDER BY agent, name", params):
            out.setdefault(str(who), {})[str(name)] = float(value)
        return out


class SqlState(SqlPart):
    """What the store keeps of itself: the feed's position, the embedder of its vectors,
    the purges whose after-work is pending."""

    def feed_position(self) -> FeedPosition:
        found = dict(
            self._every("SELECT key, value FROM meta WHERE key IN ('generation', 'change_seq')", ())
        )
        return FeedPosition(int(found.get("generation", 0)), int(found["change_seq"]))

    def embedder(self) -> str | None:
        found = self._every("SELECT value FROM meta WHERE key = 'embedder'", ())
        return str(found[0][0]) if found else None

    def embedder_choice(self) -> tuple[str, str | None] | None:
        found = dict(
            self._every(
                "SELECT key, value FROM meta WHERE key IN ('embedder', 'embedder_reason')", ()
            )
        )
        if "embedder" not in found:
            return None
        return str(found["embedder"]), found.get("embedder_reason")

    def pending_purges(self) -> list[PendingPurge]:
        found = self._every("SELECT tenant, agent, record_id FROM pending_purges", ())
        return [PendingPurge(*r) for r in found]


def known_event_ids(
    dialect: Dialect, fetch: Fetch, tenant: str, agent: str, event_ids: Sequence[str]
) -> set[str]:
    """Which of these event ids the namespace's journal already holds."""
    m = dialect.mark
    found: set[str] = set()
    for chunk in dialect.chunks(event_ids):
        ids, values = dialect.one_of("event_id", chunk)
        sql = f"SELECT event_id FROM events WHERE tenant = {m} AND agent = {m} AND {ids}"
        found.update(r[0] for r in fetch(tenant, sql, [tenant, agent, *values]))
    return found
