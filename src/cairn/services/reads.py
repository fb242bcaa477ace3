"""Reads: one record, its history, lists, tombstones, the journal and counts.

The request was checked at the contract (provider/checked.py): ids come trimmed and upper
case, a time as stored, the filters as one line each; here they are only looked up."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Protocol

from cairn.errors import NotFound
from cairn.model import Application, Event, Namespace, Record, Tombstone
from cairn.storage.ports import (
    ApplicationLog,
    EventFilter,
    EventHistory,
    RecordQuery,
    Records,
    Stats,
    StoreStats,
)


class StoreReads(Records, EventHistory, ApplicationLog, Stats, Protocol):
    """The roles these reads use: records, the journal, applications and the counts of the
    status; nothing that writes (no transaction) and nothing of the change feed."""


class Reads:
    def __init__(self, records: StoreReads) -> None:
        self._records = records

    def get(self, record_id: str, ns: Namespace, *, as_of: str | None = None) -> Record:
        """The current version (or the one in force at ``as_of``); NotFound otherwise."""
        record = self._records.get(ns.tenant, ns.agent, record_id, as_of=as_of)
        if record is None or (record.body == "" and record.forgotten_at):
            if as_of is not None and self._records.get(ns.tenant, ns.agent, record_id):
                raise NotFound(f"memory {record_id} did not exist yet at {as_of}")
            raise NotFound(f"no memory with id {record_id}")
        return record

    def history(self, record_id: str, ns: Namespace) -> list[Record]:
        versions = self._records.history(ns.tenant, ns.agent, record_id)
        if not versions:
            raise NotFound(f"no memory with id {record_id}")
        return versions

    def records(self, query: RecordQuery) -> list[Record]:
        return self._records.list_records(query)

    def tombstones(self, ns: Namespace, *, record_id: str | None = None) -> list[Tombstone]:
        stones = self._records.tombstones(ns.tenant, ns.agent)
        if record_id is None:
            return stones
        return [t for t in stones if t.record_id == record_id]

    def journal(
        self,
        ns: Namespace,
        *,
        after_seq: int = 0,
        limit: int | None = None,
        where: EventFilter | None = None,
    ) -> Iterator[Event]:
        return self._records.events(
            ns.tenant, ns.agent, after_seq=after_seq, limit=limit, where=where
        )

    def applications(
        self, record_id: str, ns: Namespace, *, limit: int | None = None
    ) -> tuple[list[Application], int]:
        """A memory's applications, newest first (at most ``limit``), and how many in all."""
        found = self._records.applications(ns.tenant, ns.agent, record_id=record_id)
        found.reverse()
        return (found[:limit] if limit is not None else found), len(found)

    def stats(self, ns: Namespace) -> StoreStats:
        return self._records.stats(ns.tenant, ns.agent)
