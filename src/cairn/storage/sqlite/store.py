"""The SQLite backend: one file in WAL mode; records, analysed terms and vectors as BLOBs.

This module owns all of cairn's SQL. Settings chosen on purpose:

- WAL with ``synchronous=NORMAL``: a committed write survives a killed process (kill -9);
  readers never block the writer.
- ``secure_delete=ON``: freed cells and pages are zeroed, so a permanently forgotten body
  cannot linger in free space. Costs some write speed; correctness of forgetting wins.
- ``BEGIN IMMEDIATE`` for every write with a long busy timeout, so several processes can
  write the same file and none loses an acknowledged write.
"""

from __future__ import annotations

import json
import sqlite3
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np

from cairn.errors import StorageError
from cairn.model import Event, Record, Tombstone
from cairn.storage.ann_graph import DEFAULT_ANN_THRESHOLD, AnnIndexes
from cairn.storage.base import Application, EpisodePlace, LaneFilter, LaneHit, TierOrder
from cairn.storage.keyword_index import KeywordIndex, analyse
from cairn.storage.places import RowPlaces
from cairn.storage.sqlite.schema import LATEST_VERSION, MIGRATIONS
from cairn.storage.vector_index import ExactVectorIndex

_JSON_LIST_FIELDS = ("tags", "path_patterns", "operations", "phases", "task_types", "evidence")
_RECORD_COLUMNS = (
    "id",
    "version",
    "tenant",
    "agent",
    "title",
    "body",
    "kind",
    "memory_type",
    "tags",
    "language",
    "authority",
    "origin",
    "trust",
    "scope",
    "project_id",
    "path_patterns",
    "operations",
    "phases",
    "task_types",
    "state",
    "pinned",
    "evicted_at",
    "forgotten_at",
    "proof_count",
    "failure_count",
    "used_count",
    "ignored_count",
    "last_applied_at",
    "last_success_at",
    "confidence",
    "importance",
    "evidence",
    "source",
    "external_ref",
    "episode_id",
    "position",
    "occurred_at",
    "recorded_at",
    "valid_to",
    "expired_at",
    "supersedes",
    "superseded_by",
    "text_hash",
)
_SELECT_RECORD = "SELECT row, " + ", ".join(_RECORD_COLUMNS) + " FROM records"
_BUSY_TIMEOUT_S = 60.0


def _to_db(name: str, value: Any) -> Any:
    if name in _JSON_LIST_FIELDS:
        # Most lists are empty: skipping the encoder for them is a fifth of a bulk write.
        return json.dumps(list(value), ensure_ascii=False) if value else "[]"
    if name == "source":
        return json.dumps(value or {}, ensure_ascii=False, sort_keys=True)
    if name == "pinned":
        return int(bool(value))
    return value


def _record_from_row(row: sqlite3.Row | tuple[Any, ...]) -> tuple[int, Record]:
    values = dict(zip(("row", *_RECORD_COLUMNS), row, strict=True))
    key = values.pop("row")
    for name in _JSON_LIST_FIELDS:
        raw = values[name]
        # Most lists are empty: skipping the JSON parser for them halves the cost of a row.
        values[name] = () if raw == "[]" else tuple(json.loads(raw))
    raw_source = values["source"]
    values["source"] = {} if raw_source == "{}" else json.loads(raw_source)
    values["pinned"] = bool(values["pinned"])
    return key, Record(**values)


def _event_from_row(row: tuple[Any, ...]) -> Event:
    (
        seq,
        event_id,
        type_,
        tenant,
        agent,
        occurred_at,
        recorded_at,
        episode_id,
        session_id,
        sender,
        caused_by,
        supersedes,
        payload,
    ) = row
    return Event(
        event_id=event_id,
        type=type_,
        tenant=tenant,
        agent=agent,
        payload=json.loads(payload),
        occurred_at=occurred_at,
        recorded_at=recorded_at,
        seq=seq,
        episode_id=episode_id,
        session_id=session_id,
        sender=sender,
        caused_by=caused_by,
        supersedes=supersedes,
    )


def _event_values(event: Event) -> tuple[Any, ...]:
    return (
        event.event_id,
        event.type,
        event.tenant,
        event.agent,
        event.occurred_at,
        event.recorded_at,
        event.episode_id,
        event.session_id,
        event.sender,
        event.caused_by,
        event.supersedes,
        json.dumps(event.payload, ensure_ascii=False, sort_keys=True),
    )


_INSERT_TERMS = "INSERT INTO record_terms(row, length, keys, counts) VALUES (?,?,?,?)"


def _terms(record: Record) -> tuple[int, bytes, bytes]:
    return analyse((record.title, record.body, " ".join(record.tags)))


