"""The SQLite record store: one file in WAL mode, the embedded default.

Settings chosen on purpose:

- WAL with ``synchronous=NORMAL``: a committed write survives a killed process (kill -9);
  readers never block the writer.
- ``secure_delete=ON``: freed cells and pages are zeroed, so a permanently forgotten body
  cannot linger in free space. Costs some write speed; correctness of forgetting wins.
  It does not reach the stale copies a b-tree balance can leave inside pages still in
  use, so finishing a permanent forget also rewrites the file (``VACUUM``, in
  :meth:`SqliteRecordStore.checkpoint`).
- ``BEGIN IMMEDIATE`` for every write with a long busy timeout, so several processes can
  write the same file and none loses an acknowledged write.

The change feed is the ``change_seq`` column: each transaction takes the next number and
stamps every row it touches; ``meta.generation`` moves when a replay deletes and renumbers
a tenant's rows.
"""

from __future__ import annotations

import contextlib
import json
import sqlite3
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np

from cairn.errors import InvalidInput, StorageError
from cairn.model import Application, Event, Record, Tombstone
from cairn.storage.ports import (
    ChangeBatch,
    EventFilter,
    FeedPosition,
    LaneFilter,
    PendingPurge,
    RecordQuery,
    RuleQuery,
    StoreStats,
    SweepQuery,
    TrajectoryQuery,
)
from cairn.storage.sqlite import files, learning
from cairn.storage.sqlite.decoded import DecodedRows, Listings
from cairn.storage.sqlite.filters import event_filters, prefix_end, record_filters
from cairn.storage.sqlite.migrate import migrate, schema_version
from cairn.storage.sqlite.rows import (
    SELECT_APPLICATION,
    SELECT_EVENT,
    SELECT_RECORD,
    SELECT_TOMBSTONE,
    application_from_row,
    event_from_row,
    record_from_row,
    tombstone_from_row,
)
from cairn.storage.sqlite.schema import LATEST_VERSION
from cairn.storage.sqlite.transaction import RankHint, SqliteTransaction

_FEED_BATCH = 16_384
_FEED_COLUMNS = (
    "r.row, r.tenant, r.agent, r.project_id, r.live, r.change_seq, v.vec, v.model,"
    " t.length, t.keys, t.counts, t.entity_keys, r.episode_id, r.position, r.occurred_at"
)


