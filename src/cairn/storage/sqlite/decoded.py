"""Decoded records kept by row while the row does not change: a long-lived process (the
daemon) asks for the same rule candidates on every prompt, and decoding a few hundred
rows each time (JSON lists, the source map, the dataclass) costs more than the query.

A row's content is fixed by its ``change_seq``: every write stamps the rows it touches
with its transaction's number, numbers only grow, and rows deleted by a replay come back
under new numbers. So ``(row, change_seq)`` names one content forever, in any process that
writes the file; a cached record is used only when the row still has the number it was
decoded at, which a cheap query of the two integer columns tells. Nothing is ever served
stale, and nothing needs to be told that another process wrote.

Which rows a rule query lists depends only on the records table, and any change to it
raises ``max(records.change_seq)`` (an insert or update stamps the newest number) or the
feed's generation (a replay deletes rows): :class:`Listings` keeps a query's listing under
that stamp, two index lookups to check. Writes that leave records alone (the deliveries
every prompt records) keep it valid.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Hashable, Sequence

from cairn.model import Record
from cairn.storage.sql.rows import RECORD_COLUMNS, record_from_row

CACHE_LIMIT_ROWS = 50_000  # then it starts over: a bound on memory, not on correctness
LISTINGS_LIMIT = 256
STAMP_SQL = (
    "SELECT (SELECT max(change_seq) FROM records),"
    " (SELECT value FROM meta WHERE key = 'generation')"
)
_CHUNK = 500
_SELECT_STAMPED = "SELECT change_seq, row, " + ", ".join(RECORD_COLUMNS) + " FROM records"


class DecodedRows:
    """Records by row, each with the ``change_seq`` it was decoded at."""

    def __init__(self, limit: int = CACHE_LIMIT_ROWS) -> None:
        self._limit = limit
        self._by_row: dict[int, tuple[int, Record]] = {}

    def __len__(self) -> int:
        return len(self._by_row)

    def records(self, conn: sqlite3.Connection, listed: Sequence[tuple[int, int]]) -> list[Record]:
        """The records of ``listed`` ``(row, change_seq)`` pairs, in that order; rows not
        held at that number are read and decoded. The caller reads ``listed`` and calls
        this inside one read transaction, so both see the same snapshot."""
        by_row = self._by_row
        missing = [row for row, seq in listed if (by_row.get(row) or (-1,))[0] != seq]
        if len(by_row) + len(missing) > self._limit:
            by_row.clear()
            missing = [row for row, _ in listed]
        for start in range(0, len(missing), _CHUNK):
            chunk = missing[start : start + _CHUNK]
            found = conn.execute(
                _SELECT_STAMPED + f" WHERE row IN ({', '.join('?' * len(chunk))})", chunk
            ).fetchall()
            for stamped in found:
                key, record = record_from_row(stamped[1:])
                by_row[key] = (int(stamped[0]), record)
        out = []
        for row, seq in listed:
            held = by_row.get(row)
            if held is None or held[0] != seq:  # cannot happen within one snapshot
                raise RuntimeError(f"row {row} changed inside a read transaction")
            out.append(held[1])
        return out


class Listings:
    """Each query's ``(row, change_seq)`` listing, valid while the records table's stamp
    (:data:`STAMP_SQL`) is the one it was listed under."""

    def __init__(self, limit: int = LISTINGS_LIMIT) -> None:
        self._limit = limit
        self._stamp: tuple[object, object] | None = None
        self._by_query: dict[Hashable, list[tuple[int, int]]] = {}

    def listing(
        self, conn: sqlite3.Connection, query: Hashable, sql: str, params: Sequence[object]
    ) -> list[tuple[int, int]]:
        """``sql``'s ``(row, change_seq)`` rows for ``query``, listed again only when the
        records table changed; the caller holds one read transaction around it."""
        found = conn.execute(STAMP_SQL).fetchone()
        stamp = (found[0], found[1])
        if stamp != self._stamp or len(self._by_query) >= self._limit:
            self._by_query.clear()
            self._stamp = stamp
        listed = self._by_query.get(query)
        if listed is None:
            listed = [(int(r), int(c)) for r, c in conn.execute(sql, params).fetchall()]
            self._by_query[query] = listed
        return listed
