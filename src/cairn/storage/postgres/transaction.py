"""One PostgreSQL write transaction of the record store: every key tenant- and agent-scoped.

Each method names its tenant to the session before its first statement, so row-level
security admits that tenant's rows only. ``update_record`` is addressed by row alone (as
the port defines it): the transaction remembers the tenant of every row it handed out or
inserted, and looks up any other row's tenant before writing under it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from cairn.model import Record
from cairn.storage.ports import NewRow, RecordChange
from cairn.storage.postgres import index_rows
from cairn.storage.postgres.database import Session
from cairn.storage.sql.dialect import POSTGRES
from cairn.storage.sql.rows import RECORD_COLUMNS, record_from_row
from cairn.storage.sql.writes import RankHint, SqlWrites
from cairn.storage.terms import analyse_record, entity_blob

_SELECT_WITH_STATE = "SELECT row, " + ", ".join(RECORD_COLUMNS) + ", live, purged FROM records"


class PostgresTransaction(SqlWrites):
    def __init__(
        self,
        session: Session,
        change_seq: int,
        rank_hint: RankHint | None,
        check_model: Callable[[Session, str], None],
    ) -> None:
        super().__init__(POSTGRES, change_seq, rank_hint, self._rows, self._each)
        self._s = session
        self._check_model = check_model
        self._tenants: dict[int, str] = {}  # row -> tenant, for rows addressed by row alone

    def _run(self, tenant: str, query: Any, params: Sequence[Any] = ()) -> Any:
        self._s.scope(tenant)
        return self._s.conn.execute(query, params)

    def _rows(self, tenant: str, query: str, params: Sequence[Any]) -> list[Any]:
        cursor = self._run(tenant, query.encode(), params)
        return cursor.fetchall() if cursor.description is not None else []

    def _each(self, tenant: str, query: str, rows: Sequence[Sequence[Any]]) -> None:
        if rows:
            self._s.scope(tenant)
            self._s.cursor().executemany(query.encode(), rows)

    def _mine(self, found: list[tuple[int, Record]]) -> list[tuple[int, Record]]:
        for row, record in found:
            self._tenants[row] = record.tenant
        return found

    def _tenant_of(self, row: int) -> str | None:
        known = self._tenants.get(row)
        if known is None:
            self._s.scope(None, every_tenant=True)
            found = self._s.conn.execute(
                "SELECT tenant FROM records WHERE row = %s", (row,)
            ).fetchone()
            if found is None:
                return None
            known = self._tenants[row] = str(found[0])
        return known

    # -- records -------------------------------------------------------------------------

    def insert_records(self, rows: Sequence[NewRow]) -> list[int]:
        if not rows:
            return []
        found = self._s.conn.execute(
            "SELECT nextval('records_row_seq') FROM generate_series(1, %s)", (len(rows),)
        ).fetchall()
        ids = sorted(int(r[0]) for r in found)
        for (tenant, agent), members in self._insert_rows(ids, rows).items():
            self._s.scope(tenant)
            for row, _ in members:
                self._tenants[row] = tenant
            index_rows.add_rows(self._s, tenant, agent, [self._indexed(r, n) for r, n in members])
        return ids

    def _indexed(self, row: int, new: NewRow) -> index_rows.IndexedRow:
        record = new.record
        length, keys, counts = analyse_record(record.title, record.body, record.tags)
        vector = None
        if new.vector is not None:
            self._check_model(self._s, new.model or "unknown")
            vector = np.asarray(new.vector, dtype=np.float32)
        return index_rows.IndexedRow(
            row=row,
            project_id=record.project_id,
            live=record.is_live,
            length=length,
            keys=keys,
            counts=counts,
            entity_keys=entity_blob(new.entity_keys) if new.entity_keys else None,
            vector=vector,
            model=new.model,
        )

    def update_record(self, row: int, change: RecordChange) -> None:
        changes = change.changed()
        if not changes:
            return
        tenant = self._tenant_of(row)
        if tenant is None:
            return  # no such row: nothing to change, as an UPDATE of no row
        found = self._run(tenant, _SELECT_WITH_STATE + " WHERE row = %s", (row,)).fetchone()
        if found is None:
            return
        _, old = record_from_row(found[:-2])
        was_live, purged = bool(found[-2]), bool(found[-1])
        new = change.applied_to(old)
        self._update_row(tenant, row, change, new)
        index_rows.set_state(
            self._s,
            tenant,
            old.agent,
            row,
            was=(was_live, old.project_id),
            now=(new.is_live and not purged, new.project_id),
        )

    def purge(self, tenant: str, agent: str, record_id: str, redacted: str) -> None:
        for row, live in self._rows_of(tenant, agent, record_id):
            index_rows.drop_row(self._s, tenant, agent, row, was_live=live)
        # the events that hold a record's content, by their indexed column
        self._purge_content(tenant, agent, record_id, redacted, ("record_ref = %s", [record_id]))

    # -- records read by this transaction -----------------------------------------------

    def current(self, tenant: str, agent: str, record_id: str) -> tuple[int, Record] | None:
        found = super().current(tenant, agent, record_id)
        return self._mine([found])[0] if found else None

    def versions(self, tenant: str, agent: str, record_id: str) -> list[tuple[int, Record]]:
        return self._mine(super().versions(tenant, agent, record_id))

    # -- entity links --------------------------------------------------------------------

    def set_entity_keys(self, links: Sequence[tuple[int, tuple[str, ...]]]) -> None:
        """Entity keys of rows stored without them (their agent's lane was off)."""
        if not links:
            return
        self._s.scope(None, every_tenant=True)
        owners = {
            int(row): (str(tenant), str(agent))
            for row, tenant, agent in self._s.conn.execute(
                "SELECT row, tenant, agent FROM records WHERE row = ANY(%s::int8[])",
                ([row for row, _ in links],),
            )
        }
        groups: dict[tuple[str, str], list[tuple[int, bytes | None]]] = {}
        for row, keys in links:
            if row in owners:
                blob = entity_blob(keys) if keys else None
                groups.setdefault(owners[row], []).append((row, blob))
        for (tenant, agent), members in groups.items():
            self._s.scope(tenant)
            index_rows.set_entity_keys(self._s, tenant, agent, members)
            self._s.conn.execute(
                "UPDATE records SET entities_linked = true, change_seq = %s"
                " WHERE row = ANY(%s::int8[])",
                (self._seq, [row for row, _ in members]),
            )

    # -- replay --------------------------------------------------------------------------

    def clear_projection(self, tenant: str) -> None:
        self._s.scope(tenant)
        index_rows.clear_tenant(self._s, tenant)
        self._clear_tenant(tenant)
        self._tenants = {r: t for r, t in self._tenants.items() if t != tenant}
