"""One SQLite write transaction of the record store: every key tenant- and agent-scoped."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from cairn.errors import StorageError
from cairn.model import Application, Event, Record, Tombstone
from cairn.storage.ports import NewRow
from cairn.storage.sqlite.rows import (
    APPLICATION_COLUMNS,
    INSERT_EVENT,
    RECORD_COLUMNS,
    SELECT_APPLICATION,
    SELECT_RECORD,
    SELECT_TOMBSTONE,
    TOMBSTONE_COLUMNS,
    application_from_row,
    application_values,
    event_values,
    record_from_row,
    record_values,
    to_db,
    tombstone_from_row,
    tombstone_values,
)
from cairn.storage.terms import analyse_record, entity_blob

RankHint = Callable[[Record], float]
_INSERT_TERMS = (
    "INSERT INTO record_terms(row, length, keys, counts, entity_keys) VALUES (?,?,?,?,?)"
)
_REDACTED_KEYS = ("body", "title", "tags", "source", "external_ref", "text", "statement")


def _redact(data: Any, marker: str) -> None:
    """Replace every content field in an event payload, at any depth, by the marker."""
    if isinstance(data, dict):
        for key in list(data):
            value = data[key]
            if key in _REDACTED_KEYS and value not in (None, "", [], {}):
                data[key] = marker if isinstance(value, str) else type(value)()
            else:
                _redact(value, marker)
    elif isinstance(data, list):
        for item in data:
            _redact(item, marker)


class SqliteTransaction:
    def __init__(
        self,
        conn: sqlite3.Connection,
        change_seq: int,
        rank_hint: RankHint | None,
        check_model: Callable[[str], None],
    ) -> None:
        self._conn = conn
        self._seq = change_seq
        self._rank = rank_hint
        self._check_model = check_model

    # -- journal -------------------------------------------------------------------------

    def append_events(self, events: Sequence[Event]) -> list[bool]:
        existing: set[tuple[str, str, str]] = set()
        by_namespace: dict[tuple[str, str], list[str]] = {}
        for event in events:
            by_namespace.setdefault((event.tenant, event.agent), []).append(event.event_id)
        for (tenant, agent), ids in by_namespace.items():
            for start in range(0, len(ids), 500):
                chunk = ids[start : start + 500]
                found = self._conn.execute(
                    "SELECT event_id FROM events WHERE tenant = ? AND agent = ?"
                    f" AND event_id IN ({', '.join('?' * len(chunk))})",
                    [tenant, agent, *chunk],
                )
                existing.update((tenant, agent, r[0]) for r in found)
        fresh: list[bool] = []
        seen: set[tuple[str, str, str]] = set()
        for event in events:  # a repeated id inside the batch is a no-op too
            key = (event.tenant, event.agent, event.event_id)
            fresh.append(key not in existing and key not in seen)
            seen.add(key)
        self._conn.executemany(
            INSERT_EVENT, [event_values(e) for e, new in zip(events, fresh, strict=True) if new]
        )
        return fresh

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

    def update_record(self, row: int, **changes: Any) -> None:
        if not changes:
            return
        bad = set(changes) - set(RECORD_COLUMNS)
        if bad:
            raise StorageError(f"not a record column: {sorted(bad)}")
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

    def current(self, tenant: str, agent: str, record_id: str) -> tuple[int, Record] | None:
        found = self._conn.execute(
            SELECT_RECORD + " WHERE tenant = ? AND agent = ? AND id = ?"
            " AND superseded_by IS NULL ORDER BY version DESC LIMIT 1",
            (tenant, agent, record_id),
        ).fetchone()
        return record_from_row(found) if found else None

    def versions(self, tenant: str, agent: str, record_id: str) -> list[tuple[int, Record]]:
        found = self._conn.execute(
            SELECT_RECORD + " WHERE tenant = ? AND agent = ? AND id = ? ORDER BY version",
            (tenant, agent, record_id),
        ).fetchall()
        return [record_from_row(r) for r in found]

    # -- tombstones ----------------------------------------------------------------------

    def tombstone(self, tenant: str, agent: str, record_id: str) -> Tombstone | None:
        found = self._conn.execute(
            SELECT_TOMBSTONE + " WHERE tenant = ? AND agent = ? AND record_id = ?",
            (tenant, agent, record_id),
        ).fetchone()
        return tombstone_from_row(found) if found else None

    def put_tombstone(self, tombstone: Tombstone) -> None:
        names = ", ".join(TOMBSTONE_COLUMNS)
        self._conn.execute(
            f"INSERT INTO tombstones({names}) VALUES ({', '.join('?' * len(TOMBSTONE_COLUMNS))})"
            " ON CONFLICT(tenant, agent, record_id) DO UPDATE SET reason = excluded.reason,"
            " permanent = excluded.permanent, removed_at = excluded.removed_at,"
            " restored_at = excluded.restored_at, text_hash = excluded.text_hash,"
            " scope = excluded.scope, project_id = excluded.project_id",
            tombstone_values(tombstone),
        )

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
            self._conn.execute(
                "UPDATE records SET body = '', title = NULL, tags = '[]', source = '{}',"
                " evidence = '[]', external_ref = NULL, purged = 1, entities_linked = 1,"
                " change_seq = ? WHERE row = ?",
                (self._seq, row),
            )
        self._conn.execute(
            "UPDATE applications SET task = NULL WHERE tenant = ? AND agent = ? AND record_id = ?",
            (tenant, agent, record_id),
        )
        events = self._conn.execute(
            "SELECT seq, payload FROM events WHERE tenant = ? AND agent = ?"
            " AND (json_extract(payload, '$.record.id') = ?"
            " OR json_extract(payload, '$.record_id') = ?)",
            (tenant, agent, record_id, record_id),
        ).fetchall()
        for seq, payload in events:
            data = json.loads(payload)
            _redact(data, redacted)
            self._conn.execute(
                "UPDATE events SET payload = ? WHERE seq = ?",
                (json.dumps(data, ensure_ascii=False, sort_keys=True), seq),
            )
        self._conn.execute(
            "INSERT OR IGNORE INTO pending_purges(tenant, agent, record_id) VALUES (?,?,?)",
            (tenant, agent, record_id),
        )

    # -- applications --------------------------------------------------------------------

    def put_applications(self, applications: Sequence[Application]) -> None:
        names = ", ".join(APPLICATION_COLUMNS)
        self._conn.executemany(
            f"INSERT INTO applications({names})"
            f" VALUES ({', '.join('?' * len(APPLICATION_COLUMNS))})"
            " ON CONFLICT(tenant, agent, application_id) DO NOTHING",
            [application_values(a) for a in applications],
        )

    def application(self, tenant: str, agent: str, application_id: str) -> Application | None:
        found = self._conn.execute(
            SELECT_APPLICATION + " WHERE tenant = ? AND agent = ? AND application_id = ?",
            (tenant, agent, application_id),
        ).fetchone()
        return application_from_row(found) if found else None

    def set_outcome(
        self,
        tenant: str,
        agent: str,
        application_id: str,
        outcome: str,
        at: str,
        *,
        source: str | None = None,
        session: str | None = None,
    ) -> None:
        self._conn.execute(
            "UPDATE applications SET outcome = ?, outcome_at = ?, outcome_source = ?,"
            " outcome_session = ? WHERE tenant = ? AND agent = ? AND application_id = ?",
            (outcome, at, source, session, tenant, agent, application_id),
        )

    def applications_of(self, tenant: str, agent: str, record_id: str) -> list[Application]:
        found = self._conn.execute(
            SELECT_APPLICATION + " WHERE tenant = ? AND agent = ? AND record_id = ?"
            " ORDER BY created_at, application_id",
            (tenant, agent, record_id),
        ).fetchall()
        return [application_from_row(r) for r in found]

    def add_counters(self, tenant: str, agent: str, counters: Mapping[str, float]) -> None:
        self._conn.executemany(
            "INSERT INTO telemetry(tenant, agent, name, value) VALUES (?,?,?,?)"
            " ON CONFLICT(tenant, agent, name) DO UPDATE SET value = value + excluded.value",
            [(tenant, agent, name, float(value)) for name, value in sorted(counters.items())],
        )

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
