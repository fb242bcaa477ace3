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
import sqlite3
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager, nullcontext
from pathlib import Path
from typing import Any

import numpy as np

from cairn.errors import InvalidInput, StorageError
from cairn.model import Record
from cairn.storage.ports import (
    ChangeBatch,
    FeedPosition,
    LaneFilter,
    PendingPurge,
    RuleQuery,
    StoreStats,
)
from cairn.storage.sql.dialect import SQLITE
from cairn.storage.sql.journal import SqlJournal
from cairn.storage.sql.reads import SqlReads
from cairn.storage.sql.rows import SELECT_RECORD, record_from_row
from cairn.storage.sql.upkeep import FEED_BATCH, OneEmbedder, SqlUpkeep, clear_purge
from cairn.storage.sql.writes import RankHint
from cairn.storage.sqlite import files
from cairn.storage.sqlite.decoded import DecodedRows, Listings
from cairn.storage.sqlite.migrate import migrate, schema_version
from cairn.storage.sqlite.schema import LATEST_VERSION
from cairn.storage.sqlite.transaction import SqliteTransaction


class SqliteRecordStore(SqlReads, SqlJournal, SqlUpkeep):
    """The reads and the journal's are the SQL stores' shared code (:mod:`cairn.storage.sql`)
    over the SQLite dialect; this class opens the file, runs the transactions and keeps what
    only SQLite does (a cache of decoded rule rows, the WAL, the change feed's scan).

    Safe to share between threads of one process; any number of processes may open it.

    ``rank_hint`` is the engine's stored-column ranking of a record (the context director's
    tiers); the store keeps it in a column so rule pre-selection can take the plausible top
    without knowing the formula.
    """

    def __init__(self, path: Path | str, *, rank_hint: RankHint | None = None) -> None:
        super().__init__(SQLITE, lambda tenant, sql, params: self._all(sql, params), self._all)
        self.path = Path(path)
        if self.path.is_dir():
            raise InvalidInput(f"{self.path} is a folder, not a memory file")
        self._lock = threading.RLock()
        self._rank = rank_hint
        if not files.check_store_file(self.path):
            files.create_store(self.path, lambda conn: migrate(conn, self.path, rank_hint))
        self._conn, self.read_only = files.open_store(self.path)
        self._embedder = OneEmbedder(SQLITE, str(self.path), "rebuild it into a new file")
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
                    SQLITE.counter_plus_one("change_seq") + " RETURNING value"
                ).fetchone()[0]
                # Read the store's model again in each write: `cairn reembed` in another
                # process may have switched it since the last one.
                self._embedder.forget()
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
        self._embedder.forget()  # the meta row may have been rolled back with the rest
        # SQLite has already rolled back after some errors (a full disk among them).
        if self._conn.in_transaction:
            # else the connection's own rollback, when it closes, ends it
            with contextlib.suppress(sqlite3.Error):
                self._conn.execute("ROLLBACK")

    def _note_model(self, model: str) -> None:
        """One store holds the vectors of one embedder: mixing two would rank nonsense."""
        self._embedder.note(lambda sql, params: self._conn.execute(sql, params).fetchall(), model)

    # -- reads ---------------------------------------------------------------------------

    def reading(self, tenant: str) -> AbstractContextManager[None]:
        """Each read stands alone: one connection serves the process, and a read
        transaction held across a recall would only keep the writer's WAL from folding."""
        return nullcontext()

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

    def rule_candidates(self, query: RuleQuery) -> list[Record]:
        if not query.kinds:
            return []
        with self._lock:
            if self._conn.in_transaction:
                # Inside a write: rows may yet roll back under a number a later write
                # reuses, so nothing read here is kept.
                where, params = self.rule_where(query)
                return [record_from_row(r)[1] for r in self._all(SELECT_RECORD + where, params)]
            condition, params = self.rule_condition(query)
            # One snapshot for the listing and the reads of the rows not held decoded.
            with self._failing():
                self._conn.execute("BEGIN")
                try:
                    listed = self._rule_listings.listing(
                        self._conn, query, condition, params, query.limit
                    )
                    return self._decoded.records(self._conn, listed)
                finally:
                    if self._conn.in_transaction:
                        self._conn.execute("COMMIT")

    def records_by_rows(self, where: LaneFilter, rows: Sequence[int]) -> dict[int, Record]:
        """The shared read's records, decoded once per row content (:mod:`.decoded`): a
        recall reads its few dozen fused rows up to three times (the topic, the date
        prior, the fetch), and the daemon's recalls keep finding the same memories."""
        wanted = list(dict.fromkeys(int(r) for r in rows))
        with self._lock:
            if not wanted or self._conn.in_transaction:  # inside a write: nothing is kept
                return super().records_by_rows(where, wanted)
            with self._failing():
                self._conn.execute("BEGIN")  # one snapshot: the listing and the rows read
                try:
                    listed = []
                    for chunk in SQLITE.chunks(wanted):
                        marks = ", ".join("?" * len(chunk))
                        # As the shared read: by row id, then the namespace (its order too).
                        listed += self._conn.execute(
                            f"SELECT row, change_seq FROM records WHERE row IN ({marks})"
                            " AND +tenant = ? AND +agent = ?",
                            [*chunk, where.tenant, where.agent],
                        ).fetchall()
                    found = self._decoded.records(self._conn, listed)
                finally:
                    if self._conn.in_transaction:
                        self._conn.execute("COMMIT")
        return {int(row): record for (row, _), record in zip(listed, found, strict=True)}

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

    def changes_since(self, position: FeedPosition) -> Iterator[ChangeBatch]:
        sql, params = self._feed_start(position)
        # held while the caller consumes: one connection, one cursor
        with self._lock, self._failing():
            cursor = self._conn.execute(sql, params)
            # In chunks: a 1M-row load never holds more than one chunk of vectors at once.
            while found := cursor.fetchmany(FEED_BATCH):
                yield ChangeBatch.from_rows(found)

    # -- entity links --------------------------------------------------------------------

    # -- purges --------------------------------------------------------------------------

    def _clear_purge(self, purge: PendingPurge) -> None:
        if self.read_only is not None:
            raise files.read_only(self.path, self.read_only)
        with self._lock, self._failing():
            self._conn.execute(*clear_purge(SQLITE, purge))

    def checkpoint(self) -> None:
        """Make freed bytes unrecoverable from the files: rebuild every page while a purge
        is pending, then truncate the write-ahead log."""
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

    def stats(self, tenant: str, agent: str | None = None) -> StoreStats:
        with self._lock, self._failing():
            version = int(
                self._conn.execute("SELECT max(version) FROM schema_version").fetchone()[0]
            )
            pages = int(self._conn.execute("PRAGMA page_count").fetchone()[0])
            size = int(self._conn.execute("PRAGMA page_size").fetchone()[0])
        return self._counted(tenant, agent, schema_version=version, size=pages * size)

    def close(self) -> None:
        with self._lock:
            self._conn.close()
