"""The record store's reads, written once for both SQL stores: records by id, version,
listing, rule selector and row; the learning queries over records; tombstones and
applications. A store hands its :class:`~cairn.storage.sql.dialect.Dialect` and how it runs
a read in a tenant's scope (:data:`Fetch`); everything else is here.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from cairn.model import Application, Record, Tombstone
from cairn.storage.ports import (
    OWNED_KINDS,
    LaneFilter,
    RecordQuery,
    RuleQuery,
    SweepQuery,
    order_of,
)
from cairn.storage.sql.dialect import SqlPart
from cairn.storage.sql.rows import (
    SELECT_APPLICATION,
    SELECT_RECORD,
    SELECT_TOMBSTONE,
    application_from_row,
    record_from_row,
    tombstone_from_row,
)

_CURRENT = " AND superseded_by IS NULL ORDER BY version DESC LIMIT 1"


class SqlReads(SqlPart):
    """The record reads of both stores."""

    def _namespace(self, alias: str = "") -> str:
        m = self._d.mark
        return f" WHERE {alias}tenant = {m} AND {alias}agent = {m}"

    # -- records -------------------------------------------------------------------------

    def get(
        self, tenant: str, agent: str, record_id: str, *, as_of: str | None = None
    ) -> Record | None:
        m = self._d.mark
        sql = SELECT_RECORD + self._namespace() + f" AND id = {m}"
        params: list[Any] = [tenant, agent, record_id]
        if as_of is None:
            sql += _CURRENT
        else:
            sql += (
                f" AND recorded_at <= {m} AND (expired_at IS NULL OR expired_at > {m})"
                " ORDER BY version DESC LIMIT 1"
            )
            params += [as_of, as_of]
        found = self._fetch(tenant, sql, params)
        return record_from_row(found[0])[1] if found else None

    def history(self, tenant: str, agent: str, record_id: str) -> list[Record]:
        sql = SELECT_RECORD + self._namespace() + f" AND id = {self._d.mark} ORDER BY version"
        return [record_from_row(r)[1] for r in self._fetch(tenant, sql, [tenant, agent, record_id])]

    def list_records(self, query: RecordQuery) -> list[Record]:
        d, m = self._d, self._d.mark
        paged = self._d.narrow_pages and query.limit is not None
        sql = ("SELECT row FROM records" if paged else SELECT_RECORD) + self._namespace()
        params: list[Any] = [query.tenant, query.agent]
        if query.as_of is not None:
            sql += f" AND recorded_at <= {m} AND (expired_at IS NULL OR expired_at > {m})"
            params += [query.as_of, query.as_of]
        elif query.include_inactive:
            sql += " AND superseded_by IS NULL AND NOT purged"
        else:
            sql += " AND live"
        where, values = self._record_filters(query)
        sql += where
        params += values
        if query.limit is not None or query.offset:
            sql += f" LIMIT {m} OFFSET {m}"
            params += [query.limit if query.limit is not None else d.no_limit, query.offset]
        found = self._fetch(query.tenant, sql, params)
        if paged:
            rows = [int(r[0]) for r in found]
            by_row = self.records_by_rows(LaneFilter(query.tenant, query.agent), rows)
            records = [by_row[r] for r in rows if r in by_row]
        else:
            records = [record_from_row(r)[1] for r in found]
        if query.as_of is not None:
            # Forgetting is recorded in tombstones, not in the version's times.
            records = [r for r in records if not r.forgotten_at or r.forgotten_at > query.as_of]
        return records

    def _record_filters(self, query: RecordQuery) -> tuple[str, list[Any]]:
        """The conditions past namespace and liveness, and the order, of a listing."""
        d, m = self._d, self._d.mark
        sql = ""
        params: list[Any] = []

        def add(condition: str, values: Sequence[Any]) -> None:
            nonlocal sql
            sql += " AND " + condition
            params.extend(values)

        if query.project_id is not None:
            if query.with_global:
                add(f"(scope = 'global' OR project_id = {m})", [query.project_id])
            else:
                add(f"scope = 'project' AND project_id = {m}", [query.project_id])
        if query.scope is not None:
            add(f"scope = {m}", [query.scope])
        for column, values in (
            ("kind", query.kinds),
            ("state", query.states),
            ("trust", query.trust),
        ):
            if values:
                add(*d.one_of(column, values))
        if query.owned:
            owned, kinds = d.one_of("kind", OWNED_KINDS)
            add(f"(authority = 'explicit' OR {owned})", kinds)
        if query.text_hash is not None:
            add(f"text_hash = {m}", [query.text_hash])
        if query.tag is not None:
            add(*d.holds_word("tags", query.tag))
        if query.contains:
            add(*d.contains_text(("body", "title"), query.contains))
        if query.id_prefix:
            add(*d.starts_with("id", query.id_prefix))
        column, descending = order_of(query.order)
        way = d.descending if descending else ""
        sql += f" ORDER BY {column}{way}, id{' DESC' if descending else ''}"
        return sql, params

    def rule_where(self, query: RuleQuery) -> tuple[str, list[Any]]:
        """The WHERE, order and limit of :meth:`rule_candidates`: :meth:`rule_condition`
        by ``rank_hint`` (highest first), then ``id``."""
        sql, params = self.rule_condition(query)
        return sql + f" ORDER BY rank_hint DESC, id LIMIT {self._d.mark}", [*params, query.limit]

    def rule_condition(self, query: RuleQuery) -> tuple[str, list[Any]]:
        """The WHERE of :meth:`rule_candidates` (a store may read them its own way, e.g.
        through a cache of decoded rows)."""
        d, m = self._d, self._d.mark
        kinds, values = d.one_of("kind", query.kinds)
        sql = (
            self._namespace() + f" AND live AND {kinds} AND (scope = 'global' OR project_id = {m})"
        )
        params: list[Any] = [query.tenant, query.agent, *values, query.project_id]
        for column, value in (
            ("operations", query.operation),
            ("phases", query.phase),
            ("task_types", query.task_type),
        ):
            if value is not None:
                # Selector words are stored lower-case, so a substring test on the JSON
                # text is exact for a quoted word (and far cheaper than parsing it).
                holds, word = d.holds_word(column, value.lower())
                sql += f" AND ({column} = '[]' OR {holds})"
                params += word
        return sql, params

    def rule_candidates(self, query: RuleQuery) -> list[Record]:
        if not query.kinds:
            return []
        where, params = self.rule_where(query)
        return [
            record_from_row(r)[1] for r in self._fetch(query.tenant, SELECT_RECORD + where, params)
        ]

    def records_by_rows(self, where: LaneFilter, rows: Sequence[int]) -> dict[int, Record]:
        out: dict[int, Record] = {}
        m = self._d.mark
        for chunk in self._d.chunks([int(r) for r in rows]):
            in_rows, values = self._d.one_of("row", chunk, "int8")
            # By row id, then the namespace: SQLite's '+' keeps the planner on the row ids
            # instead of scanning the tenant's index (30 ms a recall at 100k memories).
            plus = self._d.unindexed
            sql = SELECT_RECORD + f" WHERE {in_rows} AND {plus}tenant = {m} AND {plus}agent = {m}"
            for r in self._fetch(where.tenant, sql, [*values, where.tenant, where.agent]):
                key, record = record_from_row(r)
                out[key] = record
        return out

    def sweep_candidates(self, query: SweepQuery) -> list[Record]:
        m = self._d.mark
        sql = (
            SELECT_RECORD + self._namespace() + " AND live AND NOT pinned"
            f" AND trust <> 'system' AND proof_count < {m}"
            f" AND (failure_count >= {m} OR coalesce(last_applied_at, recorded_at) < {m})"
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
            sql += f" LIMIT {m}"
            params.append(query.limit)
        return [record_from_row(r)[1] for r in self._fetch(query.tenant, sql, params)]

    def tombstones(self, tenant: str, agent: str) -> list[Tombstone]:
        sql = SELECT_TOMBSTONE + self._namespace() + " ORDER BY removed_at, record_id"
        return [tombstone_from_row(r) for r in self._fetch(tenant, sql, [tenant, agent])]

    # -- applications --------------------------------------------------------------------

    def applications(
        self, tenant: str, agent: str, *, record_id: str | None = None, id_prefix: str = ""
    ) -> list[Application]:
        sql = SELECT_APPLICATION + self._namespace()
        params: list[Any] = [tenant, agent]
        if record_id is not None:
            sql += f" AND record_id = {self._d.mark}"
            params.append(record_id)
        if id_prefix:
            condition, values = self._d.starts_with("application_id", id_prefix)
            sql += " AND " + condition
            params += values
        found = self._fetch(tenant, sql + " ORDER BY created_at, application_id", params)
        return [application_from_row(r) for r in found]

    def applications_by_id(
        self, tenant: str, agent: str, application_ids: Sequence[str]
    ) -> list[Application]:
        out: list[Application] = []
        for chunk in self._d.chunks(application_ids):
            ids, values = self._d.one_of("application_id", chunk)
            sql = SELECT_APPLICATION + self._namespace() + f" AND {ids}"
            found = self._fetch(
                tenant, sql + " ORDER BY created_at, application_id", [tenant, agent, *values]
            )
            out += [application_from_row(r) for r in found]
        return out
