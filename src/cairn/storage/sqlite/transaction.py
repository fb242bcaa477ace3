"""One SQLite write transaction of the record store: every key tenant- and agent-scoped."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from cairn.storage.ports import NewRow, RecordChange
from cairn.storage.sql.dialect import SQLITE
from cairn.storage.sql.rows import SELECT_RECORD, record_from_row
from cairn.storage.sql.writes import RankHint, SqlWrites
from cairn.storage.terms import analyse_record, entity_blob

_INSERT_TERMS = (
    "INSERT INTO record_terms(row, length, keys, counts, entity_keys) VALUES (?,?,?,?,?)"
)


def _journal_of(record_id: str) -> tuple[str, list[Any]]:
    """The events that hold a record's content (the file has no column for it)."""
    condition = (
        "(json_extract(payload, '$.record.id') = ? OR json_extract(payload, '$.record_id') = ?)"
    )
    return condition, [record_id, record_id]


class SqliteTransaction(SqlWrites):
    def __init__(
        self,
        conn: sqlite3.Connection,
        change_seq: int,
        rank_hint: RankHint | None,
        check_model: Callable[[str], None],
    ) -> None:
        super().__init__(SQLITE, change_seq, rank_hint, self._rows, self._each)
        self._conn = conn
        self._check_model = check_model

    def _rows(self, tenant: str, sql: str, params: Sequence[Any]) -> list[Any]:
        return self._conn.execute(sql, params).fetchall()

    def _each(self, tenant: str, sql: str, rows: Sequence[Sequence[Any]]) -> None:
        self._conn.executemany(sql, rows)

    # -- records -------------------------------------------------------------------------

    def insert_records(self, rows: Sequence[NewRow]) -> list[int]:
        if not rows:
            return []
        first = int(self._conn.execute("SELECT coalesce(max(row), 0) FROM records").fetchone()[0])
        ids = list(range(first + 1, first + 1 + len(rows)))
        self._insert_rows(ids, rows)
        vectors = []
        for row, new in zip(ids, rows, strict=True):
            if new.vector is None:
                continue
            model = new.model or "unknown"
            self._check_model(model)
            vec = np.asarray(new.vector, dtype=np.float32)
            vectors.append((row, model, int(vec.shape[0]), vec.tobytes()))
        self._conn.executemany(
            "INSERT INTO vectors(row, model, dim, vec) VALUES (?,?,?,?)", vectors
        )
        self._conn.executemany(
            _INSERT_TERMS,
            [
                (
                    row,
                    *analyse_record(new.record.title, new.record.body, new.record.tags),
                    entity_blob(new.entity_keys) if new.entity_keys else None,
                )
                for row, new in zip(ids, rows, strict=True)
            ],
        )
        return ids

    def update_record(self, row: int, change: RecordChange) -> None:
        if not change.changed():
            return
        new = None
        if self._rank is not None:
            found = self._conn.execute(SELECT_RECORD + " WHERE row = ?", (row,)).fetchone()
            if found is None:
                return  # no such row: nothing to change, as an UPDATE of no row
            new = change.applied_to(record_from_row(found)[1])
        # one file, no row-level security: the statement needs no tenant
        self._update_row("", row, change, new)

    def purge(self, tenant: str, agent: str, record_id: str, redacted: str) -> None:
        for row, _ in self._rows_of(tenant, agent, record_id):
            self._conn.execute("DELETE FROM vectors WHERE row = ?", (row,))
            self._conn.execute("DELETE FROM record_terms WHERE row = ?", (row,))
        self._purge_content(tenant, agent, record_id, redacted, _journal_of(record_id))

    # -- entity links --------------------------------------------------------------------

    def set_entity_keys(self, links: Sequence[tuple[int, tuple[str, ...]]]) -> None:
        """Entity keys of rows stored without them (their agent's lane was off)."""
        self._conn.executemany(
            "UPDATE record_terms SET entity_keys = ? WHERE row = ?",
            [(entity_blob(keys) if keys else None, row) for row, keys in links],
        )
        self._conn.executemany(
            "UPDATE records SET entities_linked = 1, change_seq = ? WHERE row = ?",
            [(self._seq, row) for row, _ in links],
        )

    # -- replay --------------------------------------------------------------------------

    def clear_projection(self, tenant: str) -> None:
        rows = "SELECT row FROM records WHERE tenant = ?"
        self._conn.execute(f"DELETE FROM vectors WHERE row IN ({rows})", (tenant,))
        self._conn.execute(f"DELETE FROM record_terms WHERE row IN ({rows})", (tenant,))
        self._clear_tenant(tenant)
