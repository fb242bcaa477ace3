"""The record store's upkeep, written once for both SQL stores: the change feed's query,
the rows whose entity links are pending, a finished purge's note, the counts of the
status, and the rule that one store holds the vectors of one embedder. A store runs these
on its own connection (a cursor held for the feed, its lock or its pool); the SQL is here.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from cairn.errors import InvalidInput
from cairn.storage.ports import PendingPurge, StoreStats
from cairn.storage.sql.dialect import Dialect, SqlPart

# Rows of the feed read at once: a 1M-row load never holds more than one batch of vectors.
FEED_BATCH = 16_384
_FEED_COLUMNS = (
    "r.row, r.tenant, r.agent, r.project_id, r.live, r.change_seq, v.vec, v.model,"
    " t.length, t.keys, t.counts, t.entity_keys, r.episode_id, r.position, r.occurred_at"
)

# (SQL, parameters) -> rows, on the connection of the write or read under way
Execute = Callable[[str, Sequence[Any]], list[Any]]


def feed_query(d: Dialect, *, full: bool) -> str:
    """The rows whose ``change_seq`` is above the parameter, with their vector and terms.

    A full load reads records in row order, kept off the ``change_seq`` index (which would
    visit every row through it); an increment reads only the rows whose number moved."""
    changed = f"{d.unindexed}r.change_seq" if full else "r.change_seq"
    return (
        f"SELECT {_FEED_COLUMNS} FROM records r LEFT JOIN vectors v ON v.row = r.row"
        f" LEFT JOIN record_terms t ON t.row = r.row WHERE {changed} > {d.mark}"
        + d.in_row_order("r.row")
    )


def clear_purge(d: Dialect, purge: PendingPurge) -> tuple[str, tuple[str, str, str]]:
    """The statement that drops a purge's note once its after-work is done."""
    m = d.mark
    return (
        f"DELETE FROM pending_purges WHERE tenant = {m} AND agent = {m} AND record_id = {m}",
        (purge.tenant, purge.agent, purge.record_id),
    )


def note_model(d: Dialect, execute: Execute, model: str, where: str, remedy: str) -> None:
    """Record ``model`` as the store's embedder, or refuse a vector of another one: one
    store holds the vectors of one embedder, and mixing two would rank nonsense."""
    found = execute("SELECT value FROM meta WHERE key = 'embedder'", ())
    if not found:
        execute(f"INSERT INTO meta(key, value) VALUES ('embedder', {d.mark})", (model,))
    elif found[0][0] != model:
        raise InvalidInput(
            f"{where} holds vectors of the embedder {found[0][0]!r}, not {model!r};"
            f" open it with that embedder or {remedy}"
        )


class SqlUpkeep(SqlPart):
    """The upkeep reads both stores share."""

    def pending_links(self, agent: str, limit: int) -> list[tuple[int, str]]:
        m = self._d.mark
        found = self._every(
            "SELECT row, coalesce(title, '') || ' ' || body FROM records"
            + self._d.using_index("records_unlinked")
            + f" WHERE agent = {m} AND NOT entities_linked ORDER BY row LIMIT {m}",
            (agent, limit),
        )
        return [(int(row), text) for row, text in found]

    def _counted(
        self,
        tenant: str,
        agent: str | None,
        *,
        schema_version: int,
        size: int,
        extra: dict[str, Any] | None = None,
    ) -> StoreStats:
        """The status of a namespace (an agent's, or the tenant's whole): the store's
        counts beside its schema version and size, which each store reads its own way."""
        m = self._d.mark
        where = f"tenant = {m}" + (f" AND agent = {m}" if agent is not None else "")
        params = (tenant,) if agent is None else (tenant, agent)

        def count(table: str, also: str = "") -> int:
            found = self._fetch(tenant, f"SELECT count(*) FROM {table} WHERE {where}{also}", params)
            return int(found[0][0]) if found else 0

        return StoreStats(
            records=count("records", " AND live"),
            versions=count("records"),
            events=count("events"),
            tombstones=count("tombstones", " AND restored_at IS NULL"),
            applications=count("applications"),
            schema_version=schema_version,
            bytes=size,
            extra=extra or {},
        )
