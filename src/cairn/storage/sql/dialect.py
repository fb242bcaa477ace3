"""What SQLite and PostgreSQL spell differently, and nothing else.

The shared queries (:mod:`cairn.storage.sql`) are built from these pieces: the parameter
mark, a list of values (an ``IN`` list of marks on SQLite, one array on PostgreSQL), a
substring test, a prefix test, a case-folded text search, a JSON field of the journal's
payload, and the spelling of "no limit" and of a descending order with missing values last.
Every value travels as a parameter; a column name comes only from the shared code.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

# SQLite's limit on the parameters of one statement is 32,766 (older builds: 999): a long
# list is read in chunks of this many.
_SQLITE_CHUNK = 500


@dataclass(frozen=True, slots=True)
class Dialect:
    name: str
    mark: str  # a parameter's placeholder
    arrays: bool  # lists travel as one array parameter (else: one mark per value)
    no_limit: int | None  # the LIMIT that means "every row"
    descending: str  # a descending order, missing values last
    # A page of a listing is chosen over row ids alone, then read whole (SQLite's planner
    # sorts and skips whole rows otherwise).
    narrow_pages: bool = False
    # Before a column, keeps the planner off its index (SQLite's unary '+').
    unindexed: str = ""
    # The planner takes the name of the index a query must use (SQLite's INDEXED BY).
    index_hints: bool = False
    # A scan of the records table comes in row order unasked (SQLite's rowid tables);
    # PostgreSQL's heap has no order, so a scan that must keep one says ORDER BY.
    rowid_order: bool = False
    # A counter of ``meta`` (its value column is text) moved on by one.
    next_count: str = "CAST(value AS INTEGER) + 1"

    def marks(self, count: int) -> str:
        return ", ".join([self.mark] * count)

    def using_index(self, name: str) -> str:
        """After a table's name: the index the query must read (nothing where the planner
        takes no hint)."""
        return f" INDEXED BY {name}" if self.index_hints else ""

    def in_row_order(self, column: str) -> str:
        """The ORDER BY that keeps a records scan in row order (nothing where it is so)."""
        return "" if self.rowid_order else f" ORDER BY {column}"

    def counter_plus_one(self, key: str) -> str:
        """The meta counter ``key`` (kept as text) moved on by one."""
        return f"UPDATE meta SET value = {self.next_count} WHERE key = '{key}'"

    def chunks(self, values: Sequence[Any]) -> Iterator[list[Any]]:
        """``values`` without repeats, in as few lists as one statement may take."""
        unique = list(dict.fromkeys(values))
        if self.arrays:
            if unique:
                yield unique
            return
        for start in range(0, len(unique), _SQLITE_CHUNK):
            yield unique[start : start + _SQLITE_CHUNK]

    def one_of(
        self, column: str, values: Sequence[Any], kind: str = "text"
    ) -> tuple[str, list[Any]]:
        """``column`` equals one of ``values`` (never empty: the caller skips an empty list)."""
        if self.arrays:
            return f"{column} = ANY({self.mark}::{kind}[])", [list(values)]
        return f"{column} IN ({self.marks(len(values))})", list(values)

    def holds(self, column: str) -> str:
        """``column`` holds the parameter as a substring (never a pattern)."""
        if self.arrays:
            return f"strpos({column}, {self.mark}) > 0"
        return f"instr({column}, {self.mark}) > 0"

    def holds_word(self, column: str, word: str) -> tuple[str, list[Any]]:
        """A JSON list column holds this word (stored JSON text: a quoted word is exact)."""
        return self.holds(column), [json.dumps(word, ensure_ascii=False)]

    def starts_with(self, column: str, prefix: str) -> tuple[str, list[Any]]:
        if self.arrays:
            return f"starts_with({column}, {self.mark})", [prefix]
        # a range over the column's index (binary collation)
        return f"{column} >= {self.mark} AND {column} < {self.mark}", [prefix, _after(prefix)]

    def contains_text(self, columns: Sequence[str], needle: str) -> tuple[str, list[Any]]:
        """One of these columns holds ``needle``, ASCII letters folded, as a substring."""
        if self.arrays:
            fold = f"translate(coalesce({{}}, ''), '{_UPPER}', '{_UPPER.lower()}')"
            wanted = needle.translate(ASCII_LOWER)
            tests = [f"strpos({fold.format(c)}, {self.mark}) > 0" for c in columns]
            return "(" + " OR ".join(tests) + ")", [wanted] * len(columns)
        # LIKE folds ASCII letters only; the text is escaped, so it is a substring, never a
        # pattern (and LIKE scans a tenant's bodies far faster than lower() and instr(),
        # which copy each one).
        pattern = "%" + _escaped(needle) + "%"
        tests = [f"{c} LIKE {self.mark} ESCAPE '\\'" for c in columns]
        return "(" + " OR ".join(tests) + ")", [pattern] * len(columns)

    def json_text(self, column: str, key: str) -> str:
        """The text at ``key`` of a JSON object column (NULL when absent)."""
        if self.arrays:
            return f"{column}::jsonb ->> '{key}'"
        return f"json_extract({column}, '$.{key}')"

    def json_true(self, column: str, key: str) -> str:
        """The value at ``key`` of a JSON object column is ``true``."""
        if self.arrays:
            return f"{column}::jsonb -> '{key}' = 'true'::jsonb"
        return f"json_extract({column}, '$.{key}') = 1"


_UPPER = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
ASCII_LOWER = str.maketrans(_UPPER, _UPPER.lower())

SQLITE = Dialect(
    "sqlite",
    "?",
    arrays=False,
    no_limit=-1,
    descending=" DESC",
    narrow_pages=True,
    unindexed="+",
    index_hints=True,
    rowid_order=True,
)
POSTGRES = Dialect(
    "postgresql",
    "%s",
    arrays=True,
    no_limit=None,
    descending=" DESC NULLS LAST",
    next_count="(value::bigint + 1)::text",
)


# (tenant the read is scoped to, SQL, parameters) -> rows
Fetch = Callable[[str, str, Sequence[Any]], list[Any]]
# (SQL, parameters) -> rows, read across every tenant (the store's own tables)
FetchEvery = Callable[[str, Sequence[Any]], list[Any]]


class SqlPart:
    """A part of a SQL store's shared code: its dialect and how it runs a read, in one
    tenant's scope or across them."""

    def __init__(self, dialect: Dialect, fetch: Fetch, every: FetchEvery) -> None:
        self._d = dialect
        self._fetch = fetch
        self._every = every


def _after(prefix: str) -> str:
    """The least string above every string that starts with ``prefix``."""
    return prefix[:-1] + chr(ord(prefix[-1]) + 1)


def _escaped(text: str) -> str:
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
