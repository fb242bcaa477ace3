"""Checking a store's file, and reading what can still be read out of a damaged one.

``check`` runs SQLite's own ``integrity_check`` and the store's checks (its schema, its
journal's payloads, one current version per memory, the keyword rows of the records);
every finding is one line. ``salvage_events`` reads the journal event by event, stepping
over what a damaged page hides: the journal is what a store is rebuilt from;
``salvage_records`` reads the live memories the same way, for what the journal lost.
Both only read: the file is opened read-only, and is never changed here.
"""

from __future__ import annotations

import contextlib
import json
import sqlite3
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import quote

from cairn.errors import CairnError, DamagedStore
from cairn.model import Event, Record
from cairn.storage.sql.rows import SELECT_EVENT, SELECT_RECORD, event_from_row, record_from_row
from cairn.storage.sqlite import files
from cairn.storage.sqlite.schema import LATEST_VERSION

_CHUNK = 500
_PROBLEMS_SHOWN = 5
# Past the last readable event, how many numbers are tried one by one before the rest of
# the journal is taken as gone (a damaged page holds a few hundred events at most).
_PROBE_AHEAD = 20_000


@dataclass(frozen=True, slots=True)
class Finding:
    check: str
    ok: bool
    detail: str


@dataclass
class Salvage:
    events: list[Event] = field(default_factory=list)
    unreadable: int = 0  # events (or stretches of them) that could not be read


def _read_only(path: Path) -> sqlite3.Connection:
    """The file opened for reading only (immutable when SQLite cannot share it)."""
    for query in ("mode=ro", "immutable=1"):
        conn = sqlite3.connect(
            f"file:{quote(str(path))}?{query}", uri=True, isolation_level=None,
            timeout=files.BUSY_TIMEOUT_S,
        )  # fmt: skip
        try:
            conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
            return conn
        except sqlite3.DatabaseError as exc:
            conn.close()
            if query == "immutable=1" or isinstance(files.failure(exc, path), DamagedStore):
                raise
    raise AssertionError("unreachable")


def _one(conn: sqlite3.Connection, sql: str) -> str:
    found = conn.execute(sql).fetchone()
    return str(found[0]) if found is not None else ""


def check(path: Path) -> list[Finding]:
    """Every check of the store at ``path``, in order; a file that cannot be opened is one
    finding (and nothing else is checked)."""
    try:
        if not files.check_store_file(path):
            return [Finding("file", True, f"{path} does not exist yet (made on the first write)")]
    except CairnError as exc:
        return [Finding("file", False, str(exc))]
    try:
        conn = _read_only(path)
    except sqlite3.Error as exc:
        return [Finding("file", False, f"{path} cannot be opened: {exc}")]
    try:
        try:
            files.check_tables(conn, path)
        except CairnError as exc:
            return [Finding("file", False, str(exc))]
        except sqlite3.DatabaseError:
            pass  # a damaged schema: the integrity check says more
        return [Finding("file", True, f"{path} is an SQLite file"), *_checks(conn)]
    finally:
        conn.close()


def _checks(conn: sqlite3.Connection) -> Iterator[Finding]:
    try:
        found = [r[0] for r in conn.execute("PRAGMA integrity_check(100)")]
    except sqlite3.DatabaseError as exc:
        found = [str(exc)]
    problems = [p for p in found if p != "ok"]
    shown = "; ".join(problems[:_PROBLEMS_SHOWN]) + (
        f" (and {len(problems) - _PROBLEMS_SHOWN} more)" if len(problems) > _PROBLEMS_SHOWN else ""
    )
    yield Finding("integrity", not problems, shown or "SQLite's integrity_check: ok")
    # (check, the query, the answer of a sound store, what the answer says)
    store_checks = (
        ("schema", "SELECT max(version) FROM schema_version", str(LATEST_VERSION),
         f"schema v{{}} (this cairn's is v{LATEST_VERSION})"),
        ("journal", "SELECT count(*) FROM events WHERE NOT json_valid(payload)", "0",
         "{} journal events whose payload is not JSON"),
        ("versions", "SELECT count(*) FROM (SELECT 1 FROM records WHERE superseded_by IS NULL"
         " GROUP BY tenant, agent, id HAVING count(*) > 1)", "0",
         "{} memories with more than one current version"),
        ("keywords", "SELECT count(*) FROM records r WHERE NOT r.purged AND NOT EXISTS"
         " (SELECT 1 FROM record_terms t WHERE t.row = r.row)", "0",
         "{} memory versions without their keyword row"),
        ("feed", "SELECT count(*) FROM meta WHERE key = 'change_seq'", "1",
         "{} change counters (1 expected)"),
    )  # fmt: skip
    for name, sql, sound, words in store_checks:
        try:
            value = _one(conn, sql)
        except sqlite3.DatabaseError as exc:
            yield Finding(name, False, f"cannot be read: {exc}")
            continue
        yield Finding(name, value == sound, words.format(value))
    try:
        count = _one(conn, "SELECT count(*) FROM events")
        yield Finding("events", True, f"{count} journal events")
    except sqlite3.DatabaseError as exc:
        yield Finding("events", False, f"the journal cannot be counted: {exc}")