def _scope_clause(where: LaneFilter) -> tuple[str, list[Any]]:
    sql = "r.tenant = ? AND r.agent = ?"
    params: list[Any] = [where.tenant, where.agent]
    if where.project_id is not None:
        sql += " AND (r.scope = 'global' OR r.project_id = ?)"
        params.append(where.project_id)
    return sql, params


class _SqliteTransaction:
    def __init__(self, conn: sqlite3.Connection, change_seq: int) -> None:
        self._conn = conn
        self._seq = change_seq

    def append_event(self, event: Event) -> bool:
        cur = self._conn.execute(
            "INSERT INTO events(event_id, type, tenant, agent, occurred_at, recorded_at,"
            " episode_id, session_id, sender, caused_by, supersedes, payload)"
            " VALUES (?,?,?,?,?,?,?,?,?,?,?,?) ON CONFLICT(event_id) DO NOTHING",
            _event_values(event),
        )
        return cur.rowcount == 1

    def append_events(self, events: Sequence[Event]) -> list[bool]:
        ids = [e.event_id for e in events]
        existing: set[str] = set()
        for start in range(0, len(ids), 500):
            chunk = ids[start : start + 500]
            existing.update(
                r[0]
                for r in self._conn.execute(
                    "SELECT event_id FROM events"
                    f" WHERE event_id IN ({', '.join('?' * len(chunk))})",
                    chunk,
                )
            )
        fresh: list[bool] = []
        seen: set[str] = set()
        for event in events:  # a repeated id inside the batch is a no-op too
            fresh.append(event.event_id not in existing and event.event_id not in seen)
            seen.add(event.event_id)
        self._conn.executemany(
            "INSERT INTO events(event_id, type, tenant, agent, occurred_at, recorded_at,"
            " episode_id, session_id, sender, caused_by, supersedes, payload)"
            " VALUES (?,?,?,?,?,?,?,?,?,?,?,?)",
            [_event_values(e) for e, new in zip(events, fresh, strict=True) if new],
        )
        return fresh

    def insert_records(
        self,
        items: Sequence[tuple[Record, np.ndarray | None, str | None]],
        *,
        entities_linked: bool = True,
    ) -> list[int]:
        if not items:
            return []
        first = int(self._conn.execute("SELECT coalesce(max(row), 0) FROM records").fetchone()[0])
        rows = list(range(first + 1, first + 1 + len(items)))
        names = ["row", *_RECORD_COLUMNS, "change_seq", "entities_linked"]
        self._conn.executemany(
            f"INSERT INTO records({', '.join(names)}) VALUES ({', '.join('?' * len(names))})",
            [
                [row, *self._record_values(record), int(entities_linked)]
                for row, (record, _, _) in zip(rows, items, strict=True)
            ],
        )
        vectors = [
            (row, model or "unknown", int(vec.shape[0]), np.asarray(vec, np.float32).tobytes())
            for row, (_, vec, model) in zip(rows, items, strict=True)
            if vec is not None
        ]
        self._conn.executemany(
            "INSERT INTO vectors(row, model, dim, vec) VALUES (?,?,?,?)", vectors
        )
        self._conn.executemany(
            _INSERT_TERMS,
            [(row, *_terms(record)) for row, (record, _, _) in zip(rows, items, strict=True)],
        )
        return rows

    def _record_values(self, record: Record) -> list[Any]:
        return [*(_to_db(n, getattr(record, n)) for n in _RECORD_COLUMNS), self._seq]

    def set_entities_many(self, links: Sequence[tuple[int, str, Sequence[str]]]) -> None:
        pairs = list(dict.fromkeys((t, k) for _, t, keys in links for k in keys))
        self._conn.executemany(
            "INSERT INTO entities(tenant, key) VALUES (?, ?) ON CONFLICT DO NOTHING", pairs
        )
        self._conn.executemany(
            "INSERT OR IGNORE INTO record_entities(entity_id, row)"
            " SELECT id, ? FROM entities WHERE tenant = ? AND key = ?",
            [(row, t, k) for row, t, keys in links for k in dict.fromkeys(keys)],
        )

    def insert_record(
        self,
        record: Record,
        vector: np.ndarray | None = None,
        model: str | None = None,
        *,
        entities_linked: bool = True,
    ) -> int:
        names = [*_RECORD_COLUMNS, "change_seq", "entities_linked"]
        values = [*self._record_values(record), int(entities_linked)]
        cur = self._conn.execute(
            f"INSERT INTO records({', '.join(names)}) VALUES ({', '.join('?' * len(names))})",
            values,
        )
        row = int(cur.lastrowid or 0)
        self._conn.execute(_INSERT_TERMS, (row, *_terms(record)))
        if vector is not None:
            vec = np.asarray(vector, dtype=np.float32)
            self._conn.execute(
                "INSERT INTO vectors(row, model, dim, vec) VALUES (?,?,?,?)",
                (row, model or "unknown", int(vec.shape[0]), vec.tobytes()),
            )
        return row

    def update_record(self, row: int, **changes: Any) -> None:
        if not changes:
            return
        bad = set(changes) - set(_RECORD_COLUMNS)
        if bad:
            raise StorageError(f"not a record column: {sorted(bad)}")
        assignments = ", ".join(f"{name} = ?" for name in changes)
        values = [_to_db(n, v) for n, v in changes.items()]
        self._conn.execute(
            f"UPDATE records SET {assignments}, change_seq = ? WHERE row = ?",
            [*values, self._seq, row],
        )

    def current(self, tenant: str, agent: str, record_id: str) -> tuple[int, Record] | None:
        found = self._conn.execute(
            _SELECT_RECORD + " WHERE tenant = ? AND agent = ? AND id = ?"
            " AND superseded_by IS NULL ORDER BY version DESC LIMIT 1",
            (tenant, agent, record_id),
        ).fetchone()
        return _record_from_row(found) if found else None

    def versions(self, tenant: str, agent: str, record_id: str) -> list[tuple[int, Record]]:
        found = self._conn.execute(
            _SELECT_RECORD + " WHERE tenant = ? AND agent = ? AND id = ? ORDER BY version",
            (tenant, agent, record_id),
        ).fetchall()
        return [_record_from_row(r) for r in found]

    def version_exists(self, record_id: str, version: int) -> bool:
        found = self._conn.execute(
            "SELECT 1 FROM records WHERE id = ? AND version = ?", (record_id, version)
        ).fetchone()
        return found is not None

    def set_entities(self, row: int, tenant: str, keys: Sequence[str]) -> None:
        unique = [(tenant, key) for key in dict.fromkeys(keys)]
        self._conn.executemany(
            "INSERT INTO entities(tenant, key) VALUES (?, ?) ON CONFLICT DO NOTHING", unique
        )
        self._conn.executemany(
            "INSERT OR IGNORE INTO record_entities(entity_id, row)"
            " SELECT id, ? FROM entities WHERE tenant = ? AND key = ?",
            [(row, t, k) for t, k in unique],
        )

    def tombstone(self, tenant: str, agent: str, record_id: str) -> Tombstone | None:
        found = self._conn.execute(
            "SELECT record_id, tenant, agent, scope, project_id, text_hash, reason, permanent,"
            " removed_at, restored_at FROM tombstones WHERE tenant = ? AND agent = ?"
            " AND record_id = ?",
            (tenant, agent, record_id),
        ).fetchone()
        return _tombstone(found) if found else None

    def put_tombstone(self, tombstone: Tombstone) -> None:
        self._conn.execute(
            "INSERT INTO tombstones(record_id, tenant, agent, scope, project_id, text_hash,"
            " reason, permanent, removed_at, restored_at) VALUES (?,?,?,?,?,?,?,?,?,?)"
            " ON CONFLICT(record_id) DO UPDATE SET reason = excluded.reason,"
            " permanent = excluded.permanent, removed_at = excluded.removed_at,"
            " restored_at = excluded.restored_at, text_hash = excluded.text_hash",
            (
                tombstone.record_id,
                tombstone.tenant,
                tombstone.agent,
                tombstone.scope,
                tombstone.project_id,
                tombstone.text_hash,
                tombstone.reason,
                int(tombstone.permanent),
                tombstone.removed_at,
                tombstone.restored_at,
            ),
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
            self._conn.execute("DELETE FROM record_entities WHERE row = ?", (row,))
            self._conn.execute(
                "UPDATE records SET body = '', title = NULL, tags = '[]', source = '{}',"
                " evidence = '[]', external_ref = NULL, purged = 1, change_seq = ?"
                " WHERE row = ?",
                (self._seq, row),
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

    def put_application(self, application: Application) -> None:
        self._conn.execute(
            "INSERT INTO applications(application_id, tenant, agent, record_id, record_version,"
            " task, delivery, why_applied, created_at, outcome, outcome_at)"
            " VALUES (?,?,?,?,?,?,?,?,?,?,?) ON CONFLICT(application_id) DO NOTHING",
            (
                application.application_id,
                application.tenant,
                application.agent,
                application.record_id,
                application.record_version,
                application.task,
                application.delivery,
                json.dumps(list(application.why_applied)),
                application.created_at,
                application.outcome,
                application.outcome_at,
            ),
        )

    def application(self, tenant: str, application_id: str) -> Application | None:
        found = self._conn.execute(
            _SELECT_APPLICATION + " WHERE tenant = ? AND application_id = ?",
            (tenant, application_id),
        ).fetchone()
        return _application(found) if found else None

    def set_outcome(self, application_id: str, outcome: str, at: str) -> None:
        self._conn.execute(
            "UPDATE applications SET outcome = ?, outcome_at = ? WHERE application_id = ?",
            (outcome, at, application_id),
        )


_SELECT_APPLICATION = (
    "SELECT application_id, tenant, agent, record_id, record_version, task, delivery,"
    " why_applied, created_at, outcome, outcome_at FROM applications"
)


def _application(row: tuple[Any, ...]) -> Application:
    values = list(row)
    values[7] = tuple(json.loads(values[7]))
    return Application(*values)


def _tombstone(row: tuple[Any, ...]) -> Tombstone:
    (
        record_id,
        tenant,
        agent,
        scope,
        project_id,
        text_hash,
        reason,
        permanent,
        removed_at,
        restored_at,
    ) = row
    return Tombstone(
        record_id=record_id,
        tenant=tenant,
        agent=agent,
        scope=scope,
        project_id=project_id,
        text_hash=text_hash,
        reason=reason,
        permanent=bool(permanent),
        removed_at=removed_at,
        restored_at=restored_at,
    )


_REDACTED_KEYS = ("body", "title", "tags", "source", "external_ref", "text")


def _redact(data: Any, marker: str) -> None:
    """Replace every content field in an event payload, at any depth, by the marker."""
    if isinstance(data, dict):
        for key in list(data):
            value = data[key]
            if key in _REDACTED_KEYS and value not in (None, "", [], {}):
                data[key] = marker if isinstance(value, str) else type(value)()
            else:
                _redact(data[key], marker)
    elif isinstance(data, list):
        for item in data:
            _redact(item, marker)


class SqliteStore:
    """The embedded default store. Safe to share between threads of one process."""

    def __init__(
        self,
        path: Path | str,
        *,
        dim: int = 384,
        ann_threshold: int | None = DEFAULT_ANN_THRESHOLD,
    ) -> None:
        """``ann_threshold``: a tenant+agent with at least this many live vectors is
        searched through an HNSW index persisted beside the file (needs ``usearch``);
        None keeps every search exact."""
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.RLock()
        try:
            self._conn = sqlite3.connect(
                self.path,
                isolation_level=None,
                check_same_thread=False,
                timeout=_BUSY_TIMEOUT_S,
            )
        except sqlite3.Error as exc:
            raise StorageError(f"cannot open {self.path}: {exc}") from None
        self._conn.execute("PRAGMA journal_mode=WAL")
        self._conn.execute("PRAGMA synchronous=NORMAL")
        self._conn.execute("PRAGMA secure_delete=ON")
        self._conn.execute("PRAGMA foreign_keys=OFF")
        self._conn.execute("PRAGMA cache_size=-65536")
        self._migrate()
        self._index = ExactVectorIndex(dim)
        self._index_seq = -1  # nothing loaded yet (a file may be at change_seq 0)
        self._ann = AnnIndexes.open(self.path, dim, ann_threshold)
        self._words = KeywordIndex()
        self._places = RowPlaces()

    # -- schema --------------------------------------------------------------------------

    def _schema_version(self) -> int:
        has_table = self._conn.execute(
            "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'schema_version'"
        ).fetchone()
        if not has_table:
            return 0
        found = self._conn.execute("SELECT max(version) FROM schema_version").fetchone()
        return int(found[0] or 0)

    def _migrate(self) -> None:
        with self._lock:
            self._conn.execute("BEGIN IMMEDIATE")
            try:
                self._conn.execute(
                    "CREATE TABLE IF NOT EXISTS schema_version"
                    " (version INTEGER PRIMARY KEY, applied_at TEXT NOT NULL)"
                )
                current = self._schema_version()
                if current > LATEST_VERSION:
                    raise StorageError(
                        f"{self.path} has schema {current}, newer than this cairn"
                        f" ({LATEST_VERSION}); upgrade cairn"
                    )
                for version, sql in MIGRATIONS:
                    if version <= current:
                        continue
                    for statement in _split_sql(sql):
                        self._conn.execute(statement)
                    if version == 4:
                        self._fill_record_terms()
                    self._conn.execute(
                        "INSERT INTO schema_version(version, applied_at)"
                        " VALUES (?, strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))",
                        (version,),
                    )
                self._conn.execute("COMMIT")
            except BaseException:
                self._conn.execute("ROLLBACK")
                raise

    def _fill_record_terms(self) -> None:
        """Analyse the rows written before schema 4 (purged rows have nothing to index)."""
        cursor = self._conn.execute(
            "SELECT row, title, body, tags FROM records WHERE NOT purged ORDER BY row"
        )
        while found := cursor.fetchmany(4096):
            self._conn.executemany(
                _INSERT_TERMS,
                [
                    (row, *analyse((title, body, " ".join(json.loads(tags or "[]")))))
                    for row, title, body, tags in found
                ],
            )

    @property
    def schema_version(self) -> int:
        return self._schema_version()

    # -- writes --------------------------------------------------------------------------

    @contextmanager
    def transaction(self) -> Iterator[_SqliteTransaction]:
        with self._lock:
            try:
                self._conn.execute("BEGIN IMMEDIATE")
            except sqlite3.OperationalError as exc:
                raise StorageError(f"could not start a write on {self.path}: {exc}") from None
            try:
                seq = self._conn.execute(
                    "UPDATE meta SET value = CAST(value AS INTEGER) + 1"
                    " WHERE key = 'change_seq' RETURNING value"
                ).fetchone()[0]
                yield _SqliteTransaction(self._conn, int(seq))
                self._conn.execute("COMMIT")
            except BaseException:
                self._conn.execute("ROLLBACK")
                raise

    # -- reads ---------------------------------------------------------------------------

    def get(
        self, tenant: str, agent: str, record_id: str, *, as_of: str | None = None
    ) -> Record | None:
        with self._lock:
            if as_of is None:
                found = self._conn.execute(
                    _SELECT_RECORD + " WHERE tenant = ? AND agent = ? AND id = ?"
                    " AND superseded_by IS NULL ORDER BY version DESC LIMIT 1",
                    (tenant, agent, record_id),
                ).fetchone()
            else:
                found = self._conn.execute(
                    _SELECT_RECORD + " WHERE tenant = ? AND agent = ? AND id = ?"
                    " AND recorded_at <= ? AND (expired_at IS NULL OR expired_at > ?)"
                    " ORDER BY version DESC LIMIT 1",
                    (tenant, agent, record_id, as_of, as_of),
                ).fetchone()
        return _record_from_row(found)[1] if found else None

    def history(self, tenant: str, agent: str, record_id: str) -> list[Record]:
        with self._lock:
            found = self._conn.execute(
                _SELECT_RECORD + " WHERE tenant = ? AND agent = ? AND id = ? ORDER BY version",
                (tenant, agent, record_id),
            ).fetchall()
        return [_record_from_row(r)[1] for r in found]

    def list_records(
        self,
        tenant: str,
        agent: str,
        *,
        project_id: str | None = None,
        include_inactive: bool = False,
        as_of: str | None = None,
        limit: int | None = None,
    ) -> list[Record]:
        sql = _SELECT_RECORD + " WHERE tenant = ? AND agent = ?"
        params: list[Any] = [tenant, agent]
        if as_of is not None:
            sql += " AND recorded_at <= ? AND (expired_at IS NULL OR expired_at > ?)"
            params += [as_of, as_of]
        elif include_inactive:
            sql += " AND superseded_by IS NULL AND purged = 0"
        else:
            sql += " AND live"
        if project_id is not None:
            sql += " AND scope = 'project' AND project_id = ?"
            params.append(project_id)
        sql += " ORDER BY recorded_at, id"
        if limit is not None:
            sql += " LIMIT ?"
            params.append(limit)
        with self._lock:
            found = self._conn.execute(sql, params).fetchall()
        records = [_record_from_row(r)[1] for r in found]
        if as_of is not None:
            # Forgetting is recorded in tombstones, not in the version's times.
            records = [r for r in records if not r.forgotten_at or r.forgotten_at > as_of]
        return records

    def selector_candidates(
        self,
        tenant: str,
        agent: str,
        project_id: str | None,
        kinds: Sequence[str],
        *,
        operation: str | None = None,
        phase: str | None = None,
        task_type: str | None = None,
        has_paths: bool = True,
        order: TierOrder | None = None,
        limit: int | None = None,
    ) -> list[Record]:
        sql = (
            _SELECT_RECORD + " WHERE tenant = ? AND agent = ? AND live"
            f" AND kind IN ({', '.join('?' * len(kinds))})"
            " AND (scope = 'global' OR project_id = ?)"
        )
        params: list[Any] = [tenant, agent, *kinds, project_id]
        # A selector dimension the task cannot satisfy rules the record out here, so the
        # engine only ranks plausible rules; the engine's matcher still decides exactly.
        for column, value in (
            ("operations", operation),
            ("phases", phase),
            ("task_types", task_type),
        ):
            if value is None:
                sql += f" AND {column} = '[]'"
            else:
                # Selector words are stored lower-case, so a substring test on the JSON
                # text is exact for a quoted word and far cheaper than json_each.
                sql += f" AND ({column} = '[]' OR instr({column}, ?) > 0)"
                params.append(json.dumps(value.lower(), ensure_ascii=False))
        if not has_paths:
            sql += " AND path_patterns = '[]'"
        if order is not None:
            states = " ".join(f"WHEN ? THEN {float(b)!r}" for _, b in order.state_bonus)
            params += [state for state, _ in order.state_bonus]
            selectors = " + ".join(
                f"({c} <> '[]')" for c in ("path_patterns", "operations", "phases", "task_types")
            )
            sql += (
                f" ORDER BY (CASE state {states} ELSE 0 END)"
                f" + (authority = 'explicit') * {order.explicit!r}"
                f" + ((scope = 'project') + {selectors}) * {order.per_selector!r}"
                f" + used_count * {order.per_use!r} - ignored_count * {order.per_ignore!r}"
                f" - failure_count * {order.per_failure!r} DESC, id"
            )
        else:
            sql += " ORDER BY id"
        if limit is not None:
            sql += " LIMIT ?"
            params.append(limit)
        with self._lock:
            found = self._conn.execute(sql, params).fetchall()
        return [_record_from_row(r)[1] for r in found]

    def records_by_rows(self, rows: Sequence[int]) -> dict[int, Record]:
        out: dict[int, Record] = {}
        unique = list(dict.fromkeys(rows))
        with self._lock:
            for start in range(0, len(unique), 500):
                chunk = unique[start : start + 500]
                found = self._conn.execute(
                    _SELECT_RECORD + f" WHERE row IN ({', '.join('?' * len(chunk))})", chunk
                ).fetchall()
                for r in found:
                    key, record = _record_from_row(r)
                    out[key] = record
        return out

    def unlinked(self, agent: str, limit: int) -> list[tuple[int, str, str]]:
        with self._lock:
            found = self._conn.execute(
                "SELECT row, tenant, coalesce(title, '') || ' ' || body FROM records"
                " INDEXED BY records_unlinked WHERE agent = ? AND NOT entities_linked LIMIT ?",
                (agent, limit),
            ).fetchall()
        return [(int(row), tenant, text) for row, tenant, text in found]

    def link_pending(self, links: Sequence[tuple[int, str, Sequence[str]]]) -> None:
        with self.transaction() as tx:
            tx.set_entities_many(links)
            self._conn.executemany(
                "UPDATE records SET entities_linked = 1 WHERE row = ?", [(r,) for r, _, _ in links]
            )

    def keyword_document_counts(
        self, where: LaneFilter, terms: Sequence[str]
    ) -> tuple[int, dict[str, int]]:
        with self._lock:
            self._sync_index()
            return self._words.document_counts(where.tenant, where.agent, terms)

    def keyword_search(self, where: LaneFilter, terms: Sequence[str], limit: int) -> list[LaneHit]:
        if not terms or limit <= 0:
            return []
        with self._lock:
            self._sync_index()
            hits = self._words.search(where.tenant, where.agent, where.project_id, terms, limit)
        return [LaneHit(row=row, score=score) for row, score in hits]

    def _sync_index(self) -> None:
        seq = int(
            self._conn.execute("SELECT value FROM meta WHERE key = 'change_seq'").fetchone()[0]
        )
        if seq == self._index_seq:
            return
        # A full load scans records in row order ('+' keeps the change_seq index out of it);
        # an increment reads only the rows whose change_seq moved.
        changed = "+r.change_seq" if self._index_seq < 0 else "r.change_seq"
        cursor = self._conn.execute(
            "SELECT r.row, r.tenant, r.agent, r.project_id, r.live, v.vec, v.model, r.change_seq,"
            " t.length, t.keys, t.counts, r.episode_id, r.position, r.occurred_at"
            " FROM records r LEFT JOIN vectors v ON v.row = r.row"
            f" LEFT JOIN record_terms t ON t.row = r.row WHERE {changed} > ?",
            (self._index_seq,),
        )
        # In chunks: a 1M-row load never holds more than one chunk of BLOBs at once.
        while found := cursor.fetchmany(16_384):
            self._places.update(
                [int(f[0]) for f in found],
                [f[11] for f in found],
                [f[12] for f in found],
                [f[13] for f in found],
            )
            self._words.sync(
                [int(f[0]) for f in found],
                [f[1] for f in found],
                [f[2] for f in found],
                [f[3] for f in found],
                [bool(f[4]) for f in found],
                [f[8] for f in found],
                [f[9] for f in found],
                [f[10] for f in found],
            )
            with_vectors = [f for f in found if f[5] is not None]
            for row, *_rest in (f for f in found if f[5] is None):
                self._index.drop(int(row))  # no vector any more: purged
            if with_vectors:
                # One buffer per chunk: one copy, not one call per row.
                matrix = np.frombuffer(b"".join(f[5] for f in with_vectors), dtype=np.float32)
                self._index.upsert_many(
                    [int(f[0]) for f in with_vectors],
                    [f[1] for f in with_vectors],
                    [f[2] for f in with_vectors],
                    [f[3] for f in with_vectors],
                    [bool(f[4]) for f in with_vectors],
                    matrix.reshape(len(with_vectors), -1),
                    [f[6] for f in with_vectors],
                    [f[7] for f in with_vectors],
                )
        self._index_seq = seq
        if self._ann is not None:
            # Graphs follow the exact blocks: new rows, rows that left, purges (scrubbed
            # from the persisted file too), build or load at the threshold.
            self._ann.sync(self._index, seq)

    def vector_search(self, where: LaneFilter, query: np.ndarray, limit: int) -> list[LaneHit]:
        with self._lock:
            self._sync_index()
            vec = np.asarray(query, dtype=np.float32)
            hits = None
            if self._ann is not None:  # None here too: not indexed, or exact is better
                hits = self._ann.search(
                    self._index, vec, where.tenant, where.agent, where.project_id, limit
                )
            if hits is None:
                hits = self._index.search(vec, where.tenant, where.agent, where.project_id, limit)
        return [LaneHit(row=row, score=score) for row, score in hits]

    def vector_scores(self, query: np.ndarray, rows: Sequence[int]) -> dict[int, float]:
        with self._lock:
            self._sync_index()
            return self._index.scores(np.asarray(query, dtype=np.float32), rows)

    def episode_positions(self, rows: Sequence[int]) -> dict[int, EpisodePlace]:
        with self._lock:
            self._sync_index()
            return self._places.places(list(dict.fromkeys(rows)))

    def keyword_scores(
        self, where: LaneFilter, terms: Sequence[str], rows: Sequence[int]
    ) -> dict[int, float]:
        if not terms or not rows:
            return {}
        with self._lock:
            self._sync_index()
            return self._words.scores(where.tenant, where.agent, terms, rows)

    def episode_neighbours(
        self, where: LaneFilter, places: Sequence[EpisodePlace], window: int
    ) -> dict[int, EpisodePlace]:
        anchors = list(
            dict.fromkeys(
                (p.episode_id, p.position)
                for p in places
                if p.episode_id is not None and p.position is not None
            )
        )
        if not anchors or window <= 0:
            return {}
        scope_sql, params = _scope_clause(where)
        sql = (
            "SELECT r.row, r.episode_id, r.position, r.occurred_at FROM records r"
            f" WHERE {scope_sql} AND r.episode_id = ? AND r.position BETWEEN ? AND ? AND r.live"
        )
        out: dict[int, EpisodePlace] = {}
        with self._lock:
            for episode_id, position in anchors:
                found = self._conn.execute(
                    sql, [*params, episode_id, position - window, position + window]
                ).fetchall()
                for row, episode, pos, occurred_at in found:
                    out[int(row)] = EpisodePlace(episode, pos, occurred_at)
        return out

    def entity_neighbours(
        self, where: LaneFilter, seeds: Sequence[int], per_entity_cap: int
    ) -> list[LaneHit]:
        if not seeds:
            return []
        scope_sql, params = _scope_clause(where)
        seed_list = ", ".join("?" * len(seeds))
        sql = (
            "WITH seed_entities AS (SELECT DISTINCT entity_id FROM record_entities"
            f" WHERE row IN ({seed_list})),"
            # perEntityCap: a very common entity links at most this many (newest) rows.
            " linked AS (SELECT re.entity_id, re.row, row_number() OVER"
            " (PARTITION BY re.entity_id ORDER BY re.row DESC) AS n FROM record_entities re"
            " WHERE re.entity_id IN (SELECT entity_id FROM seed_entities))"
            " SELECT l.row, count(*) AS shared FROM linked l JOIN records r ON r.row = l.row"
            f" WHERE l.n <= ? AND {scope_sql} AND r.live AND l.row NOT IN ({seed_list})"
            " GROUP BY l.row ORDER BY shared DESC, l.row"
        )
        with self._lock:
            found = self._conn.execute(sql, [*seeds, per_entity_cap, *params, *seeds]).fetchall()
        return [LaneHit(row=int(row), score=float(shared)) for row, shared in found]

    def events(self, *, tenant: str | None = None, after_seq: int = 0) -> Iterator[Event]:
        sql = (
            "SELECT seq, event_id, type, tenant, agent, occurred_at, recorded_at, episode_id,"
            " session_id, sender, caused_by, supersedes, payload FROM events WHERE seq > ?"
        )
        params: list[Any] = [after_seq]
        if tenant is not None:
            sql += " AND tenant = ?"
            params.append(tenant)
        sql += " ORDER BY seq"
        with self._lock:
            found = self._conn.execute(sql, params).fetchall()
        for row in found:
            yield _event_from_row(row)

    def event(self, event_id: str) -> Event | None:
        with self._lock:
            found = self._conn.execute(
                "SELECT seq, event_id, type, tenant, agent, occurred_at, recorded_at, episode_id,"
                " session_id, sender, caused_by, supersedes, payload FROM events"
                " WHERE event_id = ?",
                (event_id,),
            ).fetchone()
        return _event_from_row(found) if found else None

    def tombstones(self, tenant: str, agent: str) -> list[Tombstone]:
        with self._lock:
            found = self._conn.execute(
                "SELECT record_id, tenant, agent, scope, project_id, text_hash, reason,"
                " permanent, removed_at, restored_at FROM tombstones"
                " WHERE tenant = ? AND agent = ? ORDER BY removed_at",
                (tenant, agent),
            ).fetchall()
        return [_tombstone(r) for r in found]

    def applications(self, tenant: str, agent: str) -> list[Application]:
        with self._lock:
            found = self._conn.execute(
                _SELECT_APPLICATION + " WHERE tenant = ? AND agent = ? ORDER BY created_at",
                (tenant, agent),
            ).fetchall()
        return [_application(r) for r in found]

    def vectors_by_hash(self) -> dict[str, np.ndarray]:
        with self._lock:
            found = self._conn.execute(
                "SELECT r.text_hash, v.vec FROM vectors v JOIN records r ON r.row = v.row"
            ).fetchall()
        return {h: np.frombuffer(blob, dtype=np.float32).copy() for h, blob in found}

    def reset_projection(self) -> None:
        with self._lock:
            self._conn.execute("BEGIN IMMEDIATE")
            try:
                for table in (
                    "record_entities",
                    "entities",
                    "vectors",
                    "record_terms",
                    "applications",
                    "tombstones",
                    "records",
                ):
                    self._conn.execute(f"DELETE FROM {table}")
                self._conn.execute(
                    "UPDATE meta SET value = CAST(value AS INTEGER) + 1 WHERE key = 'change_seq'"
                )
                self._conn.execute("COMMIT")
            except BaseException:
                self._conn.execute("ROLLBACK")
                raise
            self._index = ExactVectorIndex(self._index.dim)
            self._words = KeywordIndex()
            self._places = RowPlaces()
            self._index_seq = -1

    def compact(self) -> None:
        with self._lock:
            # Sync first, so a purged row's vector also leaves this process's index and
            # any approximate-index file now, not at the next search.
            self._sync_index()
            # A reader in another process can hold old WAL frames; retry briefly.
            for _ in range(50):
                busy, _log, _done = self._conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
                if not busy:
                    return
                time.sleep(0.1)
            raise StorageError("the WAL is held by another reader; it is truncated later")

    def stats(self, tenant: str | None = None) -> dict[str, Any]:
        where = "WHERE tenant = ?" if tenant is not None else ""
        params: tuple[Any, ...] = (tenant,) if tenant is not None else ()
        with self._lock:
            live = self._conn.execute(
                f"SELECT count(*) FROM records {where} {'AND' if where else 'WHERE'} live",
                params,
            ).fetchone()[0]
            versions = self._conn.execute(
                f"SELECT count(*) FROM records {where}", params
            ).fetchone()[0]
            events = self._conn.execute(f"SELECT count(*) FROM events {where}", params).fetchone()[
                0
            ]
            tombstones = self._conn.execute(
                f"SELECT count(*) FROM tombstones {where}"
                f" {'AND' if where else 'WHERE'} restored_at IS NULL",
                params,
            ).fetchone()[0]
            page_count = self._conn.execute("PRAGMA page_count").fetchone()[0]
            page_size = self._conn.execute("PRAGMA page_size").fetchone()[0]
        return {
            "records": int(live),
            "versions": int(versions),
            "events": int(events),
            "tombstones": int(tombstones),
            "schema_version": self.schema_version,
            "bytes": int(page_count) * int(page_size),
        }

    def close(self) -> None:
        with self._lock:
            self._conn.close()


def _split_sql(script: str) -> list[str]:
    """Split a migration into statements; triggers hold ';' inside BEGIN ... END."""
    statements: list[str] = []
    buffer: list[str] = []
    for line in script.splitlines():
        buffer.append(line)
        candidate = "\n".join(buffer).strip()
        if candidate and sqlite3.complete_statement(candidate):
            statements.append(candidate)
            buffer = []
    rest = "\n".join(buffer).strip()
    if rest:
        statements.append(rest)
    return statements
