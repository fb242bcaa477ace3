"""One SQLite write transaction of the record store: every key tenant- and agent-scoped."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from cairn.model import Record
from cairn.storage.ports import NewRow, RecordChange
from cairn.storage.sql.dialect import SQLITE
from cairn.storage.sql.rows import (
    RECORD_COLUMNS,
    SELECT_RECORD,
    record_from_row,
    record_values,
    to_db,
)
from cairn.storage.sql.writes import SqlWrites
from cairn.storage.terms import analyse_record, entity_blob

RankHint = Callable[[Record], float]
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
        super().__init__(SQLITE, change_seq, self._rows, self._each)
        self._conn = conn
        self._rank = rank_hint
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
        names = ["row", *RECORD_COLUMNS, "change_seq", "entities_linked", "rank_hint"]
        self._conn.executemany(
            f"INSERT INTO records({', '.join(names)}) VALUES ({', '.join('?' * len(names))})",
            [
                [
                    row,
                    *record_values(new.record),
                    self._seq,
                    int(new.entity_keys is not None or not new.record.body),
                    self._rank(new.record) if self._rank is not None else 0.0,
                ]
                for row, new in zip(ids, rows, strict=True)
            ],
        )
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
        changes = change.changed()
        if not changes:
            return
        assignments = ", ".join(f"{name} = ?" for name in changes)
        values = [to_db(n, v) for n, v in changes.items()]
        self._conn.execute(
            f"UPDATE records SET {assignments}, change_seq = ? WHERE row = ?",
            [*values, self._seq, row],
        )
        if self._rank is not None:
            found = self._conn.execute(SELECT_RECORD + " WHERE row = ?", (row,)).fetchone()
            if found is not None:
                hint = self._rank(record_from_row(found)[1])
                self._conn.execute("UPDATE records SET rank_hint = ? WHERE row = ?", (hint, row))

    def purge(self, tenant: str, agent: str, record_id: str, redacted: str) -> None:
        rows = [
            r[0]
            for r in self._conn.execute(
                "SELECT row FROM records WHERE tenant = ? AND agent = ? AND id = ?",
                (tenant, agent, record_id),
            )
        ]
        for row in rows:
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
        for table in ("records", "tombstones", "applications", "pending_purges"):
            self._conn.execute(f"DELETE FROM {table} WHERE tenant = ?", (tenant,))
        # Rows were deleted and will be renumbered: followers of the feed start again.
        self._conn.execute(
            "UPDATE meta SET value = CAST(value AS INTEGER) + 1 WHERE key = 'generation'"
        )