def _last_seq(conn: sqlite3.Connection) -> int | None:
    for sql in (
        "SELECT max(seq) FROM events",
        "SELECT seq FROM sqlite_sequence WHERE name = 'events'",
    ):
        try:
            found = conn.execute(sql).fetchone()
        except sqlite3.DatabaseError:
            continue
        if found is not None and found[0] is not None:
            return int(found[0])
    return None


def salvage_events(path: Path) -> Salvage:
    """Every journal event of the file that can still be read, in journal order."""
    out = Salvage()
    try:
        conn = _read_only(path)
    except sqlite3.Error:
        return out
    try:
        try:
            has_journal = conn.execute(
                "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'events'"
            ).fetchone()
        except sqlite3.DatabaseError:
            has_journal = True  # the schema page itself is damaged: look anyway
        if not has_journal:
            return out
        last = _last_seq(conn)
        start, misses = 1, 0
        while last is None or start <= last:
            end = start + _CHUNK - 1
            try:
                rows = conn.execute(
                    SELECT_EVENT + " WHERE seq BETWEEN ? AND ? ORDER BY seq", (start, end)
                ).fetchall()
                bad = 0
            except sqlite3.DatabaseError:  # a damaged page in this stretch: one by one
                rows, bad = _one_by_one(conn, start, end)
            out.unreadable += bad
            for row in rows:
                try:
                    out.events.append(event_from_row(row))
                except (ValueError, TypeError, json.JSONDecodeError):
                    out.unreadable += 1
            misses = 0 if rows else misses + _CHUNK  # numbers with nothing readable
            if last is None and misses >= _PROBE_AHEAD:
                break
            start = end + 1
    finally:
        conn.close()
    return out


def salvage_records(path: Path) -> list[Record]:
    """Every live memory of the file whose row can still be read (the journal is the
    source of truth; these give back what the journal lost), row by row around damage."""
    out: list[Record] = []
    try:
        conn = _read_only(path)
    except sqlite3.Error:
        return out
    try:
        try:
            found = conn.execute("SELECT max(row) FROM records").fetchone()
            last = int(found[0] or 0)
        except sqlite3.DatabaseError:
            last = 0
        for start in range(1, last + 1, _CHUNK):
            sql = SELECT_RECORD + " WHERE row BETWEEN ? AND ? AND live"
            try:
                rows = conn.execute(sql, (start, start + _CHUNK - 1)).fetchall()
            except sqlite3.DatabaseError:
                rows = []
                for row in range(start, start + _CHUNK):
                    with contextlib.suppress(sqlite3.DatabaseError):
                        rows += conn.execute(SELECT_RECORD + " WHERE row = ? AND live", (row,))
            for row in rows:
                with contextlib.suppress(ValueError, TypeError, KeyError):
                    out.append(record_from_row(row)[1])
    finally:
        conn.close()
    return out


def _one_by_one(
    conn: sqlite3.Connection, start: int, end: int
) -> tuple[list[tuple[Any, ...]], int]:
    rows: list[tuple[Any, ...]] = []
    bad = 0
    for seq in range(start, end + 1):
        try:
            found = conn.execute(SELECT_EVENT + " WHERE seq = ?", (seq,)).fetchone()
        except sqlite3.DatabaseError:
            bad += 1
            continue
        if found is not None:
            rows.append(found)
    return rows, bad
