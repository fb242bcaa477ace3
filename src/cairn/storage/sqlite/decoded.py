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
    """Each rule query's listing, by ``rank_hint`` (highest first) then ``id``: its
    ``(row, change_seq)`` pairs, valid while the records table's stamp
    (:data:`STAMP_SQL`) is the one it was listed under.

    When only rows were written since (the stamp's generation held, its ``change_seq``
    moved from S), the rows changed are exactly those stamped above S: the listing drops
    them, adds back those of them the query still selects, and orders again. That is the
    whole listing when the old one held fewer rows than its limit (every row it left out
    did not match and has not changed); at the limit, when its last row still closes the
    new one (a row left out ranked below it and has not changed). Else, or when many rows
    changed, it is listed again."""

    def __init__(self, limit: int = LISTINGS_LIMIT) -> None:
        self._limit = limit
        self._stamp: tuple[object, object] | None = None
        self._by_query: dict[Hashable, list[_Listed]] = {}

    def listing(
        self,
        conn: sqlite3.Connection,
        query: Hashable,
        condition: str,
        params: Sequence[object],
        limit: int,
    ) -> list[tuple[int, int]]:
        """The ``(row, change_seq)`` rows of ``SELECT ... FROM records`` + ``condition``
        (a WHERE), at most ``limit``, for ``query``; the caller holds one read transaction
        around it."""
        found = conn.execute(STAMP_SQL).fetchone()
        stamp = (found[0], found[1])
        before, kept = self._stamp, self._by_query.get(query)
        if stamp != before:
            if kept is not None and before is not None:
                kept = _moved_on(conn, kept, before, stamp, condition, params, limit)
            self._by_query.clear()  # the other queries are listed again when asked
            self._stamp = stamp
        elif kept is None and len(self._by_query) >= self._limit:
            self._by_query.clear()
        if kept is None:
            kept = conn.execute(
                _LISTED + condition + " ORDER BY rank_hint DESC, id LIMIT ?", [*params, limit]
            ).fetchall()
        self._by_query[query] = kept
        return [(int(row), int(seq)) for row, seq, _, _ in kept]


_LISTED = "SELECT row, change_seq, rank_hint, id FROM records"
_Listed = tuple[int, int, float, str]  # row, change_seq, rank_hint, id
MOVED_ON_ROWS = 256  # changed since the listing: more, and it is listed again


def _moved_on(
    conn: sqlite3.Connection,
    old: list[_Listed],
    before: tuple[object, object],
    now: tuple[object, object],
    condition: str,
    params: Sequence[object],
    limit: int,
) -> list[_Listed] | None:
    """``old`` (listed under the stamp ``before``) as of the stamp ``now``; None when it
    must be listed again (:class:`Listings`)."""
    if before[1] != now[1] or not isinstance(before[0], int):
        return None  # a replay renumbered rows, or there was no row at all
    changed = [
        int(r)
        for (r,) in conn.execute(
            "SELECT row FROM records WHERE change_seq > ? LIMIT ?", (before[0], MOVED_ON_ROWS + 1)
        ).fetchall()
    ]
    if len(changed) > MOVED_ON_ROWS:
        return None
    gone = set(changed)
    merged = [entry for entry in old if entry[0] not in gone]
    if changed:
        marks = ", ".join("?" * len(changed))
        merged += conn.execute(
            _LISTED + condition + f" AND row IN ({marks})", [*params, *changed]
        ).fetchall()
    merged.sort(key=lambda entry: (-entry[2], entry[3]))
    if len(old) >= limit:
        last = (-old[-1][2], old[-1][3])
        if len(merged) < limit or (-merged[limit - 1][2], merged[limit - 1][3]) > last:
            return None
    return merged[:limit]