class SqliteRecordStore:
    """Safe to share between threads of one process; any number of processes may open it.

    ``rank_hint`` is the engine's stored-column ranking of a record (the context director's
    tiers); the store keeps it in a column so rule pre-selection can take the plausible top
    without knowing the formula.
    """

    def __init__(self, path: Path | str, *, rank_hint: RankHint | None = None) -> None:
        self.path = Path(path)
        if self.path.is_dir():
            raise InvalidInput(f"{self.path} is a folder, not a memory file")
        self._lock = threading.RLock()
        self._rank = rank_hint
        if not files.check_store_file(self.path):
            files.create_store(self.path, lambda conn: migrate(conn, self.path, rank_hint))
        self._conn, self.read_only = files.open_store(self.path)
        self._model: str | None = None
        self._decoded = DecodedRows()
        self._rule_listings = Listings()
        try:
            with self._lock:
                if self.read_only is not None and schema_version(self._conn) != LATEST_VERSION:
                    raise files.read_only(
                        self.path, f"{self.read_only}; it needs upgrading to this cairn's schema"
                    )
                migrate(self._conn, self.path, rank_hint)
        except sqlite3.Error as exc:
            self._conn.close()
            raise files.failure(exc, self.path) from None
        except BaseException:
            self._conn.close()
            raise

    # -- writes --------------------------------------------------------------------------

    @contextmanager
    def transaction(self) -> Iterator[SqliteTransaction]:
        if self.read_only is not None:
            raise files.read_only(self.path, self.read_only)
        with self._lock:
            try:
                self._conn.execute("BEGIN IMMEDIATE")
            except sqlite3.Error as exc:
                raise files.failure(exc, self.path) from None
            try:
                seq = self._conn.execute(
                    "UPDATE meta SET value = CAST(value AS INTEGER) + 1"
                    " WHERE key = 'change_seq' RETURNING value"
                ).fetchone()[0]
                # Read the store's model again in each write: `cairn reembed` in another
                # process may have switched it since the last one.
                self._model = None
                yield SqliteTransaction(self._conn, int(seq), self._rank, self._note_model)
                self._conn.execute("COMMIT")
            except sqlite3.IntegrityError as exc:  # a CHECK: e.g. a learned doc as system
                self._roll_back()
                raise StorageError(f"the store refused the change: {exc}") from None
            except sqlite3.Error as exc:  # a full disk, a damaged page: said as such
                self._roll_back()
                raise files.failure(exc, self.path) from None
            except BaseException:
                self._roll_back()
                raise

    def _roll_back(self) -> None:
        self._model = None  # the meta row may have been rolled back with the rest
        # SQLite has already rolled back after some errors (a full disk among them).
        if self._conn.in_transaction:
            # else the connection's own rollback, when it closes, ends it
            with contextlib.suppress(sqlite3.Error):
                self._conn.execute("ROLLBACK")

    def _note_model(self, model: str) -> None:
        """One store holds the vectors of one embedder: mixing two would rank nonsense."""
        if self._model == model:
            return
        found = self._conn.execute("SELECT value FROM meta WHERE key = 'embedder'").fetchone()
        if found is None:
            self._conn.execute("INSERT INTO meta(key, value) VALUES ('embedder', ?)", (model,))
        elif found[0] != model:
            raise InvalidInput(
                f"{self.path} holds vectors of the embedder {found[0]!r}, not {model!r};"
                " open it with that embedder or rebuild it into a new file"
            )
        self._model = model

    # -- reads ---------------------------------------------------------------------------

    @contextmanager
    def _failing(self) -> Iterator[None]:
        """SQLite's errors as cairn's (a damaged page, a full disk, a read-only file)."""
        try:
            yield
        except sqlite3.Error as exc:
            raise files.failure(exc, self.path) from None

    def _all(self, sql: str, params: Sequence[Any]) -> list[Any]:
        with self._lock:
            try:
                return self._conn.execute(sql, params).fetchall()
            except sqlite3.Error as exc:
                raise files.failure(exc, self.path) from None

    def get(
        self, tenant: str, agent: str, record_id: str, *, as_of: str | None = None
    ) -> Record | None:
        if as_of is None:
            sql = (
                SELECT_RECORD + " WHERE tenant = ? AND agent = ? AND id = ?"
                " AND superseded_by IS NULL ORDER BY version DESC LIMIT 1"
            )
            params: list[Any] = [tenant, agent, record_id]
        else:
            sql = (
                SELECT_RECORD + " WHERE tenant = ? AND agent = ? AND id = ?"
                " AND recorded_at <= ? AND (expired_at IS NULL OR expired_at > ?)"
                " ORDER BY version DESC LIMIT 1"
            )
            params = [tenant, agent, record_id, as_of, as_of]
        found = self._all(sql, params)
        return record_from_row(found[0])[1] if found else None

    def history(self, tenant: str, agent: str, record_id: str) -> list[Record]:
        found = self._all(
            SELECT_RECORD + " WHERE tenant = ? AND agent = ? AND id = ? ORDER BY version",
            (tenant, agent, record_id),
        )
        return [record_from_row(r)[1] for r in found]

    def list_records(self, query: RecordQuery) -> list[Record]:
        # A page is chosen over row ids alone, then read whole: sorting (or skipping)
        # narrow rows instead of every column of each candidate.
        paged = query.limit is not None
        sql = (
            "SELECT row FROM records" if paged else SELECT_RECORD
        ) + " WHERE tenant = ? AND agent = ?"
        params: list[Any] = [query.tenant, query.agent]
        if query.as_of is not None:
            sql += " AND recorded_at <= ? AND (expired_at IS NULL OR expired_at > ?)"
            params += [query.as_of, query.as_of]
        elif query.include_inactive:
            sql += " AND superseded_by IS NULL AND purged = 0"
        else:
            sql += " AND live"
        where, values = record_filters(query)
        sql += where
        params += values
        if query.limit is not None or query.offset:
            sql += " LIMIT ? OFFSET ?"
            params += [query.limit if query.limit is not None else -1, query.offset]
        if paged:
            rows = [int(r[0]) for r in self._all(sql, params)]
            found = self.records_by_rows(LaneFilter(query.tenant, query.agent), rows)
            records = [found[r] for r in rows if r in found]
        else:
            records = [record_from_row(r)[1] for r in self._all(sql, params)]
        if query.as_of is not None:
            # Forgetting is recorded in tombstones, not in the version's times.
            records = [r for r in records if not r.forgotten_at or r.forgotten_at > query.as_of]
        return records

    def rule_candidates(self, query: RuleQuery) -> list[Record]:
        where = (
            " WHERE tenant = ? AND agent = ? AND live"
            f" AND kind IN ({', '.join('?' * len(query.kinds))})"
            " AND (scope = 'global' OR project_id = ?)"
        )
        params: list[Any] = [query.tenant, query.agent, *query.kinds, query.project_id]
        for column, value in (
            ("operations", query.operation),
            ("phases", query.phase),
            ("task_types", query.task_type),
        ):
            if value is not None:
                # Selector words are stored lower-case, so a substring test on the JSON
                # text is exact for a quoted word and far cheaper than json_each.
                where += f" AND ({column} = '[]' OR instr({column}, ?) > 0)"
                params.append(json.dumps(value.lower(), ensure_ascii=False))
        where += " ORDER BY rank_hint DESC, id LIMIT ?"
        params.append(query.limit)
        with self._lock:
            if self._conn.in_transaction:
                # Inside a write: rows may yet roll back under a number a later write
                # reuses, so nothing read here is kept.
                return [record_from_row(r)[1] for r in self._all(SELECT_RECORD + where, params)]
            # One snapshot for the listing and the reads of the rows not held decoded.
            with self._failing():
                self._conn.execute("BEGIN")
                try:
                    listed = self._rule_listings.listing(
                        self._conn, query, "SELECT row, change_seq FROM records" + where, params
                    )
                    return self._decoded.records(self._conn, listed)
                finally:
                    if self._conn.in_transaction:
                        self._conn.execute("COMMIT")

    def records_by_rows(self, where: LaneFilter, rows: Sequence[int]) -> dict[int, Record]:
        out: dict[int, Record] = {}
        unique = list(dict.fromkeys(int(r) for r in rows))
        for start in range(0, len(unique), 500):
            chunk = unique[start : start + 500]
            # By row id, then the namespace: '+' keeps the planner on the row ids instead
            # of scanning the tenant's index (30 ms a recall at 100k memories).
            found = self._all(
                SELECT_RECORD + f" WHERE row IN ({', '.join('?' * len(chunk))})"
                " AND +tenant = ? AND +agent = ?",
                [*chunk, where.tenant, where.agent],
            )
            for r in found:
                key, record = record_from_row(r)
                out[key] = record
        return out

    def events(
        self,
        tenant: str,
        agent: str | None,
        *,
        after_seq: int = 0,
        limit: int | None = None,
        where: EventFilter | None = None,
    ) -> Iterator[Event]:
        sql = SELECT_EVENT + " WHERE tenant = ? AND seq > ?"
        params: list[Any] = [tenant, after_seq]
        if agent is not None:
            sql += " AND agent = ?"
            params.append(agent)
        where = where or EventFilter()
        clause, values = event_filters(where)
        sql += clause
        params += values
        sql += " ORDER BY seq DESC" if where.newest_first else " ORDER BY seq"
        if limit is not None:
            sql += " LIMIT ?"
            params.append(limit)
        for row in self._all(sql, params):
            yield event_from_row(row)

    def event(self, tenant: str, agent: str, event_id: str) -> Event | None:
        found = self._all(
            SELECT_EVENT + " WHERE tenant = ? AND agent = ? AND event_id = ?",
            (tenant, agent, event_id),
        )
        return event_from_row(found[0]) if found else None

    def known_events(self, tenant: str, agent: str, event_ids: Sequence[str]) -> set[str]:
        found: set[str] = set()
        ids = list(dict.fromkeys(event_ids))
        for start in range(0, len(ids), 500):
            chunk = ids[start : start + 500]
            rows = self._all(
                "SELECT event_id FROM events WHERE tenant = ? AND agent = ?"
                f" AND event_id IN ({', '.join('?' * len(chunk))})",
                [tenant, agent, *chunk],
            )
            found.update(r[0] for r in rows)
        return found

    def recent_events(
        self, tenant: str, agent: str | None, types: Sequence[str] | None, limit: int
    ) -> list[Event]:
        return learning.recent_events(self._all, tenant, agent, types, limit)

    def trajectories(self, query: TrajectoryQuery) -> list[Event]:
        return learning.trajectories(self._all, query)

    def sweep_candidates(self, query: SweepQuery) -> list[Record]:
        return learning.sweep_candidates(self._all, query)

    def counters(self, tenant: str, agent: str | None) -> dict[str, dict[str, float]]:
        return learning.counters(self._all, tenant, agent)

    def tombstones(self, tenant: str, agent: str) -> list[Tombstone]:
        found = self._all(
            SELECT_TOMBSTONE + " WHERE tenant = ? AND agent = ? ORDER BY removed_at, record_id",
            (tenant, agent),
        )
        return [tombstone_from_row(r) for r in found]

    def applications(
        self, tenant: str, agent: str, *, record_id: str | None = None, id_prefix: str = ""
    ) -> list[Application]:
        sql = SELECT_APPLICATION + " WHERE tenant = ? AND agent = ?"
        params: list[Any] = [tenant, agent]
        if record_id is not None:
            sql += " AND record_id = ?"
            params.append(record_id)
        if id_prefix:
            sql += " AND application_id >= ? AND application_id < ?"
            params += [id_prefix, prefix_end(id_prefix)]
        found = self._all(sql + " ORDER BY created_at, application_id", params)
        return [application_from_row(r) for r in found]

    def applications_by_id(
        self, tenant: str, agent: str, application_ids: Sequence[str]
    ) -> list[Application]:
        return learning.applications_by_id(self._all, tenant, agent, application_ids)

    def vectors_by_hash(self, tenant: str, agent: str, model: str) -> dict[str, np.ndarray]:
        found = self._all(
            "SELECT r.text_hash, r.title, v.vec FROM vectors v JOIN records r ON r.row = v.row"
            " WHERE r.tenant = ? AND r.agent = ? AND v.model = ?",
            (tenant, agent, model),
        )
        # A title changes what was embedded: only untitled rows map from their body alone.
        return {
            h: np.frombuffer(blob, dtype=np.float32).copy()
            for h, title, blob in found
            if title is None
        }

    # -- change feed ---------------------------------------------------------------------

    def feed_position(self) -> FeedPosition:
        found = dict(self._all("SELECT key, value FROM meta", ()))
        return FeedPosition(int(found.get("generation", 0)), int(found["change_seq"]))

    def changes_since(self, position: FeedPosition) -> Iterator[ChangeBatch]:
        current = self.feed_position()
        full = position.generation != current.generation or position.seq < 0
        # A full load scans records in row order ('+' keeps the change_seq index out of
        # it); an increment reads only the rows whose change_seq moved.
        changed = "+r.change_seq" if full else "r.change_seq"
        # held while the caller consumes: one connection, one cursor
        with self._lock, self._failing():
            cursor = self._conn.execute(
                f"SELECT {_FEED_COLUMNS} FROM records r LEFT JOIN vectors v ON v.row = r.row"
                f" LEFT JOIN record_terms t ON t.row = r.row WHERE {changed} > ?",
                (-1 if full else position.seq,),
            )
            # In chunks: a 1M-row load never holds more than one chunk of vectors at once.
            while found := cursor.fetchmany(_FEED_BATCH):
                yield ChangeBatch.from_rows(found)

    # -- entity links --------------------------------------------------------------------

    def pending_links(self, agent: str, limit: int) -> list[tuple[int, str]]:
        found = self._all(
            "SELECT row, coalesce(title, '') || ' ' || body FROM records"
            " INDEXED BY records_unlinked WHERE agent = ? AND NOT entities_linked LIMIT ?",
            (agent, limit),
        )
        return [(int(row), text) for row, text in found]

    def set_links(self, links: Sequence[tuple[int, tuple[str, ...]]]) -> None:
        with self.transaction() as tx:
            tx.set_entity_keys(links)

    # -- purges --------------------------------------------------------------------------

    def pending_purges(self) -> list[PendingPurge]:
        found = self._all("SELECT tenant, agent, record_id FROM pending_purges", ())
        return [PendingPurge(*r) for r in found]

    def finish_purge(self, purge: PendingPurge) -> None:
        if self.read_only is not None:
            raise files.read_only(self.path, self.read_only)
        with self._lock, self._failing():
            self._conn.execute(
                "DELETE FROM pending_purges WHERE tenant = ? AND agent = ? AND record_id = ?",
                (purge.tenant, purge.agent, purge.record_id),
            )

    def checkpoint(self) -> None:
        if self.read_only is not None:
            return  # nothing can be folded into a file that cannot be written
        with self._lock, self._failing():
            if self._conn.execute("SELECT 1 FROM pending_purges LIMIT 1").fetchone():
                # secure_delete zeroes a deleted cell, but a b-tree balance can leave a
                # copy of a moved cell in the free space of a page still in use (seen: a
                # purged row's term keys). Only rebuilding every page clears those.
                self._conn.execute("VACUUM")
            # A reader in another process can hold old WAL frames; retry briefly.
            for _ in range(50):
                found = self._conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
                busy = found[0]
                if not busy:
                    return
                time.sleep(0.1)
        raise StorageError("the WAL is held by another reader; it is truncated later")

    # -- status --------------------------------------------------------------------------

    def embedder(self) -> str | None:
        found = self._all("SELECT value FROM meta WHERE key = 'embedder'", ())
        return str(found[0][0]) if found else None

    def stats(self, tenant: str, agent: str | None = None) -> StoreStats:
        where = "tenant = ?" + (" AND agent = ?" if agent is not None else "")
        params = (tenant,) if agent is None else (tenant, agent)

        def count(sql: str) -> int:
            return int(self._all(sql, params)[0][0])

        with self._lock, self._failing():
            version = int(
                self._conn.execute("SELECT max(version) FROM schema_version").fetchone()[0]
            )
            pages = int(self._conn.execute("PRAGMA page_count").fetchone()[0])
            size = int(self._conn.execute("PRAGMA page_size").fetchone()[0])
        return StoreStats(
            records=count(f"SELECT count(*) FROM records WHERE {where} AND live"),
            versions=count(f"SELECT count(*) FROM records WHERE {where}"),
            events=count(f"SELECT count(*) FROM events WHERE {where}"),
            tombstones=count(
                f"SELECT count(*) FROM tombstones WHERE {where} AND restored_at IS NULL"
            ),
            applications=count(f"SELECT count(*) FROM applications WHERE {where}"),
            schema_version=version,
            bytes=pages * size,
        )

    def close(self) -> None:
        with self._lock:
            self._conn.close()
