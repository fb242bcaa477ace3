"""The PostgreSQL half of the composition root (:mod:`cairn.compose`): the server
backend's storage pair, and the record store alone for an operator's commands
(``cairn token``, ``cairn migrate``). The driver is imported only when a store on
PostgreSQL is opened: without the ``postgres`` extra, the error says which extra to add.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from cairn.adapters.embedding import Embedder
from cairn.config import Config
from cairn.engine.director import stored_rank
from cairn.errors import ConfigError, InvalidInput
from cairn.storage.ports import RecordStore, SearchIndex

__all__ = ["migration_plan", "open_postgres", "open_records"]


def open_records(config: Config, *, connections: int = 1) -> RecordStore:
    """The configured PostgreSQL store's record store alone (no embedder, no index), for
    operator commands: ``cairn token``, ``cairn migrate``. Opening it migrates."""
    url = config.memory.store.url
    if url is None or url.startswith("sqlite:///"):
        raise InvalidInput("memory.store.url does not name a PostgreSQL store")
    try:
        from cairn.storage.postgres import PostgresRecordStore
    except ImportError as exc:
        raise ConfigError(
            "memory.store.url: PostgreSQL needs the postgres extra"
            f" (pip install 'cairn-memory[postgres]'): {exc}"
        ) from None
    store = config.memory.store
    return PostgresRecordStore(
        url,
        schema=store.postgresSchema,
        max_connections=connections,
        pool_timeout=store.poolTimeoutSeconds,
        lock_timeout=store.lockTimeoutSeconds,
    )


def migration_plan(config: Config) -> list[str]:
    """What opening the configured PostgreSQL store would change, changing nothing."""
    url = config.memory.store.url
    if url is None or url.startswith("sqlite:///"):
        raise InvalidInput("memory.store.url does not name a PostgreSQL store")
    from cairn.storage.postgres.database import pending_changes

    return pending_changes(url, config.memory.store.postgresSchema)


def open_postgres(
    config: Config,
    url: str,
    home: Path,
    embedder: Embedder,
    check_embedder: Callable[[RecordStore, Embedder, str], None],
) -> tuple[RecordStore, SearchIndex, Path, dict[str, Any]]:
    """The record store and the in-database index on ``url`` (``check_embedder``: the
    composition root's refusal of another embedder's vectors)."""
    try:
        from cairn.storage.postgres import PostgresRecordStore, PostgresSearchIndex
        from cairn.storage.postgres.database import describe_url
    except ImportError as exc:
        raise ConfigError(
            "memory.store.url: PostgreSQL needs the postgres extra"
            f" (pip install 'cairn-memory[postgres]'): {exc}"
        ) from None
    store = config.memory.store
    records = PostgresRecordStore(
        url,
        schema=store.postgresSchema,
        rank_hint=stored_rank,
        max_connections=store.poolSize,
        pool_timeout=store.poolTimeoutSeconds,
        lock_timeout=store.lockTimeoutSeconds,
    )
    location = f"{describe_url(url)} (schema {store.postgresSchema})"
    check_embedder(records, embedder, location)
    try:
        index = PostgresSearchIndex(
            records, dim=lambda: embedder.dim, ann_threshold=store.annThreshold
        )
    except BaseException:
        records.close()
        raise
    describe = {"backend": "postgresql", "location": location, "versions": records.db.versions}
    return records, index, home, describe
