"""The record store's upkeep, written once for both SQL stores: the change feed's query,
the rows whose entity links are pending, a finished purge's note, the counts of the
status, and the rule that one store holds the vectors of one embedder. A store runs these
on its own connection (a cursor held for the feed, its lock or its pool); the SQL is here.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from typing import Any, Protocol

from cairn.errors import InvalidInput
from cairn.storage.ports import FeedPosition, PendingPurge, StoreStats
from cairn.storage.sql.dialect import Dialect
from cairn.storage.sql.journal import SqlState
from cairn.storage.sql.writes import finish_purges

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


class OneEmbedder:
    """One store holds the vectors of one embedder: mixing two would rank nonsense. The
    first vector written names it in ``meta``; a vector of another is refused. What was
    read is kept until :meth:`forget` (a rolled-back write may have taken the meta row with
    it; `cairn reembed` in another process may switch it between writes)."""

    def __init__(self, dialect: Dialect, where: str, remedy: str) -> None:
        self._d = dialect
        self._where = where  # the store, as the refusal names it
        self._remedy = remedy  # what else its user can do
        self._model: str | None = None

    def forget(self) -> None:
        self._model = None

    def note(self, execute: Execute, model: str) -> None:
        """Inside a write: ``model`` is (or becomes) the store's embedder, or is refused."""
        if self._model == model:
            return
        found = execute("SELECT value FROM meta WHERE key = 'embedder'", ())
        if not found:
            execute(f"INSERT INTO meta(key, value) VALUES ('embedder', {self._d.mark})", (model,))
        elif found[0][0] != model:
            raise InvalidInput(
                f"{self._where} holds vectors of the embedder {found[0][0]!r}, not {model!r};"
                f" open it with that embedder or {self._remedy}"
            )
        self._model = model


class _Linking(Protocol):
    def set_entity_keys(self, links: Sequence[tuple[int, tuple[str, ...]]]) -> None: ...


class _Upkept(Protocol):
    """What the shared upkeep asks of its store: its transactions, its after-purge work
    (a WAL truncation, a vacuum) and how it drops a purge's note."""

    def transaction(self) -> AbstractContextManager[_Linking]: ...

    def checkpoint(self) -> None: ...

    def _clear_purge(self, purge: PendingPurge) -> None: ...


class SqlUpkeep(SqlState):
    """The upkeep both stores share."""

    def set_links(self: _Upkept, links: Sequence[tuple[int, tuple[str, ...]]]) -> None:
        with self.transaction() as tx:
            tx.set_entity_keys(links)

    def finish_purges(self: _Upkept, purges: Sequence[PendingPurge]) -> list[str]:
        return finish_purges(purges, self.checkpoint, self._clear_purge)

    def _feed_start(self, position: FeedPosition) -> tuple[str, tuple[int]]:
        """The feed's query from ``position``, and its parameter: a full load when the
        follower has never read or the rows were renumbered since (a new generation)."""
        current = self.feed_position()
        full = position.generation != current.generation or position.seq < 0
        return feed_query(self._d, full=full), (-1 if full else position.seq,)

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
